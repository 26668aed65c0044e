"""Rows of `source_read.txt` (cassandra-stress reads on a 2-node DSE cluster, see
README.md).

cassandra-stress, given no thread count, runs the same read job at 4, 8, 16, 24, 36
and 54 threads, each a closed loop without think time, and prints a ``Results:`` block
per run. Each block's ``op rate`` (ops/s) and ``latency mean`` (ms) become a read row
at consistency ONE (cassandra-stress's default; the source states no ``cl=``).

Usage (from the repository root)::

    .venv/bin/python docs/data/dse_lab_stress_reads/make_rows.py
"""

import re
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent

#: One run of the source: its thread count, then its op rate and mean latency.
RUN = re.compile(r"^Running READ with (\d+) threads for \d+ iteration\n"
                 r"Results:\n"
                 r"op rate\s+: (\d+) \[READ:\d+\]\n"
                 r"(?:.*\n)*?"
                 r"latency mean\s+: ([\d.]+) \[READ:[\d.]+\]$", re.MULTILINE)


def rows() -> pd.DataFrame:
    """The measurement rows (``operation,consistency,threads,throughput,mean_ms``)."""
    text = (HERE / "source_read.txt").read_text()
    runs = RUN.findall(text)
    # every block read, none skipped by a line the pattern does not expect
    assert len(runs) == text.count("Results:") == 6, len(runs)
    return pd.DataFrame({"operation": "read", "consistency": "ONE",
                         "threads": [int(t) for t, _, _ in runs],
                         "throughput": [float(r) for _, r, _ in runs],
                         "mean_ms": [float(m) for _, _, m in runs]})


if __name__ == "__main__":
    rows().to_csv(HERE / "rows.csv", index=False)
