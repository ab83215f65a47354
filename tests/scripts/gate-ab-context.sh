#!/usr/bin/env bash
# `ab` says when the two sides ran in different environments or layouts,
# as `diff` does for two traces (context-differs, one sentence), and
# refuses an A/B whose arguments blocks change more than one field
# (flops-memory-workflow 5.4 item 1). Megatron logs written here (300
# steps of 100 ms, 1 % noise, the same loss; global batch 16, seq_length
# 1024 on every side, so the work per step is the same):
#   w8.log     world_size 8, tp 2;   w16.log   world_size 16, tp 2;
#   w16tp4.log world_size 16, tp 4;  w8b.log   as w8.log, other noise.
# And run directories (a copy of w8.log or w8b.log and a contract.json,
# environment gpu.name H100, gpu.driver, torch; workload model):
#   c_base    driver 535.104.05, torch 2.5.1+cu124;
#   c_torch   torch 2.6.0 (else c_base);
#   c_drv     driver 535.104.5 (the same version as 535.104.05);
#   c_torch16 c_torch with w16.log.
# Expected, by construction:
#   w8 vs w16: compared (not invalid), one context-differs warning "the two
#     sides differ in world size (8 vs 16): ..." in the text and --json;
#     before 2026-12-04 no word;
#   w8 vs w16tp4: invalid (exit 2), the reason names "world size 8 vs 16,
#     tp 2 vs 4"; with --allow-multi compared, the warning names both;
#   w8 vs w8b: no context-differs;
#   c_base vs c_torch: the contracts' one difference is environment.torch
#     (the variable), and context-differs names "PyTorch version
#     (2.5.1+cu124 vs 2.6.0)"; with --variable torch (the change is
#     declared): no context-differs;
#   c_base vs c_torch16: the contracts' one difference is torch, the logs
#     add world size 8 vs 16: two changes, invalid (exit 2), the reason
#     names world size besides the variable environment.torch;
#   c_base vs c_drv: the contracts are identical (identical-contracts),
#     no variable and no context-differs (before: variable
#     environment.gpu.driver, the same driver written two ways);
#   w8,w16 vs w8b,w8 (repeats): invalid, "baseline repeats differ in
#     their arguments blocks (world size: 8 in ..., 16 in ...)";
#   contract diff c_base c_drv: count 0 (before: gpu.driver); c_base
#     c_torch: environment.torch only;
#   report --baseline w8 --candidate w16 (run directories): the warning
#     is in the Markdown and HTML reports.
set -u
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }

python3 - "$tmp" <<'PY'
import json, math, os, random, sys
d = sys.argv[1]
loss = [2 + 6 * math.exp(-k / 80) for k in range(1, 301)]
def megatron(name, world, tp, seed):
    r = random.Random(seed)
    with open(f"{d}/{name}", "w") as f:
        f.write("------------------------ arguments ------------------------\n"
                "  global_batch_size ............................... 16\n"
                "  micro_batch_size ................................ 1\n"
                "  seq_length ...................................... 1024\n"
                f"  tensor_model_parallel_size ...................... {tp}\n"
                f"  world_size ...................................... {world}\n"
                "-------------------- end of arguments ---------------------\n")
        for k in range(1, 301):
            ms = 100 * (1 + r.gauss(0, 0.01))
            f.write(f" iteration {k:8d}/     300 | consumed samples: {16 * k:12d} |"
                    f" elapsed time per iteration (ms): {ms:.1f} |"
                    " learning rate: 1.000000E-04 | global batch size:    16 |"
                    f" lm loss: {loss[k - 1]:.6E} | loss scale: 1.0 | grad norm: 1.000 |"
                    " number of skipped iterations:   0 | number of nan iterations:   0 |\n")
megatron("w8.log", 8, 2, 1)
megatron("w16.log", 16, 2, 2)
megatron("w16tp4.log", 16, 4, 3)
megatron("w8b.log", 8, 2, 4)
def rundir(name, log, driver, torch):
    os.makedirs(f"{d}/{name}")
    with open(f"{d}/{log}") as f, open(f"{d}/{name}/train.log", "w") as g:
        g.write(f.read())
    json.dump({"schema": "trainscope.contract/1",
               "environment": {"gpu.name": "NVIDIA H100 80GB HBM3", "gpu.count": "8",
                               "gpu.driver": driver, "torch": torch},
               "workload": {"model": "llama3-8b"}}, open(f"{d}/{name}/contract.json", "w"))
rundir("c_base", "w8.log", "535.104.05", "2.5.1+cu124")
rundir("c_torch", "w8b.log", "535.104.05", "2.6.0")
rundir("c_drv", "w8b.log", "535.104.5", "2.5.1+cu124")
rundir("c_torch16", "w16.log", "535.104.05", "2.6.0")
PY

