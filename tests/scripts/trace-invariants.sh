#!/usr/bin/env bash
# Invariants of the trace breakdown on every shared trace, on truncated
# halves of some, and on synthetic pathological cases:
#   compute + exposed comm + exposed memcpy + exposed memset + idle = window
#   exactly (CPU-only: compute + exposed comm + idle; all printed as exact
#   ns in us with 3 decimals, compared as decimals), busy <= window, every
#   set (comm, memcpy, memset, unlinked) <= window, per step the same
#   partition = duration, no share above 100 %, a wall with every verdict.
set -u
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
[ -d "$DATA/traces" ] || { echo "skip: no $DATA/traces"; exit 77; }
fail=0 n=0
check() { # file [label]
	local f=$1 label=${2:-$1}
	"$TS" trace --json "$f" >"$tmp/out.json" 2>"$tmp/err"
	local rc=$?
	if [ $rc = 2 ]; then
		echo "note $label: not analysable (exit 2): $(head -c 200 "$tmp/err")"
		return
	fi
	if [ $rc != 0 ]; then
		echo "FAIL $label: exit $rc"; cat "$tmp/err"; fail=1; return
	fi
	n=$((n + 1))
	python3 - "$tmp/out.json" "$label" <<'PY' || fail=1
import json, sys
from decimal import Decimal as D
d = json.load(open(sys.argv[1]), parse_float=D)
label = sys.argv[2]
bad = []
def pct_ok(v, what):
    if v is not None and not (D(0) <= v <= D(100)):
        bad.append(f"{what} {v} % outside 0..100")
for r in d["ranks"]:
    w = r["window_us"]
    gpu = len(r["classes"]) > 0  # the rank has GPU activity
    parts = r["compute_us"] + r["exposed_comm_us"] + r["exposed_memcpy_us"] + r["exposed_memset_us"] + r["idle_us"]
    if parts != w:
        bad.append(f"rank {r['rank']}: parts {parts} != window {w}")
    for k in ("busy_us", "comm_us", "memcpy_us", "memset_us", "unlinked_us", "exposed_comm_us", "gpu_span_us"):
        if r[k] > w or r[k] < 0:
            bad.append(f"rank {r['rank']}: {k} {r[k]} outside 0..window {w}")
    if r["idle_us"] < 0:
        bad.append(f"rank {r['rank']}: idle {r['idle_us']} < 0")
    if gpu and r["busy_us"] + r["idle_us"] != w:
        bad.append(f"rank {r['rank']}: busy + idle != window")
    # host-bound idle is null (unknown) when no GPU activity is linked to
    # a launch; the idle outside the data loader is then all "other"
    hb = r["idle_host_bound_us"]
    if gpu and (hb if hb is not None else 0) + r["idle_data_bound_us"] + r["idle_other_us"] != r["idle_us"]:
        bad.append(f"rank {r['rank']}: idle causes do not sum to idle")
    pct_ok(r["wall"]["share_pct"], "wall share")
    for c in r["wall"]["walls"]:
        pct_ok(c["share_pct"], c["wall"])
    for s in r["steps"]:
        sp = s["compute_us"] + s["exposed_comm_us"] + s["exposed_memcpy_us"] + s["exposed_memset_us"] + s["idle_us"]
        if sp != s["dur_us"]:
            bad.append(f"rank {r['rank']} step {s['step']}: parts {sp} != dur {s['dur_us']}")
        if s["busy_us"] > s["dur_us"] or s["comm_us"] > s["dur_us"] or s["idle_us"] < 0:
            bad.append(f"rank {r['rank']} step {s['step']}: busy {s['busy_us']} comm {s['comm_us']} over dur {s['dur_us']}")
pct_ok(d["wall"]["share_pct"], "job wall")
if not d["wall"]["evidence"]:
    bad.append("job wall without evidence")
for b in bad[:5]:
    print(f"FAIL {label}: {b}")
sys.exit(1 if bad else 0)
PY
}
while IFS= read -r f; do
	check "$f"
done < <(find "$DATA/traces" -type f \( -name '*.json' -o -name '*.json.gz' \) \
	! -path '*/tb_plugin/test/*' | LC_ALL=C sort)
# truncated halves (the reader keeps every complete event)
for f in "$DATA/traces/cpu/a_dense/"*.json.gz \
	"$DATA/traces/tracelens/tests/traces/mi300/resnet_act_checkpoint.json.gz" \
	"$DATA/traces/hta/trace_filter/"*rank-0*; do
	[ -f "$f" ] || continue
	size=$(gzip -dc "$f" | wc -c)
	gzip -dc "$f" | head -c $((size / 2)) >"$tmp/half.json"
	check "$tmp/half.json" "$(basename "$f") (first half)"
done
# pathological: only a negative duration; 200k zero-length events
printf '{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":5,"dur":-1}]}' >"$tmp/neg.json"
check "$tmp/neg.json" "dur -1 only"
python3 -c 'import json; json.dump({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 100, "dur": 0}] * 200000}, open("'"$tmp"'/zero.json", "w"))'
check "$tmp/zero.json" "200k zero-length events"
for c in "$tmp/neg.json" "$tmp/zero.json"; do
	"$TS" trace "$c" 2>/dev/null | grep -q "^wall: undetermined" || { echo "FAIL $c: wall is not undetermined"; fail=1; }
done
echo "invariants checked on $n trace files"
exit $fail
