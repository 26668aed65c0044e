"""The system a run simulates: nodes (with speeds), job classes, placement.

A `System` says *what* serves jobs; an arrival process (`forkjoin_sim.arrivals`) says
*when* jobs come. Together they are the single input of every run: the plain
(n, r, k) queue (`ForkJoinModel`), a read/write mix (`Workload`) and Cassandra are
mappings onto them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from forkjoin_sim.randomness.streams import STRAGGLERS
from forkjoin_sim.errors import ConfigError, counted, numbers_in_range
from forkjoin_sim.laws.exponential import Exponential
from forkjoin_sim.checks import is_plain_whole, plain_float
from forkjoin_sim.placement import get_placement

#: Most nodes a system may have (per-node state is kept in arrays of this length).
MAX_NODES = 1_000_000
#: How far class fractions may sum away from 1 (rounding in user input).
FRACTION_TOLERANCE = 1e-9
#: Child index of the run's SeedSequence that draws which nodes straggle; far from
#: the per-class streams so adding classes never moves it.
STRAGGLER_STREAM = STRAGGLERS


def _whole(name: str, value, low: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ConfigError(f"{name} must be a whole number >= {low}, got {value!r}")
    return int(value)


def law_mean(dist: Any, what: str) -> float:
    """Mean of a frozen scipy.stats distribution (or anything with ``rvs``/``mean``)."""
    if not (hasattr(dist, "rvs") and hasattr(dist, "mean")):
        raise ConfigError(
            f"{what} must be a frozen scipy.stats distribution or an Empirical "
            f"(something with rvs() and mean()), got {type(dist).__name__}"
        )
    mean = float(dist.mean())
    if not (math.isfinite(mean) and mean > 0):
        raise ConfigError(f"{what} must have a finite positive mean, got {mean}; "
                          "choose a distribution of positive times")
    if mean < 1e-200:
        raise ConfigError(f"{what} has mean {mean:g}, too small to simulate (rates "
                          "overflow); give the times in a larger unit")
    support = getattr(dist, "support", None)
    if callable(support):
        low = float(support()[0])
        if low < 0:
            raise ConfigError(f"{what} can take negative values (its support starts at "
                              f"{low:g}); a time must be >= 0: shift or truncate it")
    return mean


#: Hill's estimate of a measured law's tail index below which its variance is
#: taken to be infinite (a mean's interval then converges very slowly).
HEAVY_TAIL_INDEX = 2.0


def heavy_tail_note(dist: Any, what: str) -> str | None:
    """A warning when ``dist`` is too heavy-tailed for a run's intervals of means:
    infinite variance for a parametric law, or a Hill tail-index estimate below 2 on
    the top 5% of measured values; or a finite variance but an infinite third moment
    (`forkjoin_sim.laws.moments.finite_third_moment`; a Pareto law of shape <= 3),
    which gives the waiting times an infinite variance (Pollaczek-Khinchine), so a
    batch-means interval of a mean does not hold, however long the run."""
    try:
        variance = float(dist.var())
    except Exception:  # laws without a variance are judged by their samples alone
        variance = 0.0
    index = None
    samples = getattr(dist, "samples", None)
    if samples is not None and len(samples) >= 200:
        x = np.sort(np.asarray(samples, dtype=float))
        tail = x[-max(10, len(x) // 20):]
        if tail[0] > 0:
            logs = np.log(tail / tail[0])
            if logs.mean() > 0:
                index = 1.0 / float(logs.mean())
    if not math.isfinite(variance) or (index is not None and index < HEAVY_TAIL_INDEX):
        detail = (f"Hill tail index {index:.2f} < 2" if index is not None
                  else "infinite variance")
        return (f"{what} looks heavy-tailed ({detail}): sojourn means and their "
                "intervals converge very slowly; trust percentiles more than means")
    from forkjoin_sim.laws.describe import describe_service
    from forkjoin_sim.laws.moments import finite_third_moment

    if not finite_third_moment(dist):
        return (f"{what}, {describe_service(dist)}, has an infinite third moment (a "
                "heavy tail): waiting times then have an infinite variance "
                "(Pollaczek-Khinchine), so the intervals of means are unreliable (too "
                "narrow, however long the run); trust percentiles more than means, or "
                "use a law with a finite third moment (a Pareto shape above 3)")
    return None


def law_notes(system) -> tuple[str, ...]:
    """`heavy_tail_note` of each distinct service law of ``system``'s classes."""
    notes = []
    for job_class in system.classes:
        seen = []
        for law in job_class.task_services:
            if any(law is other for other in seen):
                continue
            seen.append(law)
            note = heavy_tail_note(law, f"the service law of {job_class.name!r}")
            if note:
                notes.append(note)
    return tuple(notes)


