#!/usr/bin/env bash
# Outputs that respect what they write to, and inputs that are pipes, FIFOs,
# endless or cut short while being read (issue 21). Never touches the real
# /dev: device cases go through /dev/fd/N of a descriptor the shell opened
# (the old code tried to create /dev/fd/N.tmp.XXXXXX and failed there) or
# through stdout redirected to /dev/full; FIFOs and symlinks live in a temp
# dir. A gzip trace cut inside its header is said to be cut; an empty file
# is an input error in every command that reads one (hang said "no hang
# evidence", exit 0), and one empty file beside others is a hang finding. Each check
# prints what it expected and what it saw.
set -u
TS=${TS:-build/trainscope}
case $TS in /*) ;; *) TS=$PWD/$TS ;; esac
case ${DATA:-} in ''|/*) ;; *) DATA=$PWD/$DATA ;; esac
command -v python3 >/dev/null || exit 77
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# a Megatron log with 60 iterations of about 100 ms (enough for `ab`)
python3 - <<'PY'
import random
random.seed(1)
with open("run.log", "w") as f:
    for i in range(1, 61):
        f.write(" iteration %8d/     100 | consumed samples: %d | elapsed time per "
                "iteration (ms): %.1f | learning rate: 1.0E-04 | global batch size:    64 "
                "| lm loss: 2.5E+00 | loss scale: 1.0 | number of skipped iterations:   0 "
                "| number of nan iterations:   0 |\n" % (i, i * 64, 100 + random.random()))
PY
"$TS" steps run.log > want.txt 2>/dev/null || bad "steps on the plain log failed"

# ---- outputs
echo old > real.txt
ln -s real.txt link.txt
"$TS" steps -o link.txt run.log 2>/dev/null || bad "-o symlink: exit $?"
[ -L link.txt ] || bad "-o symlink: the link was replaced by a file"
cmp -s real.txt want.txt || bad "-o symlink: the target does not hold the output"

ln -s sub/new.txt dangling.txt
mkdir sub
"$TS" steps -o dangling.txt run.log 2>/dev/null || bad "-o dangling symlink: exit $?"
[ -L dangling.txt ] && cmp -s sub/new.txt want.txt || bad "-o dangling symlink: not written through the link"

mkfifo out.fifo
timeout 10 sh -c 'cat out.fifo > fifo.txt' &
reader=$!
timeout 10 "$TS" steps -o out.fifo run.log 2>/dev/null || bad "-o FIFO: exit $?"
wait $reader
[ -p out.fifo ] || bad "-o FIFO: the FIFO was replaced"
cmp -s fifo.txt want.txt || bad "-o FIFO: the reader did not get the output"

timeout 10 "$TS" steps -o /dev/fd/3 run.log 3>&1 > /dev/null 2>/dev/null | cat > fd.txt
cmp -s fd.txt want.txt || bad "-o /dev/fd/3 (a pipe): output not written through"

timeout 10 "$TS" steps -o - run.log > dash.txt 2> dash.err || bad "-o -: exit $?"
cmp -s dash.txt want.txt || bad "-o -: stdout does not hold the output"
[ -e ./- ] && bad "-o -: created a file named -"

timeout 10 "$TS" steps -o /dev/fd/3 run.log 3> /dev/full 2> full.err
rc=$?
[ $rc = 2 ] || bad "-o onto /dev/full (fd 3): exit $rc, want 2"
grep -q "No space left on device" full.err || bad "-o onto /dev/full: no ENOSPC message: $(cat full.err)"

timeout 10 "$TS" steps run.log > /dev/full 2> full2.err
rc=$?
[ $rc = 2 ] || bad "stdout on /dev/full: exit $rc, want 2"
grep -q "No space left on device" full2.err || bad "stdout on /dev/full: no ENOSPC message: $(cat full2.err)"

ls | grep -q '\.tmp\.' && bad "a temp file was left behind: $(ls)"

# ---- inputs: FIFOs, process substitution, stdin (read once, never reopened)
mkfifo a.fifo b.fifo
timeout 20 sh -c 'cat run.log > a.fifo' &
timeout 20 sh -c 'cat run.log > b.fifo' &
timeout 20 "$TS" ab a.fifo b.fifo > ab_fifo.txt 2> ab_fifo.err
rc=$?
[ $rc = 0 ] || bad "ab on two FIFOs: exit $rc (124 = hung): $(head -c 300 ab_fifo.err)"
want=$("$TS" ab run.log run.log | grep -o "[0-9]* paired steps")
grep -q "$want" ab_fifo.txt || bad "ab on two FIFOs: not the $want of the same file read directly"
bash -c "timeout 20 '$TS' ab <(cat run.log) - < run.log" > ab_sub.txt 2> ab_sub.err
rc=$?
[ $rc = 0 ] || bad "ab on <(...) and stdin: exit $rc: $(head -c 300 ab_sub.err)"
grep -q "$want" ab_sub.txt || bad "ab on <(...) and stdin: not the $want of the same file"
mkfifo d.fifo
timeout 20 sh -c 'cat run.log > d.fifo' &
timeout 20 "$TS" diagnose --json d.fifo > diag_fifo.json 2> diag_fifo.err
rc=$?
[ $rc = 0 ] || bad "diagnose on a FIFO: exit $rc: $(head -c 300 diag_fifo.err)"
timeout 20 "$TS" diagnose --json run.log > diag_file.json 2>/dev/null
python3 - <<'PY' || bad "diagnose on a FIFO: steps differ from the file"
import json
a = json.load(open("diag_fifo.json")); b = json.load(open("diag_file.json"))
def steps(d):
    s = json.dumps(d.get("steps", d), sort_keys=True)
    return s.replace("d.fifo", "X").replace("run.log", "X")
assert steps(a) == steps(b)
PY
wait

# trace --annotate copies the trace it read: from a FIFO too (it used to
# reopen the FIFO and hang), the same bytes as from the file
T=${DATA:-$OLDPWD/../shared/data}/traces/cpu/a_dense/rank0.1795973760440387363.pt.trace.json.gz
if [ -f "$T" ]; then
	"$TS" trace --annotate ann_file.json "$T" > /dev/null 2>&1 || bad "trace --annotate on the file failed"
	mkfifo t.fifo
	timeout 20 sh -c "cat '$T' > t.fifo" &
	timeout 20 "$TS" trace --annotate ann_fifo.json t.fifo > /dev/null 2> ann.err
	rc=$?
	[ $rc = 0 ] || bad "trace --annotate on a FIFO: exit $rc (124 = hung): $(head -c 300 ann.err)"
	cmp -s ann_fifo.json ann_file.json || bad "trace --annotate on a FIFO: output differs from the file's"
	wait
fi

# a signal while the temp file of an output exists removes it: the
# annotated copy of the trace is written through a temp file; SIGTERM
# arrives as soon as the temp file is seen (tried a few times: the window
# is tens of milliseconds)
if [ -f "$T" ]; then
	python3 - "$TS" "$T" <<'PY' || fail=1
import os, signal, subprocess, sys, time
ts, trace = sys.argv[1], sys.argv[2]
os.mkdir("sig")
for attempt in range(8):
    p = subprocess.Popen([ts, "trace", "--annotate", "sig/out.json", trace],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seen = False
    while p.poll() is None:
        if any(".tmp." in f for f in os.listdir("sig")):
            p.send_signal(signal.SIGTERM)
            seen = True
            break
    p.wait()
    if seen:
        left = [f for f in os.listdir("sig") if ".tmp." in f]
        if left:
            print("FAIL: SIGTERM left the temp file", left)
            sys.exit(1)
        if p.returncode not in (-signal.SIGTERM, 0):
            print("FAIL: SIGTERM: exit %d" % p.returncode)
            sys.exit(1)
        sys.exit(0)
    for f in os.listdir("sig"):
        os.unlink(os.path.join("sig", f))
print("note: the temp file was never seen before the write ended; signal case not exercised")
PY
fi

# ---- an endless input that matches no format ends (exit 2), within 30 s
start=$(date +%s)
timeout 30 "$TS" steps /dev/urandom > /dev/null 2> rnd.err
rc=$?
[ $rc = 2 ] || bad "steps /dev/urandom: exit $rc after $(( $(date +%s) - start )) s, want 2"
grep -q "/dev/urandom" rnd.err || bad "steps /dev/urandom: message does not name the input: $(cat rnd.err)"
# endless text that is no log: the byte budget of a non-seekable input stops it
start=$(date +%s)
yes "not a log line" | timeout 60 "$TS" steps - > /dev/null 2> yes.err
rc=$?
[ $rc = 2 ] || bad "steps on endless text: exit $rc after $(( $(date +%s) - start )) s, want 2"
grep -q "non-seekable" yes.err || bad "steps on endless text: message: $(cat yes.err)"

# ---- a file cut short while being read (logrotate copytruncate): the
# reader is stopped once the file is mapped, the file is truncated, and it
# is continued: it must say the file shrank and exit 2, not die of SIGBUS
python3 - <<'PY'
line = (" iteration %8d/ 9999999 | consumed samples: 64 | elapsed time per iteration "
        "(ms): 100.0 | lm loss: 2.5E+00 | number of skipped iterations:   0 | "
        "number of nan iterations:   0 |\n")
with open("big.log", "w") as f:
    for i in range(1, 400001):
        f.write(line % i)
PY
python3 - "$TS" <<'PY'
import os, signal, subprocess, sys, time
ts = sys.argv[1]
p = subprocess.Popen([ts, "steps", "--json", "big.log"], stdout=subprocess.DEVNULL,
                     stderr=subprocess.PIPE)
path = os.path.abspath("big.log")
deadline = time.time() + 20
stopped = False
while time.time() < deadline and p.poll() is None:
    try:
        maps = open("/proc/%d/maps" % p.pid).read()
    except OSError:
        break
    if path in maps:
        os.kill(p.pid, signal.SIGSTOP)
        stopped = True
        break
if not stopped:
    p.wait()
    print("SKIP: the reader finished before it could be stopped")
    sys.exit(0)
os.truncate("big.log", 4096)
os.kill(p.pid, signal.SIGCONT)
err = p.communicate(timeout=20)[1].decode()
if p.returncode != 2 or "shrank while being read" not in err:
    print("FAIL: truncated while read: exit %d (135 = SIGBUS), stderr %r" % (p.returncode, err))
    sys.exit(1)
PY
[ $? = 0 ] || fail=1

# a .json.gz cut inside its gzip header (8 bytes): the trace reader says the
# gzip stream ends early, as the line readers do ("empty input" before)
printf '{"traceEvents": []}' | gzip -c | head -c 8 >cuthdr.json.gz
"$TS" trace cuthdr.json.gz >/dev/null 2>cuthdr.err
rc=$?
[ $rc = 2 ] && grep -q "cuthdr.json.gz: byte 0: gzip stream ends before its first byte of data" cuthdr.err ||
	bad "trace of a gzip cut in its header: exit $rc, $(cat cuthdr.err)"
# an empty file: exit 2 naming it in every command, hang included
: >empty.log
for cmd in steps trace hang "watch --read"; do
	$TS $cmd empty.log >/dev/null 2>empty.err
	rc=$?
	[ $rc = 2 ] && grep -q "empty.log: byte 0" empty.err || bad "$cmd on an empty file: exit $rc, $(cat empty.err)"
done
$TS hang empty.log 2>&1 | grep -q "empty input (0 bytes): no hang evidence to read" ||
	bad "hang on an empty file: not said empty"
# beside a log with a watchdog timeout: a finding, and the timeout still read
if [ -f "${DATA:-../shared/data}/hang/llamafactory_7396_allreduce_timeout.log" ]; then
	$TS hang --json empty.log "${DATA:-../shared/data}/hang/llamafactory_7396_allreduce_timeout.log" >both.json
	rc=$?
	[ $rc = 1 ] && grep -q '"empty.log: empty (0 bytes); nothing was read from it"' both.json ||
		bad "hang with an empty file beside a timeout: exit $rc"
fi
exit $fail
