#!/usr/bin/env bash
# Every GPU activity name in the shared traces that the taxonomy leaves as
# "other" is listed, reviewed, in tests/scripts/taxonomy-unclassified.txt.
# Fails when a name not on the list is unclassified (a new kernel family:
# add a rule, or add it to the list after review) and when a listed name is
# classified now (drop it from the list). Also pins the issue-13 classes on
# the real traces: the B200 multimem all-reduce is comm, fbgemm permute and
# TBE kernels are embedding, none of them GEMM.
set -u
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
LIST=tests/scripts/taxonomy-unclassified.txt
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
[ -d "$DATA/traces" ] || { echo "skip: no $DATA/traces"; exit 77; }
find "$DATA/traces" -type f \( -name '*.json' -o -name '*.json.gz' \) ! -path '*/tb_plugin/test/*' |
	LC_ALL=C sort | while IFS= read -r f; do
	"$TS" trace --top 1000 --json "$f" 2>/dev/null >"$tmp/one.json" || continue
	python3 - "$tmp/one.json" >>"$tmp/names.tsv" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["ranks"]:
    for k in r["top_kernels"]:
        print(k["class"] + "\t" + k["name"])
PY
done
python3 - "$tmp/names.tsv" "$LIST" <<'PY'
import sys
pairs = set(tuple(l.rstrip("\n").split("\t", 1)) for l in open(sys.argv[1]) if "\t" in l)
listed = set(l.rstrip("\n") for l in open(sys.argv[2]) if l.strip())
other = {n for c, n in pairs if c == "other"}
cls = {}
for c, n in pairs:
    cls.setdefault(n, set()).add(c)
bad = 0
for n in sorted(other - listed):
    print(f"FAIL new unclassified kernel name: {n}"); bad = 1
for n in sorted(listed - other):
    print(f"FAIL listed as unclassified but now {sorted(cls.get(n, {'absent'}))}: {n}"); bad = 1
want = [("multimem_all_reduce_kernel", "comm"), ("fbgemm_gpu::permute_2D_data_kernel", "embedding"),
        ("split_embedding_codegen_forward_", "embedding"), ("permute_2D_lengths_kernel", "embedding")]
for pat, c in want:
    hits = [n for n in cls if pat in n]
    if not hits:
        print(f"FAIL no kernel named like {pat} in the shared traces"); bad = 1
    for n in hits:
        if cls[n] != {c}:
            print(f"FAIL {n[:80]}: {sorted(cls[n])}, want {c}"); bad = 1
gemm_fb = [n for n in cls if "fbgemm" in n.lower() and "gemm" in cls[n]]
for n in gemm_fb:
    print(f"FAIL fbgemm kernel classed as gemm: {n[:100]}"); bad = 1
print(f"{len(cls)} distinct GPU activity names, {len(other)} unclassified (all listed)" if not bad else "taxonomy check failed")
sys.exit(bad)
PY
