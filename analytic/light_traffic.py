"""The exact light-traffic expansion of T(n,r,k; rho) to first order in the load.

Exponential service of rate ``mu``, random placement, node load ``q = r*rho/n``:

    T(n,r,k) = (H_r - H_{r-k})/mu + q * T'(0) + O(q^2)

To first order only one earlier job can delay the tagged job. It arrived ``tau``
earlier (Poisson, rate ``lambda = q*n*mu/r``) and shares ``J`` of the tagged job's
nodes, ``J ~ Hypergeometric(n, r, r)``. Its sub-task at a shared node is still in
service with probability ``p = e^{-mu*tau}``, independently across nodes, with an
exponential residual (memoryless), so the tagged sub-task's sojourn there is
Erlang(2, mu) with probability p and Exp(mu) otherwise, independently across nodes.
Integrating over ``tau`` (``int_0^inf C(J,m) p^m (1-p)^(J-m) dtau = 1/(m*mu)``):

    T'(0) = (n/r) * sum_J P(J) * sum_{m=1..J} (e(r,k,m) - e(r,k,0)) / m

with ``e(r,k,m)`` the mean k-th smallest of m Erlang(2, mu) and r-m Exp(mu)
independent times. Checks: M/M/1 gives ``1/mu``; (2,2,2) gives 11/(8 mu), the
derivative of Flatto & Hahn's ``(12-q)/(8 mu (1-q))``; for the basic queue and k = 1 it
equals Varma & Makowski's ``c_r`` (their heavy-traffic guess is this derivative).

Reiman, M. I. & Simon, B. (1988). An interpolation approximation for queueing
systems with Poisson input. *Operations Research* 36(3), 454-469.
"""

import functools
import math

import numpy as np
import scipy.stats

from analytic.errors import ConfigError
from analytic.order_quadrature import EXPONENTIAL_CDF, TIMES, mean_from_survival
from analytic.parameters import check_positive, check_replicas_quorum, per_node_load

_ERLANG2_CDF = 1.0 - np.exp(-TIMES) * (1.0 + TIMES)


@functools.lru_cache(maxsize=None)
def mixed_order_statistic_mean(r, k, m):
    """``e(r,k,m)``: mean k-th smallest of m Erlang(2,1) and r-m Exp(1) independent times."""
    check_replicas_quorum(r, k)
    if not 0 <= m <= r:
        raise ConfigError(f"Erlang count m={m} must satisfy 0 <= m <= r={r}")
    below = np.zeros_like(TIMES)
    for i in range(k):
        below += (scipy.stats.binom.pmf(i, m, _ERLANG2_CDF)
                  * scipy.stats.binom.cdf(k - 1 - i, r - m, EXPONENTIAL_CDF))
    return mean_from_survival(below)


@functools.lru_cache(maxsize=None)
def _unit_slope(n, r, k):
    base = mixed_order_statistic_mean(r, k, 0)
    total = 0.0
    for shared in range(max(0, 2 * r - n), r + 1):
        weight = math.comb(r, shared) * math.comb(n - r, r - shared) / math.comb(n, r)
        total += weight * math.fsum(
            (mixed_order_statistic_mean(r, k, m) - base) / m for m in range(1, shared + 1))
    return n / r * total


def light_traffic_slope(n, r, k, mu=1.0):
    """``T'(0)``: the exact derivative of T(n,r,k) with respect to the node load at 0.

    Exponential service of rate ``mu``, random placement (see the module docstring).
    """
    check_replicas_quorum(r, k)
    per_node_load(n, r, 1)  # validates n >= r
    check_positive(mu, "service rate mu")
    return _unit_slope(n, r, k) / mu
