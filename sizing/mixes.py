"""Read/write mixes of a calibrated Cassandra model: reads and writes in the same queues.

A closed-network model (`sizing.network_model.NetworkModel`) is fitted on read-only and
write-only runs, one class of request at a time. A mix of reads at quorum ``R`` and
writes at quorum ``W`` puts both classes in the same node queues: a write waits behind
reads' coordinator work and digest reads, a read behind mutations. `predict_mix` runs
the model's demands on the steps engine (`forkjoin_sim.steps`) as a closed loop of
``threads`` clients issuing reads with probability ``read_fraction``, writes otherwise.
A model of the ``lanes`` structures (every structure whose node is separate lanes,
``lanes`` and its variants, which the steps engine has no station for) mixes by the closed
network's own two classes in one loop instead (`sizing.closed_network`, docs/model.md
section 11), in data centres too where the model places its nodes there; the simulated
structures mix in one data centre only. `weighted_average` is Karpenko et
al.'s eqs. 13-15 on the same model (the mix's latency
is ``P_read * read curve(R) + P_write * write curve(W)`` at the same threads), which
ignores that interference.

How the model's demands (`sizing.closed_network.DEMANDS`, ms) become step durations of
`forkjoin_sim.steps.cassandra_jobs` (one node station of ``cores`` servers per node,
the client machine a station of its own):

==================  ==============================================================
``client``          two ``client`` steps (before and after), exponential, half each,
                    on the client machine: ``client_cores`` servers in the structures
                    with a client station (``shared-digest-client``, ``client-bound``,
                    ``random-hops``), else ``threads`` servers (a pure delay)
``hop_client``      both client-coordinator hops, constant (``client_hop``)
``hop_replica``     every coordinator-replica hop, constant; exponential-like with
                    the branch's shape (below) in ``random-hops``, ``digest-random-hops``
``coordinate``      ``coordinate`` (before the fork) and ``respond`` (at the join),
                    exponential, half each, on the coordinator's node station
``message``         exponential work per message (4 per remote branch), folded into
                    the queued step of the same node it belongs to (``messages=
                    "folded"``, the default): the coordinator's sends into
                    ``coordinate``, its receives into ``respond``, a replica's receive
                    and send into its work; the message steps themselves take no time
                    and do not queue. ``messages="queued"``: each message is its own
                    step in the node's line, as the structure's text says
``work``            a read's data read (``replica_write``: ``work * mutation_ratio``),
                    on the replica's node station, with the branch's shape: mean
                    ``work`` (or the mutation's), coefficient of
                    variation ``branch_cv`` (exponential at 1; below 1 the MVA's
                    mixed Erlang, `sizing.closed_network.mixed_erlang`; above 1
                    its balanced two-phase hyperexponential)
``digest_ratio``    digest reads (a read's replicas after the first) of mean
                    ``digest_ratio * work``, the same shape, in the structures that
                    read digests (``shared-digest*``, ``client-bound``, ``*random-hops``):
                    a read asks ``R`` replicas and answers when all have
                    (``read_quorum=R``); in ``shared`` and ``replica-queues`` it asks
                    all replicas (data reads) and answers at the ``R``-th
``client_outside``  (``client-bound``, ``random-hops``) one more client-machine step
                    after the answer, exponential, outside the measured latency: the
                    client issues its next request when it ends
``branch_cv``       the shape above
==================  ==============================================================

``replica-queues``: only replica work queues (a node station of ``cores`` servers for
the read and mutation stages); coordinator and response steps run on a station with a
server for every step that can be there at once (a delay). Everything else as in
``shared``.

Why fold the messages: the engine's stations are FCFS, so every visit waits the whole
line however small its work, while the MVA's residence of a visit is its own work
times the station's stretch (a tiny message waits a tiny time). A remote branch makes 4
message visits besides its work, so with queued messages a write at ALL (7 visits in a
row) waits more than twice as long as a read at ONE (3 visits) in the same line: in a
mix the reads and writes then split the latency by their counts of visits, not by
their work. The pure runs cannot tell these apart (a saturated closed loop's latency
is threads / throughput either way); folding keeps every node's load and the MVA's
pure predictions (tests/test_mixes.py), ``"queued"`` shows how far the split moves.
The same holds for the client machine of ``client-bound`` and ``random-hops``: its
work outside the latency is a visit of its own, which waits as long as the request's
visits, where the MVA gives it a wait in proportion to its work; once the client
machine saturates, the simulated pure latency is then well above the MVA's (anchoring
puts the pure curves back on the model's).

What is approximated: the MVA lumps a branch's residence (its queueing included) into
one random time of coefficient of variation ``branch_cv``; here only the service times
have that shape and the queues add their own variation (and in the random-hops
structures each hop and the work are separate variables of that shape, so a branch
varies less than the MVA's one variable). Coordinator, message and client work are
exponential (the MVA's product-form stations). The steps engine is exact for that
network, so at ``read_fraction`` 1 or 0 it differs from the MVA by the MVA's own
approximation (Seidmann, Schweitzer, the order-statistic join; about 10%, see
tests/test_closed_network.py) and by the fit's extreme demands.

``anchored`` (the default): each operation's simulated mean is multiplied by the model's
anchored prediction of the pure workload (``model.predict``: read-only at ``R``,
write-only at ``W``, same threads) over the same engine's pure run (same seed, so the
same coordinators and step times: common random numbers). The simulation then says only
how much the mix moves each curve, and the calibrated model (with its anchors on the
measured rows) where the curve sits; at ``read_fraction`` 1 the read latency is exactly
the model's read-only prediction. The interval is the batch-means interval of the
paired per-batch ratios (simulation error only; it does not hold the model's posterior
spread, which ``NetworkModel.interval`` gives for the pure curves).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np
from scipy import stats

from forkjoin_sim.errors import ConfigError
from forkjoin_sim.measure.statistics import Interval, t_interval
from forkjoin_sim.steps import Closed, cassandra_jobs, cassandra_layout, cassandra_read, \
    simulate
from forkjoin_sim.steps.builders import STAGES, read_law
from forkjoin_sim.steps.graph import Layout, Op, Template
from sizing.closed_network import DEMANDS, LAYOUTS, mixed_erlang
from sizing.columns import SIMULATED_MAX_THREADS
from sizing.network_fit import demands_of

#: Structures whose reads ask ``R`` replicas (one data read, digests) and wait for all.
DIGEST_STRUCTURES = tuple(n for n, s in LAYOUTS.items() if s.digest_reads)
#: Structures with the client machine as a queue of ``client_cores`` servers.
CLIENT_STRUCTURES = tuple(n for n, s in LAYOUTS.items() if s.client_station)
#: Structures with client work outside the measured latency.
OUTSIDE_STRUCTURES = tuple(n for n, s in LAYOUTS.items() if s.outside_queued)
#: How message work is simulated (module docstring).
MESSAGES = ("folded", "queued")
#: Structures whose coordinator-replica hops are random.
RANDOM_HOP_STRUCTURES = tuple(n for n, s in LAYOUTS.items() if s.random_hops)
#: Structures the steps engine has no stations for (a node of separate lanes, one per
#: request at random): their mixes are the closed network's own two-class loop
#: (`sizing.closed_network`, checked against the steps engine for shared nodes).
ANALYTIC_STRUCTURES = tuple(n for n, s in LAYOUTS.items() if s.lanes)


def strong_pairs(replicas: int) -> list[tuple[int, int]]:
    """The strong (read quorum, write quorum) pairs with ``R + W = replicas + 1``, reads
    from 1 up (for 3 replicas: 1R-3W, 2R-2W, 3R-1W)."""
    if replicas < 1:
        raise ConfigError(f"replicas={replicas}; use replicas >= 1")
    return [(r, replicas + 1 - r) for r in range(1, replicas + 1)]


@dataclass(frozen=True)
class MixPrediction:
    """Mean latency (ms) of the mix's reads, writes and of all its operations, and its
    throughput (operations/s), each an `Interval` (95% unless asked otherwise); NaN
    for a class the mix does not have. ``operations``: simulated operations (0 for
    `weighted_average`)."""

    read_fraction: float
    threads: int
    read_level: int
    write_level: int
    read: Interval
    write: Interval
    overall: Interval
    throughput: Interval
    operations: int = 0

    def as_dict(self) -> dict:
        """Flat keys: ``read_ms``, ``read_low_ms``, ``read_high_ms`` and so on."""
        out = dict(read_fraction=self.read_fraction, threads=self.threads,
                   read_level=self.read_level, write_level=self.write_level)
        for name in ("read", "write", "overall"):
            value = getattr(self, name)
            out.update({f"{name}_ms": value.mean, f"{name}_low_ms": value.low,
                        f"{name}_high_ms": value.high})
        out.update(throughput=self.throughput.mean, throughput_low=self.throughput.low,
                   throughput_high=self.throughput.high, operations=self.operations)
        return out


_NONE = Interval(float("nan"), float("nan"), float("nan"))


def _branch_law(mean: float, cv: float):
    """A law of mean ``mean`` and coefficient of variation ``cv`` shaped as the MVA's
    branch time (`sizing.closed_network`): exponential, a mixed Erlang below 1 (as
    the MVA's, at least `sizing.closed_network.SMALLEST_CV`), balanced-means two-phase
    hyperexponential above 1."""
    if mean <= 0:
        return 0.0
    if cv == 1.0:
        return stats.expon(scale=mean)
    if cv < 1.0:
        phases, fewer, rate = mixed_erlang(cv)

        def erlang(generator, shape):
            count = phases - (generator.random(shape) < fewer)
            return generator.gamma(count, mean / rate)
        return erlang
    c2 = cv * cv
    fast = 0.5 * (1.0 + np.sqrt((c2 - 1.0) / (c2 + 1.0)))
    means = np.array([mean / (2.0 * fast), mean / (2.0 * (1.0 - fast))])

    def law(generator, shape):
        phase = generator.random(shape) >= fast
        return generator.exponential(1.0, shape) * means[phase.astype(np.int64)]
    return law


def _expon(mean: float):
    return stats.expon(scale=mean) if mean > 0 else 0.0


def _laws(demands: np.ndarray, structure: str) -> tuple[dict, object, object]:
    """Step laws of ``cassandra_jobs`` (``laws``, ``client_hop``) and the law of the
    work outside the latency (None where the structure has none)."""
    d = dict(zip(DEMANDS, map(float, demands)))
    cv = d["branch_cv"]
    work = _branch_law(d["work"], cv)
    digest = d["digest_ratio"] if structure in DIGEST_STRUCTURES else 1.0
    hop = (_branch_law(d["hop_replica"], cv) if structure in RANDOM_HOP_STRUCTURES
           else d["hop_replica"])
    # read_law calls rvs: a constant or callable law gets one
    data = _frozen(work)
    laws = {"client": _expon(d["client"] / 2), "hop": hop,
            "coordinate": _expon(d["coordinate"] / 2),
            "respond": _expon(d["coordinate"] / 2), "message": _expon(d["message"]),
            "replica_write": _branch_law(d["work"] * d["mutation_ratio"], cv),
            "replica_read": read_law(data, _frozen(_branch_law(d["work"] * digest, cv)))}
    outside = (_expon(d["client_outside"]) if structure in OUTSIDE_STRUCTURES
               else None)
    return laws, d["hop_client"], outside


class _Drawn:
    """A law ``(generator, shape) -> array`` with the ``rvs`` of a frozen distribution
    (what `read_law` calls)."""

    def __init__(self, law):
        self.law = law

    def rvs(self, size, random_state):
        return self.law(random_state, size)


def _frozen(law):
    """``law`` with an ``rvs`` (a constant becomes a function)."""
    if isinstance(law, float):
        value = law
        return _Drawn(lambda generator, shape: np.full(shape, value))
    return law if hasattr(law, "rvs") else _Drawn(law)


def _layout(structure: str, nodes: int, cores: int, client_cores: int, threads: int,
            replicas: int, queued_messages: bool = True) -> Layout:
    """Per node a station of ``cores`` servers, and a delay station (a server for every
    step that can be there at once) for the stages that do not queue: coordinator,
    messages and response in ``replica-queues``, messages unless ``queued_messages``;
    the client machine last."""
    client = client_cores if structure in CLIENT_STRUCTURES else threads
    unqueued = set() if LAYOUTS[structure].queue_coordinator \
        else {"native", "messaging", "response"}
    if not queued_messages:
        unqueued.add("messaging")
    if not unqueued:
        return cassandra_layout(nodes, "shared", cores=cores, client_cores=client)
    free = threads * (4 * replicas + 2)
    names, servers, table = [], [], []
    for i in range(nodes):
        names += [f"node{i}.cores", f"node{i}.delay"]
        servers += [cores, free]
        table.append([2 * i + 1 if s in unqueued else 2 * i for s in STAGES] + [-1])
    table.append([-1] * len(STAGES) + [len(names)])
    return Layout(tuple(names + ["client"]), tuple(servers + [client]),
                  STAGES + ("client",), table)


def _with_outside(template: Template) -> Template:
    """``template`` with one more client-machine step after its answer."""
    ops = template.ops + (Op("outside", (len(template.ops) - 1,), party=0,
                             stage="client"),)
    return Template(ops, parties=template.parties, name=template.name + " + outside")


def check_threads(model, threads: int) -> None:
    """Refuse more client threads than ``model``'s mix takes: a structure without
    lanes is simulated, each thread a client of its own (`SIMULATED_MAX_THREADS`)."""
    structure = model.fit.structure
    if structure not in ANALYTIC_STRUCTURES and threads > SIMULATED_MAX_THREADS:
        raise ConfigError(f"threads={threads:,}: a mix of structure {structure} is "
                          "simulated, each thread a client of its own, and takes at most "
                          f"{SIMULATED_MAX_THREADS:,}; a model of structure lanes (the "
                          "default) takes any count")


def _model(model, seed):
    """A `NetworkModel`, `ClusterFit` or model file's path as its `NetworkModel`
    (`sizing.cluster_calibration.as_network_model`), after the run's ``seed`` is
    checked as simulate checks it."""
    from forkjoin_sim.randomness.streams import as_seed_sequence
    from sizing.cluster_calibration import as_network_model

    as_seed_sequence(seed)
    return as_network_model(model)


def _level(level, replicas: int, name: str) -> int:
    """A level given as its quorum or its name (QUORUM, ALL) as its quorum."""
    from forkjoin_sim.cassandra.model import consistency_quorum

    if isinstance(level, str):
        try:
            return consistency_quorum(level.strip().upper(), replicas)
        except (ConfigError, ValueError) as exc:
            raise ConfigError(f"{name}={level!r}: {exc}") from None
    return level


def _check(model, read_fraction, threads, read_level, write_level, operations, warmup,
           batches):
    if isinstance(threads, bool) or not isinstance(threads, numbers.Real):
        raise ConfigError(f"threads={threads!r}; give one whole number of client "
                          "threads (call once per thread count)")
    if not 0.0 <= read_fraction <= 1.0:
        raise ConfigError(f"read_fraction={read_fraction}; give the share of reads, "
                          "0 <= read_fraction <= 1")
    if int(threads) != threads or threads < 1:
        raise ConfigError(f"threads={threads}; give a whole number of client threads "
                          ">= 1")
    check_threads(model, threads)
    for name, level in (("read_level", read_level), ("write_level", write_level)):
        if int(level) != level or not 1 <= level <= model.replicas:
            raise ConfigError(f"{name}={level} with replicas={model.replicas}; use "
                              f"1 <= {name} <= {model.replicas}")
    if not 0.0 <= warmup < 1.0:
        raise ConfigError(f"warmup={warmup}; give the share of operations dropped, "
                          "0 <= warmup < 1")
    kept = int(operations) - int(round(warmup * operations))
    if kept < 20 * batches:
        raise ConfigError(f"operations={operations} leave {kept} after the warm-up for "
                          f"{batches} batches; give at least {20 * batches} kept "
                          "operations")


def _fold_messages(templates, classes, times) -> None:
    """Move each message step's work onto the queued step of the same node it belongs
    to, in place: the coordinator's sends onto ``coordinate``, its receives onto
    ``respond``, a replica's receive and send onto its work."""
    for c, template in enumerate(templates):
        rows = np.flatnonzero(classes == c)
        if not rows.size:
            continue
        ops = template.ops
        kinds = [op.kind for op in ops]
        coordinate, respond = kinds.index("coordinate"), kinds.index("respond")
        work = {op.party: i for i, op in enumerate(ops)
                if op.kind.startswith("replica_")}
        for i, op in enumerate(ops):
            if op.kind != "message":
                continue
            if op.party == 1:
                target = coordinate if op.after == (coordinate,) else respond
            else:
                target = work[op.party]
            times[rows, target] += times[rows, i]
            times[rows, i] = 0.0


def _run(model, read_fraction, threads, read_level, write_level, operations, seed,
         think_ms, messages, nodes):
    """One closed-loop run: per operation (in issue order) its latency (ms), whether it
    is a read, and its cycle (latency plus work outside it)."""
    fit = model.fit
    structure = fit.structure
    laws, client_hop, outside = _laws(demands_of(fit.point), structure)
    digest = structure in DIGEST_STRUCTURES
    templates, classes, parties, times = cassandra_jobs(
        nodes, model.replicas, write_level, laws, seed=seed, count=operations,
        writes=1.0 - read_fraction, read_quorum=read_level if digest else None,
        client_hop=client_hop)
    templates = list(templates)
    if not digest:
        # reads ask every replica and answer at the R-th; same steps as the writes'
        templates[:2] = [cassandra_read(model.replicas, read_level, local)
                         for local in (False, True)]
    if messages == "folded":
        _fold_messages(templates, classes, times)
    record = outside is not None
    if record:
        from forkjoin_sim.steps import draws

        extra = draws.draw(seed, ("step", "client_outside"), outside, 0, operations)[:, 0]
        times = np.column_stack([times, np.zeros(operations)])
        answer = np.array([len(t.ops) - 1 for t in templates])[classes]
        times[np.arange(operations), answer + 1] = extra
        templates = [_with_outside(t) for t in templates]
    layout = _layout(structure, nodes, fit.cores, fit.client_cores, int(threads),
                     model.replicas, messages == "queued")
    out = simulate(templates, layout, parties, times,
                   Closed(int(threads), np.full(operations, float(think_ms))),
                   classes=classes, record_steps=record)
    cycle = out.sojourn
    if record:
        latency = out.steps[np.arange(operations), answer] - out.start
    else:
        latency = cycle
    return latency, classes < 2, cycle


def _batched(values, mask, batches):
    """Per batch (consecutive operations) the mean of ``values`` where ``mask``."""
    sums = np.array([v.sum() for v in np.array_split(np.where(mask, values, 0.0),
                                                     batches)])
    counts = np.array([m.sum() for m in np.array_split(mask, batches)])
    if np.any(counts == 0):
        return None
    return sums / counts


def _interval(centre, per_batch, confidence):
    if per_batch is None:
        return _NONE
    return t_interval(float(centre), per_batch, confidence)


def predict_mix(model, read_fraction: float, threads: int, read_level: int,
                write_level: int, operations: int = 40_000, seed: int = 0,
                warmup: float = 0.2, batches: int = 20, confidence: float = 0.95,
                anchored: bool = True, think_ms: float = 0.0,
                messages: str = "folded", nodes: int | None = None) -> MixPrediction:
    """Mean latency of the reads (quorum ``read_level``), the writes (``write_level``)
    and all operations of a mix with a share ``read_fraction`` of reads, and its
    throughput, in a closed loop of ``threads`` clients on ``model``'s cluster.

    ``model``: a `sizing.network_model.NetworkModel`, a `ClusterFit` or a model file's
    path; the levels as quorums or names (``"QUORUM"``). ``operations`` are simulated; the
    first ``warmup`` of them are dropped, the rest cut into ``batches`` consecutive
    batches for the intervals. ``anchored``: scaled to the model's pure-workload
    predictions (module docstring); else the simulation's own means. ``messages``:
    ``"folded"`` or ``"queued"`` (module docstring). ``think_ms``: each client's pause
    between an answer and its next request (the calibrated rows have none).
    ``nodes``: a cluster of that many nodes (default the fitted size), each keeping
    its fitted work (`NetworkModel.size_asked`).
    """
    model = _model(model, seed)
    read_level = _level(read_level, model.replicas, "read_level")
    write_level = _level(write_level, model.replicas, "write_level")
    _check(model, read_fraction, threads, read_level, write_level, operations, warmup,
           batches)
    if messages not in MESSAGES:
        raise ConfigError(f"messages={messages!r}; use one of {', '.join(MESSAGES)}")
    if not think_ms >= 0:
        raise ConfigError(f"think_ms={think_ms}; give a pause >= 0")
    nodes = model.size_asked(nodes)
    if model.fit.structure in ANALYTIC_STRUCTURES:
        return _analytic_mix(model, read_fraction, threads, read_level, write_level,
                             anchored, think_ms, confidence, nodes, seed)
    if model.fit.geography is not None:
        raise ConfigError("the model places its nodes in data centres (--datacentres, "
                          "or rows that looked wide-area); mixes of its structure "
                          f"{model.fit.structure!r} are simulated in one data centre "
                          "only, so calibrate with the default structure (lanes), "
                          "whose two-class loop places them, or predict each operation "
                          "and level with cassandra predict --model")
    latency, is_read, cycle = _run(model, read_fraction, threads, read_level,
                                   write_level, operations, seed, think_ms, messages,
                                   nodes)
    drop = int(round(warmup * operations))
    latency, is_read, cycle = latency[drop:], is_read[drop:], cycle[drop:]
    per_class = {}
    for name, mask, share in (("read", is_read, read_fraction),
                              ("write", ~is_read, 1.0 - read_fraction)):
        if share == 0 or not mask.any():
            per_class[name] = None
            continue
        per_class[name] = (float(latency[mask].mean()), _batched(latency, mask, batches))
    if anchored:
        per_class = _anchor(model, per_class, threads, read_level, write_level,
                            operations, seed, warmup, batches, think_ms, messages, nodes)
    read = (_interval(*per_class["read"], confidence) if per_class["read"] else _NONE)
    write = (_interval(*per_class["write"], confidence) if per_class["write"]
             else _NONE)
    # all operations: the shares' expectation, so the drawn mix's noise stays out
    parts = [(share, per_class[name]) for name, share in
             (("read", read_fraction), ("write", 1.0 - read_fraction)) if share > 0]
    centre = sum(share * value[0] for share, value in parts)
    per_batch = (None if any(value[1] is None for _, value in parts)
                 else sum(share * value[1] for share, value in parts))
    overall = _interval(centre, per_batch, confidence)
    if anchored:
        # as NetworkModel.predict: threads / (latency + the time outside it)
        throughput = _closed_throughput(threads, overall, think_ms + waits_ms(
            model, read_fraction, threads, read_level, write_level, nodes))
    else:
        # Little's law on the clients' cycles
        cycles = np.array([c.mean() for c in np.array_split(cycle, batches)])
        ci = t_interval(float(cycle.mean()) + think_ms, cycles + think_ms, confidence)
        throughput = Interval(1000.0 * threads / ci.mean, 1000.0 * threads / ci.high,
                              1000.0 * threads / ci.low)
    return MixPrediction(float(read_fraction), int(threads), int(read_level),
                         int(write_level), read, write, overall, throughput,
                         int(operations))


def _two_classes(model, read_fraction, threads, read_level, write_level,
                 nodes) -> dict:
    """The read row and the write row of one mixed closed run (no think time), as
    `sizing.closed_network.predict` takes them."""
    return dict(threads=np.full(2, float(threads)), think_ms=np.zeros(2),
                nodes=np.full(2, nodes), replicas=np.full(2, model.replicas),
                quorum=np.array([read_level, write_level]),
                other_quorum=np.array([write_level, read_level]),
                write=np.array([False, True]), reads=np.full(2, float(read_fraction)))


def waits_ms(model, read_fraction, threads, read_level, write_level,
             nodes=None) -> float:
    """A mixed closed run's mean time per request outside its measured latency: the
    clients' work between requests that the model read off the fitted rows'
    throughputs (`NetworkModel.with_outside`), each operation's by its share; 0 for a
    model fitted without throughputs. A cycle is this, the think time and the
    latency."""
    rows = _two_classes(model, read_fraction, threads, read_level, write_level,
                        model.size_asked(nodes))
    outside = model.with_outside(rows)["think_ms"]
    return float(sum(share * outside[i] for i, share in
                     enumerate((read_fraction, 1.0 - read_fraction)) if share > 0))


def _closed_throughput(threads, overall: Interval, waits: float) -> Interval:
    """A closed loop's throughput (ops/s) by Little's law from its latency ``overall``
    (ms) and the time per request outside it (``waits``): the band's high latency is
    its low throughput."""
    scale = 1000.0 * threads
    return Interval(scale / (overall.mean + waits), scale / (overall.high + waits),
                    scale / (overall.low + waits))


def _analytic_mix(model, read_fraction, threads, read_level, write_level, anchored,
                  think_ms, confidence, nodes, seed) -> MixPrediction:
    """`predict_mix` by the closed network's two classes in one loop (no simulation):
    each operation's mean from the model (anchored as its pure rows are), its interval
    the model's posterior interval, throughput by Little's law as `predict_mix`'s."""
    rows = _two_classes(model, read_fraction, threads, read_level, write_level, nodes)
    timed = model.with_outside(rows)
    timed["think_ms"] = timed["think_ms"] + think_ms
    latency = model.fit.predict(timed)[0]
    if anchored:
        latency = latency * np.exp(model.anchors.correction(model.as_fitted(timed)))
    low, high = model.interval(rows, level=confidence, seed=seed)
    centre = model.predict(rows)[0]
    parts = {}
    for i, (name, share) in enumerate((("read", read_fraction),
                                       ("write", 1.0 - read_fraction))):
        parts[name] = (Interval(float(latency[i]), float(latency[i] * low[i] / centre[i]),
                                float(latency[i] * high[i] / centre[i]))
                       if share > 0 else _NONE)
    shares = [(read_fraction, parts["read"]), (1.0 - read_fraction, parts["write"])]
    overall = Interval(*(sum(share * getattr(value, end) for share, value in shares
                             if share > 0) for end in ("mean", "low", "high")))
    throughput = _closed_throughput(threads, overall, think_ms + waits_ms(
        model, read_fraction, threads, read_level, write_level, nodes))
    return MixPrediction(float(read_fraction), int(threads), int(read_level),
                         int(write_level), parts["read"], parts["write"], overall,
                         throughput, 0)


def _anchor(model, per_class, threads, read_level, write_level, operations, seed,
            warmup, batches, think_ms, messages, nodes):
    """Each class's (mean, per-batch means) times the model's pure prediction over the
    same engine's pure run (paired by batch)."""
    out = {}
    drop = int(round(warmup * operations))
    for name, fraction in (("read", 1.0), ("write", 0.0)):
        if per_class[name] is None:
            out[name] = None
            continue
        latency, _, _ = _run(model, fraction, threads, read_level, write_level,
                             operations, seed, think_ms, messages, nodes)
        latency = latency[drop:]
        pure_mean = float(latency.mean())
        pure = np.array([b.mean() for b in np.array_split(latency, batches)])
        rows = dict(threads=np.array([float(threads)]), think_ms=np.array([think_ms]),
                    nodes=np.array([nodes]), replicas=np.array([model.replicas]),
                    quorum=np.array([read_level if name == "read" else write_level]),
                    write=np.array([name == "write"]))
        target = float(model.predict(rows)[0][0])
        mean, per_batch = per_class[name]
        out[name] = (target * mean / pure_mean,
                     None if per_batch is None else target * per_batch / pure)
    return out


def pure_rows(model, threads, level, write: bool, nodes: int | None = None) -> dict:
    """Rows of ``model.predict``: a pure workload at ``level`` and each of ``threads``
    (on ``nodes`` nodes, default the fitted size)."""
    threads = np.atleast_1d(np.asarray(threads, float))
    n = len(threads)
    nodes = model.nodes if nodes is None else nodes
    return dict(threads=threads, think_ms=np.zeros(n), nodes=np.full(n, nodes),
                replicas=np.full(n, model.replicas), quorum=np.full(n, int(level)),
                write=np.full(n, bool(write)))


def weighted_averages(model, cases, level: float = 0.95, seed: int = 0,
                      samples: int = 256, nodes: int | None = None) -> list[MixPrediction]:
    """`weighted_average` of each ``(read_fraction, threads, read_level, write_level)``
    of ``cases``, with one posterior sample for all of them (``samples`` draws), on
    ``nodes`` nodes (default the fitted size)."""
    model = _model(model, seed)
    nodes = model.size_asked(nodes)
    cases = [(fraction, threads, _level(r, model.replicas, "read_level"),
              _level(w, model.replicas, "write_level"))
             for fraction, threads, r, w in cases]
    for fraction, threads, read_level, write_level in cases:
        _check(model, fraction, threads, read_level, write_level, 10 ** 6, 0.0, 2)
    keys = sorted({(False, int(t), int(r)) for _, t, r, _ in cases}
                  | {(True, int(t), int(w)) for _, t, _, w in cases})
    n = len(keys)
    rows = dict(threads=np.array([k[1] for k in keys], float), think_ms=np.zeros(n),
                nodes=np.full(n, nodes), replicas=np.full(n, model.replicas),
                quorum=np.array([k[2] for k in keys]),
                write=np.array([k[0] for k in keys]))
    mean = model.predict(rows)[0]
    low, high = model.interval(rows, level=level, samples=samples, seed=seed)
    pure = {key: Interval(float(m), float(a), float(b))
            for key, m, a, b in zip(keys, mean, low, high)}
    out = []
    for fraction, threads, read_level, write_level in cases:
        read = pure[(False, int(threads), int(read_level))]
        write = pure[(True, int(threads), int(write_level))]
        overall = Interval(*(fraction * read[i] + (1.0 - fraction) * write[i]
                             for i in range(3)))
        out.append(MixPrediction(float(fraction), int(threads), int(read_level),
                                 int(write_level), read if fraction > 0 else _NONE,
                                 write if fraction < 1 else _NONE, overall,
                                 _closed_throughput(threads, overall, waits_ms(
                                     model, fraction, threads, read_level,
                                     write_level, nodes))))
    return out


def weighted_average(model, read_fraction: float, threads: int, read_level: int,
                     write_level: int, level: float = 0.95, seed: int = 0,
                     samples: int = 256, nodes: int | None = None) -> MixPrediction:
    """Karpenko et al.'s eqs. 13-15 on ``model``: the mix's latency is
    ``read_fraction * read-only latency(R) + (1 - read_fraction) * write-only
    latency(W)`` at the same threads, each from ``model.predict`` (anchored), with
    ``model.interval``'s prediction intervals (the mix's interval is the same weighted
    sum of the bounds: the two curves share the posterior draws, so their errors move
    together). Reads and writes keep their pure latencies: no interference. The
    throughput is the closed loop's threads / (latency + `waits_ms`). ``nodes``: as
    `predict_mix`'s."""
    return weighted_averages(model, [(read_fraction, threads, read_level, write_level)],
                             level, seed, samples, nodes)[0]


def _widened(value: Interval, spread: Interval) -> Interval:
    """``value`` (a simulation interval) widened by the relative spread of ``spread``
    (the model's interval of the same quantity), the two added in quadrature on the
    log scale, each side on its own."""
    if not np.isfinite(value.mean):
        return value
    down = np.hypot(np.log(value.mean / value.low), np.log(spread.mean / spread.low))
    up = np.hypot(np.log(value.high / value.mean), np.log(spread.high / spread.mean))
    return Interval(value.mean, value.mean * float(np.exp(-down)),
                    value.mean * float(np.exp(up)))


def pair_name(read_level: int, write_level: int) -> str:
    """``"2R-2W"`` as in Karpenko et al."""
    return f"{read_level}R-{write_level}W"


def plan_notes(model, read_fraction: float, threads: int, rows,
               nodes: int | None = None) -> list[str]:
    """What a plan of `plan_strong_pairs` (``rows``) says besides its numbers, as
    `cassandra predict` says it of its query rows
    (`sizing.calibration_notes.prediction_notes`: parameters resting on the prior,
    an operation the model was fitted without, threads or throughput past the fitted
    rows; `sizing.calibration_notes.wide_intervals`: a pair's band wider than an
    order of magnitude; `NetworkModel.resized_note` for ``nodes`` other than the fitted
    size). The mixed run's read and write rows of every pair are asked together, each
    named "1R-3W reads" and so on."""
    import pandas as pd

    from sizing.calibration_notes import carried_pauses, prediction_notes, wide_intervals
    from sizing.network_model import rows_of_table

    nodes = model.size_asked(nodes)
    asked = [(r, w, op) for r, w in strong_pairs(model.replicas)
             for op, share in (("read", read_fraction), ("write", 1.0 - read_fraction))
             if share > 0]
    table = pd.DataFrame(dict(
        operation=[op for _, _, op in asked], threads=float(threads),
        quorum=[r if op == "read" else w for r, w, op in asked],
        other_quorum=[w if op == "read" else r for r, w, op in asked],
        reads=read_fraction, nodes=nodes, replicas=model.replicas))
    mrows = rows_of_table(table)
    throughput = model.predict(mrows)[1]
    names = [f"{pair_name(r, w)} {op}s" for r, w, op in asked]
    # a plan states its share of reads: no row asks how to give one
    notes = prediction_notes(model, mrows, throughput, lambda i: names[i],
                             mix_given=np.ones(len(names), bool))
    if nodes != model.nodes:
        notes.insert(0, model.resized_note(nodes))
    # a plan states no pause: its clients take the fitted rows', as predict's rows do
    paused = carried_pauses(model, mrows)
    if paused is not None:
        notes.append(f"the plan's clients pause as the fitted rows' did ({paused[1]} ms "
                     "between a reply and the next request)")
    wide = wide_intervals([row["overall_low_ms"] for row in rows],
                          [row["overall_high_ms"] for row in rows],
                          lambda i: rows[i]["pair"])
    tie = _tie(model, rows)
    return notes + [note for note in (wide, tie) if note is not None]


def _tie(model, rows) -> str | None:
    """The pairs whose ``overall_ms`` lies closer to the fastest's than the model
    comes to its own measured rows (the anchors' rms miss, as a factor): the model
    cannot rank them (None when there are none)."""
    best = next(row for row in rows if row["best"])
    factor = math.exp(model.anchors.spread)
    close = [row for row in rows
             if not row["best"] and row["overall_ms"] < factor * best["overall_ms"]]
    if not close:
        return None
    return (f"{', '.join(row['pair'] for row in close)} "
            f"{'is' if len(close) == 1 else 'are'} within "
            + ", ".join(f"{100 * (row['overall_ms'] / best['overall_ms'] - 1):.2g}%"
                        for row in close)
            + f" of the fastest, {best['pair']}: less than the model's miss of its own "
            f"measured rows ({100 * model.anchors.spread:.3g}% rms in log, as calibrate "
            f"reports it: a factor {factor:.4g}), so it cannot rank them: take either")


def plan_strong_pairs(model, read_fraction: float, threads: int,
                      operations: int = 40_000, seed: int = 0, samples: int = 256,
                      level: float = 0.95, nodes: int | None = None) -> list[dict]:
    """Each strong pair's predicted mix (`predict_mix`, anchored) at ``read_fraction``
    and ``threads`` on ``nodes`` nodes (default the fitted size; another keeps each
    node's fitted work, `NetworkModel.size_asked`), fastest (smallest mean latency of
    all operations) marked ``best``.

    Per pair: ``pair``, ``read_level``, ``write_level``; ``read_ms``, ``write_ms``,
    ``overall_ms`` with ``*_low_ms`` / ``*_high_ms``: prediction intervals at
    ``level``: of an analytic mix (the ``lanes`` structures), the model's posterior;
    of a simulated one, the simulation's batch-means interval and the model's own
    (``NetworkModel.interval`` of the pure curves, ``samples`` posterior draws) added
    in quadrature on the log scale; ``throughput`` (operations/s, closed loop: threads
    / (latency + `waits_ms`)) with ``throughput_low`` / ``throughput_high``;
    ``simulation_low_ms`` / ``simulation_high_ms``: a simulated mix's interval of
    ``overall_ms`` alone (the pairs share the model's posterior draws, so this is
    what tells them apart as far as the simulation goes; `plan_notes` names pairs
    closer than the model's own miss of its rows), an analytic
    mix's ``overall_ms`` (no simulation error); ``eqs_13_15_ms``:
    the weighted average of the model's pure curves (no interference); ``best``.
    ``model``: a `NetworkModel`, a `ClusterFit` or a model file's path.
    """
    model = _model(model, seed)
    _check(model, read_fraction, threads, 1, 1, operations, 0.0, 1)
    nodes = model.size_asked(nodes)
    pairs = strong_pairs(model.replicas)
    averages = weighted_averages(model, [(read_fraction, threads, r, w)
                                         for r, w in pairs], level, seed, samples,
                                 nodes)
    rows = []
    for (r, w), average in zip(pairs, averages):
        mix = predict_mix(model, read_fraction, threads, r, w, operations, seed,
                          confidence=level, nodes=nodes)
        # a simulated mix gains the model's spread; an analytic one has it already
        widened = _widened if mix.operations else (lambda value, spread: value)
        overall = widened(mix.overall, average.overall)
        throughput = _closed_throughput(threads, overall, waits_ms(
            model, read_fraction, threads, r, w, nodes))
        rows.append(dict(pair=pair_name(r, w), read_level=r, write_level=w,
                         **_flat("read", widened(mix.read, average.read)),
                         **_flat("write", widened(mix.write, average.write)),
                         **_flat("overall", overall),
                         throughput=throughput.mean,
                         throughput_low=throughput.low,
                         throughput_high=throughput.high,
                         # an analytic mix has no simulation error of its own
                         simulation_low_ms=mix.overall.low if mix.operations
                         else mix.overall.mean,
                         simulation_high_ms=mix.overall.high if mix.operations
                         else mix.overall.mean,
                         eqs_13_15_ms=average.overall.mean))
    best = min(range(len(rows)), key=lambda i: rows[i]["overall_ms"])
    for i, row in enumerate(rows):
        row["best"] = i == best
    return rows


def _flat(name: str, value: Interval) -> dict:
    return {f"{name}_ms": value.mean, f"{name}_low_ms": value.low,
            f"{name}_high_ms": value.high}
