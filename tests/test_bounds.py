"""Theorem 2: the lower bounds built on order statistics of the service time."""

import math
from fractions import Fraction

import numpy as np
import pytest
import scipy.stats
from hypothesis import given, strategies as st

from analytic import (
    ConfigError, harmonic, lower_bound, lower_bound_general, lower_bound_pk,
    order_statistic_moments)
from strategies import stable_queues


def test_pk_hand_values():
    # (3,3,1), rho = 1/2: E[X_(3,1)] = 1/3, E[X^2] = 2/9, lambda = 1/2
    expected = Fraction(1, 3) + 3 * Fraction(1, 2) * Fraction(2, 9) / (2 * (3 - Fraction(1, 2)))
    assert expected == Fraction(2, 5)
    assert lower_bound_pk(3, 3, 1, 0.5) == pytest.approx(0.4, rel=1e-14)
    # (9,3,2), rho = 0.9: E[X_(3,2)] = 1/3 + 1/2 = 5/6, Var = 1/9 + 1/4, E[X^2] = 19/18
    mean, second, lam = Fraction(5, 6), Fraction(13, 36) + Fraction(25, 36), Fraction(9, 10)
    expected = mean + 3 * lam * second / (2 * (9 - 3 * lam * mean))
    assert lower_bound_pk(9, 3, 2, 0.9) == pytest.approx(float(expected), rel=1e-14)


@given(stable_queues(max_nodes=20), st.sampled_from([0.5, 1.0, 4.0]))
def test_pk_equals_low_for_k_1(queue, mu):
    n, r, _, rho = queue
    expected = lower_bound(n, r, 1, rho, mu)
    assert lower_bound_pk(n, r, 1, rho, mu) == pytest.approx(expected, rel=1e-12)


def test_pk_undefined_when_its_queue_is_unstable():
    # r*lambda*E[X_(9,7)] = 9 * 0.9 * (H9 - H2) = 10.8 > n = 9
    assert 9 * 0.9 * (harmonic(9) - harmonic(2)) > 9
    assert math.isnan(lower_bound_pk(9, 9, 7, 0.9))
    assert not math.isnan(lower_bound_pk(9, 9, 6, 0.9))


@given(stable_queues(max_nodes=12), st.sampled_from([0.5, 1.0, 4.0]))
def test_general_form_for_exponential_by_hand(queue, mu):
    # E[X_(r,1)] = 1/(r mu), E[X_(r,1)^2] = 2/(r mu)^2, lambda = rho mu:
    # bound = (H_r - H_{r-k})/mu + rho/(r mu (n - rho))
    n, r, k, rho = queue
    expected = (harmonic(r) - harmonic(r - k)) / mu + rho / (r * mu * (n - rho))
    dist = scipy.stats.expon(scale=1 / mu)
    assert lower_bound_general(dist, n, r, k, rho) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("q", np.linspace(0.01, 0.95, 12))
def test_against_exact_two_server_mean(q):
    # T(2,2,2; q) = (12 - q)/(8 (1 - q)) exactly (Flatto–Hahn, Nelson–Tantawi).
    exact = (12 - q) / (8 * (1 - q))
    assert lower_bound(2, 2, 2, q) < exact
    assert lower_bound_general(scipy.stats.expon(), 2, 2, 2, q) < exact
    # The paper's "tighter" exponential form is not a lower bound at k = r: there it
    # is the split-merge (an upper bound), or undefined once that queue is unstable.
    pk = lower_bound_pk(2, 2, 2, q)
    assert math.isnan(pk) or pk > exact


def test_general_with_lognormal():
    dist = scipy.stats.lognorm(0.8)
    mean_k, _ = order_statistic_moments(dist, 5, 3)
    bound = lower_bound_general(dist, 9, 5, 3, 0.9)
    assert mean_k < bound < math.inf


def test_general_needs_mean_and_ppf():
    class NoMean:
        def ppf(self, u):
            return u
    with pytest.raises(ConfigError, match="mean"):
        lower_bound_general(NoMean(), 3, 3, 1, 0.5)
    with pytest.raises(ConfigError):
        lower_bound_general(scipy.stats.expon(), 3, 3, 1, 3.0)
    with pytest.raises(ConfigError):
        lower_bound_pk(3, 3, 4, 0.5)
