"""hang_sim: the job simulator of the hang tests (hang-classes.sh,
hang-rest.sh): process groups, a program of collectives and P2P ops, and
which op each rank issued and completed when some ranks stop early or
some ops never complete. The tests write Flight Recorder dumps from it."""


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
