"""Tests for forkjoin_sim.laws.service: spec strings, rescaling, point masses, labels."""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import special, stats

from forkjoin_sim.laws.empirical import Empirical
from forkjoin_sim.errors import ConfigError
from forkjoin_sim.laws.service import Deterministic, describe_service, parse_service, rescale
from strategies import latency_samples

# E[X^2] / E[X]^2 of each shape, from textbook formulas (not from scipy), so the
# test checks that rescaling kept the shape as well as hitting the mean.
SPECS = {
    "exp": 2.0,
    "expon": 2.0,
    "erlang:3": 1 + 1 / 3,
    "gamma:2": 1 + 1 / 2,
    "scipy:gamma:0.5": 1 + 1 / 0.5,
    "lognormal:0.5": math.exp(0.5 ** 2),
    "lognorm:1.2": math.exp(1.2 ** 2),
    "weibull:1.5": special.gamma(1 + 2 / 1.5) / special.gamma(1 + 1 / 1.5) ** 2,
    "weibull_min:0.8": special.gamma(1 + 2 / 0.8) / special.gamma(1 + 1 / 0.8) ** 2,
    "pareto:3": (3 - 1) ** 2 / (3 * (3 - 2)),
    "beta:2,3": (2 + 1) * (2 + 3) / (2 * (2 + 3 + 1)),
    "deterministic": 1.0,
}


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("mean", [1.0, 0.25, 40.0])
def test_spec_has_the_requested_mean_and_its_shape(spec, mean):
    dist = parse_service(spec, mean=mean)
    assert dist.mean() == pytest.approx(mean, rel=1e-12)
    assert dist.moment(2) / mean ** 2 == pytest.approx(SPECS[spec], rel=1e-9)


@pytest.mark.parametrize("spec", SPECS)
def test_sample_mean_within_confidence_interval(spec):
    dist = parse_service(spec, mean=3.0)
    draws = dist.rvs(size=200_000, random_state=np.random.default_rng(2024))
    assert draws.min() >= 0
    error = abs(draws.mean() - 3.0)
    assert error <= 4 * dist.std() / math.sqrt(draws.size) + 1e-12


@pytest.mark.parametrize("spec", ["exp", "erlang:2", "lognormal:1", "pareto:2.5"])
def test_rvs_reproducible_from_generator_seed(spec):
    dist = parse_service(spec)
    first = dist.rvs(size=(50, 3), random_state=np.random.default_rng(5))
    again = dist.rvs(size=(50, 3), random_state=np.random.default_rng(5))
    other = dist.rvs(size=(50, 3), random_state=np.random.default_rng(6))
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)


def test_explicit_exp_mean_overrides_the_argument():
    assert parse_service("exp:2.5", mean=10.0).mean() == pytest.approx(2.5)
    assert parse_service(" EXP ", mean=10.0).mean() == pytest.approx(10.0)


@pytest.mark.parametrize("spec", [
    "exp", "exp:2.5", "exp:rate=3", "erlang:3", "lognormal:1", "pareto:3",
    "pareto:10,scale=0.235", "gamma:2,loc=0.1", "scipy:lognorm:0.5,scale=2",
    "lognorm:0.5", "deterministic", "mix:0.5*exp;0.5*exp:2", "mix:0.9*exp:1;0.1*exp:9",
    "mix:0.9*pareto:10,scale=0.235;0.1*exp:rate=1.66", "empirical:LAT"])
def test_fixes_own_scale_says_whether_the_mean_argument_matters(spec, tmp_path):
    from forkjoin_sim.laws.service import fixes_own_scale

    path = tmp_path / "lat.txt"
    path.write_text("1\n2\n6\n")
    spec = spec.replace("LAT", str(path))
    ignored = (parse_service(spec, mean=1.0).mean()
               == pytest.approx(parse_service(spec, mean=7.0).mean()))
    assert fixes_own_scale(spec) == ignored


def test_empirical_spec_is_not_rescaled(tmp_path):
    path = tmp_path / "lat.txt"
    path.write_text("1\n2\n6\n")
    dist = parse_service(f"empirical:{path}", mean=100.0)
    assert isinstance(dist, Empirical)
    assert dist.mean() == pytest.approx(3.0)


