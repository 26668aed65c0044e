"""Ready-made graphs: the paper's (n,r,k) job and Cassandra's read and write paths.

Cassandra parties: 0 = the client machine, 1 = the coordinator, ``2 + i`` = replica
``i``. A *local* job's coordinator is its replica 0: that replica's work runs on the
coordinator without hops or message work. Stages: ``client`` (the client machine),
``native`` (the coordinator's request stage), ``messaging`` (sending and receiving a
message), ``read`` / ``mutation`` (a replica's work), ``response`` (counting replies
and answering). Step kinds (what durations are drawn from): ``client``, ``hop``,
``coordinate``, ``message``, ``replica_read`` / ``replica_write``, ``respond``.
"""

from __future__ import annotations

import numpy as np

from forkjoin_sim.errors import ConfigError
from forkjoin_sim.steps import draws
from forkjoin_sim.steps.graph import Compiled, Layout, Op, Template, compile_templates, \
    stations_of

#: A node's stages in the Cassandra templates.
STAGES = ("native", "messaging", "read", "mutation", "response")


def _check_quorum(nodes, replicas, quorum):
    if replicas < 1:
        raise ConfigError(f"replicas={replicas}; use replicas >= 1")
    if not 1 <= replicas <= nodes:
        raise ConfigError(f"replicas={replicas} with nodes={nodes}; use "
                          "1 <= replicas <= nodes")
    if not 1 <= quorum <= replicas:
        raise ConfigError(f"quorum={quorum} with replicas={replicas}; use "
                          "1 <= quorum <= replicas")


def fork_join(nodes: int, replicas: int, quorum: int, purging: bool = False):
    """The paper's (n,r,k) job: ``replicas`` tasks (kind ``service``) on distinct
    single-server nodes, answered at the ``quorum``-th (a zero ``join`` step).

    Returns ``(template, layout)``; party ``i`` is replica ``i``'s node.
    """
    _check_quorum(nodes, replicas, quorum)
    ops = [Op("service", party=i, stage="cores") for i in range(replicas)]
    ops.append(Op("join", tuple(range(replicas)), need=quorum,
                  purging=purging and quorum < replicas))
    layout = Layout(names=tuple(f"node{i}" for i in range(nodes)), servers=(1,) * nodes,
                    stages=("cores",), table=[[i] for i in range(nodes)])
    return Template(tuple(ops), parties=replicas, name=f"({nodes},{replicas},{quorum})"), \
        layout


def cassandra_layout(nodes: int, structure: str = "shared", cores: int = 4,
                     threads: dict | None = None, client_cores: int = 8) -> Layout:
    """Stations of ``nodes`` Cassandra nodes and one client machine (node ``nodes``).

    ``shared``: all of a node's stages queue at one station of ``cores`` servers.
    ``pools``: each stage is its own station with ``threads[stage]`` servers (default
    ``cores``).
    """
    if nodes < 1:
        raise ConfigError(f"nodes={nodes}; use nodes >= 1")
    if int(cores) != cores or cores < 1 or client_cores < 1:
        raise ConfigError(f"cores={cores}, client_cores={client_cores}; use whole "
                          "numbers >= 1")
    names, servers, table = [], [], []
    if structure == "shared":
        for i in range(nodes):
            names.append(f"node{i}.cores")
            servers.append(cores)
            table.append([i] * len(STAGES) + [-1])
    elif structure == "pools":
        threads = dict(threads or {})
        unknown = set(threads) - set(STAGES)
        if unknown:
            raise ConfigError(f"thread pools for unknown stages {sorted(unknown)}; "
                              f"use stages {STAGES}")
        for i in range(nodes):
            row = []
            for stage in STAGES:
                row.append(len(names))
                names.append(f"node{i}.{stage}")
                servers.append(int(threads.get(stage, cores)))
            table.append(row + [-1])
    else:
        raise ConfigError(f"structure {structure!r}; use 'shared' or 'pools'")
    table.append([-1] * len(STAGES) + [len(names)])
    names.append("client")
    servers.append(client_cores)
    return Layout(tuple(names), tuple(servers), STAGES + ("client",), table)


