#!/usr/bin/env bash
# Model configs of current families (tests/fixtures/models/, written from the
# published config.json of each model and transformers' config classes, and
# the three that ship in $DATA/models): the parameter count memory, mfu and
# plan derive is the one a hand calculation from the config's numbers gives,
# and that count agrees with the model card. What the formulas do not model
# (sliding-window or chunked attention, a vision encoder) is said, in every
# output, never silently computed.
#
# Before: Gemma-3-12B and Llama-4-Scout were refused ("model hidden size is
# not stated": their language model is in text_config); no command printed a
# total or an active count; mfu's torchtitan formula counted parameters with
# its own code (no q/k norms, no attention output gate).
#
# Per config:
#  - memory --json and mfu --json "total_params"/"active_params" equal the
#    hand count (exactly), and mfu's equals memory's;
#  - memory's per-GPU parameters at TP=PP=EP=1 add up to the same count at
#    Megatron's padded vocabulary (one count, two vocabularies);
#  - the hand count is within the stated tolerance of the published figure
#    (source named next to it);
#  - the "model-feature-not-modelled" warnings expected for it, on memory,
#    mfu and plan (--json) and in the text output; none otherwise; and in
#    the report's memory section (report --layout --model, Gemma 3), and
#    the run model's (steps, diagnose, report of a run whose config.json is
#    gpt-oss-20b: its model FLOP rate counts full attention).
# Then: mfu's torchtitan FLOPs per token = 6 x (active - input embedding) +
# 12 L n d s for Llama-4-Scout (shared expert included), a Llama 4 config
# with an explicit moe_layers list and a dense width (intermediate_size_mlp)
# counted by hand, and a moe_layers index past the last layer refused.
set -u
. "$(dirname "$0")/lib.sh"
FIX=tests/fixtures/models
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
[ -f "$DATA/models/qwen3-8b.json" ] || { echo "shared data not found"; exit 77; }

run() { # NAME CONFIG: the JSON and text outputs of memory, mfu and plan
	local n=$1 f=$2
	"$TS" memory --model "$f" --seq 4096 --json >"$tmp/$n.mem.json" 2>/dev/null
	"$TS" memory --model "$f" --seq 4096 >"$tmp/$n.mem.err" 2>&1
	"$TS" mfu --model "$f" --seq 4096 --gbs 8 --gpus 8 --json >"$tmp/$n.mfu.json" 2>/dev/null
	"$TS" mfu --model "$f" --seq 4096 --gbs 8 --gpus 8 >/dev/null 2>"$tmp/$n.mfu.err"
	"$TS" plan --model "$f" --seq 4096 --gbs 64 --gpus 64 --gpu H100 --layout 1,1,1,1,1 \
		--json >"$tmp/$n.plan.json" 2>/dev/null
}
for f in qwen3-4b gemma3-12b gpt-oss-20b llama4-scout-17b-16e deepseek-v2-lite phi3-mini-4k mistral-nemo-12b; do
	run "$f" "$FIX/$f.json"
done
for f in qwen3-8b qwen3-30b-a3b mixtral-8x7b; do
	run "$f" "$DATA/models/$f.json"
done
"$TS" mfu --model "$FIX/llama4-scout-17b-16e.json" --seq 4096 --gbs 8 --gpus 8 --formula torchtitan \
	--json >"$tmp/scout-titan.json" 2>/dev/null

# A small Llama 4 with dense layers: interleave step 2 stated, but the
# explicit moe_layers list [1, 2] wins (transformers uses the list when given).
cat >"$tmp/l4-small.json" <<'EOF'
{"model_type": "llama4", "text_config": {"model_type": "llama4_text", "hidden_size": 64,
 "intermediate_size": 32, "intermediate_size_mlp": 128, "num_hidden_layers": 4,
 "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
 "num_local_experts": 4, "num_experts_per_tok": 1, "interleave_moe_layer_step": 2,
 "moe_layers": [1, 2], "hidden_act": "silu", "rms_norm_eps": 1e-05, "vocab_size": 100,
 "tie_word_embeddings": false}}
EOF
run l4-small "$tmp/l4-small.json"
# the report's memory section (--layout) carries the same warnings
"$TS" report --format md "$DATA/logs/nemo2_issue14850_qwen3_30b_a3b.log" --model "$FIX/gemma3-12b.json" \
	--layout tp=1,pp=4,dp=2,mbs=1,gbs=64,seq=4096 >"$tmp/report.md" 2>/dev/null
