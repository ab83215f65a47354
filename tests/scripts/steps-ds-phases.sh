#!/usr/bin/env bash
# steps reads DeepSpeed's "wall_clock_breakdown": true timer lines as the
# phases of the throughput records they belong to. DeepSpeedEngine.step()
# (deepspeed/runtime/engine.py) prints through
# SynchronizedWallClockTimer.log (deepspeed/utils/timer.py, reset=True) at
# every micro-step that micro-step's timers and at every gradient-
# accumulation boundary, after that global step's throughput line, the
# global timers summed over its micro-steps; steps_per_print does not gate
# either. steps-deepspeed-gen.py writes such logs (4 micro-steps a global
# step, a throughput record every 10 steps, 300 steps) with the per-step
# phase truth (LOG.phases: the sum of the printed micro values), and a
# 400 ms forward spike at step 59. Checked, from construction:
#   - every record's forward, backward, optimizer (step) and comm
#     (bwd_allreduce) in --csv is the mean of its own steps' truth (the
#     record at 60: steps 51-60), within the %.2f of the lines;
#   - --json's phase means are the means of those record values over the
#     window, the forward stall is at 60 (the record holding step 59), and
#     the text shows the phase table;
#   - the same with the older engines' names (forward, backward, ...,
#     "rank=0 time (ms)");
#   - gradient accumulation 1 and a record every 5 steps;
#   - a record one of whose steps' line is missing gets no phase (its
#     neighbours keep theirs);
#   - the pipeline engine's lines (every steps_per_print steps, summed
#     since the last print) give no phase, never wrong ones;
#   - a Megatron-DeepSpeed log's DeepSpeed timer lines put no phase on
#     Megatron's iteration records, nor an HF Trainer on DeepSpeed log's
#     on its dicts (their pairing is not certain: docs/steps.md);
#   - a real pipeline engine log (its "steps: N loss: ..." records, no
#     throughput line): each record after the first gets, per phase, its
#     one line's value (the sum since the previous print) over the 10
#     steps, the mean of its steps' truth, with batch_input as data, and
#     as comm the p2p timer line train_batch prints right after the
#     record (global rank 0 is the first stage: pipe_send_output and
#     pipe_recv_grad, its blocking sends and receives, the wait for the
#     next stage included), not bwd_allreduce (it wraps no allreduce);
#     the forward stall at 60; the first record (its steps unknown: a
#     resumed process's first line sums fewer) none; a record whose timer
#     line is lost (40) none, and a record after a lost record (50: two
#     lines since the one at 30) none, its comm included (its p2p line
#     sums the 10 steps since the lost record's print, not 20).
# Before: the current names were not read (no phase); the older names'
# forward and backward were written onto the last record by each line, so
# every record carried the global step 9 steps after it (the forward stall
# reported at 50), and the Megatron records of a Megatron-DeepSpeed log
# got DeepSpeed's phases the same way; a pipeline engine log had no record.
# Until 5 Dec 2026 the pipeline engine's p2p line was not read: its
# records had no comm.
set -u
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
gen() { python3 "$here/steps-deepspeed-gen.py" "$tmp/$1.log" "$2" || exit 1; }
gen new '{"breakdown": "new", "spike": [59, 400], "seed": 11}'
gen old '{"breakdown": "old", "spike": [59, 400], "seed": 12}'
gen gas1 '{"breakdown": "new", "gas": 1, "every": 5, "steps": 200, "seed": 13}'
gen pipe '{"breakdown": "pipe", "seed": 14}'
gen mds '{"breakdown": "old", "megatron": true, "seed": 15}'
gen hfph '{"breakdown": "new", "hf": true, "seed": 19}'
# the global line of step 35 lost (record 40 covers 31-40)
gen hole '{"breakdown": "new", "seed": 16}'
python3 - "$tmp/hole.log" <<'PY' || exit 1
import sys
p = sys.argv[1]
lines = open(p).read().split("\n")
g = [i for i, l in enumerate(lines) if "| fwd: " in l]
del lines[g[34]]
open(p, "w").write("\n".join(lines))
PY
cp "$tmp/hole.log.phases" "$tmp/hole.log.phases.keep"
gen pp '{"pipe": true, "breakdown": "new", "spike": [59, 400], "seed": 17}'
# the global line of the print at 40 lost; the record line at 40 lost
gen pphole '{"pipe": true, "breakdown": "new", "seed": 18}'
gen pplost '{"pipe": true, "breakdown": "new", "seed": 18}'
python3 - "$tmp" <<'PY' || exit 1
import sys
t = sys.argv[1]
for c, pat in (("pphole", "| fwd: "), ("pplost", "steps: ")):
    lines = open("%s/%s.log" % (t, c)).read().split("\n")
    g = [i for i, l in enumerate(lines) if pat in l]
    del lines[g[3]]
    open("%s/%s.log" % (t, c), "w").write("\n".join(lines))
