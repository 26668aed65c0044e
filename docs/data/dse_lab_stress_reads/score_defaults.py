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
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "benchmarks"))
from cli_defaults import print_scores, thread_halves  # noqa: E402

ROWS = Path(__file__).resolve().parent / "rows.csv"


def cases(rows: pd.DataFrame):
    """(protocol, fitted rows, held-out rows, naive guess per held-out row)."""
    yield "c", *thread_halves(rows)


def main():
    print_scores(pd.read_csv(ROWS), cases, nodes=2, replicas_each=(1, 2))


if __name__ == "__main__":
    main()
