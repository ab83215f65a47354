#!/usr/bin/env bash
# A hole in a log widens no record: with --log-interval 10 a Megatron
# record stands for the 10 iterations up to it, also after a hole (records
# 10..100, none for 101-190, then 200..300: the record at 200 stands for
# 191-200, ts_record_from capped by the series' interval). Before, it
# stood for 101-200: a NaN counted at 200 was said to start "within
# 101-200", validate counted 300 logged steps (10 x 10 + 100 + 10 x 10)
# for the 210 the 21 records hold, and a window 120:180 took in the
# record at 200 (a stretch the log never showed). Truth by construction.
set -u
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
# LOG NAN_AT: the records, NAN_AT counting one NaN iteration (0: none)
gen() {
	python3 - "$1" "$2" <<'PY'
import math, sys
out = []
for it in list(range(10, 101, 10)) + list(range(200, 301, 10)):
    nan = 1 if it == int(sys.argv[2]) else 0
    loss = "" if nan else " lm loss: %.6E |" % (2 + 8 * math.exp(-it / 100))
    out.append(" iteration %8d/     300 | consumed samples: %12d | elapsed time per iteration (ms): "
               "%.1f | learning rate: 1.000000E-04 | global batch size:     8 |%s loss scale: 1.0 | "
               "number of skipped iterations:   0 | number of nan iterations: %3d |"
               % (it, 8 * it, 200 + (it % 3) - 1, loss, nan))
open(sys.argv[1], "w").write("\n".join(out) + "\n")
PY
}
gen "$tmp/train.log" 200
mkdir "$tmp/run" "$tmp/clean"
cp "$tmp/train.log" "$tmp/run/"
gen "$tmp/clean/train.log" 0
"$TS" steps --json "$tmp/train.log" >"$tmp/steps.json" 2>/dev/null
"$TS" validate --json --window 20:300 "$tmp/run" >"$tmp/v2.json" 2>/dev/null
# 120:180 holds no record of the clean log: the one at 200 stands for
# 191-200 (it was timed there, standing for 101-200)
if "$TS" validate --json --window 120:180 "$tmp/clean" >/dev/null 2>"$tmp/v1.err" ||
	! grep -q "holds no timed step" "$tmp/v1.err"; then
	echo "FAIL validate --window 120:180: $(cat "$tmp/v1.err")"
	fail=1
fi
python3 - "$tmp" <<'PY' || fail=1
import json, sys
t = sys.argv[1]
bad = []
lo = json.load(open(t + "/steps.json"))["loss"]
if lo.get("first_possible_bad_iteration") != 191 or lo.get("first_nan_iteration") != 200:
    bad.append("steps: NaN from %s within %s, want 191-200"
               % (lo.get("first_nan_iteration"), lo.get("first_possible_bad_iteration")))
v = {c["name"]: c for c in json.load(open(t + "/v2.json"))["checks"]}
if not v["steps_logged"]["evidence"].startswith("210 logged steps"):
    bad.append("validate: %s (21 records of 10)" % v["steps_logged"]["evidence"])
for b in bad:
    print("FAIL", b)
sys.exit(1 if bad else 0)
PY
finish
