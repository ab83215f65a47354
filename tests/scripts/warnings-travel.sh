#!/usr/bin/env bash
# A warning a command knows is in every output of it: the text (stderr or
# the table), the --json "warnings" array (the shared objects: code,
# message, file, byte_offset, iteration; "line" when known) and the report
# it feeds. Each case triggers one warning and checks it in text AND json:
# - mfu: a logged 0.815 TFLOP/s/GPU against the recomputed one (the
#   mfu-logged-mismatch golden's model) is logged-tflops-mismatch, exit 1;
#   --formula mlm2024 with --seq-lens is packed-lengths-ignored and counts
#   gbs x seq = 2 x 2048 = 4096 tokens;
# - watch --read: the gmi 2.2.0 table whose last GPU block is cut at line
#   17 and the gmi JSON excerpt holding 2 of 8 attached GPUs
#   (telemetry/EXPECTED.md), also trace --annotate --telemetry's with that
#   table; watch -- CMD without any device library writes
#   its --json document with no-device-telemetry and keeps the exit code;
#   diagnose (text, --json) and report on examples/run plus that cut table
#   carry its warning, naming the capture, with its line, and so do ab's
#   text and --json with that run as the candidate; an unreadable capture
#   is an unused-input warning of ab (it was left out silently) and of
#   diagnose (which exited 2 on it);
# - diagnose on an Nsight Systems export lists the export's warnings exactly
#   as trace --json does (they were trace's only);
# - a directory of rank files, one cut before anything readable, one
#   empty, one binary, an .nsys-rep: trace (text and --json) and diagnose
#   --json name each as unused-input, in the same words;
# - diff: with --hta-compat the warnings are the text's last lines (after
#   the HTA section); report --baseline's diff section lists diff's
#   different-hardware warning (examples/run ran on cpu, run-h200 on an
#   H200); report --baseline A --candidate A lists ab's warnings of the same
#   A/A comparison, once each, in ab's order.
set -u
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }

# codes of a JSON document's top-level warnings, one per line, as CODE|MESSAGE|LINE
codes() {
	python3 -c '
import json, signal, sys
signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # grep -q may stop reading
d = json.load(open(sys.argv[1]))
for w in d["warnings"]:
    assert set(w) >= {"code", "message", "file", "byte_offset", "iteration"}, w
    print("%s|%s|%s" % (w["code"], w["message"], w.get("line", "")))
' "$1"
}

# --- mfu
# every model value stated (the assumed ones warn: model-value-assumed)
MODEL="--hidden 1024 --layers 2 --heads 16 --kv-heads 16 --head-dim 64 --ffn-hidden 4096 --vocab 32000 --no-swiglu
	--seq 2048 --gpus 1 --step-time 1"
"$TS" mfu $MODEL --gbs 1 --logged-tflops 0.815 >/dev/null 2>"$tmp/err"
rc=$?
[ $rc = 1 ] || bad "mfu mismatch: exit $rc, not 1"
grep -q "^trainscope mfu: warning: logged 0.815 TFLOP/s/GPU differs" "$tmp/err" || bad "mfu mismatch: not on stderr"
"$TS" mfu $MODEL --gbs 1 --logged-tflops 0.815 --json >"$tmp/m.json" 2>/dev/null
codes "$tmp/m.json" >"$tmp/m.codes" || bad "mfu --json: no warnings array"
grep -q "^logged-tflops-mismatch|logged 0.815 TFLOP/s/GPU differs" "$tmp/m.codes" || bad "mfu --json: no logged-tflops-mismatch"
# text and JSON say the same sentence
msg=$(sed -n 's/^logged-tflops-mismatch|\(.*\)|$/\1/p' "$tmp/m.codes")
grep -qF "warning: $msg" "$tmp/err" || bad "mfu: stderr and JSON messages differ"

printf '2048 2\n' >"$tmp/lens.txt"
"$TS" mfu $MODEL --gbs 2 --formula mlm2024 --seq-lens "$tmp/lens.txt" >"$tmp/p.txt" 2>"$tmp/p.err" ||
	bad "mfu packed: exit $?"
grep -q "warning: formula mlm2024 ignores the packed lengths of $tmp/lens.txt" "$tmp/p.err" ||
	bad "mfu packed: no warning on stderr"
