"""The Gaussian-copula model of a job's sub-task sojourns."""

import math

import pytest
from hypothesis import given, settings, strategies as st

from analytic.errors import ConfigError
from analytic.harmonic import harmonic
from analytic.sojourn_copula import (
    copula_estimate, copula_heavy_traffic_limit, copula_order_statistic_mean,
    pair_correlation, pair_minimum_target)
from tests.strategies import replicas_and_quorum, stable_queues


@given(replicas_and_quorum(max_replicas=15))
def test_independent_copula_gives_exponential_order_statistics(rk):
    r, k = rk
    assert copula_order_statistic_mean(r, k, 0.0) == pytest.approx(
        harmonic(r) - harmonic(r - k), rel=1e-12)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 15), st.floats(0, 0.95))
def test_order_statistics_sum_to_the_marginal_means(r, a):
    # Whatever the dependence, sum_k S_(k) = sum_j S_j with E[S_j] = 1.
    total = math.fsum(copula_order_statistic_mean(r, k, a) for k in range(1, r + 1))
    assert total == pytest.approx(r, rel=1e-10)


def test_dependence_raises_the_minimum_and_lowers_the_maximum():
    low, high = 0.1, 0.6
    assert copula_order_statistic_mean(5, 1, high) > copula_order_statistic_mean(5, 1, low)
    assert copula_order_statistic_mean(5, 5, high) < copula_order_statistic_mean(5, 5, low)


@pytest.mark.parametrize("q", [0.0, 0.3, 0.6, 0.9, 1.0])
@pytest.mark.parametrize("overlap", [0.25, 1.0])
def test_pair_correlation_hits_its_target(q, overlap):
    a = pair_correlation(q, overlap)
    assert copula_order_statistic_mean(2, 1, a) == pytest.approx(
        pair_minimum_target(q, overlap), abs=1e-11)


@pytest.mark.parametrize("rho", [0.2, 0.5, 0.9])
def test_exact_for_mm1_and_the_flatto_hahn_queue(rho):
    assert copula_estimate(1, 1, 1, rho, mu=2.0) == pytest.approx(1 / (2 * (1 - rho)),
                                                                  rel=1e-11)
    assert copula_estimate(2, 2, 2, rho) == pytest.approx((12 - rho) / (8 * (1 - rho)),
                                                          rel=1e-11)


def test_heavy_traffic_limit_of_two_queues_is_flatto_hahn():
    assert copula_heavy_traffic_limit(2, 2, 2) == pytest.approx(11 / 8, rel=1e-11)


@settings(max_examples=20, deadline=None)
@given(stable_queues(max_nodes=12))
def test_monotone_in_quorum(queue):
    n, r, _, rho = queue
    values = [copula_estimate(n, r, k, rho) for k in range(1, r + 1)]
    assert all(a < b for a, b in zip(values, values[1:]))


@pytest.mark.parametrize("args", [(3, 3, 4, 0.5), (3, 4, 1, 0.5), (3, 3, 1, 1.0),
                                  (3, 3, 1, 0.5, -1.0)])
def test_invalid_inputs_raise(args):
    with pytest.raises(ConfigError):
        copula_estimate(*args)
    with pytest.raises(ConfigError):
        copula_order_statistic_mean(2, 1, 1.0)
