#!/usr/bin/env bash
# Value-level oracle for the training-log readers: the same training run
# captured the ways real jobs capture their logs must give the same steps.
# Runs of every dialect of docs/steps.md (Megatron-LM, Megatron Bridge,
# NeMo 2, AMD Primus, JSONL metrics; a slow warm-up, a stall, a NaN loss,
# memory lines) are written once plainly, each line behind the srun prefix
# "0: " (the reference), and VARIANTS times with, chosen at random per run:
# CRLF line ends; another launcher's prefix for the same rank 0
# ("[rank0]:", "[default0]:" of torchrun, "[1,0]<stdout>:" of mpirun
# --tag-output); a Python logging prefix after it (not with wraps); a log
# collector's RFC 3339 timestamp before everything (kubectl logs
# --timestamps, on every physical line, wrapped pieces too); ANSI
# colours around lines; blanks at line ends; blank lines; unrelated lines
# between the records (Python warnings, NCCL INFO lines, tqdm progress with
# carriage returns, a traceback of a warning); for the Megatron dialects
# every iteration record hard-wrapped at a random width from 60 to 160
# columns, as a terminal copy wraps it (anywhere: inside the word
# "iteration", its number, a key, a value); JSON Lines records spelled
# differently (members shuffled, blanks around separators and inside the
# braces, a key character
# as a \u escape, integers as 5e0 or 5.0). `steps --json` of each variant
# must give the reference's step series, window, statistics, throughput,
# loss health, ranks (rank 0 from every prefix) and warnings (file offsets
# and line numbers may move; nothing else may).
#   VARIANTS  variants per run (default 8); SEED  random seed (default 1)
set -u
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
python3 - "$TS" "$tmp" "${VARIANTS:-8}" "${SEED:-1}" <<'PY'
import json, os, random, re, subprocess, sys

ts, tmp, nvar, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
N = 120  # iterations logged, one per interval

def times(rng):
    """Step times in ms: a slow warm-up, a steady level with noise, a
    stall at iteration 70."""
    out = []
    for i in range(1, N + 1):
        t = 1000.0 + rng.gauss(0, 8)
        if i <= 4:
            t += 3000.0 / i
        if i == 70:
            t += 2500.0
        out.append(round(t, 1))
    return out

def loss(i, nan_at):
    return float("nan") if i == nan_at else 10.0 - 0.02 * i