@pytest.mark.parametrize("spec, fragment", [
    ("normal", "is unknown; use one of exp, exp:MEAN, erlang:K, lognormal:SIGMA"),
    ("scipy:nosuch:1", "is unknown; use one of"),
    ("poisson:3", "is discrete; service times need a continuous distribution"),
    ("norm", "takes values down to -inf, but service times must be >= 0"),
    # with shapes it has none of: its support, not "write norm" (a fuzz)
    ("norm:0,1", "takes values down to -inf, but service times must be >= 0"),
    ("gamma:1,2", "SHAPE '1,2' is not a number"),
    ("lognorm", r"takes 1 shape parameter\(s\) \(s\), got 0; write lognorm:s"),
    ("beta:2", r"takes 2 shape parameter\(s\) \(a, b\), got 1; write beta:a,b$"),
    # a law reaching below 0 by default: the advice says its values must stay >= 0
    ("t", r"write t:df, with shapes that keep its values >= 0 \(service times are; by "
          r"default it takes values down to -inf\)"),
    ("lognorm:-1", "are not valid shape parameters"),
    ("erlang:2.5", "whole number >= 1, got 2.5; for a real shape use gamma:SHAPE"),
    ("erlang:0", "K must be a positive finite number"),
    ("erlang", "needs K; write erlang:K"),
    ("lognormal:-1", "SIGMA must be a positive finite number, got -1"),
    ("weibull:abc", "SHAPE 'abc' is not a number"),
    ("pareto:2", "infinite variance .* use ALPHA > 2"),
    ("pareto:1.5", "infinite variance .* use ALPHA > 2"),
    ("pareto:1", "ALPHA=1 gives an infinite mean; use ALPHA > 2"),
    ("pareto:0.8", "ALPHA=0.8 gives an infinite mean; use ALPHA > 2"),
    ("lomax:1.5", "needs a finite mean and variance"),
    ("exp:0", "MEAN must be a positive finite number"),
    ("deterministic:3", "takes no parameter"),
    ("empirical:", "needs a file; write empirical:PATH"),
    ("empirical:/no/such/latencies.txt", "/no/such/latencies.txt: no such file"),
])
def test_bad_specs_say_how_to_fix(spec, fragment):
    with pytest.raises(ConfigError, match=fragment):
        parse_service(spec)


@pytest.mark.parametrize("mean", [0, -1.0, math.inf, math.nan, "1"])
def test_bad_mean(mean):
    with pytest.raises(ConfigError, match="mean must be a positive finite number"):
        parse_service("exp", mean=mean)


# --- rescale ----------------------------------------------------------------------

@pytest.mark.parametrize("frozen", [
    stats.gamma(2.0, 0.5, 3.0),          # shape, loc, scale all positional
    stats.gamma(a=2.0, loc=0.5, scale=3.0),
    stats.lognorm(0.7, scale=4.0),
    stats.uniform(1.0, 2.0),
    stats.expon(),
])
def test_rescale_scipy_keeps_shape(frozen):
    scaled = rescale(frozen, 5.0)
    factor = 5.0 / frozen.mean()
    assert scaled.mean() == pytest.approx(5.0, rel=1e-12)
    assert scaled.std() == pytest.approx(factor * frozen.std(), rel=1e-12)
    for q in (0.1, 0.5, 0.9):
        assert scaled.ppf(q) == pytest.approx(factor * frozen.ppf(q), rel=1e-12)


@settings(max_examples=50, deadline=None)
@given(latency_samples(), st.floats(1e-3, 1e3))
def test_rescale_empirical_scales_samples(data, mean):
    dist = Empirical.from_samples(data)
    scaled = rescale(dist, mean)
    assert isinstance(scaled, Empirical)
    assert scaled.mean() == pytest.approx(mean, rel=1e-12)
    np.testing.assert_allclose(scaled.samples, dist.samples * (mean / dist.mean()),
                               rtol=1e-15)


def test_rescale_deterministic_and_unsupported():
    assert rescale(Deterministic(2.0), 7.0).mean() == pytest.approx(7.0)
    with pytest.raises(ConfigError, match="cannot rescale"):
        rescale(stats.poisson(3.0), 1.0)
    with pytest.raises(ConfigError, match="not a finite positive number"):
        rescale(object(), 1.0)


# --- Deterministic ----------------------------------------------------------------

def test_deterministic_is_a_point_mass():
    dist = Deterministic(1.5)
    assert dist.rvs() == 1.5
    np.testing.assert_array_equal(dist.rvs((2, 3), np.random.default_rng(0)),
                                  np.full((2, 3), 1.5))
    assert (dist.mean(), dist.var(), dist.std(), dist.moment(3)) == (1.5, 0.0, 0.0, 3.375)
    np.testing.assert_array_equal(dist.cdf([1.0, 1.5, 2.0]), [0.0, 1.0, 1.0])
    assert dist.ppf(0.3) == 1.5 and np.isnan(dist.ppf(1.1))
    with pytest.raises(ConfigError, match="positive finite"):
        Deterministic(0.0)


# --- labels -----------------------------------------------------------------------

def test_describe_service(tmp_path):
    assert describe_service(parse_service("exp", mean=2.0)) == "expon(mean=2)"
    assert describe_service(parse_service("gamma:2")) == "gamma(a=2, mean=1)"
    assert describe_service(stats.gamma(a=0.5)) == "gamma(a=0.5, mean=0.5)"
    assert describe_service(parse_service("deterministic", 0.5)) == "deterministic(0.5)"
    path = tmp_path / "lat.txt"
    path.write_text("1\n3\n")
    assert describe_service(parse_service(f"empirical:{path}")) == \
        "empirical(lat.txt, n=2, mean=2)"
    assert describe_service(Empirical.from_samples([1.0, 2.0], smoothing="kde")) \
        .startswith("empirical(samples, n=2, kde, mean=")


