#!/usr/bin/env bash
# The TFLOP/s/GPU a Megatron log prints against the model FLOP rate
# recomputed from the model (Megatron's current formula, docs/mfu.md): one
# comparison in the run model, one warning (logged-tflops-mismatch) when
# they differ by more than 1 % (flops-memory-workflow 5.4 item 5), carried
# by steps (text, --json, --csv stderr), validate (text, --json),
# diagnose and advise (text, --json), ab and the HTML and Markdown
# report; and diagnose's model rate is validate's recomputed rate.
# Before 2026-12-04 only validate compared the two, and diagnose printed
# "model 100.2" beside "logged 130.3" without a word.
#
# The model, by hand: a GPT with L = 4 layers, h = 1024, 16 heads (MHA, so
# q = k = h), f = 4h without gating (gamma = 2), vocabulary 32000 (already
# a multiple of 128, so V = 32000 at TP 1), s = 1024, B = 16, W = 8 GPUs.
# Megatron's current formula (causal halving), T = B s = 16384:
#   attn_proj = T 6 L (h (q + 2k) + q h)   = T 24 L h^2 = 1.649267441664e12
#   core_attn = B s^2 L 6 q                = 4.12316860416e11
#   dense_mlp = T 6 h gamma f L            = T 48 L h^2 = 3.298534883328e12
#   logits    = T 6 h V                    = 3.221225472e12
#   F = 8.581344657408e12 FLOPs per step
# At 10.7 ms per step: F / (0.0107 s x 1e12 x 8) = 100.2494 TFLOP/s/GPU.
# The 2024 formula (non-causal attention, 12 B s L h^2 [(1 + g/n + s/h) q/h
# + f/h + V/(2 L h)] = 12 B s L h^2 x 10.90625 = 8.993661517824e12) gives
# 105.0661 at the same step time.
#
# Cases: args-* runs carry Megatron's arguments block (the model and the
# shape from it); contract-* runs carry a config.json of the same model
# and a contract with seq_length, global_batch_size and device_count, and
# a log without an arguments block (the shape from the contract). Logged
# rate: "ok" the truth (100.2, Megatron's one decimal), "high" 30 % above
# it (130.3), "old" the 2024 formula's (105.1). args-nogpus: the block
# without world_size and no contract, so no source states the GPU count.
set -u
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }

python3 - "$tmp" <<'PY'
import json, os, sys
d = sys.argv[1]
L, h, n, f, V, s, B, W, ms = 4, 1024, 16, 4096, 32000, 1024, 16, 8, 10.7
T = B * s
attn_proj = T * 6 * L * (h * (h + 2 * h) + h * h)
core_attn = B * s * s * L * 6 * h
dense_mlp = T * 6 * h * 2 * f * L
logits = T * 6 * h * V
assert (attn_proj, core_attn, dense_mlp, logits) == (1649267441664, 412316860416, 3298534883328,
                                                     3221225472000)
F = attn_proj + core_attn + dense_mlp + logits
assert F == 8581344657408
truth = F / (ms * 1e-3 * 1e12 * W)
old = 12 * B * s * L * h * h * 10.90625 / (ms * 1e-3 * 1e12 * W)
rates = {"ok": "%.1f" % truth, "high": "%.1f" % (truth * 1.3), "old": "%.1f" % old}
args = [("global_batch_size", B), ("hidden_size", h), ("ffn_hidden_size", f),
        ("num_attention_heads", n), ("num_layers", L), ("seq_length", s),
        ("max_position_embeddings", s), ("swiglu", False), ("vocab_size", V),
        ("tensor_model_parallel_size", 1), ("world_size", W)]