@numbers_in_range
@dataclass(frozen=True)
class JobClass:
    """One kind of job (e.g. "read at R=2").

    Parameters
    ----------
    name : str
        Label used in results.
    fraction : float
        Probability that a job is of this class, in (0, 1].
    replicas, quorum : int
        Tasks per job and completions that complete it, 1 <= quorum <= replicas.
    service : distribution, or a sequence of ``replicas`` distributions
        Service time of a task on a node of speed 1. A sequence gives task ``t`` its
        own law (a Cassandra read: one data request, then digests). Default
        exponential, mean 1.
    kinds : str or sequence of ``replicas`` str, optional
        Kind of each task: "task", "read", "digest" or "write"
        (`forkjoin_sim.nodes`); it picks the stage of a staged node.
    overhead : distribution, optional
        Time a job of this class spends outside the node queues (client hops,
        coordinator work): added to its latency and to its client's cycle.
    placement : placement object or name, optional
        This class's own placement (e.g. `RingSubset`), instead of the system's.
    """

    name: str
    fraction: float
    replicas: int
    quorum: int
    service: Any = field(default_factory=Exponential)
    kinds: Any = None
    overhead: Any = None
    placement: Any = None

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
        if isinstance(self.service, (list, tuple)):
            if len(self.service) != self.replicas:
                raise ConfigError(f"class {self.name!r}: {len(self.service)} task "
                                  f"service laws for {self.replicas} replicas; give one "
                                  "law, or one per task")
            object.__setattr__(self, "service", tuple(self.service))
        for t, law in enumerate(self.task_services):
            law_mean(law, f"class {self.name!r} service of task {t}")
        if self.kinds is not None:
            from forkjoin_sim.nodes import KINDS

            if not isinstance(self.kinds, (str, list, tuple)):
                raise ConfigError(f"class {self.name!r}: kinds {self.kinds!r} must be a "
                                  f"kind name or one per task, from {', '.join(KINDS)}")
            kinds = ((self.kinds,) * self.replicas if isinstance(self.kinds, str)
                     else tuple(self.kinds))
            if len(kinds) != self.replicas or not all(k in KINDS for k in kinds):
                raise ConfigError(f"class {self.name!r}: kinds {self.kinds!r} must be one "
                                  f"of {', '.join(KINDS)} or one per task")
            object.__setattr__(self, "kinds", kinds)
        if self.overhead is not None:
            law_mean(self.overhead, f"class {self.name!r} overhead")
        if self.placement is not None:
            get_placement(self.placement)

    @property
    def task_services(self) -> tuple:
        """The service law of each task position."""
        if isinstance(self.service, tuple):
            return self.service
        return (self.service,) * self.replicas

    @property
    def work(self) -> float:
        """Mean service demand of one job of this class, summed over its tasks."""
        return float(sum(law.mean() for law in self.task_services))

    @property
    def mean_service(self) -> float:
        """Mean service time of one task, averaged over positions."""
        return self.work / self.replicas


