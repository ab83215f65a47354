#!/usr/bin/env bash
# A Megatron log's arguments block gives the job's shape to memory, plan
# and mfu alike: a Llama-3-8B-like block with seq_length 8192 is priced at
# sequence 8192 by all three (plan priced 4096 without a word, and said
# the layout 1,1,1,1,1 fits in 64.7 GiB where memory says 184.4 GiB); an
# explicit --seq still wins. plan's model FLOPs per step are mfu's for the
# same job (Qwen3-8B, 64 GPUs, GBS 512: plan padded the vocabulary for the
# last layout it priced, +0.032 %).
set -u
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
dots() { printf '  %s %s %s\n' "$1" "$(printf '%*s' $((48 - ${#1})) '' | tr ' ' .)" "$2"; }
{
	echo "------------------------ arguments ------------------------"
	dots num_layers 32; dots hidden_size 4096; dots num_attention_heads 32
	dots group_query_attention True; dots num_query_groups 8; dots kv_channels 128
	dots ffn_hidden_size 14336; dots padded_vocab_size 128256; dots swiglu True
	dots seq_length 8192; dots global_batch_size 128; dots micro_batch_size 1
	dots world_size 8; dots tensor_model_parallel_size 1; dots pipeline_model_parallel_size 1
	dots untie_embeddings_and_output_weights True; dots use_distributed_optimizer True
	dots bf16 True
	echo "-------------------- end of arguments ---------------------"
} >"$tmp/args.log"
seq_of() { python3 -c 'import json, sys; print(json.load(sys.stdin)["seq"])'; }
got=$("$TS" plan --model "$tmp/args.log" --gpus 8 --gbs 128 --gpu H100-SXM --json | seq_of)
[ "$got" = 8192 ] || bad "plan: seq $got, want 8192 from the log"
got=$("$TS" memory --model "$tmp/args.log" --gpu H100-SXM --json |
	python3 -c 'import json, sys; print(json.load(sys.stdin)["layout"]["seq"])')
[ "$got" = 8192 ] || bad "memory: seq $got, want 8192"
got=$("$TS" mfu --from-log "$tmp/args.log" --step-time 5000 --gpu H100-SXM --json |
	python3 -c 'import json, sys; print(json.load(sys.stdin)["shape"]["seq"])')
[ "$got" = 8192 ] || bad "mfu: seq $got, want 8192"
got=$("$TS" plan --model "$tmp/args.log" --gpus 8 --gbs 128 --gpu H100-SXM --seq 2048 --json | seq_of)
[ "$got" = 2048 ] || bad "plan --seq 2048: seq $got"
# the layout plan --layout prices (it takes full recompute to fit) is the
# bytes memory gives for it
p=$("$TS" plan --model "$tmp/args.log" --gpus 8 --gbs 128 --gpu H100-SXM --layout 1,1,1,1,1 --json |
	python3 -c 'import json, sys; l = json.load(sys.stdin)["layout"]; print(l["recompute"], l["memory_bytes"])')
m=$("$TS" memory --model "$tmp/args.log" --gpu H100-SXM --recompute "${p% *}" --json |
	python3 -c 'import json, sys; print(json.load(sys.stdin)["total_bytes"])')
[ "${p#* }" = "$m" ] || bad "plan --layout ${p% *}: ${p#* } bytes, memory: $m"
echo "seq 8192 from the log in plan, memory and mfu; layout 1,1,1,1,1 with recompute ${p% *}: ${p#* } bytes in both"
f_plan=$("$TS" plan --model "${DATA:-../shared/data}/models/qwen3-8b.json" --gpus 64 --gbs 512 --gpu H100-SXM \
	--json | python3 -c 'import json, sys; print(json.load(sys.stdin)["model_flops_per_step"])')
f_mfu=$("$TS" mfu --model "${DATA:-../shared/data}/models/qwen3-8b.json" --gpus 64 --gbs 512 --seq 4096 \
	--json 2>/dev/null | python3 -c 'import json, sys; print(json.load(sys.stdin)["flops_per_step"])')
[ -n "$f_plan" ] && [ "$f_plan" = "$f_mfu" ] || bad "model FLOPs per step: plan $f_plan, mfu $f_mfu"
exit $fail
