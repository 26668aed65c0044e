"""Moments of ``X_(r,k)``, the k-th smallest of r i.i.d. service times (Theorem 2)."""

import math

import numpy as np
import scipy.stats

from analytic.errors import ConfigError
from analytic.harmonic import harmonic
from analytic.parameters import check_positive, check_replicas_quorum

_EXPON = type(scipy.stats.expon)

# Composite Gauss-Legendre on [0, 1/2]: panels graded geometrically towards 0 so that
# ppf singularities at the ends (unbounded support) are resolved; the upper half is
# mapped to the same panels in t = 1 - u.
_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(10)
_EDGES = np.concatenate([[0.0], np.geomspace(1e-18, 1 / 64, 48), np.linspace(1 / 64, 0.5, 63)[1:]])
_HALF = np.diff(_EDGES) / 2
_NODES = ((_EDGES[:-1] + _HALF)[:, None] + _HALF[:, None] * _GL_NODES).ravel()
_WEIGHTS = (_HALF[:, None] * _GL_WEIGHTS).ravel()

# A distribution whose ppf takes fewer distinct values than half of this grid is
# treated as discrete (an empirical distribution of measured latencies, say).
_ATOM_GRID = (np.arange(2 ** 17) + 0.5) / 2 ** 17


def exponential_order_statistic_moments(r, k, mu=1.0):
    """``(E[X_(r,k)], E[X_(r,k)^2])`` for i.i.d. exponential service of rate ``mu``.

    ``X_(r,k)`` is a sum of independent exponentials of rates ``i*mu``,
    ``i = r-k+1..r`` (Rényi), so its mean is ``(H_r - H_{r-k})/mu`` and its variance
    ``sum 1/(i*mu)^2``.
    """
    check_replicas_quorum(r, k)
    check_positive(mu, "service rate mu")
    mean = (harmonic(r) - harmonic(r - k)) / mu
    variance = math.fsum(1.0 / (i * mu) ** 2 for i in range(r - k + 1, r + 1))
    return mean, variance + mean ** 2


def _values(function, points):
    values = np.asarray(function(points), dtype=float)
    if values.shape != points.shape:  # a ppf that only takes scalars
        values = np.array([float(function(p)) for p in points])
    return values


def _continuous_moments(dist, r, k):
    """``∫ ppf(u)^m Beta(k, r-k+1).pdf(u) du`` for m = 1, 2 by graded Gauss-Legendre."""
    lower = _values(dist.ppf, _NODES)
    if callable(getattr(dist, "isf", None)):
        upper = _values(dist.isf, _NODES)
    else:
        upper = _values(dist.ppf, 1.0 - _NODES)
    lower_weights = _WEIGHTS * scipy.stats.beta(k, r - k + 1).pdf(_NODES)
    upper_weights = _WEIGHTS * scipy.stats.beta(r - k + 1, k).pdf(_NODES)
    return tuple(float(lower_weights @ lower ** m + upper_weights @ upper ** m) for m in (1, 2))


def _atoms(dist):
    """The atoms of a discrete ``dist`` and their cdf values, or None if it looks continuous."""
    if not callable(getattr(dist, "cdf", None)):
        return None
    atoms = np.unique(_values(dist.ppf, _ATOM_GRID))
    if len(atoms) > len(_ATOM_GRID) // 2:
        return None
    cdf = np.clip(np.maximum.accumulate(_values(dist.cdf, atoms)), 0.0, 1.0)
    cdf[-1] = 1.0
    return atoms, cdf


def order_statistic_moments(dist, r, k):
    """``(E[X_(r,k)], E[X_(r,k)^2])`` for r i.i.d. draws from ``dist``.

    ``dist`` is a frozen scipy.stats distribution or any object exposing ``ppf``
    (vectorised, like scipy's) and ``cdf``, such as an empirical distribution.

    - Exponential (scipy.stats.expon): the closed form.
    - Discrete, i.e. its ppf takes at most 65,536 distinct values (an empirical
      distribution of measured samples): exact, ``sum_a a^m * [B(F(a)) - B(F(a-))]``
      over the atoms ``a``, where ``B`` is the Beta(k, r-k+1) cdf.
    - Otherwise: ``∫_0^1 ppf(u)^m * Beta(k, r-k+1).pdf(u) du`` by composite
      Gauss-Legendre on panels graded towards both ends (``isf`` for the upper half
      when available, so heavy right tails keep their precision).
    """
    check_replicas_quorum(r, k)
    if isinstance(getattr(dist, "dist", None), _EXPON):
        scale = float(dist.std())
        shift = float(dist.mean()) - scale
        mean, second = exponential_order_statistic_moments(r, k, 1.0 / scale)
        return shift + mean, second + 2 * shift * mean + shift ** 2
    if not callable(getattr(dist, "ppf", None)):
        raise ConfigError(
            f"service distribution {dist!r} must expose ppf(u); use a frozen "
            f"scipy.stats distribution or an empirical distribution")
    found = None
    if not isinstance(getattr(dist, "dist", None), scipy.stats.rv_continuous):
        found = _atoms(dist)
    if found is None:
        return _continuous_moments(dist, r, k)
    atoms, cdf = found
    mass = np.diff(scipy.stats.beta(k, r - k + 1).cdf(np.concatenate([[0.0], cdf])))
    return float(mass @ atoms), float(mass @ atoms ** 2)
