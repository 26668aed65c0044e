"""Theorem 2: lower bounds on T(n,r,k; rho) from order statistics of the service time.

    T(n,r,k; rho) >= E[X_(r,k)] + r*lambda*E[X_(r,1)^2] / (2*(n - r*lambda*E[X_(r,1)]))

for any service distribution as the paper states it (it is no bound for services much
less variable than the exponential: for deterministic service at (6,3,1), rho = 1.5,
it gives 2.5, one node's M/D/1 mean sojourn, while the first of three replies comes
at a simulated 1.535, docs/theorem2_low_variance.md), and for i.i.d. exponential
service the tighter

    T(n,r,k; rho) >= E[X_(r,k)] + r*lambda*E[X_(r,k)^2] / (2*(n - r*lambda*E[X_(r,k)])).

Both are Pollaczek–Khinchine means of an M/G/1 queue fed at rate ``r*lambda/n``. The
second needs that queue stable, ``r*lambda*E[X_(r,k)] < n``, which fails for large k
at high load (e.g. (9,9,7) at rho=0.9) although the fork-join queue itself is stable;
there the bound is undefined and returned as NaN.
"""

import math

from analytic.errors import ConfigError
from analytic.order_statistics import (
    exponential_order_statistic_moments, order_statistic_moments)
from analytic.parameters import validate_queue


def _pollaczek_khinchine(n, r, lam, mean_k, second, mean):
    """``mean_k + r*lam*second / (2*(n - r*lam*mean))``, NaN when the denominator is <= 0."""
    spare = n - r * lam * mean
    if spare <= 0:
        return math.nan
    return mean_k + r * lam * second / (2 * spare)


def lower_bound_pk(n, r, k, rho, mu=1.0):
    """Theorem 2, exponential form: the bound built on ``X_(r,k)``.

    ``lambda = rho*mu``. NaN when ``r*lambda*E[X_(r,k)] >= n`` (the bound's M/G/1
    queue is unstable, so it says nothing). For k = 1 it equals LowT.
    """
    validate_queue(n, r, k, rho, mu)
    mean, second = exponential_order_statistic_moments(r, k, mu)
    return _pollaczek_khinchine(n, r, rho * mu, mean, second, mean)


def lower_bound_general(dist, n, r, k, rho):
    """Theorem 2, general form, as the paper states it for any service distribution
    ``dist`` (simulation refutes it for near-deterministic services: see the module
    docstring).

    ``dist`` is a frozen scipy.stats distribution or any object with ``ppf`` and
    ``mean``; ``lambda = rho / E[X]``. Defined whenever the queue is stable.
    """
    validate_queue(n, r, k, rho)
    if not callable(getattr(dist, "mean", None)):
        raise ConfigError(
            f"service distribution {dist!r} must expose mean(); use a frozen "
            f"scipy.stats distribution or an empirical distribution")
    service_mean = float(dist.mean())
    if not math.isfinite(service_mean) or service_mean <= 0:
        raise ConfigError(
            f"service distribution mean {service_mean!r} must be finite and > 0")
    mean_k, _ = order_statistic_moments(dist, r, k)
    mean_1, second_1 = order_statistic_moments(dist, r, 1)
    return _pollaczek_khinchine(n, r, rho / service_mean, mean_k, second_1, mean_1)
