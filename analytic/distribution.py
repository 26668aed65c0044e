"""Theorem 1 for whole distributions: the (n,r,k) sojourn CDF from basic-queue CDFs.

For exchangeable sojourns ``S_1..S_r`` (docs/model.md section 2)

    P(S_(k) <= x) = sum_{i=k..r} W(r,k,i) * F_i(x),   F_i(x) = P(max(S_1..S_i) <= x),

and with the paper's Lemma, ``F_i`` is the sojourn CDF of the basic (i,i,i) queue at
the per-node load ``q = r*rho/n``. The sum alternates in sign, so errors in ``F_i``
(simulation noise, an approximate ``F_i``, rounding) are amplified by up to
``sum_i |W(r,k,i)|``: the raw sum can leave [0, 1] or decrease, most visibly in the
tail where every ``F_i`` is near 1. :func:`quorum_cdf` repairs the raw sum into a
CDF and reports where and how much it had to.

Two approximations of ``F_i`` for exponential service of rate ``mu`` are offered;
each keeps the exact M/M/1 sojourn ``F_1(x) = 1 - exp(-mu*(1-q)*x)`` for i = 1:

``independent``
    ``F_i = F_1**i``: the i sub-queues treated as independent. Fork-join sojourns are
    positively associated, so the true ``F_i >= F_1**i`` (Esary-Proschan-Walkup):
    the max is made stochastically too large, its mean is ``H_i/(mu*(1-q))``, above
    Nelson-Tantawi's. Through Theorem 1 it gives exactly the k-th smallest of r
    i.i.d. M/M/1 sojourns (a binomial tail, always a valid CDF), which ignores the
    correlation that makes quorum jobs *slower* than independent ones: it tends to
    under-estimate (r,r,k) percentiles for k < r and over-estimate them for k = r.
``mean-matched``
    ``F_i(x) = (1 - exp(-H_i*x/N(i;q)))**i``: the independent shape rescaled so
    its mean equals the Nelson-Tantawi estimate ``N(i;q)`` (Theorem 3's basic
    queue); Theorem 1 then reproduces NelsonT as the mean exactly. Its tail decays
    faster than the true ``exp(-mu*(1-q)*x)``, so far percentiles (p99.9 and beyond
    at high load) come out too small, and because the ``F_i`` are no longer powers
    of one CDF the alternating sum may break monotonicity (reported, not hidden).

Neither is exact; ``validation.tails`` measures both against simulation.
"""

from __future__ import annotations

import math
import numbers
import sys
from dataclasses import dataclass
from typing import Callable, Mapping, NamedTuple

import numpy as np

from analytic.coefficients import w_coefficients
from analytic.errors import ConfigError
from analytic.harmonic import harmonic
from analytic.nelson import nelson_basic
from analytic.parameters import check_positive, check_replicas_quorum, validate_queue

#: Relative error of a tail (or head) probability above which a point is unreliable.
DEFAULT_RELATIVE_TOLERANCE = 0.1


class TimeoutMetrics(NamedTuple):
    """What a client with a timeout sees.

    availability : P(latency <= timeout)
    answered_mean : E[latency | latency <= timeout], nan if nothing is answered
    waiting_mean : E[min(latency, timeout)], timed-out requests counted at the timeout
    """

    availability: float
    answered_mean: float
    waiting_mean: float


def _check_grid(grid) -> np.ndarray:
    x = np.asarray(grid, dtype=float)
    if x.ndim != 1 or x.size < 2:
        raise ConfigError(f"grid must be a 1-D array of at least 2 points, got shape "
                          f"{x.shape}; e.g. numpy.linspace(0, x_max, 2001)")
    if not np.all(np.isfinite(x)) or x[0] != 0 or np.any(np.diff(x) <= 0):
        raise ConfigError("grid must start at 0 and increase strictly with finite "
                          "values; e.g. numpy.linspace(0, x_max, 2001)")
    return x


def _on_grid(value, grid: np.ndarray, what: str) -> np.ndarray:
    """``value`` (array, scalar or callable of the grid) as an array over the grid."""
    out = np.asarray(value(grid) if callable(value) else value, dtype=float)
    out = np.broadcast_to(out, grid.shape) if out.ndim == 0 else out
    if out.shape != grid.shape:
        raise ConfigError(f"{what} has shape {out.shape} but the grid has "
                          f"{grid.shape}; give one value per grid point")
    if not np.all(np.isfinite(out)):
        raise ConfigError(f"{what} holds non-finite values; give finite numbers")
    return out


