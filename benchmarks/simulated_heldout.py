"""Held-out error of the simulated replica-stage model (`--structure simulated`, the
default before the closed network) on Karpenko C reads, protocols (a)-(c).

Each split of `benchmarks/cassandra_heldout.py` is written as a measurement file,
calibrated with ``forkjoin-sim cassandra calibrate --structure simulated`` (its other
options at their defaults) and predicted with ``cassandra predict --model``; the table
gives the MAPE of the held-out rows, the share inside the 95% intervals and the fit
time, next to the naive guess of the same protocol.

Usage::

    .venv/bin/python benchmarks/simulated_heldout.py [--workers 2]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd

from cassandra_heldout import data_sets, naive, splits

COLUMNS = ["operation", "consistency", "threads", "throughput", "mean_ms"]
COMMAND = [sys.executable, "-m", "forkjoin_cli"]


def _case(job):
    """(protocol, measured, predicted, low, high, naive, seconds) of one split."""
    protocol, index, fitted, held, guess, folder = job
    fit_file = Path(folder) / f"{protocol}{index}_fit.csv"
    query = Path(folder) / f"{protocol}{index}_held.csv"
    model, out = fit_file.with_suffix(".toml"), query.with_suffix(".pred.csv")
    fitted[COLUMNS].to_csv(fit_file, index=False)
    held[COLUMNS].to_csv(query, index=False)
    started = time.time()
    subprocess.run(COMMAND + ["cassandra", "calibrate", "--nodes", "3", "--replicas", "3",
                              "--measurements", str(fit_file), "--out", str(model),
                              "--structure", "simulated"], check=True,
                   capture_output=True)
    seconds = time.time() - started
    subprocess.run(COMMAND + ["cassandra", "predict", "--model", str(model),
                              "--measurements", str(query), "--out", str(out)],
                   check=True, capture_output=True)
    predicted = pd.read_csv(out)
    return (protocol, held.mean_ms.to_numpy(), predicted.predicted_mean_ms.to_numpy(),
            predicted.predicted_ci_low_ms.to_numpy(),
            predicted.predicted_ci_high_ms.to_numpy(), guess, seconds)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    table = data_sets()["Karpenko C reads"][1]
    with tempfile.TemporaryDirectory() as folder:
        jobs = [(protocol, i, fitted, held, naive(table, protocol, fitted, held), folder)
                for protocol, cases in splits(table).items()
                for i, (fitted, held) in enumerate(cases)]
        with ProcessPoolExecutor(args.workers) as pool:
            results = list(pool.map(_case, jobs))
    print("| protocol | fits | model MAPE / max (%) | naive MAPE (%) | inside 95% interval "
          "| fit time (s) |\n|---|---|---|---|---|---|")
    for protocol in dict.fromkeys(r[0] for r in results):
        mine = [r for r in results if r[0] == protocol]
        measured, predicted, low, high, guess = (np.concatenate([r[k] for r in mine])
                                                 for k in range(1, 6))
        error = 100 * np.abs(predicted / measured - 1)
        inside = 100 * np.mean((measured >= low) & (measured <= high))
        print(f"| {protocol} | {len(mine)} | {error.mean():.1f} / {error.max():.1f} | "
              f"{100 * np.mean(np.abs(guess / measured - 1)):.1f} | {inside:.0f}% | "
              + ", ".join(f"{r[6]:.0f}" for r in mine) + " |")


if __name__ == "__main__":
    main()
