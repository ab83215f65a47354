#!/usr/bin/env bash
# Run every benchmark. Each program measures its own baseline in the same
# run and prints the ratio; results go to docs/benchmarks.md by hand, with
# the machine they came from.
#
#   BENCH_MB=1000 bench/run.sh     size of the generated trace (MB)
#   AB_TRIALS=400 bench/run.sh     comparisons per cell of the ab power study
#   AB_PHASE_TRIALS=200 bench/run.sh  the same for the ab phase study
#   HANG_RANKS=4096 bench/run.sh   dumps in the hang benchmark (default 64)
#
# Generated files live in $BENCH_DIR (default /tmp/trainscope-bench) and
# are removed at the end.
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
DATA=${DATA:-../shared/data}
MB=${BENCH_MB:-1000}
dir=${BENCH_DIR:-/tmp/trainscope-bench}
mkdir -p "$dir"
trap 'rm -rf "$dir"' EXIT

echo "== machine"
echo "$(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "memory: $(free -g | awk '/Mem:/ {print $2 " GiB"}'); load: $(cut -d' ' -f1-3 /proc/loadavg)"

# fresh memory's cost differs several-fold between the VM hosts this runs
# on, and it moves the trace ratios: printed first, to tell the hosts apart
[ -x "$BUILD/bench/bench_faults" ] && "$BUILD/bench/bench_faults" 256 5

src="$DATA/traces/hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"
echo "== generating a ${MB} MB trace from $(basename "$src")"
"$BUILD/bench/gen_trace" "$src" "$dir/trace.json" "$MB"
gzip -6 -c "$dir/trace.json" >"$dir/trace.json.gz"

echo "== JSON tokenizer (vs cat and yajl)"
"$BUILD/bench/bench_tokenizer" "$dir/trace.json" 5

for b in bench_trace bench_hta bench_logs bench_plan bench_hang ab_power ab_phase_power; do
	[ -x "$BUILD/bench/$b" ] || continue
	case $b in
	bench_trace)
		# -t: also `trainscope trace --json` end to end, against a 2-thread
		# memchr scan (plain) and zlib's inflate (gzip): the issue #14 goals
		echo "== trace reader, plain"
		"$BUILD/bench/bench_trace" -t "$BUILD/trainscope" "$dir/trace.json" 5
		echo "== trace reader, gzip"
		"$BUILD/bench/bench_trace" -t "$BUILD/trainscope" "$dir/trace.json.gz" 5
		;;
	bench_hta)
		echo "== HTA-compat analysis"
		"$BUILD/bench/bench_hta" "$DATA/traces/hta/df_index_resolver/df_index_resolver.json.gz" 5
		;;
	bench_logs)
		echo "== log parsing"
		"$BUILD/bench/bench_logs" 100 "$dir/megatron.log"
		;;
	bench_plan)
		echo "== layout search"
		"$BUILD/bench/bench_plan" "$DATA/models/deepseek-v3.json" 5
		;;
	bench_hang)
		echo "== hang: generated Flight Recorder dumps (HANG_RANKS x 2000 entries)"
		"$BUILD/bench/bench_hang" "${HANG_RANKS:-64}" 2000 3
		;;
	ab_power)
		echo "== ab: coverage, false verdicts and power on synthetic runs"
		"$BUILD/bench/ab_power" "${AB_TRIALS:-400}"
		;;
	ab_phase_power)
		echo "== ab phases: power and false alarms of the per-phase verdicts"
		"$BUILD/bench/ab_phase_power" "${AB_PHASE_TRIALS:-200}"
		;;
	esac
done

echo "== nsys cuda_gpu_kern_sum vs python3 sqlite3 (shared exports, then one with 40x the kernel rows)"
if [ -x "$BUILD/bench/bench_nsys" ] && [ -x /usr/bin/python3 ] && ls "$DATA"/nsys/*.sqlite >/dev/null 2>&1; then
	for f in "$DATA"/nsys/mfu_2gpu_before.sqlite "$DATA"/nsys/h100_2gpu_1s.sqlite; do
		"$BUILD/bench/bench_nsys" "$f" 5
	done
	/usr/bin/python3 - "$DATA/nsys/mfu_2gpu_before.sqlite" "$dir/nsys40.sqlite" <<'PY'
import sqlite3, sys
s = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
d = sqlite3.connect(sys.argv[2])
s.backup(d)
n = d.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
for _ in range(39):
    d.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid <= ?", (n,))
d.commit()
PY
	"$BUILD/bench/bench_nsys" "$dir/nsys40.sqlite" 3
fi

# The real HTA needs several times the file in RAM: above 300 MB the
# script generates its own 206 MB trace. Exit 77 (no HTA) is a skip.
echo "== trace --hta-compat vs the real HolisticTraceAnalysis"
hta_rc=0
if [ "$MB" -le 300 ]; then
	BUILD=$BUILD DATA=$DATA bench/bench_vs_hta.sh "$dir/trace.json" || hta_rc=$?
else
	BUILD=$BUILD DATA=$DATA BENCH_MB=206 bench/bench_vs_hta.sh || hta_rc=$?
fi
[ "$hta_rc" -eq 0 ] || [ "$hta_rc" -eq 77 ] || exit "$hta_rc"

# BENCH_BIG=4 also makes a trace of 4x BENCH_MB for the linearity ratio.
echo "== memory and scale (peak RSS / file, diagnose vs trace, linearity)"
big=
if [ "${BENCH_BIG:-0}" != 0 ]; then
	big="$dir/big.json"
	"$BUILD/bench/gen_trace" "$src" "$big" "$((MB * BENCH_BIG))"
fi
TS=$BUILD/trainscope bench/bench_scale.sh "$dir/trace.json" $big

echo "== watch --read against the number of GPUs (the same samples in 16, 64, 256 GPUs)"
watch_rc=0
TS=$BUILD/trainscope bench/bench_watch.sh || watch_rc=$?
[ "$watch_rc" -eq 0 ] || [ "$watch_rc" -eq 77 ] || exit "$watch_rc"
