"""Queued work options of ``mix`` and ``cassandra simulate``: runs on the steps engine.

``--coordinator-work``, ``--message-work``, ``--hop``, ``--cores``, ``--client-cores``
and ``--client-work`` describe work that queues (issue 26). With none of them a command
runs as before; with any of them its Cassandra options are mapped onto the step graphs
of `forkjoin_sim.steps` (client -> hop -> coordinator work -> fork to the replicas,
remote ones through message work and hops -> join -> coordinator reply work -> hop ->
client, `forkjoin_sim.steps.builders.cassandra_jobs`) and the run goes through the
compiled steps engine (`forkjoin_sim.cassandra.queued.run_queued`). This module only
parses the options and prints the result.
"""

from __future__ import annotations

from forkjoin_sim.errors import ConfigError

#: The options (argparse destinations) that switch a run onto the steps engine.
STEP_OPTIONS = ("coordinator_work", "message_work", "hop", "cores", "client_cores",
                "client_work")

#: Threads of the coordinator's own stages (native transport, messaging, response)
#: when ``--cores`` is not given: Cassandra's default native_transport_max_threads.
COORDINATOR_THREADS = 128


def add_step_arguments(p) -> None:
    """The queued-work options (steps engine) on parser ``p``."""
    from forkjoin_cli.types import whole

    g = p.add_argument_group(
        "queued work (steps engine)",
        "work that queues on the nodes and the client machine; any of these runs the "
        "operation as a graph of steps on the steps engine (SPEC: a service spec with "
        "its mean, e.g. exp:0.05)")
    g.add_argument("--coordinator-work", metavar="SPEC",
                   help="work per request on the coordinator node, before the fork and "
                        "again after the join")
    g.add_argument("--message-work", metavar="SPEC",
                   help="work per remote request and per reply on the node that sends "
                        "or receives it (a local replica needs none)")
    g.add_argument("--hop", metavar="SPEC", help="one-way network time between two nodes")
    g.add_argument("--cores", type=whole(1, 1_000_000, "--cores"), metavar="C",
                   help="a node's cores, shared by all its stages")
    g.add_argument("--client-cores", type=whole(1, 1_000_000, "--client-cores"),
                   metavar="C", help="cores of the load generator's machine (a station)")
    g.add_argument("--client-work", metavar="SPEC",
                   help="work per request on the client machine, before sending and "
                        "after the answer (needs --client-cores)")


def wants_steps(args) -> bool:
    """Whether any queued-work option is given."""
    return any(getattr(args, name, None) is not None for name in STEP_OPTIONS)


def spec_with_mean(text, what):
    """The law of a queued-work spec, which must carry its mean."""
    from forkjoin_sim.laws.service import fixes_own_scale, parse_service

    if text is None:
        return None
    if not fixes_own_scale(text):
        raise ConfigError(f"{what} {text!r} gives a shape without a mean; give the "
                          f"mean too, e.g. {what} exp:0.05")
    try:
        return parse_service(text)
    except ConfigError as exc:
        raise ConfigError(f"{what}: {exc}") from None


def step_laws(args) -> dict:
    """The laws of the queued-work options (0 where not given), checked together."""
    if getattr(args, "jobs", None) == "auto":
        raise ConfigError("--jobs auto is not available with the queued-work options "
                          "(steps engine); give a number of operations")
    if args.client_work is not None and args.client_cores is None:
        raise ConfigError("--client-work is work on the client machine; add "
                          "--client-cores C (its cores)")
    laws = {"coordinate": spec_with_mean(args.coordinator_work, "--coordinator-work"),
            "message": spec_with_mean(args.message_work, "--message-work"),
            "hop": spec_with_mean(args.hop, "--hop"),
            "client": spec_with_mean(args.client_work, "--client-work")}
    laws = {kind: 0.0 if law is None else law for kind, law in laws.items()}
    laws["respond"] = laws["coordinate"]
    return laws


def unqueued(laws: dict) -> tuple:
    """The step kinds without work (law 0: their option not given)."""
    return tuple(kind for kind, law in laws.items()
                 if isinstance(law, float) and law == 0.0)


def datacentres_from_args(args, nodes):
    """The ``[datacentres]`` table of ``--config`` (None without it), checked
    against the cluster's ``nodes``."""
    if args.config is None:
        return None
    from forkjoin_sim.cassandra.datacentres import load_datacentres

    datacentres = load_datacentres(args.config)
    datacentres.check_nodes(nodes)
    return datacentres


def layout_from_args(args, nodes):
    """Stations: ``--cores`` shared by a node's stages; else the read and mutation
    stages with their threads (``--structure shared``: one queue of ``--read-threads``)
    and the coordinator's stages with `COORDINATOR_THREADS` each."""
    from forkjoin_sim.steps import cassandra_layout

    client = args.client_cores or 1
    if args.cores is not None:
        return cassandra_layout(nodes, "shared", cores=args.cores, client_cores=client)
    if not hasattr(args, "read_threads"):  # cassandra simulate: one queue per node
        return cassandra_layout(nodes, "shared", cores=1, client_cores=client)
    if getattr(args, "structure", "stages") == "shared":
        return cassandra_layout(nodes, "shared", cores=args.read_threads,
                                client_cores=client)
    threads = {"read": args.read_threads, "mutation": args.write_threads,
               "native": COORDINATOR_THREADS, "messaging": COORDINATOR_THREADS,
               "response": COORDINATOR_THREADS}
    return cassandra_layout(nodes, "pools", threads=threads, client_cores=client)


def print_result(result: dict, fields: dict, args) -> None:
    """Finish a queued-work run's ``result`` (its measured ``fields``, the step options
    and ``--config`` as given) and print it: JSON with ``--json``, else `report`."""
    from forkjoin_sim.files.io import json_text

    result.update(fields)
    result.update({name: getattr(args, name) for name in STEP_OPTIONS},
                  config=args.config)
    print(json_text(result) if args.json else report(result))


def report(result: dict) -> str:
    """Lines for a person: latency, percentiles, throughput."""
    lines = [f"steps engine: {result['jobs']:,} operations, measured "
             f"{result['jobs_measured']:,} ({result['engine']}, "
             f"{result['seconds']:.2f} s)",
             f"mean latency  {result['mean']:.6g}  95% CI [{result['ci_low']:.6g}, "
             f"{result['ci_high']:.6g}]",
             f"percentiles   p50 {result['p50']:.4g}  p90 {result['p90']:.4g}  p95 "
             f"{result['p95']:.4g}  p99 {result['p99']:.4g}  p99.9 {result['p999']:.4g}"]
    for name, c in result.get("classes", {}).items():
        lines.append(f"{name:>10}: n={c['jobs_measured']:,} mean {c['mean']:.5g} "
                     f"[{c['ci_low']:.5g}, {c['ci_high']:.5g}]  p99 {c['p99']:.4g}")
    if "throughput" in result:
        lines.append(f"throughput    {result['throughput']:.6g} operations per unit "
                     f"time  95% CI [{result['throughput_ci_low']:.6g}, "
                     f"{result['throughput_ci_high']:.6g}]")
    lines.append(f"utilisation   mean {result['utilisation_mean']:.3f}  max "
                 f"{result['utilisation_max']:.3f} (of a node station's servers)")
    for line in result["warnings"]:
        lines.append(f"warning: {line}")
    return "\n".join(lines)
