#!/bin/sh
# Regenerate examples/run/ with examples/train_gpt.py.
#
# PYTHON is a Python 3 with a Kineto-enabled PyTorch (the default runs it in a
# Debian trixie chroot at $CHROOT, made with:
#   debootstrap --variant=minbase trixie /work/trixie http://deb.debian.org/debian
#   chroot /work/trixie apt-get install -y python3-torch libopenblas0-pthread
# ; without OpenBLAS, minbase leaves torch on the reference BLAS, 9x slower). On a CUDA machine: PYTHON=python3 DEVICE=cuda examples/make-example.sh
set -eu
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
here=$(cd "$(dirname "$0")" && pwd)
CHROOT=${CHROOT:-/work/trixie}
DEVICE=${DEVICE:-cpu}
AMP=${AMP:-none}
# EXTRA_ARGS: more train_gpt.py options (examples/make-ab-stall.sh uses them)
ARGS="--iters 60 --prof-skip-first 20 --prof-warmup 2 --prof-active 4 --device $DEVICE --amp $AMP ${EXTRA_ARGS:-}"
out=${OUT_DIR:-$here/run}
rm -rf "$out"
mkdir -p "$out"
if [ -n "${PYTHON:-}" ]; then
	# shellcheck disable=SC2086
	"$PYTHON" "$here/train_gpt.py" --out "$out" $ARGS >"$out/train.log" 2>"$out/stderr.log"
else
	work=$CHROOT/tmp/trainscope-example
	rm -rf "$work"
	mkdir -p "$work"
	cp "$here/train_gpt.py" "$work/"
	# torch reads /proc/cpuinfo to pick its vector kernels; without /proc
	# in the chroot it falls back to slow scalar code
	mounted=0
	if [ ! -r "$CHROOT/proc/cpuinfo" ]; then
		mount -t proc proc "$CHROOT/proc"
		mounted=1
	fi
	# shellcheck disable=SC2086
	chroot "$CHROOT" python3 /tmp/trainscope-example/train_gpt.py --out /tmp/trainscope-example/run \
		$ARGS >"$out/train.log" 2>"$out/stderr.log"
	[ $mounted = 0 ] || umount "$CHROOT/proc"
	cp -r "$work/run/." "$out/"
	rm -rf "$work"
fi
# stderr only holds torch warnings; keep it when non-empty
[ -s "$out/stderr.log" ] || rm -f "$out/stderr.log"
# a run without the profiler leaves traces/ empty
rmdir "$out/traces" 2>/dev/null || true
ls -l "$out"
