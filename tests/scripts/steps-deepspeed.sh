#!/usr/bin/env bash
# steps reads DeepSpeed's own engine lines (format deepspeed): every
# steps_per_print global steps the log_dist "[Rank 0] step=N, skipped=K,
# lr=[...]" line and the throughput timer's "epoch=E/micro_step=M/
# global_step=N, RunningAvgSamplesPerSec=..., MaxMemAllocated=XGB" line
# (before 2023 "E/N, RunningAvgSamplesPerSec="). A record's step time is the
# interval between consecutive throughput lines' stamps over the global
# steps between them; steps-deepspeed-gen.py records the generated
# durations (LOG.truth) and the window mean is checked against the mean of
# the intervals it holds, within 0.05 %. Skipped steps are the differences
# of the cumulative count (steps 3 and 5 fall in record 10, 150 in record
# 150); memory is GiB (1024**3 in DeepSpeed's code). A Megatron-DeepSpeed
# log (arguments block, then both DeepSpeed's lines and Megatron's
# iteration lines) is read from its iteration lines only: 30 records, not
# 60. Before, a DeepSpeed log was "no step records found". argonne-lcf's
# Megatron-DeepSpeed prints Megatron's record as "iteration= N/T |
# key=value | ..." (elapsed_time_per_iteration_ms, lm loss,
# number_of_skipped_iterations, ...): read as Megatron's (it was none).
# DeepSpeed's pipeline engine (PipelineEngine.train_batch) prints no
# throughput line but, every steps_per_print steps, "steps: N loss: L
# iter time (s): T samples/sec: S", T the mean of train_batch's time over
# the steps since the last print (%0.3f) and L step N's own loss: each
# record's step time is checked against the generated mean of its steps
# (within the 0.5 ms of %0.3f) and its loss against the generated one; a
# "nan" loss is non-finite from its record (200), an additional loss
# ("moe_loss: nan" at 120, the newest engines) is a non-finite extra loss,
# skipped steps come from the step line as above (33 and 150: 2), a line
# cut inside "iter time" is not read (29 records, not a wrong 30th), an
# unusable iter time (1e300 s) is counted (ignored_values) and leaves its
# record untimed, and a
# Megatron-DeepSpeed log with the pipeline engine is read from Megatron's
# iteration lines only (30), and a run directory holding a pipeline engine
# log finds it (detect: log-deepspeed). Before, a pipeline engine log was
# "no step records found", and a run directory with one "no training log".
set -u
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
gen() { python3 "$here/steps-deepspeed-gen.py" "$tmp/$1.log" "$2" || exit 1; }
gen base '{"skip_at": [3, 5, 150]}'
gen old '{"old": true, "seed": 2}'
gen pref '{"prefix": "[default0]:", "seed": 3, "every": 5, "steps": 200}'
gen mds '{"megatron": true, "seed": 4}'
# the same without its arguments block (a tail of the log): the DeepSpeed
# record read before the first iteration line is dropped
grep -v 'arguments\|\.\.\.\.\.\.\.\.' "$tmp/mds.log" >"$tmp/mdstail.log"
# argonne-lcf's fork prints Megatron's record as "iteration= N/T | key=value"
gen ezpz '{"megatron": true, "ezpz": true, "seed": 5, "skip_at": [95]}'
# the HF Trainer on DeepSpeed: its dicts are the records (30), no DeepSpeed
# record beside them (they were a second series, as another rank)
gen hfds '{"hf": true, "seed": 6}'
gen pipe '{"pipe": true, "skip_at": [33, 150], "nan_at": [200], "seed": 7}'
gen pipex '{"pipe": true, "xloss": true, "xnan_at": [120], "prefix": "[default0]:", "every": 5, "steps": 200, "seed": 8}'
gen pmds '{"pipe": true, "megatron": true, "seed": 9}'
# record 250's iter time unusable (1e300 s): counted as ignored, untimed
sed 's/^steps: 250 \(.*\)iter time (s): [0-9.]*/steps: 250 \1iter time (s): 1e300/' "$tmp/pipe.log" >"$tmp/pipebig.log"
# the last record cut inside its iter time ("0.8" of "0.801")
head -c -22 "$tmp/pipe.log" >"$tmp/pipecut.log"
tail -c 40 "$tmp/pipecut.log" | grep -q 'iter time (s): [0-9]\.[0-9]*$' || { echo "FAIL pipecut: not cut inside iter time"; fail=1; }
for c in base old pref mds mdstail ezpz hfds pipe pipex pmds pipecut pipebig; do
	"$TS" steps --json "$tmp/$c.log" >"$tmp/$c.json" 2>"$tmp/$c.err"
	echo $? >"$tmp/$c.rc"
done
"$TS" steps --csv "$tmp/pipe.log" >"$tmp/pipe.csv" 2>/dev/null
mkdir "$tmp/run" && cp "$tmp/pipe.log" "$tmp/run/train.log"
"$TS" steps --json "$tmp/run" >"$tmp/rundir.json" 2>"$tmp/rundir.err"
echo $? >"$tmp/rundir.rc"
python3 - "$tmp" <<'PY' || fail=1
import json, sys
t = sys.argv[1]
bad = []
def load(c):
    rc = int(open("%s/%s.rc" % (t, c)).read())
    if rc:
        bad.append("%s: exit %d: %s" % (c, rc, open("%s/%s.err" % (t, c)).read().strip()))
        return None
    return json.load(open("%s/%s.json" % (t, c)))
