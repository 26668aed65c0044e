"""Sample paths: everything random about a run, drawn before any queueing happens.

An engine turns a :class:`SamplePath` into per-task completion times. Because every
engine consumes the same path, two engines can be compared exactly (common random
numbers), and a run is a pure function of its system, arrival process and seed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from forkjoin_sim.arrivals import is_closed
from forkjoin_sim.errors import ConfigError
from forkjoin_sim.placement import get_placement
from forkjoin_sim.randomness.streams import ARRIVALS, CLASS_LABELS, OVERHEAD_BASE, child_rng, class_streams


@dataclass(frozen=True)
class SamplePath:
    """Arrival times, task placements and task service times of a block of jobs.

    Attributes
    ----------
    arrivals : (jobs,) float64
        Absolute arrival times, non-decreasing. Under a closed loop they are not
        known in advance: NaN until an engine fills them in.
    nodes : (jobs, width) int32
        Node of each task; ``-1`` marks "no task" (jobs of a narrower class).
    service : (jobs, width) float64
        Time each task takes on its node (node speed applied; ignored where
        ``nodes == -1``).
    quorum : (jobs,) int32
        Number of task completions that complete each job.
    labels : (jobs,) int16 or None
        Class index of each job (None: one class).
    think : (jobs,) float64 or None
        Closed loop only: the think time the job's client takes after the job
        completes, before its next request.
    kinds : (jobs, width) int8 or None
        Kind of each task (`forkjoin_sim.nodes`: task, read, digest, write), which
        picks its stage at a staged node. None: every task is a plain task.
    overhead : (jobs,) float64 or None
        Time the job spends outside the node queues (client hops, coordinator
        work), added to its latency and, in a closed loop, to its client's cycle.
    """

    arrivals: np.ndarray
    nodes: np.ndarray
    service: np.ndarray
    quorum: np.ndarray
    labels: np.ndarray | None = None
    think: np.ndarray | None = None
    kinds: np.ndarray | None = None
    overhead: np.ndarray | None = None

    _FIELDS = ("arrivals", "nodes", "service", "quorum", "labels", "think", "kinds",
               "overhead")

    @property
    def jobs(self) -> int:
        return len(self.arrivals)

    def __len__(self) -> int:
        return self.jobs

    @property
    def closed(self) -> bool:
        return self.think is not None

    def slice(self, start: int, stop: int) -> "SamplePath":
        """The jobs ``start:stop`` as a new path (views, no copy)."""
        return SamplePath(*(None if getattr(self, f) is None
                            else getattr(self, f)[start:stop] for f in self._FIELDS))

    @staticmethod
    def concatenate(paths: "list[SamplePath]") -> "SamplePath":
        def join(name):
            parts = [getattr(p, name) for p in paths]
            return None if parts[0] is None else np.concatenate(parts)
        return SamplePath(*(join(f) for f in SamplePath._FIELDS))


def draw_placement(placement, node_count: int, replicas: int, jobs: int,
                   rng: np.random.Generator) -> np.ndarray:
    """Nodes of each job's tasks, shape (jobs, replicas), distinct within a row."""
    return get_placement(placement).draw(node_count, replicas, jobs, rng)


def draw_services(laws: tuple, jobs: int, rng: np.random.Generator) -> np.ndarray:
    """Service times (jobs, len(laws)): one law for all tasks is one draw of the whole
    block; otherwise column by column from the same stream."""
    width = len(laws)
    if all(law is laws[0] for law in laws):
        return np.asarray(laws[0].rvs(size=(jobs, width), random_state=rng),
                          dtype=np.float64).reshape(jobs, width)
    return np.column_stack([np.asarray(law.rvs(size=jobs, random_state=rng),
                                       dtype=np.float64).reshape(jobs)
                            for law in laws]).reshape(jobs, width)