# a run whose config.json is gpt-oss-20b: the run model's FLOP rate
# (steps, diagnose, report) counts full attention, and says so
mkdir -p "$tmp/run"
cp "$FIX/gpt-oss-20b.json" "$tmp/run/config.json"
for i in $(seq 1 60); do
	printf ' iteration %8d/      60 | consumed samples: %12d | elapsed time per iteration (ms): %s |' \
		"$i" "$((i * 16))" "$([ "$i" = 1 ] && echo 5000.0 || echo 1000.0)"
	printf ' throughput per GPU (TFLOP/s/GPU): 100.0 | learning rate: 1.000000E-04 | global batch size:'
	printf '    16 | lm loss: 5.000000E+00 | loss scale: 1.0 | grad norm: 1.000 |\n'
done >"$tmp/run/train.log"
SOURCE_DATE_EPOCH=1700000000 "$TS" contract capture --no-probe --set seq_length=4096 \
	--set global_batch_size=16 --set device_count=8 -o "$tmp/run/contract.json" 2>/dev/null
for what in steps diagnose; do
	"$TS" $what --json "$tmp/run" >"$tmp/run.$what.json" 2>/dev/null
done
"$TS" report --format md "$tmp/run" >"$tmp/run.report.md" 2>/dev/null
sed 's/"moe_layers": \[1, 2\]/"moe_layers": [1, 4]/' "$tmp/l4-small.json" >"$tmp/l4-bad.json"
"$TS" memory --model "$tmp/l4-bad.json" >/dev/null 2>"$tmp/l4-bad.err"
echo $? >"$tmp/l4-bad.rc"

python3 - "$tmp" <<'EOF'
import json, sys
tmp = sys.argv[1]
fail = []

def gqa_layer(h, n, g, d, bias=False, qk_norm=False):
    """Q, K, V, O projections (+ Q/K/V biases, + per-head q/k norm weights)
    and the layer's two RMSNorm weights."""
    q, k = n * d, g * d
    return h * (q + 2 * k) + q * h + (q + 2 * k if bias else 0) + (2 * d if qk_norm else 0) + 2 * h

def mlp(h, f):  # gated: gate, up, down
    return 3 * h * f

# name: (total, active, padded vocab delta rows x h x copies, published, tolerance, warnings)
T = {}

# Qwen3-8B (Qwen/Qwen3-8B model card: 8.2B parameters, 6.95B non-embedding).
h, L, V = 4096, 36, 151936
layer = gqa_layer(h, 32, 8, 128, qk_norm=True) + mlp(h, 12288)
tot = V * h + L * layer + h + V * h          # embedding, layers, final norm, untied head
T["qwen3-8b"] = (tot, tot, 0, (8.2e9, 0.01), (8.2e9, 0.01), [])

# Qwen3-4B, the tied Qwen3 (model card: 4.0B parameters, 3.6B
# non-embedding): one V x h matrix, q/k norms.
h, L, V = 2560, 36, 151936
tot = V * h + L * (gqa_layer(h, 32, 8, 128, qk_norm=True) + mlp(h, 9728)) + h
T["qwen3-4b"] = (tot, tot, 0, (4.0e9, 0.01), (3.6e9, 0.01, tot - V * h), [])

# Qwen3-30B-A3B (model card: 30.5B total, 3.3B activated): 48 MoE layers,
# 128 experts of 768, top-8, router 2048 x 128.
h, L, V = 2048, 48, 151936
att = gqa_layer(h, 32, 4, 128, qk_norm=True)
tot = 2 * V * h + h + L * (att + 128 * mlp(h, 768) + h * 128)
act = 2 * V * h + h + L * (att + 8 * mlp(h, 768) + h * 128)
T["qwen3-30b-a3b"] = (tot, act, 0, (30.5e9, 0.01), (3.3e9, 0.02), [])

# Mixtral-8x7B (mistral.ai "Mixtral of experts": 46.7B total, 12.9B active).
h, L, V = 4096, 32, 32000
att = gqa_layer(h, 32, 8, 128)
tot = 2 * V * h + h + L * (att + 8 * mlp(h, 14336) + h * 8)
act = 2 * V * h + h + L * (att + 2 * mlp(h, 14336) + h * 8)
T["mixtral-8x7b"] = (tot, act, 0, (46.7e9, 0.01), (12.9e9, 0.01), [])

# Mistral-Nemo-Base-2407 (Hugging Face model page, safetensors: 12.2B):
# head_dim 128 with hidden 5120 and 32 heads (q width 4096, not 5120).
h, L, V = 5120, 40, 131072
tot = 2 * V * h + h + L * (gqa_layer(h, 32, 8, 128) + mlp(h, 14336))
T["mistral-nemo-12b"] = (tot, tot, 0, (12.2e9, 0.01), (12.2e9, 0.01), [])

