#!/usr/bin/env bash
# Hostile inputs for `trainscope steps` must finish quickly (no quadratic
# paths): one 8 MB line of "iteration " repeats, one 8 MB line of "|" fields,
# 200 000 one-line records each wrapped into a continuation, 100 000
# distinct ranks, one iteration followed by a 300 000-line timer block,
# one 8 MB legacy timer line, and 300 000 JSONL records of one iteration
# with a NaN (the loss health finds where each record's interval starts).
# Each must exit 0 or 2 within the time budget.
set -u
. "$(dirname "$0")/lib.sh"
budget=30

python3 - "$tmp" <<'PY' || exit 77
import sys
d = sys.argv[1]
open(d + "/a.log", "w").write(" iteration " * 800000 + "\n")
open(d + "/b.log", "w").write(" iteration 1/2 " + "| k: 1 " * 1200000 + "\n")
with open(d + "/c.log", "w") as f:
    for i in range(200000):
        f.write(" iteration %d/9 | elapsed time per iteration (ms): 1.0 | lm\nloss: 1 |\n" % i)
with open(d + "/d.log", "w") as f:
    for i in range(100000):
        f.write("%d: iteration 1/9 | elapsed time per iteration (ms): %d.0 | number of nan iterations: 0 |\n" % (i, i % 7 + 1))
with open(d + "/e.log", "w") as f:
    f.write(" iteration 1/9 | elapsed time per iteration (ms): 1.0 | number of nan iterations: 0 |\n")
    f.write("(min, max) time across ranks (ms):\n")
    for i in range(300000):
        f.write("    forward-backward ....: (1.0, %d.5)\n" % i)
open(d + "/g.log", "w").write('{"iteration": 5, "step_ms": 100, "nan": true, "loss": 1.0}\n' * 300000)
open(d + "/f.log", "w").write(" iteration 1/2 | number of nan iterations: 0 |\ntime (ms) |" + " forward: 1.0 |" * 550000 + "\n")
PY
for f in a b c d e f g; do
	start=$(date +%s)
	timeout $budget "$TS" steps --json "$tmp/$f.log" >/dev/null 2>&1
	rc=$?
	end=$(date +%s)
	if [ $rc != 0 ] && [ $rc != 2 ]; then
		echo "steps on $f.log: exit $rc after $((end - start)) s"
		exit 1
	fi
done
exit 0
