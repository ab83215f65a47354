#!/usr/bin/env bash
# Loss health and phase stalls across commands, on logs written here (the
# expected values follow from how they are written):
# - a Megatron log whose lm loss disappears from iteration 60 on while
#   `grad norm: nan` is printed (the NaN counter stays 0) is non-finite from
#   60 in `steps`, and `ab` (against a clean copy) and `validate` fail it
#   (exit 1); the same log with the loss dropped but a finite grad norm is
#   missing from 60 and fails both too; the clean log passes validate's
#   loss check; `diagnose` and `report` on a directory holding the log say
#   the same (non-finite / missing from 60);
# - a JSONL with data_ms 0.4 ms and 150.4 ms on every 5th iteration, under a
#   step time with CV about 30 %, reports period 5, phase 0, 10 of 10 slots,
#   150 ms each and 1500 ms / (sum of step times 2..50) of wall time.
set -u
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
python3 - "$tmp" <<'PY'
import random, sys
d = sys.argv[1]
def megatron(name, kind):
    with open(f"{d}/{name}.log", "w") as f:
        for i in range(1, 101):
            bad = i >= 60 and kind != "clean"
            s = (f" [2024-04-06 10:00:00] iteration {i:8d}/     100 | consumed samples: {8 * i:12d} |"
                 f" elapsed time per iteration (ms): {1000 + (i * 7919) % 13:.1f} |"
                 " learning rate: 1.000000E-04 | global batch size:     8 |")
            if not bad:
                s += f" lm loss: {8 - 0.001 * i:.6E} |"
            s += " loss scale: 1.0 |"
            s += " grad norm: nan |" if bad and kind == "gradnan" else " grad norm: 1.234 |"
            s += " number of skipped iterations:   0 | number of nan iterations:   0 |\n"
            f.write(s)
for name in ("clean", "gradnan", "dropped"):
    megatron(name, name)
random.seed(5)
wall = 0.0
with open(f"{d}/stall.jsonl", "w") as f:
    for i in range(1, 51):
        data = 150.4 if i % 5 == 0 else 0.4
        fwd = round(random.uniform(50, 350), 3)
        step = round(data + fwd + 100, 3)
        if i > 1:
            wall += step
        f.write('{"iteration": %d, "step_ms": %.3f, "data_ms": %.1f, "fwd_ms": %.3f, "bwd_ms": 100.0}\n'
                % (i, step, data, fwd))
with open(f"{d}/stall.want", "w") as f:
    f.write("%.2f\n" % (1500 / wall * 100))
PY
for case in "gradnan non-finite grad-norm-nonfinite" "dropped missing loss-dropped"; do
	set -- $case
	"$TS" steps --json "$tmp/$1.log" >"$tmp/$1.json" || bad "steps $1: exit $?"
	got=$(field "$tmp/$1.json" "d['loss']['health'], d['loss']['health_cause'], d['loss']['first_bad_iteration']")
	[ "$got" = "$2 $3 60" ] || bad "steps $1: loss health '$got', want '$2 $3 60'"
	"$TS" ab "$tmp/clean.log" "$tmp/$1.log" >"$tmp/$1.ab" 2>&1; rc=$?
	[ $rc = 1 ] || { bad "ab clean $1: exit $rc, want 1"; cat "$tmp/$1.ab"; }
	grep -q "nan_inf *FAILED.*from iteration 60" "$tmp/$1.ab" || bad "ab $1: nan_inf does not fail from 60"
	"$TS" validate --window 10:100 "$tmp/$1.log" >"$tmp/$1.val" 2>&1; rc=$?
	[ $rc = 1 ] || bad "validate $1: exit $rc, want 1"
	grep -q "^loss_finite *fail *loss health $2 from iteration 60" "$tmp/$1.val" ||
		{ bad "validate $1: loss_finite"; cat "$tmp/$1.val"; }
	# diagnose and report give the same verdict, from the same iteration
	mkdir -p "$tmp/run-$1"
	cp "$tmp/$1.log" "$tmp/run-$1/"
	"$TS" diagnose --json "$tmp/run-$1" >"$tmp/$1.diag" 2>&1 || bad "diagnose $1: exit $?"
	got=$(field "$tmp/$1.diag" "[f['title'] for f in d['findings'] if f['title'].startswith('loss health')], d['steps']['loss']['health'], d['steps']['loss']['first_bad_iteration']")
	[ "$got" = "['loss health: $2'] $2 60" ] || bad "diagnose $1: '$got', want loss health $2 from 60"
	"$TS" report "$tmp/run-$1" -o "$tmp/$1.md" >/dev/null 2>&1 || bad "report $1: exit $?"
	grep -q "loss health: $2" "$tmp/$1.md" && grep -q "from iteration 60" "$tmp/$1.md" ||
		bad "report $1: no 'loss health: $2' from iteration 60"
done
"$TS" validate --window 10:100 "$tmp/clean.log" >"$tmp/clean.val" 2>&1
grep -q "^loss_finite *pass" "$tmp/clean.val" || bad "validate clean: loss_finite does not pass"
"$TS" steps --json "$tmp/stall.jsonl" >"$tmp/stall.json" || bad "steps stall: exit $?"
got=$(field "$tmp/stall.json" "[(p['periodic_stall']['period'], p['periodic_stall']['phase'], p['periodic_stall']['hits'], p['periodic_stall']['slots'], p['periodic_stall']['excess_per_stall_ms'], '%.2f' % p['periodic_stall']['wall_time_pct']) for p in d['phases'] if p['phase'] == 'data' and p['periodic_stall']]")
want="[(5, 0, 10, 10, 150.0, '$(cat "$tmp/stall.want")')]"
[ "$got" = "$want" ] || bad "steps stall: data periodic $got, want $want"
"$TS" steps "$tmp/stall.jsonl" | grep -q "periodic in data every 5 iterations (phase 0): 10 of 10 slots" ||
	bad "steps stall: text does not report the data stall"
exit $fail
