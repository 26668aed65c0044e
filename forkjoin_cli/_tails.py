"""CLI sub-commands ``timeouts``, ``plan-consistency`` and ``plan-capacity``.

Thin wrappers: parse arguments, call `validation.tails` / `validation.planning`,
print a table and (``--out``) write it as CSV atomically. Bad input raises
``ConfigError``, which the CLI prints as one line with exit status 2.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import math
import sys
import warnings

from forkjoin_sim import checks as options
from forkjoin_cli import types
from forkjoin_cli.arguments import SEED_HELP, refuse_unused_write_threads
from forkjoin_cli.types import whole
from forkjoin_sim.errors import ConfigError, percentile_label
from forkjoin_sim.files.tables import check_table_out, write_table
from forkjoin_sim.laws.service import parse_service

from sizing.planning import DIRECT
from sizing.tails import BASIC_SOURCES, QUANTILE_BATCHES, section_jobs

#: Largest --jobs / --sim-jobs / --validate: a billion jobs is hours of simulation.
MAX_JOBS = 10 ** 9
#: Largest --nodes / --replicas / --quorum of a direct (n,r,k) simulation.
MAX_SIZE = 10_000
#: plan-consistency's default percentile (without --model).
PERCENTILE = 99

#: Fewest jobs of a run whose percentiles get an interval (`sizing.tails.section_jobs`).
MIN_JOBS = section_jobs()
#: Why a run needs MIN_JOBS jobs, for the messages.
_WHY_MIN = (f"{QUANTILE_BATCHES} sections of at least 2 measured jobs after the "
            "10% warm-up")

_size = types.count(MAX_SIZE, "size")


def _too_few(flag: str, value: int, low: int) -> str:
    """The message for ``flag`` ``value`` below its ``low`` jobs."""
    return (f"{flag} {value} is too few: a run needs at least {low:,} "
            f"job{'s' if low != 1 else ''}"
            + (f" ({_WHY_MIN})" if low == MIN_JOBS else "") + f"; give {flag} "
            f"{low:,} or more")


def _jobs(flag: str, low: int = MIN_JOBS):
    """An argparse ``type=``: ``flag``'s number of jobs, from ``low``."""
    def convert(text: str) -> int:
        value = types.whole(None, MAX_JOBS, flag)(text)
        if value < low:
            raise argparse.ArgumentTypeError(_too_few(flag, value, low))
        return value
    convert.__name__ = "whole number"
    return convert


def _validate_jobs(text: str) -> int:
    """An argparse ``type=``: --validate JOBS, 0 (no validation run) or from MIN_JOBS."""
    value = types.whole(None, MAX_JOBS, "--validate")(text)
    if value != 0 and value < MIN_JOBS:
        raise argparse.ArgumentTypeError(
            f"--validate {value} is too few: a validation run needs at least "
            f"{MIN_JOBS:,} jobs ({_WHY_MIN}); give --validate {MIN_JOBS:,} or more, or "
            "leave it out")
    return value


_validate_jobs.__name__ = "whole number"


def _service(spec: str, mu: float | None):
    """The service law of ``spec`` with mean 1/mu (``mu`` None: not given, 1)."""
    return parse_service(spec, mean=1.0 if mu is None else 1.0 / mu)


def _check_clock(rate: float, jobs: int, law) -> None:
    """Refuse, before any work, runs whose clock cannot resolve the service times
    (e.g. --mu 1e20 at one request per unit time)."""
    from forkjoin_sim.arrivals._checks import check_clock

    check_clock(rate, jobs, float(law.mean()))


def _check_mu(mu: float | None, *specs: tuple[str, str]) -> None:
    """Refuse --mu when every (flag, spec) it would scale fixes its own scale."""
    from forkjoin_sim.laws.service import check_mean_applies, fixes_own_scale

    if mu is not None and all(fixes_own_scale(spec) for _, spec in specs):
        flag, spec = specs[0]
        check_mean_applies(spec, flag, "--mu")


def _warnings_after_success(handler):
    """``handler`` with its warnings shown only if it succeeds (an error is then the
    only line of a failed command)."""
    import functools

    @functools.wraps(handler)
    def run(args):
        with options.warnings_after_success():
            return handler(args)
    return run


