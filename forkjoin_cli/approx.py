"""``forkjoin-sim approx``: the closed-form estimates of one (n,r,k) queue (Theorem 3)."""

from __future__ import annotations

import analytic
from analytic.estimators import ESTIMATORS, RECOMMENDED, all_estimates, known_bias
from forkjoin_sim import checks as options
from forkjoin_cli import types
from forkjoin_sim.files.io import json_text

#: Largest replication factor: the estimators' cost grows faster than r**2 (about
#: 7 s at r = 200 and 30 s at r = 300 on one core), so larger r is refused.
MAX_REPLICAS = 200
#: Largest number of nodes (the closed forms have no other use for a bound).
MAX_NODES = 10 ** 9

#: Keys of ``approx --json``, in print order, with their labels.
FIELDS = {
    "per_node_load": "per-node load r*rho/n",
    "nelson": "NelsonT (Theorem 1 + Nelson-Tantawi)",
    "lower": "LowT (Theorem 3 lower bound)",
    # Not a bound: above the simulated mean at 70 of 351 Fig. 2 points, k = r and
    # k < r alike (docs/validation.md); at k = r it is the split-merge mean.
    "lower_pk": "Theorem 2 'tighter' form (NOT a valid bound)",
    "upper": "UpT (Nelson estimate of T(k,k,k))",
    "approx": "APP = min(max(NelsonT, LowT), UpT)",
}


def _format(value) -> str:
    return "undefined (its M/G/1 queue is unstable)" if value is None else f"{value:.6g}"


def below_bound(values: dict, others: dict) -> list[str]:
    """Warnings for estimators below LowT, a valid lower bound (Nelson's raw formula
    turns negative for wide jobs at low load, e.g. -17.7 at (200,200,1), rho 0.5)."""
    lower = values.get("lower")
    if lower is None:
        return []
    return [f"{name} gives {value:.4g}, below the lower bound LowT {lower:.4g}"
            f"{' (a negative mean)' if value < 0 else ''}: that formula fails for this "
            f"queue; use {RECOMMENDED} (the default --method, the most accurate against "
            "simulation: docs/estimators.md)"
            for name, value in others.items()
            if value is not None and value < lower * (1 - 1e-9)]


#: Factor by which the chosen estimator may differ from the recommended one before
#: approx says so (theorem3 at (40,30,2), rho 1.2: 4.96 against 1.40 simulated).
APART = 1.5


def far_from_recommended(method: str, others: dict) -> list[str]:
    """A warning when ``method``'s estimate is more than `APART` times off the
    recommended estimator's (which is within 10% of long simulations everywhere
    charted)."""
    chosen, best = others.get(method), others.get(RECOMMENDED)
    if method == RECOMMENDED or chosen is None or best is None or chosen <= 0 \
            or best <= 0 or max(chosen / best, best / chosen) <= APART:
        return []
    return [f"{method} gives {chosen:.4g}, {max(chosen / best, best / chosen):.3g} "
            f"times {'above' if chosen > best else 'below'} {RECOMMENDED} ({best:.4g}), "
            "which is within about 10% of long simulations on every queue charted "
            "(docs/estimators.md): take it, or simulate this queue"]


def _cmd_approx(args) -> int:
    import warnings

    queue = (args.nodes, args.replicas, args.quorum, args.rho, args.mu)
    with options.warnings_after_success():
        values = analytic.estimates(*queue)
        others = all_estimates(*queue)
        notes = below_bound(values, others) + far_from_recommended(args.method, others)
        bias = known_bias(args.method, args.nodes, args.replicas, args.quorum, args.rho)
        notes += [bias] if bias else []
        for note in notes:
            warnings.warn(note, RuntimeWarning, stacklevel=1)
        if args.json:
            out = {key: values[key] for key in FIELDS}
            out.update(method=args.method, estimate=others[args.method],
                       estimators=others, warnings=notes)
            print(json_text(out))
            return 0
        _print_table(args, values, others)
    return 0


def _print_table(args, values: dict, others: dict) -> None:
    from forkjoin_sim.errors import number_text

    print(f"({args.nodes},{args.replicas},{args.quorum}) non-purging fork-join, "
          f"rho={number_text(args.rho)}, mu={args.mu:g}, exponential service")
    width = max(map(len, FIELDS.values()))
    for key, label in FIELDS.items():
        # a load just below 1 is not printed as the limit it is below
        shown = number_text(values[key]) if key == "per_node_load" else \
            _format(values[key])
        print(f"{label:<{width}}  {shown}")
    print("estimators (docs/estimators.md; * = --method):")
    for name, value in others.items():
        mark = "*" if name == args.method else " "
        print(f"  {mark} {name:<{width - 4}}  {_format(value)}")


def register(subparsers) -> None:
    """Add ``approx`` to the ``forkjoin-sim`` sub-commands."""
    p = subparsers.add_parser(
        "approx", help="closed-form estimate and bounds of T(n,r,k; rho) (Theorem 3)",
        description="The mean sojourn time of an (n,r,k) queue with exponential "
                    f"service: the estimate of --method (default {RECOMMENDED}, the "
                    "most accurate against simulation), and the closed forms of "
                    "Theorem 3 of Wang, Li & Shen: NelsonT, LowT, UpT, APP = "
                    "min(max(NelsonT, LowT), UpT), and Theorem 2's 'tighter' form, "
                    "which is not a valid bound.")
    p.add_argument("--nodes", type=types.count(MAX_NODES, "--nodes"), required=True,
                   help="n, number of nodes")
    p.add_argument("--replicas", type=types.count(MAX_REPLICAS, "--replicas"),
                   required=True, help=f"r, tasks per job (at most {MAX_REPLICAS})")
    p.add_argument("--quorum", type=types.count(MAX_REPLICAS, "--quorum"),
                   required=True, help="k, completions a job waits for")
    p.add_argument("--rho", type=types.positive_real, required=True,
                   help="load per job, rho = lambda/mu; per-node load is r*rho/n")
    p.add_argument("--mu", type=types.positive_real, default=1.0,
                   help="service rate of one node")
    p.add_argument("--method", choices=list(ESTIMATORS), default=RECOMMENDED,
                   help=f"the estimator reported as 'estimate' (default {RECOMMENDED}, "
                        "the most accurate against simulation; theorem3 = the paper)")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object: " + "; ".join(
                       f"{key} ({label})" for key, label in FIELDS.items())
                   + "; method (--method), estimate (its value: the number to use), "
                     "estimators (every estimator by name) and warnings")
    p.set_defaults(handler=_cmd_approx)
