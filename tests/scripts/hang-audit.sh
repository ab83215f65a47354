#!/usr/bin/env bash
# trainscope hang on SYNTHETIC cases of the hang audit (D1-D9), made here with
# python3's json and pickle modules. The culprit of every case is set by its
# construction and written below by hand, never computed by trainscope.
set -u
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
python3 - "$tmp" <<'PY' || exit 1
import json, os, pickle, sys
out = sys.argv[1]

def entry(rid, pg, seq, state="completed", op="all_reduce", n=1024):
    pid, name, desc = pg
    return {"record_id": rid, "pg_id": pid, "process_group": (name, desc), "collective_seq_id": seq,
            "p2p_seq_id": 0, "profiling_name": "nccl:" + op, "input_sizes": [[n]], "input_dtypes": ["Float"],
            "output_sizes": [[n]], "output_dtypes": ["Float"], "state": state, "timeout_ms": 600000,
            "is_p2p": False}

def dump(d, rank, groups, entries, status=None, cut=None, name=None, version="2.5"):
    doc = {"version": version, "rank": rank, "synthetic": "tests/scripts/hang-audit.sh",
           "pg_config": {g[1]: {"name": g[1], "desc": g[2], "ranks": str(r)} for g, r in groups},
           "pg_status": status or {}, "entries": entries}
    os.makedirs(f"{out}/{d}", exist_ok=True)
    text = json.dumps(doc)
    if cut is not None:  # cut inside the entries list, after pg_status
        text = text[:text.index('"entries"') + cut]
    open(f"{out}/{d}/{name or 'nccl_trace_rank_%d' % rank}", "w").write(text)

W = (0, "0", "default_pg")
def st(enq, done): return {"0": {"last_enqueued_collective": enq, "last_started_collective": -1,
                                 "last_completed_collective": done}}
def done(k, pg=W): return [entry(s - 1, pg, s) for s in range(1, k + 1)]
# D4: ranks 0-5, rank 1 writes no dump, the others wait in seq 30
for r in (0, 2, 3, 4, 5):
    dump("d4", r, [(W, list(range(6)))], done(29) + [entry(29, W, 30, "scheduled")], st(30, 29))
# D3a: rank 2's dump has no entries, its pg_status says it enqueued 5; the others wait in 6
for r in range(4):
    dump("d3a", r, [(W, list(range(4)))], [] if r == 2 else done(5) + [entry(5, W, 6, "scheduled")],
         st(5, 5) if r == 2 else st(6, 5))
# D3b: rank 2's dump is cut inside its entries (pg_status read whole); it stopped after 5
for r in range(4):
    dump("d3b", r, [(W, list(range(4)))], done(5) if r == 2 else done(5) + [entry(5, W, 6, "scheduled")],
         st(5, 5) if r == 2 else st(6, 5), cut=400 if r == 2 else None)
# D6: every rank issued seq 6 with one signature, only rank 2 shows it completed
for r in range(4):
    dump("d6", r, [(W, list(range(4)))], done(5) + [entry(5, W, 6, "completed" if r == 2 else "scheduled")],
         st(6, 6 if r == 2 else 5))