@contextlib.contextmanager
def _validating(jobs: int):
    """Name --validate in the error of a validation run that cannot go on."""
    try:
        yield
    except ConfigError as exc:
        raise ConfigError(f"--validate {jobs}: {exc}") from None


def _check_before_work(args, *jobs, fewest_basic: int | None = MIN_JOBS) -> None:
    """The output path and the memory of the largest run (``jobs``: (option, jobs)
    of each run, None where it does not run), before anything runs; with simulated
    basic queues (the default), at least ``fewest_basic`` --jobs (None: the command
    checks its own; an analytic --basic runs no basic queue)."""
    if args.basic is None:
        args.basic = "simulation"
    if args.basic in ("simulation", DIRECT) and fewest_basic and args.jobs < fewest_basic:
        raise ConfigError(_too_few("--jobs", args.jobs, fewest_basic))
    if args.out:
        check_table_out(args.out, "--out")
    option, largest = max(((o, j) for o, j in jobs if j), key=lambda pair: pair[1])
    options.check_jobs_fit(largest, option)


def _emit(rows: list[dict], out: str | None) -> None:
    """Write ``rows`` to ``out`` (atomically, CSV, JSON or parquet by its suffix,
    `forkjoin_sim.files.tables`) or as CSV to standard output."""
    if not rows:
        return
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    # a value not measured (NaN) is an empty cell, as predict and pandas write it
    writer.writerows({k: "" if isinstance(v, float) and math.isnan(v) else v
                      for k, v in row.items()} for row in rows)
    if out:
        write_table(out, rows, buffer.getvalue())
        print(f"wrote {len(rows)} rows to {out}", file=sys.stderr)
    else:
        sys.stdout.write(buffer.getvalue())


def _common(p, jobs_default: int, jobs_low: int = 0, direct: bool = False) -> None:
    """--basic, --jobs (from ``jobs_low`` here; simulated basic queues need more, which
    `_check_before_work` checks once --basic is known), --seed and --out; ``direct``:
    --basic may be, and by default is, "direct" (plan-capacity)."""
    # None (not given) becomes "simulation" (or "direct") in _check_before_work, after
    # plan-consistency --staleness has refused it as an option with no effect.
    p.add_argument("--basic", choices=((DIRECT,) if direct else ()) + BASIC_SOURCES,
                   default=None,
                   help=("direct (default): simulate each candidate's own queue; or "
                         "Theorem 1 on basic queues (the paper's way, whose Lemma puts "
                         "tails far off), their CDFs from " if direct else
                         "basic-queue CDFs: ")
                   + "simulation (any service) or an analytic approximation "
                     "(exponential service only" + ("" if direct else
                                                     "; default simulation") + ")")
    p.add_argument("--jobs", type=_jobs("--jobs", jobs_low), default=jobs_default,
                   help=("jobs per simulation (of each candidate's queue, or of each "
                         "basic queue)" if direct else "jobs per basic-queue "
                         "simulation") + " (default %(default)s)")
    p.add_argument("--seed", type=types.seed, default=0, help=SEED_HELP)
    p.add_argument("--out", help="file to write: .csv, .json (a list of objects) or "
                                 ".parquet (needs pyarrow); default: CSV on standard "
                                 "output")


def _check_analytic_basic(args, *services: tuple[str, str, object]) -> None:
    """Refuse an analytic --basic (exponential basic queues) for a (flag, spec, law)
    whose law is not exponential, in the command line's words."""
    from sizing.tails import needs_simulated_basic

    for flag, spec, law in services:
        if law is not None and needs_simulated_basic(args.basic, law):
            raise ConfigError(f"--basic {args.basic} assumes exponential service, and "
                              f"{flag} {spec} is not; give --basic simulation (or leave "
                              "--basic out)")


def _cmd_timeouts(args) -> int:
    from sizing.tails import timeout_table

    _check_before_work(args, ("--jobs", args.jobs), ("--sim-jobs", args.sim_jobs))
    service = _service(args.service, args.mu)
    _check_mu(args.mu, ("--service", args.service))
    _check_analytic_basic(args, ("--service", args.service, service))
    rows = timeout_table(args.nodes, args.replicas, args.quorum,
                         args.loads, args.timeouts,
                         service=service, basic=args.basic,
                         jobs=args.sim_jobs, basic_jobs=args.jobs, seed=args.seed)
    _emit(rows, args.out)
    missed = _model_outside_simulation(rows)
    if missed:
        warnings.warn(missed, UserWarning, stacklevel=1)
    return 0


