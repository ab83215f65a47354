#!/usr/bin/env bash
# NeMo 2's MegatronStrategy(log_memory_usage=True) logs, on each training
# line, peak_memory_usage = torch.cuda.max_memory_reserved() and
# memory_allocated = torch.cuda.memory_allocated(), in bytes
# (nemo/lightning/pytorch/strategies/megatron_strategy.py, training_step);
# recent NeMo-Run consoles also carry tokens_per_sec_per_gpu and the last
# val_loss. steps keeps the first as the rank's max reserved bytes and the
# second as allocated bytes (both were dropped: no memory at all).
set -u
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
python3 - "$tmp" <<'PY'
import sys
t = sys.argv[1]
out = []
for i in range(100):
    step = 5.276 if i == 0 else 2.0 + 0.01 * (i % 7)
    alloc = 44271689728 + 1000 * (i % 5)
    extra = "" if i == 0 else " | consumed_samples: %d" % (4 * (i + 1))
    out.append("retraining/0 [default0]:Training epoch 0, iteration %d/99 | lr: 1.961e-07 | "
               "global_batch_size: 4 | global_step: %d | peak_memory_usage: %d | memory_allocated: %d | "
               "reduced_train_loss: %.4g | train_step_timing in s: %.4g | tokens_per_sec_per_gpu: "
               "1.073e+04%s | val_loss: 2.861 | val_ppl: 17.57"
               % (i, i, 70833405952 + 2**20 * (i // 50), alloc, 15 - i * 0.01, step, extra))
open(t + "/nemo.log", "w").write("\n".join(out) + "\n")
PY
"$TS" steps --json "$tmp/nemo.log" >"$tmp/nemo.json" || { echo "steps failed"; exit 1; }
python3 - "$tmp/nemo.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
bad = []
if d["format"] != "nemo2" or d["iterations"] != 100:
    bad.append("format %s, %s records" % (d["format"], d["iterations"]))
r = d["ranks"][0] if d["ranks"] else {}
# the largest peak_memory_usage: 70833405952 + 2**20 (iterations 50-99)
if r.get("max_reserved_bytes") != 70833405952 + 2**20:
    bad.append("max reserved %s, want %d" % (r.get("max_reserved_bytes"), 70833405952 + 2**20))
# allocated bytes: the largest memory_allocated, 44271689728 + 4000, is a floor of the peak
if r.get("max_allocated_bytes") is None or r["max_allocated_bytes"] < 44271689728 + 4000:
    bad.append("allocated %s, want >= %d" % (r.get("max_allocated_bytes"), 44271689728 + 4000))
if d["loss"]["final"] != 14.01:
    bad.append("final loss %s (val_loss must not be the training loss)" % d["loss"]["final"])
for b in bad:
    print("FAIL", b)
sys.exit(1 if bad else 0)
PY
rc=$?
[ $rc = 0 ] && echo "steps-nemo2-memory: ok"
exit $rc
