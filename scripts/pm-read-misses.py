#!/usr/bin/env python3
"""Classifies the L1 PM read misses of one GPU-model run (docs/results.md,
Figure 8): a miss is the first touch of its line on its SM, a re-touch in
the same kernel, or a re-touch of a line an earlier kernel touched.

Inputs are the run's execution record and its JSON report:
    sbrp run --trace P --preset X --record rec.json --json report.json
    scripts/pm-read-misses.py rec.json report.json
The record's `Load` events are per line access, with a hit flag
(`sbrp_trace::Execution`, docs/model.md "Output"); kernels come from
the report.
Exit 2 on an unreadable or malformed input.
"""
import bisect
import json
import sys


def main(argv):
    if len(argv) != 3:
        print("usage: pm-read-misses.py RECORD.json REPORT.json", file=sys.stderr)
        return 2
    try:
        with open(argv[1]) as f:
            rec = json.load(f)
        with open(argv[2]) as f:
            rep = json.load(f)
        kernels = rep["kernels"]
        events = rec["events"]
    except (OSError, ValueError, KeyError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    ends = [k["end"] for k in kernels]
    cats = ("first touch", "re-touch, same kernel", "re-touch, earlier kernel", "hits")
    counts = [dict.fromkeys(cats, 0) for _ in kernels]
    last = {}  # (sm, line) -> kernel of its last touch
    for e in events:
        ld = e.get("Load")
        if ld is None:
            continue
        k = min(bisect.bisect_left(ends, ld["cycle"]), len(kernels) - 1)
        key = (ld["op"]["warp"]["sm"], ld["addr"])
        if ld["hit"]:
            c = "hits"
        elif key not in last:
            c = "first touch"
        elif last[key] == k:
            c = "re-touch, same kernel"
        else:
            c = "re-touch, earlier kernel"
        last[key] = k
        counts[k][c] += 1
    print(f"{'kernel':<20}" + "".join(f"{c:>26}" for c in cats))
    total = dict.fromkeys(cats, 0)
    for kn, c in zip(kernels, counts):
        if any(c.values()):
            print(f"{kn['name']:<20}" + "".join(f"{c[x]:>26}" for x in cats))
        for x in cats:
            total[x] += c[x]
    print(f"{'total':<20}" + "".join(f"{total[x]:>26}" for x in cats))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
