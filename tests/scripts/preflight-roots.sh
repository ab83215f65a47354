#!/usr/bin/env bash
# preflight on fake machines: each rule fires on a root built to trigger it,
# with the evidence it should name, and a clean root fires none; a library
# whose constructor hangs is killed at the load timeout; the ld.so cache
# parser agrees with glibc's own ldconfig (written by `ldconfig -r` into a
# fake root, and `ldconfig -p` on this machine). Expected values are the
# files this script writes, not preflight output.
set -u
cd "$(dirname "$0")/../.."
TS=${TS:-build/trainscope}
command -v python3 >/dev/null || { echo "no python3"; exit 77; }
command -v cc >/dev/null || { echo "no cc"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
check() { # name, json file, python expression over j (the parsed JSON)
	if python3 -c "import json,sys; j=json.load(open(sys.argv[1])); ids=[f['id'] for f in j['findings']]; ev=' | '.join(f['evidence'] for f in j['findings']); assert $3, (ids, ev)" "$2" 2>"$T/err"; then
		echo "ok   $1"
	else
		echo "FAIL $1: $(tail -1 "$T/err")"; fail=1
	fi
}
pci() { # root bdf vendor class width maxwidth speed maxspeed
	local d=$1/sys/bus/pci/devices/$2
	mkdir -p "$d"
	echo "$3" >"$d/vendor"; echo 0x0400 >"$d/device"; echo "$4" >"$d/class"
	echo "$5" >"$d/current_link_width"; echo "$6" >"$d/max_link_width"
	echo "$7" >"$d/current_link_speed"; echo "$8" >"$d/max_link_speed"; echo 0 >"$d/numa_node"
}
mklib() { # root dir realname soname links...
	local r=$1 d=$2 real=$3; shift 3
	mkdir -p "$r$d"; : >"$r$d/$real"
	for l in "$@"; do ln -sf "$real" "$r$d/$l"; done
}
run() { # out root [env...] -- runs with a controlled environment
	local out=$1 root=$2; shift 2
	env -i PATH="$PATH" "$@" "$TS" preflight --root "$root" --json >"$out"
	echo $? >"$out.rc"
}
rc() { cat "$1.rc"; }
GOOD_ENV="TORCH_FR_BUFFER_SIZE=2000 CUDA_DEVICE_MAX_CONNECTIONS=1"

# 1. NVML library 570.124.04 under a 570.124.06 kernel module
R=$T/nvml; mkdir -p $R/proc/driver/nvidia $R/etc
echo "NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.124.06  Wed Feb 26 00:00:00 UTC 2025" >$R/proc/driver/nvidia/version
pci $R 0000:18:00.0 0x10de 0x030200 16 16 "32.0 GT/s PCIe" "32.0 GT/s PCIe"
mklib $R /usr/lib/x86_64-linux-gnu libnvidia-ml.so.570.124.04 libnvidia-ml.so.1
run $T/nvml.json $R $GOOD_ENV
check "nvml-driver-mismatch (error, both versions)" $T/nvml.json "'nvml-driver-mismatch' in ids and '570.124.06' in ev and '570.124.04' in ev and j['findings'][0]['severity']=='error'"
[ "$(rc $T/nvml.json)" = 1 ] && echo "ok   exit 1 on an error finding" || { echo "FAIL exit $(rc $T/nvml.json), want 1"; fail=1; }

# 2. two NCCL copies: LD_LIBRARY_PATH puts 2.18.1 ahead of torch's 2.21.5
R=$T/shadow; SP=/usr/local/lib/python3.10/dist-packages
pci $R 0000:18:00.0 0x10de 0x030200 16 16 "32.0 GT/s PCIe" "32.0 GT/s PCIe"
mkdir -p $R$SP/torch; : >$R$SP/torch/__init__.py
mklib $R $SP/nvidia/nccl/lib libnccl.so.2.21.5 libnccl.so.2
mklib $R /opt/nccl/lib libnccl.so.2.18.1 libnccl.so.2
run $T/shadow.json $R $GOOD_ENV LD_LIBRARY_PATH=/opt/nccl/lib
check "library-shadowed names both copies" $T/shadow.json "'library-shadowed' in ids and '/opt/nccl/lib/libnccl.so.2.18.1' in ev and 'nvidia/nccl/lib/libnccl.so.2.21.5' in ev"
check "nccl copies listed with versions" $T/shadow.json "sorted(c['version'] for l in j['libraries'] if l['name']=='nccl' for c in l['copies'])==['2.18.1','2.21.5']"

# 3. Moore Threads card at x8 of x16 in a container without the toolkit, IOMMU off
R=$T/musa; mkdir -p $R/sys/class/iommu $R/dev $R/proc
pci $R 0000:08:00.0 0x1ed5 0x120000 8 16 "32.0 GT/s PCIe" "32.0 GT/s PCIe"
: >$R/.dockerenv; : >$R/dev/mtgpu.0; echo "BOOT_IMAGE=/vmlinuz root=/dev/sda1" >$R/proc/cmdline
run $T/musa.json $R $GOOD_ENV
check "pcie-link-degraded x8 of x16" $T/musa.json "'pcie-link-degraded' in ids and 'x8 of x16' in ev"
check "musa-iommu-off from sysfs" $T/musa.json "'musa-iommu-off' in ids and '/sys/class/iommu' in ev"
check "musa-toolkit-missing-in-container" $T/musa.json "'musa-toolkit-missing-in-container' in ids and '/dev/mtgpu.0' in ev and '.dockerenv' in ev"
check "vendor mthreads from PCI 0x1ed5" $T/musa.json "j['vendor']=='mthreads' and '0x1ed5' in j['vendor_chain']"

# 4. libmccl from MUSA and MetaX; muDNN present
R=$T/mccl
pci $R 0000:08:00.0 0x1ed5 0x120000 16 16 "32.0 GT/s PCIe" "32.0 GT/s PCIe"
mklib $R /usr/local/musa/lib libmccl.so.2.11.0 libmccl.so
mklib $R /opt/maca/lib libmccl.so.2.9.0 libmccl.so
mklib $R /usr/local/musa/lib libmudnn.so.3.3.0 libmudnn.so
mklib $R /usr/local/musa/lib libsrv_um_MUSA.so.3.3.0 libsrv_um_MUSA.so
run $T/mccl.json $R $GOOD_ENV LD_LIBRARY_PATH=/opt/maca/lib:/usr/local/musa/lib
check "mccl-ambiguous names both roots" $T/mccl.json "'mccl-ambiguous' in ids and '/opt/maca/lib/libmccl.so.2.9.0' in ev and '/usr/local/musa/lib/libmccl.so.2.11.0' in ev"
check "tf32-default-differs (muDNN)" $T/mccl.json "'tf32-default-differs' in ids and 'libmudnn.so.3.3.0' in ev"

# 5. runtime CUDA 13.0 (file name) with a 550.54.15 driver (CUDA 12.4)
R=$T/cudart; mkdir -p $R/sys/module/nvidia
echo 550.54.15 >$R/sys/module/nvidia/version
pci $R 0000:18:00.0 0x10de 0x030200 16 16 "2.5 GT/s PCIe" "32.0 GT/s PCIe"
# /usr/local/cuda is an absolute link, resolved inside the root (not the host's)
mklib $R /opt/cuda-13.0.48/lib64 libcudart.so.13.0.48 libcudart.so.13
mkdir -p $R/usr/local; ln -s /opt/cuda-13.0.48 $R/usr/local/cuda
run $T/cudart.json $R LD_LIBRARY_PATH=/usr/local/cuda/lib64
check "cuda-runtime-newer-than-driver 13.0 vs 12.4" $T/cudart.json "'cuda-runtime-newer-than-driver' in ids and '/opt/cuda-13.0.48/lib64/libcudart.so.13.0.48 13.0.48' in ev and 'CUDA 12.4' in ev"
check "idle link speed is info only" $T/cudart.json "any(f['id']=='pcie-link-degraded' and f['severity']=='info' and '2.5 GT/s of 32.0' in f['evidence'] for f in j['findings'])"
check "flight-recorder-off when unset" $T/cudart.json "'flight-recorder-off' in ids"
check "cuda-device-max-connections-unset" $T/cudart.json "'cuda-device-max-connections-unset' in ids"

# 6. clean machine: nothing fires, exit 0
R=$T/clean; mkdir -p $R/proc/driver/nvidia $R/sys/class/iommu/dmar0
echo "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.124.06  Release Build" >$R/proc/driver/nvidia/version
pci $R 0000:18:00.0 0x10de 0x030200 16 16 "32.0 GT/s PCIe" "32.0 GT/s PCIe"
mklib $R /usr/lib/x86_64-linux-gnu libnvidia-ml.so.570.124.06 libnvidia-ml.so.1
mklib $R /usr/lib/x86_64-linux-gnu libcudart.so.12.8.90 libcudart.so.12
run $T/clean.json $R $GOOD_ENV
check "clean root: no findings" $T/clean.json "ids==[]"
[ "$(rc $T/clean.json)" = 0 ] && echo "ok   clean root exits 0" || { echo "FAIL clean root exit $(rc $T/clean.json)"; fail=1; }
check "clean root: open kernel module version read" $T/clean.json "j['drivers'][0]['version']=='570.124.06'"

# 7. a library whose constructor hangs is killed at the load timeout
L=$T/hang; mkdir -p $L
printf '#include <unistd.h>\n__attribute__((constructor)) static void h(void) { sleep(30); }\nint ncclGetVersion(int *v) { *v = 22105; return 0; }\n' >$L/h.c
printf 'int cuDriverGetVersion(int *v) { *v = 12040; return 0; }\n' >$L/cu.c
printf 'int cudaRuntimeGetVersion(int *v) { *v = 13000; return 0; }\n' >$L/rt.c
cc -shared -fPIC -Wl,-soname,libnccl.so.2 -o $L/libnccl.so.2 $L/h.c &&
cc -shared -fPIC -Wl,-soname,libcuda.so.1 -o $L/libcuda.so.1 $L/cu.c &&
cc -shared -fPIC -Wl,-soname,libcudart.so.13 -o $L/libcudart.so.13 $L/rt.c || { echo "cc -shared failed"; exit 77; }
start=$(date +%s)
env -i PATH="$PATH" LD_LIBRARY_PATH=$L "$TS" preflight --no-python --load-timeout-ms 500 --json >$T/hang.json
echo $? >$T/hang.json.rc
took=$(( $(date +%s) - start ))
check "hanging constructor killed and reported" $T/hang.json "any(l['name']=='nccl' and l['loaded'] is False and 'timed out after 500 ms' in (l['load_error'] or '') for l in j['libraries'])"
check "own version calls in the child (12.4 driver, 13.0 runtime)" $T/hang.json "any(l['name']=='cuda' and l['version']=='12.4' and l['version_source']=='cuDriverGetVersion' for l in j['libraries']) and any(l['name']=='cudart' and l['version']=='13.0' and l['path']=='$L/libcudart.so.13' for l in j['libraries'])"
check "cuda-runtime-newer-than-driver from the version calls" $T/hang.json "'cuda-runtime-newer-than-driver' in ids and 'cudaRuntimeGetVersion' in ev and 'cuDriverGetVersion 12.4' in ev"
[ $took -lt 10 ] && echo "ok   hang run took ${took}s" || { echo "FAIL hang run took ${took}s"; fail=1; }

# 8. the ld.so cache parser against glibc's ldconfig
if ldconfig -p >$T/ldp 2>/dev/null; then
	want=$(sed -n 's/^\([0-9]*\) libs found.*/\1/p' $T/ldp)
	env -i PATH="$PATH" "$TS" preflight --no-load --no-python --json >$T/live.json
	check "ld.so.cache entry count = ldconfig -p ($want)" $T/live.json "j['host']['ld.so.cache'].startswith('$want entries')"
fi
R=$T/cache; mkdir -p $R/etc $R/usr/lib/nvidia $R/proc/driver/nvidia
cc -shared -fPIC -Wl,-soname,libnvidia-ml.so.1 -o $R/usr/lib/nvidia/libnvidia-ml.so.535.104.05 $L/cu.c
echo /usr/lib/nvidia >$R/etc/ld.so.conf
echo "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar 5 00:00:00 UTC 2024" >$R/proc/driver/nvidia/version
if ldconfig -r $R -C /etc/ld.so.cache -f /etc/ld.so.conf 2>/dev/null && [ -e $R/etc/ld.so.cache ]; then
	run $T/cache.json $R $GOOD_ENV
	check "loader pick through a glibc-written ld.so.cache" $T/cache.json "any(l['name']=='nvml' and l['picked_via']=='ld.so.cache' and l['path']=='/usr/lib/nvidia/libnvidia-ml.so.535.104.05' for l in j['libraries'])"
	check "nvml-driver-mismatch via the cache" $T/cache.json "'nvml-driver-mismatch' in ids and '535.104.05' in ev and '550.54.15' in ev"
else
	echo "skip ldconfig -r (needs root)"
fi
# 9. the python3 child: a stand-in torch that maps another libnccl than the
#    one in its site-packages
SPD=$T/venv/lib/python3/site-packages
mkdir -p $SPD/torch $SPD/nvidia/nccl/lib $T/other
: >$SPD/nvidia/nccl/lib/libnccl.so.2.21.5; ln -sf libnccl.so.2.21.5 $SPD/nvidia/nccl/lib/libnccl.so.2
cp $L/libcuda.so.1 $T/other/libnccl.so.2
printf 'import ctypes\n__version__ = "2.7.1"\nclass version:\n    cuda = "12.8"\n    hip = None\n    debug = False\nctypes.CDLL("%s")\n' "$T/other/libnccl.so.2" >$SPD/torch/__init__.py
env -i PATH="$PATH" PYTHONPATH=$SPD $GOOD_ENV "$TS" preflight --no-load --json >$T/py.json
check "python child: torch version and build" $T/py.json "j['facts']['torch.version']=='2.7.1' and j['facts']['torch.cuda']=='12.8'"
check "python child: library-shadowed from /proc/self/maps" $T/py.json "any(f['id']=='library-shadowed' and '/proc/self/maps' in f['evidence'] and '$T/other/libnccl.so.2' in f['evidence'] and 'libnccl.so.2.21.5' in f['evidence'] for f in j['findings'])"

# the python3 child is killed at its timeout
mkdir -p $T/slow/torch; printf 'import time\ntime.sleep(30)\n' >$T/slow/torch/__init__.py
start=$(date +%s)
env -i PATH="$PATH" PYTHONPATH=$T/slow "$TS" preflight --no-load --python-timeout-ms 700 --json >$T/slow.json
took=$(( $(date +%s) - start ))
check "python child killed at its timeout (${took}s)" $T/slow.json "any(p['probe']=='python3' and 'timed out' in p['result'] for p in j['probes']) and $took < 10"

# 10. nodes: three alike, one with another driver and a link at x8
mkdir -p $T/nodes
for n in n1 n2 n3; do env -i PATH="$PATH" $GOOD_ENV "$TS" preflight --root $T/clean --json -o $T/nodes/$n.json; done
R=$T/odd; mkdir -p $R/proc/driver/nvidia
echo "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar 5 00:00:00 UTC 2024" >$R/proc/driver/nvidia/version
pci $R 0000:18:00.0 0x10de 0x030200 8 16 "32.0 GT/s PCIe" "32.0 GT/s PCIe"
env -i PATH="$PATH" $GOOD_ENV "$TS" preflight --root $R --json -o $T/nodes/n4.json
"$TS" preflight --nodes $T/nodes --json >$T/nodes.json; echo $? >$T/nodes.json.rc
python3 -c "import json,sys; j=json.load(open(sys.argv[1])); o=[n['node'] for n in j['nodes'] if n['outlier']]; d=[n for n in j['nodes'] if n['node']=='n4.json'][0]['differs']; assert o==['n4.json'] and 'drivers' in d and 'min_link_width' in d, (o, d)" $T/nodes.json &&
	[ "$(cat $T/nodes.json.rc)" = 1 ] && echo "ok   --nodes marks the odd node (driver, link), exit 1" || { echo "FAIL --nodes"; fail=1; }

# 11. diagnose shows the findings of a recorded preflight
if [ -d examples/run ]; then
	cp -r examples/run $T/run && cp $T/nvml.json $T/run/preflight.json
	"$TS" diagnose --json $T/run >$T/diag.json 2>/dev/null
	python3 -c "import json,sys; j=json.load(open(sys.argv[1])); assert any(f['title']=='preflight nvml-driver-mismatch' and f['level']=='bad' and '570.124.04' in f['detail'] for f in j['findings'])" $T/diag.json &&
		echo "ok   diagnose lists the preflight finding" || { echo "FAIL diagnose preflight findings"; fail=1; }
fi

# 12. this machine, when it has no accelerator: exit 0, "no accelerator found", the probes listed
if ! grep -qsE '0x(10de|1ed5|1002|9999)' /sys/bus/pci/devices/*/vendor; then
	"$TS" preflight >$T/live.txt; lrc=$?
	if [ $lrc = 0 ] && grep -q "^no accelerator found" $T/live.txt &&
	   for p in pci "device nodes" "kernel drivers" python3 "library search" "dlopen in a child" environment host; do grep -q "^  $p  " $T/live.txt || exit 1; done; then
		echo "ok   this machine: exit 0, no accelerator found, probes listed"
	else
		echo "FAIL this machine (exit $lrc)"; cat $T/live.txt; fail=1
	fi
fi
exit $fail
