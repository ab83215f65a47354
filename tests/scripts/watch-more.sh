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
#    all 5 steps were said to run across the capture's end. diagnose of
#    a run directory holding zoned.csv, naive.csv and the steps as its
#    metrics JSONL gives the same warnings. ab of a side with zoned.csv
#    and naive.csv (no host, no uuid) against one with own.jsonl and
#    smi.csv (joined by uuid), both beside the shared a_dense metrics:
#    host-unknown for each of the first side's captures, none for the
#    second's.
#  - Hosts by GPU identity. own.jsonl: watch's own capture on "host":
#    "nodeA", GPUs 0-3 with uuids U0-U3 (GPU-abcdef00-... to -abcdef03-...)
#    and bus ids 18-1b, at 600, 600, 600 and 400 W, 5 rounds; smi.csv: an
#    nvidia-smi --query-gpu capture of the same node (no host recorded) of
#    GPUs 2 and 3 only (U2, U3) at 600 and 400 W; c.jsonl: "host":
#    "nodeB", 3 GPUs at 300 W. smi.csv holds GPUs of own.jsonl by uuid, so
#    it is nodeA's: nodeA has 4 devices (smi.csv's two are own.jsonl's
#    GPUs 2 and 3, each counted once: 600, 600, 600, 400), median 600,
#    and both GPU 3s (400 W, 67 %) are stragglers "on its host (host
#    nodeA, 4 GPUs)" (6 GPUs before, the shared two counted twice), said
#    in one finding, on own.jsonl's GPU 3, naming smi.csv's GPU 3 and both
#    spans (T0 to T0 + 4 s; until 5 Dec 2026 one finding per capture); no
#    host-unknown warning. Before that, smi.csv was a
#    host of its own (2 GPUs, too few to judge): its GPU 3 was no
#    straggler, and own.jsonl's was judged among 4 GPUs.
#    a.csv (U0, U1 at 600 W) and b.csv (U1 at 600 W, U2 at 400 W), neither
#    naming a host, share U1: one host of 4 GPUs of captures, median 600,
#    GPU 1 of b.csv (U2, 400 W) is the one straggler; before, two hosts
#    of 2 GPUs each, no straggler.
#  - ... and where they cannot tell. x.csv and y.csv, no host, GPUs 0-2
#    with bus ids 18-1a and no uuid, at 650 W and 350 W: the same bus ids
#    are on every machine of one board layout, so they stay two hosts
#    (no straggler: 350 is not judged against 650), and each gets a
#    host-unknown warning saying so. own.jsonl + noid.csv (no host, no
#    uuid, no bus id): noid.csv is a host of its own, warned ("its GPUs
#    have no uuid"); own.jsonl + z.csv (no host, a uuid U9 no other
#    capture has): warned ("no uuid of its GPUs is in another capture");
#    w.csv (no host) holding U0 of own.jsonl (nodeA) and U5 of nb.jsonl
#    (nodeB): warned, its host cannot be told (its GPU 0 is judged with
#    nodeA's, its GPU 1 with nodeB's; before, both with nodeA's).
#    Before, none of these warnings existed.
#  - Long host names. exp.txt: dcgm-exporter scrapes of two hosts, one
#    named with 70 letters, one "short", GPU 0 each at 300 W, 3 scrapes
#    1 s apart (timestamps in ms): 2 GPUs ("<70 n>/0", "short/0") of 3
#    samples, 600 J each (300 W over 2 s). Before, the long id was cut to
#    60 characters when the GPU was made, so no later scrape matched it:
#    4 GPUs, 3 of them the long host's with 1 sample each.
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
for name, fmt in (("zoned.csv", "2026-02-01T12:00:0%d.000Z"), ("naive.csv", "2026/02/01 12:00:0%d.000"),
                  ("zoned_at.csv", "2026-02-01T20:00:0%d.000Z")):
    open(name, "w").write("timestamp, index, power.draw [W]\n" + "".join(
        "%s, %d, 300.00 W\n" % (fmt % i, g) for i in range(5) for g in range(2)))
with open("steps8.jsonl", "w") as f:
    for k in range(5):
        f.write(json.dumps({"iteration": k, "t_start_unix": T0 + 8 * 3600 + k, "step_time_s": 1.0}) + "\n")