@dataclass(frozen=True)
class QuorumDistribution:
    """The (r,r,k) sojourn CDF on a grid, as Theorem 1 builds it from basic CDFs.

    Attributes
    ----------
    r, k : int
    grid : (m,) points, starting at 0
    raw : the alternating sum ``sum_i W(r,k,i) F_i`` as computed
    cdf : ``raw`` repaired into a CDF: the mean of its lower and upper monotone
        envelopes (running max from the left, running min from the right), clipped
        to [0, 1]
    standard_error : standard error of ``raw`` propagated from independent input
        errors, ``sqrt(sum_i W_i**2 * se_i**2)`` (0 if none given)
    rounding_error : ``(r + 1) * eps * sum_i |W_i F_i|``, the floating-point
        cancellation bound

    Reliability here is numerical only (defects, propagated input error, rounding):
    it says nothing about whether the basic CDFs themselves are right, so an
    analytic approximation can be "reliable" and still biased.
    """

    r: int
    k: int
    grid: np.ndarray
    raw: np.ndarray
    cdf: np.ndarray
    standard_error: np.ndarray
    rounding_error: np.ndarray

    @property
    def defect(self) -> np.ndarray:
        """How far ``raw`` is from a CDF at each point: beyond [0, 1] or below its past max."""
        past_max = np.maximum.accumulate(self.raw)
        return np.maximum.reduce([self.raw - 1, -self.raw, past_max - self.raw,
                                  np.zeros_like(self.raw)])

    @property
    def violations(self) -> np.ndarray:
        """Points where ``raw`` is non-monotone or outside [0, 1] beyond rounding."""
        return self.defect > self.rounding_error

    def uncertainty(self, z: float = 2.0) -> np.ndarray:
        """Absolute uncertainty of ``cdf``: the largest of the visible defect,
        ``z`` standard errors and the rounding bound."""
        return np.maximum.reduce([self.defect, z * self.standard_error,
                                  self.rounding_error])

    def unreliable(self, relative_tolerance: float = DEFAULT_RELATIVE_TOLERANCE,
                   z: float = 2.0) -> np.ndarray:
        """Points where the uncertainty exceeds ``relative_tolerance`` times the
        smaller of ``cdf`` and ``1 - cdf`` (the probability a percentile there rests on)."""
        scale = np.minimum(self.cdf, 1 - self.cdf)
        return self.uncertainty(z) > relative_tolerance * scale

    def cdf_at(self, x):
        """The repaired CDF at ``x`` (linear between grid points, 1 beyond the grid
        only if the grid reached 1)."""
        return np.interp(x, self.grid, self.cdf)

    def _invert(self, cdf: np.ndarray, probability: float) -> float:
        return invert_cdf(self.grid, cdf, probability)

    def percentile(self, q: float) -> float:
        """The q-th percentile (q in [0, 100]) by inverting ``cdf``; nan if ``cdf``
        does not reach q/100 on the grid (extend the grid)."""
        _check_percent(q)
        return self._invert(self.cdf, q / 100)

    def percentile_bracket(self, q: float, z: float = 2.0) -> tuple[float, float]:
        """Where the q-th percentile can lie given `uncertainty`: the inverses of
        ``cdf + u`` and ``cdf - u`` (nan when off the grid)."""
        _check_percent(q)
        u = self.uncertainty(z)
        upper = np.minimum(np.maximum.accumulate(self.cdf + u), 1)
        lower = np.maximum(np.maximum.accumulate(self.cdf - u), 0)
        return self._invert(upper, q / 100), self._invert(lower, q / 100)

    def percentile_reliable(self, q: float,
                            relative_tolerance: float = DEFAULT_RELATIVE_TOLERANCE,
                            z: float = 2.0) -> bool:
        """Whether the CDF around the q-th percentile is within tolerance
        (see `unreliable`); False if the percentile is off the grid."""
        x = self.percentile(q)
        if math.isnan(x):
            return False
        index = min(int(np.searchsorted(self.grid, x)), self.grid.size - 1)
        around = slice(max(index - 1, 0), index + 1)
        return not bool(np.any(self.unreliable(relative_tolerance, z)[around]))

    @property
    def tail_mass(self) -> float:
        """``1 - cdf`` at the end of the grid: probability the grid does not cover."""
        return float(1 - self.cdf[-1])

    def mean(self) -> float:
        """``integral_0^grid_end (1 - cdf)``: the mean, short by the uncovered tail
        (check `tail_mass`)."""
        return float(np.trapezoid(1 - self.cdf, self.grid))

    def timeout(self, timeout: float) -> TimeoutMetrics:
        """Availability, answered mean and mean waiting time for a client ``timeout``.

        With ``F`` the CDF: ``availability = F(t)``, ``waiting = int_0^t (1-F)``,
        ``answered = (int_0^t (1-F) - t (1 - F(t))) / F(t)`` (integration by parts
        of ``E[T; T <= t]``, written with ``1 - F`` so that a timeout far past the
        mass, 1e308 say, loses nothing to cancellation). ``timeout`` must lie on the
        grid's span.
        """
        check_positive(timeout, "timeout")
        if timeout > self.grid[-1]:
            raise ConfigError(f"timeout={timeout:g} is beyond the grid's end "
                              f"{self.grid[-1]:g}; extend the grid")
        inside = self.grid < timeout
        x = np.append(self.grid[inside], timeout)
        survival = 1.0 - np.append(self.cdf[inside], self.cdf_at(timeout))
        # trapezoids of the survival, each width times the mean of its ends (no
        # product past the float range: the widths are differences of grid points)
        waiting = float(np.sum(np.diff(x) * (survival[1:] + survival[:-1]) / 2))
        available = float(1.0 - survival[-1])
        beyond = timeout * survival[-1] if survival[-1] > 0 else 0.0
        answered = (waiting - beyond) / available if available > 0 else math.nan
        return TimeoutMetrics(available, answered, waiting)

    def describe(self, relative_tolerance: float = DEFAULT_RELATIVE_TOLERANCE) -> str:
        """One line on how trustworthy the sum is."""
        bad = self.violations
        text = f"(r={self.r},k={self.k}) Theorem 1 CDF on {self.grid.size} points: "
        if bad.any():
            where = self.grid[bad]
            text += (f"raw sum non-monotone or outside [0,1] at {int(bad.sum())} points"
                     f" (x in [{where.min():.4g}, {where.max():.4g}], max defect "
                     f"{self.defect.max():.2g})")
        else:
            text += "raw sum is a valid CDF"
        shaky = self.unreliable(relative_tolerance) & (self.cdf >= 0.5)
        if shaky.any():
            x = float(self.grid[np.argmax(shaky)])
            text += (f"; upper tail unreliable from x={x:.4g} "
                     f"(P(S > x) = {1 - float(self.cdf_at(x)):.2g})")
        return text


