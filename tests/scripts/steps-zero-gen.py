"""Writes, into the folder argv[1], one log per format steps reads whose
step times are printed as zero or come out negative, and truth.json:
for each log {iteration: the step time in ms, or null where the log
cannot give one}. Ordinary steps take 800 + 10 x (i mod 3) ms, exactly
representable in every print below; the odd ones are:
  nemo2.log   NeMo 2 lines, "train_step_timing in s: %.2f": steps 10 and
              20 take 0.1 ms and print 0.00 (resolution 5 ms)
  bar.log     Lightning progress bars (\\r-joined, one line),
              "train_step_timing in s=%.3f": global steps 9 and 19 take
              0.1 ms and print 0.000 (0.5 ms)
  ms.jsonl    "step_ms": 0 at 10 and 20 (a writer's zero: full floats)
  s.jsonl     "step_time": 0.0 s at 15, -0.8 s at 25 (negative)
  meg.log     Megatron "elapsed time per iteration (ms): -812.0" at 12
  titan.log   torchtitan, a record each step, stamps to the ms: step 10
              takes 0.3 ms (its stamp equals step 9's: interval 0, 1 ms
              resolution); the clock steps back 5 s after step 19's
              print, so step 20's interval reads 800 - 5000 ms < 0
  ds.log      DeepSpeed throughput lines each step, the same clock step
              back at 20 (the first record has no interval)
"""
import datetime
import json
import sys

out = sys.argv[1]
N = 30
base = datetime.datetime(2025, 3, 10, 20, 5, 0)
truth = {}


def dur_ms(i):
    return 800 + 10 * (i % 3)


def stamp(ms):
    d = base + datetime.timedelta(milliseconds=ms)
    return d.strftime("%Y-%m-%d %H:%M:%S") + ",%03d" % (d.microsecond // 1000)


def write(name, lines, sep="\n"):
    open("%s/%s" % (out, name), "w").write(sep.join(lines) + "\n")


def odd(i, zero, neg=()):
    return None if i in zero or i in neg else dur_ms(i)


# NeMo 2
truth["nemo2.log"] = {i: odd(i, (10, 20)) for i in range(1, N + 1)}
write("nemo2.log", [
    " 0: Training epoch 0, iteration %d/%d | lr: 1e-05 | global_batch_size: 8 | global_step: %d | "
    "reduced_train_loss: %.4f | train_step_timing in s: %.2f | consumed_samples: %d"
    % (i - 1, N - 1, i, 2.3 - i * 0.001, (0.1 if i in (10, 20) else dur_ms(i)) / 1e3, 8 * i)
    for i in range(1, N + 1)])
# Lightning progress bars: the record's iteration is its global_step
truth["bar.log"] = {g: odd(g, (9, 19)) for g in range(0, N)}
write("bar.log", [
    "Epoch 0: :  %d%%|#| %d/%d [00:02<11:30, v_num=, reduced_train_loss=%.3f, global_step=%d.000, "
    "consumed_samples=%d.0, train_step_timing in s=%.3f]"
    % (100 * (g + 1) // N, g + 1, N, 2.3 - g * 0.001, g, 8 * (g + 1),
       (0.1 if g in (9, 19) else dur_ms(g)) / 1e3)
    for g in range(0, N)], "\r")
# JSONL
truth["ms.jsonl"] = {i: odd(i, (10, 20)) for i in range(1, N + 1)}
write("ms.jsonl", [json.dumps({"iteration": i, "loss": 2.3 - i * 0.001,
                               "step_ms": 0 if i in (10, 20) else dur_ms(i)})
                   for i in range(1, N + 1)])
truth["s.jsonl"] = {i: odd(i, (15,), (25,)) for i in range(1, N + 1)}
write("s.jsonl", [json.dumps({"step": i, "loss": 2.3 - i * 0.001,
                              "step_time": 0.0 if i == 15 else -0.8 if i == 25 else dur_ms(i) / 1e3})
                  for i in range(1, N + 1)])
# Megatron
truth["meg.log"] = {i: odd(i, (), (12,)) for i in range(1, N + 1)}
write("meg.log", [
    " iteration %8d/%8d | consumed samples: %12d | elapsed time per iteration (ms): %.1f | "
    "learning rate: 4.990E-05 | global batch size:    64 | lm loss: %E | loss scale: 8192.0 | "
    "number of skipped iterations:   0 | number of nan iterations:   0 |"
    % (i, N, 64 * i, -812.0 if i == 12 else dur_ms(i), 2.3 - i * 0.001)
    for i in range(1, N + 1)])
# torchtitan: its start line at 0 opens the clock of step 1
truth["titan.log"] = {i: odd(i, (10,), (20,)) for i in range(1, N + 1)}
lines = ["[titan] %s - root - INFO - Training starts at step 1, with local batch size 1, global batch "
         "size 8, gradient accumulation steps 1, sequence length 8192, total steps %d (warmup 2)"
         % (stamp(0), N)]
t = 0.0
for i in range(1, N + 1):
    t += 0.3 if i == 10 else dur_ms(i)
    lines.append("[titan] %s - root - INFO - step: %2d  loss: %7.4f  grad_norm:  1.2500  "
                 "memory: 42.22GiB(44.44%%)  tps: 6,826  tflops: 1,395.32  mfu: 39.97%%"
                 % (stamp(int(t - (5000 if i >= 20 else 0))), i, 9.0 - i * 0.01))
write("titan.log", lines)
# DeepSpeed throughput lines
truth["ds.log"] = {i: odd(i, (1,), (20,)) for i in range(1, N + 1)}
lines = []
t = 0.0
for i in range(1, N + 1):
    t += dur_ms(i)
    s = stamp(int(t - (5000 if i >= 20 else 0)))
    lines.append("[%s] [INFO] [logging.py:96:log_dist] [Rank 0] step=%d, skipped=0, lr=[0.0001], "
                 "mom=[(0.9, 0.999)]" % (s, i))
    lines.append("[%s] [INFO] [timer.py:260:stop] epoch=0/micro_step=%d/global_step=%d, "
                 "RunningAvgSamplesPerSec=25.0, CurrSamplesPerSec=25.7, MemAllocated=4.32GB, "
                 "MaxMemAllocated=38.49GB" % (s, i, i))
write("ds.log", lines)
json.dump(truth, open(out + "/truth.json", "w"), indent=1, sort_keys=True)
