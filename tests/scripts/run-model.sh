#!/usr/bin/env bash
# One run, one answer (issue 12): every command that takes a run reads it
# through the run model. Each case below is a defect measured on the old
# code (it failed there), on the shared CPU runs, the examples and small
# runs built here with known truth:
#  - a NaN loss in a run directory: diagnose says "not finite" (it said
#    "finite, 0 NaN iterations" while steps counted the NaN);
#  - two metrics files for one rank: exit 2 naming both (steps kept the last
#    one given, so argument order changed the answer);
#  - a folder holding several runs: exit 2 listing them (one mixed step time),
#    also when only its traces tell (different world sizes);
#  - the window object is identical in steps, diagnose, validate, ab
#    (self-compare) on every shared CPU run and both examples, with the same
#    steps in it (profiler steps were in steps' mean, not in ab's: a_dense
#    340.6 vs 319.0 ms), and diagnose embeds `steps --json` exactly (less
#    schema), and diagnose's stalls and log evidence are the window's;
#  - validate passes only with a declared window (or --accept-auto-window);
#  - diagnose carries the steps warnings (no-steady-state, long-warmup) and
#    says when the profiled steps are slower than steady ones
#    (examples/run-h200: profiled 22-25) or lie outside the window
#    (examples/run);
#  - a truncated trace in a run directory is a truncated-trace warning and
#    no share above 100 % is printed;
#  - a corrupt trace in a run directory does not stop steps, validate or ab
#    (they do not need it): an unused-input warning; nor diagnose and report
#    when detection takes it for a trace and it is damaged mid-file;
#  - a resumed log (iterations go back) keeps the later segment, with a
#    resumed-log warning;
#  - a Megatron log's arguments block (seq_length, global_batch_size,
#    world_size, the model) gives tokens/s in steps and diagnose, and
#    diagnose's model FLOP rate, without --seq or a config.json (diagnose
#    asked for "the Megatron arguments block" while one was there);
#  - a run directory whose files start with a UTF-8 byte order mark (as
#    Windows editors save them) is the same run: the same steps source,
#    metrics and configs in diagnose (the JSONL's first record was dropped,
#    the metrics file and config.json were not recognised);
#  - steps given a trace or a folder without a log says what it found
#    there ("it is a kineto-trace"; it said only "no training log found");
#  - every --json has a top-level warnings array of {code, message, ...};
#    trace --json too: a trace cut at byte 300000 carries a truncated-trace
#    warning at that offset (it was only on stderr and in the rank object).
set -u
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
CPU=$DATA/traces/cpu
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
[ -d "$CPU/a_dense" ] || { echo "$CPU not found"; exit 77; }
jget() { # file key.path -> value (python json)
	python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    d=d[int(k)] if isinstance(d,list) else d[k]
print(d)' "$1" "$2"
}
codes() { # file -> the warning codes, space-separated
	python3 -c 'import json,sys
print(" ".join(w["code"] for w in json.load(open(sys.argv[1]))["warnings"]))' "$1"
}

# --- a NaN loss at iteration 30 (a_dense's metrics, loss replaced by NaN)
mkdir -p "$tmp/nan"
python3 - "$CPU/a_dense/metrics_rank0.jsonl" "$tmp/nan/metrics_rank0.jsonl" <<'PY'
import json, sys
out = open(sys.argv[2], "w")
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["iteration"] == 30:
        line = line.replace('"lm_loss": %s' % json.dumps(r["lm_loss"]), '"lm_loss": NaN')
    out.write(line)
PY
grep -q '"lm_loss": NaN' "$tmp/nan/metrics_rank0.jsonl" || bad "NaN fixture not made"
"$TS" diagnose --json "$tmp/nan" >"$tmp/nan.json" || bad "diagnose on the NaN run failed"
python3 - "$tmp/nan.json" <<'PY' || bad "diagnose calls a NaN run healthy"
import json, sys
d = json.load(open(sys.argv[1]))
titles = [f["title"] for f in d["findings"]]
assert "loss health: non-finite" in titles, titles
assert d["steps"]["loss"]["first_nan_iteration"] == 30
PY

