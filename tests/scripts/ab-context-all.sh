#!/usr/bin/env bash
# `ab` reads where each side ran from EVERY profiler trace and Nsight
# Systems export of EVERY run of the side, warns context-differs when the
# sides differ and context-mixed when one side's own traces disagree, and
# names the runtime's contract key by the vendor. Runs generated from
# examples/run-h200 (one Kineto trace: device "NVIDIA H200", runtime and
# driver 13000; given distributedInfo {nccl, rank 0, nccl_version 2.21.5})
# and from ../shared/data/nsys/mfu_2gpu_before.sqlite (2 GPUs, no
# TARGET_INFO_GPU, CudaDriverVersion 13000), their metadata edited:
#   h200, h200b, h200c, h200d  the trace as it is (copies)
#   h100        deviceProperties[0].name "NVIDIA H100 80GB HBM3"
#   drv128      cuda_driver_version 12080
#   nccl226     nccl_version 2.26.2
#   ranks_same, ranks_same2  h200 plus a rank-1 trace, metadata the same
#   ranks_gpu   h200 plus a rank-3 trace on "NVIDIA H100 80GB HBM3"
#   ranks_vereq h200 plus a rank-1 trace with nccl_version 2.21.05 (the
#               same version as 2.21.5)
#   ranks_nodev h200 plus a rank-1 trace recording no device, runtime or
#               driver (nothing recorded is no difference)
#   h100ranks   h100 plus a rank-1 trace on the H100 too
#   nsys13, nsys13b  the export (no Kineto trace), CudaDriverVersion 13000
#   nsys12      the export with CudaDriverVersion 12080
#   nsys_h100   the export with TARGET_INFO_GPU: GPUs 0 and 1 "NVIDIA H100
#               80GB HBM3"
#   nsys_mix    the same, GPU 1 "NVIDIA H200"
#   rocm64, rocm65  ROCm traces (cuda_* and cupti keys replaced by
#               hip_runtime_version/hip_driver_version, device "AMD Instinct
#               MI300X"), runtime 60443483 / 60500000, driver 60443483 both,
#               contracts torch.hip 6.4 / 6.5 (their one difference)
#   unreadable  h200 plus a rank-1 trace whose event list breaks ("} x ]")
#   musa40, musa41  MUSA traces (musa_runtime_version 40000 / 40100,
#               driver 40000, device "MTT S4000"), contracts torch.musa
#               4.0 / 4.1
# Expected, by construction:
#   h200 vs ranks_gpu: context-mixed for the candidate, device (NVIDIA H200
#     in its rank-0 trace vs NVIDIA H100 80GB HBM3 in rank3), no
#     context-differs (the sides' first traces agree);
#   h200,drv128 vs h200b,h200c: baseline mixed in driver version (13000 vs
#     12080);
#   h200,h200b vs h200c,nccl226: candidate mixed in NCCL version;
#   h200,h200b vs h200c,h100: candidate mixed in device;
#   ranks_same vs ranks_same2, h200 vs ranks_vereq, h200 vs ranks_nodev,
#     h200,h200b vs h200c,h200d, nsys13 vs nsys13b: no warning;
#   ranks_same vs h100ranks: context-differs device, nothing mixed;
#   nsys13 vs nsys12: context-differs driver version (13000 vs 12080);
#   h200 vs nsys_h100: context-differs device (NVIDIA H200 vs NVIDIA H100
#     80GB HBM3), the export's driver 13000 being the trace's;
#   nsys_h100 vs nsys_mix: candidate mixed in device (GPU 0 vs GPU 1);
#   rocm64 vs rocm65: "PyTorch's HIP version (6.4 vs 6.5)" said once (the
#     trace's runtime is torch.hip's fact for ROCm, not torch.cuda's): no
#     "runtime version (" beside it; with --variable torch.hip no warning;
#   musa40 vs musa41: "torch_musa's MUSA version (4.0 vs 4.1)" once; with
#     --variable torch.musa no warning;
#   h200 vs unreadable: trace-context-skipped names the rank-1 trace (JSON
#     and text).
# Before 2026-12-05 ab read the lowest-rank trace of the first run of each
# side only, no nsys export, and keyed every runtime as torch.cuda: 14 of
# the 21 cases wrong (10 warnings missed: 4 mixed sides, 3 nsys cases, the
# text and report outputs; 4 false: the ROCm and MUSA runtime said twice,
# and warned though declared the variable); after, none. The unreadable
# trace (2 cases) was left out in silence until trace-context-skipped.
set -u
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
NSYS=$DATA/nsys/mfu_2gpu_before.sqlite
[ -f "$NSYS" ] || { echo "no $NSYS"; exit 77; }

