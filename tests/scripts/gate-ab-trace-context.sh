#!/usr/bin/env bash
# `ab` reads where each side ran from its profiler traces, as `diff` does
# (the traces' deviceProperties name, cuda_runtime_version,
# cuda_driver_version, distributedInfo.nccl_version), and warns
# context-differs naming each field with both values. Run directories:
#   cpu       examples/run (CPU trace: device "cpu", vendor "cpu")
#   h200      examples/run-h200 (device "NVIDIA H200", runtime and driver
#             13000), its trace rewritten with distributedInfo
#             {backend nccl, rank 0, world_size 1, nccl_version 2.21.5}
#   h200b     h200 again (the same trace, a copy)
#   h100      h200 with deviceProperties[0].name "NVIDIA H100 80GB HBM3"
#   cu124     h200 with cuda_runtime_version and cuda_driver_version 12040
#   cu128     h200 with both 12080
#   nccl226   h200 with nccl_version 2.26.2
#   nccl2105  h200 with nccl_version 2.21.05 (the same version as 2.21.5)
#   k_h200, k_h100: h200 and h100 with a contract.json each, gpu.name as
#             their traces say (the contracts' one difference).
#   k_cu124, k_cu128: cu124 and cu128 with a contract.json each, gpu.name
#             NVIDIA H200 and torch.cuda 12.4 / 12.8 (no driver stated).
# Expected, by construction (a side that records nothing is no difference;
# versions compare as versions, core.h):
#   cpu vs h200: "device (cpu vs NVIDIA H200) and vendor (cpu vs cuda)";
#   h200 vs h100: "device (NVIDIA H200 vs NVIDIA H100 80GB HBM3)" only;
#   cu124 vs cu128: "runtime version (12040 vs 12080) and driver version
#     (12040 vs 12080)";
#   h200 vs nccl226: "NCCL version (2.21.5 vs 2.26.2)";
#   h200 vs h200b, h200 vs nccl2105: no context-differs;
#   h200 vs ranks (rank2 from h200, rank10 from h100): no context-differs,
#     the side's trace is its lowest rank's, not its first by path (its
#     rank 10 makes the side context-mixed: ab-context-all.sh);
#   k_h200 vs k_h100: "device" named once (the contract's words),
#     "device (NVIDIA H200 vs NVIDIA H100 80GB HBM3)"; with --variable
#     gpu.name (the change is declared): no context-differs;
#   k_cu124 vs k_cu128: the runtime is the contracts' torch.cuda, said
#     once in their words, then the trace's driver: "PyTorch's CUDA
#     version (12.4 vs 12.8) and driver version (12040 vs 12080)"; with
#     --variable torch.cuda: "driver version (12040 vs 12080)" alone;
#   the text output and the report's A/B section (Markdown and HTML) of
#     h200 vs h100 carry the warning.
# Before 2026-12-04 ab read no trace's context: every case that wants a
# warning had none.
set -u
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }

cp -r examples/run "$tmp/cpu" || exit 1
python3 - "$tmp" examples/run-h200 <<'PY' || exit 1
import glob, gzip, json, os, shutil, sys
d, src = sys.argv[1:]
def make(name, edit, contract=None):
    shutil.copytree(src, f"{d}/{name}")
    [tr] = glob.glob(f"{d}/{name}/traces/*.json.gz")
    t = json.load(gzip.open(tr))
    t["distributedInfo"] = {"backend": "nccl", "rank": 0, "world_size": 1,
                            "nccl_version": "2.21.5"}
    edit(t)
    with gzip.open(tr, "wt") as f:
        json.dump(t, f)
    if contract:
        json.dump({"schema": "trainscope.contract/1",
                   "environment": dict({"gpu.count": "1"}, **contract),
                   "workload": {"model": "example"}},
                  open(f"{d}/{name}/contract.json", "w"))
def dev(name):
    def f(t):
        t["deviceProperties"][0]["name"] = name
    return f
def cuda(v):
    def f(t):
        t["cuda_runtime_version"] = t["cuda_driver_version"] = v
    return f
def nccl(v):
    def f(t):
        t["distributedInfo"]["nccl_version"] = v
    return f