def _cassandra(replicas, quorum, local, work_kind, work_stage, purging, name):
    ops = [Op("client", party=0, stage="client"),
           Op("hop", (0,)),
           Op("coordinate", (1,), party=1, stage="native")]
    ends = []
    for i in range(replicas):
        if local and i == 0:
            ops.append(Op(work_kind, (2,), party=1, stage=work_stage))
            ends.append(len(ops) - 1)
            continue
        replica = 2 + i
        chain = [Op("message", party=1, stage="messaging"), Op("hop"),
                 Op("message", party=replica, stage="messaging"),
                 Op(work_kind, party=replica, stage=work_stage),
                 Op("message", party=replica, stage="messaging"), Op("hop"),
                 Op("message", party=1, stage="messaging")]
        previous = 2
        for op in chain:
            ops.append(Op(op.kind, (previous,), op.party, op.stage))
            previous = len(ops) - 1
        ends.append(previous)
    ops.append(Op("respond", tuple(ends), party=1, stage="response", need=quorum,
                  purging=purging and quorum < replicas))
    ops.append(Op("hop", (len(ops) - 1,)))
    ops.append(Op("client", (len(ops) - 1,), party=0, stage="client"))
    where = "local" if local else "remote"
    return Template(tuple(ops), parties=2 + replicas, name=f"{name} {where}")


def cassandra_read(replicas: int, quorum: int, local: bool = False,
                   purging: bool = False) -> Template:
    """A read at consistency ``quorum`` of ``replicas``: client work, hop, coordinator
    work, fork to the replicas (remote ones through messages and hops), join at the
    ``quorum``-th reply on the coordinator's response stage, hop, client work."""
    _check_quorum(replicas, replicas, quorum)
    return _cassandra(replicas, quorum, local, "replica_read", "read", purging, "read")


def cassandra_write(replicas: int, quorum: int, local: bool = False,
                    purging: bool = False) -> Template:
    """A write: as `cassandra_read` with the replicas' ``mutation`` stage doing
    ``replica_write`` work."""
    _check_quorum(replicas, replicas, quorum)
    return _cassandra(replicas, quorum, local, "replica_write", "mutation", purging,
                      "write")


def cassandra_parties(nodes: int, replicas: int, seed: int, first: int, count: int,
                      coordinator: str = "random", ring: bool = True):
    """Per job its parties and whether it is local: ``(parties, local)``.

    ``coordinator='random'``: a uniformly random node (RoundRobinPolicy; local with
    probability replicas/nodes); ``'replica'``: a replica (TokenAwarePolicy, always
    local). A local job's parties put the coordinator first among its replicas.
    """
    replica_nodes = draws.replica_sets(seed, nodes, replicas, first, count, ring)
    if coordinator == "random":
        coord = draws.coordinators(seed, nodes, first, count)
    elif coordinator == "replica":
        coord = replica_nodes[:, 0].copy()
    else:
        raise ConfigError(f"coordinator {coordinator!r}; use 'random' or 'replica'")
    match = replica_nodes == coord[:, None]
    local = match.any(axis=1)
    # the coordinator's own replica becomes replica 0; the others keep their order
    order = np.argsort(~match, axis=1, kind="stable")
    replica_nodes = np.take_along_axis(replica_nodes, order, axis=1)
    parties = np.column_stack([np.full(count, nodes, np.int64), coord, replica_nodes])
    return parties, local


