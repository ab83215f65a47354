#!/usr/bin/env bash
# trainscope diff on the shared traces, checked against the acceptance
# numbers of capabilities-anchors.md §5d (written out below) and against
# tests/tools/diff_expected.py (an independent stdlib reader of the traces):
#  - a_dense vs b_moe: the 50 added router/dispatch op names with their time,
#    0 deleted, step time inconclusive;
#  - a_dense vs d_stall: compared steps 22-26, candidate steps 20, 21, 27, 28
#    not compared, 21 and 28 outliers with ~300 ms extra in the data wall;
#  - a_dense vs a_dense_legacy113: legacy ProfilerStep#22 = iteration 23,
#    25 names added, 9 deleted, the attention and optimizer changes;
#  - c_ddp2 window 1 vs window 2: not called different;
#  - e_straggler rank 0 vs rank 1: rank 0 waits in gloo:all_reduce;
#  - HTA trace_diff control vs test: context first, ranks 3 -> 1, the mean
#    steps 77,490.8 / 124,066.8 us, speed verdict refused;
#  - examples/run vs run-h200: refused, family table still there;
#  - walls and rows close; --fail-on-regression exits 1; a truncated trace
#    is warned about.
set -u
. "$(dirname "$0")/lib.sh"
CPU=$DATA/traces/cpu
HTA=$DATA/traces/hta/trace_diff
[ -d "$CPU/a_dense" ] || { echo "shared data not found"; exit 77; }
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }

