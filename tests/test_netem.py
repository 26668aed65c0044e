"""Tests for forkjoin_sim.laws.netem: netem-style one-way delay laws."""

import numpy as np
import pytest
from scipy import stats

from forkjoin_sim.errors import ConfigError
from forkjoin_sim.laws.netem import netem


def test_uniform_jitter_spans_mean_plus_minus_jitter():
    law = netem(10.0, 2.0)
    assert law.support() == pytest.approx((8.0, 12.0))
    assert law.mean() == pytest.approx(10.0)
    # Uniform on a width-4 interval: variance 4**2 / 12.
    assert law.var() == pytest.approx(16 / 12)
    draws = law.rvs(size=20_000, random_state=np.random.default_rng(1))
    assert draws.min() >= 8.0 and draws.max() <= 12.0
    assert stats.kstest(draws, stats.uniform(8, 4).cdf).pvalue > 0.001


def test_uniform_jitter_equal_to_the_mean_reaches_zero():
    assert netem(3.0, 3.0).support() == pytest.approx((0.0, 6.0))


def test_uniform_jitter_above_the_mean_is_refused_with_the_fix():
    with pytest.raises(ConfigError, match="exceeds mean") as caught:
        netem(2.0, 3.0)
    assert "use jitter <= mean" in str(caught.value)
    assert "normal" in str(caught.value)


def test_normal_is_the_normal_law_conditioned_on_nonnegative_delays():
    mean, jitter = 1.0, 2.0
    law = netem(mean, jitter, "normal")
    parent = stats.norm(mean, jitter)
    kept = parent.sf(0.0)
    for x in (0.0, 0.5, 1.0, 3.0, 6.0):
        assert law.cdf(x) == pytest.approx((parent.cdf(x) - parent.cdf(0.0)) / kept)
    draws = law.rvs(size=20_000, random_state=np.random.default_rng(2))
    assert draws.min() >= 0.0
    # Cutting off the negative side raises the mean above the nominal one.
    assert law.mean() > mean
    assert stats.kstest(draws, law.cdf).pvalue > 0.001


def test_normal_with_small_jitter_keeps_mean_and_spread():
    law = netem(50.0, 2.0, "normal")
    assert law.mean() == pytest.approx(50.0, rel=1e-9)
    assert law.std() == pytest.approx(2.0, rel=1e-9)


@pytest.mark.parametrize("distribution", ["uniform", "normal"])
def test_zero_jitter_is_a_constant_delay(distribution):
    law = netem(7.5, 0.0, distribution)
    draws = law.rvs(size=(3, 4), random_state=np.random.default_rng(3))
    assert draws.shape == (3, 4)
    assert np.all(draws == 7.5)
    assert law.mean() == 7.5 and law.std() == 0.0


@pytest.mark.parametrize("mean, jitter", [(-1.0, 0.0), (1.0, -0.5), (float("nan"), 0.1),
                                          (1.0, float("inf")), (True, 0.0), ("5", 1)])
def test_bad_numbers_are_refused(mean, jitter):
    with pytest.raises(ConfigError, match="finite number >= 0"):
        netem(mean, jitter)


def test_unknown_distribution_is_refused_naming_the_choices():
    with pytest.raises(ConfigError, match="uniform, normal"):
        netem(1.0, 0.5, "pareto")


def test_specs_name_the_same_laws_as_the_function():
    from forkjoin_sim.laws.service import fixes_own_scale, parse_service

    uniform = parse_service("netem:10:2", mean=5.0)  # not rescaled to 5
    assert uniform.support() == pytest.approx((8.0, 12.0))
    normal = parse_service("netem:10:2:normal")
    assert normal.mean() == pytest.approx(netem(10.0, 2.0, "normal").mean())
    assert normal.std() == pytest.approx(netem(10.0, 2.0, "normal").std())
    constant = parse_service("netem:3")
    assert constant.rvs(size=4, random_state=np.random.default_rng(0)) == pytest.approx(
        [3.0] * 4)
    assert fixes_own_scale("netem:10:2")


@pytest.mark.parametrize("spec, message", [
    ("netem:2:3", "jitter 3 exceeds mean 2"),
    ("netem:2:x", "JITTER 'x' is not a number"),
    ("netem:2:1:pareto", "use uniform or normal"),
    ("netem:1:2:3:4", "write netem:MEAN:JITTER"),
    ("netem:-1", "mean must be a finite number >= 0"),
])
def test_bad_specs_say_what_to_write(spec, message):
    from forkjoin_sim.laws.service import parse_service

    with pytest.raises(ConfigError, match=message.replace("(", r"\(")) as caught:
        parse_service(spec)
    assert "\n" not in str(caught.value)
    if "exceeds" in message:
        assert "netem:2:3:normal" in str(caught.value)
