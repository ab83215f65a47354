#!/usr/bin/env bash
# `ab` on JSONL runs written here (300 steps of 100 ms, the same loss):
# - the candidate logs no iterations 101-150 (a lost stretch of log):
#   invalid, exit 2, the reason names 100 and 151 (ab-stats A4 step 0:
#   a missing step index fails the comparison); before 2026-12-04 it was
#   accepted with no word;
# - the same gap declared away (--window 160:300): compared, not invalid;
# - a candidate that stops at iteration 200 of the baseline's 300:
#   compared, with a runs-end-apart warning naming 200 and 300, and each
#   run's final_loss_iteration (300, 200); before, no word while the
#   final losses shown were of different iterations; runs that end
#   together (the gap case with --window) get no such warning;
# - 3 runs per side, the candidate's steps 1.0099x the baseline's (1 %
#   iid noise; these seeds give an estimate of 1.0102 with a 95 % CI
#   about +-0.0024): with the 1 % band of repeats the estimate sits 0.0002
#   from the edge, so deciding would take (0.0024 / 0.0002)^2, over 100x
#   the data: "to decide" says more data may never decide and asks for
#   no number of runs; before, it asked for 617 more runs per side.
set -u
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }

python3 - "$tmp" <<'PY'
import json, random, sys
d = sys.argv[1]
def write(name, scale, seed, skip=()):
    r = random.Random(seed)
    with open(f"{d}/{name}", "w") as f:
        for k in range(1, 301):
            ms = 100 * scale * (1 + r.gauss(0, 0.01))
            if k in skip:
                continue
            f.write(json.dumps({"iteration": k, "step_ms": round(ms, 3),
                                "lm_loss": round(8 - k / 100, 4), "grad_norm": 1.0}) + "\n")
write("base.jsonl", 1.0, 1)
write("gap.jsonl", 1.0, 2, skip=range(101, 151))
write("short.jsonl", 1.0, 3, skip=range(201, 301))
for i in range(3):
    write(f"b{i}.jsonl", 1.0, 10 + i)
    write(f"c{i}.jsonl", 1.0099, 20 + i)
PY

"$TS" ab "$tmp/base.jsonl" "$tmp/gap.jsonl" --json >"$tmp/gap.json" 2>/dev/null
rc=$?
[ $rc = 2 ] || bad "gap 101-150: exit $rc, want 2"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
r = " ".join(d["invalid_reasons"])
sys.exit(0 if d["verdict"] == "invalid" and "between iterations 100 and 151" in r else 1)' \
	"$tmp/gap.json" || bad "gap 101-150: no reason naming 100 and 151"
"$TS" ab "$tmp/base.jsonl" "$tmp/gap.jsonl" --window 160:300 --json >"$tmp/gapw.json" 2>/dev/null
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if d["verdict"] != "invalid" else 1)' "$tmp/gapw.json" ||
	bad "gap with --window 160:300: still invalid"

python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if not [w for w in d["warnings"] if w["code"] == "runs-end-apart"] else 1)' \
	"$tmp/gapw.json" || bad "runs that both end at 300: a runs-end-apart warning"
"$TS" ab "$tmp/base.jsonl" "$tmp/short.jsonl" --json >"$tmp/short.json" 2>/dev/null
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
w = [x["message"] for x in d["warnings"] if x["code"] == "runs-end-apart"]
its = [r["final_loss_iteration"] for r in d["baseline"] + d["candidate"]]
ok = d["verdict"] != "invalid" and len(w) == 1 and "at 200" in w[0] and "at 300" in w[0] and its == [300, 200]
if not ok:
    print("verdict %s, runs-end-apart %s, final_loss_iteration %s" % (d["verdict"], w, its))
sys.exit(0 if ok else 1)' "$tmp/short.json" || bad "candidate ending at 200 of 300: no runs-end-apart"

B=$tmp/b0.jsonl,$tmp/b1.jsonl,$tmp/b2.jsonl
C=$tmp/c0.jsonl,$tmp/c1.jsonl,$tmp/c2.jsonl
"$TS" ab "$B" "$C" --json >"$tmp/edge.json" 2>/dev/null
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
i = d.get("to_decide") or {}
note = i.get("note") or ""
ok = (d["verdict"] == "inconclusive" and "may never decide" in note and
      not i.get("more_runs_per_side"))
if not ok:
    print("verdict %s ratio %s note %r more_runs %s" % (d["verdict"], d.get("ratio"), note,
          i.get("more_runs_per_side")))
sys.exit(0 if ok else 1)' "$tmp/edge.json" || bad "1.0099x with 3 runs: no band-edge note"
exit $fail
