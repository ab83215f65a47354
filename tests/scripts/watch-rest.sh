#!/usr/bin/env bash
# `watch --read` on SYNTHETIC --query-gpu captures made here, every
# expectation worked out by hand from the numbers below
# (T0 = 2026-02-01 12:00:00 UTC):
#  - cut.csv: 4 GPUs, 10 rounds 2 s apart (GPU g of round i at
#    T0 + 2i s + 3g ms), the last row (round 9, GPU 3, line 41) cut after
#    its index: GPU 3's last sample is at 16.009 s, the others' at
#    18.000-18.006 s. 17 steps of 1 s from T0 + 0.5 s (step k holds
#    [0.5 + k, 1.5 + k) s). Step 15 [15.5, 16.5): GPU 3 covered
#    [15.5, 16.009) = 0.509 s = 50.9 %, measured. Step 16 [16.5, 17.5): inside the
#    capture's 0-18.006 s, after GPU 3's last sample: 0 % on GPU 3, and
#    that is the cut capture's end, a `truncated` note and no sample gap
#    (every interval is 2 s); before, it was warned `sample-gap` ("lie
#    mostly in sample gaps: iterations 16 (0 %)").
#  - nsup.csv / nsup_na.csv: 2 GPUs (NVIDIA A10G) at 1980 and 1410 MHz
#    (570 MHz apart, a clock-spread), 5 rounds, their throttle reasons
#    '[Not Supported]' (clocks_throttle_reasons.active) and '[N/A]'
#    (per-reason fields): the finding quotes the cell and says the GPU or
#    driver does not support them; before, it said the capture has no
#    throttle-reason fields. nsup_mixed.csv: 3 GPUs, GPUs 0 and 2 at 1980
#    MHz with reasons 0x0, GPU 1 at 1410 MHz with '[Not Supported]': no
#    violation on the GPUs that give reasons, and GPU 1's cause unknown;
#    before, "not throttling" was said of all three.
#  - zoned.csv ("2026-02-01T12:00:0Ns.000Z"), plus8.csv ("...+08:00": 04:00
#    UTC) and naive.csv ("2026/02/01 12:00:0N.000") read with steps 8 h
#    after the capture's own UTC start: only the naive stamps may be local
#    time read as UTC, so only naive.csv gets the time-zone hint; before,
#    the zoned ones got it too.
#  - Several hosts read together, a straggler judged against its own
#    host's GPUs: hostA.csv (4 GPUs at 650 W) and hostB.csv (4 GPUs at
#    350 W, GPU 2 at 250 W), 5 rounds each, no host recorded, so each
#    capture is its host: GPU 2 of hostB.csv is 250 / 350 = 71 % of its
#    host's median, the only straggler; before, the 8 GPUs were pooled
#    (median (350 + 650) / 2 = 500) and all 4 GPUs of hostB.csv were
#    stragglers (70 % and 50 %). a.jsonl and b.jsonl (watch's own format,
#    "host": "nodeA" in both headers) have 2 GPUs each, b's GPU 1 at 400 W
#    and the others at 600 W, and c.jsonl ("host": "nodeB", 3 GPUs at
#    300 W): nodeA is one host of 4 GPUs, median 600, 400 is 67 %; nodeB
#    has none below its median. Before, the 7 GPUs were pooled (median
#    400): nodeB's 3 GPUs were stragglers (75 %) and b's GPU 1 was not.
set -eu
cd "$(dirname "$0")/../.."
TS=$(cd "$(dirname "${TS:-build/trainscope}")" && pwd)/$(basename "${TS:-build/trainscope}")
command -v python3 >/dev/null || { echo "skip: python3 not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
python3 - <<'PY'
import calendar, json, time
T0 = calendar.timegm((2026, 2, 1, 12, 0, 0))
def stamp(s):
    return time.strftime("%Y/%m/%d %H:%M:%S", time.gmtime(int(s))) + ".%03d" % round((s % 1) * 1000)
rows = ["timestamp, index, power.draw [W]"]
for i in range(10):
    for g in range(4):
        rows.append("%s, %d, 600.00 W" % (stamp(T0 + 2 * i + 0.003 * g), g))
rows[-1] = rows[-1][:rows[-1].index(", 600")]  # line 41: "TIME, 3", 2 of 3 fields
open("cut.csv", "w").write("\n".join(rows))
with open("cut_steps.jsonl", "w") as f:
    for k in range(17):
        f.write(json.dumps({"iteration": k, "t_start_unix": T0 + 0.5 + k, "step_time_s": 1.0}) + "\n")
h = "timestamp, index, name, clocks.sm [MHz], "
ns = [h + "clocks_throttle_reasons.active"]
na = [h + "clocks_throttle_reasons.sw_power_cap, clocks_throttle_reasons.hw_slowdown"]
for i in range(5):
    for g, clk in ((0, 1980), (1, 1410)):
        head = "%s, %d, NVIDIA A10G, %d MHz, " % (stamp(T0 + i), g, clk)
        ns.append(head + "[Not Supported]")
        na.append(head + "[N/A], [N/A]")
open("nsup.csv", "w").write("\n".join(ns) + "\n")
open("nsup_na.csv", "w").write("\n".join(na) + "\n")
mx = [h + "clocks_throttle_reasons.active"]
for i in range(5):
    for g, clk in ((0, 1980), (1, 1410), (2, 1980)):
        mx.append("%s, %d, NVIDIA A10G, %d MHz, %s" % (stamp(T0 + i), g, clk,
                                                       "[Not Supported]" if g == 1 else "0x0000000000000000"))
open("nsup_mixed.csv", "w").write("\n".join(mx) + "\n")
for name, fmt in (("zoned.csv", "2026-02-01T12:00:0%d.000Z"), ("plus8.csv", "2026-02-01T12:00:0%d.000+08:00"),
                  ("naive.csv", "2026/02/01 12:00:0%d.000")):
    open(name, "w").write("timestamp, index, power.draw [W]\n" + "".join(
        "%s, %d, 300.00 W\n" % (fmt % i, g) for i in range(5) for g in range(2)))
for name, low in (("hostA.csv", {}), ("hostB.csv", {2: 250})):
    open(name, "w").write("timestamp, index, power.draw [W]\n" + "".join(
        "%s, %d, %d.00 W\n" % (stamp(T0 + i), g, low.get(g, 650 if name == "hostA.csv" else 350))
        for i in range(5) for g in range(4)))
for name, host, pw in (("a.jsonl", "nodeA", [600, 600]), ("b.jsonl", "nodeA", [600, 400]),
                       ("c.jsonl", "nodeB", [300, 300, 300])):
    with open(name, "w") as f:
        f.write(json.dumps({"schema": "trainscope.telemetry/1", "source": "nvml", "fidelity": "library",
                            "interval_ms": 1000, "host": host,
                            "gpus": [{"id": str(g), "name": "NVIDIA H100 80GB HBM3", "unsupported": {}}
                                     for g in range(len(pw))]}) + "\n")
        for i in range(5):
            for g in range(len(pw)):
                f.write(json.dumps({"t_unix_ns": (T0 + i) * 10**9, "tick": i, "gpu": g,
                                    "power_w": pw[g]}) + "\n")
# steps 8 h after each capture's UTC start (plus8.csv starts at 04:00 UTC)
for name, start in (("steps8.jsonl", T0 + 8 * 3600), ("steps8p.jsonl", T0)):
    with open(name, "w") as f:
        for k in range(5):
            f.write(json.dumps({"iteration": k, "t_start_unix": start + k, "step_time_s": 1.0}) + "\n")
PY
"$TS" watch --read cut.csv --steps cut_steps.jsonl --json -o cut.json 2>/dev/null
"$TS" watch --read cut.csv --steps cut_steps.jsonl >cut.txt 2>&1
for c in nsup nsup_na nsup_mixed; do
	"$TS" watch --read $c.csv --json -o $c.json 2>/dev/null
	"$TS" watch --read $c.csv >$c.txt 2>&1
done
"$TS" watch --read zoned.csv --steps steps8.jsonl --json -o zoned.json 2>/dev/null
"$TS" watch --read plus8.csv --steps steps8p.jsonl --json -o plus8.json 2>/dev/null
"$TS" watch --read naive.csv --steps steps8.jsonl --json -o naive.json 2>/dev/null
"$TS" watch --read zoned.csv --steps steps8.jsonl >zoned.txt 2>&1
"$TS" watch --read hostA.csv hostB.csv --json -o hosts.json 2>/dev/null
"$TS" watch --read hostA.csv hostB.csv >hosts.txt 2>&1
"$TS" watch --read a.jsonl b.jsonl c.jsonl --json -o node.json 2>/dev/null
python3 - <<'PY'
import json
d = json.load(open("hosts.json"))
st = [(x["gpu"], x["capture"], x["message"]) for x in d["findings"] if x["id"] == "straggler-gpu"]
one = ("GPU 2 of hostB.csv: mean power_w 250.0 W is 71 % of the GPUs' median 350.0 on its host "
       "(capture hostB.csv, 4 GPUs)")
assert st == [("2", 1, one)], st
assert one in open("hosts.txt").read()
d = json.load(open("node.json"))
assert [x.get("host") for x in d["gpus"]] == ["nodeA"] * 4 + ["nodeB"] * 3, d["gpus"]
st = [x["message"] for x in d["findings"] if x["id"] == "straggler-gpu"]
assert st == ["GPU 1 of b.jsonl: mean power_w 400.0 W is 67 % of the GPUs' median 600.0 on its host "
              "(host nodeA, 4 GPUs)"], st
d = json.load(open("cut.json"))
txt = open("cut.txt").read()
w = [(x["code"], x["message"], x.get("line")) for x in d["warnings"]]
assert ("truncated", "cut.csv: the last CSV row has 2 of 3 fields (cut): left out", 41) in w, w
assert not [x for x in w if x[0] == "sample-gap"], w
edge = ("1 step(s) run across the capture's start or end (a GPU's first or last sample) and are "
        "covered below 50 % on some GPU: iterations 16 (0 %); their energy is not reported")
assert [x[1] for x in w if x[0] == "steps-outside-capture"] == [edge], w
assert edge in txt and "sample gaps" not in txt, txt
rows = {(r["iteration"], r["gpu"]): r for r in d["steps"]}
assert rows[(15, "3")]["coverage_pct"] == 50.9 and rows[(15, "3")]["energy_j"] == 600, rows[(15, "3")]
assert rows[(16, "3")]["coverage_pct"] == 0 and rows[(16, "3")]["energy_j"] is None, rows[(16, "3")]
assert rows[(16, "0")]["coverage_pct"] == 100, rows[(16, "0")]
for c, cell in (("nsup", "clocks_throttle_reasons.active is '[Not Supported]'"),
                ("nsup_na", "clocks_throttle_reasons.sw_power_cap is '[N/A]'")):
    d = json.load(open(c + ".json"))
    f = [x["message"] for x in d["findings"] if x["id"] == "clock-spread"]
    want = ("SM clocks differ by 570 MHz across 2 GPUs (1410-1980 MHz); the throttle-reason fields are "
            "not supported by the GPU or its driver (NVIDIA A10G: %s, on 2 of 2 GPUs): the cause cannot "
            "be told" % cell)
    assert f == [want], (c, f)
    assert want in open(c + ".txt").read(), c
f = [x["message"] for x in json.load(open("nsup_mixed.json"))["findings"] if x["id"] == "clock-spread"]
want = ("SM clocks differ by 570 MHz across 3 GPUs (1410-1980 MHz) with no power or thermal violation "
        "reported by the GPUs that give reasons; the others do not support the throttle-reason fields "
        "(NVIDIA A10G: clocks_throttle_reasons.active is '[Not Supported]', on 1 of 3 GPUs): their cause "
        "cannot be told")
assert f == [want], f
assert want in open("nsup_mixed.txt").read()
for c, hint in (("zoned", False), ("plus8", False), ("naive", True)):
    w = [x["message"] for x in json.load(open(c + ".json"))["warnings"] if x["code"] == "steps-outside-capture"]
    assert len(w) == 1 and "+28800.0 s (+8.00 h)" in w[0], (c, w)
    assert ("time-zone offset" in w[0]) == hint, (c, w)
assert "time-zone" not in open("zoned.txt").read()
PY
echo "watch-rest: ok"
