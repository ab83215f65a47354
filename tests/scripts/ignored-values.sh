#!/usr/bin/env bash
# Unusable values are counted and warned about, not dropped silently, and
# --strict rejects them (issue 21). The counts are by hand from the inputs
# written below. A step time field whose value is not a number (empty, a
# NUL byte, "12x", a JSON string that is not one) is not_a_number: it was
# dropped without a word; a JSON string that is a number ("510.5") is that
# number, and JSON null is no value.
set -u
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || exit 77
python3 - "$tmp" <<'PY'
import sys
d = sys.argv[1]
k = '{"ph":"X","cat":"kernel","name":"%s","pid":0,"tid":7,"ts":%s,"dur":%s,"args":{"device":0,"stream":7}}'
ev = ['{"ph":"X","cat":"cpu_op","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":1000}',
      k % ("a", "10", "100"),
      k % ("b", "9223372036854775808", "100"),    # ts beyond 2^63 ns
      k % ("c", "-9223372036854775808", "100"),   # and below -2^63
      k % ("d", "1e300", "100"),
      k % ("e", "200", "NaN"),
      k % ("f", "300", "Infinity"),
      k % ("g", "400", "-5"),                      # negative dur
      '{"ph":"X","cat":"kernel","name":"h","pid":0,"tid":7,"ts":500,"args":{"device":0,"stream":7}}']  # no dur
open(d + "/t.json", "w").write('{"schemaVersion":1,"traceEvents":[' + ",".join(ev) + "]}")
with open(d + "/s.jsonl", "w") as f:
    for i in range(1, 31):
        v = {7: "NaN", 8: "Infinity", 9: "-Infinity", 10: "-3", 11: "1e300"}.get(i, "%d.0" % (100 + i % 3))
        f.write('{"iteration": %d, "step_time_ms": %s, "loss": 2.0}\n' % (i, v))
rec = (" [2024-05-01 12:00:00] iteration %8d/     100 | consumed samples: %12d | "
       "elapsed time per iteration (ms): %s | learning rate: 1.000000E-04 | "
       "global batch size:    32 | lm loss: 7.123456E+00 | loss scale: 1.0 |\n")
with open(d + "/m.log", "w") as f:
    for i in range(1, 41):
        v = {20: "\0", 21: "", 22: "12x"}.get(i, "%d.0" % (500 + i % 3))
        f.write(rec % (i, i * 32, v))
with open(d + "/n.jsonl", "w") as f:
    for i in range(1, 31):
        v = {5: '"abc"', 6: '""', 7: "null", 8: '"510.5"'}.get(i, "%d.0" % (500 + i % 3))
        f.write('{"iteration": %d, "step_time_ms": %s, "loss": 2.0}\n' % (i, v))
PY
"$TS" trace "$tmp/t.json" > "$tmp/t.err" 2>&1 || bad "trace with unusable times failed: $(cat "$tmp/t.err")"
grep -q "ignored-values: 3 event(s) with an unusable ts, 2 with an unusable dur.*1 with a negative dur, 1 complete (X) event(s) without a dur" "$tmp/t.err" ||
	bad "trace warning: $(cat "$tmp/t.err")"
# the same warning, word for word, from diagnose (one function words it)
"$TS" diagnose "$tmp/t.json" > "$tmp/d.out" 2>&1
grep -q "ignored-values: 3 event(s) with an unusable ts, 2 with an unusable dur.*1 with a negative dur, 1 complete (X) event(s) without a dur" "$tmp/d.out" ||
	bad "diagnose warning: $(cat "$tmp/d.out")"
"$TS" trace --strict "$tmp/t.json" > /dev/null 2> "$tmp/t2.err"
[ $? = 2 ] || bad "trace --strict accepted unusable times"
"$TS" steps "$tmp/s.jsonl" > "$tmp/s.out" 2>&1 || bad "steps failed: $(cat "$tmp/s.out")"
grep -q "5 unusable step times or iterations were dropped (nan 1, infinite 2, negative 1, too_large 1" "$tmp/s.out" || bad "steps warning: $(cat "$tmp/s.out")"
"$TS" steps --strict "$tmp/s.jsonl" > /dev/null 2> "$tmp/s.err"
[ $? = 2 ] || bad "steps --strict accepted unusable step times"
grep -q "line 7" "$tmp/s.err" || bad "steps --strict does not name line 7: $(cat "$tmp/s.err")"
# 3 unreadable step times of 40 (lines 20-22); 37 step times are left
"$TS" steps --json "$tmp/m.log" > "$tmp/m.json" 2>/dev/null || bad "steps failed on m.log"
python3 - "$tmp/m.json" <<'PY' || bad "m.log: not_a_number not counted"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["ignored_values"]["not_a_number"] == 3, d["ignored_values"]
assert any(w["code"] == "ignored-values" and "not_a_number 3" in w["message"] for w in d["warnings"]), d["warnings"]
PY
"$TS" steps --strict "$tmp/m.log" > /dev/null 2> "$tmp/m.err"
[ $? = 2 ] && grep -q "line 20: unusable value (not_a_number)" "$tmp/m.err" ||
	bad "steps --strict on m.log: $(cat "$tmp/m.err")"
# JSONL: "abc" and "" are not numbers (2), null is no value, "510.5" is 510.5 ms
"$TS" steps --json "$tmp/n.jsonl" > "$tmp/n.json" 2>/dev/null || bad "steps failed on n.jsonl"
python3 - "$tmp/n.json" <<'PY' || bad "n.jsonl: not_a_number or the string number wrong"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["ignored_values"]["not_a_number"] == 2, d["ignored_values"]
PY
# every step time a string of a number: read as numbers, none ignored
for i in $(seq 1 30); do echo "{\"iteration\": $i, \"step_time_ms\": \"250.0\"}"; done > "$tmp/q.jsonl"
"$TS" steps --json "$tmp/q.jsonl" > "$tmp/q.json" 2>/dev/null || bad "steps failed on q.jsonl"
python3 - "$tmp/q.json" <<'PY' || bad "q.jsonl: string step times not read as numbers"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["ignored_values"]["not_a_number"] == 0, d["ignored_values"]
assert d["step_time_ms"]["median"] == 250.0, d["step_time_ms"]
PY
exit $fail
