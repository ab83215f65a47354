#!/usr/bin/env python3
# Runs with known truth for tests/scripts/rank-facts-more.sh: which rank a
# log record belongs to when the log states the job's shape late or only
# in part, restarts at its last logged iteration, or prints two nodes'
# torchtitan lines into one console. Usage: rank-facts-more-gen.py DIR
#
# Node runs (rank-facts-gen.py's nodestated, varied): a NeMo-Run console of
# 2 nodes whose local rank 0 alone logs, "retraining/N [default0]:" NeMo 2
# lines, 100 iterations; node 1's 4.0 s per step, node 0's 2.0 s (iteration
# 0 takes 5.0 s). The global rank of node 1's local rank 0 is
# 1 x nproc_per_node + 0 = nproc_per_node:
#   late      torchrun's launch configuration "nproc_per_node   : 4" after
#             the 10th iteration's lines: ranks 0 and 4, no warning
#   world     Megatron's arguments "world_size ..... 16" and a launcher
#             command "torchrun --nnodes=2 ..." (no nproc_per_node): 16 / 2
#             = 8, ranks 0 and 8, no warning
#   env       an env dump after the 50th iteration: "WORLD_SIZE=8" and
#             "NNODES=2": 8 / 2 = 4, ranks 0 and 4, no warning
#   group     torchrun's worker group "group_world_size=2" (the nodes: no
#             world size of 2), then "world_size ..... 12": 12 / 2 = 6,
#             ranks 0 and 6, no warning
#   range     "world_size ..... 16" and an elastic "--nnodes=1:4": the nodes
#             cannot be told, ranks 0 and 1 (the local ranks seen), with
#             the nproc-per-node-unknown warning
#   indiv     "world_size ..... 6" and "--nnodes 4": 6 / 4 does not divide,
#             ranks 0 and 1, with the warning
# Restart runs: a Megatron log (rank-facts-gen.py's lines, 10.7 ms per
# step, iteration 1 50 ms) whose job logs iterations 1-60, crashes after
# a checkpoint at 50 and is resumed from it, so its first record after the
# restart is iteration 60 again (the slow first step of the new process:
# 200 ms), then 61-120 at 10.7 ms. The later 60 replaces the earlier: one
# series of 120 records, the resumed-log warning, no repeated-records;
# before, the two 60s merged as two ranks (the slower, 200 ms, the step):
#   rargs     the new process prints its arguments dump before its records
#   rload     the new process prints Megatron's "successfully loaded
#             checkpoint from ... at iteration 50" before its records
#   rranks    rargs on a torchrun --tee console of two ranks ("[default0]:",
#             "[default1]:"), rank 1 15 % slower (12.305 ms; 230 ms at the
#             restarted 60); the arguments dump printed by rank 0 only:
#             both ranks restart, 2 ranks, the step time rank 1's
# Torchtitan run:
#   titan     a NeMo-Run console of 2 nodes ("retraining/N [default0]:",
#             "nproc_per_node   : 8" stated first: ranks 0 and 8) each
#             printing torchtitan's "Training starts" and a step line
#             every 10 steps to step 1000; every step takes 1.0 s on both nodes, node
#             1's clock (stamps) 0.4 s behind node 0's. Each node's own
#             interval is 10 s over 10 steps: every record 1000 ms; one
#             clock for both nodes' rank 0 timed node 0's records from node
#             1's last stamp (9.6 s over 10 steps: 960 ms) and none of node
#             1's (0 steps since node 0's record of its step).
import os, sys, datetime
d = sys.argv[1]
B = 16

def write(run, name, text):
    os.makedirs(os.path.join(d, run), exist_ok=True)
    open(os.path.join(d, run, name), "w").write(text)

def nemo(prefix, i, t):
    return ("%sTraining epoch 0, iteration %d/99 | lr: 1.961e-07 | global_batch_size: 16 | "
            "global_step: %d | reduced_train_loss: %.4g | train_step_timing in s: %.4g | "
            "consumed_samples: %d\n" % (prefix, i, i, 5 - i * 0.01, t, 16 * (i + 1)))

def nodes(extra):
    """the console; extra: {after iteration i (-1 before all): text}"""
    out = extra.get(-1, "")
    for i in range(100):
        for node in (0, 1):
            out += nemo("retraining/%d [default0]:" % node, i, 5.0 if i == 0 else (4.0 if node else 2.0))
        out += extra.get(i, "")
    return out

