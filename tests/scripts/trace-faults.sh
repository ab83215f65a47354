#!/usr/bin/env bash
# Detection must generalise beyond the two injected corpus cases: build
# new fault cases from REAL traces (shared/data/traces/cpu) by stretching
# one op and shifting everything after it, then check what trainscope
# reports:
#   1. b_moe (clean) with its step-24 data-loader span stretched by 250 ms:
#      exactly step 24 is an outlier, reason "data loader".
#   2. a_dense copied as two ranks with a synthetic gloo:all_reduce at the
#      end of every step; rank 1 has one aten op stretched by 200 ms in every
#      step and rank 0 waits that long in the all-reduce: straggler rank 1,
#      job wall "straggler".
#   3. same, but the stretched rank alternates (1,0,1,0,1): no straggler.
#   4. same, stretch only in one step of five on rank 1: no straggler.
set -u
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
CPU=$DATA/traces/cpu
[ -d "$CPU" ] || { echo "no $CPU"; exit 77; }
command -v python3 >/dev/null || { echo "python3 not found"; exit 77; }
python3 - "$CPU" "$tmp" <<'PY' || exit 1
import glob, gzip, json, os, sys, copy
cpu, tmp = sys.argv[1], sys.argv[2]

def load(case):
    f = glob.glob(os.path.join(cpu, case, "rank0.*.pt.trace.json*"))[0]
    return json.load(gzip.open(f) if f.endswith(".gz") else open(f))

def shift_after(evs, t, d):
    """Shift every event starting at or after t by d; stretch spans over t."""
    for e in evs:
        if "ts" not in e:
            continue
        ts = float(e["ts"])
        if ts >= t:
            e["ts"] = round(ts + d, 3)
        elif "dur" in e and ts + float(e["dur"]) > t:
            e["dur"] = round(float(e["dur"]) + d, 3)

def steps(evs):
    s = [e for e in evs if e.get("ph") == "X" and e["name"].startswith("ProfilerStep#")]
    return sorted(s, key=lambda e: float(e["ts"]))

# 1. data-loader stall in a clean MoE run
d = load("b_moe")
ev = d["traceEvents"]
st = [s for s in steps(ev) if s["name"] == "ProfilerStep#24"][0]
dl = [e for e in ev if e.get("ph") == "X" and e["name"].startswith("enumerate(DataLoader)")
      and float(st["ts"]) <= float(e["ts"]) < float(st["ts"]) + float(st["dur"])][0]
end = float(dl["ts"]) + float(dl["dur"])
shift_after(ev, end - 0.001, 250000.0)
os.makedirs(os.path.join(tmp, "stall"))
json.dump(d, open(os.path.join(tmp, "stall", "rank0.trace.json"), "w"))

# 2-4. two ranks from a_dense with a synthetic all-reduce per step
def two_ranks(name, late):
    base = load("a_dense")
    os.makedirs(os.path.join(tmp, name))
    for rank in (0, 1):
        d = copy.deepcopy(base)
        d["distributedInfo"] = {"backend": "gloo", "rank": rank, "world_size": 2}
        ev = d["traceEvents"]
        for i, s in enumerate(list(steps(ev))):
            s0, s1 = float(s["ts"]), float(s["ts"]) + float(s["dur"])
            ar = {"ph": "X", "cat": "user_annotation", "name": "gloo:all_reduce",
                  "pid": s["pid"], "tid": 424242, "ts": round(s1 - 20000.0, 3), "dur": 15000.0}
            ev.append(ar)
            if late[i] is None:
                continue
            if late[i] == rank:
                # the straggler: one op in the step runs 200 ms longer
                ops = [e for e in ev if e.get("cat") == "cpu_op" and e.get("tid") == s["tid"]
                       and s0 <= float(e["ts"]) < s1 - 30000.0]
                op = max(ops, key=lambda e: float(e["dur"]))
                shift_after(ev, float(op["ts"]) + float(op["dur"]) - 0.001, 200000.0)
            else:
                # the peer: waits 200 ms longer inside the same all-reduce
                t = float(ar["ts"]) + 1.0
                shift_after(ev, t, 200000.0)
        json.dump(d, open(os.path.join(tmp, name, "rank%d.trace.json" % rank), "w"))

two_ranks("straggler", [1, 1, 1, 1, 1])
two_ranks("alternating", [1, 0, 1, 0, 1])
two_ranks("hiccup", [None, None, 1, None, None])
PY
run() { "$TS" trace --json "$tmp/$1" >"$tmp/$1.out" || { echo "$1: exit $?"; exit 1; }; }
for c in stall straggler alternating hiccup; do run $c; done
python3 - "$tmp" <<'PY'
import json, sys, os
tmp = sys.argv[1]
bad = []
o = json.load(open(os.path.join(tmp, "stall.out")))
outl = [(s["step"], s["reason"]) for s in o["ranks"][0]["steps"] if s["outlier"]]
if len(outl) != 1 or outl[0][0] != 24 or not outl[0][1].startswith("data loader 25"):
    bad.append("stall: outliers %s, want step 24 data loader ~250 ms" % outl)
o = json.load(open(os.path.join(tmp, "straggler.out")))
if [s["rank"] for s in o["stragglers"]] != [1] or o["wall"]["dominant"] != "straggler":
    bad.append("straggler: %s wall %s" % (o["stragglers"], o["wall"]["dominant"]))
for c in ("alternating", "hiccup"):
    o = json.load(open(os.path.join(tmp, c + ".out")))
    if o["stragglers"] or o["wall"]["dominant"] == "straggler":
        bad.append("%s: false straggler %s" % (c, o["stragglers"]))
    if o["collective_skew"]["matched"] != 5:
        bad.append("%s: matched %d collectives, want 5" % (c, o["collective_skew"]["matched"]))
for b in bad:
    print("FAIL", b)
sys.exit(1 if bad else 0)
PY