def log(rate, with_args):
    out = ""
    if with_args:
        out += "------------------------ arguments ------------------------\n"
        for k, v in args:
            out += "  %s %s %s\n" % (k, "." * (48 - len(k)), v)
        out += "-------------------- end of arguments ---------------------\n"
    for i in range(1, 121):
        out += (" iteration %8d/     120 | consumed samples: %12d | elapsed time per iteration "
                "(ms): %.1f | throughput per GPU (TFLOP/s/GPU): %s | learning rate: 1.000000E-04 "
                "| global batch size:    16 | lm loss: %.6E | loss scale: 1.0 | grad norm: 1.000 | "
                "number of skipped iterations:   0 | number of nan iterations:   0 |\n"
                % (i, B * i, 50.0 if i == 1 else ms, rate, 5 - i * 0.001))
    return out
config = {"model_type": "gpt2", "n_embd": h, "n_layer": L, "n_head": n, "n_inner": f,
          "vocab_size": V, "n_positions": s, "activation_function": "gelu_new",
          "tie_word_embeddings": True}
for case, rate in rates.items():
    p = os.path.join(d, "args-" + case)
    os.makedirs(p)
    open(os.path.join(p, "train.log"), "w").write(log(rate, True))
    p = os.path.join(d, "contract-" + case)
    os.makedirs(p)
    open(os.path.join(p, "train.log"), "w").write(log(rate, False))
    json.dump(config, open(os.path.join(p, "config.json"), "w"))
# the arguments block without world_size: the GPU count is stated nowhere
os.makedirs(os.path.join(d, "args-nogpus"))
args = [a for a in args if a[0] != "world_size"]
open(os.path.join(d, "args-nogpus", "train.log"), "w").write(log(rates["ok"], True))
open(os.path.join(d, "rates"), "w").write(" ".join(rates[k] for k in ("ok", "high", "old")))
PY
for c in ok high old; do
	SOURCE_DATE_EPOCH=1700000000 "$TS" contract capture --no-probe --set seq_length=1024 \
		--set global_batch_size=16 --set device_count=8 -o "$tmp/contract-$c/contract.json" ||
		bad "contract capture"
done
read -r r_ok r_high r_old <"$tmp/rates"
[ "$r_ok $r_high $r_old" = "100.2 130.3 105.1" ] || bad "generated rates $r_ok $r_high $r_old"
code=logged-tflops-mismatch
words="differs from the model FLOP rate"

