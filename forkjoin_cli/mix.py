"""``forkjoin-sim mix``: a Cassandra cluster serving a read/write mix.

Reads at one consistency level and writes at another share the nodes, which queue
them in separate read and mutation stages (``--structure stages``, Cassandra's
default) or in one FIFO queue (``--structure shared``). Load is open (``--rate``
operations per unit time) or closed (``--clients`` threads, as YCSB runs). Results
per operation type.
"""

from __future__ import annotations

import math


from forkjoin_sim.errors import ConfigError

YCSB_MIXES = {"A": 0.5, "B": 0.95, "C": 1.0}


def _law(spec: str | None, mean: float | None, what: str, mean_flag: str | None = None):
    """The law of ``spec`` rescaled to ``mean`` (None: not given, 1), refusing a
    ``mean_flag`` given for a spec that fixes its own scale."""
    from forkjoin_sim.laws.service import check_mean_applies, parse_service

    if spec is None:
        return None
    try:
        law = parse_service(spec, mean=1.0 if mean is None else mean)
    except ConfigError as exc:
        raise ConfigError(f"{what}: {exc}") from None
    if mean is not None:
        check_mean_applies(spec, what, mean_flag)
    return law


#: Options left unset by the parser so that `_refuse_idle` can tell them given, and
#: the defaults it then fills in.
_UNSET_DEFAULTS = {"read_consistency": "ONE", "write_consistency": "ONE",
                   "data_read": "exp", "write": "exp"}


def _refuse_idle(args, reads: float) -> None:
    """Refuse an option that would do nothing, as --write-threads with --structure
    shared is: a write's options in a mix without writes, a read's without reads, a
    digest read's where reads ask one replica (ONE: no digest)."""
    from forkjoin_sim.cassandra.model import consistency_quorum

    def given(names):
        return [f"--{n.replace('_', '-')}" for n in names
                if getattr(args, n, None) is not None]

    for level in (args.read_consistency, args.write_consistency):
        if level is not None:
            consistency_quorum(level, args.replicas)  # a misspelt level before all
    idle = []
    if reads == 1:
        idle += [(flag, f"the mix has no writes (--reads {args.reads})")
                 for flag in given(("write_consistency", "write", "write_mean",
                                    "write_threads"))]
    if reads == 0:
        idle += [(flag, f"the mix has no reads (--reads {args.reads})")
                 for flag in given(("read_consistency", "data_read", "data_mean",
                                    "digest_read", "digest_mean"))]
    elif consistency_quorum(level := args.read_consistency
                            or _UNSET_DEFAULTS["read_consistency"], args.replicas) == 1:
        idle += [(flag, f"a read at {level} asks one replica, which "
                        "sends the data, so no digest is read")
                 for flag in given(("digest_read", "digest_mean"))]
    if idle:
        flag, why = idle[0]
        raise ConfigError(f"{flag} does nothing here: {why}; leave it out")
    # unset so that an option the mix never uses can be refused; their defaults
    for name, default in _UNSET_DEFAULTS.items():
        if getattr(args, name) is None:
            setattr(args, name, default)


