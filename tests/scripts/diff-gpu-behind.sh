#!/usr/bin/env bash
# diff compares one clock on both sides when a GPU runs behind its host.
# Built here (trace-gpu-behind.sh's steps): 6 steps, iterations 10-15,
# each launching a GEMM, an all-reduce (400 us) and a copy (50 us):
#   slow:  spans of 336 us, the device runs the work back to back with a
#          GEMM of 1900 us: behind, the GPU's own step 2350 us;
#   sync:  spans of 2100 us holding their work (GEMM 1600 us): not behind,
#          the GPU's own step 2100 us (the span);
#   syncu: sync with its kernels' correlation ids removed: no device work
#          is linked to a step, so it has no GPU step time;
#   syncp: sync with those of iteration 13 removed: 13 has no GPU step
#          time, nor has 14 (its previous iteration has no device work);
#   base_odd, slow_odd: behind with GEMMs of 1600 and 1900 us (GPU steps
#          2050 and 2350 us) but iterations 10, 12, ..., 20: no step
#          follows its previous iteration, so neither has a GPU step time.
# And edited copies of HTA's ns_resolution_trace (behind, 5 steps):
#   gpu12: every device event's start (from the first one) and duration
#          times 1.2, the host untouched: the GPU's own step 1.2 times
#          longer, the spans the same;
#   odd, gpu12_odd: the trace and gpu12 with ProfilerStep#101-105
#          renumbered 101, 103, ..., 109: no GPU step time.
#   slow_skew, sync_odd, slow_odd_skew: slow with every kernel 5 ms
#          earlier (its device clock behind its host's: clock-mismatch,
#          so never found behind), sync and slow_skew at iterations 10,
#          12, ..., 20.
# Expected:
#   sync -> slow_skew, slow_skew -> sync: device basis, gpu_behind [],
#     clock_mismatch names the skewed side, 2100 <-> 2350 us: 1.1190
#     slower, 0.8936 faster (before 2026-12-04 the host spans were
#     compared: 0.1600 faster and 6.2500 slower, both the wrong way);
#     sync_odd -> slow_odd_skew: no GPU step time, inconclusive,
#     no_gpu_step_time, the warning names the candidate's clocks (before:
#     host spans, 0.1600 faster);
#   report RUN --baseline BASE with sync.json / slow_skew.json: "GPU
#     step time 2.100 ms to 2.350 ms: slower" (before: "Step time 2.100
#     ms to 0.336 ms: faster");
#   slow -> sync: step_basis device, 5 pairs, 2350 -> 2100 us, ratio
#     0.8936, faster (only the baseline runs behind; the GPU step time of
#     the synced side is its span);
#   nsr -> gpu12: device, 4 pairs, ratio 1.2000, slower;
#   slow -> syncp: device over the 3 pairs with a GPU step time on both
#     sides (11, 12, 15), 2350 -> 2100 us, faster, and a gpu-steps-partial
#     warning (3 of 6; the cases above compare all pairs but the first,
#     which never has one, and are not warned);
#   slow -> syncu, syncu -> slow, base_odd -> slow_odd, odd -> gpu12_odd:
#     no pair has a GPU step time on both sides: step_basis host_span,
#     verdict inconclusive, verdict_reason no_gpu_step_time, and a
#     no-gpu-step-time warning in --json, in the text and in report
#     --baseline's diff section; --fail-on-regression 5 is not applied
#     (exit 0, said on stderr). Before, diff compared the host spans
#     without a word: slow -> syncu "slower" at 6.25 (the candidate's GPU
#     is faster), base_odd -> slow_odd and odd -> gpu12_odd
#     "no_difference" (the candidate's GPU is 15 % and 20 % slower).
set -u
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
command -v python3 >/dev/null || { echo "python3 not found"; exit 77; }
nsr=$DATA/traces/hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz
[ -f "$nsr" ] || { echo "no $nsr"; exit 77; }
python3 - "$tmp" "$nsr" <<'PY' || exit 1
import gzip, json, os, sys
tmp, nsr = sys.argv[1], sys.argv[2]
def trace(path, span, gemm, synced, iters=range(10, 16), linked=True, unlinked=(), skew=0.0):
    t0, ev, corr, gpu = 1000000.0, [], 100, 1000000.0 + 20
    for k, it in enumerate(iters):
        s = t0 + span * k
        ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % it,
                   "pid": 1, "tid": 1, "ts": s, "dur": span})
        work = [("ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_tn", gemm),
                ("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 400.0),
                ("void at::native::elementwise_kernel<128, 4>", 50.0)]
        if synced:
            gpu = s + 20
        for j, (name, dur) in enumerate(work):
            corr += 1
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                       "ts": s + 10 + 5 * j, "dur": 4.0, "args": {"correlation": corr}})
            args = {"device": 0, "stream": 7}
            if linked and it not in unlinked:
                args["correlation"] = corr
            ev.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": gpu + skew, "dur": dur,
                       "args": args})
            gpu += dur
    json.dump({"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}],
               "traceEvents": ev}, open(os.path.join(tmp, path), "w"))
