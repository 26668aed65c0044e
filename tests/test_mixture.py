"""Tests for forkjoin_sim.laws.mixture: moments, cdf/ppf, sampling, specs, errors."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from scipy import integrate, stats

from forkjoin_sim.laws.empirical import Empirical
from forkjoin_sim.errors import ConfigError
from forkjoin_sim.laws.mixture import Mixture
from forkjoin_sim.laws.service import Deterministic, parse_service, rescale
from strategies import latency_mixtures

# PBS's LNKD-SSD one-way fit (VLDB 2012, Table 3): a Pareto body, exponential tail.
BODY = stats.pareto(10, scale=0.235)
TAIL = stats.expon(scale=1 / 1.66)
LNKD_SSD = Mixture([BODY, TAIL], [0.9122, 0.0878])
# Three continuous shapes, one with a finite-variance heavy tail.
CONTINUOUS = Mixture([stats.gamma(2, scale=0.5), stats.lognorm(0.8, scale=2.0),
                      stats.pareto(3.5, scale=0.7)], [0.5, 0.3, 0.2])


@pytest.mark.parametrize("mixture", [LNKD_SSD, CONTINUOUS], ids=["lnkd-ssd", "three"])
@pytest.mark.parametrize("order", [1, 2, 3])
def test_moments_equal_numerical_integration_of_the_density(mixture, order):
    # The integral of x^m f(x), f summed from the components' densities by quad,
    # split where the Pareto densities jump.
    points = sorted({0.0, 0.235, 0.7, 1.0, 10.0})
    pieces = [integrate.quad(lambda x: x ** order * mixture.pdf(x), a, b, limit=200)[0]
              for a, b in zip(points, points[1:])]
    pieces.append(integrate.quad(lambda x: x ** order * mixture.pdf(x), points[-1],
                                 np.inf, limit=200)[0])
    assert mixture.moment(order) == pytest.approx(sum(pieces), rel=1e-7)
    if order == 2:
        assert mixture.var() == pytest.approx(sum(pieces) - mixture.mean() ** 2, rel=1e-7)


def test_mean_of_the_pbs_fit_from_its_parameters():
    # Pareto mean alpha x_m / (alpha - 1), exponential mean 1 / lambda.
    expected = 0.9122 * 10 * 0.235 / 9 + 0.0878 / 1.66
    assert LNKD_SSD.mean() == pytest.approx(expected, rel=1e-12)
    assert LNKD_SSD.std() == pytest.approx(math.sqrt(LNKD_SSD.var()))


# scipy integrates the Pareto's divergent third moment numerically and says so.
@pytest.mark.filterwarnings("ignore::scipy.integrate.IntegrationWarning")
def test_infinite_moments_stay_infinite():
    # LNKD-DISK's write fit: Pareto alpha = 1.51 has a mean but no variance.
    disk = Mixture([stats.pareto(1.51, scale=1.05), stats.expon(scale=1 / 0.183)],
                   [0.38, 0.62])
    assert disk.mean() == pytest.approx(0.38 * 1.51 * 1.05 / 0.51 + 0.62 / 0.183)
    assert disk.var() == math.inf and disk.moment(3) == math.inf


@pytest.mark.parametrize("mixture", [LNKD_SSD, CONTINUOUS], ids=["lnkd-ssd", "three"])
def test_ppf_inverts_cdf_and_sf_complements_it(mixture):
    q = np.array([1e-6, 0.01, 0.25, 0.5, 0.9, 0.999, 1 - 1e-7])
    x = mixture.ppf(q)
    assert np.all(np.diff(x) > 0)
    np.testing.assert_allclose(mixture.cdf(x), q, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(mixture.sf(x), 1 - q, rtol=1e-6, atol=1e-12)
    assert mixture.ppf(0.0) == mixture.support()[0]
    assert mixture.ppf(1.0) == np.inf
    assert np.isnan(mixture.ppf(1.5)) and np.isnan(mixture.ppf(-0.1))
    assert mixture.ppf(0.5) == x[3]  # scalar in, scalar out


@pytest.mark.parametrize("mixture", [LNKD_SSD, CONTINUOUS], ids=["lnkd-ssd", "three"])
def test_isf_stays_accurate_in_the_far_tail(mixture):
    q = np.array([0.3, 1e-3, 1e-9, 2.0 ** -55])
    x = mixture.isf(q)
    assert np.all(np.isfinite(x)) and np.all(np.diff(x) > 0)
    np.testing.assert_allclose(mixture.sf(x), q, rtol=1e-8)
    assert mixture.isf(0.3) == pytest.approx(mixture.ppf(0.7), rel=1e-12)


def test_ppf_of_atoms_is_the_generalised_inverse():
    mixture = Mixture([Deterministic(1.0), Deterministic(3.0), stats.uniform(5, 1)],
                      [0.25, 0.25, 0.5])
    np.testing.assert_allclose(mixture.ppf([0.1, 0.25, 0.3, 0.5, 0.75]),
                               [1.0, 1.0, 3.0, 3.0, 5.5], rtol=1e-12)
    assert mixture.support() == (1.0, 6.0)
    np.testing.assert_allclose(mixture.isf([0.9, 0.75, 0.5, 0.25]), [1.0, 1.0, 3.0, 5.5])


@given(latency_mixtures())
@settings(max_examples=40, deadline=None)
def test_any_mixture_quantile_is_the_smallest_x_with_cdf_at_least_q(mixture):
    q = np.array([0.01, 0.3, 0.5, 0.8, 0.99])
    x = mixture.ppf(q)
    assert np.all(mixture.cdf(x) >= q - 1e-12)
    assert np.all(mixture.cdf(x - 1e-9 * np.maximum(1.0, x)) < q + 1e-12)
    means = [law.mean() for law in mixture.components]
    assert mixture.mean() == pytest.approx(float(np.dot(mixture.weights, means)))


def test_samples_follow_the_mixture_ks_at_a_fixed_seed():
    draws = LNKD_SSD.rvs(size=20_000, random_state=np.random.default_rng(2012))
    # Level 0.1%: a correct sampler fails this once in a thousand seeds.
    assert stats.kstest(draws, LNKD_SSD.cdf).pvalue > 1e-3
    # The same test tells the mixture from its body alone (the test has power).
    assert stats.kstest(draws, BODY.cdf).pvalue < 1e-6
    # Mean within a 99.9% interval of the sample mean.
    half = 3.3 * draws.std() / math.sqrt(draws.size)
    assert abs(draws.mean() - LNKD_SSD.mean()) < half


def test_sampling_is_reproducible_and_shaped_like_scipy():
    first = CONTINUOUS.rvs(size=(4, 3), random_state=np.random.default_rng(7))
    again = CONTINUOUS.rvs(size=(4, 3), random_state=np.random.default_rng(7))
    assert first.shape == (4, 3) and np.array_equal(first, again)
    assert isinstance(CONTINUOUS.rvs(random_state=3), float)
    assert CONTINUOUS.rvs(5, random_state=np.random.RandomState(1)).shape == (5,)


def test_empirical_and_nested_components():
    data = Empirical.from_samples([1.0, 2.0, 4.0])
    inner = Mixture([data, Deterministic(2.0)], [0.5, 0.5])
    nested = Mixture([inner, stats.expon()], [0.6, 0.4])
    flat = Mixture([data, Deterministic(2.0), stats.expon()], [0.3, 0.3, 0.4])
    for order in (1, 2, 3):
        assert nested.moment(order) == pytest.approx(flat.moment(order))
    grid = np.linspace(0, 6, 25)
    np.testing.assert_allclose(nested.cdf(grid), flat.cdf(grid))
    draws = nested.rvs(size=4000, random_state=np.random.default_rng(1))
    assert np.mean(draws == 2.0) == pytest.approx(0.3 + 0.6 * 0.5 / 3, abs=0.03)
    with pytest.raises(ConfigError, match="has no density"):
        nested.pdf(1.0)


def test_rescale_scales_every_component():
    doubled = rescale(LNKD_SSD, 2 * LNKD_SSD.mean())
    assert doubled.mean() == pytest.approx(2 * LNKD_SSD.mean())
    assert doubled.ppf(0.9) == pytest.approx(2 * LNKD_SSD.ppf(0.9))


def test_spec_with_explicit_parameters_is_the_published_fit():
    law = parse_service("mix:0.9122*pareto:10,scale=0.235;0.0878*exp:rate=1.66", mean=7)
    assert isinstance(law, Mixture)
    np.testing.assert_allclose(law.weights, [0.9122, 0.0878])
    grid = np.linspace(0, 5, 41)
    np.testing.assert_allclose(law.cdf(grid), LNKD_SSD.cdf(grid), rtol=1e-12)
    assert law.support()[0] == 0.0 and law.components[0].support()[0] == 0.235


def test_spec_components_without_a_scale_get_the_requested_mean():
    law = parse_service("mix:0.7*pareto:3;0.3*gamma:2", mean=4.0)
    assert [c.mean() for c in law.components] == pytest.approx([4.0, 4.0])
    assert law.mean() == pytest.approx(4.0)
    mixed = parse_service("mix: 0.5 * exp ; 0.5 * exp:10", mean=2.0)
    assert mixed.mean() == pytest.approx(0.5 * 2.0 + 0.5 * 10.0)


def test_scipy_keywords_fix_the_scale_outside_mixtures_too():
    assert parse_service("scipy:lognorm:0.5,scale=2", mean=9).median() == pytest.approx(2)
    law = parse_service("gamma:2,loc=1,scale=0.5", mean=9)
    assert law.mean() == pytest.approx(1 + 2 * 0.5)


@pytest.mark.parametrize("components, weights, message", [
    ([], [], "a mixture needs at least one component"),
    ([stats.expon(), stats.expon()], [0.5, 0.6],
     r"mixture weights sum to 1.1, not 1; make them sum to 1 \(within 1e-09\)"),
    ([stats.expon(), stats.expon()], [1.2, -0.2],
     "mixture weight 1 is -0.2; weights are probabilities"),
    ([stats.expon(), stats.expon()], [1.0],
     "a mixture of 2 components needs 2 weights, got 1"),
    ([stats.expon(), stats.norm()], [0.5, 0.5],
     r"mixture component 1 .* takes values down to -inf, but latencies are >= 0"),
    ([stats.expon(), 3.0], [0.5, 0.5], "mixture component 1 .* lacks rvs"),
])
def test_invalid_mixtures_say_how_to_fix(components, weights, message):
    with pytest.raises(ConfigError, match=message):
        Mixture(components, weights)


@pytest.mark.parametrize("spec, message", [
    ("mix:", "a mixture needs components; write mix:W1\\*SPEC1;W2\\*SPEC2"),
    ("mix:0.5*exp;0.5", "mixture term '0.5' is not WEIGHT\\*SPEC"),
    ("mix:0.5*exp;0.4*exp", "mixture weights sum to 0.9, not 1"),
    ("mix:half*exp;0.5*exp", "mixture weight 'half' is not a number"),
    ("mix:0.5*exp;0.5*mix:1*exp", "mixtures do not nest in a spec"),
    ("mix:0.5*exp;0.5*norm", "scipy.stats.norm takes values down to -inf"),
    ("pareto:3,shape=2", "shape= is not a keyword here"),
    ("gamma:2,loc=-1", "with loc=-1 the law takes values down to -1"),
    ("exp:rate=0", "RATE must be a positive finite number"),
])
def test_bad_mixture_specs_say_how_to_fix(spec, message):
    with pytest.raises(ConfigError, match=message) as error:
        parse_service(spec)
    assert "\n" not in str(error.value)
