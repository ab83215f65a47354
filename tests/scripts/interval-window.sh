#!/usr/bin/env bash
# Window membership of interval records: one rule in steps, validate,
# diagnose and ab. A Megatron record with --log-interval K stands for the
# iterations since the record before it (the record at 250 for 241-250;
# the record at K, after iteration 1's, for 2..K), and it belongs to a
# window when those iterations overlap it (docs/steps.md "Steady window").
# The logs are written here: iterations 1, 10, 20, ..., 400 at 200 ms
# (+-1 ms), the record at 250 counting 1 NaN iteration and the one at 300
# 2 skipped iterations. For each declared window the truth follows from
# that rule (computed below from the construction, never from
# trainscope): the records in it, its NaN and skipped counts (validate's
# skipped_nan), its timed steps (steps, validate, diagnose) and the steps
# ab pairs against a clean run. Before, a record was judged by its printed
# iteration: --window 141:249 left out the record at 250 and with it a NaN
# that may lie in 241-249 (skipped_nan passed), and --window 301:391 lost
# the record at 400, which stands for 391-400.
# Then the resumed-log warning: a run resumed from iteration 210 after
# the NaN at 250 said "the first at iteration 250"; it says "the first
# within iterations 241-250" now (and "at iteration 250" with K = 1).
set -u
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }

