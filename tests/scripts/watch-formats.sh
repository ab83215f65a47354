#!/usr/bin/env bash
# `watch --read` on SYNTHETIC captures of 8 GPUs written the way the tools
# print them, every expectation known by construction (gen below):
#  - q_units.csv / q_nounits.csv (nvidia-smi --query-gpu ... --format=csv
#    with and without nounits; timestamps with milliseconds; uuid
#    "GPU-abcdef0N-...", bus id "00000000:1B:00.0"-style): 60 one-second
#    ticks with ticks 50-55 missing (a 7 s interval from tick 49 to 56) and
#    the last row cut after 40 characters. GPU 2 has the HW power-brake
#    reason (0x80) in ticks 10-29, GPU 5 SW thermal (0x20) in ticks 10-29,
#    GPU 6 HW slowdown (0x08) in ticks 40-49: three thermal-throttling
#    findings with 20, 20 and 10 samples. GPU 4 runs at 350 W, 60 %, 1410
#    MHz against 650 W, 98 %, 1980 MHz: straggler on power and utilisation.
#    The gap and the cut row are warned in the text and in the JSON.
#    Mean SM clocks: 1980 (GPUs 0, 1, 3, 7), 1410 (GPU 4), (34 x 1980 +
#    20 x 1200) / 54 = 1691.1 (GPUs 2, 5), (44 x 1980 + 10 x 1200) / 54 =
#    1835.6 (GPU 6): median (1835.6 + 1980) / 2 = 1907.8, and GPU 4's 1410
#    is 74 % of it: a clock straggler too (the throttled GPUs are not
#    judged on their clock).
#  - q_units.csv joined to 60 one-second steps from tick 20 on (steps.jsonl):
#    steps 40-59 are outside the capture; step 39 ([59 s, 60 s)) runs
#    across its end (the last samples are at 59.000-59.018 s): covered 0 %
#    and warned as such, and so is step 38 on GPU 7, whose last sample is
#    at 58.021 s (its row of tick 59 is the cut one); steps 29-35
#    ([49 s, 56 s)) lie in the 7 s gap.
#  - Stamps with a zone (ISO 8601, as a wrapper or collector writes them):
#    tz8.csv "2026-01-06T15:00:0N.000+08:00" is 07:00:0N UTC, tzz.csv
#    "...Z" is 15:00:0N UTC, tzm5.csv "2026-01-06 15:00:0N-0500" 20:00:0N
#    UTC (the capture's range in the steps-outside-capture warning); before,
#    the 'T' form was not read at all (the capture untimed, unsaid) and a
#    zone after a space was dropped (5 h off). badts.csv (ctime stamps,
#    which nvidia-smi does not write) is warned bad-cell, 10 cells.
#  - gap1.csv: 4 GPUs, 30 one-second rounds, GPU 3's rows missing from
#    rounds 10-15 while the others go on: a 7 s gap of GPU 3 alone (its
#    energy leaves 7 s out), warned as such; before, only gaps of whole
#    rounds were warned and this one was said by nothing but the energy
#    line.
#  - q_reasons.csv: per-reason fields ("Active" / "Not Active"), stamps
#    without milliseconds, 30 ticks: GPU 2 hw_power_brake_slowdown and
#    GPU 5 sw_thermal_slowdown from tick 10 (20 of 30 samples), GPU 4 at
#    1410 MHz with power and utilisation like the others and no reason:
#    a straggler on the SM clock only (71 % of 1980), which no finding
#    reported while another GPU throttled.
#  - The same 8 GPUs in three captures, each spelled as another tool
#    would: q_units.csv ("GPU-abcdef0N-...", "00000000:1B:00.0"),
#    uuid.csv (uuid only, bare and upper case, GPUs in reverse order, no
#    index) and bus.csv (bus id only, "0000:1b:00.0": NVML's legacy /
#    sysfs spelling, reverse order): GPU N of q_units.csv is one device
#    with the uuid row of N (matched_by "uuid"); no capture records its
#    host, so a bus id tells nothing (every machine of one board layout
#    repeats them): bus.csv's 8 GPUs are 8 devices more, matched by
#    nothing, and bus.csv is warned host-unknown. Before, joined by bus id.
#  - Two hosts with the same bus ids and other uuids (hostA.csv,
#    hostB.csv) and a bus-only capture (bus.csv): no device is matched
#    (the bus id goes with two uuids, so it tells nothing).
set -eu
cd "$(dirname "$0")/../.."
TS=$(cd "$(dirname "${TS:-build/trainscope}")" && pwd)/$(basename "${TS:-build/trainscope}")
command -v python3 >/dev/null || { echo "skip: python3 not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
python3 - <<'PY'
import datetime as dt
T0 = dt.datetime(2026, 1, 6, 15, 0, 0)
def uuid(g):
    return "GPU-%08x-1111-2222-3333-%012x" % (0xabcdef00 + g, g)
def bus(g):
    return "00000000:%02X:00.0" % (0x1b + 0x10 * g)
def tick(i, g):
    r = 0
    if g == 2 and 10 <= i < 30: r = 0x80
    if g == 5 and 10 <= i < 30: r = 0x20
    if g == 6 and 40 <= i < 50: r = 0x08
    clk, pw, ut = (1410, 350, 60) if g == 4 else (1980, 650, 98)
    return r, (1200 if r else clk), pw, ut
def qcsv(path, units):
    u = (lambda v, s: "%s %s" % (v, s)) if units else (lambda v, s: str(v))
    h = ["timestamp", "index", "uuid", "pci.bus_id", "name", "power.draw [W]", "power.limit [W]",
         "clocks.sm [MHz]", "clocks.max.sm [MHz]", "utilization.gpu [%]", "memory.used [MiB]",
         "memory.total [MiB]", "temperature.gpu", "clocks_event_reasons.active"]
    if not units:
        h = [x.split(" [")[0] for x in h]
    rows = []
    for i in range(60):
        if 50 <= i < 56:
            continue
        for g in range(8):
            r, clk, pw, ut = tick(i, g)
            ts = (T0 + dt.timedelta(seconds=i, milliseconds=3 * g)).strftime("%Y/%m/%d %H:%M:%S.%f")[:-3]
            rows.append(", ".join([ts, str(g), uuid(g), bus(g), "NVIDIA H100 80GB HBM3",
                                   u("%.2f" % pw, "W"), u("700.00", "W"), u(clk, "MHz"), u(1980, "MHz"),
                                   u(ut, "%"), u(60000, "MiB"), u(81559, "MiB"), "65", "0x%016x" % r]))
    rows[-1] = rows[-1][:40]
    open(path, "w").write(", ".join(h) + "\n" + "\n".join(rows))
qcsv("q_units.csv", True)
qcsv("q_nounits.csv", False)
import json
epoch = (T0 - dt.datetime(1970, 1, 1)).total_seconds()
with open("steps.jsonl", "w") as f:
    for k in range(60):
        f.write(json.dumps({"step": k, "t_start_unix": epoch + 20 + k, "step_time_s": 1.0}) + "\n")
u = ["uuid, power.draw [W], utilization.gpu [%]"]
bb = ["pci.bus_id, power.draw [W], utilization.gpu [%]"]
ha, hb = ["index, uuid, pci.bus_id, power.draw [W]"], ["index, uuid, pci.bus_id, power.draw [W]"]
for i in range(5):
    for g in reversed(range(8)):
        _, _, pw, ut = tick(0, g)
        u.append("%s, %d.00 W, %d %%" % (uuid(g)[4:].upper(), pw, ut))
        bb.append("0000:%02x:00.0, %d.00 W, %d %%" % (0x1b + 0x10 * g, pw, ut))
        ha.append("%d, %s, %s, 600.00 W" % (g, uuid(g), bus(g)))
        hb.append("%d, %s, %s, 600.00 W" % (g, uuid(g + 16), bus(g)))
r = ["timestamp, index, power.draw [W], clocks.sm [MHz], clocks.max.sm [MHz], utilization.gpu [%], "
     "clocks_event_reasons.sw_power_cap, clocks_event_reasons.hw_power_brake_slowdown, "
     "clocks_event_reasons.sw_thermal_slowdown"]
for i in range(30):
    for g in range(8):
        brake, therm = g == 2 and i >= 10, g == 5 and i >= 10
        clk = 1410 if g == 4 else 1500 if (brake or therm) else 1980
        act = lambda x: "Active" if x else "Not Active"
        r.append("%s, %d, 650.00 W, %d MHz, 1980 MHz, 98 %%, Not Active, %s, %s" % (
            (T0 + dt.timedelta(seconds=i)).strftime("%Y/%m/%d %H:%M:%S"), g, clk, act(brake), act(therm)))
for name, f in (("tz8.csv", "2026-01-06T15:00:0%d.000+08:00"), ("tzz.csv", "2026-01-06T15:00:0%dZ"),
                ("tzm5.csv", "2026-01-06 15:00:0%d-0500"), ("badts.csv", "Tue Jan  6 15:00:0%d 2026")):
    open(name, "w").write("timestamp, index, power.draw [W]\n" + "".join(
        "%s, %d, 300.00 W\n" % (f % i, g) for i in range(5) for g in range(2)))
open("gap1.csv", "w").write("timestamp, index, power.draw [W]\n" + "".join(
    "%s, %d, 600.00 W\n" % ((T0 + dt.timedelta(seconds=i)).strftime("%Y/%m/%d %H:%M:%S.000"), g)
    for i in range(30) for g in range(4) if not (g == 3 and 10 <= i < 16)))
for n, rows in (("q_reasons.csv", r), ("uuid.csv", u), ("bus.csv", bb), ("hostA.csv", ha), ("hostB.csv", hb)):
    open(n, "w").write("\n".join(rows) + "\n")
PY
"$TS" watch --read q_reasons.csv --json -o q_reasons.json 2>/dev/null
for z in tz8 tzz tzm5; do "$TS" watch --read $z.csv --steps steps.jsonl --json -o $z.json 2>/dev/null; done
"$TS" watch --read badts.csv --json -o badts.json 2>/dev/null
"$TS" watch --read gap1.csv --json -o gap1.json 2>/dev/null
"$TS" watch --read gap1.csv >gap1.txt 2>&1
"$TS" watch --read q_units.csv --steps steps.jsonl --json -o steps.json 2>/dev/null
"$TS" watch --read q_units.csv --steps steps.jsonl >steps.txt 2>&1
"$TS" watch --read q_units.csv uuid.csv bus.csv --json -o three.json 2>/dev/null
"$TS" watch --read q_units.csv uuid.csv bus.csv >three.txt 2>&1
"$TS" watch --read hostA.csv hostB.csv bus.csv --json -o hosts.json 2>/dev/null
for c in q_units q_nounits; do
	"$TS" watch --read $c.csv --json -o $c.json 2>/dev/null
	"$TS" watch --read $c.csv >$c.txt 2>$c.err
done
python3 - <<'PY'
import json
for c in ("q_units", "q_nounits"):
    d = json.load(open(c + ".json"))
    txt, err = open(c + ".txt").read(), open(c + ".err").read()
    g = {x["id"]: x for x in d["gpus"]}
    assert sorted(g) == [str(i) for i in range(8)], (c, sorted(g))
    assert [g[str(i)]["samples"] for i in range(8)] == [54] * 7 + [53], c
    f = g["4"]["fields"]
    assert (f["power_w"]["mean"], f["power_w"]["unit"], f["util_pct"]["mean"], f["sm_clock_mhz"]["mean"],
            f["mem_total_mib"]["mean"]) == (350, "W", 60, 1410, 81559), (c, f)
    th = sorted((x["gpu"], x["message"].split(": ")[1].split(";")[0]) for x in d["findings"]
                if x["id"] == "thermal-throttling")
    assert th == [("2", "thermal or hardware slowdown in 20 of 54 samples"),
                  ("5", "thermal or hardware slowdown in 20 of 54 samples"),
                  ("6", "thermal or hardware slowdown in 10 of 54 samples")], (c, th)
    assert g["2"]["clock_event_reasons_seen"] == ["hw_power_brake"], (c, g["2"])
    st = sorted((x["gpu"], x["message"].split(" ")[3]) for x in d["findings"] if x["id"] == "straggler-gpu")
    assert st == [("4", "power_w"), ("4", "sm_clock_mhz"), ("4", "util_pct")], (c, st)
    assert "GPU 4: mean sm_clock_mhz 1410.0 MHz is 74 % of the GPUs' median 1907.8" in txt, (c, txt)
    assert not [x for x in d["findings"] if x["id"] == "power-capped"], c
    w = {x["code"]: x for x in d["warnings"]}
    assert w["truncated"]["line"] == 433, (c, w)
    assert "no sample for 7.0 s, from 2026-01-06T15:00:49Z to 2026-01-06T15:00:56Z" in w["sample-gap"]["message"], (c, w)
    assert "GPU 2: thermal or hardware slowdown in 20 of 54 samples" in txt, (c, txt)
    assert "(cut): left out (line 433)" in txt and "no sample for 7.0 s" in txt, (c, txt)
d = json.load(open("steps.json"))
w = [x["message"] for x in d["warnings"] if x["code"] == "steps-outside-capture"]
assert len(w) == 2 and w[0].startswith("20 of 60 steps lie outside the capture"), w
# step 38 [58 s, 59 s) is after GPU 7's last sample (58.021 s; its row of
# tick 59 is the cut one): 0.021 s = 2 % covered on it, the cut capture's
# end, no sample gap
edge = ("2 step(s) run across the capture's start or end (a GPU's first or last sample) and are "
        "covered below 50 % on some GPU: iterations 38 (2 %), 39 (0 %); their energy is not reported")
assert w[1] == edge and edge in open("steps.txt").read(), w
assert all(r["energy_j"] is None for r in d["steps"] if r["iteration"] == 39), d["steps"]
gap = [x["message"] for x in d["warnings"] if x["code"] == "sample-gap" and "step(s)" in x["message"]]
assert len(gap) == 1 and "iterations 29 (0 %), 30 (0 %), 31 (0 %), 32 (0 %), 33 (0 %), 34 (0 %), 35 (0 %);" in gap[0], gap
for z, lo, hi in (("tz8", "07:00:00Z", "07:00:04Z"), ("tzz", "15:00:00Z", "15:00:04Z"),
                  ("tzm5", "20:00:00Z", "20:00:04Z")):
    w = [x["message"] for x in json.load(open(z + ".json"))["warnings"] if x["code"] == "steps-outside-capture"]
    assert len(w) == 1 and "the capture from 2026-01-06T%s to 2026-01-06T%s" % (lo, hi) in w[0], (z, w)
w = [(x["code"], x["message"], x["line"]) for x in json.load(open("badts.json"))["warnings"]]
assert w == [("bad-cell", "badts.csv: 10 timestamp cell(s) not read as a date and time: their rows are "
              "untimed (first: 'Tue Jan  6 15:00:00 2026')", 2)], w
d = json.load(open("gap1.json"))
w = [x["message"] for x in d["warnings"] if x["code"] == "sample-gap"]
one = ("gap1.csv: GPU 3: no sample for 7.0 s, from 2026-01-06T15:00:09Z to 2026-01-06T15:00:16Z, while the other "
       "GPUs were sampled (7.0 times its median interval of 1 s)")
assert len(w) == 1 and w[0].startswith(one), w
assert one in open("gap1.txt").read()
assert [(x["id"], x["gap_s"]) for x in d["gpus"]] == [("0", 0), ("1", 0), ("2", 0), ("3", 7)], d["gpus"]
d = json.load(open("q_reasons.json"))
th = sorted((x["gpu"], x["message"].split(";")[0]) for x in d["findings"] if x["id"] == "thermal-throttling")
assert th == [("2", "GPU 2: thermal or hardware slowdown in 20 of 30 samples"),
              ("5", "GPU 5: thermal or hardware slowdown in 20 of 30 samples")], th
st = [(x["gpu"], x["message"]) for x in d["findings"] if x["id"] == "straggler-gpu"]
assert st == [("4", "GPU 4: mean sm_clock_mhz 1410.0 MHz is 71 % of the GPUs' median 1980.0")], st
d = json.load(open("three.json"))
gs = d["gpus"]
assert len(gs) == 24, len(gs)
key = {(x["capture"], x["id"]): x for x in gs}
for n in range(8):
    u = "ABCDEF%02X-1111-2222-3333-%012X" % (n, n)
    b = "0000:%02x:00.0" % (0x1b + 0x10 * n)
    a, m, c = key[(0, str(n))], key[(1, u)], key[(2, b)]
    assert a["uuid"] == "GPU-abcdef%02x-1111-2222-3333-%012x" % (n, n) and m["uuid"] == u, (a, m)
    assert a["device"] == m["device"] == n and c["device"] >= 8, (n, a, m, c)
    assert (a["matched_by"], m["matched_by"], c["matched_by"]) == ("uuid", "uuid", None), (a, m, c)
assert len({x["device"] for x in gs}) == 16, [x["device"] for x in gs]
w = [x["file"] for x in d["warnings"] if x["code"] == "host-unknown"]
assert w == ["bus.csv"], d["warnings"]
t = open("three.txt").read()
assert ("  same GPU in several captures: GPU 4 of q_units.csv = ABCDEF04-1111-2222-3333-000000000004 of uuid.csv"
        " (by uuid)\n") in t, t
assert "bus.csv: the capture records no host name, and its GPUs match other captures' GPUs only by PCI bus id" in t, t
d = json.load(open("hosts.json"))
assert len(d["gpus"]) == 24 and len({x["device"] for x in d["gpus"]}) == 24, [x["device"] for x in d["gpus"]]
assert all(x["matched_by"] is None for x in d["gpus"]), d["gpus"]
PY
echo "watch-formats: ok"