# --- two metrics files for rank 0: an error naming both, whatever the order
mkdir -p "$tmp/two"
cp "$CPU/a_dense/metrics_rank0.jsonl" "$tmp/two/metrics_rank0.jsonl"
cp "$CPU/d_stall/metrics_rank0.jsonl" "$tmp/two/metrics_rank0_retry.jsonl"
for cmd in steps validate; do
	"$TS" $cmd "$tmp/two" >/dev/null 2>"$tmp/two.err"; rc=$?
	[ $rc = 2 ] || bad "$cmd: two series for rank 0: exit $rc, want 2"
	grep -q "metrics_rank0.jsonl" "$tmp/two.err" && grep -q "metrics_rank0_retry.jsonl" "$tmp/two.err" ||
		bad "$cmd: the two files are not both named: $(cat "$tmp/two.err")"
done
"$TS" steps "$tmp/two/metrics_rank0_retry.jsonl" "$tmp/two/metrics_rank0.jsonl" >/dev/null 2>&1
[ $? = 2 ] || bad "steps FILE FILE for one rank: not exit 2"

# --- a folder of several runs
mkdir -p "$tmp/many"
for r in a_dense b_moe d_stall; do
	mkdir -p "$tmp/many/$r" && cp "$CPU/$r/metrics_rank0.jsonl" "$tmp/many/$r/"
done
"$TS" steps "$tmp/many" >/dev/null 2>"$tmp/many.err"; rc=$?
[ $rc = 2 ] || bad "several runs: exit $rc, want 2"
grep -q "holds 3 runs" "$tmp/many.err" && grep -q "$tmp/many/b_moe" "$tmp/many.err" ||
	bad "several runs not listed: $(cat "$tmp/many.err")"

# --- traces of different jobs (world sizes 2 and 8) in one folder
td=$DATA/traces/hta/trace_diff
if [ -f "$td/control/control.json.gz" ]; then
	mkdir -p "$tmp/jobs"
	cp "$CPU/c_ddp2/metrics_rank0.jsonl" "$CPU/c_ddp2/"rank0.*.pt.trace.json.gz "$tmp/jobs/"
	cp "$td/control/control.json.gz" "$tmp/jobs/"
	"$TS" diagnose "$tmp/jobs" >/dev/null 2>"$tmp/jobs.err"; rc=$?
	[ $rc = 2 ] || bad "traces of two jobs: exit $rc, want 2"
	grep -q "world size 8" "$tmp/jobs.err" && grep -q "world size 2" "$tmp/jobs.err" ||
		bad "traces of two jobs not listed: $(cat "$tmp/jobs.err")"
fi

# --- the same window everywhere; diagnose embeds steps
for run in "$CPU/a_dense" "$CPU/b_moe" "$CPU/c_ddp2" "$CPU/d_stall" "$CPU/e_straggler" \
	   examples/run examples/run-h200; do
	n=$(basename "$run")
	"$TS" steps --json "$run" >"$tmp/$n.steps.json" || bad "$n: steps failed"
	"$TS" diagnose --json "$run" >"$tmp/$n.diag.json" || bad "$n: diagnose failed"
	"$TS" validate --json --accept-auto-window "$run" >"$tmp/$n.val.json"
	"$TS" ab --json "$run" "$run" >"$tmp/$n.ab.json"
	python3 - "$tmp/$n" <<'PY' || bad "$n: the window differs between commands, or diagnose.steps != steps"
import json, sys
p = sys.argv[1]
s, d, v, a = (json.load(open(p + x)) for x in (".steps.json", ".diag.json", ".val.json", ".ab.json"))
w = s["window"]
assert w["first_iteration"] is not None and w["steps"] > 0, w
for name, o in (("diagnose", d), ("validate", v), ("ab", a)):
    assert o["window"] == w, (name, o["window"], w)
# one set of steps: the same count and mean step time in steps, validate and ab
assert v["window_steps_timed"] == w["steps"], (v["window_steps_timed"], w["steps"])
assert a["paired_steps"] == w["steps"] == a["baseline"][0]["window_steps"], (a["paired_steps"], w)
assert abs(a["baseline"][0]["mean_step_ms"] - s["step_time_ms"]["mean"]) < 0.006, \
    (a["baseline"][0]["mean_step_ms"], s["step_time_ms"]["mean"])
s.pop("schema")
assert d["steps"] == s
# one stall count: diagnose's stalls are the window's (examples/run: it
# counted warm-up steps 16 and 17 before the window as stalls)
assert len(d["stalls"]["iterations"]) == s["window_stalls"], (d["stalls"], s["window_stalls"])
assert all(w["first_iteration"] <= i <= w["last_iteration"] for i in d["stalls"]["iterations"])
# the log evidence covers the window's steps (d_stall: it took the 59 steps
# after warm-up, profiled ones included, beside a 49-step window)
for e in d["wall"]["evidence"]:
    if e["title"].startswith("data-loader time over"):
        assert e["title"].endswith("steady window, stalls included (log)"), e
        assert e["detail"].endswith(" over %d iterations" % w["steps"]), (e, w["steps"])
