#!/usr/bin/env bash
# memory and plan agree on what a legal job is: an interleaved schedule
# (VPP > 1) with micro-batches not a multiple of PP is refused by memory
# as plan's enumeration refuses it (memory priced PP 4, VPP 3 with 6
# micro-batches). A job need not fill whole nodes: 256 GB200s in NVLink
# domains of 72 is a published run (layout-cases.csv V18).
set -u
. "$(dirname "$0")/lib.sh"
[ -f "$DATA/models/qwen3-8b.json" ] || { echo "shared data not found"; exit 77; }
q=$DATA/models/qwen3-8b.json
expect() { # RC WORDS CMD...
	local want=$1 words=$2
	shift 2
	"$TS" "$@" >/dev/null 2>"$tmp/err"
	local rc=$?
	if [ $rc != "$want" ] || { [ -n "$words" ] && ! grep -q -- "$words" "$tmp/err"; }; then
		echo "FAIL: $*: exit $rc (want $want), $(cat "$tmp/err")"
		fail=1
	fi
}
expect 2 "needs the 6 micro-batches to be a multiple of --pp 4" \
	memory --model "$q" --pp 4 --vpp 3 --gpus 4 --gbs 6
expect 0 "" memory --model "$q" --pp 4 --vpp 3 --gpus 4 --gbs 8
expect 0 "" plan --model "$q" --gpus 4 --gbs 256 --gpu H100-SXM -q
exit $fail