#: The model's quantities that timeouts checks against the simulation's interval.
_CHECKED = ("availability", "answered_mean", "waiting_mean")


def _model_outside_simulation(rows: list[dict]) -> str | None:
    """A note naming the rows where a model column lies well outside the simulated
    95% interval of the same quantity, or None."""
    outside = []
    for row in rows:
        for name in _CHECKED:
            model, low, high = (row.get(f"model_{name}"), row.get(f"sim_{name}_low"),
                                row.get(f"sim_{name}_high"))
            if None in (model, low, high) or not all(map(math.isfinite, (model, low,
                                                                          high))):
                continue
            # past the interval by more than its half-width (about 4 standard errors
            # from the estimate): simulation noise alone, at the 5% an interval
            # misses, would flag an exact model on every twentieth row
            slack = (high - low) / 2
            if not low - slack <= model <= high + slack:
                outside.append(f"{name} at load {row['load']:g}, timeout "
                               f"{row['timeout']:g}: {model:.4g} against "
                               f"[{low:.4g}, {high:.4g}]")
    if not outside:
        return None
    shown = "; ".join(outside[:5]) + (f"; and {len(outside) - 5} more"
                                     if len(outside) > 5 else "")
    return (f"the model lies well outside the simulation's 95% interval ({shown}): "
            "it rests on the paper's Lemma (basic queues at the node load), which "
            "misses this queue there; take the sim_* columns")


#: plan-consistency's options for a rate-driven plan and their values when not given
#: (``--model`` refuses them: the model fixes the replicas and the node's work, the
#: clients set the load; ``--nodes`` there asks for another cluster size).
_RATE_OPTIONS = {"replicas": None, "rate": None, "read_service": "exp",
                 "write_service": None, "mu": None, "percentile": None,
                 "objective": None, "validate": 0, "basic": None,
                 "jobs": 100_000, "staleness": None, "structure": None,
                 "read_threads": None, "write_threads": None, "delays": None}
#: The options of ``--model`` only, and their values when not given.
_MODEL_OPTIONS = {"threads": None, "operations": None, "json": False}


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _say_plan(model, args, threads: int, nodes: int, rows: list[dict]) -> str:
    """Print the fastest pair of one plan (``rows`` at ``threads``) on standard
    error, with the others and whether the simulation can tell them apart; its name."""
    best = next(row for row in rows if row["best"])
    others = ", ".join(f"{row['pair']} {row['overall_ms']:.4g}" for row in rows
                       if not row["best"])
    error = max(row["simulation_high_ms"] / row["overall_ms"] - 1 for row in rows)
    tied = [row["pair"] for row in rows if not row["best"]
            and row["simulation_low_ms"] <= best["simulation_high_ms"]]
    tie = (f"; a near tie with {', '.join(tied)}: their simulation intervals overlap, "
           "run more --operations or take either" if tied else "")
    how = (f"the simulation's own error at most {100 * error:.2g}%" if error > 0 else
           f"structure {model.fit.structure}: the model's own two-class loop, not "
           "simulated")
    print(f"fastest strong pair at {100 * args.read_fraction:g}% reads, "
          f"{threads} threads{_on_nodes(model, nodes)}: {best['pair']}, "
          f"{best['overall_ms']:.4g} ms "
          f"[{best['overall_low_ms']:.4g}, {best['overall_high_ms']:.4g}] (others: "
          f"{others} ms; {how}{tie})", file=sys.stderr)
    return best["pair"]


def _on_nodes(model, nodes: int) -> str:
    """", on N nodes" when the plan asks for another size than the fitted one."""
    return "" if nodes == model.nodes else f", on {nodes:,} nodes"


