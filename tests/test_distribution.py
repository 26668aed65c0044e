"""Theorem 1 on whole distributions (analytic.distribution)."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import arrays
from scipy import stats

from analytic import nelson_estimate, w_coefficients
from analytic.distribution import (
    approximate_quorum_cdf, independent_basic_cdf, invert_cdf, mean_matched_basic_cdf,
    mm1_sojourn_cdf, quorum_cdf)
from analytic.errors import ConfigError
from analytic.harmonic import harmonic
from tests.strategies import replicas_and_quorum


@settings(max_examples=40, deadline=None)
@given(rk=replicas_and_quorum(max_replicas=5), data=st.data())
def test_identity_holds_exactly_on_any_finite_sample(rk, data):
    # Symmetrising a sample over all column subsets makes it exchangeable, and then
    # sum_i W F_i is exactly the empirical CDF of each row's k-th smallest value.
    r, k = rk
    rows = data.draw(st.integers(1, 6))
    sample = data.draw(arrays(np.float64, (rows, r),
                              elements=st.floats(0, 10, allow_nan=False)))
    grid = np.linspace(0, 10, 41)
    basic = {}
    for i in range(k, r + 1):
        maxima = [sample[:, list(s)].max(axis=1)
                  for s in itertools.combinations(range(r), i)]
        basic[i] = np.mean([(m[:, None] <= grid).mean(axis=0) for m in maxima], axis=0)
    kth = np.sort(sample, axis=1)[:, k - 1]
    expected = (kth[:, None] <= grid).mean(axis=0)
    d = quorum_cdf(r, k, basic, grid)
    assert np.allclose(d.raw, expected, atol=1e-12)
    assert not d.violations.any()


@pytest.mark.parametrize("r, k", [(3, 1), (5, 2), (9, 1), (9, 5), (9, 9)])
def test_independent_approximation_is_the_binomial_order_statistic(r, k):
    q, grid = 0.6, np.linspace(0, 30, 30_001)
    d = quorum_cdf(r, k, {i: independent_basic_cdf(i, grid, q) for i in range(k, r + 1)},
                   grid)
    marginal = mm1_sojourn_cdf(grid, q)
    assert np.allclose(d.raw, stats.binom.sf(k - 1, r, marginal), atol=1e-12)
    assert not d.violations.any()
    # Mean of the k-th smallest of r i.i.d. Exp(theta): (H_r - H_{r-k}) / theta.
    theta = 1 - q
    assert d.mean() == pytest.approx((harmonic(r) - harmonic(r - k)) / theta, rel=1e-4)


@pytest.mark.parametrize("n, r, k, rho", [(3, 3, 2, 0.8), (5, 5, 3, 0.5), (9, 3, 3, 2.4)])
def test_mean_matched_cdf_reproduces_nelson_t(n, r, k, rho):
    d = approximate_quorum_cdf(n, r, k, rho, approximation="mean-matched")
    assert d.tail_mass < 1e-6
    assert d.mean() == pytest.approx(nelson_estimate(n, r, k, rho), rel=1e-4)


def test_mean_matched_sum_breaks_down_where_nelson_t_does():
    # NelsonT for (9,9,1) at rho = 0.5 is negative; the CDF version must say so.
    assert nelson_estimate(9, 9, 1, 0.5) < 0
    d = approximate_quorum_cdf(9, 9, 1, 0.5, approximation="mean-matched")
    assert d.violations.any()
    assert "non-monotone or outside [0,1]" in d.describe()
    assert np.all(np.diff(d.cdf) >= 0) and d.cdf.min() >= 0 and d.cdf.max() <= 1


def test_basic_approximations_are_exact_mm1_for_one_queue():
    x = np.linspace(0, 10, 11)
    exact = 1 - np.exp(-0.3 * x)
    assert np.allclose(independent_basic_cdf(1, x, 0.7), exact)
    assert np.allclose(mean_matched_basic_cdf(1, x, 0.7), exact)


def test_repair_clips_and_makes_monotone_and_reports():
    grid = np.array([0.0, 1.0, 2.0, 3.0])
    # 2 F_1 - F_2 with inconsistent inputs: negative at x=1, decreasing at x=3.
    d = quorum_cdf(2, 1, {1: np.array([0, 0.1, 0.9, 0.8]),
                          2: np.array([0, 0.5, 0.7, 0.7])}, grid)
    assert np.allclose(d.raw, [0, -0.3, 1.1, 0.9])
    assert list(d.violations) == [False, True, True, True]
    assert np.all(np.diff(d.cdf) >= 0) and d.cdf.min() >= 0 and d.cdf.max() <= 1
    assert d.defect[1] == pytest.approx(0.3)


def test_percentiles_and_timeouts_of_an_exponential():
    grid = np.linspace(0, 40, 40_001)
    d = quorum_cdf(1, 1, {1: 1 - np.exp(-grid)}, grid)
    for q in (50, 95, 99):
        assert d.percentile(q) == pytest.approx(-math.log(1 - q / 100), abs=1e-3)
    assert d.mean() == pytest.approx(1.0, rel=1e-6)
    t = 2.0
    m = d.timeout(t)
    assert m.availability == pytest.approx(1 - math.exp(-t), abs=1e-9)
    assert m.waiting_mean == pytest.approx(1 - math.exp(-t), abs=1e-6)
    answered = (1 - math.exp(-t) * (1 + t)) / (1 - math.exp(-t))
    assert m.answered_mean == pytest.approx(answered, abs=1e-6)


def test_standard_error_propagates_through_the_coefficients():
    grid = np.linspace(0, 5, 11)
    r, k = 4, 2
    d = quorum_cdf(r, k, {i: 1 - np.exp(-grid) for i in range(k, r + 1)}, grid,
                   basic_errors={i: 0.01 for i in range(k, r + 1)})
    expected = 0.01 * math.sqrt(sum(w * w for w in w_coefficients(r, k).values()))
    assert np.allclose(d.standard_error, expected)
    low, high = d.percentile_bracket(50)
    assert low < d.percentile(50) < high


def test_invert_cdf_is_nan_off_the_grid():
    assert math.isnan(invert_cdf([0, 1, 2], [0, 0.5, 0.9], 0.95))
    assert invert_cdf([0, 1, 2], [0, 0.5, 0.9], 0.7) == pytest.approx(1.5)


@pytest.mark.parametrize("call, fragment", [
    (lambda: quorum_cdf(3, 2, {2: 0.5}, [0, 1]), "missing for i = 3"),
    (lambda: quorum_cdf(3, 2, {2: 0.5, 3: 0.5}, [1, 2]), "start at 0"),
    (lambda: quorum_cdf(3, 4, {}, [0, 1]), "use 1 <= k <= r"),
    (lambda: approximate_quorum_cdf(3, 3, 2, 1.2), "use rho < 1"),
    (lambda: approximate_quorum_cdf(3, 3, 2, 0.5, approximation="magic"), "use one of"),
    (lambda: quorum_cdf(1, 1, {1: [0.0, 1.0]}, [0, 1]).timeout(5), "extend the grid"),
])
def test_bad_input_says_how_to_fix(call, fragment):
    with pytest.raises(ConfigError) as info:
        call()
    assert fragment in str(info.value)