PY
for c in new old gas1 pipe mds hole pp pphole pplost hfph; do
	for o in json csv; do
		"$TS" steps --$o "$tmp/$c.log" >"$tmp/$c.$o" 2>"$tmp/$c.$o.err"
		echo $? >"$tmp/$c.$o.rc"
	done
done
"$TS" steps "$tmp/new.log" >"$tmp/new.txt" 2>&1
python3 - "$tmp" <<'PY' || fail=1
import csv, json, sys
t = sys.argv[1]
bad = []
names = ("forward", "backward", "optimizer", "comm")

def load(c):
    for o in ("json", "csv"):
        rc = int(open("%s/%s.%s.rc" % (t, c, o)).read())
        if rc:
            bad.append("%s --%s: exit %d: %s" % (c, o, rc, open("%s/%s.%s.err" % (t, c, o)).read().strip()))
            return None, None
    rows = list(csv.DictReader(open("%s/%s.csv" % (t, c))))
    return json.load(open("%s/%s.json" % (t, c))), rows

def col(row, k):
    v = row.get(k + "_ms")
    return float(v) if v else None

def check(c, every, missing=(), more=(), lost=(), less=()):
    d, rows = load(c)
    if d is None:
        return
    nm = tuple(k for k in names if k not in less) + more
    truth = {int(k): v for k, v in json.load(open("%s/%s.log.phases" % (t, c))).items()}
    recs = {}
    for row in rows:
        it = int(row["iteration"])
        want = {k: sum(truth[s][k] for s in range(it - every + 1, it + 1)) / every for k in nm}
        for k in nm:
            got = col(row, k)
            if it in missing:
                if got is not None:
                    bad.append("%s: record %d (a step's line missing) has %s %s" % (c, it, k, got))
            elif got is None or abs(got - want[k]) > 0.006:
                bad.append("%s: record %d %s %s ms, truth %.3f" % (c, it, k, got, want[k]))
        if any(col(row, k) is not None for k in less):
            bad.append("%s: record %d has %s" % (c, it, [k for k in less if col(row, k) is not None]))
        recs[it] = (row["window"], {k: col(row, k) for k in nm})
    if len(recs) != max(truth) // every - len(lost):
        bad.append("%s: %d records, want %d" % (c, len(recs), max(truth) // every - len(lost)))
    ph = {p["phase"]: p for p in d["phases"]}
    if sorted(ph) != sorted(nm):
        bad.append("%s: phases %s" % (c, sorted(ph)))
        return d
    inw = [v for w, v in recs.values() if w == "in"]
    for k in nm:
        vals = [v[k] for v in inw if v[k] is not None]
        want = sum(vals) / len(vals)
        if ph[k]["steps"] != len(vals) or abs(ph[k]["mean_ms"] - want) > 0.002:
            bad.append("%s: %s %d steps mean %.3f, want %d and %.3f"
                       % (c, k, ph[k]["steps"], ph[k]["mean_ms"], len(vals), want))
    return d

for c in ("new", "old"):
    d = check(c, 10)
    if d and d["phases"]:
        f = [p for p in d["phases"] if p["phase"] == "forward"][0]
        if f["first_stall_iteration"] != 60:
            bad.append("%s: forward stall at %s, want 60 (step 59's record)" % (c, f["first_stall_iteration"]))
check("gas1", 5)
d = check("pp", 10, missing=(10,), more=("data",))
if d and d["phases"]:
    f = [p for p in d["phases"] if p["phase"] == "forward"][0]
    if f["first_stall_iteration"] != 60:
        bad.append("pp: forward stall at %s, want 60" % f["first_stall_iteration"])
check("pphole", 10, missing=(10, 40), more=("data",))
check("pplost", 10, missing=(10, 50), more=("data",), lost=(40,))
check("hole", 10, missing=(40,))
for c in ("pipe", "mds", "hfph"):
    d, rows = load(c)
    if d is None:
        continue
    if d["phases"] or any(col(r, k) is not None for r in rows for k in names):
        bad.append("%s: phases %s (want none)" % (c, [p["phase"] for p in d["phases"]]))
    want = {"mds": "megatron", "hfph": "hf-trainer"}.get(c)
    if want and (d["format"] != want or d["iterations"] != 30):
        bad.append("%s: format %s, %d records" % (c, d["format"], d["iterations"]))
txt = open("%s/new.txt" % t).read()
if "phases" not in txt or not all("\n            %s " % k in txt for k in names):
    bad.append("new: the text has no phase table:\n" + txt)
for b in bad:
    print("FAIL", b)
sys.exit(1 if bad else 0)
PY

# The HF Trainer prints no step time; its final dict gives train_runtime R
# and train_steps_per_second = max_steps / R rounded to 3 decimals
# (transformers' speed_metrics()). Generated runs of known step count N and
# R (steps of known duration plus evaluations): below R = 1000 s the count
# is pinned and the whole-run mean is R / N exactly; above, the mean and
# the range the rounding allows, which must hold R / N; at 0.000 steps/s a
# lower bound only. Before, the mean was 1000 / steps-per-second, off by
# 0.02-0.21 % in the four short runs and up to 2.0 % in the long ones
# (62500.0 ms for 63800.8), with no range and no step count, and none at
# 0.000 steps/s; diagnose said only "unknown".
python3 - "$tmp" <<'PY' || exit 1
import json, random, sys
t = sys.argv[1]
rnd = random.Random(7)
runs = {"h1": (200, 0.83), "h2": (500, 1.37), "h3": (120, 7.9), "h4": (300, 2.9),
        "h5": (1000, 30.12), "h6": (2000, 61.3), "h7": (5000, 2.5), "h8": (10, 2500.0)}
truth = {}
for c, (n, step_s) in runs.items():
    r, out = 0.0, []
    for s in range(1, n + 1):
        r += step_s * (3 if s == 1 else 1) * (1 + rnd.gauss(0, 0.02))
        if s % 10 == 0:
            out.append("{'loss': %.4f, 'grad_norm': 1.2, 'learning_rate': 4e-05, 'epoch': %.2f}"
                       % (2.0 - s / n, s / n))
        if s % 100 == 0:
            r += 4.0 * step_s  # an evaluation inside the loop
    out.append("{'train_runtime': %.4f, 'train_samples_per_second': %.3f, 'train_steps_per_second': %s, "
               "'train_loss': 1.8, 'epoch': 1.0}" % (r, n * 8 / r, round(n / r, 3)))
    open("%s/%s.log" % (t, c), "w").write("\n".join(out) + "\n")
    truth[c] = (n, round(r, 4))
json.dump(truth, open("%s/hf.truth" % t, "w"))
PY
for c in h1 h2 h3 h4 h5 h6 h7 h8; do
	"$TS" steps --json "$tmp/$c.log" >"$tmp/$c.json" 2>"$tmp/$c.err" || { echo "FAIL $c: exit $?"; fail=1; }
	"$TS" steps "$tmp/$c.log" >"$tmp/$c.txt" 2>&1
	"$TS" diagnose "$tmp/$c.log" >"$tmp/$c.diag" 2>&1
done
python3 - "$tmp" <<'PY' || fail=1
import json, sys
t = sys.argv[1]
bad = []
for c, (n, r) in sorted(json.load(open("%s/hf.truth" % t)).items()):
    try:
        h = json.load(open("%s/%s.json" % (t, c)))["hf_trainer_summary"]
    except ValueError:
        bad.append("%s: no JSON" % c)
        continue
    want = r / n * 1e3
    txt, diag = open("%s/%s.txt" % (t, c)).read(), open("%s/%s.diag" % (t, c)).read()
    if r < 1000:
        # one count fits: N, and the mean is exact
        if h.get("max_steps") != n or abs(h["mean_step_time_ms"] - want) > 0.001:
            bad.append("%s: max_steps %s mean %s ms, want %d and %.3f" % (c, h.get("max_steps"), h["mean_step_time_ms"], n, want))
        if "%d steps in %.1f s: mean step %.1f ms" % (n, r, want) not in txt:
            bad.append("%s: text: %s" % (c, txt))
        if "whole-run mean %.1f ms" % want not in diag:
            bad.append("%s: diagnose: %s" % (c, diag))
    elif h["train_steps_per_s"] > 0:
        lo, hi = h.get("mean_step_time_low_ms"), h.get("mean_step_time_high_ms")
        if lo is None or hi is None or not lo <= want <= hi:
            bad.append("%s: truth %.3f ms outside [%s, %s]" % (c, want, lo, hi))
        elif "(%.1f-%.1f ms: the Trainer rounds" % (lo, hi) not in txt:
            bad.append("%s: text: %s" % (c, txt))
        elif "whole-run mean" not in diag:
            bad.append("%s: diagnose: %s" % (c, diag))
    else:
        # 0.000 steps/s: slower than 2000 s a step, no mean
        if h["mean_step_time_ms"] is not None or h.get("mean_step_time_low_ms") != 2e6 or want < 2e6:
            bad.append("%s: %s (truth %.1f ms)" % (c, h, want))
        elif "mean step over 2000000.0 ms" not in txt:
            bad.append("%s: text: %s" % (c, txt))
    if "whole-run mean" not in txt:
        bad.append("%s: the text does not say the mean is the whole run's: %s" % (c, txt))
for b in bad:
    print("FAIL", b)
sys.exit(1 if bad else 0)
PY
finish
