"""The (n,r,k) estimators: exact cases, structure, and agreement with simulation."""

import pytest
from hypothesis import given, settings

from analytic.errors import ConfigError
from analytic.estimators import (
    ESTIMATORS, RECOMMENDED, all_estimates, independent_estimate, interpolation_estimate,
    varma_makowski_estimate)
from analytic.harmonic import harmonic
from tests.strategies import stable_queues
from validation.estimators import quorum_sweep

ORDER_STATISTIC_ESTIMATORS = ("independent", "copula", "interpolation")


@pytest.mark.parametrize("name", list(ESTIMATORS))
@pytest.mark.parametrize("rho", [0.1, 0.5, 0.95])
def test_every_estimator_is_exact_for_mm1(name, rho):
    assert ESTIMATORS[name](1, 1, 1, rho, 2.0) == pytest.approx(1 / (2 * (1 - rho)),
                                                                rel=1e-11)


@pytest.mark.parametrize("name", ["nelson_raw", "varma_makowski", "copula", "interpolation"])
@pytest.mark.parametrize("rho", [0.2, 0.6, 0.9])
def test_exact_for_the_two_node_queue(name, rho):
    # Flatto–Hahn: E[max] = (12-q)/(8 mu (1-q)); E[min] = 2/(mu(1-q)) - E[max].
    maximum = (12 - rho) / (8 * (1 - rho))
    assert ESTIMATORS[name](2, 2, 2, rho) == pytest.approx(maximum, rel=1e-10)
    assert ESTIMATORS[name](2, 2, 1, rho) == pytest.approx(2 / (1 - rho) - maximum,
                                                           rel=1e-10)


@settings(max_examples=15, deadline=None)
@given(stable_queues(max_nodes=12))
def test_order_statistic_estimators_are_monotone_in_quorum(queue):
    n, r, _, rho = queue
    for name in ORDER_STATISTIC_ESTIMATORS:
        values = [ESTIMATORS[name](n, r, k, rho) for k in range(1, r + 1)]
        assert all(a < b for a, b in zip(values, values[1:])), name


@settings(max_examples=15, deadline=None)
@given(stable_queues(max_nodes=12))
def test_interpolation_sums_to_marginal_means_over_quorums(queue):
    # sum_k T(n,r,k) = r/(mu (1-q)) exactly; the interpolation keeps this identity
    # because each of its three ingredients does.
    n, r, _, rho = queue
    q = r * rho / n
    total = sum(interpolation_estimate(n, r, k, rho) for k in range(1, r + 1))
    assert total == pytest.approx(r / (1 - q), rel=1e-9)


def test_light_traffic_limits_agree():
    # As rho -> 0 every sub-task finds an empty node: T -> (H_r - H_{r-k})/mu.
    for name in ("varma_makowski", "independent", "copula", "interpolation"):
        assert ESTIMATORS[name](9, 5, 2, 1e-9) == pytest.approx(
            harmonic(5) - harmonic(3), rel=1e-6)


def test_varma_makowski_transform_is_a_load_interpolation():
    # sum W(r,k,i) [H_i + (A_i - H_i) q] / (1-q): (1-q) T is linear in q.
    f = [(1 - q) * varma_makowski_estimate(9, 9, 3, q) for q in (0.2, 0.5, 0.8)]
    assert f[1] - f[0] == pytest.approx(f[2] - f[1], rel=1e-9)


def test_all_estimates_names_every_estimator():
    values = all_estimates(6, 3, 2, 1.2)
    assert set(values) == set(ESTIMATORS) and RECOMMENDED in values
    assert all(isinstance(v, float) for v in values.values())


@pytest.mark.parametrize("name", list(ESTIMATORS))
@pytest.mark.parametrize("args", [(3, 3, 4, 0.5), (3, 4, 1, 0.5), (3, 3, 0, 0.5),
                                  (3, 3, 1, 1.0), (3, 3, 1, 0.5, 0.0), (3.5, 3, 1, 0.5)])
def test_invalid_inputs_raise(name, args):
    with pytest.raises(ConfigError):
        ESTIMATORS[name](*args)


# --- agreement with simulation (fixed seeds, 95% batch-means intervals) ------------

@pytest.fixture(scope="module")
def two_node_run():
    return quorum_sweep(2, 2, 0.6, jobs=2_000_000, seed=11)


@pytest.fixture(scope="module")
def cassandra_run():
    return quorum_sweep(6, 3, 1.4, jobs=2_000_000, seed=12)


def test_simulation_interval_covers_flatto_hahn(two_node_run):
    # Checks the referee itself: (2,2,k) is known exactly.
    maximum = (12 - 0.6) / (8 * 0.4)
    for row, exact in zip(two_node_run, (2 / 0.4 - maximum, maximum)):
        assert row["sim_ci_low"] <= exact <= row["sim_ci_high"]


def test_interpolation_matches_simulation_for_six_nodes(cassandra_run):
    # Node load 0.7. On the long referee runs the interpolation's error for
    # (6,3,k) stays within 2%; allow that plus the interval's half-width.
    for row in cassandra_run:
        estimate = interpolation_estimate(6, 3, row["k"], 1.4)
        half = (row["sim_ci_high"] - row["sim_ci_low"]) / 2
        assert abs(estimate - row["sim_mean"]) <= 0.02 * row["sim_mean"] + half


def test_independent_estimate_misses_the_dependence(cassandra_run):
    # Shared arrivals make the sub-queues positively associated: the fastest
    # sub-task is slower, the slowest faster, than for independent sub-queues.
    first, *_, last = cassandra_run
    assert first["sim_ci_low"] > independent_estimate(6, 3, 1, 1.4)
    assert last["sim_ci_high"] < independent_estimate(6, 3, 3, 1.4)


def test_the_charted_weak_region_holds_the_large_errors_of_the_long_referees():
    """`known_bias` names every quorum-1 point where `interpolation` is more than 5%
    off the long simulations of docs/data, and no point with 5 or fewer replicas
    (which stay within 3.4%): the note is the data's, not a guess."""
    from pathlib import Path

    import pandas as pd

    from analytic.estimators import known_bias
    from validation.estimators import with_estimates

    data = Path(__file__).resolve().parent.parent / "docs" / "data"
    points = pd.concat([with_estimates(pd.read_csv(data / name)) for name in (
        "estimators_long_offgrid.csv", "estimators_long_grid.csv",
        "estimators_long_6_3.csv")])
    noted = [bool(known_bias("interpolation", int(n), int(r), int(k), rho))
             for n, r, k, rho in zip(points.n, points.r, points.k, points.rho)]
    points = points.assign(noted=noted)
    large = points[(points.k == 1) & (points.err_interpolation.abs() > 0.05)]
    assert len(large) >= 10 and large.noted.all()
    assert not points[points.r <= 5].noted.any()
    assert points[points.noted].err_interpolation.max() <= 0.102 + 1e-3
    assert known_bias("copula", 20, 15, 1, 1.0) == ""
    # past the charted replicas every queue is named, at any load and quorum
    assert points.r.max() <= 15
    assert "charted on queues of up to 15 replicas (here 30)" in known_bias(
        "interpolation", 30, 30, 1, 0.5)
    assert known_bias("interpolation", 100, 16, 3, 0.1) != ""
