"""hang_sim: the job simulator of the hang tests (hang-classes.sh,
hang-rest.sh, hang-more.sh): process groups, a program of collectives and P2P ops, and
which op each rank issued and completed when some ranks stop early or
some ops never complete (simulate), when each op was created and completed
on each rank's own clock (timeline), and the Flight Recorder dumps of a
run (write_dumps)."""

import os
import pickle
import random

T0 = 1724779239936775119


class Job:
    def __init__(s, world, groups):
        s.world = world
        s.groups = [("0", "default_pg", list(range(world)))] + groups
        s.local = {}
        for r in range(world):
            k = 0
            for gi, (n, d, rs) in enumerate(s.groups):
                if r in rs:
                    s.local[(r, gi)] = k
                    k += 1
        s.prog = []  # (group index, kind coll|p2p|batch, name, size, dtype, (a, b))

    def members(s, i):
        g, kind, _, _, _, peer = s.prog[i]
        return s.groups[g][2] if kind == "coll" else list(peer)

def simulate(job, stop=None, poison=(), ahead=2):
    """stop: {rank: last program index it issues}; poison: ops that never complete"""
    stop = stop or {}
    mine = {r: [i for i in range(len(job.prog)) if r in job.members(i)] for r in range(job.world)}
    issued = {r: 0 for r in range(job.world)}
    done = set()
    changed = True
    while changed:
        changed = False
        for r in range(job.world):
            while issued[r] < len(mine[r]):
                nxt = mine[r][issued[r]]
                if r in stop and nxt > stop[r]:
                    break
                if sum((r, i) not in done for i in mine[r][:issued[r]]) >= ahead:
                    break
                issued[r] += 1
                changed = True
        for r in range(job.world):
            for i in mine[r][:issued[r]]:
                if (r, i) in done or i in poison:
                    continue
                ms = job.members(i)
                if not all(i in mine[m][:issued[m]] for m in ms):
                    continue
                if all((m, j) in done for m in ms for j in mine[m][:issued[m]]
                       if j < i and job.prog[j][0] == job.prog[i][0]):
                    for m in ms:
                        done.add((m, i))
                    changed = True
    return mine, issued, done


def timeline(job, sim, delay=None, clock=None, seed=0, gap_ms=20, dur_ms=10, poll_ms=100):
    """When each issued op was created and completed, as a rank's dump says
    it: {(rank, op): (time_created_ns, time_discovered_completed_ns or
    None)}. True time: a rank creates its next op gap_ms after the later of
    its previous op's creation and completion, plus delay {(rank, op): ms}
    (it is held up before that op); a collective completes dur_ms after its
    last member created it, on every member at once. Each rank reads both
    on its host's clock, clock {rank: ms} ahead of true time, and its
    watchdog discovers a completion up to poll_ms late (seeded)."""
    mine, issued, done = sim
    delay, clock = delay or {}, clock or {}
    rnd = random.Random(seed)
    ms = 10**6
    cur, prev_done, made, fin = {}, {}, {}, {}
    for i in range(len(job.prog)):
        ranks = [r for r in job.members(i) if i in mine[r][:issued[r]]]
        for r in ranks:
            made[(r, i)] = max(cur.get(r, 0), prev_done.get(r, 0)) + (gap_ms + delay.get((r, i), 0)) * ms
            cur[r] = made[(r, i)]
        if ranks and all((r, i) in done for r in ranks):
            end = max(made[(r, i)] for r in ranks) + dur_ms * ms
            for r in ranks:
                fin[(r, i)] = end
                prev_done[r] = end
    out = {}
    for (r, i), c in sorted(made.items()):
        off = T0 + clock.get(r, 0) * ms
        end = fin.get((r, i))
        out[(r, i)] = (c + off, None if end is None else end + off + rnd.randrange(poll_ms * ms))
    return out


def tpdp(extra_first=()):
    """world 4: groups created in this order: extra_first, tp {0,1} {2,3}, dp {0,2} {1,3}"""
    gs = list(extra_first) + [("tp", [0, 1]), ("tp", [2, 3]), ("dp", [0, 2]), ("dp", [1, 3])]
    job = Job(4, [(str(k + 1), d, rs) for k, (d, rs) in enumerate(gs)])
    for step in range(4):
        for layer in range(2):
            for g in range(1, len(job.groups)):
                if job.groups[g][1] == "tp":
                    job.prog.append((g, "coll", "all_reduce", (4, 1024), "BFloat16", None))
        for g in range(1, len(job.groups)):
            if job.groups[g][1] == "dp":
                job.prog.append((g, "coll", "reduce_scatter", (4096,), "Float", None))
        job.prog.append((0, "coll", "all_reduce", (1,), "Float", None))
    return job


