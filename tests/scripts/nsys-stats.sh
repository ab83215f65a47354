#!/usr/bin/env bash
# `trainscope trace --report NAME --csv` on every shared Nsight Systems export
# equals an independent Python implementation of the nsys stats definitions
# (python3's sqlite3 module over the same tables: median = middle value or
# mean of the two middle ones, sample standard deviation, round half away
# from zero to 0.1, Time % of the listed rows, nsys's row order), byte for
# byte. Also: the robustness cases of issue 16 (a non-nsys SQLite file, a
# truncated export, an export without the KERNEL table, NULL end values)
# give exit 2 with a clear message or a capability report, never a crash.
set -u
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
python3 -c 'import sqlite3' 2>/dev/null || { echo "python3 without sqlite3"; exit 77; }
ls "$DATA"/nsys/*.sqlite >/dev/null 2>&1 || { echo "no $DATA/nsys"; exit 77; }
status=0

cat >"$tmp/ref.py" <<'PY'
import csv, io, math, sqlite3, statistics, sys

db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
rep = sys.argv[2]
S = dict(db.execute("SELECT id, value FROM StringIds"))

def r1(x):
    return math.floor(x * 10 + 0.5) / 10 if x >= 0 else -math.floor(-x * 10 + 0.5) / 10

def stats(v):
    v = sorted(v)
    n = len(v)
    med = v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2
    sd = statistics.stdev(v) if n > 1 else 0.0
    return sum(v), n, sum(v) / n, med, v[0], v[-1], sd

def f1(x):
    return "%.1f" % r1(x)

def api_name(s):
    return s[:-6] if len(s) >= 6 and s[-6:-4] == "_v" else s

out = io.StringIO()
w = csv.writer(out, lineterminator="\n")
groups = {}
def add(k, v):
    groups.setdefault(k, []).append(v)

if rep in ("cuda_gpu_kern_sum", "cuda_api_sum", "cuda_gpu_mem_time_sum", "nvtx_sum"):
    if rep == "cuda_gpu_kern_sum":
        for d, n in db.execute("SELECT end-start, demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL"):
            add((S[n],), d)
        head = ["Time (%)", "Total Time (ns)", "Instances", "Avg (ns)", "Med (ns)", "Min (ns)", "Max (ns)", "StdDev (ns)", "Name"]
    elif rep == "cuda_api_sum":
        for d, n in db.execute("SELECT end-start, nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME"):
            add((api_name(S[n]),), d)
        head = ["Time (%)", "Total Time (ns)", "Num Calls", "Avg (ns)", "Med (ns)", "Min (ns)", "Max (ns)", "StdDev (ns)", "Name"]
    elif rep == "cuda_gpu_mem_time_sum":
        lab = dict(db.execute("SELECT id, label FROM ENUM_CUDA_MEMCPY_OPER"))
        for d, k in db.execute("SELECT end-start, copyKind FROM CUPTI_ACTIVITY_KIND_MEMCPY"):
            add(("[CUDA memcpy %s]" % lab[k],), d)
        for (d,) in db.execute("SELECT end-start FROM CUPTI_ACTIVITY_KIND_MEMSET"):
            add(("[CUDA memset]",), d)
        head = ["Time (%)", "Total Time (ns)", "Count", "Avg (ns)", "Med (ns)", "Min (ns)", "Max (ns)", "StdDev (ns)", "Operation"]
    else:
        mx = db.execute("SELECT max(max(start), max(end)) FROM NVTX_EVENTS").fetchone()[0]
        doms = {}
        for dom, t, ti in db.execute("SELECT domainId, text, textId FROM NVTX_EVENTS WHERE eventType = 75"):
            doms.setdefault(dom, t if t is not None else S.get(ti))
        for s, e, ty, dom, t, ti in db.execute("SELECT start, end, eventType, domainId, text, textId FROM NVTX_EVENTS"):
            if ty not in (59, 60, 70, 71):
                continue
            name = (doms[dom] + ":" if dom in doms else "") + (t if t is not None else S.get(ti, ""))
            add((name, "PushPop" if ty in (59, 70) else "StartEnd"), (e if e is not None else mx) - s)
        head = ["Time (%)", "Total Time (ns)", "Instances", "Avg (ns)", "Med (ns)", "Min (ns)", "Max (ns)", "StdDev (ns)", "Style", "Range"]
    rows = [(k, stats(v)) for k, v in groups.items()]
    alltot = sum(s[0] for _, s in rows)
    if rep == "cuda_gpu_kern_sum":
        rows.sort(key=lambda r: (-r[1][0], r[1][1], r[0][0].encode()))
    else:
        rows.sort(key=lambda r: (-r[1][0], r[0][0].encode(), r[0][1].encode() if len(r[0]) > 1 else b""))
    w.writerow(head)
    for k, s in rows:
        w.writerow([f1(s[0] * 100.0 / alltot), s[0], s[1], f1(s[2]), f1(s[3]), s[4], s[5], f1(s[6])] +
                   ([k[1], k[0]] if rep == "nvtx_sum" else [k[0]]))
elif rep == "cuda_gpu_mem_size_sum":
    lab = dict(db.execute("SELECT id, label FROM ENUM_CUDA_MEMCPY_OPER"))
    for b, k in db.execute("SELECT bytes, copyKind FROM CUPTI_ACTIVITY_KIND_MEMCPY"):
        add("[CUDA memcpy %s]" % lab[k], b)
    for (b,) in db.execute("SELECT bytes FROM CUPTI_ACTIVITY_KIND_MEMSET"):
        add("[CUDA memset]", b)
    rows = sorted(((k, stats(v)) for k, v in groups.items()), key=lambda r: (-r[1][0], r[0].encode()))
    w.writerow(["Total (MB)", "Count", "Avg (MB)", "Med (MB)", "Min (MB)", "Max (MB)", "StdDev (MB)", "Operation"])
    for k, s in rows:
        w.writerow(["%.3f" % (s[0] / 1e6), s[1]] + ["%.3f" % (x / 1e6) for x in (s[2], s[3], s[4], s[5], s[6])] + [k])
elif rep == "cuda_kern_exec_sum":
    rt = {}
    for gt, c, s, e, n in db.execute("SELECT globalTid, correlationId, start, end, nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME"):
        rt.setdefault((gt & ~0xFFFFFF, c), []).append((gt, s, e, n))
    g = {}
    for gp, c, ks, ke, dev, n in db.execute("SELECT globalPid, correlationId, start, end, deviceId, demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL"):
        for gt, s, e, an in rt.get((gp, c), []):
            k = ((gt >> 24) & 0xFFFFFF, gt & 0xFFFFFF, dev, api_name(S[an]), S[n])
            a = g.setdefault(k, ([], [], [], []))
            a[0].append(max(e, ke) - s); a[1].append(e - s)
            if ks - e >= 0:
                a[2].append(ks - e)
            a[3].append(ke - ks)
    rows = []
    for k, a in g.items():
        rows.append((k, [stats(x) if x else None for x in a]))
    rows.sort(key=lambda r: (-r[1][0][2], r[0][0], r[0][1], r[0][2], r[0][4].encode(), r[0][3].encode()))
    h = ["PID", "TID", "DevId", "Count", "QCount"]
    for p in "TAQK":
        h += ["%s%s (ns)" % (p, x) for x in ("Avg", "Med", "Min", "Max", "StdDev")]
    w.writerow(h + ["API Name", "Kernel Name"])
    for k, st in rows:
        cells = [k[0], k[1], k[2], st[3][1], st[2][1] if st[2] else 0]
        for s in st:
            cells += ["", "", "", "", ""] if s is None else [f1(s[2]), f1(s[3]), s[4], s[5], f1(s[6])]
        w.writerow(cells + [k[3], k[4]])
sys.stdout.write(out.getvalue())
PY

for f in "$DATA"/nsys/*.sqlite; do
	for rep in cuda_gpu_kern_sum cuda_api_sum cuda_gpu_mem_time_sum cuda_gpu_mem_size_sum nvtx_sum cuda_kern_exec_sum; do
		python3 "$tmp/ref.py" "$f" "$rep" >"$tmp/want.csv" || { echo "FAIL reference script on $f $rep"; status=1; continue; }
		if ! "$TS" trace --report "$rep" --csv "$f" >"$tmp/got.csv"; then
			echo "FAIL $(basename "$f") $rep: trainscope exited non-zero"
			status=1
		elif ! cmp -s "$tmp/want.csv" "$tmp/got.csv"; then
			echo "FAIL $(basename "$f") $rep: differs from the reference"
			diff "$tmp/want.csv" "$tmp/got.csv" | head -6
			status=1
		fi
	done
done

# NCCL by NVTX projection: kernels whose launch (same process, same
# correlationId) starts inside an NCCL NVTX range (ncclSend, ncclGroupEnd,
# ...) of the launching thread, per (process, device), against trace --json
cat >"$tmp/proj.py" <<'PY'
import json, re, sqlite3, sys
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
got = json.load(open(sys.argv[2]))
S = dict(db.execute("SELECT id, value FROM StringIds"))
rng = {}
for s, e, t, ti, gt in db.execute("SELECT start, end, text, textId, globalTid FROM NVTX_EVENTS WHERE end IS NOT NULL"):
    n = t if t is not None else S.get(ti, "")
    if re.match(r"nccl[A-Z]", n):
        rng.setdefault(gt & 0xFFFFFFFFFFFF, []).append((s, e))
rt = {}
for gt, c, s in db.execute("SELECT globalTid, correlationId, start FROM CUPTI_ACTIVITY_KIND_RUNTIME"):
    rt[(gt & ~0xFFFFFF, c)] = (gt & 0xFFFFFFFFFFFF, s)
want = {}
for gp, dev, c in db.execute("SELECT globalPid, deviceId, correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL"):
    l = rt.get((gp, c))
    k = ((gp >> 24) & 0xFFFFFF, dev)
    want.setdefault(k, 0)
    if l and any(a <= l[1] < b for a, b in rng.get(l[0], [])):
        want[k] += 1
have = {(r["pid"], r["device"]): r["nccl_nvtx_kernels"] for f in got["nsys"] for r in f["ranks"]}
if want != have:
    print("FAIL NCCL NVTX projection of %s: want %s, got %s" % (sys.argv[1], want, have))
    sys.exit(1)
PY
for f in "$DATA"/nsys/*.sqlite; do
	"$TS" trace --json --quiet "$f" >"$tmp/t.json" && python3 "$tmp/proj.py" "$f" "$tmp/t.json" || status=1
done

# robustness: each case exits 2 with a message naming the file, or reports
expect() { # name, want_exit, want_text, command...
	local name=$1 want=$2 text=$3
	shift 3
	"$@" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	if [ "$rc" != "$want" ] || ! grep -q -- "$text" "$tmp/out" "$tmp/err"; then
		echo "FAIL $name: exit $rc (want $want), output:"
		head -5 "$tmp/out" "$tmp/err"
		status=1
	fi
}
src=$DATA/nsys/mfu_2gpu_before.sqlite
head -c 1048576 "$src" >"$tmp/cut.sqlite"
expect truncated 2 "truncated export" "$TS" trace "$tmp/cut.sqlite"
expect truncated-report 2 "truncated export" "$TS" trace --report cuda_gpu_kern_sum "$tmp/cut.sqlite"
python3 - "$tmp" "$src" <<'PY'
import sqlite3, sys
tmp, src = sys.argv[1], sys.argv[2]
o = sqlite3.connect(tmp + "/other.sqlite"); o.execute("CREATE TABLE t(a)"); o.commit(); o.close()
s = sqlite3.connect("file:%s?mode=ro" % src, uri=True)
for name, sql in (("nokernel", "DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL"),
                  ("nullend", "CREATE TABLE k2 AS SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL;"
                   " DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL;"
                   " ALTER TABLE k2 RENAME TO CUPTI_ACTIVITY_KIND_KERNEL;"
                   " UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = NULL WHERE rowid % 10 = 0"),
                  ("reversed", "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = start - 5 WHERE rowid % 100 = 0;"
                   " UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = 4611686018427387904,"
                   " end = 4611686018427387905 WHERE rowid = 7"),
                  ("nostrings", "DELETE FROM StringIds WHERE id % 2 = 0"),
                  ("gpuonly", "DROP TABLE CUPTI_ACTIVITY_KIND_RUNTIME; DROP TABLE NVTX_EVENTS"),
                  ("empty", "DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL; DROP TABLE CUPTI_ACTIVITY_KIND_MEMCPY; DROP TABLE CUPTI_ACTIVITY_KIND_MEMSET")):
    d = sqlite3.connect(tmp + "/" + name + ".sqlite")
    s.backup(d)
    d.executescript(sql)
    d.commit()
    d.execute("VACUUM")
    d.close()
PY
expect not-nsys 2 "not an Nsight Systems export" "$TS" trace "$tmp/other.sqlite"
expect no-kernel-trace 0 "kernels (no CUPTI_ACTIVITY_KIND_KERNEL table)" "$TS" trace "$tmp/nokernel.sqlite"
expect no-kernel-report 2 "no CUDA kernel data" "$TS" trace --report cuda_gpu_kern_sum "$tmp/nokernel.sqlite"
expect null-end 0 "401 CUPTI_ACTIVITY_KIND_KERNEL row(s) with a NULL start or end, an end before the start, or a time beyond 2^61 ns skipped" "$TS" trace "$tmp/nullend.sqlite"
# rows with an end before the start (every 100th) or a time beyond 2^61 ns
# (row 7): trace and --report leave out the same rows and both say so
nrev=$(python3 -c "
import sqlite3, sys
d = sqlite3.connect(sys.argv[1])
print(d.execute('SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid % 100 = 0 OR rowid = 7').fetchone()[0])" "$tmp/reversed.sqlite")
msg="$nrev CUPTI_ACTIVITY_KIND_KERNEL row(s) with a NULL start or end, an end before the start, or a time beyond 2^61 ns skipped"
expect reversed 0 "$msg" "$TS" trace "$tmp/reversed.sqlite"
expect reversed-report 0 "$msg" "$TS" trace --report cuda_gpu_kern_sum "$tmp/reversed.sqlite"
"$TS" trace --report cuda_gpu_kern_sum --json "$tmp/reversed.sqlite" >"$tmp/rev.json" 2>/dev/null
python3 - "$tmp/rev.json" "$tmp/reversed.sqlite" "$nrev" <<'PY' || { echo "FAIL reversed-report-json"; status=1; }
import json, sqlite3, sys
d = json.load(open(sys.argv[1]))
db = sqlite3.connect(sys.argv[2])
total = db.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
used = sum(r["instances"] for r in d["rows"])
assert used == total - int(sys.argv[3]), (used, total, sys.argv[3])
assert [w["code"] for w in d["warnings"]] == ["null-times"], d["warnings"]
assert all(r["min_ns"] >= 0 for r in d["rows"]), "a negative duration was counted"
PY
# a kernel whose demangled name is lost is named by its short name, as the
# trace model names it (flash_fwd_kernel's demangled id is even)
expect half-strings 0 "flash_fwd_kernel$" "$TS" trace --report cuda_gpu_kern_sum --csv "$tmp/nostrings.sqlite"
expect gpu-only 0 "cannot answer: CUDA API calls (no RUNTIME table)" "$TS" trace "$tmp/gpuonly.sqlite"
expect no-gpu-activity 2 "without GPU activity" "$TS" trace "$tmp/empty.sqlite"
expect no-gpu-activity-report 0 "cudaLaunchKernel" "$TS" trace --report cuda_api_sum --csv "$tmp/empty.sqlite"
expect bad-regex 2 "invalid regular expression" "$TS" trace --step-nvtx '([' "$src"
expect bad-report 2 "unknown report" "$TS" trace --report nope "$src"
# validate reads backend evidence from an export in the run directory
run=$tmp/run
mkdir -p "$run"
cp "$DATA/traces/cpu/a_dense/metrics_rank0.jsonl" "$src" "$run/"
expect validate-backend 0 "the trace shows attention flash" "$TS" validate --accept-auto-window "$run"
exit $status
