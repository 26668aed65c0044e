"""Theorem 3: the estimate of T(n,r,k; rho) for exponential service.

    T(n,r,k; rho) ~= min(max(NelsonT, LowT), UpT),   q = r*rho/n.

NelsonT substitutes the Nelson–Tantawi basic-queue estimate into Theorem 1; UpT is
the same estimate of T(k,k,k; q) (Theorem 2's upper bound); LowT follows Joshi et
al.'s lower bound. None of the three is a proven bound on the true mean: UpT and
NelsonT are approximations, so the clamp is a heuristic.
"""

import numbers
from fractions import Fraction

from analytic.bounds import lower_bound_pk
from analytic.coefficients import check_order, expand_basic
from analytic.harmonic import harmonic, harmonic_shifted
from analytic.nelson import nelson_basic
from analytic.parameters import validate_queue


def _exact(x):
    return Fraction(x) if isinstance(x, numbers.Rational) else Fraction(float(x))


def nelson_estimate(n, r, k, rho, mu=1.0):
    """Theorem 3, NelsonT: ``sum_{i=k..r} W(r,k,i) * N(i; r*rho/n)``.

    Evaluated in exact rational arithmetic at the given (binary) ``rho`` and ``mu``,
    so the alternating Theorem 1 sum loses no digits for any ``r``; returns a float.
    """
    validate_queue(n, r, k, rho, mu)
    check_order(r, k)  # before r basic estimates are computed for nothing
    q, mu = _exact(rho) * r / n, _exact(mu)
    return float(expand_basic(r, k, {i: nelson_basic(i, q, mu) for i in range(k, r + 1)}))


def upper_estimate(n, r, k, rho, mu=1.0):
    """Theorem 3, UpT: Nelson's estimate of ``T(k,k,k; r*rho/n)``.

    ``n/(mu*(n - r*rho))`` for k = 1 (exact: M/M/1), otherwise
    ``(12n - r*rho)/(8*mu*(n - r*rho)) * [H_k/H_2 + (4r/(11n))*(1 - H_k/H_2)*rho]``.
    """
    validate_queue(n, r, k, rho, mu)
    if k == 1:
        return n / (mu * (n - r * rho))
    h = harmonic(k) / harmonic(2)
    return (12 * n - r * rho) / (8 * mu * (n - r * rho)) * (h + 4 * r / (11 * n) * (1 - h) * rho)


def lower_bound(n, r, k, rho, mu=1.0):
    """Theorem 3, LowT.

    ``(H_r - H_{r-k})/mu + r*rho*(H_{r(r-q)} - H_{(r-k)(r-k-q)})/(n*mu)`` with
    ``q = r*rho/n``; algebraically ``sum_{i=r-k+1..r} 1/(mu*(i - q))``, the lower
    bound of Joshi et al. for a purging queue fed at rate ``r*lambda/n``.
    """
    q = float(validate_queue(n, r, k, rho, mu))
    return ((harmonic(r) - harmonic(r - k)) / mu
            + r * rho * (harmonic_shifted(r, q) - harmonic_shifted(r - k, q)) / (n * mu))


def theorem3_estimate(n, r, k, rho, mu=1.0):
    """Theorem 3: ``min(max(NelsonT, LowT), UpT)``.

    When LowT exceeds UpT the result is UpT (the min is applied last, as in the
    paper), so it can lie below LowT.
    """
    nelson = nelson_estimate(n, r, k, rho, mu)
    return min(max(nelson, lower_bound(n, r, k, rho, mu)), upper_estimate(n, r, k, rho, mu))


def estimates(n, r, k, rho, mu=1.0):
    """All closed-form values for one queue, as printed by ``forkjoin-sim approx --json``.

    Keys: ``per_node_load``, ``nelson``, ``lower`` (LowT), ``lower_pk`` (Theorem 2,
    exponential form; ``None`` where that bound is undefined, see
    :func:`~analytic.bounds.lower_bound_pk`), ``upper`` (UpT) and ``approx``
    (Theorem 3). Values are floats.
    """
    q = validate_queue(n, r, k, rho, mu)
    nelson = nelson_estimate(n, r, k, rho, mu)
    lower = lower_bound(n, r, k, rho, mu)
    upper = upper_estimate(n, r, k, rho, mu)
    pk = lower_bound_pk(n, r, k, rho, mu)
    return {
        "per_node_load": float(q),
        "nelson": nelson,
        "lower": lower,
        "lower_pk": None if pk != pk else pk,
        "upper": upper,
        "approx": min(max(nelson, lower), upper),
    }