# Phi-3-mini-4k-instruct (model card: 3.8B): MHA, head_dim 3072/32 = 96,
# vocab 32064 (Megatron pads to 32128: 64 rows x 2 copies more in memory).
h, L, V = 3072, 32, 32064
tot = 2 * V * h + h + L * (gqa_layer(h, 32, 32, 96) + mlp(h, 8192))
T["phi3-mini-4k"] = (tot, tot, 64 * h * 2, (3.8e9, 0.01), (3.8e9, 0.01),
                     ["sliding-window attention (window 2047 tokens) on 32 of 32 layers"])

# Gemma-3-12B (Gemma 3 technical report, table 1: 10,759M non-embedding,
# 1,012M embedding, 417M vision encoder; the language model only is
# counted, and said so): text_config, head_dim 256 != 3840/16, tied
# embeddings, q/k norms; every 6th layer global, 40 of 48 sliding (1024).
h, L, V = 3840, 48, 262208
layer = gqa_layer(h, 16, 8, 256, qk_norm=True) + mlp(h, 15360)
tot = V * h + L * layer + h                 # tied: no separate head
nonemb = tot - V * h
T["gemma3-12b"] = (tot, tot, 64 * h, (10.759e9, 0.002, nonemb), (10.759e9, 0.002, nonemb),
                   ["sliding-window attention (window 1024 tokens) on 40 of 48 layers",
                    "the vision encoder (vision_config) is not counted"])

# gpt-oss-20b (OpenAI gpt-oss model card, table 1: 20.91B total, 3.61B
# active, the active count without the input embedding): 24 MoE layers, 32
# experts of 2880 (intermediate_size is the expert width), top-4, Q/K/V
# biases; not counted: o_proj and expert biases (6.7M, 0.03 %), sinks.
h, L, V = 2880, 24, 201088
att = gqa_layer(h, 64, 8, 64, bias=True)
tot = 2 * V * h + h + L * (att + 32 * mlp(h, 2880) + h * 32)
act = 2 * V * h + h + L * (att + 4 * mlp(h, 2880) + h * 32)
T["gpt-oss-20b"] = (tot, act, 0, (20.91e9, 0.002), (3.61e9, 0.002, act - V * h),
                    ["sliding-window attention (window 128 tokens) on 12 of 24 layers"])

# Llama-4-Scout-17B-16E (model card: 17B active, 109B total including the
# vision encoder): text_config; every layer MoE (interleave step 1) with 16
# routed experts of 8192, top-1, and one shared expert of 8192, which the
# config does not name (Llama4TextMoe always has it).
h, L, V = 5120, 48, 202048
att = gqa_layer(h, 40, 8, 128)
tot = 2 * V * h + h + L * (att + 16 * mlp(h, 8192) + mlp(h, 8192) + h * 16)
act = 2 * V * h + h + L * (att + 1 * mlp(h, 8192) + mlp(h, 8192) + h * 16)
T["llama4-scout-17b-16e"] = (tot, act, 64 * h * 2, (109e9, 0.02), (17e9, 0.02),
                             ["chunked attention (8192-token chunks) on 36 of 48 layers",
                              "the vision encoder (vision_config) is not counted"])

# DeepSeek-V2-Lite (model card: 15.7B total, 2.4B activated, the activated
# count without the input embedding): MLA with q_lora_rank null (Q projected
# straight from h), kv_lora_rank 512, 16 heads, nope 128 + rope 64, v 128;
# first layer dense (10944), 26 MoE layers of 64 routed (1408, top-6) + 2
# shared experts.
h, L, V, n = 2048, 27, 102400, 16
att = (h * n * (128 + 64)                 # q_proj
       + h * (512 + 64) + 512             # kv_a_proj_with_mqa, kv_a_layernorm
       + 512 * n * (128 + 128)            # kv_b_proj
       + n * 128 * h                      # o_proj
       + 2 * h)                           # the layer's two norms
moe_common = 2 * mlp(h, 1408) + h * 64    # shared experts, router
tot = 2 * V * h + h + L * att + mlp(h, 10944) + 26 * (moe_common + 64 * mlp(h, 1408))
act = 2 * V * h + h + L * att + mlp(h, 10944) + 26 * (moe_common + 6 * mlp(h, 1408))
T["deepseek-v2-lite"] = (tot, act, 0, (15.7e9, 0.01), (2.4e9, 0.025, act - V * h), [])

# The small Llama 4: layers 1 and 2 MoE (4 experts of 32 + shared 32, top-1,
# router 64 x 4), layers 0 and 3 dense (intermediate_size_mlp 128).
h, V = 64, 100
att = gqa_layer(h, 4, 2, 16)
moe = att + 4 * mlp(h, 32) + mlp(h, 32) + h * 4
moe_act = att + 1 * mlp(h, 32) + mlp(h, 32) + h * 4
dense = att + mlp(h, 128)
tot = 2 * V * h + h + 2 * dense + 2 * moe
act = 2 * V * h + h + 2 * dense + 2 * moe_act
T["l4-small"] = (tot, act, 28 * h * 2, None, None, [])

