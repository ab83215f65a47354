#!/usr/bin/env bash
# `watch --read` of several captures together, on SYNTHETIC captures made
# here, every expectation worked out by hand (T0 = 2026-02-01 12:00:00 UTC):
#  - Time zones per capture. zoned.csv ("2026-02-01T12:00:0N.000Z"),
#    naive.csv ("2026/02/01 12:00:0N.000", no zone) and zoned_at.csv
#    ("2026-02-01T20:00:0N.000Z"), 5 rounds 1 s apart of 2 GPUs each;
#    steps8.jsonl: 5 steps of 1 s from T0 + 8 h. zoned.csv + naive.csv:
#    each is 8 h (+28800.0 s) before the steps, and each gets its own
#    steps-outside-capture warning naming it; only naive.csv's stamps may
#    be local time read as UTC, so only its warning has the time-zone
#    hint. Before, one warning over both, with the hint (the set had a
#    naive stamp). zoned_at.csv + naive.csv: zoned_at.csv holds the steps
#    (its last sample at T0 + 8 h + 4 s: step 4 runs across its end);
#    naive.csv is 8 h off and gets the warning with the hint, and its
#    GPUs, 8 h before every step, make no step "run across" its range.
#    Before, the union of the two ranges held every step: no warning, and
#    all 5 steps were said to run across the capture's end.
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
for name, fmt in (("zoned.csv", "2026-02-01T12:00:0%d.000Z"), ("naive.csv", "2026/02/01 12:00:0%d.000"),
                  ("zoned_at.csv", "2026-02-01T20:00:0%d.000Z")):
    open(name, "w").write("timestamp, index, power.draw [W]\n" + "".join(
        "%s, %d, 300.00 W\n" % (fmt % i, g) for i in range(5) for g in range(2)))
with open("steps8.jsonl", "w") as f:
    for k in range(5):
        f.write(json.dumps({"iteration": k, "t_start_unix": T0 + 8 * 3600 + k, "step_time_s": 1.0}) + "\n")
PY
"$TS" watch --read zoned.csv naive.csv --steps steps8.jsonl --json -o tz2.json 2>/dev/null
"$TS" watch --read zoned.csv naive.csv --steps steps8.jsonl >tz2.txt 2>&1
"$TS" watch --read zoned_at.csv naive.csv --steps steps8.jsonl --json -o tzat.json 2>/dev/null
"$TS" watch --read zoned_at.csv naive.csv --steps steps8.jsonl >tzat.txt 2>&1
python3 - <<'PY'
import json
HINT = ("; within 2 min of a whole quarter hour: a time-zone offset? (stamps without a zone, as dmon -o DT, "
        "mthreads-gmi and --query-gpu write them, are the capturing machine's local time, read as UTC)")
def outside(f):
    return ("%s: no step of --steps overlaps the capture: the steps run from 2026-02-01T20:00:00Z to "
            "2026-02-01T20:00:05Z, the capture from 2026-02-01T12:00:00Z to 2026-02-01T12:00:04Z; the steps "
            "start +28800.0 s (+8.00 h) from the capture's start" % f)
w = [(x["message"], x["file"]) for x in json.load(open("tz2.json"))["warnings"] if x["code"] == "steps-outside-capture"]
assert w == [(outside("zoned.csv"), "zoned.csv"), (outside("naive.csv") + HINT, "naive.csv")], w
txt = open("tz2.txt").read()
assert outside("zoned.csv") + "\n" in txt and outside("naive.csv") + HINT in txt, txt
w = [x["message"] for x in json.load(open("tzat.json"))["warnings"] if x["code"] == "steps-outside-capture"]
edge = ("1 step(s) run across the capture's start or end (a GPU's first or last sample) and are covered "
        "below 50 % on some GPU: iterations 4 (0 %); their energy is not reported")
assert w == [outside("naive.csv") + HINT, edge], w
txt = open("tzat.txt").read()
assert outside("naive.csv") + HINT in txt and edge in txt and "zoned_at.csv: no step" not in txt, txt
PY
echo "watch-more: ok"
