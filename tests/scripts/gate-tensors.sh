#!/usr/bin/env bash
# trainscope tensors on safetensors files written here with python3's struct
# module (format: u64 LE header length, JSON header, raw LE data): exit 0
# when equivalent, 1 when a tensor is outside tolerance or NaN, 2 on a bad file.
set -u
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
python3 - "$tmp" <<'PY'
import json, struct, sys
d = sys.argv[1]
def write(path, tensors):
    hdr, data = {}, b''
    for name, (dt, shape, raw) in tensors.items():
        hdr[name] = {"dtype": dt, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    h = json.dumps(hdr).encode()
    open(path, 'wb').write(struct.pack('<Q', len(h)) + h + data)
# logits: bf16 1.0 (0x3f80) vs 1.0078125 (0x3f81) is within bf16's rtol 1.6e-2
write(d + '/a.safetensors', {"logits": ("BF16", [2], b'\x80\x3f\x80\x3f'),
                             "grad.w": ("F32", [3], struct.pack('<3f', 0.5, -1.0, 2.0))})
write(d + '/b.safetensors', {"logits": ("BF16", [2], b'\x81\x3f\x80\x3f'),
                             "grad.w": ("F32", [3], struct.pack('<3f', 0.5, -1.0, 2.0))})
# c: grad.w[2] = 2.01, |diff| 0.01 > 1e-5 + 1.3e-6 * 2
write(d + '/c.safetensors', {"logits": ("BF16", [2], b'\x80\x3f\x80\x3f'),
                             "grad.w": ("F32", [3], struct.pack('<3f', 0.5, -1.0, 2.01))})
write(d + '/nan.safetensors', {"logits": ("BF16", [2], b'\xc0\x7f\x80\x3f'),
                               "grad.w": ("F32", [3], struct.pack('<3f', 0.5, -1.0, 2.0))})
open(d + '/bad.safetensors', 'wb').write(struct.pack('<Q', 1000) + b'{}')
PY
fail=0
check() { # want-exit description command...
	local want=$1 what=$2; shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"
	local got=$?
	if [ "$got" != "$want" ]; then
		echo "FAIL $what: exit $got, want $want"; cat "$tmp/out" "$tmp/err"; fail=1
	fi
}
check 0 "equivalent within bf16 tolerance" "$TS" tensors "$tmp/a.safetensors" "$tmp/b.safetensors"
grep -q "equivalent within tolerance" "$tmp/out" || { echo "FAIL: no verdict line"; fail=1; }
check 1 "fp32 gradient outside tolerance" "$TS" tensors "$tmp/a.safetensors" "$tmp/c.safetensors"
check 1 "NaN in candidate" "$TS" tensors --json "$tmp/a.safetensors" "$tmp/nan.safetensors"
grep -q '"status": "nan_or_inf"' "$tmp/out" || { echo "FAIL: NaN not reported"; fail=1; }
grep -q '"passed": false' "$tmp/out" || { echo "FAIL: passed not false"; fail=1; }
check 2 "header length beyond the file" "$TS" tensors "$tmp/a.safetensors" "$tmp/bad.safetensors"
grep -q "bad.safetensors: byte 0" "$tmp/err" || { echo "FAIL: error does not name file+offset"; cat "$tmp/err"; fail=1; }
check 2 "one argument" "$TS" tensors "$tmp/a.safetensors"
exit $fail