trace("slow.json", 336.0, 1900.0, False)
trace("sync.json", 2100.0, 1600.0, True)
trace("syncu.json", 2100.0, 1600.0, True, linked=False)
trace("syncp.json", 2100.0, 1600.0, True, unlinked=(13,))
trace("base_odd.json", 336.0, 1600.0, False, iters=range(10, 22, 2))
trace("slow_odd.json", 336.0, 1900.0, False, iters=range(10, 22, 2))
trace("slow_skew.json", 336.0, 1900.0, False, skew=-5000.0)
trace("sync_odd.json", 2100.0, 1600.0, True, iters=range(10, 22, 2))
trace("slow_odd_skew.json", 336.0, 1900.0, False, iters=range(10, 22, 2), skew=-5000.0)

d = json.load(gzip.open(nsr))
dev = {"kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation"}
g0 = min(e["ts"] for e in d["traceEvents"] if e.get("cat") in dev)
def variant(name, scale, renumber):
    out = json.loads(json.dumps(d))
    for e in out["traceEvents"]:
        if scale != 1 and (e.get("cat") in dev or (e.get("cat") == "ac2g" and e.get("ph") == "f")):
            e["ts"] = g0 + (e["ts"] - g0) * scale
            if "dur" in e:
                e["dur"] *= scale
        if renumber and e.get("name", "").startswith("ProfilerStep#"):
            e["name"] = "ProfilerStep#%d" % (101 + 2 * (int(e["name"][13:]) - 101))
    json.dump(out, open(os.path.join(tmp, name), "w"))
variant("gpu12.json", 1.2, False)
variant("odd.json", 1, True)
variant("gpu12_odd.json", 1.2, True)
PY
cp "$nsr" "$tmp/nsr.json.gz"
fail=0
check() { # BASE CAND BASIS STEPS BEHIND GPU_STEPS RATIO VERDICT REASON
	"$TS" diff "$tmp/$1" "$tmp/$2" --json 2>/dev/null | python3 -c '
import json, sys
a = sys.argv[1:]
try:
    d = json.load(sys.stdin)
    st, r = d["steps"], d["ratio"]
    codes = [w["code"] for w in d["warnings"]]
    got = [st["step_basis"], str(st["basis_steps"]), ",".join(st.get("gpu_behind", ["?"])),
           "%s/%s" % (st.get("baseline_gpu_steps"), st.get("candidate_gpu_steps")),
           "%.4f" % r["estimate"], str(d["verdict"]), d["verdict_reason"]]
    if d["verdict_reason"] == "no_gpu_step_time" and "no-gpu-step-time" not in codes:
        got.append("no no-gpu-step-time warning")
    if d["verdict_reason"] != "no_gpu_step_time" and "no-gpu-step-time" in codes:
        got.append("a no-gpu-step-time warning")
    if ("gpu-steps-partial" in codes) != (a[1] == "syncp.json"):
        got.append("gpu-steps-partial warned" if "gpu-steps-partial" in codes else "no gpu-steps-partial warning")
except (ValueError, KeyError) as e:
    got = ["no diff JSON: %r" % e]
ok = got == a[2:]
print("diff %s %s: %s %s" % (a[0], a[1], got, "ok" if ok else "FAIL, want %s" % a[2:]))
sys.exit(0 if ok else 1)' "$1" "$2" "${@:3}" || fail=1
}
check slow.json sync.json device 5 baseline 5/5 0.8936 faster faster
check nsr.json.gz gpu12.json device 4 baseline,candidate 4/4 1.2000 slower slower
check slow.json syncp.json device 3 baseline 5/3 0.8936 faster faster
check slow.json syncu.json host_span 6 baseline 5/0 6.2500 inconclusive no_gpu_step_time
check syncu.json slow.json host_span 6 candidate 0/5 0.1600 inconclusive no_gpu_step_time
check base_odd.json slow_odd.json host_span 6 baseline,candidate 0/0 1.0000 inconclusive no_gpu_step_time
check odd.json gpu12_odd.json host_span 5 baseline,candidate 0/0 1.0000 inconclusive no_gpu_step_time
# a side whose device clock is 5 ms behind its host's (clock-mismatch) is
# never found behind, yet its spans time the host all the same
check sync.json slow_skew.json device 5 "" 5/5 1.1190 slower slower
check slow_skew.json sync.json device 5 "" 5/5 0.8936 faster faster
check sync_odd.json slow_odd_skew.json host_span 6 "" 0/0 0.1600 inconclusive no_gpu_step_time
"$TS" diff "$tmp/sync_odd.json" "$tmp/slow_odd_skew.json" --json 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
cm = d["steps"].get("clock_mismatch")
msg = [w["message"] for w in d["warnings"] if w["code"] == "no-gpu-step-time"]
want = "the candidate'"'"'s device and host clocks disagree (clock-mismatch): whether its GPU runs behind the host cannot be told, so its step spans may time the host'"'"'s launch pace"
ok = cm == ["candidate"] and len(msg) == 1 and msg[0].startswith(want)
print("clock-mismatch side named: %s %s: %s" % (cm, msg, "ok" if ok else "FAIL, want [candidate] and a warning starting %r" % want))
sys.exit(0 if ok else 1)' || fail=1

