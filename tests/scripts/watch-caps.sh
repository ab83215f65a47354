#!/usr/bin/env bash
# Findings past a cap are said, and the cap keeps the most important
# (docs/watch.md, "Findings past the cap"). SYNTHETIC inputs made here:
#  - one --query-gpu capture of 80 GPUs of one machine, 6 rounds at 1 Hz,
#    utilisation 90, 0, 0, 90, 90, 90 % on each (an idle gap of 2.0 s: 80
#    info findings `idle-gap`; mean 60 %, no low utilization), power
#    600 W but 300 W on GPU 79 (50 % of the median: one warning
#    `straggler-gpu`, found after the per-GPU findings). 81 findings:
#    watch lists 64, so the straggler and 63 idle gaps, 17 idle gaps
#    dropped; diagnose (and report) lists 32: the straggler and 31, 49
#    dropped.
#  - ab of two run directories with dcgm-exporter files of 20 hosts of one
#    GPU each, SM clock 1980 MHz on one side and 1500 on the other (24 %
#    apart): 20 `telemetry-confound`s, one a host; ab lists 8 (node00 to
#    node07), 12 dropped.
# Before 5 Dec 2026 watch listed the first 64 in file order (64 idle
# gaps, no straggler), diagnose the first 32, ab the first 8, and none
# said that more were dropped.
set -eu
cd "$(dirname "$0")/../.."
TS=${TS:-build/trainscope}
DATA=${DATA:-../shared/data}
m="$DATA/traces/cpu/a_dense/metrics_rank0.jsonl"
[ -f "$m" ] || { echo "skip: $m not found"; exit 77; }
command -v python3 >/dev/null || { echo "skip: python3 not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/run" "$tmp/a" "$tmp/b"
cp "$m" "$tmp/run/"
cp "$m" "$tmp/a/"
cp "$m" "$tmp/b/"
python3 - "$tmp" <<'PY'
import calendar, sys, time
tmp = sys.argv[1]
T0 = calendar.timegm((2026, 2, 1, 12, 0, 0))
with open(tmp + "/run/gpus.csv", "w") as f:
    f.write("timestamp, index, power.draw [W], utilization.gpu [%]\n")
    for i, u in enumerate((90, 0, 0, 90, 90, 90)):
        st = time.strftime("%Y/%m/%d %H:%M:%S", time.gmtime(T0 + i)) + ".000"
        for g in range(80):
            f.write("%s, %d, %d.00 W, %d %%\n" % (st, g, 300 if g == 79 else 600, u))
for side, clock in (("a", 1980), ("b", 1500)):
    with open("%s/%s/gpu.metrics.txt" % (tmp, side), "w") as f:
        for i in range(3):
            for h in range(20):
                f.write('DCGM_FI_DEV_SM_CLOCK{gpu="0",Hostname="node%02d"} %d %d\n'
                        % (h, clock, (T0 + 15 * i) * 1000))
PY
"$TS" watch --read "$tmp/run/gpus.csv" --json -o "$tmp/watch.json" || true
"$TS" watch --read "$tmp/run/gpus.csv" > "$tmp/watch.txt" 2>&1 || true
"$TS" diagnose --json -o "$tmp/diag.json" "$tmp/run" || true
"$TS" diagnose "$tmp/run" > "$tmp/diag.txt" 2>&1 || true
"$TS" report "$tmp/run" > "$tmp/report.md" 2>&1 || true
"$TS" report "$tmp/run" -o "$tmp/report.html" 2>/dev/null || true
"$TS" ab --json -o "$tmp/ab.json" "$tmp/a" "$tmp/b" || true
"$TS" ab "$tmp/a" "$tmp/b" > "$tmp/ab.txt" 2>&1 || true
python3 - "$tmp" <<'PY'
import json, sys
tmp = sys.argv[1]
bad = []
def check(what, cond, got):
    if not cond:
        bad.append("%s: %s" % (what, got))
w = json.load(open(tmp + "/watch.json"))
ids = [x["id"] for x in w["findings"]]
check("watch lists 64: the straggler and 63 idle gaps",
      len(ids) == 64 and ids.count("straggler-gpu") == 1 and ids.count("idle-gap") == 63,
      (len(ids), sorted(set(ids))))
check("watch's idle gaps are GPUs 0-62, in order",
      [x["gpu"] for x in w["findings"] if x["id"] == "idle-gap"] == [str(g) for g in range(63)],
      [x["gpu"] for x in w["findings"]][:3])
check("watch's findings_dropped", w.get("findings_dropped") == {"idle-gap": 17}, w.get("findings_dropped"))
msg = "telemetry: 17 of 81 findings are not listed (the first 64 by severity, warnings before info, are): 17 idle-gap"
check("watch's JSON warning", [x["message"] for x in w["warnings"] if x["code"] == "findings-dropped"] == [msg],
      [x for x in w["warnings"] if x["code"] == "findings-dropped"])
txt = open(tmp + "/watch.txt").read()
check("watch's text warning", msg in txt and "straggler-gpu: GPU 79" in txt, txt[-600:])
d = open(tmp + "/diag.json").read()
msg32 = "telemetry: 49 of 81 findings are not listed (the first 32 by severity, warnings before info, are): 49 idle-gap"
check("diagnose --json", msg32 in d and "telemetry straggler-gpu" in d, d[:300])
dt = open(tmp + "/diag.txt").read()
check("diagnose text", msg32 in dt and "telemetry straggler-gpu" in dt, dt[-600:])
for r in ("report.md", "report.html"):
    rt = open(tmp + "/" + r).read()
    check(r, msg32 in rt and "telemetry straggler-gpu" in rt, len(rt))
a = json.load(open(tmp + "/ab.json"))
conf = [x["message"] for x in a["warnings"] if x["code"] == "telemetry-confound"]
check("ab lists 8 confounds, node00-node07",
      len(conf) == 8 and all(" on host node%02d:" % h in conf[h] for h in range(8)), conf[:2])
msg8 = "telemetry confounds: 12 of 20 findings are not listed (the first 8 by severity, warnings before info, are): 12 telemetry-confound"
check("ab's JSON warning", [x["message"] for x in a["warnings"] if x["code"] == "findings-dropped"] == [msg8],
      [x for x in a["warnings"] if x["code"] == "findings-dropped"])
check("ab's text warning", msg8 in open(tmp + "/ab.txt").read(), "")
for b in bad:
    print("  wrong: " + b)
sys.exit(1 if bad else 0)
PY
echo "watch-caps: ok"
