#!/usr/bin/env bash
# Findings of `watch --read` on SYNTHETIC nvidia-smi --query-gpu captures
# made here (one round a second from T0 = 2026-03-01 10:00:00 UTC), each
# expectation worked out by hand from the numbers the generator writes:
#  - power-capped from a sustained run: GPU 1 has the SW power cap reason
#    in rounds 50-55 of 120 (6 samples, 5 % of them, 5.0 s from first to
#    last), GPU 2 in rounds 10, 30, 60, 90 only (4 isolated samples): GPU 1
#    is power-capped with its window, GPU 2 is not;
#  - clock-spread: SM clocks 1980 and 1900 MHz on 2 GPUs (80 MHz apart):
#    without a reason field the cause cannot be told; with the reasons all
#    0 it is informational, not throttling;
#  - stall-dips: 2 s steps, utilisation 95 % and 10 % in the stalled steps:
#    every GPU at iterations 4, 8, ..., 28 ("all 8 GPUs"); GPUs 0-3 at 4, 8
#    and GPUs 4-7 at 4, 8, 12 (two groups); 200 steps with GPU g stalled at
#    iterations i with i % 4 == g % 4 (50 dips each, 8 groups): the message
#    has no room for all, and says how many it leaves out;
#  - device errors: a dcgmi dmon capture of 2 GPUs and 6 ticks whose GPU 1
#    has XIDER 79 in ticks 3 and 4 (xid-error: 2 of 6 samples, max 79), and
#    an untimed dmon capture of 1 GPU with dbecc 0, 0, 2, 1 (ecc-uncorrectable:
#    2 of 4 samples, max 2, last 1).
set -eu
cd "$(dirname "$0")/../.."
TS=${TS:-build/trainscope}
command -v python3 >/dev/null || { echo "skip: python3 not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 - "$tmp" <<'PY'
import json, sys, time, calendar
T0 = calendar.timegm((2026, 3, 1, 10, 0, 0))
out = sys.argv[1]
def stamp(i):
    return time.strftime("%Y/%m/%d %H:%M:%S", time.gmtime(T0 + i)) + ".000"
def csv(path, n, ng, row, reasons=True):
    cols = ["timestamp", "index", "power.draw [W]", "power.limit [W]", "clocks.sm [MHz]",
            "clocks.max.sm [MHz]", "utilization.gpu [%]"] + (["clocks_event_reasons.active"] if reasons else [])
    L = [", ".join(cols)]
    for i in range(n):
        for g in range(ng):
            p, clk, util, r = row(i, g)
            cells = [stamp(i), str(g), "%.2f W" % p, "700.00 W", "%d MHz" % clk, "1980 MHz", "%d %%" % util]
            if reasons:
                cells.append("0x%016x" % r)
            L.append(", ".join(cells))
    open(path, "w").write("\n".join(L) + "\n")
def cap(i, g):
    if (g == 1 and 50 <= i <= 55) or (g == 2 and i in (10, 30, 60, 90)):
        return (698.0 if g == 1 else 500.0), (1410 if g == 1 else 1980), 95, 4
    return 500.0, 1980, 95, 0
csv(out + "/cap.csv", 120, 4, cap)
spread = lambda i, g: (500.0, 1980 if g == 0 else 1900, 95, 0)
csv(out + "/spread-noreason.csv", 10, 2, spread, reasons=False)
csv(out + "/spread-reason.csv", 10, 2, spread)
# steps of 2 s from T0 + 0.5 s: step k holds rounds 2k - 1 and 2k
def steps(path, n):
    with open(path, "w") as f:
        for k in range(1, n + 1):
            f.write(json.dumps(dict(iteration=k, t_start_unix=T0 + 0.5 + 2 * (k - 1),
                                    step_time_ms=2000.0)) + "\n")
def dips(path, nsteps, stalled):
    csv(path, 2 * nsteps + 2, 8,
        lambda i, g: (500.0, 1980, 10 if 1 <= (i + 1) // 2 <= nsteps and stalled(g, (i + 1) // 2) else 95, 0))
steps(out + "/steps30.jsonl", 30)
steps(out + "/steps200.jsonl", 200)
dips(out + "/dips-all.csv", 30, lambda g, k: k % 4 == 0)
dips(out + "/dips-two.csv", 30, lambda g, k: k in (4, 8) or (g >= 4 and k == 12))
dips(out + "/dips-many.csv", 200, lambda g, k: k % 4 == g % 4)
L = ["#Entity   POWER        GPUTL        XIDER", "ID        W            %"]
for i in range(6):
    for g in range(2):
        L.append("GPU %d     500.000      95           %d" % (g, 79 if g == 1 and i in (3, 4) else 0))
open(out + "/xid.txt", "w").write("\n".join(L) + "\n")
L = ["# gpu    pwr  dbecc", "# Idx      W   errs"]
for v in (0, 0, 2, 1):
    L.append("    0    500  %5d" % v)
open(out + "/dbe.txt", "w").write("\n".join(L) + "\n")
PY
for f in xid dbe; do
	"$TS" watch --read "$tmp/$f.txt" --json -o "$tmp/$f.json"
done
for f in cap spread-noreason spread-reason; do
	"$TS" watch --read "$tmp/$f.csv" --json -o "$tmp/$f.json"
done
for f in all two many; do
	n=30; [ "$f" = many ] && n=200
	"$TS" watch --read "$tmp/dips-$f.csv" --steps "$tmp/steps$n.jsonl" --json -o "$tmp/dips-$f.json"
done
python3 - "$tmp" <<'PY'
import json, re, sys
def findings(name, fid):
    return [f for f in json.load(open(sys.argv[1] + "/" + name + ".json"))["findings"] if f["id"] == fid]
f = findings("cap", "power-capped")
assert [x["gpu"] for x in f] == ["1"], f
assert f[0]["message"].startswith("GPU 1: power cap active in 6 of 120 samples; longest run 6 samples "
                                  "from 2026-03-01T10:00:50Z to 2026-03-01T10:00:55Z (5.0 s), of 1 run(s)"), f
f = findings("spread-noreason", "clock-spread")
assert len(f) == 1 and "80 MHz across 2 GPUs (1900-1980 MHz)" in f[0]["message"], f
assert "the cause cannot be told" in f[0]["message"] and "not throttling" not in f[0]["message"], f
f = findings("spread-reason", "clock-spread")
assert len(f) == 1 and "informational, not throttling" in f[0]["message"], f
m = findings("dips-all", "stall-dips")[0]["message"]
assert m.endswith("at 7 step(s): all 8 GPUs (median step 95 %): iterations 4, 8, 12, 16, 20, 24, 28"), m
m = findings("dips-two", "stall-dips")[0]["message"]
assert m.endswith("at 3 step(s): GPUs 0 to 3 (4) (median step 95 %): iterations 4, 8; "
                  "GPUs 4 to 7 (4) (median step 95 %): iterations 4, 8, 12"), m
m = findings("dips-many", "stall-dips")[0]["message"]
assert "at 200 step(s): " in m, m
# every group shown lists its 50 dips or says how many it leaves out, and
# the groups not shown are counted: 8 GPUs in all
groups = m.split(": ", 1)[1].split("; ")
shown, more_gpus = 0, 0
for grp in groups:
    g = re.match(r"and (\d+) more GPU\(s\) with dips$", grp)
    if g:
        more_gpus = int(g.group(1))
        continue
    its = grp.split("iterations ", 1)[1]
    more = re.search(r", and (\d+) more$", its)
    listed = len(re.findall(r"\d+", its[:more.start()] if more else its))
    assert listed + (int(more.group(1)) if more else 0) == 50, grp
    shown += 1
assert shown + more_gpus == 8 and more_gpus > 0, m
f = findings("xid", "xid-error")
assert [(x["gpu"], x["message"]) for x in f] == [
    ("GPU 1", "GPU 1: Xid errors in 2 of 6 samples (max 79, last 79)")], f
f = findings("dbe", "ecc-uncorrectable")
assert [(x["gpu"], x["message"]) for x in f] == [
    ("0", "GPU 0: uncorrectable (double-bit) ECC errors in 2 of 4 samples (max 2, last 1)")], f
PY
echo "watch-findings: ok"
