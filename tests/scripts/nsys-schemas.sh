#!/usr/bin/env bash
# Nsight Systems exports as users hand them over: other schema versions,
# partial captures, damaged files. Each variant is made at test time from
# mfu_2gpu_before.sqlite with python3's sqlite3 module (columns and tables
# dropped, rows deleted or moved to other processes and hosts, unknown
# tables added, the file cut mid-page or a page zeroed); what it must give
# is computed here in Python from the rows the variant kept, never from
# trainscope's output. Every nsys-consuming command runs on each: `trace`
# (text and --json), the `--report`s, `diagnose` on a directory holding
# the variant, its HTML `report`, `diff` against the original. A partial capture must be
# analysed with a warning that reaches every output; a file that cannot be
# read must be exit 2 with the file and what is missing named.
set -u
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
SRC=$DATA/nsys/mfu_2gpu_before.sqlite
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
python3 -c 'import sqlite3' 2>/dev/null || { echo "skip: python3 without sqlite3"; exit 77; }
[ -f "$SRC" ] || { echo "skip: no $SRC"; exit 77; }
python3 - "$TS" "$tmp" "$SRC" <<'PY'
import json, os, shutil, sqlite3, subprocess, sys

ts, tmp, src = sys.argv[1], sys.argv[2], sys.argv[3]
K, R, N = "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS"
OK = "typeof(start) = 'integer' AND typeof(end) = 'integer' AND end >= start"
fails, checks = [], 0

def check(case, what, cond, detail=""):
    global checks
    checks += 1
    if not cond:
        fails.append("%s: %s %s" % (case, what, detail))

def make(name, edit):
    p = os.path.join(tmp, name + ".sqlite")
    s = sqlite3.connect("file:%s?mode=ro" % src, uri=True)
    d = sqlite3.connect(p)
    s.backup(d)
    s.close()
    edit(d)
    d.commit()
    d.close()
    return p

def q(p, sql, *a):
    c = sqlite3.connect("file:%s?mode=ro" % p, uri=True)
    r = c.execute(sql, a).fetchall()
    c.close()
    return r

