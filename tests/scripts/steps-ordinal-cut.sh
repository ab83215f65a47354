#!/usr/bin/env bash
# Two ways a log can mislead without a word, on logs written here (the
# expected values follow from how they are written):
# - ordinal-steps: a Hugging Face Trainer log without its progress bar
#   (`python train.py > log`, the bar went to stderr) prints dicts with no
#   step number. Its 20 dicts, the loss NaN from the 14th, are numbered
#   1..20 by their order (not from their 'epoch'), and steps (text and
#   --json), validate (with --window 5:20: the window is read on those
#   numbers), diagnose and report say so with ordinal-steps and name the
#   NaN's start "record ordinal 14". The same run with the bar before each
#   dict (logging_steps=10 of 200 steps) is iterations 10..200, NaN from
#   140, and no ordinal-steps; so is a JSONL with a "step" key, while one
#   without it is ordinal.
# - truncated-log on a Lightning progress-bar log (NeMo's tqdm bar, postfix
#   global_step and `train_step_timing in s`): 20 redraws, global steps
#   1..20, 2.000 s each. Its last redraw cut by the end of the input (after
#   "train_step_timing in s=", inside "1.97", before global_step, or as the
#   last '\r' redraw of one physical line) loses record 20 with a
#   truncated-log warning and note, in steps (text, --json) and validate;
#   the cut value is never read. The complete log, with or without its
#   final line end, has 20 records and no truncated-log; so has the HF log
#   above without its final line end. The same bar described otherwise
#   ("Training:", "Epoch 1/3:", behind "[rank0]:") is cut so too before
#   its global_step (in the postfix, the blocks or the count, right after
#   the description, or in the next epoch's bar); a line cut inside the description, or a
#   validation bar cut after the records, is no cut record.
set -u
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }

# --- HF Trainer dicts: without the bar, with it, JSONL with and without a step
hf_dict() { # k: the k-th dict (loss NaN from the 14th)
	if [ "$1" -ge 14 ]; then loss=nan; else loss=$(printf '%d.5' $((20 - $1))); fi
	printf "{'loss': %s, 'grad_norm': 1.234, 'learning_rate': 5e-05, 'epoch': %s}" "$loss" \
		"$(printf '%d.%02d' $((5 * $1 / 100)) $((5 * $1 % 100)))"
}
for k in $(seq 1 20); do
	hf_dict "$k" >>"$tmp/nobar.log"
	printf '\n' >>"$tmp/nobar.log"
	printf '\r%3d%%|#         | %d/200 [00:05<01:35, 0.50s/it]\r' $((k * 5)) $((k * 10)) >>"$tmp/bar.log"
	hf_dict "$k" >>"$tmp/bar.log"
	printf '\n' >>"$tmp/bar.log"
	printf '{"step": %d, "loss": 2.5, "step_ms": 100}\n' $((k * 10)) >>"$tmp/step.jsonl"
	printf '{"loss": 2.5, "step_ms": 100}\n' >>"$tmp/nostep.jsonl"
done

nobar="$tmp/nobar.log"
ordmsg="$nobar: the log prints no step numbers, so its 20 records are numbered 1..20 in their order: these are record ordinals, not optimizer steps, and each record may cover logging_steps optimizer steps"
winmsg="The declared window 5:20 is read on these numbers: records 5 to 20, not optimizer steps."
# the 14th dict is line 14 of the file (one dict a line), no rank named
nanmsg="the loss is NaN or infinite from record ordinal 14 (7 records with non-finite evidence; first printed in $nobar line 14)"

"$TS" steps --json "$nobar" >"$tmp/nobar.json" || bad "steps --json no bar: exit $?"
got=$(field "$tmp/nobar.json" "d['first_iteration'], d['last_iteration'], d['loss']['first_bad_iteration']")
[ "$got" = "1 20 14" ] || bad "steps no bar: iterations/first bad '$got', want '1 20 14'"
codes "$tmp/nobar.json" | grep -qF "ordinal-steps|$nobar|$ordmsg" || bad "steps --json no bar: no ordinal-steps"
codes "$tmp/nobar.json" | grep -qF "loss-not-finite|None|The training is not numerically healthy: $nanmsg" ||
	bad "steps --json no bar: loss-not-finite does not name record ordinal 14"
"$TS" steps "$nobar" >"$tmp/nobar.txt" 2>&1 || bad "steps no bar: exit $?"
grep -qF "warning: $ordmsg" "$tmp/nobar.txt" || bad "steps text no bar: no ordinal-steps warning"
grep -qxF "format      hf-trainer, 20 iterations (1..20, record ordinals: the log prints no step numbers)" \
	"$tmp/nobar.txt" || bad "steps text no bar: the format line does not say the numbers are ordinals"
grep -qxF "            health non-finite from record ordinal 14 (loss NaN/Inf; first printed in $nobar line 14)" "$tmp/nobar.txt" ||
	bad "steps text no bar: the health line names an iteration"
