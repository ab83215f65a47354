#!/usr/bin/env bash
# trainscope trace --hta-compat against a LOWER BOUND of HolisticTraceAnalysis
# (bench/hta_baseline.py: HTA's json load, DataFrame and preprocessing, and
# its temporal breakdown, nothing more), both timed in this run on the same
# trace. Real HTA does more work than the baseline, so the printed ratio is
# a lower bound of trainscope's speed-up over HTA.
#
#   bench/bench_vs_hta.sh [TRACE.json[.gz]]   time on TRACE
#   BENCH_MB=200 bench/bench_vs_hta.sh        generate a BENCH_MB trace first
#
# Each side runs once to warm up, then RUNS (default 3) times; the median
# wall time, the median CPU time (user + system, less sensitive to a loaded
# machine) and the largest peak RSS (/usr/bin/time -v) are reported. The
# temporal breakdowns of the two must agree (sums exactly, percentages to
# 0.01) or the script exits 1. Exit 77 when pandas, numpy or GNU time is
# missing (Debian: python3-pandas python3-numpy time).
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
DATA=${DATA:-../shared/data}
PYTHON=${PYTHON:-/usr/bin/python3}
RUNS=${RUNS:-3}
MB=${BENCH_MB:-200}

if [ ! -x /usr/bin/time ] || ! "$PYTHON" -c 'import pandas, numpy' 2>/dev/null; then
	echo "bench_vs_hta: skipped: needs /usr/bin/time and $PYTHON with pandas and numpy" >&2
	echo "  (Debian packages: time python3-pandas python3-numpy)" >&2
	exit 77
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-vs-hta.XXXXXX")
trap 'rm -rf "$work"' EXIT

if [ $# -ge 1 ]; then
	trace=$1
else
	src="$DATA/traces/hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"
	trace="$work/trace.json"
	"$BUILD/bench/gen_trace" "$src" "$trace" "$MB" >&2
fi
bytes=$(stat -L -c %s "$trace")

median() {
	printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {printf "%.3f", a[int((NR+1)/2)]}'
}

# run NAME OUTFILE CMD...: RUNS+1 timed runs; prints "median_wall_s
# median_cpu_s peak_kb" (cpu = user + system time)
run() {
	local name=$1 out=$2 i t0 t1 peak=0 kb walls=() cpus=()
	shift 2
	for i in $(seq 0 "$RUNS"); do
		t0=$(date +%s%N)
		/usr/bin/time -v -o "$work/$name.time" "$@" >"$out" 2>"$work/$name.err" || {
			echo "bench_vs_hta: $name failed:" >&2
			cat "$work/$name.err" >&2
			exit 3
		}
		t1=$(date +%s%N)
		kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/$name.time")
		[ "$i" -eq 0 ] && continue
		walls+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN {print (b - a) / 1e9}')")
		cpus+=("$(awk -F': ' '/User time|System time/ {s += $2} END {print s}' "$work/$name.time")")
		[ "$kb" -gt "$peak" ] && peak=$kb
	done
	echo "$(median "${walls[@]}") $(median "${cpus[@]}") $peak"
}

echo "trace: $trace ($((bytes / 1000000)) MB); $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"
read -r ts_s ts_cpu ts_kb < <(run trainscope "$work/ts.json" \
	"$BUILD/trainscope" trace --hta-compat --json --quiet "$trace")
read -r py_s py_cpu py_kb < <(run hta_baseline "$work/py.json" "$PYTHON" bench/hta_baseline.py "$trace")

"$PYTHON" - "$work/ts.json" "$work/py.json" <<'EOF'
import json, sys
ts = {r["rank"]: r["hta"] for r in json.load(open(sys.argv[1]))["ranks"]}
py = {r["rank"]: r["temporal_breakdown"] for r in json.load(open(sys.argv[2]))["ranks"]}
bad = 0
if sorted(ts) != sorted(py):
    print(f"ranks differ: trainscope {sorted(ts)}, baseline {sorted(py)}")
    bad = 1
for rank in sorted(set(ts) & set(py)):
    a, b = ts[rank], py[rank]
    for k in ("idle_time", "compute_time", "non_compute_time", "kernel_time"):
        if a[k + "_us"] != b[k + "_us"]:
            print(f"rank {rank}: {k}_us trainscope {a[k + '_us']} baseline {b[k + '_us']}")
            bad = 1
        if k != "kernel_time" and abs(a[k + "_pct"] - b[k + "_pct"]) > 0.01 + 1e-9:
            print(f"rank {rank}: {k}_pct trainscope {a[k + '_pct']} baseline {b[k + '_pct']}")
            bad = 1
    print(f"rank {rank}: idle {b['idle_time_us']} us, compute {b['compute_time_us']} us, "
          f"non-compute {b['non_compute_time_us']} us, kernel {b['kernel_time_us']} us "
          f"({b['gpu_kernels']} GPU rows): " + ("DIFFERENT" if bad else "agree"))
sys.exit(bad)
EOF

awk -v b="$bytes" -v ts="$ts_s" -v tc="$ts_cpu" -v tk="$ts_kb" -v py="$py_s" -v pc="$py_cpu" \
	-v pk="$py_kb" -v n="$RUNS" 'BEGIN {
	printf "%-34s %9s %9s %9s %14s\n", "median of " n " (warm-up dropped)", "wall (s)", "cpu (s)", "MB/s",
		"peak RSS (MB)"
	printf "%-34s %9.3f %9.3f %9.1f %14.0f\n", "trainscope trace --hta-compat", ts, tc, b / 1e6 / ts, tk / 1024
	printf "%-34s %9.3f %9.3f %9.1f %14.0f\n", "hta_baseline.py (HTA lower bound)", py, pc, b / 1e6 / py,
		pk / 1024
	printf "speed-up over HTA >= %.1fx wall, %.1fx cpu (baseline / trainscope); peak memory %.1fx less\n",
		py / ts, pc / tc, pk / tk
	printf "(real HTA does more than the baseline, so these are lower bounds of the real ratios)\n"
}'
