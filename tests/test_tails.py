"""Tail latency and timeouts: Theorem 1 on CDFs against direct simulation."""

import math

import numpy as np
import pytest
from scipy import stats

from forkjoin_sim.errors import ConfigError
from sizing.tails import (
    QUANTILE_BATCHES, SHORTFALL_RISK, WARMUP, compare_percentiles, empirical_cdf,
    model_distribution, percentile_interval, section_jobs, simulated_basic_sojourns,
    simulated_timeout, timeout_table)


def test_empirical_cdf_is_right_continuous():
    assert list(empirical_cdf([1.0, 2.0, 2.0, 3.0], [0, 1, 2, 2.5, 3])) == \
        [0, 0.25, 0.75, 0.75, 1.0]


def test_percentile_interval_covers_a_known_quantile():
    x = np.random.default_rng(5).exponential(size=40_000)
    for q in (50, 99):
        est = percentile_interval(x, q)
        assert est.low <= -math.log(1 - q / 100) <= est.high


@pytest.mark.parametrize("common", [True, False])
def test_basic_queue_of_one_node_is_mm1(common):
    sojourns = simulated_basic_sojourns([1, 2], 0.5, stats.expon(), 200_000, seed=2,
                                        common=common)
    # M/M/1 at load 0.5: sojourn ~ Exp(rate 0.5); its median is 2 ln 2. (Sectioning
    # intervals under-cover a little: 26 of 30 seeds at 95%, hence 99% here.)
    median = percentile_interval(sojourns[1], 50, confidence=0.99)
    assert median.low <= 2 * math.log(2) <= median.high
    assert sojourns[2].mean() > sojourns[1].mean()


def test_theorem1_from_simulated_basic_queues_matches_direct_simulation():
    # (r,r,k): Theorem 1 is exact, so only simulation noise separates the two.
    rows = compare_percentiles([(3, 3, 2, 0.5), (3, 3, 1, 0.5)], percentiles=(50, 95),
                               jobs=60_000, seed=4)
    for row in rows:
        assert row["model_low"] <= row["simulated_high"], row
        assert row["model_high"] >= row["simulated_low"], row
    medians = [r for r in rows if r["percentile"] == 50]
    assert all(r["model_reliable"] for r in medians)
    assert all(abs(r["error"]) < 0.05 for r in medians)


def test_independent_approximation_underestimates_the_tail_of_k_below_r():
    # Documented bias: ignoring positive correlation makes (3,3,1) look faster.
    row = compare_percentiles([(3, 3, 1, 0.5)], percentiles=(99,), basic="independent",
                              jobs=60_000, seed=6)[0]
    assert row["model"] < row["simulated_low"]
    assert row["model_reliable"] and row["raw_violations"] == 0


def test_alternating_sum_on_noisy_inputs_is_flagged_for_large_r():
    d = model_distribution(9, 9, 1, 0.5, jobs=20_000, seed=1)
    assert d.violations.any()
    assert not d.percentile_reliable(99)


def test_timeout_table_model_agrees_with_simulation():
    rows = timeout_table(3, 3, 3, loads=[0.5], timeouts=[3.0, 8.0], jobs=60_000, seed=3)
    assert [r["timeout"] for r in rows] == [3.0, 8.0]
    for r in rows:
        for name in ("availability", "waiting_mean", "answered_mean"):
            sim, low, high = (r[f"sim_{name}"], r[f"sim_{name}_low"],
                              r[f"sim_{name}_high"])
            # Model and simulation are independent estimates of similar precision.
            assert abs(r[f"model_{name}"] - sim) <= 1.5 * (high - low), (name, r)
        # min(T, t) splits into answered and timed-out requests.
        split = (r["sim_availability"] * r["sim_answered_mean"]
                 + (1 - r["sim_availability"]) * r["timeout"])
        assert r["sim_waiting_mean"] == pytest.approx(split, rel=1e-9)
    assert rows[1]["model_availability"] > rows[0]["model_availability"]


def test_a_long_timeout_in_the_list_leaves_the_others_model_as_it_was():
    """The model's grid covers the distribution's mass and reaches a far timeout in
    one step: with 100,000 in the list the availability at 2 was read as 0.04 (a
    probe; 0.70 alone), and at 1e308 the answered mean overflowed to -inf."""
    alone = timeout_table(5, 3, 2, loads=[0.8], timeouts=[2.0, 5.0], jobs=20_000,
                          seed=1)
    far = timeout_table(5, 3, 2, loads=[0.8], timeouts=[2.0, 5.0, 1e5, 1e308],
                        jobs=20_000, seed=1)
    for short, same in zip(alone, far[:2]):
        for name in ("availability", "answered_mean", "waiting_mean"):
            assert same[f"model_{name}"] == pytest.approx(short[f"model_{name}"],
                                                          rel=1e-12)
    for row in far[2:]:
        # past the mass every request is answered, in the distribution's mean time
        assert row["model_availability"] == 1.0
        assert row["model_answered_mean"] == pytest.approx(row["model_waiting_mean"],
                                                           rel=1e-12)
        assert 1.0 < row["model_answered_mean"] < 3.0


def test_simulated_timeout_of_constant_latency():
    m = simulated_timeout(np.full(300, 2.0), 1.0)
    assert m.availability.mean == 0 and m.waiting_mean.mean == 1.0
    assert math.isnan(m.answered_mean.mean)