def read_law(data, digest):
    """The law of a read's replica steps (``replica_read``): per read its data read
    (the first replica asked) from ``data``, the digest reads (the others) from
    ``digest``; both frozen scipy.stats distributions."""
    def law(generator, shape):
        out = np.empty(shape)
        out[:, :1] = np.reshape(data.rvs(size=(shape[0], 1), random_state=generator),
                                (shape[0], 1))
        if shape[1] > 1:
            out[:, 1:] = np.reshape(digest.rvs(size=(shape[0], shape[1] - 1),
                                               random_state=generator),
                                    (shape[0], shape[1] - 1))
        return out
    return law


def _node_hops(template: Template) -> dict:
    """Per hop step between two nodes (not the client machine's), the parties at its
    two ends."""
    succ = template.successors()
    ends = {}
    for i, op in enumerate(template.ops):
        if op.kind == "hop" and op.after and succ[i]:
            a = template.ops[op.after[0]].party
            b = template.ops[succ[i][0]].party
            if a is not None and b is not None and a > 0 and b > 0:
                ends[i] = (a, b)
    return ends


def _datacentre_hops(times, templates, classes, parties, datacentres, nodes, used,
                     seed, first):
    """Give each hop between two nodes its data centres' law, in place."""
    centre = np.asarray(datacentres.nodes)
    if len(centre) != nodes:
        raise ConfigError(f"[datacentres] nodes lists {len(centre)} nodes but the "
                          f"cluster has {nodes}; give one per node")
    count = len(classes)
    hops = {c: _node_hops(templates[c]) for c in used}
    width = max([len(h) for h in hops.values()] + [1])
    drawn = {pair: draws.draw(seed, ("step", f"hop {pair[0]}-{pair[1]}"), law, first,
                              count, width)
             for pair, law in datacentres.hops.items()}
    for c in used:
        rows = np.flatnonzero(classes == c)
        for h, (step, (a, b)) in enumerate(sorted(hops[c].items())):
            x, y = centre[parties[rows, a]], centre[parties[rows, b]]
            low, high = np.minimum(x, y), np.maximum(x, y)
            for (p, q), values in drawn.items():
                hit = rows[(low == p) & (high == q)]
                times[hit, step] = values[hit, h]


