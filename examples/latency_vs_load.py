"""Latency vs load of a 6-node cluster with 3 replicas, at consistency ONE, QUORUM, ALL.

One sweep: quorum k = 1, 2, 3 (Cassandra's ONE, QUORUM and ALL for replication 3)
times a range of loads, exponential service of mean 1. Prints the simulated mean
sojourn with its 95% confidence interval beside the paper's Theorem 3 estimate,
writes every row to a CSV and, with --plot, draws the curves.

    python examples/latency_vs_load.py [--tiny] [--out FILE.csv] [--plot FILE.png]

--tiny (or FORKJOIN_EXAMPLES_TINY=1) runs a few small points, for the test suite.
"""

from __future__ import annotations

import argparse
import os

import analytic
import forkjoin_sim
from sizing.sweep_columns import annotate as _analytic

ANALYTIC = (_analytic,)  # Theorem 3 beside each simulated row

NODES, REPLICAS = 6, 3
LEVELS = ("ONE", "QUORUM", "ALL")


def load_curve_spec(tiny: bool = False) -> dict:
    """The sweep: every consistency level at loads up to 95% per node."""
    quorums = [analytic.consistency_level_to_k(level, REPLICAS) for level in LEVELS]
    # rho is the load per job; each node is busy r*rho/n = rho/2 of the time.
    loads = [0.4, 1.6] if tiny else [0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 1.9]
    return {"nodes": NODES, "replicas": REPLICAS, "quorum": quorums, "rho": loads,
            "service": "exp", "jobs": 3_000 if tiny else 400_000, "seed": 2019}


def table(frame) -> str:
    """Mean sojourn [95% CI] ~ Theorem 3 estimate, one line per load."""
    lines = [f"{NODES} nodes, {REPLICAS} replicas, exponential service of mean 1: "
             "simulated mean sojourn [95% CI] ~ Theorem 3 estimate",
             f"{'rho':>5} {'per node':>8}" + "".join(
                 f"  {f'{level} (k={analytic.consistency_level_to_k(level, REPLICAS)})':<29}"
                 for level in LEVELS)]
    for rho, group in frame.groupby("rho", sort=True):
        cells = []
        for _, row in group.sort_values("quorum").iterrows():
            if row["status"] != "ok":
                cells.append(f"  {'failed':<29}")
                continue
            cells.append(f"  {row['mean']:7.3f} [{row['ci_low']:.3f}, {row['ci_high']:.3f}]"
                         f" ~{row['approx']:6.3f}")
        lines.append(f"{rho:5.2f} {REPLICAS * rho / NODES:8.2f}" + "".join(cells))
    return "\n".join(lines)


def plot(frame, path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from forkjoin_sim.files.io import atomic_save

    fig, ax = plt.subplots(figsize=(6, 4))
    for (quorum, group), level in zip(frame.groupby("quorum", sort=True), LEVELS):
        group = group.sort_values("rho")
        line, = ax.plot(group["rho"], group["mean"], "o-", label=f"{level} (k={quorum})")
        ax.fill_between(group["rho"], group["ci_low"], group["ci_high"],
                        color=line.get_color(), alpha=0.2)
        ax.plot(group["rho"], group["approx"], "--", color=line.get_color())
    ax.set_xlabel("load per job rho (per node: rho/2)")
    ax.set_ylabel("mean sojourn (service mean = 1)")
    ax.set_title(f"({NODES},{REPLICAS},k) fork-join: simulation (solid) and Theorem 3 "
                 "(dashed)", fontsize=9)
    ax.legend()
    fig.tight_layout()
    atomic_save(path, fig.savefig, dpi=120)
    plt.close(fig)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tiny", action="store_true",
                        default=bool(os.environ.get("FORKJOIN_EXAMPLES_TINY")),
                        help="a few small points (for tests)")
    parser.add_argument("--out", default="results/latency_vs_load.csv")
    parser.add_argument("--plot", default=None, help="also draw the curves to this PNG")
    parser.add_argument("--workers", type=int, default=None)
    args = parser.parse_args(argv)

    frame = forkjoin_sim.sweep(load_curve_spec(args.tiny), annotate=ANALYTIC, workers=args.workers,
                               out=args.out)
    print(table(frame))
    print(f"rows: {args.out}")
    if args.plot:
        plot(frame, args.plot)
        print(f"plot: {args.plot}")


if __name__ == "__main__":
    main()
