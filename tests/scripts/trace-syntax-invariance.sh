#!/usr/bin/env bash
# Value-level oracle for the trace reader: the same trace written in many
# ways JSON allows must give the same analysis. Real traces of every family
# in the shared data (CUDA, ROCm, MTIA, NCCL collectives, CPU-only, the
# legacy array export, memory events) are loaded by python3's own json
# parser (numbers kept as their text), cut to their first EVENTS events,
# and written once compactly (the reference) and VARIANTS times with,
# chosen at random per occurrence: every object's members shuffled (the
# top level included, so metadata may come before or after traceEvents),
# blanks of every JSON kind between tokens, string characters written as
# \uXXXX escapes or "\/" (keys included), unknown members holding nested
# arrays, objects and strings full of brackets inserted into events, args
# and every metadata object, numbers in other exact spellings (exponents,
# a fraction of zeros in integer fields, pid/tid as digit strings), a
# UTF-8 byte-order mark, gzip. `trace --json` and `trace --hta-compat
# --json` of each variant must equal those of the reference, byte for
# byte, with only the file path differing. A member the reader skips, a
# key it fails to recognise, a number it reads differently: any of them
# shows as a difference, whatever the analysis does with the value.
#   VARIANTS  variants per trace (default 6); SEED  random seed (default 1)
set -u
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
T=$DATA/traces
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
[ -d "$T/hta" ] || { echo "skip: no $T/hta"; exit 77; }
python3 - "$TS" "$T" "$tmp" "${VARIANTS:-6}" "${SEED:-1}" "${EVENTS:-4000}" <<'PY'
import gzip, json, os, random, subprocess, sys

ts, T, tmp, nvar, seed, nev = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
SOURCES = [
    "hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
    "hta/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
    "hta/mtia_trace_single_rank/mtia_rank_0.json.gz",
    "hta/nccl_parser_config/nccl_data.json.gz",
    "hta/large_integer_trace/rank-70.Mar_25_20_48_12.2861.pt.trace.json.gz",
    "hta/with_gpu_user_annotation/step_based_trace_2543932.json.gz",
    "hta/cupti_profiler/benchmark_result_924719_1679055439_trace.json.gz",
    "tracelens/tests/traces/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
    "cpu/d_stall/rank0.1795974062565225904.pt.trace.json.gz",
    "cpu/c_ddp2/rank1.1795973848053533651.pt.trace.json.gz",
    "cpu/a_dense_legacy113/rank0.1795973792614.pt.trace.json.gz",
]

class Num(str):
    """A number kept as the text it was written with."""

class Obj(list):
    """An object as its (key, value) pairs, in file order."""

def load(path):
    raw = gzip.open(path, "rb").read() if path.endswith(".gz") else open(path, "rb").read()
    return json.loads(raw.decode("utf-8", "surrogatepass"), parse_float=Num, parse_int=Num,
                      object_pairs_hook=Obj)

def cut(doc):
    if not isinstance(doc, Obj):
        return doc[:nev]
    return Obj((k, v[:nev] if k == "traceEvents" and isinstance(v, list) else v) for k, v in doc)

MODES = set(os.environ.get("MODES", "ws order esc keyesc extra num bom gzip").split())
WS = ["", " ", "  ", "\n", "\t", "\r\n", "\n    ", " \t\n "]