def cassandra_jobs(nodes: int, replicas: int, quorum: int, laws: dict, seed: int,
                   count: int, first: int = 0, writes: float = 0.0,
                   coordinator: str = "random", ring: bool = True,
                   purging: bool = False, read_quorum: int | None = None,
                   client_hop=None, local: dict | None = None, datacentres=None):
    """Jobs ``first..first+count-1`` of a Cassandra workload, a fraction ``writes`` of
    them writes (drawn per job), the others reads.

    Returns ``(templates, classes, parties, durations)`` for `engine.simulate`. Classes:
    0 remote read, 1 local read, 2 remote write, 3 local write. All classes take their
    step times from the same rows (a local job uses the first values of each kind).

    ``read_quorum``: None, a read forks to all replicas and joins at ``quorum`` like a
    write; a whole ``k``, a read asks only ``k`` replicas (the coordinator's own first:
    one data read and k - 1 digest reads, see ``laws['replica_read']``) and answers
    when all k have, as Cassandra reads; it takes the first of the values drawn for a
    read that asks all replicas, so the read level changes no drawn value (common
    random numbers across levels). ``client_hop``: a law for
    the two client-coordinator hops instead of ``laws['hop']`` (purpose
    ``('step', 'client_hop')``). ``local``: per step kind a law for the coordinator's
    own replica task of a local job (e.g. ``{'replica_write': law}``, purpose
    ``('step', 'local_<kind>')``). ``datacentres``: anything with ``nodes`` (per node
    its data centre) and ``hops`` (``{(a, b): law}``, ``a <= b``), e.g.
    `forkjoin_sim.cassandra.datacentres.DataCentres`; a hop between two nodes of data
    centres ``a`` and ``b`` then takes the pair's law (purpose ``('step', 'hop a-b')``),
    or ``laws['hop']`` for a pair of one data centre the table leaves out.
    """
    _check_quorum(nodes, replicas, quorum)
    if not 0 <= writes <= 1:
        raise ConfigError(f"writes={writes}; give the fraction of writes, 0 <= writes <= 1")
    if read_quorum is not None and not 1 <= read_quorum <= replicas:
        raise ConfigError(f"read_quorum={read_quorum} with replicas={replicas}; use "
                          "1 <= read_quorum <= replicas")
    full = [cassandra_read(replicas, quorum, False, purging),
            cassandra_read(replicas, quorum, True, purging),
            cassandra_write(replicas, quorum, False, purging),
            cassandra_write(replicas, quorum, True, purging)]
    templates = list(full)
    if read_quorum is not None:
        templates[:2] = [cassandra_read(read_quorum, read_quorum, where)
                         for where in (False, True)]
    parties, is_local = cassandra_parties(nodes, replicas, seed, first, count,
                                          coordinator, ring)
    is_write = draws.draw(seed, "class", lambda g, shape: g.random(shape), first,
                          count)[:, 0] < writes
    classes = 2 * is_write + is_local
    used = [c for c in range(4) if (c >= 2) == (writes > 0) or (c < 2) == (writes < 1)]
    widths = {}
    for c in used:
        for kind in full[c].kinds:
            widths[kind] = max(widths.get(kind, 0), full[c].width(kind))
    values, offsets = draws.step_values(laws, widths, seed, first, count)
    times = np.zeros((count, max(len(t.ops) for t in templates)))
    for c in used:
        rows = classes == c
        columns = draws.columns(templates[c], offsets)
        times[rows, :len(columns)] = np.take(values[rows], columns, axis=1)
    if client_hop is not None:
        hops = draws.draw(seed, ("step", "client_hop"), client_hop, first, count, 2)
        for c, template in enumerate(templates):
            rows = classes == c
            times[rows, 1] = hops[rows, 0]
            times[rows, len(template.ops) - 2] = hops[rows, 1]
    if datacentres is not None:
        _datacentre_hops(times, templates, classes, parties, datacentres, nodes, used,
                         seed, first)
    for kind, law in (local or {}).items():
        own = draws.draw(seed, ("step", f"local_{kind}"), law, first, count)[:, 0]
        for c in (1, 3):
            steps = [i for i, op in enumerate(templates[c].ops) if op.kind == kind]
            if steps:
                rows = classes == c
                times[rows, steps[0]] = own[rows]
    return templates, classes.astype(np.int64), parties, times


def _one_step_template(tasks: int, quorum: int) -> Template:
    ops = [Op("service", party=i, stage="cores") for i in range(tasks)]
    ops.append(Op("join", tuple(range(tasks)), need=quorum))
    return Template(tuple(ops), parties=tasks, name=f"one step ({tasks},{quorum})")


def one_step_jobs(nodes, service, quorum):
    """A one-step path as steps: the run stack's arrays (per job its tasks' nodes,
    -1 for none, their service times, its quorum; a `SamplePath` or the fused kernel's
    `TwinPath`) as ``(templates, classes, parties, durations)`` with one template of
    ``m`` tasks and a zero join at ``k`` per distinct (m, k); run it on
    ``one_step_layout(node_count)``."""
    nodes = np.asarray(nodes)
    service = np.asarray(service, np.float64)
    quorum = np.asarray(quorum, np.int64)
    present = nodes >= 0
    # present tasks first, in column order, so task i of a job is its party i
    order = np.argsort(~present, axis=1, kind="stable")
    nodes = np.take_along_axis(nodes, order, axis=1)
    service = np.take_along_axis(service, order, axis=1)
    tasks = present.sum(axis=1)
    if (tasks < 1).any() or (quorum < 1).any() or (quorum > tasks).any():
        raise ConfigError("every job needs 1 <= quorum <= its tasks; check the path")
    shapes, classes = np.unique(np.column_stack([tasks, quorum]), axis=0,
                                return_inverse=True)
    templates = [_one_step_template(int(m), int(k)) for m, k in shapes]
    width = nodes.shape[1]
    parties = np.where(np.arange(width) < tasks[:, None], nodes, 0).astype(np.int64)
    durations = np.zeros((len(nodes), width + 1))
    durations[:, :width] = np.where(np.arange(width) < tasks[:, None], service, 0.0)
    return templates, classes.reshape(-1).astype(np.int64), parties, durations


