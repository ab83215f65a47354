#!/usr/bin/env bash
# steps reads the records of DeepSpeed's pipeline engine in the forms its
# subclasses print, and a step time printed as zero as unknown, not 0 ms.
# steps-deepspeed-gen.py writes the logs with their truth (LOG.truth: each
# step's duration in s).
#   - tdrussell/qlora-pipe's CustomPipelineEngine prints its record
#     through its own log(), "[2023-11-07 01:50:42.234] [INFO] [qlora-pipe]
#     step:    10 /   300 loss: L iter time (s): T samples/sec: S" and
#     "eta (h): %0.3f" (engine.py) or "eta: 2m47s " (utils/engine.py):
#     its iter time is train_batch's timer since the last print over
#     steps_per_print, as DeepSpeed's own engine prints it. Checked: every
#     record (30; 40 behind a launcher prefix every 5 steps), its step time
#     the mean of its steps' truth within the 0.5 ms of %0.3f, its loss
#     the printed one, "nan" at 200 the first non-finite loss, the skipped
#     step (33) from DeepSpeed's step line, rank 0; a run directory holding
#     such a log finds it (detect: log-deepspeed). Before: no record at
#     all ("no step records found"; the run directory "no training log").
#   - "iter time (s): 0.000" (records 100 and 200 whose steps take 10 us:
#     shorter than %0.3f resolves), Megatron's "elapsed time per iteration
#     (ms): 0.0" (record 100 of a Megatron-DeepSpeed log) and two DeepSpeed
#     throughput lines with one stamp (record 100): the record keeps its
#     loss and has no step time (--csv: empty, window "untimed"), the
#     window mean is the mean of the other records' truth, and the warning
#     step-time-below-resolution names the file, line and iteration in
#     steps --json, the text, --csv's stderr, diagnose (text and --json)
#     and the report. Before: a 0 ms step in the series (the pipeline log's
#     mean 744 ms for a truth of 799; the others lost their steady window
#     to "no-steady-state").
set -u
TS=${TS:-build/trainscope}
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
gen() { python3 "$here/steps-deepspeed-gen.py" "$tmp/$1.log" "$2" || exit 1; }
gen qetah '{"pipe": true, "qlora": "etah", "skip_at": [33], "nan_at": [200], "seed": 21}'
gen qeta '{"pipe": true, "qlora": "eta", "prefix": "[default0]:", "every": 5, "steps": 200, "seed": 22}'
gen zpipe '{"pipe": true, "tiny_at": [100, 200], "seed": 23}'
gen zqlora '{"pipe": true, "qlora": "etah", "tiny_at": [150], "seed": 24}'
gen zmds '{"megatron": true, "tiny_at": [100], "seed": 25}'
gen ztput '{"tiny_at": [100], "seed": 26}'
# the construction: the tiny records print zero
grep -q 'step:   150 /   300 .* iter time (s): 0.000 ' "$tmp/zqlora.log" &&
grep -q '^steps: 200 .* iter time (s): 0.000 ' "$tmp/zpipe.log" &&
grep -q 'iteration      100/.*elapsed time per iteration (ms): 0.0 |' "$tmp/zmds.log" &&
[ "$(grep 'global_step=\(90\|100\),' "$tmp/ztput.log" | cut -c1-25 | sort -u | wc -l)" = 1 ] ||
	{ echo "FAIL: the generated records do not print zero"; exit 1; }
for c in qetah qeta zpipe zqlora zmds ztput; do
	"$TS" steps --json "$tmp/$c.log" >"$tmp/$c.json" 2>"$tmp/$c.err"
	echo $? >"$tmp/$c.rc"
	"$TS" steps --csv "$tmp/$c.log" >"$tmp/$c.csv" 2>"$tmp/$c.csverr"
	"$TS" steps "$tmp/$c.log" >"$tmp/$c.txt" 2>&1
done
mkdir "$tmp/run" && cp "$tmp/qetah.log" "$tmp/run/train.log"
"$TS" steps --json "$tmp/run" >"$tmp/rundir.json" 2>"$tmp/rundir.err"
echo $? >"$tmp/rundir.rc"
"$TS" diagnose "$tmp/zpipe.log" >"$tmp/diag.txt" 2>&1
"$TS" diagnose --json "$tmp/zpipe.log" >"$tmp/diag.json" 2>/dev/null
"$TS" report "$tmp/zpipe.log" -o "$tmp/report.html" >/dev/null 2>&1
python3 - "$tmp" <<'PY' || fail=1
import csv, json, sys
t = sys.argv[1]
bad = []
CODE = "step-time-below-resolution"
MSG = "print a step time of zero"

def load(c):
    rc = int(open("%s/%s.rc" % (t, c)).read())
    if rc:
        bad.append("%s: exit %d: %s" % (c, rc, open("%s/%s.err" % (t, c)).read().strip()))
        return None, None
    if c == "rundir":
        return json.load(open("%s/%s.json" % (t, c))), None
    return json.load(open("%s/%s.json" % (t, c))), list(csv.DictReader(open("%s/%s.csv" % (t, c))))

