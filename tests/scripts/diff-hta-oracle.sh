#!/usr/bin/env bash
# The fixtures test_diffcompat_hta.c compares against are the real HTA's
# output: rerun HolisticTraceAnalysis (../shared/baselines/hta, Debian's
# /usr/bin/python3 with pandas) through tests/fixtures/diffcompat/hta_oracle.py
# on both pairs and require byte-identical rows.
set -u
cd "$(dirname "$0")/../.."
DATA=${DATA:-../shared/data}
HTA_SRC=${HTA_SRC:-../shared/baselines/hta}
[ -d "$HTA_SRC/hta" ] || { echo "skip: no HTA in $HTA_SRC"; exit 77; }
/usr/bin/python3 -c "import pandas" 2>/dev/null || { echo "skip: /usr/bin/python3 has no pandas"; exit 77; }
[ -d "$DATA/traces/hta/trace_compare" ] || { echo "skip: no $DATA/traces/hta"; exit 77; }
export HTA_SRC
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
F=tests/fixtures/diffcompat
T=$DATA/traces/hta
/usr/bin/python3 $F/hta_oracle.py $T/trace_compare/base $T/trace_compare/test --rank 1 --iteration 1010 \
	>"$tmp/compare.tsv" 2>"$tmp/err" || { cat "$tmp/err"; fail=1; }
cmp -s "$tmp/compare.tsv" $F/hta_trace_compare.tsv || { echo "FAIL hta_trace_compare.tsv differs from HTA's output"; fail=1; }
/usr/bin/python3 $F/hta_oracle.py $T/trace_diff/control $T/trace_diff/test \
	>"$tmp/diff.tsv" 2>"$tmp/err" || { cat "$tmp/err"; fail=1; }
cmp -s "$tmp/diff.tsv" $F/hta_trace_diff.tsv || { echo "FAIL hta_trace_diff.tsv differs from HTA's output"; fail=1; }
[ $fail = 0 ] && echo "ok: both fixtures are HTA's TraceDiff output"
exit $fail
