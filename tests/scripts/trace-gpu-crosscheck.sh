#!/usr/bin/env bash
# Independent cross-check of the GPU window figures: a separate Python
# implementation (exact Decimal timestamps, its own interval unions) computes
# busy, compute, comm, exposed comm, memcpy and exposed memcpy of real GPU
# traces from the shared data (CUDA, ROCm, NCCL, multi-stream), and they must
# equal trainscope's --json to the nanosecond.
set -u
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
T=$DATA/traces
[ -d "$T/hta" ] || { echo "no $T/hta"; exit 77; }
command -v python3 >/dev/null || { echo "python3 not found"; exit 77; }
set -- hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz \
	hta/negative_queue_length_values_check/rank0.json.gz \
	hta/trace_filter/sampled_rank-1.json.gz \
	tracelens/tests/traces/mi300/resnet_act_checkpoint.json.gz \
	tracelens/tests/traces/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz
i=0
for f in "$@"; do
	"$TS" trace -q --json "$T/$f" >"$tmp/$i.json" || { echo "$f: exit $?"; exit 1; }
	i=$((i + 1))
done
python3 - "$T" "$tmp" "$@" <<'PY'
import gzip, json, re, sys
from decimal import Decimal
T, tmp, files = sys.argv[1], sys.argv[2], sys.argv[3:]
COMM = re.compile(r"nccl|rccl|mccl|hccl|gloo|cross_device_reduce|all_?reduce|all_?gather|reduce_?scatter|all_?to_?all|sendrecv", re.I)
GPU = {"kernel", "Kernel", "gpu_memcpy", "Memcpy", "gpu_memset", "Memset", "mtia_ccp_events"}
def ns(x):
    return int((Decimal(str(x)) * 1000).to_integral_value())
def union(iv):
    out = []
    for s, e in sorted(iv):
        if e <= s:
            continue
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out
def length(u):
    return sum(e - s for s, e in u)
def sub(a, b):
    out, j = [], 0
    for s, e in a:
        while j < len(b) and b[j][1] <= s:
            j += 1
        k = j
        while k < len(b) and b[k][0] < e:
            if b[k][0] > s:
                out.append([s, b[k][0]])
            s = max(s, b[k][1])
            if s >= e:
                break
            k += 1
        if s < e:
            out.append([s, e])
    return out
bad = []
for i, f in enumerate(files):
    d = json.load(gzip.open(T + "/" + f), parse_float=Decimal)
    busy, comp, comm, mcpy = [], [], [], []
    for e in d["traceEvents"]:
        if e.get("ph") != "X" or e.get("cat") not in GPU or "dur" not in e or "ts" not in e:
            continue
        s = ns(e["ts"]); t = s + ns(e["dur"])
        if t < s:
            continue
        busy.append((s, t))
        name = e.get("name", "")
        cat = e["cat"]
        if cat in ("gpu_memcpy", "Memcpy") or re.match(r"(?i)memcpy|memtransfer", name):
            mcpy.append((s, t))
        elif cat in ("gpu_memset", "Memset") or re.match(r"(?i)memset", name):
            pass
        elif COMM.search(name):
            comm.append((s, t))
        else:
            comp.append((s, t))
    busy, comp, comm, mcpy = union(busy), union(comp), union(comm), union(mcpy)
    want = {"busy_us": length(busy), "compute_us": length(comp), "comm_us": length(comm),
            "exposed_comm_us": length(sub(comm, comp)), "memcpy_us": length(mcpy),
            "exposed_memcpy_us": length(sub(sub(mcpy, comp), comm))}
    got = json.load(open("%s/%d.json" % (tmp, i)))["ranks"][0]
    for k, v in want.items():
        g = int(round(got[k] * 1000))
        if g != v:
            bad.append("%s: %s = %d ns, independent %d ns" % (f, k, g, v))
for b in bad:
    print("FAIL", b)
sys.exit(1 if bad else 0)
PY
