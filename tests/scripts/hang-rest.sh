#!/usr/bin/env bash
# trainscope hang on SYNTHETIC evidence of the cases the first hang audit
# left (docs/hang.md), N sets per class, each with its truth set by
# construction and written below by hand, never computed by trainscope.
# The dumps come from the job simulator of hang-classes.sh (pickle protocol
# 2, process-local pg_ids, pg_status keyed by them, P2P entries on the
# group's current collective seq), extended with what these cases need:
#   status    - a rank's dump holds no entry of some of its groups (written
#               without entries, as _dump_nccl_trace(includeCollectives=False)
#               does, or its ring buffer kept its last 2 entries only), so its
#               pg_status ids must be read through its own pg_config;
#               statushash: hashed group names, one group lost to the ring
#               buffer;
#   p2psize   - a 2-stage pipeline whose receive in step S is posted with
#               twice the elements of its send: it never completes;
#   batch     - a pipeline of batch_isend_irecv exchanges (each member op on
#               one p2p_seq_id, the group's collective seq not bumped, then an
#               is_p2p "nccl:coalesced" entry, as ProcessGroupNCCL records
#               them); one stage stops before a batch;
#   straggler - a finished TP/DP job in which one rank enters the last step's
#               collectives L ms after the others (time_created_ns); skew:
#               one rank's clock L ms ahead on every entry (no straggler);
#   logguid   - watchdog logs of a group whose PG ID differs between ranks
#               (the embedding group shifts the ids on ranks 0 and 3): the
#               culprit's dump-signal line says it never enqueued the seq;
#   tworank   - a 2-rank job, rank 1 stops before seq K and writes no dump;
#               with TORCH_NCCL_ENABLE_TIMING rank 0's entry K is "started"
#               (its kernel runs, waiting on the peer), without it
#               "scheduled" (which says nothing of the peer); tworank_gpu:
#               rank 0's GPU is stuck before seq K, which rank 1 issued
#               (no dump of rank 1): "scheduled" though timing is on.
# HANG_REST_N sets per class (default 4); HANG_REST_SUMMARY=1 prints the
# count of right verdicts per class (the measure in docs/hang.md).
set -u
. "$(dirname "$0")/lib.sh"
N=${HANG_REST_N:-4}
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
HANG_SIM_DIR=$(cd "$(dirname "$0")" && pwd) python3 - "$tmp" "$N" <<'PY' || exit 1
import json, os, pickle, sys
out, N = sys.argv[1], int(sys.argv[2])
truth = {}

sys.path.insert(0, os.environ["HANG_SIM_DIR"])
from hang_sim import Job, simulate, tpdp, write_dumps

def write(case, job, sim, **kw):
    write_dumps(f"{out}/{case}", job, sim, **kw)

def pipeline(world, stages, kind="p2p", steps=4):
    npp = world // stages
    gs = [(str(k + 1), "pp", list(range(k * stages, (k + 1) * stages))) for k in range(npp)]
    gs += [(str(npp + k + 1), "dp", list(range(k, world, stages))) for k in range(stages)] if npp > 1 else []
    job = Job(world, gs)
    for step in range(steps):
        for mb in range(2):
            for g in range(1, len(job.groups)):
                rs = job.groups[g][2]
                if job.groups[g][1] == "pp":
                    for a, b in zip(rs, rs[1:]):
                        job.prog.append((g, kind, None, (2, 512), "BFloat16", (a, b)))
        for g in range(1, len(job.groups)):
            if job.groups[g][1] == "dp":
                job.prog.append((g, "coll", "all_reduce", (8192,), "Float", None))
        job.prog.append((0, "coll", "all_reduce", (1,), "Float", None))
    return job

def step_start(job, step):
    """index of the first op of step `step` (the loss all_reduce ends a step)"""
    ends = [i for i, p in enumerate(job.prog) if p[0] == 0]
    return 0 if step == 0 else ends[step - 1] + 1

