#!/usr/bin/env bash
# trainscope trace --hta-compat against the REAL HolisticTraceAnalysis
# (../shared/baselines/hta/run_hta.py: HTA's TraceAnalysis load, then its
# temporal breakdown, comm/comp overlap, idle time breakdown and GPU kernel
# breakdown), both timed in this run on the same trace, runs alternated
# pair by pair (trainscope, HTA, trainscope, HTA, ...).
#
#   bench/bench_vs_hta.sh [TRACE.json[.gz]]   time on TRACE
#   BENCH_MB=206 bench/bench_vs_hta.sh        generate a BENCH_MB trace first
#                                             (df_index_resolver replicated)
#
# One warm-up pair, then RUNS (default 5) timed pairs; prints the median wall
# time, the median CPU time (user + system) and the largest peak RSS
# (/usr/bin/time -v) of each side, and the median of the per-pair ratios.
# The numbers of the two must agree or the script exits 1: the temporal
# breakdown (sums exactly, percentages to 0.01), the comm/comp overlap, the
# idle time breakdown per stream and category, the kernel-type breakdown and
# the per-kernel breakdown (sum, min, max exactly; mean and stddev to 1e-6
# relative). HTA_LOWER_BOUND=1 also times bench/hta_baseline.py (pandas, the
# earlier lower bound of HTA's time) beside them. Exit 77 when HTA's copy,
# its Debian packages or GNU time are missing.
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
DATA=${DATA:-../shared/data}
HTA=${HTA:-../shared/baselines/hta/run_hta.py}
PYTHON=${PYTHON:-/usr/bin/python3}
RUNS=${RUNS:-5}
MB=${BENCH_MB:-206}

if [ ! -x /usr/bin/time ] || [ ! -f "$HTA" ] ||
	! "$PYTHON" -c 'import pandas, numpy, plotly, psutil, yaml, networkx' 2>/dev/null; then
	echo "bench_vs_hta: skipped: needs /usr/bin/time, $HTA and $PYTHON with HTA's packages" >&2
	echo "  (Debian: time python3-pandas python3-numpy python3-plotly python3-psutil python3-yaml" >&2
	echo "   python3-networkx python3-pydot; see ../shared/baselines/README.md)" >&2
	exit 77
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-vs-hta.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/dir"

if [ $# -ge 1 ]; then
	trace=$(readlink -f "$1")
else
	trace="$work/trace.json"
	"$BUILD/bench/gen_trace" "$DATA/traces/hta/df_index_resolver/df_index_resolver.json.gz" \
		"$trace" "$MB" >&2
fi
case $trace in
*.gz) ln -s "$trace" "$work/dir/rank-0.pt.trace.json.gz" ;;
*) ln -s "$trace" "$work/dir/rank-0.pt.trace.json" ;;
esac
bytes=$(stat -L -c %s "$trace")

median() {
	printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {printf "%.3f", a[int((NR+1)/2)]}'
}

# one NAME OUTFILE CMD...: one timed run; sets W (wall s), C (cpu s), K (peak KB)
one() {
	local name=$1 out=$2 t0 t1
	shift 2
	t0=$(date +%s%N)
	/usr/bin/time -v -o "$work/$name.time" "$@" >"$out" 2>"$work/$name.err" || {
		echo "bench_vs_hta: $name failed:" >&2
		cat "$work/$name.err" >&2
		exit 3
	}
	t1=$(date +%s%N)
	W=$(awk -v a="$t0" -v b="$t1" 'BEGIN {print (b - a) / 1e9}')
	C=$(awk -F': ' '/User time|System time/ {s += $2} END {print s}' "$work/$name.time")
	K=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/$name.time")
}

echo "trace: $trace ($((bytes / 1000000)) MB); $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"
tsw=() tsc=() htw=() htc=() ratio=() lbw=() lbc=() tsk=0 htk=0 lbk=0
max() { if [ "$1" -gt "$2" ]; then echo "$1"; else echo "$2"; fi; }
for i in $(seq 0 "$RUNS"); do
	one trainscope "$work/ts.json" "$BUILD/trainscope" trace --hta-compat --json --quiet "$trace"
	a=$W
	if [ "$i" -gt 0 ]; then tsw+=("$W"); tsc+=("$C"); tsk=$(max "$K" "$tsk"); fi
	one hta "$work/hta.out" "$PYTHON" "$HTA" --json-out "$work/hta.json" "$work/dir"
	if [ "$i" -gt 0 ]; then
		htw+=("$W"); htc+=("$C"); htk=$(max "$K" "$htk")
		ratio+=("$(awk -v a="$a" -v b="$W" 'BEGIN {print b / a}')")
	fi
	if [ "${HTA_LOWER_BOUND:-0}" = 1 ]; then
		one lower "$work/lb.json" "$PYTHON" bench/hta_baseline.py "$trace"
		if [ "$i" -gt 0 ]; then lbw+=("$W"); lbc+=("$C"); lbk=$(max "$K" "$lbk"); fi
	fi
	echo "  pair $i: trainscope $a s, HTA $W s" >&2
done

