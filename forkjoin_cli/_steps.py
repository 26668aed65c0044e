"""Queued work options of ``mix`` and ``cassandra simulate``: runs on the steps engine.

``--coordinator-work``, ``--message-work``, ``--hop``, ``--cores``, ``--client-cores``
and ``--client-work`` describe work that queues (issue 26). With none of them a command
runs as before; with any of them its Cassandra options are mapped onto the step graphs
of `forkjoin_sim.steps` (client -> hop -> coordinator work -> fork to the replicas,
remote ones through message work and hops -> join -> coordinator reply work -> hop ->
client) and the run goes through the compiled steps engine.
"""

from __future__ import annotations

import time

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


def _spec(text, what):
    """The law of a queued-work spec, which must carry its mean."""
    from forkjoin_sim.laws.service import fixes_own_scale, parse_service

    if text is None:
        return None
    if not fixes_own_scale(text):
        raise ConfigError(f"{what} {text!r} gives a shape without a mean; give the "
                          f"mean too, e.g. {what} exp:0.05")
    return parse_service(text)


def step_laws(args) -> dict:
    """The laws of the queued-work options (0 where not given), checked together."""
    if getattr(args, "jobs", None) == "auto":
        raise ConfigError("--jobs auto is not available with the queued-work options "
                          "(steps engine); give a number of operations")
    if args.client_work is not None and args.client_cores is None:
        raise ConfigError("--client-work is work on the client machine; add "
                          "--client-cores C (its cores)")
    laws = {"coordinate": _spec(args.coordinator_work, "--coordinator-work"),
            "message": _spec(args.message_work, "--message-work"),
            "hop": _spec(args.hop, "--hop"),
            "client": _spec(args.client_work, "--client-work")}
    laws = {kind: 0.0 if law is None else law for kind, law in laws.items()}
    laws["respond"] = laws["coordinate"]
    return laws


def unqueued(laws: dict) -> tuple:
    """The step kinds without work (law 0: their option not given)."""
    return tuple(kind for kind, law in laws.items()
                 if isinstance(law, float) and law == 0.0)


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


def run(*, layout, templates, classes, parties, durations, seed, jobs, warmup,
        rate=None, clients=None, think=0.0, think_law=None, engine="steps",
        sample_every=1, unqueued=()):
    """Run on the steps engine (or its SimPy reference, ``engine='simpy'``) and
    measure: the JSON fields of ``mix`` (summary, throughput, utilisation).

    Steps of the kinds in ``unqueued`` (work not asked for) become zero delays: a step
    of no work must not wait in a station's line.
    """
    import numpy as np
    from scipy import stats

    from forkjoin_sim.measure.statistics import SojournRecorder
    from forkjoin_sim.steps import Closed, Open, draws, run_arrays, run_reference
    from forkjoin_sim.steps.graph import compile_templates, stations_of

    if rate is not None:
        arrivals = Open(draws.poisson_arrivals(seed, rate, 0, jobs))
    else:
        law = think_law if think_law is not None else stats.expon(scale=think)
        gaps = (np.zeros(jobs) if think == 0
                else draws.think_times(seed, law, 0, jobs))
        arrivals = Closed(clients, gaps)
    compiled = compile_templates(templates)
    station = np.full(durations.shape, -1, np.int32)
    for c, template in enumerate(templates):
        rows = classes == c
        station[rows, :len(template.ops)] = stations_of(
            template, layout, parties[rows, :template.parties])
        skip = [i for i, op in enumerate(template.ops) if op.kind in unqueued]
        station[np.ix_(np.flatnonzero(rows), skip)] = -1
    servers = np.array(layout.servers)
    started = time.perf_counter()
    runner = run_reference if engine == "simpy" else run_arrays
    out = runner(compiled, classes, station, durations, servers, arrivals)
    seconds = time.perf_counter() - started
    order = np.argsort(out.start, kind="stable")
    is_write = classes[order] >= 2
    recorder = SojournRecorder(jobs, warmup=warmup, sample_every=sample_every,
                               labels=True, times=True)
    recorder.add(out.sojourn[order], labels=is_write.astype(np.int64),
                 times=out.start[order])
    result = recorder.summary().to_dict()
    result.update(engine="steps" if engine != "simpy" else "steps-simpy",
                  seconds=round(seconds, 6), jobs=jobs, seed=seed)
    throughput = recorder.throughput()
    fields = {}
    if throughput is not None:
        fields = dict(throughput=throughput.mean, throughput_ci_low=throughput.low,
                      throughput_ci_high=throughput.high)
    # the utilisation law (busy = throughput x work) over the measured jobs: work of
    # a job's unneeded replicas may end after the run's last answer
    measured = order[recorder.measured()["dropped"]:]
    rows = station[measured]
    busy = np.bincount(rows[rows >= 0], weights=durations[measured][rows >= 0],
                       minlength=len(servers))
    horizon = float(out.start[measured].max() - out.start[measured].min())
    node_stations = [i for i, name in enumerate(layout.names) if name != "client"]
    use = busy[node_stations] / (servers[node_stations] * horizon)
    fields.update(utilisation_mean=float(np.mean(use)), utilisation_max=float(np.max(use)))
    if 0 < is_write.mean() < 1:
        fields["classes"] = {name: recorder.summary(label=label).to_dict()
                             for label, name in ((0, "read"), (1, "write"))}
    return result, fields


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
