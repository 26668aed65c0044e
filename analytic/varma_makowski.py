"""The Varma–Makowski (1994) interpolation approximation of the basic (i,i,i) queue.

Varma, S. & Makowski, A. M. (1994). Interpolation approximations for symmetric
fork-join queues. *Performance Evaluation* 20, 245–265 (also University of Maryland
ISR technical report TR 92-122). For Poisson arrivals and exponential service of
rate ``mu`` at node load ``q``, as restated by Thomasian (2014), Eq. (4):

    T(i,i,i; q) ~= [H_i + (A_i - H_i) * q] / (mu * (1 - q))
    A_i = sum_{j=1..i} (-1)^(j-1) * C(i,j) * sum_{m=1..j} C(j,m) * (m-1)! / j^(m+1)

``(1-q)*mu*T`` is interpolated linearly between its light-traffic limit ``H_i``
(the mean of the largest of i exponentials) and its heavy-traffic limit ``A_i``.
``A_i`` is Varma–Makowski's approximation of that limit, exact for i = 1 (1, M/M/1)
and i = 2 (11/8, Flatto & Hahn 1984), so the formula is exact for i = 1 and 2 at
every load. ``A_i`` is written as an inclusion–exclusion over

    c_j = sum_{m=1..j} C(j,m) * (m-1)! / j^(m+1),

the heavy-traffic limit of ``(1-q)*mu`` times the mean of the *smallest* of j
sub-queue sojourn times (c_1 = 1, c_2 = 5/8). Written with ``c_j``, the
approximation extends from the maximum to every order statistic.

Thomasian, A. (2014). Analysis of fork/join and related queueing systems.
*ACM Computing Surveys* 47(2), Article 17.
"""

import functools
import math
import numbers
from fractions import Fraction

from analytic.errors import ConfigError
from analytic.harmonic import harmonic
from analytic.parameters import check_integer, check_positive


def _check_size(i, what="basic queue size i"):
    check_integer(i, what)
    if i < 1:
        raise ConfigError(f"{what}={i} must be at least 1")


@functools.lru_cache(maxsize=None)
def heavy_traffic_minimum(j):
    """``c_j``: Varma–Makowski's heavy-traffic limit of ``(1-q)*mu*E[min of j sojourns]``.

    ``sum_{m=1..j} C(j,m) * (m-1)! / j^(m+1)``, an exact ``Fraction``.
    """
    _check_size(j, "number of sub-queues j")
    return sum((Fraction(math.comb(j, m) * math.factorial(m - 1), j ** (m + 1))
                for m in range(1, j + 1)), Fraction(0))


@functools.lru_cache(maxsize=None)
def heavy_traffic_constant(i):
    """``A_i``: Varma–Makowski's heavy-traffic limit of ``(1-q)*mu*T(i,i,i; q)``.

    The inclusion–exclusion ``sum_{j=1..i} (-1)^(j-1) C(i,j) c_j``, an exact
    ``Fraction`` (A_1 = 1, A_2 = 11/8).
    """
    _check_size(i)
    return sum(((-1) ** (j - 1) * math.comb(i, j) * heavy_traffic_minimum(j)
                for j in range(1, i + 1)), Fraction(0))


def varma_makowski_basic(i, load, mu=1.0):
    """Varma–Makowski estimate of ``T(i,i,i; q)``: ``[H_i + (A_i - H_i) q] / (mu (1-q))``.

    Exponential service of rate ``mu`` at node load ``q``. Exact (``Fraction``) when
    ``load`` and ``mu`` are exact, float otherwise.
    """
    _check_size(i)
    if (isinstance(load, bool) or not isinstance(load, numbers.Real)
            or not 0 <= load < 1):
        raise ConfigError(f"per-node load q={load!r} must satisfy 0 <= q < 1 (stable)")
    check_positive(mu, "service rate mu")
    exact = all(isinstance(v, numbers.Rational) for v in (load, mu))
    h = harmonic(i, exact=True)
    a = heavy_traffic_constant(i)
    if exact:
        load, mu = Fraction(load), Fraction(mu)
        return (h + (a - h) * load) / (mu * (1 - load))
    return (float(h) + float(a - h) * load) / (mu * (1 - load))
