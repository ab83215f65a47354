#!/usr/bin/env bash
# torchtitan's FLOP count for the models people train with it: Llama 3
# (GQA), Qwen3 (per-head q/k RMSNorm weights, a head tied to the embedding,
# head_dim 128 != hidden / heads) and DeepSeek-V3 (MLA attention, MoE with
# a dense first layer, MTP when the job builds it). torchtitan logs tflops
# = F_tok x tokens/s per GPU / 1e12, F_tok = 6 x the parameters a token
# passes through (input embedding excluded, routed experts at K/E, norms
# and router included) + 6 x heads x (qk + v head dims) x seq per layer.
# Each count below is written out by hand from the model's shapes, as
# torchtitan's modules hold them (docs/mfu.md), and compared with `mfu
# --formula torchtitan` and the two older versions (torchtitan-headdims:
# a tied head not counted; torchtitan-dim: also hidden / heads as the
# attention's head width). Then a logged rate from the older version is
# named by `mfu --logged-tflops`, and the run commands check torchtitan
# logs of Qwen3 and DeepSeek models against that count. Before 2026-12-04
# MLA was refused (no count at all), Qwen3's q/k norms were missing and no
# older version was known.
set -u
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
bad() { echo "FAIL $*"; fail=1; }

# ---- the configs (Hugging Face config.json keys)
cat >"$tmp/qwen3.json" <<'JSON'
{"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": 1024,
 "intermediate_size": 3072, "num_hidden_layers": 28, "num_attention_heads": 16,
 "num_key_value_heads": 8, "head_dim": 128, "hidden_act": "silu", "vocab_size": 151936,
 "max_position_embeddings": 40960, "rms_norm_eps": 1e-06, "tie_word_embeddings": true,
 "attention_bias": false, "use_sliding_window": false, "sliding_window": null}
JSON
cat >"$tmp/dsv3.json" <<'JSON'
{"model_type": "deepseek_v3", "hidden_size": 2048, "intermediate_size": 10944,
 "moe_intermediate_size": 1408, "num_hidden_layers": 27, "num_attention_heads": 16,
 "num_key_value_heads": 16, "n_routed_experts": 64, "n_shared_experts": 2,
 "num_experts_per_tok": 6, "first_k_dense_replace": 1, "moe_layer_freq": 1,
 "q_lora_rank": null, "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
 "v_head_dim": 128, "hidden_act": "silu", "vocab_size": 102400, "tie_word_embeddings": false,
 "num_nextn_predict_layers": 1, "rms_norm_eps": 1e-06}
JSON
cat >"$tmp/llama3.json" <<'JSON'
{"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
 "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "hidden_act": "silu",
 "vocab_size": 128256, "tie_word_embeddings": false}
JSON