# the text says which clock was compared, and why
out=$("$TS" diff "$tmp/slow.json" "$tmp/syncu.json" 2>&1)
for want in "step time: not compared (the GPU runs behind the host on the baseline, and no compared step has a GPU step time on both sides)" \
	"  ratio of the host spans 6.2500" "  verdict: inconclusive (no_gpu_step_time)" \
	"warning: the GPU runs behind the host on the baseline (gpu-behind-host), so its step spans time the host's launch pace, not the GPU's; but no compared step has a GPU step time on both sides (the baseline has one for 5 of its 6 compared steps, the candidate for 0;"; do
	# a line that starts with it
	if awk -v s="$want" 'index($0, s) == 1 { f = 1 } END { exit !f }' <<<"$out"; then
		echo "text: '${want:0:60}...': ok"
	else
		echo "text: FAIL: no line starting '$want'"
		fail=1
	fi
done
# the host spans' 6.25 is no regression to gate on
err=$("$TS" diff "$tmp/slow.json" "$tmp/syncu.json" --fail-on-regression 5 2>&1 >/dev/null)
r=$?
if [ $r = 0 ] && grep -q "fail-on-regression not applied" <<<"$err"; then
	echo "fail-on-regression 5 on host spans: exit 0, not applied: ok"
else
	echo "fail-on-regression 5 on host spans: FAIL: exit $r: $err"
	fail=1
fi
# the report's diff section
mkdir -p "$tmp/rb" "$tmp/rc"
cp "$tmp/slow.json" "$tmp/rb/"
cp "$tmp/syncu.json" "$tmp/rc/"
rep=$("$TS" report "$tmp/rc" --baseline "$tmp/rb" --format md 2>/dev/null)
if grep -q "Step time not compared (no GPU step time on both sides): host spans 0.336 ms to 2.100 ms: inconclusive" <<<"$rep" &&
	grep -q "no-gpu-step-time" <<<"$rep"; then
	echo "report --baseline: step time not compared, no-gpu-step-time: ok"
else
	echo "report --baseline: FAIL: $(grep -i "step time" <<<"$rep" | head -3)"
	fail=1
fi
# and a side whose clocks disagree: the GPU step times, in the report too
mkdir -p "$tmp/kb" "$tmp/kc"
cp "$tmp/sync.json" "$tmp/kb/"
cp "$tmp/slow_skew.json" "$tmp/kc/"
rep=$("$TS" report "$tmp/kc" --baseline "$tmp/kb" --format md 2>/dev/null)
if grep -q "GPU step time 2.100 ms to 2.350 ms: slower" <<<"$rep"; then
	echo "report --baseline, clock-mismatch candidate: GPU step time, slower: ok"
else
	echo "report --baseline, clock-mismatch candidate: FAIL: $(grep -i "step time" <<<"$rep" | head -3)"
	fail=1
fi
exit $fail
