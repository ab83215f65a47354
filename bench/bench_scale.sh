#!/usr/bin/env bash
# Memory and scaling of `trainscope trace` (issue 14's RSS, linearity and
# diagnose goals), every ratio against a baseline run in the same session:
#
#   bench/bench_scale.sh TRACE.json [BIG.json]
#
# - peak RSS of `trace --json` and `trace --hta-compat --json` as a share of
#   the (uncompressed) file;
# - `diagnose --json` on a run directory holding TRACE (hard link) against
#   `trace --json` on TRACE, runs alternated pair by pair;
# - with BIG (a larger trace of the same kind, e.g. gen_trace at 4x the
#   size): its time and peak RSS over TRACE's, runs alternated, next to the
#   ratio of the sizes.
#
# RUNS (default 5) timed runs per side after one warm-up; medians; cpu = user
# + system. TS (default build/trainscope) is the binary. Exit 77 without GNU
# time.
set -eu
cd "$(dirname "$0")/.."
TS=${TS:-build/trainscope}
RUNS=${RUNS:-5}
[ -x /usr/bin/time ] || { echo "bench_scale: skipped: needs /usr/bin/time" >&2; exit 77; }
[ $# -ge 1 ] || { echo "usage: bench/bench_scale.sh TRACE.json [BIG.json]" >&2; exit 2; }
trace=$1 big=${2:-}
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-scale.XXXXXX")
trap 'rm -rf "$work"' EXIT

median() {
	printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {printf "%.3f", a[int((NR+1)/2)]}'
}

# one CMD...: one run; sets W (wall s), C (cpu s), K (peak KB)
one() {
	local t0 t1
	t0=$(date +%s%N)
	/usr/bin/time -v -o "$work/time" "$@" >/dev/null 2>"$work/err" || {
		echo "bench_scale: failed: $*" >&2
		cat "$work/err" >&2
		exit 3
	}
	t1=$(date +%s%N)
	W=$(awk -v a="$t0" -v b="$t1" 'BEGIN {print (b - a) / 1e9}')
	C=$(awk -F': ' '/User time|System time/ {s += $2} END {print s}' "$work/time")
	K=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/time")
}

# pair LABEL_A LABEL_B -- CMD_A... -- CMD_B...: alternated runs; prints the
# medians of each side and of the per-pair ratios B / A
pair() {
	local la=$1 lb=$2 i a=() b=() ca=() cb=() ka=() kb=() r=() rk=() wa ka1
	shift 3
	local cmda=() cmdb=()
	while [ "$1" != -- ]; do cmda+=("$1"); shift; done
	shift
	cmdb=("$@")
	for i in $(seq 0 "$RUNS"); do
		one "${cmda[@]}"; wa=$W; ka1=$K
		[ "$i" -gt 0 ] && a+=("$W") && ca+=("$C") && ka+=("$K")
		one "${cmdb[@]}"
		if [ "$i" -gt 0 ]; then
			b+=("$W"); cb+=("$C"); kb+=("$K")
			r+=("$(awk -v x="$wa" -v y="$W" 'BEGIN {print y / x}')")
			rk+=("$(awk -v x="$ka1" -v y="$K" 'BEGIN {print y / x}')")
		fi
	done
	printf '  %-36s wall %7.3f s  cpu %7.3f s  peak %8.1f MB\n' "$la" "$(median "${a[@]}")" \
		"$(median "${ca[@]}")" "$(awk -v k="$(median "${ka[@]}")" 'BEGIN {print k * 1.024 / 1000}')"
	printf '  %-36s wall %7.3f s  cpu %7.3f s  peak %8.1f MB\n' "$lb" "$(median "${b[@]}")" \
		"$(median "${cb[@]}")" "$(awk -v k="$(median "${kb[@]}")" 'BEGIN {print k * 1.024 / 1000}')"
	printf '  ratio %s / %s: wall %.3fx (median of per-pair ratios), peak RSS %.3fx\n' "$lb" "$la" \
		"$(median "${r[@]}")" "$(median "${rk[@]}")"
	PK_A=$(median "${ka[@]}") PK_B=$(median "${kb[@]}")
}

bytes=$(stat -L -c %s "$trace")
echo "trace: $trace ($((bytes / 1000000)) MB); $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== peak RSS as a share of the file; diagnose on a run directory vs trace"
mkdir "$work/run"
ln "$trace" "$work/run/rank0.pt.trace.json" 2>/dev/null || ln -s "$(readlink -f "$trace")" "$work/run/rank0.pt.trace.json"
pair "trace --json" "diagnose --json RUNDIR" -- "$TS" trace --json "$trace" -- \
	"$TS" diagnose --json "$work/run"
awk -v k="$PK_A" -v b="$bytes" 'BEGIN {printf "  trace --json peak RSS: %.1f %% of the JSON\n", k * 1024 * 100 / b}'
pair "trace --json" "trace --hta-compat --json" -- "$TS" trace --json "$trace" -- \
	"$TS" trace --hta-compat --json "$trace"
awk -v k="$PK_B" -v b="$bytes" 'BEGIN {printf "  trace --hta-compat peak RSS: %.1f %% of the JSON\n", k * 1024 * 100 / b}'
if [ -n "$big" ]; then
	bb=$(stat -L -c %s "$big")
	echo "== linearity: $big ($((bb / 1000000)) MB, $(awk -v a="$bb" -v b="$bytes" 'BEGIN {printf "%.2f", a / b}')x the bytes)"
	pair "trace --json (small)" "trace --json (big)" -- "$TS" trace --json "$trace" -- \
		"$TS" trace --json "$big"
fi
