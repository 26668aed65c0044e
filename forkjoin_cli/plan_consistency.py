"""``forkjoin-sim plan-consistency``: the fastest read/write quorums (R, W) for a mix.

The rate-driven plan and ``--staleness`` are in ``_tails`` (shared with ``timeouts``
and ``plan-capacity``); ``--model``, a calibrated cluster, is here. Its JSON has one
shape whatever the number of ``--threads``: ``threads`` (the list given), ``best``
(one record ``{threads, pair}`` per thread count) and ``pairs`` (one record per
thread count and pair: the CSV's rows and columns).
"""

from __future__ import annotations

import os
import warnings

from forkjoin_cli import types
from forkjoin_cli._tails import (MAX_JOBS, PERCENTILE, _MODEL_OPTIONS, _RATE_OPTIONS,
                                 _common, _emit, _flag, _plan_consistency_rate,
                                 _say_plan, _size, _warnings_after_success,
                                 add_staleness_arguments)
from forkjoin_cli._tails import staleness_plan  # noqa: F401
from forkjoin_cli.types import whole, whole_list
from forkjoin_sim.errors import ConfigError
from forkjoin_sim.files.tables import check_table_out

from sizing.columns import MAX_THREADS


def _cmd_plan_consistency(args, parser) -> int:
    if args.model is not None:
        return _plan_consistency_model(args)
    # required unless --model; argparse's own words, as when they were required
    missing = [_flag(name) for name in ("nodes", "replicas", "read_fraction", "rate")
               if getattr(args, name) is None]
    if missing:
        try:
            parser.error("the following arguments are required: " + ", ".join(missing))
        except SystemExit as stop:
            return int(stop.code)
    given = [_flag(name) for name, unset in _MODEL_OPTIONS.items()
             if getattr(args, name) != unset]
    if given:
        verb = "applies" if len(given) == 1 else "apply"
        raise ConfigError(f"{', '.join(given)} only {verb}"
                          " with --model MODEL.toml (a calibrated cluster); add --model "
                          f"or leave {'it' if len(given) == 1 else 'them'} out")
    return _plan_consistency_rate(args)


def _plan_consistency_model(args) -> int:
    """``--model``: each strong pair's mix predicted on the calibrated cluster."""
    from forkjoin_sim.files.io import json_text
    from sizing.mixes import check_threads, plan_notes, plan_strong_pairs
    from sizing.calibrated_model import read_model
    from sizing.network_model_file import is_network_model, read_network_model

    given = [_flag(name) for name, unset in _RATE_OPTIONS.items()
             if getattr(args, name) != unset]
    if given:
        # why each does nothing, where the reason is not the cluster and load
        why = {"--percentile": "a calibrated model predicts mean latencies, no "
                               "percentiles: its pairs are ranked by their mean",
               "--objective": "a calibrated model predicts mean latencies, no "
                              "percentiles: its pairs are ranked by their mean",
               "--staleness": "the model's queues carry no replica versions; for "
                              "staleness run forkjoin-sim staleness with the laws of "
                              "your replicas (docs/staleness/queueing.md)"}
        reasons = list(dict.fromkeys(why[flag] for flag in given if flag in why))
        if any(flag not in why for flag in given):
            reasons.insert(0, "the model fixes the cluster and --threads closed-loop "
                              "clients the load")
        raise ConfigError(f"{', '.join(given)} {'does' if len(given) == 1 else 'do'} "
                          f"nothing with --model ({'; '.join(reasons)}); leave "
                          f"{'it' if len(given) == 1 else 'them'} out")
    missing = [_flag(name) for name in ("read_fraction", "threads")
               if getattr(args, name) is None]
    if missing:
        said = {"--read-fraction": "the share of reads", "--threads": "the client threads"}
        raise ConfigError("--model needs " + " and ".join(
            f"{flag} ({said.get(flag, flag)})" for flag in missing))
    if args.out:
        check_table_out(args.out, "--out")
    if os.path.isfile(args.model) and not is_network_model(args.model):
        read_model(args.model)  # a simulated model's file, or what is wrong with it
        raise ConfigError(f"--model {args.model} was calibrated with --structure "
                          "simulated, which plans no strong pairs; calibrate the cluster "
                          "again at the default structure (lanes)")
    model = read_network_model(args.model)
    try:
        nodes = model.size_asked(args.nodes)
    except ConfigError as exc:
        raise ConfigError(f"--nodes {args.nodes} with --model {args.model}: {exc}") \
            from None
    for threads in args.threads:
        check_threads(model, threads)  # before any plan is simulated
    operations = args.operations or 40_000
    rows, best, notes = [], [], {}
    for threads in args.threads:
        plan = plan_strong_pairs(model, args.read_fraction, threads,
                                 operations=operations, seed=args.seed, nodes=nodes)
        best.append(_say_plan(model, args, threads, nodes, plan))
        for note in plan_notes(model, args.read_fraction, threads, plan, nodes):
            notes.setdefault(note, []).append(threads)
        rows += [{"threads": threads, **row} for row in plan]
    # a note of every plan is said once; one of some plans names their threads
    for note, where in notes.items():
        if len(where) < len(args.threads):
            note = f"at {', '.join(map(str, where))} threads: {note}"
        warnings.warn(note, UserWarning, stacklevel=1)
    if args.json:
        # one shape for any number of --threads (a script reads one as it reads
        # several): lists in the order given, records keyed as the CSV's columns
        print(json_text({"model": args.model, "structure": model.fit.structure,
                         "nodes": nodes, "fitted_nodes": model.nodes,
                         "replicas": model.replicas,
                         "read_fraction": args.read_fraction,
                         "threads": list(args.threads),
                         "operations": operations, "seed": args.seed,
                         "best": [{"threads": threads, "pair": pair}
                                  for threads, pair in zip(args.threads, best)],
                         "pairs": rows}))
        if args.out:
            _emit(rows, args.out)
        return 0
    _emit(rows, args.out)
    return 0


