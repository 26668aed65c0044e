"""The Varma–Makowski basic-queue approximation against exact results it must reproduce."""

from fractions import Fraction

import pytest
from hypothesis import given, strategies as st

from analytic.errors import ConfigError
from analytic.harmonic import harmonic
from analytic.varma_makowski import (
    heavy_traffic_constant, heavy_traffic_minimum, varma_makowski_basic)


def test_heavy_traffic_constants_of_one_and_two_queues():
    # M/M/1: (1-q)T -> 1/mu; Flatto–Hahn (2,2,2): (1-q)T = (12-q)/8 -> 11/8.
    assert heavy_traffic_constant(1) == 1
    assert heavy_traffic_constant(2) == Fraction(11, 8)
    # E[min] + E[max] = 2 E[S] for two queues: 2 - 11/8.
    assert heavy_traffic_minimum(2) == Fraction(5, 8)


@pytest.mark.parametrize("q", [Fraction(0), Fraction(1, 7), Fraction(1, 2), Fraction(19, 20)])
def test_exact_for_mm1_and_flatto_hahn(q):
    assert varma_makowski_basic(1, q, Fraction(3)) == 1 / (3 * (1 - q))
    assert varma_makowski_basic(2, q, Fraction(2)) == (12 - q) / (8 * 2 * (1 - q))


@given(st.integers(1, 15))
def test_light_traffic_limit_is_expected_maximum(i):
    assert varma_makowski_basic(i, Fraction(0), 1) == harmonic(i, exact=True)


@given(st.integers(2, 15))
def test_heavy_traffic_constant_between_association_bounds(i):
    # Positively associated sojourns: E[max] is at least the marginal mean (1) and
    # at most that of independent ones (H_i); strictly inside for i >= 2.
    assert 1 < heavy_traffic_constant(i) < harmonic(i, exact=True)
    assert heavy_traffic_constant(i) > heavy_traffic_constant(i - 1)


def test_float_and_exact_inputs_agree():
    exact = varma_makowski_basic(5, Fraction(3, 4), Fraction(1))
    assert varma_makowski_basic(5, 0.75, 1.0) == pytest.approx(float(exact), rel=1e-14)


@pytest.mark.parametrize("args", [(0, 0.5), (3, 1.0), (3, -0.1), (2.0, 0.5), (3, 0.5, 0)])
def test_invalid_inputs_raise(args):
    with pytest.raises(ConfigError):
        varma_makowski_basic(*args)
