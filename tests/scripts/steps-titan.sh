#!/usr/bin/env bash
# steps reads torchtitan's console log (torchtitan/components/metrics.py:
# "step: N  loss: L  grad_norm: G  memory: XGiB(P%)  tps: T  tflops: F
# mfu: M%" at step 1 and every log_freq-th step, behind "[titan] <asctime>
# - root - INFO - "; the 2024 form with wps and neither grad_norm nor
# tflops). The record has no step time: it is the interval between the
# stamps of consecutive records (or "Training starts at step N", or a
# "validate step:" line, which restarts torchtitan's interval clock) over
# the steps between them. steps-titan-gen.py writes logs whose per-step
# durations it records (LOG.truth); the expected window mean is computed
# here from those durations over the steps the window's records cover,
# within 0.05 % (stamps are truncated to the millisecond: at most 1 ms per
# 10 s interval). Before, every such log was "no step records found".
# validate counts the steps the records stand for and takes the max
# reserved memory when no max allocated is logged.
set -u
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
gen() { python3 "$here/steps-titan-gen.py" "$tmp/$1.log" "$2" || exit 1; }
gen base '{}'
gen old '{"old": true, "color": false, "prefix": ""}'
gen lineno '{"lineno": true, "prefix": "[rank3]:", "seed": 3}'
gen evck '{"val_at": 100, "ckpt_at": 150, "seed": 5}'
gen nan '{"nan_from": 150, "seed": 7}'
gen nostart '{"start_line": false, "seed": 9}'
gen cut '{"cut": true, "seed": 11}'
gen freq1 '{"freq": 1, "steps": 120, "step_s": 0.35, "seed": 13}'
# "step: 640/644 = 99.38%", a stamp without "[titan] " after the prefix,
# each record printed 3 times (the logger with three handlers)
gen forms '{"total": true, "tag": false, "dup": 3, "seed": 15}'
# two ranks logging into one console (LOG_RANK=0,1), rank 1 2 % slower:
# each rank's intervals come from its own lines' stamps
gen r0 '{"seed": 21}'
gen r1 '{"seed": 22, "prefix": "[rank1]:", "step_s": 1.224}'
python3 - "$tmp" <<'PY2' || exit 1
import sys
t = sys.argv[1]
lines = open(t + "/r0.log").read().splitlines() + open(t + "/r1.log").read().splitlines()
stamp = lambda l: l[l.index("[titan] ") + 8:][:23]
open(t + "/two.log", "w").write("\n".join(sorted(lines, key=stamp)) + "\n")
PY2
# a fork's line without mfu (nor tflops): still the log of a run directory
python3 - "$tmp/base.log" "$tmp/nomfu.log" <<'PY2' || exit 1
import re, sys
t = open(sys.argv[1]).read()
t = re.sub(r"  (\x1b\[[0-9;]*m)?tflops: [0-9,.]+", "", t)
t = re.sub(r"  (\x1b\[[0-9;]*m)?mfu: [0-9.]+%", "", t)
open(sys.argv[2], "w").write(t)
PY2
mkdir "$tmp/nomfu" && cp "$tmp/nomfu.log" "$tmp/nomfu/train.log"
# each file is read for itself: a torchtitan log after another format's
# file (a Megatron log of rank 0 first) is read too (it was "no step
# records found": the first file's format decided for every file)
python3 "$here/steps-titan-gen.py" "$tmp/rank1.log" '{"prefix": "[rank1]:", "seed": 17}' || exit 1
printf ' iteration        1/      10 | consumed samples:            8 | elapsed time per iteration (ms): 1000.0 | learning rate: 1.000000E-04 | global batch size:     8 | lm loss: 9.000000E+00 | loss scale: 1.0 | number of skipped iterations:   0 | number of nan iterations:   0 |\n' >"$tmp/rank0.log"
"$TS" steps --json "$tmp/rank0.log" "$tmp/rank1.log" 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
sys.exit(0 if [(r["rank"], r["records"]) for r in d["ranks"]] == [(0, 1), (1, 21)] else 1)' ||
	{ echo "FAIL a torchtitan file after a Megatron file is not read"; fail=1; }
# its last line without a line end is complete (no mfu to miss): no cut
head -c -1 "$tmp/nomfu.log" >"$tmp/nomfu-nonl.log"
"$TS" steps "$tmp/nomfu-nonl.log" 2>&1 | grep -q "cut inside a torchtitan record" &&
	{ echo "FAIL a complete last line without mfu or a line end called cut"; fail=1; }