grep -q "4096 tokens/step" "$tmp/p.txt" || bad "mfu packed: tokens are not gbs x seq"
"$TS" mfu $MODEL --gbs 2 --formula mlm2024 --seq-lens "$tmp/lens.txt" --json >"$tmp/p.json" 2>/dev/null
codes "$tmp/p.json" | grep -q "^packed-lengths-ignored|" || bad "mfu packed --json: no packed-lengths-ignored"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["tokens_per_step"] == 4096, d["tokens_per_step"]
assert d["warnings"][0]["file"] == sys.argv[2], d["warnings"]
' "$tmp/p.json" "$tmp/lens.txt" || bad "mfu packed --json: tokens or file"
# no warning condition, no warning
"$TS" mfu $MODEL --gbs 1 --json >"$tmp/n.json" 2>"$tmp/n.err"
[ -z "$(codes "$tmp/n.json")" ] || bad "mfu without a warning condition warns"
[ ! -s "$tmp/n.err" ] || bad "mfu without a warning condition wrote stderr"

# --- watch --read
gmi="$DATA/telemetry/mthreads-gmi_default_S4000_gmi2.2.0_healthy_partial.txt"
"$TS" watch --read "$gmi" >"$tmp/w.txt" || bad "watch --read gmi: exit $?"
grep -qxF "warning: $gmi: the last GPU block has 1 of its 3 lines (the capture is cut) (line 17)" "$tmp/w.txt" ||
	bad "watch text: no truncated warning at line 17"
"$TS" watch --read --json "$gmi" >"$tmp/w.json" || bad "watch --read --json gmi: exit $?"
codes "$tmp/w.json" | grep -qxF "truncated|$gmi: the last GPU block has 1 of its 3 lines (the capture is cut)|17" ||
	bad "watch json: no truncated warning with line 17"
# trace --annotate --telemetry with that cut table: the capture's warning
# is trace's too (it was dropped: the counters silently stopped at line 16)
tr=examples/run/traces/rank0.1795977100876543861.pt.trace.json.gz
cut="the last GPU block has 1 of its 3 lines (the capture is cut)"
"$TS" trace --annotate "$tmp/an.json" --telemetry "$gmi" "$tr" >"$tmp/an.txt" 2>"$tmp/an.err" ||
	bad "trace --annotate --telemetry: exit $?"
grep -qxF "warning: $gmi: $cut (line 17)" "$tmp/an.txt" ||
	bad "trace --annotate --telemetry: the capture warning is not in the text report"
"$TS" trace --json --annotate "$tmp/an.json" --telemetry "$gmi" "$tr" >"$tmp/an.out" 2>/dev/null ||
	bad "trace --json --annotate --telemetry: exit $?"
codes "$tmp/an.out" | grep -qxF "truncated|$gmi: $cut|17" ||
	bad "trace --json --annotate --telemetry: no truncated warning with line 17"
"$TS" trace --json "$tr" >"$tmp/tr.out" 2>/dev/null
[ -z "$(codes "$tmp/tr.out")" ] || bad "trace without the capture warns"
# a trace without ProfilerStep spans (the example's, those events removed):
# trace, diagnose and diff all say its whole window is one step (only diff
# did; trace printed "0 steps" and a 0.0 ms step p50 without a word)
python3 - "$tr" "$tmp/nops.json" <<'PY'
import gzip, json, sys
d = json.load(gzip.open(sys.argv[1]))
d["traceEvents"] = [e for e in d["traceEvents"] if not str(e.get("name", "")).startswith("ProfilerStep")]
json.dump(d, open(sys.argv[2], "w"))
PY
"$TS" trace "$tmp/nops.json" >"$tmp/nops.txt" 2>"$tmp/nops.err" || bad "trace without steps: exit $?"
grep -qF "warning: $tmp/nops.json: no steps (no ProfilerStep spans" "$tmp/nops.txt" ||
	bad "trace without steps: no whole-window warning in the text report"
