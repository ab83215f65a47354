#!/usr/bin/env bash
# trainscope hang on SYNTHETIC multi-rank Flight Recorder suites, made here
# from the shared repr example (hang/fr_dump_unpickled_example_v2.5.txt, a
# documented single-rank dump) with python3's own literal parser and pickle
# module: every dump is labelled "synthetic". One case per incident class,
# coalesced P2P, a truncated ring buffer on one rank (with a second group
# so record ids and seq ids disagree), a reused group name (split_group),
# the first rank as the odd one out, an mccl: copy that must analyse
# identically, pickle dumps (protocol 2) and a code-bearing pickle that must
# be refused. Expected classes and ranks are written below by hand.
set -u
. "$(dirname "$0")/lib.sh"
ex=$DATA/hang/fr_dump_unpickled_example_v2.5.txt
[ -f "$ex" ] || { echo "shared data not found"; exit 77; }
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
python3 - "$ex" "$tmp" <<'PY' || exit 1
import ast, copy, json, os, pickle, re, sys
src, out = sys.argv[1], sys.argv[2]
# the example mixes JSON words (null, true) with a Python tuple
text = re.sub(r"\bnull\b", "None", open(src).read())
text = re.sub(r"\btrue\b", "True", re.sub(r"\bfalse\b", "False", text))
base = ast.literal_eval(text)
tmpl = base["entries"][0]
LABEL = "synthetic: derived by tests/scripts/hang-synthetic.sh from " + os.path.basename(src)

def entry(rid, seq, name="nccl:all_reduce", sizes=((3, 4),), dtype="Float", state="completed",
          pg=("0", "default_pg"), pg_id=0, p2p=False, p2p_seq=0):
    e = copy.deepcopy(tmpl)
    e.update(record_id=rid, collective_seq_id=seq, profiling_name=name, state=state,
             input_sizes=[list(s) for s in sizes], output_sizes=[list(s) for s in sizes],
             input_dtypes=[dtype] * len(sizes), output_dtypes=[dtype] * len(sizes),
             process_group=pg, pg_id=pg_id, is_p2p=p2p, p2p_seq_id=p2p_seq,
             retired=state == "completed", duration_ms=1.5)
    if state != "completed":
        e["time_discovered_completed_ns"] = None
    return e

def dump(entries, ranks="[0, 1, 2, 3]", groups=None):
    d = copy.deepcopy(base)
    d["synthetic"] = LABEL
    d["pg_config"] = groups or {"0": {"name": "0", "desc": "default_pg", "ranks": ranks}}
    d["entries"] = entries
    seqs = [e["collective_seq_id"] for e in entries if e["pg_id"] == 0 and not e["is_p2p"]]
    done = [e["collective_seq_id"] for e in entries if e["pg_id"] == 0 and not e["is_p2p"]
            and e["state"] == "completed"]
    d["pg_status"] = {"0": {"last_enqueued_collective": max(seqs, default=-1), "last_started_collective": -1,
                            "last_completed_collective": max(done, default=-1)}}
    return d

def write(case, rank, d, fmt="json"):
    os.makedirs(f"{out}/{case}", exist_ok=True)
    path = f"{out}/{case}/nccl_trace_rank_{rank}"
    if fmt == "pickle":
        with open(path, "wb") as f:
            pickle.dump(d, f, protocol=2)
    else:
        with open(path, "w") as f:
            json.dump(d, f)

def simple(case, per_rank, fmt="json", prefix="nccl"):
    for r, ents in per_rank.items():
        for e in ents:
            e["profiling_name"] = e["profiling_name"].replace("nccl:", prefix + ":")
        write(case, r, dump(ents), fmt)

done5 = lambda: [entry(i, i + 1) for i in range(5)]
# ok: every rank completed seq 1..5
simple("ok", {r: done5() for r in range(4)})
# not_joined: rank 3 never issues seq 6
simple("not_joined", {r: done5() + ([entry(5, 6, state="scheduled")] if r != 3 else []) for r in range(4)})
# the same as pickle protocol 2
simple("not_joined_pickle", {r: done5() + ([entry(5, 6, state="scheduled")] if r != 3 else []) for r in range(4)},
       fmt="pickle")
