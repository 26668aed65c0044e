"""Harmonic numbers ``H_m`` and the shifted sums ``H_{m(m-x)}`` of Theorem 3."""

import math
from fractions import Fraction

from analytic.errors import ConfigError
from analytic.parameters import check_integer

# Exact H_0, H_1, ...: extended on demand, because Theorem 1 sums need every H_i up to r.
_EXACT = [Fraction(0)]


def _check_order(m):
    check_integer(m, "harmonic order m")
    if m < 0:
        raise ConfigError(f"harmonic order m={m} must be >= 0")


def harmonic(m, exact=False):
    """The harmonic number ``H_m = sum_{i=1..m} 1/i`` (``H_0 = 0``).

    Returns a ``Fraction`` when ``exact`` is true, else a float.
    """
    _check_order(m)
    if not exact:
        return math.fsum(1.0 / i for i in range(1, m + 1))
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
