"""Sample paths: everything random about a run, drawn before any queueing happens.

An engine turns a :class:`SamplePath` into per-task completion times. Because every
engine consumes the same path, two engines can be compared exactly (common random
numbers), and a run is a pure function of its model and seed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from .model import ForkJoinModel


@dataclass(frozen=True)
class SamplePath:
    """Arrival times, task placements and task service times of a block of jobs.

    Attributes
    ----------
    arrivals : (jobs,) float64
        Absolute arrival times, non-decreasing.
    nodes : (jobs, width) int32
        Node of each task; ``-1`` marks "no task" (jobs of a narrower class).
    service : (jobs, width) float64
        Service time of each task (ignored where ``nodes == -1``).
    quorum : (jobs,) int32
        Number of task completions that complete each job.
    """

    arrivals: np.ndarray
    nodes: np.ndarray
    service: np.ndarray
    quorum: np.ndarray

    @property
    def jobs(self) -> int:
        return len(self.arrivals)

    def __len__(self) -> int:
        return self.jobs

    def slice(self, start: int, stop: int) -> "SamplePath":
        """The jobs ``start:stop`` as a new path (views, no copy)."""
        return SamplePath(self.arrivals[start:stop], self.nodes[start:stop],
                          self.service[start:stop], self.quorum[start:stop])

    @staticmethod
    def concatenate(paths: "list[SamplePath]") -> "SamplePath":
        return SamplePath(*(np.concatenate([getattr(p, f) for p in paths])
                            for f in ("arrivals", "nodes", "service", "quorum")))


@numba.njit(cache=True)
def _random_subsets(offsets: np.ndarray, node_count: int) -> np.ndarray:
    """Ordered uniform r-subsets of range(node_count) by partial Fisher-Yates.

    ``offsets[j, t]`` is uniform on ``0 .. node_count - t - 1``; the swaps are undone
    after each job so every job starts from the identity permutation.
    """
    jobs, width = offsets.shape
    out = np.empty((jobs, width), dtype=np.int32)
    perm = np.arange(node_count, dtype=np.int32)
    for j in range(jobs):
        for t in range(width):
            s = t + offsets[j, t]
            perm[t], perm[s] = perm[s], perm[t]
            out[j, t] = perm[t]
        for t in range(width - 1, -1, -1):
            s = t + offsets[j, t]
            perm[t], perm[s] = perm[s], perm[t]
    return out


def draw_placement(placement: str, node_count: int, replicas: int, jobs: int,
                   rng: np.random.Generator) -> np.ndarray:
    """Nodes of each job's tasks, shape (jobs, replicas), distinct within a row."""
    if placement == "ring":
        start = rng.integers(0, node_count, size=jobs, dtype=np.int32)
        return ((start[:, None] + np.arange(replicas, dtype=np.int32)) % node_count
                ).astype(np.int32)
    if replicas == node_count:
        # Every node gets a task; order within a job is irrelevant to FCFS queues.
        return np.broadcast_to(np.arange(node_count, dtype=np.int32),
                               (jobs, replicas)).copy()
    offsets = rng.integers(0, node_count - np.arange(replicas), size=(jobs, replicas))
    return _random_subsets(offsets, node_count)


def draw_interarrivals(arrivals, rate: float, jobs: int,
                       rng: np.random.Generator) -> np.ndarray:
    """Inter-arrival gaps with mean ``1/rate`` for one of the model's arrival kinds."""
    if isinstance(arrivals, str):
        if arrivals == "poisson":
            return rng.exponential(1.0 / rate, size=jobs)
        return np.full(jobs, 1.0 / rate)
    gaps = np.asarray(arrivals.rvs(size=jobs, random_state=rng), dtype=float)
    return gaps * (1.0 / (rate * float(arrivals.mean())))


class PathSampler:
    """Draws a model's sample path block by block from three independent streams.

    Arrivals, placements and service times each have their own generator spawned from
    one ``SeedSequence``, so the numbers of a run depend only on the model and the
    seed, not on how the run is cut into blocks (arrival times up to the rounding of
    the running clock, which adds each block's gaps to the last arrival).
    """

    def __init__(self, model: ForkJoinModel, seed: int | np.random.SeedSequence):
        self.model = model
        seq = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
        self._arrival_rng, self._placement_rng, self._service_rng = (
            np.random.default_rng(s) for s in seq.spawn(3))
        self._clock = 0.0

    def draw(self, jobs: int) -> SamplePath:
        """The next ``jobs`` jobs of the path."""
        m = self.model
        times = self._clock + np.cumsum(
            draw_interarrivals(m.arrivals, m.arrival_rate, jobs, self._arrival_rng))
        if jobs:
            self._clock = float(times[-1])
        nodes = draw_placement(m.placement, m.nodes, m.replicas, jobs, self._placement_rng)
        service = np.asarray(
            m.service.rvs(size=(jobs, m.replicas), random_state=self._service_rng),
            dtype=np.float64).reshape(jobs, m.replicas)
        quorum = np.full(jobs, m.quorum, dtype=np.int32)
        return SamplePath(times, nodes, service, quorum)


def draw_sample_path(model: ForkJoinModel, jobs: int,
                     seed: int | np.random.SeedSequence = 0) -> SamplePath:
    """The first ``jobs`` jobs of the model's sample path for ``seed``."""
    return PathSampler(model, seed).draw(jobs)
