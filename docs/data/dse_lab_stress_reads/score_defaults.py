"""Score `cassandra calibrate` and `cassandra predict` at their defaults on `rows.csv`.

One protocol of issue 27 applies to reads at one level: (c) fit the smaller half of
the thread counts (4-16), predict the larger (24-54); naive guess: a straight line in
threads through the fitted rows (``np.polyfit``, degree 1). With ``--replicas 1``
(cassandra-stress's default keyspace) and ``--replicas 2`` (the source does not say),
``--nodes 2``, nothing else given, through `benchmarks/cli_defaults.scored`.

Usage (from the repository root)::

    .venv/bin/python docs/data/dse_lab_stress_reads/score_defaults.py
"""

import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "benchmarks"))
from cli_defaults import scored  # noqa: E402

ROWS = Path(__file__).resolve().parent / "rows.csv"


def cases(rows: pd.DataFrame):
    """(protocol, fitted rows, held-out rows, naive guess per held-out row)."""
    threads = np.sort(rows.threads.unique())
    small = rows.threads <= threads[len(threads) // 2 - 1]
    fitted, held = rows[small], rows[~small]
    line = np.polyval(np.polyfit(fitted.threads, fitted.mean_ms, 1), held.threads)
    yield "c", fitted, held, line


def main():
    rows = pd.read_csv(ROWS)
    print("| protocol | replicas | held-out rows | model MAPE % | naive MAPE % "
          "| inside 95% interval |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as root:
        for replicas in (1, 2):
            for protocol, fitted, held, guess in cases(rows):
                folder = Path(root) / f"{protocol}{replicas}"
                folder.mkdir()
                got = scored(folder, fitted, held, guess, nodes=2, replicas=replicas)
                print(f"| {protocol} | {replicas} | {got['rows']} | {got['model']:.1f} "
                      f"| {got['naive']:.1f} | {100 * got['inside']:.0f}% |")


if __name__ == "__main__":
    main()