"$TS" trace --json "$tmp/nops.json" >"$tmp/nops.out" 2>/dev/null
codes "$tmp/nops.out" | grep -q "^whole-window|$tmp/nops.json: no steps" || bad "trace --json without steps: no whole-window"
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["ranks"][0]
assert r["median_step_us"] is None and r["steps"] == [], r["median_step_us"]
' "$tmp/nops.out" || bad "trace --json without steps: a median step time"
mkdir -p "$tmp/nops-run/traces"
cp examples/run/train.log "$tmp/nops-run/" && cp "$tmp/nops.json" "$tmp/nops-run/traces/rank0.1.pt.trace.json"
"$TS" diagnose --json "$tmp/nops-run" >"$tmp/nops-dg.json" 2>/dev/null
codes "$tmp/nops-dg.json" | grep -q "^whole-window|$tmp/nops-run/traces/rank0.1.pt.trace.json: no steps" ||
	bad "diagnose --json without steps: no whole-window"
"$TS" diff "$tmp/nops.json" "$tmp/nops.json" >"$tmp/nops-df.txt" 2>&1
grep -qF "warning: $tmp/nops.json: no steps (no ProfilerStep spans" "$tmp/nops-df.txt" || bad "diff without steps: no whole-window"
# a NaN loss at iterations 40, 41 and 55 of the example's metrics: a
# loss-not-finite warning in steps, diagnose and the report (it was only a
# loss-section line of steps and a finding of diagnose)
mkdir -p "$tmp/nan"
python3 - examples/run/metrics.jsonl "$tmp/nan/metrics.jsonl" <<'PY'
import json, sys
with open(sys.argv[2], "w") as out:
    for line in open(sys.argv[1]):
        r = json.loads(line)
        if r["iteration"] in (40, 41, 55):
            r["lm_loss"] = float("nan")
        out.write(json.dumps(r) + "\n")
PY
nanmsg="The training is not numerically healthy: the loss is NaN or infinite from iteration 40 (3 iterations"
"$TS" steps "$tmp/nan" 2>&1 | grep -qF "warning: $nanmsg" || bad "steps: no loss-not-finite warning"
"$TS" steps --json "$tmp/nan" >"$tmp/nan.json" 2>/dev/null
codes "$tmp/nan.json" | grep -qF "loss-not-finite|$nanmsg" || bad "steps --json: no loss-not-finite"
"$TS" diagnose --json "$tmp/nan" >"$tmp/nan-dg.json" 2>/dev/null
codes "$tmp/nan-dg.json" | grep -qF "loss-not-finite|$nanmsg" || bad "diagnose --json: no loss-not-finite"
"$TS" report "$tmp/nan" --format md 2>/dev/null | sed -n '/^## Warnings/,/^## /p' | grep -qF "$nanmsg" ||
	bad "report: no loss-not-finite warning"
"$TS" steps --json examples/run >"$tmp/fin.json" 2>/dev/null
codes "$tmp/fin.json" | grep -q "^loss-not-finite" && bad "steps: loss-not-finite on a finite run"
# the example's trace cut at byte 200000 of its gzip file: trace and
# diagnose give the one truncated-trace warning, its offset named as one of
# the inflated JSON (diagnose said "compressed stream ends early" without
# offset or dropped steps)
mkdir -p "$tmp/cutrun/traces"
cp examples/run/train.log "$tmp/cutrun/"
head -c 200000 "$tr" >"$tmp/cutrun/traces/rank0.1.pt.trace.json.gz"
"$TS" trace --json "$tmp/cutrun/traces/rank0.1.pt.trace.json.gz" >"$tmp/cut1.json" 2>/dev/null
"$TS" diagnose --json "$tmp/cutrun" >"$tmp/cut2.json" 2>/dev/null
codes "$tmp/cut1.json" | grep "^truncated-trace|" >"$tmp/cut1.c"
codes "$tmp/cut2.json" | grep "^truncated-trace|" >"$tmp/cut2.c"
grep -q "^truncated-trace|$tmp/cutrun/traces/rank0.1.pt.trace.json.gz: truncated at byte [0-9]* of the inflated JSON; analysed every complete event before it ([0-9]* steps\{0,1\} cut by the end dropped)|$" "$tmp/cut1.c" ||
	bad "trace on a cut gzip: no truncated-trace naming the inflated offset"
