"""Protocol (c) with the model's prediction averaged with the line in threads.

Forecast combination (the mean of two forecasts often beats either) tried on the
held-out rows of the default structure: past the fitted thread counts, the geometric
or arithmetic mean of the model's prediction and the naive guess (a straight line in
threads through the fitted rows of the row's level), against each alone.

Usage::

    .venv/bin/python benchmarks/combined_guess.py [docs/cassandra/heldout_rows.csv]
"""

import sys

import numpy as np
import pandas as pd


def main(path: str = "docs/cassandra/heldout_rows.csv") -> None:
    rows = pd.read_csv(path)
    rows = rows[rows.protocol == "c"]
    guesses = {"model": rows.predicted, "line": rows.naive,
               "geometric mean": np.sqrt(rows.predicted * rows.naive),
               "arithmetic mean": (rows.predicted + rows.naive) / 2}
    errors = pd.DataFrame({name: (guess / rows.measured - 1).abs() * 100
                           for name, guess in guesses.items()})
    errors["data"] = rows.data
    table = errors.groupby("data", sort=False).mean()
    print("| data set (c) | " + " | ".join(table.columns) + " |")
    print("|---|" + "---|" * len(table.columns))
    for name, row in table.iterrows():
        print(f"| {name} | " + " | ".join(f"{v:.1f}" for v in row) + " |")
    print("| mean | " + " | ".join(f"{v:.1f}" for v in table.mean()) + " |")


if __name__ == "__main__":
    main(*sys.argv[1:])
