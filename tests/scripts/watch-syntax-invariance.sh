#!/usr/bin/env bash
# Value-level oracle for the nvidia-smi --query-gpu CSV reader: one capture
# (4 GPUs, 60 rounds, a power sag and a clock drop on GPU 2, "[N/A]" and
# "[Not Supported]" values) written the ways users run nvidia-smi must give
# the same `watch --read --json`. The reference is `--format=csv` with the
# fields in one order; each variant takes, at random: another field order,
# `nounits` (header without "[W]", values without " W"), `noheader` (the
# field list then given with --fields, or as the `# --query-gpu=` comment
# line a script writes), CRLF line ends, no blank after the commas, a
# trailing blank line, one launcher task's prefix on every line (srun -l,
# torchrun, mpirun), a log collector's RFC 3339 timestamp before every line
# (kubectl logs --timestamps). Only the file path may differ.
#   VARIANTS  variants (default 30); SEED  random seed (default 1)
set -u
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
python3 - "$TS" "$tmp" "${VARIANTS:-30}" "${SEED:-1}" <<'PY'
import json, os, random, subprocess, sys

ts, tmp, nvar, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
# (field, unit as nvidia-smi prints it in the header and after values)
FIELDS = [("timestamp", None), ("index", None), ("name", None), ("pci.bus_id", None),
          ("power.draw", "W"), ("utilization.gpu", "%"), ("utilization.memory", "%"),
          ("clocks.sm", "MHz"), ("clocks.mem", "MHz"), ("memory.used", "MiB"),
          ("memory.total", "MiB"), ("temperature.gpu", None), ("fan.speed", "%"), ("pstate", None)]

def rows():
    rng = random.Random(5)
    out = []
    for t in range(60):
        for g in range(4):
            sag = g == 2 and 30 <= t < 40
            power = 95.0 if sag else 650.0 + rng.uniform(-20, 20)
            v = {"timestamp": "2026/01/06 15:13:%02d.%03d" % (t % 60, 389 + g),
                 "index": str(g), "name": "NVIDIA H200", "pci.bus_id": "00000000:%02X:00.0" % (0x18 + g),
                 "power.draw": "%.2f" % power, "utilization.gpu": str(0 if sag else 97 + rng.randint(0, 3)),
                 "utilization.memory": str(40 + rng.randint(0, 9)),
                 "clocks.sm": str(345 if sag else 1980), "clocks.mem": "2619",
                 "memory.used": str(120000 + 10 * t), "memory.total": "143771",
                 "temperature.gpu": str(60 + g + t // 20), "fan.speed": "[Not Supported]", "pstate": "P0"}
            if t == 7 and g == 1:
                v["power.draw"] = "[N/A]"
            out.append(v)
    return out

def cell(v, unit, units):
    if not units or unit is None or v.startswith("["):
        return v
    return "%s %s" % (v, unit)

def write(path, rng):
    order = list(FIELDS)
    units, header, sep, eol, tail, how = True, True, ", ", "\n", "", None
    if rng:
        if rng.random() < 0.7:
            rng.shuffle(order)
        units = rng.random() < 0.5
        header = rng.random() < 0.6
        sep = ", " if rng.random() < 0.7 else ","
        eol = "\r\n" if rng.random() < 0.3 else "\n"
        tail = eol if rng.random() < 0.3 else ""
        how = None if header else rng.choice(["--fields", "comment"])
    lines = []
    query = ",".join(f for f, _ in order)
    if how == "comment":
        lines.append("# --query-gpu=%s --format=csv,noheader%s" % (query, ",nounits" if not units else ""))
    if header:
        lines.append(sep.join(f + (" [%s]" % u if units and u else "") for f, u in order))
    for v in rows():
        lines.append(sep.join(cell(v[f], u, units) for f, u in order))
    if rng and rng.random() < 0.3:
        # one launcher task's output: "srun -l nvidia-smi ..."
        lines = [rng.choice(["0: ", "[default0]:", "[1,0]<stdout>:"]) + l for l in lines]
    if rng and rng.random() < 0.3:
        # a sidecar's log through kubectl logs --timestamps
        lines = ["2025-09-01T05:20:%02d.%09dZ %s" % (k % 60, k * 7919 % 10 ** 9, l)
                 for k, l in enumerate(lines)]
    open(path, "w", newline="").write(eol.join(lines) + eol + tail)
    return ["--fields", query] if how == "--fields" else []

def analyse(path, extra):
    p = subprocess.run([ts, "watch", "-q", "--read", "--json"] + extra + [path], capture_output=True)
    return p.returncode, p.stdout.decode("utf-8", "replace").replace(path, "FILE"), p.stderr.decode()[:300]

ref_path = os.path.join(tmp, "ref.csv")
ref = analyse(ref_path, write(ref_path, None))
d = json.loads(ref[1]) if ref[0] == 0 else None
if not d or len(d["gpus"]) != 4 or d["gpus"][2]["fields"]["power_w"]["min"] > 100:
    print("FAIL the reference does not read as 4 GPUs with GPU 2's sag (exit %d): %s %s"
          % (ref[0], ref[2], ref[1][:300]))
    sys.exit(1)
rng = random.Random(seed)
fails = 0
for k in range(nvar):
    path = os.path.join(tmp, "v%d.csv" % k)
    got = analyse(path, write(path, rng))
    if got != ref:
        fails += 1
        a, b = ref[1].splitlines(), got[1].splitlines()
        i = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
        print("FAIL variant %d: exit %d; first differing line %d:\n  ref: %s\n  got: %s\n  %s\n  head: %s"
              % (k, got[0], i + 1, a[i][:200] if i < len(a) else "(end)", b[i][:200] if i < len(b) else "(end)",
                 got[2], open(path, newline="").read(300).replace("\r", "\\r").splitlines()[:2]))
print("%d variants, %d differ from the reference" % (nvar, fails))
sys.exit(1 if fails else 0)
PY
