"""Multi-class workloads: several job classes sharing one cluster's FCFS queues.

A read at consistency R and a write at consistency W are both fork-join jobs, but
with different replicas, quorum and service times; they meet in the same node
queues. A `Workload` is the frozen description of such a mix: one Poisson arrival
stream whose jobs belong to class c with probability ``fraction``; a job of class c
forks ``replicas`` tasks onto distinct nodes and completes at its ``quorum``-th
task completion. The path it produces is an ordinary `SamplePath` (narrower jobs
padded with ``-1``), so the existing engines run it unchanged.
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats

from .engines import FastEngine
from .errors import ConfigError
from .model import PLACEMENTS, distribution_mean
from .samplepath import SamplePath, draw_placement
from .statistics import Summary, summarize, warmup_count

#: Jobs per block: bounded memory for long runs. Part of a run's definition, like
#: ``simulation.BLOCK_JOBS``.
BLOCK_JOBS = 1 << 16
#: How far the class fractions may sum away from 1 (rounding in user input).
FRACTION_TOLERANCE = 1e-9


@dataclass(frozen=True)
class JobClass:
    """One kind of job in a workload (e.g. "read at R=2").

    Parameters
    ----------
    name : str
        Label used in results.
    fraction : float
        Probability that an arriving job is of this class, in (0, 1].
    replicas, quorum : int
        Tasks per job and completions that complete it, 1 <= quorum <= replicas.
    service : frozen scipy.stats distribution, Empirical or Deterministic
        Service time of one task of this class. Default exponential, mean 1.
    """

    name: str
    fraction: float
    replicas: int
    quorum: int
    service: Any = field(default_factory=lambda: stats.expon())

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ConfigError(f"job class name must be a non-empty string, got "
                              f"{self.name!r}")
        for what, value in (("replicas", self.replicas), ("quorum", self.quorum)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                raise ConfigError(f"class {self.name!r}: {what} must be a whole number,"
                                  f" got {value!r}")
        if self.replicas < 1:
            raise ConfigError(f"class {self.name!r}: replicas={self.replicas} must be "
                              ">= 1")
        if not 1 <= self.quorum <= self.replicas:
            raise ConfigError(f"class {self.name!r}: quorum={self.quorum} must satisfy "
                              f"1 <= quorum <= replicas={self.replicas}; use 1.."
                              f"{self.replicas}")
        if (isinstance(self.fraction, bool)
                or not isinstance(self.fraction, (int, float, np.number))
                or not (math.isfinite(self.fraction) and 0 < self.fraction <= 1)):
            raise ConfigError(f"class {self.name!r}: fraction={self.fraction!r} must be "
                              "in (0, 1]; drop classes that never arrive")
        distribution_mean(self.service, f"class {self.name!r} service")

    @property
    def mean_service(self) -> float:
        return float(self.service.mean())


@dataclass(frozen=True)
class Workload:
    """Job classes sharing ``nodes`` FCFS nodes and one arrival stream.

    Parameters
    ----------
    nodes : int
        Cluster size; every class's replicas must fit.
    classes : sequence of JobClass
        Distinct names, fractions summing to 1.
    arrival_rate : float
        Jobs (of all classes) per unit time, Poisson.
    placement : "random" or "ring"
        As in `ForkJoinModel`; both give every node the same load.

    Raises ``ConfigError`` if any node would be overloaded: the per-node utilisation
    ``arrival_rate * sum_c fraction_c * replicas_c * E[X_c] / nodes`` must be < 1.
    """

    nodes: int
    classes: tuple[JobClass, ...]
    arrival_rate: float
    placement: str = "random"

    def __post_init__(self) -> None:
        object.__setattr__(self, "classes", tuple(self.classes))
        if isinstance(self.nodes, bool) or not isinstance(self.nodes, (int, np.integer)) \
                or self.nodes < 1:
            raise ConfigError(f"nodes={self.nodes!r} must be a whole number >= 1")
        if not self.classes:
            raise ConfigError("a workload needs at least one JobClass")
        if not all(isinstance(c, JobClass) for c in self.classes):
            raise ConfigError("classes must be JobClass instances")
        names = [c.name for c in self.classes]
        if len(set(names)) != len(names):
            raise ConfigError(f"class names {names} repeat; give each class its own name")
        for c in self.classes:
            if c.replicas > self.nodes:
                raise ConfigError(f"class {c.name!r}: replicas={c.replicas} exceeds "
                                  f"nodes={self.nodes}; use at most {self.nodes} "
                                  "replicas or add nodes")
        total = sum(c.fraction for c in self.classes)
        if abs(total - 1) > FRACTION_TOLERANCE:
            raise ConfigError(f"class fractions sum to {total:.6g}, not 1; rescale them "
                              "(e.g. read 0.9, write 0.1)")
        if self.placement not in PLACEMENTS:
            raise ConfigError(f"placement {self.placement!r} is unknown; use one of "
                              f"{', '.join(PLACEMENTS)}")
        rate = self.arrival_rate
        if (isinstance(rate, bool) or not isinstance(rate, (int, float, np.number))
                or not (math.isfinite(rate) and rate > 0)):
            raise ConfigError(f"arrival_rate={rate!r} must be a positive finite number")
        object.__setattr__(self, "arrival_rate", float(rate))
        if self.node_utilisation >= 1:
            work = self.work_per_job
            raise ConfigError(
                f"unstable workload: each node's utilisation arrival_rate * "
                f"sum(fraction*replicas*mean service) / nodes = {rate:g}*{work:.4g}/"
                f"{self.nodes} = {self.node_utilisation:.4g} must be < 1; use "
                f"arrival_rate < {self.nodes / work:.4g} or more nodes")

    @property
    def work_per_job(self) -> float:
        """Mean total service demand of one job, ``sum_c fraction_c * r_c * E[X_c]``."""
        return sum(c.fraction * c.replicas * c.mean_service for c in self.classes)

    @property
    def node_utilisation(self) -> float:
        """Busy fraction of every node (placement spreads tasks evenly)."""
        return self.arrival_rate * self.work_per_job / self.nodes

    @property
    def width(self) -> int:
        """Widest class's replicas: the column count of the sample path."""
        return max(c.replicas for c in self.classes)

    def index(self, name: str) -> int:
        """Position of the class called ``name``."""
        for i, c in enumerate(self.classes):
            if c.name == name:
                return i
        raise ConfigError(f"no class {name!r}; the classes are "
                          f"{', '.join(c.name for c in self.classes)}")

    def describe(self) -> str:
        parts = ", ".join(f"{c.name} {c.fraction:g} ({c.replicas},{c.quorum})"
                          for c in self.classes)
        return (f"{self.nodes} nodes, {self.arrival_rate:g} jobs per unit time "
                f"[{parts}], per-node load {self.node_utilisation:.4g}, "
                f"{self.placement} placement")


