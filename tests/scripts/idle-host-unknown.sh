#!/usr/bin/env bash
# Host-bound GPU idle needs launch data: a gap is the host's up to the
# launch call of the activity that ends it. Without any GPU activity
# linked to a launch call (a Kineto trace without cuda_runtime events, an
# nsys export captured with -t nvtx,osrt or with CUPTI_ACTIVITY_KIND_RUNTIME
# dropped) it is unknown, not the trailing gap alone. Built here (us):
#   step ProfilerStep#1 [0, 10000]; kernels k1 [1000, 2000] and
#   k2 [5000, 6000]; with: cudaLaunchKernel calls at 900 and 4500
#   (correlation 1, 2); without: the same kernels, no calls.
# Expected, by hand: idle = [0,1000] + [2000,5000] + [6000,10000] = 8000;
#   with: host-bound [0,900] + [2000,4500] + [6000,10000] = 7400, other 600
#     (launch data exist: these numbers as before);
#   without: host-bound unknown (--json null, text "host-bound unknown",
#     the verdict's evidence and the report say "unknown"), other
#     8000 - 0 (data) = 8000, and the verdict no longer "host" (the
#     trailing 4000 us were 40 % of the window, over the 20 % threshold).
#   nsys: ../shared/data/nsys/mfu_2gpu_before.sqlite with its
#     CUPTI_ACTIVITY_KIND_RUNTIME table dropped: idle_host_bound_us null
#     on both ranks, the host wall's time_us and share_pct null.
# Before 2026-12-05: without launch data the trailing gap was counted
# host-bound (4000 us here, 1.1 ms on the export's rank 1), the verdict
# here "host"; 8 of the 9 checks wrong.
set -u
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
command -v python3 >/dev/null || { echo "python3 not found"; exit 77; }
python3 - "$tmp" "$DATA/nsys/mfu_2gpu_before.sqlite" <<'PY' || exit 1
import json, os, shutil, sqlite3, sys
tmp, nsys = sys.argv[1:]
def trace(launches):
    ev = [{"ph": "X", "cat": "cpu_op", "name": "ProfilerStep#1", "pid": 1, "tid": 1,
           "ts": 0, "dur": 10000}]
    for c, (call, k) in enumerate([(900, 1000), (4500, 5000)], 1):
        if launches:
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
                       "tid": 1, "ts": call, "dur": 10, "args": {"correlation": c}})
        ev.append({"ph": "X", "cat": "kernel", "name": "k%d" % c, "pid": 0, "tid": 7, "ts": k,
                   "dur": 1000, "args": {"device": 0, "stream": 7, "correlation": c}})
    return {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H200"}],
            "traceEvents": ev}
json.dump(trace(True), open(f"{tmp}/with.json", "w"))
json.dump(trace(False), open(f"{tmp}/without.json", "w"))
if os.path.exists(nsys):
    shutil.copy(nsys, f"{tmp}/noapi.sqlite")
    os.chmod(f"{tmp}/noapi.sqlite", 0o644)
    db = sqlite3.connect(f"{tmp}/noapi.sqlite")
    db.execute("DROP TABLE CUPTI_ACTIVITY_KIND_RUNTIME")
    db.commit()
    db.close()
PY
bad=0 n=0
ok() { # label, condition status
	n=$((n + 1))
	if [ "$2" = 0 ]; then echo "$1: ok"; else echo "$1: FAIL"; bad=$((bad + 1)); fi
}
js() { # file, python expression over d (the trace --json document)
	"$TS" trace --json "$1" 2>/dev/null |
		python3 -c "import json, sys; d = json.load(sys.stdin); r = d['ranks']; sys.exit(0 if ($2) else 1)"
}
js "$tmp/with.json" "r[0]['idle_host_bound_us'] == 7400 and r[0]['idle_other_us'] == 600"
ok "with launches: host-bound 7400 us, other 600 us" $?
js "$tmp/without.json" "r[0]['idle_host_bound_us'] is None and r[0]['idle_other_us'] == 8000"
ok "without launches: host-bound null, other 8000 us" $?
js "$tmp/without.json" "d['wall']['dominant'] != 'host' and 'host-bound GPU idle unknown' in d['wall']['evidence']"
ok "without launches: verdict not host, evidence says unknown" $?
"$TS" trace "$tmp/without.json" 2>/dev/null | grep -q "GPU idle 8.0 ms: host-bound unknown"
ok "without launches: text says unknown" $?
"$TS" report "$tmp/without.json" 2>/dev/null | grep -q "host-bound GPU idle unknown"
ok "without launches: report says unknown" $?
"$TS" report "$tmp/without.json" 2>/dev/null | grep -q "host-bound GPU idle 4.0 ms\|host-bound 4.0 ms"
[ $? = 1 ]; ok "without launches: report has no 4.0 ms host-bound" $?
if [ -f "$tmp/noapi.sqlite" ]; then
	js "$tmp/noapi.sqlite" "len(r) == 2 and all(x['idle_host_bound_us'] is None for x in r)"
	ok "nsys without CUDA API: host-bound null on both ranks" $?
	"$TS" trace "$tmp/noapi.sqlite" 2>/dev/null | grep -q "host-bound GPU idle unknown"
	ok "nsys without CUDA API: verdict evidence says unknown" $?
	"$TS" trace "$tmp/noapi.sqlite" 2>/dev/null | grep -q "host 0.4%"
	[ $? = 1 ]; ok "nsys without CUDA API: no host 0.4 % wall" $?
fi
echo "idle-host-unknown: $bad of $n checks wrong"
[ $bad = 0 ]
