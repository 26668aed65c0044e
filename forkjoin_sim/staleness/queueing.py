"""Staleness of partial quorums under load: replicated keys served by queues.

A replica group of ``replicas`` nodes holds ``keys`` keys (default one), every
replica node a replica of every key (e.g. 3 nodes with replication factor 3).
Operations arrive as a Poisson stream of ``rate`` per unit time (or from
closed-loop clients); each is a write with probability ``write_share``, else a read,
is for a key drawn uniformly or by a Zipf law of popularity, and is sent by its
coordinator to every replica. All keys share the nodes' queues; versions, commits
and staleness are per key.

- A write reaches replica i after a delay W_i, waits for and receives service at
  that replica, which then *applies* it (its state becomes max(state, version);
  versions are the writes' issue order, last writer wins); the acknowledgement
  reaches the coordinator A_i later. The write *commits* at its W-th ack.
- A read reaches replica i after R_i and is served there; the reply carries the
  replica's state when its service completes and reaches the coordinator S_i later.
  The read returns at its R-th reply, with the highest version among those R.

How a replica queues reads against writes is its node model
(``forkjoin_sim.nodes``): ``SharedQueue`` (one FCFS queue for both) or ``Stages``
(separate FCFS read and mutation stages, Cassandra's structure: a read overtakes
writes still waiting to be applied). Messages travel on independent delays (WARS)
or on ordered connections (``channels="fifo"``: each ordered pair of nodes delivers
in order); the coordinator is one node for all, a random node or a random replica
(token-aware), a hop from a node to itself taking no time. Sessions
(``Session``): a client writes then reads the key (read-your-writes) or reads it
twice (monotonic reads).

Per read (after the warm-up) the run records whether it returned at least the
latest version of its key committed before it was issued (*consistent*), how many
committed versions of that key newer than the one returned existed then (*versions
behind*), and the time since that latest committed version committed. With one key
every write makes every later read's target move; with many keys only the writes of
the read's own key do, so staleness falls with the number of keys at the same load.

Engine: operations are graphs of steps (``staleness.graphs``) run by the general
engine (``forkjoin_sim.steps``), which gives every step's end; what reads return is
measured from those times (``staleness.versions``). In an open loop nothing in the
queues depends on the quorum sizes (every task runs to completion), so one run
answers every (R, W); a closed loop or a session waits for its quorum, so it is one
run per (R, W).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from numbers import Integral
from typing import Any, Optional, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from forkjoin_sim.checks import check_percentile
from forkjoin_sim.errors import ConfigError, counted
from forkjoin_sim.nodes import READ, WRITE, SharedQueue, Stages
from forkjoin_sim.staleness import graphs
from forkjoin_sim.staleness.channels import CHANNELS, COORDINATORS
from forkjoin_sim.staleness.intervals import inflation, share
from forkjoin_sim.staleness.versions import Operations, staleness
from forkjoin_sim.staleness.wars import MessageLaws

#: Session guarantees a run under load can measure.
GUARANTEES = ("read-your-writes", "monotonic-reads")


def exponential_delays(mean: float = 0.5) -> MessageLaws:
    """Every one-way message delay exponential with mean ``mean`` (the issue's 0.5 ms)."""
    law = stats.expon(scale=mean)
    return MessageLaws(law, law, law, law, name=f"exp mean {mean:g}")


@dataclass(frozen=True)
class ReplicatedKey:
    """A replica group of ``replicas`` nodes holding ``keys`` keys under an open
    Poisson stream of operations (the name is from the default, one key), and how
    its messages travel and who coordinates.

    Parameters
    ----------
    replicas : int
        N; every node holds a replica and receives every operation.
    rate : float or None
        Operations (reads + writes) per unit time; None for a closed loop
        (``simulate_closed``), whose clients set the pace.
    write_share : float
        Probability that an operation is a write, in [0, 1].
    node : SharedQueue or Stages
        How a replica queues reads against writes (default ``Stages()``, Cassandra).
    read_service, write_service : law or None
        Service time of a read / write at a replica (``rvs``, ``mean``); None means
        no service at all (the load-free limit). Default exponential, mean 1.
    delays : MessageLaws
        The WARS one-way delays W, A, R, S (default exponential mean 0.5).
    keys : int
        Keys held by the group (default 1); each operation is for one of them.
    zipf : float
        Popularity: key j (1..keys) is chosen with probability proportional to
        ``j ** -zipf``; 0 (default) is uniform, about 1 is typical of caches and
        YCSB's "zipfian" request distribution (0.99).
    channels : str
        ``"independent"`` (every message delay its own draw, WARS; default) or
        ``"fifo"`` (each ordered pair of nodes one connection delivering in order).
    coordinators : str
        ``"one"`` (the last node coordinates every operation; default), ``"random"``
        (a uniformly random node per operation) or ``"token-aware"`` (a random
        replica).
    nodes : int or None
        Nodes of the cluster, the replicas first; default replicas + 1 for one
        coordinator (so it holds no replica), else replicas.
    """

    replicas: int
    rate: float
    write_share: float
    node: Any = field(default_factory=Stages)
    read_service: Any = field(default_factory=stats.expon)
    write_service: Any = field(default_factory=stats.expon)
    delays: MessageLaws = field(default_factory=exponential_delays)
    keys: int = 1
    zipf: float = 0.0
    channels: str = "independent"
    coordinators: str = "one"
    nodes: Optional[int] = None

    def __post_init__(self) -> None:
        _whole(self.replicas, "replicas", 1)
        if self.channels not in CHANNELS:
            raise ConfigError(f"channels={self.channels!r}; use one of "
                              f"{', '.join(CHANNELS)}")
        if self.coordinators not in COORDINATORS:
            raise ConfigError(f"coordinators={self.coordinators!r}; use one of "
                              f"{', '.join(COORDINATORS)}")
        if self.nodes is not None:
            _whole(self.nodes, "nodes", 1)
            if self.nodes < self.replicas:
                raise ConfigError(f"nodes={self.nodes} is below replicas="
                                  f"{self.replicas}; the replicas are nodes of the "
                                  f"cluster: use nodes >= {self.replicas}")
        _whole(self.keys, "keys", 1)
        if self.keys > MAX_KEYS:
            raise ConfigError(f"keys={self.keys} is more than {MAX_KEYS:,}; beyond a "
                              "few thousand equally popular keys a key sees almost no "
                              "concurrent writes, so use fewer")
        if not (_real(self.zipf) and 0 <= self.zipf <= 10):
            raise ConfigError(f"zipf={self.zipf!r}; give the popularity exponent in "
                              "[0, 10] (0: uniform, 0.99: YCSB zipfian)")
        if self.rate is not None and not (_real(self.rate) and self.rate > 0):
            raise ConfigError(f"rate={self.rate!r}; give operations per unit time as a "
                              "positive number")
        if not (_real(self.write_share) and 0 <= self.write_share <= 1):
            raise ConfigError(f"write share={self.write_share!r}; give the fraction of "
                              "writes in [0, 1], e.g. 0.5")
        if not isinstance(self.node, (SharedQueue, Stages)):
            raise ConfigError(f"node={self.node!r}; use SharedQueue(threads) or "
                              "Stages(read_threads, write_threads)")
        for role in ("read_service", "write_service"):
            law = getattr(self, role)
            if law is not None and not (callable(getattr(law, "rvs", None))
                                        and callable(getattr(law, "mean", None))):
                raise ConfigError(f"{role.replace('_', ' ')} {law!r} has no rvs/mean; "
                                  "use a frozen scipy.stats law, Empirical, Mixture "
                                  "or None (no service)")
        if not isinstance(self.delays, MessageLaws):
            raise ConfigError("delays must be a MessageLaws(write, ack, read, response)")
        if self.delays.remote_delay > 0:
            raise ConfigError("a WAN layout (remote_delay > 0) is not modelled under "
                              "load; fold the remote delay into the laws instead")
        busiest = max(self.stage_loads()) if self.rate is not None else 0.0
        if not busiest < 1:
            raise ConfigError(f"unstable: a replica's busiest stage would be busy "
                              f"{busiest:.3g} of the time (>= 1); lower the rate, the "
                              "service means, or add threads")

    def check_run(self, operations: int) -> None:
        """Refuse an open run of ``operations`` whose clock would end too far out to
        resolve an operation's latency, the sum of its mean delays and services (a
        rate of 1e-300). Single tiny terms (delays of 1e-9 standing for none) are
        allowed to round away."""
        from forkjoin_sim.arrivals._checks import check_clock

        if self.rate is None:
            return
        scales = [float(getattr(self.delays, role).mean())
                  for role in ("write", "ack", "read", "response")]
        scales += [self.mean_service(kind) for kind in ("read", "write")]
        check_clock(self.rate, _whole(operations, "operations", 2), sum(scales) or 1.0)

    @property
    def cluster_nodes(self) -> int:
        """Nodes of the cluster (``nodes``, or its default)."""
        if self.nodes is not None:
            return int(self.nodes)
        return self.replicas + 1 if self.coordinators == "one" else self.replicas

    @property
    def structure(self) -> str:
        """``"stages"`` (read and mutation stages) or ``"shared"`` (one queue)."""
        return "stages" if isinstance(self.node, Stages) else "shared"

    def key_weights(self) -> np.ndarray:
        """P(an operation is for key j), j = 0..keys-1 (key 0 the most popular)."""
        weights = np.arange(1, self.keys + 1, dtype=float) ** -float(self.zipf)
        return weights / weights.sum()

    def mean_service(self, kind: str) -> float:
        """Mean service time of a read or a write (0 without service)."""
        law = self.read_service if kind == "read" else self.write_service
        return 0.0 if law is None else float(law.mean())

    def stage_loads(self) -> list[float]:
        """Work per thread per unit time of each stage of a replica (its utilisation)."""
        work = np.zeros(len(self.node.stage_threads))
        work[self.node.stage_of[READ]] += (self.rate * (1 - self.write_share)
                                           * self.mean_service("read"))
        work[self.node.stage_of[WRITE]] += (self.rate * self.write_share
                                            * self.mean_service("write"))
        return list(work / self.node.stage_threads)

    def stage_services(self) -> list[float]:
        """Services each stage of a replica receives per operation (every replica
        serves every operation: a read at its read stage, a write at its mutation
        stage)."""
        services = np.zeros(len(self.node.stage_threads))
        services[self.node.stage_of[READ]] += 1 - self.write_share
        services[self.node.stage_of[WRITE]] += self.write_share
        return list(services)

    def work_per_replica(self) -> float:
        """Service work a replica receives per unit time (all stages together)."""
        if self.rate is None:
            return math.nan
        return self.rate * ((1 - self.write_share) * self.mean_service("read")
                            + self.write_share * self.mean_service("write"))

    def describe(self) -> str:
        pace = "closed loop" if self.rate is None else f"{self.rate:g} ops per unit time"
        spread = "" if self.keys == 1 else (
            f", {self.keys} keys ({'uniform' if self.zipf == 0 else f'zipf {self.zipf:g}'})")
        return (f"{counted(self.replicas, 'replica')}{spread}, {pace}, "
                f"{self.write_share:g} writes, {self.node.describe()}, work per "
                f"replica {self.work_per_replica():.3g}, {self.channels} channels, "
                f"{_COORDINATORS.get(self.coordinators, self.coordinators)} among "
                f"{counted(self.cluster_nodes, 'node')}")


#: How `ReplicatedKey.describe` words each coordinator rule.
_COORDINATORS = {"one": "one coordinating node",
                 "random": "a random coordinator per operation",
                 "token-aware": "a replica coordinating each operation"}


@dataclass(frozen=True)
class ClosedLoop:
    """``clients`` threads, each issuing an operation (or a session), waiting for it
    to complete (a read at its R-th reply, a write at its commit), thinking for a
    time drawn from ``think`` (None: no think time) and issuing the next."""

    clients: int
    think: Any = None

    def __post_init__(self) -> None:
        _whole(self.clients, "clients", 1)
        if self.think is not None and not callable(getattr(self.think, "rvs", None)):
            raise ConfigError(f"think law {self.think!r} has no rvs; use a frozen "
                              "scipy.stats law, Empirical, Mixture or None")


@dataclass(frozen=True)
class Session:
    """Client sessions: under ``"read-your-writes"`` each write is followed by a read
    of the same key from the same client, under ``"monotonic-reads"`` each read by a
    second read of it; the second operation is sent ``pause`` after the first
    returns (a number >= 0 or a law), through the job's second coordinator."""

    guarantee: str
    pause: Any = 0.0

    def __post_init__(self) -> None:
        if self.guarantee not in GUARANTEES:
            raise ConfigError(f"session guarantee {self.guarantee!r} is unknown; use "
                              f"one of {', '.join(GUARANTEES)}")
        pause = self.pause
        if callable(getattr(pause, "rvs", None)):
            return
        if not (_real(pause) and pause >= 0):
            raise ConfigError(f"session pause {pause!r}; give a time >= 0 or a law "
                              "such as stats.expon(scale=2)")


@dataclass(frozen=True)
class LoadRun:
    """One run under load: every operation's times (``versions.Operations``), per
    operation its job and whether it is a session's second, per replica stage its
    busy fraction. ``outcome(R, W)`` measures staleness; ``sessions()`` the session
    guarantee. A closed-loop or session run waited for its ``quorums`` and answers
    only those; an open run (``quorums`` None) answers every (R, W)."""

    key: ReplicatedKey
    operations: Operations = field(repr=False)
    job: np.ndarray = field(repr=False)
    second: np.ndarray = field(repr=False)
    pause: np.ndarray = field(repr=False)
    utilisation: np.ndarray = field(repr=False)
    warmup: float = 0.1
    quorums: Optional[tuple] = None
    session: Optional[Session] = None

    def _check(self, read_quorum, write_quorum) -> tuple[int, int]:
        n = self.key.replicas
        read_quorum = _quorum(read_quorum, "read", n)
        write_quorum = _quorum(write_quorum, "write", n)
        if self.quorums is not None and (read_quorum, write_quorum) != self.quorums:
            raise ConfigError(f"this run's operations waited for R={self.quorums[0]}, "
                              f"W={self.quorums[1]}; run again for R={read_quorum}, "
                              f"W={write_quorum}")
        return read_quorum, write_quorum

    def _measured(self) -> tuple[np.ndarray, float]:
        """Per operation whether it is measured (issued at or after the warm-up's end),
        and that time."""
        issue = self.operations.issue
        start = float(np.partition(issue, int(self.warmup * issue.size))[
            int(self.warmup * issue.size)])
        return issue >= start, start

    def outcome(self, read_quorum: int, write_quorum: int) -> StalenessResult:
        """Per-read staleness and latencies with quorums (R, W) on this run."""
        read_quorum, write_quorum = self._check(read_quorum, write_quorum)
        ops = self.operations
        reads = staleness(ops, read_quorum, write_quorum)
        measured, start = self._measured()
        is_write = ops.is_write
        # each in issue order: the intervals' batch means need it
        measured_reads = np.flatnonzero(measured[~is_write] & (reads.latest > 0))
        measured_reads = measured_reads[np.argsort(ops.issue[~is_write][measured_reads],
                                                   kind="stable")]
        measured_writes = np.flatnonzero(measured[is_write])
        measured_writes = measured_writes[np.argsort(ops.issue[is_write][measured_writes],
                                                     kind="stable")]
        last = float(ops.issue.max())
        return StalenessResult(
            self.key, read_quorum, write_quorum,
            consistent=(reads.returned >= reads.latest)[measured_reads],
            versions_behind=reads.behind[measured_reads],
            since_commit=reads.since[measured_reads],
            read_latency=reads.latency[measured_reads],
            write_latency=(reads.committed_at - ops.issue[is_write])[measured_writes],
            utilisation=self.utilisation,
            throughput=(measured.sum() - 1) / (last - start) if last > start else math.nan)

    def sessions(self, read_quorum: int, write_quorum: int):
        """P(the session guarantee is violated), as ``sessions.SessionResult``: per
        measured session the pause between its operations (``gap``) and whether a
        read-your-writes read returned a version older than its own write, or a
        monotonic-reads second read one older than the first read's."""
        from forkjoin_sim.staleness.sessions import SessionResult

        if self.session is None:
            raise ConfigError("this run has no sessions; run simulate_sessions")
        read_quorum, write_quorum = self._check(read_quorum, write_quorum)
        ops = self.operations
        returned = np.zeros(ops.issue.size, np.int64)
        returned[~ops.is_write] = ops.returned(read_quorum)[0]
        measured, _ = self._measured()
        later = np.flatnonzero(self.second)
        earlier = np.full(self.job.max(initial=-1) + 1, -1, np.int64)
        earlier[self.job[~self.second]] = np.flatnonzero(~self.second)
        earlier = earlier[self.job[later]]
        if self.session.guarantee == "read-your-writes":
            violated = returned[later] < ops.versions()[earlier]
        else:
            violated = returned[later] < returned[earlier]
        # measured sessions, in the issue order of their first operation
        keep = np.flatnonzero(measured[earlier])
        keep = keep[np.argsort(ops.issue[earlier][keep], kind="stable")]
        key = self.key
        return SessionResult(self.session.guarantee, key.replicas, read_quorum,
                             write_quorum, key.channels, key.coordinators,
                             key.cluster_nodes, self.pause[keep], violated[keep],
                             correlated=True)


def simulate_queues(key: ReplicatedKey, operations: int = 200_000, seed=0,
                    warmup: float = 0.1) -> LoadRun:
    """An open-loop run of ``operations`` operations on the steps engine; its
    ``outcome(R, W)`` answers every (R, W). The first ``warmup`` fraction of
    operations (in issue order) is simulated but not measured."""
    if key.rate is None:
        raise ConfigError("an open-loop run needs a rate; for clients use "
                          "simulate_closed(key, R, W, ClosedLoop(clients, think))")
    key.check_run(operations)
    return _run(key, operations, seed, warmup)


def _both_kinds(key: ReplicatedKey) -> None:
    """Refuse a key without reads or without writes: a read is stale only against a
    write, and a read is measured once a write committed before it (its result
    would be NaN throughout, silently)."""
    if key.write_share in (0, 1):
        raise ConfigError(f"write share {key.write_share:g} has no "
                          f"{'writes' if key.write_share == 0 else 'reads'}, and "
                          "staleness needs both reads and writes (a read is stale only "
                          "against a write); give a write share strictly between 0 "
                          "and 1")


def simulate_staleness(key: ReplicatedKey, read_quorum: int, write_quorum: int,
                       operations: int = 200_000, seed=0,
                       warmup: float = 0.1) -> StalenessResult:
    """``simulate_queues(...).outcome(read_quorum, write_quorum)``, for a key with
    both reads and writes (`simulate_queues` runs one without, whose outcome measures
    no read)."""
    _both_kinds(key)
    return simulate_queues(key, operations, seed, warmup).outcome(read_quorum,
                                                                  write_quorum)


def simulate_closed(key: ReplicatedKey, read_quorum: int, write_quorum: int,
                    loop: ClosedLoop, operations: int = 20_000, seed=0,
                    warmup: float = 0.1) -> StalenessResult:
    """A closed loop of ``loop.clients`` clients on the steps engine. ``key.rate`` is
    not used: the clients pace themselves; the result's ``throughput`` is measured.
    Job j (the j-th a client decides to issue) has the kind, key, coordinator and
    times the run's purposes give index j."""
    if not isinstance(loop, ClosedLoop):
        raise ConfigError("loop must be a ClosedLoop(clients, think)")
    _both_kinds(key)
    return _run(key, operations, seed, warmup, (read_quorum, write_quorum),
                loop).outcome(read_quorum, write_quorum)


def simulate_sessions(key: ReplicatedKey, read_quorum: int, write_quorum: int,
                      session: Session, loop: Optional[ClosedLoop] = None,
                      operations: int = 20_000, seed=0, warmup: float = 0.1) -> LoadRun:
    """A run whose writes (read-your-writes) or reads (monotonic-reads) are sessions of
    two operations, in an open loop of ``key.rate`` jobs per unit time or a closed
    ``loop``; ``operations`` counts jobs (a session is one job). Its
    ``sessions(R, W)`` and ``outcome(R, W)`` measure the guarantee and staleness."""
    if not isinstance(session, Session):
        raise ConfigError("session must be a Session(guarantee, pause)")
    if loop is not None and not isinstance(loop, ClosedLoop):
        raise ConfigError("loop must be a ClosedLoop(clients, think) or None (open)")
    first, none = (("write", key.write_share == 0)
                   if session.guarantee == "read-your-writes"
                   else ("read", key.write_share == 1))
    if none:
        raise ConfigError(f"{session.guarantee} sessions start with a {first}, and "
                          f"with write share {key.write_share:g} there is none; give a "
                          "write share strictly between 0 and 1")
    if loop is None:
        if key.rate is None:
            raise ConfigError("an open-loop run needs a rate; or give a "
                              "ClosedLoop(clients, think)")
        key.check_run(operations)
        try:
            with_second_reads(key, session)
        except ConfigError as exc:
            raise ConfigError(f"with the sessions' second reads: {exc}") from None
    return _run(key, operations, seed, warmup, (read_quorum, write_quorum), loop,
                session)


def with_second_reads(key: ReplicatedKey, session: Session) -> ReplicatedKey:
    """The operations ``key``'s replicas serve in an open run of ``session``s: a
    session's second operation is one more read, so (1 + share) times the rate, with
    ``share`` the fraction of jobs that are sessions."""
    share = key.write_share if session.guarantee == "read-your-writes" else \
        1 - key.write_share
    return replace(key, rate=key.rate * (1 + share),
                   write_share=key.write_share / (1 + share))


def relaxation_note(key: ReplicatedKey, operations: int,
                    session: Optional[Session] = None,
                    unit: str = "operations") -> Optional[str]:
    """The warning for an open run of ``operations`` (jobs, under ``session``) too
    short for the load of its busiest stage
    (`forkjoin_sim.measure.result.relaxation_note`, the check ``simulate`` makes of
    its busiest node): its queues are still filling, so its latencies and staleness
    are biased low. None for a closed loop or a run long enough. ``unit`` names
    what the run asks more of."""
    from forkjoin_sim.measure.result import relaxation_note as note

    if key.rate is None:
        return None
    served, per_job = key, 1.0
    if session is not None:
        served = with_second_reads(key, session)
        per_job = served.rate / key.rate
    loads = served.stage_loads()
    busiest = int(np.argmax(loads))
    return note(loads[busiest], operations,
                per_job * served.stage_services()[busiest], queue="stage", unit=unit,
                bias="its latencies and staleness are biased low and their intervals "
                     "do not hold the steady state's")


def law_notes(key: ReplicatedKey) -> list[str]:
    """The heavy tails of ``key``'s read and write service laws
    (`forkjoin_sim.system.heavy_tail_note`, the check ``simulate`` makes of its
    service laws), once for a law serving both."""
    from forkjoin_sim.system import heavy_tail_note

    laws = [("read", key.read_service)]
    if key.write_service is not key.read_service:
        laws.append(("write", key.write_service))
    notes = (heavy_tail_note(law, f"the {kind} service law") for kind, law in laws
             if law is not None)
    return [note for note in notes if note]


def run_notes(key: ReplicatedKey, operations: int, session: Optional[Session] = None,
              unit: str = "operations") -> list[str]:
    """Doubts about a run of ``operations`` of ``key`` that its set-up alone tells:
    `relaxation_note` and `law_notes`."""
    note = relaxation_note(key, operations, session, unit)
    return ([note] if note else []) + law_notes(key)


def _run(key: ReplicatedKey, jobs: int, seed, warmup: float, quorums=None,
         loop: Optional[ClosedLoop] = None, session: Optional[Session] = None
         ) -> LoadRun:
    """The jobs as graphs of steps through the replicas' stages, on the engine."""
    from forkjoin_sim.steps import Closed, Open, simulate
    from forkjoin_sim.steps import draws

    if not (_real(warmup) and 0 <= warmup < 1):
        raise ConfigError(f"warmup={warmup!r}; give the fraction of operations to "
                          "drop, in [0, 1)")
    jobs = _whole(jobs, "operations", 2)
    seed = _seed(seed)
    n, nodes = key.replicas, key.cluster_nodes
    if quorums is not None:
        quorums = (_quorum(quorums[0], "read", n), _quorum(quorums[1], "write", n))
    read_quorum, write_quorum = quorums or (n, n)
    guarantee = None if session is None else session.guarantee
    read_job, write_job = graphs.templates(n, read_quorum, write_quorum,
                                           graphs.stage_names(key.node),
                                           key.channels == "fifo", guarantee)
    is_write = draws.draw(seed, "staleness_kind", lambda g, s: g.random(s), 0,
                          jobs)[:, 0] < key.write_share
    key_of = np.zeros(jobs, np.int64)
    if key.keys > 1:
        u = draws.draw(seed, "staleness_key", lambda g, s: g.random(s), 0, jobs)[:, 0]
        cdf = np.cumsum(key.key_weights())
        key_of = np.minimum(np.searchsorted(cdf, u, side="right"), key.keys - 1)
    coordinator = graphs.coordinators(seed, key.coordinators, nodes, n, jobs)
    parties = np.empty((jobs, graphs.COORDINATOR_PARTIES + n), np.int64)
    parties[:, :graphs.COORDINATOR_PARTIES] = coordinator
    parties[:, graphs.COORDINATOR_PARTIES:] = np.arange(n)
    width = max(len(read_job.ops), len(write_job.ops))
    d = key.delays
    laws = {"write_request": d.write, "write_ack": d.ack, "read_request": d.read,
            "read_response": d.response, "second_read_request": d.read,
            "second_read_response": d.response, "write_service": key.write_service,
            "read_service": key.read_service, "second_read_service": key.read_service}
    times = graphs.durations(seed, laws, is_write, coordinator, n, width, guarantee,
                             None if session is None else session.pause)
    if loop is None:
        arrivals = Open(draws.poisson_arrivals(seed, key.rate, 0, jobs))
    else:
        think = (np.zeros(jobs) if loop.think is None
                 else draws.think_times(seed, loop.think, 0, jobs))
        if not np.all(np.isfinite(think) & (think >= 0)):
            raise ConfigError(f"think law {loop.think!r} drew values that are not "
                              "finite times >= 0; use a law on [0, inf)")
        arrivals = Closed(loop.clients, think)
    out = simulate([read_job, write_job], graphs.layout(n, nodes, key.node), parties,
                   times, arrivals, classes=is_write.astype(np.int64),
                   record_steps=True)
    first = graphs.Columns(0, n)
    # (jobs, columns, issue, is_write) per operation of a job; all jobs' first one
    blocks = [(slice(None), first, out.start, is_write)]
    pause = np.zeros(0)
    owners = np.zeros(0, np.int64)
    if session is not None:
        owners = np.flatnonzero(is_write if guarantee == "read-your-writes" else ~is_write)
        second = graphs.Columns(first.join + 2, n)
        pause = times[owners, first.join + 1]
        blocks.append((owners, second, out.steps[owners, first.join + 1],
                       np.zeros(owners.size, bool)))

    def stacked(arrays):
        return arrays[0] if len(arrays) == 1 else np.concatenate(arrays)

    ops = Operations(
        issue=stacked([b[2] for b in blocks]), is_write=stacked([b[3] for b in blocks]),
        key=stacked([key_of[b[0]] for b in blocks]),
        finish=stacked([out.steps[b[0], b[1].task] for b in blocks]),
        replied=stacked([out.steps[b[0], b[1].reply] for b in blocks]))
    job = np.concatenate([np.arange(jobs), owners])
    second_of = np.arange(job.size) >= jobs
    # busy time: every task runs to completion, so it is the sum of the services
    threads = key.node.stage_threads
    busy = np.zeros((n, threads.size))
    for jobs_of, cols, _, writes in blocks:
        service = times[jobs_of, cols.task]
        for kind, mask in ((WRITE, writes), (READ, ~writes)):
            busy[:, key.node.stage_of[kind]] += service[mask].sum(axis=0)
    span = float(np.nanmax(out.steps) - out.start.min()) or 1.0
    return LoadRun(key, ops, job, second_of, pause, busy / threads / span, warmup,
                   quorums, session)


@dataclass(frozen=True)
class StalenessResult:
    """Per measured read (in issue order): consistent or not, versions behind, time
    since the latest committed version committed, latency; per measured write (in
    issue order): commit latency.

    Its intervals hold the correlation of successive operations: queues make a run
    of stale reads, or of slow ones, come together, so the Wilson and order-statistic
    intervals of independent draws are widened by the variance that batch means show
    beyond theirs (`inflation`)."""

    key: ReplicatedKey
    read_quorum: int
    write_quorum: int
    consistent: np.ndarray = field(repr=False)
    versions_behind: np.ndarray = field(repr=False)
    since_commit: np.ndarray = field(repr=False)
    read_latency: np.ndarray = field(repr=False)
    write_latency: np.ndarray = field(repr=False)
    utilisation: np.ndarray = field(repr=False)
    #: operations issued per unit time (measured; the closed loop's output)
    throughput: float = math.nan

    @property
    def reads(self) -> int:
        return int(self.consistent.size)

    def stale(self, confidence: float = 0.95) -> tuple[float, float, float]:
        """P(stale) over all measured reads, with its interval (`share`)."""
        return share(~self.consistent, confidence)

    def visibility(self, grid: Sequence[float], confidence: float = 0.95) -> pd.DataFrame:
        """t-visibility: P(consistent | read issued t after the latest commit), with
        reads binned by t into [grid[j], grid[j+1]) (the last bin [grid[-1], inf)).

        Columns ``t_low``, ``t_high``, ``reads``, ``consistent``, ``probability``,
        ``low``, ``high`` (interval at ``confidence``, `share`).
        """
        edges = _grid(grid)
        bins = np.searchsorted(edges, self.since_commit, side="right") - 1
        rows = []
        for j, left in enumerate(edges):
            inside = bins == j
            count, total = int(self.consistent[inside].sum()), int(inside.sum())
            p, low, high = share(self.consistent[inside], confidence)
            rows.append({"t_low": float(left),
                         "t_high": float(edges[j + 1]) if j + 1 < edges.size else math.inf,
                         "reads": total, "consistent": count, "probability": p,
                         "low": low, "high": high})
        return pd.DataFrame(rows)

    def k_staleness(self, versions: Sequence[int] = (1, 2, 3),
                    confidence: float = 0.95) -> pd.DataFrame:
        """P(the read returned one of the ``k`` latest committed versions), i.e.
        fewer than k versions behind (PBS's k-staleness; k = 1 is consistency)."""
        rows = []
        for k in versions:
            k = _whole(k, "versions k", 1)
            p, low, high = share(self.versions_behind < k, confidence)
            rows.append({"k": k, "probability": p, "low": low, "high": high})
        return pd.DataFrame(rows)

    def latency_percentiles(self, percentiles: Sequence[float] = (50, 99, 99.9),
                            confidence: float = 0.95) -> pd.DataFrame:
        """Read (R-th reply - issue) and write (commit - issue) latency percentiles,
        with distribution-free intervals (``scipy.stats.quantile_test``) widened by the
        correlation of successive operations (`inflation`)."""
        rows = []
        for percentile in percentiles:
            percentile = check_percentile(percentile)
            row = {"percentile": percentile}
            for name, sample in (("read", self.read_latency), ("write", self.write_latency)):
                if sample.size == 0:
                    row[name] = row[f"{name}_low"] = row[f"{name}_high"] = math.nan
                    continue
                q = percentile / 100
                ci = stats.quantile_test(sample, p=q).confidence_interval(confidence)
                value = float(np.quantile(sample, q))
                # a sample quantile's variance is its indicator's over the density
                # squared: correlation widens both arms by the indicator's inflation
                widen = math.sqrt(inflation(sample <= value, confidence))
                row[name] = value
                # the order statistics' interval and numpy's interpolated quantile may
                # disagree at an extreme percentile (99.99999 of 2,000): the interval
                # always holds the value given
                row[f"{name}_low"] = max(value - max(value - float(ci.low), 0.0) * widen,
                                         0.0)
                row[f"{name}_high"] = value + max(float(ci.high) - value, 0.0) * widen
            rows.append(row)
        return pd.DataFrame(rows)

    def summary(self, grid: Sequence[float] = (0, 1, 2, 5, 10),
                versions: Sequence[int] = (1, 2, 3),
                percentiles: Sequence[float] = (50, 99, 99.9)) -> dict:
        """A JSON-ready dict of every measure (keys documented in
        ``forkjoin_cli.staleness.JSON_KEYS``)."""
        stale, low, high = self.stale()
        return {
            "replicas": self.key.replicas, "keys": self.key.keys, "zipf": self.key.zipf,
            "read_quorum": self.read_quorum,
            "write_quorum": self.write_quorum, "rate": self.key.rate,
            "write_share": self.key.write_share, "structure": self.key.structure,
            "channels": self.key.channels, "coordinators": self.key.coordinators,
            "nodes": self.key.cluster_nodes,
            "work_per_replica": self.key.work_per_replica(),
            "utilisation": float(self.utilisation.max()),
            "throughput": float(self.throughput),
            "reads": self.reads, "writes": int(self.write_latency.size),
            "stale": stale, "stale_low": low, "stale_high": high,
            "visibility": self.visibility(grid).to_dict("records"),
            "k_staleness": self.k_staleness(versions).to_dict("records"),
            "latency": self.latency_percentiles(percentiles).to_dict("records")}


# --- helpers -------------------------------------------------------------------------

#: Most keys a group may hold (the key-popularity table is built per run).
MAX_KEYS = 10_000_000


def _grid(grid) -> np.ndarray:
    edges = np.atleast_1d(np.asarray(grid, dtype=float))
    if (edges.ndim != 1 or edges.size == 0 or not np.all(np.isfinite(edges))
            or np.any(edges < 0) or np.any(np.diff(edges) <= 0)):
        raise ConfigError(f"t grid {np.asarray(grid).tolist()} must be increasing "
                          "finite times >= 0, e.g. 0,1,2,5,10")
    return edges


def _seed(seed) -> int:
    """The run's seed: the whole number the steps' purposes are drawn from."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ConfigError(f"seed must be a whole number >= 0, got {seed!r}; e.g. seed=1")
    return int(seed)


def _real(value) -> bool:
    return (isinstance(value, (int, float, np.integer, np.floating))
            and not isinstance(value, bool) and math.isfinite(value))


def _whole(value: Any, what: str, lowest: int) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral) or value < lowest:
        raise ConfigError(f"{what} must be a whole number >= {lowest}, got {value!r}")
    return int(value)


def _quorum(value: Any, label: str, replicas: int) -> int:
    value = _whole(value, f"{label} quorum", 1)
    if value > replicas:
        raise ConfigError(f"{label} quorum {value} exceeds replicas {replicas}; use "
                          f"1 <= {label} quorum <= replicas")
    return value