def run(*args):
    p = subprocess.run([ts] + list(args), capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr

def js(*args):
    rc, out, err = run(*args)
    try:
        return rc, json.loads(out), err
    except ValueError:
        return rc, None, err

def codes(doc):
    return {w["code"]: w["message"] for w in (doc or {}).get("warnings", [])}

def in_dir(name, p):
    d = os.path.join(tmp, "run_" + name)
    os.makedirs(d)
    shutil.copy(p, d)
    return d

def warned_everywhere(case, p, code, needle):
    """code's warning, holding needle, in trace text and --json, diagnose
    text and --json, the HTML report, and diff --json"""
    rc, doc, _ = js("trace", "--json", p)
    check(case, "trace --json warning " + code, needle in codes(doc).get(code, ""), str(codes(doc))[:300])
    rc, out, _ = run("trace", p)
    check(case, "trace text warning " + code, any(needle in l for l in out.splitlines() if l.startswith("warning:")))
    d = in_dir(case + code, p)
    rc, doc, _ = js("diagnose", "--json", d)
    check(case, "diagnose --json warning " + code, needle in codes(doc).get(code, ""), str(codes(doc))[:300])
    rc, out, _ = run("diagnose", d)
    check(case, "diagnose text warning " + code, needle in out)
    html = os.path.join(tmp, case + code + ".html")
    rc, out, _ = run("report", d, "-o", html)
    check(case, "report HTML warning " + code, rc == 0 and needle in open(html).read())
    rc, doc, _ = js("diff", "--json", src, p)
    check(case, "diff --json warning " + code, needle in codes(doc).get(code, ""), str(codes(doc))[:300])

def report(p, name):
    return js("trace", "--report", name, "--json", p)

def total(doc, key):
    return sum(r[key] for r in doc["rows"])

def ranks(doc):
    return sorted((r["pid"], r["device"], r["walls"]["kernels"], r["walls"]["kernel_sum_ns"])
                  for x in doc["nsys"] for r in x["ranks"])

def truth_ranks(p):
    """(pid, device, kernels, summed ns) per (globalPid, device) with a GPU row"""
    per = {}
    for g, dev, n, s in q(p, "SELECT globalPid, deviceId, count(*), sum(end - start) FROM %s WHERE %s GROUP BY 1, 2" % (K, OK)):
        per[(g, dev)] = (n, s)
    for t in ("CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"):
        for g, dev in q(p, "SELECT DISTINCT globalPid, deviceId FROM %s WHERE %s" % (t, OK)):
            per.setdefault((g, dev), (0, 0))
    return sorted(((g >> 24) & 0xFFFFFF, dev, n, s) for (g, dev), (n, s) in per.items())

def launches(p):
    """kernel launch calls by name, as a user would count them"""
    names = dict(q(p, "SELECT id, value FROM StringIds"))
    n = 0
    for (i,) in q(p, "SELECT nameId FROM %s" % R):
        v = names.get(i, "")
        if (v.startswith(("cudaLaunch", "cuLaunch", "cudaGraphLaunch", "cuGraphLaunch"))
                and "HostFunc" not in v):
            n += 1
    return n

usable_k = q(src, "SELECT count(*) FROM %s WHERE %s" % (K, OK))[0][0]
usable_r = q(src, "SELECT count(*) FROM %s WHERE %s" % (R, OK))[0][0]

# 1. an export whose KERNEL names only shortName (no demangledName column)
case = "short-names"
p = make(case, lambda d: d.execute("ALTER TABLE %s DROP COLUMN demangledName" % K))
want = {}
for name, n, s in q(p, "SELECT s.value, count(*), sum(k.end - k.start) FROM %s k JOIN StringIds s ON s.id = k.shortName WHERE %s GROUP BY 1" % (K, OK.replace("start", "k.start").replace("end", "k.end"))):
    want[name] = (n, s)
rc, doc, err = report(p, "cuda_gpu_kern_sum")
got = {r["name"]: (r["instances"], r["total_ns"]) for r in (doc or {"rows": []})["rows"]}
check(case, "kern_sum by shortName", rc == 0 and got == want, "%d names vs %d" % (len(got), len(want)))

# 2. names lost from StringIds: both names of the most frequent kernel, the
# demangled name of the second (its short name stays), one runtime name
case = "lost-names"
(k1, s1), (k2, s2) = q(src, "SELECT demangledName, shortName FROM %s GROUP BY 1 ORDER BY count(*) DESC LIMIT 2" % K)
rid = q(src, "SELECT nameId, count(*) FROM %s GROUP BY 1 ORDER BY 2 DESC LIMIT 1" % R)[0][0]
p = make(case, lambda d: d.execute("DELETE FROM StringIds WHERE id IN (?, ?, ?, ?)", (k1, s1, k2, rid)))
strings = dict(q(p, "SELECT id, value FROM StringIds"))
want = {}
for dn, sn, dur in q(p, "SELECT demangledName, shortName, end - start FROM %s WHERE %s" % (K, OK)):
    name = strings.get(dn) or strings.get(sn) or "(unnamed kernel)"
    n, t = want.get(name, (0, 0))
    want[name] = (n + 1, t + dur)
lost_k = q(p, "SELECT count(*) FROM %s WHERE %s AND demangledName = ? AND shortName = ?" % (K, OK), k1, s1)[0][0]
lost_r = q(p, "SELECT count(*) FROM %s WHERE %s AND nameId = ?" % (R, OK), rid)[0][0]
rc, doc, err = report(p, "cuda_api_sum")
check(case, "cuda_api_sum keeps every call", rc == 0 and total(doc, "calls") == usable_r,
      "%s vs %d" % (doc and total(doc, "calls"), usable_r))
check(case, "cuda_api_sum warns", "%d CUPTI_ACTIVITY_KIND_RUNTIME row(s) name a string id" % lost_r in codes(doc).get("unnamed-rows", ""))
rc, doc, err = report(p, "cuda_gpu_kern_sum")
got = {r["name"]: (r["instances"], r["total_ns"]) for r in (doc or {"rows": []})["rows"]}
check(case, "kern_sum by demangled, else short name", rc == 0 and got == want,
      str(set(got.items()) ^ set(want.items()))[:300])
check(case, "kern_sum warns", "%d CUPTI_ACTIVITY_KIND_KERNEL row(s)" % lost_k in codes(doc).get("unnamed-rows", ""))
rc, out, err = run("trace", "--report", "cuda_api_sum", "--csv", p)
check(case, "cuda_api_sum --csv warns on stderr", "%d CUPTI_ACTIVITY_KIND_RUNTIME row(s)" % lost_r in err)
warned_everywhere(case, p, "unnamed-rows", "%d CUPTI_ACTIVITY_KIND_RUNTIME row(s)" % lost_r)

# 3. kernels without any CUDA API rows (RUNTIME not captured)
case = "no-runtime"
p = make(case, lambda d: d.execute("DROP TABLE %s" % R))
rc, doc, err = js("trace", "--json", p)
check(case, "trace reads it", rc == 0 and ranks(doc) == truth_ranks(p))
warned_everywhere(case, p, "no-launch-data", "%d kernels and no launch" % usable_k)
rc, out, err = run("trace", "--report", "cuda_kern_exec_sum", p)
check(case, "kern_exec_sum exit 2 naming file and table", rc == 2 and p in err and R in err, err)
rc, out, err = run("diagnose", in_dir(case + "-delay", p))
check(case, "diagnose does not print a launch delay it did not measure",
      "launch delay unknown" in out and "launch delay p50" not in out)

# 4. launch calls, but the kernel rows lost (the GPU side of the capture)
case = "no-kernel-rows"
p = make(case, lambda d: d.execute("DELETE FROM %s" % K))
nl = launches(p)
warned_everywhere(case, p, "kernels-missing", "%d kernel launch call(s)" % nl)
rc, doc, err = report(p, "cuda_gpu_kern_sum")
check(case, "kern_sum warns", "%d kernel launch call(s)" % nl in codes(doc).get("kernels-missing", ""))

# 5. KERNEL without globalPid: kernels cannot be put in their process
case = "no-globalPid"
p = make(case, lambda d: d.execute("ALTER TABLE %s DROP COLUMN globalPid" % K))
warned_everywhere(case, p, "no-process", "%d %s row(s) have no process" % (usable_k, K))
rc, out, err = run("trace", "--report", "cuda_kern_exec_sum", p)
check(case, "kern_exec_sum exit 2 naming file and column", rc == 2 and p in err and "globalPid" in err
      and "corrupt" not in err, err)
rc, doc, err = report(p, "cuda_gpu_kern_sum")
check(case, "kern_sum still right", rc == 0 and total(doc, "instances") == usable_k)

# 5b. KERNEL with globalPid 0 (a default written for a missing value)
case = "zero-globalPid"
p = make(case, lambda d: d.execute("UPDATE %s SET globalPid = 0" % K))
rc, doc, err = js("trace", "--json", p)
check(case, "ranks per (process, device)", rc == 0 and ranks(doc) == truth_ranks(p), "%s vs %s" % (doc and ranks(doc), truth_ranks(p)))
warned_everywhere(case, p, "no-process", "%d %s row(s) have no process" % (usable_k, K))

# 6. no CUDA trace at all (nsys -t nvtx,osrt)
case = "no-cuda"
def nocuda(d):
    for (t,) in list(d.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'CUPTI_%'")):
        d.execute('DROP TABLE "%s"' % t)
p = make(case, nocuda)
rc, out, err = run("trace", p)
check(case, "trace exit 2 naming file", rc == 2 and p in err and "without GPU activity" in err, err)
rc, out, err = run("trace", "--report", "cuda_gpu_kern_sum", p)
check(case, "kern_sum exit 2 naming file and table", rc == 2 and p in err and K in err, err)
nvtx = q(p, "SELECT count(*) FROM %s WHERE start IS NOT NULL AND eventType IN (59, 60, 70, 71)" % N)[0][0]
rc, doc, err = report(p, "nvtx_sum")
check(case, "nvtx_sum reads it", rc == 0 and total(doc, "instances") == nvtx)
d = in_dir(case, p)
rc, doc, err = js("diagnose", "--json", d)
check(case, "diagnose says the export is not used", p.split("/")[-1] in codes(doc).get("unused-input", "")
      and "without GPU activity" in codes(doc).get("unused-input", ""), str(codes(doc))[:300])
rc, out, err = run("diagnose", p)
check(case, "diagnose on the file exit 2 naming it", rc == 2 and p in err, err)

# 7. no NVTX
case = "no-nvtx"
p = make(case, lambda d: d.execute("DROP TABLE %s" % N))
rc, out, err = run("trace", "--report", "nvtx_sum", p)
check(case, "nvtx_sum exit 2 naming file and table", rc == 2 and p in err and N in err, err)
rc, doc, err = js("trace", "--json", p)
check(case, "trace reads it", rc == 0 and ranks(doc) == truth_ranks(p))

# 7b. NVTX_EVENTS without eventType: ranges cannot be told from marks
case = "nvtx-no-eventType"
p = make(case, lambda d: d.execute("ALTER TABLE %s DROP COLUMN eventType" % N))
rc, out, err = run("trace", "--report", "nvtx_sum", p)
check(case, "nvtx_sum exit 2 naming file and column", rc == 2 and p in err and "eventType" in err, err)
rc, doc, err = js("trace", "--json", p)
check(case, "trace does not claim NVTX ranges", rc == 0 and doc["nsys"][0]["capabilities"]["nvtx"] is False)

# 7c. NVTX ranges whose end is 0 (older exports wrote a default, not NULL,
# for a missing value): left out and counted, never a negative duration
case = "nvtx-end-0"
p = make(case, lambda d: d.execute("UPDATE %s SET end = 0 WHERE rowid %% 50 = 0 AND eventType = 59" % N))
bad = q(p, "SELECT count(*) FROM %s WHERE eventType IN (59, 60, 70, 71) AND end < start" % N)[0][0]
last = q(p, "SELECT max(max(start), max(end)) FROM %s" % N)[0][0]
n_ok, t_ok = 0, 0
for st, en in q(p, "SELECT start, end FROM %s WHERE start IS NOT NULL AND eventType IN (59, 60, 70, 71)" % N):
    en = last if en is None else en
    if en >= st:
        n_ok, t_ok = n_ok + 1, t_ok + en - st
rc, doc, err = report(p, "nvtx_sum")
check(case, "nvtx_sum counts the usable ranges", rc == 0 and (total(doc, "instances"), total(doc, "total_ns")) == (n_ok, t_ok),
      "%s vs %s" % (doc and (total(doc, "instances"), total(doc, "total_ns")), (n_ok, t_ok)))
msg = "%d NVTX_EVENTS row(s) with a NULL start or end, an end before the start" % bad
check(case, "nvtx_sum warns", msg in codes(doc).get("null-times", ""), str(codes(doc))[:200])
warned_everywhere(case, p, "null-times", msg)

# 8. one process's kernels split into two processes; 9. a second host
case = "split-process"
def split(d):
    g = d.execute("SELECT min(globalPid) FROM %s" % K).fetchone()[0]
    s = d.execute("SELECT streamId FROM %s WHERE globalPid = ? GROUP BY 1 ORDER BY count(*) DESC LIMIT 1" % K, (g,)).fetchone()[0]
    d.execute("UPDATE %s SET globalPid = globalPid + (1000 << 24) WHERE globalPid = ? AND streamId = ?" % K, (g, s))
p = make(case, split)
rc, doc, err = js("trace", "--json", p)
check(case, "ranks per (process, device)", rc == 0 and ranks(doc) == truth_ranks(p), "%s vs %s" % (doc and ranks(doc), truth_ranks(p)))
case = "two-hosts"
def host(d):
    cols = [r[1] for r in d.execute("PRAGMA table_info(%s)" % K)]
    gi = cols.index("globalPid")
    rows = [list(r) for r in d.execute("SELECT * FROM %s" % K)]
    for r in rows:
        r[gi] += 1 << 56   # same pids, another hardware id
    d.executemany("INSERT INTO %s VALUES (%s)" % (K, ",".join("?" * len(cols))), rows)
p = make(case, host)
rc, doc, err = js("trace", "--json", p)
check(case, "ranks per (host, process, device)", rc == 0 and ranks(doc) == truth_ranks(p), "%s vs %s" % (doc and ranks(doc), truth_ranks(p)))
rc, doc, err = report(p, "cuda_gpu_kern_sum")
check(case, "kern_sum counts both hosts", rc == 0 and total(doc, "instances") == 2 * usable_k)

# 10. GPU metrics, NIC and CUDA device tables the reader does not use
case = "extra-tables"
def extra(d):
    d.execute("CREATE TABLE GPU_METRICS (timestamp INTEGER, typeId INTEGER, metricId INTEGER, value INTEGER)")
    d.execute("INSERT INTO GPU_METRICS VALUES (60111418026, 1, 2, 3)")
    d.execute("CREATE TABLE NIC_ID_MAP (nicId INTEGER, name TEXT)")
    d.execute("CREATE TABLE TARGET_INFO_CUDA_DEVICE (gpuId INTEGER, cudaId INTEGER, pid INTEGER, uuid TEXT, numMultiprocessors INTEGER)")
p = make(case, extra)
a = run("trace", "--json", src)[1]
b = run("trace", "--json", p)[1].replace(p, src)
check(case, "trace --json as the original's", a == b)

# 11. NVTX texts inline only (no textId column)
case = "inline-nvtx"
def inline(d):
    d.execute("UPDATE %s SET text = (SELECT value FROM StringIds WHERE id = textId) WHERE textId IS NOT NULL" % N)
    d.execute("ALTER TABLE %s DROP COLUMN textId" % N)
p = make(case, inline)
a = run("trace", "--report", "nvtx_sum", "--csv", src)[1]
b = run("trace", "--report", "nvtx_sum", "--csv", p)[1]
check(case, "nvtx_sum as the original's", a == b)

# 11b. an empty inline text next to a textId (a default written for a
# missing value): the range is named through textId
case = "empty-text"
p = make(case, lambda d: d.execute("UPDATE %s SET text = '' WHERE textId IS NOT NULL" % N))
a = run("trace", "--report", "nvtx_sum", "--csv", src)[1]
b = run("trace", "--report", "nvtx_sum", "--csv", p)[1]
check(case, "nvtx_sum as the original's", a == b)
a = run("trace", "--json", src)[1]
b = run("trace", "--json", p)[1].replace(p, src)
check(case, "trace --json as the original's", a == b)

# 12. damaged files: cut mid-page, a zeroed page
size = os.path.getsize(src)
data = open(src, "rb").read()
p = os.path.join(tmp, "cut.sqlite")
open(p, "wb").write(data[: size // 2 + 100])
for args in (["trace"], ["trace", "--report", "cuda_gpu_kern_sum"], ["trace", "--report", "nvtx_sum"], ["diff", src]):
    rc, out, err = run(*(args + [p]))
    check("cut", " ".join(args) + " exit 2 naming file, truncated", rc == 2 and p in err and "truncated" in err, err)
rc, out, err = run("detect", p)
check("cut", "detect exit 2, says it cannot be read", rc == 2 and p in err and "truncated" in err
      and "cannot be read" in out, out + err)
rc, doc, err = js("detect", "--json", p)
check("cut", "detect --json warning", "truncated" in codes(doc).get("unreadable-input", ""))
d = in_dir("cut", p)
rc, doc, err = js("diagnose", "--json", d)
check("cut", "diagnose says not used", "truncated" in codes(doc).get("unused-input", ""))
p = os.path.join(tmp, "zeroed.sqlite")
z = bytearray(data)
z[4096 * 200: 4096 * 201] = bytes(4096)
open(p, "wb").write(z)
rc, out, err = run("trace", p)
check("zeroed", "trace exit 2 naming file, malformed", rc == 2 and p in err and "malformed" in err, err)

print("%d checks on generated exports, %d failed" % (checks, len(fails)))
for f in fails:
    print("FAIL " + f)
sys.exit(1 if fails else 0)
PY
