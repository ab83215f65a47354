#!/usr/bin/env bash
# trainscope hang on SYNTHETIC Flight Recorder dumps of the classes the
# hang audits left (docs/hang.md), N sets per class (seeds), each with its
# truth set by construction and written below by hand, never computed by
# trainscope. The dumps come from tests/scripts/hang_sim.py: the job
# simulator, its timeline (true times, each host's clock offset, the
# watchdog discovering a completion up to 100 ms late) and its dump writer.
#   clocks - finished TP/DP jobs of 4 ranks on 2 hosts ({0,1}, {2,3}):
#     skewstrag  one host's clock 2-30 s off (ahead or behind), a rank on
#                it held up D ms before its last reduce_scatter: rank R,
#                D ms (within the 100 ms of the watchdog's discovery, twice);
#     partial    skewstrag in dp group {1,3} with rank 0's dump alone
#                without completion times: ranks 1-3 align with each other;
#     skewearly  one host's clock L ms ahead, a rank on the other host held
#                up more than L ms before its first op: no straggler;
#     slowrank   one rank held up D ms before every reduce_scatter, clocks
#                true: rank R, D ms (it was as late at the first seq);
#     skewonly   every host's clock off by up to 30 s, nobody held up: no
#                straggler;
#     noalign    skewstrag without completion times in the dumps: the
#                clocks cannot be aligned, and the output says so (and
#                names no other rank as a straggler).
#   pg_status with hashed group names and several groups of a dump without
#   entries (its ring buffer kept only its last entries):
#     statusmany  the TP/DP job of 4 ranks with an embedding group {0,3}
#                created first; rank 2 stops before a tp all_reduce; rank 0
#                or 3 lost the entries of 2 or 3 of its groups: rank 2
#                only, no incident at seq 1 (every member completed it), and
#                every id named (nothing said to be unknown);
#     statusamb    two groups of ranks {0,1} used alike, whose entries both
#                ranks lost: which id is which cannot be told, and is said;
#                rank 2, stopped before a default all_reduce, blamed.
#   logname - torch 2.4 watchdog logs, whose tags name a group by its global
#     name (hashed here) and description, or by its name alone: a rank's
#     dump-signal line of one group says it never enqueued the seq another
#     rank timed out in, while a second group times out at the same seq:
#     that rank only, each group its own incident.
# HANG_MORE_N sets per class (default 4); HANG_MORE_SUMMARY=1 prints the
# count of right verdicts per class (the measure in docs/hang.md).
set -u
. "$(dirname "$0")/lib.sh"
N=${HANG_MORE_N:-4}
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
HANG_SIM_DIR=$(cd "$(dirname "$0")" && pwd) python3 - "$tmp" "$N" <<'PY' || exit 1
import hashlib, json, os, random, sys
out, N = sys.argv[1], int(sys.argv[2])
sys.path.insert(0, os.environ["HANG_SIM_DIR"])
from hang_sim import Job, simulate, timeline, tpdp, write_dumps
truth = {}
ME = "tests/scripts/hang-more.sh"

def host_of(r):
    return r // 2

def rs_ops(job, r):
    """the program indices of rank r's reduce_scatters (one per step)"""
    return [i for i, p in enumerate(job.prog) if p[2] == "reduce_scatter" and r in job.members(i)]

