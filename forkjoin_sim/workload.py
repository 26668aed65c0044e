"""Multi-class workloads: several job classes sharing one cluster's FCFS queues.

A read at consistency R and a write at consistency W are both fork-join jobs, but
with different replicas, quorum and service times; they meet in the same node
queues. A `Workload` is the frozen description of such a mix: jobs belong to class c
with probability ``fraction``; a job of class c forks ``replicas`` tasks onto
distinct nodes and completes at its ``quorum``-th task completion. It is a thin
mapping onto the run stack: a `System` of those classes plus an arrival process
(Poisson at ``arrival_rate``, or closed-loop clients).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from forkjoin_sim.errors import ConfigError, numbers_in_range
from forkjoin_sim.simulation import SimulationResult, simulate
from forkjoin_sim.system import FRACTION_TOLERANCE, JobClass, RunInput, System  # noqa: F401

#: A workload run's result is the one result type.
WorkloadResult = SimulationResult


@numbers_in_range
@dataclass(frozen=True)
class Workload(RunInput):
    """Job classes sharing ``nodes`` FCFS nodes.

    Parameters
    ----------
    nodes : int
        Cluster size; every class's replicas must fit.
    classes : sequence of JobClass
        Distinct names, fractions summing to 1.
    arrival_rate : float, optional
        Jobs (of all classes) per unit time, Poisson. Give it, or ``clients``.
    placement : "random" or "ring"
        As in `ForkJoinModel`; both give every node the same load.
    clients, think, think_law : closed-loop clients instead of Poisson arrivals
        (see `forkjoin_sim.arrivals.ClosedLoop`).
    speeds : per-node speed factors or `Stragglers` (see `System`).
    node : node model (`forkjoin_sim.nodes.SharedQueue` or `Stages`), optional
        How each node queues reads and writes; default one FIFO queue, one thread.

    Raises ``ConfigError`` if any node would be overloaded under open arrivals: the
    per-node utilisation ``arrival_rate * sum_c fraction_c * work_c / nodes`` (divided
    by the slowest speed) must be < 1.
    """

    nodes: int
    classes: tuple[JobClass, ...]
    arrival_rate: float | None = None
    placement: str = "random"
    clients: int | None = None
    think: float = 0.0
    think_law: Any = None
    speeds: Any = None
    node: Any = None

    def __post_init__(self) -> None:
        if isinstance(self.classes, JobClass) or not isinstance(self.classes,
                                                                 (list, tuple)):
            raise ConfigError(f"classes must be a list of JobClass, got "
                              f"{type(self.classes).__name__}; e.g. [JobClass('read', "
                              "0.9, 3, 1), JobClass('write', 0.1, 3, 2)]")
        object.__setattr__(self, "classes", tuple(self.classes))
        system = System(self.nodes, self.classes, self.placement, self.speeds,
                        node=self.node)
        process = self._bind(system, self.arrival_rate, self.clients, self.think,
                             self.think_law, "arrival_rate (open, Poisson)")
        if self.clients is None:
            object.__setattr__(self, "arrival_rate", process.rate)

    @property
    def work_per_job(self) -> float:
        """Mean total service demand of one job, ``sum_c fraction_c * work_c``."""
        return self.system.work_per_job

    @property
    def node_utilisation(self) -> float | None:
        """Busy fraction of every node (open arrivals, nodes of speed 1)."""
        if self.arrival_rate is None:
            return None
        return self.arrival_rate * self.work_per_job / self.nodes

    @property
    def width(self) -> int:
        return self.system.width

    def index(self, name: str) -> int:
        """Position of the class called ``name``."""
        return self.system.index(name)

    def summary_fields(self) -> dict:
        out = {"nodes": self.nodes, "arrival_rate": self.arrival_rate,
               "per_node_load": self.node_utilisation}
        if self.clients is not None:
            out.update(clients=self.clients, think=self.think)
        return out

    def describe(self) -> str:
        if self.clients is not None:
            load = self._process.describe()
        else:
            load = (f"{self.arrival_rate:g} jobs per unit time, per-node load "
                    f"{self.node_utilisation:.4g}")
        node = f", {self.node.describe()}" if self.node is not None else ""
        return f"{self.system.describe()}, {load}{node}"


def simulate_workload(workload: Workload, jobs: int = 200_000, seed=0,
                      warmup: float | str = 0.1, sample_every: int = 1,
                      engine: str = "fast", progress: bool | None = None) -> SimulationResult:
    """Simulate ``jobs`` jobs of a multi-class workload.

    The first ``floor(warmup * jobs)`` jobs (all classes) are dropped; after that
    every ``sample_every``-th job is measured. Each class gets a `Summary` of its
    measured jobs (``result.classes``, batch-means interval on the class's own
    sequence); ``result.summary`` covers the mix.
    """
    if not isinstance(workload, Workload):
        raise ConfigError(f"simulate_workload takes a Workload, got "
                          f"{type(workload).__name__}")
    return simulate(workload, jobs=jobs, seed=seed, engine=engine, warmup=warmup,
                    sample_every=sample_every, progress=progress)
