"""steps-titan-gen.py LOG [JSON-KWARGS]: a synthetic torchtitan log and its truth (LOG.truth)."""
import datetime, random, sys
def gen(path, *, seed=1, steps=200, freq=10, step_s=1.2, noise=0.01, color=True, prefix="[rank0]:",
        old=False, lineno=False, start_line=True, val_at=None, val_s=30.0, ckpt_at=None, ckpt_s=20.0,
        nan_from=None, cut=False, total=False, tag=True, dup=1, flops_per_token=None,
        tflops_scale=1.0):
    """Write a torchtitan console log of known truth to path; return the
    step durations in s ({step: seconds}). Stamps are Python logging's
    asctime (milliseconds truncated), records at step 1 and every freq-th
    step in the current format (grad_norm, tps, tflops) or the 2024 one
    (old: wps, no grad_norm, no tflops), with ANSI colours or without, after
    a launcher prefix; a validation of val_s seconds after step val_at, a
    checkpoint save of ckpt_s seconds after step ckpt_at (it lands in the
    next interval), NaN losses from nan_from, the last line cut in its tps
    field (cut); total: "step: N/T = P%" (a fork's way to show the length);
    tag=False: no "[titan] " before the stamp (a plain logging format); dup:
    each record line printed dup times (a logger with several handlers).
    With flops_per_token (torchtitan's count) a record's tps is the tokens
    per second per GPU of its interval (8 x 8192 tokens a step on 8 GPUs)
    and its tflops flops_per_token x tps / 1e12 x tflops_scale, as
    torchtitan's metrics compute them; else tps 6,826 and tflops 1,395.32
    on every line."""
    rnd = random.Random(seed)
    base = datetime.datetime(2025, 3, 10, 20, 5, 0)
    t = 7.25
    durs = {}
    out = []
    C = (lambda c: "\x1b[%dm" % c) if color else (lambda c: "")
    def stamp(x):
        d = base + datetime.timedelta(seconds=x)
        return d.strftime("%Y-%m-%d %H:%M:%S") + ",%03d" % (d.microsecond // 1000)
    def line(x, msg, times=1):
        mid = " - root - INFO - " if not lineno else " - root - INFO - train.py:612 - "
        for _ in range(times):
            out.append("%s%s%s%s%s" % (prefix, "[titan] " if tag else "", stamp(x), mid, msg))
    line(0.5, "Starting job: synthetic")
    if start_line:
        line(t, "Training starts at step 1, with local batch size 1, global batch size 8, "
                "gradient accumulation steps 1, sequence length 8192, total steps %d (warmup 20)" % steps)
    last = 0
    for s in range(1, steps + 1):
        d = (6.0 if s == 1 else step_s) * (1 + rnd.gauss(0, noise))
        durs[s] = d
        t += d
        if s == 1 or s % freq == 0:
            tps, tfl = "6,826", "1,395.32"
            if flops_per_token:
                per_gpu = 8 * 8192 / 8 / (sum(durs[x] for x in range(last + 1, s + 1)) / (s - last))
                tps = "{:,.0f}".format(per_gpu)
                tfl = "{:,.2f}".format(flops_per_token * per_gpu / 1e12 * tflops_scale)
            last = s
            loss = float("nan") if nan_from and s >= nan_from else 9.0 - 2.0 * s / steps
            lv = "nan" if loss != loss else "%7.4f" % loss
            if old:
                msg = "%sstep: %2d  %sloss: %s  %smemory: 42.22GiB(44.44%%)  %swps: 6,826  %smfu: 39.97%%%s" % (
                    C(36), s, C(32), lv, C(33), C(34), C(35), C(39))
            else:
                msg = ("%sstep: %2d  %sloss: %s  %sgrad_norm: %7.4f  %smemory: 42.22GiB(44.44%%)  "
                       "%stps: %s  %stflops: %s  %smfu: 39.97%%%s") % (
                    C(31), s, C(32), lv, C(33), 1.25, C(36), C(34), tps, C(96), tfl, C(35), C(39))
            if total:
                msg = msg.replace("step: %2d  " % s, "step: %d/%d = %.4f%%  " % (s, steps, 100.0 * s / steps), 1)
            line(t, msg, dup)
            if val_at == s:
                t += val_s
                out.append("%s[titan] %s - root - INFO - %svalidate step: %2d  %sloss: %7.4f  %smemory: 40.00GiB(42.11%%)  %stps: 9,000%s" % (
                    prefix, stamp(t), C(33), s, C(32), 8.5, C(36), C(34), C(39)))
            if ckpt_at == s:
                line(t + 0.01, "Saving the checkpoint (or staging if async is enabled).")
                t += ckpt_s
                line(t, "Finished saving the checkpoint (or staging if async is enabled)in %.2f seconds." % ckpt_s)
    text = "\n".join(out) + "\n"
    if cut:
        text = text.rstrip("\n")
        text = text[: text.rfind("tps:")]
    open(path, "w").write(text)
    return durs
if __name__ == "__main__":
    import json
    kw = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
    json.dump({str(k): v for k, v in gen(sys.argv[1], **kw).items()}, open(sys.argv[1] + ".truth", "w"))
