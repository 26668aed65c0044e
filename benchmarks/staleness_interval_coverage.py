"""How often the 95% intervals of a loaded key's staleness shares hold the long-run
values: P(stale), t-visibility and k-staleness of ``forkjoin-sim staleness`` at
N = 3, R = W = 1 (LNKD-DISK, Cassandra's stages), short runs against two runs of
1,000,000 operations.

``python benchmarks/staleness_interval_coverage.py [--rates 1,1.6] [--operations
5000,20000,80000] [--seeds 48]`` prints one line per (rate, operations, quantile): the
share of (seed, share) pairs inside, and the median width. ``t`` is the library's
`forkjoin_sim.staleness.intervals.inflation`; ``normal`` the same batch means with the
normal quantile (what it was before Student's t).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json

import numpy as np
from scipy import stats

import forkjoin_sim.staleness.intervals as intervals
import forkjoin_sim.staleness.queueing as queueing
from forkjoin_cli.main import main

LIBRARY = intervals.inflation


def normal(values, confidence: float = 0.95, batches: int = intervals.CORRELATION_BATCHES):
    """The library's inflation without its (t / z)^2 factor."""
    t_over_z = (stats.t.ppf(0.5 + confidence / 2, batches - 1)
                / stats.norm.ppf(0.5 + confidence / 2))
    found = LIBRARY(values, confidence, batches)
    return max(1.0, found / t_over_z ** 2) if found > 1.0 else 1.0


def run(seed: int, operations: int, rate: str, inflation) -> dict:
    intervals.inflation = queueing.inflation = inflation
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        main(["staleness", "--replicas", "3", "--read-quorum", "1", "--write-quorum", "1",
              "--rate", rate, "--profile", "LNKD-DISK", "--jobs", str(operations),
              "--seed", str(seed), "--json"])
    return json.loads(out.getvalue())[0]


def shares(result: dict):
    yield "stale", result["stale"], result["stale_low"], result["stale_high"]
    for row in result["visibility"]:
        yield f"visible from {row['t_low']}", row["probability"], row["low"], row["high"]
    for row in result["k_staleness"]:
        yield f"k={row['k']}", row["probability"], row["low"], row["high"]


def main_(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rates", default="1,1.6")
    parser.add_argument("--operations", default="5000,20000,80000")
    parser.add_argument("--seeds", type=int, default=48)
    args = parser.parse_args(argv)
    for rate in args.rates.split(","):
        truth: dict[str, list[float]] = {}
        for seed in (900, 901):
            for name, value, _, _ in shares(run(seed, 1_000_000, rate, LIBRARY)):
                truth.setdefault(name, []).append(value)
        for operations in map(int, args.operations.split(",")):
            for label, inflation in (("normal", normal), ("t", LIBRARY)):
                inside, widths = [], []
                for seed in range(1, args.seeds + 1):
                    for name, _, low, high in shares(run(seed, operations, rate,
                                                         inflation)):
                        if low is None or high is None or name not in truth:
                            continue
                        inside.append(low <= np.mean(truth[name]) <= high)
                        widths.append(high - low)
                print(f"rate {rate}/ms, {operations:,} operations, {label}: "
                      f"{sum(inside)} of {len(inside)} inside "
                      f"({np.mean(inside):.1%}), median width {np.median(widths):.4f}",
                      flush=True)
    intervals.inflation = queueing.inflation = LIBRARY


if __name__ == "__main__":
    main_()
