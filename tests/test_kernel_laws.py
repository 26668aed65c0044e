"""The fused kernel's samplers: each law draws the distribution it names."""

import math
import warnings

import numba
import numpy as np
import pytest
from scipy import stats

from forkjoin_sim.laws.empirical import Empirical
from forkjoin_sim.errors import ConfigError
from forkjoin_sim.engines.fused.laws import (EMPIRICAL, EXPONENTIAL, GAMMA, LOGNORMAL, PARETO,
                                      TABLE, TABLE_ERROR, UNIFORM, WEIBULL, Law, draw,
                                      draw_step, fill_exponential, law_mean, law_of, pack,
                                      scaled)
from forkjoin_sim.engines.fused.rng import SERVICE, load, seed_states, store
from forkjoin_sim.laws.service import Deterministic


@numba.njit
def _draw_many(count, codes, params, offsets, lengths, data, states):
    out = np.empty(count)
    for i in range(count):
        out[i] = draw(0, codes, params, offsets, lengths, data, states, SERVICE)
    return out


def sample(law: Law, count: int = 40_000, seed: int = 3) -> np.ndarray:
    return _draw_many(count, *pack([law]), seed_states(seed))


EXACT = [
    (stats.expon(scale=2.0), EXPONENTIAL),
    (stats.expon(loc=0.5, scale=0.5), EXPONENTIAL),
    (stats.uniform(loc=1.0, scale=3.0), UNIFORM),
    (stats.weibull_min(0.7, scale=1.5), WEIBULL),
    (stats.lognorm(0.8, scale=1.2), LOGNORMAL),
    (stats.pareto(2.5, scale=0.6), PARETO),
    (stats.gamma(2.5, scale=0.4), GAMMA),
    (stats.gamma(0.4, scale=2.0), GAMMA),
    (stats.erlang(3, scale=0.5), GAMMA),
]


@pytest.mark.parametrize("dist,code", EXACT, ids=lambda x: getattr(
    getattr(x, "dist", None), "name", str(x)))
def test_exact_samplers_follow_their_scipy_law(dist, code):
    law = law_of(dist)
    assert law.code == code
    draws = sample(law)
    assert stats.kstest(draws, dist.cdf).pvalue > 1e-3
    assert law_mean(law) == pytest.approx(dist.mean(), rel=1e-12)


def test_deterministic_draws_its_value():
    law = law_of(Deterministic(2.5))
    assert np.all(sample(law, 100) == 2.5)
    assert law_mean(law) == 2.5


def test_empirical_resamples_the_data_uniformly():
    data = np.array([0.5, 1.0, 1.0, 2.0, 7.5])
    law = law_of(Empirical(data))
    assert law.code == EMPIRICAL
    draws = sample(law, 50_000)
    values, counts = np.unique(draws, return_counts=True)
    assert values.tolist() == [0.5, 1.0, 2.0, 7.5]
    assert stats.chisquare(counts, np.array([1, 2, 1, 1]) / 5 * draws.size).pvalue > 1e-3
    assert law_mean(law) == pytest.approx(data.mean())


def test_smoothed_empirical_mean_matches_its_law():
    rng = np.random.default_rng(1)
    dist = Empirical(rng.exponential(1.0, 400), smoothing="kde")
    law = law_of(dist)
    assert law.params[2] == dist.bandwidth > 0
    draws = sample(law, 80_000)
    assert np.all(draws >= 0)
    half = 4 * draws.std() / math.sqrt(draws.size)
    assert abs(draws.mean() - dist.mean()) < half
    assert law_mean(law) == pytest.approx(dist.mean(), rel=1e-9)


def test_other_laws_go_through_a_quantile_table_within_its_error():
    dist = stats.invgauss(0.6, scale=2.0)
    with pytest.warns(UserWarning, match="quantile table"):
        law = law_of(dist)
    assert law.code == TABLE
    draws = sample(law, 60_000)
    ks = stats.kstest(draws, dist.cdf)
    # The table's own error plus the sampling error of a KS statistic at 60,000 draws.
    assert ks.statistic < TABLE_ERROR + 1.95 / math.sqrt(draws.size)
    assert law_mean(law) == pytest.approx(dist.mean(), rel=1e-3)


def test_scaled_law_scales_every_draw():
    for law in (law_of(stats.gamma(2.0, scale=0.5)), law_of(Empirical([1.0, 2.0, 4.0]))):
        assert np.allclose(sample(scaled(law, 3.0), 500), 3.0 * sample(law, 500))
        assert law_mean(scaled(law, 3.0)) == pytest.approx(3.0 * law_mean(law))


def test_negative_times_are_refused():
    with pytest.raises(ConfigError, match="must be >= 0"):
        law_of(stats.norm(1.0, 0.1))


def test_unknown_objects_are_refused():
    with pytest.raises(ConfigError, match="frozen scipy.stats"):
        law_of(3.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        law_of(stats.expon())  # an exact law draws no warning


def test_ziggurat_exponential_is_exact_including_its_tail():
    draws = sample(law_of(stats.expon()), 1_000_000, seed=12)
    assert stats.kstest(draws, "expon").pvalue > 1e-3
    # Beyond the ziggurat's base layer (x > 7.697): P(X > 8) = exp(-8).
    beyond = np.count_nonzero(draws > 8.0)
    expected = draws.size * math.exp(-8)
    assert abs(beyond - expected) < 4 * math.sqrt(expected)
    assert stats.kstest(draws[draws > 8.0] - 8.0, "expon").pvalue > 1e-3


@numba.njit
def _draw_many_on_a_tuple(count, codes, params, offsets, lengths, data, states):
    out = np.empty(count)
    state = load(states, SERVICE)
    for i in range(count):
        out[i], state = draw_step(0, codes, params, offsets, lengths, data, state,
                                  states, SERVICE)
    store(states, SERVICE, state)
    return out


@pytest.mark.parametrize("dist", [dist for dist, _ in EXACT] + [
    Deterministic(1.5), Empirical(np.random.default_rng(4).gamma(2.0, 1.0, 50)),
    Empirical(np.random.default_rng(4).gamma(2.0, 1.0, 50), smoothing="kde"),
    stats.beta(2.0, 3.0)],
    ids=lambda x: getattr(getattr(x, "dist", None), "name", type(x).__name__))
def test_drawing_on_a_state_tuple_gives_the_same_numbers(dist):
    # 40,000 exponentials take the ziggurat's slow path about 400 times
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # beta goes through a table, with a warning
        arrays = pack([law_of(dist)])
    on_rows, on_tuple = seed_states(5), seed_states(5)
    expected = _draw_many(40_000, *arrays, on_rows)
    assert np.array_equal(_draw_many_on_a_tuple(40_000, *arrays, on_tuple), expected)
    assert np.array_equal(on_rows, on_tuple)


@numba.njit
def _fill(count, loc, scale, states):
    out = np.empty(count)
    fill_exponential(states, SERVICE, loc, scale, out, count)
    return out


def test_filling_exponentials_gives_the_numbers_of_drawing_them_one_by_one():
    # 40,000 draws take the ziggurat's slow path (tail and wedge) about 400 times
    law = law_of(stats.expon(loc=0.25, scale=1.5))
    by_fill, one_by_one = seed_states(8), seed_states(8)
    expected = _draw_many(40_000, *pack([law]), one_by_one)
    assert np.array_equal(_fill(40_000, 0.25, 1.5, by_fill), expected)
    assert np.array_equal(by_fill, one_by_one)
