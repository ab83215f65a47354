#!/usr/bin/env bash
# A Hugging Face Trainer log behind a launcher's per-rank line prefix, on
# logs written here (the expected values follow from how they are written):
# 300 optimizer steps, logging_steps=10, the Trainer's bar (no
# description) redrawn at every step with '\r' on one physical line, each
# dict written by tqdm.write (the bar cleared, the dict, the bar redrawn
# on the next line): 30 dicts at steps 10, 20, ..., 300, loss
# 3.000 - 0.005 k for the k-th. Under torchrun (--tee, or
# --log-line-prefix-template "[rank${rank}]:"), srun --label and mpirun
# --tag-output the prefix ("[rank0]:", "[default0]:", "0: ",
# "[1,0]<stdout>:") stands at the physical line's start only, or before
# every redraw and the dict, or before every redraw with the dict printed
# right after the last one (no tqdm.write). Each is iterations 10..300
# with no ordinal-steps, and each prefix names rank 0: steps (text,
# --json, --csv) prints what it prints for the log without a prefix whose
# file name says rank 0 (plain_rank0.log; until 4 Dec 2026 a dict behind
# a prefix got no rank, the ranks table and the CSV's rank column stayed
# empty), and validate counts 300 logged
# steps (30 records of 10), not 30. A description after the prefix
# ("[rank0]:Map: ...") is still a description: that bar gives no step,
# and the log without the Trainer's bar stays record ordinals 1..30 (fewer
# than validate's 50 steps).
set -u
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }

N=300 EVERY=10
bar() { # the Trainer's bar at step i
	local i=$1 el=$(($1 * 6 / 5)) left=$(((N - $1) * 6 / 5))
	printf '%3d%%|%-10s| %d/%d [%02d:%02d<%02d:%02d, 1.20s/it]' $((100 * i / N)) \
		"$(printf '%*s' $((10 * i / N)) '' | tr ' ' '#')" "$i" "$N" \
		$((el / 60)) $((el % 60)) $((left / 60)) $((left % 60))
}
dict() { # the k-th dict
	printf "{'loss': %s, 'grad_norm': 1.%03d, 'learning_rate': %se-05, 'epoch': %s}" \
		"$(printf '%d.%03d' $(((3000 - 5 * $1) / 1000)) $(((3000 - 5 * $1) % 1000)))" "$1" \
		"$(printf '%d.%02d' $(((500 - $1 * 50 / 3) / 100)) $(((500 - $1 * 50 / 3) % 100)))" \
		"$(printf '%d.%02d' $(($1 / 10)) $(($1 % 10 * 10)))"
}
clear=$(printf '%60s' '')
bars=() dicts=()
for i in $(seq 0 $N); do bars[i]=$(bar "$i"); done
for k in $(seq 1 $((N / EVERY))); do dicts[k]=$(dict "$k"); done
# gen MODE PREFIX [DESC]: the log; MODE line (the prefix at each physical
# line's start), each (before every redraw, the clear and the dict),
# inline (before every redraw, the dict right after the last), nobar
# (the dicts alone)
gen() {
	local mode=$1 p=$2 desc=${3:-} q= last=0 k i
	[ "$mode" = line ] || q=$p
	printf '%sloading model\n' "$p"
	for k in $(seq 1 $((N / EVERY))); do
		if [ "$mode" = nobar ]; then
			printf '%s%s\n' "$p" "${dicts[k]}"
			continue
		fi
		[ "$mode" = line ] && printf '%s' "$p"
		for i in $(seq $last $((k * EVERY))); do printf '\r%s%s%s' "$q" "$desc" "${bars[i]}"; done
		if [ "$mode" = inline ]; then
			printf '%s\n' "${dicts[k]}"
		else
			printf '\r%s%s\r%s%s\n' "$q" "$clear" "$q" "${dicts[k]}"
		fi
		last=$((k * EVERY))
	done
	printf "%s{'train_runtime': 360.5, 'train_samples_per_second': 6.656, 'train_steps_per_second': 0.832, 'train_loss': 2.92, 'epoch': 3.0}\n" "$p"
}
gen line "" >"$tmp/plain_rank0.log"

