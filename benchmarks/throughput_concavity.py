"""How far protocol (c) of issue 27 can go for any model whose throughput grows
concavely with the client threads.

A closed queueing network's throughput rises with its population, and, for stations
whose rates do not fall as work queues (a single server, several, separate lanes),
each added client adds no more than the one before (Shanthikumar and Yao's concavity
of throughput in population). Protocol (c) fits the smaller half of the thread counts
and predicts the larger. Through the two largest fitted rows of a level, such a model's
throughput past them is at most their last increment carried on in a straight line,
so its latency at ``threads`` is at least ``threads`` over that throughput, less the
think time. This script prints, for every data set of `cassandra_heldout.data_sets`
with a thread sweep, the closed loop's throughput, threads / (latency + think time),
gained per added thread per level (the think time is 0 for Karpenko and george0st, and
the one the saulolks file names; no measured throughput is used), and the mean
absolute percentage error that
this bound forces on the held-out rows: what no model of the kind can go below, and
what a row that rises faster than the bound (a convex stretch of the published curve)
costs.

Usage::

    .venv/bin/python benchmarks/throughput_concavity.py [--out FILE.md]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cassandra_heldout as heldout  # noqa: E402  (the data sets and their splits)


def bound(table) -> tuple[float, list[str]]:
    """(the least (c) MAPE, in %, of a concave-throughput model through the two largest
    fitted rows of each level; one line per level of increments per step of threads)."""
    small = table.threads <= np.median(np.unique(table.threads))
    misses, lines = [], []
    for level, rows in table.groupby("consistency", sort=False):
        rows = rows.groupby("threads").mean_ms.mean()
        # closed loop: throughput = threads / (latency + think)
        think = float(table.think_ms.iloc[0])
        x = rows.index.to_numpy(float) / (rows.to_numpy(float) + think)
        fitted = small.groupby(table.threads).first().reindex(rows.index).to_numpy()
        if fitted.sum() < 2 or (~fitted).sum() == 0:
            continue
        last, before = np.flatnonzero(fitted)[-1], np.flatnonzero(fitted)[-2]
        threads = rows.index.to_numpy(float)
        slope = (x[last] - x[before]) / (threads[last] - threads[before])
        per_thread = ", ".join(f"{d:+.1f}" for d in 1000 * np.diff(x) / np.diff(threads))
        if slope < 0:
            # no rising curve passes through both: the rows bound nothing
            lines.append(f"{level}: {per_thread} (falls at the fitted end: no bound)")
            continue
        held = ~fitted
        most = x[last] + slope * (threads[held] - threads[last])
        # most > 0: the slope is not negative here
        least_ms = threads[held] / most - think
        measured = rows.to_numpy(float)[held]
        misses.extend(np.maximum(least_ms / measured - 1.0, 0.0))
        lines.append(f"{level}: {per_thread}")
    return 100.0 * float(np.mean(misses)) if misses else float("nan"), lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="also write the markdown here")
    args = parser.parse_args()
    text = ["| data set | least (c) MAPE of a concave-throughput model | throughput "
            "gained per added thread between measured counts (ops/s) |", "|---|---|---|"]
    for name, (_, table, *_rest) in heldout.data_sets().items():
        least, lines = bound(table)
        text.append(f"| {name} | {least:.2f}% | {'; '.join(lines)} |")
    heldout.publish("\n".join(text) + "\n", args.out)


if __name__ == "__main__":
    main()
