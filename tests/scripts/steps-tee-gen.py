#!/usr/bin/env python3
# The console of an HF Trainer run under torchrun --tee (or mpirun
# --tag-output), for tests/scripts/steps-edges.sh: 300 optimizer steps,
# logging_steps=10. The launcher copies each worker stream piece by piece
# as it comes, every piece after its prefix: the bar's stderr redraws
# ('\r' + bar) in pieces of 1-3 redraws (seeded), and after the redraw of
# step 10 k tqdm.write's clear ('\r', blanks, '\r') on stderr, the k-th dict
# with its line end on stdout (loss 3 - 0.005 k), the bar redrawn. So a
# redraw is often followed on its '\r' part by the next piece's prefix,
# and the dict of step 10 k follows the redraw of 10 k on its physical
# line. Usage: steps-tee-gen.py default|rank|mpirun SEED
import random, sys
mode, seed = sys.argv[1], int(sys.argv[2])
err_h, out_h = {"default": ("[default0]:", "[default0]:"), "rank": ("[rank0]:", "[rank0]:"),
                "mpirun": ("[1,0]<stderr>:", "[1,0]<stdout>:")}[mode]
rnd = random.Random(seed)
N = 300
def bar(i):
    el, left = i * 6 // 5, (N - i) * 6 // 5
    return "%3d%%|%-10s| %d/%d [%02d:%02d<%02d:%02d, 1.20s/it]" % (100 * i // N, "#" * (10 * i // N), i, N,
                                                                 el // 60, el % 60, left // 60, left % 60)
def d(k):
    return "{'loss': %.3f, 'grad_norm': 1.%03d, 'learning_rate': 4.5e-05, 'epoch': %.2f}" % (3 - 0.005 * k, k, k / 10)
out = ["loading model\n"]
pend = []          # stderr pieces not yet copied
def flush_err(force=False):
    while pend and (force or len(pend) >= rnd.randint(1, 3)):
        n = min(len(pend), rnd.randint(1, 3))
        out.append(err_h + "".join(pend[:n]))
        del pend[:n]
for i in range(0, N + 1):
    pend.append("\r" + bar(i))
    flush_err()
    if i and i % 10 == 0:
        pend.append("\r" + " " * 60 + "\r")      # tqdm.write clears the bar
        flush_err(force=True)
        out.append(out_h + d(i // 10) + "\n")    # the dict, from stdout's copy
        pend.append("\r" + bar(i))               # and redraws it
pend.append("\n")
flush_err(force=True)
out.append(out_h + "{'train_runtime': 360.5, 'train_samples_per_second': 6.656, 'train_steps_per_second': 0.832, 'train_loss': 2.92, 'epoch': 3.0}\n")
sys.stdout.write("".join(out))
