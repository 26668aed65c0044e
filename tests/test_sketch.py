"""The log-linear histogram and the batch-means interval."""

import math

import numpy as np
import pytest
from scipy import stats

from forkjoin_sim.measure.sketch import (BINS, EMAX, EMIN, RELATIVE_ERROR, batch_interval,
                                 bucket, bucket_bounds, quantiles, t_interval)


def histogram_of(values):
    counts = np.zeros(BINS, dtype=np.int64)
    for x in values:
        counts[bucket(x)] += 1
    return counts


def test_every_value_lies_in_its_bucket():
    rng = np.random.default_rng(0)
    values = np.concatenate([rng.lognormal(0, 4, 5000), 2.0 ** np.arange(EMIN, EMAX),
                             [1.0, 1.5, 1.9999999]])
    index = np.array([bucket(x) for x in values])
    assert np.all((index > 0) & (index < BINS - 1))
    lower, upper = bucket_bounds(index)
    assert np.all((lower <= values) & (values < upper))
    assert np.all((upper - lower) / lower <= 2 * RELATIVE_ERROR + 1e-15)


def test_out_of_range_values_go_to_the_edge_buckets():
    assert bucket(0.0) == 0
    assert bucket(2.0 ** (EMIN - 1)) == 0
    assert bucket(2.0 ** EMAX) == BINS - 1
    assert bucket(math.inf) == BINS - 1


@pytest.mark.parametrize("seed", [1, 2])
def test_quantiles_are_within_the_stated_relative_error(seed):
    rng = np.random.default_rng(seed)
    data = np.concatenate([rng.exponential(3.0, 60_001), rng.lognormal(1, 1.5, 40_000)])
    qs = [0.0, 0.01, 0.5, 0.9, 0.95, 0.99, 0.999, 1.0]
    exact = np.quantile(data, qs, method="inverted_cdf")
    estimate = quantiles(histogram_of(data), qs)
    assert np.all(np.abs(estimate - exact) <= RELATIVE_ERROR * exact)


def test_quantiles_in_the_overflow_bucket_are_nan():
    counts = histogram_of([1.0, 2.0, 2.0 ** (EMAX + 1)])
    low, top = quantiles(counts, [0.1, 1.0])
    assert low == pytest.approx(1.0, rel=RELATIVE_ERROR)
    assert math.isnan(top)
    assert np.all(np.isnan(quantiles(np.zeros(BINS), [0.5])))


def test_batch_interval_is_students_t_on_batch_means():
    rng = np.random.default_rng(4)
    counts = np.full(20, 50)
    sums = rng.normal(10.0, 1.0, 20) * counts
    mean, low, high = batch_interval(sums, counts, 0.9)
    means = sums / counts
    half = stats.t.ppf(0.95, 19) * means.std(ddof=1) / math.sqrt(20)
    assert mean == pytest.approx(means.mean())
    assert (low, high) == pytest.approx((mean - half, mean + half))


def test_batch_interval_ignores_empty_batches_and_weights_the_mean_by_count():
    mean, low, high = batch_interval(np.array([[2.0, 9.0, 0.0]]),
                                     np.array([[1, 3, 0]]))
    assert mean == pytest.approx(11.0 / 4)
    assert low < 2.0 and high > 3.0
    assert t_interval(np.array([5.0]), 0.95)[0] == 5.0