"$PYTHON" - "$work/ts.json" "$work/hta.json" <<'EOF'
import json, math, sys
ts = {r["rank"]: r["hta"] for r in json.load(open(sys.argv[1]))["ranks"]}
h = json.load(open(sys.argv[2]))
bad = []
def same(what, a, b, tol=0.0, rel=False):
    if a is None or b is None:
        ok = a is None and b is None
    elif rel:
        ok = math.isclose(a, b, rel_tol=tol, abs_tol=1e-9)
    else:
        ok = abs(a - b) <= tol + 1e-9
    if not ok:
        bad.append(f"{what}: trainscope {a}, HTA {b}")
n = 0
for row in h["temporal_breakdown"]:
    a = ts[row["rank"]]
    for k in ("idle_time", "compute_time", "non_compute_time", "kernel_time"):
        same(f"rank {row['rank']} {k}_us", a[k + "_us"], row[k + "(us)"]); n += 1
    for k in ("idle_time", "compute_time", "non_compute_time"):
        same(f"rank {row['rank']} {k}_pct", a[k + "_pct"], row[k + "_pctg"], 0.01); n += 1
for row in h["comm_comp_overlap"]:
    same(f"rank {row['rank']} comp_comm_overlap_pct", ts[row["rank"]]["comp_comm_overlap_pct"],
         row["comp_comm_overlap_pctg"], 0.01); n += 1
idle = {(r, x["stream"], x["idle_category"]): x for r, a in ts.items() for x in a["idle_breakdown"]}
for row in h["idle_time_breakdown"]:
    x = idle.get((row["rank"], row["stream"], row["idle_category"]))
    if x is None:
        bad.append(f"idle {row['rank']}/{row['stream']}/{row['idle_category']}: missing"); continue
    same(f"idle {row['stream']}/{row['idle_category']} us", x["idle_time_us"], row["idle_time"])
    same(f"idle {row['stream']}/{row['idle_category']} ratio", x["idle_time_ratio"],
         row["idle_time_ratio"], 0.01); n += 2
if len(idle) != len(h["idle_time_breakdown"]):
    bad.append(f"idle rows: trainscope {len(idle)}, HTA {len(h['idle_time_breakdown'])}")
kt = {x["kernel_type"]: x for a in ts.values() for x in a["kernel_type"]}
for row in h["kernel_type_breakdown"]:
    x = kt.get(row["kernel_type"])
    if x is None:
        bad.append(f"kernel type {row['kernel_type']}: missing"); continue
    same(f"kernel type {row['kernel_type']} sum", x["sum_us"], row["sum"])
    same(f"kernel type {row['kernel_type']} pct", x["pct"], row["percentage"], 0.01); n += 2
ks = {(r, x["name"]): x for r, a in ts.items() for x in a["kernels"]}
for row in h["kernel_breakdown_default_args"]:
    x = ks.get((row["rank"], row["name"]))
    if x is None:
        bad.append(f"kernel {row['name'][:40]}: missing"); continue
    for k, hk in (("sum_us", "sum (us)"), ("max_us", "max (us)"), ("min_us", "min (us)")):
        same(f"kernel {row['name'][:40]} {k}", x[k], row[hk]); n += 1
    for k, hk in (("mean_us", "mean (us)"), ("stddev_us", "stddev")):
        same(f"kernel {row['name'][:40]} {k}", x[k], row[hk], 1e-6, True); n += 1
if len(ks) != len(h["kernel_breakdown_default_args"]):
    bad.append(f"kernel rows: trainscope {len(ks)}, HTA {len(h['kernel_breakdown_default_args'])}")
for b in bad[:20]:
    print("DIFFERENT " + b)
print(f"numbers compared with the real HTA: {n}, " + (f"{len(bad)} differ" if bad else "all agree"))
sys.exit(1 if bad else 0)
EOF

ts_s=$(median "${tsw[@]}") ts_c=$(median "${tsc[@]}")
ht_s=$(median "${htw[@]}") ht_c=$(median "${htc[@]}") r=$(median "${ratio[@]}")
awk -v b="$bytes" -v ts="$ts_s" -v tc="$ts_c" -v tk="$tsk" -v py="$ht_s" -v pc="$ht_c" \
	-v pk="$htk" -v n="$RUNS" -v r="$r" 'BEGIN {
	printf "%-34s %9s %9s %9s %14s\n", "median of " n " pairs (warm-up dropped)", "wall (s)", "cpu (s)",
		"MB/s", "peak RSS (MB)"
	printf "%-34s %9.3f %9.3f %9.1f %14.0f\n", "trainscope trace --hta-compat", ts, tc, b / 1e6 / ts,
		tk * 1.024 / 1000
	printf "%-34s %9.3f %9.3f %9.1f %14.0f\n", "HolisticTraceAnalysis (run_hta.py)", py, pc,
		b / 1e6 / py, pk * 1.024 / 1000
	printf "speed-up over HTA: %.1fx wall (median of per-pair ratios), %.1fx cpu; peak memory %.1fx less\n",
		r, pc / tc, pk / tk
}'
if [ "${HTA_LOWER_BOUND:-0}" = 1 ]; then
	printf '%-34s %9.3f %9.3f %9s %14.0f\n' "hta_baseline.py (pandas lower bound)" \
		"$(median "${lbw[@]}")" "$(median "${lbc[@]}")" - "$(awk -v k="$lbk" 'BEGIN {print k * 1.024 / 1000}')"
fi
