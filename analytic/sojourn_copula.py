"""A job's r sub-task sojourns as exponentials joined by a one-factor Gaussian copula.

This project's estimator of T(n,r,k; rho) for exponential service. Three facts and
one modelling choice:

1. Each sub-queue is M/M/1 at node load ``q = r*rho/n``, so each sub-task sojourn
   ``S_j`` is exponential with rate ``nu = mu*(1-q)`` (exact, any placement).
2. Given the arrival process, the sub-queues of a job are independent (their
   service times are), so the sojourns are *conditionally i.i.d. given a common
   factor* -- the structure of a one-factor copula.
3. For the basic (2,2,2) queue, ``E[max(S_1, S_2)] = (12 - q)/(8*mu*(1-q))``
   (Flatto & Hahn 1984), i.e. ``nu*E[min(S_1, S_2)] = 1/2 + q/8``. Two sub-queues
   of an (n,r,k) job share a fraction ``theta = (r-1)/(n-1)`` of their arrivals;
   to first order in q only a shared arrival correlates them, so
   ``nu*E[min] = 1/2 + theta*q/8 + O(q^2)``.

Choice: the exchangeable one-factor Gaussian copula,
``S_j = F^{-1}(Phi(sqrt(a)*Z_0 + sqrt(1-a)*Z_j))`` with ``F`` the exponential CDF,
and ``a`` the one correlation for which ``nu*E[min(S_1, S_2)] = 1/2 + theta*q/8``
(so the (2,2,k) queues are exact at every load, and n = r = k = 1 is M/M/1). The
mean k-th order statistic of the r sojourns is then a two-dimensional integral,
computed by quadrature: no Theorem 1 alternating sum, so no error amplification.
No constant is fitted to simulation.

Flatto, L. & Hahn, S. (1984). Two parallel queues created by arrivals with two
demands I. *SIAM J. Appl. Math.* 44(5), 1041-1053.
"""

import functools
import math

import numpy as np
import scipy.optimize
import scipy.special
import scipy.stats

from analytic.errors import ConfigError
from analytic.order_quadrature import GAUSSIAN_NODES, mean_from_survival
from analytic.parameters import check_replicas_quorum, validate_queue

# The common factor Z_0 is integrated by Gauss-Hermite; on the Gaussian scale t of
# the quadrature, an exponential sojourn is below x(t) iff its copula normal is below t.
_Z, _ZW = np.polynomial.hermite_e.hermegauss(40)
_ZW = _ZW / _ZW.sum()
_MAX_CORRELATION = 0.999


def _check_correlation(a):
    if not (isinstance(a, (int, float)) and 0 <= a <= _MAX_CORRELATION):
        raise ConfigError(
            f"copula correlation a={a!r} must satisfy 0 <= a <= {_MAX_CORRELATION}")


def copula_order_statistic_mean(r, k, correlation):
    """Mean k-th smallest of r unit-rate exponentials with a Gaussian one-factor copula.

    ``E[S_(k)] = int_0^inf E_Z0[ P(Binomial(r, p(x|Z0)) <= k-1) ] dx`` with
    ``p(x|z) = Phi((Phi^{-1}(1 - e^{-x}) - sqrt(a) z) / sqrt(1-a))``. With
    ``correlation = 0`` it is ``H_r - H_{r-k}``.
    """
    check_replicas_quorum(r, k)
    _check_correlation(correlation)
    a = float(correlation)
    p = scipy.special.ndtr(
        (GAUSSIAN_NODES[:, None] - math.sqrt(a) * _Z[None, :]) / math.sqrt(1 - a))
    return mean_from_survival(scipy.stats.binom.cdf(k - 1, r, p) @ _ZW)


def arrival_overlap(n, r):
    """``theta = (r-1)/(n-1)``: the share of a node's sub-tasks that a second node also gets.

    With random placement a node receives sub-tasks at rate ``r*lambda/n`` and a
    given pair of nodes shares jobs at rate ``lambda*r*(r-1)/(n*(n-1))``. 1 when n = 1.
    """
    return 1.0 if n == 1 else (r - 1) / (n - 1)


def pair_minimum_target(load, overlap):
    """``nu*E[min(S_1,S_2)] = 1/2 + overlap*q/8``: Flatto–Hahn at overlap 1."""
    return 0.5 + overlap * load / 8


@functools.lru_cache(maxsize=4096)
def pair_correlation(load, overlap=1.0):
    """The copula correlation ``a`` that reproduces :func:`pair_minimum_target`.

    ``load`` is the node load q in [0, 1] (1: the heavy-traffic limit, where
    Flatto–Hahn give ``nu*E[min] = 5/8``), ``overlap`` the shared fraction of
    arrivals theta in [0, 1].
    """
    if not (0 <= load <= 1 and 0 <= overlap <= 1):
        raise ConfigError(f"need 0 <= load <= 1 and 0 <= overlap <= 1, got "
                          f"load={load!r}, overlap={overlap!r}")
    target = pair_minimum_target(load, overlap)
    if target == 0.5:
        return 0.0
    return scipy.optimize.brentq(
        lambda a: copula_order_statistic_mean(2, 1, a) - target,
        0.0, _MAX_CORRELATION, xtol=1e-14, rtol=1e-14)


def copula_estimate(n, r, k, rho, mu=1.0):
    """Gaussian-copula estimate of T(n,r,k; rho) (this project's estimator).

    ``E[S_(k)] / (mu (1-q))`` for r unit-rate exponential sojourns joined by the
    one-factor Gaussian copula of :func:`pair_correlation` at load ``q = r*rho/n``
    and overlap ``theta = (r-1)/(n-1)``. Exact for n = r = k = 1 (M/M/1) and for
    (2,2,k) (Flatto & Hahn 1984); see the module docstring for the derivation.
    """
    q = float(validate_queue(n, r, k, rho, mu))
    a = pair_correlation(q, arrival_overlap(n, r))
    return copula_order_statistic_mean(r, k, a) / (mu * (1 - q))


def copula_heavy_traffic_limit(n, r, k):
    """The copula's ``lim_{q->1} (1-q)*mu*T(n,r,k)``: the pair target at q = 1."""
    check_replicas_quorum(r, k)
    return copula_order_statistic_mean(r, k, pair_correlation(1.0, arrival_overlap(n, r)))
