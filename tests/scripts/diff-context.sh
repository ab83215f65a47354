#!/usr/bin/env bash
# A diff whose two sides ran in different environments says so. Copies of
# the H200 example trace (deviceProperties NVIDIA H200, CUDA driver and
# runtime 13000, CUPTI 130001, no distributedInfo) and of the shared nsys
# export mfu_2gpu_before (driver 13000), with edited metadata:
#   base.json   the trace, with distributedInfo nccl, world size 2
#   env.json    the same with GPU "NVIDIA H100 80GB HBM3", driver 12080,
#               world size 8 and no cuda_runtime_version
#   same.json   base.json with another traceName, trace_id,
#               baseTimeNanoseconds, host_name and CPU pid (475 -> 98765):
#               fields expected to differ between two runs
#   unknown.json base.json without cuda_driver_version and
#               cuda_runtime_version (the writer did not record them)
#   us.json     base.json with every ts and dur rounded to whole us (an
#               older writer's clock resolution)
#   drv.sqlite  mfu_2gpu_before with CudaDriverVersion 12040
# Expected, by construction:
#   - base vs env: a context-differs warning naming device (NVIDIA H200 vs
#     NVIDIA H100 80GB HBM3), world size (2 vs 8) and driver version
#     (13000 vs 12080) in the text and JSON; --json context.differs
#     ["device", "world_size", "driver_version"] (the runtime version only
#     on the baseline is no difference); the context table marks those
#     three rows "differs" and the runtime row "only the baseline records
#     it"; exit 0 (--allow-different-hardware: 0 as well);
#   - base vs same, base vs unknown: no context-differs, differs [];
#     the driver row of base vs unknown says "only the baseline records it";
#   - base vs us: differs ["clock_resolution_ns"] (1 ns vs 1000 ns);
#   - va vs vb: the same versions written two ways (driver 535.104.05 vs
#     535.104.5, runtime 12.4 vs 12.4.0, NCCL 2.21.5+cuda12.4 vs 2.21.5):
#     differs [], no warning, the rows show the values as written; vb vs
#     vc (NCCL 2.21.5 vs 2.21.6): differs ["nccl_version"];
#   - drv.sqlite vs mfu_2gpu_before: differs ["driver_version"], the
#     warning names 12040 vs 13000; the export against the Kineto trace:
#     differs holds trace_format and profiler;
#   - report RUN --baseline BASE on run directories holding base.json and
#     env.json: the warning is in the Markdown and HTML reports' Warnings
#     with its code.
set -u
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
python3 -c 'import sqlite3' 2>/dev/null || { echo "skip: python3 without sqlite3"; exit 77; }
tr=$(ls examples/run-h200/traces/*.json.gz 2>/dev/null | head -1)
[ -n "$tr" ] || { echo "skip: no examples/run-h200 trace"; exit 77; }
nsys="$DATA/nsys/mfu_2gpu_before.sqlite"

python3 - "$tr" "$tmp" <<'PY' || exit 1
import copy, gzip, json, sys
src, out = sys.argv[1], sys.argv[2]
d = json.load(gzip.open(src))
assert d["deviceProperties"][0]["name"] == "NVIDIA H200" and d["cuda_driver_version"] == 13000
assert d["cuda_runtime_version"] == 13000 and "distributedInfo" not in d
def write(name, t):
    json.dump(t, open("%s/%s" % (out, name), "w"))
base = copy.deepcopy(d)
base["distributedInfo"] = {"backend": "nccl", "rank": 0, "world_size": 2}
write("base.json", base)
env = copy.deepcopy(base)
env["deviceProperties"][0]["name"] = "NVIDIA H100 80GB HBM3"
env["cuda_driver_version"] = 12080
env["distributedInfo"]["world_size"] = 8
del env["cuda_runtime_version"]
write("env.json", env)
same = copy.deepcopy(base)
same["traceName"] = "/tmp/another-run.json"
same["trace_id"] = "0123456789ABCDEF0123456789ABCDEF"
same["baseTimeNanoseconds"] = base["baseTimeNanoseconds"] + 86400 * 10**9
same["host_name"] = "another-host"
for e in same["traceEvents"]:
    if e.get("pid") == 475:
        e["pid"] = 98765
write("same.json", same)
unk = copy.deepcopy(base)
del unk["cuda_driver_version"], unk["cuda_runtime_version"]
write("unknown.json", unk)
us = copy.deepcopy(base)
for e in us["traceEvents"]:
    for k in ("ts", "dur"):
        if isinstance(e.get(k), (int, float)):
            e[k] = int(round(e[k]))
write("us.json", us)
# versions written two ways (the same version) and one real change
va = copy.deepcopy(base)
va["cuda_driver_version"] = "535.104.05"
va["cuda_runtime_version"] = "12.4"
va["distributedInfo"]["nccl_version"] = "2.21.5+cuda12.4"
write("va.json", va)
vb = copy.deepcopy(va)
vb["cuda_driver_version"] = "535.104.5"
vb["cuda_runtime_version"] = "12.4.0"
vb["distributedInfo"]["nccl_version"] = "2.21.5"
write("vb.json", vb)
vc = copy.deepcopy(vb)
vc["distributedInfo"]["nccl_version"] = "2.21.6"
write("vc.json", vc)
PY
if [ -f "$nsys" ]; then
	cp "$nsys" "$tmp/drv.sqlite" && chmod u+w "$tmp/drv.sqlite"
	python3 - "$tmp/drv.sqlite" <<'PY' || exit 1
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
assert c.execute("SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'CudaDriverVersion'").fetchone()[0] == "13000"
c.execute("UPDATE TARGET_INFO_SYSTEM_ENV SET value = '12040' WHERE name = 'CudaDriverVersion'")
c.commit()
PY
fi

# check_json FILE WANT_DIFFERS [WARNING_SUBSTRING]: context.differs is
# WANT_DIFFERS (a Python list), and a context-differs warning holds the
# substring (none when it is empty)
check_json() {
	python3 - "$@" <<'PY'
import json, sys
path, want, sub = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else ""
d = json.load(open(path))
got = d["context"].get("differs")
msgs = [w["message"] for w in d["warnings"] if w["code"] == "context-differs"]
ok = got == want and (msgs == [] if not sub else len(msgs) == 1 and sub in msgs[0])
print("%s: differs %s, context-differs %s: %s" % (path.rsplit("/", 1)[1], got, msgs, "ok" if ok else
      "FAIL, want %s and %s" % (want, repr(sub) if sub else "no warning")))
sys.exit(0 if ok else 1)
PY
}

# --- a GPU, driver and world size change
"$TS" diff "$tmp/base.json" "$tmp/env.json" >"$tmp/env.txt" 2>&1
rc=$?
[ $rc = 0 ] || bad "diff base env: exit $rc, not 0"
"$TS" diff --allow-different-hardware "$tmp/base.json" "$tmp/env.json" >/dev/null 2>&1
rc=$?
[ $rc = 0 ] || bad "diff --allow-different-hardware base env: exit $rc, not 0"
msg="the two sides differ in device (NVIDIA H200 vs NVIDIA H100 80GB HBM3), world size (2 vs 8) and driver version (13000 vs 12080): "
grep -qF "warning: $msg" "$tmp/env.txt" || bad "diff text: no context-differs warning naming the three fields"
for row in "device +NVIDIA H200 +NVIDIA H100 80GB HBM3 +differs" "world size +2 +8 +differs" \
	"driver version +13000 +12080 +differs" "runtime version +13000 +- +only the baseline records it" \
	"backend +nccl +nccl *" "clock resolution +1 ns +1 ns *" "rank +0 +0 *"; do
	grep -qE "^  $row\$" "$tmp/env.txt" || bad "diff text: no context row /$row/"
done
"$TS" diff --json "$tmp/base.json" "$tmp/env.json" >"$tmp/env.out" 2>/dev/null
check_json "$tmp/env.out" '["device", "world_size", "driver_version"]' "$msg" || fail=1

# --- what differs between any two runs is no environment change
"$TS" diff --json "$tmp/base.json" "$tmp/same.json" >"$tmp/same.out" 2>/dev/null || bad "diff base same: exit $?"
check_json "$tmp/same.out" '[]' || fail=1
"$TS" diff "$tmp/base.json" "$tmp/same.json" 2>&1 | grep -q "differs" && bad "diff base same: a row marked differs"

# --- a field one side does not record is no difference
"$TS" diff --json "$tmp/base.json" "$tmp/unknown.json" >"$tmp/unk.out" 2>/dev/null || bad "diff base unknown: exit $?"
check_json "$tmp/unk.out" '[]' || fail=1
"$TS" diff "$tmp/base.json" "$tmp/unknown.json" 2>&1 |
	grep -qE "^  driver version +13000 +- +only the baseline records it$" ||
	bad "diff base unknown: the driver row does not say only the baseline records it"

# --- versions compare as versions: 535.104.05 = 535.104.5, 12.4 = 12.4.0,
# 2.21.5+cuda12.4 = 2.21.5 (a build label on one side only); 2.21.5 vs
# 2.21.6 is a change (before 2026-12-04 va vs vb said all three differ)
"$TS" diff --json "$tmp/va.json" "$tmp/vb.json" >"$tmp/vab.out" 2>/dev/null || bad "diff va vb: exit $?"
check_json "$tmp/vab.out" '[]' || fail=1
"$TS" diff --json "$tmp/vb.json" "$tmp/vc.json" >"$tmp/vbc.out" 2>/dev/null || bad "diff vb vc: exit $?"
check_json "$tmp/vbc.out" '["nccl_version"]' "NCCL version (2.21.5 vs 2.21.6)" || fail=1
"$TS" diff "$tmp/va.json" "$tmp/vb.json" 2>&1 |
	grep -qE "^  driver version +535.104.05 +535.104.5 *$" ||
	bad "diff va vb: the driver row does not show both values as written, unmarked"

# --- clock resolution: ns against whole us
"$TS" diff --json "$tmp/base.json" "$tmp/us.json" >"$tmp/us.out" 2>/dev/null || bad "diff base us: exit $?"
check_json "$tmp/us.out" '["clock_resolution_ns"]' "clock resolution (1 ns vs 1 us)" || fail=1
python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))["context"]
got = (c["baseline"].get("clock_resolution_ns"), c["candidate"].get("clock_resolution_ns"))
print("clock_resolution_ns %s: %s" % (got, "ok" if got == (1, 1000) else "FAIL, want (1, 1000)"))
sys.exit(0 if got == (1, 1000) else 1)' "$tmp/us.out" || fail=1

# --- Nsight Systems exports: a driver change, and a change of profiler
if [ -f "$nsys" ]; then
	"$TS" diff --json "$tmp/drv.sqlite" "$nsys" >"$tmp/drv.out" 2>/dev/null || bad "diff drv.sqlite: exit $?"
	check_json "$tmp/drv.out" '["driver_version"]' "driver version (12040 vs 13000)" || fail=1
	"$TS" diff --json "$tmp/base.json" "$nsys" >"$tmp/kn.out" 2>/dev/null || bad "diff kineto nsys: exit $?"
	check_json "$tmp/kn.out" '["trace_format", "profiler"]' "trace format (kineto vs nsys-sqlite)" || fail=1
fi

# --- the report's diff section: the warning travels with its code
mkdir -p "$tmp/rb/traces" "$tmp/rc/traces"
cp examples/run-h200/metrics.jsonl examples/run-h200/train.log "$tmp/rb/"
cp examples/run-h200/metrics.jsonl examples/run-h200/train.log "$tmp/rc/"
cp "$tmp/base.json" "$tmp/rb/traces/rank0.1.pt.trace.json"
cp "$tmp/env.json" "$tmp/rc/traces/rank0.1.pt.trace.json"
"$TS" report "$tmp/rc" --baseline "$tmp/rb" --format md >"$tmp/r.md" 2>/dev/null || bad "report md: exit $?"
sed -n '/^## Warnings/,/^## /p' "$tmp/r.md" >"$tmp/r.warn"
grep -qF "$msg" "$tmp/r.warn" && grep -q "^  context-differs$" "$tmp/r.warn" ||
	bad "report md: no context-differs warning with its code"
"$TS" report "$tmp/rc" --baseline "$tmp/rb" -o "$tmp/r.html" 2>/dev/null || bad "report html: exit $?"
grep -qF "world size (2 vs 8)" "$tmp/r.html" && grep -qF "context-differs" "$tmp/r.html" ||
	bad "report html: no context-differs warning"

finish
