#!/usr/bin/env bash
# Which GPUs of several captures are one device, and which host each is on
# (docs/watch.md, "Several captures"). SYNTHETIC captures made here, the
# truth known by construction (5 rounds 1 s apart; U[i] a uuid, B[i] the
# PCI bus id 00000000:(18 + i):00.0):
#  - nodes: n1.csv and n2.csv, nvidia-smi captures of two machines of one
#    board layout: no host, no uuid, GPUs 0-3 at B0-B3. 8 devices, none
#    "in several captures"; each capture warned host-unknown (its GPUs
#    match the other's only by bus id). Before: 4 devices matched by bus id.
#  - hosts: a1.jsonl and a2.jsonl record host nodeA, b.jsonl nodeB, each
#    GPUs 0-3 at B0-B3, no uuid: a1's and a2's GPU i are one device (a bus
#    id names a device on its host), b's 4 are 4 more: devices 0-3, 0-3,
#    4-7. Before: b's GPU i joined a1's too (3 captures, 4 devices).
#  - big: big1.csv and big2.csv, one node seen by two tools: 300 GPUs each,
#    GPU i with U[i] in both: 300 devices, each in both captures by uuid.
#    Before: above 512 GPUs in all nothing was matched. huge: the same
#    with 3000 GPUs each, within 60 s.
#  - dup: own5.jsonl (host nodeA, GPUs 0-4 with U0-U4: 600, 600, 600, 420,
#    420 W; SM clock 1980 x 3, 1500 x 2 MHz; 30 % busy) and smi2.csv (no
#    host; its GPUs 3, 4 are U3, U4: 420 W, 1500 MHz, 30 %). nodeA has 5
#    devices, each counted once: median power 600 W, median SM clock 1980
#    MHz, so the 4 GPU entries of devices U3, U4 are stragglers (420 W = 70
#    %, 1500 MHz = 76 %), one finding per device and field (4), each naming
#    both captures and their span, T0 to T0 + 4 s; clock-spread and
#    low-utilization say 5 GPUs. Before: 7 entries, medians 420 W and 1500
#    MHz, no straggler, "7 GPUs"; then (until 5 Dec 2026) 8 findings, each
#    device's twice, once per capture.
#    ab of a side with own5.jsonl + smi2.csv against one with own5.jsonl
#    (both beside the a_dense metrics): the same devices at the same
#    clocks, no telemetry-confound. Before: the shared GPUs weighed twice,
#    mean SM clock (3 x 1980 + 4 x 1500) / 7 = 1705.7 against 1788, 4.6 %
#    apart: a false confound. diagnose of the first side: the 8 stragglers.
#  - order: own.jsonl (nodeA, U0-U3: 600, 600, 600, 400 W), nb.jsonl
#    (nodeB, U5-U8: 300, 300, 300, 200 W), w.csv (no host: U0 at 600 W, U5
#    at 300 W), read in three orders: w.csv's GPU 0 is on nodeA and its GPU
#    1 on nodeB in every order; stragglers exactly GPU 3 of own.jsonl (400
#    W, 67 % of 600, 4 GPUs on nodeA) and GPU 3 of nb.jsonl (200 W, 67 % of
#    300, 4 GPUs on nodeB); w.csv warned host-unknown. Before: w.csv went
#    to the host read first (its GPU 1, 300 W, a straggler of nodeA, or
#    nodeB's median judged among 6).
#  - exporter: e1.txt, one dcgm-exporter file, GPUs 0-2 labelled
#    Hostname="node1", GPU 3 unlabelled, 600, 600, 600, 400 W: one host of
#    4 GPUs, GPU 3 a straggler (67 % of 600). Before: GPU 3 a host of its
#    own, no straggler. e2.txt: node1 (GPUs 0-3) and node2 (0-3) labelled,
#    GPU 7 unlabelled: a host-unknown warning "1 of 9 GPUs", also in
#    diagnose of a run directory holding it.
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
U = ["GPU-%08x-1111-2222-3333-444444444444" % (0xabc00000 + g) for g in range(3000)]
B = ["00000000:%02X:00.0" % (0x18 + g) for g in range(8)]
def stamp(s):
    return time.strftime("%Y/%m/%d %H:%M:%S", time.gmtime(int(s))) + ".000"
