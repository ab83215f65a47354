#!/usr/bin/env bash
# A host that runs ahead of its GPU (no sync in the step) makes the
# ProfilerStep spans time the host. Built here: 6 steps (iterations
# 10-15) whose spans last 336 us each while the device runs each step's
# GEMM, all-reduce (400 us) and copy (50 us) back to back:
#   base: GEMM 1600 us, so the GPU's own step is 1600 + 400 + 50 = 2050 us;
#   slow: GEMM 1900 us, so 2350 us (ratio 2350 / 2050 = 1.1463, slower).
# Expected: trace warns gpu-behind-host with the GPU's own step (median
# 2.050 ms); diff compares the GPU step times (step_basis "device", 5
# pairs: the first step has no previous one) and says slower at 1.1463,
# where the spans alone said no_difference. Controls: the same work with
# a sync in each step (spans of 2100 us holding their work) and a host
# whose only device work is a 20 us kernel at the end of each 2100 us
# span (a mostly idle GPU cannot be behind): no warning, step_basis
# "host_span".
set -u
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
command -v python3 >/dev/null || { echo "python3 not found"; exit 77; }
python3 - "$tmp" <<'PY' || exit 1
import json, os, sys
tmp = sys.argv[1]
def trace(path, span, gemm, synced, tiny=False):
    t0, ev, corr, gpu = 1000000.0, [], 100, 1000000.0 + 20
    for k in range(6):
        s = t0 + span * k
        ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % (10 + k),
                   "pid": 1, "tid": 1, "ts": s, "dur": span})
        work = [("ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_tn", gemm),
                ("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 400.0),
                ("void at::native::elementwise_kernel<128, 4>", 50.0)]
        if tiny:
            work = [("void at::native::elementwise_kernel<128, 4>", 20.0)]
        if synced or tiny:
            gpu = s + (span - 30 if tiny else 20)
        for j, (name, dur) in enumerate(work):
            corr += 1
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                       "ts": s + (span - 40 if tiny else 10 + 5 * j), "dur": 4.0, "args": {"correlation": corr}})
            ev.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": gpu, "dur": dur,
                       "args": {"device": 0, "stream": 7, "correlation": corr}})
            gpu += dur
    json.dump({"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}],
               "traceEvents": ev}, open(os.path.join(tmp, path), "w"))
trace("base.json", 336.0, 1600.0, False)
trace("slow.json", 336.0, 1900.0, False)
trace("sync.json", 2100.0, 1600.0, True)
trace("idle.json", 2100.0, 0, False, tiny=True)
PY
fail=0
out=$("$TS" trace "$tmp/base.json" 2>&1)
if grep -q "the GPU runs behind the host" <<<"$out" && grep -q "is a median 2.050 ms" <<<"$out"; then
	echo "trace base: gpu-behind-host, GPU step 2.050 ms: ok"
else
	echo "trace base: FAIL: $out" | tail -3
	fail=1
fi
for c in sync idle; do
	if "$TS" trace "$tmp/$c.json" 2>&1 | grep -q "runs behind"; then
		echo "trace $c: FAIL: gpu-behind-host on a GPU that is not behind"
		fail=1
	else
		echo "trace $c: no gpu-behind-host: ok"
	fi
done
check() { # BASE CAND BASIS STEPS BASE_US CAND_US RATIO VERDICT
	"$TS" diff "$tmp/$1.json" "$tmp/$2.json" --json 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
a = sys.argv[1:]
st, r = d["steps"], d["ratio"]
got = [st["step_basis"], str(st["basis_steps"]),
       "%.0f" % st["baseline_gpu_step_mean_us"] if st["baseline_gpu_step_mean_us"] is not None else "null",
       "%.0f" % st["candidate_gpu_step_mean_us"] if st["candidate_gpu_step_mean_us"] is not None else "null",
       "%.4f" % r["estimate"], d["verdict"]]
ok = got == a[2:]
print("diff %s %s: %s %s" % (a[0], a[1], got, "ok" if ok else "FAIL, want %s" % a[2:]))
sys.exit(0 if ok else 1)' "$1" "$2" "${@:3}" || fail=1
}
check base slow device 5 2050 2350 1.1463 slower
check base base device 5 2050 2050 1.0000 no_difference
check sync sync host_span 6 null null 1.0000 no_difference
# a negative --fail-on-regression asks for a speed-up: slow -> base is
# 2050 / 2350 = 0.8723 (12.8 % faster), so -5 passes; base -> base is 1.0,
# so -5 fails with "no speed-up of 5 %"
"$TS" diff "$tmp/slow.json" "$tmp/base.json" --fail-on-regression -5 >/dev/null 2>&1
r1=$?
msg=$("$TS" diff "$tmp/base.json" "$tmp/base.json" --fail-on-regression -5 2>&1 >/dev/null)
r2=$?
if [ $r1 = 0 ] && [ $r2 = 1 ] && grep -q "no speed-up of 5 %" <<<"$msg"; then
	echo "fail-on-regression -5: 0 for 12.8 % faster, 1 for equal: ok"
else
	echo "fail-on-regression -5: FAIL: exits $r1 and $r2: $msg"
	fail=1
fi
exit $fail
