#!/usr/bin/env bash
# ab with telemetry on both sides: the same run (a_dense's metrics) twice,
# once beside a capture at a 700 W power limit and 1980 MHz, once at 600 W
# and 1755 MHz (SYNTHETIC captures written here): ab must warn
# telemetry-confound for both; with equal captures it must not.
set -eu
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
m="$DATA/traces/cpu/a_dense/metrics_rank0.jsonl"
[ -f "$m" ] || { echo "skip: $m not found"; exit 77; }
command -v python3 >/dev/null || { echo "skip: python3 not installed"; exit 77; }
cap() { # dir limit clock
	mkdir -p "$1"
	cp "$m" "$1/"
	{
		echo '{"schema":"trainscope.telemetry/1","source":"synthetic","fidelity":"library","interval_ms":100,"gpus":[{"id":"0","name":"NVIDIA H100 80GB HBM3","unsupported":{}}]}'
		for k in 0 1 2 3 4; do
			echo "{\"t_unix_ns\":$((1700000000000000000 + k * 100000000)),\"tick\":$k,\"gpu\":0,\"power_w\":500,\"power_limit_w\":$2,\"sm_clock_mhz\":$3,\"temp_c\":60}"
		done
	} > "$1/gpu.telemetry.jsonl"
}
cap "$tmp/a" 700 1980
cap "$tmp/b" 600 1755
cap "$tmp/c" 700 1980
"$TS" ab --json -o "$tmp/ab.json" "$tmp/a" "$tmp/b" || true
"$TS" ab --json -o "$tmp/same.json" "$tmp/a" "$tmp/c" || true
python3 - "$tmp/ab.json" "$tmp/same.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); e = json.load(open(sys.argv[2]))
w = [x for x in d["warnings"] if x["code"] == "telemetry-confound"]
assert len(w) == 2, d["warnings"]
assert any("power limit" in x["message"] and "700 vs 600" in x["message"] for x in w), w
assert any("SM clock" in x["message"] for x in w), w
assert not [x for x in e["warnings"] if x["code"] == "telemetry-confound"], e["warnings"]
PY
echo ok
