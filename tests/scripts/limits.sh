#!/usr/bin/env bash
# Limits (issue 21): the memory budget stops a trace that needs more early,
# with exit 2 and the number of events read; one size cap for small
# documents (16 MiB, TS_DOC_MAX_BYTES) in every command, while a Megatron
# log given to --model is streamed only to the end of its arguments block;
# a count given as 0 in a config is an error, not "not stated".
set -u
. "$(dirname "$0")/lib.sh"
case $TS in /*) ;; *) TS=$PWD/$TS ;; esac
case $DATA in /*) ;; *) DATA=$PWD/$DATA ;; esac
command -v python3 >/dev/null || exit 77
[ -f "$DATA/models/llama3-8b.json" ] || exit 77
cd "$tmp" || exit 1

# 100 000 one-microsecond kernels (about 12 MB of JSON)
python3 - <<'PY'
import json
ev = [{"ph": "X", "cat": "cpu_op", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0,
       "dur": 10000000}]
ev += [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": i * 3, "dur": 1,
        "args": {"device": 0, "stream": 7}} for i in range(100000)]
json.dump({"schemaVersion": 1, "traceEvents": ev}, open("many.json", "w"))
PY
# 8 MiB at 256 bytes per event (TS_TRACE_EVENT_COST) holds 8*2^20/256 = 32768 events
"$TS" trace --max-memory 8M many.json > /dev/null 2> budget.err
rc=$?
[ $rc = 2 ] || bad "trace over the memory budget: exit $rc, want 2 ($(cat budget.err))"
grep -q "after 32768 events read" budget.err || bad "budget message: $(cat budget.err)"
"$TS" trace --max-memory 512M many.json > /dev/null 2>&1 || bad "trace within a 512M budget failed"
"$TS" trace --max-memory 0 many.json > /dev/null 2>&1
[ $? = 2 ] || bad "--max-memory 0 is accepted"

# a config padded past 16 MiB is refused before it is parsed
python3 - "$DATA/models/llama3-8b.json" <<'PY'
import sys
body = open(sys.argv[1]).read().rstrip()
assert body.endswith("}")
open("padded.json", "w").write(body[:-1] + " " * (17 << 20) + "}\n")
PY
for cmd in "memory --model padded.json --tp 1 --gpus 8 --gbs 8 --seq 4096 --gpu-mem 80" \
	   "mfu --model padded.json --seq 4096 --gbs 1024 --gpus 16 --step-time 25 --gpu H100"; do
	timeout 20 "$TS" $cmd > /dev/null 2> cap.err
	rc=$?
	[ $rc = 2 ] || bad "$cmd: exit $rc, want 2"
	grep -q "16 MiB" cap.err || bad "$cmd: message: $(head -c 300 cap.err)"
done

# a long Megatron log: only the arguments block is read, as for a short one
printf '0: %s\n' '------------------------ arguments ------------------------' \
	'  ffn_hidden_size ................................. 4096' \
	'  hidden_size ..................................... 1024' \
	'  num_attention_heads ............................. 16' \
	'  num_layers ...................................... 8' \
	'  padded_vocab_size ............................... 32000' \
	'  seq_length ...................................... 2048' \
	'  micro_batch_size ................................ 1' \
	'  global_batch_size ............................... 16' \
	'  world_size ...................................... 8' \
	'-------------------- end of arguments ---------------------' > short.log
cp short.log long.log
python3 - <<'PY'
with open("long.log", "a") as f:
    line = " iteration %8d/ 9999999 | elapsed time per iteration (ms): 100.0 |\n"
    for i in range(1, 300001):
        f.write(line % i)
PY
"$TS" memory --model short.log --estimator megatron > short.out 2>&1 || bad "memory on the short log failed: $(cat short.out)"
"$TS" memory --model long.log --estimator megatron > long.out 2>&1 || bad "memory on a $(wc -c < long.log)-byte log failed: $(head -c 300 long.out)"
sed 's/long.log/short.log/g' long.out | cmp -s - short.out || bad "memory differs between the short and the long log"

# a count given as 0 is an error naming the field
for key in num_key_value_heads hidden_size num_attention_heads; do
	python3 - "$DATA/models/llama3-8b.json" "$key" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d[sys.argv[2]] = 0
json.dump(d, open("zero.json", "w"))
PY
	"$TS" mfu --model zero.json --seq 4096 --gbs 1024 --gpus 16 --step-time 25 --gpu H100 > /dev/null 2> zero.err
	rc=$?
	[ $rc = 2 ] || bad "$key: 0 accepted (exit $rc)"
	grep -q "\"$key\"" zero.err || bad "$key: 0: message does not name the field: $(cat zero.err)"
done
exit $fail
