"""Harmonic numbers ``H_m`` and the shifted sums ``H_{m(m-x)}`` of Theorem 3."""

import math
from fractions import Fraction

from analytic.errors import ConfigError
from analytic.parameters import check_integer

# Exact H_0, H_1, ...: extended on demand, because Theorem 1 sums need every H_i up to r.
_EXACT = [Fraction(0)]
_EULER_GAMMA = 0.57721566490153286061


def _check_order(m):
    check_integer(m, "harmonic order m")
    if m < 0:
        raise ConfigError(f"harmonic order m={m} must be >= 0")


#: Beyond this order the float ``H_m`` is ``digamma(m + 1) + Euler's gamma`` (exact to
#: rounding there) instead of a sum of m terms.
SUMMED_UP_TO = 10**6
#: Largest order of an exact ``H_m``: its denominator has about m / 2.3 digits.
MAX_EXACT_ORDER = 10**5


def harmonic(m, exact=False):
    """The harmonic number ``H_m = sum_{i=1..m} 1/i`` (``H_0 = 0``).

    Returns a ``Fraction`` when ``exact`` is true (m up to `MAX_EXACT_ORDER`), else a
    float (a correctly rounded sum up to `SUMMED_UP_TO` terms, digamma beyond).
    """
    _check_order(m)
    if not exact:
        if m > SUMMED_UP_TO:
            from scipy.special import digamma

            return float(digamma(m + 1.0)) + float(_EULER_GAMMA)
        return math.fsum(1.0 / i for i in range(1, m + 1))
    if m > MAX_EXACT_ORDER:
        raise ConfigError(f"harmonic order m={m}: exact values are computed up to "
                          f"m={MAX_EXACT_ORDER:,} (the fraction has about m/2.3 digits); "
                          "use exact=False")
    while len(_EXACT) <= m:
        _EXACT.append(_EXACT[-1] + Fraction(1, len(_EXACT)))
    return _EXACT[m]


def harmonic_shifted(m, x, exact=False):
    """The sum ``H_{m(m-x)} = sum_{i=1..m} 1/(i*(i-x))`` of Theorem 3 (LowT).

    Zero for ``m = 0``. ``x`` must not equal any of 1..m. Returns a ``Fraction``
    (of the exact value of ``x``) when ``exact`` is true, else a float.
    """
    _check_order(m)
    if x == int(x) and 1 <= x <= m:
        raise ConfigError(
            f"H_(m(m-x)) is undefined for x={x} in 1..m={m}; use x < 1 (a per-node load)")
    if exact:
        x = Fraction(x)
        return sum((Fraction(1, i) / (i - x) for i in range(1, m + 1)), Fraction(0))
    return math.fsum(1.0 / (i * (i - x)) for i in range(1, m + 1))
