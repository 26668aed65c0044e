"""Rebuild the measurement files of this folder from ``grupe_source.csv``.

``grupe_source.csv`` holds, verbatim, 13 columns of the 32 ``A_H1_H2`` rows of
``Analiza_research-v3_short_v3/grupe.csv`` in github.com/huskicajla/cassandra-scylla-benchmark
(commit 863550b0623caefaf43486048b854c36b92eb360): group means over ``n`` = 3 repetitions.
Every (database, nodes, rf, profile, datasetSize, suite) configuration measured at all four
concurrencies 1, 8, 32 and 128 becomes one file in the measurement format
``operation,consistency,threads,rate,throughput,mean_ms,read_fraction``. The numbers are
copied as text, so the files carry exactly the digits of the source.

Usage (from the repository root)::

    .venv/bin/python docs/data/huskicajla_cassandra_scylla/make_rows.py          # compare
    .venv/bin/python docs/data/huskicajla_cassandra_scylla/make_rows.py --write  # rewrite

Without ``--write`` it exits non-zero if any file differs from the rebuilt text.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "grupe_source.csv"
CONCURRENCIES = ["1", "8", "32", "128"]
#: the source's profile -> (operation, read_fraction) of the measurement format
PROFILES = {"CONCURRENT_WRITE": ("write", "0.0"), "READ_SINGLE": ("read", "1.0")}
SIZES = {"1000000": "1m", "10000000": "10m"}
HEADER = "operation,consistency,threads,rate,throughput,mean_ms,read_fraction"
CONFIGURATION = ["database", "nodes", "rf", "profile", "datasetSize", "suite"]


def file_name(database: str, nodes: str, rf: str, profile: str, size: str, suite: str) -> str:
    """Name of one configuration's measurement file."""
    operation = PROFILES[profile][0]
    return (f"{database}_{suite.lower()}_n{nodes}_rf{rf}_{operation}_"
            f"{SIZES.get(size, size)}.csv")


def tables(source: Path = SOURCE) -> dict[str, str]:
    """File name -> CSV text, one per configuration with all four concurrencies."""
    rows = pd.read_csv(source, dtype=str, keep_default_na=False)
    out = {}
    for key, group in rows.groupby(CONFIGURATION, sort=True):
        if sorted(group["concurrency"], key=int) != CONCURRENCIES:
            continue
        database, nodes, rf, profile, size, suite = key
        operation, read_fraction = PROFILES[profile]
        lines = [HEADER]
        for _, row in group.sort_values("concurrency", key=lambda c: c.astype(int)).iterrows():
            lines.append(",".join([operation, row["cl"], row["concurrency"], "",
                                   row["throughput"], row["total_meanMs"], read_fraction]))
        out[file_name(database, nodes, rf, profile, size, suite)] = "\n".join(lines) + "\n"
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite the CSV files")
    args = parser.parse_args()
    built = tables()
    if args.write:
        for name, text in built.items():
            (HERE / name).write_text(text)
        print(f"wrote {len(built)} files")
        return 0
    differing = [name for name, text in built.items()
                 if not (HERE / name).exists() or (HERE / name).read_text() != text]
    for name in differing:
        print("DIFFERS:", name)
    print(f"{len(built) - len(differing)} of {len(built)} files match grupe_source.csv")
    return 1 if differing else 0


if __name__ == "__main__":
    raise SystemExit(main())