for n in range(N):
    rnd = random.Random(1000 + n)
    job = tpdp()
    sim = simulate(job, ahead=10**6)
    # skewstrag: host h's clock off by L (either sign); rank R on it is held
    # up D ms before its last reduce_scatter (dp group {R, R^2}): it enters
    # that collective D ms after its peer, on true time
    h = rnd.randrange(2)
    L = rnd.choice((-1, 1)) * rnd.randrange(2000, 30000)
    rr = 2 * h + rnd.randrange(2)
    D = rnd.choice((1500, 3500, 12000))
    clock = {r: L if host_of(r) == h else 0 for r in range(4)}
    c = f"skewstrag{n}"
    write_dumps(f"{out}/{c}", job, sim, synthetic=ME,
                times=timeline(job, sim, delay={(rr, rs_ops(job, rr)[-1]): D}, clock=clock, seed=n))
    truth[c] = {"straggler": (rr, D)}
    # noalign: the same dumps without time_discovered_completed_ns
    c = f"noalign{n}"
    t = timeline(job, sim, delay={(rr, rs_ops(job, rr)[-1]): D}, clock=clock, seed=n)
    write_dumps(f"{out}/{c}", job, sim, synthetic=ME, times={k: (v[0], None) for k, v in t.items()})
    truth[c] = {"unaligned": True, "held": rr}
    # partial: the same with rank 0's dump alone without completion times,
    # the straggler (rank 1 or 3, on host h) held up before its last
    # reduce_scatter in dp group {1,3}: ranks 1-3 still align with each other
    rp = (1, 3)[n % 2]
    hp = host_of(rp)
    clock = {r: L if host_of(r) == hp else 0 for r in range(4)}
    c = f"partial{n}"
    t = timeline(job, sim, delay={(rp, rs_ops(job, rp)[-1]): D}, clock=clock, seed=n)
    write_dumps(f"{out}/{c}", job, sim, synthetic=ME,
                times={k: (v[0], None if k[0] == 0 else v[1]) for k, v in t.items()})
    truth[c] = {"straggler": (rp, D)}
    # skewearly: host h's clock L ms ahead; rank B on the other host is held
    # up L + 2-10 s before its first op; nobody is late at the end
    L = rnd.randrange(1500, 5000)
    b = 2 * (1 - h) + rnd.randrange(2)
    c = f"skewearly{n}"
    clock = {r: L if host_of(r) == h else 0 for r in range(4)}
    write_dumps(f"{out}/{c}", job, sim, synthetic=ME,
                times=timeline(job, sim, delay={(b, 0 if b < 2 else 1): L + rnd.randrange(2000, 10000)},
                               clock=clock, seed=n))
    truth[c] = {"straggler": None}
    # slowrank: rank R held up D ms before every reduce_scatter of its own
    D = rnd.choice((1500, 3500, 12000))
    rr = rnd.randrange(4)
    c = f"slowrank{n}"
    write_dumps(f"{out}/{c}", job, sim, synthetic=ME,
                times=timeline(job, sim, delay={(rr, i): D for i in rs_ops(job, rr)}, seed=n))
    truth[c] = {"straggler": (rr, D)}
    # skewonly: each host's clock off by up to 30 s, nobody held up
    c = f"skewonly{n}"
    offs = [rnd.randrange(-30000, 30000) for _ in range(2)]
    write_dumps(f"{out}/{c}", job, sim, synthetic=ME,
                times=timeline(job, sim, clock={r: offs[host_of(r)] for r in range(4)}, seed=n))
    truth[c] = {"straggler": None}

def step_start(job, step):
    """index of the first op of step `step` (the loss all_reduce ends a step)"""
    ends = [i for i, p in enumerate(job.prog) if p[0] == 0]
    return 0 if step == 0 else ends[step - 1] + 1

def hashed(job):
    """group names as new_group(use_local_synchronization=True) gives them"""
    job.groups = [(g if g == "0" else "%08x" % (0x9e3779b1 * int(g) & 0xffffffff), d, rs) for g, d, rs in job.groups]

