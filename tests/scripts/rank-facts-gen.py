#!/usr/bin/env python3
# Multi-rank runs with known truth for tests/scripts/rank-facts.sh: every
# command that takes a run (steps, validate, diagnose, advise, report, ab)
# must state the same per-rank facts of it. Usage: rank-facts-gen.py DIR
#
# The model (tflops-travel.sh works it by hand): a GPT with L = 4, h = 1024,
# 16 heads, f = 4h, V = 32000, s = 1024, B = 16 on W = 2 GPUs, Megatron's
# current formula F = 8.581344657408e12 FLOPs per step. Each rank logs
# 120 iterations; iteration 1 takes 50 ms.
#
# Runs (each a directory with the Megatron arguments block on rank 0's
# log, so the model and the job's shape are stated):
#   rates     rank0.log and rank1.log, both 10.7 ms per step; rank 0 logs
#             the true rate (F / (0.0107 s 1e12 2) = 401.0 TFLOP/s/GPU),
#             rank 1 30 % above it (521.3): the run's logged rate is the
#             lowest rank's (401.0, within 1 % of the model's), one value
#             in every command
#   slow      one torchrun --tee console, lines "[defaultK]:" (K = 0, 1):
#             rank 0 10.7 ms, rank 1 1.5 x slower (16.05 ms): the step
#             time is the slowest rank's, 16.05 ms, rank 1 the slowest
#   slowrank  as slow, each line after "[rankK]:" instead
#   files     as slow, rank 0's lines in a.log and rank 1's in b.log, no
#             rank in a line or a name: each file is a rank (a.log 0, b.log
#             1, in path order)
#   nan       rank0.log and rank1.log at 10.7 ms; rank 1 prints
#             "lm loss: nan" at iteration 60 (rank 0 stays finite): the run
#             is non-finite from iteration 60 in every command
#   nancount  as nan, but rank 1 prints "number of nan iterations: 1" at
#             iteration 60 and no loss (Megatron prints only losses > 0):
#             non-finite from iteration 60 in every command, 60 out of
#             every window
#   skip      as nan, but rank 1 counts a skipped iteration at 70: one
#             skipped iteration, 70 out of every window
#   mtp       as nan, but what rank 1 prints NaN at iteration 60 is an
#             extra loss ("mtp_1 loss: nan"), its lm loss finite: non-finite
#             from 60, 60 out of every window
#   dup       the slow console without its "[defaultK]:" prefixes: one
#             rank as far as the file tells, each iteration logged twice
#             (rank 0's 10.7 ms line, then rank 1's 16.05 ms); the later
#             line is the slower, 16.05 ms, with the repeated-records warning
#             in every command
#   dupfirst  dup with the slower rank's line first in each iteration
#             (16.05 ms, then 10.7 ms): the step time is still the slowest
#             line's, 16.05 ms (a synchronous step waits for its slowest
#             rank; keeping the later line read 10.7 ms)
#   nemorun   a NeMo-Run console, "retraining/0 [default0]:" and
#             "retraining/0 [default1]:" lines (torchx's role/replica,
#             then torchrun's local rank), NeMo 2 training lines with
#             train_step_timing 3.0 s on rank 0 and 2.0 s on rank 1 (rank 0
#             1.5 x slower, its line first): two ranks, the step time 3.0 s,
#             rank 0 the slowest
#   nodes2    a NeMo-Run console of 2 nodes x 2 GPUs, "retraining/N
#             [defaultK]:" (N the node, K the local rank), the same NeMo 2
#             lines; global rank N x 2 + K: rank 2 (node 1's local rank 0)
#             takes 4.0 s, the others 2.0 s, node 1's lines first: four
#             ranks 0-3, the step time 4.0 s, rank 2 the slowest (reading
#             K as the rank gave two ranks, and each iteration the later
#             line's time)
#   nodestated  2 nodes whose local rank 0 alone logs, torchrun's launch
#             configuration "nproc_per_node   : 4" printed first: ranks 0
#             and 4 (4 x 1 + 0), rank 4 at 4.0 s the slowest, no warning
#   nodeguess as nodestated without the configuration: nproc_per_node
#             cannot be told (each node shows local rank 0 only), ranks 0
#             and 1 taken (1 x 1 + 0), with the nproc-per-node-unknown
#             warning in every command
#   nanboth   as nan, but rank 0 prints "lm loss: nan" at iteration 61 and
#             rank 1 at 60: rank 1 shows the first NaN, rank1.log line 60
#   nanconsole  the slow console (the arguments block after "[default0]:",
#             13 lines, then rank 0's and rank 1's line of each iteration)
#             with rank 1's loss NaN at iteration 60: line 13 + 2 x 59 + 2
#             = 133, rank 1
#   datashare metrics_rank0.jsonl and metrics_rank1.jsonl, 120 iterations;
#             on odd iterations rank 0 takes 120 ms of which the data
#             loader 40 ms and rank 1 100 ms (data 10 ms), on even ones the
#             other way round: every step is 120 ms, its slowest rank's,
#             with 40 ms of data loading, a share of 40 / 120 = 33.3 % (one
#             rank's own series: (40 + 10) / (120 + 100) = 22.7 %)
#   pp        metrics_rank0.jsonl without a loss (a first pipeline stage),
#             120 ms per step, and metrics_rank1.jsonl with its losses,
#             100 ms: the run has 120 logged losses, all finite (rank 0,
#             the slowest, logs none)
import os, sys
d = sys.argv[1]
L, h, n, f, V, s, B, W = 4, 1024, 16, 4096, 32000, 1024, 16, 2
F = 8581344657408
ms = 10.7
truth = F / (ms * 1e-3 * 1e12 * W)
args = [("global_batch_size", B), ("hidden_size", h), ("ffn_hidden_size", f),
        ("num_attention_heads", n), ("num_layers", L), ("seq_length", s),
        ("max_position_embeddings", s), ("swiglu", False), ("vocab_size", V),
        ("tensor_model_parallel_size", 1), ("world_size", W)]