if p.endswith("/d_stall"):
    assert any(e["title"].startswith("data-loader time over") for e in d["wall"]["evidence"]), d["wall"]
for o in (s, d, v, a):
    assert isinstance(o["warnings"], list)
    for x in o["warnings"]:
        assert set(x) == {"code", "message", "file", "byte_offset", "iteration"}, x
        assert x["code"] and x["code"] == x["code"].lower() and " " not in x["code"], x
        assert x["message"].endswith("."), x
PY
done

# a log too short for validate's window check (the Bridge excerpt: 2 timed
# interval records, 10 and 20; the first holds iteration 1 and is left out
# like it): validate fails it but shows the run's window, 20:20 with its 1
# step as steps and diagnose do (it printed "iterations 0:0, 0 steps
# (matched; left out: after-window 10:20)")
bl="$DATA/logs/megatron-bridge_pr841_profiling_wrapped.log"
"$TS" steps --json "$bl" >"$tmp/bl.steps.json" 2>/dev/null
"$TS" validate --json "$bl" >"$tmp/bl.val.json" 2>/dev/null
"$TS" diagnose --json "$bl" >"$tmp/bl.diag.json" 2>/dev/null
python3 - "$tmp/bl" <<'PY' || bad "bridge log: validate's window is not the run's"
import json, sys
s, v, d = (json.load(open(sys.argv[1] + x)) for x in (".steps.json", ".val.json", ".diag.json"))
w = s["window"]
assert (w["first_iteration"], w["last_iteration"], w["steps"]) == (20, 20, 1), w
assert w["excluded"] == [{"reason": "first-iteration", "first_iteration": 10,
                          "last_iteration": 10, "steps": 1}], w
assert v["window"] == w and d["window"] == w, (v["window"], d["window"], w)
assert any(c["name"] == "window" and c["status"] == "fail" for c in v["checks"]), v["checks"]
PY

# --- validate: a declared window, or an explicit acceptance of the automatic one
"$TS" validate "$CPU/a_dense" >"$tmp/val.txt"; rc=$?
[ $rc = 1 ] || bad "validate with an undeclared window: exit $rc, want 1"
grep -q "window .*fail.*--accept-auto-window" "$tmp/val.txt" || bad "validate does not say why the window fails"
"$TS" validate --json --accept-auto-window "$CPU/a_dense" >"$tmp/val.json"; rc=$?
[ $rc = 0 ] || bad "validate --accept-auto-window: exit $rc, want 0"
"$TS" validate --json --window 30:60 "$CPU/a_dense" >"$tmp/valw.json"; rc=$?
[ $rc = 0 ] || bad "validate --window 30:60: exit $rc, want 0"
[ "$(jget "$tmp/valw.json" window.method)" = declared ] || bad "declared window not called declared"
"$TS" validate --json --window 30-60 "$CPU/a_dense" >"$tmp/valw2.json" || bad "validate --window 30-60 refused"
cmp -s "$tmp/valw.json" "$tmp/valw2.json" || bad "--window 30:60 and 30-60 differ"
"$TS" steps --json --window 30-60 "$CPU/a_dense" >"$tmp/stw.json" || bad "steps --window 30-60 refused"
[ "$(jget "$tmp/stw.json" window.first_iteration)" = 30 ] || bad "steps --window 30-60 not taken"

# --- diagnose keeps the steps warnings and says what the trace window is
c=$(codes "$tmp/run.diag.json")
for want in no-steady-state long-warmup window-outside-trace; do
	case " $c " in *" $want "*) ;; *) bad "examples/run: diagnose lacks $want (has: $c)" ;; esac
done
"$TS" diagnose examples/run >"$tmp/run.txt"
grep -q "^warning: .*outside the steady window" "$tmp/run.txt" || bad "diagnose text lacks the window warning"
# run-h200's profiled steps (22-25, twice the steady step) are artefacts the
# window search does not see: the window (from 2: its first steps are as
# fast as any, no warm-up) holds them, left out
c=$(codes "$tmp/run-h200.diag.json")
for want in profiled-steps-slower; do
	case " $c " in *" $want "*) ;; *) bad "run-h200: diagnose lacks $want (has: $c)" ;; esac
