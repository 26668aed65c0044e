"""Write paths: a Cassandra write workload drawn before any queueing happens.

A :class:`WritePath` is a :class:`~forkjoin_sim.randomness.samplepath.SamplePath` (arrivals,
replica nodes, per-task service, quorum) plus what the staged model also needs: each
write's coordinator and which task, if any, is the coordinator's own replica.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from forkjoin_sim.errors import ConfigError
from forkjoin_sim.arrivals import Poisson
from forkjoin_sim.randomness.samplepath import SamplePath, draw_placement
from forkjoin_sim.randomness.streams import child_rng
from forkjoin_sim.cassandra.model import CassandraModel

#: Child streams of the run's SeedSequence (see the table in `randomness.streams`).
from forkjoin_sim.randomness.streams import (  # noqa: E402  (the table of purposes)
    WRITES_ARRIVALS as ARRIVALS, WRITES_COORDINATOR as COORDINATOR,
    WRITES_LOCAL_SERVICE as LOCAL_SERVICE, WRITES_PLACEMENT as PLACEMENT,
    WRITES_REMOTE_SERVICE as REMOTE_SERVICE, WRITES_STAGES as STAGES)


@dataclass(frozen=True)
class WritePath:
    """A block of writes.

    Attributes
    ----------
    path : SamplePath
        Arrivals, replica nodes (jobs, r), per-task service and quorum.
    coordinator : (jobs,) int32
        The node the client sent each write to.
    local_slot : (jobs,) int32
        Column of ``path.nodes`` that is the coordinator itself, or -1 (remote write).
    node_count : int
        Nodes of the cluster (coordinators included).
    """

    path: SamplePath
    coordinator: np.ndarray
    local_slot: np.ndarray
    node_count: int

    @property
    def jobs(self) -> int:
        return self.path.jobs


def spawn_streams(seed: int | np.random.SeedSequence) -> list[np.random.Generator]:
    """The run's independent generators, indexed by ``ARRIVALS`` ... ``STAGES``.

    The children are those ``seed.spawn`` would give a fresh SeedSequence, built
    without advancing it, so the streams are a pure function of ``seed``.
    """
    return [_child(seed, i) for i in range(STAGES + 1)]


_child = child_rng


class WritePathSampler:
    """Draws a :class:`CassandraModel`'s writes block by block, reproducibly.

    Each random ingredient has its own stream, so the numbers depend only on the
    model and the seed, not on the block sizes.
    """

    def __init__(self, model: CassandraModel, seed: int | np.random.SeedSequence):
        self.model = model
        self.streams = spawn_streams(seed)
        self._clock = 0.0
        self.process = model.arrival_process
        self.initial_release = None
        if self.process.closed:
            self.initial_release = self.process.think_times(self.process.clients,
                                                            self.streams[ARRIVALS])

    def draw_in_blocks(self, jobs: int, block: int) -> WritePath:
        """The next ``jobs`` writes as one block, drawn in blocks of ``block``: the same
        writes as ``draw`` called with those blocks (a run of level 1)."""
        return concatenate([self.draw(min(block, jobs - done))
                            for done in range(0, jobs, block)] or [self.draw(0)])

    def draw(self, jobs: int) -> WritePath:
        """The next ``jobs`` writes (closed loop: arrival times NaN, think times set)."""
        m, rng = self.model, self.streams
        think = None
        if self.initial_release is not None:
            times = np.full(jobs, np.nan)
            think = self.process.think_times(jobs, rng[ARRIVALS])
        else:
            times = self.process.arrival_times(self._clock, 0, jobs, rng[ARRIVALS])
            if jobs:
                self._clock = float(times[-1])
        nodes = draw_placement("ring", m.nodes, m.replicas, jobs, rng[PLACEMENT])
        service = _draw(m.remote_service, (jobs, m.replicas), rng[REMOTE_SERVICE])
        # Every policy is "local with probability l, then a uniform replica, else a
        # uniform non-replica"; round-robin (uniform over all nodes) is l = r/n.
        pick = rng[COORDINATOR]
        local = pick.random(jobs) < m.local_fraction
        slot = pick.integers(0, m.replicas, size=jobs, dtype=np.int32)
        others = pick.integers(0, max(m.nodes - m.replicas, 1), size=jobs, dtype=np.int32)
        local_service = _draw(m.local_service, (jobs,), rng[LOCAL_SERVICE])
        rows = np.flatnonzero(local)
        service[rows, slot[rows]] = local_service[rows]
        start = nodes[:, 0]
        coordinator = np.where(local, nodes[np.arange(jobs), slot],
                               (start + m.replicas + others) % m.nodes).astype(np.int32)
        local_slot = np.where(local, slot, -1).astype(np.int32)
        quorum = np.full(jobs, m.quorum, dtype=np.int32)
        return WritePath(SamplePath(times, nodes, service, quorum, think=think),
                         coordinator, local_slot, m.nodes)


def concatenate(parts: list[WritePath]) -> WritePath:
    """Blocks of writes one after the other, as one block."""
    if len(parts) == 1:
        return parts[0]
    fields = {}
    for name in SamplePath._FIELDS:
        values = [getattr(p.path, name) for p in parts]
        fields[name] = None if values[0] is None else np.concatenate(values)
    return WritePath(SamplePath(**fields),
                     np.concatenate([p.coordinator for p in parts]),
                     np.concatenate([p.local_slot for p in parts]), parts[0].node_count)


def basic_write_path(kind: str, replicas: int, arrival_rate: float, service: Any,
                     jobs: int, seed: int | np.random.SeedSequence = 0) -> WritePath:
    """Writes of a basic configuration, Theorem 4's inputs.

    ``kind="local"``: LT(1,1,1), a one-node cluster whose node coordinates every
    write to itself (``replicas`` must be 1). ``kind="remote"``: RT(i,i,i) with
    i = ``replicas``, every write goes to all i replica nodes through a separate
    coordinator node (node i) that holds no replica; consistency ALL.

    Node t's service times come from their own stream, so for one seed the
    RT(i,i,i) paths are nested: the first i nodes of RT(i+1,i+1,i+1) see exactly
    RT(i,i,i)'s arrivals and services (common random numbers across i, which keeps
    Theorem 4's alternating sum of them from amplifying independent noise).
    """
    if kind not in ("local", "remote"):
        raise ConfigError(f"basic write kind {kind!r} is unknown; use local or remote")
    if not isinstance(replicas, (int, np.integer)) or replicas < 1:
        raise ConfigError(f"replicas must be a whole number >= 1, got {replicas!r}")
    if kind == "local" and replicas != 1:
        raise ConfigError(f"a local basic write LT(1,1,1) has one replica, got "
                          f"replicas={replicas}; use replicas=1")
    if not arrival_rate > 0:
        raise ConfigError(f"arrival_rate must be positive, got {arrival_rate!r}")
    rng = spawn_streams(seed)
    times = Poisson(arrival_rate).arrival_times(0.0, 0, jobs, rng[ARRIVALS])
    nodes = np.broadcast_to(np.arange(replicas, dtype=np.int32), (jobs, replicas)).copy()
    stream = LOCAL_SERVICE if kind == "local" else REMOTE_SERVICE
    work = np.column_stack([_draw(service, (jobs,), _child(seed, stream, t))
                            for t in range(replicas)])
    quorum = np.full(jobs, replicas, dtype=np.int32)
    if kind == "local":
        coordinator = np.zeros(jobs, dtype=np.int32)
        local_slot = np.zeros(jobs, dtype=np.int32)
        node_count = 1
    else:
        coordinator = np.full(jobs, replicas, dtype=np.int32)
        local_slot = np.full(jobs, -1, dtype=np.int32)
        node_count = replicas + 1
    return WritePath(SamplePath(times, nodes, work, quorum), coordinator, local_slot,
                     node_count)


def _draw(dist: Any, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    return np.asarray(dist.rvs(size=shape, random_state=rng),
                      dtype=np.float64).reshape(shape)
