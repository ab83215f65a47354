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
# Then many GPUs: two --query-gpu captures of the same GPUS GPUs (default
# 20,000; index, uuid, bus id; 3 rounds, the second capture 10 s later),
# and two dcgm-exporter files of GPUS / 8 hosts of 8 GPUs (3 scrapes;
# GPU 3 of each host at 400 W against 650, a straggler in both files),
# read together, and `ab` of two run directories holding one such file
# each (the other side's SM clocks 1500 MHz: a confound on every host).
# Before 5 Dec 2026 a new GPU id scanned the file's GPUs and each host's
# pass went over every GPU: 2.3 s, 4.4 s and 5.1 s of user CPU on the
# shared build machine, against 0.66, 0.69 and 0.26 s.
#
# Then many captures: 1,000 and 4,000 --query-gpu captures of the same 8
# GPUs (index, uuid; 3 rounds each, 10 s apart), each set read together;
# prints the CPU of each and their ratio (4 when linear in the captures;
# until 5 Dec 2026 250 and 1,000, whose 0.02 and 0.12 s were too short
# for GNU time's 10 ms to give a ratio). At 4,000 the join of a device's
# GPUs showed its cost: each join walked both groups, so a device seen in
# every capture cost captures^2 (4,000 captures 0.77 s wall against 0.14 s
# for 1,000, 5.4x); the smaller group looked up in the larger's set of
# captures, 0.44 s against 0.11 s (4.0x).
# Before 5 Dec 2026 the GPUs were matched again after each file was read:
# 1,000 captures cost 4.31 s of user CPU on the shared build machine,
# 0.08 s after.
#
#   SAMPLES=230400 RUNS=5 GPUS=20000 bench/bench_watch.sh
#
# TS (default build/trainscope) is the binary. Exit 77 without python3 or
# GNU time.
set -eu
cd "$(dirname "$0")/.."
TS=${TS:-build/trainscope}
RUNS=${RUNS:-5}
SAMPLES=${SAMPLES:-230400}
GPUS=${GPUS:-20000}
command -v python3 >/dev/null || { echo "bench_watch: skipped: needs python3" >&2; exit 77; }
[ -x /usr/bin/time ] || { echo "bench_watch: skipped: needs /usr/bin/time" >&2; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-watch.XXXXXX")
trap 'rm -rf "$work"' EXIT

python3 - "$work" "$SAMPLES" "$GPUS" <<'PY'
import calendar, json, os, sys, time
work, samples, gpus = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
T0 = calendar.timegm((2026, 2, 1, 12, 0, 0))
for name, off in (("many1.csv", 0), ("many2.csv", 10)):
    with open("%s/%s" % (work, name), "w") as f:
        f.write("timestamp, index, uuid, pci.bus_id, power.draw [W], power.limit [W], utilization.gpu [%], "
                "clocks.sm [MHz], clocks.max.sm [MHz]\n")
        for i in range(3):
            st = time.strftime("%Y/%m/%d %H:%M:%S", time.gmtime(T0 + off + i))
            for g in range(gpus):
                f.write("%s.000, %d, GPU-%08x-0000-0000-0000-%012x, 00000000:%02X:%02X.0, %d.00 W, 700.00 W, "
                        "%d %%, 1980 MHz, 1980 MHz\n" % (st, g, g, g, (g >> 8) & 0xff, g & 0xff,
                                                          500 + (i * 7 + g) % 50, 90 + (i + g) % 10))
for name, off, clock in (("hosts1", 0, None), ("hosts2", 100, 1500)):
    os.makedirs("%s/%s" % (work, name))
    with open("%s/%s/gpu.metrics.txt" % (work, name), "w") as f:
        for i in range(3):
            ms = (T0 + off + 15 * i) * 1000
            for m, fn in (("DCGM_FI_DEV_POWER_USAGE", lambda g: 400 if g == 3 else 650),
                          ("DCGM_FI_DEV_POWER_MGMT_LIMIT", lambda g: 700),
                          ("DCGM_FI_DEV_GPU_UTIL", lambda g: 98),
                          ("DCGM_FI_DEV_GPU_TEMP", lambda g: 60 + g),
                          ("DCGM_FI_DEV_SM_CLOCK", lambda g: clock or 1980 - 10 * g)):
                for h in range(gpus // 8):
                    for g in range(8):
                        u = h * 8 + g
                        f.write('%s{gpu="%d",UUID="GPU-%08x-1111-2222-3333-%012x",modelName="NVIDIA H100 80GB '
                                'HBM3",Hostname="node%05d"} %s %d\n' % (m, g, u, u, h, fn(g), ms))
    with open("%s/%s/metrics.jsonl" % (work, name), "w") as f:
        for k in range(60):
            f.write(json.dumps({"iteration": k + 1, "step_ms": 800.0 + k % 7, "tokens": 1024,
                                "t_start_unix": T0 + off + 0.8 * k}) + "\n")
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
for n in (1000, 4000):
    os.makedirs("%s/caps%d" % (work, n))
    for c in range(n):
        with open("%s/caps%d/c%04d.csv" % (work, n, c), "w") as f:
            f.write("timestamp, index, uuid, power.draw [W]\n")
            for i in range(3):
                st = time.strftime("%Y/%m/%d %H:%M:%S", time.gmtime(T0 + 10 * c + i))
                f.writelines("%s.000, %d, GPU-%08x-0000-0000-0000-000000000000, 600.00 W\n" % (st, g, g)
                             for g in range(8))
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

echo "many GPUs, median of $RUNS (CPU s)"
c=$(cpu "$TS" watch --read "$work/many1.csv" "$work/many2.csv" --json -o "$work/out.json")
printf '  2 x %d GPUs, --query-gpu          %7.3f s\n' "$GPUS" "$c"
c=$(cpu "$TS" watch --read "$work/hosts1/gpu.metrics.txt" "$work/hosts2/gpu.metrics.txt" --json -o "$work/out.json")
printf '  2 x %d hosts x 8 GPUs, exporter    %7.3f s\n' $((GPUS / 8)) "$c"
c=$(cpu "$TS" ab --json -o "$work/out.json" "$work/hosts1" "$work/hosts2")
printf '  ab of 2 x %d hosts x 8 GPUs        %7.3f s\n' $((GPUS / 8)) "$c"

echo "many captures of 8 GPUs, median of $RUNS (CPU s; ratio 4,000 / 1,000, 4 when linear)"
c1=$(cpu "$TS" watch --read "$work"/caps1000/*.csv --json -o "$work/out.json")
c4=$(cpu "$TS" watch --read "$work"/caps4000/*.csv --json -o "$work/out.json")
printf '  1000 captures  %7.3f s\n  4000 captures  %7.3f s  %5.2fx\n' "$c1" "$c4" \
	"$(awk -v a="$c4" -v b="$c1" 'BEGIN {print (b > 0 ? a / b : 0)}')"