def csv(name, cols, gpus):
    # gpus: (index, [id cells], {column: value})
    fcols = ["power.draw [W]", "utilization.gpu [%]", "clocks.sm [MHz]"]
    rows = [", ".join(["timestamp", "index"] + cols + fcols)]
    for i in range(5):
        for g, ids, v in gpus:
            rows.append(", ".join([stamp(T0 + i), str(g)] + ids +
                                  ["%.2f W" % v.get("p", 500), "%d %%" % v.get("u", 90),
                                   "%d MHz" % v.get("c", 1980)]))
    open(name, "w").write("\n".join(rows) + "\n")
def own(name, host, gpus):
    # gpus: ({"uuid":..., "bus_id":...}, {"p": W, "u": %, "c": MHz})
    with open(name, "w") as f:
        hdr = [dict({"id": str(g), "name": "NVIDIA H100 80GB HBM3", "unsupported": {}}, **ids)
               for g, (ids, _) in enumerate(gpus)]
        f.write(json.dumps({"schema": "trainscope.telemetry/1", "source": "nvml", "fidelity": "library",
                            "interval_ms": 1000, "host": host, "gpus": hdr}) + "\n")
        for i in range(5):
            for g, (_, v) in enumerate(gpus):
                f.write(json.dumps({"t_unix_ns": (T0 + i) * 10**9, "tick": i, "gpu": g,
                                    "power_w": v.get("p", 500), "util_pct": v.get("u", 90),
                                    "sm_clock_mhz": v.get("c", 1980)}) + "\n")
csv("n1.csv", ["pci.bus_id"], [(g, [B[g]], {}) for g in range(4)])
csv("n2.csv", ["pci.bus_id"], [(g, [B[g]], {}) for g in range(4)])
for name, host in (("a1.jsonl", "nodeA"), ("a2.jsonl", "nodeA"), ("b.jsonl", "nodeB")):
    own(name, host, [({"bus_id": B[g]}, {}) for g in range(4)])
for name, n in (("big1.csv", 300), ("big2.csv", 300), ("huge1.csv", 3000), ("huge2.csv", 3000)):
    csv(name, ["uuid"], [(g, [U[g]], {}) for g in range(n)])
D = [{"p": 600, "u": 30, "c": 1980}] * 3 + [{"p": 420, "u": 30, "c": 1500}] * 2
own("own5.jsonl", "nodeA", [({"uuid": U[g], "bus_id": B[g]}, D[g]) for g in range(5)])
csv("smi2.csv", ["uuid"], [(g, [U[g]], D[g]) for g in (3, 4)])
own("own.jsonl", "nodeA", [({"uuid": U[g]}, {"p": p}) for g, p in enumerate((600, 600, 600, 400))])
own("nb.jsonl", "nodeB", [({"uuid": U[5 + g]}, {"p": p}) for g, p in enumerate((300, 300, 300, 200))])
csv("w.csv", ["uuid"], [(0, [U[0]], {"p": 600}), (1, [U[5]], {"p": 300})])
def exp(name, series):
    with open(name, "w") as f:
        for i in range(3):
            for gpu, host, p in series:
                lab = 'gpu="%d",modelName="NVIDIA H100 80GB HBM3"' % gpu + (',Hostname="%s"' % host if host else "")
                f.write('DCGM_FI_DEV_POWER_USAGE{%s} %s %d\n' % (lab, p, (T0 + i) * 1000))
