#!/usr/bin/env bash
# trainscope hang on SYNTHETIC Flight Recorder dump sets of the classes of
# real hangs, made here by a small simulator of a job (python3, pickle
# protocol 2, one dump per rank named nccl_trace_rank_R, no "rank" key) that
# writes what PyTorch's recorder writes: pg_id is the process-local creation
# index of a group (only groups the rank is a member of count), pg_status is
# keyed by it, pg_config by the group name; P2P entries carry the group's
# current collective_seq_id and bump p2p_seq_id. Each rank issues its ops in
# program order and runs ahead of the GPU by a few uncompleted ops; an op
# completes when every member issued it and completed its earlier ops of
# that group. The culprit of every case is set by its construction and
# written below by hand, never computed by trainscope.
set -u
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
HANG_SIM_DIR=$(cd "$(dirname "$0")" && pwd) python3 - "$tmp" <<'PY' || exit 1
import os, pickle, sys
out = sys.argv[1]

sys.path.insert(0, os.environ["HANG_SIM_DIR"])
from hang_sim import Job, simulate, tpdp

def write(case, job, sim, alter=None, drop=()):
    mine, issued, done = sim
    alter = alter or {}
    os.makedirs(f"{out}/{case}", exist_ok=True)
    for r in range(job.world):
        if r in drop:
            continue
        seqc, seqp, ents, status = {}, {}, [], {}
        for i in mine[r][:issued[r]]:
            g, kind, name, size, dt, peer = job.prog[i]
            a = alter.get((r, i), {})
            name, size, dt = a.get("name", name), a.get("size", size), a.get("dtype", dt)
            gname, gdesc, grs = job.groups[g]
            lid = job.local[(r, g)]
            if kind == "coll":
                seqc[g] = seqc.get(g, 0) + 1
                pname = "nccl:" + name
            else:
                seqp[g] = seqp.get(g, 0) + 1
                pname = ("nccl:send %d->%d" % (grs.index(r), grs.index(peer[1])) if r == peer[0] else
                         "nccl:recv %d<-%d" % (grs.index(r), grs.index(peer[0])))
            st = "completed" if (r, i) in done else "scheduled"
            t = 1724779239936775119 + i * 10**6
            ents.append({"frames": [{"name": "train_step", "filename": "train.py", "line": 100}],
                         "record_id": len(ents), "pg_id": lid, "process_group": (gname, gdesc),
                         "collective_seq_id": seqc.get(g, 0), "p2p_seq_id": seqp.get(g, 0), "op_id": len(ents) + 1,
                         "profiling_name": pname, "time_created_ns": t, "input_sizes": [list(size)],
                         "input_dtypes": [dt], "output_sizes": [list(size)], "output_dtypes": [dt], "state": st,
                         "time_discovered_started_ns": None,
                         "time_discovered_completed_ns": t + 5 * 10**6 if st == "completed" else None,
                         "retired": st == "completed", "timeout_ms": 600000, "is_p2p": kind != "coll"})
            ps = status.setdefault(str(lid), {"last_enqueued_collective": -1, "last_started_collective": -1,
                                              "last_completed_collective": -1})
            if kind == "coll":
                ps["last_enqueued_collective"] = seqc[g]
                if st == "completed":
                    ps["last_completed_collective"] = seqc[g]
        doc = {"version": "2.5", "synthetic": "tests/scripts/hang-classes.sh",
               "pg_config": {n: {"name": n, "desc": d, "ranks": str(rs)} for n, d, rs in job.groups if r in rs},
               "pg_status": status, "entries": ents, "nccl_comm_state": {}, "nccl_version": "2.21.5"}
        with open(f"{out}/{case}/nccl_trace_rank_{r}", "wb") as f:
            pickle.dump(doc, f, protocol=2)

def first_of(job, rank, frm):
    return next(i for i in range(frm, len(job.prog)) if rank in job.members(i))

