#!/usr/bin/env bash
# trainscope diff --hta-compat / --tracelens-compat / --annotate through the
# command line. Reference values come from outside trainscope:
#  - HTA's own tests/test_trace_diff.py on trace_compare, rank 1,
#    iteration 1010 (capabilities-anchors.md section 5a): CPU categories
#    {=: 5, +: 3, -: 1}, GPU {-: 1}; added AddmmBackward0,
#    All2All_Pooled_Req, CatBackward0; deleted nccl:all_reduce; base
#    ProfilerStep#1010 122149 us, nccl:all_reduce 67 us;
#  - TraceLens's own comparison CSV of the H100 vs MI300X Qwen traces
#    (compare_h100_mi300_qwen_csvs/gpu_timeline.csv), read here by python;
#  - the annotated file is parsed by python's json module;
#  - ab on two run directories with traces shows diff's walls: the same
#    numbers as `diff --json` on those two traces (one computation), and
#    no trace_walls when a side has no trace.
set -u
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
H=$DATA/traces/hta/trace_compare
Q=$DATA/traces/tracelens-compare/tests/traces
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
[ -d "$H" ] && [ -d "$Q" ] || { echo "shared traces not found"; exit 77; }

for dev in cpu gpu; do
	"$TS" diff --json --hta-compat --hta-device $dev --hta-iterations 1010:1010 --rank 1:1 \
		"$H/base" "$H/test" >"$tmp/hta-$dev.json" 2>"$tmp/hta-$dev.err" ||
		bad "diff --hta-compat --hta-device $dev: exit $?: $(head -c 300 "$tmp/hta-$dev.err")"
done
python3 - "$tmp/hta-cpu.json" "$tmp/hta-gpu.json" <<'PY' || bad "--hta-compat differs from HTA's test expectations"
import json, sys
cpu = json.load(open(sys.argv[1]))["hta_compat"]
gpu = json.load(open(sys.argv[2]))["hta_compat"]
assert cpu["counts_change_categories"] == {"+": 3, "-": 1, "=": 5}, cpu["counts_change_categories"]
assert gpu["counts_change_categories"] == {"+": 0, "-": 1, "=": 0}, gpu["counts_change_categories"]
ops = cpu["ops_diff"]
assert sorted(ops["added"]) == ["AddmmBackward0", "All2All_Pooled_Req", "CatBackward0"], ops
assert ops["deleted"] == ["nccl:all_reduce"], ops
rows = {r["name"]: r for r in cpu["rows"]}
assert rows["ProfilerStep#1010"]["control_total_duration_us"] == 122149, rows["ProfilerStep#1010"]
assert rows["nccl:all_reduce"]["control_total_duration_us"] == 67, rows["nccl:all_reduce"]
PY

"$TS" diff --json --tracelens-compat --allow-different-hardware --annotate "$tmp/ann.json" \
	"$Q"/h100/*.json.gz "$Q"/mi300/*.json.gz >"$tmp/tl.json" 2>"$tmp/tl.err" ||
	bad "diff --tracelens-compat --annotate: exit $?: $(head -c 300 "$tmp/tl.err")"
python3 - "$tmp/tl.json" "$Q/compare_test_e2e/reference/compare_h100_mi300_qwen_csvs/gpu_timeline.csv" \
	"$tmp/ann.json" <<'PY' || bad "--tracelens-compat differs from TraceLens's CSV, or --annotate is wrong"
import csv, json, sys
d = json.load(open(sys.argv[1]))
ours = {r["type"]: r for r in d["tracelens_compat"]["gpu_timeline"]}
ref = list(csv.DictReader(open(sys.argv[2])))
assert len(ref) == 8 and len(ours) == 8, (len(ref), len(ours))
def close(a, b):
    return abs(a - b) <= 1e-9 * max(1.0, abs(b))
for r in ref:
    o = ours[r["type"]]
    assert close(o["baseline_ms"], float(r["h100::time ms"])), (r["type"], o)
    assert close(o["variant_ms"], float(r["mi300::time ms"])), (r["type"], o)
    assert close(o["diff_ms"], float(r["time ms__mi300_diff"])), (r["type"], o)
    pct = r["time ms__mi300_pct"]
    assert (o["diff_pct"] is None) if pct == "" else close(o["diff_pct"], float(pct)), (r["type"], o)
# the speed verdict was asked for across hardware: it is a verdict, and the
# hardware difference is a warning
assert "different-hardware" in [w["code"] for w in d["warnings"]]
a = json.load(open(sys.argv[3]))
pids = {e.get("pid") for e in a["traceEvents"]}
assert {1, 2, 3} <= pids, pids
steps = [e for e in a["traceEvents"] if e.get("tid") == 999999999 and e.get("ph") == "X"]
base = sorted(e["ts"] for e in steps if e["pid"] == 1)
cand = sorted(e["ts"] for e in steps if e["pid"] == 2)
assert base and base == cand, (base, cand)   # paired steps start together
PY

# an nsys export is refused by the compatibility modes, with its name
N=$(ls "$DATA"/nsys/*.sqlite 2>/dev/null | head -1)
if [ -n "$N" ]; then
	"$TS" diff --hta-compat "$N" "$N" >/dev/null 2>"$tmp/ns.err"
	rc=$?
	[ $rc = 2 ] && grep -q "Nsight Systems export" "$tmp/ns.err" ||
		bad "--hta-compat on an nsys export: exit $rc, $(head -c 200 "$tmp/ns.err")"
fi
"$TS" diff --hta-device npu "$H/base" "$H/test" >/dev/null 2>"$tmp/dev.err"
[ $? = 2 ] || bad "--hta-device npu accepted"
C=$DATA/traces/cpu
if [ -d "$C/a_dense" ] && [ -d "$C/d_stall" ]; then
	"$TS" ab --json "$C/a_dense" "$C/d_stall" >"$tmp/ab.json" 2>/dev/null
	"$TS" diff --json "$C"/a_dense/*.pt.trace.json.gz "$C"/d_stall/*.pt.trace.json.gz >"$tmp/d.json" 2>/dev/null ||
		bad "diff a_dense d_stall failed"
	"$TS" ab --json "$C/a_dense/metrics_rank0.jsonl" "$C/d_stall/metrics_rank0.jsonl" >"$tmp/ab-nt.json" 2>/dev/null
	python3 - "$tmp/ab.json" "$tmp/d.json" "$tmp/ab-nt.json" <<'PY' || bad "ab's trace walls differ from diff's"
import json, sys
ab = json.load(open(sys.argv[1]))["trace_walls"]
d = json.load(open(sys.argv[2]))
assert ab["steps"] == 5 and ab["aligned_by"] == "iteration", ab
want = {w["wall"]: w for w in d["walls"]}
for w in ab["walls"]:
    for k in ("baseline_us", "candidate_us", "delta_us"):
        assert abs(w[k] - want[w["wall"]][k]) < 1e-3, (w, want[w["wall"]])
assert "trace_walls" not in json.load(open(sys.argv[3]))
PY
fi
exit $fail
