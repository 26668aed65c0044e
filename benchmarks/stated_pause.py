"""What a stated pause between requests (``think_ms``) is worth where a benchmark's rows
have no throughput: saulolks' nine JMeter ``run2`` files (3 nodes, RF 3, reads at ONE,
QUORUM and ALL, 10-50 users, a constant timer of 100, 500 or 1000 ms named in the file
name, no throughput column), calibrated and predicted at the defaults with and without
the pause, over protocols (a) fit ONE, (b) fit two levels (three cases), (c) fit the
smaller half of the users; beside the naive guesses of `cassandra_heldout.naive`.

Usage::

    .venv/bin/python benchmarks/stated_pause.py [--out docs/cassandra/stated_pause.md]
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cassandra_heldout import naive, publish, splits  # noqa: E402

from sizing.cluster_calibration import calibrate_cluster, predict_table  # noqa: E402

FILES = sorted(Path("docs/data/measurements").glob("saulolks2022_*_run2.csv"))


def score(path: Path, stated: bool, folder: str) -> list[dict]:
    """Every held-out case of one file, fitted without or with its stated pause."""
    table = pd.read_csv(path).drop(columns=["throughput"])
    pause = float(re.search(r"think(\d+)", path.name).group(1))
    out = []
    for protocol, cases in splits(table).items():
        for fitted, held in cases:
            fit_file = Path(folder) / "fit.csv"
            (fitted.assign(think_ms=pause) if stated else fitted).to_csv(fit_file,
                                                                        index=False)
            model = calibrate_cluster(str(fit_file), nodes=3, replicas=3)
            query = held[["operation", "consistency", "threads"]]
            frame = predict_table(model, query.assign(think_ms=pause) if stated
                                  else query)
            measured = held.mean_ms.to_numpy(float)
            guess = naive(table, protocol, fitted, held)
            inside = ((frame.predicted_ci_low_ms.to_numpy() <= measured)
                      & (measured <= frame.predicted_ci_high_ms.to_numpy()))
            out.append(dict(
                file=path.stem.removeprefix("saulolks2022_").removesuffix("_run2"),
                pause="stated" if stated else "none", protocol=protocol,
                rows=len(held),
                model=100 * np.mean(np.abs(frame.predicted_mean_ms / measured - 1)),
                naive=100 * np.mean(np.abs(guess / measured - 1)),
                inside=inside.mean(),
                width=float(np.median(frame.predicted_ci_high_ms
                                      / frame.predicted_ci_low_ms))))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="write the markdown table here")
    args = parser.parse_args()
    started = time.time()
    rows = []
    with warnings.catch_warnings(), tempfile.TemporaryDirectory() as folder:
        warnings.simplefilter("ignore")
        for path in FILES:
            for stated in (False, True):
                rows += score(path, stated, folder)
    table = pd.DataFrame(rows)
    # (b)'s three cases pooled per file, as in heldout.md
    per_case = table.groupby(["pause", "protocol", "file"]).apply(
        lambda g: pd.Series({"model": np.average(g.model, weights=g.rows),
                             "naive": np.average(g.naive, weights=g.rows),
                             "inside": np.average(g.inside, weights=g.rows),
                             "width": g.width.median()}), include_groups=False)
    summary = per_case.groupby(["pause", "protocol"]).agg(
        model=("model", "mean"), naive=("naive", "mean"), inside=("inside", "mean"),
        lowest=("inside", "min"), width=("width", "median"),
        better=("model", lambda m: int((m < per_case.loc[m.index, "naive"]).sum())))
    lines = ["| pause | protocol | model MAPE % | naive MAPE % | files model better | "
             "rows inside 95% (lowest file) | band width, median |", "|---|---|---|---|---|---|---|"]
    for (pause, protocol), r in summary.iterrows():
        lines.append(f"| {pause} | {protocol} | {r.model:.1f} | {r.naive:.1f} | "
                     f"{int(r.better)} of {len(FILES)} | {100 * r.inside:.0f}% "
                     f"({100 * r.lowest:.0f}%) | {r.width:.1f} |")
    text = ("\n".join(lines) + f"\n\nMean over the nine files; run time "
            f"{time.time() - started:.0f} s.\n")
    publish(text, args.out)


if __name__ == "__main__":
    main()