def test_every_job_answered_still_has_an_availability_interval_below_one():
    # a probe: no job timed out, and availability was 1 with the interval [1, 1];
    # 3,000 independent answers of 3,000 give Wilson's lower end 1 - 3.84/3,004
    m = simulated_timeout(np.random.default_rng(1).exponential(0.5, 3000), 100.0)
    assert m.availability.mean == m.availability.high == 1.0
    assert m.availability.low == pytest.approx(3000 / (3000 + stats.norm.ppf(0.975) ** 2),
                                               rel=1e-9)


def test_analytic_basic_needs_exponential_service():
    with pytest.raises(ConfigError, match="basic='simulation'"):
        model_distribution(3, 3, 2, 0.5, stats.gamma(2), basic="independent")
    with pytest.raises(ConfigError, match="use one of"):
        model_distribution(3, 3, 2, 0.5, basic="guess")


def test_section_jobs_is_the_fewest_run_that_gets_a_percentile_interval():
    fewest = section_jobs()
    for jobs, works in ((fewest, True), (fewest - 1, False)):
        run = simulated_basic_sojourns([1], 0.5, stats.expon(), jobs, seed=1)[1]
        if works:
            assert percentile_interval(run, 99).low <= percentile_interval(run, 99).high
        else:
            with pytest.raises(ConfigError, match="too few"):
                percentile_interval(run, 99)


@pytest.mark.parametrize("share", [0.5, 0.1, 0.003])
def test_section_jobs_of_a_rare_class_falls_short_only_with_the_stated_risk(share):
    # the class's measured jobs are binomial; one job fewer would exceed the risk
    need = 2 * QUANTILE_BATCHES

    def shortfall(jobs):
        measured = jobs - math.floor(WARMUP * jobs)
        return stats.binom.cdf(need - 1, measured, share)

    fewest = section_jobs(share)
    assert shortfall(fewest) <= SHORTFALL_RISK < shortfall(fewest - 1)


def test_simulated_timeout_intervals_stay_within_what_they_measure():
    # one slow job among 3,000: the t-interval of availability reached past 1 and
    # that of the waiting time (a short run) below 0
    x = np.full(3000, 0.5)
    x[1500] = 10.0
    m = simulated_timeout(x, 5.0)
    assert m.availability.low < m.availability.mean < m.availability.high <= 1.0
    short = simulated_timeout(np.array([0.1, 4.0]), 5.0)
    assert 0.0 == short.waiting_mean.low < short.waiting_mean.mean
    assert short.waiting_mean.high <= 5.0


def test_timeout_table_at_its_defaults_is_the_timeouts_command_at_its_own(tmp_path):
    """The library simulated 50,000 jobs where the command simulates 100,000 (its
    --sim-jobs), so one call gave 0.5318 and the other 0.5406 (an API probe); a load
    and a timeout may be given as numbers, not lists."""
    import json

    from forkjoin_cli.main import main
    from sizing.tails import timeout_table

    (row,) = timeout_table(6, 3, 2, 0.5, 2, seed=1)
    out = tmp_path / "t.json"
    assert main(["timeouts", "--nodes", "6", "--replicas", "3", "--quorum", "2",
                 "--loads", "0.5", "--timeouts", "2", "--seed", "1", "--out",
                 str(out)]) == 0
    (said,) = json.loads(out.read_text())
    assert said["sim_availability"] == row["sim_availability"]
    assert said["model_availability"] == row["model_availability"]


def test_numpy_numbers_and_arrays_are_timeouts_too():
    """np.int64(2) was refused as 'must be positive numbers' and an array met numpy's
    'truth value is ambiguous' (a review)."""
    from sizing.tails import timeout_table

    numpy_rows = timeout_table(3, 2, 1, np.array([0.3]), np.array([2, 5]), jobs=2000,
                               seed=1)
    plain_rows = timeout_table(3, 2, 1, [0.3], [2.0, 5.0], jobs=2000, seed=1)
    assert numpy_rows == plain_rows


@pytest.mark.parametrize("call", ["compare", "simulated", "quorum_latencies"])
def test_other_percentile_takers_check_them_as_the_command_line_does(call):
    """p0.99 came back silently where 99 was meant, and 150 met numpy's raw error (a
    review of the library's percentile check)."""
    from scipy import stats as scipy_stats

    from forkjoin_sim.staleness.wars import MessageLaws, quorum_latencies
    from sizing.planning import simulated_percentile
    from sizing.tails import compare_percentiles

    calls = {"compare": lambda q: compare_percentiles([(3, 2, 1, 0.3)], percentiles=[q],
                                                      jobs=2000),
             "simulated": lambda q: simulated_percentile(3, 2, 1, 0.1, q, jobs=2000),
             "quorum_latencies": lambda q: quorum_latencies(
                 MessageLaws(*[scipy_stats.expon()] * 4), 3, trials=100,
                 percentiles=[q])}
    with pytest.raises(ConfigError, match="write 99 for p99"):
        calls[call](0.99)
    with pytest.raises(ConfigError, match=r"percentile=150 is outside \[1, 100\)"):
        calls[call](150)


@pytest.mark.parametrize("seed, words", [(-1, "got -1"), (1.5, "got 1.5")])
def test_a_bad_seed_is_said_as_simulate_says_it_by_the_planners(seed, words):
    """numpy's 'expected non-negative integer' or a SeedSequence TypeError came
    through (a review)."""
    from sizing.planning import plan_consistency
    from sizing.tails import timeout_table

    for call in (lambda: timeout_table(3, 2, 1, 0.3, 2, jobs=2000, seed=seed),
                 lambda: plan_consistency(3, 3, 0.5, 0.5, jobs=2000, seed=seed)):
        with pytest.raises(ConfigError, match=f"seed must be a whole number >= 0, "
                                              f"{words}"):
            call()
