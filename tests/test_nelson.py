"""The Nelson–Tantawi basic-queue estimate N(i; q)."""

from fractions import Fraction

import pytest
from hypothesis import given, strategies as st

from analytic import ConfigError, harmonic, nelson_basic
from strategies import per_node_loads


@given(per_node_loads(0.0, 0.99), st.floats(0.1, 10))
def test_one_server_is_mm1(q, mu):
    assert nelson_basic(1, q, mu) == pytest.approx(1 / (mu * (1 - q)), rel=1e-14)


@given(st.fractions(0, Fraction(99, 100)))
def test_two_servers_is_exact_flatto_hahn(q):
    # Nelson–Tantawi's formula reduces to the exact two-server result (12 - q)/(8(1 - q)).
    assert nelson_basic(2, q) == (12 - q) / (8 * (1 - q))


@given(st.integers(1, 60))
def test_no_load_gives_mean_maximum_of_exponentials(i):
    # At q = 0 there is no queueing: the sojourn is the max of i Exp(mu), mean H_i/mu.
    assert nelson_basic(i, 0, 2) == harmonic(i, exact=True) / 2


def test_hand_value():
    # N(3; 1/2) = [H3/H2 + 4/11 (1 - H3/H2) 1/2] (12 - 1/2)/(8 (1/2)), H3/H2 = 11/9
    h = Fraction(11, 9)
    assert nelson_basic(3, Fraction(1, 2)) == (h + Fraction(4, 11) * (1 - h) / 2) * Fraction(23, 8)
    assert nelson_basic(3, 0.5) == pytest.approx(Fraction(13, 11) * Fraction(23, 8), rel=1e-14)


@given(st.integers(1, 30), per_node_loads())
def test_float_matches_exact(i, q):
    exact = nelson_basic(i, Fraction(q), Fraction(1))
    assert isinstance(exact, Fraction)
    assert nelson_basic(i, q) == pytest.approx(float(exact), rel=1e-13)


@pytest.mark.parametrize("i, q, mu", [(0, 0.5, 1.0), (2, 1.0, 1.0), (2, -0.1, 1.0),
                                      (2, 0.5, 0.0), (2.0, 0.5, 1.0)])
def test_invalid(i, q, mu):
    with pytest.raises(ConfigError):
        nelson_basic(i, q, mu)