exp("e1.txt", [(0, "node1", 600), (1, "node1", 600), (2, "node1", 600), (3, None, 400)])
exp("e2.txt", [(g, "node1", 600) for g in range(4)] + [(g, "node2", 600) for g in range(4)] + [(7, None, 600)])
PY
w() { # name, captures...
	local n=$1
	shift
	"$TS" watch --read "$@" --json -o "$n.json" 2>/dev/null
	"$TS" watch --read "$@" >"$n.out" 2>&1
}
w nodes n1.csv n2.csv
w hosts a1.jsonl a2.jsonl b.jsonl
w big big1.csv big2.csv
start=$(date +%s)
"$TS" watch --read huge1.csv huge2.csv --json -o huge.json 2>/dev/null
echo $(($(date +%s) - start)) >huge.s
w dup own5.jsonl smi2.csv
w order1 own.jsonl nb.jsonl w.csv
w order2 nb.jsonl own.jsonl w.csv
w order3 w.csv nb.jsonl own.jsonl
w e1 e1.txt
w e2 e2.txt
if [ -f "$metrics" ]; then
	mkdir sidep sideq
	cp "$metrics" own5.jsonl smi2.csv sidep/
	cp "$metrics" own5.jsonl sideq/
	"$TS" ab --json -o ab.json sidep sideq 2>/dev/null || true
	"$TS" ab sidep sideq >ab.txt 2>&1 || true
	"$TS" diagnose sidep --json -o diag.json 2>/dev/null || true
	mkdir rune
	cp "$metrics" e2.txt rune/
	"$TS" diagnose rune --json -o diage.json 2>/dev/null || true
	"$TS" diagnose rune >diage.out 2>&1 || true
else
	echo "note: $metrics not found: the ab and diagnose cases are skipped"
fi
python3 - <<'PY'
import json, os
checks = []
def check(what, ok):
    checks.append((what, bool(ok)))
def load(n):
    return json.load(open(n + ".json")), open(n + ".out").read()
def devs(d):
    return [(g["device"], g["matched_by"]) for g in d["gpus"]]
def warns(d, code):
    return [(x["message"], x["file"]) for x in d["warnings"] if x["code"] == code]
def stragglers(d):
    return sorted(x["message"] for x in d["findings"] if x["id"] == "straggler-gpu")

# nodes
d, txt = load("nodes")
for i, (dev, by) in enumerate(devs(d)):
    check("nodes: GPU entry %d is device %d, matched by nothing" % (i, i), (dev, by) == (i, None))
check("nodes: text says no GPU is in several captures", "same GPU in several captures" not in txt)
BUS = ("%s: the capture records no host name, and its GPUs match other captures' GPUs only by PCI bus id, "
       "which every machine of one board layout repeats, so they are not taken for the same GPUs: whether it "
       "ran on the machine of another capture cannot be told, so its GPUs are compared only with each other "
       "(a host of its own)")
for f in ("n1.csv", "n2.csv"):
    check("nodes: %s warned in --json" % f, (BUS % f, f) in warns(d, "host-unknown"))
    check("nodes: %s warned in text" % f, BUS % f in txt)

# hosts
d, txt = load("hosts")
want = [(g, "bus_id") for g in range(4)] * 2 + [(4 + g, None) for g in range(4)]
for i, (got, exp) in enumerate(zip(devs(d), want)):
    check("hosts: GPU entry %d is %s" % (i, exp), got == exp)
lines = [l for l in txt.splitlines() if "same GPU in several captures" in l]
check("hosts: text names 4 devices in two captures of nodeA",
      lines == ["  same GPU in several captures: GPU %d of a1.jsonl = GPU %d of a2.jsonl (by PCI bus id)" % (g, g)
                for g in range(4)])

# big, huge
d, txt = load("big")
check("big: 600 GPU entries matched by uuid", [g["matched_by"] for g in d["gpus"]] == ["uuid"] * 600)
check("big: 300 devices, GPU i of both captures device i",
      [g["device"] for g in d["gpus"]] == list(range(300)) * 2)
check("big: text names 300 devices", txt.count("same GPU in several captures") == 300)
h = json.load(open("huge.json"))
check("huge: 6000 entries, 3000 devices by uuid",
      [(g["device"], g["matched_by"]) for g in h["gpus"]] == [(i, "uuid") for i in range(3000)] * 2)
check("huge: within 60 s", int(open("huge.s").read()) <= 60)