def one_step_layout(nodes: int) -> Layout:
    """``nodes`` single-server FCFS nodes, one stage ``cores`` each."""
    return Layout(names=tuple(f"node{i}" for i in range(nodes)), servers=(1,) * nodes,
                  stages=("cores",), table=[[i] for i in range(nodes)])


def one_step_arrays(compiled: Compiled, classes, station, durations, servers):
    """``(nodes, service, quorum)`` for the fast engine if resolved arrays (those of
    `engine.run_arrays`) are one-step, else None.

    One-step: in every class used, all steps but the last are tasks with no
    predecessors at single-server stations, and the last is a non-purging join of
    them all that is a plain delay (not an ordered hop) of duration 0. ``nodes`` and
    ``service`` are ``station`` and ``durations`` themselves (not copies): the joins
    and a narrower class's padding are delays, station -1, which the fast engine
    reads as no task.
    """
    classes = np.asarray(classes)
    used = np.unique(classes) if len(compiled.steps) > 1 else np.zeros(1, np.int64)
    steps = compiled.steps
    for c in used:
        tasks = steps[c] - 1
        if (tasks < 1 or compiled.roots_ptr[c, 1] != tasks
                or compiled.purge_ptr[c, -1] != 0):
            return None
    width = compiled.width
    if len(used) == 1:
        tasks = int(steps[used[0]]) - 1
        if (np.any(station[:, tasks] != -1) or np.any(durations[:, tasks] != 0)
                or np.any(station[:, :tasks] < 0)):
            return None
        quorum = np.full(len(station), compiled.need[used[0], tasks], np.int32)
    else:
        last = steps[classes] - 1
        rows = np.arange(len(station))
        if np.any(station[rows, last] != -1) or np.any(durations[rows, last] != 0) \
                or np.any((station[:, :width - 1] < 0)
                          & (np.arange(width - 1) < last[:, None])):
            return None
        quorum = compiled.need[classes, last].astype(np.int32)
    servers = np.asarray(servers)
    if np.any(servers != 1) and np.any(servers[station[station >= 0]] != 1):
        return None
    return station, durations, quorum


def one_step_path(templates, layout: Layout, parties, durations, classes=None):
    """The accelerated engines' arrays of a steps model that is one-step, else None.

    One-step: every template is tasks at stations with no predecessors and then one
    non-purging join (a delay) after all of them, the join's durations are 0, and
    every station a task uses has one server. Then the model is the run stack's
    fork-join path and the fast (Lindley) engine, or the fused kernel, computes it
    exactly: returns ``(nodes, service, quorum)`` with the stations as nodes (-1 for
    no task; one column per step, the join's included), for
    `forkjoin_sim.engines.FastEngine` (``len(layout.servers)`` nodes).
    `engine.simulate` takes this path by itself (`one_step_arrays`).
    """
    if isinstance(templates, Template):
        templates = [templates]
    templates = list(templates)
    parties = np.asarray(parties, np.int64)
    durations = np.asarray(durations, np.float64)
    jobs = len(parties)
    classes = (np.zeros(jobs, np.int64) if classes is None
               else np.asarray(classes, np.int64))
    compiled = compile_templates(templates)
    station = np.full((jobs, compiled.width), -1, np.int32)
    for c, template in enumerate(templates):
        rows = np.flatnonzero(classes == c)
        station[rows, :len(template.ops)] = stations_of(
            template, layout, parties[rows, :template.parties])
    return one_step_arrays(compiled, classes, station, durations, layout.servers)
