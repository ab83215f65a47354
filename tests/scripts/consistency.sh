#!/usr/bin/env bash
# One run, one answer: runs generated with a known truth (Megatron-LM logs
# with and without --log-interval > 1 and an arguments block, NeMo 2 lines,
# HF Trainer dicts, JSONL metrics with phases; warm-up, a periodic stall, a
# NaN loss from a known iteration, a resumed process, a cut last line, a
# log beside metrics) go through steps (text, --json, --csv), validate,
# diagnose (text, --json), advise, report (Markdown) and ab (A/A), and
# every output must agree with the others AND with the truth:
# - the steady window (first:last, steps) and its mean step time, in each
#   command and format (text at its printed precision);
# - the loss health: a run with NaN from iteration K is non-finite from K
#   everywhere, a clean run finite everywhere;
# - the set of warning codes of steps, validate, diagnose, advise, report,
#   and each warning of steps on the stderr of steps --csv (it printed
#   none: a CSV of a NaN run came with no word of the NaN);
# - the stall period, and the stalls' share of the window: diagnose's
#   "cost of the stalls" is the stalls warning's and validate's number
#   (diagnose printed the share of every outlier over the whole run: 16.6 %
#   against the warning's 17.1 % on a 20-step stall);
# - steps left out after an automatic window for a NaN loss are named
#   non-finite, never level-shift (no step time changed: by construction);
# - a declared window (--window, a contract's) reaching into the NaN steps
#   is the same object in steps, validate, diagnose and ab, and diagnose
#   lists the stalls steps counts in it (steps showed 50:159 "after-window 160:200",
#   validate 50:190 "matched");
# - the numbers add up: tokens/s = tokens per step / mean step time, the
#   phases sum to the step, the window's logged TFLOP/s is FLOPs / time,
#   the mean is that of the generated step times over the window.
set -u
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }

python3 - "$tmp" <<'EOF' || exit 1
import json, os, sys, random, math
out = sys.argv[1]
random.seed(7)
truth = {}
ARGS = """------------------------ arguments ------------------------
  global_batch_size ............................... 16
  group_query_attention ........................... True
  hidden_size ..................................... 4096
  ffn_hidden_size ................................. 14336
  kv_channels ..................................... 128
  make_vocab_size_divisible_by .................... 128
  normalization ................................... RMSNorm
  num_attention_heads ............................. 32
  num_layers ...................................... 32
  num_query_groups ................................ 8
  seq_length ...................................... 2048
  swiglu .......................................... True
  tensor_model_parallel_size ...................... 1
  untie_embeddings_and_output_weights ............. True
  vocab_size ...................................... 128256
  world_size ...................................... 8
-------------------- end of arguments ---------------------
"""
def times(n, base=100.0, warm=5, stall_every=None, stall_ms=0):
    t = []
    for i in range(1, n + 1):
        v = base + random.gauss(0, base / 100)
        if i <= warm:
            v = base * 4 if i == 1 else base * 1.5
        if stall_every and i > warm and i % stall_every == 0:
            v += stall_ms
        t.append(round(v, 1))
    return t
def write(name, s, **tr):
    p = os.path.join(out, name)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    open(p, "w").write(s)
    d = os.path.dirname(name)
    truth.setdefault(d, {}).update(tr)
def meg(n=200, interval=1, nan_from=None, trunc=False, args=False, base=100.0, **kw):
    t = times(n, base=base, **kw)
    s = ARGS if args else ""
    step = {}
    for i in range(interval, n + 1, interval):
        ms = round(sum(t[i - interval:i]) / interval, 1)
        step[i] = ms
        bad = nan_from is not None and i >= nan_from
        tp = "throughput per GPU (TFLOP/s/GPU): %.1f | " % (300.0 * base / ms) if args else ""
        s += (" iteration %8d/%8d | consumed samples: %12d | elapsed time per iteration (ms): "
              "%.1f | %slearning rate: 1.000000E-04 | global batch size: %5d | lm loss: %s | "
              "loss scale: 1.0 | grad norm: 1.000 | number of skipped iterations:   0 | "
              "number of nan iterations: %3d |\n"
              % (i, n, i * 16, ms, tp, 16, "nan" if bad else "%.6E" % (5 - i * 0.001),
                 interval if bad else 0))
    if trunc:
        s += " iteration %8d/%8d | consumed samples: %12d | elapsed ti" % (n + 1, n, n * 16)
    return s, step
