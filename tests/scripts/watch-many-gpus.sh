#!/usr/bin/env bash
# Pathological sizes: `watch --read` and `ab` read them whole and right
# (their cost, linear in the GPUs whatever the number of GPUs and hosts,
# docs/watch.md "Cost", is measured by bench/bench_watch.sh, not timed
# here). SYNTHETIC inputs made here:
#  - ids: two nvidia-smi --query-gpu captures of the same 60,000 GPUs
#    (index, uuid; 1 round each), read together: 120,000 GPUs, 60,000
#    devices by uuid. Before 5 Dec 2026 each new GPU id of a file scanned
#    the file's GPUs before it (60,000^2 / 2 comparisons a file: about 16
#    s of user CPU on the shared build machine; now about 1 s).
#  - hosts: two dcgm-exporter files of 7,500 hosts x 8 GPUs (power only,
#    1 scrape), read together, and `ab` of two run directories holding
#    one each. Before, each host's pass of the findings went over every
#    GPU, and ab's per-host means over every GPU of a side for each pair
#    of hosts (hosts x GPUs: tens of seconds; now about 1 s each).
#  - captures: 2,000 --query-gpu captures of the same 8 GPUs (index,
#    uuid; 3 rounds each, 10 s apart), read together. Before 5 Dec 2026
#    the GPUs were matched again after each file was read (a device seen
#    in C captures cost C each time: 36 s of user CPU on the shared build
#    machine; now about 0.2 s).
# Each must give what the construction says: 60,000 devices matched by uuid; 120,000 GPUs on 7,500 hosts, no
# finding and no confound (every GPU at 600 W); 16,000 GPUs of 8 devices.
set -eu
cd "$(dirname "$0")/../.."
TS=$(cd "$(dirname "${TS:-build/trainscope}")" && pwd)/$(basename "${TS:-build/trainscope}")
command -v python3 >/dev/null || { echo "skip: python3 not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
python3 - <<'PY'
import calendar, json, os, time
T0 = calendar.timegm((2026, 2, 1, 12, 0, 0))
for name, off in (("ids1.csv", 0), ("ids2.csv", 10)):
    st = time.strftime("%Y/%m/%d %H:%M:%S", time.gmtime(T0 + off)) + ".000"
    with open(name, "w") as f:
        f.write("timestamp, index, uuid, power.draw [W]\n")
        f.writelines("%s, %d, GPU-%08x-0000-0000-0000-000000000000, 600.00 W\n" % (st, g, g)
                     for g in range(60000))
for name, off in (("h1", 0), ("h2", 100)):
    os.mkdir(name)
    with open(name + "/gpu.metrics.txt", "w") as f:
        f.writelines('DCGM_FI_DEV_POWER_USAGE{gpu="%d",UUID="GPU-%08x-1111-2222-3333-000000000000",'
                     'Hostname="node%05d"} 600 %d\n' % (g, h * 8 + g, h, (T0 + off) * 1000)
                     for h in range(7500) for g in range(8))
    with open(name + "/metrics.jsonl", "w") as f:
        for k in range(20):
            f.write(json.dumps({"iteration": k + 1, "step_ms": 800.0, "tokens": 1024,
                                "t_start_unix": T0 + off + 0.8 * k}) + "\n")
os.mkdir("caps")
for c in range(2000):
    with open("caps/c%04d.csv" % c, "w") as f:
        f.write("timestamp, index, uuid, power.draw [W]\n")
        for i in range(3):
            st = time.strftime("%Y/%m/%d %H:%M:%S", time.gmtime(T0 + 10 * c + i)) + ".000"
            f.writelines("%s, %d, GPU-%08x-0000-0000-0000-000000000000, 600.00 W\n" % (st, g, g)
                         for g in range(8))
PY
fail=0
# run NAME CMD...: the command exits 0
run() {
	local n=$1
	shift
	if ! "$@" >/dev/null 2>"$n.err"; then
		echo "  wrong: $n exited non-zero: $(head -c 300 "$n.err")"
		fail=1
	fi
}
run ids "$TS" watch --read ids1.csv ids2.csv --json -o ids.json
run hosts "$TS" watch --read h1/gpu.metrics.txt h2/gpu.metrics.txt --json -o hosts.json
run ab "$TS" ab --json -o ab.json h1 h2
run captures "$TS" watch --read caps/*.csv --json -o caps.json
python3 - <<'PY' || fail=1
import json
d = json.load(open("ids.json"))
assert len(d["gpus"]) == 120000, len(d["gpus"])
assert [(g["device"], g["matched_by"]) for g in d["gpus"]] == [(i, "uuid") for i in range(60000)] * 2
h = json.load(open("hosts.json"))
assert len(h["gpus"]) == 120000, len(h["gpus"])
assert len({g["host"] for g in h["gpus"]}) == 7500
assert [x for x in h["findings"] if x["id"] != "counter-untrustworthy"] == [], h["findings"][:3]
a = json.load(open("ab.json"))
assert [w for w in a["warnings"] if w["code"] == "telemetry-confound"] == []
c = json.load(open("caps.json"))
assert len(c["gpus"]) == 16000, len(c["gpus"])
assert [(g["capture"], g["device"], g["matched_by"]) for g in c["gpus"]] == \
    [(k, i, "uuid") for k in range(2000) for i in range(8)]
PY
[ $fail = 0 ] || exit 1
echo "watch-many-gpus: ok"