def _plan_consistency_rate(args) -> int:
    from sizing.planning import plan_consistency, simulate_consistency
    from sizing.staleness_planning import check_staleness_arguments

    # left unset so that --model can refuse them when given; their defaults here
    args.percentile = PERCENTILE if args.percentile is None else args.percentile
    args.objective = args.objective or "percentile"

    refuse_unused_write_threads(args)
    check_staleness_arguments(args, {"validate": 0, "basic": None})
    read_service = _service(args.read_service, args.mu)
    write_service = (_service(args.write_service, args.mu)
                     if args.write_service else None)
    if not args.staleness:
        _check_consistency_jobs(args, float(read_service.mean()),
                                float((write_service or read_service).mean()))
    _check_before_work(args, ("--jobs", args.jobs), ("--validate", args.validate),
                       fewest_basic=None)
    _check_mu(args.mu, ("--read-service", args.read_service),
              ("--write-service", args.write_service or args.read_service))
    _check_analytic_basic(args, ("--read-service", args.read_service, read_service),
                          ("--write-service", args.write_service, write_service))
    for law in (read_service, write_service or read_service):
        _check_clock(args.rate, max(args.jobs, args.validate), law)
    if args.staleness:
        plan = staleness_plan(args, read_service, write_service)
        print(plan.report(), file=sys.stderr)
        _emit(plan.rows(), args.out)
        return 0
    plan = plan_consistency(args.nodes, args.replicas, args.read_fraction, args.rate,
                            read_service=read_service, write_service=write_service,
                            percentile=args.percentile, objective=args.objective,
                            basic=args.basic, jobs=args.jobs, seed=args.seed)
    rows = []
    for option in plan.options:
        row = option.as_row()
        row["best"] = option == plan.best
        if args.validate and option.node_load < 1:
            with _validating(args.validate):
                sim = simulate_consistency(
                    args.nodes, args.replicas, args.read_fraction, args.rate,
                    option.read_quorum, option.write_quorum, read_service,
                    write_service, args.percentile, jobs=args.validate,
                    seed=args.seed + 1)
            row.update({f"sim_{k}": v for k, v in sim.items()
                        if k not in ("read_quorum", "write_quorum")})
        rows.append(row)
    # Printed once every simulation has run: a failing one leaves one error line.
    print(plan.report(), file=sys.stderr)
    doubtful = [o for o in plan.options if not o.reliable and o.node_load < 1]
    if (args.objective or "percentile") == "percentile" and plan.best is not None \
            and not plan.best.reliable:
        warnings.warn(f"{len(doubtful)} of the {len(plan.options)} pairs, the best "
                      f"among them, have their {percentile_label(args.percentile)} where the simulated "
                      "basic queues' distribution is outside its sampling tolerance "
                      f"({args.jobs:,} jobs per basic queue; reliable False): the "
                      "ranking may be noise; run again with a larger --jobs, or "
                      "--validate N to simulate each pair", RuntimeWarning, stacklevel=1)
    _emit(rows, args.out)
    return 0


def _check_consistency_jobs(args, read_mean: float, write_mean: float) -> None:
    """Refuse, before any work, --validate and --jobs too few for the mix's rarer
    class to get a percentile interval (in the basic queues of the read quorums the
    plan simulates: not those it finds unstable)."""
    from sizing.planning import consistency_jobs, consistency_load, validation_jobs

    # enough digits that 99.999999999% is not written 100%
    reads = f"{100 * args.read_fraction:.12g}% reads"
    try:
        fewest = validation_jobs(args.read_fraction)
    except ConfigError as exc:
        raise ConfigError(f"--read-fraction {args.read_fraction:g}: {exc}; give a read "
                          "fraction further from 0 and 1") from None
    if args.validate and args.validate < fewest:
        raise ConfigError(
            f"--validate {args.validate} is too few at {reads}: the rarer class "
            f"needs {_WHY_MIN}; give --validate {fewest:,} or more")
    if args.basic in (None, "simulation"):
        fewest = consistency_jobs(args.replicas, args.read_fraction, lambda R: (
            consistency_load(args.nodes, args.replicas, args.read_fraction, args.rate,
                             R, read_mean, write_mean)))
        if args.jobs < fewest:
            raise ConfigError(
                f"--jobs {args.jobs} is too few at {reads} on {args.replicas} replicas: "
                f"the rarer task class of the basic queues needs {_WHY_MIN}; give "
                f"--jobs {fewest:,} or more")


