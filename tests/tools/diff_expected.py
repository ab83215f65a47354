#!/usr/bin/env python3
"""Independent reference for `trainscope diff` (stdlib only).

Reads two PyTorch profiler traces (Kineto JSON object or the legacy
pre-Kineto array, plain or gzip) and prints, as JSON, what a diff of them
must report:

  steps: iteration -> ProfilerStep duration in us (legacy ProfilerStep#N is
         iteration N+1; a step ends where the next begins)
  compared: the common iterations
  only_baseline / only_candidate: iterations of one side only
  names_added / names_deleted: op names (cpu_op and user_annotation events,
         every event without a category in legacy traces, ProfilerStep#
         excluded) that start inside a compared step on one side only
  per_step_us[name]: the summed duration per compared step of a name, per side
  data_loader_us: per iteration, summed enumerate(DataLoader)* spans

It does not use trainscope's code; the diff tests compare its answers with
`trainscope diff --json`.
"""
import gzip
import json
import sys


def load(path):
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    doc = json.loads(raw)
    if isinstance(doc, list):
        return doc, True
    return doc.get("traceEvents", []), False


def cpu_like(ev, legacy):
    if ev.get("ph") != "X":
        return False
    if legacy:
        return True
    return ev.get("cat") in ("cpu_op", "user_annotation")


def analyse(path):
    evs, legacy = load(path)
    steps = []
    for ev in evs:
        name = ev.get("name", "")
        if ev.get("ph") == "X" and name.startswith("ProfilerStep#") and \
                (legacy or ev.get("cat") in ("cpu_op", "user_annotation")):
            n = int(name[len("ProfilerStep#"):])
            steps.append([n + (1 if legacy else 0), float(ev["ts"]), float(ev["ts"]) + float(ev["dur"])])
    steps.sort(key=lambda s: s[1])
    for i in range(len(steps) - 1):
        if steps[i][2] > steps[i + 1][1]:
            steps[i][2] = steps[i + 1][1]
    names = {}  # iteration -> {name: summed dur}
    data = {}
    for it, _, _ in steps:
        names[it] = {}
        data[it] = 0.0
    for ev in evs:
        if not cpu_like(ev, legacy):
            continue
        name = ev.get("name", "")
        if name.startswith("ProfilerStep#"):
            continue
        ts = float(ev["ts"])
        for it, s, e in steps:
            if s <= ts < e:
                names[it][name] = names[it].get(name, 0.0) + float(ev.get("dur", 0))
                if name.startswith("enumerate(DataLoader)"):
                    data[it] += float(ev.get("dur", 0))
                break
    return {s[0]: s[2] - s[1] for s in steps}, names, data


def main():
    base, cand = sys.argv[1], sys.argv[2]
    bs, bn, bd = analyse(base)
    cs, cn, cd = analyse(cand)
    common = sorted(set(bs) & set(cs))
    bset, cset = set(), set()
    bper, cper = {}, {}
    for it in common:
        bset |= set(bn[it])
        cset |= set(cn[it])
        for k, v in bn[it].items():
            bper[k] = bper.get(k, 0.0) + v / len(common)
        for k, v in cn[it].items():
            cper[k] = cper.get(k, 0.0) + v / len(common)
    out = {
        "baseline_steps_us": {str(k): v for k, v in sorted(bs.items())},
        "candidate_steps_us": {str(k): v for k, v in sorted(cs.items())},
        "compared": common,
        "only_baseline": sorted(set(bs) - set(cs)),
        "only_candidate": sorted(set(cs) - set(bs)),
        "names_added": sorted(cset - bset),
        "names_deleted": sorted(bset - cset),
        "baseline_per_step_us": bper,
        "candidate_per_step_us": cper,
        "candidate_data_loader_us": {str(k): v for k, v in sorted(cd.items())},
    }
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
