#!/usr/bin/env bash
# Sample gaps and steps outside the capture (`watch --read --steps`).
# A SYNTHETIC nvidia-smi dmon -o DT capture made here: 2 GPUs, one round a
# second at T0 + 0 .. 29 s (T0 = 2026-03-01 10:00:00 UTC), rounds 10-14
# missing, GPU 0 at 100 W and GPU 1 at 200 W; 15 steps of 2 s from
# T0 + 0.5 s (step k holds [0.5 + 2(k-1), 2.5 + 2(k-1)) s), then the same
# steps shifted by +8 h (a local-time capture read as UTC) and by +20 s.
# Every expectation below is worked out by hand from those numbers.
set -eu
cd "$(dirname "$0")/../.."
TS=${TS:-build/trainscope}
command -v python3 >/dev/null || { echo "skip: python3 not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 - "$tmp" <<'PY'
import json, sys, time, calendar
T0 = calendar.timegm((2026, 3, 1, 10, 0, 0))
out = sys.argv[1]
L = ["#Date       Time        gpu    pwr     sm    mem",
     "#YYYYMMDD   HH:MM:SS    Idx      W      %      %"]
for i in range(30):
    if 10 <= i <= 14:
        continue
    tm = time.gmtime(T0 + i)
    for g in range(2):
        L.append(" %s   %s  %6d %6d %6d %6d" % (time.strftime("%Y%m%d", tm),
                 time.strftime("%H:%M:%S", tm), g, 100 * (g + 1), 90, 50))
open(out + "/dmon.txt", "w").write("\n".join(L) + "\n")
for name, shift in (("steps", 0), ("steps8h", 8 * 3600), ("steps20", 20)):
    with open(out + "/%s.jsonl" % name, "w") as f:
        for k in range(1, 16):
            f.write(json.dumps(dict(iteration=k, t_start_unix=T0 + shift + 0.5 + 2 * (k - 1),
                                    step_time_ms=2000.0)) + "\n")
PY
"$TS" watch --read "$tmp/dmon.txt" --steps "$tmp/steps.jsonl" --json -o "$tmp/gap.json"
"$TS" watch --read "$tmp/dmon.txt" --steps "$tmp/steps.jsonl" > "$tmp/gap.txt"
"$TS" watch --read "$tmp/dmon.txt" --steps "$tmp/steps8h.jsonl" --json -o "$tmp/8h.json"
"$TS" watch --read "$tmp/dmon.txt" --steps "$tmp/steps20.jsonl" --json -o "$tmp/20.json"
python3 - "$tmp" <<'PY'
import json, sys
d = json.load(open(sys.argv[1] + "/gap.json"))
codes = [w["code"] for w in d["warnings"]]
msgs = [w["message"] for w in d["warnings"]]
# one gap: the rounds at 9 s and 15 s are 6 s apart, 6 times the median
# interval of 1 s (23 intervals of 1 s, one of 6 s)
gap = [m for m in msgs if "no sample for" in m]
assert len(gap) == 1, msgs
assert "no sample for 6.0 s, from 2026-03-01T10:00:09Z to 2026-03-01T10:00:15Z" in gap[0], gap
assert "6.0 times the median interval of 1 s" in gap[0], gap
# energy never across the gap: 23 one-second intervals, 6 s left out
g = {x["id"]: x for x in d["gpus"]}
assert g["0"]["energy_j"] == 2300 and g["1"]["energy_j"] == 4600, g  # 23 s x 100 W, x 200 W
assert g["0"]["energy_covered_s"] == 23 and g["0"]["gap_s"] == 6, g["0"]
rows = {(s["iteration"], s["gpu"]): s for s in d["steps"]}
# step 4 [6.5, 8.5): whole; step 5 [8.5, 10.5): only [8.5, 9) = 0.5 s = 25 %;
# steps 6 [10.5, 12.5) and 7 [12.5, 14.5): inside the gap, 0 %;
# step 8 [14.5, 16.5): [15, 16.5) = 1.5 s = 75 %; step 15 [28.5, 30.5): the
# capture ends at 29 s, 0.5 s = 25 %
want = {4: (2, 100, 200), 5: (1, 25, None), 6: (0, 0, None), 7: (0, 0, None),
        8: (2, 75, 200), 15: (1, 25, None)}
for it, (n, cov, e) in want.items():
    r = rows[(it, "0")]
    assert (r["samples"], r["coverage_pct"], r["energy_j"]) == (n, cov, e), (it, r)
assert rows[(8, "1")]["energy_j"] == 400, rows[(8, "1")]  # 200 W x 2 s
# steps 5, 6, 7 are flagged; 15 is at the capture's edge, not in a gap
flag = [m for m in msgs if "lie mostly in sample gaps" in m]
assert len(flag) == 1 and "iterations 5 (25 %), 6 (0 %), 7 (0 %);" in flag[0], flag
# step 15 overlaps [0, 29] s, so it is not outside, but its energy is
# left out (25 %): said in a warning of its own
w = [m for c, m in zip(codes, msgs) if c == "steps-outside-capture"]
assert w == ["1 step(s) run across the capture's start or end (a GPU's first or last sample) and "
             "are covered below 50 % on some GPU: iterations 15 (25 %); their energy is not "
             "reported"], w
# +8 h: no step overlaps; offset 28800.5 s, a whole number of hours
d = json.load(open(sys.argv[1] + "/8h.json"))
assert sum(s["samples"] for s in d["steps"]) == 0
w = [x["message"] for x in d["warnings"] if x["code"] == "steps-outside-capture"]
assert len(w) == 1 and w[0].startswith("no step of --steps overlaps the capture"), w
assert "the steps run from 2026-03-01T18:00:00.500Z to 2026-03-01T18:00:30.500Z" in w[0], w
assert "the capture from 2026-03-01T10:00:00Z to 2026-03-01T10:00:29Z" in w[0], w
assert "+28800.5 s (+8.00 h)" in w[0] and "time-zone offset" in w[0], w
# +20 s: steps 1-5 start at 20.5 .. 28.5 s (<= 29 s), 6-15 at 30.5 s and on
d = json.load(open(sys.argv[1] + "/20.json"))
w = [x["message"] for x in d["warnings"] if x["code"] == "steps-outside-capture"]
assert len(w) == 2 and w[0].startswith("10 of 15 steps lie outside the capture"), w
assert "+20.5 s" in w[0] and "time-zone" not in w[0], w
# step 5 [28.5, 30.5) s runs across the capture's end at 29 s: 25 %
assert w[1].startswith("1 step(s) run across the capture's start or end") and "iterations 5 (25 %)" in w[1], w
PY
grep -q "GPU 0 energy: 2300.0 J (integrated over 23.0 s; 6.0 s of sample gaps left out)" "$tmp/gap.txt"
grep -q "^warning: .*dmon.txt: no sample for 6.0 s" "$tmp/gap.txt"
echo "watch-gaps: ok"