def stamp(s):
    return time.strftime("%Y/%m/%d %H:%M:%S", time.gmtime(int(s))) + ".000"
U = ["GPU-%08x-1111-2222-3333-444444444444" % (0xabcdef00 + g) for g in range(10)]
B = ["00000000:%02X:00.0" % (0x18 + g) for g in range(4)]
for name, host, pw in (("own.jsonl", "nodeA", [600, 600, 600, 400]), ("c.jsonl", "nodeB", [300, 300, 300]),
                       ("nb.jsonl", "nodeB", [300])):
    with open(name, "w") as f:
        gpus = [{"id": str(g), "name": "NVIDIA H100 80GB HBM3", "unsupported": {}} for g in range(len(pw))]
        if name == "own.jsonl":
            for g in range(4):
                gpus[g].update(uuid=U[g], bus_id=B[g])
        if name == "nb.jsonl":
            gpus[0].update(uuid=U[5])
        f.write(json.dumps({"schema": "trainscope.telemetry/1", "source": "nvml", "fidelity": "library",
                            "interval_ms": 1000, "host": host, "gpus": gpus}) + "\n")
        for i in range(5):
            for g in range(len(pw)):
                f.write(json.dumps({"t_unix_ns": (T0 + i) * 10**9, "tick": i, "gpu": g, "power_w": pw[g]}) + "\n")
def q(name, cols, gpus):
    rows = [", ".join(["timestamp", "index"] + cols + ["power.draw [W]"])]
    for i in range(5):
        for g, ids, p in gpus:
            rows.append(", ".join([stamp(T0 + i), str(g)] + ids + ["%d.00 W" % p]))
    open(name, "w").write("\n".join(rows) + "\n")
q("smi.csv", ["uuid", "pci.bus_id"], [(2, [U[2], B[2]], 600), (3, [U[3], B[3]], 400)])
q("a.csv", ["uuid"], [(0, [U[0]], 600), (1, [U[1]], 600)])
q("b.csv", ["uuid"], [(0, [U[1]], 600), (1, [U[2]], 400)])
q("x.csv", ["pci.bus_id"], [(g, [B[g]], 650) for g in range(3)])
q("y.csv", ["pci.bus_id"], [(g, [B[g]], 350) for g in range(3)])
q("noid.csv", [], [(g, [], 600) for g in range(2)])
q("z.csv", ["uuid"], [(0, [U[9]], 600)])
q("w.csv", ["uuid"], [(0, [U[0]], 600), (1, [U[5]], 300)])
with open("exp.txt", "w") as f:
    for i in range(3):
        for h in ("n" * 70, "short"):
            f.write('DCGM_FI_DEV_POWER_USAGE{gpu="0",Hostname="%s"} 300.0 %d\n' % (h, (T0 + i) * 1000))
PY
for s in "own.jsonl smi.csv c.jsonl" "a.csv b.csv" "x.csv y.csv" "own.jsonl noid.csv" "own.jsonl z.csv" \
	"own.jsonl nb.jsonl w.csv"; do
	n=$(echo $s | tr -d ' ')
	"$TS" watch --read $s --json -o "$n.json" 2>/dev/null
	"$TS" watch --read $s >"$n.txt" 2>&1
done
"$TS" watch --read exp.txt --json -o exp.json 2>/dev/null
if [ -f "$metrics" ]; then
	mkdir sidep sideq
	cp "$metrics" zoned.csv naive.csv sidep/
	cp "$metrics" own.jsonl smi.csv sideq/
	"$TS" ab --json -o ab.json sidep sideq 2>/dev/null || true
	"$TS" ab sidep sideq >ab.txt 2>&1 || true
else
	echo "note: $metrics not found: the ab case is skipped"
fi
mkdir run
cp zoned.csv naive.csv run/
cp steps8.jsonl run/metrics.jsonl
"$TS" diagnose run --json -o diag.json 2>/dev/null || true
"$TS" watch --read zoned.csv naive.csv --steps steps8.jsonl --json -o tz2.json 2>/dev/null
"$TS" watch --read zoned.csv naive.csv --steps steps8.jsonl >tz2.txt 2>&1
"$TS" watch --read zoned_at.csv naive.csv --steps steps8.jsonl --json -o tzat.json 2>/dev/null
"$TS" watch --read zoned_at.csv naive.csv --steps steps8.jsonl >tzat.txt 2>&1
python3 - <<'PY'
import json, os
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