"$TS" detect "$tmp/nomfu/train.log" | grep -q "log-torchtitan" ||
	{ echo "FAIL detect: a torchtitan log without mfu is no log-torchtitan"; fail=1; }
"$TS" diagnose "$tmp/nomfu" 2>&1 | grep -q "^steady step time: 1" ||
	{ echo "FAIL diagnose: a torchtitan log without mfu gives no steady step time"; fail=1; }
for c in base old lineno evck nan nostart cut freq1 two forms; do
	"$TS" steps --json "$tmp/$c.log" >"$tmp/$c.json" 2>"$tmp/$c.err"
	echo $? >"$tmp/$c.rc"
	"$TS" steps "$tmp/$c.log" >"$tmp/$c.txt" 2>&1
done
# validate on a run directory holding the base log: 200 steps were logged
# (record 1 holds step 1, record 10 steps 2-10, then 10 each: 1 + 9 + 19 x
# 10; it counted 21 records x 10 = 210), and the peak memory is the max
# reserved the lines give (there is no max allocated)
mkdir "$tmp/run"
cp "$tmp/base.log" "$tmp/run/train.log"
"$TS" validate --json "$tmp/run" >"$tmp/validate.json" 2>/dev/null
# the same with a model and the job's shape (config.json of a Llama-3-8B
# shape, a contract with seq 8192, batch 8, 8 GPUs): torchtitan logs tflops
# = its own FLOPs per token (6N + 12 L H Q T, N the parameters without the
# input embedding) x tokens/s per GPU / 1e12, so the run model checks the
# logged rate against that count. By hand, h 4096, 32 layers, 32 heads of
# 128 (q 4096), 8 KV heads (k 1024), MLP 14336 gated, vocab 128256 untied:
emb=$((128256 * 4096))                        # 525,336,576: not counted
attn=$((4096 * 4096 + 2 * 4096 * 1024 + 4096 * 4096)) # wq, wk + wv, wo: 41,943,040
mlp=$((3 * 4096 * 14336))                     # w1, w2, w3: 176,160,768
norms=$((2 * 4096))                           # attention and ffn RMSNorm weights
N=$((32 * (attn + mlp + norms) + 4096 + 128256 * 4096)) # + final norm + output head
[ $N = 7504924672 ] && [ $((N + emb)) = 8030261248 ] || { echo "FAIL hand count N=$N"; exit 1; }
F=$((6 * N + 12 * 32 * 32 * 128 * 8192))      # 45,029,548,032 + 12,884,901,888
[ $F = 57914449920 ] || { echo "FAIL hand count F=$F"; exit 1; }
# runm: its base log's 1,395.32 is 253 % off that count (about 395 TFLOP/s
# at 1.2 s a step); runt: the logged rate is torchtitan's count (validate's
# tflops passes, no warning); runx: 10 % above it (tflops fails,
# logged-tflops-mismatch in every output). Before, each was "not compared"
# and no warning was raised.
gen titan "{\"flops_per_token\": $F, \"seed\": 21}"
gen titanx "{\"flops_per_token\": $F, \"tflops_scale\": 1.1, \"seed\": 21}"
for r in runm:base runt:titan runx:titanx; do
	d=$tmp/${r%%:*}
	mkdir "$d"
	cp "$tmp/${r#*:}.log" "$d/train.log"
	cat >"$d/config.json" <<'JSON'
{"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
 "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256,
 "max_position_embeddings": 8192, "tie_word_embeddings": false}
JSON
	SOURCE_DATE_EPOCH=1700000000 "$TS" contract capture --no-probe --set seq_length=8192 \
		--set global_batch_size=8 --set device_count=8 -o "$d/contract.json" >/dev/null 2>&1
	r=${r%%:*}
	"$TS" validate --json "$d" >"$tmp/validate-$r.json" 2>/dev/null
	"$TS" validate "$d" >"$tmp/validate-$r.txt" 2>&1
	"$TS" diagnose --json "$d" >"$tmp/diagnose-$r.json" 2>/dev/null
	"$TS" diagnose "$d" >"$tmp/diagnose-$r.txt" 2>&1
	"$TS" steps --json "$d" >"$tmp/steps-$r.json" 2>/dev/null
	"$TS" steps "$d" >"$tmp/steps-$r.txt" 2>&1
