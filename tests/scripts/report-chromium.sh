#!/usr/bin/env bash
# The HTML report in a real browser: Debian's chromium renders it headless
# to a PNG and dumps the DOM after the page's own script ran. Checks: every
# chart the input should produce is in the DOM and drew something (the
# page's script writes each chart's bounding box verdict into
# body[data-ts-charts]), the script ran to the end (data-ts-ready="1"), no
# JavaScript error was recorded (#ts-errors is empty), the screenshot is a
# real image, and nothing in the page points at the network.
# Exit 77 (skip) when chromium is not installed.
set -u
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
	echo "skip: chromium is not installed (apt-get install chromium) - the report was not rendered in a browser"
	exit 77
fi

render() { # name input... ; expects charts listed in $want
	local name=$1
	shift
	local html=$tmp/$name.html
	if ! "$TS" report -q "$@" -o "$html"; then
		echo "FAIL $name: trainscope report failed"
		fail=1
		return
	fi
	if grep -qE '(src|href)="(https?:)?//' "$html"; then
		echo "FAIL $name: the page references the network"
		fail=1
	fi
	# a private profile dir keeps runs independent; timeout guards a hung browser
	timeout 120 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--user-data-dir="$tmp/profile-$name" --window-size=1100,2400 \
		--screenshot="$tmp/$name.png" "file://$(realpath "$html")" >/dev/null 2>&1
	timeout 120 "$browser" --headless --no-sandbox --disable-gpu \
		--user-data-dir="$tmp/profile-$name" --dump-dom "file://$(realpath "$html")" \
		>"$tmp/$name.dom" 2>/dev/null
	if ! head -c 8 "$tmp/$name.png" 2>/dev/null | od -An -tx1 | grep -q '89 50 4e 47'; then
		echo "FAIL $name: no PNG screenshot"
		fail=1
	elif [ "$(stat -c %s "$tmp/$name.png")" -lt 20000 ]; then
		echo "FAIL $name: screenshot is suspiciously small"
		fail=1
	fi
	if ! grep -q 'data-ts-ready="1"' "$tmp/$name.dom"; then
		echo "FAIL $name: the page script did not finish"
		fail=1
	fi
	if ! grep -q '<div id="ts-errors"></div>' "$tmp/$name.dom"; then
		echo "FAIL $name: JavaScript errors: $(grep -o '<div id="ts-errors">[^<]*' "$tmp/$name.dom")"
		fail=1
	fi
	for c in $want; do
		if ! grep -q "id=\"$c\"" "$tmp/$name.dom"; then
			echo "FAIL $name: chart $c missing from the DOM"
			fail=1
		elif ! grep -qE "data-ts-charts=\"[^\"]*$c:ok" "$tmp/$name.dom"; then
			echo "FAIL $name: chart $c drew nothing"
			fail=1
		fi
	done
	[ $fail = 0 ] && echo "ok $name: $(grep -o 'data-ts-charts="[^"]*"' "$tmp/$name.dom")"
}

# the shipped example: one CPU rank
want="chart-step-time chart-gpu-classes"
render example examples/run
# two ranks with a straggler: adds the per-rank chart
if [ -d "$DATA/traces/cpu/e_straggler" ]; then
	want="chart-step-time chart-gpu-classes chart-ranks"
	render straggler "$DATA/traces/cpu/e_straggler"
fi
# a GPU trace: adds the top-kernels chart
if [ -d "$DATA/traces/hta/timeline_analysis" ]; then
	want="chart-gpu-classes chart-top-kernels"
	render gpu "$DATA/traces/hta/timeline_analysis"
fi
# an experiment and a layout: the A/B and memory charts
if [ -d "$DATA/traces/cpu/a_dense" ] && [ -d "$DATA/traces/cpu/d_stall" ]; then
	want="chart-ab chart-memory"
	render abmem --baseline "$DATA/traces/cpu/a_dense" --candidate "$DATA/traces/cpu/d_stall" \
		--layout tp=1,pp=1,dp=1,mbs=8,gbs=8,seq=128 --model examples/run/config.json --gpu H100-SXM
fi
if [ "${KEEP_SCREENSHOTS:-}" ]; then
	mkdir -p "$KEEP_SCREENSHOTS" && cp "$tmp"/*.png "$tmp"/*.html "$KEEP_SCREENSHOTS"/
fi
exit $fail
