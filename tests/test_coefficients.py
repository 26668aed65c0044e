"""Theorem 1: the coefficients W(r,k,i) and the expansion into basic queues."""

import itertools
import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from analytic import (
    CancellationWarning, ConfigError, a_coefficient, cancellation_error, expand_basic,
    harmonic, w_coefficients, w_coefficients_by_sum)
from strategies import replicas_and_quorum


def test_known_coefficients():
    # min of three exchangeable variables: E[min] = 3 E[S1] - 3 E[max(S1,S2)] + E[max3]
    assert w_coefficients(3, 1) == {1: 3, 2: -3, 3: 1}
    # the median of three: 3 E[max2] - 2 E[max3]
    assert w_coefficients(3, 2) == {2: 3, 3: -2}
    assert w_coefficients(5, 5) == {5: 1}
    assert a_coefficient(7, 3, 3) == 1
    assert a_coefficient(7, 3, 5) == math.comb(4, 2)


@given(replicas_and_quorum(max_replicas=40))
def test_closed_form_equals_paper_sum(rk):
    r, k = rk
    assert w_coefficients(r, k) == w_coefficients_by_sum(r, k)


@given(replicas_and_quorum(max_replicas=40))
def test_coefficients_sum_to_one(rk):
    assert sum(w_coefficients(*rk).values()) == 1


@given(replicas_and_quorum(max_replicas=40))
def test_harmonic_expansion_gives_exponential_order_statistic(rk):
    # E[max of i Exp(1)] = H_i, E[k-th smallest of r] = H_r - H_{r-k}
    r, k = rk
    basic = {i: harmonic(i, exact=True) for i in range(k, r + 1)}
    assert expand_basic(r, k, basic) == harmonic(r, exact=True) - harmonic(r - k, exact=True)


def _rows_and_subset_maxima(sample, r):
    """Mean over rows of the max over every i-subset of columns, for i = 1..r."""
    return {i: Fraction(sum(max(row[c] for c in cols) for row in sample
                            for cols in itertools.combinations(range(r), i)),
                        len(sample) * math.comb(r, i))
            for i in range(1, r + 1)}


samples = st.integers(1, 7).flatmap(lambda r: st.tuples(
    st.just(r), st.integers(1, r),
    st.lists(st.lists(st.integers(-20, 20), min_size=r, max_size=r), min_size=1, max_size=6)))


@given(samples)
def test_order_statistic_identity_exact_on_finite_samples(case):
    r, k, sample = case
    kth_smallest = Fraction(sum(sorted(row)[k - 1] for row in sample), len(sample))
    assert expand_basic(r, k, _rows_and_subset_maxima(sample, r)) == kth_smallest


@given(samples, st.integers(-20, 20))
def test_order_statistic_identity_cdf_form(case, x):
    r, k, sample = case
    below = Fraction(sum(sorted(row)[k - 1] <= x for row in sample), len(sample))
    maxima_below = {
        i: Fraction(sum(max(row[c] for c in cols) <= x for row in sample
                        for cols in itertools.combinations(range(r), i)),
                    len(sample) * math.comb(r, i))
        for i in range(1, r + 1)}
    assert expand_basic(r, k, maxima_below) == below


@settings(max_examples=30)
@given(st.integers(1, 7), st.data())
def test_order_statistic_identity_real_matrix(r, data):
    k = data.draw(st.integers(1, r))
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1)))
    matrix = rng.lognormal(size=(50, r))
    maxima = {i: float(np.mean([matrix[:, list(cols)].max(axis=1)
                                for cols in itertools.combinations(range(r), i)]))
              for i in range(1, r + 1)}
    kth = float(np.sort(matrix, axis=1)[:, k - 1].mean())
    assert expand_basic(r, k, maxima) == pytest.approx(kth, rel=1e-12)


def test_exact_inputs_give_exact_output():
    result = expand_basic(3, 1, {1: 1, 2: Fraction(3, 2), 3: Fraction(11, 6)})
    assert isinstance(result, Fraction) and result == Fraction(1, 3)
    assert isinstance(expand_basic(3, 1, {1: 1.0, 2: 1.5, 3: 11 / 6}), float)