for n in range(N):
    # status: the embedding group {0,3} is created first, so ranks 0 and 3
    # number the later groups one higher; rank 2 stops before its tp
    # all_reduce of step S; rank Q (0, 1 or 3) wrote a dump without entries,
    # or one that kept its last 2 entries: its pg_status must still say that
    # it completed the groups it holds no entry of (and rank 3, waiting in
    # its tp group on rank 2, that it waits there: a victim in dp {1,3})
    job = tpdp([("embd", [0, 3])])
    s = 1 + n % 3
    k = next(i for i in range(step_start(job, s), len(job.prog)) if 2 in job.members(i))
    q = (0, 1, 3)[(n // 2) % 3]
    c = f"status{n}"
    if n % 2 == 0:
        write(c, job, simulate(job, stop={2: k - 1}), noents={q})
    else:
        write(c, job, simulate(job, stop={2: k - 1}), keep={q: 2})
    truth[c] = {"culprits": [2], "cls": "not_joined", "only": ["not_joined"], "no_seq": 1}
    # statushash: the same job with hashed group names (new_group with
    # use_local_synchronization), the embedding group used once at the
    # start; rank 0's ring buffer lost only that first entry, so its
    # pg_status id of the embedding group is the one its entries do not
    # carry, and its pg_config's one group without entries
    job = tpdp([("embd", [0, 3])])
    job.groups = [(n if n == "0" else "%08x" % (0x9e3779b1 * int(n) & 0xffffffff), d, rs) for n, d, rs in job.groups]
    job.prog.insert(0, (1, "coll", "all_reduce", (16,), "Float", None))
    k = next(i for i in range(step_start(job, 1 + n % 3), len(job.prog)) if 2 in job.members(i))
    c = f"statushash{n}"
    sim = simulate(job, stop={2: k - 1})
    write(c, job, sim, keep={0: sim[1][0] - 1})
    # every member completed seq 1 of every group: no incident there
    truth[c] = {"culprits": [2], "cls": "not_joined", "only": ["not_joined"], "no_seq": 1}
    # p2psize: 2 stages, the receive of micro-batch 0 in step S posted with
    # twice the elements (or the send, in odd sets): it never completes
    job = pipeline(2, 2, steps=4)
    s = 1 + n % 3
    k = next(i for i in range(step_start(job, s), len(job.prog)) if job.prog[i][1] == "p2p")
    c = f"p2psize{n}"
    write(c, job, simulate(job, poison={k}, ahead=1), alter={(1 if n % 2 == 0 else 0, k): {"size": (2, 1024)}})
    truth[c] = {"culprits": [], "cls": "mismatch", "sizes": ["[[2,512]]", "[[2,1024]]"]}
    # batch: a pipeline of 4 stages exchanging in batch_isend_irecv; stage R
    # (1 or 2) stops before its first batch of step S
    job = pipeline(4, 4, kind="batch")
    s, rr = 1 + n % 3, 1 + n % 2
    k = next(i for i in range(step_start(job, s), len(job.prog)) if rr in job.members(i))
    c = f"batch{n}"
    write(c, job, simulate(job, stop={rr: k - 1}))
    truth[c] = {"culprits": [rr], "cls": "not_joined", "only": ["not_joined"]}
    # straggler: the TP/DP job runs to its end; rank R enters the last step's
    # collectives L ms late
    job = tpdp()
    rr, lag = n % 4, (1500, 3500, 12000)[n % 3]
    c = f"straggler{n}"
    write(c, job, simulate(job, ahead=10**6), late={rr: (step_start(job, 3), lag * 10**6)})
    truth[c] = {"culprits": [], "cls": None, "straggler": (rr, lag)}
    # skew: rank R's host clock runs L ms ahead, every entry of it "late"
    # by the same amount: the clocks, no straggler
    c = f"skew{n}"
    write(c, job, simulate(job, ahead=10**6), late={rr: (0, lag * 10**6)})
    truth[c] = {"culprits": [], "cls": None, "straggler": None}
    # healthy: the same with every rank on time: no straggler said
    c = f"ontime{n}"
    write(c, tpdp(), simulate(tpdp(), ahead=10**6))
    truth[c] = {"culprits": [], "cls": None, "straggler": None}
    # tworank: rank 1 stops before seq K of the default group; no dump of it
    job = Job(2, [])
    for i in range(8):
        job.prog.append((0, "coll", "all_reduce", (1024,), "Float", None))
    kk = 3 + n % 4
    c = f"tworank{n}"
    write(c, job, simulate(job, stop={1: kk - 2}, ahead=1), drop={1}, timing=True)
    truth[c] = {"culprits": [1], "cls": "not_joined"}
    c = f"tworank_notiming{n}"
    write(c, job, simulate(job, stop={1: kk - 2}, ahead=1), drop={1})
    truth[c] = {"culprits": [], "cls": "undecided", "say": "rank 1's dump"}
    # tworank_gpu: rank 0's GPU is stuck before seq K (its entry stays
    # "scheduled" though timing is on); rank 1 issued it and wrote no dump
    c = f"tworank_gpu{n}"
    write(c, job, simulate(job, poison={kk - 1}, ahead=1), drop={1}, timing=True, nostart={0})
    truth[c] = {"culprits": [], "cls": "undecided", "say": "look at ranks 0 first"}

# logguid: watchdog logs; group "4" (dp {0,2}) is PG ID 3 on rank 0 (the
# embedding group came first there) and PG ID 2 on rank 2; rank 0 times out
# in its seq S, rank 2's dump-signal line says it enqueued S-1 only
for n in range(N):
    c = f"logguid{n}"
    os.makedirs(f"{out}/{c}", exist_ok=True)
    seq = 40 + 7 * n
    pre = "[rank%d]:[E626 16:48:25.440238649 ProcessGroupNCCL.cpp:1%d] [PG ID %d PG GUID 4(dp) Rank %d] "
    with open(f"{out}/{c}/rank0.log", "w") as f:
        f.write(pre % (0, 1, 3, 0) + "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%d, "
                "OpType=_REDUCE_SCATTER_BASE, NumelIn=4096, NumelOut=2048, Timeout(ms)=600000) ran for "
                "600043 milliseconds before timing out.\n" % seq)
        f.write(pre % (0, 2, 3, 0) + " failure detected by watchdog at work sequence id: %d PG status: "
                "last enqueued work: %d, last completed work: %d\n" % (seq, seq, seq - 1))
    with open(f"{out}/{c}/rank2.log", "w") as f:
        f.write(pre % (2, 3, 2, 2) + "Received a dump signal due to a collective timeout from  rank 0 and we "
                "will try our best to dump the debug info. Last enqueued NCCL work: %d, last completed NCCL "
                "work: %d.\n" % (seq - 1, seq - 1))
    truth[c] = {"culprits": [2], "cls": "not_joined"}
json.dump(truth, open(f"{out}/truth.json", "w"))
PY
for d in "$tmp"/*/; do
	c=$(basename "$d")
	"$TS" hang --json "$d" > "$tmp/$c.json" 2>"$tmp/$c.err"
	"$TS" hang "$d" > "$tmp/$c.txt" 2>&1
	case $c in straggler*)
		"$TS" diagnose "$d" > "$tmp/$c.diag.txt" 2>&1
		"$TS" report "$d" -o "$tmp/$c.md" >/dev/null 2>&1 ;;
	esac
done
python3 - "$tmp" "${HANG_REST_SUMMARY:-0}" <<'PY'
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
        cls = [i["class"] for i in d["incidents"]]
        finds = [f["text"] for f in d["findings"]]
        if cul != t["culprits"]:
            why = f"culprits {cul}, want {t['culprits']}"
        elif t["cls"] and t["cls"] not in cls:
            why = f"classes {cls}, want a {t['cls']}"
        elif "only" in t and set(cls) - set(t["only"]):
            why = f"classes {cls}, want only {t['only']}"
        elif "no_seq" in t and [i for i in d["incidents"] if i["seq"] == t["no_seq"]]:
            why = f"an incident at seq {t['no_seq']}, which every member completed"
        elif t["cls"] is None and cls:
            why = f"classes {cls}, want no incident"
        elif "sizes" in t and not [k for k, i in enumerate(d["incidents"]) if i["class"] == "mismatch" and
                                   all(z in " ".join(f["text"] for f in d["findings"] if f["incident"] == k + 1)
                                       for z in t["sizes"])]:
            why = "the two sizes are not said"
        elif "straggler" in t:
            st = [f for f in finds if f.startswith("straggler")]
            if t["straggler"] is None and st:
                why = f"a straggler said in an on-time job: {st}"
            elif t["straggler"] is not None:
                rr, lag = t["straggler"]
                # the entries of rank rr are lag ms late, every other rank on time
                want = f"rank {rr} entered"
                if not [f for f in st if want in f and f"{lag} ms" in f] or want not in text:
                    why = f"no straggler finding of rank {rr} {lag} ms: {st}"
                elif [(z["rank"], z["lag_ms"]) for z in d["stragglers"]] != [(rr, lag)]:
                    why = f"stragglers {d['stragglers']}, want rank {rr} {lag} ms"
                elif want not in open(f"{tmp}/{c}.diag.txt").read():
                    why = "diagnose's text does not say the straggler"
                elif f"straggler: rank {rr} entered the last collective of a group {lag} ms" not in \
                        open(f"{tmp}/{c}.md").read():
                    why = "report's Markdown does not say the straggler"
        elif "say" in t and not [f for f in finds if t["say"] in f and "collect" in f]:
            why = "the undecided verdict does not say what to collect"
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
