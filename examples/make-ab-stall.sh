#!/bin/sh
# Record examples/ab-stall/MODE/: RUNS baseline and RUNS candidate runs of
# examples/train_gpt.py, launched alternately (base, stall, base, stall, ...)
# so that slow drifts of the machine fall on both sides. The candidate is
# the baseline plus a 300 ms data-loader stall every 7th iteration; same
# model, data and seed. No profiler, so every iteration after the warm-up
# can enter the steady window.
#
#   examples/make-ab-stall.sh quiet    4 + 4 runs on an otherwise idle machine
#   examples/make-ab-stall.sh loaded   8 + 8 runs while two busy loops compete
#                                      for the CPUs (a noisy shared node, like
#                                      the one that recorded ../shared/data/traces/cpu)
# RUNS overrides the count; the environment of make-example.sh applies.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
mode=${1:-quiet}
case $mode in
quiet) RUNS=${RUNS:-4} ;;
loaded) RUNS=${RUNS:-8} ;;
*)
	echo "usage: $0 quiet|loaded" >&2
	exit 2
	;;
esac
dest=$here/ab-stall/$mode
rm -rf "$dest"
mkdir -p "$dest"
if [ "$mode" = loaded ]; then
	(while :; do :; done) &
	h1=$!
	(while :; do :; done) &
	h2=$!
	trap 'kill $h1 $h2' EXIT
fi
i=1
while [ "$i" -le "$RUNS" ]; do
	OUT_DIR=$dest/base-$i EXTRA_ARGS="--no-profile" "$here/make-example.sh"
	OUT_DIR=$dest/stall-$i EXTRA_ARGS="--no-profile --stall-every 7 --stall-ms 300" \
		"$here/make-example.sh"
	i=$((i + 1))
done