done
# (an MLA model, counted since 2026-12-04: tests/scripts/titan-models.sh)
# diagnose's MFU stays on Megatron's formula; its logged line says what
# torchtitan's count gives: F x 65,536 tokens = 3.795e+15 FLOPs per step
grep -q "not Megatron's FLOP count: torchtitan counts 3.795e+15 FLOPs per step" "$tmp/diagnose-runt.txt" ||
	{ echo "FAIL diagnose's logged FLOP rate line does not give torchtitan's count"; fail=1; }
for f in validate-runx.txt diagnose-runx.txt steps-runx.txt validate-runm.txt; do
	grep -q "logged-tflops-mismatch\|differs from the model FLOP rate" "$tmp/$f" ||
		{ echo "FAIL $f does not carry logged-tflops-mismatch"; fail=1; }
done
for f in validate-runt.txt diagnose-runt.txt steps-runt.txt; do
	grep -q "logged-tflops-mismatch\|differs from the model FLOP rate" "$tmp/$f" &&
		{ echo "FAIL $f warns logged-tflops-mismatch on a rate that is torchtitan's count"; fail=1; }
done
python3 - "$tmp" <<'PY' || fail=1
import json, sys
t = sys.argv[1]
bad = []
def load(c):
    rc = int(open("%s/%s.rc" % (t, c)).read())
    if rc != 0:
        bad.append("%s: exit %d: %s" % (c, rc, open("%s/%s.err" % (t, c)).read().strip()))
        return None
    return json.load(open("%s/%s.json" % (t, c)))
def records(d, truth):
    return sorted(int(k) for k in truth)
def check_mean(c, d, freq=10, tol=0.0005):
    truth = {int(k): v for k, v in json.load(open("%s/%s.log.truth" % (t, c))).items()}
    recs = [1] + [s for s in sorted(truth) if s % freq == 0 and s != 1]
    w = d["window"]
    excl = {(x["first_iteration"], x["last_iteration"]) for x in w["excluded"]}
    steps = []
    for i, r in enumerate(recs):
        if r < w["first_iteration"] or r > w["last_iteration"] or i == 0:
            continue
        if any(a <= r <= b for a, b in excl):
            continue
        steps.append([truth[s] for s in range(recs[i - 1] + 1, r + 1)])
    # each record is its interval's mean; the window's mean is the mean of them
    want = sum(sum(x) / len(x) for x in steps) / len(steps) * 1e3
    got = d["step_time_ms"]["mean"]
    if abs(got - want) > tol * want:
        bad.append("%s: window mean %.3f ms, truth %.3f ms" % (c, got, want))
    if d["window"]["steps"] != len(steps):
        bad.append("%s: window holds %d records, truth %d" % (c, d["window"]["steps"], len(steps)))
    return want
for c in ("base", "old", "lineno", "evck", "nan", "nostart", "cut", "freq1", "forms"):
    d = load(c)
    if d is None:
        continue
    if d["format"] != "torchtitan":
        bad.append("%s: format %s" % (c, d["format"]))
    if c != "nan":
        check_mean(c, d, freq=1 if c == "freq1" else 10)
d = load("base")
if d:
    th = d["throughput"]
    # global batch 8 x sequence length 8192 from the "Training starts" line
    if th["tokens_per_step"] != 65536:
        bad.append("base: tokens_per_step %s, want 65536" % th["tokens_per_step"])
    if abs(th["tokens_per_s"] - 65536 / (d["step_time_ms"]["mean"] / 1e3)) > 0.1:
        bad.append("base: tokens_per_s %s" % th["tokens_per_s"])
    if th["logged_tflops_per_gpu_median"] != 1395.32:
        bad.append("base: logged tflops %s, want 1395.32 (thousands comma)" % th["logged_tflops_per_gpu_median"])
    r0 = d["ranks"][0]
    if r0["rank"] != 0 or r0["max_reserved_bytes"] != round(42.22 * 2**30):
        bad.append("base: rank row %s (want rank 0, 42.22 GiB reserved)" % r0)
    if d["loss"]["health"] != "finite" or d["loss"]["final"] != 7 or d["loss"]["final_iteration"] != 200:
        bad.append("base: loss %s" % d["loss"])
    if d["outliers"]:
        bad.append("base: outliers %s" % d["outliers"])
d = load("old")
# no launcher prefix: the rank is unknown, not 0
if d and (d["throughput"]["logged_tflops_per_gpu_median"] is not None or d["ranks"][0]["rank"] is not None):
    bad.append("old: %s %s" % (d["throughput"], d["ranks"][0]))
