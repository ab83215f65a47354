#!/usr/bin/env bash
# A node's Kineto trace lists every visible GPU (deviceProperties); the
# rank's own is the one its GPU activities name, else the one of
# distributedInfo.local_rank. With neither, GPU 0's is taken: where the
# listed GPUs differ that is an assumption, and every output that prints
# the rank's device says so (one fact: ts_trace_rank_device's
# TS_RANK_DEV_ASSUMED, one warning: rank-device-assumed). Generated from
# the examples/run-h200 trace (GPU 0 "NVIDIA H200", 132 SMs, 1072
# kernels, 96 memsets, 16 memcpys naming device 0), deviceProperties
# given a second entry, id 1:
#   asm   GPU 1 "NVIDIA H100 80GB HBM3" (other memory), every activity's
#         args.device removed, no local_rank
#   same  GPU 1 a copy of GPU 0, args.device removed: nothing to assume
#   ev    GPU 1 the H100, args.device kept: the activities name GPU 0
#   lr    asm with distributedInfo.local_rank 1: the H100, stated
# and run directories holding asm and same as their one trace.
# Expected, by construction:
#   trace --json: asm ranks[0].device_assumed true, device "NVIDIA H200",
#     one rank-device-assumed warning naming the file and "NVIDIA H200";
#     same, ev, lr: false and no such warning (lr's device "NVIDIA H100
#     80GB HBM3"); trace text of asm: the warning;
#   diff --json asm same: context.baseline.device_assumed true,
#     candidate false, the warning; diff text: the device row reads
#     "NVIDIA H200 (assumed)";
#   ab --json and text of the run dirs same vs asm: one
#     rank-device-assumed warning naming asm's trace; report --format md
#     and html: the warning;
#   diagnose --json of asm's run: the warning.
# Before 2026-12-05 only ab's metadata reads labelled the guess, and only
# when the listed names differed (never for a trace ab read whole): 13 of
# the 16 checks wrong (every "assumed" missed, trace --json without a
# device_assumed key; the 3 checks for no warning right).
set -u
cd "$(dirname "$0")/../.."
TS=${TS:-build/trainscope}
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
ls examples/run-h200/traces/*.json.gz >/dev/null 2>&1 || { echo "skip: no examples/run-h200"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

python3 - "$tmp" examples/run-h200 <<'PY' || exit 1
import copy, glob, gzip, json, os, shutil, sys
d, src = sys.argv[1:]
[orig] = glob.glob(f"{src}/traces/*.json.gz")
b = json.load(gzip.open(orig))
g0 = b["deviceProperties"][0]
assert len(b["deviceProperties"]) == 1 and g0["name"] == "NVIDIA H200" and g0["id"] == 0
h100 = dict(g0, id=1, name="NVIDIA H100 80GB HBM3", totalGlobalMem=85520809984)
def mk(name, second, strip, local=None):
    t = copy.deepcopy(b)
    t["deviceProperties"] = [g0, second]
    t["distributedInfo"] = {"backend": "nccl", "rank": 0, "world_size": 1}
    if local is not None:
        t["distributedInfo"]["local_rank"] = local
    n = 0
    for e in t["traceEvents"]:
        if strip and "device" in e.get("args", {}):
            del e["args"]["device"]
            n += 1
    assert not strip or n == 1072 + 96 + 16
    json.dump(t, open(f"{d}/{name}.json", "w"))
mk("asm", h100, True)
mk("same", dict(g0, id=1), True)
mk("ev", h100, False)
mk("lr", h100, True, 1)
for r in ("asm", "same"):
    shutil.copytree(src, f"{d}/run_{r}", ignore=shutil.ignore_patterns("traces"))
    os.mkdir(f"{d}/run_{r}/traces")
    shutil.copy(f"{d}/{r}.json", f"{d}/run_{r}/traces/rank0.pt.trace.json")
PY

bad=0 n=0
ok() { # label, status
	n=$((n + 1))
	if [ "$2" = 0 ]; then echo "$1: ok"; else echo "$1: FAIL"; bad=$((bad + 1)); fi
}
warned() { # JSON on stdin; FILE (the warning's file), WANT (1: one warning naming it; 0: none)
	python3 -c '
import json, sys
f, want = sys.argv[1], int(sys.argv[2])
d = json.load(sys.stdin)
w = [x for x in d["warnings"] if x["code"] == "rank-device-assumed"]
ok = len(w) == 0 if not want else \
     len(w) == 1 and w[0]["file"] == f and "NVIDIA H200" in w[0]["message"] and "assumed" in w[0]["message"]
sys.exit(0 if ok else 1)' "$1" "$2"
}
trace_case() { # NAME ASSUMED DEVICE
	"$TS" trace --json "$tmp/$1.json" 2>/dev/null >"$tmp/$1.out"
	python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["ranks"][0]
sys.exit(0 if r.get("device_assumed") is bool(int(sys.argv[2])) and r["device"] == sys.argv[3] else 1)' \
		"$tmp/$1.out" "$2" "$3" && warned "$tmp/$1.json" "$2" <"$tmp/$1.out"
	ok "trace --json $1" $?
}
trace_case asm 1 "NVIDIA H200"
trace_case same 0 "NVIDIA H200"
trace_case ev 0 "NVIDIA H200"
trace_case lr 0 "NVIDIA H100 80GB HBM3"
"$TS" trace "$tmp/asm.json" 2>&1 | grep -q "^warning: $tmp/asm.json: lists 2 GPUs that differ .*NVIDIA H200.* assumed"
ok "trace text asm" $?
"$TS" trace "$tmp/same.json" 2>&1 | grep -q "assumed"
[ $? = 1 ]; ok "trace text same" $?
"$TS" diff "$tmp/asm.json" "$tmp/same.json" --json 2>/dev/null >"$tmp/diff.out"
python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))["context"]
sys.exit(0 if c["baseline"].get("device_assumed") is True and c["candidate"].get("device_assumed") is False else 1)' "$tmp/diff.out"
ok "diff --json context" $?
warned "$tmp/asm.json" 1 <"$tmp/diff.out"; ok "diff --json warning" $?
"$TS" diff "$tmp/same.json" "$tmp/ev.json" --json 2>/dev/null | warned x 0; ok "diff --json no guess" $?
"$TS" diff "$tmp/asm.json" "$tmp/same.json" 2>&1 | grep -Eq "^  device +NVIDIA H200 \(assumed\) +NVIDIA H200 "
ok "diff text row" $?
"$TS" ab "$tmp/run_same" "$tmp/run_asm" --json 2>/dev/null | warned "$tmp/run_asm/traces/rank0.pt.trace.json" 1
ok "ab --json" $?
"$TS" ab "$tmp/run_same" "$tmp/run_asm" 2>&1 | grep -q "^warning: $tmp/run_asm/traces/rank0.pt.trace.json: lists 2 GPUs that differ"
ok "ab text" $?
"$TS" ab "$tmp/run_same" "$tmp/run_same" --json 2>/dev/null | warned x 0; ok "ab --json no guess" $?
for fmt in md html; do
	"$TS" report --baseline "$tmp/run_same" --candidate "$tmp/run_asm" --format $fmt 2>/dev/null |
		grep -q "rank0.pt.trace.json: lists 2 GPUs that differ"
	ok "report --format $fmt" $?
done
"$TS" diagnose --json "$tmp/run_asm" 2>/dev/null | python3 -c '
import json, sys
w = [x for x in json.load(sys.stdin)["warnings"] if x["code"] == "rank-device-assumed"]
sys.exit(0 if len(w) == 1 and "NVIDIA H200" in w[0]["message"] else 1)'
ok "diagnose --json" $?
echo "rank-device-assumed: $bad of $n checks wrong"
[ $bad = 0 ]
