#!/usr/bin/env bash
# Cost of `trainscope watch --read` against the number of GPUs at a fixed
# number of samples: generated nvidia-smi --query-gpu captures of G GPUs x
# SAMPLES / G rounds at 1 Hz (G = 16, 64, 256; power, utilisation, clocks,
# clock-event reasons), each read RUNS times (default 5) after one
# warm-up, and, for 64 GPUs, also joined to one step per round. Prints
# the median CPU (user + system) per capture and its ratio to the 16-GPU
# capture's: a reading that is linear in the samples keeps the ratios near
# 1 (before 5 Dec 2026 the per-GPU passes re-read every sample once per
# GPU: 64 GPUs cost 2.6x and 256 GPUs 10.5x the 16-GPU capture).
#
#   SAMPLES=230400 RUNS=5 bench/bench_watch.sh
#
# TS (default build/trainscope) is the binary. Exit 77 without python3 or
# GNU time.
set -eu
cd "$(dirname "$0")/.."
TS=${TS:-build/trainscope}
RUNS=${RUNS:-5}
SAMPLES=${SAMPLES:-230400}
command -v python3 >/dev/null || { echo "bench_watch: skipped: needs python3" >&2; exit 77; }
[ -x /usr/bin/time ] || { echo "bench_watch: skipped: needs /usr/bin/time" >&2; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-watch.XXXXXX")
trap 'rm -rf "$work"' EXIT

python3 - "$work" "$SAMPLES" <<'PY'
import calendar, json, sys, time
work, samples = sys.argv[1], int(sys.argv[2])
T0 = calendar.timegm((2026, 2, 1, 12, 0, 0))
for G in (16, 64, 256):
    R = samples // G
    with open("%s/g%d.csv" % (work, G), "w") as f:
        f.write("timestamp, index, power.draw [W], power.limit [W], utilization.gpu [%], clocks.sm [MHz], "
                "clocks.max.sm [MHz], clocks_throttle_reasons.active\n")
        for i in range(R):
            st = time.strftime("%Y/%m/%d %H:%M:%S", time.gmtime(T0 + i))
            for g in range(G):
                f.write("%s.%03d, %d, %d.00 W, 700.00 W, %d %%, 1980 MHz, 1980 MHz, 0x0000000000000000\n"
                        % (st, g % 1000, g, 500 + (i * 7 + g) % 50, 90 + (i + g) % 10))
    if G == 64:
        with open("%s/steps.jsonl" % work, "w") as f:
            for k in range(R - 10):
                f.write(json.dumps({"iteration": k, "t_start_unix": T0 + 0.5 + k, "step_time_s": 1.0}) + "\n")
PY

# median CPU seconds of RUNS runs of CMD... (after one warm-up)
cpu() {
	local i v=()
	"$@" >/dev/null 2>&1
	for i in $(seq "$RUNS"); do
		/usr/bin/time -f "%U %S" -o "$work/time" "$@" >/dev/null 2>&1
		v+=("$(awk '{print $1 + $2}' "$work/time")")
	done
	printf '%s\n' "${v[@]}" | sort -g | awk '{a[NR]=$1} END {printf "%.3f", a[int((NR+1)/2)]}'
}

echo "watch --read, $SAMPLES samples, median of $RUNS (CPU s; ratio to 16 GPUs)"
base=
for G in 16 64 256; do
	c=$(cpu "$TS" watch --read "$work/g$G.csv" --json -o "$work/out.json")
	base=${base:-$c}
	printf '  %3d GPUs x %6d rounds  %7.3f s  %5.2fx\n' "$G" $((SAMPLES / G)) "$c" \
		"$(awk -v a="$c" -v b="$base" 'BEGIN {print a / b}')"
done
c=$(cpu "$TS" watch --read "$work/g64.csv" --steps "$work/steps.jsonl" --json -o "$work/out.json")
printf '   64 GPUs, steps joined       %7.3f s\n' "$c"
