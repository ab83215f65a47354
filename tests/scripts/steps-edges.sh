#!/usr/bin/env bash
# Run-model edges a new user meets in steps, validate and diagnose, on
# logs written here (the expected values follow from how they are
# written, never from trainscope's output):
#  1. Megatron --log-interval K prints one record every K iterations; its
#     "number of nan iterations" and "number of skipped iterations" count
#     the K iterations of the interval, and its loss is their mean. A NaN
#     counted in the record at iteration I therefore started somewhere in
#     I-K+1..I (the record after iteration 1's: 2..K). Every output says
#     that range: steps (text, --json first_possible_*), validate's
#     loss_finite, diagnose's loss finding, ab's nan_inf check and the
#     loss-not-finite warning. With K = 1 it is the iteration itself, as before.
#  2. One rule for a steady window: fewer than 10 usable timed steps is
#     none, in every command. A Megatron log of iteration 1 (5 s) and then
#     S steps alternating 199/201 ms (no warm-up, no spike: the automatic
#     window holds all S) gets the window method few-steps ("few-steps,
#     no steady window") in steps, validate and diagnose when S < 10
#     (steps called it mser-5 while validate and diagnose said there was
#     no steady window), and its report shades no "steady window"; from
#     S = 10 on it is an mser-5 window everywhere. The shared NeMo 2 log
#     (iterations 8-11) is the case a user met.
#  3. steps --csv says for each row where its iteration stands to the
#     window (column window: in, or the window object's reason) and which
#     outlier it is (column outlier). A log of iteration 1 (5 s), a
#     warm-up 2-21 at 400 ms (four MSER-5 batches of 5 exactly), then
#     199/201 ms with one 400 ms spike at 100, a NaN counted at 150 and
#     a skipped iteration at 160: 1 first-iteration, 2-21 warm-up, 150
#     non-finite, 160 skipped, the rest in, 100 a spike; with --window
#     30:180, 1-29 before-window and 181-200 after-window instead. The
#     CSV had no such column: a plot could not tell the window's rows.
#  4. HF Trainer dicts behind a launcher prefix take its rank, and under
#     torchrun --tee the Trainer's bar still numbers them.
#     steps-tee-gen.py writes the console of torchrun --tee ([default0]:,
#     [rank0]: with --log-line-prefix-template) and mpirun --tag-output
#     ([1,0]<stderr>: / <stdout>:), 5 seeds each: the dicts are steps
#     10..300 of rank 0 with no ordinal-steps (a redraw followed by the
#     next piece's prefix was no bar: the dicts took the redraw before,
#     9..297, some as record ordinals, with no rank). A log whose dicts
#     carry "step" behind [default0]: and [default1]: is two ranks of 12
#     records each (they were one series without a rank).
set -u
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }

# megatron K N NAN_AT NAN_K SKIP_AT SKIP_K GRAD_NAN: a Megatron log of
# iterations 1, K, 2K, ..., N at 200 ms (+-1 %), loss 2 + 8 exp(-i/100);
# the record at NAN_AT counts NAN_K NaN iterations (its loss is then
# dropped, as Megatron drops a NaN mean, and with GRAD_NAN=1 its grad norm
# is nan), the record at SKIP_AT counts SKIP_K skipped ones
megatron() {
	python3 - "$@" <<'PY'
import math, random, sys
K, N, nan_at, nan_k, skip_at, skip_k, gnan = map(int, sys.argv[1:])
random.seed(K * 1000 + nan_at)
def rec(it, ms, nan, sk):
    loss = "" if nan else " lm loss: %.6E |" % (2 + 8 * math.exp(-it / 100))
    gn = "nan" if nan and gnan else "1.000"
    return (" iteration %8d/%8d | consumed samples: %12d | elapsed time per iteration (ms): %.1f |"
            " learning rate: 1.000000E-04 | global batch size:     8 |%s loss scale: 1.0 |"
            " grad norm: %s | number of skipped iterations: %3d | number of nan iterations: %3d |"
            % (it, N, it * 8, ms, loss, gn, sk, nan))
print(rec(1, 5000.0, 0, 0))
for it in range(K, N + 1, K):
    if it == 1:
        continue
    print(rec(it, 200.0 * (1 + 0.01 * random.uniform(-1, 1)),
              nan_k if it == nan_at else 0, skip_k if it == skip_at else 0))
PY
}