def args_block(prefix=""):
    out = prefix + "------------------------ arguments ------------------------\n"
    for k, v in args:
        out += prefix + "  %s %s %s\n" % (k, "." * (48 - len(k)), v)
    return out + prefix + "-------------------- end of arguments ---------------------\n"

def mline(i, step_ms, rate, loss="%.6E", nan=0, skipped=0):
    lv = loss % (5 - i * 0.001) if "%" in loss else loss
    # Megatron prints only losses > 0: a NaN iteration's loss is dropped
    lf = "" if nan else "lm loss: %s | " % lv
    return (" iteration %8d/     120 | consumed samples: %12d | elapsed time per iteration "
            "(ms): %.2f | throughput per GPU (TFLOP/s/GPU): %.1f | learning rate: 1.000000E-04 "
            "| global batch size:    16 | %sloss scale: 1.0 | grad norm: 1.000 | "
            "number of skipped iterations: %3d | number of nan iterations: %3d |\n"
            % (i, B * i, 50.0 if i == 1 else step_ms, rate, lf, skipped, nan))

def write(run, name, text):
    os.makedirs(os.path.join(d, run), exist_ok=True)
    open(os.path.join(d, run, name), "w").write(text)

# rates
for r, rate in ((0, truth), (1, truth * 1.3)):
    write("rates", "rank%d.log" % r, (args_block() if r == 0 else "") +
          "".join(mline(i, ms, rate) for i in range(1, 121)))
# slow
out = args_block("[default0]:")
for i in range(1, 121):
    for r in range(W):
        out += ("[default%d]:" % r) + mline(i, ms * (1.5 if r == 1 else 1), truth / (1.5 if r == 1 else 1))
write("slow", "console.log", out)
# files: the same, one file per rank with no rank in its lines or name
write("files", "a.log", args_block() + "".join(mline(i, ms, truth) for i in range(1, 121)))
write("files", "b.log", "".join(mline(i, ms * 1.5, truth / 1.5) for i in range(1, 121)))
# slowrank: the same with PyTorch's own "[rankK]:" prefix (torchrun
# --log-line-prefix-template, or print under torch.distributed)
write("slowrank", "console.log", out.replace("[default", "[rank"))
# nan
for r in range(W):
    write("nan", "rank%d.log" % r, (args_block() if r == 0 else "") +
          "".join(mline(i, ms, truth, "nan" if r == 1 and i == 60 else "%.6E")
                  for i in range(1, 121)))
# nanboth: rank 0's NaN at 61, rank 1's at 60
for r in range(W):
    write("nanboth", "rank%d.log" % r, (args_block() if r == 0 else "") +
          "".join(mline(i, ms, truth, "nan" if (r, i) in ((0, 61), (1, 60)) else "%.6E")
                  for i in range(1, 121)))
# nanconsole: the slow console, rank 1's loss NaN at 60
out = args_block("[default0]:")
for i in range(1, 121):
    for r in range(W):
        out += ("[default%d]:" % r) + mline(i, ms * (1.5 if r == 1 else 1), truth / (1.5 if r == 1 else 1),
                                            "nan" if (r, i) == (1, 60) else "%.6E")
