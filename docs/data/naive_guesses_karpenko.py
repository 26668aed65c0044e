"""Naive guesses on the Karpenko et al. (2021) curves, and their errors.

The data are the measurement files ``karpenko2021/cluster_c.csv`` (one region) and
``karpenko2021/cluster_d.csv`` (four regions): mean latency of reads and writes at ONE,
QUORUM and ALL for 100..1000 client threads, evaluated from the paper's regressions.
For each cluster and operation this computes the absolute percentage error of four
guesses a user could make without a model:

(a) same as ONE: fit ONE only; guess QUORUM and ALL by the ONE mean at the same threads;
(b) linear in level: fit two of the three levels and guess the third by a straight
    line in the number of replicas asked (ONE = 1, QUORUM = 2, ALL = 3) at the same
    threads: the midpoint for QUORUM, linear extrapolation for ONE or ALL;
(c) line in threads: per level, a least-squares line through the means at 100..500
    threads, extrapolated to 600..1000;
(d) writes as reads: fit reads; guess each write mean by the read mean at the same
    level and threads.

Writes ``karpenko2021/naive_guesses.csv`` (mean and max absolute percentage error per
protocol and data set) and prints it. Pure pandas/numpy on purpose: these are the
baselines a calibrated model must beat.

Usage: python naive_guesses_karpenko.py
"""

from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent / "karpenko2021"
DATA = {"C": HERE / "cluster_c.csv", "D": HERE / "cluster_d.csv"}
OUT = HERE / "naive_guesses.csv"
#: Replicas a request waits for at each level (3 replicas).
REPLICAS_ASKED = {"ONE": 1, "QUORUM": 2, "ALL": 3}
#: Largest thread count of the fitted half in guess (c).
FIT_UP_TO_THREADS = 500


def means(path):
    """Mean latency (ms) by (operation, threads) rows and consistency columns."""
    table = pd.read_csv(path)
    return table.pivot_table(index=["operation", "threads"], columns="consistency",
                             values="mean_ms")


def ape(measured, guess):
    """Absolute percentage errors of a guess."""
    measured, guess = np.asarray(measured, float), np.asarray(guess, float)
    return 100.0 * np.abs(guess - measured) / measured


def same_as_one(levels):
    return np.concatenate([ape(levels[lvl], levels["ONE"])
                           for lvl in ("QUORUM", "ALL")])


def linear_in_level(levels, held_out):
    fitted = [lvl for lvl in REPLICAS_ASKED if lvl != held_out]
    (x0, y0), (x1, y1) = [(REPLICAS_ASKED[lvl], levels[lvl].to_numpy())
                          for lvl in fitted]
    x = REPLICAS_ASKED[held_out]
    guess = y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    return ape(levels[held_out], guess)


def line_in_threads(levels):
    threads = levels.index.to_numpy()
    fit, held = threads <= FIT_UP_TO_THREADS, threads > FIT_UP_TO_THREADS
    errors = []
    for level in REPLICAS_ASKED:
        y = levels[level].to_numpy()
        slope, intercept = np.polyfit(threads[fit], y[fit], deg=1)
        errors.append(ape(y[held], intercept + slope * threads[held]))
    return np.concatenate(errors)


def writes_as_reads(table):
    reads, writes = table.loc["read"], table.loc["write"]
    return np.concatenate([ape(writes[lvl], reads[lvl]) for lvl in REPLICAS_ASKED])


def guesses(cluster, table):
    """Rows of the error table for one cluster."""
    rows = []

    def add(operation, protocol, fitted, predicted, errors):
        rows.append({"cluster": cluster, "operation": operation, "protocol": protocol,
                     "fitted": fitted, "predicted": predicted, "points": len(errors),
                     "mape_pct": round(float(np.mean(errors)), 1),
                     "max_ape_pct": round(float(np.max(errors)), 1)})

    for operation in ("read", "write"):
        levels = table.loc[operation]
        add(operation, "a", "ONE", "QUORUM, ALL", same_as_one(levels))
        pooled = []
        for held_out in ("QUORUM", "ALL", "ONE"):
            errors = linear_in_level(levels, held_out)
            pooled.append(errors)
            fitted = " + ".join(lvl for lvl in REPLICAS_ASKED if lvl != held_out)
            add(operation, f"b:{held_out}", fitted, held_out, errors)
        add(operation, "b", "two levels", "the third (all three cases)",
            np.concatenate(pooled))
        add(operation, "c", "100-500 threads", "600-1000 threads",
            line_in_threads(levels))
    add("write", "d", "reads", "writes", writes_as_reads(table))
    return rows


def main():
    rows = []
    for cluster, path in DATA.items():
        rows += guesses(cluster, means(path))
    result = pd.DataFrame(rows)
    result.to_csv(OUT, index=False, lineterminator="\n")
    print(result.to_string(index=False))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
