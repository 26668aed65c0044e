"""Moments of the k-th smallest of r i.i.d. service times."""

import itertools
from fractions import Fraction

import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings, strategies as st

from analytic import ConfigError, exponential_order_statistic_moments, order_statistic_moments
from strategies import replicas_and_quorum


class Quantiles:
    """Only ppf/isf of a distribution: forces the numerical path."""

    def __init__(self, dist):
        self.ppf, self.isf = dist.ppf, dist.isf


class Resample:
    """Resampling a finite sample: a step-function ppf (an empirical distribution)."""

    def __init__(self, samples):
        self.samples = np.sort(np.asarray(samples, dtype=float))

    def ppf(self, u):
        m = len(self.samples)
        return self.samples[np.clip(np.ceil(np.asarray(u) * m).astype(int) - 1, 0, m - 1)]

    def cdf(self, x):
        return np.searchsorted(self.samples, x, side="right") / len(self.samples)

    def mean(self):
        return self.samples.mean()


def test_exponential_hand_values():
    assert exponential_order_statistic_moments(2, 2) == pytest.approx((1.5, 1 + 0.25 + 2.25))
    # min of 3 Exp(2) is Exp(6): mean 1/6, E[X^2] = 2/36
    got = order_statistic_moments(scipy.stats.expon(scale=0.5), 3, 1)
    assert got == pytest.approx((1 / 6, 1 / 18))


@given(replicas_and_quorum(max_replicas=12), st.sampled_from([0.25, 1.0, 3.0]),
       st.sampled_from([0.0, 2.0]))
def test_exponential_closed_form_matches_integration(rk, mu, loc):
    r, k = rk
    dist = scipy.stats.expon(loc=loc, scale=1 / mu)
    closed = order_statistic_moments(dist, r, k)
    assert closed == pytest.approx(order_statistic_moments(Quantiles(dist), r, k), rel=1e-10)
    if loc == 0:
        assert closed == exponential_order_statistic_moments(r, k, mu)


@given(replicas_and_quorum(max_replicas=12))
def test_uniform_order_statistics(rk):
    r, k = rk
    expected = (k / (r + 1), k * (k + 1) / ((r + 1) * (r + 2)))
    got = order_statistic_moments(scipy.stats.uniform(), r, k)
    assert got == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("dist", [scipy.stats.lognorm(0.8), scipy.stats.lognorm(1.5),
                                  scipy.stats.gamma(0.5), scipy.stats.weibull_min(0.7)])
def test_single_draw_is_the_distribution(dist):
    expected = (dist.mean(), dist.moment(2))
    assert order_statistic_moments(dist, 1, 1) == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("r, k", [(5, 2), (3, 3), (7, 1)])
def test_lognormal_against_monte_carlo(r, k):
    dist = scipy.stats.lognorm(0.8)
    rng = np.random.default_rng(np.random.SeedSequence(20190878))
    kth = np.sort(dist.rvs(size=(200_000, r), random_state=rng), axis=1)[:, k - 1]
    mean, second = order_statistic_moments(dist, r, k)
    for value, draws in ((mean, kth), (second, kth ** 2)):
        standard_error = draws.std(ddof=1) / np.sqrt(len(draws))
        assert abs(value - draws.mean()) < 4 * standard_error


@settings(max_examples=25)
@given(st.lists(st.integers(0, 30), min_size=1, max_size=4), replicas_and_quorum(max_replicas=3))
def test_empirical_by_enumeration(samples, rk):
    # Every ordered r-tuple of sample indices is equally likely.
    r, k = rk
    tuples = list(itertools.product(samples, repeat=r))
    kth = [sorted(t)[k - 1] for t in tuples]
    expected = (Fraction(sum(kth), len(tuples)), Fraction(sum(x * x for x in kth), len(tuples)))
    got = order_statistic_moments(Resample(samples), r, k)
    assert got == pytest.approx(tuple(map(float, expected)), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("r, k", [(5, 2), (9, 9), (9, 1)])
def test_empirical_many_samples_exact(r, k):
    samples = np.random.default_rng(7).lognormal(size=2000)
    x = np.sort(samples)
    j = np.arange(1, len(x) + 1)
    beta = scipy.stats.beta(k, r - k + 1).cdf
    weights = beta(j / len(x)) - beta((j - 1) / len(x))  # P(X_(k) = x_(j))
    expected = (weights @ x, weights @ x ** 2)
    assert order_statistic_moments(Resample(samples), r, k) == pytest.approx(expected, rel=1e-12)


def test_scipy_discrete_distribution():
    # E[min of two] = sum_{x >= 0} P(X > x)^2
    dist = scipy.stats.poisson(3)
    x = np.arange(0, 100)
    expected = np.sum(dist.sf(x) ** 2)
    assert order_statistic_moments(dist, 2, 1)[0] == pytest.approx(expected, rel=1e-5)


def test_invalid():
    with pytest.raises(ConfigError, match="ppf"):
        order_statistic_moments(object(), 3, 1)
    with pytest.raises(ConfigError):
        order_statistic_moments(scipy.stats.expon(), 3, 4)
    with pytest.raises(ConfigError):
        exponential_order_statistic_moments(3, 1, mu=0)
