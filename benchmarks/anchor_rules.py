"""The held-out comparison with another rule for the anchor past the largest fitted
thread count (docs/cassandra/calibration.md, "Anchors").

`sizing.network_model` holds a level's last anchor past its largest fitted thread count
("held", the default). This script replaces that rule for one run of
`cassandra_heldout` (its processes are forked, so they take the replacement too):
"mean" holds the mean of the level's anchors over its fitted counts, "none" drops
the anchor there (the model's own curve), "trend" carries on the least-squares line
of the level's anchors over the upper half of its fitted counts (at least three;
held otherwise). Every other argument goes to `cassandra_heldout`.

Usage::

    .venv/bin/python benchmarks/anchor_rules.py mean --out /tmp/mean.md --structures lanes
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import sizing.network_model as network_model

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cassandra_heldout  # noqa: E402  (the comparison itself)

RULES = ("held", "mean", "none", "trend")


def along_threads(rule: str, held=network_model._along_threads):
    """`sizing.network_model._along_threads` (``held``) with ``rule`` past the largest
    count."""
    def along(loads, residual, threads, trend=False):
        out = held(loads, residual, threads, trend)
        if trend:
            # the clients' time outside the latency, not an anchor: its own rule
            return out
        past = np.asarray(threads) > np.max(loads)
        if rule == "mean":
            # the mean of the level's anchors over its fitted counts
            return np.where(past, held(loads, residual, np.unique(loads)).mean(), out)
        if rule == "none":
            return np.where(past, 0.0, out)
        if rule == "trend":
            counts = np.unique(loads)
            upper = counts[counts >= np.median(counts)]
            if upper.size >= 3:
                slope = np.polyfit(upper, held(loads, residual, upper), 1)[0]
                return np.where(past, out + slope * (np.asarray(threads) - counts[-1]),
                                out)
        return out
    return along


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in RULES:
        print(f"usage: anchor_rules.py {{{','.join(RULES)}}} [cassandra_heldout "
              "arguments]", file=sys.stderr)
        sys.exit(2)
    rule = sys.argv.pop(1)
    network_model._along_threads = along_threads(rule)
    cassandra_heldout.main()


if __name__ == "__main__":
    main()
