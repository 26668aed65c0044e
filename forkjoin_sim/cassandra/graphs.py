"""Level 2 as a graph of steps: Cassandra's staged write path on the steps engine.

A write is a `~forkjoin_sim.steps.Template`: the client's hop to its coordinator, the
coordinator's request stage (``request``), then per replica the hop out, the replica's
``mutation`` stage, the hop back and the coordinator's ``response`` stage; the client
is answered (the hop back to it) at the k-th acknowledgement while the others run on
(non-purging). The coordinator's own replica (a local write) skips both hops and the
response stage. A stage whose time `StagedConfig` leaves out (``None``) is no step at
all, so it neither takes time nor queues; a hop left out is a step of zero time.

Parties: 0 = the coordinator, ``1 + t`` = replica ``t`` (column ``t`` of the writes'
``path.nodes``). Job classes: 0 a remote write, ``1 + t`` a local write whose
coordinator is replica ``t``.

The writes (arrivals, placement, coordinators, mutation times) are a
`~forkjoin_sim.cassandra.writes.WritePath`, the one that level 1 runs too; the stage
times are drawn by purpose (``staged_*`` in `forkjoin_sim.randomness.streams`), each a
function of (seed, stage, write index); a hop with a law of its own per pair of data
centres (``[datacentres.hops]``) takes purpose ``('step', 'staged hop a-b')``.
"""

from __future__ import annotations

import numpy as np

from forkjoin_sim.cassandra.staged import StagedConfig
from forkjoin_sim.cassandra.writes import WritePath
from forkjoin_sim.errors import ConfigError
from forkjoin_sim.steps import draws
from forkjoin_sim.steps.graph import Layout, Op, Template

#: A node's stages at level 2.
STAGES = ("request", "mutation", "response")


def staged_layout(nodes: int, config: StagedConfig) -> Layout:
    """Per node its request, mutation and response stages, each a FCFS pool of the
    configured threads (threads are independent servers)."""
    if nodes < 1:
        raise ConfigError(f"nodes={nodes}; use nodes >= 1")
    threads = (config.request_threads, config.mutation_threads, config.response_threads)
    names = tuple(f"node{i}.{stage}" for i in range(nodes) for stage in STAGES)
    table = [[len(STAGES) * i + s for s in range(len(STAGES))] for i in range(nodes)]
    return Layout(names, threads * nodes, STAGES, table)


def staged_write(replicas: int, quorum: int, local_slot: int, config: StagedConfig
                 ) -> Template:
    """One write of the staged path; ``local_slot`` is the replica that is the
    coordinator itself, or -1 (a remote write)."""
    if not 1 <= quorum <= replicas:
        raise ConfigError(f"quorum={quorum} with replicas={replicas}; use "
                          "1 <= quorum <= replicas")
    if not -1 <= local_slot < replicas:
        raise ConfigError(f"local_slot={local_slot}; use -1 (remote) or 0.."
                          f"{replicas - 1}")
    ops = [Op("client_out")]
    if config.request_time is not None:
        ops.append(Op("request", (0,), party=0, stage="request"))
    fork = len(ops) - 1
    ends = []
    for t in range(replicas):
        if t == local_slot:
            ops.append(Op("mutation", (fork,), party=1 + t, stage="mutation"))
        else:
            ops.append(Op("network_out", (fork,)))
            ops.append(Op("mutation", (len(ops) - 1,), party=1 + t, stage="mutation"))
            ops.append(Op("network_back", (len(ops) - 1,)))
            if config.response_time is not None:
                ops.append(Op("response", (len(ops) - 1,), party=0, stage="response"))
        ends.append(len(ops) - 1)
    ops.append(Op("client_back", tuple(ends), need=quorum))
    where = "remote" if local_slot < 0 else f"local {local_slot}"
    return Template(tuple(ops), parties=1 + replicas, name=f"staged write {where}")


def stage_seed(seed) -> int:
    """The whole number the stage times are drawn from: ``seed`` itself, or 128 bits
    of a SeedSequence's state (a pure function of it)."""
    if isinstance(seed, np.random.SeedSequence):
        words = seed.generate_state(4, np.uint32)
        return int(sum(int(w) << (32 * i) for i, w in enumerate(words)))
    return int(seed)