def cluster_from_args(args):
    """The `CassandraCluster` that ``mix``'s options describe."""
    from forkjoin_cli._steps import spec_with_mean
    from forkjoin_sim.cassandra import CassandraCluster
    from forkjoin_cli.arguments import refuse_unused_write_threads
    from forkjoin_cli.main import closed_loop_from_args
    from forkjoin_sim.nodes import SharedQueue, Stages

    reads = args.reads
    if isinstance(reads, str):
        key = reads.strip().upper()
        if key in YCSB_MIXES:
            reads = YCSB_MIXES[key]
        else:
            try:
                reads = float(reads)
            except ValueError:
                reads = math.nan
            if not 0 <= reads <= 1:
                raise ConfigError(f"--reads {args.reads!r}: give a fraction in [0, 1] or "
                                  "a YCSB workload letter A, B or C") from None
    closed = closed_loop_from_args(args)
    if bool(closed) == (args.rate is not None):
        raise ConfigError("give --rate (open, operations per unit time) or --clients N "
                          "(closed loop): " + ("not both" if closed else "one of them"))
    refuse_unused_write_threads(args)
    _refuse_idle(args, reads)
    # unset so that --structure shared can refuse it; its default here
    args.write_threads = 1 if args.write_threads is None else args.write_threads
    node = (Stages(args.read_threads, args.write_threads) if args.structure == "stages"
            else SharedQueue(args.read_threads))
    return CassandraCluster(
        args.nodes, args.replicas, reads, args.read_consistency, args.write_consistency,
        data_read=_law(args.data_read, args.data_mean, "--data-read", "--data-mean"),
        # --digest-mean alone: a digest read of the data read's shape with that mean.
        digest_read=_law(args.digest_read or (args.data_read if args.digest_mean
                                              else None),
                         args.digest_mean, "--digest-read" if args.digest_read
                         else "--data-read", "--digest-mean"),
        write=_law(args.write, args.write_mean, "--write", "--write-mean"),
        coordinator=spec_with_mean(args.coordinator, "--coordinator"),
        client_hop=spec_with_mean(args.client_hop, "--client-hop"),
        node=node, rate=args.rate, **closed)


def _cmd_mix_steps(args, cluster) -> int:
    """``mix`` with queued work: the cluster's operations as step graphs."""
    from forkjoin_cli import _steps
    from forkjoin_cli.main import parse_warmup

    if args.coordinator is not None:
        raise ConfigError("--coordinator is unqueued coordinator time; with the "
                          "queued-work options give --coordinator-work SPEC instead")
    if args.engine in ("fast", "fused"):
        raise ConfigError(f"--engine {args.engine} does not run queued work (the "
                          "queued-work options such as --hop and --cores run on the "
                          "steps engine); leave --engine out, or give --engine simpy")
    from forkjoin_sim.cassandra.queued import run_queued
    from forkjoin_sim.steps.builders import cassandra_jobs, read_law

    datacentres = _steps.datacentres_from_args(args, cluster.nodes)
    laws = _steps.step_laws(args)
    laws["replica_read"] = read_law(cluster.data_read, cluster.digest_read)
    laws["replica_write"] = cluster.write
    templates, classes, parties, durations = cassandra_jobs(
        cluster.nodes, cluster.replicas, cluster.write_quorum, laws, args.seed,
        args.jobs, writes=1.0 - cluster.read_fraction, read_quorum=cluster.read_quorum,
        client_hop=cluster.client_hop, datacentres=datacentres)
    closed = cluster.clients is not None
    result, fields = run_queued(
        layout=_steps.layout_from_args(args, cluster.nodes), templates=templates,
        classes=classes, parties=parties, durations=durations, seed=args.seed,
        jobs=args.jobs, warmup=parse_warmup(args.warmup), rate=cluster.rate,
        clients=cluster.clients if closed else None,
        think=cluster.think if closed else 0.0,
        think_law=cluster.think_law if closed else None,
        engine="simpy" if args.engine == "simpy" else "steps",
        unqueued=_steps.unqueued(laws))
    result.update(cluster.summary_fields())
    _steps.print_result(result, fields, args)
    return 0


def _cmd_mix(args) -> int:
    from forkjoin_cli import _steps
    from forkjoin_cli.main import parse_warmup
    from forkjoin_sim.simulation import simulate

    cluster = cluster_from_args(args)
    if args.config is not None:
        from forkjoin_sim.checks import check_input_file

        check_input_file(args.config, "--config")  # its own problem first
        # and what the file holds, before what it needs beside it
        _steps.datacentres_from_args(args, args.nodes)
    if args.config is not None and not _steps.wants_steps(args):
        raise ConfigError("--config's [datacentres] sets the hops between nodes, which "
                          "run on the steps engine; add --hop SPEC (the hop within a "
                          "data centre) or another queued-work option")
    if _steps.wants_steps(args):
        return _cmd_mix_steps(args, cluster)
    # simulate() checks the run against memory before any work
    result = simulate(cluster, jobs=args.jobs, seed=args.seed, engine=args.engine,
                      warmup=parse_warmup(args.warmup), progress=not args.json)
    from forkjoin_sim.files.io import json_text

    print(json_text(result.to_dict()) if args.json else result.report())
    return 0