python3 - "$tmp" examples/run-h200 "$NSYS" <<'PY' || exit 1
import glob, gzip, json, os, shutil, sqlite3, sys
d, src, nsys = sys.argv[1:]
H100 = "NVIDIA H100 80GB HBM3"
[orig] = glob.glob(f"{src}/traces/*.json.gz")
base = json.load(gzip.open(orig))
base["distributedInfo"] = {"backend": "nccl", "rank": 0, "world_size": 1,
                           "nccl_version": "2.21.5"}
def write(path, edit, rank=0):
    t = json.loads(json.dumps(base))
    t["distributedInfo"]["rank"] = rank
    edit(t)
    with gzip.open(path, "wt") as f:
        json.dump(t, f)
def run(name, edit=lambda t: None, contract=None):
    shutil.copytree(src, f"{d}/{name}", ignore=shutil.ignore_patterns("traces"))
    os.mkdir(f"{d}/{name}/traces")
    write(f"{d}/{name}/traces/{os.path.basename(orig)}", edit)
    if contract:
        json.dump({"schema": "trainscope.contract/1",
                   "environment": dict({"gpu.count": "1"}, **contract),
                   "workload": {"model": "example"}},
                  open(f"{d}/{name}/contract.json", "w"))
def rank(name, r, edit=lambda t: None):
    write(f"{d}/{name}/traces/rank{r}.pt.trace.json.gz", edit, r)
def dev(n):
    def f(t):
        t["deviceProperties"][0]["name"] = n
    return f
def key(k, v):
    def f(t):
        t[k] = v
    return f
def nccl(v):
    def f(t):
        t["distributedInfo"]["nccl_version"] = v
    return f
def nodev(t):
    for k in ("deviceProperties", "cuda_runtime_version", "cuda_driver_version"):
        t.pop(k)
def vendor(prefix, device, runtime, driver):
    def f(t):
        for k in ("cuda_runtime_version", "cuda_driver_version", "cupti_version"):
            t.pop(k)
        t[prefix + "_runtime_version"] = runtime
        t[prefix + "_driver_version"] = driver
        t["deviceProperties"][0]["name"] = device
    return f
for n in ("h200", "h200b", "h200c", "h200d"):
    run(n)
run("h100", dev(H100))
run("drv128", key("cuda_driver_version", 12080))
run("nccl226", nccl("2.26.2"))
for n in ("ranks_same", "ranks_same2"):
    run(n)
    rank(n, 1)
run("ranks_gpu")
rank("ranks_gpu", 3, dev(H100))
run("ranks_vereq")
rank("ranks_vereq", 1, nccl("2.21.05"))
run("ranks_nodev")
rank("ranks_nodev", 1, nodev)
run("h100ranks", dev(H100))
rank("h100ranks", 1, dev(H100))
run("rocm64", vendor("hip", "AMD Instinct MI300X", 60443483, 60443483),
    {"gpu.name": "AMD Instinct MI300X", "torch.hip": "6.4"})
run("rocm65", vendor("hip", "AMD Instinct MI300X", 60500000, 60443483),
    {"gpu.name": "AMD Instinct MI300X", "torch.hip": "6.5"})
