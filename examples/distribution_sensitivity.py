"""How wrong is Theorem 3 when service times are not exponential?

Theorem 3 estimates the mean sojourn of an (n,r,k) fork-join queue for exponential
service; it sees the service distribution only through its mean. This sweep
simulates the same (6, 3, k) queues with three service distributions of (about)
the same mean: exponential (coefficient of variation 1), lognormal with sigma = 1
(CV 1.31) and an empirical distribution of write latencies (examples/data, CV
0.78), and compares each simulated mean with the Theorem 3 estimate at that mean.
The sweep's own analytic columns apply to exponential service only, so the
estimate is computed here with ``analytic.theorem3_estimate(..., mu=1/E[X])``.

    python examples/distribution_sensitivity.py [--tiny] [--out FILE.csv]

--tiny (or FORKJOIN_EXAMPLES_TINY=1) runs a few small points, for the test suite.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import analytic
import forkjoin_sim
from sizing.sweep_columns import annotate as _analytic
from forkjoin_sim.files.io import atomic_write

ANALYTIC = (_analytic,)  # Theorem 3 beside each simulated row

HERE = Path(__file__).resolve().parent
# Relative to HERE: a point's seed derives from its description, service text
# included, so an absolute path would make the numbers depend on the checkout.
LATENCIES = "data/write_latencies_ms.txt"
SERVICES = {"exp": "exponential", "lognormal:1.0": "lognormal s=1",
            f"empirical:{LATENCIES}": "empirical"}


def sensitivity_spec(tiny: bool = False) -> dict:
    """(6, 3, k) queues, k = 1..3, at light, medium and heavy load, three services."""
    return {"nodes": 6, "replicas": 3, "quorum": [1, 2, 3],
            "rho": [1.2] if tiny else [0.6, 1.2, 1.8], "service": list(SERVICES),
            "jobs": 3_000 if tiny else 400_000, "seed": 7}


def with_estimates(frame):
    """``frame`` plus ``service_mean``, ``estimate`` (Theorem 3 at that mean), ``rel_error``."""
    means = {spec: float(forkjoin_sim.parse_service(spec).mean()) for spec in SERVICES}
    frame = frame.copy()
    frame["service_mean"] = frame["service"].map(means)
    frame["estimate"] = [
        analytic.theorem3_estimate(row.nodes, row.replicas, row.quorum, row.rho,
                                   mu=1.0 / row.service_mean)
        for row in frame.itertuples()]
    # The paper's error: APP / SIM - 1; its spread from the simulation's 95% CI.
    frame["rel_error"] = frame["estimate"] / frame["mean"] - 1
    frame["rel_error_low"] = frame["estimate"] / frame["ci_high"] - 1
    frame["rel_error_high"] = frame["estimate"] / frame["ci_low"] - 1
    return frame


def table(frame) -> str:
    lines = ["Theorem 3 error (estimate / simulated mean - 1) [from the 95% CI], "
             "(6, 3, k) queues",
             f"{'k':>2} {'rho':>5}" + "".join(f"  {label:>24}" for label in SERVICES.values())]
    for (quorum, rho), group in frame.groupby(["quorum", "rho"], sort=True):
        cells = []
        for spec in SERVICES:
            row = group[group["service"] == spec].iloc[0]
            cells.append(f"  {row['rel_error']:+7.1%} [{row['rel_error_low']:+6.1%}, "
                         f"{row['rel_error_high']:+6.1%}]")
        lines.append(f"{quorum:>2} {rho:5.2f}" + "".join(cells))
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tiny", action="store_true",
                        default=bool(os.environ.get("FORKJOIN_EXAMPLES_TINY")),
                        help="a few small points (for tests)")
    parser.add_argument("--out", default="results/distribution_sensitivity.csv")
    parser.add_argument("--workers", type=int, default=None)
    args = parser.parse_args(argv)

    out = Path(args.out).resolve()
    os.chdir(HERE)  # so that the empirical service's relative path resolves
    frame = forkjoin_sim.sweep(sensitivity_spec(args.tiny), annotate=ANALYTIC, workers=args.workers)
    frame = with_estimates(frame)
    with atomic_write(out) as handle:
        frame.to_csv(handle, index=False)
    print(table(frame))
    print(f"rows: {out}")


if __name__ == "__main__":
    main()
