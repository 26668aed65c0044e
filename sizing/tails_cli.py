"""CLI sub-commands ``timeouts``, ``plan-consistency`` and ``plan-capacity``.

Thin wrappers: parse arguments, call `validation.tails` / `validation.planning`,
print a table and (``--out``) write it as CSV atomically. Bad input raises
``ConfigError``, which the CLI prints as one line with exit status 2.
"""

from __future__ import annotations

import csv
import io
import sys

from forkjoin_sim.errors import ConfigError
from forkjoin_sim.io import atomic_write
from forkjoin_sim.service import parse_service

from .tails import BASIC_SOURCES


def _floats(text: str, what: str) -> list[float]:
    try:
        values = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise ConfigError(f"{what} {text!r} must be comma-separated numbers, "
                          "e.g. 0.5,0.8") from None
    if not values:
        raise ConfigError(f"{what} is empty; give comma-separated numbers, e.g. 0.5,0.8")
    return values


def _service(spec: str, mu: float):
    if not mu > 0:
        raise ConfigError(f"--mu {mu} must be positive")
    return parse_service(spec, mean=1.0 / mu)


def _emit(rows: list[dict], out: str | None) -> None:
    """Write ``rows`` as CSV to ``out`` (atomically) or to standard output."""
    if not rows:
        return
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    if out:
        with atomic_write(out) as handle:
            handle.write(buffer.getvalue())
        print(f"wrote {len(rows)} rows to {out}", file=sys.stderr)
    else:
        sys.stdout.write(buffer.getvalue())


def _common(p, jobs_default: int) -> None:
    p.add_argument("--basic", choices=BASIC_SOURCES, default="simulation",
                   help="basic-queue CDFs: simulation (any service) or an analytic "
                        "approximation (exponential service only)")
    p.add_argument("--jobs", type=int, default=jobs_default,
                   help="jobs per basic-queue simulation")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", help="CSV file to write (default: standard output)")


def _cmd_timeouts(args) -> int:
    from .tails import timeout_table

    rows = timeout_table(args.nodes, args.replicas, args.quorum,
                         _floats(args.loads, "--loads"),
                         _floats(args.timeouts, "--timeouts"),
                         service=_service(args.service, args.mu), basic=args.basic,
                         jobs=args.sim_jobs, basic_jobs=args.jobs, seed=args.seed)
    _emit(rows, args.out)
    return 0


def _cmd_plan_consistency(args) -> int:
    from .planning import plan_consistency, simulate_consistency

    read_service = _service(args.read_service, args.mu)
    write_service = (_service(args.write_service, args.mu)
                     if args.write_service else None)
    plan = plan_consistency(args.nodes, args.replicas, args.read_fraction, args.rate,
                            read_service=read_service, write_service=write_service,
                            percentile=args.percentile, objective=args.objective,
                            basic=args.basic, jobs=args.jobs, seed=args.seed)
    print(plan.report(), file=sys.stderr)
    rows = []
    for option in plan.options:
        row = option.as_row()
        row["best"] = option == plan.best
        if args.validate and option.node_load < 1:
            sim = simulate_consistency(args.nodes, args.replicas, args.read_fraction,
                                       args.rate, option.read_quorum,
                                       option.write_quorum, read_service, write_service,
                                       args.percentile, jobs=args.validate,
                                       seed=args.seed + 1)
            row.update({f"sim_{k}": v for k, v in sim.items()
                        if k not in ("read_quorum", "write_quorum")})
        rows.append(row)
    _emit(rows, args.out)
    return 0


def _cmd_plan_capacity(args) -> int:
    from .planning import plan_capacity, simulate_capacity

    service = _service(args.service, args.mu)
    plan = plan_capacity(args.write_rate, args.target, percentile=args.percentile,
                         service=service, levels=args.levels.split(","),
                         min_replicas=args.min_replicas, max_replicas=args.max_replicas,
                         min_nodes=args.min_nodes, max_nodes=args.max_nodes,
                         basic=args.basic, jobs=args.jobs, seed=args.seed)
    print(plan.report(), file=sys.stderr)
    if args.validate and plan.best is not None:
        sim = simulate_capacity(plan.best, args.write_rate, args.percentile, service,
                                jobs=args.validate, seed=args.seed + 1)
        print(f"simulated p{args.percentile:g} of the best: {sim.mean:.4g} "
              f"[{sim.low:.4g}, {sim.high:.4g}]", file=sys.stderr)
    rows = [dict(c.as_row(), best=c == plan.best) for c in plan.candidates]
    _emit(rows, args.out)
    return 0


def register(subparsers) -> tuple[type[BaseException], ...]:
    """Add ``timeouts``, ``plan-consistency`` and ``plan-capacity``."""
    p = subparsers.add_parser("timeouts", help="availability and waiting time under "
                              "client timeouts, model vs simulation")
    p.add_argument("--nodes", type=int, required=True)
    p.add_argument("--replicas", type=int, required=True)
    p.add_argument("--quorum", type=int, required=True)
    p.add_argument("--loads", required=True,
                   help="job loads rho = lambda*E[X], comma-separated (per-node load "
                        "is r*rho/n)")
    p.add_argument("--timeouts", required=True, help="timeouts, comma-separated")
    p.add_argument("--service", default="exp")
    p.add_argument("--mu", type=float, default=1.0, help="service rate (mean 1/mu)")
    p.add_argument("--sim-jobs", type=int, default=100_000,
                   help="jobs of the direct (n,r,k) simulation per load")
    _common(p, 100_000)
    p.set_defaults(handler=_cmd_timeouts)

    p = subparsers.add_parser("plan-consistency", help="read/write quorums (R, W) with "
                              "R + W > r: predicted mean and percentile of the mix")
    p.add_argument("--nodes", type=int, required=True)
    p.add_argument("--replicas", type=int, required=True)
    p.add_argument("--read-fraction", type=float, required=True)
    p.add_argument("--rate", type=float, required=True,
                   help="requests (reads + writes) per unit time")
    p.add_argument("--read-service", default="exp")
    p.add_argument("--write-service", default=None,
                   help="default: the read service")
    p.add_argument("--mu", type=float, default=1.0,
                   help="service rate of parametric services (mean 1/mu)")
    p.add_argument("--percentile", type=float, default=99)
    p.add_argument("--objective", choices=["percentile", "mean"], default="percentile")
    p.add_argument("--validate", type=int, default=0, metavar="JOBS",
                   help="also simulate each pair on shared nodes with JOBS jobs")
    _common(p, 100_000)
    p.set_defaults(handler=_cmd_plan_consistency)

    p = subparsers.add_parser("plan-capacity", help="smallest (n, r, consistency) "
                              "meeting a write-latency percentile SLA")
    p.add_argument("--write-rate", type=float, required=True,
                   help="writes per unit time (lambda)")
    p.add_argument("--target", type=float, required=True,
                   help="latency the percentile must not exceed")
    p.add_argument("--percentile", type=float, default=99)
    p.add_argument("--service", default="exp")
    p.add_argument("--mu", type=float, default=1.0)
    p.add_argument("--levels", default="ONE,QUORUM,ALL",
                   help="allowed consistency levels, comma-separated")
    p.add_argument("--min-replicas", type=int, default=1)
    p.add_argument("--max-replicas", type=int, default=5)
    p.add_argument("--min-nodes", type=int, default=1)
    p.add_argument("--max-nodes", type=int, default=20)
    p.add_argument("--validate", type=int, default=0, metavar="JOBS",
                   help="also simulate the chosen cluster with JOBS jobs")
    _common(p, 100_000)
    p.set_defaults(handler=_cmd_plan_capacity)
    return ()