# every output of every command: the warning for high and old, none for ok
check() {  # check RUN WANT(0|1)
	local run=$1 want=$2 out what
	for what in "steps" "steps --json" "steps --csv" "validate" "validate --json" \
		    "diagnose" "diagnose --json" "advise" "advise --json" "report --format html" \
		    "report --format md"; do
		case $what in
		"steps --csv") out=$("$TS" steps --csv "$tmp/$run" 2>&1 >/dev/null) ;;
		*) out=$("$TS" $what "$tmp/$run" 2>/dev/null) ;;
		esac
		local pat=$words
		case $what in *--json|*html) pat=$code ;; esac
		if grep -qF -- "$pat" <<<"$out"; then
			[ "$want" = 1 ] || bad "$run: $what carries '$pat'"
		else
			[ "$want" = 0 ] || bad "$run: $what lacks '$pat'"
		fi
	done
}
for kind in args contract; do
	check "$kind-ok" 0
	check "$kind-high" 1
	check "$kind-old" 1
	# the warning names both rates and the difference (130.3 / 100.2494 - 1)
	out=$("$TS" steps "$tmp/$kind-high" 2>/dev/null)
	grep -F "$words" <<<"$out" | grep -qF "130.3 TFLOP/s/GPU" || bad "$kind-high: no logged rate 130.3 in the warning"
	grep -F "$words" <<<"$out" | grep -qF "100.25 TFLOP/s/GPU" || bad "$kind-high: no model rate 100.25 in the warning"
	grep -F "$words" <<<"$out" | grep -qF "+29.98 %" || bad "$kind-high: no difference +29.98 % in the warning"
	grep -F "$words" <<<"$out" | grep -q "matches formula" && bad "$kind-high: names an older formula"
	# 105.1 / 100.2494 - 1 = +4.84 %; 105.1 / 105.0661 - 1 = 0.03 %: the 2024 formula
	out=$("$TS" steps "$tmp/$kind-old" 2>/dev/null)
	grep -F "$words" <<<"$out" | grep -qF "+4.84 %" || bad "$kind-old: no difference +4.84 % in the warning"
	grep -F "$words" <<<"$out" | grep -qF "mlm2024" || bad "$kind-old: the warning does not name mlm2024"
	# ab names the run it is about
	"$TS" ab "$tmp/$kind-ok" "$tmp/$kind-high" 2>/dev/null | grep -F "$words" |
		grep -qF "$tmp/$kind-high:" || bad "$kind: ab does not carry the candidate's warning"
	"$TS" ab "$tmp/$kind-ok" "$tmp/$kind-high" 2>/dev/null | grep -F "$words" |
		grep -qF "$tmp/$kind-ok:" && bad "$kind: ab warns about the baseline"
	# diagnose's logged rate line says how far off it is
	"$TS" diagnose "$tmp/$kind-high" 2>/dev/null | grep "^logged FLOP rate" |
		grep -qF "+29.98 % off the model's" || bad "$kind-high: diagnose's logged rate line has no '+29.98 % off'"
	"$TS" diagnose "$tmp/$kind-ok" 2>/dev/null | grep "^logged FLOP rate" |
		grep -q "off the model" && bad "$kind-ok: diagnose's logged rate line says it is off"
	# validate's verdicts are unchanged: pass within 1 %, fail above
	"$TS" validate --json --accept-auto-window "$tmp/$kind-ok" 2>/dev/null | grep -A2 '"name": "tflops"' |
		grep -q '"status": "pass"' || bad "$kind-ok: validate tflops not pass"
	"$TS" validate --json --accept-auto-window "$tmp/$kind-high" 2>/dev/null | grep -A2 '"name": "tflops"' |
		grep -q '"status": "fail"' || bad "$kind-high: validate tflops not fail"
	# diagnose's model rate is the recomputed one: F / (10.7 ms x 8 GPUs)
	for c in ok high old; do
		got=$("$TS" diagnose --json "$tmp/$kind-$c" 2>/dev/null |
			sed -n 's/.*"model_tflops_per_gpu": \([0-9.]*\).*/\1/p')
		[ "$got" = 100.2494 ] || bad "$kind-$c: diagnose model_tflops_per_gpu '$got', want 100.2494"
	done
done
# diagnose's model line names where each value of the shape came from (the
# Markdown report's, its escapes taken out)
"$TS" report --format md "$tmp/contract-ok" 2>/dev/null | grep -F "model FLOP rate" | sed 's/\\//g' |
	grep -F "seq 1024 (workload.seq_length in the contract) x 16 sequences/step (workload.global_batch_size in the contract) on 8 GPUs (workload.device_count in the contract)" \
	>/dev/null || bad "contract-ok: the model line does not name the contract's shape"
"$TS" report --format md "$tmp/args-ok" 2>/dev/null | grep -F "model FLOP rate" | sed 's/\\//g' |
	grep -F "seq 1024 (seq_length in the Megatron arguments) x 16 sequences/step (global_batch_size in the Megatron arguments) on 8 GPUs (world_size in the Megatron arguments)" \
	>/dev/null || bad "args-ok: the model line does not name the arguments' shape"
# no GPU count in the run: neither validate nor diagnose has a model rate,
# and both name device_count (diagnose took 1 GPU and printed 801.995,
# 8 x the truth, where validate skipped)
"$TS" validate "$tmp/args-nogpus" 2>/dev/null | grep '^tflops' | grep skip |
	grep -qF "device_count is not stated" || bad "args-nogpus: validate does not skip naming device_count"
"$TS" diagnose "$tmp/args-nogpus" 2>/dev/null | grep -qF "device_count is not stated" ||
	bad "args-nogpus: diagnose does not name device_count"
"$TS" diagnose --json "$tmp/args-nogpus" 2>/dev/null | grep -qF '"model_tflops_per_gpu": null' ||
	bad "args-nogpus: diagnose --json has a model rate"
finish
