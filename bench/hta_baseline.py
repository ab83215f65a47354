#!/usr/bin/python3
"""hta_baseline.py - a LOWER BOUND of HolisticTraceAnalysis's time on a trace.

HolisticTraceAnalysis (HTA) cannot be installed on the benchmark machine
(it is not a Debian package and PyPI is unreachable), yet trainscope's speed
claim is a ratio against it. This script does the part of HTA's work that
`get_temporal_breakdown()` cannot avoid, the way HTA does it (stdlib `json`,
a pandas DataFrame of the events, HTA's preprocessing), and nothing else.
Written from ../shared/reference/hta-definitions.md (section 1.1 and 1.3)
and ../shared/reference/trace-format.md; no HTA code is copied.

Why the time it measures is a LOWER BOUND of HTA's:
  - it does a subset of HTA's loader: fewer argument columns, no dtype
    compaction, no forward/backward flow step, no memory logging, no
    TraceAnalysis object, one rank in-process (no worker pool);
  - each step uses the cheapest vectorised pandas/numpy form we know
    (kernel types classified once per distinct name instead of once per row,
    interval merging in numpy instead of a pandas groupby);
  - only one analyzer (temporal breakdown) runs.
So HTA on the same trace, with the same Python, pandas and numpy, takes at
least this long; a ratio against this script understates the real one.

usage: hta_baseline.py [--timing] TRACE.json[.gz]...
Prints, as JSON, the temporal breakdown of every rank (HTA's numbers, in us
after HTA's ns->us rounding) so it can be checked against
`trainscope trace --hta-compat --json`. --timing adds per-stage seconds on
stderr.
"""
import gzip
import json
import re
import sys
import time

import numpy as np
import pandas as pd

# HTA's kernel-type regexes (hta-definitions.md section 1.2), tried in order.
RE_COMM = re.compile(r"(^nccl.*)|(^hip)|(^hccl)|(.*ncclKernel.*)")
RE_MEM = re.compile(r"(^(hip)?Memcpy)|(^(hip)?Memset)|(^dma)")
RE_NOT_COMP = re.compile(
    r"(^nccl)|(.*Memcpy)|(.*Memset)|(.*dma)|(^.*Sync)|(^Stream Wait Event)|"
    r"(cuda.*LaunchKernel)|(^runFunction)|(^hip)|(^job_exe)|(^packet)|"
    r"(^pe_exe)|(^cpum_exe_subgraph)|(^hccl)|(^collective_subgraph_execution)")
COMM, MEM, COMP, OTHER = 2, 4, 1, 0

RE_RANK = re.compile(r'"rank":\s+(\d+)')
RE_STEP = re.compile(r"^ProfilerStep#\d")
RE_STEP_NUM = re.compile(r"ProfilerStep\s*#\s*(\d+)")

# The args HTA turns into columns that the temporal breakdown path needs
# (HTA's default parser config has more).
ARGS = (("stream", "stream"), ("correlation", "correlation"),
        ("External id", "external_id"))

STAGES = []


def stage(name, t0):
    t1 = time.perf_counter()
    STAGES.append((name, t1 - t0))
    return t1


def kernel_type(name):
    if RE_COMM.match(name):
        return COMM
    if RE_MEM.match(name):
        return MEM
    if not RE_NOT_COMP.match(name):
        return COMP
    return OTHER


def open_trace(path, mode):
    if path.endswith(".gz"):
        return gzip.open(path, mode)
    return open(path, mode)


def find_rank(path):
    """HTA's rank discovery: the first `"rank": N` match, line by line."""
    with open_trace(path, "rt") as fh:
        for line in fh:
            m = RE_RANK.search(line)
            if m:
                return int(m.group(1))
    return 0


def load_events(path):
    """HTA's default (json) backend: read it all, then json.loads."""
    if not (path.endswith(".json") or path.endswith(".gz")):
        raise SystemExit(f"hta_baseline: {path}: HTA accepts only .json and .gz files")
    with open_trace(path, "rb") as fh:
        return json.loads(fh.read())


def arg_column(args, key):
    """One args key as an int64 column; missing or non-numeric -> -1."""
    out = np.full(len(args), -1, dtype=np.int64)
    for i, a in enumerate(args):
        if isinstance(a, dict):
            v = a.get(key)
            if isinstance(v, int) and not isinstance(v, bool) and -2**63 <= v < 2**63:
                out[i] = v
    return out


