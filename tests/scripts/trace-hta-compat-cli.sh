#!/usr/bin/env bash
# End to end: `trainscope trace --hta-compat --json` on every trace folder
# that has an HTA reference output in $DATA/expected/hta/ reproduces HTA's
# temporal breakdown, kernel-type breakdown and comm/comp overlap (sums in
# us exactly, percentages to 0.01). The reference numbers come from HTA
# itself (see each file's "hta_commit" and "note").
set -u
cd "$(dirname "$0")/../.."
TS=${TS:-build/trainscope}
DATA=${DATA:-../shared/data}
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
[ -d "$DATA/expected/hta" ] || { echo "no $DATA/expected/hta"; exit 77; }
status=0
for exp in "$DATA"/expected/hta/*.json; do
	dir=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["trace_dir"].replace("tests/data/",""))' "$exp")
	out=$(mktemp)
	if ! "$TS" trace --hta-compat --json --quiet "$DATA/traces/hta/$dir" >"$out"; then
		echo "FAIL $dir: trainscope trace exited non-zero"
		status=1
		rm -f "$out"
		continue
	fi
	python3 - "$exp" "$out" "$dir" <<'PY' || status=1
import json, sys
exp = json.load(open(sys.argv[1]))
got = json.load(open(sys.argv[2]))
name = sys.argv[3]
bad = []
ranks = {r["rank"]: r["hta"] for r in got["ranks"]}
for row in exp["temporal_breakdown"]:
    h = ranks[row["rank"]]
    for ek, gk in [("idle_time(us)", "idle_time_us"), ("compute_time(us)", "compute_time_us"),
                   ("non_compute_time(us)", "non_compute_time_us"), ("kernel_time(us)", "kernel_time_us")]:
        if h[gk] != row[ek]:
            bad.append(f"rank {row['rank']} {gk}: {h[gk]} != {row[ek]}")
    for ek, gk in [("idle_time_pctg", "idle_time_pct"), ("compute_time_pctg", "compute_time_pct"),
                   ("non_compute_time_pctg", "non_compute_time_pct")]:
        if abs(h[gk] - row[ek]) > 0.01 + 1e-9:
            bad.append(f"rank {row['rank']} {gk}: {h[gk]} != {row[ek]}")
for row in exp.get("comm_comp_overlap") or []:
    h = ranks[row["rank"]]
    e, g = row["comp_comm_overlap_pctg"], h["comp_comm_overlap_pct"]
    if (e is None) != (g is None) or (e is not None and abs(e - g) > 0.01 + 1e-9):
        bad.append(f"rank {row['rank']} overlap: {g} != {e}")
# the kernel-type breakdown of a single-rank job is that rank's
if len(ranks) == 1:
    h = next(iter(ranks.values()))
    kt = {r["kernel_type"]: r["sum_us"] for r in h["kernel_type"]}
    for row in exp["kernel_type_breakdown"]:
        if kt.get(row["kernel_type"]) != row["sum"]:
            bad.append(f"kernel type {row['kernel_type']}: {kt.get(row['kernel_type'])} != {row['sum']}")
if bad:
    print(f"FAIL {name}:")
    print("\n".join("  " + b for b in bad[:20]))
    sys.exit(1)
print(f"ok {name}: {len(exp['temporal_breakdown'])} rank(s) match HTA")
PY
	rm -f "$out"
done
exit $status
