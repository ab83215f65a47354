#!/usr/bin/env bash
# MoE advice needs evidence that the model is MoE. A dense run (the H200
# example: GPT-2 config without experts, no MoE kernels) gets no MoE knob
# from `advise` or `diagnose`; the same kind of run with MoE evidence gets
# the MoE entries, with the evidence named:
#   - a model config with experts (the shared mixtral-8x7b.json: 8 local experts);
#   - a Megatron log whose arguments say num_experts 8 (num_experts None: dense);
#   - a trace with an MoE kernel (moe_align_block_size_kernel).
set -u
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
[ -d examples/run-h200 ] || { echo "skip: no examples/run-h200"; exit 77; }

# check NAME WANT_MOE CMD...: the advice of CMD's JSON output, MoE or not
check() {
	local name=$1 want=$2
	shift 2
	if ! "$@" >"$tmp/out.json" 2>"$tmp/err"; then
		echo "FAIL $name: exit $?: $(head -c 300 "$tmp/err")"
		fail=1
		return
	fi
	python3 - "$tmp/out.json" "$name" "$want" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
name, want = sys.argv[2], sys.argv[3] == "1"
# words only the MoE knobs use
words = ("MoE", "moe", "expert", "EP ", "EP-", "dispatcher", "grouped", "router", "DeepEP")
hits = [a["title"] for a in d["advice"]
        if any(w in a["title"] or w in (a["detail"] or "") for w in words)]
ev = d.get("moe_evidence")
bad = []
if want:
    if not hits:
        bad.append("no MoE candidate")
    if not ev:
        bad.append("no moe_evidence")
else:
    if hits:
        bad.append(f"MoE candidates for a dense model: {hits}")
    if ev is not None:
        bad.append(f"moe_evidence {ev!r} for a dense model")
for b in bad:
    print(f"FAIL {name}: {b}")
sys.exit(1 if bad else 0)
PY
}

# dense: the H200 example, as advise, diagnose and for every wall of advise --wall
check dense-advise 0 "$TS" advise --json examples/run-h200
check dense-diagnose 0 "$TS" diagnose --json examples/run-h200
for w in data straggler communication host memory compute; do
	for v in cuda musa; do
		check "dense-wall-$w-$v" 0 "$TS" advise --json --wall "$w" --vendor "$v"
	done
done
# --moe with --wall: the MoE entries of the host wall
check moe-wall-host 1 "$TS" advise --json --wall host --vendor cuda --moe

# MoE by its model config
if [ -f "$DATA/models/mixtral-8x7b.json" ]; then
	mkdir "$tmp/cfg"
	cp -r examples/run-h200/. "$tmp/cfg/"
	cp "$DATA/models/mixtral-8x7b.json" "$tmp/cfg/config.json"
	check moe-config 1 "$TS" advise --json "$tmp/cfg"
	grep -q '"moe_evidence": "8 experts in the model config' "$tmp/out.json" ||
		{ echo "FAIL moe-config: evidence not named"; fail=1; }
else
	echo "note: $DATA/models/mixtral-8x7b.json missing, config case skipped"
fi

# MoE by the arguments of a Megatron log (and dense with num_experts None)
for kind in moe dense; do
	mkdir "$tmp/args-$kind"
	cp -r examples/run-h200/traces "$tmp/args-$kind/"
	{
		echo "------------------------ arguments ------------------------"
		echo "  hidden_size ..................................... 128"
		echo "  moe_token_dispatcher_type ....................... alltoall"
		if [ $kind = moe ]; then
			echo "  num_experts ..................................... 8"
		else
			echo "  num_experts ..................................... None"
		fi
		echo "  num_layers ...................................... 4"
		echo "-------------------- end of arguments ---------------------"
		grep ' iteration ' examples/run-h200/train.log
	} >"$tmp/args-$kind/train.log"
done
check moe-args 1 "$TS" advise --json "$tmp/args-moe"
check dense-args 0 "$TS" advise --json "$tmp/args-dense"

# MoE by a kernel in the trace: two steps of one moe_align_block_size_kernel
mkdir "$tmp/trace"
cat >"$tmp/trace/t.pt.trace.json" <<'JSON'
{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H200", "totalGlobalMem": 150109880320, "computeMajor": 9, "computeMinor": 0}],
"traceEvents": [
{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 1000},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 10, "dur": 10, "args": {"correlation": 1}},
{"ph": "X", "cat": "kernel", "name": "moe_align_block_size_kernel", "pid": 0, "tid": 7, "ts": 100, "dur": 800, "args": {"correlation": 1, "stream": 7, "device": 0}},
{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "pid": 1, "tid": 1, "ts": 1000, "dur": 1000},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 1010, "dur": 10, "args": {"correlation": 2}},
{"ph": "X", "cat": "kernel", "name": "moe_align_block_size_kernel", "pid": 0, "tid": 7, "ts": 1100, "dur": 800, "args": {"correlation": 2, "stream": 7, "device": 0}}
]}
JSON
check moe-trace 1 "$TS" diagnose --json "$tmp/trace"
exit $fail
