"""``forkjoin-sim simulate``: one (n,r,k) queue, open or closed loop."""

from __future__ import annotations

from forkjoin_sim.errors import ConfigError

from forkjoin_cli.arguments import add_simulate_arguments, model_from_args, parse_warmup

HELP = "simulate one (n,r,k) queue"


def _cmd_simulate(args) -> int:
    from forkjoin_sim.simulation import simulate

    if args.workers is not None and args.engine not in ("fused", "auto"):
        raise ConfigError(f"--workers sets the fused engine's threads; the {args.engine} "
                          "engine runs on one core: add --engine fused or drop --workers")
    model = model_from_args(args)
    if args.workers is not None and args.engine == "auto":
        from forkjoin_sim.simulation import choose_engine

        chosen, why = choose_engine(model, args.jobs, args.seed, parse_warmup(args.warmup))
        if chosen != "fused":
            raise ConfigError(f"--workers sets the fused engine's threads; the default "
                              f"engine here is {chosen} ({why}): add --engine fused or "
                              "drop --workers")
    # simulate() checks the run against memory before any work, as for API callers
    result = simulate(model, jobs=args.jobs, seed=args.seed, engine=args.engine,
                      warmup=parse_warmup(args.warmup), sample_every=args.sample_every,
                      progress=not args.json, replications=args.replications,
                      workers=args.workers)
    if args.json:
        from forkjoin_sim.files.io import json_text

        print(json_text(result.to_dict()))
    else:
        print(result.report())
    return 0




def register(subparsers) -> None:
    p = subparsers.add_parser("simulate", help=HELP, description=HELP)
    add_simulate_arguments(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=_cmd_simulate)
