#!/usr/bin/env python3
"""Counts, per SM, the flushes that became durable out of issue order in one
GPU-model run (docs/model-memory.md §6.1, `pm.reorder`): a flush overtakes
when it is durable before an earlier flush of the same SM.

Input is the run's execution record:
    sbrp run --trace P --preset X [--set pm.reorder=true] --record rec.json
    scripts/durable-order.py rec.json
Flush ids are unique and, within an SM, increase in issue order
(`Event::Flush`, `Event::Durable` in trace/src/record.rs).
Exit 2 on an unreadable or malformed input.
"""
import json
import sys


def main(argv):
    if len(argv) != 2:
        print("usage: durable-order.py RECORD.json", file=sys.stderr)
        return 2
    try:
        with open(argv[1]) as f:
            events = json.load(f)["events"]
        flushes = {}  # sm -> [id]
        durable = {}  # id -> cycle
        for e in events:
            fl = e.get("Flush") if isinstance(e, dict) else None
            if fl is not None:
                flushes.setdefault(fl["sm"], []).append(fl["id"])
                continue
            du = e.get("Durable") if isinstance(e, dict) else None
            if du is not None:
                durable[du["id"]] = du["cycle"]
        per_sm = {}
        lead_max = 0
        total = 0
        for sm, ids in flushes.items():
            latest = 0
            n = 0
            for i in sorted(ids):
                d = durable[i]
                if d < latest:
                    n += 1
                    lead_max = max(lead_max, latest - d)
                latest = max(latest, d)
            per_sm[sm] = n
            total += len(ids)
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    over = sum(per_sm.values())
    counts = sorted(per_sm.values())
    share = over / total if total else 0.0
    print(f"flushes {total} on {len(per_sm)} SMs; durable before an earlier flush "
          f"of their SM: {over} ({100 * share:.3f}%), on {sum(1 for c in counts if c)} SMs")
    if counts:
        print(f"per SM: min {counts[0]}, median {counts[len(counts) // 2]}, "
              f"max {counts[-1]}; largest lead {lead_max} cycles")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
