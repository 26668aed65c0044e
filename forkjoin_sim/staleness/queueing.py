"""Staleness of partial quorums under load: replicated keys served by queues.

A replica group of ``replicas`` nodes holds ``keys`` keys (default one), every node a
replica of every key (e.g. 3 nodes with replication factor 3). Operations arrive as
a Poisson stream of ``rate`` per unit time; each is a write with probability
``write_share``, else a read, is for a key drawn uniformly or by a Zipf law of
popularity, and is sent by its coordinator to every replica. All keys share the
nodes' queues; versions, commits and staleness are per key.

- A write reaches replica i after a delay W_i, waits for and receives service at
  that replica, which then *applies* it (its state becomes max(state, version);
  versions are the writes' issue order, last writer wins); the acknowledgement
  reaches the coordinator A_i later. The write *commits* at its W-th ack.
- A read reaches replica i after R_i and is served there; the reply carries the
  replica's state when its service completes and reaches the coordinator S_i later.
  The read returns at its R-th reply, with the highest version among those R.

How a replica queues reads against writes is its node model
(``forkjoin_sim.nodes``): ``SharedQueue`` (one FCFS queue for both; a read never
overtakes a write that reached the replica before it, with one thread) or
``Stages`` (separate FCFS read and mutation stages, Cassandra's structure: a read
overtakes writes still waiting to be applied).

Per read (after the warm-up) the run records whether it returned at least the
latest version of its key committed before it was issued (*consistent*), how many
committed versions of that key newer than the one returned existed then (*versions
behind*), and the time since that latest committed version committed. With one key
every write makes every later read's target move; with many keys only the writes of
the read's own key do, so staleness falls with the number of keys at the same load. Nothing in the queues depends
on the quorum sizes (every task runs to completion), so one queueing pass answers
every (R, W) on the same sample path.

Engines: ``simulate_queues`` is exact in one pass (each node's stages serve its tasks
in order of arrival at the node, Kiefer-Wolfowitz for several threads; replica
states by per-node prefix maxima over apply times); ``simulate_events`` is the SimPy
event-level reference on the same draws (common random numbers).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from numbers import Integral
from typing import Any, Sequence

import numba
import numpy as np
import pandas as pd
from scipy import stats

from forkjoin_sim.errors import ConfigError
from forkjoin_sim.nodes import READ, WRITE, SharedQueue, Stages
from forkjoin_sim.randomness.streams import child_rng
from forkjoin_sim.staleness.wars import MessageLaws

# Child streams of the run's seed, one per purpose (common random numbers: the
# engines, the quorum sizes and the structures all see the same draws).
from forkjoin_sim.randomness.streams import (  # noqa: E402  (the table of purposes)
    QUEUED_ACK as _ACK, QUEUED_ARRIVALS as _ARRIVALS, QUEUED_KEYS as _KEYS,
    QUEUED_KINDS as _KINDS, QUEUED_READ as _READ, QUEUED_READ_SERVICE as _READ_SERVICE,
    QUEUED_RESPONSE as _RESPONSE, QUEUED_THINK as _THINK, QUEUED_WRITE as _WRITE,
    QUEUED_WRITE_SERVICE as _WRITE_SERVICE)


def exponential_delays(mean: float = 0.5) -> MessageLaws:
    """Every one-way message delay exponential with mean ``mean`` (the issue's 0.5 ms)."""
    law = stats.expon(scale=mean)
    return MessageLaws(law, law, law, law, name=f"exp mean {mean:g}")


@dataclass(frozen=True)
class ReplicatedKey:
    """A replica group of ``replicas`` nodes holding ``keys`` keys under an open
    Poisson stream of operations (the name is from the default, one key).

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

    def __post_init__(self) -> None:
        _whole(self.replicas, "replicas", 1)
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
        return (f"{self.replicas} replicas{spread}, {pace}, "
                f"{self.write_share:g} writes, {self.node.describe()}, work per "
                f"replica {self.work_per_replica():.3g}")


@dataclass(frozen=True)
class SamplePath:
    """Every random number of a run: issue times, kinds, per-replica delays and
    services (rows are operations, columns replicas). ``outbound`` is W (writes) or
    R (reads), ``inbound`` A or S; ``key`` the key of each operation (0..keys-1)."""

    issue: np.ndarray
    is_write: np.ndarray
    outbound: np.ndarray
    inbound: np.ndarray
    service: np.ndarray
    key: np.ndarray | None = None

    def keys_of_operations(self) -> np.ndarray:
        """The key of each operation (all 0 when the path has one key)."""
        if self.key is None:
            return np.zeros(self.is_write.size, dtype=np.int64)
        return np.asarray(self.key, dtype=np.int64)

    def versions(self) -> np.ndarray:
        """Each write's version of its key (1, 2, ... in issue order per key; the
        writes' last-writer-wins order), 0 for reads."""
        keys = self.keys_of_operations()
        version = np.zeros(keys.size, dtype=np.int64)
        writes = np.flatnonzero(self.is_write)
        by_key = writes[np.argsort(keys[writes], kind="stable")]
        counts = np.bincount(keys[by_key], minlength=int(keys.max(initial=0)) + 1)
        first = np.concatenate([[0], np.cumsum(counts)[:-1]])
        version[by_key] = np.arange(by_key.size) - first[keys[by_key]] + 1
        return version


def draw_path(key: ReplicatedKey, operations: int, seed=0) -> SamplePath:
    """The sample path of ``operations`` operations, each purpose from its own child
    stream of ``seed``."""
    operations = _whole(operations, "operations", 2)
    n = key.replicas
    # a closed loop (rate None) issues operations itself; these times are unused
    issue = np.cumsum(child_rng(seed, _ARRIVALS).exponential(
        1 / (1.0 if key.rate is None else key.rate), operations))
    is_write = child_rng(seed, _KINDS).random(operations) < key.write_share
    writes, reads = int(is_write.sum()), int(operations - is_write.sum())
    outbound, inbound, service = (np.empty((operations, n)) for _ in range(3))
    for mask, count, out, back, law, stream in (
            (is_write, writes, _WRITE, _ACK, key.write_service, _WRITE_SERVICE),
            (~is_write, reads, _READ, _RESPONSE, key.read_service, _READ_SERVICE)):
        out_law = key.delays.write if out == _WRITE else key.delays.read
        back_law = key.delays.ack if back == _ACK else key.delays.response
        outbound[mask] = _draw(out_law, (count, n), seed, out)
        inbound[mask] = _draw(back_law, (count, n), seed, back)
        service[mask] = 0.0 if law is None else _draw(law, (count, n), seed, stream)
    keys = None
    if key.keys > 1:
        keys = child_rng(seed, _KEYS).choice(key.keys, operations, p=key.key_weights())
    return SamplePath(issue, is_write, outbound, inbound, service, keys)


def _draw(law, shape, seed, stream) -> np.ndarray:
    drawn = np.asarray(law.rvs(size=shape, random_state=child_rng(seed, stream)),
                       dtype=float).reshape(shape)
    if not np.all(np.isfinite(drawn)) or np.any(drawn < 0):
        raise ConfigError(f"law {law!r} drew values that are not finite times >= 0; "
                          "use a law on [0, inf)")
    return drawn


@numba.njit(cache=True)
def _serve_stages(arrival, order, service, stage, threads, finish, busy):
    """Each node's FCFS stages over its tasks in arrival order; a stage with c
    threads gives each task the thread that frees first (Kiefer-Wolfowitz)."""
    operations, nodes = arrival.shape
    widest = threads.max()
    free = np.empty((threads.size, widest))
    for i in range(nodes):
        for s in range(threads.size):
            for m in range(widest):
                free[s, m] = 0.0 if m < threads[s] else np.inf
        for position in range(operations):
            j = order[i, position]
            s = stage[j]
            first = 0
            for m in range(1, threads[s]):
                if free[s, m] < free[s, first]:
                    first = m
            start = max(arrival[j, i], free[s, first])
            finish[j, i] = start + service[j, i]
            free[s, first] = finish[j, i]
            busy[i, s] += service[j, i]


@numba.njit(cache=True)
def _versions_behind(returned, latest, committed_at, first, issued):
    """Per read: committed versions of its key newer than the one returned (versions
    above ``latest`` had not committed when the read was issued). Version v of the
    read's key committed at ``committed_at[first + v - 1]``."""
    behind = np.zeros(returned.size, dtype=np.int64)
    for r in range(returned.size):
        for version in range(returned[r] + 1, latest[r] + 1):
            if committed_at[first[r] + version - 1] <= issued[r]:
                behind[r] += 1
    return behind


def _newest_by_key(event_key, event_time, event_version, query_key, query_time):
    """Per query: the highest version among the events of its key at or before its
    time (events first on ties), 0 if none. Exact: an integer running maximum over
    (key, time) order, each key's values offset above every smaller key's."""
    events, queries = event_key.size, query_key.size
    key = np.concatenate([event_key, query_key]).astype(np.int64)
    time = np.concatenate([event_time, query_time])
    is_query = np.concatenate([np.zeros(events, np.int8), np.ones(queries, np.int8)])
    version = np.concatenate([event_version, np.zeros(queries, np.int64)])
    order = np.lexsort((is_query, time, key))
    span = int(version.max(initial=0)) + 1
    running = np.maximum.accumulate(key[order] * span + version[order])
    newest = np.empty(key.size, dtype=np.int64)
    newest[order] = running - key[order] * span
    return newest[events:]


@dataclass(frozen=True)
class QueueRun:
    """The queueing pass of one sample path: when every task finished at every
    replica. ``outcome(R, W)`` turns it into a ``StalenessResult``."""

    key: ReplicatedKey
    path: SamplePath = field(repr=False)
    finish: np.ndarray = field(repr=False)
    utilisation: np.ndarray = field(repr=False)
    warmup: float = 0.1

    def outcome(self, read_quorum: int, write_quorum: int) -> StalenessResult:
        """Per-read staleness and latencies with quorums (R, W) on this path."""
        n = self.key.replicas
        read_quorum = _quorum(read_quorum, "read", n)
        write_quorum = _quorum(write_quorum, "write", n)
        p = self.path
        writes, reads = np.flatnonzero(p.is_write), np.flatnonzero(~p.is_write)
        keys, versions = p.keys_of_operations(), p.versions()
        write_key, read_key, version = keys[writes], keys[reads], versions[writes]
        acked = self.finish[writes] + p.inbound[writes]
        committed_at = np.partition(acked, write_quorum - 1, axis=1)[:, write_quorum - 1]
        # States: per node, the newest version of the read's key applied by the time
        # the read's service there completes (last writer wins).
        states = np.zeros((reads.size, n), dtype=np.int64)
        for i in range(n):
            states[:, i] = _newest_by_key(write_key, self.finish[writes, i], version,
                                          read_key, self.finish[reads, i])
        replied = self.finish[reads] + p.inbound[reads]
        first = np.argsort(replied, axis=1, kind="stable")[:, :read_quorum]
        returned = np.take_along_axis(states, first, axis=1).max(axis=1)
        read_latency = (np.take_along_axis(replied, first[:, -1:], axis=1)[:, 0]
                        - p.issue[reads])
        latest = _newest_by_key(write_key, committed_at, version, read_key,
                                p.issue[reads])
        # commit time of version v of key k at by_version[start[k] + v - 1]
        counts = np.bincount(write_key, minlength=int(keys.max(initial=0)) + 1)
        start = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
        by_version = np.empty(writes.size)
        by_version[start[write_key] + version - 1] = committed_at
        base = start[read_key]
        since = np.full(reads.size, np.inf)
        known = latest > 0
        since[known] = p.issue[reads][known] - by_version[base[known] + latest[known] - 1]
        behind = _versions_behind(returned, latest, by_version, base, p.issue[reads])
        start = p.issue[int(self.warmup * p.issue.size)]
        measured_reads = (p.issue[reads] >= start) & (latest > 0)
        measured_writes = p.issue[writes] >= start
        return StalenessResult(
            self.key, read_quorum, write_quorum,
            consistent=returned[measured_reads] >= latest[measured_reads],
            versions_behind=behind[measured_reads], since_commit=since[measured_reads],
            read_latency=read_latency[measured_reads],
            write_latency=(committed_at - p.issue[writes])[measured_writes],
            utilisation=self.utilisation,
            throughput=(measured_writes.sum() + (p.issue[reads] >= start).sum() - 1)
            / (p.issue[-1] - start) if p.issue[-1] > start else math.nan)


def simulate_queues(key: ReplicatedKey, operations: int = 200_000, seed=0,
                    warmup: float = 0.1, path: SamplePath | None = None) -> QueueRun:
    """The exact one-pass queueing of ``operations`` operations (or of ``path``).

    The first ``warmup`` fraction of operations is simulated but not measured.
    """
    if not (_real(warmup) and 0 <= warmup < 1):
        raise ConfigError(f"warmup={warmup!r}; give the fraction of operations to "
                          "drop, in [0, 1)")
    if key.rate is None:
        raise ConfigError("an open-loop run needs a rate; for clients use "
                          "simulate_closed(key, R, W, ClosedLoop(clients, think))")
    if path is None:
        key.check_run(operations)
        path = draw_path(key, operations, seed)
    arrival = path.issue[:, None] + path.outbound
    order = np.ascontiguousarray(np.argsort(arrival, axis=0, kind="stable").T)
    kinds = np.where(path.is_write, WRITE, READ)
    stage = key.node.stage_of[kinds]
    threads = key.node.stage_threads
    finish = np.empty_like(arrival)
    busy = np.zeros((key.replicas, threads.size))
    _serve_stages(arrival, order, path.service, stage, threads, finish, busy)
    # busy time runs to the end of the last service, so the span does too
    span = float(np.max(finish) - path.issue[0]) or 1.0
    return QueueRun(key, path, finish, busy / threads / span, warmup)


def simulate_staleness(key: ReplicatedKey, read_quorum: int, write_quorum: int,
                       operations: int = 200_000, seed=0,
                       warmup: float = 0.1) -> StalenessResult:
    """``simulate_queues(...).outcome(read_quorum, write_quorum)``."""
    return simulate_queues(key, operations, seed, warmup).outcome(read_quorum,
                                                                  write_quorum)


@dataclass(frozen=True)
class StalenessResult:
    """Per measured read: consistent or not, versions behind, time since the latest
    committed version committed, latency; per measured write: commit latency."""

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
        """P(stale) over all measured reads, with its Wilson interval."""
        count = int(self.reads - self.consistent.sum())
        return _proportion(count, self.reads, confidence)

    def visibility(self, grid: Sequence[float], confidence: float = 0.95) -> pd.DataFrame:
        """t-visibility: P(consistent | read issued t after the latest commit), with
        reads binned by t into [grid[j], grid[j+1]) (the last bin [grid[-1], inf)).

        Columns ``t_low``, ``t_high``, ``reads``, ``consistent``, ``probability``,
        ``low``, ``high`` (Wilson interval at ``confidence``).
        """
        edges = _grid(grid)
        bins = np.searchsorted(edges, self.since_commit, side="right") - 1
        rows = []
        for j, left in enumerate(edges):
            inside = bins == j
            count, total = int(self.consistent[inside].sum()), int(inside.sum())
            p, low, high = _proportion(count, total, confidence)
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
            p, low, high = _proportion(int((self.versions_behind < k).sum()), self.reads,
                                       confidence)
            rows.append({"k": k, "probability": p, "low": low, "high": high})
        return pd.DataFrame(rows)

    def latency_percentiles(self, percentiles: Sequence[float] = (50, 99, 99.9),
                            confidence: float = 0.95) -> pd.DataFrame:
        """Read (R-th reply - issue) and write (commit - issue) latency percentiles,
        with distribution-free intervals (``scipy.stats.quantile_test``)."""
        rows = []
        for percentile in percentiles:
            if not 0 < percentile < 100:
                raise ConfigError(f"percentile {percentile!r} is outside (0, 100)")
            row = {"percentile": float(percentile)}
            for name, sample in (("read", self.read_latency), ("write", self.write_latency)):
                if sample.size == 0:
                    row[name] = row[f"{name}_low"] = row[f"{name}_high"] = math.nan
                    continue
                q = percentile / 100
                ci = stats.quantile_test(sample, p=q).confidence_interval(confidence)
                row[name] = float(np.quantile(sample, q))
                row[f"{name}_low"], row[f"{name}_high"] = float(ci.low), float(ci.high)
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
            "write_share": self.key.write_share, "structure": _structure(self.key.node),
            "work_per_replica": self.key.work_per_replica(),
            "utilisation": float(self.utilisation.max()),
            "throughput": float(self.throughput),
            "reads": self.reads, "writes": int(self.write_latency.size),
            "stale": stale, "stale_low": low, "stale_high": high,
            "visibility": self.visibility(grid).to_dict("records"),
            "k_staleness": self.k_staleness(versions).to_dict("records"),
            "latency": self.latency_percentiles(percentiles).to_dict("records")}


