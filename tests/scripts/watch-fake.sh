#!/usr/bin/env bash
# trainscope watch against small fake NVML and MTML libraries built here
# (tests/fake/): sample count, energy by counter difference, a power-cap
# reason from sample 5, an unsupported field, a missing symbol, the child's
# exit code, MTML handles freed, and --read of the written telemetry giving
# the same GPU summary as the live run. Checked by an independent python3.
set -eu
cd "$(dirname "$0")/../.."
TS=${TS:-build/trainscope}
command -v python3 >/dev/null || { echo "skip: python3 not installed"; exit 77; }
command -v cc >/dev/null || { echo "skip: no C compiler"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/nv" "$tmp/mt"
cc -shared -fPIC -O1 -o "$tmp/nv/libnvidia-ml.so.1" tests/fake/fake_nvml.c
cc -shared -fPIC -O1 -o "$tmp/mt/libmtml.so" tests/fake/fake_mtml.c

# NVML: 2 GPUs, 100 ms for 1 s; the child exits 7 and watch must too
# Sample counts are bounded by the wall time the shell measured around the
# watch (a loaded machine stretches it: more rounds) and from below by half
# the nominal rate (a starved sampler thread skips late rounds).
now() { date +%s.%N; }
set +e
t0=$(now)
FAKE_NVML_LOG="$tmp/nv.log" LD_LIBRARY_PATH="$tmp/nv" "$TS" watch --json -o "$tmp/nv.json" \
	--telemetry "$tmp/nv.jsonl" -- sh -c 'sleep 1; exit 7'
rc=$?
export WALL_S=$(python3 -c "import sys; print(float(sys.argv[1]) - float(sys.argv[2]))" "$(now)" "$t0")
set -e
[ "$rc" = 7 ] || { echo "watch returned $rc, the child exited 7"; exit 1; }
grep -q "shutdown inits=1" "$tmp/nv.log" || { echo "nvmlShutdown not called once"; exit 1; }
"$TS" watch --read --json -o "$tmp/nv-read.json" "$tmp/nv.jsonl"
python3 - "$tmp/nv.json" "$tmp/nv-read.json" <<'PY'
import json, os, sys
live = json.load(open(sys.argv[1])); back = json.load(open(sys.argv[2]))
wall = float(os.environ["WALL_S"])
assert live["schema"] == "trainscope.watch/1", live["schema"]
assert live["command"]["exit_code"] == 7, live["command"]
assert len(live["gpus"]) == 2, live["gpus"]
for g in live["gpus"]:
    n = g["samples"]
    # a round at start, one every 100 ms for >= 1 s, and a last one at stop:
    # 12 on a quiet machine; at most one per 100 ms of the measured wall + 2
    assert 6 <= n <= wall / 0.1 + 2, ("samples", n, wall)
    f = g["fields"]
    # the scripted ramp: call k gives 100 + 10 k W, so the max is 100 + 10 (n - 1)
    assert f["power_w"]["min"] == 100.0 and f["power_w"]["max"] == 100.0 + 10 * (n - 1), f["power_w"]
    # energy counter 5000 J + 20 J per call: difference 20 (n - 1) J
    assert abs(g["energy_j"] - 20.0 * (n - 1)) < 1e-9 and g["energy_method"] == "counter", g["energy_j"]
    assert f["pcie_width"]["unsupported"] == "nvml: not supported", f["pcie_width"]
    assert f["fan_pct"]["unsupported"] == "nvml: nvmlDeviceGetFanSpeed missing", f["fan_pct"]
    assert f["temp_c"]["mean"] == 61.0, f["temp_c"]      # the deprecated call was used
    assert f["mem_total_mib"]["mean"] == 81920.0, f["mem_total_mib"]
    assert "sw_power_cap" in g["clock_event_reasons_seen"], g
ids = [f["id"] for f in live["findings"]]
assert ids.count("power-capped") == 2, ids
assert live["overhead"]["sampler_cpu_pct"] >= 0, live["overhead"]
# --read of the written file: the same GPUs and fields
assert [g["fields"] for g in back["gpus"]] == [g["fields"] for g in live["gpus"]], "read-back differs"
assert [g["samples"] for g in back["gpus"]] == [g["samples"] for g in live["gpus"]]
PY

# --pid: sample while another process lives, then stop on its own
t0=$(now)
sleep 0.6 &
victim=$!
LD_LIBRARY_PATH="$tmp/nv" "$TS" watch --pid "$victim" --json -o "$tmp/pid.json" \
	--telemetry "$tmp/pid.jsonl"
export WALL_S=$(python3 -c "import sys; print(float(sys.argv[1]) - float(sys.argv[2]))" "$(now)" "$t0")
python3 - "$tmp/pid.json" <<'PY'
import json, os, sys
d = json.load(open(sys.argv[1]))
n = d["gpus"][0]["samples"]
wall = float(os.environ["WALL_S"])
assert 3 <= n <= wall / 0.1 + 2, (n, wall)   # 0.6 s at 100 ms, plus the first and last rounds
PY
wait "$victim" 2>/dev/null || true

# MTML: the library's gaps are unsupported, never 0; every handle is freed
FAKE_MTML_LOG="$tmp/mt.log" LD_LIBRARY_PATH="$tmp/mt" "$TS" watch --backend mtml --json \
	-o "$tmp/mt.json" --telemetry "$tmp/mt.jsonl" -- sleep 0.5
python3 - "$tmp/mt.json" "$tmp/mt.log" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
log = open(sys.argv[2]).read().split()
c = int(log[0].split("=")[1]); f = int(log[1].split("=")[1])
assert c == f == 5, (c, f)   # library, system, device, gpu, memory
g = d["gpus"][0]
assert d["source"] == "mtml" and d["tool_version"] == "MTML 2.2.0", d["tool_version"]
assert g["name"] == "MTT S4000"
flds = g["fields"]
assert flds["power_limit_w"]["unsupported"] == "MTML 2.2.0", flds["power_limit_w"]
assert flds["sm_clock_max_mhz"]["unsupported"] == "mtml: mtmlGpuGetMaxClock missing", flds
assert flds["power_w"]["min"] == 200.0
assert g["energy_method"] == "integrated"
assert flds["mem_total_mib"]["mean"] == 49152.0
PY

# no device library at all: the command still runs and its exit code is kept
set +e
LD_LIBRARY_PATH="$tmp/none" TS_SAMPLER_LIB_NVML=/nonexistent TS_SAMPLER_LIB_MTML=/nonexistent \
	"$TS" watch -- sh -c 'exit 3' 2>"$tmp/err"
rc=$?
set -e
[ "$rc" = 3 ] || { echo "without a library watch returned $rc, not the child's 3"; exit 1; }
grep -q "no device telemetry" "$tmp/err" || { cat "$tmp/err"; exit 1; }
# no library, but an nvidia-smi on PATH: the polling fallback, recorded as such
mkdir -p "$tmp/bin"
cp tests/fake/nvidia-smi "$tmp/bin/"
t0=$(now)
PATH="$tmp/bin:$PATH" TS_SAMPLER_LIB_NVML=/nonexistent TS_SAMPLER_LIB_MTML=/nonexistent \
	"$TS" watch --interval 200 --json -o "$tmp/smi.json" --telemetry "$tmp/smi.jsonl" -- sleep 1
export WALL_S=$(python3 -c "import sys; print(float(sys.argv[1]) - float(sys.argv[2]))" "$(now)" "$t0")
python3 - "$tmp/smi.json" <<'PY'
import json, os, sys, time
d = json.load(open(sys.argv[1]))
wall = float(os.environ["WALL_S"])
assert d["fidelity"] == "cli-polling" and d["source"] == "nvidia-smi-query-gpu", d["fidelity"]
assert [g["id"] for g in d["gpus"]] == ["0", "1"], d["gpus"]
for g in d["gpus"]:
    assert 3 <= g["samples"] <= wall / 0.2 + 2, (g["samples"], wall)   # 1 s at 200 ms
    f = g["fields"]
    assert f["power_w"]["mean"] == 250.0 and f["power_limit_w"]["mean"] == 700.0
    assert f["mem_temp_c"]["missing"] == g["samples"]   # [N/A] is missing, not 0
PY
head -1 "$tmp/smi.jsonl" | grep -q '"fidelity":"library"' && { echo "polled file claims library fidelity"; exit 1; }
echo ok
