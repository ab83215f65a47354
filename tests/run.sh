#!/usr/bin/env bash
# Runs every test: unit tests, golden CLI tests and test scripts
# (tests/scripts/*.sh: exit 0 pass, 77 skip, anything else fail), then
# prints the total as "N passed, N failed".
set -u
cd "$(dirname "$0")/.."
TS=${TS:-build/trainscope}
UNIT=${UNIT:-build/unit-tests}
DATA=${DATA:-../shared/data}
export TS UNIT DATA
pass=0 fail=0 skip=0

add() { # parse "...: P passed, F failed, S skipped"
	local line=$1
	local p f s
	p=$(sed -n 's/.* \([0-9]*\) passed.*/\1/p' <<<"$line")
	f=$(sed -n 's/.* \([0-9]*\) failed.*/\1/p' <<<"$line")
	s=$(sed -n 's/.* \([0-9]*\) skipped.*/\1/p' <<<"$line")
	pass=$((pass + ${p:-0})); fail=$((fail + ${f:-0})); skip=$((skip + ${s:-0}))
}

out=$("$UNIT"); rc=$?
echo "$out"
line=$(tail -n 1 <<<"$out")
case "$line" in
unit:*) add "$line" ;;
*) echo "FAIL unit-tests crashed (exit $rc)"; fail=$((fail + 1)) ;;
esac
[ $rc = 0 ] || case "$line" in unit:*) ;; *) ;; esac

out=$(tests/run-golden.sh); echo "$out"; add "$(tail -n 1 <<<"$out")"

for t in tests/scripts/*.sh; do
	[ -f "$t" ] || continue
	name=$(basename "$t" .sh)
	log=$(mktemp)
	bash "$t" >"$log" 2>&1
	rc=$?
	if [ $rc = 0 ]; then
		pass=$((pass + 1))
	elif [ $rc = 77 ]; then
		skip=$((skip + 1))
		echo "SKIP script $name: $(tail -n 1 "$log")"
	else
		fail=$((fail + 1))
		echo "FAIL script $name (exit $rc):"
		tail -n 30 "$log"
	fi
	rm -f "$log"
done
echo "$pass passed, $fail failed, $skip skipped"
[ $fail = 0 ]