# check NAME WANT_EXIT WANT_INVALID_SUBSTRING WANT_WARNING_SUBSTRING [ab options...]:
# ab --json of the two runs; "" = no invalid reason / no context-differs
check() {
	local name=$1 rc_want=$2 inv=$3 warn=$4 a=$5 b=$6
	shift 6
	"$TS" ab "$tmp/$a" "$tmp/$b" --json "$@" >"$tmp/$name.json" 2>/dev/null
	local rc=$?
	[ "$rc" = "$rc_want" ] || bad "$name: exit $rc, want $rc_want"
	python3 - "$tmp/$name.json" "$inv" "$warn" "$name" <<'PY' || fail=1
import json, sys
path, inv, warn, name = sys.argv[1:]
d = json.load(open(path))
reasons = [r for r in d.get("invalid_reasons", []) if "arguments blocks differ" in r]
ctx = [w["message"] for w in d["warnings"] if w["code"] == "context-differs"]
ok = (len(reasons) == 1 and inv in reasons[0]) if inv else not reasons
ok = ok and ((len(ctx) == 1 and warn in ctx[0]) if warn else not ctx)
print("%s: invalid %s, context-differs %s: %s" % (name, reasons, ctx, "ok" if ok else
      "FAIL, want %r and %r" % (inv, warn)))
sys.exit(0 if ok else 1)
PY
}
check world 0 "" "the two sides differ in world size (8 vs 16): the step time and every delta include the effect of that difference" w8.log w16.log
check two 2 "the arguments blocks differ in 2 fields (world size 8 vs 16, tp 2 vs 4)" "world size (8 vs 16) and tp (2 vs 4)" w8.log w16tp4.log
check two-multi 0 "" "world size (8 vs 16) and tp (2 vs 4)" w8.log w16tp4.log --allow-multi
check same 0 "" "" w8.log w8b.log
check torch 0 "" "the two sides differ in PyTorch version (2.5.1+cu124 vs 2.6.0)" c_base c_torch
check torch-declared 0 "" "" c_base c_torch --variable torch
check driver 0 "" "" c_base c_drv
check torch-world 2 "the arguments blocks differ in 1 field (world size 8 vs 16) besides the variable 'environment.torch'" "PyTorch version (2.5.1+cu124 vs 2.6.0) and world size (8 vs 16)" c_base c_torch16
"$TS" ab "$tmp/w8.log" "$tmp/w16.log" 2>&1 | grep -qF "warning: the two sides differ in world size (8 vs 16)" ||
	bad "world: the text has no context-differs warning"
python3 - "$tmp" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1] + "/torch.json"))
dr = json.load(open(sys.argv[1] + "/driver.json"))
codes = [w["code"] for w in dr["warnings"]]
ok = d["variable"] == "environment.torch" and dr["variable"] is None and "identical-contracts" in codes
print("contracts: variable %s / %s, driver codes %s: %s" % (d["variable"], dr["variable"], codes,
      "ok" if ok else "FAIL, want environment.torch / None and identical-contracts"))
sys.exit(0 if ok else 1)
PY
# repeats of one side must state one layout
"$TS" ab "$tmp/w8.log,$tmp/w16.log" "$tmp/w8b.log,$tmp/w8.log" --json >"$tmp/rep.json" 2>/dev/null
rc=$?
[ $rc = 2 ] || bad "repeats w8,w16: exit $rc, want 2"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
r = [x for x in d.get("invalid_reasons", []) if x.startswith("baseline repeats differ in their arguments blocks (world size: 8 in ")]
print("repeats w8,w16: %s: %s" % (r, "ok" if len(r) == 1 else "FAIL"))
sys.exit(0 if len(r) == 1 else 1)' "$tmp/rep.json" || fail=1
# contract diff compares the version fields as versions too
"$TS" contract diff "$tmp/c_base/contract.json" "$tmp/c_drv/contract.json" --json 2>/dev/null |
	python3 -c 'import json, sys; sys.exit(0 if json.load(sys.stdin)["count"] == 0 else 1)' &&
	echo "contract diff, driver 535.104.05 vs 535.104.5: no difference: ok" ||
	bad "contract diff: driver 535.104.05 vs 535.104.5 counted as a difference"
"$TS" contract diff "$tmp/c_base/contract.json" "$tmp/c_torch/contract.json" --json 2>/dev/null |
	python3 -c 'import json, sys; d = json.load(sys.stdin); sys.exit(0 if [x["key"] for x in d["differences"]] == ["environment.torch"] else 1)' &&
	echo "contract diff, torch 2.5.1+cu124 vs 2.6.0: one difference: ok" ||
	bad "contract diff: torch 2.5.1+cu124 vs 2.6.0 is not the one difference"
# the report's A/B section carries the warning (Markdown and HTML)
mkdir -p "$tmp/rb" "$tmp/rc"
cp "$tmp/w8.log" "$tmp/rb/train.log"
cp "$tmp/w16.log" "$tmp/rc/train.log"
for fmt in md html; do
	"$TS" report --baseline "$tmp/rb" --candidate "$tmp/rc" --format $fmt 2>/dev/null |
		grep -q "the two sides differ in world size (8 vs 16)" &&
		echo "report --format $fmt: context-differs: ok" ||
		bad "report --format $fmt: no context-differs warning"
done
finish