@numbers_in_range
@dataclass(frozen=True)
class Stragglers:
    """A random ``fraction`` of the nodes runs at ``speed`` (drawn anew per run seed)."""

    fraction: float
    speed: float = 0.5

    def __post_init__(self) -> None:
        if not (isinstance(self.fraction, (int, float)) and 0 <= self.fraction <= 1):
            raise ConfigError(f"straggler fraction {self.fraction!r} must lie in [0, 1]")
        if not (isinstance(self.speed, (int, float)) and math.isfinite(self.speed)
                and self.speed > 0):
            raise ConfigError(f"straggler speed {self.speed!r} must be a positive "
                              "factor (0.5 = half speed)")

    def count(self, nodes: int) -> int:
        return int(round(self.fraction * nodes))

    def draw(self, nodes: int, seed) -> np.ndarray:
        """Per-node speeds for one run: ``count`` distinct slow nodes, chosen by seed."""
        from forkjoin_sim.randomness.streams import child_rng

        speeds = np.ones(nodes)
        slow = child_rng(seed, STRAGGLER_STREAM).permutation(nodes)[:self.count(nodes)]
        speeds[slow] = self.speed
        return speeds


def check_speed_factors(values) -> None:
    """Refuse node speed factors that are not positive and finite, naming the nodes
    (at most five)."""
    values = np.asarray(values, dtype=float)
    bad = np.flatnonzero(~(np.isfinite(values) & (values > 0)))
    if len(bad):
        named = ", ".join(f"node {i}: {values[i]:g}" for i in bad[:5])
        more = f" and {len(bad) - 5:,} more" if len(bad) > 5 else ""
        raise ConfigError(f"node speeds must be positive finite factors ({named}{more}); "
                          "give each node a factor > 0 (1: nominal speed)")


def parse_speeds(text: str, nodes: int):
    """CLI form of node speeds: ``1,1,0.5,...`` (one per node), ``slow:K:SPEED``
    (the first K nodes at SPEED) or ``stragglers:FRACTION:SPEED``."""
    text = text.strip()
    name, _, rest = text.partition(":")
    try:
        if name == "stragglers":
            fraction, _, speed = rest.partition(":")
            return Stragglers(plain_float(fraction), plain_float(speed or 0.5))
        if name == "slow":
            count, _, speed = rest.partition(":")
            if not is_plain_whole(count):
                raise ValueError(count)
            count = int(count)
            if not 0 <= count <= nodes:
                raise ConfigError(f"speeds {text!r}: {count} slow nodes of {nodes}; use "
                                  f"0..{nodes}")
            return (plain_float(speed or 0.5),) * count + (1.0,) * (nodes - count)
        values = tuple(plain_float(v) for v in text.split(","))
    except ConfigError:  # a ValueError too, but one that already says what is wrong
        raise
    except ValueError:
        raise ConfigError(f"speeds {text!r} is not understood; write one factor per "
                          "node (1,1,0.5), slow:K:SPEED or stragglers:FRACTION:SPEED"
                          ) from None
    if len(values) != nodes:
        example = (",".join(["1"] * (nodes - 1) + ["0.5"]) if nodes <= 8
                   else f"{nodes} numbers such as 1,1,...,0.5")
        raise ConfigError(f"speeds {text!r} gives {len(values)} factor(s) for {nodes} "
                          f"nodes; give one per node ({example}), slow:K:SPEED or "
                          "stragglers:FRACTION:SPEED")
    return values


