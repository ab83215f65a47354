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
#     skewearly  one host's clock L ms ahead, a rank on the other host held
#                up more than L ms before its first op: no straggler;
#     slowrank   one rank held up D ms before every reduce_scatter, clocks
#                true: rank R, D ms (it was as late at the first seq);
#     skewonly   every host's clock off by up to 30 s, nobody held up: no
#                straggler;
#     noalign    skewstrag without completion times in the dumps: the
#                clocks cannot be aligned, and the output says so (and
#                names no other rank as a straggler).
# HANG_MORE_N sets per class (default 4); HANG_MORE_SUMMARY=1 prints the
# count of right verdicts per class (the measure in docs/hang.md).
set -u
TS=${TS:-build/trainscope}
N=${HANG_MORE_N:-4}
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
HANG_SIM_DIR=$(cd "$(dirname "$0")" && pwd) python3 - "$tmp" "$N" <<'PY' || exit 1
import json, os, random, sys
out, N = sys.argv[1], int(sys.argv[2])
sys.path.insert(0, os.environ["HANG_SIM_DIR"])
from hang_sim import simulate, timeline, tpdp, write_dumps
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
    truth[c] = {"unaligned": True, "only": rr}
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
        if "culprits" in t and cul != t["culprits"]:
            why = f"culprits {cul}, want {t['culprits']}"
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
        if not why and "only" in t and [z for z in d["stragglers"] if z["rank"] != t["only"]]:
            why = f"stragglers {d['stragglers']}, but only rank {t['only']} was held up"
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