cmp -s "$tmp/cut1.c" "$tmp/cut2.c" || bad "trace and diagnose word the cut differently"
gj="$DATA/telemetry/mthreads-gmi_query_json_S5000_drv3.3.5_excerpt.json"
"$TS" watch --read "$gj" | grep -qxF "warning: $gj: 2 of 8 attached GPUs in input" || bad "watch text: no partial-gpus"
"$TS" watch --read --json "$gj" >"$tmp/g.json"
codes "$tmp/g.json" | grep -qxF "partial-gpus|$gj: 2 of 8 attached GPUs in input|" || bad "watch json: no partial-gpus"

# --- watch without device telemetry: the JSON is still written, with the warning
mkdir -p "$tmp/none"
LD_LIBRARY_PATH="$tmp/none" TS_SAMPLER_LIB_NVML=/nonexistent TS_SAMPLER_LIB_MTML=/nonexistent PATH=/usr/bin:/bin \
	"$TS" watch --json -o "$tmp/nd.json" -- sh -c 'exit 3' 2>"$tmp/nd.err"
rc=$?
[ $rc = 3 ] || bad "watch without telemetry: exit $rc, not the child's 3"
codes "$tmp/nd.json" | grep -q "^no-device-telemetry|no device telemetry: " || bad "watch --json: no no-device-telemetry"
LD_LIBRARY_PATH="$tmp/none" TS_SAMPLER_LIB_NVML=/nonexistent TS_SAMPLER_LIB_MTML=/nonexistent PATH=/usr/bin:/bin \
	"$TS" watch -- sh -c 'exit 0' 2>"$tmp/nd2.err" || bad "watch text without telemetry: exit $?"
grep -q "warning: no device telemetry: " "$tmp/nd2.err" || bad "watch text: no no-device-telemetry on stderr"

# --- diff: warnings last, after the compatibility section
hta="$DATA/traces/hta/trace_diff"
if [ -d "$hta/control" ]; then
	"$TS" diff --top 2 --hta-compat "$hta/control" "$hta/test" >"$tmp/d.txt" 2>/dev/null
	tail -n 1 "$tmp/d.txt" | grep -q "^warning: baseline ran on NVIDIA A100-PG509-200, candidate on Tesla V100-SXM2-16GB" ||
		bad "diff --hta-compat: the warning is not the last line"
	# the context warning (device, SM count: A100 108, V100 80, and world
	# size differ), then the verdict's
	grep -q "^warning: the two sides differ in device (NVIDIA A100-PG509-200 vs Tesla V100-SXM2-16GB), SM count (108 vs 80) and world size (8 vs 2): " "$tmp/d.txt" ||
		bad "diff --hta-compat: no context-differs warning"
	n=$(grep -c "^warning: " "$tmp/d.txt")
	[ "$n" = 2 ] || bad "diff --hta-compat: $n warning lines, not 2"
	"$TS" diff --hta-compat --json "$hta/control" "$hta/test" >"$tmp/d.json" 2>/dev/null
	codes "$tmp/d.json" | grep -q "^different-hardware|baseline ran on NVIDIA A100-PG509-200" ||
		bad "diff --json: no different-hardware"
fi

# --- report: the diff section's warnings are in the report's warnings
"$TS" report examples/run-h200 --baseline examples/run --format md >"$tmp/r.md" 2>/dev/null || bad "report: exit $?"
sed -n '/^## Warnings/,/^## /p' "$tmp/r.md" >"$tmp/r.warn"
grep -q "baseline ran on cpu, candidate on NVIDIA H200: no speed verdict without --allow-different-hardware" "$tmp/r.warn" ||
	bad "report: diff's different-hardware warning missing"
grep -q "^  different-hardware$" "$tmp/r.warn" || bad "report: the warning's code missing"
"$TS" diff --json examples/run examples/run-h200 >"$tmp/rd.json" 2>/dev/null
codes "$tmp/rd.json" | grep -q "^different-hardware|baseline ran on cpu, candidate on NVIDIA H200" ||
	bad "diff --json on the examples: no different-hardware"

# --- diagnose and report on a run holding that cut capture: its warning is the run's
cp -r examples/run "$tmp/run"
cp "$gmi" "$tmp/run/gmi.txt"
"$TS" diagnose "$tmp/run" >"$tmp/dg.txt" 2>&1
grep -qF "warning: $tmp/run/gmi.txt: the last GPU block has 1 of its 3 lines (the capture is cut) (line 17)" "$tmp/dg.txt" ||
	bad "diagnose text: no warning of the capture"