# megatron K FIRST LAST NAN_AT SKIP_AT [ONE]: records FIRST, FIRST+K, ...,
# LAST (and iteration 1 first when ONE=1) at 200 +- 1 ms; NAN_AT counts 1
# NaN iteration (its loss dropped, as Megatron does), SKIP_AT 2 skipped
megatron() {
	python3 - "$@" <<'PY'
import math, sys
K, first, last, nan_at, skip_at = map(int, sys.argv[1:6])
one = len(sys.argv) > 6 and sys.argv[6] == "1"
def rec(it, ms):
    nan = 1 if it == nan_at else 0
    sk = 2 if it == skip_at else 0
    loss = "" if nan else " lm loss: %.6E |" % (2 + 8 * math.exp(-it / 100))
    return (" iteration %8d/%8d | consumed samples: %12d | elapsed time per iteration (ms): %.1f |"
            " learning rate: 1.000000E-04 | global batch size:     8 |%s loss scale: 1.0 |"
            " grad norm: 1.000 | number of skipped iterations: %3d | number of nan iterations: %3d |"
            % (it, 400, it * 8, ms, loss, sk, nan))
if one:
    print(rec(1, 5000.0))
for it in range(first, last + 1, K):
    print(rec(it, 200.0 + (1 if (it // K) % 2 else -1)))
PY
}

megatron 10 10 400 250 300 1 >"$tmp/b.log"
megatron 10 10 400 0 0 1 >"$tmp/a.log"
mkdir -p "$tmp/run"
cp "$tmp/b.log" "$tmp/run/train.log"

# the truth of window A:B under the rule: the records whose iterations
# (previous record + 1 .. record; iteration 1 is its own) overlap it
truth() {
	python3 - "$1" "$2" <<'PY'
import sys
a, b = int(sys.argv[1]), int(sys.argv[2])
recs = [1] + list(range(10, 401, 10))
inw = [r for i, r in enumerate(recs) if (recs[i - 1] + 1 if i else r) <= b and r >= a]
nan = sum(1 for r in inw if r == 250)
skip = sum(2 for r in inw if r == 300)
timed = [r for r in inw if r not in (250, 300)]
paired = len(timed)
print(nan, skip, len(timed), min(inw), max(inw), paired)
PY
}

ncase=0
for win in 141:249 151:299 150:240 251:400 245:395 301:391 21:239 291:299; do
	a=${win%:*} b=${win#*:}
	ncase=$((ncase + 1))
	read -r nan skip timed lo hi paired <<<"$(truth "$a" "$b")"
	# a window whose records are all left out has no statistics (exit 2)
	if [ "$timed" = 0 ]; then
		n=$(python3 -c "import sys; a, b = map(int, sys.argv[1:]); print(sum(1 for r in range(10, 401, 10) if r - 9 <= b and r >= a))" "$a" "$b")
		"$TS" validate --window "$win" "$tmp/b.log" >/dev/null 2>"$tmp/v.err"
		rc=$?
		grep -q "window $win holds $n timed step(s), all left out" "$tmp/v.err" && [ $rc = 2 ] ||
			bad "validate --window $win: exit $rc, '$(cat "$tmp/v.err")', want exit 2, $n step(s) all left out"
		continue
	fi
	# validate: skipped_nan counts what the window's records count
	"$TS" validate --window "$win" --json "$tmp/b.log" >"$tmp/v.json" 2>/dev/null
	got=$(python3 -c "
import json,sys; d=json.load(open(sys.argv[1]))
print([c['status'] + ': ' + c['evidence'] for c in d['checks'] if c['name'] == 'skipped_nan'][0].split(' (')[0], d['window_steps_timed'])" "$tmp/v.json")
	if [ "$nan$skip" = 00 ]; then
		want="pass: 0 skipped and 0 NaN iterations in the window $timed"
	else
		want="fail: in the window: $skip skipped, $nan NaN/Inf iteration(s); must be 0 $timed"
	fi
	[ "$got" = "$want" ] || bad "validate --window $win: '$got', want '$want'"
	# steps: the window's records and timed steps
	"$TS" steps --window "$win" --json "$tmp/b.log" >"$tmp/s.json" 2>/dev/null
	got=$(python3 -c "
import json,sys; w=json.load(open(sys.argv[1]))['window']
print(w['first_iteration'], w['last_iteration'], w['steps'])" "$tmp/s.json")
	[ "$got" = "$lo $hi $timed" ] || bad "steps --window $win: window '$got', want '$lo $hi $timed'"
	# ab: the paired steps of the window (usable in both runs)
	if [ "$paired" -ge 10 ]; then
		"$TS" ab --window "$win" --json "$tmp/a.log" "$tmp/b.log" >"$tmp/ab.json" 2>/dev/null
		got=$(python3 -c "
import json,sys; print(json.load(open(sys.argv[1]))['paired_steps'])" "$tmp/ab.json")
		[ "$got" = "$paired" ] || bad "ab --window $win: paired_steps $got, want $paired"
	fi
	# diagnose: the window declared by the run's contract
	python3 - "$tmp/run/contract.json" "$a-$b" <<'PY'
import json, sys
json.dump({"schema": "trainscope.contract/1", "label": "training-equivalent",
           "label_reasons": [], "captured": {"time": "2026-12-04T17:00:00Z", "host": "node1"},
           "environment": {"gpu.count": "8"}, "workload": {"steady_window": sys.argv[2]}},
          open(sys.argv[1], "w"))
PY
	"$TS" diagnose --json "$tmp/run" >"$tmp/d.json" 2>/dev/null
	got=$(python3 -c "
import json,sys; w=json.load(open(sys.argv[1]))['window']
print(w['first_iteration'], w['last_iteration'], w['steps'])" "$tmp/d.json")
	[ "$got" = "$lo $hi $timed" ] || bad "diagnose (steady_window $a-$b): window '$got', want '$lo $hi $timed'"
done

# --- the resumed-log warning names the iterations of the NaN's record --
for K in 10 1; do
	{ megatron "$K" "$K" 300 250 0 1; megatron "$K" 210 400 0 0; } >"$tmp/r$K.log"
	if [ "$K" = 1 ]; then want="the first at iteration 250:"; else
		want="the first within iterations 241-250:"; fi
	"$TS" steps "$tmp/r$K.log" >"$tmp/r.txt" 2>&1
	grep -q "^warning: .* goes back from iteration 300 to 210 .* $want" "$tmp/r.txt" ||
		bad "steps K=$K resumed-log: not '$want': $(grep -o 'the first [^:]*:' "$tmp/r.txt")"
done

[ $fail = 0 ] && echo "interval-window: ok ($ncase windows)"
exit $fail
