#!/usr/bin/env bash
# Value-level oracle for the hang reader's text side: the same training
# processes' output captured the ways jobs capture it must give the same
# verdict. Every shared log that processes printed (watchdog timeouts,
# dump signals, desync reports, NCCL INFO/WARN lines, RAS output) is
# written VARIANTS times with, chosen at random per variant: a launcher's
# prefix on every line (srun -l "3: " or " 3: ", torchrun "[default3]:", mpirun
# --tag-output "[1,3]<stderr>:", the number taken from the line's own rank
# when it names one, else the last one named); progress-bar redraws before
# some lines (a message printed while a Lightning bar was shown follows the
# bar's "]" on the same physical line); a log collector's RFC 3339
# timestamp in front ("2025-09-01T05:20:03.118748741Z ", as kubectl logs
# --timestamps writes it); ANSI colours around some lines; CRLF line ends.
# `hang --json` of each variant must give the original's answer (its exit
# code and every key but the evidence: its quoted text, file and line).
# Renderings of a dump (fr_dump_unpickled_*) and fr_trace's own output are
# printed by a tool, not by the processes, and are left out.
#   VARIANTS  variants per log (default 6); SEED  random seed (default 1)
set -u
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
[ -d "$DATA/hang" ] || { echo "skip: no $DATA/hang"; exit 77; }
python3 - "$TS" "$tmp" "${VARIANTS:-6}" "${SEED:-1}" "$DATA/hang" <<'PY'
import json, os, random, re, subprocess, sys

ts, tmp, nvar, seed, src = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
logs = [f for f in sorted(os.listdir(src)) if f.endswith(".log") and not f.startswith("fr_")]

def semantic(x):
    if isinstance(x, dict):
        return {k: semantic(v) for k, v in x.items() if k not in ("evidence", "inputs", "files_read")}
    if isinstance(x, list):
        return [semantic(v) for v in x]
    return x

def analyse(path):
    p = subprocess.run([ts, "hang", "--json", path], capture_output=True)
    try:
        return [p.returncode, semantic(json.loads(p.stdout))]
    except ValueError:
        return [p.returncode, p.stderr.decode("utf-8", "replace")[:300]]

RANK = [re.compile(r"\[rank(\d+)\]"), re.compile(r"\[Rank (\d+)\]"), re.compile(r"\] Rank (\d+)"),
        re.compile(r"^\S+:\d+:\d+ \[(\d+)\] [NM]CCL")]

def render(text, rng):
    launcher = rng.choice([None, "srun", "torchrun", "mpirun"])
    bars = rng.random() < 0.4
    stamp = rng.random() < 0.5
    colour = rng.random() < 0.3
    eol = "\r\n" if rng.random() < 0.4 else "\n"
    width = rng.choice([1, 2])
    out, rank = [], 0
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for k, line in enumerate(lines):
        for pat in RANK:
            m = pat.search(line)
            if m:
                rank = int(m.group(1))
                break
        if bars and line[:1] not in ("", " ", "\t") and rng.random() < 0.2:
            # printed while a progress bar was shown: its redraws come first
            # on the physical line (Lightning's, as in pytorch#118369)
            line = "".join("\rEpoch 0:   6%%|##        | %d/500150 [6:28:%02d<94:39:17,  1.37it/s, "
                           "loss=2.6, reduced_train_loss=2.590, global_step=%d.0]" % (i + 1, i % 60, i)
                           for i in range(32040, 32040 + rng.randint(1, 3))) + line
        if colour and line and rng.random() < 0.3:
            line = "\x1b[31m" + line + "\x1b[0m"
        if launcher == "srun":
            # padded to the widest task number, as srun -l does
            line = "%*d: %s" % (width, rank, line)
        elif launcher == "torchrun":
            line = "[default%d]:%s" % (rank, line)
        elif launcher == "mpirun":
            line = "[1,%d]<stderr>:%s" % (rank, line)
        if stamp:
            line = "2025-09-01T05:20:%02d.%09dZ %s" % (k // 1000 % 60, k * 7919 % 10 ** 9, line)
        out.append(line)
    what = ", ".join(w for w in (launcher, bars and "progress bars", stamp and "timestamps", colour and "colours",
                                 eol == "\r\n" and "CRLF") if w)
    return eol.join(out) + eol, what or "as is"

rng = random.Random(seed)
fails = runs = 0
for name in logs:
    path = os.path.join(src, name)
    ref = analyse(path)
    if not isinstance(ref[1], dict):
        # exit 1 is a hang found: an answer, not a failure
        print("FAIL %s: the log itself does not read (exit %d)" % (name, ref[0]))
        fails += 1
        continue
    text = open(path, encoding="utf-8", errors="surrogateescape").read()
    for k in range(nvar):
        body, what = render(text, rng)
        vpath = os.path.join(tmp, "%d-%s" % (k, name))
        open(vpath, "w", encoding="utf-8", errors="surrogateescape", newline="").write(body)
        got = analyse(vpath)
        runs += 1
        if got != ref:
            fails += 1
            a, b = ref[1], got[1]
            why = "exit %d vs %d" % (ref[0], got[0])
            if isinstance(b, dict):
                why = next(("%s: %s vs %s" % (key, json.dumps(a.get(key))[:200], json.dumps(b.get(key))[:200])
                            for key in a if a.get(key) != b.get(key)), why)
            print("FAIL %s variant %d (%s): %s" % (name, k, what, why))
            if os.environ.get("KEEP_FAILS"):
                os.replace(vpath, os.path.join(tmp, "..", "hang-syntax-fail-%d-%s" % (k, name)))
                continue
        os.remove(vpath)
print("%d variants of %d logs, %d differ from their log" % (runs, len(logs), fails))
sys.exit(1 if fails else 0)
PY
