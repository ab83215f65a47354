#!/usr/bin/env python3
"""Write a baseline and a candidate run (JSONL metrics) whose only
difference, apart from the noise of two separate runs, is an injected
data-loader sleep: the known truth for `trainscope ab`'s phase attribution.

usage: ab-phases-gen.py OUTDIR MODE SEED [STEPS [FORMAT]]
  FORMAT jsonl (default: metrics.jsonl) or megatron (train.log: Megatron
       iteration lines, each followed by a "(min, max) time across ranks
       (ms):" timer block: batch-generator, forward-backward, optimizer,
       all-grads-sync)
  MODE periodic  candidate data_ms += 100 ms every 5th iteration (+20 ms/step)
       constant  candidate data_ms += 20 ms every iteration
       none      no injection (the two runs differ by noise only)

Each step: data ~ 4 ms (CV 10 %), fwd ~ 120 ms and bwd ~ 160 ms sharing a
lognormal AR(1) factor (CV 30 %, lag-1 0.5: a loaded machine), opt ~ 15 ms
(CV 10 %), comm ~ 5 ms (CV 10 %); step_ms is their sum plus 0.5 ms. The
loss is the same line in both runs, so only the timing differs. Prints
the injected mean sleep per step. Standard library only.
"""
import json
import math
import os
import random
import sys


def lognormal(rng, z, cv):
    s = math.sqrt(math.log(1 + cv * cv))
    return math.exp(s * z - s * s / 2)


def megatron(rec, steps):
    it = rec["iteration"]
    fb = rec["fwd_ms"] + rec["bwd_ms"]
    return (f" iteration {it:8d}/{steps:8d} | consumed samples: {8 * it:10d} | "
            f"elapsed time per iteration (ms): {rec['step_ms']:.1f} | learning rate: 1.000E-04 | "
            f"global batch size:     8 | lm loss: {rec['lm_loss']:.6E} | loss scale: 1.0 | "
            f"grad norm: 1.000 | number of skipped iterations:   0 | number of nan iterations:   0 |\n"
            "(min, max) time across ranks (ms):\n"
            f"    forward-backward ...............................: ({fb * 0.98:.2f}, {fb:.2f})\n"
            f"    batch-generator ................................: ({rec['data_ms'] * 0.9:.2f}, {rec['data_ms']:.2f})\n"
            f"    optimizer ......................................: ({rec['opt_ms'] * 0.9:.2f}, {rec['opt_ms']:.2f})\n"
            f"    all-grads-sync .................................: ({rec['comm_ms'] * 0.9:.2f}, {rec['comm_ms']:.2f})\n")


def write_run(path, rng, steps, sleep, fmt):
    os.makedirs(path, exist_ok=True)
    z = rng.gauss(0, 1)
    name = "metrics.jsonl" if fmt == "jsonl" else "train.log"
    with open(os.path.join(path, name), "w") as f:
        for it in range(1, steps + 1):
            z = 0.5 * z + math.sqrt(1 - 0.25) * rng.gauss(0, 1)
            load = lognormal(rng, z, 0.30)
            data = 4.0 * lognormal(rng, rng.gauss(0, 1), 0.10) + sleep(it)
            fwd = 120.0 * load
            bwd = 160.0 * load
            opt = 15.0 * lognormal(rng, rng.gauss(0, 1), 0.10)
            comm = 5.0 * lognormal(rng, rng.gauss(0, 1), 0.10)
            step = data + fwd + bwd + opt + comm + 0.5
            if it == 1:
                step += 600.0  # warm-up
            rec = {"iteration": it, "rank": 0, "step_ms": round(step, 3),
                   "data_ms": round(data, 3), "fwd_ms": round(fwd, 3),
                   "bwd_ms": round(bwd, 3), "opt_ms": round(opt, 3),
                   "comm_ms": round(comm, 3), "lm_loss": 8.0 - 0.001 * it,
                   "grad_norm": 1.0, "tokens": 1024}
            f.write(json.dumps(rec) + "\n" if fmt == "jsonl" else megatron(rec, steps))


def main():
    if len(sys.argv) not in (4, 5, 6):
        sys.exit(__doc__)
    out, mode, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
    steps = int(sys.argv[4]) if len(sys.argv) >= 5 else 120
    fmt = sys.argv[5] if len(sys.argv) == 6 else "jsonl"
    if fmt not in ("jsonl", "megatron"):
        sys.exit(__doc__)
    sleeps = {"periodic": lambda it: 100.0 if it % 5 == 0 else 0.0,
              "constant": lambda it: 20.0,
              "none": lambda it: 0.0}
    if mode not in sleeps:
        sys.exit(__doc__)
    write_run(os.path.join(out, "baseline"), random.Random(seed), steps, sleeps["none"], fmt)
    write_run(os.path.join(out, "candidate"), random.Random(seed + 7919), steps, sleeps[mode], fmt)
    print({"periodic": 20.0, "constant": 20.0, "none": 0.0}[mode])


if __name__ == "__main__":
    main()