def build_frame(record, symbols, sym_index):
    """The events as HTA's DataFrame: rows with dur and cat, args as
    columns, names and categories interned, ns rounded to us."""
    t0 = time.perf_counter()
    df = pd.DataFrame(record["traceEvents"])
    t0 = stage("dataframe", t0)
    df = df[df["dur"].notna() & df["cat"].notna() & (df["cat"] != "Trace")]
    df = df.drop(columns=[c for c in ("ph", "id", "bp", "s") if c in df.columns])
    df["index"] = df.index
    args = df["args"].to_numpy() if "args" in df.columns else np.full(len(df), None)
    for key, col in ARGS:
        df[col] = arg_column(args, key)
    if "args" in df.columns:
        df = df.drop(columns=["args"])
    t0 = stage("args", t0)

    for col in ("name", "cat"):
        for s in pd.unique(df[col]):
            if s not in sym_index:
                sym_index[s] = len(symbols)
                symbols.append(s)
        df[col] = df[col].map(sym_index).astype(np.int64)
    t0 = stage("symbols", t0)

    if df["ts"].dtype == np.float64 or df["dur"].dtype == np.float64:
        ts = df["ts"].to_numpy(dtype=np.float64)
        end = np.floor(ts + df["dur"].to_numpy(dtype=np.float64))
        ts = np.ceil(ts)
        df["ts"] = ts.astype(np.int64)
        df["dur"] = (end - ts).astype(np.int64)
    stage("rounding", t0)
    return df


def link_correlation(df, sync_ids):
    """index_correlation (GPU side: stream>=0 & correlation>=0, or a sync
    name) and each row's iteration."""
    t0 = time.perf_counter()
    corr = df["correlation"].to_numpy()
    gpu = ((df["stream"].to_numpy() >= 0) & (corr >= 0)) | df["name"].isin(sync_ids).to_numpy()
    has = corr != -1
    index = df["index"].to_numpy()

    def last_by_corr(mask):
        s = pd.Series(index[mask], index=corr[mask])
        return s[~s.index.duplicated(keep="last")]

    cpu_last, gpu_last = last_by_corr(has & ~gpu), last_by_corr(has & gpu)
    icorr = np.where(has, 0, -1).astype(np.int64)
    m = has & gpu
    icorr[m] = pd.Series(corr[m]).map(cpu_last).fillna(0).to_numpy(dtype=np.int64)
    m = has & ~gpu
    icorr[m] = pd.Series(corr[m]).map(gpu_last).fillna(0).to_numpy(dtype=np.int64)
    df["index_correlation"] = icorr
    df["gpu_side"] = gpu
    t0 = stage("correlation", t0)
    return t0


def add_iteration(df, step_ids, step_num, t0):
    """CPU rows inside ProfilerStep#N get N; GPU rows take the iteration
    of their correlated CPU row; everything else -1."""
    name = df["name"].to_numpy()
    ts = df["ts"].to_numpy()
    cpu = df["stream"].to_numpy() < 0
    is_step = cpu & np.isin(name, step_ids)
    order = np.argsort(ts[is_step], kind="quicksort")
    s_ts = ts[is_step][order]
    s_end = s_ts + df["dur"].to_numpy()[is_step][order]
    s_num = np.array([step_num[x] for x in name[is_step][order]], dtype=np.int64)
    it = np.full(len(df), -1, dtype=np.int64)
    if len(s_ts):
        k = np.searchsorted(s_ts, ts, side="right") - 1
        ok = cpu & (k >= 0)
        ok[ok] &= ts[ok] < s_end[k[ok]]
        it[ok] = s_num[k[ok]]
    by_index = pd.Series(it, index=df["index"].to_numpy())
    g = ~cpu & (df["index_correlation"].to_numpy() > 0)
    it[g] = pd.Series(df["index_correlation"].to_numpy()[g]).map(by_index).fillna(-1).to_numpy(dtype=np.int64)
    df["iteration"] = it
    stage("iteration", t0)


def filter_last_step(df, step_ids):
    """Keep CPU-side rows before the last step's start, and GPU-side rows
    once per kept CPU-side row with their correlation (an inner merge)."""
    t0 = time.perf_counter()
    gpu = df["gpu_side"].to_numpy()
    cpu_df, gpu_df = df[~gpu], df[gpu]
    steps = cpu_df[cpu_df["name"].isin(step_ids)]
    cutoff = steps["ts"].max() if len(steps) else cpu_df["ts"].min()
    cpu_kept = cpu_df[cpu_df["ts"] < cutoff]
    gpu_kept = gpu_df.merge(cpu_kept[["correlation"]], on="correlation", how="inner")
    out = pd.concat([gpu_kept, cpu_kept], ignore_index=True)
    stage("filter", t0)
    return out