def truth(c):
    return {int(k): v for k, v in json.load(open("%s/%s.log.truth" % (t, c))).items()}

def records(c, every, n, tiny=(), nan=(), loss=True):
    d, rows = load(c)
    if d is None:
        return None
    tr = truth(c)
    if len(rows) != n:
        bad.append("%s: %d records, want %d" % (c, len(rows), n))
    for row in rows:
        it = int(row["iteration"])
        want = sum(tr[s] for s in range(it - every + 1, it + 1)) / every * 1e3
        st = row["step_time_ms"]
        if it in tiny:
            if st != "" or row["window"] != "untimed":
                bad.append("%s: record %d (10 us steps, printed zero) step %r window %s"
                           % (c, it, st, row["window"]))
        elif it > every and (st == "" or abs(float(st) - want) > 0.5 + 1e-6):
            bad.append("%s: record %d step %r ms, truth %.3f" % (c, it, st, want))
        if loss:
            lw = "nan" if it in nan else "%.4f" % (2.3 - it * 0.001)
            lg = row["loss"].lower()
            if lg != "nan" if it in nan else lg == "" or abs(float(lg) - float(lw)) > 1e-9:
                bad.append("%s: record %d loss %s, want %s" % (c, it, row["loss"], lw))
        if row["rank"] != ("" if c == "zmds" else "0"):
            bad.append("%s: record %d rank %s" % (c, it, row["rank"]))
    return d, rows, tr

def window_mean(c, d, rows, tr, every):
    w = d["window"]
    vals = [sum(tr[s] for s in range(int(r["iteration"]) - every + 1, int(r["iteration"]) + 1)) / every * 1e3
            for r in rows if r["window"] == "in" and r["step_time_ms"] != ""]
    want = sum(vals) / len(vals)
    got = d["step_time_ms"]["mean"]
    if abs(got - want) > 0.5:
        bad.append("%s: window mean %.3f ms, truth %.3f (%d records)" % (c, got, want, len(vals)))

def warned(c, d, tiny, line_of):
    ws = [w for w in d["warnings"] if w["code"] == CODE]
    if len(ws) != 1 or ws[0]["iteration"] != min(tiny) or not ws[0]["file"].endswith(c + ".log") or \
            ("%d record(s)" % len(tiny)) not in ws[0]["message"] or \
            ("line %d," % line_of) not in ws[0]["message"]:
        bad.append("%s: warnings %s" % (c, d["warnings"]))
    for o in ("txt", "csverr"):
        if MSG not in open("%s/%s.%s" % (t, c, o)).read():
            bad.append("%s: the warning is not in the %s output" % (c, o))

def first_line(c, pat):
    for i, l in enumerate(open("%s/%s.log" % (t, c)).read().split("\n")):
        if pat in l:
            return i + 1
    return -1

r = records("qetah", 10, 30, nan=(200,))
if r:
    d = r[0]
    l = d["loss"]
    if d["format"] != "deepspeed" or l["health_cause"] != "loss-nonfinite" or \
            l["first_bad_iteration"] != 200 or l["skipped_iterations"] != 1:
        bad.append("qetah: format %s, loss %s" % (d["format"], l))
    window_mean("qetah", *r, 10)
d, _ = load("rundir")
if d and (d["format"] != "deepspeed" or d["iterations"] != 30):
    bad.append("rundir: format %s, %d records" % (d["format"], d["iterations"]))
r = records("qeta", 5, 40)
if r:
    window_mean("qeta", *r, 5)
for c, every, n, tiny, pat, loss in (("zpipe", 10, 30, (100, 200), "steps: 100 ", True),
                                     ("zqlora", 10, 30, (150,), "step:   150 /", True),
                                     ("zmds", 10, 30, (100,), "iteration      100/", False),
                                     ("ztput", 10, 30, (100,), "global_step=100,", False)):
    r = records(c, every, n, tiny=tiny, loss=loss)
    if r:
        window_mean(c, *r, every)
        warned(c, r[0], tiny, first_line(c, pat))
        if r[0]["window"]["method"] == "mser-5-capped":
            bad.append("%s: no steady state found (window %s)" % (c, r[0]["window"]))
if MSG not in open("%s/diag.txt" % t).read():
    bad.append("diagnose: the warning is not in its text")
try:
    dj = json.load(open("%s/diag.json" % t))
    if CODE not in [w["code"] for w in dj["warnings"]]:
        bad.append("diagnose --json: warnings %s" % [w["code"] for w in dj["warnings"]])
except ValueError as e:
    bad.append("diagnose --json: %s" % e)
if CODE not in open("%s/report.html" % t, errors="replace").read():
    bad.append("report: no %s warning" % CODE)
for b in bad:
    print("FAIL", b)
sys.exit(1 if bad else 0)
PY
[ $fail = 0 ] && echo "steps-ds-pipe: ok"
exit $fail