for n in range(N):
    # statusmany: the embedding group {0,3} is created first and used
    # once; hashed names; rank 2 stops before its tp all_reduce of step S;
    # rank Q (0 or 3, the ranks in 4 groups besides the default one) kept
    # its last 1 or 2 entries, so 2 or 3 of its groups hold no entry and
    # its pg_status ids of them must be named from the other dumps
    job = tpdp([("embd", [0, 3])])
    hashed(job)
    job.prog.insert(0, (1, "coll", "all_reduce", (16,), "Float", None))
    k = next(i for i in range(step_start(job, 1 + n % 3), len(job.prog)) if 2 in job.members(i))
    q, kk = (0, 3)[n % 2], 1 + (n // 2) % 2
    c = f"statusmany{n}"
    write_dumps(f"{out}/{c}", job, simulate(job, stop={2: k - 1}), synthetic=ME, keep={q: kk})
    # every member completed seq 1 of every group: no incident there; and
    # every id can be named, so nothing is said to be unknown
    truth[c] = {"culprits": [2], "only": ["not_joined"], "no_seq": 1, "unsaid": "pg_status:"}
    # statusamb: groups a and b, both {0,1}, created one after the other
    # and used alike in every step; ranks 0 and 1 both kept only their last
    # entry, of the default group, so no dump tells which of their ids 1
    # and 2 is a: that cannot be told, and is said; rank 2 stops before the
    # default all_reduce of step S
    job = Job(4, [("1", "a", [0, 1]), ("2", "b", [0, 1]), ("3", "c", [2, 3])])
    hashed(job)
    for step in range(4):
        for g in (1, 2, 3):
            job.prog.append((g, "coll", "all_reduce", (64,), "Float", None))
        job.prog.append((0, "coll", "all_reduce", (1,), "Float", None))
    k = [i for i, p in enumerate(job.prog) if p[0] == 0][1 + n % 3]
    c = f"statusamb{n}"
    write_dumps(f"{out}/{c}", job, simulate(job, stop={2: k - 1}, ahead=1), synthetic=ME, keep={0: 1, 1: 1})
    truth[c] = {"culprits": [2], "said": ["pg_status: rank 0", "rank 1", "ids 1, 2", "cannot be told"]}

# logname: watchdog logs of torch 2.4, whose tag names a group by its global
# name and description, "[PG <name> (<desc>) Rank N]", or by its name alone
# when the description is "undefined" ("[PG <name> Rank N]"); names hashed
# (new_group(use_local_synchronization=True)). Rank 0 times out in dp group
# {0, R} at seq S, and R's dump-signal line of that group says it enqueued
# S-1 only; rank 1 times out at the same seq S in its tp group {0, 1}, all
# its members past it (enqueued S+1): rank R only, the groups apart
for n in range(N):
    c = f"logname{n}"
    os.makedirs(f"{out}/{c}", exist_ok=True)
    seq, rr = 40 + 7 * n, (2, 3)[n % 2]
    # names as new_group(use_local_synchronization=True) hashes them: the
    # sha1 of the ranks joined by "_" (a set index here, so seeds differ)
    dp = hashlib.sha1(("0_%d_%d" % (rr, n)).encode()).hexdigest()
    tp = hashlib.sha1(("0_1_%d" % n).encode()).hexdigest()
    tag = (lambda name, desc, r: f"[PG {name} ({desc}) Rank {r}]") if n % 4 < 2 else \
          (lambda name, desc, r: f"[PG {name} Rank {r}]")
    pre = "[rank%d]:[E626 16:48:25.440238649 ProcessGroupNCCL.cpp:1%d] %s "
    with open(f"{out}/{c}/rank0.log", "w") as f:
        f.write(pre % (0, 1, tag(dp, "dp", 0)) + "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%d, "
                "OpType=_REDUCE_SCATTER_BASE, NumelIn=4096, NumelOut=2048, Timeout(ms)=600000) ran for "
                "600043 milliseconds before timing out.\n" % seq)
        f.write(pre % (0, 2, tag(dp, "dp", 0)) + "Exception (either an error or timeout) detected by watchdog at "
                "work: %d, last enqueued NCCL work: %d, last completed NCCL work: %d.\n" % (seq, seq, seq - 1))
    with open(f"{out}/{c}/rank1.log", "w") as f:
        f.write(pre % (1, 1, tag(tp, "tp", 1)) + "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%d, "
                "OpType=ALLREDUCE, NumelIn=8, NumelOut=8, Timeout(ms)=600000) ran for 600043 milliseconds before "
                "timing out.\n" % seq)
        f.write(pre % (1, 2, tag(tp, "tp", 1)) + "Exception (either an error or timeout) detected by watchdog at "
                "work: %d, last enqueued NCCL work: %d, last completed NCCL work: %d.\n" % (seq, seq + 1, seq - 1))
    with open(f"{out}/{c}/rank{rr}.log", "w") as f:
        f.write(pre % (rr, 3, tag(dp, "dp", rr)) + "Received a dump signal due to a collective timeout from  rank 0 "
                "and we will try our best to dump the debug info. Last enqueued NCCL work: %d, last completed NCCL "
                "work: %d.\n" % (seq - 1, seq - 1))
    truth[c] = {"culprits": [rr], "groups": sorted([dp, tp])}
json.dump(truth, open(f"{out}/truth.json", "w"))
PY
for d in "$tmp"/*/; do
	c=$(basename "$d")
	"$TS" hang --json "$d" > "$tmp/$c.json" 2>"$tmp/$c.err"
	"$TS" hang "$d" > "$tmp/$c.txt" 2>&1
	case $c in skewstrag*|noalign*)
		"$TS" diagnose "$d" > "$tmp/$c.diag.txt" 2>&1
		"$TS" report "$d" -o "$tmp/$c.md" >/dev/null 2>&1 ;;
	esac
done
python3 - "$tmp" "${HANG_MORE_SUMMARY:-0}" <<'PY'
import json, re, sys
tmp, summary = sys.argv[1], sys.argv[2] == "1"
truth = json.load(open(f"{tmp}/truth.json"))
right, total, fail = {}, {}, 0
for c, t in sorted(truth.items()):
    cls_name = re.sub(r"\d+$", "", c)
    total[cls_name] = total.get(cls_name, 0) + 1
    why = None
    try:
        d = json.load(open(f"{tmp}/{c}.json"))
    except ValueError:
        d, why = None, "no JSON"
    if d is not None:
        text = open(f"{tmp}/{c}.txt").read()
        cul = sorted({x for i in d["incidents"] for x in i["culprits"]})
        finds = [f["text"] for f in d["findings"]]
        st = [f for f in finds if f.startswith("straggler")]
        cls = [i["class"] for i in d["incidents"]]
        if "culprits" in t and cul != t["culprits"]:
            why = f"culprits {cul}, want {t['culprits']}"
        elif "only" in t and set(cls) - set(t["only"]):
            why = f"classes {cls}, want only {t['only']}"
        elif "no_seq" in t and [i for i in d["incidents"] if i["seq"] == t["no_seq"]]:
            why = f"an incident at seq {t['no_seq']}, which every member completed"
        elif "groups" in t and sorted(i["pg"]["guid"] or "-" for i in d["incidents"]) != t["groups"]:
            why = f"incidents of groups {[i['pg']['guid'] for i in d['incidents']]}, want one of each of {t['groups']}"
        elif "unsaid" in t and [f for f in finds if t["unsaid"] in f]:
            why = f"said: {[f for f in finds if t['unsaid'] in f]}"
        elif "said" in t and not [f for f in finds if all(x in f for x in t["said"])] or \
                "said" in t and t["said"][-1] not in text:
            why = f"no finding with {t['said']}"
        elif "straggler" in t and t["straggler"] is None and (st or d["stragglers"]):
            why = f"a straggler said: {st}"
        elif "straggler" in t and t["straggler"] is not None:
            rr, lag = t["straggler"]
            got = [(z["rank"], z["lag_ms"]) for z in d["stragglers"]]
            # the watchdog discovers each completion up to 100 ms late, on
            # both sides of an offset: the lag is D within 200 ms
            if len(got) != 1 or got[0][0] != rr or abs(got[0][1] - lag) > 200:
                why = f"stragglers {got}, want rank {rr} {lag} ms (+-200)"
            elif not [f for f in st if f"rank {rr} entered" in f] or f"rank {rr} entered" not in text:
                why = f"no straggler finding of rank {rr}: {st}"
            elif c.startswith("skewstrag") and f"rank {rr} entered" not in open(f"{tmp}/{c}.diag.txt").read():
                why = "diagnose's text does not say the straggler"
            elif c.startswith("skewstrag") and f"straggler: rank {rr} entered" not in open(f"{tmp}/{c}.md").read():
                why = "report's Markdown does not say the straggler"
        if not why and "held" in t and [z for z in d["stragglers"] if z["rank"] != t["held"]]:
            why = f"stragglers {d['stragglers']}, but only rank {t['held']} was held up"
        if not why and t.get("unaligned"):
            said = "could not be aligned"
            if not [f for f in finds if said in f] or said not in text:
                why = "the unaligned clocks are not said in hang's text and --json"
            elif said not in open(f"{tmp}/{c}.diag.txt").read():
                why = "diagnose's text does not say the unaligned clocks"
            elif said not in open(f"{tmp}/{c}.md").read():
                why = "report's Markdown does not say the unaligned clocks"
    if why:
        fail = 1
        print(f"FAIL {c}: {why}")
    else:
        right[cls_name] = right.get(cls_name, 0) + 1
if summary:
    for k in sorted(total):
        print(f"{k}: {right.get(k, 0)} of {total[k]} right")
sys.exit(fail)
PY