# --- SimPy reference and closed loop ----------------------------------------------

@dataclass(frozen=True)
class ClosedLoop:
    """``clients`` threads, each issuing an operation, waiting for it to complete (a
    read at its R-th reply, a write at its commit), thinking for a time drawn from
    ``think`` (None: no think time) and issuing the next."""

    clients: int
    think: Any = None

    def __post_init__(self) -> None:
        _whole(self.clients, "clients", 1)
        if self.think is not None and not callable(getattr(self.think, "rvs", None)):
            raise ConfigError(f"think law {self.think!r} has no rvs; use a frozen "
                              "scipy.stats law, Empirical, Mixture or None")


def simulate_events(key: ReplicatedKey, read_quorum: int, write_quorum: int,
                    path: SamplePath, warmup: float = 0.1) -> StalenessResult:
    """The event-level reference: SimPy processes for every message, stage and
    reply, on the draws of ``path`` (open loop). Slow; for checking
    ``simulate_queues``."""
    return _events(key, read_quorum, write_quorum, path, warmup, None, None)


def simulate_closed(key: ReplicatedKey, read_quorum: int, write_quorum: int,
                    loop: ClosedLoop, operations: int = 20_000, seed=0,
                    warmup: float = 0.1) -> StalenessResult:
    """A closed loop of ``loop.clients`` clients, by SimPy (event level, slow:
    about 20 000 operations per second on N = 3). ``key.rate`` is not used: the
    clients pace themselves; the result's ``throughput`` is measured. Operations
    are numbered in the order they are issued (ties by client), and operation j
    takes the kind, delays and services that ``draw_path`` gives operation j."""
    if not isinstance(loop, ClosedLoop):
        raise ConfigError("loop must be a ClosedLoop(clients, think)")
    path = draw_path(key, operations, seed)
    think = None if loop.think is None else _draw(loop.think, (operations,), seed,
                                                  _THINK)
    return _events(key, read_quorum, write_quorum, path, warmup, loop.clients, think)