"$TS" diagnose --json "$tmp/run" >"$tmp/dg.json" 2>/dev/null
codes "$tmp/dg.json" | grep -qF "truncated|$tmp/run/gmi.txt: the last GPU block has 1 of its 3 lines (the capture is cut)|17" ||
	bad "diagnose --json: no warning of the capture"
python3 -c '
import json, sys
w = [x for x in json.load(open(sys.argv[1]))["warnings"] if x["code"] == "truncated"]
assert len(w) == 1 and w[0]["file"] == sys.argv[2], w
' "$tmp/dg.json" "$tmp/run/gmi.txt" || bad "diagnose --json: the capture warning names another file"
"$TS" report "$tmp/run" --format md 2>/dev/null | sed -n '/^## Warnings/,/^## /p' >"$tmp/dg.md"
grep -qF "$tmp/run/gmi.txt: the last GPU block has 1 of its 3 lines (the capture is cut) (line 17)" "$tmp/dg.md" ||
	bad "report md: no warning of the capture with its line"
"$TS" report "$tmp/run" -o "$tmp/dg.html" 2>/dev/null || bad "report html: exit $?"
grep -qF "$tmp/run/gmi.txt: the last GPU block has 1 of its 3 lines (the capture is cut) (line 17)" "$tmp/dg.html" ||
	bad "report html: no warning of the capture with its line"

# --- ab with that run as the candidate: the capture's warning is the comparison's
"$TS" ab examples/run "$tmp/run" >"$tmp/abt.txt" 2>&1
grep -qF "warning: $tmp/run/gmi.txt: the last GPU block has 1 of its 3 lines (the capture is cut) (line 17)" "$tmp/abt.txt" ||
	bad "ab text: no warning of the capture"
"$TS" ab --json examples/run "$tmp/run" >"$tmp/abt.json" 2>/dev/null
codes "$tmp/abt.json" | grep -qF "truncated|$tmp/run/gmi.txt: the last GPU block has 1 of its 3 lines (the capture is cut)|17" ||
	bad "ab --json: no warning of the capture"

# an unreadable capture (a headerless --query-gpu CSV, as watch-bad-headerless-csv)
# is left out of ab with an unused-input warning, in text and json
cp -r examples/run "$tmp/runq"
printf 'NVIDIA H100, 612.3, 97\n' >"$tmp/runq/q.csv"
"$TS" ab examples/run "$tmp/runq" >"$tmp/abq.txt" 2>&1
grep -qF "warning: $tmp/runq/q.csv: telemetry capture left out (nvidia-smi --query-gpu CSV without a header row" "$tmp/abq.txt" ||
	bad "ab text: no unused-input for the unreadable capture"
"$TS" ab --json examples/run "$tmp/runq" >"$tmp/abq.json" 2>/dev/null
codes "$tmp/abq.json" | grep -qF "unused-input|$tmp/runq/q.csv: telemetry capture left out" ||
	bad "ab --json: no unused-input for the unreadable capture"

# diagnose leaves that capture out the same way (it exited 2 before), and
# names it as the run's input; the capture named alone is still an error
"$TS" diagnose "$tmp/runq" >"$tmp/dgq.txt" 2>&1 || bad "diagnose with an unreadable capture: exit $?"
grep -qF "warning: $tmp/runq/q.csv: telemetry capture left out (nvidia-smi --query-gpu CSV without a header row" "$tmp/dgq.txt" ||
	bad "diagnose text: no unused-input for the unreadable capture"
"$TS" diagnose --json "$tmp/runq" >"$tmp/dgq.json" 2>/dev/null
codes "$tmp/dgq.json" | grep -qF "unused-input|$tmp/runq/q.csv: telemetry capture left out" ||
	bad "diagnose --json: no unused-input for the unreadable capture"
rc=0
"$TS" diagnose "$tmp/runq/q.csv" >/dev/null 2>"$tmp/dgq1.err" || rc=$?
[ "$rc" = 2 ] || bad "diagnose on the unreadable capture alone: exit $rc, not 2"

