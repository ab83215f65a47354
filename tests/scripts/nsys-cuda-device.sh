#!/usr/bin/env bash
# Older Nsight Systems exports list their GPUs in TARGET_INFO_CUDA_DEVICE
# (gpuId, cudaId, pid, uuid, numMultiprocessors: one row per device and
# process, no name) instead of TARGET_INFO_GPU. What can honestly be said
# is the CUDA devices and their SM count, not a model (an H100 SXM and an
# H200 both have 132 SMs). Built from ../shared/data/nsys/
# mfu_2gpu_before.sqlite (no TARGET_INFO_GPU) with the table added:
#   same   cudaId 0 and 1, each in 2 processes, 132 SMs
#   mixed  cudaId 0 with 132 SMs, cudaId 1 with 108
# Expected, by construction:
#   same: "TARGET_INFO_CUDA_DEVICE lists 2 CUDA devices with 132 SMs each,
#     no name" under cannot answer; --json capabilities
#     unnamed_cuda_devices 2, unnamed_cuda_device_sm_count 132, gpu_name
#     false;
#   mixed: "lists 2 CUDA devices, no name", sm count null;
#   the export as it is: 0 devices, null (the table absent).
# Before 2026-12-05 the table was not read: the 4 checks of the edited
# exports wrong (the line said only "no TARGET_INFO_GPU", no JSON keys).
set -u
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
command -v python3 >/dev/null || { echo "python3 not found"; exit 77; }
NSYS=$DATA/nsys/mfu_2gpu_before.sqlite
[ -f "$NSYS" ] || { echo "no $NSYS"; exit 77; }
python3 - "$tmp" "$NSYS" <<'PY' || exit 1
import os, shutil, sqlite3, sys
tmp, nsys = sys.argv[1:]
for name, sms in (("same", (132, 132)), ("mixed", (132, 108))):
    p = f"{tmp}/{name}.sqlite"
    shutil.copy(nsys, p)
    os.chmod(p, 0o644)
    db = sqlite3.connect(p)
    db.execute("CREATE TABLE TARGET_INFO_CUDA_DEVICE (gpuId INTEGER, cudaId INTEGER, "
               "pid INTEGER, uuid TEXT, numMultiprocessors INTEGER)")
    for pid in (100, 200):
        for dev in (0, 1):
            db.execute("INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (?, ?, ?, ?, ?)",
                       (dev, dev, pid, "GPU-%d" % dev, sms[dev]))
    db.commit()
    db.close()
PY
bad=0 n=0
ok() { # label, condition status
	n=$((n + 1))
	if [ "$2" = 0 ]; then echo "$1: ok"; else echo "$1: FAIL"; bad=$((bad + 1)); fi
}
caps() { # file, python condition over c (the export's capabilities)
	"$TS" trace --json "$1" 2>/dev/null | python3 -c "
import json, sys
c = json.load(sys.stdin)['nsys'][0]['capabilities']
sys.exit(0 if ($2) else 1)"
}
"$TS" trace "$tmp/same.sqlite" 2>/dev/null |
	grep -q "cannot answer: .*TARGET_INFO_CUDA_DEVICE lists 2 CUDA devices with 132 SMs each, no name"
ok "same: text" $?
caps "$tmp/same.sqlite" "c.get('unnamed_cuda_devices') == 2 and c.get('unnamed_cuda_device_sm_count') == 132 and not c['gpu_name']"
ok "same: json" $?
"$TS" trace "$tmp/mixed.sqlite" 2>/dev/null |
	grep -q "cannot answer: .*TARGET_INFO_CUDA_DEVICE lists 2 CUDA devices, no name"
ok "mixed: text" $?
caps "$tmp/mixed.sqlite" "c.get('unnamed_cuda_devices') == 2 and 'unnamed_cuda_device_sm_count' in c and c['unnamed_cuda_device_sm_count'] is None"
ok "mixed: json" $?
caps "$NSYS" "c.get('unnamed_cuda_devices', 0) == 0 and c.get('unnamed_cuda_device_sm_count') is None"
ok "as it is: no devices" $?
echo "nsys-cuda-device: $bad of $n checks wrong"
[ $bad = 0 ]
