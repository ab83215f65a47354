#!/usr/bin/env bash
# Cells and captures of `watch --read` on SYNTHETIC captures written here,
# every expectation worked out by hand from the cells below:
#  - cells.csv (--query-gpu, GPU 0, 4 rows, lines 2-5): row 2 is clean;
#    row 3 has 600000 mW, 1.5 GHz, 150 % and 2 GiB (power 600 W, clock
#    1500 MHz, memory 2048 MiB converted: 3 cells; 150 % is out of range);
#    row 4 has -5 W (out of range), "abc" and "3 furlongs" (bad cells) and
#    [N/A] (silent); row 5 has [Not Supported] memory (silent). So power
#    500, 600, 400 (3 values, 1 missing), clock 1980, 1500, 1980, util 90,
#    80 (2 values), memory 1000, 2048; one warning per kind: unit-converted
#    (3, first line 3, power.draw), out-of-range (2, first line 3,
#    utilization.gpu), bad-cell (2, first line 4, clocks.sm).
#  - neg.txt (dmon, untimed, 4 rows, lines 3-6): pwr -5 and fb -3 and sm 101
#    are out of range (3, first line 4, pwr), "abc" in sm is a bad cell
#    (1, line 4), "-" stays unsupported: power 500, 510 (mean 505).
#  - a.txt and b.txt (dmon, one GPU "0" each, 3 rows) with dbecc 1, 1, 1 and
#    0, 2, 0, read together: two GPUs keyed (capture, id), each with its
#    ecc-uncorrectable finding (3 of 3 samples, max 1, last 1; 1 of 3, max
#    2, last positive value 2) named "GPU 0 of a.txt" / "GPU 0 of b.txt" in the text and
#    the findings, with capture 0 / 1 and their file in the JSON; a.txt
#    read alone has no capture key and no "of".
set -eu
cd "$(dirname "$0")/../.."
TS=$(cd "$(dirname "${TS:-build/trainscope}")" && pwd)/$(basename "${TS:-build/trainscope}")
command -v python3 >/dev/null || { echo "skip: python3 not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/cells.csv" <<'CSV'
timestamp, index, power.draw [W], clocks.sm [MHz], utilization.gpu [%], memory.used [MiB]
2026/03/01 10:00:00.000, 0, 500.00 W, 1980 MHz, 90 %, 1000 MiB
2026/03/01 10:00:01.000, 0, 600000 mW, 1.5 GHz, 150 %, 2 GiB
2026/03/01 10:00:02.000, 0, -5 W, abc, [N/A], 3 furlongs
2026/03/01 10:00:03.000, 0, 400.00 W, 1980 MHz, 80 %, [Not Supported]
CSV
cat >"$tmp/neg.txt" <<'DMON'
# gpu    pwr     sm     fb
# Idx      W      %     MB
    0    500     90   1000
    0     -5    abc   1000
    0    510    101     -3
    0      -     95   1000
DMON
printf '# gpu    pwr  dbecc\n# Idx      W   errs\n' | tee "$tmp/a.txt" >"$tmp/b.txt"
for e in "1 0" "1 2" "1 0"; do
	set -- $e
	printf '    0    500  %5d\n' "$1" >>"$tmp/a.txt"
	printf '    0    500  %5d\n' "$2" >>"$tmp/b.txt"
done
cd "$tmp"
"$TS" watch --read cells.csv --json -o cells.json
"$TS" watch --read neg.txt --json -o neg.json
"$TS" watch --read a.txt b.txt --json -o two.json
"$TS" watch --read a.txt b.txt >two.txt
"$TS" watch --read a.txt --json -o one.json
python3 - <<'PY'
import json
def load(n):
    return json.load(open(n + ".json"))
def warn(d, code):
    w = [x for x in d["warnings"] if x["code"] == code]
    assert len(w) <= 1, w
    return w[0] if w else None
d = load("cells")
f = d["gpus"][0]["fields"]
assert (f["power_w"]["mean"], f["power_w"]["min"], f["power_w"]["max"], f["power_w"]["values"],
        f["power_w"]["missing"]) == (500, 400, 600, 3, 1), f["power_w"]
assert (f["sm_clock_mhz"]["min"], f["sm_clock_mhz"]["values"]) == (1500, 3), f["sm_clock_mhz"]
assert (f["util_pct"]["mean"], f["util_pct"]["values"], f["util_pct"]["missing"]) == (85, 2, 2), f["util_pct"]
assert (f["mem_used_mib"]["min"], f["mem_used_mib"]["max"], f["mem_used_mib"]["values"]) == (1000, 2048, 2), f["mem_used_mib"]
w = warn(d, "unit-converted")
assert w["line"] == 3 and w["message"] == ("cells.csv: 3 cell(s) in another unit than their column's: converted "
                                           "(first: column 'power.draw', '600000 mW': read as 600 W)"), w
w = warn(d, "out-of-range")
assert w["line"] == 3 and w["message"] == ("cells.csv: 2 value(s) outside their field's range: left out as "
                                           "missing (first: column 'utilization.gpu', '150 %': a share is 0-100 %)"), w
w = warn(d, "bad-cell")
assert w["line"] == 4 and w["message"] == ("cells.csv: 2 cell(s) of numeric columns that are no number in the "
                                           "column's unit: left out as missing (first: column 'clocks.sm', 'abc': "
                                           "not a number)"), w
d = load("neg")
f = d["gpus"][0]["fields"]
assert (f["power_w"]["mean"], f["power_w"]["values"]) == (505, 2), f["power_w"]
assert (f["util_pct"]["values"], f["mem_used_mib"]["values"]) == (2, 3), f
w = warn(d, "out-of-range")
assert w["line"] == 4 and w["message"] == ("neg.txt: 3 value(s) outside their field's range: left out as missing "
                                           "(first: column 'pwr', '-5': it cannot be negative)"), w
w = warn(d, "bad-cell")
assert w["line"] == 4 and "1 cell(s)" in w["message"] and "column 'sm', 'abc'" in w["message"], w
assert warn(d, "unit-converted") is None
d = load("two")
assert [(g["id"], g["capture"], g["file"]) for g in d["gpus"]] == [("0", 0, "a.txt"), ("0", 1, "b.txt")], d["gpus"]
ecc = [(x["gpu"], x["capture"], x["message"]) for x in d["findings"] if x["id"] == "ecc-uncorrectable"]
assert ecc == [("0", 0, "GPU 0 of a.txt: uncorrectable (double-bit) ECC errors in 3 of 3 samples (max 1, last 1)"),
               ("0", 1, "GPU 0 of b.txt: uncorrectable (double-bit) ECC errors in 1 of 3 samples (max 2, last 2)")], ecc
t = open("two.txt").read().split("\n")
assert t[0] == "telemetry: nvidia-smi-dmon (text-capture), 2 GPUs, 6 samples from 2 captures (a GPU is named with its capture)", t[0]
assert t[1].split() == ["gpu", "capture", "name", "samples", "power_w", "(W)"], t[1]
assert t[3].split()[:2] == ["0", "a.txt"] and t[4].split()[:2] == ["0", "b.txt"], t
assert "  [warning] ecc-uncorrectable: GPU 0 of b.txt: uncorrectable (double-bit) ECC errors in 1 of 3 samples (max 2, last 2)" in t, t
d = load("one")
assert "capture" not in d["gpus"][0] and all("capture" not in x for x in d["findings"]), d
assert [x["message"] for x in d["findings"] if x["id"] == "ecc-uncorrectable"] == [
    "GPU 0: uncorrectable (double-bit) ECC errors in 3 of 3 samples (max 1, last 1)"], d["findings"]
PY
echo "watch-cells: ok"