# --- 1. the NaN and skipped counters of an interval -------------------
ncase=0
for c in "1 400 250 1 300 2 0" "1 400 37 1 38 1 1" "5 500 250 1 300 2 0" "10 400 250 1 300 2 0" \
	 "10 400 250 3 300 2 1" "10 400 10 1 20 1 0" "20 1000 500 2 620 4 1" "50 2000 1250 1 1500 5 0" \
	 "50 2000 50 1 1000 1 1" "100 4000 2600 1 3000 1 0"; do
	set -- $c
	K=$1 N=$2 NAN=$3 SKIP=$5
	ncase=$((ncase + 1))
	f=$tmp/m$ncase.log
	megatron "$@" >"$f"
	# the truth: the first iteration the record stands for
	lo=$((NAN - K + 1)); [ "$NAN" = "$K" ] && lo=2; [ "$K" = 1 ] && lo=$NAN
	slo=$((SKIP - K + 1)); [ "$SKIP" = "$K" ] && slo=2; [ "$K" = 1 ] && slo=$SKIP
	if [ $lo = $NAN ]; then at="from iteration $NAN" first="first $NAN"; else
		at="from within iterations $lo-$NAN" first="first within $lo-$NAN"; fi
	if [ $slo = $SKIP ]; then sat="skipped iterations from $SKIP"; else
		sat="skipped iterations from within $slo-$SKIP"; fi
	what="K=$K NaN at $NAN"
	"$TS" steps --json "$f" >"$tmp/s.json" 2>/dev/null
	got=$(field "$tmp/s.json" "d['loss']['first_bad_iteration'], d['loss'].get('first_possible_bad_iteration'), [(e['cause'], e['first_iteration'], e.get('first_possible_iteration')) for e in d['loss']['evidence'] if e['cause'] in ('nan-iterations', 'skipped-iterations')]")
	want="$NAN $lo [('nan-iterations', $NAN, $lo), ('skipped-iterations', $SKIP, $slo)]"
	[ "$got" = "$want" ] || bad "steps --json $what: '$got', want '$want'"
	"$TS" steps "$f" >"$tmp/s.txt" 2>&1
	grep -q "health non-finite $at (" "$tmp/s.txt" || bad "steps $what: no 'health non-finite $at'"
	grep -q "NaN/Inf iterations: [0-9]*, $first;" "$tmp/s.txt" || bad "steps $what: no 'NaN/Inf iterations: N, $first'"
	grep -q "$sat" "$tmp/s.txt" || bad "steps $what: no '$sat'"
	grep -q "^warning: The training is not numerically healthy: .* $at (" "$tmp/s.txt" ||
		bad "steps $what: loss-not-finite warning not '$at'"
	"$TS" validate --window "$((2 * K + 1)):$N" "$f" >"$tmp/v.txt" 2>&1
	grep -q "loss_finite .* loss health non-finite $at (" "$tmp/v.txt" ||
		bad "validate $what: loss_finite not '$at'"
	"$TS" diagnose "$f" >"$tmp/d.txt" 2>&1
	grep -q "^ *non-finite $at (" "$tmp/d.txt" || bad "diagnose $what: loss finding not '$at'"
	megatron "$K" "$N" 0 0 0 0 0 >"$tmp/clean.log"
	"$TS" ab "$tmp/clean.log" "$f" >"$tmp/ab.txt" 2>&1
	grep -q "nan_inf .* loss health of $f: non-finite $at (" "$tmp/ab.txt" ||
		bad "ab $what: nan_inf not '$at'"
