"""The model: one frozen, validated description of an (n, r, k) fork-join queue."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from forkjoin_sim import arrivals as arrival_processes
from forkjoin_sim.errors import ConfigError, counted, number_text, numbers_in_range
from forkjoin_sim.laws.exponential import Exponential
from forkjoin_sim.placement import PLACEMENTS
from forkjoin_sim.system import RunInput, law_mean, single_class

ARRIVAL_KINDS = ("poisson", "deterministic")


def _check_whole(name: str, value) -> None:
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
        raise ConfigError(f"{name} must be a whole number, got {value!r}")


def check_cluster(nodes, replicas) -> None:
    """Raise ConfigError unless ``1 <= replicas <= nodes`` are whole numbers."""
    _check_whole("nodes", nodes)
    _check_whole("replicas", replicas)
    if nodes < 1:
        raise ConfigError(f"nodes n={nodes} must be at least 1")
    if not 1 <= replicas <= nodes:
        raise ConfigError(f"replicas r={replicas} must satisfy 1 <= r <= nodes "
                          f"n={nodes}; use at most {counted(nodes, 'replica')} or add "
                          "nodes")


def distribution_mean(dist: Any, what: str) -> float:
    """Mean of a frozen scipy.stats distribution (or anything with ``mean()``)."""
    return law_mean(dist, what)


@numbers_in_range
@dataclass(frozen=True)
class ForkJoinModel(RunInput):
    """A non-purging (or purging) (n, r, k) fork-join queue.

    Each job arrives, forks ``replicas`` tasks onto distinct nodes chosen by
    ``placement``, and completes when ``quorum`` of them have finished. Each node is
    one FCFS server of unlimited queue. The model maps onto the run stack as a
    one-class `System` (``.system``) plus an arrival process (``.arrival_process``).

    Parameters
    ----------
    nodes, replicas, quorum : int
        n, r and k of the paper, with 1 <= k <= r <= n.
    load : float, optional
        rho = lambda * E[X], the load factor per *job* (the paper's lambda/mu).
        Open arrivals need exactly one of ``load`` and ``arrival_rate``.
    arrival_rate : float, optional
        lambda, jobs per unit time.
    service : frozen scipy.stats distribution, Empirical, or a spec
        Service time of one task on a node of speed 1, i.i.d. across tasks. Default
        exponential, mean 1. A spec is text as ``--service`` takes it ("lognormal:1",
        "exp:2", "empirical:PATH"; `forkjoin_sim.laws.service.parse_service`), mean
        1 unless it fixes its own scale.
    arrivals : "poisson", "deterministic", a frozen distribution, or a `Trace`
        The open arrival process. A distribution is a renewal process whose gaps are
        that distribution rescaled to mean ``1/arrival_rate``; a trace fixes the
        times (and the rate: give neither load nor arrival_rate).
    placement : "random" or "ring"
        "random": a uniformly random r-subset of nodes per job (the paper's
        Definition 1). "ring": r consecutive nodes from a uniformly random start, as
        Cassandra places a key's replicas on its token ring.
    purging : bool
        Cancel the r - k unfinished tasks when the k-th completes (SimPy engine only).
    clients : int, optional
        A closed loop instead of open arrivals: ``clients`` clients, each sending its
        next job ``think`` time units (mean) after its previous job completed.
        Throughput is then an output: give neither load nor arrival_rate.
    think : float
        Mean think time of a closed-loop client (0 allowed).
    think_law : frozen distribution, optional
        Shape of the think time, rescaled to mean ``think``; default exponential.
    speeds : sequence of per-node factors, `Stragglers`, or None
        Uneven nodes: a task takes ``service / speed`` on its node.
    node : `forkjoin_sim.nodes.SharedQueue`, optional
        ``SharedQueue(threads=c)`` gives every node c servers (default 1).

    Open stability is checked as ``r * rho / (n * slowest speed) < 1``, exact for the
    non-purging queue. Purging only removes work, so for it the check is
    sufficient, not necessary.
    """

    nodes: int
    replicas: int
    quorum: int
    load: float | None = None
    arrival_rate: float | None = None
    service: Any = field(default_factory=Exponential)
    arrivals: Any = "poisson"
    placement: str = "random"
    purging: bool = False
    clients: int | None = None
    think: float = 0.0
    think_law: Any = None
    speeds: Any = None
    node: Any = None

    def __post_init__(self) -> None:
        n, r, k = self.nodes, self.replicas, self.quorum
        check_cluster(n, r)
        _check_whole("quorum", k)
        if not 1 <= k <= r:
            raise ConfigError(f"quorum k={k} must satisfy 1 <= k <= replicas r={r}; "
                              f"use 1 <= k <= {r}")
        if not isinstance(self.placement, str) or self.placement not in PLACEMENTS:
            raise ConfigError(f"placement {self.placement!r} is unknown; use one of "
                              f"{', '.join(PLACEMENTS)}")
        if isinstance(self.speeds, list):
            object.__setattr__(self, "speeds", tuple(self.speeds))
        if isinstance(self.service, str):
            # a spec as the command line takes it: exp, lognormal:1, exp:2, empirical:PATH
            from forkjoin_sim.laws.service import parse_service

            object.__setattr__(self, "service", parse_service(self.service))
        system = single_class(n, r, k, self.service, self.placement, self.speeds,
                              self.purging, self.node)
        mean_service = law_mean(self.service, "service")
        object.__setattr__(self, "_system", system)
        given = [name for name in ("load", "arrival_rate")
                 if getattr(self, name) is not None]
        if self.clients is not None:
            if given:
                raise ConfigError(f"with closed-loop clients the throughput is an "
                                  f"output; drop {given[0]} (--rho) or drop clients")
            process = arrival_processes.ClosedLoop(self.clients, self.think,
                                                   self.think_law)
            object.__setattr__(self, "clients", process.clients)
            object.__setattr__(self, "_process", process)
            return
        if isinstance(self.arrivals, arrival_processes.Trace):
            if given:
                raise ConfigError(f"a trace fixes the arrival rate; drop {given[0]}")
            object.__setattr__(self, "arrival_rate", self.arrivals.rate)
            given = ["arrival_rate"]
        elif isinstance(self.arrivals, str):
            if self.arrivals not in ARRIVAL_KINDS:
                raise ConfigError(f"arrivals {self.arrivals!r} is unknown; use "
                                  f"{' or '.join(ARRIVAL_KINDS)} or a frozen distribution")
        else:
            distribution_mean(self.arrivals, "arrivals")
        if len(given) != 1:
            raise ConfigError("give exactly one of load (rho = lambda*E[X]) "
                              "and arrival_rate (lambda), or closed-loop clients")
        value = getattr(self, given[0])
        if (isinstance(value, bool)
                or not (isinstance(value, (int, float, np.floating, np.integer))
                        and math.isfinite(value) and value > 0)):
            raise ConfigError(f"{given[0]} must be a positive finite number, got "
                              f"{value!r}")
        if self.load is None:
            object.__setattr__(self, "load", float(self.arrival_rate) * mean_service)
        else:
            object.__setattr__(self, "arrival_rate", float(self.load) / mean_service)
        object.__setattr__(self, "load", float(self.load))
        object.__setattr__(self, "arrival_rate", float(self.arrival_rate))
        if isinstance(self.arrivals, arrival_processes.Trace):
            process = self.arrivals
        elif self.arrivals == "poisson":
            process = arrival_processes.Poisson(self.arrival_rate)
        elif self.arrivals == "deterministic":
            process = arrival_processes.Periodic(self.arrival_rate)
        else:
            process = arrival_processes.Renewal(self.arrivals, self.arrival_rate)
        object.__setattr__(self, "_process", process)
        if self.busiest_node_utilisation >= 1:
            slow = system.slowest_speed
            speed = f"/{slow:g} (slowest speed)" if slow != 1 else ""
            raise ConfigError(
                f"unstable load: each node's utilisation r*rho/n = {r}*{self.load:g}/{n}"
                f"{speed} = {self.busiest_node_utilisation:.4g} must be < 1; use rho < "
                f"{self.load / self.busiest_node_utilisation:.4g}, or closed-loop clients"
            )

    @property
    def closed(self) -> bool:
        return self.clients is not None

    @property
    def mean_service(self) -> float:
        """E[X], the mean service time of one task (speed 1)."""
        return float(self.service.mean())

    @property
    def node_utilisation(self) -> float | None:
        """r * rho / n: the fraction of time a node of speed 1 is busy (non-purging);
        None under a closed loop, where the load is an output."""
        if self.load is None:
            return None
        return self.replicas * self.load / self.nodes

    @property
    def busiest_node_utilisation(self) -> float | None:
        """Utilisation of one thread of the slowest node (equal to
        ``node_utilisation`` for even one-thread nodes)."""
        if self.load is None:
            return None
        return self.system.utilisation(self.arrival_rate)

    def summary_fields(self) -> dict:
        """The model's own keys of ``simulate --json``."""
        out = {"nodes": self.nodes, "replicas": self.replicas, "quorum": self.quorum,
               "rho": self.load, "per_node_load": self.node_utilisation}
        if self.closed:
            out.update(clients=self.clients, think=self.think)
        return out

    def describe(self) -> str:
        """A one-line, human readable summary."""
        kind = "purging" if self.purging else "non-purging"
        if self.closed:
            load = self._process.describe()
        else:
            load = (f"rho={number_text(self.load)}, per-node load="
                    f"{number_text(self.node_utilisation, 4)}")
        extra = ""
        if self.speeds is not None and "placement, " in self.system.describe():
            extra = ", " + self.system.describe().split("placement, ", 1)[-1]
        return (f"({self.nodes},{self.replicas},{self.quorum}) {kind} fork-join, "
                f"{load}, {self.placement} placement{extra}")
