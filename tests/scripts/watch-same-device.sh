#!/usr/bin/env bash
# A finding about one device seen in several captures is one finding that
# names them (docs/watch.md, "Several captures"). SYNTHETIC captures made
# here, 5 rounds 1 s apart each, the truth worked out by hand (T0 =
# 2026-02-01 12:00:00 UTC; U[i] a uuid; utilisation 95 % and SM clock 1980
# MHz everywhere, so power is the only field that differs):
#  - three: own.jsonl (host nodeA, GPUs 0-3 = U0-U3 at 600, 600, 600, 420
#    W, from T0), s1.csv (no host; GPU 0 = U2 at 600 W, GPU 1 = U3 at 430
#    W, from T0 + 100 s) and s2.csv (no host; GPU 0 = U3 at 590 W, GPU 1 =
#    U1 at 600 W, from T0 + 200 s). Both csv captures share uuids with
#    own.jsonl, so all are nodeA: 4 devices, U3 at the mean of its 15
#    samples, (420 + 430 + 590) / 3 = 480 W, the median of 600, 600, 600,
#    480 = 600 W, and 85 % of it 510 W. U3 is below it in own.jsonl (420 W,
#    70 %) and s1.csv (430 W, 430 / 600 = 71.7, "72 %"), not in s2.csv (590
#    W): ONE straggler-gpu finding, on GPU 3 of own.jsonl, naming GPU 1 of
#    s1.csv with its own numbers, each capture's span (T0 to T0 + 4 s, T0 +
#    100 s to T0 + 104 s) and the one other capture holding U3 where it is
#    none. JSON: gpu "3", capture 0, captures [own.jsonl GPU 3, s1.csv GPU
#    1] with their first and last sample times in ns, captures_total 2.
#    Before: two findings, one per capture, naming no other capture.
#  - many: own.jsonl beside c00.csv ... c09.csv, each of no host holding
#    U3 only, at 420 W, from T0 + 100 s x (k + 1): U3's mean 420 W, the
#    median 600 W, U3 a straggler (70 %) in all 11 captures: one finding.
#    Its message (at most 511 bytes, 100 kept for the counts after the
#    list) holds the head (75 bytes) and own.jsonl's span (56), then each
#    other capture (51 + a 56-byte span) while under 412: 131 + 107 = 238,
#    345, then 452 would not fit: c00 and c01 named, "and in 8 more
#    captures". JSON: the first 8 other captures listed (c00 to c07) after
#    own.jsonl's, captures_total 11. Before: 11 findings.
#  - diagnose of a run directory holding own.jsonl, s1.csv and s2.csv:
#    the same one finding.
# Every statement checked is counted; the wrong ones are listed.
set -eu
cd "$(dirname "$0")/../.."
TS=$(cd "$(dirname "${TS:-build/trainscope}")" && pwd)/$(basename "${TS:-build/trainscope}")
DATA=$(cd "${DATA:-../shared/data}" 2>/dev/null && pwd || echo "${DATA:-../shared/data}")
metrics="$DATA/traces/cpu/a_dense/metrics_rank0.jsonl"
command -v python3 >/dev/null || { echo "skip: python3 not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
python3 - <<'PY'
import calendar, json, time
T0 = calendar.timegm((2026, 2, 1, 12, 0, 0))
U = ["GPU-%08x-1111-2222-3333-444444444444" % (0xabc00000 + g) for g in range(4)]
def csv(name, t0, gpus):
    # gpus: (uuid, watts)
    rows = ["timestamp, index, uuid, power.draw [W], utilization.gpu [%], clocks.sm [MHz]"]
    for i in range(5):
        st = time.strftime("%Y/%m/%d %H:%M:%S", time.gmtime(t0 + i)) + ".000"
        for g, (u, p) in enumerate(gpus):
            rows.append("%s, %d, %s, %.2f W, 95 %%, 1980 MHz" % (st, g, u, p))
    open(name, "w").write("\n".join(rows) + "\n")
with open("own.jsonl", "w") as f:
    hdr = [{"id": str(g), "name": "NVIDIA H100 80GB HBM3", "uuid": U[g], "unsupported": {}} for g in range(4)]
    f.write(json.dumps({"schema": "trainscope.telemetry/1", "source": "nvml", "fidelity": "library",
                        "interval_ms": 1000, "host": "nodeA", "gpus": hdr}) + "\n")
    for i in range(5):
        for g, p in enumerate((600, 600, 600, 420)):
            f.write(json.dumps({"t_unix_ns": (T0 + i) * 10**9, "tick": i, "gpu": g, "power_w": p,
                                "util_pct": 95, "sm_clock_mhz": 1980}) + "\n")
csv("s1.csv", T0 + 100, [(U[2], 600), (U[3], 430)])
csv("s2.csv", T0 + 200, [(U[3], 590), (U[1], 600)])
for k in range(10):
    csv("c%02d.csv" % k, T0 + 100 * (k + 1), [(U[3], 420)])
PY
w() { # name, captures...
	local n=$1
	shift
	"$TS" watch --read "$@" --json -o "$n.json" 2>/dev/null || true
	"$TS" watch --read "$@" >"$n.out" 2>&1 || true
}
w three own.jsonl s1.csv s2.csv
w many own.jsonl c0?.csv
if [ -f "$metrics" ]; then
	mkdir run
	cp "$metrics" own.jsonl s1.csv s2.csv run/
	"$TS" diagnose run --json -o diag.json 2>/dev/null || true
	"$TS" diagnose run >diag.out 2>&1 || true
else
	echo "note: $metrics not found: the diagnose case is skipped"
fi
python3 - <<'PY'
import calendar, json, os
T0 = calendar.timegm((2026, 2, 1, 12, 0, 0))
checks = []
def check(what, ok):
    checks.append((what, bool(ok)))
def load(n):
    return json.load(open(n + ".json")), open(n + ".out").read()
def utc(s):
    return "2026-02-01T12:%02d:%02dZ" % (s // 60, s % 60)
def span(a, b):
    return ", from %s to %s" % (utc(a), utc(b))
def stragglers(d):
    return [x for x in d["findings"] if x["id"] == "straggler-gpu"]

# three
d, txt = load("three")
M = ("GPU 3 of own.jsonl: mean power_w 420.0 W is 70 % of the GPUs' median 600.0" + span(0, 4) +
     "; the same GPU as GPU 1 of s1.csv: 430.0 W (72 %)" + span(100, 104) +
     "; not found in the 1 other capture(s) holding it")
st = stragglers(d)
check("three: one straggler-gpu finding", len(st) == 1)
f = st[0] if st else {}
check("three: its message", f.get("message") == M)
check("three: its message in text", "[warning] straggler-gpu: " + M + "\n" in txt)
check("three: on GPU 3 of capture 0", (f.get("gpu"), f.get("capture")) == ("3", 0))
check("three: captures own.jsonl GPU 3 and s1.csv GPU 1 with their spans",
      f.get("captures") == [
          {"capture": 0, "file": "own.jsonl", "gpu": "3",
           "first_unix_ns": T0 * 10**9, "last_unix_ns": (T0 + 4) * 10**9},
          {"capture": 1, "file": "s1.csv", "gpu": "1",
           "first_unix_ns": (T0 + 100) * 10**9, "last_unix_ns": (T0 + 104) * 10**9}])
check("three: captures_total 2", f.get("captures_total") == 2)
check("three: the keys before kept", all(k in f for k in ("id", "severity", "gpu", "capture", "message")))
check("three: no other finding", [x["id"] for x in d["findings"]] == ["straggler-gpu"])

# many
d, txt = load("many")
M = ("GPU 3 of own.jsonl: mean power_w 420.0 W is 70 % of the GPUs' median 600.0" + span(0, 4) +
     "".join("; the same GPU as GPU 0 of c%02d.csv: 420.0 W (70 %%)" % k + span(100 * (k + 1), 100 * (k + 1) + 4)
             for k in range(2)) +
     "; and in 8 more captures")
st = stragglers(d)
check("many: one straggler-gpu finding", len(st) == 1)
f = st[0] if st else {}
check("many: its message", f.get("message") == M)
check("many: its message in text", M in txt)
check("many: 9 captures listed, in capture order",
      [(c["capture"], c["file"], c["gpu"]) for c in f.get("captures", [])] ==
      [(0, "own.jsonl", "3")] + [(k + 1, "c%02d.csv" % k, "0") for k in range(8)])
check("many: captures_total 11", f.get("captures_total") == 11)

# diagnose
if os.path.exists("diag.json"):
    M3 = ("GPU 3 of run/own.jsonl: mean power_w 420.0 W is 70 % of the GPUs' median 600.0" + span(0, 4) +
          "; the same GPU as GPU 1 of run/s1.csv: 430.0 W (72 %)" + span(100, 104) +
          "; not found in the 1 other capture(s) holding it")
    st = [x for x in json.load(open("diag.json"))["findings"] if x["title"] == "telemetry straggler-gpu"]
    check("diagnose: the one finding in --json", [x["detail"] for x in st] == [M3])
    out = open("diag.out").read()
    check("diagnose: the one finding in text", out.count("telemetry straggler-gpu") == 1 and
          out.count("mean power_w") == 1)

bad = [w for w, ok in checks if not ok]
print("watch-same-device: %d of %d statements wrong" % (len(bad), len(checks)))
for w in bad:
    print("  wrong: " + w)
raise SystemExit(1 if bad else 0)
PY
echo "watch-same-device: ok"
