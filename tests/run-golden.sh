#!/usr/bin/env bash
# Golden CLI tests: each tests/golden/<case>/ holds `cmd` (one shell line,
# run from the repository root with $TS = the binary and $DATA = the shared
# data folder), and the expected `stdout`, `stderr` and `exit`. UPDATE=1
# rewrites the expectations from the current binary.
set -u
cd "$(dirname "$0")/.."
TS=${TS:-build/trainscope}
DATA=${DATA:-../shared/data}
export TS DATA NO_COLOR=1 LC_ALL=C TZ=UTC
pass=0 fail=0 skip=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for dir in tests/golden/*/; do
	[ -f "$dir/cmd" ] || continue
	name=$(basename "$dir")
	if grep -q '\$DATA' "$dir/cmd" && [ ! -d "$DATA" ]; then
		echo "SKIP golden $name: $DATA not found" >&2
		skip=$((skip + 1))
		continue
	fi
	bash -c "$(cat "$dir/cmd")" >"$tmp/stdout" 2>"$tmp/stderr" </dev/null
	echo $? >"$tmp/exit"
	if [ "${UPDATE:-0}" = 1 ]; then
		cp "$tmp/stdout" "$tmp/stderr" "$tmp/exit" "$dir/"
		pass=$((pass + 1))
		continue
	fi
	ok=1
	for f in exit stdout stderr; do
		if ! cmp -s "$tmp/$f" "$dir/$f"; then
			ok=0
			echo "FAIL golden $name: $f differs" >&2
			diff -u "$dir/$f" "$tmp/$f" | head -20 >&2
		fi
	done
	if [ $ok = 1 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
done
echo "golden: $pass passed, $fail failed, $skip skipped"
[ $fail = 0 ]