def invert_cdf(grid, cdf, probability: float) -> float:
    """The smallest x with ``cdf(x) >= probability``, linear between grid points.

    ``cdf`` must be non-decreasing over ``grid``; nan if it never reaches
    ``probability``.
    """
    grid = np.asarray(grid, dtype=float)
    cdf = np.asarray(cdf, dtype=float)
    index = int(np.searchsorted(cdf, probability, side="left"))
    if index >= cdf.size:
        return math.nan
    if index == 0 or cdf[index] == cdf[index - 1]:
        return float(grid[index])
    left, right = cdf[index - 1], cdf[index]
    t = (probability - left) / (right - left)
    return float(grid[index - 1] + t * (grid[index] - grid[index - 1]))


def _check_percent(q) -> None:
    if isinstance(q, bool) or not isinstance(q, numbers.Real) or not 0 <= q <= 100:
        raise ConfigError(f"percentile q={q!r} must be in [0, 100], e.g. 99")


def quorum_cdf(r: int, k: int, basic_cdfs: Mapping[int, object], grid,
               basic_errors: Mapping[int, object] | None = None) -> QuorumDistribution:
    """Theorem 1 on CDFs: ``P(S_(k) <= x) = sum_{i=k..r} W(r,k,i) F_i(x)`` on a grid.

    Parameters
    ----------
    r, k : int
        Replicas and quorum, ``1 <= k <= r``.
    basic_cdfs : mapping
        ``i -> F_i`` for every i in k..r: the (i,i,i) sojourn CDF as an array over
        ``grid`` or a callable of it.
    grid : array
        Increasing points starting at 0.
    basic_errors : mapping, optional
        ``i -> standard error of F_i`` (array or scalar), independent across i
        (e.g. from separate simulations).
    """
    check_replicas_quorum(r, k)
    x = _check_grid(grid)
    missing = [i for i in range(k, r + 1) if i not in basic_cdfs]
    if missing:
        raise ConfigError(f"basic CDFs missing for i = {', '.join(map(str, missing))}; "
                          f"Theorem 1 with r={r}, k={k} needs F_i for i = {k}..{r}")
    weights = w_coefficients(r, k)
    raw = np.zeros_like(x)
    size = np.zeros_like(x)
    variance = np.zeros_like(x)
    for i, w in weights.items():
        f = _on_grid(basic_cdfs[i], x, f"F_{i}")
        raw += w * f
        size += abs(w) * np.abs(f)
        if basic_errors is not None and i in basic_errors:
            se = _on_grid(basic_errors[i], x, f"standard error of F_{i}")
            variance += float(w) ** 2 * se ** 2
    upper = np.maximum.accumulate(raw)
    lower = np.minimum.accumulate(raw[::-1])[::-1]
    cdf = np.clip(0.5 * (upper + lower), 0.0, 1.0)
    return QuorumDistribution(r=r, k=k, grid=x, raw=raw, cdf=cdf,
                              standard_error=np.sqrt(variance),
                              rounding_error=(r + 1) * sys.float_info.epsilon * size)