keep = lambda t: None
make("h200", keep)
make("h200b", keep)
make("h100", dev("NVIDIA H100 80GB HBM3"))
make("cu124", cuda(12040))
make("cu128", cuda(12080))
make("nccl226", nccl("2.26.2"))
make("nccl2105", nccl("2.21.05"))
make("k_h200", keep, {"gpu.name": "NVIDIA H200"})
make("k_h100", dev("NVIDIA H100 80GB HBM3"), {"gpu.name": "NVIDIA H100 80GB HBM3"})
make("k_cu124", cuda(12040), {"gpu.name": "NVIDIA H200", "torch.cuda": "12.4"})
make("k_cu128", cuda(12080), {"gpu.name": "NVIDIA H200", "torch.cuda": "12.8"})
# two ranks' traces: rank 2 ran on the H200, rank 10 on the H100; rank 10
# sorts first by path, but the lowest rank is the side's trace
shutil.copytree(f"{d}/h200", f"{d}/ranks")
[tr] = glob.glob(f"{d}/ranks/traces/*.json.gz")
os.rename(tr, f"{d}/ranks/traces/rank2.pt.trace.json.gz")
[tr] = glob.glob(f"{d}/h100/traces/*.json.gz")
shutil.copy(tr, f"{d}/ranks/traces/rank10.pt.trace.json.gz")
PY

# check NAME WANT_WARNING A B [ab options...]: exactly one context-differs
# warning whose message contains WANT (or none when WANT is ""), and
# "device (" at most once in it
check() {
	local name=$1 warn=$2 a=$3 b=$4
	shift 4
	"$TS" ab "$tmp/$a" "$tmp/$b" --json "$@" >"$tmp/$name.json" 2>/dev/null
	python3 - "$tmp/$name.json" "$warn" "$name" <<'PY' || fail=1
import json, sys
path, warn, name = sys.argv[1:]
d = json.load(open(path))
ctx = [w["message"] for w in d["warnings"] if w["code"] == "context-differs"]
ok = (len(ctx) == 1 and warn in ctx[0] and ctx[0].count("device (") <= 1) if warn else not ctx
print("%s: context-differs %s: %s" % (name, ctx, "ok" if ok else "FAIL, want %r" % warn))
sys.exit(0 if ok else 1)
PY
}
check cpu-h200 "the two sides differ in device (cpu vs NVIDIA H200) and vendor (cpu vs cuda): " cpu h200
check h200-h100 "the two sides differ in device (NVIDIA H200 vs NVIDIA H100 80GB HBM3): the step time" h200 h100
check cuda "the two sides differ in runtime version (12040 vs 12080) and driver version (12040 vs 12080): " cu124 cu128
check nccl "the two sides differ in NCCL version (2.21.5 vs 2.26.2): " h200 nccl226
check same "" h200 h200b
check lowest-rank "" h200 ranks
check nccl-same-version "" h200 nccl2105
check contract-and-trace "the two sides differ in device (NVIDIA H200 vs NVIDIA H100 80GB HBM3): " k_h200 k_h100
check declared "" k_h200 k_h100 --variable gpu.name
check contract-runtime "the two sides differ in PyTorch's CUDA version (12.4 vs 12.8) and driver version (12040 vs 12080): " k_cu124 k_cu128
check contract-runtime-declared "the two sides differ in driver version (12040 vs 12080): " k_cu124 k_cu128 --variable torch.cuda
"$TS" ab "$tmp/h200" "$tmp/h100" 2>&1 |
	grep -qF "warning: the two sides differ in device (NVIDIA H200 vs NVIDIA H100 80GB HBM3)" &&
	echo "h200-h100 text: ok" || bad "h200-h100: the text has no context-differs warning"
for fmt in md html; do
	"$TS" report --baseline "$tmp/h200" --candidate "$tmp/h100" --format $fmt 2>/dev/null |
		grep -q "the two sides differ in device (NVIDIA H200 vs NVIDIA H100 80GB HBM3)" &&
		echo "report --format $fmt: context-differs: ok" ||
		bad "report --format $fmt: no context-differs warning"
done
finish
