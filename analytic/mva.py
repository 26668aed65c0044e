"""Exact mean-value analysis (MVA) of a closed product-form queueing network.

Reiser & Lavenberg (1980), "Mean-value analysis of closed multichain queuing
networks", J. ACM 27(2): for a single class of N customers visiting FCFS
exponential stations with service demands D_i (visit ratio times mean service)
and a delay (think) station of mean Z, the recursion over the population n = 1..N

    R_i(n) = D_i * (1 + Q_i(n-1)),   X(n) = n / (Z + sum_i R_i(n)),   Q_i(n) = X(n) R_i(n)

gives throughput X and response time R = sum_i R_i exactly. A closed-loop
(n, 1, 1) fork-join queue with random placement is such a network: n stations,
each with demand E[X]/n, plus the clients' think time.
"""

from __future__ import annotations

import math
from typing import NamedTuple, Sequence

from analytic.errors import ConfigError


class MVAResult(NamedTuple):
    """Throughput X(N), response time R(N) and mean queue length per station."""

    throughput: float
    response_time: float
    queue_lengths: tuple[float, ...]


def mean_value_analysis(demands: Sequence[float], clients: int,
                        think: float = 0.0) -> MVAResult:
    """Exact single-class MVA (Reiser & Lavenberg 1980) for ``clients`` customers."""
    demands = [float(d) for d in demands]
    if not demands or any(not (math.isfinite(d) and d >= 0) for d in demands):
        raise ConfigError("demands must be a non-empty list of finite numbers >= 0")
    if isinstance(clients, bool) or not isinstance(clients, int) or clients < 1:
        raise ConfigError(f"clients must be a whole number >= 1, got {clients!r}")
    if not (math.isfinite(think) and think >= 0):
        raise ConfigError(f"think time must be >= 0, got {think!r}")
    if think == 0 and sum(demands) == 0:
        raise ConfigError("all demands and the think time are 0: throughput is infinite")
    queues = [0.0] * len(demands)
    throughput = response = 0.0
    for n in range(1, clients + 1):
        residence = [d * (1 + q) for d, q in zip(demands, queues)]
        response = sum(residence)
        throughput = n / (think + response)
        queues = [throughput * r for r in residence]
    return MVAResult(throughput, response, tuple(queues))