def _events(key, read_quorum, write_quorum, path, warmup, clients, think):
    import simpy

    n = key.replicas
    read_quorum = _quorum(read_quorum, "read", n)
    write_quorum = _quorum(write_quorum, "write", n)
    operations = path.is_write.size
    env = simpy.Environment()
    stages = [[simpy.Resource(env, capacity=int(c)) for c in key.node.stage_threads]
              for _ in range(n)]
    keys, versions = path.keys_of_operations(), path.versions()
    state = [dict() for _ in range(n)]  # per node: key -> newest version applied
    busy = np.zeros((n, key.node.stage_threads.size))
    latest: dict = {}  # key -> (newest committed version, when it committed)
    issued = np.full(operations, np.nan)
    commits: dict = {}  # key -> its versions in commit order
    reads, writes = [], []

    def task(op, i, kind, reply):
        yield env.timeout(path.outbound[op, i])
        stage = key.node.stage_of[kind]
        with stages[i][stage].request() as slot:
            yield slot
            yield env.timeout(path.service[op, i])
            busy[i, stage] += path.service[op, i]
            if kind == WRITE:
                state[i][keys[op]] = max(state[i].get(keys[op], 0), int(versions[op]))
            seen = state[i].get(keys[op], 0)
        yield env.timeout(path.inbound[op, i])
        reply(seen)

    def operation(op):
        issued[op] = env.now
        kind = WRITE if path.is_write[op] else READ
        known, at = latest.get(keys[op], (0, math.nan))
        since, committed = env.now - at, len(commits.get(keys[op], ()))
        replies, done = [], env.event()
        quorum = write_quorum if kind == WRITE else read_quorum

        def reply(seen):
            replies.append(seen)
            if len(replies) == quorum:
                done.succeed()
        for i in range(n):
            env.process(task(op, i, kind, reply))
        yield done
        if kind == WRITE:
            version = int(versions[op])
            commits.setdefault(keys[op], []).append(version)
            if version > latest.get(keys[op], (0, math.nan))[0]:
                latest[keys[op]] = (version, env.now)
            writes.append((op, env.now - issued[op]))
        else:
            returned = max(replies)
            behind = sum(1 for v in commits.get(keys[op], [])[:committed] if v > returned)
            reads.append((op, returned >= known, behind, since, env.now - issued[op],
                          known))

    def scheduled(op):
        yield env.timeout(path.issue[op])
        yield from operation(op)

    next_op = [0]

    def client():
        while next_op[0] < operations:
            op = next_op[0]
            next_op[0] += 1
            yield from operation(op)
            if think is not None:
                yield env.timeout(think[op])

    if clients is None:
        for op in range(operations):
            env.process(scheduled(op))
    else:
        for _ in range(clients):
            env.process(client())
    env.run()
    start = int(warmup * operations)
    reads = sorted(r for r in reads if r[0] >= start and r[5] > 0)
    writes = sorted(w for w in writes if w[0] >= start)
    # busy time runs to the end of the last service, so the span does too
    span = float(env.now - np.nanmin(issued)) or 1.0
    measured = np.sort(issued[start:])
    throughput = ((measured.size - 1) / (measured[-1] - measured[0])
                  if measured.size > 1 and measured[-1] > measured[0] else math.nan)
    return StalenessResult(
        key, read_quorum, write_quorum,
        consistent=np.array([r[1] for r in reads], dtype=bool),
        versions_behind=np.array([r[2] for r in reads], dtype=np.int64),
        since_commit=np.array([r[3] for r in reads]),
        read_latency=np.array([r[4] for r in reads]),
        write_latency=np.array([w[1] for w in writes]),
        utilisation=busy / key.node.stage_threads / span, throughput=throughput)


# --- helpers -------------------------------------------------------------------------

#: Most keys a group may hold (the key-popularity table is built per run).
MAX_KEYS = 10_000_000


def _structure(node) -> str:
    return "stages" if isinstance(node, Stages) else "shared"


def _proportion(count: int, total: int, confidence: float) -> tuple[float, float, float]:
    if total == 0:
        return math.nan, math.nan, math.nan
    ci = stats.binomtest(count, total).proportion_ci(confidence, method="wilson")
    return count / total, float(ci.low), float(ci.high)


def _grid(grid) -> np.ndarray:
    edges = np.atleast_1d(np.asarray(grid, dtype=float))
    if (edges.ndim != 1 or edges.size == 0 or not np.all(np.isfinite(edges))
            or np.any(edges < 0) or np.any(np.diff(edges) <= 0)):
        raise ConfigError(f"t grid {np.asarray(grid).tolist()} must be increasing "
                          "finite times >= 0, e.g. 0,1,2,5,10")
    return edges


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