run("musa40", vendor("musa", "MTT S4000", 40000, 40000),
    {"gpu.name": "MTT S4000", "torch.musa": "4.0"})
run("musa41", vendor("musa", "MTT S4000", 40100, 40000),
    {"gpu.name": "MTT S4000", "torch.musa": "4.1"})
# nsys runs: the steps of run-h200, the export instead of the trace
def nrun(name, driver="13000", gpus=None):
    shutil.copytree(src, f"{d}/{name}", ignore=shutil.ignore_patterns("traces"))
    p = f"{d}/{name}/profile.sqlite"
    shutil.copy(nsys, p)
    db = sqlite3.connect(p)
    db.execute("UPDATE TARGET_INFO_SYSTEM_ENV SET value = ? WHERE name = 'CudaDriverVersion'",
               (driver,))
    if gpus:
        db.execute("CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT, cuDevice INTEGER)")
        for i, g in enumerate(gpus):
            db.execute("INSERT INTO TARGET_INFO_GPU VALUES (?, ?, ?)", (i, g, i))
    db.commit()
    db.close()
# a rank trace whose event list breaks (not readable, metadata included)
run("unreadable")
with open(f"{d}/unreadable/traces/rank1.pt.trace.json", "w") as f:
    f.write('{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "%s"}], '
            '"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, '
            '"tid": 7, "ts": 2, "dur": 1} x ]}' % H100)
nrun("nsys13")
nrun("nsys13b")
nrun("nsys12", "12080")
nrun("nsys_h100", gpus=[H100, H100])
nrun("nsys_mix", gpus=[H100, "NVIDIA H200"])
PY

