#!/usr/bin/env bash
# `watch --read` on SYNTHETIC dcgm-exporter scrapes (Prometheus text, as
# `curl -s localhost:9400/metrics` appends them to a file), every
# expectation worked out by hand (T0 = 2026-02-01 12:00:00 UTC):
#  - timed.txt: host node1, 4 GPUs (NVIDIA H100 80GB HBM3), 3 scrapes
#    15 s apart with millisecond timestamps T0, T0 + 15 s, T0 + 30 s.
#    650 W, 98 %, GR engine active 0.95 on every GPU; SM clock 1980 MHz
#    except GPU 3 at 1410 (no throttle reason, DCGM_FI_DEV_CLOCKS_EVENT_
#    REASONS 0): a straggler on the clock, 1410 / 1980 = 71 %; energy
#    counter 1 000 000 000 mJ + 9 750 000 mJ per scrape (650 W x 15 s):
#    19 500 J over the 30 s.
#  - untimed.txt: the same scrapes without timestamps: read, and warned
#    `untimed`; dated.txt: the same, each scrape after a line of its own
#    "2026-02-01T12:00:15.000Z" (as `date -u +%FT%T.%3NZ` prints it):
#    timed at T0 + 0, 15, 30 s, a zone given, so no time-zone hint for
#    steps 8 h off.
#  - hosts.txt: one file of two hosts (node1: 4 GPUs at 650 W, node2: 4
#    GPUs at 350 W, GPU 2 at 250 W; node1's GPU 3 at 1410 MHz as in
#    timed.txt): GPUs "node1/0" ... "node2/3", each judged against its own
#    host: node2/2 is a straggler on power (71 % of 350; pooled, median
#    500, all of node2 would be) and node1/3 on the clock.
#  - mem.txt: node1, 4 GPUs, 3 scrapes of the default counters' memory
#    fields, DCGM_FI_DEV_FB_USED and DCGM_FI_DEV_FB_FREE (MiB), with
#    DCGM_FI_DEV_FB_RESERVED 559 on every GPU: used 40000 (GPU 3: 78000)
#    and free 81000 - used, so every total is 40000 + 41000 + 559 = 81559
#    MiB (an H100 80GB). GPU 3's peak is 78000 / 81559 = 95.6 % of it: a
#    memory-headroom finding, the only one. memtotal.txt sends
#    DCGM_FI_DEV_FB_TOTAL 81559 beside FB_USED instead: the same totals.
#    Before, no total was read and no memory finding could be made.
#  - bad.txt: line 4 a series without its closing brace: an error naming
#    the file and line 4; cut.txt: the last line cut inside its value:
#    read, the line left out with a `truncated` note (line 10).
# Before, none of these was read (not a telemetry capture).
set -eu
cd "$(dirname "$0")/../.."
TS=$(cd "$(dirname "${TS:-build/trainscope}")" && pwd)/$(basename "${TS:-build/trainscope}")
command -v python3 >/dev/null || { echo "skip: python3 not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
python3 - <<'PY'
import calendar, json
T0 = calendar.timegm((2026, 2, 1, 12, 0, 0))
def series(metric, host, g, v, ms=None):
    lab = ('gpu="%d",UUID="GPU-%08x-1111-2222-3333-%012x",device="nvidia%d",modelName="NVIDIA H100 80GB HBM3",'
           'Hostname="%s",DCGM_FI_DRIVER_VERSION="535.104.05"' % (g, 0xabcdef00 + g, g, g, host))
    return "%s{%s} %s%s" % (metric, lab, v, "" if ms is None else " %d" % ms)
def scrape(i, host="node1", stamps=True, power=lambda g: 650):
    ms = (T0 + 15 * i) * 1000 if stamps else None
    out = []
    for m, f in (("DCGM_FI_DEV_SM_CLOCK", lambda g: 1410 if g == 3 and host == "node1" else 1980),
                 ("DCGM_FI_DEV_POWER_USAGE", power),
                 ("DCGM_FI_DEV_GPU_UTIL", lambda g: 98),
                 ("DCGM_FI_DEV_CLOCKS_EVENT_REASONS", lambda g: 0),
                 ("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", lambda g: 1000000000 + 9750000 * i),
                 ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", lambda g: "0.950000")):
        out += ["# HELP %s help text." % m, "# TYPE %s gauge" % m]
        out += [series(m, host, g, f(g), ms) for g in range(4)]
    return out
open("timed.txt", "w").write("\n".join(sum((scrape(i) for i in range(3)), [])) + "\n")
open("untimed.txt", "w").write("\n".join(sum((scrape(i, stamps=False) for i in range(3)), [])) + "\n")
open("dated.txt", "w").write("\n".join(sum((["2026-02-01T12:00:%02d.000Z" % (15 * i)] + scrape(i, stamps=False)
                                            for i in range(3)), [])) + "\n")
h = []
for i in range(3):
    h += scrape(i, "node1", False)
    h += scrape(i, "node2", False, power=lambda g: 250 if g == 2 else 350)
open("hosts.txt", "w").write("\n".join(h) + "\n")
def memscrape(i, total=False):
    ms = (T0 + 15 * i) * 1000
    used = lambda g: 78000 if g == 3 else 40000
    fields = [("DCGM_FI_DEV_FB_USED", used)]
    fields += [("DCGM_FI_DEV_FB_TOTAL", lambda g: 81559)] if total else \
              [("DCGM_FI_DEV_FB_FREE", lambda g: 81000 - used(g)), ("DCGM_FI_DEV_FB_RESERVED", lambda g: 559)]
    return [series(m, "node1", g, f(g), ms) for m, f in fields for g in range(4)]
open("mem.txt", "w").write("\n".join(sum((memscrape(i) for i in range(3)), [])) + "\n")
open("memtotal.txt", "w").write("\n".join(sum((memscrape(i, True) for i in range(3)), [])) + "\n")
b = scrape(0)
b[3] = b[3].replace("}", "", 1)
open("bad.txt", "w").write("\n".join(b) + "\n")
c = scrape(0)[:10]
c[-1] = c[-1][:-16]   # "...} 650 1769947200000" cut to "...} 6", inside its value
open("cut.txt", "w").write("\n".join(c))
with open("steps8.jsonl", "w") as f:
    for k in range(3):
        f.write(json.dumps({"iteration": k, "t_start_unix": T0 + 8 * 3600 + 15 * k, "step_time_s": 15.0}) + "\n")
PY
"$TS" watch --read timed.txt --json -o timed.json 2>/dev/null
"$TS" watch --read timed.txt >timed.txt.out 2>&1
"$TS" watch --read untimed.txt --json -o untimed.json 2>/dev/null
"$TS" watch --read dated.txt --steps steps8.jsonl --json -o dated.json 2>/dev/null
"$TS" watch --read hosts.txt --json -o hosts.json 2>/dev/null
"$TS" watch --read cut.txt --json -o cut.json 2>/dev/null
"$TS" watch --read mem.txt --json -o mem.json 2>/dev/null
"$TS" watch --read memtotal.txt --json -o memtotal.json 2>/dev/null
rc=0
"$TS" watch --read bad.txt >/dev/null 2>bad.err || rc=$?
[ "$rc" -ne 0 ] || { echo "bad.txt was read"; exit 1; }
grep -q "bad.txt: byte [0-9]* (line 4): dcgm-exporter line is not" bad.err || { cat bad.err; exit 1; }
python3 - <<'PY'
import calendar, json
T0 = calendar.timegm((2026, 2, 1, 12, 0, 0))
d = json.load(open("timed.json"))
assert d["source"] == "dcgm-exporter", d["source"]
g = {x["id"]: x for x in d["gpus"]}
assert sorted(g) == ["0", "1", "2", "3"], sorted(g)
for i in "0123":
    x = g[i]
    assert (x["samples"], x["name"], x["host"]) == (3, "NVIDIA H100 80GB HBM3", "node1"), x
    assert x["uuid"] == "GPU-%08x-1111-2222-3333-%012x" % (0xabcdef00 + int(i), int(i)), x
    f = x["fields"]
    assert (f["power_w"]["mean"], f["util_pct"]["mean"], f["gr_active"]["mean"]) == (650, 98, 0.95), f
    assert f["sm_clock_mhz"]["mean"] == (1410 if i == "3" else 1980), f
    assert x["energy_j"] == 19500 and x["energy_method"] == "counter", x
st = [x["message"] for x in d["findings"] if x["id"] == "straggler-gpu"]
assert st == ["GPU 3: mean sm_clock_mhz 1410.0 MHz is 71 % of the GPUs' median 1980.0"], st
assert not [w for w in d["warnings"] if w["code"] == "untimed"], d["warnings"]
d = json.load(open("untimed.json"))
assert [x["samples"] for x in d["gpus"]] == [3] * 4
assert [w["code"] for w in d["warnings"]] == ["untimed"], d["warnings"]
d = json.load(open("dated.json"))
assert not [w for w in d["warnings"] if w["code"] == "untimed"], d["warnings"]
w = [x["message"] for x in d["warnings"] if x["code"] == "steps-outside-capture"]
assert len(w) == 1 and "the capture from 2026-02-01T12:00:00Z to 2026-02-01T12:00:30Z" in w[0], w
assert "+28800.0 s" in w[0] and "time-zone" not in w[0], w
d = json.load(open("hosts.json"))
ids = [(x["id"], x["host"]) for x in d["gpus"]]
assert ids == [("node1/%d" % i, "node1") for i in range(4)] + [("node2/%d" % i, "node2") for i in range(4)], ids
st = [x["message"] for x in d["findings"] if x["id"] == "straggler-gpu"]
assert st == ["node2/2: mean power_w 250.0 W is 71 % of the GPUs' median 350.0 on its host "
              "(host node2, 4 GPUs)",
              "node1/3: mean sm_clock_mhz 1410.0 MHz is 71 % of the GPUs' median 1980.0 on its host "
              "(host node1, 4 GPUs)"], st
for name in ("mem.json", "memtotal.json"):
    d = json.load(open(name))
    for x in d["gpus"]:
        f = x["fields"]
        used = 78000 if x["id"] == "3" else 40000
        assert (f["mem_used_mib"]["max"], f["mem_total_mib"]["max"]) == (used, 81559), (name, x)
    m = [(x["id"], x["message"]) for x in d["findings"] if x["id"].startswith("memory-")]
    assert m == [("memory-headroom", "GPU 3: memory peak 78000 of 81559 MiB (95.6 %): little headroom")], (name, m)
d = json.load(open("cut.json"))
w = [(x["code"], x["line"]) for x in d["warnings"]]
assert ("truncated", 10) in w, w
# lines 3-6 are SM clocks of 4 GPUs, 9 is GPU 0's power; GPU 1's (10) is cut
g = {x["id"]: x for x in d["gpus"]}
assert g["0"]["fields"]["power_w"]["mean"] == 650 and "power_w" not in g["1"]["fields"], g["1"]
PY
grep -q "^  3 .*1410" timed.txt.out
echo "watch-exporter: ok"
