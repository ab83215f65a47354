#!/usr/bin/env bash
# diff's data_loader and host_gap walls are parts of idle (within "idle"):
# measured over idle's own intervals, each is at most idle and so is their
# sum, on both sides and on every input path: Nsight Systems SQLite exports
# (no steps: the whole window), Kineto GPU traces (HTA trace_diff) and
# CPU-only traces. A part larger than its whole (host_gap 297 ms "in idle"
# of 26 ms, the CPU-side host gap) is the bug this guards against.
set -u
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
[ -d "$DATA/nsys" ] && [ -d "$DATA/traces" ] || { echo "skip: no $DATA/nsys or $DATA/traces"; exit 77; }
fail=0 n=0
NS=$DATA/nsys CPU=$DATA/traces/cpu HTA=$DATA/traces/hta/trace_diff
while read -r label a b; do
	[ -e "$a" ] && [ -e "$b" ] || { echo "note $label: input missing"; continue; }
	if ! "$TS" diff --json "$a" "$b" >"$tmp/out.json" 2>"$tmp/err"; then
		echo "FAIL $label: diff exit $?: $(head -c 300 "$tmp/err")"
		fail=1
		continue
	fi
	n=$((n + 1))
	python3 - "$tmp/out.json" "$label" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
label = sys.argv[2]
w = {x["wall"]: x for x in d["walls"]}
bad = []
for part in ("data_loader", "host_gap"):
    if w[part]["within"] != "idle":
        bad.append(f"{part} within {w[part]['within']}")
for side in ("baseline", "candidate"):
    idle = w["idle"][f"{side}_us"]
    data = w["data_loader"][f"{side}_us"]
    gap = w["host_gap"][f"{side}_us"]
    # microseconds with 3 decimals: exact ns, compared with 1 ns of slack
    for what, v in (("data_loader", data), ("host_gap", gap), ("data_loader + host_gap", data + gap)):
        if v < 0 or v > idle + 0.001:
            bad.append(f"{side}: {what} {v} us > idle {idle} us")
for b in bad:
    print(f"FAIL {label}: {b}")
sys.exit(1 if bad else 0)
PY
done <<EOF2
nsys-mfu-before-after $NS/mfu_2gpu_before.sqlite $NS/mfu_2gpu_after.sqlite
nsys-mfu-vs-h100 $NS/mfu_2gpu_before.sqlite $NS/h100_2gpu_1s.sqlite
nsys-h100-vs-mfu-after $NS/h100_2gpu_1s.sqlite $NS/mfu_2gpu_after.sqlite
hta-control-test $HTA/control $HTA/test
cpu-dense-stall $CPU/a_dense $CPU/d_stall
cpu-dense-moe $CPU/a_dense $CPU/b_moe
EOF2
echo "diff walls within idle: $n diffs checked"
exit $fail
