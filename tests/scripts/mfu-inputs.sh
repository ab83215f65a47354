#!/usr/bin/env bash
# mfu refuses what memory and plan refuse, and says what it assumes:
#  - a config without kv heads, head dim, FFN width and activation gets the
#    four model-value-assumed warnings memory gives for it (mfu gave none);
#  - an explicit 0 width is refused (--ffn-hidden 0 became 4 x hidden:
#    Qwen3-8B's 49.03 GFLOP/token read 59.90, +22 %);
#  - --tp 3 with 32 heads, TP*PP not dividing the GPUs, and a packed
#    sub-sequence longer than --seq are errors (exit 2), not numbers.
set -u
. "$(dirname "$0")/lib.sh"
[ -f "$DATA/models/qwen3-8b.json" ] || { echo "shared data not found"; exit 77; }
q=$DATA/models/qwen3-8b.json
echo '{"model_type":"llama","hidden_size":4096,"num_hidden_layers":32,"num_attention_heads":32,"vocab_size":32000}' \
	>"$tmp/sparse.json"
"$TS" mfu --model "$tmp/sparse.json" --seq 4096 --gbs 64 --gpus 8 --json >"$tmp/m.json" 2>/dev/null
"$TS" memory --model "$tmp/sparse.json" --seq 4096 --gbs 64 --gpus 8 --json >"$tmp/mem.json" 2>/dev/null
n_mfu=$(grep -c '"code": "model-value-assumed"' "$tmp/m.json")
n_mem=$(grep -c '"code": "model-value-assumed"' "$tmp/mem.json")
[ "$n_mfu" = 4 ] && [ "$n_mem" = 4 ] || bad "assumed values: mfu $n_mfu, memory $n_mem warnings (want 4 each)"
# exit 2 and the words, per refused input
refuse() { # WHAT WORDS ARGS...
	local what=$1 words=$2
	shift 2
	"$TS" mfu "$@" >/dev/null 2>"$tmp/err"
	local rc=$?
	[ $rc = 2 ] && grep -q -- "$words" "$tmp/err" || bad "$what: exit $rc, $(cat "$tmp/err")"
}
refuse "--ffn-hidden 0" "0 is out of range" --model "$q" --seq 4096 --gbs 1024 --gpus 16 --ffn-hidden 0
refuse "--tp 3" "--tp 3 does not divide the 32 attention heads" --model "$q" --seq 4096 --gbs 1024 --gpus 48 --tp 3
refuse "--pp 5 on 16 GPUs" "TP\*PP = 5 does not divide the 16 GPUs" --model "$q" --seq 4096 --gbs 1024 --gpus 16 --pp 5
printf '16384 256\n' >"$tmp/lens.txt"
refuse "long packed sub-sequence" "a packed sub-sequence of 16384 tokens is longer than the sequence length 4096" \
	--model "$q" --seq 4096 --gbs 1024 --gpus 16 --seq-lens "$tmp/lens.txt"
# the same job with a legal layout still runs
"$TS" mfu --model "$q" --seq 4096 --gbs 1024 --gpus 16 --json >"$tmp/ok.json" || bad "legal Qwen3-8B job: exit $?"
echo "assumed: mfu $n_mfu, memory $n_mem; refused: --ffn-hidden 0, --tp 3, TP*PP not dividing, long sub-sequence"
exit $fail
