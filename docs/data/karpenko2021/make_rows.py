"""Measurement rows evaluated from the published regressions of Karpenko et al. (2021).

Karpenko, Tarasyuk, Gorbenko (2021), "Research consistency and performance of NoSQL
replicated databases", Advanced Information Systems 5(3), 66-75, give the mean latency
of each (cluster, operation, consistency level) as a quartic in x = threads / 100
(eqs. 1-12, microseconds); ``regressions.csv`` holds their coefficients verbatim. This
script evaluates them at the measured thread counts 100, 200, ..., 1000 and writes one
measurement file per cluster (``cluster_c.csv``, ``cluster_d.csv``) in the project's
format (``operation,consistency,threads,throughput,mean_ms``). Throughput is left
empty: the paper publishes no throughput per point.

The rows are the paper's *fitted curves*, not its raw measurements (which are not
published); the fits have R^2 of 0.93-0.9997 (Tables 1-2).

Usage: python make_rows.py [--out DIR]
"""

import argparse
import csv
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
#: Thread counts of the benchmark (100 to 1000 client threads in steps of 100).
THREADS = np.arange(100, 1001, 100)
#: The regressions' variable is the thread count in hundreds.
THREADS_PER_UNIT = 100.0
LEVELS = ("ONE", "QUORUM", "ALL")
OPERATIONS = ("read", "write")
COEFFICIENTS = ("a4", "a3", "a2", "a1", "a0")
FILES = {"C": "cluster_c.csv", "D": "cluster_d.csv"}


def load_regressions(path=HERE / "regressions.csv"):
    """{(cluster, operation, consistency): highest-first polynomial coefficients}."""
    with open(path, newline="") as handle:
        return {(row["cluster"], row["operation"], row["consistency"]):
                np.array([float(row[c]) for c in COEFFICIENTS])
                for row in csv.DictReader(handle)}


def mean_latency_us(coefficients, threads):
    """The regression's mean latency (microseconds) at ``threads`` client threads."""
    return np.polyval(coefficients, np.asarray(threads, dtype=float) / THREADS_PER_UNIT)


def rows(regressions, cluster, threads=THREADS):
    """Measurement rows (dicts) of one cluster: reads then writes, ONE, QUORUM, ALL."""
    out = []
    for operation in OPERATIONS:
        for level in LEVELS:
            means = mean_latency_us(regressions[cluster, operation, level], threads)
            out += [{"operation": operation, "consistency": level, "threads": int(t),
                     "throughput": "", "mean_ms": f"{m / 1000.0:.3f}"}
                    for t, m in zip(threads, means)]
    return out


def write_rows(path, table):
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(table[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(table)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE,
                        help="folder for cluster_c.csv and cluster_d.csv")
    args = parser.parse_args(argv)
    regressions = load_regressions()
    for cluster, name in FILES.items():
        write_rows(args.out / name, rows(regressions, cluster))
        print(f"wrote {args.out / name}")


if __name__ == "__main__":
    main()