def staged_jobs(writes: WritePath, config: StagedConfig, seed, quorum: int):
    """The graph inputs of ``writes``: ``(templates, classes, parties, durations)``
    for `forkjoin_sim.steps.simulate` (class ``c`` runs ``templates[c]``)."""
    path = writes.path
    jobs, replicas = path.nodes.shape
    if config.datacentre and len(config.datacentre) != writes.node_count:
        raise ConfigError(f"[datacentres] nodes lists {len(config.datacentre)} nodes but "
                          f"the cluster has {writes.node_count}; give one per node")
    seed = stage_seed(seed)

    def stage(purpose, law, width):
        if law is None:
            return np.zeros((jobs, width))
        return draws.draw(seed, purpose, law, 0, jobs, width)

    client = stage("staged_client", config.client_delay, 2)
    request = stage("staged_request", config.request_time, 1)[:, 0]
    network = stage("staged_network", config.network_delay, 2 * replicas)
    response = stage("staged_response", config.response_time, replicas)
    if config.datacentre and config.cross_delay is not None:
        centre = np.asarray(config.datacentre)
        crossing = centre[path.nodes] != centre[writes.coordinator][:, None]
        extra = stage("staged_datacentre", config.cross_delay, 2 * replicas)
        network = network + extra * np.tile(crossing, 2)
    if config.hops:
        centre = np.asarray(config.datacentre)
        x, y = centre[path.nodes], centre[writes.coordinator][:, None]
        low, high = np.tile(np.minimum(x, y), 2), np.tile(np.maximum(x, y), 2)
        for (a, b), law in config.hops:
            pair = (low == a) & (high == b)
            values = draws.draw(seed, ("step", f"staged hop {a}-{b}"), law, 0, jobs,
                                2 * replicas)
            network[pair] = values[pair]
    templates = [staged_write(replicas, quorum, t, config) for t in range(-1, replicas)]
    classes = (writes.local_slot + 1).astype(np.int64)
    parties = np.column_stack([writes.coordinator, path.nodes]).astype(np.int64)
    durations = np.zeros((jobs, max(len(t.ops) for t in templates)))
    # per step kind its values: one per write, or one per write and replica
    values = {"client_out": client[:, 0], "client_back": client[:, 1],
              "request": request, "network_out": network[:, :replicas],
              "network_back": network[:, replicas:], "mutation": path.service,
              "response": response}
    for c, template in enumerate(templates):
        rows = np.flatnonzero(classes == c)
        for i, (op, slot) in enumerate(zip(template.ops, _slots(template))):
            kind = values[op.kind]
            durations[rows, i] = kind[rows] if kind.ndim == 1 else kind[rows, slot]
    return templates, classes, parties, durations


def _slots(template: Template) -> list:
    """Per step, the replica whose chain it is on (-1 before the fork and after the
    join)."""
    slot = [-1] * len(template.ops)
    for t, end in enumerate(template.ops[-1].after):
        step = end
        while template.ops[step].kind != "client_out" and \
                template.ops[step].kind != "request":
            slot[step] = t
            step = template.ops[step].after[0]
    return slot


def acknowledgements(templates, classes, steps: np.ndarray) -> np.ndarray:
    """Per write and replica, when its acknowledgement is counted: ``(jobs, r)`` from
    the end time of every step (`steps.simulate(..., record_steps=True)`)."""
    replicas = len(templates[0].ops[-1].after)
    out = np.empty((len(classes), replicas))
    for c, template in enumerate(templates):
        rows = classes == c
        out[rows] = steps[np.ix_(rows, template.ops[-1].after)]
    return out


def run_staged(writes: WritePath, config: StagedConfig, seed, quorum: int,
               clients: int | None = None, think=None):
    """Run ``writes`` through the staged path on the steps engine.

    Open loop: write ``j`` arrives at ``writes.path.arrivals[j]``. Closed loop
    (``clients``): client ``c`` first waits ``think[c]``, and the client of a finished
    write waits ``think[j]`` before it issues write ``j``.

    Returns ``(start, acks)``: per write when it was issued, and per write and replica
    when the client learns of that replica's acknowledgement (``(jobs, r)``; the write
    is answered at the ``quorum``-th, which sets when a closed-loop client goes on).
    """
    from forkjoin_sim.steps import Closed, Open, simulate

    templates, classes, parties, durations = staged_jobs(writes, config, seed, quorum)
    if clients is None:
        arrivals = Open(writes.path.arrivals)
    else:
        arrivals = Closed(clients, np.asarray(think, np.float64))
    out = simulate(templates, staged_layout(writes.node_count, config), parties,
                   durations, arrivals, classes=classes, record_steps=True)
    acks = acknowledgements(templates, classes, out.steps)
    back = durations[np.arange(len(classes)),
                     np.array([len(t.ops) - 1 for t in templates])[classes]]
    return out.start, acks + back[:, None]
