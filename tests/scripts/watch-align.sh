#!/usr/bin/env bash
# Step alignment on a real run's time range: SYNTHETIC telemetry (made here
# by python3, labelled "synthetic" in its header) sampled every 20 ms over
# the shared CPU run d_stall, with utilisation 95 % except 5 % in the first
# 300 ms of every iteration where the run injected a data-loader stall
# (metrics_rank0.jsonl says which: stall_injected). `watch --read --steps`
# must join the dips to exactly those iterations.
set -eu
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
m="$DATA/traces/cpu/d_stall/metrics_rank0.jsonl"
[ -f "$m" ] || { echo "skip: $m not found"; exit 77; }
command -v python3 >/dev/null || { echo "skip: python3 not installed"; exit 77; }
python3 - "$m" "$tmp/synth.jsonl" "$tmp/truth" <<'PY'
import json, sys
steps = [json.loads(l) for l in open(sys.argv[1])]
stalls = [s["iteration"] for s in steps if s.get("stall_injected")]
t0 = int(steps[0]["t_start_unix"] * 1e9)
t1 = int((steps[-1]["t_start_unix"] + steps[-1]["step_ms"] / 1e3) * 1e9)
dips = [(int(s["t_start_unix"] * 1e9), int(s["t_start_unix"] * 1e9) + 300_000_000)
        for s in steps if s.get("stall_injected")]
with open(sys.argv[2], "w") as f:
    f.write(json.dumps({"schema": "trainscope.telemetry/1", "source": "synthetic",
                        "fidelity": "library", "interval_ms": 20,
                        "gpus": [{"id": "0", "name": "synthetic GPU", "unsupported": {}}]}) + "\n")
    t, k = t0, 0
    while t < t1:
        util = 5 if any(a <= t < b for a, b in dips) else 95
        f.write(json.dumps({"t_unix_ns": t, "t_mono_ns": t - t0, "tick": k, "gpu": 0,
                            "util_pct": util, "power_w": 100 + util}) + "\n")
        t += 20_000_000; k += 1
open(sys.argv[3], "w").write(",".join(map(str, stalls)))
PY
"$TS" watch --read --steps "$m" --json -o "$tmp/out.json" "$tmp/synth.jsonl"
python3 - "$tmp/out.json" "$tmp/truth" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
truth = [int(x) for x in open(sys.argv[2]).read().split(",")]
assert truth == [7, 14, 21, 28, 35, 42, 49, 56], truth
rows = {r["iteration"]: r for r in d["steps"]}
assert len(rows) == 60, len(rows)
low = sorted(i for i, r in rows.items() if r["util_mean_pct"] is not None and r["util_mean_pct"] < 80)
assert low == truth, (low, truth)
dips = [f for f in d["findings"] if f["id"] == "stall-dips"]
assert len(dips) == 1, d["findings"]
assert dips[0]["message"].endswith("iterations " + ", ".join(map(str, truth))), dips[0]["message"]
PY
# the same samples joined to the run's Kineto trace (ProfilerStep windows,
# absolute through baseTimeNanoseconds): the profiled steps 20-28 hold the
# stalls of iterations 21 and 28
tr=$(ls "$DATA"/traces/cpu/d_stall/*.pt.trace.json.gz | head -1)
"$TS" watch --read --steps "$tr" --json -o "$tmp/tr.json" "$tmp/synth.jsonl"
python3 - "$tmp/tr.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rows = {r["iteration"]: r for r in d["steps"]}
low = sorted(i for i, r in rows.items() if r["util_mean_pct"] is not None and r["util_mean_pct"] < 80)
assert low == [21, 28], (low, sorted(rows))
PY
# diagnose on a run directory holding the metrics and the telemetry: the
# telemetry findings (the stall dips, joined to the run's steps) are its own
mkdir -p "$tmp/run"
cp "$m" "$tmp/synth.jsonl" "$tmp/run/"
"$TS" diagnose --json "$tmp/run" > "$tmp/diag.json"
python3 - "$tmp/diag.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
f = [x for x in d["findings"] if x["title"] == "telemetry stall-dips"]
assert len(f) == 1 and f[0]["detail"].endswith("iterations 7, 14, 21, 28, 35, 42, 49, 56"), d["findings"]
PY
# the same capture 8 h later (a clock in local time against the run's UTC):
# diagnose says, as watch does, that no step of the run overlaps it
mkdir -p "$tmp/run8"
cp "$m" "$tmp/run8/"
python3 - "$tmp/synth.jsonl" "$tmp/run8/synth8.jsonl" <<'PY'
import json, sys
with open(sys.argv[2], "w") as f:
    for i, line in enumerate(open(sys.argv[1])):
        r = json.loads(line)
        if i:
            r["t_unix_ns"] += 8 * 3600 * 10**9
        f.write(json.dumps(r) + "\n")
PY
"$TS" diagnose --json "$tmp/run8" > "$tmp/diag8.json"
python3 - "$tmp/diag8.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
w = [x["message"] for x in d["warnings"] if x["code"] == "steps-outside-capture"]
assert len(w) == 1 and "no step" in w[0] and "-8.00 h" in w[0], d["warnings"]
PY

# the same samples as counter tracks in the annotated Perfetto trace: on the
# trace's clock, inside the profiled window, with the stall holes visible
"$TS" trace -q --annotate "$tmp/ann.json" --telemetry "$tmp/synth.jsonl" "$tr" >/dev/null
python3 - "$tmp/ann.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
steps = [e for e in ev if e.get("name", "").startswith("ProfilerStep#")]
lo = min(e["ts"] for e in steps) - 1e6; hi = max(e["ts"] + e["dur"] for e in steps) + 1e6
c = [e for e in ev if e.get("ph") == "C" and e.get("pid") == 0x7a5c0de + 1]
assert len(c) > 100, len(c)
assert all(lo <= e["ts"] < hi for e in c)
assert {e["args"]["util_pct"] for e in c} == {5, 95}
# a hole at ProfilerStep#21's start
s21 = [e for e in steps if e["name"] == "ProfilerStep#21"][0]
inside = [e for e in c if s21["ts"] <= e["ts"] < s21["ts"] + 200e3]
assert inside and all(e["args"]["util_pct"] == 5 for e in inside), inside[:3]
PY
echo ok
