#!/usr/bin/env bash
# validate's backend evidence end to end: the request comes from a run's
# contract.json or, without one, from the Megatron arguments block of its
# log; the evidence from its profiler trace.
#  - examples/run-h200 ran cuDNN SDPA attention: a contract asking for
#    flash fails (a fallback), one asking for fused (cuDNN) passes;
#  - HTA's trace_diff pair: "test" replays CUDA graphs, "control" does not;
#    both all-to-all. A Megatron log asking for cuda_graph_impl local and the
#    alltoall dispatcher passes with "test" and fails with "control".
set -u
. "$(dirname "$0")/lib.sh"
status_of() { # file check -> status
	python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
print(next(c["status"] for c in d["checks"] if c["name"]==sys.argv[2]))' "$1" "$2"
}
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }

for want in flash fused; do
	mkdir -p "$tmp/h200-$want"
	cp -r examples/run-h200/. "$tmp/h200-$want/"
	SOURCE_DATE_EPOCH=1700000000 "$TS" contract capture --no-probe \
		--set attention_backend="$want" -o "$tmp/h200-$want/contract.json" || bad "contract capture"
	# the run has no steady state MSER-5 can find (validate fails an
	# accepted automatic window then): its window is declared
	"$TS" validate --json --window 27:60 "$tmp/h200-$want" >"$tmp/$want.json"
	echo "$? $(status_of "$tmp/$want.json" backend_evidence)" >"$tmp/$want.rc"
done
[ "$(cat "$tmp/flash.rc")" = "1 fail" ] || bad "h200 asked for flash: got '$(cat "$tmp/flash.rc")', want '1 fail'"
grep -q 'but the trace shows cudnn' "$tmp/flash.json" || bad "flash fallback not named"
[ "$(cat "$tmp/fused.rc")" = "0 pass" ] || bad "h200 asked for fused: got '$(cat "$tmp/fused.rc")', want '0 pass'"

td=$DATA/traces/hta/trace_diff
if [ -f "$td/test/test.json.gz" ]; then
	for side in test control; do
		d=$tmp/mega-$side
		mkdir -p "$d"
		cp "$td/$side/$side.json.gz" "$d/rank0.$side.pt.trace.json.gz"
		python3 - "$d/train.log" <<'PY'
import sys
args = {"num_layers": 4, "hidden_size": 128, "ffn_hidden_size": 512, "num_attention_heads": 4,
        "seq_length": 128, "max_position_embeddings": 128, "micro_batch_size": 8,
        "global_batch_size": 8, "padded_vocab_size": 2048, "world_size": 1,
        "tensor_model_parallel_size": 1, "pipeline_model_parallel_size": 1,
        "cuda_graph_impl": "local", "moe_token_dispatcher_type": "alltoall"}
with open(sys.argv[1], "w") as f:
    f.write("------------------------ arguments ------------------------\n")
    for k, v in sorted(args.items()):
        f.write("  %s %s %s\n" % (k, "." * (40 - len(k)), v))
    f.write("-------------------- end of arguments ---------------------\n")
    for i in range(1, 61):
        f.write(" iteration %8d/%8d | consumed samples: %12d | elapsed time per iteration (ms): %.1f"
                " | learning rate: 1.000000E-04 | global batch size: %5d | lm loss: %.6E"
                " | loss scale: 1.0 | grad norm: 1.000 | number of skipped iterations:   0"
                " | number of nan iterations:   0 |\n" % (i, 60, 8 * i, 100.0, 8, 8.0 - 0.01 * i))
PY
		"$TS" validate --json "$d" >"$tmp/$side.json"
		echo "$(status_of "$tmp/$side.json" backend_evidence)" >"$tmp/$side.st"
	done
	[ "$(cat "$tmp/test.st")" = pass ] || bad "graphs + alltoall with trace_diff/test: $(cat "$tmp/test.st"), want pass"
	[ "$(cat "$tmp/control.st")" = fail ] || bad "graphs with trace_diff/control: $(cat "$tmp/control.st"), want fail"
	grep -q 'captured but never replayed' "$tmp/control.json" || bad "missing replay not explained"
else
	echo "shared data not found: Megatron-log cases skipped"
fi
exit $fail