# --- analytic approximations of the basic queue (exponential service) ------------

def mm1_sojourn_cdf(x, q: float, mu: float = 1.0):
    """Sojourn CDF of an FCFS M/M/1 queue at load q: ``1 - exp(-mu*(1-q)*x)`` (exact)."""
    _check_load(q)
    check_positive(mu, "service rate mu")
    return -np.expm1(-mu * (1 - q) * np.maximum(np.asarray(x, dtype=float), 0))


def independent_basic_cdf(i: int, x, q: float, mu: float = 1.0):
    """``F_1(x)**i``: the (i,i,i) sojourn CDF if its sub-queues were independent."""
    _check_size(i)
    return mm1_sojourn_cdf(x, q, mu) ** i


def mean_matched_basic_cdf(i: int, x, q: float, mu: float = 1.0):
    """``(1 - exp(-H_i x / N(i;q)))**i``: the max of i i.i.d. exponentials scaled to the
    Nelson-Tantawi mean ``N(i;q)``; exact (M/M/1) for i = 1."""
    _check_size(i)
    _check_load(q)
    rate = harmonic(i) / float(nelson_basic(i, float(q), float(mu)))
    return (-np.expm1(-rate * np.maximum(np.asarray(x, dtype=float), 0))) ** i


BASIC_APPROXIMATIONS: dict[str, Callable] = {
    "independent": independent_basic_cdf,
    "mean-matched": mean_matched_basic_cdf,
}


def default_grid(r: int, q: float, mu: float = 1.0, points: int = 4001,
                 tail: float = 1e-7) -> np.ndarray:
    """A grid from 0 far enough that the max of r M/M/1 sojourns exceeds its end
    with probability below ``tail`` (``r * exp(-mu*(1-q)*x) <= tail``)."""
    _check_load(q)
    check_positive(mu, "service rate mu")
    end = (math.log(r) - math.log(tail)) / (mu * (1 - q))
    return np.linspace(0.0, end, points)


def approximate_quorum_cdf(n: int, r: int, k: int, rho: float, mu: float = 1.0,
                           approximation: str = "mean-matched",
                           grid=None) -> QuorumDistribution:
    """The (n,r,k) sojourn CDF, exponential service: Theorem 1 with the Lemma
    (basic queues at ``q = r*rho/n``) and an analytic ``F_i`` (module docstring)."""
    q = float(validate_queue(n, r, k, rho, mu))
    if approximation not in BASIC_APPROXIMATIONS:
        raise ConfigError(f"approximation {approximation!r} is unknown; use one of "
                          f"{', '.join(BASIC_APPROXIMATIONS)}")
    basic = BASIC_APPROXIMATIONS[approximation]
    x = default_grid(r, q, mu) if grid is None else _check_grid(grid)
    return quorum_cdf(r, k, {i: basic(i, x, q, mu) for i in range(k, r + 1)}, x)


def _check_load(q) -> None:
    if isinstance(q, bool) or not isinstance(q, numbers.Real) or not 0 <= q < 1:
        raise ConfigError(f"per-node load q={q!r} must satisfy 0 <= q < 1 (stable); "
                          "lower the load or add nodes")


def _check_size(i) -> None:
    if isinstance(i, bool) or not isinstance(i, numbers.Integral) or i < 1:
        raise ConfigError(f"basic queue size i={i!r} must be an integer >= 1")
