#!/usr/bin/env bash
# `ab` compares the work per step however each side states it (logs
# written here; 300 steps, 1 % noise, the same loss curve on both sides):
# - Megatron against Megatron, global batch 16 on both, seq_length 1024
#   against 512 in the arguments blocks (16384 and 8192 tokens per step),
#   the candidate's steps 0.6x as long: invalid, exit 2, the reason names
#   both token counts, and correctness.passed is null (no check ran);
#   before 2026-12-04: "faster", accepted, exit 0;
# - Megatron 16 x 512 = 8192 against a JSONL logging tokens 4096: invalid;
# - the same Megatron log against a JSONL logging tokens 8192 and the same
#   step times: no invalid reason and no tokens-unchecked warning;
# - a JSONL logging tokens 4096 against one logging none: not invalid, and
#   a tokens-unchecked warning naming the file without them.
set -u
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }

python3 - "$tmp" <<'PY'
import json, math, random, sys
d = sys.argv[1]
def times(scale, seed):
    r = random.Random(seed)
    return [scale * (1 + r.gauss(0, 0.01)) for _ in range(300)]
loss = [2 + 6 * math.exp(-k / 80) for k in range(1, 301)]
def megatron(name, seq, ms):
    with open(f"{d}/{name}", "w") as f:
        f.write("------------------------ arguments ------------------------\n"
                "  global_batch_size ............................... 16\n"
                f"  seq_length ...................................... {seq}\n"
                "  world_size ...................................... 1\n"
                "-------------------- end of arguments ---------------------\n")
        for k in range(1, 301):
            f.write(f" iteration {k:8d}/     300 | consumed samples: {16 * k:12d} |"
                    f" elapsed time per iteration (ms): {ms[k - 1]:.1f} |"
                    " learning rate: 1.000000E-04 | global batch size:    16 |"
                    f" lm loss: {loss[k - 1]:.6E} | loss scale: 1.0 | grad norm: 1.000 |"
                    " number of skipped iterations:   0 | number of nan iterations:   0 |\n")
def jsonl(name, tokens, ms):
    with open(f"{d}/{name}", "w") as f:
        for k in range(1, 301):
            rec = {"iteration": k, "step_ms": round(ms[k - 1], 1),
                   "lm_loss": float(f"{loss[k - 1]:.6E}"), "grad_norm": 1.0}
            if tokens:
                rec["tokens"] = tokens
            f.write(json.dumps(rec) + "\n")
megatron("seq1024.log", 1024, times(100, 1))
megatron("seq512.log", 512, times(60, 2))
base = times(100, 3)
megatron("gbs16x512.log", 512, base)
jsonl("tok4096.jsonl", 4096, times(100, 4))
jsonl("tok8192.jsonl", 8192, base)
jsonl("notok.jsonl", None, times(100, 5))
PY

# run NAME BASE CAND: ab --json into $tmp/NAME.json, exit code into $tmp/NAME.rc
run() {
	"$TS" ab "$tmp/$2" "$tmp/$3" --json >"$tmp/$1.json" 2>/dev/null
	echo $? >"$tmp/$1.rc"
}
run seq seq1024.log seq512.log
run mixed gbs16x512.log tok4096.jsonl
run same gbs16x512.log tok8192.jsonl
run onesided tok4096.jsonl notok.jsonl
[ "$(cat "$tmp/seq.rc")" = 2 ] || bad "seq 1024 vs 512: exit $(cat "$tmp/seq.rc"), want 2"
[ "$(cat "$tmp/mixed.rc")" = 2 ] || bad "8192 vs JSONL 4096: exit $(cat "$tmp/mixed.rc"), want 2"
python3 - "$tmp" <<'PY' || fail=1
import json, sys
d = sys.argv[1]
def load(n):
    return json.load(open(f"{d}/{n}.json"))
ok = True
def want(cond, what):
    global ok
    if not cond:
        print("FAIL: " + what)
        ok = False
s = load("seq")
inv = " ".join(s.get("invalid_reasons") or [])
want(s["verdict"] == "invalid" and "16384" in inv and "8192" in inv,
     f"seq 1024 vs 512: verdict {s['verdict']}, reasons {inv!r}")
want(s["correctness"]["passed"] is None, f"seq: correctness.passed {s['correctness']['passed']}, want null")
m = load("mixed")
inv = " ".join(m.get("invalid_reasons") or [])
want(m["verdict"] == "invalid" and "8192" in inv and "4096" in inv,
     f"Megatron 8192 vs JSONL 4096: verdict {m['verdict']}, reasons {inv!r}")
a = load("same")
codes = [w["code"] for w in a["warnings"]]
want(a["verdict"] != "invalid" and "tokens-unchecked" not in codes,
     f"Megatron 8192 vs JSONL 8192: verdict {a['verdict']}, warnings {codes}")
o = load("onesided")
tw = [w["message"] for w in o["warnings"] if w["code"] == "tokens-unchecked"]
want(o["verdict"] != "invalid" and len(tw) == 1 and "notok.jsonl" in tw[0],
     f"JSONL 4096 vs none: verdict {o['verdict']}, tokens-unchecked {tw}")
sys.exit(0 if ok else 1)
PY
exit $fail