def merged_span(ts, end):
    """HTA's interval merge: sort by ts, a new group starts when ts exceeds
    the running max of earlier ends. Returns (span, union length)."""
    order = np.argsort(ts, kind="quicksort")
    ts, end = ts[order], end[order]
    cm = np.maximum.accumulate(end)
    first = np.ones(len(ts), dtype=bool)
    first[1:] = ts[1:] > cm[:-1]
    last = np.ones(len(ts), dtype=bool)
    last[:-1] = first[1:]
    union = int((cm[last] - ts[first]).sum())
    return int(cm[-1] - ts[0]), union


def temporal_breakdown(df, ktype_of_sym):
    t0 = time.perf_counter()
    k = df[df["stream"] != -1]
    if len(k) == 0:
        stage("breakdown", t0)
        return None
    ts = k["ts"].to_numpy()
    end = ts + k["dur"].to_numpy()
    kt, busy = merged_span(ts, end)
    comp = ktype_of_sym[k["name"].to_numpy()] == COMP
    compute = merged_span(ts[comp], end[comp])[1] if comp.any() else 0
    idle = kt - busy
    nonc = kt - compute - idle

    def pct(x):
        return float(np.round(100.0 * x / kt, 2)) if kt else None

    stage("breakdown", t0)
    return {"idle_time_us": idle, "compute_time_us": compute,
            "non_compute_time_us": nonc, "kernel_time_us": kt,
            "idle_time_pct": pct(idle), "compute_time_pct": pct(compute),
            "non_compute_time_pct": pct(nonc), "gpu_kernels": int(len(k))}


def main(argv):
    timing = "--timing" in argv
    paths = [a for a in argv if a != "--timing"]
    if not paths:
        sys.stderr.write("usage: hta_baseline.py [--timing] TRACE.json[.gz]...\n")
        return 2
    t_start = time.perf_counter()
    symbols, sym_index, frames = [], {}, []
    for p in paths:
        t0 = time.perf_counter()
        rank = find_rank(p)
        t0 = stage("rank scan", t0)
        record = load_events(p)
        stage("json.loads", t0)
        df = build_frame(record, symbols, sym_index)
        del record
        frames.append((rank, p, df))

    # facts about each symbol, computed once per distinct string
    ktype_of_sym = np.array([kernel_type(s) if isinstance(s, str) else COMP for s in symbols],
                            dtype=np.int8)
    step_num = {}
    for i, s in enumerate(symbols):
        if isinstance(s, str) and RE_STEP.match(s):
            step_num[i] = int(RE_STEP_NUM.match(s).group(1))
    step_ids = np.array(sorted(step_num), dtype=np.int64)
    sync_ids = [sym_index[s] for s in ("Event Sync", "Context Sync") if s in sym_index]

    for _, _, df in frames:
        t0 = link_correlation(df, sync_ids)
        add_iteration(df, step_ids, step_num, t0)

    t0 = time.perf_counter()
    t_min = min(int(df["ts"].min()) for _, _, df in frames if len(df))
    for _, _, df in frames:
        df["ts"] -= t_min
    stage("align", t0)

    names_seen = set()
    for _, _, df in frames:
        names_seen.update(np.intersect1d(df["name"].unique(), step_ids).tolist())
    if len(names_seen) >= 2:
        frames = [(r, p, filter_last_step(df, step_ids)) for r, p, df in frames]

    ranks = []
    for rank, path, df in frames:
        tb = temporal_breakdown(df, ktype_of_sym)
        ranks.append({"rank": rank, "file": path, "last_step_dropped": len(names_seen) >= 2,
                      "temporal_breakdown": tb})
    total = time.perf_counter() - t_start
    json.dump({"schema": "trainscope.hta_baseline/1",
               "note": "lower bound of HolisticTraceAnalysis: load + preprocessing + temporal breakdown only",
               "ranks": ranks}, sys.stdout, indent=1)
    sys.stdout.write("\n")
    if timing:
        for name, s in STAGES:
            sys.stderr.write(f"{name:12s} {s:8.3f} s\n")
        sys.stderr.write(f"{'total':12s} {total:8.3f} s\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