tr() { if [ -d "$1" ]; then ls "$1"/*.pt.trace.json* | head -n 1; else echo "$1"; fi; }

run() { # name base cand [opts]
	local n=$1 b=$2 c=$3
	shift 3
	"$TS" diff --json "$@" "$b" "$c" >"$tmp/$n.json" 2>"$tmp/$n.err"
	echo $? >"$tmp/$n.rc"
	python3 tests/tools/diff_expected.py "$(tr "$b")" "$(tr "$c")" >"$tmp/$n.exp"
}

run moe "$CPU/a_dense" "$CPU/b_moe"
run stall "$CPU/a_dense" "$CPU/d_stall"
run legacy "$CPU/a_dense" "$CPU/a_dense_legacy113"
run ddp "$CPU/c_ddp2/rank0.1795973848044282865.pt.trace.json.gz" "$CPU/c_ddp2/rank0.1795973853599086660.pt.trace.json.gz"
for n in moe stall legacy ddp; do [ "$(cat "$tmp/$n.rc")" = 0 ] || bad "$n: diff exit $(cat "$tmp/$n.rc"): $(cat "$tmp/$n.err")"; done
"$TS" diff --json --rank 0:1 "$CPU/e_straggler" "$CPU/e_straggler" >"$tmp/strag.json" 2>"$tmp/strag.err" || bad "straggler diff exit $?"
python3 tests/tools/diff_expected.py "$CPU"/e_straggler/rank0.*.json.gz "$CPU"/e_straggler/rank1.*.json.gz >"$tmp/strag.exp"

python3 - "$tmp" <<'EOF' || fail=1
import json, sys, math
tmp = sys.argv[1]
ok = True
def check(c, msg):
    global ok
    if not c:
        print("FAIL:", msg); ok = False
def load(n):
    return json.load(open(f"{tmp}/{n}.json")), (json.load(open(f"{tmp}/{n}.exp")) if n != "ddp" else None)

TOP = ["schema", "steps", "ratio", "verdict", "walls", "rows", "context", "warnings"]
def closes(d, n):
    # the five partition walls add up to the mean step, and the closing rows
    # plus the residual to the step delta
    for side in ("baseline", "candidate"):
        s = sum(w[f"{side}_us"] for w in d["walls"] if w["within"] is None)
        check(abs(s - d["steps"][f"{side}_mean_us"]) < 0.01, f"{n}: {side} walls {s} != step {d['steps'][side + '_mean_us']}")
    delta = d["steps"]["candidate_mean_us"] - d["steps"]["baseline_mean_us"]
    rows = sum(r["delta_us"] for r in d["rows"] if r["closes"])
    check(abs(rows - delta) < 0.01, f"{n}: rows {rows} != delta {delta}")
    for k in TOP:
        check(k in d, f"{n}: top-level key {k} missing")
    check(d["schema"] == "trainscope.diff/1", f"{n}: schema")
    check(set(d["ratio"]) >= {"estimate", "ci95_low", "ci95_high"}, f"{n}: ratio keys")
    for w in d["walls"]:
        check(set(w) >= {"wall", "baseline_us", "candidate_us", "delta_us"}, f"{n}: wall keys")

def compared(d):
    return [p["baseline_iteration"] for p in d["steps"]["compared"]], [p["candidate_iteration"] for p in d["steps"]["compared"]]

def step_means(d, e):
    b, c = compared(d)
    eb = sum(e["baseline_steps_us"][str(i)] for i in b) / len(b)
    ec = sum(e["candidate_steps_us"][str(i)] for i in c) / len(c)
    check(abs(d["steps"]["baseline_mean_us"] - eb) < 0.01, f"baseline mean {d['steps']['baseline_mean_us']} vs {eb}")
    check(abs(d["steps"]["candidate_mean_us"] - ec) < 0.01, f"candidate mean {d['steps']['candidate_mean_us']} vs {ec}")

def changes(d, kind):
    return {c["name"]: c["us_per_step"] for c in d["changes"] if c["change"] == kind}

# ---- dense vs MoE (§5d: 50 names only in b_moe, 0 deleted; inconclusive)
d, e = load("moe")
closes(d, "moe"); step_means(d, e)
check(compared(d)[0] == [22, 23, 24, 25], f"moe compared {compared(d)}")
check(d["op_names"]["added"] == 50 and d["op_names"]["deleted"] == 0, f"moe names {d['op_names']}")
check(sorted(e["names_added"]) == sorted(changes(d, "added")), "moe added names differ from the reference script")
add = changes(d, "added")
for n in ("aten::topk", "aten::nonzero", "aten::one_hot", "aten::scatter_add_", "aten::index_add_", "TopkBackward0"):
    check(n in add, f"moe: {n} not listed as added")
# their time: the inclusive time per step equals the reference script's
rows = {r["name"]: r for r in d["rows"]}
for n in ("aten::topk", "aten::one_hot", "aten::scatter_add_"):
    got = rows[n]["candidate"]["total_us_per_step"]
    want = e["candidate_per_step_us"][n]
    check(abs(got - want) < 0.01, f"moe {n}: {got} us/step, reference {want}")
check(d["verdict"] == "inconclusive", f"moe verdict {d['verdict']}")

# ---- dense vs stall (§5d: compared 22-26; 20, 21, 27, 28 unmatched; 21, 28 data stalls)
d, e = load("stall")
closes(d, "stall"); step_means(d, e)
check(compared(d)[1] == [22, 23, 24, 25, 26], f"stall compared {compared(d)}")
notes = {n["iteration"]: n for n in d["steps"]["notes"] if n["side"] == "candidate"}
check(sorted(i for i, n in notes.items() if not n["compared"]) == [20, 21, 27, 28], f"stall unmatched {sorted(notes)}")
check(e["only_candidate"] == [20, 21, 27, 28], "reference unmatched")
for it, span in ((21, 300.822), (28, 306.344)):
    n = notes[it]
    check(n["outlier"], f"stall {it} not an outlier")
    check(n["wall"] == "data_loader", f"stall {it} wall {n['wall']}")
    # the extra ~300 ms: the DataLoader span (ms, §5d) minus the median (< 1 ms)
    check(abs(n["wall_excess_us"] / 1e3 - span) < 1.0, f"stall {it} excess {n['wall_excess_us']} us, §5d span {span} ms")
    check(abs(e["candidate_data_loader_us"][str(it)] / 1e3 - span) < 0.01, f"reference data span {it}")
check(not notes[20]["outlier"] and not notes[27]["outlier"], "stall: 20/27 flagged")
check(d["op_names"]["added"] == 0 and d["op_names"]["deleted"] == 0 and d["op_names"]["common"] == 105, f"stall names {d['op_names']}")

# ---- torch 2.6 vs 1.13 (§5d: iteration 23 = ProfilerStep#22; 25 added, 9 deleted)
d, e = load("legacy")
closes(d, "legacy"); step_means(d, e)
check(23 in compared(d)[1], "legacy: iteration 23 not compared")
check(d["context"]["candidate"]["trace_format"] == "legacy-array", "legacy format")
check(d["op_names"]["added"] == 25 and d["op_names"]["deleted"] == 9, f"legacy names {d['op_names']}")
check(sorted(e["names_added"]) == sorted(changes(d, "added")), "legacy added differ from reference")
check(sorted(e["names_deleted"]) == sorted(changes(d, "deleted")), "legacy deleted differ from reference")
add, dele = changes(d, "added"), changes(d, "deleted")
for n in ("aten::bmm", "aten::masked_fill"):
    check(n in add, f"legacy: {n} not added")
check("aten::softmax" in add or "aten::_softmax" in add, "legacy: softmax not added")
for n in ("aten::scaled_dot_product_attention", "aten::_scaled_dot_product_flash_attention_for_cpu",
          "aten::_foreach_mul_", "aten::_foreach_norm", "aten::lerp_"):
    check(n in dele, f"legacy: {n} not deleted")
fam = {c["name"]: c["family"] for c in d["changes"]}
check(fam["aten::scaled_dot_product_attention"] == "attention_fwd", "sdpa family")
check(fam["aten::_foreach_mul_"] == "optimizer", "foreach family")

# ---- c_ddp2 window 1 (14-16, 702.9 ms) vs window 2 (21-23, 476.1 ms): not different
d = json.load(open(f"{tmp}/ddp.json"))
closes(d, "ddp")
check(d["steps"]["aligned_by"] == "position", "ddp alignment")
check(d["verdict"] in ("inconclusive", "no_difference"), f"ddp verdict {d['verdict']}")
check(abs(d["steps"]["baseline_mean_us"] / 1e3 - 702.9) < 0.05 and abs(d["steps"]["candidate_mean_us"] / 1e3 - 476.1) < 0.05, "ddp means (§5d)")

# ---- e_straggler rank 0 vs 1 (§5d: 675-894 ms/step in gloo:all_reduce on rank 0, 12-39 on rank 1)
d = json.load(open(f"{tmp}/strag.json")); e = json.load(open(f"{tmp}/strag.exp"))
closes(d, "straggler")
check(d["context"]["baseline"]["rank"] == 0 and d["context"]["candidate"]["rank"] == 1, "straggler ranks")
g = [r for r in d["rows"] if r["name"] == "gloo:all_reduce"][0]
b, c = g["baseline"]["total_us_per_step"] / 1e3, g["candidate"]["total_us_per_step"] / 1e3
check(675 <= b <= 894 and 12 <= c <= 39, f"straggler gloo:all_reduce {b} vs {c} ms/step")
check(abs(g["baseline"]["total_us_per_step"] - e["baseline_per_step_us"]["gloo:all_reduce"]) < 0.01, "straggler vs reference")
w = {x["wall"]: x for x in d["walls"]}
check(w["exposed_comm"]["delta_us"] < -250e3, "straggler: rank 0's exposed comm is not the larger")
fw = [r for r in d["rows"] if r["name"] == "DistributedDataParallel.forward"][0]
check(fw["candidate"]["total_us_per_step"] - fw["baseline"]["total_us_per_step"] > 250e3, "straggler: rank 1's forward gap")
sys.exit(0 if ok else 1)
EOF

# ---- HTA trace_diff: context first, rank mapping, refused verdict (§5d)
"$TS" diff "$HTA/control" "$HTA/test" >"$tmp/hta.txt" 2>&1
[ $? = 0 ] || bad "hta diff exit"
dev=$(grep -n "^  device .*A100-PG509-200.*V100-SXM2-16GB.*differs" "$tmp/hta.txt" | cut -d: -f1)
row=$(grep -n "^rows by" "$tmp/hta.txt" | cut -d: -f1)
[ -n "$dev" ] && [ -n "$row" ] && [ "$dev" -lt "$row" ] || bad "hta: GPU context not before the rows"
grep -q "(rank 3) -> .*(rank 1)" "$tmp/hta.txt" || bad "hta: rank mapping 3 -> 1 not stated"
grep -q "verdict: refused_different_hardware" "$tmp/hta.txt" || bad "hta: verdict not refused"
grep -q "step time: baseline 77.491 ms, candidate 124.067 ms" "$tmp/hta.txt" || bad "hta: mean steps (77,490.8 / 124,066.8 us)"
"$TS" diff --json --allow-different-hardware "$HTA/control" "$HTA/test" >"$tmp/hta.json" || bad "hta allow exit"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(d['verdict'] == 'refused_different_hardware')" "$tmp/hta.json" || bad "hta: refused with the flag"
"$TS" diff --allow-different-hardware --fail-on-regression 5 "$HTA/control" "$HTA/test" >/dev/null 2>&1
[ $? = 1 ] || bad "--fail-on-regression 5 on a 60 % slower candidate does not exit 1"
"$TS" diff --allow-different-hardware --fail-on-regression 500 "$HTA/control" "$HTA/test" >/dev/null 2>&1
[ $? = 0 ] || bad "--fail-on-regression 500 exits non-zero"

# GB/s of a copy row = its payload bytes / its duration (instances with a
# size and a duration > 0), computed here from the raw control trace
python3 - "$HTA/control/control.json.gz" "$tmp/hta.json" <<'EOF' || bad "hta: memcpy GB/s differs from the raw trace"
import gzip, json, sys
ev = json.load(gzip.open(sys.argv[1]))["traceEvents"]
d = json.load(open(sys.argv[2]))
steps = sorted((e["ts"], e["ts"] + e["dur"]) for e in ev if e.get("ph") == "X" and e.get("name", "").startswith("ProfilerStep#")
               and e.get("cat") in ("cpu_op", "user_annotation"))
name = "Memcpy DtoD (Device -> Device)"
b = t = 0
for e in ev:
    if e.get("cat") == "gpu_memcpy" and e["name"] == name and e["dur"] > 0 and "bytes" in e.get("args", {}):
        if any(s <= e["ts"] < x for s, x in steps):
            b += e["args"]["bytes"]; t += e["dur"] * 1000
row = [r for r in d["rows"] if r["name"] == name and r["kind"] == "memcpy"][0]
got = row["baseline"]["gbps"]
print("memcpy DtoD GB/s", got, b / t)
sys.exit(0 if abs(got - b / t) <= 1e-9 * (b / t) else 1)
EOF

# ---- --max-unmatched: the MoE candidate's added ops are unmatched time; the
# stall pair has none
"$TS" diff --max-unmatched 0.01 "$CPU/a_dense" "$CPU/b_moe" >/dev/null 2>&1
[ $? = 1 ] || bad "--max-unmatched 0.01 on dense vs MoE does not exit 1"
"$TS" diff --max-unmatched 0 "$CPU/a_dense" "$CPU/d_stall" >/dev/null 2>&1
[ $? = 0 ] || bad "--max-unmatched 0 on dense vs stall (no unmatched op) exits non-zero"

# ---- nsys before/after pair without steps (capabilities-anchors §5a): the
# whole window is one step (no noise estimate); per-instance means pooled
# over both ranks: flash_fwd 4.005 vs 4.013 ms (68 vs 60 instances),
# SendRecv 0.385 vs 0.544 ms (+41 %)
NS=$DATA/nsys
if [ -f "$NS/mfu_2gpu_before.sqlite" ]; then
	for r in 0 1; do
		"$TS" diff --json --rank $r:$r "$NS/mfu_2gpu_before.sqlite" "$NS/mfu_2gpu_after.sqlite" >"$tmp/ns$r.json" 2>/dev/null || bad "nsys diff rank $r exit"
	done
	python3 - "$tmp/ns0.json" "$tmp/ns1.json" <<'EOF' || bad "nsys pair: §5a per-instance figures"
import json, sys
ds = [json.load(open(p)) for p in sys.argv[1:]]
for d in ds:
    assert d["verdict"] is None and d["verdict_reason"] == "no_noise_estimate", d["verdict_reason"]
    assert d["steps"]["aligned_by"] == "position" and d["steps"]["compared"][0]["baseline_iteration"] is None
    assert any(w["code"] == "whole-window" for w in d["warnings"])
    assert abs(d["steps"]["baseline_mean_us"] / 1e3 - 299.88) < 0.05 and abs(d["steps"]["candidate_mean_us"] / 1e3 - 299.26) < 0.05
def pooled(key, side):
    n = t = 0
    for d in ds:
        r = [x for x in d["rows"] if key in x["name"] and x["kind"] == "kernel"][0][side]
        n += r["count"]; t += r["count"] * r["mean_us"]
    return n, t / n / 1e3
for key, want in (("flash_fwd_kernel", ((68, 4.005), (60, 4.013))), ("SendRecv", ((66, 0.385), (62, 0.544)))):
    for side, (wn, wms) in zip(("baseline", "candidate"), want):
        n, ms = pooled(key, side)
        assert (key == "SendRecv" or n == wn) and round(ms, 3) == wms, (key, side, n, ms, wn, wms)
EOF
fi

# ---- examples: CPU vs H200 refuses, still has families
if [ -d examples/run-h200 ]; then
	"$TS" diff --json examples/run examples/run-h200 >"$tmp/ex.json" || bad "examples exit"
	python3 -c "
import json,sys; d=json.load(open(sys.argv[1]))
assert d['verdict'] == 'refused_different_hardware', d['verdict']
assert len(d['families']) >= 5
assert d['context']['candidate']['device'] == 'NVIDIA H200'
assert any(w['code'] == 'different-hardware' for w in d['warnings'])
" "$tmp/ex.json" || bad "examples: not refused or no family table"
fi

# ---- a truncated trace is warned about in the diff output
python3 - "$CPU"/a_dense/*.json.gz "$tmp/cut.json" <<'EOF'
import gzip, sys
raw = gzip.open(sys.argv[1]).read()
open(sys.argv[2], "wb").write(raw[: int(len(raw) * 0.7)])
EOF
"$TS" diff --json "$CPU/a_dense" "$tmp/cut.json" >"$tmp/cut.out" 2>/dev/null || bad "truncated diff exit"
grep -q '"truncated-trace"' "$tmp/cut.out" || bad "truncated trace not in the diff warnings"

# ---- usage errors
"$TS" diff "$CPU/a_dense" >/dev/null 2>&1
[ $? = 2 ] || bad "one input is not exit 2"
"$TS" diff --rank 0:7 "$CPU/e_straggler" "$CPU/e_straggler" >/dev/null 2>&1
[ $? = 2 ] || bad "absent rank is not exit 2"

finish