def add_meg(d, **kw):
    s, step = meg(**kw)
    write(d + "/train.log", s, step=step, nan_from=kw.get("nan_from"),
          period=kw.get("stall_every"), args=kw.get("args", False))
add_meg("meg-stall", stall_every=20, stall_ms=400)
add_meg("meg-nan", nan_from=150)
add_meg("meg-trunc", trunc=True)
add_meg("meg-int10", n=400, interval=10)
add_meg("meg-args-nan", args=True, base=1000.0, nan_from=160, stall_every=30, stall_ms=2000)
# the same run with a contract declaring 50-190: NaN steps at the window's end
s, step = meg(args=True, base=1000.0, nan_from=160, stall_every=30, stall_ms=2000)
write("ctr-nan/train.log", s, step=step, nan_from=160, period=30, args=True, declared=[50, 190])
write("ctr-nan/contract.json", json.dumps({
    "schema": "trainscope.contract/1", "label": "training-equivalent", "label_reasons": [],
    "captured": {"time": "2026-12-04T17:00:00Z", "host": "node1"},
    "environment": {"gpu.count": "8"},
    "workload": {"seq_length": "2048", "steady_window": "50-190"}}, indent=1))
# resumed: a second process restarts at iteration 101
a, _ = meg(n=150)
b, _ = meg(n=200, warm=3)
write("meg-resume/train.log", "".join(a.splitlines(True)[:150]) + "training ...\n" +
      "".join(b.splitlines(True)[100:]), resumed=True)
# NeMo 2, NaN from 80
t = times(120, base=2000.0); s = ""
for i in range(1, 121):
    s += (" 0: Training epoch 0, iteration %d/120 | lr: 1e-05 | global_batch_size: 512 | "
          "global_step: %d | reduced_train_loss: %s | train_step_timing in s: %.4g | "
          "consumed_samples: %d | TFLOPS_per_GPU: 400.0\n"
          % (i - 1, i, "nan" if i >= 80 else "%.4g" % (5 - i * 0.001), t[i - 1] / 1000, i * 512))
write("nemo2-nan/train.log", s, nan_from=80)
# HF Trainer, no step numbers: NaN from the 30th dict
s = ""
for k, i in enumerate(range(10, 510, 10)):
    s += "{'loss': %s, 'grad_norm': 1.0, 'learning_rate': 1e-05, 'epoch': %.2f}\n" % (
        "nan" if k + 1 >= 30 else "%.4f" % (3 - i * 0.001), i / 500)
write("hf-nan/train.log", s, nan_from=30, untimed=True)
# JSONL with phases and tokens: a stall every 25, NaN from 120
def jsonl(n=200, nan_from=None, **kw):
    t = times(n, **kw); s = ""; step = {}
    for i in range(1, n + 1):
        step[i] = t[i - 1]
        d = {"iteration": i, "rank": 0, "step_ms": t[i - 1], "data_ms": 1.0,
             "fwd_ms": round(t[i - 1] * 0.3, 3), "bwd_ms": round(t[i - 1] * 0.6, 3),
             "opt_ms": round(t[i - 1] - 1.0 - round(t[i - 1] * 0.3, 3) - round(t[i - 1] * 0.6, 3), 3),
             "lm_loss": float("nan") if nan_from and i >= nan_from else 5 - i * 0.001,
             "tokens": 4096}
        s += json.dumps(d) + "\n"
    return s, step
s, step = jsonl(stall_every=25, stall_ms=300)
write("jsonl-stall/metrics.jsonl", s, step=step, period=25, tokens=4096, phases=True)
s, step = jsonl(nan_from=120)
write("jsonl-nan/metrics.jsonl", s, step=step, nan_from=120, tokens=4096, phases=True)
# metrics beside a log whose loss goes NaN at 170: the log's evidence counts
s, step = jsonl()
write("mixed/metrics.jsonl", s, step=step, tokens=4096)
s, _ = meg(nan_from=170)
write("mixed/train.log", s, nan_from=170)
json.dump(truth, open(os.path.join(out, "truth.json"), "w"))
EOF

python3 - "$TS" "$tmp" <<'EOF'
import json, os, re, subprocess, sys
TS, tmp = sys.argv[1], sys.argv[2]
truth = json.load(open(os.path.join(tmp, "truth.json")))
fails = []
def bad(case, msg):
    fails.append("%s: %s" % (case, msg))
def run(*args):
    p = subprocess.run([TS] + list(args), capture_output=True, text=True)
    if p.returncode not in (0, 1):
        raise RuntimeError("%s exit %d: %s" % (" ".join(args), p.returncode, p.stderr[:300]))
    return p.stdout, p.stderr