done

# --- 2. a window under 10 steps is no steady window, in every command --
for S in 1 3 5 8 9 10 11 14; do
	f=$tmp/few$S.log
	python3 - "$S" >"$f" <<'PY'
import sys
S = int(sys.argv[1])
for it in range(1, S + 2):
    ms = 5000.0 if it == 1 else (199.0 if it % 2 else 201.0)
    print(" iteration %8d/%8d | consumed samples: %12d | elapsed time per iteration (ms): %.1f |"
          " learning rate: 1.000000E-04 | global batch size:     8 | lm loss: %.6E | loss scale: 1.0 |"
          " grad norm: 1.000 | number of skipped iterations:   0 | number of nan iterations:   0 |"
          % (it, S + 1, it * 8, ms, 5.0 - it * 0.01))
PY
	if [ "$S" -lt 10 ]; then method=few-steps words="few-steps, no steady window"; else
		method=mser-5 words="mser-5"; fi
	want="2 $((S + 1)) $S $method"
	"$TS" steps --json "$f" >"$tmp/few.json" 2>/dev/null
	got=$(field "$tmp/few.json" "d['window']['first_iteration'], d['window']['last_iteration'], d['window']['steps'], d['window']['method']")
	[ "$got" = "$want" ] || bad "steps --json $S steps: window '$got', want '$want'"
	"$TS" steps "$f" 2>/dev/null | grep -q "^window      iterations 2:$((S + 1)), $S steps\? ($words[;)]" ||
		bad "steps $S steps: window line not '($words)'"
	"$TS" validate --json "$f" >"$tmp/fewv.json" 2>/dev/null
	got=$(field "$tmp/fewv.json" "d['window']['method'], [c['evidence'].startswith('no steady window') for c in d['checks'] if c['name'] == 'window']")
	want="$method [$([ "$S" -lt 10 ] && echo True || echo False)]"
	[ "$got" = "$want" ] || bad "validate --json $S steps: '$got', want '$want'"
	"$TS" diagnose "$f" >"$tmp/fewd.txt" 2>/dev/null
	"$TS" report "$f" -o "$tmp/few.html" >/dev/null 2>&1
	if [ "$S" -lt 10 ]; then
		grep -q "^step time: .*fewer than 10 steps: no steady window" "$tmp/fewd.txt" ||
			bad "diagnose $S steps: not 'no steady window'"
		grep -o "Shaded: steady window[^.]*" "$tmp/few.html" | grep -q . &&
			bad "report $S steps: 'Shaded: steady window'"
	else
		grep -q "^steady step time: " "$tmp/fewd.txt" || bad "diagnose $S steps: no steady step time"
		grep -q "Shaded: steady window, iterations 2-$((S + 1))" "$tmp/few.html" ||
			bad "report $S steps: no 'Shaded: steady window, iterations 2-$((S + 1))'"
	fi
done
DATA=${DATA:-../shared/data}
nemo=$DATA/logs/nemo2_issue14850_qwen3_30b_a3b.log
if [ -f "$nemo" ]; then
	for c in steps validate diagnose; do
		"$TS" $c --json "$nemo" >"$tmp/nemo.json" 2>/dev/null
		got=$(field "$tmp/nemo.json" "d['window']['method'] if 'window' in d else d['steps']['window']['method']")
		[ "$got" = few-steps ] || bad "$c --json on the NeMo 2 log: window method '$got', want few-steps"
	done
fi