def load(p):
    try:
        with open(p) as f:
            return json.load(f)
    except ValueError:
        return {}                  # refused: no JSON

def codes(doc):
    return [w["message"] for w in doc.get("warnings", []) if w["code"] == "model-feature-not-modelled"]

for name, (tot, act, pad, pub_t, pub_a, warns) in T.items():
    mem = load(f"{tmp}/{name}.mem.json")
    mfu = load(f"{tmp}/{name}.mfu.json")
    plan = load(f"{tmp}/{name}.plan.json")
    if not mem or not mfu:
        fail.append(f"{name}: refused (memory {'ran' if mem else 'refused'},"
                    f" mfu {'ran' if mfu else 'refused'})")
        continue
    for tool, doc in (("memory", mem), ("mfu", mfu)):
        got_t, got_a = doc["model"].get("total_params"), doc["model"].get("active_params")
        if got_t is None:
            fail.append(f"{name}: {tool} --json states no total_params/active_params")
        elif got_t != tot or got_a != act:
            fail.append(f"{name}: {tool} total/active {got_t}/{got_a}, by hand {tot}/{act}"
                        f" ({100 * (got_t - tot) / tot:+.2f} % / {100 * (got_a - act) / act:+.2f} %)")
    per_gpu = mem["params_tp"] + mem["params_replicated"] + mem["params_expert"]
    if abs(per_gpu - (tot + pad)) > 1:
        fail.append(f"{name}: memory's per-GPU parameters {per_gpu}, the count at the padded"
                    f" vocabulary is {tot + pad}")
    for what, pub, ours in (("total", pub_t, tot), ("active", pub_a, act)):
        if pub is None:
            continue
        ref, tol = pub[0], pub[1]
        val = pub[2] if len(pub) > 2 else ours
        if abs(val - ref) / ref > tol:
            fail.append(f"{name}: {what} {val / 1e9:.3f} B is {100 * (val - ref) / ref:+.2f} %"
                        f" from the published {ref / 1e9} B (tolerance {100 * tol} %)")
    for tool, doc in (("memory", mem), ("mfu", mfu), ("plan", plan)):
        got = codes(doc)
        if len(got) != len(warns) or any(not any(w in g for g in got) for w in warns):
            fail.append(f"{name}: {tool} --json not-modelled warnings {got}, want {warns}")
    for tool in ("mem", "mfu"):
        with open(f"{tmp}/{name}.{tool}.err") as f:
            err = f.read()
        for w in warns:
            if w not in err:
                fail.append(f"{name}: {tool} text: no warning '{w}'")
        if "no expert FFN width" in err and name in ("mixtral-8x7b", "gpt-oss-20b"):
            fail.append(f"{name}: 'no expert FFN width' warned, but the family defines"
                        " intermediate_size as the expert width")

# torchtitan: 6 x (active - input embedding) + 12 L n d s per token.
tot, act = T["llama4-scout-17b-16e"][0:2]
want = 6 * (act - 202048 * 5120) + 12 * 48 * 40 * 128 * 4096
got = load(f"{tmp}/scout-titan.json").get("flops_per_token")
if got != want:
    fail.append(f"llama4-scout torchtitan FLOPs/token {got}, by hand {want}" +
                (f" ({100 * (got - want) / want:+.2f} %)" if got else " (refused)"))

with open(f"{tmp}/report.md") as f:
    rep = f.read().replace("\\", "")
for w in T["gemma3-12b"][5]:
    if w not in rep:
        fail.append(f"gemma3-12b: report --layout --model: no warning '{w}'")

w = T["gpt-oss-20b"][5][0]
for what in ("steps", "diagnose"):
    got = codes(load(f"{tmp}/run.{what}.json"))
    if len(got) != 1 or w not in got[0]:
        fail.append(f"run with gpt-oss config.json: {what} --json not-modelled warnings {got}")
with open(f"{tmp}/run.report.md") as f:
    if w not in f.read():
        fail.append(f"run with gpt-oss config.json: report: no warning '{w}'")

with open(f"{tmp}/l4-bad.rc") as f:
    rc = f.read().strip()
with open(f"{tmp}/l4-bad.err") as f:
    err = f.read()
if rc != "2" or "moe_layers names layer 4" not in err:
    fail.append(f"moe_layers [1, 4] of 4 layers: exit {rc}, stderr {err.strip()!r}"
                " (want exit 2 naming layer 4)")

for m in fail:
    print("FAIL:", m)
sys.exit(1 if fail else 0)
EOF