d = load("lineno")
if d and d["ranks"][0]["rank"] != 3:
    bad.append("lineno: rank %s, the prefix says 3" % d["ranks"][0]["rank"])
d = load("evck")
if d:
    # the 30 s validation after step 100 is outside every interval (the
    # validate line restarts the clock); the 20 s save after step 150
    # lands in record 160: (10 x 1.2 + 20) / 10 = 3.2 s
    o = [(x["iteration"], x["reason"]) for x in d["outliers"]]
    if o != [(160, "checkpoint")]:
        bad.append("evck: outliers %s, want [(160, 'checkpoint')]" % o)
    s160 = [x["step_time_ms"] for x in d["outliers"] if x["iteration"] == 160]
    if s160 and abs(s160[0] - 3200) > 60:
        bad.append("evck: record 160 %.1f ms, want about 3200" % s160[0])
d = load("nan")
if d:
    lo = d["loss"]
    if lo["health"] == "finite":
        bad.append("nan: health finite with NaN losses from step 150")
    f = lo["first_nan_iteration"] if lo["first_nan_iteration"] is not None else lo["first_bad_iteration"]
    if f is None or not 141 <= f <= 150:
        bad.append("nan: first bad iteration %s, want 150 (141-150)" % f)
d = load("forms")
codes = [w["code"] for w in d["warnings"]] if d else []
if d and (d["iterations"] != 21 or d["notes"] or "resumed-log" in codes or "restart" in codes):
    bad.append("forms: %s records (21: each printed three times is one), notes %s, warnings %s"
               % (d["iterations"], d["notes"], codes))
d = load("nostart")
if d and d["iterations"] != 21:
    bad.append("nostart: %s records" % d["iterations"])
d = load("cut")
if d:
    if d["last_iteration"] != 190:
        bad.append("cut: last iteration %s, want 190 (200 is cut)" % d["last_iteration"])
    w = [x for x in d["warnings"] if "torchtitan record" in x.get("message", "")]
    if not w:
        bad.append("cut: no warning of the cut record: %s" % d["warnings"])
    if "torchtitan record" not in open(t + "/cut.txt").read():
        bad.append("cut: the text does not say the record was cut")
d = load("two")
if d:
    for rank, c in ((0, "r0"), (1, "r1")):
        truth = {int(k): v for k, v in json.load(open("%s/%s.log.truth" % (t, c))).items()}
        row = [x for x in d["ranks"] if x["rank"] == rank]
        # the rank's records 20..200 (each 10 steps; 10 holds 2-10)
        want = sum(truth[s] for s in range(11, 201)) / 190 * 1e3
        if not row or abs(row[0]["mean_ms"] - want) > 0.002 * want:
            bad.append("two ranks: rank %d mean %s, truth about %.1f ms" % (rank, row and row[0]["mean_ms"], want))
v = {c["name"]: c for c in json.load(open(t + "/validate.json"))["checks"]}
if not v["steps_logged"]["evidence"].startswith("200 logged steps"):
    bad.append("validate: %s" % v["steps_logged"]["evidence"])
if v["peak_memory"]["status"] != "pass" or str(round(42.22 * 2**30)) not in v["peak_memory"]["evidence"]:
    bad.append("validate: %s" % v["peak_memory"])
import re
def codes(f):
    d = json.load(open(t + "/" + f))
    return [w["code"] for w in d["warnings"]]
# want: run -> (tflops status, median |difference| in %, a warning)
for r, status, lo, hi, warned in (("runt", "pass", 0, 0.2, False), ("runx", "fail", 9.8, 10.2, True),
                                  ("runm", "fail", 240, 260, True)):
    v = {c["name"]: c for c in json.load(open("%s/validate-%s.json" % (t, r)))["checks"]}
    ev = v["tflops"]["evidence"]
    m = re.search(r"(?:within|differs by) ([0-9.]+) %", ev)
    if v["tflops"]["status"] != status or "torchtitan" not in ev or not m or not lo <= float(m.group(1)) <= hi:
        bad.append("%s: validate tflops %s, want %s at %g-%g %% against torchtitan's count" % (r, v["tflops"], status, lo, hi))
    for f in ("validate-%s.json" % r, "diagnose-%s.json" % r, "steps-%s.json" % r):
        if ("logged-tflops-mismatch" in codes(f)) != warned:
            bad.append("%s: logged-tflops-mismatch %s" % (f, "missing" if warned else "raised on torchtitan's own count"))
for b in bad:
    print("FAIL", b)
sys.exit(1 if bad else 0)
PY
finish