# ---- the hand counts (parameters per token; attention per token per seq)
# Qwen3-0.6B: h 1024, 28 layers, 16 heads of 128 (q 2048), 8 KV heads (k 1024)
q_attn=$((1024 * 2048 + 2 * 1024 * 1024 + 2048 * 1024)) # wq, wk + wv, wo: 6,291,456
q_qk=$((2 * 128))                                    # q_norm, k_norm weights
q_norms=$((2 * 1024))                                # attention and ffn norms
q_mlp=$((3 * 1024 * 3072))                           # w1, w2, w3: 9,437,184
q_layers=$((28 * (q_attn + q_qk + q_norms + q_mlp))) # 440,466,432 (0.44 B non-embedding)
q_head=$((151936 * 1024))                            # the tied matrix: 155,582,464
q_N=$((q_layers + 1024 + q_head))                    # + final norm: 596,049,920 (0.6 B)
q_Nold=$((q_layers + 1024))                          # older: the tied matrix subtracted
[ $q_layers = 440466432 ] && [ $q_N = 596049920 ] || bad "hand count Qwen3 N=$q_N"
q_att() { echo $((28 * 6 * 16 * (128 + 128) * $1)); } # 6 n (d + d) s per layer
q_attdim() { echo $((12 * 28 * 16 * (1024 / 16) * $1)); } # d = h / n = 64
# DeepSeek-V3 16B (the DeepSeek-V2-Lite shape): h 2048, 27 layers (1 dense),
# 16 heads, MLA without q compression, r_kv 512, nope 128, rope 64, v 128
d_attn=$((2048 * 16 * (128 + 64) + 2048 * (512 + 64) + 512 + 512 * 16 * (128 + 128) + 16 * 128 * 2048))
d_attn=$((d_attn + 2 * 2048))                        # wq wkv_a kv_norm wkv_b wo + 2 norms: 13,767,168
d_dense=$((3 * 2048 * 10944))                        # 67,239,936
d_moe=$((2048 * 64 + 3 * 2048 * 2 * 1408 + 64 * 3 * 2048 * 1408 * 6 / 64)) # router, shared, routed at 6/64
d_head=$((102400 * 2048))
d_N=$((27 * d_attn + d_dense + 26 * d_moe + 2048 + d_head))
[ $d_attn = 13767168 ] && [ $d_moe = 69337088 ] && [ $d_N = 2451435008 ] || bad "hand count DSv3 N=$d_N"
d_att() { echo $((27 * 6 * 16 * ((128 + 64) + 128) * $1)); } # 6 n (d_qk + d_r + d_v) s
d_attdim() { echo $((12 * 27 * 16 * (2048 / 16) * $1)); }
# one MTP layer: a MoE layer, enorm + hnorm + mtp_norm, eh_proj, the head again
d_mtp=$((d_attn + d_moe + 3 * 2048 + 2 * 2048 * 2048 + d_head))
# Llama-3-8B (tests/scripts/steps-titan.sh has it by parts): 7,504,924,672
l_N=$((32 * (4096 * 4096 + 2 * 4096 * 1024 + 4096 * 4096 + 3 * 4096 * 14336 + 2 * 4096) + 4096 + 128256 * 4096))
l_att() { echo $((12 * 32 * 32 * 128 * $1)); }

# ---- mfu --formula: FLOPs per token, each model and version
check() { # name config seq formula want [extra flags]
	local name=$1 cfg=$2 seq=$3 f=$4 want=$5
	shift 5
	local got
	got=$("$TS" mfu --model "$tmp/$cfg" --seq "$seq" --gbs 8 --formula "$f" --json "$@" 2>/dev/null |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["flops_per_token"])' 2>/dev/null)
	[ "$got" = "$want" ] || bad "$name $f s=$seq $*: flops_per_token $got, want $want"
}
check qwen3-0.6b qwen3.json 4096 torchtitan $((6 * q_N + $(q_att 4096)))              # 6,394,871,808
check qwen3-0.6b qwen3.json 4096 torchtitan-headdims $((6 * q_Nold + $(q_att 4096)))  # 5,461,377,024
check qwen3-0.6b qwen3.json 4096 torchtitan-dim $((6 * q_Nold + $(q_attdim 4096)))    # 4,052,090,880
check dsv3-16b dsv3.json 4096 torchtitan $((6 * d_N + $(d_att 4096)))                 # 18,105,996,288
check dsv3-16b dsv3.json 4096 torchtitan-headdims $((6 * d_N + $(d_att 4096)))
check dsv3-16b dsv3.json 4096 torchtitan-dim $((6 * d_N + $(d_attdim 4096)))          # 17,426,519,040
check dsv3-16b dsv3.json 4096 torchtitan $((6 * (d_N + d_mtp) + $(d_att 4096) * 28 / 27)) --mtp 1
check llama3-8b llama3.json 8192 torchtitan $((6 * l_N + $(l_att 8192)))              # 57,914,449,920
check llama3-8b llama3.json 8192 torchtitan-headdims $((6 * l_N + $(l_att 8192)))
check llama3-8b llama3.json 8192 torchtitan-dim $((6 * l_N + $(l_att 8192)))
# the config's num_nextn_predict_layers does not build MTP in torchtitan
"$TS" mfu --model "$tmp/dsv3.json" --seq 4096 --gbs 8 --formula torchtitan --json 2>/dev/null |
	grep -q '"mtp_layers": 0' || bad "dsv3-16b: torchtitan counted the config's MTP layer"

