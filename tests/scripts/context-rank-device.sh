#!/usr/bin/env bash
# A trace's device is its rank's GPU, not the first deviceProperties
# entry: Kineto lists every visible GPU of the node, GPU 0 first. Runs
# generated from examples/run-h200 (one Kineto trace, its GPU activities
# on device 0 "NVIDIA H200"), metadata and devices edited:
#   h200        the trace as it is (distributedInfo rank 0, world 2)
#   node        rank 1 on a mixed node: deviceProperties [0 "NVIDIA H100
#               80GB HBM3" (85899345920 bytes), 1 "NVIDIA H200"
#               (150109880320 bytes)], every GPU activity's args.device 1
#   local       h200 plus a rank-1 trace listing the same mixed node,
#               distributedInfo local_rank 1 (read for its metadata only)
#   nolocal     the same without local_rank: which GPU is the rank's is
#               not recorded
#   same        h200 plus a rank-1 trace listing [0 "NVIDIA H200",
#               1 "NVIDIA H200"], no local_rank (the choice cannot matter)
# Expected, by construction:
#   trace node: device "NVIDIA H200", device memory 150109880320 bytes;
#   diff h200 node: both contexts "NVIDIA H200", same_hardware, no
#     context-differs;
#   ab h200 node: no context-differs (the node's rank ran on the H200);
#   ab h200 local: no context-mixed (local_rank 1 is the H200);
#   ab h200 nolocal: context-mixed in device naming the H100 as GPU 0's
#     ("(GPU 0's: it lists 2 GPUs and not the rank's)");
#   ab h200 same: no warning.
# Before 2026-12-05 every context took the first entry (the H100): 6 of
# the 7 checks wrong (3 false device differences in diff and ab, the
# node's device and memory in trace, the guess unsaid).
set -u
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
command -v python3 >/dev/null || { echo "python3 not found"; exit 77; }
H100="NVIDIA H100 80GB HBM3"
python3 - "$tmp" examples/run-h200 "$H100" <<'PY' || exit 1
import glob, gzip, json, os, shutil, sys
d, src, h100 = sys.argv[1:]
[orig] = glob.glob(f"{src}/traces/*.json.gz")
base = json.load(gzip.open(orig))
base["distributedInfo"] = {"backend": "nccl", "rank": 0, "world_size": 2}
h200 = base["deviceProperties"][0]
def node(t, names=(h100, "NVIDIA H200"), move=True, local=None):
    props = []
    for i, n in enumerate(names):
        p = dict(h200, id=i, name=n)
        if n == h100:
            p["totalGlobalMem"] = 85899345920
        props.append(p)
    t["deviceProperties"] = props
    t["distributedInfo"]["rank"] = 1
    if local is not None:
        t["distributedInfo"]["local_rank"] = local
    if move:
        for e in t["traceEvents"]:
            if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation"):
                e["args"]["device"] = 1
                e["pid"] = 1
def run(name, first=None, rank1=None):
    shutil.copytree(src, f"{d}/{name}", ignore=shutil.ignore_patterns("traces"))
    os.mkdir(f"{d}/{name}/traces")
    t = json.loads(json.dumps(base))
    if first:
        first(t)
    with gzip.open(f"{d}/{name}/traces/{os.path.basename(orig)}", "wt") as f:
        json.dump(t, f)
    if rank1:
        t = json.loads(json.dumps(base))
        rank1(t)
        with gzip.open(f"{d}/{name}/traces/rank1.pt.trace.json.gz", "wt") as f:
            json.dump(t, f)
run("h200")
run("node", node)
run("local", None, lambda t: node(t, local=1))
run("nolocal", None, node)
run("same", None, lambda t: node(t, names=("NVIDIA H200", "NVIDIA H200")))
PY
bad=0 n=0
ok() { # label, condition status
	n=$((n + 1))
	if [ "$2" = 0 ]; then echo "$1: ok"; else echo "$1: FAIL"; bad=$((bad + 1)); fi
}
warn() { # A B python condition over w (the warnings: [(code, message)])
	"$TS" ab "$tmp/$1" "$tmp/$2" --json 2>/dev/null | python3 -c "
import json, sys
w = [(x['code'], x['message']) for x in json.load(sys.stdin)['warnings']]
ctx = [m for c, m in w if c.startswith('context-')]
sys.exit(0 if ($3) else 1)"
}
node=$(ls "$tmp"/node/traces/*.json.gz)
"$TS" trace --json "$node" 2>/dev/null | python3 -c "
import json, sys
r = json.load(sys.stdin)['ranks'][0]
sys.exit(0 if r['device'] == 'NVIDIA H200' else 1)"
ok "trace node: device NVIDIA H200" $?
"$TS" trace --json "$node" 2>/dev/null | grep -q '"device_total_bytes": 150109880320'
ok "trace node: the H200's memory" $?
"$TS" diff "$tmp/h200" "$tmp/node" --json 2>/dev/null | python3 -c "
import json, sys
d = json.load(sys.stdin)
c = d['context']
w = [x['code'] for x in d['warnings']]
sys.exit(0 if c['baseline']['device'] == c['candidate']['device'] == 'NVIDIA H200' and c['same_hardware']
         and 'context-differs' not in w and 'different-hardware' not in w else 1)"
ok "diff h200 node: same device" $?
warn h200 node "not ctx"
ok "ab h200 node: no context warning" $?
warn h200 local "not ctx"
ok "ab h200 local: local_rank's device, no context warning" $?
warn h200 nolocal "len(ctx) == 1 and \"$H100 in \" in ctx[0] and \"rank1.pt.trace.json.gz (GPU 0's: it lists 2 GPUs and not the rank's)\" in ctx[0]"
ok "ab h200 nolocal: the guess said" $?
warn h200 same "not ctx"
ok "ab h200 same: no context warning" $?
echo "context-rank-device: $bad of $n checks wrong"
[ $bad = 0 ]
