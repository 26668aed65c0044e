"""Held-out errors of the default model on published mixed and fixed-rate runs.

The published sets of `docs/data/` with read/write mixes in one run or an offered rate
(YCSB ``-target``), each split the one way its rows allow, calibrated as
``cassandra calibrate`` does at its defaults (default structure and prior; the cluster's
nodes, replicas and cores as documented) and scored on the held-out rows beside the
naive guess of the same split:

- **benchANT Cassandra 5** (50% reads, QUORUM, 100-400 threads): fit the smaller half of
  the thread counts, predict the larger; naive: a straight line in threads per
  operation.
- **benchANT ScyllaDB** (400 threads, writes at QUORUM; reads at QUORUM in one run and
  at ONE in the other, mixes 50/50 and 95/5): fit the runs with reads at one level,
  predict the runs with reads at the other; naive: the same operation and mix in the
  fitted run.
- **Prisyazhnyy ScyllaDB** (consistency ONE; per cluster and workload, runs at two or
  more offered rates): fit the lowest rate, predict the higher; naive: the same as the
  fitted rate.

Usage::

    .venv/bin/python benchmarks/mixed_open_heldout.py --out docs/cassandra/mixed_open_heldout.md
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from sizing.cluster_calibration import table_of
from sizing.measurements import read_measurements
from sizing.network_fit import default_prior
from sizing.network_model import calibrated, rows_of_table

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cassandra_heldout import publish  # noqa: E402  (print and write a report)

DATA = "docs/data"


def _table(folder: str, nodes: int, replicas: int) -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows, _ = read_measurements(f"{DATA}/{folder}/runs.csv", replicas)
    return table_of(rows, nodes, replicas)


def cases():
    """(data set, split, table of fitted rows, table of held-out rows, naive guess of
    the held-out rows, cores, client cores)."""
    out = []
    # benchANT Cassandra 5: 6 x i4g.4xlarge (16 vCPU), client c6i.8xlarge (32 vCPU)
    table = _table("benchant_cassandra5", 6, 3)
    small = table.threads <= np.median(np.unique(table.threads))
    guess = np.empty((~small).sum())
    for i, (_, row) in enumerate(table[~small].iterrows()):
        fitted = table[small & (table.operation == row.operation)]
        slope, intercept = np.polyfit(fitted.threads, fitted.mean_ms, 1)
        guess[i] = slope * row.threads + intercept
    out.append(("benchANT Cassandra 5 (50% reads, QUORUM)",
                "fit 100-250 threads, predict 300-400", table[small], table[~small],
                guess, 16, 32))
    # benchANT ScyllaDB: 6 x i4i.4xlarge (16 vCPU), client c5.4xlarge (16 vCPU)
    table = _table("benchant_scylladb_cl", 6, 3)
    read_level = table.groupby("run_mean_ms").consistency.transform(
        lambda c: "ONE" if "ONE" in set(c) else "QUORUM")
    for fit_level, other in (("QUORUM", "ONE"), ("ONE", "QUORUM")):
        fitted, held = table[read_level == fit_level], table[read_level == other]
        key = ["operation", "reads"]
        guess = held[key].merge(fitted[key + ["mean_ms"]], on=key, how="left").mean_ms
        out.append(("benchANT ScyllaDB (writes QUORUM, 400 threads)",
                    f"fit reads at {fit_level}, predict reads at {other}", fitted, held,
                    guess.to_numpy(float), 16, 16))
    # Prisyazhnyy: 3 x i3.4xlarge (16 vCPU), client c5.9xlarge (36 vCPU); a cluster
    # is its contact points and record count
    table = _table("sitano_scylla_ycsb", 3, 3)
    meta = pd.read_csv(f"{DATA}/sitano_scylla_ycsb/runs_meta.csv")
    table["cluster"] = meta.hosts + " " + meta.records.astype(str)
    table["workload"] = meta.workload
    opened = table[np.isfinite(table.rate)]
    for (cluster, workload), group in opened.groupby(["cluster", "workload"]):
        rates = np.unique(group.rate)
        if len(rates) < 2:
            continue
        fitted, held = group[group.rate == rates[0]], group[group.rate > rates[0]]
        guess = held[["operation"]].merge(fitted[["operation", "mean_ms"]],
                                          on="operation", how="left").mean_ms
        out.append((f"Prisyazhnyy ScyllaDB workload {workload.upper()} (ONE, "
                    f"{int(group.reads.iloc[0] * 100)}% reads)",
                    f"fit {rates[0]:g}/s, predict {', '.join(f'{r:g}' for r in rates[1:])}/s",
                    fitted, held, guess.to_numpy(float), 16, 36))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="write the markdown table here")
    args = parser.parse_args()
    prior, structure = default_prior()
    started = time.time()
    lines = [f"Default structure `{structure}`, built-in prior; cores as documented.", "",
             "| data set | split | held-out rows | model MAPE / max (%) | naive MAPE / max "
             "(%) | inside 95% interval |", "|---|---|---|---|---|---|"]
    errors, naive_errors = [], []
    for name, split, fitted, held, guess, cores, client_cores in cases():
        model = calibrated(fitted, structure, prior, cores, client_cores)
        rows = rows_of_table(held)
        measured = held.mean_ms.to_numpy(float)
        predicted = model.predict(rows)[0]
        low, high = model.interval(rows)
        err = 100 * np.abs(predicted / measured - 1)
        naive = 100 * np.abs(guess / measured - 1)
        errors.append(err.mean())
        naive_errors.append(naive.mean())
        mark = "**" if err.mean() < naive.mean() else ""
        lines.append(f"| {name} | {split} | {len(held)} | {mark}{err.mean():.1f} / "
                     f"{err.max():.1f}{mark} | {naive.mean():.1f} / {naive.max():.1f} | "
                     f"{100 * np.mean((measured >= low) & (measured <= high)):.0f}% |")
    lines += ["", f"Mean over the {len(errors)} splits: model {np.mean(errors):.1f}%, naive "
              f"{np.mean(naive_errors):.1f}%. Run time {time.time() - started:.0f} s."]
    text = "\n".join(lines) + "\n"
    publish(text, args.out)


if __name__ == "__main__":
    main()
