#!/usr/bin/env bash
# `trainscope trace --mpi` under Open MPI (2 processes): process 0 must print
# exactly what a single process prints, for text and --json, on the 2-rank
# c_ddp2 (4 files, 2 per process) and e_straggler (straggler found) cases.
# Skips when mpirun is missing or the binary was built without MPI.
set -u
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
CPU=$DATA/traces/cpu
[ -d "$CPU" ] || { echo "no $CPU"; exit 77; }
command -v mpirun >/dev/null || { echo "mpirun not found"; exit 77; }
export NO_COLOR=1 ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0
if "$TS" trace --mpi "$CPU/a_dense" 2>&1 | grep -q "built without MPI"; then
	echo "trainscope built without MPI"
	exit 77
fi
mpi() { mpirun --allow-run-as-root --oversubscribe -n 2 "$TS" "$@"; }
for c in c_ddp2 e_straggler; do
	"$TS" trace "$CPU/$c" >"$tmp/one.txt" || exit 1
	mpi trace --mpi "$CPU/$c" >"$tmp/mpi.txt" || { echo "$c: mpirun failed"; exit 1; }
	cmp "$tmp/one.txt" "$tmp/mpi.txt" || { diff "$tmp/one.txt" "$tmp/mpi.txt" | head; exit 1; }
	"$TS" trace --json "$CPU/$c" >"$tmp/one.json" || exit 1
	mpi trace --json --mpi "$CPU/$c" >"$tmp/mpi.json" || { echo "$c: mpirun failed"; exit 1; }
	cmp "$tmp/one.json" "$tmp/mpi.json" || exit 1
done
grep -q '"dominant": "straggler"' "$tmp/mpi.json" || { echo "straggler not found under MPI"; exit 1; }
exit 0