# diagnose of a run directory with both captures: the same warnings, the
# captures named by their paths, and the two host-unknown ones (no uuid)
w = [(x["code"], x["message"]) for x in json.load(open("diag.json"))["warnings"]
     if x["code"] in ("steps-outside-capture", "host-unknown")]
NOHOST = ("%s: the capture records no host name, and its GPUs have no uuid: whether it ran on the machine of "
          "another capture cannot be told, so its GPUs are compared only with each other (a host of its own)")
assert sorted(w) == sorted([("steps-outside-capture", outside("run/zoned.csv")),
                            ("steps-outside-capture", outside("run/naive.csv") + HINT),
                            ("host-unknown", NOHOST % "run/zoned.csv"),
                            ("host-unknown", NOHOST % "run/naive.csv")]), w

g = json.load(open("exp.json"))["gpus"]
assert [(x["id"], x["samples"], x["fields"]["power_w"]["mean"], x["energy_j"]) for x in g] == \
    [("n" * 70 + "/0", 3, 300, 600), ("short/0", 3, 300, 600)], g

if os.path.exists("ab.json"):
    w = [(x["message"], x["file"]) for x in json.load(open("ab.json"))["warnings"] if x["code"] == "host-unknown"]
    want = [(NOHOST % f, f) for f in ("sidep/naive.csv", "sidep/zoned.csv")]
    assert sorted(w) == want, w
    assert all(x[0] in open("ab.txt").read() for x in want), open("ab.txt").read()

def out(n):
    d = json.load(open(n + ".json"))
    return ([x["message"] for x in d["findings"] if x["id"] == "straggler-gpu"],
            [(x["message"], x["file"]) for x in d["warnings"] if x["code"] == "host-unknown"],
            open(n + ".txt").read())
st, hw, txt = out("own.jsonlsmi.csvc.jsonl")
SPAN = ", from 2026-02-01T12:00:00Z to 2026-02-01T12:00:04Z"
want = ["GPU 3 of own.jsonl: mean power_w 400.0 W is 67 % of the GPUs' median 600.0 on its host (host nodeA, 4 GPUs)" +
        SPAN + "; the same GPU as GPU 3 of smi.csv: 400.0 W (67 %)" + SPAN]
assert st == want and hw == [], (st, hw)
assert all(w in txt for w in want), txt
st, hw, txt = out("a.csvb.csv")
want = ["GPU 1 of b.csv: mean power_w 400.0 W is 67 % of the GPUs' median 600.0"]
assert st == want and hw == [], (st, hw)
assert want[0] in txt, txt
TAIL = (": whether it ran on the machine of another capture cannot be told, so its GPUs are compared only "
        "with each other (a host of its own)")
BUS = ("its GPUs match other captures' GPUs only by PCI bus id, which every machine of one board layout repeats, "
       "so they are not taken for the same GPUs")
for n, why in (("x.csvy.csv", [("x.csv", BUS), ("y.csv", BUS)]),
               ("own.jsonlnoid.csv", [("noid.csv", "its GPUs have no uuid")]),
               ("own.jsonlz.csv", [("z.csv", "no uuid of its GPUs is in another capture")])):
    st, hw, txt = out(n)
    want = [("%s: the capture records no host name, and %s%s" % (f, w, TAIL), f) for f, w in why]
    assert hw == want, (n, hw)
    assert all(w[0] in txt for w in want), txt
    if n == "x.csvy.csv":
        assert st == [], st
st, hw, txt = out("own.jsonlnb.jsonlw.csv")
want = [("w.csv: the capture records no host name, and its GPUs are GPUs (by uuid) of captures that record "
         "different hosts: its host cannot be told; each GPU seen in a capture that records its host is judged "
         "with that host, its other GPUs only with each other", "w.csv")]
assert hw == want and want[0][0] in txt, hw
PY
echo "watch-more: ok"
