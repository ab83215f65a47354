#!/usr/bin/env bash
# Acceptance on the real CPU corpus (shared/data/traces/cpu): per-step
# durations and data-loader spans against facts.trace_reference in each
# ground_truth.json, the injected faults (README.txt: data-loader stall in
# d_stall, straggler rank in e_straggler) found where the ground truth says,
# and no outlier, stall or straggler on the clean runs.
set -u
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
CPU=$DATA/traces/cpu
[ -d "$CPU" ] || { echo "no $CPU"; exit 77; }
command -v python3 >/dev/null || { echo "python3 not found"; exit 77; }
for c in a_dense a_dense_legacy113 b_moe c_ddp2 d_stall e_straggler; do
	"$TS" trace --json "$CPU/$c" >"$tmp/$c.json" 2>"$tmp/$c.err" || { echo "$c: exit $?"; cat "$tmp/$c.err"; exit 1; }
done
python3 - "$CPU" "$tmp" <<'PY'
import json, os, sys
cpu, tmp = sys.argv[1], sys.argv[2]
bad = []
def check(cond, what):
    if not cond:
        bad.append(what)
for case in ["a_dense", "a_dense_legacy113", "b_moe", "c_ddp2", "d_stall", "e_straggler"]:
    gt = json.load(open(os.path.join(cpu, case, "ground_truth.json")))
    out = json.load(open(os.path.join(tmp, case + ".json")))
    check(out["schema"] == "trainscope.trace/1", case + ": schema")
    refs = gt["facts"]["trace_reference"]
    check(len(out["ranks"]) == len(refs), "%s: %d rank windows, want %d" % (case, len(out["ranks"]), len(refs)))
    for fname, ref in refs.items():
        ranks = [r for r in out["ranks"] if os.path.basename(r["file"]).startswith(fname)]
        check(len(ranks) == 1, "%s/%s: not analysed" % (case, fname))
        if not ranks:
            continue
        r = ranks[0]
        check(r["rank"] == ref["rank"], "%s/%s: rank %s, want %s" % (case, fname, r["rank"], ref["rank"]))
        steps = {s["step"]: s for s in r["steps"]}
        check(sorted(steps) == sorted(ref["profiled_iterations"]),
              "%s/%s: iterations %s, want %s" % (case, fname, sorted(steps), ref["profiled_iterations"]))
        for name, ps in ref["profiler_steps"].items():
            it = ps["iteration"]
            if it not in steps:
                continue
            got = steps[it]["dur_us"] / 1000.0
            check(abs(got - ps["dur_ms"]) <= 0.001, "%s/%s: step %d dur %.3f ms, want %.3f" % (case, fname, it, got, ps["dur_ms"]))
        for it, dl in ref["dataloader_span_ms_by_iteration"].items():
            it = int(it)
            if it not in steps:
                continue
            got = steps[it]["data_us"] / 1000.0
            check(abs(got - dl) <= 0.001, "%s/%s: step %d data %.3f ms, want %.3f" % (case, fname, it, got, dl))
        stalls = set(ref.get("stall_iterations_in_window", []))
        outl = {s["step"] for s in r["steps"] if s["outlier"]}
        check(outl == stalls, "%s/%s: outliers %s, want %s" % (case, fname, sorted(outl), sorted(stalls)))
        for s in r["steps"]:
            if s["outlier"]:
                check(s["reason"].startswith("data loader "), "%s: reason %r" % (case, s["reason"]))
    inj = gt["facts"]["injected"]
    strag = sorted(s["rank"] for s in out["stragglers"])
    want = [inj["straggler"]["rank"]] if "straggler" in inj else []
    check(strag == want, "%s: stragglers %s, want %s" % (case, strag, want))
    wall = out["wall"]["dominant"]
    if "dataloader_stall" in inj:
        check(wall == "data", "%s: wall %s, want data" % (case, wall))
    elif "straggler" in inj:
        check(wall == "straggler", "%s: wall %s, want straggler" % (case, wall))
    else:
        check(wall not in ("data", "straggler"), "%s: false alarm wall %s" % (case, wall))
for b in bad:
    print("FAIL", b)
sys.exit(1 if bad else 0)
PY
