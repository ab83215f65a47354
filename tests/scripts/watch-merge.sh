#!/usr/bin/env bash
# The per-GPU findings of one device in several captures are one finding,
# as straggler-gpu is (docs/watch.md). SYNTHETIC --query-gpu captures
# a.csv, b.csv, c.csv (100 s apart) of the same 4 GPUs by uuid, 20 rounds at
# 1 Hz, 600 W of 700, utilisation 95 %, SM clock 1980 MHz of 1980:
#  - GPU 1: the SW power-cap reason (0x4) in all 20 samples of a and b
#    (none in c), its SM clock 1410 MHz in all three captures;
#  - GPU 2: utilisation 0 % in rounds 1 and 2, else 95 %, in all three
#    (an idle gap of 2.0 s; a mean of 85.5 %, 90 % of the median: no
#    straggler).
# By construction: one power-capped finding, on GPU 1 of a.csv, naming
# b.csv (captures_total 2) and the 1 other capture holding the device
# where it is none (c.csv), b.csv counted (a.csv's words leave no room
# for its own); one idle-gap, on GPU 2 of a.csv, in all 3, each capture's
# words and span in the message.
# GPU 1's clock (71 % of the median 1980) is throttled in a and b, so no
# straggler there; in c nothing says why: one straggler-gpu, GPU 1 of
# c.csv. (The throttled GPUs are taken from every capture's finding
# before the merge: judged after it, b's would be a straggler too.)
# Before 5 Dec 2026 these were 2 power-capped and 3 idle-gap findings,
# one a capture, each naming no other.
set -eu
cd "$(dirname "$0")/../.."
TS=$(cd "$(dirname "${TS:-build/trainscope}")" && pwd)/$(basename "${TS:-build/trainscope}")
command -v python3 >/dev/null || { echo "skip: python3 not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 - "$tmp" <<'PY'
import calendar, sys, time
tmp = sys.argv[1]
T0 = calendar.timegm((2026, 3, 1, 10, 0, 0))
for c, name in enumerate(("a", "b", "c")):
    L = ["timestamp, index, uuid, power.draw [W], power.limit [W], clocks.sm [MHz], clocks.max.sm [MHz], "
         "utilization.gpu [%], clocks_event_reasons.active"]
    for i in range(20):
        st = time.strftime("%Y/%m/%d %H:%M:%S", time.gmtime(T0 + 100 * c + i)) + ".000"
        for g in range(4):
            util = 0 if g == 2 and i in (1, 2) else 95
            clk = 1410 if g == 1 else 1980
            r = 4 if g == 1 and name != "c" else 0
            L.append("%s, %d, GPU-%08x-0000-0000-0000-000000000000, 600.00 W, 700.00 W, %d MHz, 1980 MHz, "
                     "%d %%, 0x%016x" % (st, g, 0xabc0 + g, clk, util, r))
    open("%s/%s.csv" % (tmp, name), "w").write("\n".join(L) + "\n")
PY
cd "$tmp"
"$TS" watch --read a.csv b.csv c.csv --json -o w.json || true
"$TS" watch --read a.csv b.csv c.csv > w.txt 2>&1 || true
python3 - <<'PY'
import json, sys
bad = []
def check(what, cond, got):
    if not cond:
        bad.append("%s: %s" % (what, got))
d = json.load(open("w.json"))
F = d["findings"]
pc = [x for x in F if x["id"] == "power-capped"]
check("one power-capped", len(pc) == 1, [(x["gpu"], x.get("capture")) for x in pc])
if len(pc) == 1:
    p = pc[0]
    check("on GPU 1 of a.csv", (p["gpu"], p["capture"]) == ("1", 0), p)
    check("captures a and b", [(x["capture"], x["file"], x["gpu"]) for x in p.get("captures", [])]
          == [(0, "a.csv", "1"), (1, "b.csv", "1")] and p.get("captures_total") == 2, p.get("captures"))
    # a.csv's words with its span (291 characters) and b.csv's (121)
    # reach the 412 the message keeps before its counts: b.csv counted
    check("b.csv counted, c.csv holds it", p["message"].endswith(
        "SM clock mean 1410 MHz of max 1980 MHz, from 2026-03-01T10:00:00Z to 2026-03-01T10:00:19Z"
        "; and in 1 more captures; not found in the 1 other capture(s) holding it"), p["message"])
ig = [x for x in F if x["id"] == "idle-gap"]
check("one idle-gap in 3 captures", len(ig) == 1 and ig[0]["gpu"] == "2" and ig[0]["capture"] == 0
      and ig[0].get("captures_total") == 3, [(x["gpu"], x["capture"], x.get("captures_total")) for x in ig])
if len(ig) == 1:
    check("idle-gap words", "GPU 2 of a.csv: utilization 0 % for 2.0 s between busy samples, from 2026-03-01T10:00:00Z to "
          "2026-03-01T10:00:19Z; the same GPU as GPU 2 of b.csv: utilization 0 % for 2.0 s between busy "
          "samples, from 2026-03-01T10:01:40Z to 2026-03-01T10:01:59Z; the same GPU as GPU 2 of c.csv: "
          "utilization 0 % for 2.0 s between busy samples, from 2026-03-01T10:03:20Z to 2026-03-01T10:03:39Z"
          == ig[0]["message"]
          , ig[0]["message"])
st = [x for x in F if x["id"] == "straggler-gpu"]
check("one straggler: GPU 1 of c.csv", [(x["gpu"], x["capture"]) for x in st] == [("1", 2)],
      [(x["gpu"], x["capture"], x["message"][:60]) for x in st])
txt = open("w.txt").read()
check("text: one power-capped line", txt.count("power-capped: GPU 1") == 1, txt.count("power-capped"))
check("text: one idle-gap line", txt.count("idle-gap: GPU 2") == 1, txt.count("idle-gap"))
for b in bad:
    print("  wrong: " + b)
sys.exit(1 if bad else 0)
PY
echo "watch-merge: ok"
