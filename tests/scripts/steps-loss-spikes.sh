#!/usr/bin/env bash
# Loss and grad-norm spikes on a trending curve, and a warm-up held in an
# interval record, on Megatron logs written here (the truth follows from
# how they are written; 10 seeds per noisy case):
# - a loss falling as 2 + 8 exp(-i/tau), with no noise (tau 3, and tau 60
#   logged every 10 iterations) or 0.5-1 % noise: no loss spike in any
#   run (before 2026-12-04 the first records of every falling curve were
#   "spikes": [1, 2, 3] on the steep curve, [10, 20, 30] every 10);
# - the same curves with the loss 25 % higher at one record (the 4th, in
#   the steep part; the 120th; the last; the 15th of a log every 10
#   iterations): exactly that iteration, in every run;
# - a grad norm falling from 12.8 to 0.8 over the first records: no grad
#   spike; one 8x its level at iteration 100: exactly [100];
# - log-interval 10, each record the mean of its 10 steps, iterations
#   1-20 warm-up (the record at 20 holds 11-20 at 1150 ms), 1000 ms
#   +-0.6 % after: the window starts at 30, the record at 20 is warm-up,
#   and the mean is the steady records' own mean within 0.01 % (before:
#   the window opened at 20 with that record as a "spike", +0.4 %);
# - a per-iteration log with no warm-up and one 40 % slow step at
#   iteration 80: that step stays in the window.
set -u
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }

python3 - "$tmp" <<'PY'
import math, random, sys
d = sys.argv[1]
line = (" iteration {it:8d}/ {n:7d} | consumed samples: {cs:12d} |"
        " elapsed time per iteration (ms): {ms:.1f} | learning rate: 3.000000E-04 |"
        " global batch size:   256 | lm loss: {loss:.6E} | loss scale: 1.0 |"
        " grad norm: {g:.3f} | number of skipped iterations:   0 |"
        " number of nan iterations:   0 |\n")
# name: (tau in records, loss noise, log interval, spiked records, grad)
cases = {
    "smooth3": (3, 0.0, 1, [], "flat"), "li10": (6, 0.0, 10, [], "flat"),
    "noisy5": (5, 0.005, 1, [], "flat"), "noisy30": (30, 0.01, 1, [], "flat"),
    "li10n": (6, 0.005, 10, [], "flat"),
    "early": (30, 0.005, 1, [4], "flat"), "mid": (30, 0.005, 1, [120], "flat"),
    "last": (30, 0.005, 1, [200], "flat"), "li10s": (6, 0.005, 10, [15], "flat"),
    "gfall": (30, 0.005, 1, [], "fall"), "gspike": (30, 0.005, 1, [], "spike"),
}
for name, (tau, noise, li, spikes, gk) in cases.items():
    for s in range(1 if noise == 0 else 10):
        r = random.Random(7919 * s + len(name))
        with open(f"{d}/{name}_{s}.log", "w") as f:
            for k in range(1, 201):
                loss = (2 + 8 * math.exp(-k / tau)) * (1 + r.gauss(0, noise))
                if k in spikes:
                    loss *= 1.25
                g = 0.8 * (1 + r.gauss(0, 0.05))
                if gk == "fall":
                    g = 0.8 + 12 * math.exp(-k / 3)
                if gk == "spike" and k == 100:
                    g *= 8
                ms = 1000 * (1 + r.gauss(0, 0.01))
                f.write(line.format(it=k * li, n=200 * li, cs=256 * k * li, ms=ms, loss=loss, g=g))
# warm-up inside the interval record at 20
for s in range(5):
    r = random.Random(31 * s + 1)
    steady = []
    with open(f"{d}/warm_{s}.log", "w") as f:
        for k in range(1, 41):
            if k == 1:
                ms = (30000 + 9 * 1300) / 10
            elif k == 2:
                ms = 1150.0
            else:
                ms = round(1000 * (1 + r.gauss(0, 0.006)), 1)
                steady.append(ms)
            f.write(line.format(it=10 * k, n=400, cs=2560 * k, ms=ms, loss=3.0, g=0.8))
    with open(f"{d}/warm_{s}.truth", "w") as f:
        f.write(f"{sum(steady) / len(steady)}\n")
with open(f"{d}/slow80.log", "w") as f:
    r = random.Random(5)
    for k in range(1, 201):
        ms = 1000 * (1 + r.gauss(0, 0.01)) * (1.4 if k == 80 else 1)
        f.write(line.format(it=k, n=200, cs=256 * k, ms=ms, loss=3.0, g=0.8))
PY

# every case's runs at once: "FILE LOSS_SPIKES|GRAD_SPIKES" lines
for f in "$tmp"/*_[0-9]*.log; do
	case $f in *warm_*) continue ;; esac
	"$TS" steps --json "$f" >"$f.json" || bad "$f: exit $?"
done
python3 - "$tmp" >"$tmp/spikes" <<'PY'
import glob, json, sys
for f in sorted(glob.glob(sys.argv[1] + "/*.log.json")):
    l = json.load(open(f))["loss"]
    print(f[:-5], json.dumps(l["spike_iterations"]) + "|" +
          json.dumps(l["grad_norm_spike_iterations"]))
PY
# expect CASE WANT: every run of CASE gives WANT
expect() {
	local n off
	n=$(grep -c "/$1_[0-9]*\.log " "$tmp/spikes")
	off=$(grep "/$1_[0-9]*\.log " "$tmp/spikes" | grep -vcF " $2")
	[ "$n" -gt 0 ] || bad "$1: no runs"
	[ "$off" = 0 ] || { grep "/$1_[0-9]*\.log " "$tmp/spikes" | grep -vF " $2";
		bad "$1: $off of $n runs differ from $2"; }
}
expect smooth3 '[]|[]'
expect li10 '[]|[]'
expect noisy5 '[]|[]'
expect noisy30 '[]|[]'
expect li10n '[]|[]'
expect early '[4]|[]'
expect mid '[120]|[]'
expect last '[200]|[]'
expect li10s '[150]|[]'
expect gfall '[]|[]'
expect gspike '[]|[100]'

for s in 0 1 2 3 4; do
	"$TS" steps --json "$tmp/warm_$s.log" >"$tmp/w.json" || bad "warm_$s: exit $?"
	python3 - "$tmp/w.json" "$(cat "$tmp/warm_$s.truth")" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
truth = float(sys.argv[2])
w = d["window"]
ex = [(e["reason"], e["first_iteration"], e["last_iteration"]) for e in w["excluded"]]
mean = d["step_time_ms"]["mean"]
ok = (w["first_iteration"] == 30 and w["last_iteration"] == 400 and
      ("warm-up", 20, 20) in ex and abs(mean - truth) <= 1e-4 * truth)
if not ok:
    print(f"FAIL: {sys.argv[1]}: window {w['first_iteration']}:{w['last_iteration']} "
          f"{ex}, mean {mean} against {truth:.3f}")
sys.exit(0 if ok else 1)
PY
done
# the same record in text: the warm-up group is named
"$TS" steps "$tmp/warm_0.log" | grep -q 'warm-up 20' ||
	bad "warm_0: text names no warm-up at 20"

"$TS" steps --json "$tmp/slow80.log" | python3 -c '
import json, sys
d = json.load(sys.stdin)
w = d["window"]
o = [x["iteration"] for x in d["outliers"]]
sys.exit(0 if w["first_iteration"] <= 80 <= w["last_iteration"] and 80 in o else 1)' ||
	bad "slow80: the slow step at 80 left the window"
exit $fail
