# lib.sh - what the test scripts share; a script sources it near its top:
#
#   . "$(dirname "$0")/lib.sh"
#
# (before any `cd`, so that the path holds from wherever the script was
# started). It is no test itself: tests/run.sh runs tests/scripts/*.sh only.
#
# Sets TS (the binary, default build/trainscope) and DATA (the shared data,
# default ../shared/data) unless the caller did; makes the scratch folder
# $tmp, removed on exit (a script's own EXIT trap replaces that); fail=0.
# bad MESSAGE prints "FAIL: MESSAGE" and sets fail=1; finish ends a script
# that counts with bad: "NAME: ok" (NAME: the script's file name without
# .sh) when nothing failed, and exit $fail. Exit statuses are run.sh's:
# 0 pass, 77 skip, anything else fail. Two readers of a JSON output file
# (python3): field FILE EXPR prints EXPR over the parsed document `d`;
# codes FILE prints its warnings, one a line, as CODE|FILE|MESSAGE (a
# script may define its own codes instead).
TS=${TS:-build/trainscope}
DATA=${DATA:-../shared/data}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
finish() { [ $fail = 0 ] && echo "$(basename "$0" .sh): ok"; exit $fail; }
field() { # file, python expression over the parsed JSON `d`
	python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"
}
codes() {
	python3 -c '
import json, signal, sys
signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # grep -q may stop reading
for w in json.load(open(sys.argv[1]))["warnings"]:
    print("%s|%s|%s" % (w["code"], w["file"], w["message"]))
' "$1"
}
