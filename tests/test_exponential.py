"""Exponential: scipy.stats.expon's numbers, without importing scipy.stats."""

import pickle
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from forkjoin_sim.errors import ConfigError
from forkjoin_sim.laws.exponential import Exponential
from forkjoin_sim.laws.service import describe_service, parse_service, rescale

scales = st.floats(1e-6, 1e6)
locs = st.one_of(st.just(0.0), st.floats(1e-3, 1e3))


@settings(max_examples=60, deadline=None)
@given(scales, locs, st.integers(0, 2**32 - 1))
def test_same_draws_and_moments_as_scipy(scale, loc, seed):
    mine, theirs = Exponential(scale, loc), stats.expon(loc=loc, scale=scale)
    for generator in (np.random.default_rng, np.random.RandomState):
        np.testing.assert_array_equal(mine.rvs(size=(7, 3), random_state=generator(seed)),
                                      theirs.rvs(size=(7, 3), random_state=generator(seed)))
        assert mine.rvs(random_state=generator(seed)) == theirs.rvs(
            random_state=generator(seed))
    assert mine.mean() == theirs.mean()
    assert mine.var() == theirs.var()
    assert mine.std() == theirs.std()
    assert tuple(mine.support()) == tuple(theirs.support())
    for order in range(1, 4):
        assert mine.moment(order) == pytest.approx(theirs.moment(order), rel=1e-12)
    if loc == 0:
        # scipy's closed forms up to order 4 equal ours up to rounding: both compute
        # n! scale^n, but in another order of operations, so the last bit can differ
        # (4th moment at scale 47408.5: 1.2123725640246968e+20 vs ...967e+20). Four ulps
        # (rel 1e-15) allow that and nothing more. Above order 4 scipy integrates
        # numerically (120.0000000036 for the 5th moment at scale 1); exact is n! scale^n
        for m in range(1, 5):
            assert mine.moment(m) == pytest.approx(theirs.moment(m), rel=1e-15, abs=0)
        for order in (5, 6):
            exact = float(np.prod(np.arange(1, order + 1))) * scale ** order
            assert mine.moment(order) == pytest.approx(exact, rel=1e-15)
            assert theirs.moment(order) == pytest.approx(exact, rel=1e-8)


def test_everything_else_is_the_scipy_law():
    law = Exponential(2.0, 0.5)
    assert law.dist.name == "expon"
    assert law.cdf(1.5) == stats.expon(loc=0.5, scale=2.0).cdf(1.5)
    assert law.ppf(0.99) == stats.expon(loc=0.5, scale=2.0).ppf(0.99)
    assert law.kwds == {"loc": 0.5, "scale": 2.0}
    assert not hasattr(law, "samples")  # what marks measured laws


def test_scaling_pickling_equality_and_labels():
    law = Exponential(2.0)
    assert rescale(law, 5.0) == Exponential(5.0)
    assert law.scaled(3.0) == Exponential(6.0)
    copy = pickle.loads(pickle.dumps(law))
    assert copy == law and hash(copy) == hash(law) and copy is not law
    assert law != Exponential(2.0, 0.1)
    assert describe_service(law) == describe_service(stats.expon(scale=2.0))
    assert parse_service("exp", 2.0) == law
    assert parse_service("exp:rate=0.5") == law


@pytest.mark.parametrize("scale,loc", [(0, 0), (-1, 0), (float("inf"), 0),
                                       (float("nan"), 0), (True, 0), (1, float("nan"))])
def test_refuses_what_is_not_a_law(scale, loc):
    with pytest.raises(ConfigError, match="exponential"):
        Exponential(scale, loc)


def test_a_plain_simulate_command_does_not_import_scipy_stats():
    # importing scipy.stats costs most of a second of start-up (BENCHMARKS.md)
    code = ("import sys, io, contextlib\n"
            "from forkjoin_cli.main import main\n"
            "for engine in ('fast', 'fused'):\n"
            "    with contextlib.redirect_stdout(io.StringIO()):\n"
            "        assert main(['simulate', '--nodes', '5', '--replicas', '3', "
            "'--quorum', '2', '--rho', '1', '--jobs', '20000', '--engine', engine]) == 0\n"
            "print('scipy.stats' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "False"