@dataclass(frozen=True)
class System:
    """Nodes, job classes and placement: everything that serves jobs.

    Parameters
    ----------
    nodes : int
        Number of nodes, each one FCFS server of unlimited queue.
    classes : sequence of JobClass
        Distinct names, fractions summing to 1.
    placement : "random", "ring" or a placement object
        How a job's tasks are spread over distinct nodes (`forkjoin_sim.placement`).
    speeds : sequence of floats, `Stragglers` or None
        Node speed factors: a task takes ``service / speed`` on its node. None means
        every node runs at speed 1.
    purging : bool
        Cancel a job's unfinished tasks at its quorum (SimPy engine only).
    node : node model, optional
        How a node queues tasks (`forkjoin_sim.nodes`): `SharedQueue` (default: one
        FIFO queue, one thread, the paper's node) or `Stages` (reads and writes
        in separate stages with their own threads).
    """

    nodes: int
    classes: tuple[JobClass, ...]
    placement: Any = "random"
    speeds: Any = None
    purging: bool = False
    node: Any = None

    def __post_init__(self) -> None:
        _whole("nodes", self.nodes)
        if self.nodes > MAX_NODES:
            raise ConfigError(f"nodes={self.nodes} is more than {MAX_NODES:,}; simulate "
                              "a smaller cluster (per-node load is what matters)")
        object.__setattr__(self, "classes", tuple(self.classes))
        if not self.classes:
            raise ConfigError("a system needs at least one JobClass")
        if not all(isinstance(c, JobClass) for c in self.classes):
            raise ConfigError("classes must be JobClass instances")
        names = [c.name for c in self.classes]
        if len(set(names)) != len(names):
            raise ConfigError(f"class names {names} repeat; give each class its own name")
        for c in self.classes:
            if c.replicas > self.nodes:
                raise ConfigError(f"class {c.name!r}: replicas r={c.replicas} must "
                                  f"satisfy 1 <= r <= nodes n={self.nodes}; use at most "
                                  f"{self.nodes} replicas or add nodes")
        total = sum(c.fraction for c in self.classes)
        if abs(total - 1) > FRACTION_TOLERANCE:
            raise ConfigError(f"class fractions sum to {total:.6g}, not 1; rescale them "
                              "(e.g. read 0.9, write 0.1)")
        get_placement(self.placement)
        if self.node is not None and not (hasattr(self.node, "stage_of")
                                          and hasattr(self.node, "stage_threads")):
            raise ConfigError(f"node must be a node model (SharedQueue or Stages), got "
                              f"{self.node!r}")
        if not isinstance(self.purging, bool):
            raise ConfigError(f"purging must be True or False, got {self.purging!r}")
        speeds = self.speeds
        if speeds is not None and not isinstance(speeds, Stragglers):
            values = np.asarray(speeds, dtype=float) if isinstance(
                speeds, (list, tuple, np.ndarray)) else None
            if values is None or values.shape != (self.nodes,):
                raise ConfigError(f"speeds must give one factor per node ({self.nodes}),"
                                  f" or be a Stragglers(fraction, speed); got {speeds!r}")
            check_speed_factors(values)
            object.__setattr__(self, "speeds", tuple(float(v) for v in values))

    @property
    def width(self) -> int:
        """Widest class's replicas: the column count of the sample path."""
        return max(c.replicas for c in self.classes)

    @property
    def work_per_job(self) -> float:
        """Mean total service demand of one job at speed 1, ``sum_c p_c * work_c``."""
        return sum(c.fraction * c.work for c in self.classes)

    @property
    def slowest_speed(self) -> float:
        """The smallest speed any run can give a node (stability is judged on it)."""
        if self.speeds is None:
            return 1.0
        if isinstance(self.speeds, Stragglers):
            return self.speeds.speed if self.speeds.count(self.nodes) else 1.0
        return min(self.speeds)

    def node_speeds(self, seed) -> np.ndarray:
        """This run's speed factor of each node."""
        if self.speeds is None:
            return np.ones(self.nodes)
        if isinstance(self.speeds, Stragglers):
            return self.speeds.draw(self.nodes, seed)
        return np.asarray(self.speeds)

    def utilisation(self, arrival_rate: float) -> float:
        """Busy fraction of the slowest node at ``arrival_rate`` jobs per unit time.

        Random and ring placement give every node the same share of tasks, so node
        i works ``rate * work_per_job / (nodes * speed_i)``.
        """
        per_thread = self.stage_work_per_job() / self.node_model.stage_threads
        return arrival_rate * float(per_thread.max()) / (self.nodes * self.slowest_speed)

    @property
    def node_model(self):
        """The node model (`SharedQueue()` when none was given)."""
        from forkjoin_sim.nodes import SharedQueue

        return self.node if self.node is not None else SharedQueue()

    def stage_work_per_job(self) -> np.ndarray:
        """Mean work one job brings to each stage of the node model (speed 1)."""
        from forkjoin_sim.nodes import KINDS

        stage_of = self.node_model.stage_of
        work = np.zeros(self.node_model.stage_threads.size)
        for c in self.classes:
            kinds = c.kinds or ("task",) * c.replicas
            for law, kind in zip(c.task_services, kinds):
                work[stage_of[KINDS[kind]]] += c.fraction * float(law.mean())
        return work

    @property
    def capacity(self) -> float:
        """The largest throughput (jobs per unit time) the slowest node's busiest
        stage allows."""
        return 1.0 / self.utilisation(1.0)

    def index(self, name: str) -> int:
        """Position of the class called ``name``."""
        for i, c in enumerate(self.classes):
            if c.name == name:
                return i
        raise ConfigError(f"no class {name!r}; the classes are "
                          f"{', '.join(c.name for c in self.classes)}")

    def check_stable(self, arrival_rate: float) -> None:
        """Raise ConfigError unless the slowest node keeps up with ``arrival_rate``."""
        load = self.utilisation(arrival_rate)
        if load >= 1:
            raise ConfigError(
                f"unstable load: the slowest node's utilisation = {load:.4g} must be "
                f"< 1; use an arrival rate < {self.capacity:.4g} jobs per unit time, "
                "more nodes, or closed-loop clients (throughput is then an output)")

    def describe(self) -> str:
        parts = ", ".join(f"{c.name} {c.fraction:g} ({c.replicas},{c.quorum})"
                          for c in self.classes)
        speeds = ""
        if isinstance(self.speeds, Stragglers):
            speeds = (f", {self.speeds.count(self.nodes)} straggler(s) at speed "
                      f"{self.speeds.speed:g}")
        elif self.speeds is not None and min(self.speeds) != max(self.speeds):
            speeds = f", node speeds {', '.join(f'{s:g}' for s in self.speeds)}"
        return (f"{counted(self.nodes, 'node')} [{parts}], "
                f"{get_placement(self.placement).name} "
                f"placement{speeds}")


