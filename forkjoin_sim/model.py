"""The model: one frozen, validated description of an (n, r, k) fork-join queue."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats

from .errors import ConfigError

PLACEMENTS = ("random", "ring")
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
                          f"n={nodes}; use at most {nodes} replicas or add nodes")


def distribution_mean(dist: Any, what: str) -> float:
    """Mean of a frozen scipy.stats distribution (or anything with ``mean()``)."""
    if not (hasattr(dist, "rvs") and hasattr(dist, "mean")):
        raise ConfigError(
            f"{what} must be a frozen scipy.stats distribution or an Empirical "
            f"(something with rvs() and mean()), got {type(dist).__name__}"
        )
    mean = float(dist.mean())
    if not (math.isfinite(mean) and mean > 0):
        raise ConfigError(f"{what} must have a finite positive mean, got {mean}; "
                          "choose a distribution of positive times")
    return mean


@dataclass(frozen=True)
class ForkJoinModel:
    """A non-purging (or purging) (n, r, k) fork-join queue.

    Each job arrives, forks ``replicas`` tasks onto distinct nodes chosen by
    ``placement``, and completes when ``quorum`` of them have finished. Each node is
    one FCFS server of unlimited queue.

    Parameters
    ----------
    nodes, replicas, quorum : int
        n, r and k of the paper, with 1 <= k <= r <= n.
    load : float, optional
        rho = lambda * E[X], the load factor per *job* (the paper's lambda/mu). Give
        exactly one of ``load`` and ``arrival_rate``.
    arrival_rate : float, optional
        lambda, jobs per unit time.
    service : frozen scipy.stats distribution or Empirical
        Service time of one task, i.i.d. across tasks. Default exponential, mean 1.
    arrivals : "poisson", "deterministic", or a frozen distribution
        The arrival process. A distribution is a renewal process whose inter-arrival
        times are that distribution rescaled to mean ``1/arrival_rate``.
    placement : "random" or "ring"
        "random": a uniformly random r-subset of nodes per job (the paper's
        Definition 1). "ring": r consecutive nodes from a uniformly random start, as
        Cassandra places a key's replicas on its token ring.
    purging : bool
        Cancel the r - k unfinished tasks when the k-th completes (SimPy engine only).

    Stability is checked as ``r * rho / n < 1``, exact for the non-purging queue.
    Purging only removes work, so for it the check is sufficient, not necessary: a
    purging queue with a larger load may be stable but is rejected here.
    """

    nodes: int
    replicas: int
    quorum: int
    load: float | None = None
    arrival_rate: float | None = None
    service: Any = field(default_factory=lambda: stats.expon())
    arrivals: Any = "poisson"
    placement: str = "random"
    purging: bool = False

    def __post_init__(self) -> None:
        n, r, k = self.nodes, self.replicas, self.quorum
        check_cluster(n, r)
        _check_whole("quorum", k)
        if not 1 <= k <= r:
            raise ConfigError(f"quorum k={k} must satisfy 1 <= k <= replicas r={r}; "
                              f"use 1 <= k <= {r}")
        if self.placement not in PLACEMENTS:
            raise ConfigError(f"placement {self.placement!r} is unknown; "
                              f"use one of {', '.join(PLACEMENTS)}")
        if isinstance(self.arrivals, str):
            if self.arrivals not in ARRIVAL_KINDS:
                raise ConfigError(f"arrivals {self.arrivals!r} is unknown; use "
                                  f"{' or '.join(ARRIVAL_KINDS)} or a frozen distribution")
        else:
            distribution_mean(self.arrivals, "arrivals")
        mean_service = distribution_mean(self.service, "service")

        if (self.load is None) == (self.arrival_rate is None):
            raise ConfigError("give exactly one of load (rho = lambda*E[X]) "
                              "and arrival_rate (lambda)")
        given = self.load if self.load is not None else self.arrival_rate
        if not (isinstance(given, (int, float, np.floating, np.integer))
                and math.isfinite(given) and given > 0):
            which = "load" if self.load is not None else "arrival_rate"
            raise ConfigError(f"{which} must be a positive finite number, got {given!r}")
        if self.load is None:
            object.__setattr__(self, "load", float(self.arrival_rate) * mean_service)
        else:
            object.__setattr__(self, "arrival_rate", float(self.load) / mean_service)
        object.__setattr__(self, "load", float(self.load))
        object.__setattr__(self, "arrival_rate", float(self.arrival_rate))

        if self.node_utilisation >= 1:
            raise ConfigError(
                f"unstable load: each node's utilisation r*rho/n = {r}*{self.load:g}/{n}"
                f" = {self.node_utilisation:.4g} must be < 1; use rho < {n / r:.4g}"
            )

    @property
    def mean_service(self) -> float:
        """E[X], the mean service time of one task."""
        return float(self.service.mean())

    @property
    def node_utilisation(self) -> float:
        """r * rho / n: the fraction of time each node is busy (non-purging)."""
        return self.replicas * self.load / self.nodes

    def describe(self) -> str:
        """A one-line, human readable summary."""
        kind = "purging" if self.purging else "non-purging"
        return (f"({self.nodes},{self.replicas},{self.quorum}) {kind} fork-join, "
                f"rho={self.load:g}, per-node load={self.node_utilisation:.4g}, "
                f"{self.placement} placement")