def js(*args):
    return json.loads(run(*args)[0])
def codes(d):
    return sorted(set(w["code"] for w in d.get("warnings", [])))
def win(w):
    return (w["first_iteration"], w["last_iteration"], w["steps"]) if w else None
# codes only a trace stage or the diagnosis adds
DIAG_ONLY = {"window-outside-trace", "profiled-steps-slower"}
def pct_in(text, pat):
    m = re.search(pat, text)
    return float(m.group(1)) if m else None

for case in sorted(truth):
    T = truth[case]
    R = os.path.join(tmp, case)
    try:
        sj = js("steps", "--json", R)
        stxt, serr = run("steps", R)
        vj = js("validate", "--json", R)
        dj = js("diagnose", "--json", R)
        dtxt, derr = run("diagnose", R)
        aj = js("advise", "--json", R)
        md = os.path.join(tmp, case + ".md")
        run("report", R, "-o", md)
        rmd = open(md).read()
        # ab needs step times (a run without them is its usage error)
        abj = js("ab", "--json", R, R) if not T.get("untimed") else None
        csv, csverr = run("steps", "--csv", R)
    except (RuntimeError, ValueError) as e:
        bad(case, str(e)); continue
    sw = sj["window"]; st = sj["step_time_ms"]
    # --- the window and its mean, everywhere
    if win(vj["window"]) != win(sw):
        bad(case, "validate window %s != steps %s" % (win(vj["window"]), win(sw)))
    if win(dj["window"]) != win(sw):
        bad(case, "diagnose window %s != steps %s" % (win(dj["window"]), win(sw)))
    if sw["first_iteration"] is not None:
        m = re.search(r"window\s+iterations (\d+):(\d+), (\d+) steps", stxt)
        if not m or tuple(map(int, m.groups())) != win(sw):
            bad(case, "steps text window %s != json %s" % (m and m.groups(), win(sw)))
        mean = st["mean"]
        m = re.search(r"mean ([\d.]+) ms", stxt)
        if not m or abs(float(m.group(1)) - mean) > 0.05 + 1e-9:
            bad(case, "steps text mean %s != json %.3f" % (m and m.group(1), mean))
        if abs(dj["steps"]["step_time_ms"]["mean"] - mean) > 1e-9:
            bad(case, "diagnose mean %s != steps %s" % (dj["steps"]["step_time_ms"]["mean"], mean))
        m = re.search(r"step time: ([\d.]+) ms.*iterations (\d+)-(\d+) \(n=(\d+)\)", dtxt)
        if not m or abs(float(m.group(1)) - mean) > 0.05 + 1e-9 or \
           tuple(map(int, m.groups()[1:])) != win(sw):
            bad(case, "diagnose text '%s' != window %s mean %.3f" % (m and m.group(0), win(sw), mean))
        m = re.search(r"step time \| ([\d.]+) ms \|.*iterations (\d+)-(\d+), n=(\d+)", rmd)
        if not m or abs(float(m.group(1)) - mean) > 0.05 + 1e-9 or \
           tuple(map(int, m.groups()[1:])) != win(sw):
            bad(case, "report row '%s' != window %s mean %.3f" % (m and m.group(0), win(sw), mean))
        for c in vj["checks"]:
            if c["name"] == "step_time":
                v = pct_in(c["evidence"], r"mean ([\d.]+) ms")
                if v is None or abs(v - mean) > 0.005 + 1e-9:
                    bad(case, "validate mean %s != steps %.3f" % (v, mean))
        if win(abj["window"]) != win(sw) or abs(abj["baseline"][0]["mean_step_ms"] - mean) > 1e-9:
            bad(case, "ab A/A window %s mean %s != steps %s %s" % (
                win(abj["window"]), abj["baseline"][0]["mean_step_ms"], win(sw), mean))
        # the truth: the generated step times over the window, artefacts out
        if "step" in T and not T.get("nan_from"):
            xs = [v for k, v in T["step"].items()
                  if sw["first_iteration"] <= int(k) <= sw["last_iteration"]]
            if sw["steps"] == len(xs) and abs(sum(xs) / len(xs) - mean) > 0.001:
                bad(case, "mean %.3f, the generated steps' %.4f" % (mean, sum(xs) / len(xs)))
    # --- loss health
    lh = sj["loss"]
    nf = T.get("nan_from")
    if nf:
        if lh["health"] != "non-finite" or lh["first_bad_iteration"] != nf:
            bad(case, "steps health %s from %s, truth non-finite from %d" % (
                lh["health"], lh["first_bad_iteration"], nf))
        if not re.search(r"health non-finite from (iteration|record ordinal) %d\b" % nf, stxt):
            bad(case, "steps text health is not non-finite from %d" % nf)
        if not any(f["title"] == "loss health: non-finite" for f in dj["findings"]):
            bad(case, "diagnose calls the NaN run healthy")
        if "loss health: non-finite" not in rmd:
            bad(case, "report calls the NaN run healthy")
        chk = {c["name"]: c["status"] for c in vj["checks"]}
        if chk.get("loss_finite", "fail") != "fail":
            bad(case, "validate loss_finite %s on a NaN run" % chk.get("loss_finite"))
        ab_nan = [c for c in abj["correctness"]["checks"] if c["name"] == "nan_inf"] if abj else []
        if abj and (not ab_nan or ab_nan[0]["status"] != "failed"):
            bad(case, "ab A/A nan_inf %s on a NaN run" % (ab_nan and ab_nan[0]["status"]))
        # the steps after an automatic window are out for their NaN loss
        for e in sw.get("excluded", []):
            if e["first_iteration"] <= nf <= e["last_iteration"] and e["reason"] != "non-finite":
                bad(case, "the NaN steps %d:%d are excluded as %s" % (
                    e["first_iteration"], e["last_iteration"], e["reason"]))
    else:
        if lh["health"] != "finite":
            bad(case, "steps health %s on a clean run" % lh["health"])
        if "loss health: finite" not in rmd or "loss health: finite" not in dtxt:
            bad(case, "diagnose or report do not call the clean run finite")
    # --- warnings travel
    want = codes(sj)
    for name, d in (("validate", vj), ("advise", aj)):
        if codes(d) != want:
            bad(case, "%s codes %s != steps %s" % (name, codes(d), want))
    dc = sorted(set(codes(dj)) - DIAG_ONLY)
    if dc != want:
        bad(case, "diagnose codes %s != steps %s" % (dc, want))
    rw = rmd[rmd.find("## Warnings"):] if "## Warnings" in rmd else ""
    rc = sorted(set(re.findall(r"^  ([a-z0-9-]+)$", rw, re.M)))
    if rc != want:
        bad(case, "report codes %s != steps %s" % (rc, want))
    for c in want:
        if c not in ("ordinal-steps",) and not re.search(r"^warning: ", serr + stxt, re.M):
            bad(case, "steps text prints no warning line")
            break
    if len(dj["stalls"]["iterations"]) != sj["window_stalls"]:
        bad(case, "diagnose lists %d stalls, steps counts %d in the window" % (
            len(dj["stalls"]["iterations"]), sj["window_stalls"]))
    if T.get("declared"):
        a, b = T["declared"]
        for name, w in (("steps", sw), ("validate", vj["window"]), ("diagnose", dj["window"])):
            if (w["first_iteration"], w["last_iteration"], w["method"]) != (a, b, "contract"):
                bad(case, "%s window %s:%s (%s), the contract's %d:%d" % (
                    name, w["first_iteration"], w["last_iteration"], w["method"], a, b))
    # --- stalls: the period, and one share of the window's time
    if "of wall time" in stxt:
        bad(case, "steps text gives a stall share 'of wall time', not naming the run or the window")
    if T.get("period"):
        p = sj["periodic_stall"]
        if not p or p["period"] != T["period"]:
            bad(case, "steps periodic stall %s, truth every %d" % (p, T["period"]))
        if dj["stalls"]["period_iterations"] != T["period"]:
            bad(case, "diagnose stall period %s, truth %d" % (dj["stalls"]["period_iterations"], T["period"]))
        share = sj["window_stall_time_pct"]
        sw_msg = [w["message"] for w in sj["warnings"] if w["code"] == "stalls"]
        v = pct_in(sw_msg[0] if sw_msg else "", r"\(([\d.]+) % of its time")
        if v is None or abs(v - share) > 0.05 + 1e-9:
            bad(case, "stalls warning %s %% != window_stall_time_pct %s" % (v, share))
        vs = [c["evidence"] for c in vj["checks"] if c["name"] == "step_time"]
        v = pct_in(vs[0] if vs else "", r"([\d.]+) % of the window's time")
        if v is None or abs(v - share) > 0.05 + 1e-9:
            bad(case, "validate stall share %s %% != steps %s" % (v, share))
        ev = [e["detail"] for e in dj["wall"]["evidence"] if e["title"].startswith("cost of the stalls")]
        v = pct_in(ev[0] if ev else "", r"([\d.]+) % of the")
        if v is None or abs(v - share) > 0.05 + 1e-9:
            bad(case, "diagnose stall cost %s %% != the window's %s %%" % (v, share))
    # --- the numbers add up
    thr = sj["throughput"]
    if T.get("tokens") and sw["first_iteration"] is not None:
        if thr["tokens_per_step"] != T["tokens"]:
            bad(case, "tokens per step %s, truth %d" % (thr["tokens_per_step"], T["tokens"]))
        want_tps = T["tokens"] * 1000.0 / st["mean"]
        if thr["tokens_per_s"] is None or abs(thr["tokens_per_s"] - want_tps) > 0.05 + want_tps * 2e-5:
            bad(case, "tokens/s %s != tokens/step / mean = %.1f" % (thr["tokens_per_s"], want_tps))
        if dj["throughput"]["tokens_per_s"] != thr["tokens_per_s"]:
            bad(case, "diagnose tokens/s %s != steps %s" % (dj["throughput"]["tokens_per_s"], thr["tokens_per_s"]))
    if T.get("phases"):
        ph = sj["phases"]
        tot = sum(p["mean_ms"] for p in ph)
        if abs(tot - st["mean"]) > 0.005 * len(ph) + 1e-9:
            bad(case, "phases sum to %.3f ms, the step is %.3f" % (tot, st["mean"]))
        sh = sum(p["step_share_pct"] for p in ph)
        if abs(sh - 100) > 0.01 * len(ph) + 1e-9:
            bad(case, "phase shares sum to %.2f %%" % sh)
    if T.get("args") and sw["first_iteration"] is not None:
        # 300 TFLOP/s at 1000 ms: FLOPs per step constant, so FLOPs / time
        want_tf = 300.0 * 1000.0 / st["mean"]
        if abs(thr["logged_tflops_per_gpu_mean"] - want_tf) > 0.01 + 1e-9:
            bad(case, "logged TFLOP/s over the window %s, FLOPs / time %.2f" % (
                thr["logged_tflops_per_gpu_mean"], want_tf))
        if thr["tokens_per_s"] is None or abs(thr["tokens_per_s"] - 16 * 2048 * 1000.0 / st["mean"]) > 0.1:
            bad(case, "tokens/s %s != gbs x seq / mean" % thr["tokens_per_s"])
    if T.get("resumed") and "resumed-log" not in want:
        bad(case, "resumed log without resumed-log")
    if case == "meg-trunc" and "truncated-log" not in want:
        bad(case, "cut last line without truncated-log")
    for w in sj["warnings"]:
        if w["message"] not in csverr:
            bad(case, "steps --csv: warning %s not on stderr" % w["code"])
    if csv.count("\n") - 1 != sj["iterations"] and not T.get("untimed"):
        bad(case, "csv has %d rows, steps %d iterations" % (csv.count("\n") - 1, sj["iterations"]))