# and in every protocol python3 writes: 0 and 1 have no PROTO opcode and 0
# writes text opcodes (UNICODE as raw-unicode-escape, FLOAT, INT); the group
# description holds Latin-1, BMP and astral characters, a backslash and a
# newline, which protocol 0 writes as raw bytes and \u / \U escapes; the
# analysis must not change (checked against protocol 2 below)
odd = {"0": {"name": "0", "desc": "default_pg caf\u00e9 \u2211 \U0001f600 a\\b\nc", "ranks": "[0, 1, 2, 3]"}}
for proto in range(6):
    for r in range(4):
        d = dump([entry(i, i + 1, pg=("0", odd["0"]["desc"])) for i in range(5)] +
                 ([entry(5, 6, state="scheduled", pg=("0", odd["0"]["desc"]))] if r != 3 else []), groups=odd)
        os.makedirs(f"{out}/not_joined_p{proto}", exist_ok=True)
        with open(f"{out}/not_joined_p{proto}/nccl_trace_rank_{r}", "wb") as f:
            pickle.dump(d, f, protocol=proto)
# files named like dumps that are none: binary bytes and plain text
os.makedirs(f"{out}/unread", exist_ok=True)
open(f"{out}/unread/nccl_trace_rank_0", "wb").write(b"\x7eN\xad\x00junk")
open(f"{out}/unread/nccl_trace_rank_1", "w").write("hello\n")
# mismatch, first rank the odd one out (#140563 shape), and its mccl: copy
for case, prefix in (("mismatch_first", "nccl"), ("mismatch_first_mccl", "mccl")):
    simple(case, {r: done5() + [entry(5, 6, sizes=((1025,),) if r == 0 else ((262144,),), state="scheduled")]
                  for r in range(4)}, prefix=prefix)
# dtype mismatch on rank 2
simple("mismatch_dtype", {r: done5() + [entry(5, 6, dtype="BFloat16" if r == 2 else "Float", state="scheduled")]
                          for r in range(4)})
# all_stuck: everyone issued seq 6, nobody completed
simple("all_stuck", {r: done5() + [entry(5, 6, state="scheduled")] for r in range(4)})
# init: the first collective (coalesced) never completed
simple("init", {r: [entry(0, 1, name="nccl:coalesced", state="scheduled")] for r in range(4)})
# undecided: a 2-2 tie on the op
simple("tie", {r: done5() + [entry(5, 6, name="nccl:all_reduce" if r < 2 else "nccl:broadcast", state="scheduled")]
               for r in range(4)})
# not_joined (inferred): rank 3's dump is missing, the other three agree and are stuck
simple("missing_dump", {r: done5() + [entry(5, 6, state="scheduled")] for r in range(3)})
# coalesced P2P at seq 6 (send/recv differ by rank by design), then rank 3 never issues seq 7
def p2p(r):
    peer = r ^ 1
    return [entry(5, 6, name=f"nccl:send {r}->{peer}", sizes=((8,),), p2p=True, p2p_seq=1),
            entry(6, 6, name=f"nccl:recv {r}<-{peer}", sizes=((8,),), p2p=True, p2p_seq=2),
            entry(7, 6, name="nccl:coalesced", sizes=())]
simple("coalesced_p2p", {r: done5() + p2p(r) + ([entry(8, 7, state="scheduled")] if r != 3 else [])
                         for r in range(4)})
# truncated ring buffer on rank 2 (seq 1..3 overwritten) plus a second group
# "1" on ranks 0 and 1 only, interleaved, so record ids differ across ranks
# for the same seq; rank 0 never issues seq 7 of the default group
groups = {"0": {"name": "0", "desc": "default_pg", "ranks": "[0, 1, 2, 3]"},
          "1": {"name": "1", "desc": "tp", "ranks": "[0, 1]"}}
for r in range(4):
    ents, rid = [], 0
    for seq in range(1, 7):
        if r == 2 and seq < 4:
            rid += 1
            continue
        ents.append(entry(rid, seq)); rid += 1
        if r in (0, 1):
            ents.append(entry(rid, seq, name="nccl:all_gather", pg=("1", "tp"), pg_id=1)); rid += 1
    if r != 0:
        ents.append(entry(rid, 7, state="scheduled"))
    write("truncated", r, dump(ents, groups=groups))
# reused group name: group "1" is {0,1} on ranks 0-1 and {2,3} on ranks 2-3
# with different sizes (legitimate); rank 1 never issues seq 4 of {0,1}
for r in range(4):
    ranks = "[0, 1]" if r < 2 else "[2, 3]"
    g = {"0": {"name": "0", "desc": "default_pg", "ranks": "[0, 1, 2, 3]"},
         "1": {"name": "1", "desc": "sub", "ranks": ranks}}
    size = ((4,),) if r < 2 else ((16,),)
    ents = [entry(i, i + 1, sizes=size, pg=("1", "sub"), pg_id=1) for i in range(3)]
    if r == 0:
        ents.append(entry(3, 4, sizes=size, pg=("1", "sub"), pg_id=1, state="scheduled"))
    write("reused_name", r, dump(ents, groups=g))