def megatron(rng, bridge=False, primus=False):
    lines = []
    for i, t in enumerate(times(rng), 1):
        l = loss(i, 90)
        stamp = "[2025-10-02 22:%02d:%02d]" % (i // 60 % 60, i % 60) if bridge else \
            "[2024-04-06 10:%02d:%02d.%06d]" % (i // 60 % 60, i % 60, i * 1013 % 1000000)
        if bridge:
            lines.append("Step Time : %.2fs GPU utilization: %.1fMODEL_TFLOP/s/GPU" % (t / 1000, 401.2 * 1000 / t))
        et = "elapsed time per iteration (ms): %.1f" % t
        tf = "throughput per GPU (TFLOP/s/GPU): %.1f" % (401.2 * 1000 / t)
        if primus:
            et = "elapsed time per iteration (ms): %.1f/%.1f" % (t, t)
            tf = "throughput per GPU (TFLOP/s/GPU): %.1f/%.1f" % (401.2 * 1000 / t, 401.0)
        lines.append(" %s iteration %8d/%8d | consumed samples: %12d | %s | %s | "
                     "learning rate: %.6E | global batch size:   512 | lm loss: %s | loss scale: 1.0 | "
                     "grad norm: %.3f | number of skipped iterations:   0 | number of nan iterations: %3d |"
                     % (stamp, i, 10000, 512 * i, et, tf, 3e-4, "%.6E" % l if l == l else "nan",
                        0.7, 1 if l != l else 0))
        if i == 10:
            lines.append("[Rank 0] (after 10 iterations) memory (MB) | allocated: 11908.05 | "
                         "max allocated: 12712.44 | reserved: 12954.0 | max reserved: 12954.0")
    return lines

def nemo(rng):
    lines = []
    for i, t in enumerate(times(rng), 1):
        l = loss(i, 90)
        lines.append("Training epoch 0, iteration %d/%d | lr: 5.389e-06 | global_batch_size: 512 | "
                     "global_step: %d | max_memory_reserved: 57466159104 | max_memory_allocated: 53930270720 | "
                     "reduced_train_loss: %s | train_step_timing in s: %.3f | consumed_samples: %d | "
                     "TFLOPS_per_GPU: %.2f" % (i - 1, N - 1, i - 1, "%.4g" % l if l == l else "nan",
                                               t / 1000, 512 * i, 401.2 * 1000 / t))
        lines.append("")
    return lines

def hf(rng):
    """HF Trainer: a dict per logging step (no step time), an eval dict, the
    final summary."""
    lines = []
    for i in range(1, N + 1):
        l = loss(i, 90)
        lines.append("{'loss': %s, 'grad_norm': %r, 'learning_rate': %r, 'epoch': %r}"
                     % ("nan" if l != l else repr(round(l, 4)), round(0.7 + rng.random(), 4),
                        round(3e-4 * (1 - i / N), 10), round(i / N, 2)))
        if i == 60:
            lines.append("{'eval_loss': 8.91, 'eval_runtime': 12.5, 'eval_samples_per_second': 80.0, "
                         "'eval_steps_per_second': 10.0, 'epoch': 0.5}")
    lines.append("{'train_runtime': 130.2, 'train_samples_per_second': 7.37, "
                 "'train_steps_per_second': 0.922, 'train_loss': 8.8, 'epoch': 1.0}")
    return lines

def tq(rng, i, total):
    """One tqdm redraw of a bar at step i, as tqdm formats it."""
    pct = 100 * i // total
    return "%3d%%|%-10s| %d/%d [%02d:%02d<%02d:%02d,  1.00it/s]" % (
        pct, "#" * (pct // 10), i, total, i // 60, i % 60, (total - i) // 60, (total - i) % 60)

def hf_draw(lines, rng):
    """The dicts as a 2>&1 capture holds them: behind the bar's redraws,
    cleared by tqdm.write ('\r', blanks, '\r') or right after the bar's
    ']' (a print()); values in Python wrappers (a tensor grad norm, NumPy
    2 reprs); tqdm.write's trailing blanks."""
    out = []
    step = 0
    for k, line in enumerate(lines):
        # the Trainer's bar counts optimizer steps: redrawn at step i
        # before the dict of step i is written (the iteration read)
        step += line.startswith("{'loss'")
        if rng.random() < 0.5:
            line = re.sub(r"'grad_norm': ([^,]+)", r"'grad_norm': tensor(\1, device='cuda:0')", line)
            line = re.sub(r"'(loss|epoch)': ([^,}]+)", r"'\1': np.float64(\2)", line)
        bars = "".join("\r" + tq(rng, j, N) for j in range(max(0, step - rng.randint(0, 3)), step + 1))
        how = rng.randrange(3)
        if how == 1:
            line = bars + "\r" + " " * rng.randint(40, 120) + "\r" + line
        elif how == 2:
            line = bars + line
        out.append(line)
    return out

def lightning(rng):
    """NeMo 1: Lightning's bar, one redraw per step, the step's metrics in
    its postfix as tqdm prints numbers (3 significant digits)."""
    lines = []
    for i, t in enumerate(times(rng), 1):
        g, l = i - 1, loss(i, 90)
        lines.append("Epoch 0: : %3d%%|%-10s| %d/%d [%02d:%02d<11:30, v_num=, reduced_train_loss=%s, "
                     "global_step=%d.0, consumed_samples=%d.0, train_step_timing in s=%.3g, lr=3e-5]"
                     % (100 * i // N, "#" * (10 * i // N), i, N, i // 60, i % 60,
                        "nan" if l != l else "%.3g" % l, g, 512 * i, t / 1000))
    return lines

def lightning_draw(lines, rng):
    """The redraws as a capture holds them: many on one physical line after
    '\r' (the bar never prints a newline within an epoch), some drawn
    twice, a validation bar between, the bar's blocks lost in a copy."""
    out, k = [], 0
    while k < len(lines):
        m = rng.randint(1, 40)
        segs = []
        for line in lines[k:k + m]:
            if rng.random() < 0.3:
                line = re.sub(r"%\|[^|]*\| ", "% ", line)
            segs.append(line)
            if rng.random() < 0.2:
                segs.append(line)
            if rng.random() < 0.05:
                segs.append("Validation DataLoader 0:  50%|#####     | 1/2 [00:00<00:00,  5.00it/s]")
        out.append("\r" + "\r".join(segs))
        k += m
    return out

def jsonl(rng):
    return [json.dumps({"iteration": i, "step_ms": t, "loss": loss(i, 90) if i != 90 else "nan",
                        "tokens": 2097152}) for i, t in enumerate(times(rng), 1)]

RUNS = [("megatron-lm", megatron, {}), ("megatron-bridge", megatron, {"bridge": True}),
        ("primus", megatron, {"primus": True}), ("nemo2", nemo, {}), ("jsonl", jsonl, {}),
        ("hf-trainer", hf, {}), ("lightning-bar", lightning, {})]
DRAW = {"hf-trainer": hf_draw, "lightning-bar": lightning_draw}
JUNK = [
    "/usr/lib/python3/dist-packages/torch/distributed/c10d_logger.py:83: FutureWarning: `torch.distributed._all_gather_base` is a private function and will be deprecated.",
    "  warnings.warn(",
    "node-17:1234:5678 [0] NCCL INFO Channel 00/32 :    0   1   2   3   4   5   6   7",
    "node-17:1234:5678 [0] NCCL INFO comm 0x5566 rank 0 nranks 8 cudaDev 0 busId 18000 - Init COMPLETE",
    "Epoch 0:  12%|#2        | 12/100 [00:12<01:28,  1.00it/s]\rEpoch 0:  13%|#3        | 13/100 [00:13<01:27,  1.00it/s]",
    "Traceback (most recent call last):",
    "WARNING: Logging before flag parsing goes to stderr.",
]
PREFIXES = ["[rank0]:", "[default0]:", "[1,0]<stdout>:", "0: "]
LOGGING = ["", "", "2025-10-02 22:52:07,123 - root - INFO - ", "[2025-10-02 22:52:07,123][INFO] ",
           "INFO:megatron.training:", "[NeMo I 2025-10-02 22:52:07 nemo_logging:393] "]

def json_line(line, rng):
    """The same JSON object, spelled differently: members shuffled, blanks
    around the separators and inside the braces ("{ \"step\": 2 }": such
    records were dropped without a word), a key character as a \\u escape, integers as
    floats with an exponent."""
    d = json.loads(line)
    items = list(d.items())
    rng.shuffle(items)
    parts = []
    for k, v in items:
        key = json.dumps(k)
        if rng.random() < 0.3:
            c = rng.randrange(1, len(key) - 1)
            key = key[:c] + "\\u%04x" % ord(key[c]) + key[c + 1:]
        if isinstance(v, int) and not isinstance(v, bool) and rng.random() < 0.5:
            val = "%de0" % v if rng.random() < 0.5 else "%d.0" % v
        else:
            val = json.dumps(v)
        parts.append(key + rng.choice([":", ": ", " : "]) + val)
    return ("{" + rng.choice(["", "", " ", "\t"]) + rng.choice([",", ", ", " ,"]).join(parts) +
            rng.choice(["", " "]) + "}")

def render(lines, rng, is_json, wrap=False):
    out = []
    # Megatron prints its records with print(), never through logging, and
    # a wrap between a logging prefix and the record is not told apart
    # from a logging line (docs/steps.md): no logging prefix when wrapping
    prefix = rng.choice(PREFIXES) + ("" if wrap else rng.choice(LOGGING)) if rng else "0: "
    if is_json:
        prefix = ""  # JSONL metrics are files of their own, not launcher output
    for line in lines:
        if rng and not is_json and rng.random() < 0.15:
            out.append(prefix + rng.choice(JUNK))
        if rng and rng.random() < 0.05:
            out.append("")
        text = prefix + (json_line(line, rng) if rng and is_json else line)
        if rng and wrap and " iteration " in line:
            # a terminal copy hard-wraps the record; the pieces carry no prefix
            w = rng.randint(60, 160)
            pieces = [text[k:k + w] for k in range(0, len(text), w)]
            out.extend(pieces[:-1])
            text = pieces[-1]
        if rng and not is_json and rng.random() < 0.3:
            text = "\x1b[32m" + text + "\x1b[0m"
        if rng and rng.random() < 0.2:
            text += rng.choice([" ", "\t", "   "])
        out.append(text)
    if rng and not is_json and rng.random() < 0.3:
        # a log collector's timestamp on every physical line, wrapped
        # pieces too (kubectl logs --timestamps)
        out = ["2025-10-02T22:52:%02d.%09dZ %s" % (k // 100 % 60, k * 7919 % 10 ** 9, t)
               for k, t in enumerate(out)]
    eol = "\r\n" if rng and rng.random() < 0.4 else "\n"
    return eol.join(out) + eol

def semantic(d):
    """Everything but where in the file things were (inputs, notes, the
    offsets of warnings, the first NaN's file and line), which captures
    may move."""
    keep = {k: v for k, v in d.items() if k not in ("inputs", "notes", "warnings")}
    keep["warnings"] = sorted((w["code"], w.get("iteration") or 0) for w in d.get("warnings", []))
    # the file and line of the first NaN (the rank stays)
    keep["loss"] = {k: v for k, v in d["loss"].items()
                    if k not in ("first_nonfinite_file", "first_nonfinite_line")}
    return keep

def analyse(path):
    p = subprocess.run([ts, "steps", "-q", "--json", "--seq", "4096", path], capture_output=True)
    if p.returncode != 0:
        return [p.returncode, None, p.stderr.decode("utf-8", "replace")[:300]]
    return [0, semantic(json.loads(p.stdout)), ""]

rng = random.Random(seed)
fails = runs = 0
for name, fn, kw in RUNS:
    lines = fn(random.Random(7), **kw)
    ext = ".jsonl" if name == "jsonl" else ".log"
    ref_path = os.path.join(tmp, name + "-ref" + ext)
    open(ref_path, "w", newline="").write(render(lines, None, name == "jsonl"))
    ref = analyse(ref_path)
    if ref[0] != 0 or not ref[1]["iterations"]:
        print("FAIL %s: the reference does not read (exit %d): %s" % (name, ref[0], ref[2]))
        fails += 1
        continue
    for k in range(nvar):
        path = os.path.join(tmp, "%s-%d%s" % (name, k, ext))
        wrap = name.startswith("megatron") and rng.random() < 0.5
        drawn = DRAW[name](lines, rng) if name in DRAW else lines
        open(path, "w", newline="").write(render(drawn, rng, name == "jsonl", wrap))
        got = analyse(path)
        if wrap and got[1]:
            # the reader says that it joined wrapped records: that is all
            got[1]["warnings"] = [w for w in got[1]["warnings"] if w[0] != "joined-records"]
        runs += 1
        if got != ref:
            fails += 1
            why = got[2] if got[0] else next(
                ("%s: %s vs %s" % (key, json.dumps(ref[1][key])[:300], json.dumps(got[1][key])[:300])
                 for key in ref[1] if ref[1][key] != got[1][key]), "?")
            print("FAIL %s variant %d: %s" % (name, k, why))
            if os.environ.get("KEEP_FAILS"):
                os.replace(path, os.path.join(tmp, "..", "steps-syntax-fail-%s-%d%s" % (name, k, ext)))
                continue
        os.remove(path)
print("%d variants of %d runs, %d differ from their reference" % (runs, len(RUNS), fails))
sys.exit(1 if fails else 0)
PY
