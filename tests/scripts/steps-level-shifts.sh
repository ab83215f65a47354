#!/usr/bin/env bash
# The steady-window search against a known truth: Megatron logs from
# tests/scripts/steps-shift-gen.py (300 iterations at 200 ms, AR(1) noise
# of CV 2 %), 50 logs per case, counting the runs whose `steps --json`
# warns `level-shift` and `long-warmup`:
#  - no shift, independent noise: neither warning in any run;
#  - 5 % slower from iteration 100 (the run got slower a third of the way
#    in) is a level shift in every run, never a long warm-up (before
#    2026-12-03: a long warm-up in 50 of 50, its faster steps dropped);
#  - 5 % slower from iteration 260: a level shift in every run;
#  - a warm-up 30 % slower falling over the first 100 iterations: a long
#    warm-up in every run, with lag-1 autocorrelation 0 and 0.9;
#  - no shift, lag-1 autocorrelation 0.95 (a slowly wandering step time):
#    a level shift in at most 15 of 50 runs (34 before, 11 on 2026-12-03:
#    the shift test now accounts for the autocorrelated noise); with a
#    warm-up at 0.9, at most 6 (12 before, 3);
#  - a batch-size ramp-up, 128 sequences before iteration 100 and 256 from
#    it (twice the step time): no level-shift nor long-warmup in any run,
#    the window starting at iteration 100 (the last batch) in at least 45
#    of 50 and within 25 in all (a warm-up cut of the noise after it, as in
#    flat runs), the ramp its own excluded group (before
#    2026-12-04: "warm-up" and a level shift).
set -u
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
GEN=tests/scripts/steps-shift-gen.py
runs=50

# count PHI SHIFT AT [RAMP]: prints "LEVEL_SHIFTS LONG_WARMUPS"
count() {
	local ls=0 lw=0 f
	rm -rf "$tmp/d"
	python3 "$GEN" "$tmp/d" $runs "$@" || exit 1
	for f in "$tmp"/d/*.log; do
		"$TS" steps --json "$f" >"$tmp/o.json" 2>/dev/null
		[ $? -le 1 ] || { echo "FAIL: steps on $* exited $?"; exit 1; }
		grep -q '"code": "level-shift"' "$tmp/o.json" && ls=$((ls + 1))
		grep -q '"code": "long-warmup"' "$tmp/o.json" && lw=$((lw + 1))
	done
	echo "$ls $lw"
}

# expect PHI SHIFT AT RAMP LS_MIN LS_MAX LW_MIN LW_MAX
expect() {
	local got
	got=$(count "$1" "$2" "$3" "$4")
	set -- "$@" $got
	echo "phi $1 shift $2 at $3 ramp $4: level-shift $9, long-warmup ${10} of $runs"
	if [ "$9" -lt "$5" ] || [ "$9" -gt "$6" ] || [ "${10}" -lt "$7" ] || [ "${10}" -gt "$8" ]; then
		echo "FAIL: wanted level-shift $5-$6, long-warmup $7-$8"
		fail=1
	fi
}

expect 0 0 1 0 0 0 0 0
expect 0 0.05 100 0 $runs $runs 0 0
expect 0 0.05 260 0 $runs $runs 0 0
expect 0 0 1 0.3 0 0 $runs $runs
expect 0.9 0 1 0.3 0 6 $runs $runs
expect 0.95 0 1 0 0 15 0 $runs
# the batch-size ramp: window starts and groups, from each run's JSON
rm -rf "$tmp/d"
python3 "$GEN" "$tmp/d" $runs 0 1.0 100 0 128 || exit 1
for f in "$tmp"/d/*.log; do
	"$TS" steps --json "$f" 2>/dev/null
done | RUNS=$runs python3 -c '
import json, os, sys
dec, text, pos = json.JSONDecoder(), sys.stdin.read(), 0
runs, at, near, bad = 0, 0, 0, []
while pos < len(text):
    while pos < len(text) and text[pos].isspace():
        pos += 1
    if pos == len(text):
        break
    d, pos = dec.raw_decode(text, pos)
    runs += 1
    w = d["window"]
    codes = {x["code"] for x in d["warnings"]}
    groups = {g["reason"]: g["last_iteration"] for g in w["excluded"]}
    at += w["first_iteration"] == 100
    near += 100 <= w["first_iteration"] <= 125
    if codes & {"level-shift", "long-warmup", "no-steady-state"} or \
            groups.get("batch-size-ramp-up") != 99 or "batch-size-ramp-up" not in codes:
        bad.append((w, sorted(codes)))
print("batch-size ramp: window at iteration 100 in %d of %d runs, within 25 in %d; %d wrong"
      % (at, runs, near, len(bad)))
for b in bad[:3]:
    print("  ", b)
sys.exit(0 if runs == int(os.environ["RUNS"]) and at >= 45 and near == runs and not bad else 1)
' || { echo "FAIL: batch-size ramp"; fail=1; }
exit $fail
