"""Tests for forkjoin_sim.laws.moments: which laws have a finite third moment."""

import pytest
from scipy import stats

from forkjoin_sim.laws.deterministic import Deterministic
from forkjoin_sim.laws.empirical import Empirical
from forkjoin_sim.laws.mixture import Mixture
from forkjoin_sim.laws.moments import finite_third_moment
from forkjoin_sim.laws.service import parse_service
from forkjoin_sim.laws.sumlaw import SumOf


@pytest.mark.parametrize("law, finite", [
    # Pareto type I of shape a: E[X^3] is finite iff a > 3
    (stats.pareto(2.1), False), (stats.pareto(3.0), False), (stats.pareto(3.01), True),
    # regularly varying families: tail index 2.5 (infinite) against 3.5 (finite)
    (stats.lomax(2.5), False), (stats.lomax(3.5), True),
    (stats.fisk(2.5), False), (stats.fisk(3.5), True),
    (stats.invgamma(2.5), False), (stats.invgamma(3.5), True),
    (stats.genpareto(0.4), False), (stats.genpareto(0.3), True),
    # scipy's formula gives a negative third moment here: Lyapunov's inequality sees it
    (stats.invweibull(2.5), False), (stats.invweibull(3.5), True),
    # every moment finite, however spread
    (stats.lognorm(3), True), (stats.weibull_min(0.3), True), (stats.gamma(0.1), True),
    (stats.expon(), True), (Deterministic(2.0), True),
    (Empirical.from_samples(stats.pareto(2.1).rvs(2000, random_state=3)), True),
    # a mixture and a sum: as their heaviest part
    (Mixture([stats.expon(), stats.pareto(2.5)], [0.99, 0.01]), False),
    (Mixture([stats.expon(), stats.pareto(3.5)], [0.9, 0.1]), True),
    (SumOf([stats.expon(), stats.lomax(2.5)]), False),
    (SumOf([stats.expon(), stats.gamma(2)]), True),
])
def test_finite_third_moment_follows_the_tail_index(law, finite):
    assert finite_third_moment(law) is finite


@pytest.mark.parametrize("spec, finite", [
    ("pareto:2.1", False), ("pareto:3.5", True), ("lognormal:2", True),
    ("mix:0.9*exp;0.1*pareto:2.5", False), ("netem:10:2", True), ("weibull:0.5", True),
    ("erlang:3", True), ("deterministic", True),
    # netem with no jitter is scipy's point mass, whose skewness is 0/0: it was called
    # heavy-tailed (a fuzz)
    ("netem:1:0", True), ("netem:2", True), ("mix:0.5*netem:1:0;0.5*exp", True)])
def test_which_service_specs_have_an_infinite_third_moment(spec, finite):
    assert finite_third_moment(parse_service(spec)) is finite