conf = ("[I1205 00:00:00.000000 1 torch/distributed/launcher/api.py:188] Starting elastic_operator "
        "with launch configs:\n  entrypoint       : nemo_run.core.runners.fdl_runner\n"
        "  min_nodes        : 2\n  max_nodes        : 2\n  nproc_per_node   : 4\n")
def margs(prefix, ws):
    return (prefix + "------------------------ arguments ------------------------\n" +
            prefix + "  world_size %s %d\n" % ("." * 38, ws) +
            prefix + "-------------------- end of arguments ---------------------\n")
write("late", "console.log", nodes({9: conf}))
write("world", "console.log", nodes({-1: "+ torchrun --nnodes=2 --rdzv-backend=c10d --rdzv-endpoint=n0:29500 "
                                          "pretrain.py\n" + margs("retraining/0 [default0]:", 16)}))
write("env", "console.log", nodes({49: "retraining/0 [default0]:WORLD_SIZE=8\n"
                                       "retraining/0 [default0]:NNODES=2\n"}))
write("group", "console.log", nodes({-1: "[I1205 00:00:01 api.py:410] [default] Rendezvous complete "
                                          "for workers. Result:\n  restart_count=0\n  group_rank=0\n"
                                          "  group_world_size=2\n  local_ranks=[0]\n"
                                          "  role_world_sizes=[12]\n  global_world_sizes=[12]\n",
                                     3: margs("retraining/0 [default0]:", 12)}))
write("range", "console.log", nodes({-1: "+ torchrun --nnodes=1:4 pretrain.py\n" +
                                     margs("retraining/0 [default0]:", 16)}))
write("indiv", "console.log", nodes({-1: "+ torchrun --nnodes 4 pretrain.py\n" +
                                     margs("retraining/0 [default0]:", 6)}))

def mline(i, step_ms):
    return (" iteration %8d/     120 | consumed samples: %12d | elapsed time per iteration "
            "(ms): %.2f | learning rate: 1.000000E-04 | global batch size:    16 | "
            "lm loss: %.6E | loss scale: 1.0 | grad norm: 1.000 | "
            "number of skipped iterations:   0 | number of nan iterations:   0 |\n"
            % (i, B * i, step_ms, 5 - i * 0.001))
def restart_log(prefixes, slow, marker):
    """prefixes: the ranks' line prefixes; slow: rank r's factor; marker:
    the new process's lines (printed by the first rank)"""
    out = margs(prefixes[0], len(prefixes))
    for i in range(1, 61):
        for r, p in enumerate(prefixes):
            out += p + mline(i, (50.0 if i == 1 else 10.7) * slow[r])
    out += "".join(prefixes[0] + l + "\n" for l in marker.splitlines())
    for i in range(60, 121):
        for r, p in enumerate(prefixes):
            out += p + mline(i, (200.0 if i == 60 else 10.7) * slow[r])
    return out
write("rargs", "train.log", restart_log([""], [1.0], margs("", 1)))
write("rload", "train.log", restart_log([""], [1.0], " loading checkpoint from /ckpt at iteration 50\n"
                                       " successfully loaded checkpoint from /ckpt [ t 1/1, p 1/1 ] "
                                       "at iteration 50"))
write("rranks", "console.log", restart_log(["[default0]:", "[default1]:"], [1.0, 1.15], margs("", 2)))

# titan: two nodes, one console
base = datetime.datetime(2025, 3, 10, 20, 0, 0)
def stamp(x):
    t = base + datetime.timedelta(seconds=x)
    return t.strftime("%Y-%m-%d %H:%M:%S") + ",%03d" % (t.microsecond // 1000)
ev = []
for node, off in ((0, 0.0), (1, 0.4)):
    p = "retraining/%d [default0]:[titan] " % node
    t0 = 10.0 + off
    ev.append((t0, node, p + stamp(t0) + " - root - INFO - Training starts at step 1, with local batch "
               "size 1, global batch size 8, sequence length 8192, total steps 1000 (warmup 20)"))
    for s in range(10, 1001, 10):
        t = t0 + s * 1.0
        ev.append((t, node, p + stamp(t) + " - root - INFO - step: %3d  loss: %.4f  grad_norm: 1.1000  "
                   "memory: 42.22GiB(44.44%%)  tps: 6,826  tflops: 395.32  mfu: 39.97%%" % (s, 8 - s * 0.001)))
ev.sort()
write("titan", "console.log", "  nproc_per_node   : 8\n" + "".join(l + "\n" for _, _, l in ev))
