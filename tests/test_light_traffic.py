"""The exact first-order light-traffic term against known exact queues."""

import math

import pytest
from hypothesis import given, settings

from analytic.errors import ConfigError
from analytic.harmonic import harmonic
from analytic.light_traffic import light_traffic_slope, mixed_order_statistic_mean
from analytic.varma_makowski import heavy_traffic_minimum
from tests.strategies import replicas_and_quorum


def test_mm1_slope():
    # T = 1/(mu (1-q)): dT/dq at 0 is 1/mu.
    assert light_traffic_slope(1, 1, 1, mu=2.0) == pytest.approx(0.5, rel=1e-12)
    assert light_traffic_slope(5, 1, 1) == pytest.approx(1.0, rel=1e-12)


def test_flatto_hahn_slopes():
    # max: (12-q)/(8(1-q)) -> 88/64; min = 2/(1-q) - max = (4+q)/(8(1-q)) -> 40/64.
    assert light_traffic_slope(2, 2, 2) == pytest.approx(88 / 64, rel=1e-12)
    assert light_traffic_slope(2, 2, 1) == pytest.approx(40 / 64, rel=1e-12)


@pytest.mark.parametrize("r", range(1, 8))
def test_basic_queue_minimum_matches_varma_makowski_c(r):
    # Varma & Makowski's c_r is the light-traffic derivative of E[min] (their
    # "fortuitous agreement"), computed here by an independent route.
    assert light_traffic_slope(r, r, 1) == pytest.approx(float(heavy_traffic_minimum(r)),
                                                         rel=1e-11)


@settings(max_examples=25, deadline=None)
@given(replicas_and_quorum(max_replicas=9))
def test_slopes_over_quorums_sum_to_marginal_slopes(rk):
    # sum_k S_(k) = sum_j S_j and each S_j is M/M/1: sum_k T'(0) = r/mu.
    r, _ = rk
    for n in (r, r + 3):
        total = math.fsum(light_traffic_slope(n, r, k) for k in range(1, r + 1))
        assert total == pytest.approx(r, rel=1e-11)


def test_sparse_placement_approaches_independence():
    # Two sub-tasks of a job rarely share an earlier job when n >> r, so the slope
    # tends to that of independent M/M/1 sojourns, H_r - H_{r-k}.
    for k in (1, 2, 3):
        independent = harmonic(3) - harmonic(3 - k)
        assert light_traffic_slope(3000, 3, k) == pytest.approx(independent, rel=2e-3)
        assert light_traffic_slope(3, 3, k) != pytest.approx(independent, rel=2e-2)


def test_mixed_order_statistic_of_two_erlangs():
    # max of two Erlang(2,1): 4 - E[min], P(min > x) = (1+x)^2 e^{-2x} -> 5/4.
    assert mixed_order_statistic_mean(2, 2, 2) == pytest.approx(2.75, rel=1e-12)


@pytest.mark.parametrize("args", [(2, 3, 1), (3, 2, 3), (3, 3, 0), (3, 3, 1, 0.0),
                                  (3.0, 3, 1)])
def test_invalid_inputs_raise(args):
    with pytest.raises(ConfigError):
        light_traffic_slope(*args)
