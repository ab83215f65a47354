"""steps-deepspeed-gen.py LOG [JSON-KWARGS]: a synthetic DeepSpeed log and its truth (LOG.truth)."""
import datetime, json, random, sys


def gen(path, *, steps=300, every=10, step_s=0.8, seed=1, skip_at=(), prefix="", old=False,
        megatron=False, ezpz=False, hf=False, breakdown=None, gas=4, spike=None, pipe=False,
        nan_at=(), xloss=False, xnan_at=(), qlora=None, tiny_at=()):
    """Write DeepSpeed engine lines of known truth to path and return the step
    durations in s ({step: seconds}): every `every` global steps the
    log_dist "[Rank 0] step=N, skipped=K, lr=[...]" line and the throughput
    timer's "epoch=0/micro_step=M/global_step=N, RunningAvgSamplesPerSec=..."
    line (old: the pre-2023 "0/N, RunningAvgSamplesPerSec=..."), stamped as
    DeepSpeed's logger does ("[%Y-%m-%d %H:%M:%S,mmm] [INFO] [file:line:func]"),
    after a launcher prefix; steps in skip_at are overflow-skipped (the
    cumulative count); megatron: a Megatron-DeepSpeed log, its arguments
    block first and an iteration line after each pair of DeepSpeed lines;
    ezpz: that iteration line as argonne-lcf's fork prints it ("iteration=
    N/T | key=value | ...", behind its "[stamp][INFO][training:1251] - ");
    hf: the HF Trainer on DeepSpeed, its dict after each pair of lines.
    breakdown ("new", "old" or "pipe"): the timer lines of
    "wall_clock_breakdown": true, as deepspeed/runtime/engine.py
    DeepSpeedEngine.step() prints them through SynchronizedWallClockTimer.log
    (deepspeed/utils/timer.py): at every micro-step (each of the gas
    step() calls of a global step) the micro timers of that micro-step, and
    at each gradient-accumulation boundary, after the step and throughput
    lines, the global timers summed over the step's micro-steps; "new" with
    the current names (fwd_microstep, ..., fwd, bwd, bwd_inner,
    bwd_allreduce, step), "old" with the earlier ones (forward_microstep,
    ..., forward, backward, backward_inner, backward_allreduce, step) and
    "rank=0 " before "time (ms)"; "pipe" as the pipeline engine prints
    them: both lines once every `every` global steps, from its optimizer
    step (here before the throughput line), summed since the previous print. spike: (step, ms) added to that
    step's forward (and duration). The per-step phase truth (ms: forward,
    backward, comm, optimizer; with pipe data, not comm) goes to LOG.phases.
    pipe: the log of deepspeed/runtime/pipe/engine.py's PipelineEngine,
    which prints no throughput line: every `every` steps the step line
    (from _take_model_step), with breakdown "pipe" its timer lines (from
    _exec_optimizer_step: batch_input ... step_microstep, then fwd ...
    step, each summed since the previous print), then train_batch's
    "steps: N loss: L iter time (s): T samples/sec: S" (T the mean step
    duration since the previous print, "%0.3f"; L step N's loss, "nan" at
    steps in nan_at; xloss: an additional "moe_loss: %.4f " before "iter
    time", as the newest engines print them, "nan" at steps in xnan_at)
    and, with breakdown, the p2p timer line as global rank 0, the first
    stage, prints it: only the timers that stage runs, pipe_send_output and
    pipe_recv_grad (the others are never created there), each summed since
    the previous print (their per-step sum is the comm truth in
    LOG.phases); with megatron, Megatron-DeepSpeed's iteration line after
    them (its train_step calls train_batch). The step durations are
    train_batch's. qlora ("etah" or "eta"): the record as tdrussell/
    qlora-pipe's CustomPipelineEngine prints it through its log() ("[%Y-%m-%d
    %H:%M:%S.mmm] [INFO] [qlora-pipe] step: {N:>5} / {T:>5} loss: ... iter
    time (s): ... samples/sec: ..." and " eta (h): %0.3f" (engine.py) or
    " eta: 1h5m " (utils/engine.py)). tiny_at: records whose steps each
    take 10 us: iter time prints "0.000", Megatron's elapsed time per
    iteration "0.0", and the throughput line the previous one's stamp (the
    0.1 ms between them falls inside one millisecond of the logger's stamp:
    the clock is not advanced for them)."""
    rnd = random.Random(seed)
    base = datetime.datetime(2023, 11, 7, 1, 50, 0)
    t = 30.0
    out, durs, skipped = [], {}, 0
    phases, acc = {}, None

    def stamp(x):
        d = base + datetime.timedelta(seconds=x)
        return d.strftime("%Y-%m-%d %H:%M:%S") + ",%03d" % (d.microsecond // 1000)

    if megatron:
        out += [prefix + "------------------------ arguments ------------------------",
                prefix + "  global_batch_size ............................... 64",
                prefix + "  seq_length ...................................... 2048",
                prefix + "-------------------- end of arguments ---------------------"]
    out.append("%s[%s] [INFO] [config.py:1000:print]   train_batch_size ............. 64" % (prefix, stamp(1)))
    def tline(x, names, vals):
        rank = "rank=0 " if breakdown != "new" else ""
        return ("%s[%s] [INFO] [logging.py:96:log_dist] [Rank 0] %stime (ms) | " % (prefix, stamp(x), rank)
                + " | ".join("%s: %.2f" % (k, v) for k, v in zip(names, vals)))

    if breakdown == "new":
        micro = ["fwd_microstep", "bwd_microstep", "bwd_inner_microstep", "bwd_allreduce_microstep",
                 "step_microstep"]
        glob = ["fwd", "bwd", "bwd_inner", "bwd_allreduce", "step"]
    else:
        micro = ["forward_microstep", "backward_microstep", "backward_inner_microstep",
                 "backward_allreduce_microstep", "step_microstep"]
        glob = ["forward", "backward", "backward_inner", "backward_allreduce", "step"]
        if breakdown == "pipe":
            micro = ["batch_input"] + micro[:4] + ["backward_tied_allreduce_microstep", "step_microstep"]
    if pipe:
        micro = ["batch_input", "fwd_microstep", "bwd_microstep", "bwd_inner_microstep",
                 "bwd_allreduce_microstep", "step_microstep"]
        glob = ["fwd", "bwd", "bwd_inner", "bwd_allreduce", "step"]
    p2p = None
    for s in range(1, steps + 1):
        d = base_d = (5.0 if s == 1 else step_s) * (1 + rnd.gauss(0, 0.01))
        if spike and s == spike[0]:
            d += spike[1] / 1e3
        tiny = any(r - every < s <= r for r in tiny_at)
        if tiny:
            d = base_d = 1e-5
        durs[s] = d
        t += 0 if tiny else d
        tl = []
        if breakdown:
            # per micro-step (ms): forward, backward inner, backward allreduce
            # (at the boundary only, as DeepSpeed reduces there), step call
            tot = [0.0] * 5
            for m in range(gas):
                last = m == gas - 1
                f = 0.3 * base_d * 1e3 / gas * (1 + rnd.gauss(0, 0.02))
                if spike and s == spike[0] and last:
                    f += spike[1]
                bi = 0.45 * base_d * 1e3 / gas * (1 + rnd.gauss(0, 0.02))
                # the pipeline engine reduces in _exec_reduce_grads, outside
                # every timer: its bwd_allreduce timer wraps nothing
                ba = 0.1 * base_d * 1e3 * (1 + rnd.gauss(0, 0.02)) if last and not pipe else 0.003
                b = bi + ba + 0.2
                st = 0.08 * base_d * 1e3 * (1 + rnd.gauss(0, 0.02)) if last else 0.05
                vals = [round(f, 2), round(b, 2), round(bi, 2), round(ba, 2), round(st, 2)]
                tot = [a + v for a, v in zip(tot, vals)]
                if breakdown != "pipe" and not pipe:
                    tl.append((last, tline(t + 0.0025 if last else t - 0.001 * (gas - m), micro, vals)))
            if breakdown != "pipe" and not pipe:
                tl.append((True, tline(t + 0.003, glob, tot)))
            phases[s] = {"forward": tot[0], "backward": tot[1], "comm": tot[3], "optimizer": tot[4]}
            if pipe:
                data = round(0.02 * base_d * 1e3 * (1 + rnd.gauss(0, 0.05)), 2)
                phases[s]["data"] = data
                # stage 0's blocking sends of activations and receives of
                # gradients (the wait for the next stage included)
                so = 0.01 * base_d * 1e3 * (1 + rnd.gauss(0, 0.05))
                rg = 0.06 * base_d * 1e3 * (1 + rnd.gauss(0, 0.05))
                phases[s]["comm"] = so + rg
                p2p = [so, rg] if p2p is None else [p2p[0] + so, p2p[1] + rg]
                acc = [data] + tot if acc is None else [a + v for a, v in zip(acc, [data] + tot)]
            elif breakdown == "pipe":
                acc = tot if acc is None else [a + v for a, v in zip(acc, tot)]
                if s % every == 0:
                    out.append(tline(t - 0.002, micro, [0.5] + acc[:4] + [0.1, acc[4]]))
                    out.append(tline(t - 0.001, glob, acc))
                    acc = None
        # the micro lines of the step's non-boundary micro-steps come first
        out += [x for last, x in tl if not last]
        if s in skip_at:
            skipped += 1
        if pipe:
            if s % every:
                continue
            out.append("%s[%s] [INFO] [logging.py:96:log_dist] [Rank 0] step=%d, skipped=%d, "
                       "lr=[4.99e-05, 4.99e-05], mom=[(0.9, 0.95), (0.9, 0.95)]" % (prefix, stamp(t), s, skipped))
            if breakdown:
                out.append(tline(t + 0.001, micro, acc))
                out.append(tline(t + 0.002, glob, acc[1:]))
                acc = None
            it = sum(durs[k] for k in range(s - every + 1, s + 1)) / every
            loss = "nan" if s in nan_at else "%0.4f" % (2.3 - s * 0.001)
            x = ("moe_loss: %s " % ("nan" if s in xnan_at else "%0.4f" % (0.01 + s * 1e-5))) if xloss else ""
            if qlora:
                eta = it * (steps - s)
                tail = ("eta (h): %0.3f" % (eta / 3600) if qlora == "etah" else
                        "eta: %s " % ("%dh%dm" % (eta // 3600, eta % 3600 // 60) if eta > 3600 else
                                     "%dm%ds" % (eta // 60, eta % 60) if eta > 60 else "%ds" % eta))
                st = stamp(t + 0.003).replace(",", ".")
                out.append("%s[%s] [INFO] [qlora-pipe] step: %5d / %5d loss: %s iter time (s): %0.3f "
                           "samples/sec: %0.3f %s" % (prefix, st, s, steps, loss, it, 64 / it, tail))
            else:
                out.append("%ssteps: %d loss: %s %siter time (s): %0.3f samples/sec: %0.3f"
                           % (prefix, s, loss, x, it, 64 / it))
            if breakdown:
                out.append(tline(t + 0.004, ["pipe_send_output", "pipe_recv_grad"], p2p))
                p2p = None
        elif s % every:
            out += [x for last, x in tl if last]
            continue
        else:
            out.append("%s[%s] [INFO] [logging.py:96:log_dist] [Rank 0] step=%d, skipped=%d, "
                       "lr=[4.99e-05, 4.99e-05], mom=[(0.9, 0.95), (0.9, 0.95)]" % (prefix, stamp(t), s, skipped))
            head = "0/%d" % s if old else "epoch=0/micro_step=%d/global_step=%d" % (4 * s, s)
            out.append("%s[%s] [INFO] [timer.py:260:stop] %s, RunningAvgSamplesPerSec=25.02, "
                       "CurrSamplesPerSec=%.4f, MemAllocated=4.32GB, MaxMemAllocated=38.49GB"
                       % (prefix, stamp(t + 0.002), head, 64 / d))
            # the boundary's micro and global timer lines after the throughput line
            out += [x for last, x in tl if last]
        if megatron and ezpz:
            ms = sum(durs[k] for k in range(s - every + 1, s + 1)) / every * 1e3
            out.append("%s[%s][INFO][training:1251] -  iteration=  %6d/  %6d | consumed_samples=  %10d | "
                       "consumed_tokens=  %12d | elapsed_time_per_iteration_ms=%.1f | learning_rate=0.000300 | "
                       "global_batch_size=   64 | lm loss=%.6f | loss_scale=8192.0 | actual_seqlen= 2048 | "
                       "number_of_skipped_iterations=  %d | number_of_nan_iterations=  0 | "
                       "samples_per_second=%.3f | [LM]TFLOPs=98.70 | [DS]TFLOPs=87.50 |"
                       % (prefix, stamp(t + 0.004)[:19], s, steps, 64 * s, 64 * 2048 * s, ms,
                          2.3 - s * 0.001, sum(1 for k in skip_at if s - every < k <= s), 64000 / ms))
        elif hf:
            out.append("%s{'loss': %.4f, 'grad_norm': 1.25, 'learning_rate': 4.99e-05, 'epoch': %.2f}"
                       % (prefix, 2.3 - s * 0.001, s / steps))
        elif megatron:
            ms = sum(durs[k] for k in range(s - every + 1, s + 1)) / every * 1e3
            out.append("%s iteration %8d/%8d | consumed samples: %12d | elapsed time per iteration (ms): "
                       "%.1f | learning rate: 4.990E-05 | global batch size:    64 | lm loss: 2.300000E+00 | "
                       "loss scale: 8192.0 | number of skipped iterations:   0 | number of nan iterations:   0 |"
                       % (prefix, s, steps, 64 * s, ms))
    open(path, "w").write("\n".join(out) + "\n")
    if breakdown:
        json.dump({str(k): v for k, v in phases.items()}, open(path + ".phases", "w"))
    return durs


if __name__ == "__main__":
    kw = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
    json.dump({str(k): v for k, v in gen(sys.argv[1], **kw).items()}, open(sys.argv[1] + ".truth", "w"))