class WorkloadSampler:
    """Draws a workload's sample path block by block.

    Independent streams spawned from one ``SeedSequence``: arrivals, class labels,
    and per class one placement and one service stream. A class's tasks therefore
    draw from their own streams, whichever other classes exist.
    """

    def __init__(self, workload: Workload, seed: int | np.random.SeedSequence):
        self.workload = workload
        seq = seed if isinstance(seed, np.random.SeedSequence) \
            else np.random.SeedSequence(seed)
        count = len(workload.classes)
        streams = [np.random.default_rng(s) for s in seq.spawn(2 + 2 * count)]
        self._arrival_rng, self._class_rng = streams[:2]
        self._placement_rngs = streams[2:2 + count]
        self._service_rngs = streams[2 + count:]
        self._probabilities = np.array([c.fraction for c in workload.classes])
        self._probabilities /= self._probabilities.sum()
        self._clock = 0.0

    def draw(self, jobs: int) -> tuple[SamplePath, np.ndarray]:
        """The next ``jobs`` jobs: their path and each job's class index."""
        w = self.workload
        times = self._clock + np.cumsum(
            self._arrival_rng.exponential(1.0 / w.arrival_rate, size=jobs))
        if jobs:
            self._clock = float(times[-1])
        labels = self._class_rng.choice(len(w.classes), size=jobs,
                                        p=self._probabilities).astype(np.int16)
        nodes = np.full((jobs, w.width), -1, dtype=np.int32)
        service = np.zeros((jobs, w.width))
        quorum = np.empty(jobs, dtype=np.int32)
        for c, job_class in enumerate(w.classes):
            rows = np.flatnonzero(labels == c)
            r = job_class.replicas
            nodes[rows, :r] = draw_placement(w.placement, w.nodes, r, rows.size,
                                             self._placement_rngs[c])
            service[rows, :r] = np.asarray(
                job_class.service.rvs(size=(rows.size, r),
                                      random_state=self._service_rngs[c]),
                dtype=float).reshape(rows.size, r)
            quorum[rows] = job_class.quorum
        return SamplePath(times, nodes, service, quorum), labels


