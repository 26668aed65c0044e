"""Closed-loop clients: a fixed population, each waiting for its reply, then thinking.

This is how YCSB, cassandra-stress and JMeter drive a cluster: each of ``clients``
threads sends a request, waits until it completes, thinks for a random time of
mean ``think`` and sends the next. Throughput is then an output, bounded by the
capacity of the nodes; the response time law ``R = N/X - Z`` ties it to latency.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from forkjoin_sim.errors import ConfigError, numbers_in_range


@numbers_in_range
@dataclass(frozen=True)
class ClosedLoop:
    """``clients`` clients with think times of mean ``think`` drawn from ``think_law``.

    Parameters
    ----------
    clients : int
        N, the number of client threads, >= 1.
    think : float
        Z, the mean think time (same unit as the service times), >= 0. 0 means a
        client sends its next request the moment the previous one completes.
    think_law : frozen distribution, optional
        The shape of the think time, rescaled to mean ``think``; default
        exponential. Ignored when ``think`` is 0.

    Each client's first request is sent after one think time (at 0 when ``think`` is
    0). Jobs are numbered in the order they are sent, ties by client index.
    """

    clients: int
    think: float = 0.0
    think_law: Any = field(default=None, compare=False)
    closed = True

    def __post_init__(self) -> None:
        if (isinstance(self.clients, bool) or not isinstance(self.clients, (int, np.integer))
                or self.clients < 1):
            raise ConfigError(f"clients must be a whole number >= 1, got {self.clients!r}")
        object.__setattr__(self, "clients", int(self.clients))
        z = self.think
        if (isinstance(z, bool) or not isinstance(z, (int, float, np.integer, np.floating))
                or not math.isfinite(z) or z < 0):
            raise ConfigError(f"think time must be a finite number >= 0, got {z!r}; "
                              "use 0 for clients that never pause")
        object.__setattr__(self, "think", float(z))
        if self.think_law is not None:
            if not (hasattr(self.think_law, "rvs") and hasattr(self.think_law, "mean")):
                raise ConfigError("think_law must be a frozen scipy.stats distribution "
                                  "or an Empirical")
            mean = float(self.think_law.mean())
            if not (math.isfinite(mean) and mean > 0):
                raise ConfigError(f"think_law must have a finite positive mean, got {mean}")

    def think_times(self, count: int, rng: np.random.Generator) -> np.ndarray:
        """``count`` think times, in the order the engine consumes them."""
        if self.think == 0:
            return np.zeros(count)
        if self.think_law is None:
            return rng.exponential(self.think, size=count)
        values = np.asarray(self.think_law.rvs(size=count, random_state=rng), dtype=float)
        return values * (self.think / float(self.think_law.mean()))

    def describe(self) -> str:
        return f"closed loop, {self.clients} clients, mean think time {self.think:g}"