done
case " $c " in *" window-outside-trace "*) bad "run-h200: profiled steps said outside the window" ;; esac
"$TS" report -o "$tmp/h200.md" examples/run-h200 2>/dev/null
grep -q "## Warnings" "$tmp/h200.md" && grep -q "profiled-steps-slower" "$tmp/h200.md" ||
	bad "the Markdown report lacks the warnings"

# --- a truncated trace in the run directory
mkdir -p "$tmp/trunc"
cp "$CPU/a_dense/metrics_rank0.jsonl" "$tmp/trunc/"
gzip -dc "$CPU/a_dense/"*.pt.trace.json.gz | head -c 2000000 >"$tmp/trunc/rank0.pt.trace.json"
"$TS" diagnose --json "$tmp/trunc" >"$tmp/trunc.json" || bad "diagnose on a truncated trace failed"
case " $(codes "$tmp/trunc.json") " in *" truncated-trace "*) ;; *) bad "no truncated-trace warning" ;; esac
python3 - "$tmp/trunc.json" <<'PY' || bad "a share above 100 % is printed"
import json, sys
d = json.load(open(sys.argv[1]))
s = d["wall"]["share_pct"]
assert s is None or 0 <= s <= 100, s
PY
"$TS" diagnose "$tmp/trunc" | grep -E "\(([0-9]{4,}|[2-9][0-9][0-9]|1[0-9][1-9]|10[1-9])(\.[0-9])? % of the step" &&
	bad "the text prints a share above 100 %"

# --- a corrupt trace the command does not need
mkdir -p "$tmp/corrupt"
cp "$CPU/a_dense/metrics_rank0.jsonl" "$tmp/corrupt/"
{ printf '\037\213\010\000\000\000\000\000'; head -c 4000 /dev/urandom; } >"$tmp/corrupt/rank0.pt.trace.json.gz"
for cmd in "steps" "validate --accept-auto-window" "ab"; do
	args="$tmp/corrupt"
	[ "$cmd" = ab ] && args="$tmp/corrupt $tmp/corrupt"
	"$TS" $cmd --json $args >"$tmp/corrupt.json" 2>"$tmp/corrupt.err"; rc=$?
	[ $rc = 0 ] || bad "$cmd with a corrupt trace: exit $rc, want 0 ($(cat "$tmp/corrupt.err"))"
	case " $(codes "$tmp/corrupt.json" 2>/dev/null) " in *" unused-input "*) ;;
	*) bad "$cmd: no unused-input warning for the corrupt trace" ;; esac
done

# --- a trace that detection takes for one but that is damaged mid-file (a
# key's quote replaced): diagnose and report leave it out with an
# unused-input warning and analyse the log (they exited 2); named on the
# command line it is still an error
mkdir -p "$tmp/damaged"
cp "$CPU/a_dense/metrics_rank0.jsonl" "$tmp/damaged/"
gzip -dc "$CPU/a_dense/"rank0.*.pt.trace.json.gz | python3 -c '
import sys
d = sys.stdin.buffer.read()
i = d.find(b"\"name\"", len(d) // 2)
sys.stdout.buffer.write(d[:i] + b"4" + d[i + 1:])' >"$tmp/damaged/rank0.pt.trace.json"
"$TS" diagnose --json "$tmp/damaged" >"$tmp/damaged.json" 2>"$tmp/damaged.err"; rc=$?
[ $rc = 0 ] || bad "diagnose with a damaged trace: exit $rc, want 0 ($(cat "$tmp/damaged.err"))"
case " $(codes "$tmp/damaged.json" 2>/dev/null) " in *" unused-input "*) ;;
*) bad "diagnose: no unused-input warning for the damaged trace" ;; esac
"$TS" report "$tmp/damaged" -o "$tmp/damaged.html" 2>"$tmp/damaged.err"; rc=$?
[ $rc = 0 ] || bad "report with a damaged trace: exit $rc, want 0 ($(cat "$tmp/damaged.err"))"
"$TS" diagnose "$tmp/damaged/rank0.pt.trace.json" >/dev/null 2>&1; rc=$?
[ $rc = 2 ] || bad "diagnose on the damaged trace named alone: exit $rc, want 2"