@dataclass(frozen=True)
class WorkloadResult:
    """The outcome of one multi-class run.

    Attributes
    ----------
    workload, jobs, seed : the run's configuration
    sojourns, labels : measured jobs (after warm-up, every s-th) in arrival order,
        and each one's class index
    summaries : class name -> `Summary` of that class's measured jobs
    overall : `Summary` of all measured jobs (the mix)
    utilisation : measured busy fraction of each node
    seconds : wall-clock time
    """

    workload: Workload
    jobs: int
    seed: int
    sojourns: np.ndarray
    labels: np.ndarray
    summaries: dict[str, Summary]
    overall: Summary
    utilisation: np.ndarray
    seconds: float

    def class_sojourns(self, name: str) -> np.ndarray:
        """Measured sojourns of the class called ``name``, in arrival order."""
        return self.sojourns[self.labels == self.workload.index(name)]

    def report(self) -> str:
        lines = [self.workload.describe(),
                 f"jobs simulated {self.jobs:,} ({self.seconds:.2f} s), node "
                 f"utilisation mean {self.utilisation.mean():.4f}"]
        rows = list(self.summaries.items()) + [("all", self.overall)]
        for name, s in rows:
            lines.append(f"{name:>10}: n={s.jobs_measured:,} mean {s.mean:.5g} "
                         f"[{s.ci_low:.5g}, {s.ci_high:.5g}]  p50 {s.p50:.4g}  "
                         f"p95 {s.p95:.4g}  p99 {s.p99:.4g}")
        return "\n".join(lines)


def simulate_workload(workload: Workload, jobs: int = 200_000, seed=0,
                      warmup: float = 0.1, sample_every: int = 1) -> WorkloadResult:
    """Simulate ``jobs`` jobs of a multi-class workload on the fast engine.

    The first ``floor(warmup * jobs)`` jobs (all classes) are dropped; after that
    every ``sample_every``-th job is measured. Each class gets a `Summary` of its
    measured jobs (batch-means interval on the class's own sequence).
    """
    if isinstance(jobs, bool) or not isinstance(jobs, (int, np.integer)) or jobs < 2:
        raise ConfigError(f"jobs={jobs!r} must be a whole number >= 2")
    if isinstance(warmup, str):
        raise ConfigError(f"warmup={warmup!r}: multi-class runs take a fraction in "
                          "[0, 1), e.g. 0.1")
    start = warmup_count(int(jobs), warmup)
    if isinstance(sample_every, bool) or not isinstance(sample_every, (int, np.integer)) \
            or sample_every < 1:
        raise ConfigError(f"sample_every={sample_every!r} must be a whole number >= 1")
    started = time.perf_counter()
    sampler = WorkloadSampler(workload, seed)
    engine = FastEngine(workload.nodes)
    busy = np.zeros(workload.nodes)
    kept, kept_labels = [], []
    done = 0
    horizon = 0.0
    while done < jobs:
        path, labels = sampler.draw(min(BLOCK_JOBS, jobs - done))
        _, sojourns = engine.run(path)
        index = np.arange(done, done + path.jobs)
        keep = (index >= start) & ((index - start) % sample_every == 0)
        kept.append(sojourns[keep])
        kept_labels.append(labels[keep])
        mask = path.nodes >= 0
        busy += np.bincount(path.nodes[mask], weights=path.service[mask],
                            minlength=workload.nodes)
        done += path.jobs
        horizon = float(path.arrivals[-1])
    sojourns = np.concatenate(kept)
    labels = np.concatenate(kept_labels)
    summaries = {}
    for c, job_class in enumerate(workload.classes):
        own = sojourns[labels == c]
        if own.size < 2:
            raise ConfigError(f"class {job_class.name!r} has only {own.size} measured "
                              "job(s); run more jobs or raise its fraction")
        summaries[job_class.name] = summarize(own, warmup=0.0)
    overall = dataclasses.replace(summarize(sojourns, warmup=0.0),
                                  warmup_dropped=start, sample_every=int(sample_every))
    return WorkloadResult(workload=workload, jobs=int(jobs),
                          seed=seed if isinstance(seed, int) else -1,
                          sojourns=sojourns, labels=labels, summaries=summaries,
                          overall=overall, utilisation=busy / horizon,
                          seconds=time.perf_counter() - started)
