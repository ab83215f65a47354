#!/usr/bin/env bash
# trainscope ab's phase attribution against a known truth: runs generated
# by tests/scripts/ab-phases-gen.py differ only by run noise and an injected
# data-loader sleep (+100 ms every 5th step, or +20 ms every step: +20 ms
# per step either way) on a loaded-machine step of ~310 ms (CV ~27 %).
#  - the data phase is `slower` with a simultaneous CI excluding 1 while the
#    total step time is `inconclusive` (the seeds are ones where it is), so
#    the phase table is what says what changed: ignoring phases fails;
#  - the phase means equal those computed here in python from the raw JSONL
#    over the matched window ab reports, and their difference is the
#    injected sleep (+-1 ms of loader noise);
#  - fwd/bwd/opt/comm are never called slower or faster (no change there);
#  - without an injection no phase is called slower or faster;
#  - the same from Megatron timer blocks (batch-generator, forward-backward,
#    optimizer, all-grads-sync);
#  - a phase logged by one side only is listed, not compared;
#  - runs without phase times keep ab's output without `phases`.
set -u
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
GEN=tests/scripts/ab-phases-gen.py

# check RUNDIR: the JSON of ab on RUNDIR/{baseline,candidate} against the
# raw JSONL; prints problems, one a line
check() {
	python3 - "$1" "$2" "$3" <<'PY'
import json, sys
d, js, truth = sys.argv[1], sys.argv[2], float(sys.argv[3])
r = json.load(open(js))
w = r["window"]
first, last = w["first_iteration"], w["last_iteration"]
def rows(side):
    return {x["iteration"]: x for x in map(json.loads, open(f"{d}/{side}/metrics.jsonl"))}
a, b = rows("baseline"), rows("candidate")
its = [i for i in range(first, last + 1) if i in a and i in b and i > 1]
out = []
if len(its) != r["paired_steps"]:
    out.append(f"paired steps {r['paired_steps']}, python finds {len(its)}")
if "phases" not in r:
    print("no phases in the JSON")
    sys.exit()
ph = {p["phase"]: p for p in r["phases"]}
if sorted(ph) != ["bwd", "comm", "data", "fwd", "opt"]:
    out.append(f"phases {sorted(ph)}")
for name in ph:
    ma = sum(a[i][name + "_ms"] for i in its) / len(its)
    mb = sum(b[i][name + "_ms"] for i in its) / len(its)
    p = ph[name]
    if abs(p["baseline_ms"] - round(ma, 3)) > 0.0015 or abs(p["candidate_ms"] - round(mb, 3)) > 0.0015:
        out.append(f"{name}: means {p['baseline_ms']}/{p['candidate_ms']}, python {ma:.3f}/{mb:.3f}")
    if name == "data":
        if abs((mb - ma) - truth) > 1.0:
            out.append(f"data difference {mb - ma:.3f} ms, injected {truth}")
        want = "slower" if truth > 0 else None
        if want and (p["verdict"] != want or not p["ratio"]["ci95_low"] > 1):
            out.append(f"data verdict {p['verdict']} CI low {p['ratio']['ci95_low']}, want slower above 1")
        if not want and p["verdict"] in ("slower", "faster"):
            out.append(f"data called {p['verdict']} without an injection")
    elif p["verdict"] in ("slower", "faster"):
        out.append(f"{name} called {p['verdict']}: nothing changed there")
    if p["ratio"]["per_phase_level_pct"] != 99.0:
        out.append(f"{name}: level {p['ratio']['per_phase_level_pct']}, want 99 (Bonferroni over 5)")
if truth > 0 and r["verdict"] != "inconclusive":
    out.append(f"total verdict {r['verdict']}: pick a seed where the total cannot decide")
print("\n".join(out))
PY
}

for mode in periodic constant; do
	for seed in 3 5; do
		truth=$(python3 "$GEN" "$tmp/$mode-$seed" "$mode" "$seed") || bad "generator failed"
		"$TS" ab --json "$tmp/$mode-$seed/baseline" "$tmp/$mode-$seed/candidate" \
			>"$tmp/$mode-$seed.json"
		msg=$(check "$tmp/$mode-$seed" "$tmp/$mode-$seed.json" "$truth")
		[ -z "$msg" ] || bad "$mode seed $seed: $msg"
	done
