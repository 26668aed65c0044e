"""Score `cassandra calibrate` and `cassandra predict` at their defaults on `rows.csv`.

Two protocols of issue 27 apply to one level of mixed runs: (c) fit the smaller half
of the thread counts (5-200), predict the larger (250-500), both operations; naive
guess: per operation a straight line in threads through the fitted rows
(``np.polyfit``, degree 1); (d) fit the reads, predict the writes; naive guess:
writes take what reads take. Each with ``--replicas 3`` and ``--replicas 1`` (the
source does not say), ``--nodes 3``, nothing else given, through
`benchmarks/cli_defaults.scored`.

Usage (from the repository root)::

    .venv/bin/python docs/data/rahulraghavendhra_cassandra_ycsb/score_defaults.py
"""

import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "benchmarks"))
from cli_defaults import COLUMNS, scored  # noqa: E402

ROWS = Path(__file__).resolve().parent / "rows.csv"


def cases(rows: pd.DataFrame):
    """(protocol, fitted rows, held-out rows, naive guess per held-out row)."""
    threads = np.sort(rows.threads.unique())
    small = rows.threads <= threads[len(threads) // 2 - 1]
    fitted, held = rows[small], rows[~small]
    line = np.concatenate([
        np.polyval(np.polyfit(fitted.threads[fitted.operation == op],
                              fitted.mean_ms[fitted.operation == op], 1),
                   held.threads[held.operation == op])
        for op in held.operation.unique()])
    held = pd.concat([held[held.operation == op] for op in held.operation.unique()])
    yield "c", fitted, held, line
    reads, writes = rows[rows.operation == "read"], rows[rows.operation == "write"]
    yield "d", reads, writes, reads.mean_ms.to_numpy()


def main():
    rows = pd.read_csv(ROWS)
    print("| protocol | replicas | held-out rows | model MAPE % | naive MAPE % "
          "| inside 95% interval |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as root:
        for replicas in (3, 1):
            for protocol, fitted, held, guess in cases(rows):
                folder = Path(root) / f"{protocol}{replicas}"
                folder.mkdir()
                got = scored(folder, fitted, held, guess, nodes=3, replicas=replicas,
                             columns=COLUMNS + ["read_fraction"])
                print(f"| {protocol} | {replicas} | {got['rows']} | {got['model']:.1f} "
                      f"| {got['naive']:.1f} | {100 * got['inside']:.0f}% |")


if __name__ == "__main__":
    main()