# a declared window reaching into the NaN steps: one object everywhere
for case, spec in (("meg-args-nan", "50:190"), ("jsonl-nan", "30:150")):
    R = os.path.join(tmp, case)
    ws = {}
    ws["steps"] = js("steps", "--json", "--window", spec, R)["window"]
    ws["validate"] = js("validate", "--json", "--window", spec, R)["window"]
    ws["ab"] = js("ab", "--json", "--window", spec, R, R)["window"]
    a, b = map(int, spec.split(":"))
    nf = truth[case]["nan_from"]
    for name, w in ws.items():
        if (w["first_iteration"], w["last_iteration"]) != (a, b) or \
           w["steps"] != nf - a or (name != "ab" and w["method"] != "declared"):
            bad(case, "--window %s: %s window %s:%s, %s steps (%s), truth %d:%d, %d steps (declared)" % (
                spec, name, w["first_iteration"], w["last_iteration"], w["steps"], w["method"],
                a, b, nf - a))
        if name != "ab" and not any(e["reason"] == "non-finite" and e["first_iteration"] == nf and
                                    e["last_iteration"] == b for e in w["excluded"]):
            bad(case, "--window %s: %s does not name %d:%d non-finite" % (spec, name, nf, b))

for f in fails:
    print("FAIL:", f)
print("%d cases, %d failures" % (len(truth), len(fails)))
sys.exit(1 if fails else 0)
EOF