def write_dumps(path, job, sim, alter=None, drop=(), noents=(), keep=None, late=None, timing=False, nostart=(),
                times=None, synthetic="tests/scripts/hang-rest.sh"):
    """alter {(rank, op): {size}}; noents: ranks dumped without entries;
    keep {rank: K}: only its last K entries; late {rank: (first op, ns)}:
    its ops from that one on are created ns later; timing: the first op not
    completed on a rank is "started" (TORCH_NCCL_ENABLE_TIMING), except on
    the ranks in nostart, whose GPU is stuck before it; times {(rank, op):
    (time_created_ns, time_discovered_completed_ns or None)} (timeline())
    replaces the default times (op i created at T0 + i ms on every rank,
    completed 5 ms later). Writes nccl_trace_rank_R under path."""
    mine, issued, done = sim
    alter, keep, late = alter or {}, keep or {}, late or {}
    os.makedirs(path, exist_ok=True)
    for r in range(job.world):
        if r in drop:
            continue
        seqc, seqp, ents, status, head = {}, {}, [], {}, True
        for i in mine[r][:issued[r]]:
            g, kind, name, size, dt, peer = job.prog[i]
            size = alter.get((r, i), {}).get("size", size)
            gname, gdesc, grs = job.groups[g]
            lid = job.local[(r, g)]
            st = "completed" if (r, i) in done else "scheduled"
            if st != "completed" and timing and head and r not in nostart:
                st, head = "started", False
            t = T0 + i * 10**6 + (late[r][1] if r in late and i >= late[r][0] else 0)
            tdone = t + 5 * 10**6
            if times is not None:
                t, tdone = times[(r, i)]
            def ent(pname, p2p, sz=size):
                return {"frames": [{"name": "train_step", "filename": "train.py", "line": 100}],
                        "record_id": len(ents), "pg_id": lid, "process_group": (gname, gdesc),
                        "collective_seq_id": seqc.get(g, 0), "p2p_seq_id": seqp.get(g, 0), "op_id": len(ents) + 1,
                        "profiling_name": pname, "time_created_ns": t, "input_sizes": [list(x) for x in sz],
                        "input_dtypes": [dt] * len(sz), "output_sizes": [list(x) for x in sz],
                        "output_dtypes": [dt] * len(sz), "state": st,
                        "time_discovered_started_ns": t + 10**6 if st != "scheduled" and timing else None,
                        "time_discovered_completed_ns": tdone if st == "completed" else None,
                        "retired": st == "completed", "timeout_ms": 600000, "is_p2p": p2p}
            other = peer[1] if peer and r == peer[0] else peer[0] if peer else None
            if kind == "coll":
                seqc[g] = seqc.get(g, 0) + 1
                ents.append(ent("nccl:" + name, False, [size]))
            elif kind == "p2p":
                seqp[g] = seqp.get(g, 0) + 1
                ents.append(ent(("nccl:send %d->%d" % (grs.index(r), grs.index(other)) if r == peer[0] else
                                 "nccl:recv %d<-%d" % (grs.index(r), grs.index(other))), True, [size]))
            else:  # batch_isend_irecv: one p2p_seq_id for the batch, then the coalesced entry
                seqp[g] = seqp.get(g, 0) + 1
                ents.append(ent("nccl:send %d->%d" % (grs.index(r), grs.index(other)), True, [size]))
                ents.append(ent("nccl:recv %d<-%d" % (grs.index(r), grs.index(other)), True, [size]))
                ents.append(ent("nccl:coalesced", True, []))
            ps = status.setdefault(str(lid), {"last_enqueued_collective": -1, "last_started_collective": -1,
                                              "last_completed_collective": -1})
            if kind == "coll":
                ps["last_enqueued_collective"] = seqc[g]
                if st != "scheduled" and timing:
                    ps["last_started_collective"] = seqc[g]
                if st == "completed":
                    ps["last_completed_collective"] = seqc[g]
        if r in noents:
            ents = []
        elif r in keep:
            ents = ents[-keep[r]:]
        doc = {"version": "2.5", "synthetic": synthetic,
               "pg_config": {n: {"name": n, "desc": d, "ranks": str(rs)} for n, d, rs in job.groups if r in rs},
               "pg_status": status, "entries": ents, "nccl_comm_state": {}, "nccl_version": "2.21.5"}
        with open(f"{path}/nccl_trace_rank_{r}", "wb") as f:
            pickle.dump(doc, f, protocol=2)