grep -q "iteration 14" "$tmp/nobar.txt" && bad "steps text no bar: 'iteration 14' named"

rc=0
"$TS" validate --json --window 5:20 "$nobar" >"$tmp/val.json" 2>/dev/null || rc=$?
[ "$rc" = 1 ] || bad "validate no bar: exit $rc, not 1"
codes "$tmp/val.json" | grep -qF "ordinal-steps|$nobar|$ordmsg" || bad "validate --json: no ordinal-steps"
codes "$tmp/val.json" | grep "^ordinal-steps|" | grep -qF "$winmsg" ||
	bad "validate --json --window: the warning does not say the window is read as record ordinals"
"$TS" validate --window 5:20 "$nobar" >"$tmp/val.txt" 2>&1
grep "^warning: $nobar: the log prints no step numbers" "$tmp/val.txt" | grep -qF "$winmsg" ||
	bad "validate text --window: no ordinal-steps warning with the window"
grep -qF "loss health non-finite from record ordinal 14" "$tmp/val.txt" ||
	bad "validate text: the loss check names an iteration"
"$TS" validate --json "$nobar" >"$tmp/val2.json" 2>/dev/null
codes "$tmp/val2.json" | grep "^ordinal-steps|" | grep -q "window" &&
	bad "validate without --window: the warning speaks of a window"

"$TS" diagnose --json "$nobar" >"$tmp/dg.json" 2>/dev/null
codes "$tmp/dg.json" | grep -qF "ordinal-steps|$nobar|$ordmsg" || bad "diagnose --json: no ordinal-steps"
"$TS" diagnose "$nobar" >"$tmp/dg.txt" 2>&1
grep -qF "warning: $ordmsg" "$tmp/dg.txt" || bad "diagnose text: no ordinal-steps"
"$TS" report "$nobar" --format md 2>/dev/null | sed -n '/^## Warnings/,/^## /p' >"$tmp/rp.md"
grep -q "^  ordinal-steps$" "$tmp/rp.md" || bad "report: no ordinal-steps warning"

# with the bar: the bar's counter is the step, nothing is an ordinal
"$TS" steps --json "$tmp/bar.log" >"$tmp/bar.json" || bad "steps --json bar: exit $?"
got=$(field "$tmp/bar.json" "d['first_iteration'], d['last_iteration'], d['loss']['first_bad_iteration']")
[ "$got" = "10 200 140" ] || bad "steps bar: iterations/first bad '$got', want '10 200 140'"
codes "$tmp/bar.json" | grep -q "^ordinal-steps|" && bad "steps --json bar: ordinal-steps on a log with steps"
"$TS" steps "$tmp/bar.log" 2>&1 | grep -q "ordinal" && bad "steps text bar: ordinals named"
"$TS" validate --json --window 50:200 "$tmp/bar.log" >"$tmp/valbar.json" 2>/dev/null
codes "$tmp/valbar.json" | grep -q "^ordinal-steps|" && bad "validate --json bar: ordinal-steps"

"$TS" steps --json "$tmp/step.jsonl" >"$tmp/step.json" || bad "steps --json step.jsonl: exit $?"
codes "$tmp/step.json" | grep -q "^ordinal-steps|" && bad "steps --json: ordinal-steps on a JSONL with steps"
"$TS" steps --json "$tmp/nostep.jsonl" >"$tmp/nostep.json" || bad "steps --json nostep.jsonl: exit $?"
codes "$tmp/nostep.json" | grep -qF "ordinal-steps|$tmp/nostep.jsonl|$tmp/nostep.jsonl: the log prints no step numbers, so its 20 records are numbered 1..20" ||
	bad "steps --json: no ordinal-steps on a JSONL without steps"

# an HF log complete but for its final line end is not cut
head -c -1 "$nobar" >"$tmp/nobar-nonl.log"
"$TS" steps --json "$tmp/nobar-nonl.log" >"$tmp/nobar-nonl.json" || bad "steps --json HF without final newline: exit $?"
[ "$(field "$tmp/nobar-nonl.json" "d['iterations'], d['notes']")" = "20 []" ] ||
	bad "steps HF without final newline: not 20 records without notes"
codes "$tmp/nobar-nonl.json" | grep -q "^truncated-log|" && bad "steps HF without final newline: truncated-log"