class PathSampler:
    """Draws the sample path of a system under an arrival process, block by block.

    Arrivals (or think times), class labels, and the placement and service of each
    class come from their own child streams of the seed (`forkjoin_sim.randomness.streams`), so
    the numbers of a run depend only on its description and seed, not on how the run
    is cut into blocks (open arrival times up to the rounding of the running clock,
    which adds each block's gaps to the last arrival).

    Attributes
    ----------
    speeds : (nodes,) array, this run's node speed factors
    initial_release : (clients,) array or None, closed loop: when each client sends
        its first request
    """

    def __init__(self, system, arrivals, seed):
        self.system = system
        self.arrivals = arrivals
        self.speeds = system.node_speeds(seed)
        self._uneven = bool(np.any(self.speeds != 1.0))
        self._arrival_rng = child_rng(seed, ARRIVALS)
        self._class_rng = child_rng(seed, CLASS_LABELS)
        self._class_rngs = [class_streams(seed, c) for c in range(len(system.classes))]
        self._overhead_rngs = [child_rng(seed, OVERHEAD_BASE + c)
                               for c in range(len(system.classes))]
        self._placements = [get_placement(c.placement if c.placement is not None
                                          else system.placement) for c in system.classes]
        self._kinds = any(c.kinds is not None for c in system.classes)
        self._overhead = any(c.overhead is not None for c in system.classes)
        self._issued = 0
        self._clock = 0.0
        self.initial_release = None
        if is_closed(arrivals):
            self.initial_release = arrivals.think_times(arrivals.clients, self._arrival_rng)
        probabilities = np.array([c.fraction for c in system.classes])
        self._probabilities = probabilities / probabilities.sum()

    def draw(self, jobs: int) -> SamplePath:
        """The next ``jobs`` jobs of the path."""
        system = self.system
        think = None
        if self.initial_release is not None:
            times = np.full(jobs, np.nan)
            think = self.arrivals.think_times(jobs, self._arrival_rng)
        else:
            times = self.arrivals.arrival_times(self._clock, self._issued, jobs,
                                                self._arrival_rng)
            if jobs:
                self._clock = float(times[-1])
        self._issued += jobs
        classes = system.classes
        kinds = overhead = None
        if len(classes) == 1:
            labels = None
            c = classes[0]
            placement_rng, service_rng = self._class_rngs[0]
            nodes = self._placements[0].draw(system.nodes, c.replicas, jobs,
                                             placement_rng)
            service = draw_services(c.task_services, jobs, service_rng)
            quorum = np.full(jobs, c.quorum, dtype=np.int32)
            rows_of = [slice(None)]
        else:
            labels = self._class_rng.choice(len(classes), size=jobs,
                                            p=self._probabilities).astype(np.int16)
            width = system.width
            nodes = np.full((jobs, width), -1, dtype=np.int32)
            service = np.zeros((jobs, width))
            quorum = np.empty(jobs, dtype=np.int32)
            rows_of = []
            for index, c in enumerate(classes):
                rows = np.flatnonzero(labels == index)
                rows_of.append(rows)
                placement_rng, service_rng = self._class_rngs[index]
                nodes[rows, :c.replicas] = self._placements[index].draw(
                    system.nodes, c.replicas, rows.size, placement_rng)
                service[rows, :c.replicas] = draw_services(c.task_services, rows.size,
                                                           service_rng)
                quorum[rows] = c.quorum
        if self._kinds:
            from forkjoin_sim.nodes import KINDS

            kinds = np.zeros(nodes.shape, dtype=np.int8)
            for c, rows in zip(classes, rows_of):
                if c.kinds is not None:
                    kinds[rows, :c.replicas] = [KINDS[k] for k in c.kinds]
        if self._overhead:
            overhead = np.zeros(jobs)
            for index, (c, rows) in enumerate(zip(classes, rows_of)):
                if c.overhead is not None:
                    count = overhead[rows].size
                    overhead[rows] = np.asarray(c.overhead.rvs(
                        size=count, random_state=self._overhead_rngs[index]),
                        dtype=float).reshape(count)
        if self._uneven:
            present = nodes >= 0
            service[present] /= self.speeds[nodes[present]]
        return SamplePath(times, nodes, service, quorum, labels, think, kinds, overhead)


class PathReplay:
    """A sampler over a path drawn beforehand, served block by block (for example
    nested basic queues that share one wider path: common random numbers)."""

    initial_release = None

    def __init__(self, path: SamplePath):
        self.path = path
        self._next = 0

    def draw(self, jobs: int) -> SamplePath:
        block = self.path.slice(self._next, self._next + jobs)
        self._next += block.jobs
        return block


def leading_columns(path: SamplePath, width: int) -> SamplePath:
    """The (i, i, i) basic queue on the first ``width`` tasks of every job of ``path``
    (quorum ``width``): nested basic queues with common random numbers."""
    return SamplePath(path.arrivals, np.ascontiguousarray(path.nodes[:, :width]),
                      np.ascontiguousarray(path.service[:, :width]),
                      np.full(path.jobs, width, dtype=np.int32), path.labels,
                      kinds=None if path.kinds is None
                      else np.ascontiguousarray(path.kinds[:, :width]))


def draw_sample_path(model, jobs: int, seed=0) -> SamplePath:
    """The first ``jobs`` jobs of a model's sample path for ``seed`` (a
    `ForkJoinModel`, a `Workload`, or anything with ``system`` and ``arrival_process``)
    under open arrivals (a closed loop's arrival times come out of the run itself)."""
    if not (hasattr(model, "system") and hasattr(model, "arrival_process")):
        raise ConfigError(f"cannot draw a path of a {type(model).__name__}; give a "
                          "ForkJoinModel or a Workload")
    if getattr(model.arrival_process, "closed", False):
        raise ConfigError("a closed loop's arrival times depend on the run; simulate it "
                          "(simulate(model)) instead of drawing its path")
    if isinstance(jobs, bool) or not isinstance(jobs, (int, np.integer)) or jobs < 1:
        raise ConfigError(f"jobs={jobs!r} must be a whole number >= 1")
    from forkjoin_sim.checks import check_jobs_fit

    check_jobs_fit(int(jobs), "jobs")
    return PathSampler(model.system, model.arrival_process, seed).draw(int(jobs))