# --- diagnose on an Nsight Systems export warns what trace warns for it
nsys="$DATA/nsys/h100_2gpu_1s.sqlite"
if [ -f "$nsys" ]; then
	"$TS" trace --json "$nsys" >"$tmp/ns-trace.json" 2>/dev/null
	"$TS" diagnose --json "$nsys" >"$tmp/ns-diag.json" 2>/dev/null
	codes "$tmp/ns-trace.json" | grep -E "^(unjoined-kernels|cross-process-correlation|null-times)\|" >"$tmp/ns-t"
	codes "$tmp/ns-diag.json" | grep -E "^(unjoined-kernels|cross-process-correlation|null-times)\|" >"$tmp/ns-d"
	[ -s "$tmp/ns-t" ] || bad "trace on $nsys: no export warnings to compare"
	cmp -s "$tmp/ns-t" "$tmp/ns-d" || { bad "diagnose --json: the export's warnings differ from trace's"; diff "$tmp/ns-t" "$tmp/ns-d"; }
	"$TS" diagnose "$nsys" 2>&1 | grep -q "^warning: .*h100_2gpu_1s.sqlite: [0-9]* of [0-9]* kernels have no launch row" ||
		bad "diagnose text: no unjoined-kernels"
fi

# --- a directory whose rank files are cut, empty or not traces: trace and
# diagnose both say which and why, in the same words (trace left them out
# silently, or exited 2 on the cut gzip; diagnose left them out silently)
mkdir -p "$tmp/ranks"
cp "$DATA/traces/cpu/c_ddp2/rank1.1795973848053533651.pt.trace.json.gz" "$tmp/ranks/"
head -c 300 /dev/zero >"$tmp/ranks/rank0.pt.trace.json"
: >"$tmp/ranks/rank2.pt.trace.json"
printf '\037\213\010\000' >"$tmp/ranks/rank3.pt.trace.json.gz"
printf 'NSYS' >"$tmp/ranks/profile.nsys-rep"
"$TS" trace --json "$tmp/ranks" >"$tmp/ranks-trace.json" 2>/dev/null || bad "trace of a directory with bad rank files: exit $?"
"$TS" diagnose --json "$tmp/ranks" >"$tmp/ranks-diag.json" 2>/dev/null || bad "diagnose of a directory with bad rank files: exit $?"
python3 - "$tmp/ranks-trace.json" "$tmp/ranks-diag.json" <<'PY' || bad "unused rank files"
import json, sys
t, d = (json.load(open(p)) for p in sys.argv[1:3])
def unused(doc):
    return sorted((w["file"].rsplit("/", 1)[1], w["message"].split(": ", 1)[1] if "cannot be" not in w["message"]
                   else w["message"].split(" cannot be ", 1)[1])
                  for w in doc["warnings"] if w["code"] == "unused-input")
u = unused(t)
want = {"profile.nsys-rep": "nsys export --type sqlite", "rank0.pt.trace.json": "its content is binary",
        "rank2.pt.trace.json": "its content is empty", "rank3.pt.trace.json.gz": "gzip stream ends early"}
ok = [f for f, _ in u] == sorted(want) and all(want[f] in m for f, m in u) and len(t["ranks"]) == 1
if not ok or u != unused(d):
    print("trace:", u, "\ndiagnose:", unused(d), "\nranks:", len(t["ranks"]))
    sys.exit(1)
PY
"$TS" trace "$tmp/ranks" 2>&1 | grep -q "^warning: .*rank0.pt.trace.json: named like a PyTorch profiler trace, but its content is binary" ||
	bad "trace text: no unused-input warning for rank0"

# --- report --baseline --candidate: the A/B section's warnings are ab's, in ab's
# order (an A/A check: the run's warnings once, then the comparison's)
"$TS" ab --json examples/run examples/run >"$tmp/ab.json" 2>/dev/null
codes "$tmp/ab.json" | cut -d'|' -f1 >"$tmp/ab.codes"
[ -s "$tmp/ab.codes" ] || bad "ab --json on examples/run: no warnings to compare"
"$TS" report --baseline examples/run --candidate examples/run --format md 2>/dev/null |
	sed -n '/^## Warnings/,/^## /p' | sed -n 's/^  \([a-z][a-z0-9-]*\)$/\1/p' >"$tmp/rab.codes"
cmp -s "$tmp/ab.codes" "$tmp/rab.codes" || { bad "report's A/B warnings are not ab's"; diff "$tmp/ab.codes" "$tmp/rab.codes"; }

finish