# rank_dead: an NCCL RAS JSON report with a rank considered dead
os.makedirs(f"{out}/rank_dead", exist_ok=True)
json.dump({"nccl_version": "2.26.2", "synthetic": LABEL, "communicators_count": 1, "communicators": [
    {"hash": "fa93daea854b060b", "size": 4, "ranks_count": 3, "missing_ranks_count": 1,
     "ranks": [{"rank": r, "collective_counts": {"AllReduce": 10}} for r in range(3)],
     "missing_ranks": [{"rank": 3, "status": {"unresponsive": True, "considered_dead": True}}]}]},
    open(f"{out}/rank_dead/ras.json", "w"))
# watchdog_late: watchdog lines that ran for 3x the timeout
os.makedirs(f"{out}/watchdog_late", exist_ok=True)
with open(f"{out}/watchdog_late/rank0.log", "w") as f:
    for r in range(2):
        f.write(f"[rank{r}]:[E626 16:48:25.440243908 ProcessGroupNCCL.cpp:632] [Rank {r}] Watchdog caught "
                f"collective operation timeout: WorkNCCL(SeqNum=42, OpType=ALLREDUCE, NumelIn=8, NumelOut=8, "
                f"Timeout(ms)=600000) ran for 1800000 milliseconds before timing out.\n")
# a pickle that would run os.system: must be refused
os.makedirs(f"{out}/evil", exist_ok=True)
class Evil:
    def __reduce__(self):
        return (os.system, ("echo pwned",))
with open(f"{out}/evil/nccl_trace_rank_0", "wb") as f:
    pickle.dump({"version": "2.5", "entries": [Evil()]}, f, protocol=2)
# rank 1's pickle dump of not_joined cut short (killed while dumping), with
# "entries" as its last key. The oracle for the entries kept: the pickler
# writes in order, so entry k ends where the same dump with entries[:k]
# plus one more item (BININT1 0, then APPENDS, SETITEMS, STOP: 5 bytes)
# stops writing; an entry counts once the opcode after it was read.
full = dump(done5() + [entry(5, 6, state="scheduled")])
full = {**{k: v for k, v in full.items() if k != "entries"}, "entries": full["entries"]}
whole = pickle.dumps(full, protocol=2)
ends = []
for k in range(1, len(full["entries"]) + 1):
    part = pickle.dumps({**full, "entries": full["entries"][:k] + [0]}, protocol=2)
    assert part.endswith(b"K\x00eu.") and whole[:len(part) - 5] == part[:len(part) - 5]
    ends.append(len(part) - 5)
assert ends[-1] == len(whole) - 3
os.makedirs(f"{out}/cut_pickle", exist_ok=True)
with open(f"{out}/cut_pickle/cases", "w") as f:
    first = whole.index(b"entries")
    for cut in sorted(set(list(range(first, len(whole), 53)) + [e + d for e in ends for d in (0, 1)] + [len(whole) - 1])):
        if cut < len(whole):
            os.makedirs(f"{out}/cut_pickle/{cut}", exist_ok=True)
            for r in (0, 2, 3):
                src = f"{out}/not_joined_pickle/nccl_trace_rank_{r}"
                os.link(src, f"{out}/cut_pickle/{cut}/nccl_trace_rank_{r}")
            open(f"{out}/cut_pickle/{cut}/nccl_trace_rank_1", "wb").write(whole[:cut])
            f.write(f"{cut} {sum(cut > e for e in ends)}\n")