def register(subparsers) -> None:
    """Add ``plan-consistency``."""
    p = subparsers.add_parser("plan-consistency", help="read/write quorums (R, W) with "
                              "R + W > r: predicted mean and percentile of the mix")
    # required unless --model (checked by the handler in argparse's words)
    p.add_argument("--nodes", type=_size, help="(required unless --model; with "
                   "--model: a cluster of this many nodes, each keeping the fitted "
                   "node's work; default the fitted size)")
    p.add_argument("--replicas", type=_size, help="(required unless --model)")
    p.add_argument("--read-fraction", type=types.fraction,
                   help="share of the requests that are reads, in [0, 1] (YCSB workload "
                        "A 0.5, B 0.95; required)")
    p.add_argument("--rate", type=types.positive_real,
                   help="requests (reads + writes) per unit time (required unless "
                        "--model)")
    p.add_argument("--read-service", default="exp",
                   help="service law of a read task (a spec; default exp)")
    p.add_argument("--write-service", default=None,
                   help="default: the read service")
    p.add_argument("--mu", type=types.positive_real, default=None,
                   help="service rate of parametric services (mean 1/mu, default 1)")
    p.add_argument("--percentile", type=types.percentile, default=None,
                   help=f"percentile of the objective (default {PERCENTILE})")
    p.add_argument("--objective", choices=["percentile", "mean"], default=None,
                   help="what the plan minimises (default percentile)")
    # its minimum depends on the read fraction: checked before the work, not here
    p.add_argument("--validate", type=types.count(MAX_JOBS, "--validate", low=0),
                   default=0, metavar="JOBS",
                   help="also simulate each pair on shared nodes with JOBS jobs (at "
                        "least what the rarer of reads and writes needs; default 0: "
                        "no simulation)")
    # --staleness takes --jobs as operations (at least 2); the latency plan checks its
    # own minimum (`_check_consistency_jobs`)
    _common(p, 100_000, jobs_low=2)
    add_staleness_arguments(p)
    p.add_argument("--model", metavar="MODEL.toml",
                   help="a cluster calibrated by forkjoin-sim cassandra calibrate: "
                        "predict each strong pair (R + W = replicas + 1) of a read/write "
                        "mix of --read-fraction reads from --threads closed-loop "
                        "clients on its nodes, reads and writes in the same queues "
                        "(sizing.mixes; docs/cassandra/mixes.md); prints per pair "
                        "read_ms, write_ms, overall_ms with *_low_ms/*_high_ms (95%% "
                        "prediction intervals), throughput (ops/s), simulation_low_ms/"
                        "simulation_high_ms (a simulated structure's own interval; "
                        "equal to overall_ms for lanes, which is not simulated), "
                        "eqs_13_15_ms (the weighted average of the pure curves) and "
                        "best (smallest overall_ms); --json prints model, structure, "
                        "nodes, fitted_nodes, replicas, read_fraction, operations, "
                        "seed and three lists, whatever the number of --threads: "
                        "threads, best (one {threads, pair} per thread count) and "
                        "pairs (the CSV's rows)")
    p.add_argument("--threads", type=whole_list(1, MAX_THREADS, "--threads"),
                   help="--model: closed-loop client threads, pausing between "
                        "requests as the fitted rows did (a model fitted with think_ms "
                        "carries their pauses, and the clients' time outside the "
                        "latency that fitted throughputs showed; else none); several, "
                        "comma-separated (100,500,1000), plan each: every row has its "
                        "threads, and the JSON lists follow the order given")
    p.add_argument("--operations", type=whole(1, MAX_JOBS, "--operations"),
                   help="--model: operations simulated per pair (default 40,000; "
                        "simulated structures only)")
    p.add_argument("--json", action="store_true",
                   help="--model: print the plan as JSON instead of CSV")

    def handler(args):
        return _cmd_plan_consistency(args, p)
    p.set_defaults(handler=_warnings_after_success(handler))
