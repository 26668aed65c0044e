"""``forkjoin-sim plan-capacity``: the smallest cluster meeting a write-latency SLA.

Exit status 0 when a configuration meets the target, 1 when none in the search space
does (the rows are still printed or written), 2 for bad input (`EPILOG`). Options and
checks shared with ``timeouts`` and ``plan-consistency`` live in ``_tails``.
"""

from __future__ import annotations

import sys
import warnings

from analytic.cassandra import CONSISTENCY_LEVELS as LEVELS
from forkjoin_cli import types
from forkjoin_cli._tails import (_check_analytic_basic, _check_before_work, _check_clock,
                                 _check_mu, _common, _emit, _flag, _service, _validating,
                                 _validate_jobs, _warnings_after_success)
from forkjoin_sim.errors import percentile_label

from sizing.planning import (DEFAULT_LEVELS, DIRECT, MAX_NODES, SEARCH_PARAMETERS,
                             SERVICE_OPTIONS)

#: The options of the search, by the parameter of `sizing.planning.plan_capacity`
#: each sets: the names its checks' messages give them. The service's mean is 1/--mu
#: for a parametric --service, else set by --service itself.
SEARCH_OPTIONS = {name: SERVICE_OPTIONS if name == "service" else _flag(name)
                  for name in SEARCH_PARAMETERS}

#: Exit status when no configuration in the search space meets the target (2 is bad
#: input, as for every command).
NOTHING_MEETS = 1

EPILOG = """\
exit status:
  0  a configuration meets the target: its row has best True
  1  none in the search space does: every candidate's row is still printed (or
     written to --out), then one line "no configuration in the search space
     meets ...", naming the fastest candidate and the limit that binds (more
     nodes, more or fewer replicas, level ONE, a lower --write-rate or a faster
     service once --max-nodes is at its limit, or only a looser --target: no
     cluster gets under the target even unloaded)
  2  bad input: one line "error: ...", and nothing is run or written"""


#: How far outside the validation run's interval a planned percentile may lie before
#: plan-capacity --validate calls the two apart (the plan's own bracket is wider).
VALIDATION_SLACK = 0.1


def _cmd_plan_capacity(args) -> int:
    from sizing.planning import check_capacity_search, plan_capacity, simulate_capacity

    args.basic = args.basic or DIRECT
    _check_before_work(args, ("--jobs", args.jobs), ("--validate", args.validate))
    service = _service(args.service, args.mu)
    _check_mu(args.mu, ("--service", args.service))
    _check_analytic_basic(args, ("--service", args.service, service))
    _check_clock(args.write_rate, max(args.jobs, args.validate), service)
    check_capacity_search(args.write_rate, service, args.levels, args.min_replicas,
                          args.max_replicas, args.min_nodes, args.max_nodes,
                          names=SEARCH_OPTIONS)
    plan = plan_capacity(args.write_rate, args.target, percentile=args.percentile,
                         service=service, levels=args.levels,
                         min_replicas=args.min_replicas, max_replicas=args.max_replicas,
                         min_nodes=args.min_nodes, max_nodes=args.max_nodes,
                         basic=args.basic, jobs=args.jobs, seed=args.seed,
                         progress=True)
    rows = [dict(c.as_row(), best=c == plan.best) for c in plan.candidates]
    if plan.best is None:
        # the rows still go out (a script's --out file is never lost), and the report,
        # whose last line is the verdict and its fix, comes after them to be seen
        _emit(rows, args.out)
        print(plan.report(), file=sys.stderr)
        return NOTHING_MEETS
    sim = None
    if args.validate:
        with _validating(args.validate):
            sim = simulate_capacity(plan.best, args.write_rate, args.percentile, service,
                                    jobs=args.validate, seed=args.seed + 1)
    print(plan.report(), file=sys.stderr)
    if sim is not None:
        print(f"simulated {percentile_label(args.percentile)} of the best: {sim.mean:.4g} "
              f"[{sim.low:.4g}, {sim.high:.4g}]", file=sys.stderr)
        how = (f"{args.jobs:,} jobs per candidate" if args.basic == DIRECT else
               f"{args.jobs:,} jobs per basic queue ({args.basic})")
        predicted = plan.best.predicted
        if sim.low > args.target:
            warnings.warn(f"the simulation puts the best's {percentile_label(args.percentile)} at "
                          f"{sim.mean:.4g} [{sim.low:.4g}, {sim.high:.4g}], above the "
                          f"target {args.target:g}: the plan from {how} is wrong here; "
                          "run again with a larger --jobs"
                          + ("" if args.basic == DIRECT else " or --basic direct"),
                          RuntimeWarning, stacklevel=1)
        elif not (1 - VALIDATION_SLACK) * sim.low <= predicted \
                <= (1 + VALIDATION_SLACK) * sim.high:
            warnings.warn(f"the plan put the best's {percentile_label(args.percentile)} at "
                          f"{predicted:.4g}, the simulation at {sim.mean:.4g} "
                          f"[{sim.low:.4g}, {sim.high:.4g}]: more than "
                          f"{VALIDATION_SLACK:.0%} apart, so the plan from {how} may "
                          "have missed a smaller cluster or taken one too small; run "
                          "again with a larger --jobs"
                          + ("" if args.basic == DIRECT else " or --basic direct"),
                          RuntimeWarning, stacklevel=1)
    _emit(rows, args.out)
    return 0


def register(subparsers) -> None:
    """Add ``plan-capacity``."""
    p = subparsers.add_parser("plan-capacity", help="smallest (n, r, consistency) "
                              "meeting a write-latency percentile SLA", epilog=EPILOG)
    p.add_argument("--write-rate", type=types.positive_real, required=True,
                   help="writes per unit time (lambda)")
    p.add_argument("--target", type=types.positive_real, required=True,
                   help="latency the percentile must not exceed")
    p.add_argument("--percentile", type=types.percentile, default=99,
                   help="the percentile held to --target (default 99)")
    p.add_argument("--service", default="exp",
                   help="service law of a task (a spec; default exp)")
    p.add_argument("--mu", type=types.positive_real, default=None,
                   help="service rate of parametric services (mean 1/mu, default 1)")
    p.add_argument("--levels", default=list(DEFAULT_LEVELS),
                   type=types.level_list(LEVELS, "--levels"),
                   help="allowed consistency levels, comma-separated, each once: names "
                        "(a name needing more replicas than a candidate has is skipped "
                        "there) or numbers of acknowledgements; each must fit the most "
                        "replicas searched (default "
                        f"{','.join(DEFAULT_LEVELS)})")
    p.add_argument("--min-replicas", type=types.count(MAX_NODES, "--min-replicas"),
                   default=1, help="fewest replicas searched (default 1)")
    p.add_argument("--max-replicas", type=types.count(MAX_NODES, "--max-replicas"),
                   default=5, help="most replicas searched (default 5)")
    p.add_argument("--min-nodes", type=types.count(MAX_NODES, "--min-nodes"), default=1,
                   help="fewest nodes searched (default 1)")
    p.add_argument("--max-nodes", type=types.count(MAX_NODES, "--max-nodes"), default=20,
                   help=f"largest cluster searched (at most {MAX_NODES:,}; default "
                        "%(default)s)")
    p.add_argument("--validate", type=_validate_jobs, default=0, metavar="JOBS",
                   help="also simulate the chosen cluster with JOBS jobs (default 0: no "
                        "simulation)")
    _common(p, 100_000, direct=True)
    p.set_defaults(handler=_warnings_after_success(_cmd_plan_capacity))

