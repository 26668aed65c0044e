"""Closed-loop rows of `source.csv` (YCSB workload A on Cassandra 1.0, see README.md).

Per thread count the source lists runs throttled by YCSB's ``-target`` at several
rates; the run of the highest throughput is the one the target did not hold back
(every block's highest lies below the largest targets of the script, 40,000-75,000
ops/s), a closed loop without think time. Its read and update latencies (YCSB
``AverageLatency(us)``) become a read and a write row of one mixed run (``read_fraction``
0.5), with the run's throughput (reads and updates together, ops/s).

Usage (from the repository root)::

    .venv/bin/python docs/data/rahulraghavendhra_cassandra_ycsb/make_rows.py
"""

from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent


def rows() -> pd.DataFrame:
    """The measurement rows (``operation,consistency,threads,throughput,mean_ms,
    read_fraction``) of the unthrottled run per thread count."""
    source = pd.read_csv(HERE / "source.csv")
    free = source.loc[source.groupby("Thread").Throughput.idxmax()]
    parts = [pd.DataFrame({"operation": operation, "consistency": "ONE",
                           "threads": free.Thread.to_numpy(),
                           "throughput": free.Throughput.round(3).to_numpy(),
                           "mean_ms": (free[column] / 1000).round(6).to_numpy(),
                           "read_fraction": 0.5})
             for operation, column in (("read", "ReadLatency"),
                                       ("write", "Update Latency"))]
    return pd.concat(parts).sort_values(["threads", "operation"], kind="stable")


if __name__ == "__main__":
    rows().to_csv(HERE / "rows.csv", index=False)
