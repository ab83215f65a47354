#!/usr/bin/env bash
# Where an Nsight Systems export's steps come from is said right. A copy of
# the shared mfu_2gpu_before export gets 5 NVTX ranges ProfilerStep#1..5
# (eventType 59, inline text) on the thread of the first runtime call of
# its first process, splitting that process's first-to-last kernel span
# into 5 equal parts. Expected:
#   - trace: that rank has 5 steps, and the nsys section says they are the
#     profiler's own ProfilerStep#N ranges (steps_from "profiler_step",
#     steps 5); before, it said "steps: none" while using them;
#   - --step-nvtx 'no_such_range': a step-nvtx-unmatched warning in the
#     text and JSON (before: silently ignored);
#   - diff of the two shared exports, which have no TARGET_INFO_GPU table:
#     a verdict (not refused_different_hardware) and one device-unknown
#     warning saying the verdict assumes the same device;
#   - the diff's context names each side's profiler and CUDA driver as the
#     export records them: the copy's TARGET_INFO_SYSTEM_ENV says driver
#     12040 and its META_DATA_EXPORT product 2025.1.1.110, the shared
#     export 13000 and 2026.2.1.210 (before: driver "-", profiler "-").
set -u
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
python3 -c 'import sqlite3' 2>/dev/null || { echo "skip: python3 without sqlite3"; exit 77; }
[ -f "$DATA/nsys/mfu_2gpu_before.sqlite" ] || { echo "skip: no $DATA/nsys"; exit 77; }
cp "$DATA/nsys/mfu_2gpu_before.sqlite" "$tmp/steps.sqlite"
chmod u+w "$tmp/steps.sqlite"
python3 - "$tmp/steps.sqlite" <<'PY' || exit 1
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
tid, = c.execute("SELECT globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME ORDER BY start LIMIT 1").fetchone()
pid = tid >> 24
lo, hi = c.execute("SELECT min(k.start), max(k.end) FROM CUPTI_ACTIVITY_KIND_KERNEL k WHERE k.globalPid >> 24 = ?",
                   (pid,)).fetchone()
w = (hi - lo) // 5
for i in range(5):
    c.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES (?, ?, 59, ?, ?)",
              (lo + i * w, lo + (i + 1) * w, "ProfilerStep#%d" % (i + 1), tid))
c.execute("UPDATE TARGET_INFO_SYSTEM_ENV SET value = '12040' WHERE name = 'CudaDriverVersion'")
c.execute("UPDATE META_DATA_EXPORT SET value = '2025.1.1.110' WHERE name = 'EXPORT_PRODUCT_VERSION'")
c.commit()
PY
fail=0
"$TS" trace "$tmp/steps.sqlite" --json 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
# the marked process is one rank; the other has no steps
got = sorted((len(r["steps"]), x["steps_from"], x["steps"]) for r in d["ranks"]
             for f in d["nsys"] for x in f["ranks"] if x["rank"] == r["rank"])
want = [(0, "none", 0), (5, "profiler_step", 5)]
ok = got == want
print("trace: (steps, nsys steps_from, steps) per rank %s: %s" % (got, "ok" if ok else "FAIL, want %s" % want))
sys.exit(0 if ok else 1)' || fail=1
out=$("$TS" trace "$tmp/steps.sqlite" --step-nvtx no_such_range 2>/dev/null)
js=$("$TS" trace "$tmp/steps.sqlite" --step-nvtx no_such_range --json 2>/dev/null)
if grep -q "warning: .*--step-nvtx 'no_such_range' matches no NVTX range" <<<"$out" &&
   grep -q '"code": "step-nvtx-unmatched"' <<<"$js"; then
	echo "--step-nvtx no match: step-nvtx-unmatched in text and JSON: ok"
else
	echo "--step-nvtx no match: FAIL: no step-nvtx-unmatched warning"
	fail=1
fi
"$TS" diff "$DATA/nsys/mfu_2gpu_before.sqlite" "$DATA/nsys/mfu_2gpu_after.sqlite" --json 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
codes = [w["code"] for w in d["warnings"]]
v = d["verdict"] or d.get("verdict_reason")
ok = v != "refused_different_hardware" and codes.count("device-unknown") == 1 and "different-hardware" not in codes
print("diff of exports without a GPU model: verdict %s, warnings %s: %s" % (v, codes, "ok" if ok else "FAIL"))
sys.exit(0 if ok else 1)' || fail=1
DRV=$(python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
print(c.execute("SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = ?", ("CudaDriverVersion",)).fetchone()[0],
      c.execute("SELECT value FROM META_DATA_EXPORT WHERE name = ?", ("EXPORT_PRODUCT_VERSION",)).fetchone()[0])' \
	"$DATA/nsys/mfu_2gpu_after.sqlite")
"$TS" diff "$tmp/steps.sqlite" "$DATA/nsys/mfu_2gpu_after.sqlite" --json 2>/dev/null | python3 -c '
import json, sys
c = json.load(sys.stdin)["context"]
drv, prod = sys.argv[1].split()
got = [(c[s]["driver_version"], c[s]["profiler"]) for s in ("baseline", "candidate")]
want = [("12040", "Nsight Systems 2025.1.1.110"), (drv, "Nsight Systems " + prod)]
ok = got == want
print("diff context driver/profiler %s: %s" % (got, "ok" if ok else "FAIL, want %s" % want))
sys.exit(0 if ok else 1)' "$DRV" || fail=1
exit $fail
