"""Tests for forkjoin_sim.staleness.wars: the WARS Monte Carlo of PBS."""

import itertools

import numpy as np
import pytest
from scipy import stats

from analytic.staleness import p_consistent
from forkjoin_sim.errors import ConfigError
from forkjoin_sim.staleness import (MessageLaws, profile, quorum_latencies,
                                    simulate_wars)

EXP = stats.expon()
SAME = MessageLaws(EXP, EXP, EXP, EXP)
# Delays a billion times shorter than the write's: "negligible".
TINY = stats.expon(scale=1e-9)


def partial_quorums(max_replicas):
    for n in range(2, max_replicas + 1):
        for r, w in itertools.product(range(1, n + 1), repeat=2):
            if r + w <= n:
                yield n, r, w


def test_with_equal_laws_reads_become_consistent_as_t_grows():
    result = simulate_wars(SAME, 5, 1, 1, trials=20_000, seed=1)
    table = result.consistency([0, 0.5, 1, 2, 5, 10, 40])
    assert np.all(np.diff(table.probability) >= 0)
    assert table.probability.iloc[0] < 0.9
    # Exp(1) delays: P(some W_i > 40) is about 5 * e**-40, nil.
    assert table.consistent.iloc[-1] == result.trials
    assert result.visibility_time(0.999) < 10


@pytest.mark.parametrize("laws", [SAME, profile("LNKD-DISK"), profile("WAN")],
                         ids=["exp", "lnkd-disk", "wan"])
def test_strict_quorums_are_consistent_at_every_t(laws):
    # One of the first R responders is among the first W ackers, and an acker
    # holds the write before commit: exactly 1, not approximately.
    for n in range(1, 6):
        for r, w in itertools.product(range(1, n + 1), repeat=2):
            if r + w > n:
                result = simulate_wars(laws, n, r, w, trials=2_000, seed=n)
                assert result.waits.max() <= 0, (n, r, w)
                assert np.all(result.consistency([0, 1, 100]).probability == 1.0)


def test_negligible_ack_and_read_delays_give_the_closed_form():
    # With A, R, S negligible and t = 0, exactly the W first writes are visible and
    # the read quorum is a uniformly random R-subset: PBS's equation 1.
    laws = MessageLaws(EXP, TINY, TINY, TINY)
    for index, (n, r, w) in enumerate(partial_quorums(5)):
        row = simulate_wars(laws, n, r, w, trials=20_000, seed=100 + index) \
            .consistency(0.0, confidence=0.999).iloc[0]
        assert row.low <= p_consistent(n, r, w) <= row.high, (n, r, w, row.probability)


def test_wan_layout_one_local_replica_per_operation():
    # Only the remote delay matters: at t = 0 the read sees the write iff both
    # chose the same local replica (probability 1/N); after the remote delay, always.
    laws = MessageLaws(TINY, TINY, TINY, TINY, remote_delay=75.0)
    result = simulate_wars(laws, 3, 1, 1, trials=30_000, seed=4)
    row = result.consistency([0.0, 74.9, 75.1], confidence=0.999)
    assert row.low[0] <= 1 / 3 <= row.high[0]
    assert row.probability[1] == row.probability[0]
    assert row.probability[2] == 1.0
    assert result.write_latency.max() < 1e-6 and result.read_latency.max() < 1e-6


def test_latencies_are_order_statistics_of_round_trips():
    result = simulate_wars(SAME, 4, 2, 3, trials=50_000, seed=5)
    # W+A and R+S are Gamma(2, 1); their k-th of 4 order statistic has cdf
    # P(Binomial(4, F(x)) >= k).
    for sample, k in ((result.read_latency, 2), (result.write_latency, 3)):
        def cdf(x, k=k):
            return stats.binom.sf(k - 1, 4, stats.gamma(2).cdf(x))
        assert stats.kstest(sample, cdf).pvalue > 1e-3


def test_same_seed_same_numbers_and_quorums_share_draws():
    laws = profile("LNKD-SSD")
    first = simulate_wars(laws, 3, 1, 2, trials=5_000, seed=np.random.SeedSequence(9))
    again = simulate_wars(laws, 3, 1, 2, trials=5_000, seed=np.random.SeedSequence(9))
    assert np.array_equal(first.waits, again.waits)
    other = simulate_wars(laws, 3, 1, 2, trials=5_000, seed=10)
    assert not np.array_equal(first.waits, other.waits)
    # Write latency depends on W only; changing R keeps it, draw for draw.
    read2 = simulate_wars(laws, 3, 2, 2, trials=5_000, seed=np.random.SeedSequence(9))
    assert np.array_equal(first.write_latency, read2.write_latency)
    table = quorum_latencies(laws, 3, trials=5_000, seed=np.random.SeedSequence(9),
                             percentiles=[50, 99.9])
    mine = first.latency_percentiles([50, 99.9])
    np.testing.assert_allclose(table.query("quorum == 1").read, mine.read, rtol=1e-12)
    np.testing.assert_allclose(table.query("quorum == 2").write, mine.write, rtol=1e-12)


def test_intervals_cover_the_estimate_and_shrink():
    small = simulate_wars(SAME, 3, 1, 1, trials=1_000, seed=3).consistency(0.5).iloc[0]
    large = simulate_wars(SAME, 3, 1, 1, trials=50_000, seed=3).consistency(0.5).iloc[0]
    for row in (small, large):
        assert row.low < row.probability < row.high
    assert large.high - large.low < (small.high - small.low) / 5
    lat = simulate_wars(SAME, 3, 1, 1, trials=5_000, seed=3).latency_percentiles([99])
    assert lat.read_low[0] <= lat.read[0] <= lat.read_high[0]


@pytest.mark.parametrize("call, message", [
    (lambda: simulate_wars(SAME, 3, 4, 1), "read quorum 4 exceeds replicas 3; use 1 <="),
    (lambda: simulate_wars(SAME, 3, 1, 0), "write quorum must be a whole number >= 1"),
    (lambda: simulate_wars(SAME, 3, 1, 1, trials=0), "trials must be a whole number"),
    (lambda: simulate_wars("exp", 3, 1, 1), "laws must be a MessageLaws"),
    (lambda: MessageLaws(EXP, EXP, "exp", EXP), "WARS read law 'exp' has no rvs"),
    (lambda: MessageLaws(EXP, EXP, EXP, EXP, remote_delay=-1), "remote_delay=-1"),
    (lambda: simulate_wars(MessageLaws(stats.norm(), EXP, EXP, EXP), 3, 1, 1,
                           trials=100), "WARS write law drew values that are not"),
    (lambda: simulate_wars(SAME, 3, 1, 1, trials=10).consistency([-1]),
     "times after commit must be finite numbers >= 0"),
    (lambda: simulate_wars(SAME, 3, 1, 1, trials=10).visibility_time(1.0),
     "probability must be strictly between 0 and 1"),
    (lambda: profile("SSD"), "latency profile 'SSD' is unknown; use one of LNKD-SSD"),
])
def test_invalid_inputs_say_how_to_fix(call, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        call()