# ---- a rate an older torchtitan logged for Qwen3-0.6B: 1 s a step on 8
# GPUs, 32,768 tokens: 5,461,377,024 x 32,768 / 8 / 1e12 = 22.3698 TFLOP/s
old=$(python3 -c "print('%.4f' % ($((6 * q_Nold + $(q_att 4096))) * 32768 / 8 / 1e12))")
"$TS" mfu --model "$tmp/qwen3.json" --seq 4096 --gbs 8 --gpus 8 --step-time 1 --formula torchtitan \
	--logged-tflops "$old" --json >"$tmp/logged.json" 2>/dev/null
rc=$?
"$TS" mfu --model "$tmp/qwen3.json" --seq 4096 --gbs 8 --gpus 8 --step-time 1 --formula torchtitan \
	--logged-tflops "$old" >"$tmp/logged.txt" 2>&1
[ $rc = 1 ] || bad "logged $old: exit $rc, want 1 (a mismatch with today's count)"
python3 - "$tmp/logged.json" <<'PY' || fail=1
import json, sys
c = json.load(open(sys.argv[1]))["logged_check"]
if not any(v["variant"] == "formula torchtitan-headdims, as configured" for v in c["explained_by"]):
    print("FAIL logged: explained_by %s does not name torchtitan-headdims" % c["explained_by"])
    sys.exit(1)
PY
grep -q "explained by formula torchtitan-headdims" "$tmp/logged.txt" ||
	bad "logged: the text does not name torchtitan-headdims"

# ---- the run commands: torchtitan logs (steps-titan-gen.py: seq 8192,
# global batch 8, 8 GPUs) whose tflops is F x tps / 1e12 for a given F
run() { # dir config F
	mkdir "$tmp/$1"
	python3 "$here/steps-titan-gen.py" "$tmp/$1/train.log" "{\"flops_per_token\": $3, \"seed\": 21}" || exit 1
	cp "$tmp/$2" "$tmp/$1/config.json"
	SOURCE_DATE_EPOCH=1700000000 "$TS" contract capture --no-probe --set seq_length=8192 \
		--set global_batch_size=8 --set device_count=8 -o "$tmp/$1/contract.json" >/dev/null 2>&1
	"$TS" validate --json "$tmp/$1" >"$tmp/validate-$1.json" 2>/dev/null
	"$TS" validate "$tmp/$1" >"$tmp/validate-$1.txt" 2>&1
	"$TS" steps --json "$tmp/$1" >"$tmp/steps-$1.json" 2>/dev/null
	"$TS" diagnose --json "$tmp/$1" >"$tmp/diagnose-$1.json" 2>/dev/null
}
run qnow qwen3.json $((6 * q_N + $(q_att 8192)))     # today's torchtitan
run qold qwen3.json $((6 * q_Nold + $(q_att 8192)))  # the head_dims version: 12 % below
run dnow dsv3.json $((6 * d_N + $(d_att 8192)))      # MLA: was skipped, no count
python3 - "$tmp" <<'PY' || fail=1
import json, re, sys
t = sys.argv[1]
bad = []
def warned(f):
    return any(w["code"] == "logged-tflops-mismatch" for w in json.load(open("%s/%s" % (t, f)))["warnings"])
for r, status, warn, name in (("qnow", "pass", False, None), ("dnow", "pass", False, None),
                              ("qold", "fail", True, "torchtitan-headdims")):
    v = {c["name"]: c for c in json.load(open("%s/validate-%s.json" % (t, r)))["checks"]}["tflops"]
    m = re.search(r"(?:within|differs by) ([0-9.]+) %", v["evidence"])
    if v["status"] != status or not m or (status == "pass" and float(m.group(1)) > 0.2):
        bad.append("%s: validate tflops %s, want %s against torchtitan's count" % (r, v, status))
    if name and name not in v["evidence"]:
        bad.append("%s: validate tflops evidence does not name %s: %s" % (r, name, v["evidence"]))
    for f in ("validate-%s.json" % r, "steps-%s.json" % r, "diagnose-%s.json" % r):
        if warned(f) != warn:
            bad.append("%s: logged-tflops-mismatch %s" % (f, "missing" if warn else "raised on torchtitan's own count"))
    if name and name not in open("%s/validate-%s.txt" % (t, r)).read():
        bad.append("%s: validate's text does not name %s" % (r, name))
for b in bad:
    print("FAIL", b)
sys.exit(1 if bad else 0)
PY
finish
