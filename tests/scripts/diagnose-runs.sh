#!/usr/bin/env bash
# diagnose on real runs whose cause is known from outside the code:
#  - d_stall: a 300 ms sleep in the data loader every 7th iteration; the
#    trace covers iterations 20-28 with stalls at 21 and 28 (ground_truth.json:
#    dataloader spans 300.822 and 306.344 ms) -> the data wall, with those
#    iterations and spans as evidence;
#  - e_straggler: rank 1 sleeps 300 ms in every forward -> rank 1 named;
#  - an HTA GPU trace -> a wall with numbers;
#  - the shipped example -> a report file with its charts;
#  - a directory with nothing usable -> exit 2 with a message.
set -u
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
cpu=$DATA/traces/cpu
bad() { echo "FAIL $*"; fail=1; }

if [ -d "$cpu/d_stall" ]; then
	"$TS" diagnose --json "$cpu/d_stall" >"$tmp/d.json" || bad "d_stall: exit $?"
	grep -q '"dominant": "data"' "$tmp/d.json" || bad "d_stall: wall is not data"
	grep -q 'iteration 21: 657.0 ms (median [0-9.]* ms), data loader 300.8 ms' "$tmp/d.json" ||
		bad "d_stall: stall at iteration 21 (300.8 ms data loader) not in the evidence"
	grep -q 'iteration 28: 623.4 ms (median [0-9.]* ms), data loader 306.3 ms' "$tmp/d.json" ||
		bad "d_stall: stall at iteration 28 (306.3 ms data loader) not in the evidence"
	grep -q '"title": "more data-loader workers"' "$tmp/d.json" || bad "d_stall: no data-loader advice"
else
	echo "skip d_stall: $cpu/d_stall missing"
fi

if [ -d "$cpu/e_straggler" ]; then
	"$TS" diagnose --json "$cpu/e_straggler" >"$tmp/e.json" || bad "e_straggler: exit $?"
	grep -q '"dominant": "straggler"' "$tmp/e.json" || bad "e_straggler: wall is not straggler"
	grep -A1 '"straggler": {' "$tmp/e.json" | grep -q '"rank": 1,' || bad "e_straggler: rank 1 not named"
	"$TS" diagnose "$cpu/e_straggler" | grep -q 'rank 1 is the straggler' || bad "e_straggler: text"
fi

hta=$DATA/traces/hta/timeline_analysis
if [ -d "$hta" ]; then
	"$TS" diagnose --json "$hta" >"$tmp/h.json" || bad "hta: exit $?"
	grep -qE '"dominant": "(compute|memory|communication|host|data|straggler)"' "$tmp/h.json" ||
		bad "hta: no wall"
	grep -qE '"share_pct": [0-9]+\.[0-9]+' "$tmp/h.json" || bad "hta: wall without a share"
	grep -q 'exposed communication [0-9.]* ms' "$tmp/h.json" || bad "hta: no device-time numbers"
	grep -q '"vendor": "cuda"' "$tmp/h.json" || bad "hta: vendor not cuda"
fi

"$TS" diagnose examples/run >"$tmp/ex.txt" 2>"$tmp/ex.err" || bad "example: exit $?"
grep -q '^dominant wall: ' "$tmp/ex.txt" || bad "example: no summary on stdout"
"$TS" report examples/run -o "$tmp/report.html" 2>"$tmp/ex.err" || bad "example report: exit $?"
for c in chart-step-time chart-gpu-classes; do
	grep -q "id=\"$c\"" "$tmp/report.html" || bad "example: $c missing from report.html"
done
"$TS" report examples/run -o "$tmp/report.md" >/dev/null 2>&1 || bad "example md: exit $?"
grep -q '^## Step time over the run' "$tmp/report.md" || bad "example: Markdown report lacks the step table"

mkdir -p "$tmp/empty"
echo "hello" >"$tmp/empty/notes.txt"
"$TS" diagnose "$tmp/empty" >/dev/null 2>"$tmp/empty.err"
rc=$?
[ $rc = 2 ] || bad "empty run: exit $rc, want 2"
grep -q 'no training log, metrics or profiler trace found' "$tmp/empty.err" || bad "empty run: message"
exit $fail
