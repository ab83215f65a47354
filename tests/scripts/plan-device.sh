#!/usr/bin/env bash
# What plan does not know about a catalog device is said, and said right:
# B300 has no memory or link bandwidth in the catalog, so its element-wise
# and optimizer time are not priced and its links are the inter-node ones:
# a device-assumed warning names both, and memory_bytes_per_s is null (it
# was 0 with no warning); L40S is in the catalog with its bandwidths and
# lacks only an SM count: sm-count-assumed alone (it was "no catalog
# device" with values it did take from the catalog); H100-SXM: neither.
set -u
TS=${TS:-build/trainscope}
DATA=${DATA:-../shared/data}
[ -f "$DATA/models/qwen3-8b.json" ] || { echo "shared data not found"; exit 77; }
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
fail=0
check() { # SKU EXPECTED-CODES MEM_BW_IS_NULL
	"$TS" plan --model "$DATA/models/qwen3-8b.json" --gpus 16 --gbs 256 --gpu "$1" --layout 1,1,1,1,1 \
		--json | python3 -c '
import json, sys
d = json.load(sys.stdin)
codes = sorted({w["code"] for w in d["warnings"]} & {"device-assumed", "sm-count-assumed"})
want = sorted(c for c in sys.argv[2].split(",") if c)
null = d["memory_bytes_per_s"] is None
ok = codes == want and null == (sys.argv[3] == "null")
msg = " ".join(w["message"] for w in d["warnings"] if w["code"] == "device-assumed")
print("%s: %s, memory_bytes_per_s %s %s%s" % (sys.argv[1], codes, d["memory_bytes_per_s"],
      "" if ok else "FAIL (want %s, %s) " % (want, sys.argv[3]), msg))
if sys.argv[1] == "B300" and not ("memory bandwidth" in msg and "link bandwidth" in msg):
    ok = False
sys.exit(0 if ok else 1)' "$1" "$2" "$3" || fail=1
}
check B300 device-assumed null
check L40S sm-count-assumed value
check H100-SXM "" value
exit $fail
