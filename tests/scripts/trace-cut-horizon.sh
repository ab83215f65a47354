#!/usr/bin/env bash
# A trace cut inside its events keeps only the steps every kind of event
# covers. Built here: 6 steps of 2100 us (iterations 10-15), each with a
# 1600 us GEMM and a 400 us all-reduce on stream 7, so every whole step has
# busy 2000 us, compute 1600 us, exposed comm 400 us. Cuts:
#   A. Kineto's order (host ops, then the runtime calls and kernels in
#      time order), cut inside step 13's GEMM record: the last activity
#      read is step 13's first launch call (1006310 us), after step 12's
#      end (1006300), so in time order every activity of steps 10-12 was
#      written: steps 10-12 kept with their whole device time, 3 dropped;
#      the warning says the cut fell among the device-side events.
#   B. The runtime calls written among the host ops (so the last call read
#      is in step 15), same cut: the last device event is step 12's
#      all-reduce (1005820 us, inside step 12) and nothing says step 12 had
#      no later kernel, so steps 10-11 are kept, 4 dropped (before, the
#      calls' late times hid the device horizon: steps 10-14 were kept, 13
#      and 14 with 1000 and 0 us of GEMM).
#   C. Kineto's order cut at the host record of step 14's span: no device
#      event was written; step 13's ops are its last host events, so steps
#      10-12 are kept and 1 dropped (14 and 15 were never read), and the
#      warning says the device activity is lost.
set -u
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
command -v python3 >/dev/null || { echo "python3 not found"; exit 77; }
python3 - "$tmp" <<'PY' || exit 1
import json, os, sys
tmp = sys.argv[1]
def trace(order):
    t0, host, acts, corr = 1000000.0, [], [], 1000
    for k in range(6):
        s = t0 + 2100.0 * k
        host.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % (10 + k),
                     "pid": 1, "tid": 1, "ts": s, "dur": 2100.0})
        for j, (name, dur) in enumerate((("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n", 1600.0),
                                         ("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 400.0))):
            corr += 1
            host.append({"ph": "X", "cat": "cpu_op", "name": "aten::mm" if j == 0 else "c10d::allreduce_",
                         "pid": 1, "tid": 1, "ts": s + 5 + 10 * j, "dur": 8.0})
            call = {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                    "ts": s + 10 + 10 * j, "dur": 4.0, "args": {"correlation": corr}}
            kern = {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7,
                    "ts": s + 20 + (0 if j == 0 else 1600.0), "dur": dur,
                    "args": {"device": 0, "stream": 7, "correlation": corr}}
            (host if order == "interleaved" else acts).append(call)
            acts.append(kern)
    acts.sort(key=lambda e: e["ts"])
    return ('{\n "schemaVersion": 1,\n "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}],\n'
            ' "traceEvents": [\n' + ",\n".join(json.dumps(e) for e in host + acts) + "\n ]\n}\n")
for name, order, mark in (("a", "kineto", '"tid": 7, "ts": 1006320.0'), ("b", "interleaved", '"tid": 7, "ts": 1006320.0'),
                          ("c", "kineto", '"name": "ProfilerStep#14"')):
    s = trace(order)
    # cut in the middle of the record holding the mark (A, B: step 13's GEMM;
    # C: the host record of step 14's span, after step 13's ops)
    i = s.index(mark)
    open(os.path.join(tmp, name + ".json"), "w").write(s[:i - 20] if name == "c" else s[:i + 5])
PY
fail=0
check() { # CASE WARNING-PHRASE
	"$TS" trace "$tmp/$1.json" --json 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
case, phrase = sys.argv[1], sys.argv[2]
r = d["ranks"][0]
steps = [s["step"] for s in r["steps"]]
want, dropped = {"a": ([10, 11, 12], 3), "b": ([10, 11], 4), "c": ([10, 11, 12], 1)}[case]
bad = []
if steps != want:
    bad.append("steps %s, want %s" % (steps, want))
if r["steps_dropped"] != dropped:
    bad.append("steps_dropped %s, want %d" % (r["steps_dropped"], dropped))
if case != "c":
    for s in r["steps"]:
        if (s["busy_us"], s["compute_us"], s["exposed_comm_us"]) != (2000.0, 1600.0, 400.0):
            bad.append("step %d busy/compute/exposed comm %s %s %s, want 2000 1600 400" %
                       (s["step"], s["busy_us"], s["compute_us"], s["exposed_comm_us"]))
w = [x["message"] for x in d["warnings"] if x["code"] == "truncated-trace"]
if not w or phrase not in w[0]:
    bad.append("no truncated-trace warning saying %r: %s" % (phrase, w))
print("%s: steps %s, dropped %s %s" % (case, steps, r["steps_dropped"], "ok" if not bad else "FAIL: " + "; ".join(bad)))
sys.exit(1 if bad else 0)' "$1" "$2" || fail=1
}
check a "the cut fell among its device-side events"
check b "the cut fell among its device-side events"
check c "device activity is lost"
exit $fail