# check NAME A B DIFFERS MIXED_BASE MIXED_CAND [FORBID [ab options...]]:
# one context-differs warning containing DIFFERS (none when ""), one
# context-mixed warning of the baseline containing MIXED_BASE and one of
# the candidate containing MIXED_CAND (none when ""), and no warning
# containing FORBID. Prints per case the warnings missed (one wanted and
# not given) and false (one given that is not wanted, or one naming FORBID).
check() {
	local name=$1 a=$2 b=$3 want=$4 mb=$5 mc=$6 forbid=${7:-}
	shift 6
	[ $# -gt 0 ] && shift
	local A B
	A=$(echo "$a" | sed "s#\([^,]*\)#$tmp/\1#g")
	B=$(echo "$b" | sed "s#\([^,]*\)#$tmp/\1#g")
	"$TS" ab "$A" "$B" --json "$@" >"$tmp/$name.json" 2>/dev/null
	python3 - "$tmp/$name.json" "$name" "$want" "$mb" "$mc" "$forbid" "$tmp/" <<'PY'
import json, sys
path, name, want, mb, mc, forbid, tmp = sys.argv[1:]
d = json.load(open(path))
msgs = [(w["code"], w["message"].replace(tmp, "")) for w in d["warnings"]]
differs = [m for c, m in msgs if c == "context-differs"]
mixed = [m for c, m in msgs if c == "context-mixed"]
missed = false = 0
def one(found, want, what):
    global missed, false
    if want and not any(want in m for m in found):
        missed += 1
    if len(found) > (1 if want else 0):
        false += 1
one(differs, want, "context-differs")
one([m for m in mixed if "baseline's" in m], mb, "baseline")
one([m for m in mixed if "candidate's" in m], mc, "candidate")
if forbid and any(forbid in m for c, m in msgs if c.startswith("context-")):
    false += 1
ok = not missed and not false
print(f"{name}: {'ok' if ok else 'FAIL'} missed {missed} false {false}: "
      f"context-differs {differs} context-mixed {mixed}")
PY
}

H100="NVIDIA H100 80GB HBM3"
{
check rank-gpu h200 ranks_gpu "" "" "device (NVIDIA H200 in ranks_gpu/traces/rank0.1795977920133627053.pt.trace.json.gz vs $H100 in ranks_gpu/traces/rank3.pt.trace.json.gz)"
check repeat-driver h200,drv128 h200b,h200c "" "driver version (13000 in h200/" ""
check repeat-nccl h200,h200b h200c,nccl226 "" "" "NCCL version (2.21.5 in h200c/"
check second-run-device h200,h200b h200c,h100 "" "" "device (NVIDIA H200 in h200c/"
check ranks-consistent ranks_same ranks_same2 "" "" ""
check ranks-same-version h200 ranks_vereq "" "" ""
check ranks-unrecorded h200 ranks_nodev "" "" ""
check repeats-consistent h200,h200b h200c,h200d "" "" ""
check ranks-across ranks_same h100ranks "differ in device (NVIDIA H200 vs $H100): " "" ""
check nsys-driver nsys13 nsys12 "differ in driver version (13000 vs 12080): " "" ""
check nsys-same nsys13 nsys13b "" "" ""
check nsys-vs-kineto h200 nsys_h100 "differ in device (NVIDIA H200 vs $H100): " "" ""
check nsys-mixed nsys_h100 nsys_mix "" "" "device ($H100 in nsys_mix/profile.sqlite (GPU 0) vs NVIDIA H200 in nsys_mix/profile.sqlite (GPU 1))"
check rocm-runtime rocm64 rocm65 "differ in PyTorch's HIP version (6.4 vs 6.5)" "" "" "runtime version ("
check rocm-declared rocm64 rocm65 "" "" "" "" --variable torch.hip
check musa-runtime musa40 musa41 "differ in torch_musa's MUSA version (4.0 vs 4.1)" "" "" "runtime version ("
check musa-declared musa40 musa41 "" "" "" "" --variable torch.musa
check cuda-same-key h200 h200b "" "" ""
} | tee "$tmp/out"
# a trace that cannot be read is named (trace-context-skipped), in the
# JSON and the text, not left out in silence
{
"$TS" ab "$tmp/h200" "$tmp/unreadable" --json 2>/dev/null | python3 -c '
import json, sys
w = [x["message"] for x in json.load(sys.stdin)["warnings"] if x["code"] == "trace-context-skipped"]
ok = len(w) == 1 and "1 trace of the sides could not be read" in w[0] and "unreadable/traces/rank1.pt.trace.json: " in w[0]
print("unreadable: %s" % ("ok" if ok else "FAIL missed 1 false 0: %r" % w))'
"$TS" ab "$tmp/h200" "$tmp/unreadable" 2>&1 | grep -q "warning: 1 trace of the sides could not be read for where they ran" &&
	echo "unreadable text: ok" || echo "unreadable text: FAIL missed 1 false 0"
} | tee -a "$tmp/out"
# the warning reaches the text output and the report's A/B section
{
"$TS" ab "$tmp/h200" "$tmp/ranks_gpu" 2>&1 | grep -q "warning: the candidate's traces differ among themselves in device" &&
	echo "text: ok" || echo "text: FAIL missed 1 false 0: no context-mixed in the text output"
for fmt in md html; do
	"$TS" report --baseline "$tmp/h200" --candidate "$tmp/ranks_gpu" --format $fmt 2>/dev/null |
		grep -q "candidate&#39;s traces differ among themselves in device (NVIDIA H200 in" &&
		echo "report --format $fmt: ok" ||
		echo "report --format $fmt: FAIL missed 1 false 0: no context-mixed"
done
} | tee -a "$tmp/out"
python3 - "$tmp/out" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
m = sum(int(x) for x in re.findall(r"missed (\d+)", "\n".join(lines)))
f = sum(int(x) for x in re.findall(r"false (\d+)", "\n".join(lines)))
bad = sum("FAIL" in l for l in lines)
print(f"ab-context-all: {bad} of {len(lines)} cases wrong ({m} warnings missed, {f} false)")
sys.exit(1 if bad else 0)
PY