# dup
d, txt = load("dup")
SPAN = ", from 2026-02-01T12:00:00Z to 2026-02-01T12:00:04Z"
ST = ["GPU %d of own5.jsonl: mean power_w 420.0 W is 70 % of the GPUs' median 600.0" + SPAN +
      "; the same GPU as GPU %d of smi2.csv: 420.0 W (70 %)" + SPAN,
      "GPU %d of own5.jsonl: mean sm_clock_mhz 1500.0 MHz is 76 % of the GPUs' median 1980.0" + SPAN +
      "; the same GPU as GPU %d of smi2.csv: 1500.0 MHz (76 %)" + SPAN]
want = sorted(s.replace("GPU %d", "GPU %d" % g) for s in ST for g in (3, 4))
st = stragglers(d)
for m in want:
    check("dup: straggler in --json: " + m, m in st)
    check("dup: straggler in text: " + m, m in txt)
check("dup: no other straggler, none twice", st == want)
f = {x["id"]: x["message"] for x in d["findings"]}
check("dup: clock-spread across 5 GPUs",
      f.get("clock-spread", "").startswith("SM clocks differ by 480 MHz across 5 GPUs (1500-1980 MHz)"))
check("dup: low-utilization of 5 GPUs", "(per GPU 30-30 %, 5 GPUs)" in f.get("low-utilization", ""))

# order
ORD = ["GPU 3 of nb.jsonl: mean power_w 200.0 W is 67 % of the GPUs' median 300.0 on its host (host nodeB, 4 GPUs)",
       "GPU 3 of own.jsonl: mean power_w 400.0 W is 67 % of the GPUs' median 600.0 on its host (host nodeA, 4 GPUs)"]
CONFLICT = ("w.csv: the capture records no host name, and its GPUs are GPUs (by uuid) of captures that record "
            "different hosts: its host cannot be told; each GPU seen in a capture that records its host is judged "
            "with that host, its other GPUs only with each other")
for n in ("order1", "order2", "order3"):
    d, txt = load(n)
    st = stragglers(d)
    for m in ORD:
        check("%s: straggler %s" % (n, m[:30]), m in st and m in txt)
    check("%s: no other straggler" % n, st == ORD)
    check("%s: w.csv warned" % n, warns(d, "host-unknown") == [(CONFLICT, "w.csv")] and CONFLICT in txt)

# exporter
d, txt = load("e1")
m = "GPU 3: mean power_w 400.0 W is 67 % of the GPUs' median 600.0"
check("e1: unlabelled GPU 3 judged on the file's host", stragglers(d) == [m] and m in txt)
check("e1: every GPU on node1", [g.get("host") for g in d["gpus"]] == ["node1"] * 4)
d, txt = load("e2")
m = ("e2.txt: 1 of 9 GPUs have no Hostname label while others name several hosts: which host they are on "
     "cannot be told, so they are compared only with each other")
check("e2: host-unknown in --json", (m, "e2.txt") in warns(d, "host-unknown"))
check("e2: host-unknown in text", m in txt)

# ab, diagnose
if os.path.exists("ab.json"):
    w = [x["message"] for x in json.load(open("ab.json"))["warnings"] if x["code"] == "telemetry-confound"]
    check("ab: no telemetry-confound in --json", w == [])
    check("ab: no telemetry-confound in text", "telemetry-confound" not in open("ab.txt").read() and
          "the two sides ran at a different" not in open("ab.txt").read())
    dd = json.dumps(json.load(open("diag.json")))
    for s in want:
        check("diagnose: straggler " + s, s.replace("sidep/", "") in dd.replace("sidep/", ""))
    w = [x["message"] for x in json.load(open("diage.json"))["warnings"] if x["code"] == "host-unknown"]
    check("diagnose: e2's host-unknown in --json", w == [m.replace("e2.txt", "rune/e2.txt")])
    check("diagnose: e2's host-unknown in text", m.replace("e2.txt", "rune/e2.txt") in open("diage.out").read())

bad = [w for w, ok in checks if not ok]
print("watch-devices: %d of %d statements wrong" % (len(bad), len(checks)))
for w in bad:
    print("  wrong: " + w)
raise SystemExit(1 if bad else 0)
PY
echo "watch-devices: ok"
