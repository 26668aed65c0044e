"""Harmonic numbers H_m and the shifted sums H_{m(m-x)}."""

from fractions import Fraction

import pytest
from hypothesis import given, strategies as st

from analytic import ConfigError, harmonic, harmonic_shifted


def test_small_values():
    assert [harmonic(m, exact=True) for m in range(5)] == [
        0, 1, Fraction(3, 2), Fraction(11, 6), Fraction(25, 12)]
    assert harmonic(4) == pytest.approx(25 / 12, rel=1e-15)


@given(st.integers(0, 300))
def test_float_matches_exact(m):
    assert harmonic(m) == pytest.approx(float(harmonic(m, exact=True)), rel=1e-14)


@given(st.integers(0, 40), st.fractions(Fraction(-3), Fraction(99, 100)).filter(lambda x: x != 0))
def test_shifted_partial_fractions(m, x):
    # 1/(i(i-x)) = (1/x) (1/(i-x) - 1/i)
    expected = sum((1 / (i - x) - Fraction(1, i)) / x for i in range(1, m + 1))
    assert harmonic_shifted(m, x, exact=True) == expected
    assert harmonic_shifted(m, float(x)) == pytest.approx(float(expected), rel=1e-13, abs=1e-15)


def test_shifted_at_zero_is_basel_partial_sum():
    assert harmonic_shifted(3, 0, exact=True) == 1 + Fraction(1, 4) + Fraction(1, 9)
    assert harmonic_shifted(0, 0.5) == 0


@pytest.mark.parametrize("m, x", [(3, 2), (3, 1.0), (-1, 0.5)])
def test_shifted_invalid(m, x):
    with pytest.raises(ConfigError):
        harmonic_shifted(m, x)


@pytest.mark.parametrize("m", [-1, 2.0, "3"])
def test_invalid_order(m):
    with pytest.raises(ConfigError):
        harmonic(m)


def test_large_orders_are_quick_and_exact_to_rounding():
    import math

    from analytic.harmonic import SUMMED_UP_TO

    m = SUMMED_UP_TO + 1  # the first order taken from digamma
    assert harmonic(m) == pytest.approx(math.fsum(1.0 / i for i in range(1, m + 1)),
                                        rel=4e-16)
    # H_m - ln m - gamma ~ 1/(2m): checks the 10^9 value without summing 10^9 terms
    big = 10**9
    assert harmonic(big) - math.log(big) - 0.5772156649015329 == pytest.approx(
        1 / (2 * big), rel=1e-3)
    with pytest.raises(ConfigError, match="exact values are computed up to"):
        harmonic(10**6, exact=True)