def test_missing_keys_are_named():
    with pytest.raises(ConfigError, match=r"missing for i = 2, 4; .* 2\.\.5"):
        expand_basic(5, 2, {3: 1.0, 5: 2.0})


@pytest.mark.parametrize("bad", [math.nan, math.inf, "1.0", True])
def test_non_numbers_raise(bad):
    with pytest.raises(ConfigError):
        expand_basic(2, 1, {1: 1.0, 2: bad})


def test_cancellation_warning_for_large_r_floats():
    basic = {i: float(harmonic(i, exact=True)) for i in range(1, 61)}
    with pytest.warns(CancellationWarning, match="r=60, k=1"):
        expand_basic(60, 1, basic)
    assert cancellation_error(60, 1, basic) > 1


def test_no_warning_for_exact_inputs_or_small_r():
    exact = {i: harmonic(i, exact=True) for i in range(1, 61)}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert expand_basic(60, 1, exact) == Fraction(1, 60)
        expand_basic(9, 1, {i: float(v) for i, v in exact.items() if i <= 9})
    assert cancellation_error(60, 1, exact) == 0.0


@given(replicas_and_quorum(max_replicas=60))
def test_error_estimate_bounds_the_actual_error(rk):
    # Inputs are H_i correctly rounded; the only error is that rounding, which the
    # estimate eps * sum|W_i b_i| / |result| must bound while the result means
    # anything (once all digits are lost, |result| itself is wrong).
    r, k = rk
    basic = {i: float(harmonic(i, exact=True)) for i in range(k, r + 1)}
    exact = harmonic(r, exact=True) - harmonic(r - k, exact=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", CancellationWarning)
        actual = float(abs(Fraction(expand_basic(r, k, basic)) - exact) / exact)
    estimate = cancellation_error(r, k, basic)
    assert bool(caught) == (estimate > 1e-6)
    if estimate < 0.1:
        assert actual <= estimate + 1e-16


@pytest.mark.parametrize("r, k", [(3, 4), (0, 0), (3, 0), (3.0, 1), (True, 1)])
def test_invalid_replicas_quorum(r, k):
    with pytest.raises(ConfigError):
        w_coefficients(r, k)


def test_input_precision_reveals_cancellation_that_float_rounding_hides():
    # T(i,i,i) of M/M/1-like basic queues written with three significant digits
    basic = {i: float(f"{float(harmonic(i, exact=True)) * 2:.3g}") for i in range(1, 10)}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        expand_basic(9, 1, basic)  # float rounding alone: nothing to say
    terms = [w * basic[i] for i, w in w_coefficients(9, 1).items()]
    expected = 5e-4 * sum(abs(t) for t in terms) / abs(sum(terms))
    assert cancellation_error(9, 1, basic, relative_precision=5e-4) == pytest.approx(
        expected, rel=1e-9)
    assert expected > 1e-2
    with pytest.warns(CancellationWarning, match="relative 5.0e-04"):
        expand_basic(9, 1, basic, relative_precision=5e-4)
    # exact inputs declared to be measured: the same judgement, an exact result
    exact = {i: Fraction(v).limit_denominator(1000) for i, v in basic.items()}
    with pytest.warns(CancellationWarning):
        assert isinstance(expand_basic(9, 1, exact, relative_precision=5e-4), Fraction)
    with pytest.raises(ConfigError, match="relative_precision"):
        cancellation_error(9, 1, basic, relative_precision=-1)


def test_orders_and_clusters_beyond_the_limits_are_refused_at_once():
    import analytic

    with pytest.raises(ConfigError, match="computed up to r=3000"):
        w_coefficients(10**6, 1)
    with pytest.raises(ConfigError, match="computed up to r=3000"):
        analytic.theorem3_estimate(10**6, 10**6, 1, 0.5)
    with pytest.raises(ConfigError, match=r"nodes n \(401 digits\) is beyond any cluster"):
        analytic.theorem3_estimate(10**400, 3, 2, 0.9)
