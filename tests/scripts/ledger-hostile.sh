#!/usr/bin/env bash
# The ledger under hostile conditions (issue 21): read commands open it
# read-only and do not wait behind a writer that holds the write lock; a
# file damaged in the middle is refused by the next writer (exit 2, file
# unchanged) and reported by `ledger check` (exit 1).
set -u
. "$(dirname "$0")/lib.sh"
case $TS in /*) ;; *) TS=$PWD/$TS ;; esac
command -v python3 >/dev/null || exit 77
python3 -c "import sqlite3" 2>/dev/null || exit 77
cd "$tmp" || exit 1

python3 - <<'PY'
with open("run.log", "w") as f:
    for i in range(1, 61):
        f.write(" iteration %8d/     100 | consumed samples: %d | elapsed time per "
                "iteration (ms): %.1f | lm loss: 2.5E+00 | number of skipped iterations:"
                "   0 | number of nan iterations:   0 |\n" % (i, i * 64, 100 + (i * 7919 % 13) / 10))
PY
for i in 1 2 3 4 5 6; do
	"$TS" ab -q --db db/l.db run.log run.log > /dev/null 2>&1 || bad "ab --db #$i failed"
done
"$TS" ledger check --db db/l.db > check.txt
rc=$?
[ $rc = 0 ] || bad "ledger check on a sound ledger: exit $rc"
grep -q "ok .*12 runs, 6 experiments" check.txt || bad "ledger check: $(cat check.txt)"

# a writer holds the write lock for 10 s; readers must answer at once
python3 - <<'PY' &
import sqlite3, time
c = sqlite3.connect("db/l.db", isolation_level=None)
c.execute("BEGIN IMMEDIATE")
c.execute("INSERT INTO contracts(hash, label, body) VALUES ('lock', 'x', 'y')")
open("locked", "w").close()
time.sleep(10)
c.execute("ROLLBACK")
PY
locker=$!
for i in $(seq 50); do [ -e locked ] && break; sleep 0.1; done
for sub in list history "show e1" check; do
	start=$(date +%s%N)
	timeout 8 "$TS" ledger $sub --db db/l.db > /dev/null 2>&1
	rc=$?
	ms=$(( ($(date +%s%N) - start) / 1000000 ))
	[ $rc = 0 ] || bad "ledger $sub while a writer holds the lock: exit $rc (124 = waited)"
	[ $ms -lt 3000 ] || bad "ledger $sub took $ms ms behind a writer"
done
wait $locker

# damage a page in the middle (not the header page): the next writer refuses
python3 - <<'PY'
import os
n = os.path.getsize("db/l.db")
page = 4096
pages = n // page
assert pages >= 4, pages
with open("db/l.db", "r+b") as f:
    f.seek(page * (pages // 2))
    f.write(bytes([0xA5]) * page)
PY
sum_before=$(cksum < db/l.db)
"$TS" ab -q --db db/l.db run.log run.log > ab.out 2> ab.err
rc=$?
[ $rc = 2 ] || bad "ab --db on a damaged ledger: exit $rc, want 2"
grep -q "damaged" ab.err || bad "ab --db on a damaged ledger: message: $(head -c 400 ab.err)"
grep -q "recover" ab.err || bad "ab --db on a damaged ledger: no recovery advice"
[ "$(cksum < db/l.db)" = "$sum_before" ] || bad "the damaged ledger was written to"
"$TS" ledger check --db db/l.db > check2.txt 2>&1
rc=$?
[ $rc = 1 ] || bad "ledger check on a damaged ledger: exit $rc, want 1 ($(cat check2.txt))"
grep -q "damaged" check2.txt || bad "ledger check: $(cat check2.txt)"
exit $fail