def check_mean(c, d, every):
    truth = {int(k): v for k, v in json.load(open("%s/%s.log.truth" % (t, c))).items()}
    w = d["window"]
    excl = {(x["first_iteration"], x["last_iteration"]) for x in w["excluded"]}
    means = []
    for r in range(2 * every, max(truth) + 1, every):
        if w["first_iteration"] <= r <= w["last_iteration"] and not any(a <= r <= b for a, b in excl):
            means.append(sum(truth[s] for s in range(r - every + 1, r + 1)) / every)
    want = sum(means) / len(means) * 1e3
    got = d["step_time_ms"]["mean"]
    if abs(got - want) > 0.0005 * want:
        bad.append("%s: window mean %.3f ms, truth %.3f" % (c, got, want))
for c, every in (("base", 10), ("old", 10), ("pref", 5)):
    d = load(c)
    if d is None:
        continue
    n = 40 if c == "pref" else 30
    if d["format"] != "deepspeed" or d["iterations"] != n:
        bad.append("%s: format %s, %s records" % (c, d["format"], d["iterations"]))
    check_mean(c, d, every)
    r0 = d["ranks"][0]
    if r0["rank"] != 0 or r0["max_allocated_bytes"] != round(38.49 * 2**30):
        bad.append("%s: rank row %s" % (c, r0))
d = load("base")
if d:
    if d["loss"]["skipped_iterations"] != 3:
        bad.append("base: %s skipped, want 3" % d["loss"]["skipped_iterations"])
    ex = [(x["reason"], x["first_iteration"]) for x in d["window"]["excluded"]]
    if ("skipped", 150) not in ex:
        bad.append("base: the record holding skipped step 150 is not left out: %s" % ex)
d = load("ezpz")
if d:
    if d["format"] != "megatron" or d["iterations"] != 30:
        bad.append("ezpz: format %s, %s records" % (d["format"], d["iterations"]))
    else:
        # each record's elapsed_time_per_iteration_ms is its interval's mean (1 decimal)
        check_mean("ezpz", d, 10)
        if d["loss"]["skipped_iterations"] != 1 or abs(d["loss"]["final"] - 2.0) > 1e-9:
            bad.append("ezpz: loss %s" % d["loss"])
d = load("hfds")
if d and (d["format"] != "hf-trainer" or d["iterations"] != 30 or len(d["ranks"]) > 1):
    bad.append("hfds: format %s, %d records, ranks %s" % (d["format"], d["iterations"], d["ranks"]))
for c in ("mds", "mdstail"):
    d = load(c)
    if d and (d["format"] != "megatron" or d["iterations"] != 30 or d["window"]["first_iteration"] != 20):
        bad.append("%s: format %s, %d records, window from %s (Megatron's 30 iteration lines, no DeepSpeed "
                   "duplicates)" % (c, d["format"], d["iterations"], d["window"]["first_iteration"]))
d = load("pipe")
if d:
    if d["format"] != "deepspeed" or d["iterations"] != 30:
        bad.append("pipe: format %s, %s records" % (d["format"], d["iterations"]))
    import csv
    truth = {int(k): v for k, v in json.load(open("%s/pipe.log.truth" % t)).items()}
    for row in csv.DictReader(open("%s/pipe.csv" % t)):
        n = int(row["iteration"])
        want = sum(truth[s] for s in range(n - 9, n + 1)) / 10 * 1e3
        if abs(float(row["step_time_ms"]) - want) > 0.5 + 1e-6:
            bad.append("pipe: record %d step %s ms, truth %.3f" % (n, row["step_time_ms"], want))
        lw = "nan" if n == 200 else "%.4f" % (2.3 - n * 0.001)
        lg = row["loss"].lower()
        if (lg != "nan" if n == 200 else lg == "" or abs(float(lg) - float(lw)) > 1e-9) or row["rank"] != "0":
            bad.append("pipe: record %d loss %s rank %s, want %s and 0" % (n, row["loss"], row["rank"], lw))
    l = d["loss"]
    if l["health_cause"] != "loss-nonfinite" or l["first_bad_iteration"] != 200 or l["skipped_iterations"] != 2:
        bad.append("pipe: loss %s" % l)
d = load("pipex")
if d:
    ev = {e["cause"]: e["first_iteration"] for e in d["loss"]["evidence"]}
    if d["iterations"] != 40 or ev.get("extra-loss-nonfinite") != 120 or d["ranks"][0]["rank"] != 0:
        bad.append("pipex: %d records, evidence %s, rank %s" % (d["iterations"], ev, d["ranks"][0]["rank"]))
d = load("pipecut")
if d and (d["iterations"] != 29 or d["last_iteration"] != 290):
    bad.append("pipecut: %d records up to %s, want 29 up to 290" % (d["iterations"], d["last_iteration"]))
d = load("pipebig")
if d and (d["iterations"] != 30 or d["ignored_values"].get("too_large") != 1 or
          d["window"]["steps"] != load("pipe")["window"]["steps"] - 1):
    bad.append("pipebig: %d records, ignored %s, window steps %d" % (d["iterations"], d["ignored_values"],
                                                                   d["window"]["steps"]))
d = load("rundir")
if d and (d["format"] != "deepspeed" or d["iterations"] != 30):
    bad.append("rundir: format %s, %d records" % (d["format"], d["iterations"]))
d = load("pmds")
if d and (d["format"] != "megatron" or d["iterations"] != 30):
    bad.append("pmds: format %s, %d records (Megatron's 30)" % (d["format"], d["iterations"]))
for b in bad:
    print("FAIL", b)
sys.exit(1 if bad else 0)
PY
finish
