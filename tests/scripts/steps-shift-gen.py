#!/usr/bin/env python3
"""Write Megatron training logs whose step times have a known truth: a
level, AR(1) noise and, optionally, a level shift or a warm-up ramp.

usage: steps-shift-gen.py OUTDIR RUNS PHI SHIFT AT [RAMP [BATCH]]
  RUNS   logs written, OUTDIR/r000.log ... (seeds 0 .. RUNS-1)
  PHI    lag-1 autocorrelation of the noise (AR(1)); its marginal CV is 2 %
         of the 200 ms level whatever PHI is
  SHIFT  relative level change from iteration AT on (0.05: 5 % slower,
         -0.05: 5 % faster; 0: none)
  RAMP   optional: a warm-up, the first 100 iterations slower by RAMP
         (0.3: 30 %) falling linearly to the level
  BATCH  optional: the global batch size logged before AT (256 from AT on),
         a batch-size ramp-up whose step time change is SHIFT
300 iterations per log, every iteration logged (log interval 1). Standard
library only; the same arguments give the same bytes.
"""
import math
import os
import random
import sys


def main():
    out, runs, phi, shift, at = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), \
        float(sys.argv[4]), int(sys.argv[5])
    ramp = float(sys.argv[6]) if len(sys.argv) > 6 else 0.0
    batch = int(sys.argv[7]) if len(sys.argv) > 7 else 256
    os.makedirs(out, exist_ok=True)
    level, cv, n = 200.0, 0.02, 300
    for r in range(runs):
        seed = "%d %s %s %d %s" % (r, phi, shift, at, ramp)
        rnd = random.Random(seed if batch == 256 else seed + " %d" % batch)
        sd = cv * level
        e = rnd.gauss(0, sd)
        innov = sd * math.sqrt(1 - phi * phi)
        with open(os.path.join(out, "r%03d.log" % r), "w") as f:
            for it in range(1, n + 1):
                e = phi * e + rnd.gauss(0, innov)
                mean = level * (1 + shift) if it >= at else level
                if it <= 100:
                    mean *= 1 + ramp * (100 - it) / 100
                f.write(" [2024-04-06 10:%02d:%02d] iteration %8d/  100000 | consumed samples: "
                        "%12d | elapsed time per iteration (ms): %.1f | learning rate: "
                        "1.000000E-04 | global batch size: %5d | lm loss: %.6E | loss scale: "
                        "1.0 | grad norm: 1.000 | number of skipped iterations:   0 | number of "
                        "nan iterations:   0 |\n"
                        % (it // 60 % 60, it % 60, it, it * 256, mean + e,
                           256 if it >= at else batch, 3.0 - it * 1e-4))


main()