# what steps prints for a log, its path replaced by LOG
out() { # trainscope's arguments, the log last
	"$TS" "$@" 2>&1 | sed "s#${!#}#LOG#g"
}
for form in text --json --csv; do
	opt=$form; [ "$form" = text ] && opt=
	out steps $opt "$tmp/plain_rank0.log" >"$tmp/plain.$form"
done
got=$(field "$tmp/plain.--json" "d['first_iteration'], d['last_iteration'], d['iterations'], d['loss']['final']")
[ "$got" = "10 300 30 2.85" ] || bad "steps plain: '$got', want '10 300 30 2.85'"
grep -q "ordinal" "$tmp/plain.text" && bad "steps plain: ordinals named"

n=0
for p in "[rank0]:" "[default0]:" "0: " "[1,0]<stdout>:"; do
	for mode in line each inline; do
		n=$((n + 1))
		f="$tmp/p$n.log"
		gen "$mode" "$p" >"$f"
		what="'$p' $mode"
		"$TS" steps --json "$f" >"$tmp/p$n.json" 2>/dev/null || bad "steps --json $what: exit $?"
		got=$(field "$tmp/p$n.json" "d['first_iteration'], d['last_iteration'], d['iterations']")
		[ "$got" = "10 300 30" ] || bad "steps $what: iterations '$got', want '10 300 30'"
		codes "$tmp/p$n.json" | grep -q "^ordinal-steps|" && bad "steps --json $what: ordinal-steps"
		for form in text --json --csv; do
			opt=$form; [ "$form" = text ] && opt=
			out steps $opt "$f" | cmp -s - "$tmp/plain.$form" ||
				bad "steps $form $what: not what the log without a prefix gives"
		done
		rc=0
		"$TS" validate --json "$f" >"$tmp/v$n.json" 2>/dev/null || rc=$?
		[ "$rc" = 1 ] || bad "validate $what: exit $rc, not 1 (no step times: no window)"
		got=$(field "$tmp/v$n.json" "[(c['status'], c['evidence']) for c in d['checks'] if c['name'] == 'steps_logged']")
		[ "$got" = "[('pass', '300 logged steps (iterations 10-300 in 30 records of 10; >= 50)')]" ] ||
			bad "validate $what: steps_logged $got"
		codes "$tmp/v$n.json" | grep -q "^ordinal-steps|" && bad "validate --json $what: ordinal-steps"
	done
done

# a description after the prefix is one: no steps from that bar
gen each "[rank0]:" "Map: " >"$tmp/desc.log"
gen nobar "[rank0]:" >"$tmp/nobar.log"
for f in desc nobar; do
	"$TS" steps --json "$tmp/$f.log" >"$tmp/$f.json" 2>/dev/null || bad "steps --json $f: exit $?"
	got=$(field "$tmp/$f.json" "d['first_iteration'], d['last_iteration'], d['iterations']")
	[ "$got" = "1 30 30" ] || bad "steps $f: iterations '$got', want record ordinals '1 30 30'"
	codes "$tmp/$f.json" | grep -qF "ordinal-steps|$tmp/$f.log|$tmp/$f.log: the log prints no step numbers, so its 30 records are numbered 1..30" ||
		bad "steps --json $f: no ordinal-steps"
	"$TS" validate --json "$tmp/$f.log" >"$tmp/$f-val.json" 2>/dev/null
	got=$(field "$tmp/$f-val.json" "[(c['status'], c['evidence']) for c in d['checks'] if c['name'] == 'steps_logged']")
	[ "$got" = "[('fail', 'only 30 logged steps (record ordinals 1-30); a winner needs at least 50')]" ] ||
		bad "validate $f: steps_logged $got"
done

finish
