#!/usr/bin/env bash
# A Megatron log whose arguments block holds the model's shape but no
# vocabulary size (vocab_size None, as Megatron prints an unset argument,
# when the tokenizer gives it at run time): validate and diagnose say that
# the block lacks it, naming the log and "model vocabulary size is not
# stated"; before 2026-12-04 both said there was no model config and asked
# for the arguments block the log already has. The same block with
# vocab_size 128256 gives the model (no "model config" item at all).
set -u
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }

python3 - "$tmp" <<'PY'
import os, sys
d = sys.argv[1]
def log(vocab):
    s = "------------------------ arguments ------------------------\n"
    for k, v in [("global_batch_size", 16), ("hidden_size", 4096), ("ffn_hidden_size", 14336),
                 ("num_attention_heads", 32), ("num_layers", 32), ("seq_length", 2048),
                 ("swiglu", True), ("vocab_size", vocab), ("world_size", 8)]:
        s += "  %s %s %s\n" % (k, "." * (48 - len(k)), v)
    s += "-------------------- end of arguments ---------------------\n"
    for i in range(1, 121):
        s += (" iteration %8d/     120 | consumed samples: %12d | elapsed time per iteration "
              "(ms): %.1f | throughput per GPU (TFLOP/s/GPU): 300.0 | learning rate: 1.000000E-04 "
              "| global batch size:    16 | lm loss: %.6E | loss scale: 1.0 | grad norm: 1.000 | "
              "number of skipped iterations:   0 | number of nan iterations:   0 |\n"
              % (i, 16 * i, 1000.0 + (i % 7), 5 - i * 0.001))
    return s
for name, vocab in (("novocab", None), ("vocab", 128256)):
    os.makedirs(os.path.join(d, name))
    open(os.path.join(d, name, "train.log"), "w").write(log(vocab))
PY

want="does not give the model shape (model vocabulary size is not stated"
out=$("$TS" diagnose "$tmp/novocab" 2>&1)
grep -qF "$want" <<<"$out" || bad "diagnose text: no '$want'"
grep -q "no model config" <<<"$out" && bad "diagnose text still says 'no model config'"
grep -qF "arguments block of $tmp/novocab/train.log" <<<"$out" || bad "diagnose text does not name the log"
"$TS" diagnose --json "$tmp/novocab" 2>/dev/null | grep -qF "$want" || bad "diagnose --json: no '$want'"
out=$("$TS" validate "$tmp/novocab" 2>&1)
grep -qF "$want" <<<"$out" || bad "validate: no '$want'"
grep -q "no model config" <<<"$out" && bad "validate still says 'no model config'"
out=$("$TS" diagnose "$tmp/vocab" 2>&1)
grep -qi "model config" <<<"$out" && bad "diagnose of the full block lists a model config item"
finish
