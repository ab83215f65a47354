#!/usr/bin/env bash
# An Nsight Systems export cut exactly at a page boundary, from a writer
# that leaves the header's page count 0 or stale (legacy exporters): the
# file is a whole number of pages and the header cannot say it is short.
# Made at test time with python3's sqlite3 module: mfu_2gpu_before.sqlite
# dumped into a fresh database of 1024-byte pages, then
#   whole0   the whole file, page count set to 0
#   cut0     the first 90 % of its pages, page count 0
#   stale    the first 90 % of its pages, the count left at the whole
#            file's with the version-valid-for number behind the change
#            counter (a count SQLite itself ignores)
#   cutvalid the first half, the count left valid (said short by it)
# Expected, by construction: every command that reads an export answers
# the same for the same file. whole0 reads as the untouched file does
# (exit 0, the same kernel summary); cut0, stale and cutvalid are refused
# by trace, trace --json, every trace --report and diff (exit 2), the
# message naming the file and the byte where it ends (the cut size).
# Before 2026-12-05, 50 of the 111 checks wrong: the --reports
# cuda_gpu_kern_sum, cuda_api_sum, cuda_gpu_mem_time_sum,
# cuda_gpu_mem_size_sum and cuda_kern_exec_sum (text and --json) read cut0
# and stale with exit 0 (the rows the cut left: 20 checks) while trace,
# nvtx_sum and diff refused them (exit 2, "NVTX_EVENTS: database disk image
# is malformed"), and no refusal named the byte (30 checks).
set -u
cd "$(dirname "$0")/../.."
TS=${TS:-build/trainscope}
DATA=${DATA:-../shared/data}
SRC=$DATA/nsys/mfu_2gpu_before.sqlite
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
python3 -c 'import sqlite3' 2>/dev/null || { echo "skip: python3 without sqlite3"; exit 77; }
[ -f "$SRC" ] || { echo "skip: no $SRC"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 - "$TS" "$tmp" "$SRC" <<'PY'
import os, sqlite3, struct, subprocess, sys

ts, tmp, src = sys.argv[1:]
PAGE = 1024
fails, checks = [], 0

def check(case, what, cond, detail=""):
    global checks
    checks += 1
    if not cond:
        fails.append("%s: %s %s" % (case, what, detail[:300]))

full = os.path.join(tmp, "full.sqlite")
s = sqlite3.connect("file:%s?mode=ro" % src, uri=True)
d = sqlite3.connect(full)
d.execute("PRAGMA page_size = %d" % PAGE)
# the schema first, as Nsight Systems writes it (sqlite_master stays in
# the first pages), then the rows, NVTX_EVENTS' last: a cut in the last
# pages leaves the string table and the GPU tables whole; all in one
# transaction (one write of the file, not one per row)
dump = [l for l in s.iterdump() if l not in ("BEGIN TRANSACTION;", "COMMIT;")]
nvtx = 'INSERT INTO "NVTX_EVENTS"'
d.executescript("BEGIN;\n" + "\n".join([l for l in dump if l.startswith("CREATE")] +
                                        [l for l in dump if not l.startswith(("CREATE", nvtx))] +
                                        [l for l in dump if l.startswith(nvtx)]) + "\nCOMMIT;")
d.commit()
d.close()
s.close()
img = open(full, "rb").read()
assert struct.unpack(">H", img[16:18])[0] == PAGE and len(img) % PAGE == 0
pages = len(img) // PAGE
assert struct.unpack(">I", img[28:32])[0] == pages

def variant(name, npages, count, stale):
    h = bytearray(img[:npages * PAGE])
    h[28:32] = struct.pack(">I", count)
    if stale:  # version-valid-for behind the change counter
        change = struct.unpack(">I", h[24:28])[0]
        h[24:28] = struct.pack(">I", change + 1)
    p = os.path.join(tmp, name + ".sqlite")
    open(p, "wb").write(h)
    return p, npages * PAGE

cases = {
    "whole0": variant("whole0", pages, 0, False),
    "cut0": variant("cut0", pages * 9 // 10, 0, False),
    "stale": variant("stale", pages * 9 // 10, pages, True),
    "cutvalid": variant("cutvalid", pages // 2, pages, False),
}
reports = ["cuda_gpu_kern_sum", "cuda_api_sum", "cuda_gpu_mem_time_sum",
           "cuda_gpu_mem_size_sum", "nvtx_sum", "cuda_kern_exec_sum"]
commands = [["trace"], ["trace", "--json"]] + [["trace", "--report", r] for r in reports] + \
           [["trace", "--report", r, "--json"] for r in reports]

def run(args):
    p = subprocess.run([ts] + args, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr

for case, (p, size) in cases.items():
    whole = case == "whole0"
    for c in commands + [["diff", full, "CUT"]]:
        args = [p if a == "CUT" else a for a in c] + ([] if c[0] == "diff" else [p])
        rc, out, err = run(args)
        what = " ".join(c[:3])
        if whole:
            check(case, what + " exit 0", rc == 0, "rc %d: %s" % (rc, err))
        else:
            check(case, what + " exit 2", rc == 2, "rc %d" % rc)
            check(case, what + " names the file and byte %d" % size,
                  p in err and ("byte %d" % size) in err, err)
for r in reports:
    a, b = run(["trace", "--report", r, full]), run(["trace", "--report", r, cases["whole0"][0]])
    check("whole0", r + " as the untouched file", a[0] == 0 and a[1] == b[1])
print("nsys-page-cut: %d of %d checks wrong" % (len(fails), checks))
for f in fails:
    print("  " + f)
sys.exit(1 if fails else 0)
PY
