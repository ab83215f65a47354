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
#   - the pipeline engine's lines (every steps_per_print steps, before the
#     throughput line, summed since the last print) give no phase, never
#     wrong ones;
#   - a Megatron-DeepSpeed log's DeepSpeed timer lines put no phase on
#     Megatron's iteration records.
# Before: the current names were not read (no phase); the older names'
# forward and backward were written onto the last record by each line, so
# every record carried the global step 9 steps after it (the forward stall
# reported at 50), and the Megatron records of a Megatron-DeepSpeed log
# got DeepSpeed's phases the same way.
set -u
TS=${TS:-build/trainscope}
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
gen() { python3 "$here/steps-deepspeed-gen.py" "$tmp/$1.log" "$2" || exit 1; }
gen new '{"breakdown": "new", "spike": [59, 400], "seed": 11}'
gen old '{"breakdown": "old", "spike": [59, 400], "seed": 12}'
gen gas1 '{"breakdown": "new", "gas": 1, "every": 5, "steps": 200, "seed": 13}'
gen pipe '{"breakdown": "pipe", "seed": 14}'
gen mds '{"breakdown": "old", "megatron": true, "seed": 15}'
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
for c in new old gas1 pipe mds hole; do
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

def check(c, every, missing=()):
    d, rows = load(c)
    if d is None:
        return
    truth = {int(k): v for k, v in json.load(open("%s/%s.log.phases" % (t, c))).items()}
    recs = {}
    for row in rows:
        it = int(row["iteration"])
        want = {k: sum(truth[s][k] for s in range(it - every + 1, it + 1)) / every for k in names}
        for k in names:
            got = col(row, k)
            if it in missing:
                if got is not None:
                    bad.append("%s: record %d (a step's line missing) has %s %s" % (c, it, k, got))
            elif got is None or abs(got - want[k]) > 0.006:
                bad.append("%s: record %d %s %s ms, truth %.3f" % (c, it, k, got, want[k]))
        recs[it] = (row["window"], {k: col(row, k) for k in names})
    if len(recs) != max(truth) // every:
        bad.append("%s: %d records, want %d" % (c, len(recs), max(truth) // every))
    ph = {p["phase"]: p for p in d["phases"]}
    if sorted(ph) != sorted(names):
        bad.append("%s: phases %s" % (c, sorted(ph)))
        return d
    inw = [v for w, v in recs.values() if w == "in"]
    for k in names:
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
check("hole", 10, missing=(40,))
for c in ("pipe", "mds"):
    d, rows = load(c)
    if d is None:
        continue
    if d["phases"] or any(col(r, k) is not None for r in rows for k in names):
        bad.append("%s: phases %s (want none)" % (c, [p["phase"] for p in d["phases"]]))
    if c == "mds" and (d["format"] != "megatron" or d["iterations"] != 30):
        bad.append("mds: format %s, %d records" % (d["format"], d["iterations"]))
txt = open("%s/new.txt" % t).read()
if "phases" not in txt or not all("\n            %s " % k in txt for k in names):
    bad.append("new: the text has no phase table:\n" + txt)
for b in bad:
    print("FAIL", b)
sys.exit(1 if bad else 0)
PY
[ $fail = 0 ] && echo "steps-ds-phases: ok"
exit $fail
