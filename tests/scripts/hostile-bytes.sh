#!/usr/bin/env bash
# Hostile bytes in names (issue 21): terminal escapes, C1 controls, NULs
# and invalid UTF-8 in kernel names must reach neither the terminal raw nor
# the JSON as invalid UTF-8, and two kernels that differ only after a NUL
# stay two kernels with their full names. The checks are python3's own
# strict UTF-8 decoder and json parser, independent of the code under test.
set -u
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || exit 77
python3 - "$tmp/hostile.json" <<'PY'
import json, sys
ev = [{"ph": "X", "cat": "cpu_op", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 1000}]
names = ["evil\u001b]0;pwned\u0007title", "clear\u001b[2Jscreen", "k\u0000a", "k\u0000b", "c1\u0085x",
         "rtl\u202eexe.txt"]
for i, n in enumerate(names):
    ev.append({"ph": "X", "cat": "kernel", "name": n, "pid": 0, "tid": 7, "ts": 10 + 120 * i,
               "dur": 100 + i, "args": {"device": 0, "stream": 7}})
doc = json.dumps({"schemaVersion": 1, "traceEvents": ev}).encode()
# raw bytes that are not UTF-8: an F5 lead with two continuation bytes (the
# old writer copied it as a 3-byte sequence), FF, an overlong '/', a surrogate
bad = (b'{"ph":"X","cat":"kernel","name":"bad\xf5\x80\x80\xff\xc0\xaf\xed\xa0\x80end","pid":0,'
       b'"tid":7,"ts":900,"dur":50,"args":{"device":0,"stream":7}},')
doc = doc.replace(b'"traceEvents": [', b'"traceEvents": [' + bad, 1)
open(sys.argv[1], "wb").write(doc)
PY
"$TS" trace "$tmp/hostile.json" > "$tmp/table.txt" 2>&1 || { echo "trace failed"; exit 1; }
"$TS" trace --json "$tmp/hostile.json" > "$tmp/out.json" 2>&1 || { echo "trace --json failed"; exit 1; }
python3 - "$tmp/table.txt" "$tmp/out.json" <<'PY'
import json, sys
table = open(sys.argv[1], "rb").read()
fail = []
try:
    text = table.decode("utf-8")
except UnicodeDecodeError as e:
    fail.append("table output is not valid UTF-8: %s" % e)
    text = table.decode("utf-8", "replace")
for c in text:
    o = ord(c)
    if (o < 0x20 and c not in "\n\t") or 0x7f <= o <= 0x9f or 0x202a <= o <= 0x202e:
        fail.append("table output holds control U+%04X" % o)
        break
for want in ("evil\\x1b]0;pwned\\x07title", "clear\\x1b[2Jscreen", "k\\x00a", "k\\x00b",
             "c1\\u0085x", "rtl\\u202eexe.txt", "bad\\xf5\\x80\\x80\\xff\\xc0\\xaf\\xed\\xa0\\x80end"):
    if want not in text:
        fail.append("table output lacks the visible form %r" % want)
raw = open(sys.argv[2], "rb").read()
try:
    doc = json.loads(raw.decode("utf-8"))
except (UnicodeDecodeError, ValueError) as e:
    fail.append("--json output is not valid UTF-8 JSON: %s" % e)
    doc = {}
names = []
def walk(o):
    if isinstance(o, dict):
        if "top_kernels" in o:
            names.extend(k["name"] for k in o["top_kernels"])
        for v in o.values():
            walk(v)
    elif isinstance(o, list):
        for v in o:
            walk(v)
walk(doc)
for want in ("k\u0000a", "k\u0000b", "evil\u001b]0;pwned\u0007title"):
    if want not in names:
        fail.append("--json top_kernels lacks %r (got %r)" % (want, names))
if "bad" + "\ufffd" * 9 + "end" not in names:
    fail.append("--json: invalid bytes not each replaced by U+FFFD: %r" % names)
for f in fail:
    print("FAIL:", f)
sys.exit(1 if fail else 0)
PY