# --- a resumed log: iterations 1-40, then the job restarts at 31 and runs to 60
python3 - "$CPU/a_dense/metrics_rank0.jsonl" "$tmp/resumed.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
with open(sys.argv[2], "w") as out:
    for r in rows[:40]:
        r = dict(r, step_ms=999.0)  # the first segment: replaced, must not count
        out.write(json.dumps(r) + "\n")
    for r in rows[30:]:
        out.write(json.dumps(r) + "\n")
PY
"$TS" steps --json "$tmp/resumed.jsonl" >"$tmp/resumed.json" || bad "steps on a resumed log failed"
python3 - "$tmp/resumed.json" "$CPU/a_dense/metrics_rank0.jsonl" <<'PY' || bad "resumed log: later segment does not win"
import json, sys
d = json.load(open(sys.argv[1]))
rows = {r["iteration"]: r["step_ms"] for r in map(json.loads, open(sys.argv[2]))}
assert d["iterations"] == 60, d["iterations"]
ws = [w for w in d["warnings"] if w["code"] == "resumed-log"]
assert len(ws) == 1 and ws[0]["iteration"] == 31, ws
assert "10 earlier record" in ws[0]["message"], ws[0]["message"]
# the replaced iterations 31..40 carry the second segment's times
w = d["window"]
its = [i for i in range(w["first_iteration"], w["last_iteration"] + 1)]
mean = sum(rows[i] for i in its) / len(its)
assert abs(d["step_time_ms"]["mean"] - mean) < 0.0015, (d["step_time_ms"]["mean"], mean)
PY