write("nanconsole", "console.log", out)
# nancount: rank 1 counts a NaN iteration at 60 (its loss dropped)
for r in range(W):
    write("nancount", "rank%d.log" % r, (args_block() if r == 0 else "") +
          "".join(mline(i, ms, truth, nan=1 if r == 1 and i == 60 else 0)
                  for i in range(1, 121)))
# skip: rank 1 counts a skipped iteration at 70
for r in range(W):
    write("skip", "rank%d.log" % r, (args_block() if r == 0 else "") +
          "".join(mline(i, ms, truth, skipped=1 if r == 1 and i == 70 else 0)
                  for i in range(1, 121)))
# mtp: rank 1 prints "mtp_1 loss: nan" at iteration 60, its lm loss finite
for r in range(W):
    write("mtp", "rank%d.log" % r, (args_block() if r == 0 else "") +
          "".join(mline(i, ms, truth).replace("lm loss:", "mtp_1 loss: nan | lm loss:")
                  if r == 1 and i == 60 else mline(i, ms, truth) for i in range(1, 121)))
# dup: the slow run's console without prefixes (ranks printing to one file)
write("dup", "console.log", "".join(l.split("]:", 1)[1] + "\n" for l in
                                    open(os.path.join(d, "slow", "console.log")).read().splitlines()))
# dupfirst: the slower rank's line first
lines = open(os.path.join(d, "dup", "console.log")).read().splitlines(True)
head = [l for l in lines if not l.startswith(" iteration")]
it = [l for l in lines if l.startswith(" iteration")]
write("dupfirst", "console.log", "".join(head) + "".join(
    it[k + 1] + it[k] for k in range(0, len(it), 2)))
# nemorun
out = ""
for i in range(100):
    for r in range(W):
        t = 5.0 if i == 0 else (3.0 if r == 0 else 2.0)
        out += ("retraining/0 [default%d]:Training epoch 0, iteration %d/99 | lr: 1.961e-07 | "
                "global_batch_size: 16 | global_step: %d | reduced_train_loss: %.4g | "
                "train_step_timing in s: %.4g | consumed_samples: %d\n"
                % (r, i, i, 5 - i * 0.01, t, 16 * (i + 1)))
write("nemorun", "console.log", out)
# per-rank JSONL metrics
import json
for r in range(W):
    rows = []
    for i in range(1, 121):
        slow = (i % 2 == 1) == (r == 0)
        rows.append(json.dumps({"iteration": i, "rank": r, "step_ms": 120.0 if slow else 100.0,
                                "data_ms": 40.0 if slow else 10.0, "loss": 5 - i * 0.001}))
    write("datashare", "metrics_rank%d.jsonl" % r, "\n".join(rows) + "\n")
    rows = []
    for i in range(1, 121):
        row = {"iteration": i, "rank": r, "step_ms": 120.0 if r == 0 else 100.0}
        if r == 1:
            row["loss"] = 5 - i * 0.001
        rows.append(json.dumps(row))
    write("pp", "metrics_rank%d.jsonl" % r, "\n".join(rows) + "\n")
# several nodes
def nemo(prefix, i, t):
    return ("%sTraining epoch 0, iteration %d/99 | lr: 1.961e-07 | global_batch_size: 16 | "
            "global_step: %d | reduced_train_loss: %.4g | train_step_timing in s: %.4g | "
            "consumed_samples: %d\n" % (prefix, i, i, 5 - i * 0.01, t, 16 * (i + 1)))
out = ""
for i in range(100):
    for node in (1, 0):
        for k in range(2):
            t = 5.0 if i == 0 else (4.0 if (node, k) == (1, 0) else 2.0)
            out += nemo("retraining/%d [default%d]:" % (node, k), i, t)
write("nodes2", "console.log", out)
out = ""
for i in range(100):
    for node in (0, 1):
        out += nemo("retraining/%d [default0]:" % node, i, 5.0 if i == 0 else (4.0 if node else 2.0))
conf = ("[I1205 00:00:00.000000 1 torch/distributed/launcher/api.py:188] Starting elastic_operator "
        "with launch configs:\n  entrypoint       : nemo_run.core.runners.fdl_runner\n"
        "  min_nodes        : 2\n  max_nodes        : 2\n  nproc_per_node   : 4\n")
write("nodestated", "console.log", conf + out)
write("nodeguess", "console.log", out)
