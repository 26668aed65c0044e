"""Naive guesses a user would make from a measurement file, and their errors.

A measurement file has the columns ``operation,consistency,threads,throughput,mean_ms``
(``rate`` instead of ``threads`` for an open loop). For the read rows this prints the
per-row error and the mean absolute percentage error (MAPE) of three guesses:

(a) same as the fitted level: QUORUM and ALL means are guessed by the ONE mean at the
    same threads;
(b) midpoint of two fitted levels: the QUORUM mean is guessed by the average of the
    ONE and ALL means at the same threads;
(c) straight line in threads: per level, a least-squares line through the mean latency
    at the smaller half of the thread counts, extrapolated to the larger ones.

Pure pandas/numpy on purpose: these are the baselines a calibrated model must beat.

Usage: python naive_guesses.py FILE.csv [FILE.csv ...] [--fit-share 0.5]
"""

import argparse
import sys

import numpy as np
import pandas as pd


def load_reads(path):
    """Read rows of a measurement file, with the load column renamed ``load``."""
    table = pd.read_csv(path)
    load_column = "threads" if "threads" in table.columns else "rate"
    if load_column not in table.columns:
        raise ValueError(f"{path} has neither a 'threads' nor a 'rate' column; add one")
    reads = table[table["operation"].str.lower() == "read"]
    reads = reads.rename(columns={load_column: "load"})
    reads = reads.assign(consistency=reads["consistency"].str.upper())
    return reads[["consistency", "load", "mean_ms"]].dropna(), load_column


def _errors(measured, predicted, level, load):
    # Signed error in percent of the measurement: positive means the guess is too slow.
    return pd.DataFrame({
        "consistency": level,
        "load": load,
        "measured_ms": measured,
        "guess_ms": predicted,
        "error_pct": 100.0 * (predicted - measured) / measured,
    })


def same_level_guess(reads, fitted="ONE", targets=("QUORUM", "ALL")):
    """Guess each target level's mean by the fitted level's mean at the same load."""
    means = reads.pivot_table(index="load", columns="consistency", values="mean_ms")
    rows = [
        _errors(means[level], means[fitted], level, means.index)
        for level in targets if level in means and fitted in means
    ]
    return _stack(rows)


def midpoint_guess(reads, low="ONE", high="ALL", target="QUORUM"):
    """Guess the target level's mean by the average of two fitted levels' means."""
    means = reads.pivot_table(index="load", columns="consistency", values="mean_ms")
    if not {low, high, target} <= set(means.columns):
        return _stack([])
    guess = (means[low] + means[high]) / 2.0
    return _stack([_errors(means[target], guess, target, means.index)])


def linear_in_load_guess(reads, fit_share=0.5):
    """Per level, fit a line on the smallest loads and extrapolate to the others.

    The line goes through the ``max(2, floor(fit_share * n))`` smallest of the ``n``
    loads measured for that level (least squares when more than two).
    """
    rows = []
    for level, group in reads.groupby("consistency", sort=False):
        group = group.sort_values("load")
        fit_count = max(2, int(np.floor(fit_share * len(group))))
        if len(group) <= fit_count:
            continue
        fit, held_out = group.iloc[:fit_count], group.iloc[fit_count:]
        slope, intercept = np.polyfit(fit["load"], fit["mean_ms"], deg=1)
        guess = intercept + slope * held_out["load"].to_numpy()
        rows.append(_errors(held_out["mean_ms"].to_numpy(), guess, level,
                            held_out["load"].to_numpy()))
    return _stack(rows)


def _stack(frames):
    frames = [frame.dropna() for frame in frames]
    if not frames:
        return pd.DataFrame(columns=["consistency", "load", "measured_ms", "guess_ms",
                                     "error_pct"])
    return pd.concat(frames, ignore_index=True)


def mape(errors):
    """Mean absolute percentage error of a table of guesses (NaN when empty)."""
    return float(np.mean(np.abs(errors["error_pct"]))) if len(errors) else float("nan")


def report(path, fit_share=0.5, out=sys.stdout):
    """Print the three guesses and their errors for one measurement file."""
    reads, load_column = load_reads(path)
    guesses = {
        "(a) same as ONE -> QUORUM, ALL": same_level_guess(reads),
        "(b) midpoint of ONE and ALL -> QUORUM": midpoint_guess(reads),
        f"(c) straight line in {load_column} (fit share {fit_share})":
            linear_in_load_guess(reads, fit_share),
    }
    print(f"== {path}", file=out)
    for name, errors in guesses.items():
        print(f"-- {name}: MAPE {mape(errors):.1f}% over {len(errors)} rows", file=out)
        if len(errors):
            shown = errors.rename(columns={"load": load_column})
            print(shown.to_string(index=False, float_format=lambda v: f"{v:.1f}"),
                  file=out)
    return {name: mape(errors) for name, errors in guesses.items()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", help="measurement CSV files")
    parser.add_argument("--fit-share", type=float, default=0.5,
                        help="share of the smallest loads per level used by guess (c)")
    args = parser.parse_args(argv)
    summary = {path: report(path, args.fit_share) for path in args.files}
    if len(summary) > 1:
        print("== summary (MAPE %)")
        table = pd.DataFrame(summary).T
        table.columns = ["(a) same", "(b) midpoint", "(c) line"]
        print(table.to_string(float_format=lambda v: f"{v:.1f}"))


if __name__ == "__main__":
    main()