# --- 3. the CSV's window and outlier columns ---------------------------
python3 - >"$tmp/w.log" <<'PY'
for it in range(1, 201):
    ms = 5000.0 if it == 1 else 400.0 if it <= 21 or it == 100 else (199.0 if it % 2 else 201.0)
    nan = 1 if it == 150 else 0
    loss = "" if nan else " lm loss: %.6E |" % (5.0 - it * 0.01)
    print(" iteration %8d/     200 | consumed samples: %12d | elapsed time per iteration (ms): %.1f |"
          " learning rate: 1.000000E-04 | global batch size:     8 |%s loss scale: 1.0 |"
          " grad norm: 1.000 | number of skipped iterations: %3d | number of nan iterations: %3d |"
          % (it, it * 8, ms, loss, 1 if it == 160 else 0, nan))
PY
# runs of equal (window, outlier) as FIRST-LAST:WINDOW:OUTLIER
runs() {
	python3 -c '
import csv, sys
rows = list(csv.DictReader(sys.stdin))
out, prev = [], None
for r in rows:
    k = (r.get("window"), r.get("outlier"))
    if prev and prev[2] == k and int(r["iteration"]) == prev[1] + 1:
        prev[1] = int(r["iteration"])
    else:
        prev = [int(r["iteration"]), int(r["iteration"]), k]
        out.append(prev)
print(" ".join("%d-%d:%s:%s" % (a, b, k[0], k[1]) for a, b, k in out))'
}
got=$("$TS" steps --csv "$tmp/w.log" 2>/dev/null | runs)
want="1-1:first-iteration: 2-21:warm-up: 22-99:in: 100-100:in:spike 101-149:in: 150-150:non-finite: 151-159:in: 160-160:skipped: 161-200:in:"
[ "$got" = "$want" ] || bad "steps --csv automatic window: '$got', want '$want'"
got=$("$TS" steps --csv --window 30:180 "$tmp/w.log" 2>/dev/null | runs)
want="1-29:before-window: 30-99:in: 100-100:in:spike 101-149:in: 150-150:non-finite: 151-159:in: 160-160:skipped: 161-180:in: 181-200:after-window:"
[ "$got" = "$want" ] || bad "steps --csv --window 30:180: '$got', want '$want'"

# --- 4. HF Trainer dicts behind launcher prefixes -----------------------
for m in default rank mpirun; do
	for seed in 1 2 3 4 5; do
		python3 tests/scripts/steps-tee-gen.py $m $seed >"$tmp/tee.log"
		"$TS" steps --json "$tmp/tee.log" >"$tmp/tee.json" 2>/dev/null
		got=$(field "$tmp/tee.json" "d['first_iteration'], d['last_iteration'], d['iterations'], d['loss']['final'], [r['rank'] for r in d['ranks']], 'ordinal-steps' in [w['code'] for w in d['warnings']]")
		want="10 300 30 2.85 [0] False"
		[ "$got" = "$want" ] || bad "steps --json $m tee seed $seed: '$got', want '$want'"
		got=$("$TS" steps --csv "$tmp/tee.log" 2>/dev/null | awk -F, 'NR > 1 {print $1 "/" $2}' | tr '\n' ' ')
		want=$(for k in $(seq 1 30); do printf '%d/0 ' $((10 * k)); done)
		[ "$got" = "$want" ] || bad "steps --csv $m tee seed $seed: iteration/rank '$got'"
	done
done
for k in $(seq 1 12); do
	for r in 0 1; do
		# loss 2.KKR: rank r's own at step 10 k
		printf "[default%d]:{'loss': 2.%02d%d, 'grad_norm': 1.0, 'learning_rate': 1e-05, 'epoch': 0.%02d, 'step': %d}\n" \
			$r $k $r $k $((10 * k))
	done
done >"$tmp/two.log"
"$TS" steps --json "$tmp/two.log" >"$tmp/two.json" 2>/dev/null
got=$(field "$tmp/two.json" "[(r['rank'], r['final_loss']) for r in d['ranks']], d['iterations']")
want="[(0, 2.12), (1, 2.121)] 12"
[ "$got" = "$want" ] || bad "steps --json two prefixed ranks: '$got', want '$want'"

[ $fail = 0 ] && echo "steps-edges: ok ($ncase interval cases)"
exit $fail