def test_a_colon_without_a_parameter_is_refused():
    with pytest.raises(ConfigError, match="ends with ':'"):
        parse_service("exp:")


def test_laws_that_can_be_negative_are_refused():
    from forkjoin_sim import ForkJoinModel

    with pytest.raises(ConfigError, match="negative values"):
        ForkJoinModel(3, 2, 1, load=0.5, service=stats.uniform(-1, 3))


def test_empirical_spec_takes_column_and_operation(tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text("op,latency_ms\nREAD,1.5\nREAD,2.5\n")
    assert parse_service(f"empirical:{path},column=latency_ms").mean() == 2.0
    ycsb = tmp_path / "ycsb.txt"
    ycsb.write_text("READ,1,100\nUPDATE,2,300\nREAD,3,200\n")
    assert parse_service(f"empirical:{ycsb},operation=READ").mean() == 150.0
    with pytest.raises(ConfigError, match="not an option"):
        parse_service(f"empirical:{path},colum=latency_ms")


def test_heavy_tailed_measurements_are_flagged():
    from forkjoin_sim import Empirical, ForkJoinModel, simulate

    heavy = Empirical.from_samples(stats.pareto(1.1).rvs(5000, random_state=1))
    light = Empirical.from_samples(stats.expon().rvs(5000, random_state=1))
    flagged = simulate(ForkJoinModel(3, 2, 1, load=0.3, service=heavy), jobs=5000)
    calm = simulate(ForkJoinModel(3, 2, 1, load=0.3, service=light), jobs=5000)
    assert any("heavy-tailed" in w for w in flagged.warnings)
    assert not any("heavy-tailed" in w for w in calm.warnings)


def test_subnormal_measurements_are_refused():
    from forkjoin_sim import Empirical, ForkJoinModel

    with pytest.raises(ConfigError, match="too small to simulate"):
        ForkJoinModel(3, 2, 1, load=0.5,
                      service=Empirical.from_samples(np.full(100, 1e-320)))


@pytest.mark.parametrize("spec, fragment", [
    ("gamma:1e-300", "coefficient of variation"),   # almost every draw is 0
    ("lognormal:6", "coefficient of variation"),    # CV = sqrt(e^36 - 1), about 6.6e7
    ("weibull:0.01", "variance overflows a float"),  # E[X^2] = Gamma(201), about 1e375
    ("lognormal:1e300", "mean of inf"),
    ("weibull:1e-300", "mean of inf"),
    ("erlang:1e300", "use deterministic"),
])
def test_shapes_that_cannot_be_simulated_are_refused_naming_the_spec(spec, fragment):
    with pytest.raises(ConfigError, match=fragment) as info:
        parse_service(spec)
    assert str(info.value).startswith(f"service {spec!r}")


def test_extreme_but_simulable_shapes_are_kept():
    # gamma:1e300 is a point mass at the mean to 150 digits; lognormal:3 has CV 90
    assert parse_service("gamma:1e300", 2.0).mean() == pytest.approx(2.0)
    assert parse_service("lognormal:3", 2.0).std() / 2.0 == pytest.approx(
        math.sqrt(math.exp(9) - 1), rel=1e-9)


def test_an_empirical_file_of_one_sample_is_refused_as_a_constant(tmp_path):
    from forkjoin_sim.errors import ConfigError
    from forkjoin_sim.laws.service import parse_service

    path = tmp_path / "one.txt"
    path.write_text("0.5\n")
    with pytest.raises(ConfigError, match=r"holds one sample \(0.5\): that is a "
                       "constant; write deterministic"):
        parse_service(f"empirical:{path}")
    # three equal samples are the same constant (they were taken: a fuzz)
    path.write_text("0.5\n0.5\n0.5\n")
    with pytest.raises(ConfigError, match=r"holds 3 samples, all equal \(0.5\): that "
                       "is a constant"):
        parse_service(f"empirical:{path}")
    path.write_text("0.5\n0.7\n")
    assert parse_service(f"empirical:{path}").mean() == pytest.approx(0.6)


def test_a_delay_needs_a_finite_mean_only():
    """A message delay never queues, so it may have an infinite variance: PBS's
    LNKD-DISK write delay is a Pareto of ALPHA 1.51 in a mixture, which was refused as
    a service time would be; a service still needs ALPHA > 2, and a delay ALPHA > 1."""
    spec = "mix:0.38*pareto:1.51,scale=1.05;0.62*exp:rate=0.183"
    law = parse_service(spec, delay=True)
    assert law.mean() == pytest.approx(0.38 * 1.51 * 1.05 / 0.51 + 0.62 / 0.183,
                                       rel=1e-9)
    for text in (spec, "pareto:1.5", "scipy:pareto:1.5"):
        with pytest.raises(ConfigError, match="variance"):
            parse_service(text)
    for text in ("pareto:0.9", "scipy:pareto:0.9"):
        with pytest.raises(ConfigError, match="infinite mean|finite mean"):
            parse_service(text, delay=True)
    assert parse_service("pareto:1.5", mean=2.0, delay=True).mean() == pytest.approx(2.0)
