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
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "benchmarks"))
from cli_defaults import COLUMNS, print_scores, thread_halves  # noqa: E402

ROWS = Path(__file__).resolve().parent / "rows.csv"


def cases(rows: pd.DataFrame):
    """(protocol, fitted rows, held-out rows, naive guess per held-out row)."""
    yield "c", *thread_halves(rows)
    reads, writes = rows[rows.operation == "read"], rows[rows.operation == "write"]
    yield "d", reads, writes, reads.mean_ms.to_numpy()


def main():
    print_scores(pd.read_csv(ROWS), cases, nodes=3, replicas_each=(3, 1),
                 columns=COLUMNS + ["read_fraction"])


if __name__ == "__main__":
    main()
