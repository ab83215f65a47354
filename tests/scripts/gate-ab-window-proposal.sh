#!/usr/bin/env bash
# When the automatic steady windows leave no common stretch, `ab` proposes
# one the user can pass back with --window. Inputs written here:
# - warm.jsonl: 300 steps, 150 ms up to iteration 121 (a warm-up of 120
#   steps after iteration 1: 24 of MSER-5's batches of 5), then 100 ms;
#   its own window starts at 122;
# - shift.jsonl: 100 ms, but 130 ms over iterations 116-200 (a level
#   shift): its own window is the longest steady segment, 2-115.
#   The windows do not overlap (invalid, exit 2), and both runs log to
#   300, so the proposal is --window 122:300 (every run past the start of
#   its own window, logged by every run): 179 paired steps. Passed back
#   it is compared (not invalid): over 122-300 the candidate's mean step is
#   (79 x 130 + 100 x 100) / 179 = 113.24 ms against 100 ms, a ratio of
#   1.132 (+-0.01 for the 0.5 % noise); the shift inside the window keeps
#   the interval wide (inconclusive, exit 1), as it should. Before 2026-12-04 the message said only "declare a common
#   one with --window FIRST:LAST".
# - 20 generated repeat sets (4 runs per side, 120 steps, 150 ms for
#   iterations 1-5, AR(1) rho 0.9 noise of sd 3 %): at least one set's
#   automatic windows leave fewer than 10 paired steps (5 of 200 such sets
#   did, sets 9, 42, 58, 172, 197), and every proposal passed back gives a
#   verdict (not invalid).
set -u
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }

python3 - "$tmp" <<'PY'
import json, math, random, sys
d = sys.argv[1]
def write(name, ms_of, r, n):
    with open(f"{d}/{name}", "w") as f:
        for k in range(1, n + 1):
            f.write(json.dumps({"iteration": k, "step_ms": round(ms_of(k, r), 3),
                                "lm_loss": round(8 - k / 100, 4), "grad_norm": 1.0}) + "\n")
write("warm.jsonl", lambda k, r: (150 if k <= 121 else 100) * (1 + r.gauss(0, 0.005)),
      random.Random(1), 300)
write("shift.jsonl", lambda k, r: (130 if 116 <= k <= 200 else 100) * (1 + r.gauss(0, 0.005)),
      random.Random(2), 300)
rho, sd = 0.9, 0.03
for s in range(20):
    for side in "bc":
        for k in range(4):
            r = random.Random(s * 100 + (side == "c") * 10 + k)
            e = [r.gauss(0, sd)]
            def ms(it, r, e=e):
                e[0] = rho * e[0] + math.sqrt(1 - rho * rho) * r.gauss(0, sd)
                return 100 * (1 + e[0]) * (1.5 if it <= 5 else 1.0)
            write(f"s{s}{side}{k}.jsonl", ms, r, 120)
PY

"$TS" ab "$tmp/warm.jsonl" "$tmp/shift.jsonl" >"$tmp/out.txt" 2>&1
rc=$?
[ $rc = 2 ] || bad "windows apart: exit $rc, want 2"
grep -q "do not overlap" "$tmp/out.txt" || bad "windows apart: not said"
grep -qF "iterations 122-300 are past the start of every run's own window" "$tmp/out.txt" &&
	grep -qF "(179 paired steps): declare them with --window 122:300" "$tmp/out.txt" ||
	bad "windows apart: no proposal of --window 122:300 ($(grep -o 'window [0-9:-]*' "$tmp/out.txt" | tr '\n' ' '))"
"$TS" ab --json "$tmp/warm.jsonl" "$tmp/shift.jsonl" 2>/dev/null |
	grep -qF -- "--window 122:300" || bad "windows apart: the proposal is not in the --json reasons"
"$TS" ab --json --window 122:300 "$tmp/warm.jsonl" "$tmp/shift.jsonl" >"$tmp/w.json" 2>/dev/null
rc=$?
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
ok = d["verdict"] != "invalid" and abs(d["ratio"]["estimate"] - 113.24 / 100) < 0.01
print("proposal passed back: %s %.4f: %s" % (d["verdict"], d["ratio"]["estimate"], "ok" if ok else "FAIL, want a verdict at 1.132"))
sys.exit(0 if ok else 1)' "$tmp/w.json" || fail=1
[ $rc = 1 ] || bad "proposal passed back: exit $rc, want 1 (inconclusive)"

hits=0
for s in $(seq 0 19); do
	b=$tmp/s${s}b0.jsonl,$tmp/s${s}b1.jsonl,$tmp/s${s}b2.jsonl,$tmp/s${s}b3.jsonl
	c=$tmp/s${s}c0.jsonl,$tmp/s${s}c1.jsonl,$tmp/s${s}c2.jsonl,$tmp/s${s}c3.jsonl
	"$TS" ab "$b" "$c" >"$tmp/r.txt" 2>&1
	grep -q "do not overlap\|need at least 10" "$tmp/r.txt" || continue
	hits=$((hits + 1))
	w=$(grep -o -- "--window [0-9]*:[0-9]*" "$tmp/r.txt" | head -1 | cut -d' ' -f2)
	[ -n "$w" ] || { bad "set $s: windows leave too few steps and no window is proposed"; continue; }
	"$TS" ab --window "$w" "$b" "$c" >"$tmp/r2.txt" 2>&1
	rc=$?
	[ $rc = 2 ] && bad "set $s: the proposed --window $w is invalid too: $(grep -- '  - ' "$tmp/r2.txt")"
	echo "set $s: proposed --window $w, passed back: exit $rc"
done
[ $hits -ge 1 ] || bad "no generated set left too few paired steps (set 9 did)"
finish
