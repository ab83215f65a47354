#!/usr/bin/env bash
# Install the Debian packages trainscope needs. One installer for the README
# commands and CI.
#
#   scripts/install-deps.sh build   compiler, make, pkg-config, zlib, SQLite, ISA-L
#   scripts/install-deps.sh test    build + what the test suite uses (clang for
#                                   libFuzzer, chromium for the report test,
#                                   Open MPI for the distributed mode, sqlite3,
#                                   HTA's Python packages for diff-hta-oracle.sh)
#   scripts/install-deps.sh bench   test + yajl (the tokenizer benchmark baseline),
#                                   GNU time, pandas and numpy (the HTA baseline)
#
# Installs with apt-get as root (or through sudo when available); otherwise
# prints the exact command and exits 1. Already-installed packages are left
# alone, and nothing is fetched when everything is present.
set -eu

what=${1:-test}
build_pkgs="build-essential pkg-config zlib1g-dev libsqlite3-dev libisal-dev"
test_pkgs="clang sqlite3 chromium libopenmpi-dev openmpi-bin python3"
# the real HTA (../shared/baselines/hta) that tests/scripts/diff-hta-oracle.sh runs
test_pkgs="$test_pkgs python3-pandas python3-numpy python3-plotly python3-psutil python3-yaml python3-networkx python3-pydot"
bench_pkgs="libyajl-dev isal time python3-pandas python3-numpy"

case "$what" in
build) pkgs="$build_pkgs" ;;
test) pkgs="$build_pkgs $test_pkgs" ;;
bench | all) pkgs="$build_pkgs $test_pkgs $bench_pkgs" ;;
*)
	echo "usage: scripts/install-deps.sh [build|test|bench]" >&2
	exit 2
	;;
esac

missing=""
for p in $pkgs; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
if [ -z "$missing" ]; then
	echo "install-deps: all $what dependencies are installed"
	exit 0
fi

if [ "$(id -u)" = 0 ]; then
	run=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
	run="sudo"
else
	echo "install-deps: missing Debian packages:$missing" >&2
	echo "install-deps: run as root: apt-get update && apt-get install -y$missing" >&2
	exit 1
fi

echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
$run apt-get update -qq
# shellcheck disable=SC2086
$run apt-get install -y -qq $missing >/dev/null
echo "install-deps: done"
