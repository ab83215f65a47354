#!/usr/bin/env bash
# The statistical loss tier of `ab` on JSONL runs written here: 300 steps,
# loss 2 + 8 exp(-i/60) times (1 + NOISE x N(0,1)), iid per step, so every
# pair below of different seeds and no shift is the same training (A vs A)
# and must pass, whatever the noise:
# - 100 such pairs at 3 % per-step noise: at most 10 may fail loss_curve
#   (the tier's two noise tests share a 5 % budget: 5 expected; these
#   seeds give 6). Before 2026-12-04 the tail test held the raw last 10 %
#   to 1 % whatever its noise and failed 23 of these 100 (19 in the tail);
# - at least 95 of them are warned loss-noisy (the tail's 97.5 %
#   half-width is over 1 %; these seeds: 99), in the JSON and the text;
#   of 20 pairs at 0.5 % noise none is, and none fails;
# - a real divergence still fails at 0.5 % noise: the candidate's loss
#   x 1.03 over the last 20 %, x 1.02 over the last 30 %, x 1.015 over
#   the last 10 % (5 seeds each): loss_curve failed, exit 1;
# - --loss-tolerance 5 takes the 3 % divergence (tail limit 5 %, bias
#   band 2.5 %); --loss-tolerance -1 and 101 are usage errors (exit 2).
set -u
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }

python3 - "$tmp" <<'PY'
import json, math, random, sys
d = sys.argv[1]
def write(name, seed, noise, frac=2.0, shift=0.0):
    r = random.Random(seed)
    with open(f"{d}/{name}", "w") as f:
        for i in range(1, 301):
            loss = (2 + 8 * math.exp(-i / 60)) * (1 + noise * r.gauss(0, 1))
            if i > frac * 300:
                loss *= 1 + shift
            f.write(json.dumps({"iteration": i, "step_ms": 100 * (1 + 0.02 * r.gauss(0, 1)),
                                "lm_loss": loss, "grad_norm": 1 + 0.05 * r.gauss(0, 1),
                                "tokens": 4096}) + "\n")
for s in range(1, 101):
    write(f"aa3-{s}-a.jsonl", 2 * s, 0.03)
    write(f"aa3-{s}-b.jsonl", 2 * s + 1, 0.03)
for s in range(1, 21):
    write(f"aa05-{s}-a.jsonl", 2 * s, 0.005)
    write(f"aa05-{s}-b.jsonl", 2 * s + 1, 0.005)
for s in range(1, 6):
    write(f"div-{s}-a.jsonl", 100 + 2 * s, 0.005)
    write(f"div3-{s}-b.jsonl", 101 + 2 * s, 0.005, 0.8, 0.03)
    write(f"div2-{s}-b.jsonl", 101 + 2 * s, 0.005, 0.7, 0.02)
    write(f"div15-{s}-b.jsonl", 101 + 2 * s, 0.005, 0.9, 0.015)
PY

# loss_curve status and whether loss-noisy was warned, from ab's JSON
verdict() {
	python3 -c '
import json, sys
r = json.load(sys.stdin)
c = [x for x in r["correctness"]["checks"] if x["name"] == "loss_curve"][0]
noisy = any(w["code"] == "loss-noisy" for w in r.get("warnings", []))
print(c["status"], "noisy" if noisy else "quiet")'
}

failed=0 noisy=0
for s in $(seq 1 100); do
	v=$("$TS" ab --json "$tmp/aa3-$s-a.jsonl" "$tmp/aa3-$s-b.jsonl" 2>/dev/null | verdict)
	case $v in failed*) failed=$((failed + 1)) ;; esac
	case $v in *" noisy") noisy=$((noisy + 1)) ;; esac
done
[ $failed -le 10 ] || bad "A vs A at 3 % noise: $failed of 100 pairs failed loss_curve (want <= 10)"
[ $noisy -ge 95 ] || bad "A vs A at 3 % noise: loss-noisy in $noisy of 100 pairs (want >= 95)"

failed=0 noisy=0
for s in $(seq 1 20); do
	v=$("$TS" ab --json "$tmp/aa05-$s-a.jsonl" "$tmp/aa05-$s-b.jsonl" 2>/dev/null | verdict)
	case $v in failed*) failed=$((failed + 1)) ;; esac
	case $v in *" noisy") noisy=$((noisy + 1)) ;; esac
done
[ $failed = 0 ] || bad "A vs A at 0.5 % noise: $failed of 20 pairs failed loss_curve (want 0)"
[ $noisy = 0 ] || bad "A vs A at 0.5 % noise: loss-noisy in $noisy of 20 pairs (want 0)"

# the warning in the text output too
"$TS" ab "$tmp/aa3-1-a.jsonl" "$tmp/aa3-1-b.jsonl" >"$tmp/out.txt" 2>"$tmp/err.txt"
grep -q "too noisy for the 1 % tail limit" "$tmp/out.txt" "$tmp/err.txt" ||
	bad "text output lacks the loss-noisy warning"

for kind in div3 div2 div15; do
	for s in $(seq 1 5); do
		"$TS" ab --json "$tmp/div-$s-a.jsonl" "$tmp/$kind-$s-b.jsonl" >"$tmp/div.json" 2>/dev/null
		rc=$?
		v=$(verdict <"$tmp/div.json")
		case $v in failed*) ;; *) bad "$kind seed $s: loss_curve $v (want failed)" ;; esac
		[ $rc = 1 ] || bad "$kind seed $s: exit $rc (want 1)"
	done
done

v=$("$TS" ab --json --loss-tolerance 5 "$tmp/div-1-a.jsonl" "$tmp/div3-1-b.jsonl" 2>/dev/null | verdict)
case $v in passed*) ;; *) bad "--loss-tolerance 5 on the 3 % divergence: loss_curve $v (want passed)" ;; esac
for x in -1 101; do
	"$TS" ab --loss-tolerance $x "$tmp/div-1-a.jsonl" "$tmp/div3-1-b.jsonl" >/dev/null 2>&1
	rc=$?
	[ $rc = 2 ] || bad "--loss-tolerance $x: exit $rc (want 2)"
done

finish