# D5: TP {0,1},{2,3} and DP {0,2},{1,3}; rank 3 stops after step 4; rank 2 waits in TP seq 5
TP = {0: (1, "1", "tp"), 1: (2, "2", "tp")}
DP = {0: (3, "3", "dp"), 1: (4, "4", "dp")}
for r in range(4):
    tp, dp = TP[r // 2], DP[r % 2]
    ents, rid = [], 0
    for s in range(1, 5):
        ents += [entry(rid, tp, s), entry(rid + 1, dp, s)]
        rid += 2
    if r != 3:
        ents.append(entry(rid, tp, 5, "scheduled" if r == 2 else "completed"))
        if r != 2:
            ents.append(entry(rid + 1, dp, 5, "scheduled"))
    dump("d5", r, [(tp, [r // 2 * 2, r // 2 * 2 + 1]), (dp, [r % 2, r % 2 + 2])], ents)
# D7: nccl_trace_rank_3 claims rank 1 (rank 3's dump is absent); rank 2 never issues seq 6
for r, f in ((0, 0), (1, 1), (2, 2), (1, 3)):
    dump("d7", r, [(W, list(range(3)))], done(5) if r == 2 else done(5) + [entry(5, W, 6, "scheduled")],
         name="nccl_trace_rank_%d" % f)
def ts(r): return "[rank%d]:[E315 10:11:12.%09d ProcessGroupNCCL.cpp:632] " % (r, 123456789 + r)
def wd(r, op="ALLREDUCE", n=1024):
    return ts(r) + "[Rank %d] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=500, OpType=%s, " \
           "NumelIn=%d, NumelOut=%d, Timeout(ms)=600000) ran for 600031 milliseconds before timing out.\n" % (r, op, n, n)
# D1: rank 2 times out in another op / another size at the same seq
open(f"{out}/d1op.log", "w").write(wd(0) + wd(1) + wd(2, op="BROADCAST"))
open(f"{out}/d1size.log", "w").write(wd(0) + wd(1) + wd(2, n=2048))
# D2: ranks 0-2 fail at 1580; rank 3's dump-signal line says it enqueued only 1579
d2 = "".join(ts(r) + "[PG 1 Rank %d] Exception (either an error or timeout) detected by watchdog at work: 1580, "
             "last enqueued NCCL work: 1580, last completed NCCL work: 1579.\n" % r for r in range(3))
d2 += ts(3) + "[PG ID 1 PG GUID 1 Rank 3] Received a dump signal due to a collective timeout from  rank 0 and we " \
      "will try our best to dump the debug info. Last enqueued NCCL work: 1579, last completed NCCL work: 1579.\n"
open(f"{out}/d2.log", "w").write(d2)
# D4 text: world 4, rank 1 prints nothing, the others time out at seq 500
open(f"{out}/d4text.log", "w").write(wd(0) + wd(2) + wd(3))
# D8: binary files, neither a dump nor a text log: 500 seeded random bytes;
# 512 bytes with no NUL, every one of them invalid UTF-8 (0x81-0xff, 0x80:
# a first 0x80 would be a pickle's PROTO);
# and a log whose end a crash padded with NUL bytes after its lines (text)
import random
open(f"{out}/d8random.bin", "wb").write(random.Random(8).randbytes(500))
open(f"{out}/d8high.bin", "wb").write((bytes(range(0x81, 0x100)) + b"\x80") * 4)
open(f"{out}/d8nultail.log", "wb").write((wd(0) + wd(1) + wd(2, op="BROADCAST")).encode() + bytes(3000))
# D9: rank 1 writes its dump as version 2.10, the others as 2.5; rank 2 never issues seq 6
for r in range(4):
    dump("d9v", r, [(W, list(range(4)))], done(5) if r == 2 else done(5) + [entry(5, W, 6, "scheduled")],
         version="2.10" if r == 1 else "2.5")
PY
fail=0
# check NAME EXIT CLASS CULPRITS [hang args...]: first incident's class, culprits of all incidents
check() {
	local name=$1 want_rc=$2 want_cls=$3 want_cul=$4; shift 4
	"$TS" hang --json "$@" > "$tmp/$name.json" 2>/dev/null; local rc=$?
	python3 - "$tmp/$name.json" "$name" "$rc" "$want_rc" "$want_cls" "$want_cul" <<'PY' || fail=1
import json, sys
p, name, rc, want_rc, want_cls, want_cul = sys.argv[1:7]
d = json.load(open(p))
cls = d["incidents"][0]["class"] if d["incidents"] else "-"
cul = sorted({c for i in d["incidents"] for c in i["culprits"]})
got = ",".join(map(str, cul))
if rc != want_rc or cls != want_cls or got != want_cul:
    print(f"FAIL {name}: exit {rc} class {cls} culprits [{got}], want exit {want_rc} class {want_cls} culprits [{want_cul}]")
    sys.exit(1)
PY
}
check d4 1 not_joined 1 "$tmp/d4"
check d3a 1 not_joined 2 "$tmp/d3a"
check d3b 1 not_joined 2 "$tmp/d3b"
check d6 1 all_stuck "" "$tmp/d6"
check d5 1 not_joined 3 "$tmp/d5"
check d7 1 not_joined 2 "$tmp/d7"
check d1op 1 mismatch 2 "$tmp/d1op.log"
check d1size 1 mismatch 2 "$tmp/d1size.log"
check d2 1 not_joined 3 "$tmp/d2.log"
check d4text 1 not_joined 1 --world-size 4 "$tmp/d4text.log"
# D8: a binary file alone is an input error naming it (it said "no hang
# evidence", exit 0, and that the log was cut); beside a log it is an
# unread-input warning, never a cut log; a NUL-padded log is still read
for f in d8random.bin d8high.bin; do
	"$TS" hang "$tmp/$f" >/dev/null 2>"$tmp/$f.err"; rc=$?
	[ "$rc" = 2 ] && grep -q "$f: byte [0-9]*: binary (.*neither a Flight Recorder dump (pickle, JSON or Python repr) nor a text log" "$tmp/$f.err" ||
		{ echo "FAIL $f: exit $rc, want 2 naming the file: $(cat "$tmp/$f.err")"; fail=1; }
done
grep -q "d8high.bin: byte 0: binary (512 of its first 512 bytes are no text" "$tmp/d8high.bin.err" ||
	{ echo "FAIL d8high: $(cat "$tmp/d8high.bin.err")"; fail=1; }
check d8mixed 1 mismatch 2 "$tmp/d1op.log" "$tmp/d8random.bin"
python3 - "$tmp/d8mixed.json" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
w = [(x["code"], x["file"].rsplit("/", 1)[1]) for x in d["warnings"]]
if w != [("unread-input", "d8random.bin")] or "nor a text log; nothing was read from it" not in d["warnings"][0]["message"]:
    print("FAIL d8mixed: warnings", d["warnings"]); sys.exit(1)
PY
"$TS" hang "$tmp/d8random.bin" "$tmp/d8high.bin" >/dev/null 2>"$tmp/d8two.err"; rc=$?
[ "$rc" = 2 ] && grep -q "every input is empty (0) or binary (2)" "$tmp/d8two.err" ||
	{ echo "FAIL d8two: exit $rc: $(cat "$tmp/d8two.err")"; fail=1; }
check d8nultail 1 mismatch 2 "$tmp/d8nultail.log"
# D9: a --world-size below the ranks seen is said and not used: ranks 0-2
# time out (rank 2 in another op); ranks 0, 2, 3 time out and rank 1 is
# silent (world 2 would have blamed rank 1 as the silent minority of 0-1;
# without a usable world it is undecided, as with no --world-size); dumps
# of ranks 0, 2-5 (pg_config ranks 0-5)
check d9mm 1 mismatch 2 --world-size 2 "$tmp/d1op.log"
check d9silent 0 undecided "" --world-size 2 "$tmp/d4text.log"
check d9dumps 1 not_joined 1 --world-size 2 "$tmp/d4"
check d9v 1 not_joined 2 "$tmp/d9v"
python3 - "$tmp" <<'PY' || fail=1
import json, sys
t = sys.argv[1]
want = {"d9mm": "--world-size 2, but the evidence names rank 2 (ranks count from 0)",
        "d9silent": "--world-size 2, but the evidence names ranks 2-3 (ranks count from 0)",
        "d9dumps": "--world-size 2, but the evidence names ranks 2-5 (ranks count from 0)"}
bad = 0
for name, text in want.items():
    d = json.load(open(f"{t}/{name}.json"))
    w = [x["message"] for x in d["warnings"] if x["code"] == "world-size-mismatch"]
    f = [x["text"] for x in d["findings"] if x["incident"] is None]
    if len(w) != 1 or not w[0].startswith(text) or w[0] not in f:
        print(f"FAIL {name}: world-size-mismatch", w, f); bad = 1
d = json.load(open(f"{t}/d9v.json"))
w = [x for x in d["warnings"] if x["code"] == "dump-version-mismatch"]
v = f"version 2.5 in {t}/d9v/nccl_trace_rank_0, {t}/d9v/nccl_trace_rank_2, {t}/d9v/nccl_trace_rank_3; version 2.10 in {t}/d9v/nccl_trace_rank_1:"
if len(w) != 1 or v not in w[0]["message"] or w[0]["file"] != f"{t}/d9v/nccl_trace_rank_1":
    print("FAIL d9v: dump-version-mismatch", w); bad = 1
for name in ("d4", "d7", "d5"):
    if [x for x in json.load(open(f"{t}/{name}.json"))["warnings"] if x["code"] in ("world-size-mismatch", "dump-version-mismatch")]:
        print(f"FAIL {name}: a mismatch warning without cause"); bad = 1
sys.exit(bad)
PY
# D5: rank 2 is named as a victim waiting in group 2 (tp), stuck first
grep -q '"cascade: group 3 stopped at seq 5 because rank 2 waits in group 2 seq 5 on ranks 3' "$tmp/d5.json" ||
	{ echo "FAIL d5: no cascade finding"; fail=1; }
# D7: a duplicate-rank warning naming both files
python3 - "$tmp/d7.json" <<'PY' || fail=1
import json, sys
w = [x for x in json.load(open(sys.argv[1]))["warnings"] if x["code"] == "duplicate-rank"]
if len(w) != 1 or "nccl_trace_rank_3" not in w[0]["message"] or "nccl_trace_rank_1" not in w[0]["message"]:
    print("FAIL d7: duplicate-rank warning", w); sys.exit(1)
PY
exit $fail