class Writer:
    def __init__(self, rng):
        self.rng = rng  # None: the compact reference
        self.out = []

    def on(self, what):
        return self.rng is not None and what in MODES

    def ws(self):
        if self.on("ws") and self.rng.random() < 0.3:
            self.out.append(self.rng.choice(WS))

    def string(self, s, key=False):
        text = json.dumps(s, ensure_ascii=any(0xD800 <= ord(c) <= 0xDFFF for c in s))
        if not self.on("keyesc" if key else "esc") or self.rng.random() < 0.7:
            self.out.append(text)
            return
        # re-escape some characters of the body: \u00XX for ASCII, the
        # UTF-16 escape for the rest, "\/" for '/'
        body, i, parts = text[1:-1], 0, []
        while i < len(body):
            c = body[i]
            if c == "\\":  # an escape json.dumps wrote: keep it whole
                j = i + 6 if body[i + 1] == "u" else i + 2
                parts.append(body[i:j])
                i = j
                continue
            r = self.rng.random()
            if c == "/" and r < 0.5:
                parts.append("\\/")
            elif r < 0.15:
                code = ord(c)
                if code > 0xFFFF:
                    code -= 0x10000
                    esc = "\\u%04x\\u%04x" % (0xD800 + (code >> 10), 0xDC00 + (code & 0x3FF))
                else:
                    esc = "\\u%04x" % code
                parts.append(esc.upper().replace("\\U", "\\u") if self.rng.random() < 0.5 else esc)
            else:
                parts.append(c)
            i += 1
        self.out.append('"' + "".join(parts) + '"')

    def number(self, key, n):
        rng = self.rng
        if not self.on("num") or rng.random() < 0.6 or n.startswith("-") or "e" in n.lower():
            self.out.append(n)
            return
        whole, _, frac = n.partition(".")
        digits = whole + frac
        if key in ("pid", "tid") and not frac and rng.random() < 0.5:
            self.out.append('"%s"' % n)  # a string of digits is its number
            return
        if not frac and len(digits) > 15:
            self.out.append(n)  # integers past double precision stay as written
            return
        r = rng.random()
        if r < 0.3:  # d.ddd e+k
            exp = len(whole) - 1
            m = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
            self.out.append("%s%s%s%d" % (m, rng.choice("eE"), rng.choice(["", "+"]), exp))
        elif r < 0.6:  # all digits, e-k
            self.out.append("%s%s-%d" % (digits.lstrip("0") or "0", rng.choice("eE"), len(frac)) if frac else digits + "e0")
        elif frac:
            self.out.append(n + "0" * rng.randint(1, 3))  # trailing zeros
        else:
            self.out.append(n + "." + "0" * rng.randint(1, 3))

    def junk(self, depth=0):
        rng = self.rng
        r = rng.random()
        if depth < 3 and r < 0.25:
            return [self.junk(depth + 1) for _ in range(rng.randint(0, 3))]
        if depth < 3 and r < 0.5:
            return Obj(("j%d" % k, self.junk(depth + 1)) for k in range(rng.randint(0, 3)))
        if r < 0.75:
            return rng.choice(['}, {"ph": "X"', "]}", "a\"b", "\\", "{[,:]}", "", "\u00e9\u4e2d"])
        if r < 0.9:
            return Num(rng.choice(["0", "-1", "3.25", "1e300", "-0.0", "12345678901234567890"]))
        return rng.choice([True, False, None])

    def value(self, v, key=None, depth=0):
        if isinstance(v, Obj):
            pairs = list(v)
            if self.on("order"):
                self.rng.shuffle(pairs)
            if self.on("extra"):
                if self.rng.random() < 0.3:
                    pairs.insert(self.rng.randint(0, len(pairs)), ("zz_extra", self.junk()))
            self.out.append("{")
            for k, (name, x) in enumerate(pairs):
                if k:
                    self.ws()
                    self.out.append(",")
                self.ws()
                self.string(name, True)
                self.ws()
                self.out.append(":")
                self.ws()
                self.value(x, name, depth + 1)
            self.ws()
            self.out.append("}")
        elif isinstance(v, list):
            self.out.append("[")
            for k, x in enumerate(v):
                if k:
                    self.ws()
                    self.out.append(",")
                self.ws()
                self.value(x, key, depth + 1)
            self.ws()
            self.out.append("]")
        elif isinstance(v, Num):
            self.number(key, v)
        elif isinstance(v, str):
            self.string(v)
        else:
            self.out.append(json.dumps(v))

def write(doc, rng, path):
    w = Writer(rng)
    if w.on("bom") and rng.random() < 0.2:
        w.out.append("\ufeff")
    w.ws()
    w.value(doc)
    w.ws()
    data = "".join(w.out).encode("utf-8", "surrogatepass")
    if w.on("gzip") and rng.random() < 0.3:
        data = gzip.compress(data, 1)
    open(path, "wb").write(data)

def analyse(path):
    outs = []
    for extra in ([], ["--hta-compat"]):
        p = subprocess.run([ts, "trace", "-q", "--json"] + extra + [path], capture_output=True)
        out = p.stdout.decode("utf-8", "replace").replace(path, "FILE")
        outs.append((p.returncode, out, p.stderr.decode("utf-8", "replace")[:300]))
    return outs

rng = random.Random(seed)
fails = runs = 0
for src in SOURCES:
    doc = cut(load(os.path.join(T, src)))
    base = os.path.basename(src).replace(".gz", "")
    os.makedirs(os.path.join(tmp, "ref"), exist_ok=True)
    ref_path = os.path.join(tmp, "ref", base)
    write(doc, None, ref_path)
    ref = analyse(ref_path)
    if ref[0][0] != 0:
        print("FAIL %s: the compact reference does not analyse (exit %d): %s" % (src, ref[0][0], ref[0][2]))
        fails += 1
        continue
    for k in range(nvar):
        d = os.path.join(tmp, "v%d" % k)
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, base)
        write(doc, rng, path)
        got = analyse(path)
        runs += 1
        for mode, (a, b) in zip(("trace --json", "trace --hta-compat --json"), zip(ref, got)):
            if a != b:
                fails += 1
                al, bl = a[1].splitlines(), b[1].splitlines()
                diff = next((i for i in range(min(len(al), len(bl))) if al[i] != bl[i]), min(len(al), len(bl)))
                print("FAIL %s variant %d, %s: exit %d vs %d; first differing line %d:\n  ref: %s\n  got: %s\n  %s"
                      % (src, k, mode, a[0], b[0], diff + 1, al[diff][:200] if diff < len(al) else "(end)",
                         bl[diff][:200] if diff < len(bl) else "(end)", b[2]))
                keep = os.path.join(tmp, "..", "trace-syntax-fail-%s-%d" % (base, k))
                if os.environ.get("KEEP_FAILS"):
                    os.replace(path, keep)
                break
        if os.path.exists(path):
            os.remove(path)
print("%d variants of %d traces, %d differ from their reference" % (runs, len(SOURCES), fails))
sys.exit(1 if fails else 0)
PY
