#!/usr/bin/env bash
# trainscope validate with a model config: a run built from the published
# Qwen3-8B case V6 of expected/flops-cases.csv (16 GPUs, GBS 1024, seq 4096,
# 25.07032 s per step, 512.70 TFLOP/s/GPU published) validates, TFLOP/s
# check included; the same run logging 3 % more TFLOP/s fails that check;
# a declared window containing a NaN step fails loss health; a declared
# window reaching past the log's last iteration (a job that crashed at 60
# with a window to 200) fails the window check, and validate's window
# object is the run's (steps'): it validated with a "matched" window to 200.
# A Megatron log whose batch ramps from 128 to 256 sequences at iteration
# 100 (steps-shift-gen.py): a declared window 20-300 warns that it starts
# in the ramp, one from 150 does not, and the automatic window starts at
# 100 with the ramp as its own group.
set -u
. "$(dirname "$0")/lib.sh"
csv=$DATA/expected/flops-cases.csv
[ -f "$csv" ] && [ -f "$DATA/models/qwen3-8b.json" ] || { echo "shared data not found"; exit 77; }
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
row=$(grep '^V6,' "$csv")
IFS=, read -r _ _ gpus _ _ tp _ _ _ _ _ gbs seq step_s _ pub_tflops _ <<<"$row"
for name in ok high nan; do
	mkdir -p "$tmp/$name"
	cp "$DATA/models/qwen3-8b.json" "$tmp/$name/config.json"
	SOURCE_DATE_EPOCH=1700000000 "$TS" contract capture --no-probe --set model=qwen3-8b \
		--set seq_length="$seq" --set global_batch_size="$gbs" --set device_count="$gpus" \
		--set tp="$tp" --set steady_window=11-60 -o "$tmp/$name/contract.json"
done
python3 - "$tmp" "$step_s" "$pub_tflops" <<'PY'
import json, sys
d, step_s, tflops = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
for name, scale, nan_at in (("ok", 1.0, 0), ("high", 1.03, 0), ("nan", 1.0, 30)):
    with open(f"{d}/{name}/metrics.jsonl", "w") as f:
        for i in range(1, 61):
            loss = "NaN" if i == nan_at else repr(12.0 - 0.01 * i)
            f.write('{"iteration": %d, "step_ms": %r, "tflops": %r, "lm_loss": %s, "grad_norm": 1.0}\n'
                    % (i, step_s * 1000, tflops * scale, loss))
PY
"$TS" validate --json "$tmp/ok" >"$tmp/ok.json"; rc=$?
[ $rc = 0 ] || { bad "V6 run: exit $rc, want 0"; cat "$tmp/ok.json"; }
grep -A2 '"name": "tflops"' "$tmp/ok.json" | grep -q '"status": "pass"' || bad "V6 tflops not pass"
grep -A2 '"name": "window"' "$tmp/ok.json" | grep -q '"status": "pass"' || bad "declared window not pass"
"$TS" validate --json "$tmp/high" >"$tmp/high.json"; rc=$?
[ $rc = 1 ] || bad "3 % high TFLOP/s: exit $rc, want 1"
grep -A2 '"name": "tflops"' "$tmp/high.json" | grep -q '"status": "fail"' || bad "3 % high not failed"
"$TS" validate --json "$tmp/nan" >"$tmp/nan.json"; rc=$?
[ $rc = 1 ] || bad "NaN run: exit $rc, want 1"
grep -A2 '"name": "skipped_nan"' "$tmp/nan.json" | grep -q '"status": "fail"' || bad "NaN not failed"
# the ok run (iterations 1-60) against a declared window 11-200
"$TS" validate --json --window 11:200 "$tmp/ok" >"$tmp/past.json"; rc=$?
[ $rc = 1 ] || bad "window past the log: exit $rc, want 1"
grep -A2 '"name": "window"' "$tmp/past.json" | grep -q '"status": "fail"' || bad "window past the log not failed"
grep -q 'runs past the log, which ends at iteration 60: the run stopped 140 iterations short' "$tmp/past.json" ||
	bad "window past the log: no evidence naming iteration 60"
"$TS" steps --json --window 11:200 "$tmp/ok" >"$tmp/past.steps.json"
python3 - "$tmp/past.json" "$tmp/past.steps.json" <<'PY' || bad "validate's window object is not steps'"
import json, sys
v, s = (json.load(open(p)) for p in sys.argv[1:3])
assert v["window"] == s["window"], (v["window"], s["window"])
assert s["window"]["last_iteration"] == 60 and s["window"]["method"] == "declared", s["window"]
PY
# the batch-size ramp
python3 tests/scripts/steps-shift-gen.py "$tmp/ramp" 1 0 1.0 100 0 128 || exit 1
"$TS" validate --json --window 20:300 "$tmp/ramp/r000.log" >"$tmp/ramp.json"
grep -A2 '"name": "window"' "$tmp/ramp.json" | grep -q '"status": "warn"' || bad "window in the ramp not warned"
grep -q 'starts in the batch-size ramp-up: the run.s own batch of 256 sequences starts at iteration 100' \
	"$tmp/ramp.json" || bad "window in the ramp: no evidence naming iteration 100"
"$TS" validate --json --window 150:300 "$tmp/ramp/r000.log" >"$tmp/ramp2.json"
grep -A2 '"name": "window"' "$tmp/ramp2.json" | grep -q '"status": "pass"' || bad "window after the ramp not pass"
"$TS" validate --json --accept-auto-window "$tmp/ramp/r000.log" >"$tmp/ramp3.json"
python3 - "$tmp/ramp3.json" <<'PY' || bad "automatic window over the ramp"
import json, sys
w = json.load(open(sys.argv[1]))["window"]
g = {x["reason"]: (x["first_iteration"], x["last_iteration"]) for x in w["excluded"]}
assert w["first_iteration"] == 100 and g.get("batch-size-ramp-up") == (2, 99), w
PY
exit $fail