PY
fail=0
check() { # case exit class culprits missing
	local case=$1 want_rc=$2
	"$TS" hang --json "$tmp/$case" >"$tmp/$case.json" 2>"$tmp/$case.err"
	local rc=$?
	[ "$rc" = "$want_rc" ] || { echo "FAIL $case: exit $rc, want $want_rc"; cat "$tmp/$case.err"; fail=1; return; }
	python3 - "$tmp/$case.json" "$case" "$3" "$4" "$5" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
case, cls, cul, mis = sys.argv[2:6]
inc = d["incidents"]
got = "|".join(i["class"] for i in inc) if inc else "none"
ok = got == cls
if inc and ok:
    ok = (",".join(map(str, inc[0]["culprits"])) == cul and ",".join(map(str, inc[0]["missing_ranks"])) == mis)
if not ok:
    print(f"FAIL {case}: got {got} culprits {inc[0]['culprits'] if inc else '-'} missing "
          f"{inc[0]['missing_ranks'] if inc else '-'}; want {cls} {cul!r} {mis!r}")
    sys.exit(1)
PY
}
check ok 0 none "" ""
check not_joined 1 not_joined 3 3
check not_joined_pickle 1 not_joined 3 3
check mismatch_first 1 mismatch 0 ""
check mismatch_first_mccl 1 mismatch 0 ""
check mismatch_dtype 1 mismatch 2 ""
check all_stuck 1 all_stuck "" ""
check init 1 init "" ""
check tie 0 undecided "" ""
# rank 3 wrote no dump while ranks 0-2 wait in seq 6: the likely culprit
check missing_dump 1 not_joined 3 3
check coalesced_p2p 1 not_joined 3 3
check truncated 1 not_joined 0 0
check reused_name 1 not_joined 1 1
check rank_dead 1 rank_dead 3 3
check watchdog_late 1 watchdog_late "" ""
# the mccl: copy analyses identically (incidents, except op names) and says mccl
python3 - "$tmp/mismatch_first.json" "$tmp/mismatch_first_mccl.json" <<'PY' || fail=1
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
strip = lambda d: [{k: v for k, v in i.items() if k not in ("op", "evidence")} for i in d["incidents"]]
if strip(a) != strip(b) or b["backend"] != "mccl" or a["backend"] != "nccl":
    print("FAIL mccl copy differs:", strip(a), strip(b), a["backend"], b["backend"]); sys.exit(1)
if b["vendor"] != "unknown":
    print("FAIL mccl: names alone must not decide the vendor, got", b["vendor"]); sys.exit(1)
PY
# truncation is reported for rank 2; the reused name kept two groups apart
grep -q 'ring buffer of rank(s) 2 starts later' "$tmp/truncated.json" || { echo "FAIL truncated: no ring-buffer finding"; fail=1; }
python3 -c "
import json,sys; d=json.load(open('$tmp/reused_name.json'))
assert len(d['incidents'])==1 and d['incidents'][0]['seq']==4 and d['incidents'][0]['ranks_reporting']==[0,1], d" || fail=1
# diagnose finds the dumps in a run directory (pickle ones too) and runs the same analysis
"$TS" diagnose --json "$tmp/not_joined_pickle" >"$tmp/diag.json" 2>"$tmp/diag.err" || { echo "FAIL diagnose:"; cat "$tmp/diag.err"; fail=1; }
python3 -c "
import json; d=json.load(open('$tmp/diag.json'))
assert len(d['inputs']['hang'])==4, d['inputs']
i=d['hang']['incidents']; assert len(i)==1 and i[0]['class']=='not_joined' and i[0]['culprits']==[3], i" || fail=1
# the code-bearing pickle is refused, naming the class and the offset, and nothing ran
"$TS" hang "$tmp/evil" >"$tmp/evil.out" 2>"$tmp/evil.err"; rc=$?
[ $rc = 2 ] || { echo "FAIL evil pickle: exit $rc, want 2"; fail=1; }
grep -q 'GLOBAL posix.system\|GLOBAL os.system' "$tmp/evil.err" || { echo "FAIL evil pickle message:"; cat "$tmp/evil.err"; fail=1; }
grep -q 'byte [0-9]' "$tmp/evil.err" || { echo "FAIL evil pickle: no byte offset"; cat "$tmp/evil.err"; fail=1; }
# cut pickles: read up to the last complete entry, the cut is a finding, the
# incident is the same (rank 1 is truncated before seq 6, never blamed)
ncut=0
while read -r cut kept; do
	d=$tmp/cut_pickle/$cut
	"$TS" hang --json "$d" >"$d.json" 2>"$d.err"; rc=$?
	[ $rc = 1 ] || { echo "FAIL cut pickle at $cut: exit $rc, want 1"; cat "$d.err"; fail=1; continue; }
	python3 - "$d.json" "$cut" "$kept" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
cut, kept = int(sys.argv[2]), int(sys.argv[3])
inc = d["incidents"]
wants = [f"nccl_trace_rank_1: truncated at byte {cut}; its {kept} complete "]
if kept == 6:  # cut after its entries list closed: all of them are there
    wants.append(f"nccl_trace_rank_1: truncated at byte {cut}, after its entries list: its 6 entries")
