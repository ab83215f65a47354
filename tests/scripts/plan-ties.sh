#!/usr/bin/env bash
# plan reports as tied the layouts it cannot order against rank 1: every
# Fit-passing layout predicted at or under the top of rank 1's likely
# range (step_high_ms) is tied_with_top, no other is, their number is the
# header's tied_with_top, each tied reason says "(a tie)", and the rules'
# pick is the fastest tied layout the sieve keeps or that breaks no Scale
# rule (Llama 3 8B on 16 H100, GBS 256: rank 9, the sieve's survivor). The published Qwen3-30B-A3B layout on 16 H100 (EP16, rank 6, 2 %
# slower in the model) is one of the ties, and --check says its claimed
# gain is a tie, while DeepSeek-V3's 7.6 % (outside the likely range) is not.
set -u
TS=${TS:-build/trainscope}
DATA=${DATA:-../shared/data}
[ -f "$DATA/models/qwen3-30b-a3b.json" ] || { echo "shared data not found"; exit 77; }
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
fail=0
check() { # NAME PUBLISHED(tp,pp,ep or -) ARGS...
	name=$1 pub=$2
	shift 2
	"$TS" plan "$@" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
name, pub = sys.argv[1], sys.argv[2]
L = d["layouts"]
top = L[0]
bad = []
want = [x for x in L if x["passes_fit_rules"] and x["step_ms"] <= top["step_high_ms"]]
got = [x for x in L if x.get("tied_with_top")]
if [x["rank"] for x in want] != [x["rank"] for x in got]:
    bad.append("tied set: want %d layouts, got %d" % (len(want), len(got)))
if d["tied_with_top"] != len(want):
    bad.append("tied_with_top %s, want %d" % (d["tied_with_top"], len(want)))
for x in L:
    if x["passes_fit_rules"] and x["rank"] > 1 and (("(a tie)" in x["reason"]) != bool(x.get("tied_with_top"))):
        bad.append("rank %d reason/tie mismatch: %s" % (x["rank"], x["reason"]))
        break
if len(want) > 1 and "%d more within its likely range" % (len(want) - 1) not in top["reason"]:
    bad.append("rank 1 reason does not count the ties: " + top["reason"])
keep = [x for x in want if x["eliminated_by"] is None] or [x for x in want if not x["violations"]]
pick = keep[0]["rank"] if keep and keep[0]["rank"] != 1 else None
if d["tied_rule_pick_rank"] != pick:
    bad.append("tied_rule_pick_rank %s, want %s" % (d["tied_rule_pick_rank"], pick))
if pub != "-":
    tp, pp, ep = map(int, pub.split(","))
    p = [x for x in L if x["tp"] == tp and x["pp"] == pp and x["ep"] == ep and x["vpp"] == 1 and x["cp"] == 1 and x["mbs"] == 1]
    if not p or not p[0].get("tied_with_top"):
        bad.append("published layout %s not tied" % pub)
print("%s: %d tied of %d Fit-passing, pick %s %s" % (name, len(want), d["fit_passing"], pick,
      "ok" if not bad else "FAIL: " + "; ".join(bad)))
sys.exit(1 if bad else 0)' "$name" "$pub" || fail=1
}
check qwen3-30b-16 1,1,16 --model "$DATA/models/qwen3-30b-a3b.json" --gpus 16 --gpu H100-SXM --gbs 1024
check dsv3-1024-balanced - --model "$DATA/models/deepseek-v3.json" --gpus 1024 --gpu H100-SXM --gbs 8192 --routing balanced
check llama3-8b-8 - --model "$DATA/models/llama3-8b.json" --gpus 8 --gpu H100-SXM --gbs 32
check llama3-8b-16-pick - --model "$DATA/models/llama3-8b.json" --gpus 16 --gpu H100-SXM --gbs 256

# --check: V8 (Qwen3-30B, 2.4 % claimed) and V11 (0.6 %) are ties; V17 (DeepSeek-V3, 7.6 %)
# and V18 (10.8 %) are not: the published layout is predicted above the best's likely range
"$TS" plan --check "$DATA/expected/layout-cases.csv" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
want = {"V8": True, "V11": True, "V17": False, "V18": False}
bad = []
for c in d["cases"]:
    if c["id"] in want and c["search_gain_within_uncertainty"] != want[c["id"]]:
        bad.append("%s: search_gain_within_uncertainty %s" % (c["id"], c["search_gain_within_uncertainty"]))
    if c["published_tied_with_best"] != (0 < c["published_rank"] <= c["tied_with_best"]):
        bad.append("%s: published_tied_with_best disagrees with its rank" % c["id"])
print("check: " + ("ok" if not bad else "FAIL: " + "; ".join(bad)))
sys.exit(1 if bad else 0)' || fail=1
exit $fail
