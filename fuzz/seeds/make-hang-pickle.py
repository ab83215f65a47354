#!/usr/bin/python3
"""Write the hang_pickle fuzz seeds: small protocol-2 pickles shaped like
Flight Recorder dumps (the keys docs/hang.md lists), synthetic values, and
the stuck one in protocol 0 (text opcodes) with non-ASCII text too.
Run from the repository root: fuzz/seeds/make-hang-pickle.py"""
import pickle

def entry(rid, seq, state, name="nccl:all_reduce", pg=0):
    return {"record_id": rid, "pg_id": pg, "process_group": (str(pg), "default_pg"),
            "collective_seq_id": seq, "p2p_seq_id": 0, "op_id": seq, "profiling_name": name,
            "time_created_ns": 1_700_000_000_000_000_000 + rid * 1000,
            "duration_ms": 1.25 if state == "completed" else None, "is_p2p": False,
            "input_sizes": [[1024, 1024]], "output_sizes": [[1024, 1024]],
            "input_dtypes": ["BFloat16"], "output_dtypes": ["BFloat16"],
            "state": state, "retired": state == "completed", "timeout_ms": 600000,
            "time_discovered_started_ns": None, "time_discovered_completed_ns": None,
            "frames": [{"name": "all_reduce", "filename": "train.py", "line": 42}]}

def dump(entries, completed):
    return {"version": "2.5", "pg_config": {"0": {"name": "0", "desc": "default_pg", "ranks": "[0, 1]"}},
            "pg_status": {"0": {"last_enqueued_collective": len(entries), "last_started_collective": -1,
                                "last_completed_collective": completed}},
            "entries": entries}

seeds = {
    "healthy": dump([entry(i, i + 1, "completed") for i in range(3)], 3),
    "stuck": dump([entry(0, 1, "completed"), entry(1, 2, "scheduled", "nccl:all_gather")], 1),
    "empty": dump([], -1),
}
for name, d in seeds.items():
    with open(f"fuzz/seeds/hang_pickle/{name}.pkl", "wb") as f:
        pickle.dump(d, f, protocol=2)
odd = seeds["stuck"]
odd["pg_config"]["0"]["desc"] = "default_pg caf\u00e9 \u2211 \U0001f600 a\\b"
with open("fuzz/seeds/hang_pickle/stuck-protocol0.pkl", "wb") as f:
    pickle.dump(odd, f, protocol=0)
