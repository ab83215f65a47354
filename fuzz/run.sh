#!/usr/bin/env bash
# Run each fuzz target for FUZZ_SECONDS with a corpus seeded from the shared
# data (fuzz/<name>.seeds: one glob per line, relative to $DATA, to the
# repository when it starts with ./, absolute when it starts with / (files of
# this machine, e.g. /etc/ld.so.cache); gzip files are inflated; seeds are
# cut to 64 KiB so mutations stay fast).
set -u
cd "$(dirname "$0")/.."
DATA=${DATA:-../shared/data}
secs=${FUZZ_SECONDS:-60}
status=0
failed=
for bin in "$@"; do
	name=$(basename "$bin")
	name=${name#fuzz_}
	corpus=build-fuzz/corpus-$name
	mkdir -p "$corpus"
	if [ -f "fuzz/$name.seeds" ] && [ -d "$DATA" ]; then
		while read -r pattern; do
			[ -n "$pattern" ] || continue
			case $pattern in ./* | /*) glob=$pattern ;; *) glob=$DATA/$pattern ;; esac
			for f in $glob; do
				[ -f "$f" ] || continue
				out="$corpus/seed-$(echo "$f" | md5sum | cut -c1-12)"
				if gzip -t "$f" 2>/dev/null; then
					gzip -dc "$f" | head -c 65536 >"$out"
				else
					head -c 65536 "$f" >"$out"
				fi
			done
		done <"fuzz/$name.seeds"
	fi
	# seeds kept in the repository (formats the shared data lacks)
	if [ -d "fuzz/seeds/$name" ]; then
		cp fuzz/seeds/"$name"/* "$corpus"/ 2>/dev/null
	fi
	echo "fuzz $name: ${secs}s, corpus $(ls "$corpus" | wc -l) files"
	rm -f build-fuzz/"$name"-crash-* build-fuzz/"$name"-leak-* build-fuzz/"$name"-timeout-* \
		build-fuzz/"$name"-oom-*
	if ! "$bin" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 \
		-artifact_prefix="build-fuzz/$name-" -print_final_stats=1 "$corpus" \
		>"build-fuzz/$name.log" 2>&1; then
		echo "FAIL fuzz $name (see build-fuzz/$name.log)"
		failed="$failed $name"
		status=1
	else
		# executions, coverage (cov: edges, ft: features) and corpus size
		grep -E '^#[0-9]+.*(DONE|pulse)' "build-fuzz/$name.log" | tail -1
		grep -E '^stat::number_of_executed_units' "build-fuzz/$name.log" | tail -1
	fi
done
# each failure last, where a cut log still shows it: the sanitizer's or
# libFuzzer's own lines and the input that did it (base64, when small), so
# a run on another machine can be replayed (`base64 -d >x; fuzz_X x`)
for name in $failed; do
	echo "== fuzz $name failed:"
	grep -E 'ERROR|SUMMARY|runtime error|ALARM|out-of-memory|leak|deadly|#[0-9]+ 0x|Test unit written' \
		"build-fuzz/$name.log" | grep -v -E '^#[0-9]+[[:space:]]+(NEW|REDUCE|pulse|INITED)' |
		sed 's/ (BuildId: [0-9a-f]*)//' | head -30
	for a in build-fuzz/"$name"-*; do
		[ -f "$a" ] || continue
		echo "input $a ($(stat -c %s "$a") bytes):"
		if [ "$(stat -c %s "$a")" -le 8192 ]; then base64 -w 0 "$a"; echo; fi
	done
done
exit $status