done
# the text output carries the table with its units
"$TS" ab "$tmp/periodic-3/baseline" "$tmp/periodic-3/candidate" >"$tmp/text"
grep -q "^  data .* slower$" "$tmp/text" || bad "text: no data row called slower"
grep -q "baseline (ms)  candidate (ms)" "$tmp/text" || bad "text: phase table headers without units"

# the same runs as Megatron logs with a timer block: the timers' names
python3 "$GEN" "$tmp/meg" periodic 3 120 megatron >/dev/null
"$TS" ab --json "$tmp/meg/baseline/train.log" "$tmp/meg/candidate/train.log" >"$tmp/meg.json"
python3 - "$tmp/meg.json" <<'PY' || bad "Megatron timers"
import json, sys
r = json.load(open(sys.argv[1]))
ph = {p["phase"]: p for p in r["phases"]}
assert sorted(ph) == ["comm", "data", "forward-backward", "opt"], sorted(ph)
d = ph["data"]
assert d["verdict"] == "slower" and d["ratio"]["ci95_low"] > 1, d
assert abs(d["candidate_ms"] - d["baseline_ms"] - 20) < 1, d   # the injected sleep
assert r["verdict"] == "inconclusive", r["verdict"]
assert all(ph[k]["verdict"] not in ("slower", "faster") for k in ph if k != "data"), ph
PY

# no injection
python3 "$GEN" "$tmp/none" none 3 >/dev/null
"$TS" ab --json "$tmp/none/baseline" "$tmp/none/candidate" >"$tmp/none.json"
msg=$(check "$tmp/none" "$tmp/none.json" 0)
[ -z "$msg" ] || bad "no injection: $msg"

# comm logged by the baseline only: listed with a reason, four compared
python3 - "$tmp/periodic-3/candidate/metrics.jsonl" "$tmp/nocomm.jsonl" <<'PY'
import json, sys
with open(sys.argv[2], "w") as f:
    for r in map(json.loads, open(sys.argv[1])):
        r.pop("comm_ms")
        f.write(json.dumps(r) + "\n")
PY
"$TS" ab --json "$tmp/periodic-3/baseline/metrics.jsonl" "$tmp/nocomm.jsonl" >"$tmp/nocomm.json"
python3 - "$tmp/nocomm.json" <<'PY' || bad "one-sided phase"
import json, sys
ph = {p["phase"]: p for p in json.load(open(sys.argv[1]))["phases"]}
c = ph["comm"]
assert c["verdict"] == "not_compared" and c["reason"] == "logged by the baseline only", c
assert c["candidate_ms"] is None and c["ratio"]["estimate"] is None, c
assert 4.5 < c["baseline_ms"] < 5.5, c  # the generator's comm ~ 5 ms
assert ph["data"]["ratio"]["per_phase_level_pct"] == 98.75, ph["data"]  # 1 - 0.05 / 4
assert ph["data"]["verdict"] == "slower", ph["data"]
PY

# no phase times: no phases key, no table
python3 - "$tmp/periodic-3" <<'PY'
import json, sys
for side in ("baseline", "candidate"):
    with open(f"{sys.argv[1]}/{side}-plain.jsonl", "w") as f:
        for r in map(json.loads, open(f"{sys.argv[1]}/{side}/metrics.jsonl")):
            for k in ("data_ms", "fwd_ms", "bwd_ms", "opt_ms", "comm_ms"):
                r.pop(k)
            f.write(json.dumps(r) + "\n")
PY
"$TS" ab --json "$tmp/periodic-3/baseline-plain.jsonl" "$tmp/periodic-3/candidate-plain.jsonl" >"$tmp/plain.json"
grep -q '"phases"' "$tmp/plain.json" && bad "runs without phase times got a phases key"
"$TS" ab "$tmp/periodic-3/baseline-plain.jsonl" "$tmp/periodic-3/candidate-plain.jsonl" | grep -q "^phases" &&
	bad "runs without phase times got a phase table"

finish