# --- the invariants on every shared input: shares and utilisations within
# 0..100 %, CIs of step times never below 0
for in in "$CPU"/* examples/run examples/run-h200 "$DATA"/logs/*.log; do
	[ -e "$in" ] || continue
	case "$in" in *PROVENANCE*|*README*) continue ;; esac
	for cmd in steps diagnose; do
		"$TS" $cmd --json "$in" >"$tmp/inv.json" 2>/dev/null || continue
		python3 - "$tmp/inv.json" <<'PY' || bad "$cmd $in: an invariant is broken"
import json, sys
shares = {"share_pct", "wall_time_pct", "outlier_excess_pct", "mfu_pct", "hfu_pct"}
def walk(o, path):
    if isinstance(o, dict):
        for k, v in o.items():
            if k in shares and v is not None:
                assert 0 <= v <= 100, (path + "." + k, v)
            if k in ("ci95_low", "mean_ci95_low_ms") and v is not None:
                assert v >= 0, (path + "." + k, v)
            walk(v, path + "." + k)
    elif isinstance(o, list):
        for i, v in enumerate(o):
            walk(v, "%s[%d]" % (path, i))
walk(json.load(open(sys.argv[1])), "")
PY
	done
done

# --- a CI of a positive time never reaches below 0: 12 steady steps, ten
# of 1 ms, one of 1000 and one of 2 (mean 1012 / 12 = 84.333 ms, SD 288.4
# ms: a t interval of the mean is 84.3 -+ 2.20 x 83.3, below 0)
printf '{"iteration": %d, "step_ms": %s, "loss": 2.0}\n' 1 100 2 1 3 1 4 1 5 1 6 1 7 1000 8 1 9 1 10 1 11 1 12 1 13 2 >"$tmp/ci.jsonl"
"$TS" steps --json "$tmp/ci.jsonl" >"$tmp/ci.json" || bad "steps on the wild series failed"
python3 - "$tmp/ci.json" <<'PY' || bad "a CI below 0 ms is reported"
import json, sys
d = json.load(open(sys.argv[1]))
t = d["step_time_ms"]
assert abs(t["mean"] - 1012 / 12) < 1e-3, t
assert t["ci95_low"] is None or t["ci95_low"] >= 0, t
assert "too-few-steps" in [w["code"] for w in d["warnings"]]
PY
# --- 5 steady steps (1, 1, 1000, 1, 2 ms) are fewer than the 10 a steady
# window needs: their mean (201 ms) is given, no interval, a few-steps warning
printf '{"iteration": %d, "step_ms": %s, "loss": 2.0}\n' 1 100 2 1 3 1 4 1000 5 1 6 2 >"$tmp/ci5.jsonl"
"$TS" steps --json "$tmp/ci5.jsonl" >"$tmp/ci5.json" || bad "steps on 5 steps failed"
python3 - "$tmp/ci5.json" <<'PY' || bad "5 steps: an interval, or no few-steps warning"
import json, sys
d = json.load(open(sys.argv[1]))
t = d["step_time_ms"]
assert abs(t["mean"] - 201.0) < 1e-9, t
assert t["ci95_low"] is None and t["ci95_high"] is None, t
assert "few-steps" in [w["code"] for w in d["warnings"]]
PY

# --- trace --json carries the truncation as a warning: the first 300000
# bytes of a_dense's trace end inside the event list, at byte 300000
gzip -dc "$CPU"/a_dense/*.pt.trace.json.gz | head -c 300000 >"$tmp/cut.json"
"$TS" trace --json "$tmp/cut.json" >"$tmp/cut.out" 2>"$tmp/cut.err" || bad "trace on a cut trace failed"
grep -q "warning: .*truncated at byte 300000" "$tmp/cut.err" || bad "trace: no truncation warning on stderr"
python3 - "$tmp/cut.out" "$tmp/cut.json" <<'PY' || bad "trace --json lacks the truncated-trace warning"
import json, sys
w = json.load(open(sys.argv[1]))["warnings"]
t = [x for x in w if x["code"] == "truncated-trace"]
assert len(t) == 1 and t[0]["byte_offset"] == 300000 and t[0]["file"] == sys.argv[2], w
PY

# --- the phase table and the rank rows describe the window's own steps:
# d_stall's window 2:60 leaves out the profiler steps 20:29, and the phase
# means over 59 steps divided by the 49-step mean summed to 104.1 %; the
# rank row showed 386.3 ms (iterations 2..60) next to the 371.0 ms headline.
# The expected means are recomputed here from the metrics file itself;
# c_ddp2 (two ranks, profiler steps scattered in 14:24): the phase rows
# count the window's steps.
for run in d_stall c_ddp2; do
	"$TS" steps --json "$CPU/$run" >"$tmp/ph-$run.json" 2>/dev/null || bad "steps $run failed"
	python3 - "$tmp/ph-$run.json" "$CPU/$run" <<'PY' || bad "steps $run: phases or ranks are not the window's steps"
import glob, json, sys
d = json.load(open(sys.argv[1]))
w = d["window"]
out = [(x["first_iteration"], x["last_iteration"]) for x in w["excluded"]]
# the ranges are whole here (d_stall: every iteration of 20:29 is a profiler step)
exact = all(x["steps"] == x["last_iteration"] - x["first_iteration"] + 1 for x in w["excluded"])
def inwin(it):
    return w["first_iteration"] <= it <= w["last_iteration"] and not any(a <= it <= b for a, b in out)
recs = [json.loads(l) for f in sorted(glob.glob(sys.argv[2] + "/metrics_rank*.jsonl")) for l in open(f)]
for r in (d["ranks"] if exact else []):
    st = [x["step_ms"] for x in recs if x["rank"] == r["rank"] and inwin(x["iteration"])]
    assert len(st) == w["steps"], (r, len(st))
    assert abs(r["mean_ms"] - sum(st) / len(st)) < 5e-4, (r, sum(st) / len(st))
if exact and len(d["ranks"]) == 1:
    keys = {"data": "data_ms", "forward": "fwd_ms", "backward": "bwd_ms", "optimizer": "opt_ms", "comm": "comm_ms"}
    for p in d["phases"]:
        v = [x[keys[p["phase"]]] for x in recs if inwin(x["iteration"])]
        assert p["steps"] == w["steps"] == len(v), (p, len(v))
        assert abs(p["mean_ms"] - sum(v) / len(v)) < 5e-4, (p, sum(v) / len(v))
    # the five phases partition d_stall's step: their shares add up to 100 %
    assert abs(sum(p["step_share_pct"] for p in d["phases"]) - 100) < 0.1, d["phases"]
else:
    for p in d["phases"]:
        assert p["steps"] == w["steps"], p
PY
done

# --- the report's per-iteration table flags the steps the window leaves
# out: d_stall's trace covers iterations 20..28 and its export sits in 29
# (traces/cpu/README.txt), so 20..29 are "excluded" (they were unflagged,
# only the warm-up before the window was); 19 and 30 are in the window
"$TS" report "$CPU/d_stall" --format md >"$tmp/rep.md" 2>/dev/null || bad "report d_stall failed"
for it in 20 21 24 28 29; do
	grep -q "^| $it | [0-9.]* | excluded |$" "$tmp/rep.md" || bad "report: iteration $it is not flagged excluded"
done
for it in 19 30; do
	grep -q "^| $it | [0-9.]* |  |$" "$tmp/rep.md" || bad "report: iteration $it is flagged"
done

# --- the report's time per step by class is trace's split of each step
# (it recomputed compute as the step less comm, data and gap: 165.96 ms
# against trace's 166.18 for iteration 22 of examples/run), and its four
# parts add up to the step
"$TS" report examples/run --format md >"$tmp/ex.md" 2>/dev/null || bad "report examples/run failed"
"$TS" trace --json examples/run/traces/*.pt.trace.json.gz >"$tmp/ex-trace.json" 2>/dev/null
python3 - "$tmp/ex.md" "$tmp/ex-trace.json" <<'PY' || bad "report: the per-step classes are not trace's"
import json, re, sys
rows = {int(m.group(1)): [float(x) for x in m.groups()[1:]]
        for m in re.finditer(r"^\| iter (\d+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \|$",
                             open(sys.argv[1]).read(), re.M)}
steps = json.load(open(sys.argv[2]))["ranks"][0]["steps"]
assert len(rows) == len(steps) == 4, (rows, len(steps))
for s in steps:
    want = [s["compute_us"], s["exposed_comm_us"], s["exposed_memcpy_us"] + s["exposed_memset_us"], s["idle_us"]]
    got = rows[s["step"]]
    assert all(abs(g - w / 1e3) < 0.006 for g, w in zip(got, want)), (s["step"], got, want)
    assert abs(sum(got) - s["dur_us"] / 1e3) < 0.02, (s["step"], sum(got), s["dur_us"])
PY

# --- the report's per-rank rows are trace's split of the steps too: compute,
# exposed communication and the rest (exposed copies and idle) averaged over
# each rank's steps, adding up to the step (compute was the step less comm
# less the CPU-side data and host gap: 110.7 ms against trace's 105.2 for
# rank 0 of hta/trace_filter)
for d in "$DATA/traces/hta/trace_filter" "$DATA/traces/cpu/e_straggler"; do
	[ -d "$d" ] || continue
	"$TS" report "$d" --format md >"$tmp/rk.md" 2>/dev/null || bad "report $d failed"
	"$TS" trace --json "$d"/*.json.gz >"$tmp/rk-trace.json" 2>/dev/null
	python3 - "$tmp/rk.md" "$tmp/rk-trace.json" <<'PY' || bad "report: the per-rank rows of $d are not trace's"
import json, re, sys
md = open(sys.argv[1]).read()
rows = {int(m.group(1)): [float(x) for x in m.groups()[1:]]
        for m in re.finditer(r"^\| (\d+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \|", md, re.M)}
ranks = json.load(open(sys.argv[2]))["ranks"]
assert len(rows) == len(ranks) == 2, (rows, len(ranks))
for r in ranks:
    st = r["steps"]
    mean = lambda f: sum(f(s) for s in st) / len(st) / 1e3
    want = [mean(lambda s: s["dur_us"]), mean(lambda s: s["compute_us"]),
            mean(lambda s: s["exposed_comm_us"]),
            mean(lambda s: s["exposed_memcpy_us"] + s["exposed_memset_us"] + s["idle_us"])]
    got = rows[r["rank"]]
    assert all(abs(g - w) < 0.051 for g, w in zip(got, want)), (r["rank"], got, want)
    assert abs(sum(got[1:]) - got[0]) < 0.2, (r["rank"], got)
PY
done

# a Megatron log with its arguments block: seq 4096 x gbs 8 = 32,768 tokens
# per step (by hand), 4 GPUs; every step 2,000 ms after the first, so
# tokens/s = 16,384 and 4,096 per GPU. The FLOP rate must be what mfu
# --from-log computes for the same block over the same 2 s on 4 GPUs.
mkdir -p "$tmp/args"
python3 - "$tmp/args/train.log" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write("------------------------ arguments ------------------------\n")
    for k, v in [("ffn_hidden_size", 1024), ("global_batch_size", 8),
                 ("hidden_size", 256), ("num_attention_heads", 4), ("num_layers", 2),
                 ("padded_vocab_size", 32000), ("seq_length", 4096),
                 ("swiglu", True), ("world_size", 4)]:
        f.write("  %s %s %s\n" % (k, "." * (40 - len(k)), v))
    f.write("-------------------- end of arguments ---------------------\n")
    for it in range(1, 81):
        ms = 9000.0 if it == 1 else 2000.0
        f.write(" iteration %8d/     80 | consumed samples: %12d | elapsed time per "
                "iteration (ms): %.1f | learning rate: 1.000000E-04 | lm loss: "
                "%.6E | loss scale: 1.0 | number of skipped iterations:   0 | "
                "number of nan iterations:   0 |\n" % (it, 8 * it, ms, 5.0 - it / 100))
PY
"$TS" steps --json "$tmp/args/train.log" >"$tmp/args/steps.json" 2>/dev/null
"$TS" diagnose --json "$tmp/args" >"$tmp/args/diag.json" 2>/dev/null
"$TS" mfu --from-log "$tmp/args/train.log" --json >"$tmp/args/mfu.json" 2>/dev/null
python3 - "$tmp/args" <<'PY' || bad "a Megatron arguments block does not give tokens/s or the FLOP rate"
import json, sys
d = sys.argv[1]
st = json.load(open(d + "/steps.json"))
dg = json.load(open(d + "/diag.json"))
mf = json.load(open(d + "/mfu.json"))
tp = st["throughput"]
assert tp["tokens_per_step"] == 32768, tp
assert abs(tp["tokens_per_s"] - 16384) < 0.1, tp
assert abs(tp["tokens_per_s_per_gpu"] - 4096) < 0.1, tp
assert dg["throughput"]["tokens_per_s"] == tp["tokens_per_s"], dg["throughput"]
per_step = mf["flops_per_step"]
assert mf["tokens_per_step"] == 32768, mf["tokens_per_step"]
want = per_step / (2.0 * 4) / 1e12
got = dg["throughput"]["model_tflops_per_gpu"]
assert got is not None and abs(got - want) <= 0.0005 + 1e-6 * want, (got, want)
assert not any(m["title"] == "model config" for m in dg["missing"]), dg["missing"]
PY

# a trace that names no rank is rank 0 (its file order) in diagnose, as in
# trace (diagnose said "rank -1")
rnf=$DATA/traces/hta/rank_unavailable/rank_not_found.json.gz
if [ -f "$rnf" ]; then
	"$TS" diagnose "$rnf" >"$tmp/rnf.txt" 2>/dev/null
	"$TS" trace "$rnf" >"$tmp/rnf.trace.txt" 2>/dev/null
	grep -q "rank -1" "$tmp/rnf.txt" && bad "diagnose names a trace without a rank 'rank -1'"
	grep -q "rank 0: untraced host time" "$tmp/rnf.txt" && grep -q "rank 0: untraced host time" "$tmp/rnf.trace.txt" ||
		bad "diagnose and trace do not both call the rank-less trace rank 0"
fi

# the same run with a byte order mark before each text file
mkdir -p "$tmp/bomrun"
cp -r examples/run/traces "$tmp/bomrun/"
for f in metrics.jsonl train.log config.json stderr.log; do
	{ printf '\xef\xbb\xbf'; cat "examples/run/$f"; } >"$tmp/bomrun/$f"
done
"$TS" diagnose --json examples/run 2>/dev/null | sed 's#examples/run##g' >"$tmp/bom.plain.json"
"$TS" diagnose --json "$tmp/bomrun" 2>/dev/null | sed "s#$tmp/bomrun##g" >"$tmp/bom.marked.json"
cmp -s "$tmp/bom.plain.json" "$tmp/bom.marked.json" ||
	bad "diagnose of examples/run differs when its files start with a byte order mark"
grep -q '"steps_source": "/metrics.jsonl"' "$tmp/bom.marked.json" ||
	bad "diagnose does not take the marked metrics.jsonl as the steps source"

# steps on inputs without steps names what they are
tr=$(ls examples/run/traces/* 2>/dev/null | head -1)
if [ -n "$tr" ]; then
	"$TS" steps "$tr" >/dev/null 2>"$tmp/nosteps.err"
	[ $? = 2 ] && grep -q "(it is a kineto-trace)" "$tmp/nosteps.err" ||
		bad "steps on a trace: $(cat "$tmp/nosteps.err")"
fi
mkdir -p "$tmp/nostepsdir"
cp examples/run/config.json "$tmp/nostepsdir/"
"$TS" steps "$tmp/nostepsdir" >/dev/null 2>"$tmp/nosteps2.err"
[ $? = 2 ] && grep -q "(it holds 1 hf-config)" "$tmp/nosteps2.err" ||
	bad "steps on a folder with a config only: $(cat "$tmp/nosteps2.err")"

exit $fail
