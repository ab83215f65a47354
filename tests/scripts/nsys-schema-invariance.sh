#!/usr/bin/env bash
# Value-level oracle for the Nsight Systems reader: the same profile stored
# the ways nsys versions and tools store it must give the same answers.
# Each shared export is rewritten (python3's sqlite3 module) VARIANTS times
# with, chosen at random per variant: the columns of every table in another
# order; the rows of every table in another storage order; the StringIds
# renumbered (every column that refers to a string id remapped with them);
# NVTX texts stored inline in `text` instead of through `textId` (as older
# nsys and NVTX's non-registered strings do) or the reverse; columns and
# tables the reader does not know added; the ENUM tables dropped (older
# exports lack some; the reader then uses the documented numbering). `trace
# --json`, `trace --report cuda_gpu_kern_sum --csv` and `--report nvtx_sum
# --csv` of each variant must equal the original's, byte for byte except
# the file name.
#   VARIANTS  variants per export (default 4); SEED  random seed (default 1)
set -u
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
python3 -c 'import sqlite3' 2>/dev/null || { echo "skip: python3 without sqlite3"; exit 77; }
ls "$DATA"/nsys/*.sqlite >/dev/null 2>&1 || { echo "skip: no $DATA/nsys"; exit 77; }
python3 - "$TS" "$tmp" "${VARIANTS:-4}" "${SEED:-1}" "$DATA"/nsys/*.sqlite <<'PY'
import os, random, sqlite3, subprocess, sys

ts, tmp, nvar, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
exports = sys.argv[5:]

# Columns holding a StringIds id, by table (nsys schema 3.x)
STRING_COLS = {
    "CUPTI_ACTIVITY_KIND_KERNEL": ["demangledName", "shortName", "mangledName"],
    "CUPTI_ACTIVITY_KIND_RUNTIME": ["nameId"],
    "CUPTI_ACTIVITY_KIND_OVERHEAD": ["nameId"],
    "NVTX_EVENTS": ["textId", "jsonTextId"],
    "ThreadNames": ["nameId"],
    "ProcessStreams": ["filenameId"],
    "OSRT_API": ["nameId"],
}

def rewrite(src, dst, rng):
    """src's tables into dst, spelled another way; returns what was done."""
    s = sqlite3.connect("file:%s?mode=ro" % src, uri=True)
    d = sqlite3.connect(dst)
    tables = [r[0] for r in s.execute(
        "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'")]
    done = []
    reorder_cols, reorder_rows = rng.random() < 0.7, rng.random() < 0.7
    renumber = rng.random() < 0.6
    nvtx_mode = rng.choice(["keep", "inline", "ids"])
    extra = rng.random() < 0.5
    drop_enums = rng.random() < 0.3
    strings = dict(s.execute("SELECT id, value FROM StringIds")) if "StringIds" in tables else {}
    remap = {}
    if renumber and strings:
        new_ids = rng.sample(range(1, 10 * len(strings) + 100), len(strings))
        remap = dict(zip(sorted(strings), new_ids))
        done.append("strings renumbered")
    if reorder_cols:
        done.append("columns reordered")
    if reorder_rows:
        done.append("rows reordered")
    if nvtx_mode != "keep":
        done.append("nvtx text " + nvtx_mode)
    if extra:
        done.append("unknown columns and table")
    if drop_enums:
        done.append("ENUM tables dropped")
    added_strings = {}
    for t in tables:
        if drop_enums and t.startswith("ENUM_"):
            continue
        info = list(s.execute('PRAGMA table_info("%s")' % t))
        cols = [(c[1], c[2]) for c in info]
        rows = [list(r) for r in s.execute('SELECT * FROM "%s"' % t)]
        names = [c[0] for c in cols]
        if remap:
            if t == "StringIds":
                for r in rows:
                    r[0] = remap[r[0]]
            for c in STRING_COLS.get(t, []):
                if c in names:
                    k = names.index(c)
                    for r in rows:
                        if r[k] is not None and r[k] in remap:
                            r[k] = remap[r[k]]
        if t == "NVTX_EVENTS" and nvtx_mode != "keep" and "text" in names and "textId" in names:
            kt, ki = names.index("text"), names.index("textId")
            for r in rows:
                if nvtx_mode == "inline" and r[ki] is not None:
                    sid = r[ki]
                    orig = {v: k for k, v in remap.items()}.get(sid, sid) if remap else sid
                    r[kt], r[ki] = strings[orig], None
                elif nvtx_mode == "ids" and r[kt] is not None:
                    text = r[kt]
                    if text not in added_strings:
                        # above every id in use (exports' ids can be sparse)
                        top = max(list(strings) + list(remap.values()) + [0])
                        added_strings[text] = top + 1000 + len(added_strings)
                    r[kt], r[ki] = None, added_strings[text]
        order = list(range(len(cols)))
        if reorder_cols:
            rng.shuffle(order)
        if extra and rng.random() < 0.5:
            cols = cols + [("futureColumn%d" % rng.randrange(100), "INTEGER")]
            order = order + [len(cols) - 1]
            rows = [r + [rng.randrange(1000)] for r in rows]
        if reorder_rows:
            rng.shuffle(rows)
        d.execute('CREATE TABLE "%s" (%s)' % (t, ", ".join('"%s" %s' % (cols[k][0], cols[k][1]) for k in order)))
        d.executemany('INSERT INTO "%s" VALUES (%s)' % (t, ", ".join("?" * len(order))),
                      [[r[k] for k in order] for r in rows])
    if added_strings:
        d.executemany("INSERT INTO StringIds (id, value) VALUES (?, ?)",
                      [(i, v) for v, i in added_strings.items()])
    if extra:
        d.execute("CREATE TABLE FUTURE_TABLE (start INTEGER, \"end\" INTEGER, value TEXT)")
        d.execute("INSERT INTO FUTURE_TABLE VALUES (1, 2, 'x')")
    d.commit()
    d.close()
    return done

def outputs(path):
    out = []
    for args in (["trace", "--json"], ["trace", "--report", "cuda_gpu_kern_sum", "--csv"],
                 ["trace", "--report", "nvtx_sum", "--csv"]):
        p = subprocess.run([ts] + args + [path], capture_output=True)
        text = p.stdout.decode("utf-8", "replace").replace(path, "EXPORT")
        out.append((p.returncode, text))
    return out

rng = random.Random(seed)
fails = runs = 0
for src in exports:
    ref_path = os.path.join(tmp, "ref.sqlite")
    if os.path.exists(ref_path):
        os.remove(ref_path)
    # the reference is the export itself, copied to the same directory so
    # that only the name differs
    with open(src, "rb") as f, open(ref_path, "wb") as g:
        g.write(f.read())
    ref = outputs(ref_path)
    if ref[0][0] != 0:
        print("FAIL %s: the export itself does not read (exit %d)" % (src, ref[0][0]))
        fails += 1
        continue
    for k in range(nvar):
        path = os.path.join(tmp, "v%d.sqlite" % k)
        if os.path.exists(path):
            os.remove(path)
        done = rewrite(src, path, rng)
        got = [(rc, text.replace("v%d.sqlite" % k, "ref.sqlite")) for rc, text in outputs(path)]
        runs += 1
        if got != ref:
            fails += 1
            which = next(i for i in range(3) if got[i] != ref[i])
            a, b = ref[which][1].splitlines(), got[which][1].splitlines()
            line = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
            print("FAIL %s variant %d (%s): output %d, exit %d vs %d, line %d: %r vs %r"
                  % (os.path.basename(src), k, ", ".join(done), which, ref[which][0], got[which][0],
                     line + 1, a[line][:160] if line < len(a) else None,
                     b[line][:160] if line < len(b) else None))
            if os.environ.get("KEEP_FAILS"):
                os.replace(path, os.path.join(tmp, "..", "nsys-schema-fail-%d.sqlite" % k))
                continue
        os.remove(path)
print("%d variants of %d exports, %d differ from their export" % (runs, len(exports), fails))
sys.exit(1 if fails else 0)
PY