def register_timeouts(subparsers) -> None:
    """Add ``timeouts``."""
    p = subparsers.add_parser(
        "timeouts", help="availability and waiting time under client timeouts, model "
                         "vs simulation",
        description="Per load and client timeout T: the share of jobs answered within "
                    "T (availability), the mean latency of those answered, and the "
                    "client's mean wait, min(latency, T), from Theorem 1's distribution "
                    "beside a direct simulation of the (n,r,k) queue (95% intervals). "
                    "A timeout is the client's view only: the job's tasks still run "
                    "(non-purging), so the queue is the same at every T. Times are in "
                    "the unit of the service law (mean 1/--mu).")
    p.add_argument("--nodes", type=_size, required=True, help="nodes n")
    p.add_argument("--replicas", type=_size, required=True,
                   help="replicas r: tasks per job")
    p.add_argument("--quorum", type=_size, required=True,
                   help="quorum k: completions a job waits for")
    p.add_argument("--loads", type=types.real_list(0.0, low_open=True, what="--loads"),
                   required=True,
                   help="job loads rho = lambda*E[X], comma-separated (per-node load "
                        "is r*rho/n)")
    p.add_argument("--timeouts", required=True, help="timeouts, comma-separated",
                   type=types.real_list(0.0, low_open=True, what="--timeouts"))
    p.add_argument("--service", default="exp",
                   help="service law of a task (a spec, e.g. exp, lognormal:1; default "
                        "exp)")
    p.add_argument("--mu", type=types.positive_real, default=None,
                   help="service rate (mean 1/mu, default 1)")
    p.add_argument("--sim-jobs", type=_jobs("--sim-jobs", low=2), default=100_000,
                   help="jobs of the direct (n,r,k) simulation per load (default "
                        "%(default)s)")
    _common(p, 100_000)
    p.set_defaults(handler=_warnings_after_success(_cmd_timeouts))


def add_staleness_arguments(parser) -> None:
    """The options ``plan-consistency`` needs for a staleness constraint."""
    from sizing.staleness_planning import MAX_THREADS as MAX_STAGE_THREADS
    from sizing.staleness_planning import STALENESS_DEFAULTS

    parser.add_argument("--staleness", metavar="CONSTRAINT",
                        help="plan partial quorums too, under load: t=T[,window=D]:P "
                             "(P(consistent T..T+D after commit) >= P) or behind=M:P (P(at "
                             "most M versions behind) >= P), e.g. t=10:0.999; modelled as "
                             "one key on --replicas nodes with a coordinating node of its "
                             "own that holds no replica (as PBS models it), so the "
                             "header counts replicas + 1 nodes")
    # Defaults are None so that an option given without --staleness (where it would
    # do nothing) can be refused; check_staleness_arguments fills them in.
    parser.add_argument("--structure", choices=["stages", "shared"],
                        help="replica structure for --staleness: separate read and "
                             "mutation stages (Cassandra, the default) or one FIFO queue")
    parser.add_argument("--read-threads", type=whole(1, MAX_STAGE_THREADS,
                                                     "--read-threads"),
                        help="threads of the read stage for --staleness (of the queue, "
                             "with --structure shared; default 1)")
    parser.add_argument("--write-threads", type=whole(1, MAX_STAGE_THREADS,
                                                      "--write-threads"),
                        help="threads of the mutation stage for --staleness (stages "
                             "only; default 1)")
    parser.add_argument("--delays",
                        help="one-way message delay law (W, A, R, S) for --staleness "
                             f"(default {STALENESS_DEFAULTS['delays']})")


def staleness_plan(args, read_service, write_service):
    """``sizing.staleness_planning.plan_from_args`` with a progress bar over the
    (R, W) pairs on standard error (`forkjoin_cli._progress.progress_bar`); the
    plan's warnings go to `warnings.warn`, as there."""
    from forkjoin_cli._progress import progress_bar
    from sizing.staleness_planning import plan_from_args

    with progress_bar(args.replicas ** 2, desc="plan-consistency") as bar:
        counted = [0]

        def progress(done: int, total: int) -> None:
            bar.update(done - counted[0])
            counted[0] = done

        return plan_from_args(args, read_service, write_service, progress=progress)
