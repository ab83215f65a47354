#!/usr/bin/env bash
# Every finding that compares GPUs compares them within their host, as
# straggler-gpu does (docs/watch.md). SYNTHETIC captures, the truth worked
# out by hand:
#  - two.txt (dcgm-exporter, 3 scrapes): node1, 4 GPUs at 1980 MHz (GPU 3
#    at 1900), 95 % utilization, 650 W; node2, a lower host, 4 GPUs at
#    1500 MHz, 40 % utilization, 350 W; clock-event reasons 0 everywhere.
#    clock-spread: node1 only, 80 MHz across its 4 GPUs (1900-1980); node2
#    has none (its GPUs agree). Before, one finding pooled the 8 GPUs:
#    480 MHz (1500-1980), the hosts' levels taken for a spread.
#    low-utilization: node2 only, 40.0 % (4 GPUs); node1 has none. Before,
#    the job mean, 67.5 %, hid node2 and found nothing.
#    straggler-gpu: none (node2's 1500 MHz is no straggler within node2).
#  - one.txt: node1 alone: the messages name no host, as before.
#  - ab: runs a and b are the same log beside JSONL captures of node1
#    (4 GPUs at 1980 MHz) and node2 at 1500 MHz: a with 4 GPUs of node2,
#    b with 2 (a smaller slice of the slower host). Per host the sides
#    agree: no telemetry-confound. Pooled (before) a's mean SM clock was
#    (4 x 1980 + 4 x 1500) / 8 = 1740 and b's (4 x 1980 + 2 x 1500) / 6 =
#    1820, 4.6 % apart (> 3 %): a false confound. c is b with node2 at
#    1400 MHz (6.7 % below 1500): "mean SM clock on host node2: 1500 vs
#    1400 MHz", node1 not named.
set -eu
cd "$(dirname "$0")/../.."
TS=$(cd "$(dirname "${TS:-build/trainscope}")" && pwd)/$(basename "${TS:-build/trainscope}")
DATA=$(cd "${DATA:-../shared/data}" 2>/dev/null && pwd || echo "${DATA:-../shared/data}")
m="$DATA/traces/cpu/a_dense/metrics_rank0.jsonl"
command -v python3 >/dev/null || { echo "skip: python3 not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
python3 - <<'PY'
import calendar, json
T0 = calendar.timegm((2026, 2, 1, 12, 0, 0))
def series(metric, host, g, v, ms):
    lab = ('gpu="%d",UUID="GPU-%s-%d",modelName="NVIDIA H100 80GB HBM3",Hostname="%s"' % (g, host, g, host))
    return "%s{%s} %s %d" % (metric, lab, v, ms)
LEVEL = {"node1": (lambda g: 1900 if g == 3 else 1980, 95, 650), "node2": (lambda g: 1500, 40, 350)}
def scrape(i, host):
    clk, util, power = LEVEL[host]
    ms = (T0 + 15 * i) * 1000
    out = []
    for m, f in (("DCGM_FI_DEV_SM_CLOCK", clk), ("DCGM_FI_DEV_GPU_UTIL", lambda g: util),
                 ("DCGM_FI_DEV_POWER_USAGE", lambda g: power),
                 ("DCGM_FI_DEV_CLOCKS_EVENT_REASONS", lambda g: 0)):
        out += [series(m, host, g, f(g), ms) for g in range(4)]
    return out
open("two.txt", "w").write("\n".join(sum((scrape(i, "node1") + scrape(i, "node2") for i in range(3)), [])) + "\n")
open("one.txt", "w").write("\n".join(sum((scrape(i, "node1") for i in range(3)), [])) + "\n")
def cap(path, host, n, clk):
    # one capture is one host's (its header names it)
    with open(path, "w") as f:
        f.write(json.dumps({"schema": "trainscope.telemetry/1", "source": "synthetic", "fidelity": "library",
                            "interval_ms": 100, "host": host,
                            "gpus": [{"id": str(i), "name": "NVIDIA H100 80GB HBM3", "unsupported": {}}
                                     for i in range(n)]}) + "\n")
        for k in range(5):
            for i in range(n):
                f.write(json.dumps({"t_unix_ns": 1700000000000000000 + k * 100000000, "tick": k, "gpu": i,
                                    "power_w": 500, "power_limit_w": 700, "sm_clock_mhz": clk, "temp_c": 60}) + "\n")
import os
for d, n2, c2 in (("a", 4, 1500), ("b", 2, 1500), ("c", 2, 1400)):
    os.makedirs(d)
    cap(d + "/node1.telemetry.jsonl", "node1", 4, 1980)
    cap(d + "/node2.telemetry.jsonl", "node2", n2, c2)
PY
"$TS" watch --read two.txt --json -o two.json 2>/dev/null
"$TS" watch --read two.txt >two.out 2>&1
"$TS" watch --read one.txt --json -o one.json 2>/dev/null
python3 - <<'PY'
import json
d = json.load(open("two.json"))
f = [(x["id"], x["message"]) for x in d["findings"]
     if x["id"] in ("clock-spread", "low-utilization", "straggler-gpu")]
want = [("clock-spread", "SM clocks differ by 80 MHz across 4 GPUs on host node1 (1900-1980 MHz) with no "
                         "power or thermal violation reported: informational, not throttling"),
        ("low-utilization", "mean GPU utilization 40.0 % (per GPU 40-40 %, 4 GPUs on host node2): the "
                            "GPUs are mostly waiting")]
assert f == want, f
d = json.load(open("one.json"))
f = [(x["id"], x["message"]) for x in d["findings"] if x["id"] in ("clock-spread", "low-utilization")]
assert f == [("clock-spread", "SM clocks differ by 80 MHz across 4 GPUs (1900-1980 MHz) with no power or "
                              "thermal violation reported: informational, not throttling")], f
PY
grep -q "SM clocks differ by 80 MHz across 4 GPUs on host node1" two.out ||
	{ echo "watch text: no per-host clock-spread"; cat two.out; exit 1; }
if [ -f "$m" ]; then
	for d in a b c; do cp "$m" "$d/"; done
	"$TS" ab --json -o ab.json a b 2>/dev/null || true
	"$TS" ab --json -o ac.json a c 2>/dev/null || true
	python3 - <<'PY'
import json
w = [x["message"] for x in json.load(open("ab.json"))["warnings"] if x["code"] == "telemetry-confound"]
assert w == [], w
w = [x["message"] for x in json.load(open("ac.json"))["warnings"] if x["code"] == "telemetry-confound"]
assert len(w) == 1 and w[0].startswith("the two sides ran at a different mean SM clock on host node2: "
                                       "1500 vs 1400 MHz"), w
PY
else
	echo "note: $m not found, ab part skipped"
fi
echo "watch-hosts: ok"