warn = [(w["code"], w["byte_offset"]) for w in d["warnings"]]
ok = (len(inc) == 1 and inc[0]["class"] == "not_joined" and inc[0]["culprits"] == [3]
      and d["dump_entries"] == 6 + 6 + 5 + kept and any(w in f["text"] for f in d["findings"] for w in wants)
      and warn == [("truncated-dump", cut)])
if not ok:
    print(f"FAIL cut pickle at {cut}: want {kept} entries kept:", inc, d["dump_entries"], d["findings"], warn)
    sys.exit(1)
PY
	ncut=$((ncut + 1))
done <"$tmp/cut_pickle/cases"
[ "$ncut" -ge 20 ] || { echo "FAIL cut pickle: only $ncut cases"; fail=1; }
# every pickle protocol gives protocol 2's analysis, byte for byte but the paths
"$TS" hang --json "$tmp/not_joined_p2" 2>&1 | sed "s|not_joined_p2|P|g" >"$tmp/p2.json"
grep -q '"desc": "default_pg café ∑ 😀 a\\\\b\\nc"' "$tmp/p2.json" ||
	{ echo "FAIL protocol 2 group description:"; grep desc "$tmp/p2.json" | head -2; fail=1; }
for proto in 0 1 3 4 5; do
	"$TS" hang --json "$tmp/not_joined_p$proto" 2>&1 | sed "s|not_joined_p$proto|P|g" >"$tmp/p$proto.json"
	cmp -s "$tmp/p$proto.json" "$tmp/p2.json" ||
		{ echo "FAIL pickle protocol $proto differs from protocol 2:"; diff "$tmp/p$proto.json" "$tmp/p2.json" | head; fail=1; }
done
# detect calls every protocol's dump a Flight Recorder dump, so diagnose
# reads a run directory of protocol-0 dumps as hang evidence
for proto in 0 1 3; do
	"$TS" detect --json "$tmp/not_joined_p$proto/nccl_trace_rank_0" | grep -q '"kind": "flight-recorder"' ||
		{ echo "FAIL detect: a protocol $proto dump is not flight-recorder"; fail=1; }
done
"$TS" diagnose --json "$tmp/not_joined_p0" >"$tmp/p0diag.json" 2>/dev/null
python3 -c "
import json, sys; d = json.load(open('$tmp/p0diag.json'))
i = d['hang']['incidents'] if d.get('hang') else []
sys.exit(0 if len(d['inputs']['hang']) == 4 and [x['class'] for x in i] == ['not_joined'] else 1)" ||
	{ echo "FAIL diagnose of protocol-0 dumps"; fail=1; }
# dump-named files that no reader takes are said so, never silently dropped
"$TS" hang --json "$tmp/unread" >"$tmp/unread.json" 2>&1
python3 - "$tmp/unread.json" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
w = sorted((x["code"], x["file"].rsplit("/", 1)[1], x["byte_offset"]) for x in d["warnings"])
f = [x["text"] for x in d["findings"]]
ok = (w == [("unread-input", "nccl_trace_rank_0", 3), ("unread-input", "nccl_trace_rank_1", 0)]
      and len(f) == 2 and "binary (a NUL byte at offset 3)" in f[0] + f[1] and all("7e 4e ad 00" in x or "68 65 6c 6c" in x for x in f))
if not ok:
    print("FAIL unread dumps:", w, f); sys.exit(1)
PY
# a whole dump warns nothing
python3 -c "
import json, sys; d = json.load(open('$tmp/not_joined_pickle.json'))
sys.exit(0 if d['warnings'] == [] else 1)" || { echo "FAIL whole pickle dumps warn"; fail=1; }
# diagnose and its JSON carry the cut as a run warning, in the finding's words
read -r cut kept <"$tmp/cut_pickle/cases"
"$TS" diagnose --json "$tmp/cut_pickle/$cut" >"$tmp/cut_diag.json" 2>"$tmp/cut_diag.err" ||
	{ echo "FAIL diagnose of a cut pickle:"; cat "$tmp/cut_diag.err"; fail=1; }
python3 - "$tmp/cut_diag.json" "$cut" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
w = [x for x in d["warnings"] if x["code"] == "truncated-dump"]
f = [x["text"] for x in d["hang"]["findings"] if "truncated at byte" in x["text"]]
if len(w) != 1 or w[0]["byte_offset"] != int(sys.argv[2]) or f != [w[0]["message"]]:
    print("FAIL diagnose truncated-dump:", d["warnings"], f); sys.exit(1)
PY
exit $fail