def register(subparsers) -> None:
    from forkjoin_cli.main import add_closed_loop_arguments

    p = subparsers.add_parser(
        "mix", help="a Cassandra read/write mix: read path, stages, open or closed loop",
        description=__doc__.splitlines()[0])
    from forkjoin_cli.arguments import SEED_HELP
    from forkjoin_cli.main import MAX_NODES, parse_jobs
    from forkjoin_sim.checks import SEED_LIMIT
    from forkjoin_cli.types import real, whole

    p.add_argument("--nodes", type=whole(1, MAX_NODES, "--nodes"), required=True,
                   help="nodes n of the cluster")
    p.add_argument("--replicas", type=whole(1, MAX_NODES, "--replicas"), required=True,
                   help="replication factor r")
    p.add_argument("--reads", default="C",
                   help="share of reads in [0, 1], or YCSB A (0.5), B (0.95), C (1)")
    p.add_argument("--read-consistency",
                   help="ONE | TWO | THREE | QUORUM | ALL | k (default ONE)")
    p.add_argument("--write-consistency",
                   help="ONE | TWO | THREE | QUORUM | ALL | k (default ONE)")
    p.add_argument("--data-read", help="service of a data read (spec) (default exp)")
    p.add_argument("--data-mean", type=real(0.0, low_open=True, what="--data-mean"),
                   help="mean of a data read (default 1)")
    p.add_argument("--digest-read", help="service of a digest read (default: as data)")
    p.add_argument("--digest-mean", type=real(0.0, low_open=True, what="--digest-mean"),
                   help="mean of a digest read (default: as a data read)")
    p.add_argument("--write", help="service of a mutation (spec) (default exp)")
    p.add_argument("--write-mean", type=real(0.0, low_open=True, what="--write-mean"),
                   help="mean of a mutation (default 1)")
    p.add_argument("--coordinator", help="coordinator time per operation (spec with its "
                                         "mean, e.g. exp:0.1)")
    p.add_argument("--client-hop", help="one-way client-coordinator time (e.g. exp:0.1)")
    p.add_argument("--structure", choices=["stages", "shared"], default="stages",
                   help="separate read and mutation stages (Cassandra) or one FIFO queue")
    p.add_argument("--read-threads", type=whole(1, 100_000, "--read-threads"), default=1,
                   help="threads of the read stage (of the queue, with shared)")
    p.add_argument("--write-threads", type=whole(1, 100_000, "--write-threads"),
                   default=None, help="threads of the mutation stage (default 1; "
                                      "--structure stages only)")
    p.add_argument("--rate", type=real(0.0, low_open=True, what="--rate"),
                   help="operations per unit time (open loop)")
    add_closed_loop_arguments(p)
    p.add_argument("--jobs", type=parse_jobs, default=200_000,
                   help="operations to simulate, or 'auto' (a +-1%% interval)")
    p.add_argument("--warmup", default="0.1",
                   help="fraction of operations dropped as warm-up, or 'auto' (MSER-5)")
    p.add_argument("--seed", type=whole(0, SEED_LIMIT - 1, "--seed"), default=0,
                   help=SEED_HELP)
    p.add_argument("--engine", choices=["auto", "fast", "fused", "simpy"], default="auto",
                   help="auto (default): fused for long runs the kernel covers, else "
                        "fast; the output says which and why")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--config", help="TOML with a [datacentres] table: the data centre "
                                    "of each node and a hop law per pair (steps engine)")
    from forkjoin_cli._steps import add_step_arguments

    add_step_arguments(p)
    p.set_defaults(handler=_cmd_mix)
