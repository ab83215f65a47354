#!/usr/bin/env bash
# trainscope's own sampler records each GPU's uuid and PCI bus id, so that
# its capture and a capture of nvidia-smi of the same GPUs are one device
# each (before, the sampler wrote neither: 2 GPUs in two captures were 4).
# The fake NVML (tests/fake/fake_nvml.c) answers GPU i's uuid
# GPU-5e1f0c2a-7b3d-4c8e-9a01-00000000000i and bus 0x1b + 0x20 i in
# nvmlPciInfo_t's v3 layout, so the bus ids must read 00000000:1B:00.0 and
# 00000000:3B:00.0 (nvidia-smi's spelling); the fake MTML answers uuid
# 9c2d4e6f-1a3b-4c5d-8e7f-0123456789ab and sbdf 0000:3b:00.0; the fake
# nvidia-smi (polling fallback) prints uuid GPU-...-00000000000i. The
# nvidia-smi capture below is written by hand with the other spelling of
# both (bare upper-case uuid, 8-digit domain) and different GPU order, so
# only the ids can join it.
set -eu
cd "$(dirname "$0")/../.."
TS=${TS:-build/trainscope}
command -v python3 >/dev/null || { echo "skip: python3 not installed"; exit 77; }
command -v cc >/dev/null || { echo "skip: no C compiler"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/nv" "$tmp/mt" "$tmp/bin"
cc -shared -fPIC -O1 -o "$tmp/nv/libnvidia-ml.so.1" tests/fake/fake_nvml.c
cc -shared -fPIC -O1 -o "$tmp/mt/libmtml.so" tests/fake/fake_mtml.c

LD_LIBRARY_PATH="$tmp/nv" "$TS" watch --interval 100 --json -o "$tmp/nv.json" \
	--telemetry "$tmp/nv.jsonl" -- sleep 0.3
"$TS" watch --read --json -o "$tmp/nv-read.json" "$tmp/nv.jsonl"
# the same two GPUs as nvidia-smi prints them, listed the other way round
{
	echo "timestamp, index, uuid, pci.bus_id, power.draw [W]"
	for s in 0 1 2; do
		echo "2026/12/04 10:00:0$s.000, 0, 5E1F0C2A-7B3D-4C8E-9A01-000000000001, 00000000:3B:00.0, 300.00"
		echo "2026/12/04 10:00:0$s.000, 1, 5E1F0C2A-7B3D-4C8E-9A01-000000000000, 00000000:1B:00.0, 310.00"
	done
} >"$tmp/smi.csv"
"$TS" watch --read --json -o "$tmp/both.json" "$tmp/nv.jsonl" "$tmp/smi.csv"

FAKE_MTML_LOG="$tmp/mt.log" LD_LIBRARY_PATH="$tmp/mt" "$TS" watch --backend mtml --interval 100 \
	--json -o "$tmp/mt.json" --telemetry "$tmp/mt.jsonl" -- sleep 0.3
"$TS" watch --read --json -o "$tmp/mt-read.json" "$tmp/mt.jsonl"

cp tests/fake/nvidia-smi "$tmp/bin/"
PATH="$tmp/bin:$PATH" TS_SAMPLER_LIB_NVML=/nonexistent TS_SAMPLER_LIB_MTML=/nonexistent \
	"$TS" watch --interval 200 --json -o "$tmp/poll.json" --telemetry "$tmp/poll.jsonl" -- sleep 0.6

python3 - "$tmp" <<'PY'
import json, sys
t = sys.argv[1]
want = {"0": ("GPU-5e1f0c2a-7b3d-4c8e-9a01-000000000000", "00000000:1B:00.0"),
        "1": ("GPU-5e1f0c2a-7b3d-4c8e-9a01-000000000001", "00000000:3B:00.0")}
for f in ("nv.json", "nv-read.json"):
    d = json.load(open(t + "/" + f))
    got = {g["id"]: (g.get("uuid"), g.get("bus_id")) for g in d["gpus"]}
    assert got == want, (f, got)
head = json.loads(open(t + "/nv.jsonl").readline())
assert [(g["uuid"], g["bus_id"]) for g in head["gpus"]] == [want["0"], want["1"]], head["gpus"]
d = json.load(open(t + "/both.json"))
g = d["gpus"]
assert len(g) == 4, len(g)
by = {(x["capture"], x["id"]): x for x in g}
# capture 0 GPU 0 = capture 1 GPU 1 (uuid ...000), capture 0 GPU 1 = capture 1 GPU 0
assert by[(0, "0")]["device"] == by[(1, "1")]["device"], g
assert by[(0, "1")]["device"] == by[(1, "0")]["device"], g
assert by[(0, "0")]["device"] != by[(0, "1")]["device"], g
assert all(x["matched_by"] == "uuid" for x in g), [x["matched_by"] for x in g]
for f in ("mt.json", "mt-read.json"):
    m = json.load(open(t + "/" + f))["gpus"][0]
    assert (m.get("uuid"), m.get("bus_id")) == ("9c2d4e6f-1a3b-4c5d-8e7f-0123456789ab", "0000:3b:00.0"), (f, m)
p = json.load(open(t + "/poll.json"))
assert [(x.get("uuid"), x.get("bus_id")) for x in p["gpus"]] == [
    ("GPU-5e1f0c2a-7b3d-4c8e-9a01-000000000000", "00000000:00:00.0"),
    ("GPU-5e1f0c2a-7b3d-4c8e-9a01-000000000001", "00000000:01:00.0")], p["gpus"]
PY
echo "watch-sampler-ids: ok"
