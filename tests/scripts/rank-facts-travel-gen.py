#!/usr/bin/env python3
# Runs with known truth for tests/scripts/rank-facts-travel.sh: consoles of
# many ranks restarting at once. Usage: rank-facts-travel-gen.py DIR
#
# Every run is a torchrun --tee console ("[defaultR]:" prefixes) of Megatron
# iteration lines, 40 iterations; rank r's step time is 10.0 ms + r x
# 0.01 ms (iteration 1 100 ms). After iteration 30 rank 0 prints a new
# arguments dump (the job restarts from a checkpoint) and every rank logs
# iterations 30 to 40 again (iteration 30 again 300 ms): each rank resumes
# once at its last logged iteration, the later record replacing the earlier.
#   two       2 ranks (the rank-facts-more rranks shape): one resumed-log
#             warning for the file naming ranks 0 and 1
#   many      1,024 ranks restarting at once: 1,024 restarts of 1,024
#             series, one each (the limit of 256 is per series): read,
#             1,024 ranks, one resumed-log warning naming 1,024 ranks;
#             the slowest rank 1023 (10.0 + 10.23 = 20.23 ms)
#   big       4,096 ranks restarting at once: the cost of many x 4 (linear)
#   again     one rank (no prefix) resuming 257 times in one file, at
#             iteration 30 each time: the one series goes back more than
#             256 times, still refused
#   agree     a.log of nodes 0 and 1, b.log of nodes 2 and 3 (torchx
#             prefixes, local rank 0 logging), each stating nproc_per_node
#             4 on line 1: ranks 0, 4, 8, 12; node_ranks of 2 files that agree
#   differ    the same, b.log stating 8: ranks 0, 4 (a.log) and 16, 24
#             (b.log); the files disagree: node-ranks-differ naming b.log
# Node runs stating the job's size in other words (2 nodes, local rank 0
# logging, one file; ranks 0 and nproc_per_node):
#   oldmeg    "--nnodes=2" line 1, Megatron's older "using world size: 16,
#             data-parallel size: 16, ..." line 2: nproc 16 / 2 = 8
#   minmax    torchrun's launch configuration with min_nodes 2 (line 3)
#             and max_nodes 2 (line 4), world_size 12 (line 6): 12 / 2 = 6
#   elastic   the same with min_nodes 1, max_nodes 4: no count of nodes,
#             the local ranks seen (1: ranks 0 and 1), nproc-per-node-unknown
#   fixed     "--nnodes=2:2" line 1, world_size 16 line 3: 16 / 2 = 8
import os, sys
d = sys.argv[1]

def write(run, text):
    os.makedirs(os.path.join(d, run), exist_ok=True)
    open(os.path.join(d, run, "console.log"), "w").write(text)

def margs(prefix, ws):
    return (prefix + "------------------------ arguments ------------------------\n" +
            prefix + "  world_size %s %d\n" % ("." * 38, ws) +
            prefix + "-------------------- end of arguments ---------------------\n")

def mline(i, step_ms):
    return (" iteration %8d/      40 | consumed samples: %12d | elapsed time per iteration "
            "(ms): %.2f | learning rate: 1.000000E-04 | global batch size:    16 | "
            "lm loss: %.6E | loss scale: 1.0 | grad norm: 1.000 | "
            "number of skipped iterations:   0 | number of nan iterations:   0 |\n"
            % (i, 16 * i, step_ms, 5 - i * 0.001))

def console(n, restarts=1):
    pre = ["[default%d]:" % r if n > 1 else "" for r in range(n)]
    out = [margs(pre[0], n)]
    for i in range(1, 31):
        for r in range(n):
            out.append(pre[r] + mline(i, 100.0 if i == 1 else 10.0 + r * 0.01))
    for _ in range(restarts):
        out.append(margs(pre[0], n))
        for r in range(n):
            out.append(pre[r] + mline(30, 300.0))
    for i in range(31, 41):
        for r in range(n):
            out.append(pre[r] + mline(i, 10.0 + r * 0.01))
    return "".join(out)

def nodefile(name, run, nodes, nproc, head=None):
    """a console of nodes (their local rank 0 logging), stating nproc
    (or head instead)"""
    out = [head if head is not None else "  nproc_per_node   : %d\n" % nproc]
    for i in range(1, 41):
        for n in nodes:
            out.append("retraining/%d [default0]:" % n + mline(i, 10.0 + n))
    os.makedirs(os.path.join(d, run), exist_ok=True)
    open(os.path.join(d, run, name), "w").write("".join(out))

write("two", console(2))
nodefile("a.log", "agree", (0, 1), 4)
nodefile("b.log", "agree", (2, 3), 4)
nodefile("a.log", "differ", (0, 1), 4)
nodefile("b.log", "differ", (2, 3), 8)
p0 = "retraining/0 [default0]:"
nodefile("console.log", "oldmeg", (0, 1), 0, "+ torchrun --nnodes=2 pretrain.py\n" + p0 +
         "using world size: 16, data-parallel size: 16, context-parallel size: 1, "
         "tensor-model-parallel size: 1, pipeline-model-parallel size: 1\n")
nodefile("console.log", "minmax", (0, 1), 0, "Starting elastic_operator with launch configs:\n"
         "  entrypoint       : pretrain.py\n  min_nodes        : 2\n  max_nodes        : 2\n" +
         margs(p0, 12))
nodefile("console.log", "elastic", (0, 1), 0, "Starting elastic_operator with launch configs:\n"
         "  entrypoint       : pretrain.py\n  min_nodes        : 1\n  max_nodes        : 4\n" +
         margs(p0, 12))
nodefile("console.log", "fixed", (0, 1), 0, "+ torchrun --nnodes=2:2 pretrain.py\n" + margs(p0, 16))
write("many", console(1024))
write("again", console(1, 257))
write("big", console(4096))