# --- Lightning progress bars: global steps 1..20, 2.000 s each
desc="Epoch 0:"
redraw() { # i, the step time as printed; the description is $desc
	printf '%s %3d%%|#####     | %d/20 [00:%02d<00:%02d, 2.00s/it, v_num=0, reduced_train_loss=%s, global_step=%d.000, consumed_samples=%d.0, train_step_timing in s=%s]' \
		"$desc" $((5 * $1)) "$1" $((2 * $1)) $((40 - 2 * $1)) "$(printf '2.%03d' $((300 - $1)))" "$1" $((256 * $1)) "$2"
}
for i in $(seq 1 20); do redraw "$i" 2.00; printf '\n'; done >"$tmp/full.log"
head -c -1 "$tmp/full.log" >"$tmp/nonl.log"
last=$(redraw 20 1.97)
head -n 19 "$tmp/full.log" >"$tmp/cut-value.log"
printf '%s' "${last%%1.97]}" >>"$tmp/cut-value.log"        # ends "train_step_timing in s="
head -n 19 "$tmp/full.log" >"$tmp/cut-digit.log"
printf '%s' "${last%%7]}" >>"$tmp/cut-digit.log"           # ends "... in s=1.9"
head -n 19 "$tmp/full.log" >"$tmp/cut-early.log"
printf '%s' "${last%%s=2.280,*}" >>"$tmp/cut-early.log"   # ends "reduced_train_los", before global_step
for i in $(seq 1 19); do printf '\r'; redraw "$i" 2.00; done >"$tmp/cut-cr.log"
printf '\r%s' "${last%%00, consumed*}" >>"$tmp/cut-cr.log" # one physical line, ends "global_step=20."

for f in full nonl; do
	"$TS" steps --json "$tmp/$f.log" >"$tmp/$f.json" || bad "steps --json $f: exit $?"
	got=$(field "$tmp/$f.json" "d['format'], d['iterations'], d['last_iteration'], d['notes']")
	[ "$got" = "lightning-bar 20 20 []" ] || bad "steps $f: '$got', want 'lightning-bar 20 20 []'"
	codes "$tmp/$f.json" | grep -q "^truncated-log|" && bad "steps --json $f: truncated-log on a complete log"
	"$TS" steps "$tmp/$f.log" 2>&1 | grep -q "cut" && bad "steps text $f: a cut named"
	"$TS" validate --json --window 5:20 "$tmp/$f.log" >"$tmp/$f-val.json" 2>/dev/null
	codes "$tmp/$f-val.json" | grep -q "^truncated-log|" && bad "validate --json $f: truncated-log on a complete log"
done
for case in "cut-value 20" "cut-digit 20" "cut-early 20" "cut-cr 1"; do
	set -- $case
	f="$tmp/$1.log"
	cutmsg="$f: line $2: last line cut inside a progress-bar redraw; ignored."
	"$TS" steps --json "$f" >"$tmp/$1.json" || bad "steps --json $1: exit $?"
	got=$(field "$tmp/$1.json" "d['iterations'], d['last_iteration'], [(n['kind'], n['line']) for n in d['notes']]")
	[ "$got" = "19 19 [('truncated', $2)]" ] || bad "steps $1: '$got', want \"19 19 [('truncated', $2)]\""
	codes "$tmp/$1.json" | grep -qxF "truncated-log|$f|$cutmsg" || bad "steps --json $1: no truncated-log"
	"$TS" steps "$f" >"$tmp/$1.txt" 2>&1 || bad "steps $1: exit $?"
	grep -qxF "warning: $cutmsg" "$tmp/$1.txt" || bad "steps text $1: no truncated-log warning"
	rc=0
	"$TS" validate --json --window 5:20 "$f" >"$tmp/$1-val.json" 2>/dev/null || rc=$?
	codes "$tmp/$1-val.json" | grep -qxF "truncated-log|$f|$cutmsg" || bad "validate --json $1: no truncated-log"
	"$TS" validate --window 5:20 "$f" 2>&1 | grep -qxF "warning: $cutmsg" || bad "validate text $1: no truncated-log"
done
for desc in "Training:" "Epoch 1/3:" "[rank0]:Training:"; do
	for i in $(seq 1 19); do redraw "$i" 2.00; printf '\n'; done >"$tmp/d19.log"
	last=$(redraw 20 1.97)
	for cut in "postfix ${last%%s=2.280,*}" "blocks ${last%%|*}|###" "count ${last%% 20/20*} 20/2" \
		"desc $desc" "next ${desc//1/2}   5%|#" "indesc ${desc%?}" "val Validation DataLoader 0:  50%|#####     | 5/10 [00:01<00:0"; do
		f="$tmp/d-${cut%% *}.log"
		{ cat "$tmp/d19.log"; printf '%s' "${cut#* }"; } >"$f"
		want="19 19 [('truncated', 20)]"
		case $cut in indesc* | val*) want="19 19 []" ;; esac
		"$TS" steps --json "$f" >"$tmp/d.json" || bad "steps --json '$desc' ${cut%% *}: exit $?"
		got=$(field "$tmp/d.json" "d['iterations'], d['last_iteration'], [(n['kind'], n['line']) for n in d['notes']]")
		[ "$got" = "$want" ] || bad "steps '$desc' ${cut%% *}: '$got', want \"$want\""
	done
done

# the cut value is never read: record 19 is the last, with its own 2.00 s
"$TS" steps --csv "$tmp/cut-digit.log" | tail -n 1 | grep -q "^19,.*,2000" ||
	bad "steps --csv cut-digit: the last record is not iteration 19 at 2000 ms"

finish
