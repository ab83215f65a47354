#!/usr/bin/env bash
# Two sides on GPUs of the same name but a different SM count (a MIG
# slice, another SKU sold under the name, H100 PCIe with 114 SMs vs SXM
# with 132) ran on different hardware: `ab` and `diff` name the SM count
# as a context difference, in every output. Generated from
# examples/run-h200 (one Kineto trace, deviceProperties[0] "NVIDIA H200"
# with numSms 132) and ../shared/data/nsys/mfu_2gpu_before.sqlite (2
# GPUs, no GPU table), their metadata edited:
#   k132, k132b  the run as it is (numSms 132)
#   k114         numSms 114
#   kmp114       numSms replaced by multiProcessorCount 114
#   kmix         k132 plus a rank-1 trace with numSms 114
#   n132, n114   the export with TARGET_INFO_GPU (id, name, cuDevice,
#                smCount): GPUs 0 and 1 "NVIDIA H100 80GB HBM3", smCount
#                132 / 114
#   c132, c108   the export with TARGET_INFO_CUDA_DEVICE (no name),
#                numMultiprocessors 132 / 108
# Expected, by construction:
#   ab --json: k132 vs k114, k132 vs kmp114, n132 vs n114: one
#     context-differs containing "SM count (132 vs 114)"; c132 vs c108
#     "SM count (132 vs 108)"; k132 vs kmix: one context-mixed of the
#     candidate containing "SM count (132 in"; k132 vs k132b, n132 vs
#     n132: no context warning;
#   ab text, report --format md and html of k132 vs k114: the warning;
#   diff --json of the k132 and k114 traces: context.differs holds
#     "sm_count", context.baseline.sm_count 132, candidate 114, and the
#     context-differs warning names "SM count (132 vs 114)"; the same for
#     the n132 and n114 exports; k132 vs k132b: sm_count not in differs;
#   diff text: the context table's "SM count" row reads 132, 114,
#     "differs", and the warning is printed.
#   diff of two SM counts is not the same hardware: same_hardware false,
#     verdict_reason refused_different_hardware, one different-hardware
#     warning naming both counts ("NVIDIA H200 (132 SMs)"), in the text
#     too; --allow-different-hardware gives the verdict and says so; the
#     same SM count on both sides stays the same hardware.
# Before 2026-12-05 the SM count was not compared: 13 of the 15 checks
# wrong (every difference missed, diff --json had no sm_count key), the
# two ab cases without a difference right. Until session 26 `diff` still
# called two SM counts the same hardware and gave a speed verdict: 4 of
# the 5 hardware checks wrong (the same-count one right).
set -u
cd "$(dirname "$0")/../.."
TS=${TS:-build/trainscope}
DATA=${DATA:-../shared/data}
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
NSYS=$DATA/nsys/mfu_2gpu_before.sqlite
[ -f "$NSYS" ] || { echo "skip: no $NSYS"; exit 77; }
ls examples/run-h200/traces/*.json.gz >/dev/null 2>&1 || { echo "skip: no examples/run-h200"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

python3 - "$tmp" examples/run-h200 "$NSYS" <<'PY' || exit 1
import glob, gzip, json, os, shutil, sqlite3, sys
d, src, nsys = sys.argv[1:]
[orig] = glob.glob(f"{src}/traces/*.json.gz")
base = json.load(gzip.open(orig))
assert base["deviceProperties"][0]["numSms"] == 132
def write(path, edit, rank=0):
    t = json.loads(json.dumps(base))
    t["distributedInfo"] = {"backend": "nccl", "rank": rank, "world_size": 1}
    edit(t)
    with gzip.open(path, "wt") as f:
        json.dump(t, f)
def run(name, edit=lambda t: None):
    shutil.copytree(src, f"{d}/{name}", ignore=shutil.ignore_patterns("traces"))
    os.mkdir(f"{d}/{name}/traces")
    write(f"{d}/{name}/traces/{os.path.basename(orig)}", edit)
def sms(n, key="numSms"):
    def f(t):
        t["deviceProperties"][0].pop("numSms")
        t["deviceProperties"][0][key] = n
    return f
run("k132")
run("k132b")
run("k114", sms(114))
run("kmp114", sms(114, "multiProcessorCount"))
run("kmix")
write(f"{d}/kmix/traces/rank1.pt.trace.json.gz", sms(114), 1)
def nrun(name, table, n):
    shutil.copytree(src, f"{d}/{name}", ignore=shutil.ignore_patterns("traces"))
    p = f"{d}/{name}/profile.sqlite"
    shutil.copy(nsys, p)
    os.chmod(p, 0o644)
    db = sqlite3.connect(p)
    if table == "gpu":
        db.execute("CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT, cuDevice INTEGER, smCount INTEGER)")
        for i in (0, 1):
            db.execute("INSERT INTO TARGET_INFO_GPU VALUES (?, ?, ?, ?)",
                       (i, "NVIDIA H100 80GB HBM3", i, n))
    else:
        db.execute("CREATE TABLE TARGET_INFO_CUDA_DEVICE (gpuId INTEGER, cudaId INTEGER, "
                   "pid INTEGER, uuid TEXT, numMultiprocessors INTEGER)")
        for i in (0, 1):
            db.execute("INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (?, ?, ?, ?, ?)",
                       (i, i, 100, "GPU-%d" % i, n))
    db.commit()
    db.close()
nrun("n132", "gpu", 132)
nrun("n114", "gpu", 114)
nrun("c132", "cuda", 132)
nrun("c108", "cuda", 108)
PY

bad=0 n=0
ok() { # label, status
	n=$((n + 1))
	if [ "$2" = 0 ]; then echo "$1: ok"; else echo "$1: FAIL"; bad=$((bad + 1)); fi
}
ab_json() { # A B CODE NEEDLE (NEEDLE "": no context-* warning at all)
	"$TS" ab "$tmp/$1" "$tmp/$2" --json 2>/dev/null | python3 -c '
import json, sys
code, needle = sys.argv[1:]
w = [x for x in json.load(sys.stdin)["warnings"] if x["code"].startswith("context-")]
if not needle:
    sys.exit(1 if w else 0)
hit = [x for x in w if x["code"] == code and needle in x["message"]]
sys.exit(0 if len(hit) == 1 else 1)' "$3" "$4"
}
ab_json k132 k114 context-differs "SM count (132 vs 114)"; ok "ab kineto numSms" $?
ab_json k132 kmp114 context-differs "SM count (132 vs 114)"; ok "ab kineto multiProcessorCount" $?
ab_json n132 n114 context-differs "SM count (132 vs 114)"; ok "ab nsys smCount" $?
ab_json c132 c108 context-differs "SM count (132 vs 108)"; ok "ab nsys numMultiprocessors" $?
ab_json k132 kmix context-mixed "SM count (132 in"; ok "ab mixed side" $?
ab_json k132 k132b "" ""; ok "ab same kineto" $?
ab_json n132 n132 "" ""; ok "ab same nsys" $?
"$TS" ab "$tmp/k132" "$tmp/k114" 2>&1 | grep -q "^warning: the two sides differ in SM count (132 vs 114)"
ok "ab text" $?
for fmt in md html; do
	"$TS" report --baseline "$tmp/k132" --candidate "$tmp/k114" --format $fmt 2>/dev/null |
		grep -q "the two sides differ in SM count (132 vs 114)"
	ok "report --format $fmt" $?
done
diff_json() { # A B WANT_IN_DIFFERS(0/1) SMS_A SMS_B
	"$TS" diff "$1" "$2" --json 2>/dev/null | python3 -c '
import json, sys
want, a, b = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
d = json.load(sys.stdin)
c = d["context"]
w = [x["message"] for x in d["warnings"] if x["code"] == "context-differs"]
ok = ("sm_count" in c["differs"]) == bool(want) and c["baseline"]["sm_count"] == a and \
     c["candidate"]["sm_count"] == b and \
     (any("SM count (%d vs %d)" % (a, b) in m for m in w) == bool(want))
sys.exit(0 if ok else 1)' "$3" "$4" "$5"
}
kt() { ls "$tmp/$1"/traces/*.json.gz | head -1; }
diff_json "$(kt k132)" "$(kt k114)" 1 132 114; ok "diff --json kineto" $?
diff_json "$(kt k132)" "$(kt k132b)" 0 132 132; ok "diff --json same" $?
diff_json "$tmp/n132/profile.sqlite" "$tmp/n114/profile.sqlite" 1 132 114; ok "diff --json nsys" $?
"$TS" diff "$(kt k132)" "$(kt k114)" >"$tmp/diff.txt" 2>&1
grep -Eq "^  SM count +132 +114 +differs" "$tmp/diff.txt"; ok "diff text row" $?
grep -q "^warning: the two sides differ in SM count (132 vs 114)" "$tmp/diff.txt"; ok "diff text warning" $?
hw_json() { # A B SAME(0/1) VERDICT_REFUSED(0/1) NEEDLE [diff options...]
	local a=$1 b=$2 same=$3 refused=$4 needle=$5
	shift 5
	"$TS" diff "$a" "$b" --json "$@" 2>/dev/null | python3 -c '
import json, sys
same, refused, needle = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
d = json.load(sys.stdin)
w = [x["message"] for x in d["warnings"] if x["code"] == "different-hardware"]
ok = d["context"]["same_hardware"] == bool(same) and \
     (d["verdict_reason"] == "refused_different_hardware") == bool(refused) and \
     (len(w) == 0 if same else len(w) == 1 and needle in w[0])
sys.exit(0 if ok else 1)' "$same" "$refused" "$needle"
}
hw_json "$(kt k132)" "$(kt k114)" 0 1 "NVIDIA H200 (132 SMs), candidate on NVIDIA H200 (114 SMs): no speed verdict"
ok "diff --json kineto: not the same hardware" $?
hw_json "$(kt k132)" "$(kt k114)" 0 0 "verdict given on request" --allow-different-hardware
ok "diff --json kineto --allow-different-hardware" $?
hw_json "$tmp/n132/profile.sqlite" "$tmp/n114/profile.sqlite" 0 1 "NVIDIA H100 80GB HBM3 (132 SMs), candidate on NVIDIA H100 80GB HBM3 (114 SMs)"
ok "diff --json nsys: not the same hardware" $?
hw_json "$(kt k132)" "$(kt k132b)" 1 0 ""
ok "diff --json same SM count: same hardware" $?
grep -q "^  different hardware: NVIDIA H200 (132 SMs) vs NVIDIA H200 (114 SMs): no speed verdict" "$tmp/diff.txt"
ok "diff text: different hardware" $?
echo "ab-diff-sm-count: $bad of $n checks wrong"
[ $bad = 0 ]
