#!/usr/bin/env bash
# Check that two trainscope binaries give byte-identical outputs on every
# shared trace and example run (a speed change must not change a byte).
#
#   bench/same-output.sh OLD_BINARY NEW_BINARY
#
# Runs `trace --json`, `trace` (table), `trace --hta-compat --json`,
# `trace --tracelens-compat --json` on every trace file under
# $DATA/traces and examples/, and `diagnose --json` on each examples/ run;
# compares stdout, stderr and the exit status. Prints one line per
# difference and exits 1 when there is any.
set -u
cd "$(dirname "$0")/.."
old=$1 new=$2
DATA=${DATA:-../shared/data}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ndiff=0 ncase=0

check() { # label, then the command's arguments
	local label=$1 ro rn
	shift
	"$old" "$@" >"$tmp/o.out" 2>"$tmp/o.err"; ro=$?
	"$new" "$@" >"$tmp/n.out" 2>"$tmp/n.err"; rn=$?
	ncase=$((ncase + 1))
	# binaries' paths may appear in messages; compare without them
	sed -i "s#$old#BIN#g" "$tmp/o.err"; sed -i "s#$new#BIN#g" "$tmp/n.err"
	if [ $ro != $rn ] || ! cmp -s "$tmp/o.out" "$tmp/n.out" || ! cmp -s "$tmp/o.err" "$tmp/n.err"; then
		echo "DIFF $label: exit $ro vs $rn"
		diff "$tmp/o.out" "$tmp/n.out" | head -5
		ndiff=$((ndiff + 1))
	fi
}

while IFS= read -r f; do
	check "trace --json $f" trace --json "$f"
	check "trace $f" trace --no-color "$f"
	check "trace --hta-compat --json $f" trace --hta-compat --json "$f"
	check "trace --tracelens-compat --json $f" trace --tracelens-compat --json "$f"
done < <(find "$DATA/traces" examples -type f \( -name '*.json' -o -name '*.json.gz' -o -name '*.sqlite' \) \
	! -name '*.meta.json' ! -name 'expected*' | sort)
for d in examples/*/; do
	check "diagnose --json $d" diagnose --json "$d"
done
echo "$ncase cases, $ndiff differ"
[ $ndiff = 0 ]