def single_class(nodes: int, replicas: int, quorum: int, service: Any,
                 placement: Any = "random", speeds: Any = None,
                 purging: bool = False, node: Any = None) -> System:
    """The system of a plain (n, r, k) fork-join queue."""
    return System(nodes, (JobClass("job", 1.0, replicas, quorum, service),),
                  placement=placement, speeds=speeds, purging=purging, node=node)


def open_load(model) -> float | None:
    """The configured busy fraction of ``model``'s slowest node (`System.utilisation`
    at its arrival rate) under open arrivals; None for a closed loop, whose load is
    an output of the run."""
    process = model.arrival_process
    rate = getattr(process, "rate", None)
    if getattr(process, "clients", None) is not None or rate is None:
        return None
    return model.system.utilisation(rate)


class RunInput:
    """Mixin of the models that map onto the run stack: they store their `System` in
    ``_system`` and their arrival process in ``_process`` when they are built."""

    @property
    def system(self) -> System:
        """What serves the jobs: nodes, classes, placement, speeds."""
        return self._system

    @property
    def arrival_process(self):
        """When jobs come (`forkjoin_sim.arrivals`)."""
        return self._process

    def _bind(self, system: System, rate, clients, think, think_law,
              rate_option: str):
        """Store ``system`` and the arrival process the model asks for: Poisson at
        ``rate`` (stability checked) or closed-loop ``clients``, exactly one of them.
        Returns the process."""
        from forkjoin_sim.arrivals import ClosedLoop, Poisson

        object.__setattr__(self, "_system", system)
        if (clients is None) == (rate is None):
            raise ConfigError(f"give exactly one of {rate_option} and clients (closed "
                              "loop)")
        if clients is not None:
            process = ClosedLoop(clients, think, think_law)
        else:
            process = Poisson(rate)
            system.check_stable(process.rate)
        object.__setattr__(self, "_process", process)
        return process