# C1 pgmix: an embedding-like group {0,3} is created first, so ranks 0 and 3
# number the later groups one higher than ranks 1 and 2 (dp {0,2} is pg_id 3
# on rank 0 and 2 on rank 2, where pg_id 2 on rank 1 is dp {1,3}); rank 2
# stops (compute) before its tp all_reduce of step 3
job = tpdp([("embd", [0, 3])])
k = first_of(job, 2, 2 * len(job.prog) // 4)
write("pgmix", job, simulate(job, stop={2: k - 1}))
# C2 pg_hang: the reduce_scatter of dp {0,2} in step 3 hangs on the network
# (every member issued it); ranks 0 and 2 stop in it (the optimizer waits
# on it), so their tp groups and the default group then wait on them: they
# are victims, nobody is to blame
job = tpdp()
k = next(i for i in range(2 * len(job.prog) // 4, len(job.prog))
         if job.prog[i][2] == "reduce_scatter" and job.groups[job.prog[i][0]][2] == [0, 2])
write("pg_hang", job, simulate(job, poison={k}, ahead=1))

def pipeline(world, stages):
    """pipelines of `stages` ranks (lone send/recv on their pp group, two
    micro-batches a step), data parallel across them, a loss all_reduce"""
    npp = world // stages
    gs = [(str(k + 1), "pp", list(range(k * stages, (k + 1) * stages))) for k in range(npp)]
    gs += [(str(npp + k + 1), "dp", list(range(k, world, stages))) for k in range(stages)] if npp > 1 else []
    job = Job(world, gs)
    for step in range(4):
        for mb in range(2):
            for g in range(1, len(job.groups)):
                rs = job.groups[g][2]
                if job.groups[g][1] == "pp":
                    for a, b in zip(rs, rs[1:]):
                        job.prog.append((g, "p2p", None, (2, 512), "BFloat16", (a, b)))
        for g in range(1, len(job.groups)):
            if job.groups[g][1] == "dp":
                job.prog.append((g, "coll", "all_reduce", (8192,), "Float", None))
        job.prog.append((0, "coll", "all_reduce", (1,), "Float", None))
    return job

# C3 pp: two pipelines of 4 stages, dp across; stage 1 of the second
# pipeline (rank 5) stops before it receives in step 3: rank 4 waits in its
# send to 5, rank 6 in its recv from 5, rank 7 in its recv from 6
job = pipeline(8, 4)
k = next(i for i in range(2 * len(job.prog) // 4, len(job.prog)) if job.prog[i][5] == (4, 5))
write("pp", job, simulate(job, stop={5: k - 1}))
# C4 pp1: one pipeline of 4 ranks, the loss all_reduce on the default group
# its only collective; rank 1 stops before it receives in step 3
job = pipeline(4, 4)
k = next(i for i in range(2 * len(job.prog) // 4, len(job.prog)) if job.prog[i][5] == (0, 1))
write("pp1", job, simulate(job, stop={1: k - 1}))
# C4b pp0: the same pipeline, the first stage (rank 0) stops before it
# sends in step 3: rank 1 waits to receive from 0, rank 2 from 1, and rank
# 3 from 2, which never sent its 6th because it waits on 1 (a victim)
job = pipeline(4, 4)
k = next(i for i in range(2 * len(job.prog) // 4, len(job.prog)) if job.prog[i][5] == (0, 1))
write("pp0", job, simulate(job, stop={0: k - 1}))
# C5 healthy: the same jobs run to the end: nothing to blame
job = pipeline(8, 4)
write("healthy_pp", job, simulate(job, ahead=10**6))
job = tpdp([("embd", [0, 3])])
write("healthy_tpdp", job, simulate(job, ahead=10**6))
# C6 missing: rank 2 stops before its tp all_reduce of step 3 and rank 1
# (not the culprit) wrote no dump; healthy_missing: a finished job, rank 3's
# dump not given
job = tpdp()
k = first_of(job, 2, 2 * len(job.prog) // 4)
write("missing", job, simulate(job, stop={2: k - 1}), drop={1})
job = tpdp()
write("healthy_missing", job, simulate(job, ahead=10**6), drop={3})
# C7 corrupt: rank 2 stops before its tp all_reduce of step 3; 16 bytes in
# the middle of rank 1's pickle are overwritten with 0xff (no opcode)
job = tpdp()
k = first_of(job, 2, 2 * len(job.prog) // 4)
write("corrupt", job, simulate(job, stop={2: k - 1}))
b = bytearray(open(f"{out}/corrupt/nccl_trace_rank_1", "rb").read())
b[len(b) // 2:len(b) // 2 + 16] = b"\xff" * 16
open(f"{out}/corrupt/nccl_trace_rank_1", "wb").write(bytes(b))
PY
fail=0
# check NAME CULPRITS [CLASS]: culprits of all incidents; CLASS: that some incident has it
check() {
	local name=$1 want_cul=$2 want_cls=${3:-}
	"$TS" hang --json "$tmp/$name" > "$tmp/$name.json" 2>"$tmp/$name.err"
	python3 - "$tmp/$name.json" "$name" "$want_cul" "$want_cls" <<'PY' || fail=1
import json, sys
p, name, want_cul, want_cls = sys.argv[1:5]
try:
    d = json.load(open(p))
except ValueError:
    print(f"FAIL {name}: no JSON"); sys.exit(1)
cul = ",".join(map(str, sorted({c for i in d["incidents"] for c in i["culprits"]})))
cls = [i["class"] for i in d["incidents"]]
if cul != want_cul or (want_cls and want_cls not in cls):
    print(f"FAIL {name}: culprits [{cul}] classes {cls}, want culprits [{want_cul}]" + (f" and a {want_cls}" if want_cls else ""))
    sys.exit(1)
PY
}
check pgmix 2 not_joined
check pg_hang "" all_stuck
check pp 5 not_joined
check pp1 1 not_joined
check pp0 0 not_joined
check healthy_pp ""
check healthy_tpdp ""
check missing 2 not_joined
check healthy_missing ""
# a missing dump is said in every format: hang text, hang --json's
# warnings, diagnose --json's warnings and diagnose's text
for c in missing:1 healthy_missing:3; do
	n=${c%:*} r=${c#*:}
	want="no Flight Recorder dump was read for rank $r of the 4 ranks"
	"$TS" hang "$tmp/$n" > "$tmp/$n.txt" 2>&1
	"$TS" diagnose --json "$tmp/$n" > "$tmp/$n.diag.json" 2>/dev/null
	"$TS" diagnose "$tmp/$n" > "$tmp/$n.diag.txt" 2>&1
	grep -q "$want" "$tmp/$n.txt" || { echo "FAIL $n: hang text does not say the missing dump"; fail=1; }
	[ "$n" = missing ] || grep -q "^  (in what was read only: 1 rank has no dump; see the findings)" "$tmp/$n.txt" ||
		{ echo "FAIL $n: 'no hang evidence' without the missing dump beside it"; fail=1; }
	grep -q "$want" "$tmp/$n.diag.txt" || { echo "FAIL $n: diagnose text does not say the missing dump"; fail=1; }
	for j in "$tmp/$n.json" "$tmp/$n.diag.json"; do
		python3 - "$j" "$want" <<'PY' || { echo "FAIL $n: no missing-dump warning in $j"; fail=1; }
import json, sys
w = [x for x in json.load(open(sys.argv[1])).get("warnings", []) if x["code"] == "missing-dump"]
sys.exit(0 if len(w) == 1 and w[0]["message"].startswith(sys.argv[2]) else 1)
PY
	done
done
# a corrupt dump among others is an unread-input warning, its rank one
# without a dump, and the rest is analysed; alone it is an error (exit 2)
check corrupt 2 not_joined
python3 - "$tmp/corrupt.json" <<'PY' || fail=1
import json, sys
w = [(x["code"], (x["file"] or "").rsplit("/", 1)[-1]) for x in json.load(open(sys.argv[1]))["warnings"]]
if ("unread-input", "nccl_trace_rank_1") not in w or ("missing-dump", "") not in w:
    print("FAIL corrupt: warnings", w); sys.exit(1)
PY
"$TS" hang "$tmp/corrupt/nccl_trace_rank_1" >/dev/null 2>"$tmp/corrupt1.err"; rc=$?
[ "$rc" = 2 ] && grep -q "nccl_trace_rank_1: byte [0-9]*: unknown or unsupported pickle opcode 0xff" "$tmp/corrupt1.err" ||
	{ echo "FAIL corrupt alone: exit $rc: $(cat "$tmp/corrupt1.err")"; fail=1; }
python3 - "$tmp" <<'PY' || fail=1
import json, sys
for n in ("pgmix", "pg_hang", "pp", "healthy_pp", "healthy_tpdp"):
    if [x for x in json.load(open(f"{sys.argv[1]}/{n}.json"))["warnings"] if x["code"] == "missing-dump"]:
        print(f"FAIL {n}: a missing-dump warning with every dump given"); sys.exit(1)
PY
# one group per (name, rank set): 5 groups, no incident at a seq 1 that every rank completed
python3 - "$tmp/pgmix.json" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
bad = [(i["pg"]["guid"], i["seq"]) for i in d["incidents"] if i["seq"] == 1]
if bad:
    print("FAIL pgmix: incidents at seq 1 of groups split by their pg_id:", bad); sys.exit(1)
# dp {0,2} is pg_id 3 on rank 0 and 2 on rank 2: its id is unknown, not one rank's
ids = {i["pg"]["guid"]: i["pg"]["id"] for i in d["incidents"]}
if ids.get("4", "absent") is not None or ids.get("0") != 0:
    print("FAIL pgmix: pg ids", ids); sys.exit(1)
PY
exit $fail
