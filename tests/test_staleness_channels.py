"""Tests for forkjoin_sim.staleness.channels: WARS with FIFO channels and a choice of
coordinators."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from forkjoin_sim.errors import ConfigError
from forkjoin_sim.staleness.channels import simulate_wars_ordered
from forkjoin_sim.laws.netem import netem
from forkjoin_sim.staleness.wars import MessageLaws, simulate_wars

EXP = stats.expon()
SAME = MessageLaws(EXP, EXP, EXP, EXP)
# A slow write, fast everything else: independent channels let reads overtake it.
SLOW_WRITE = MessageLaws(stats.expon(scale=5.0), EXP, EXP, EXP)


def test_independent_channels_with_a_separate_coordinator_are_wars_trial_by_trial():
    # Same seed, same child streams: the same delays, so the same trials.
    wars = simulate_wars(SAME, 3, 1, 2, trials=5_000, seed=11)
    for t in (0.0, 0.3, 1.0, 3.0):
        ordered = simulate_wars_ordered(SAME, 3, 1, 2, read_delays=t,
                                        channels="independent", trials=5_000, seed=11)
        assert int(ordered.new.sum()) == int(wars.consistency(t).consistent.iloc[0])
        np.testing.assert_allclose(ordered.commit, wars.write_latency)
        np.testing.assert_allclose(ordered.read_latency, wars.read_latency)


@pytest.mark.parametrize("replicas, read_quorum, write_quorum", [(3, 1, 1), (5, 2, 2)])
def test_independent_channels_reproduce_wars_statistically(replicas, read_quorum,
                                                           write_quorum):
    trials = 40_000
    wars = simulate_wars(SLOW_WRITE, replicas, read_quorum, write_quorum,
                         trials=trials, seed=1)
    for t in (0.0, 1.0, 4.0):
        ordered = simulate_wars_ordered(SLOW_WRITE, replicas, read_quorum, write_quorum,
                                        read_delays=t, channels="independent",
                                        trials=trials, seed=2)
        p_wars = wars.consistency(t).probability.iloc[0]
        p_ordered = ordered.new.mean()
        spread = np.sqrt(p_wars * (1 - p_wars) / trials
                         + p_ordered * (1 - p_ordered) / trials)
        assert abs(p_wars - p_ordered) < 4.5 * spread + 1e-12, (t, p_wars, p_ordered)
    assert stats.ks_2samp(ordered.read_latency, wars.read_latency).pvalue > 1e-3
    assert stats.ks_2samp(ordered.commit, wars.write_latency).pvalue > 1e-3


@pytest.mark.parametrize("nodes", [None, 3])
def test_fifo_one_coordinator_never_returns_stale_or_old_data(nodes):
    # N 3, R = W = 1: each read request to replica i follows the write request on
    # the same channel, so every replica answers with the new version.
    for after, delays in (("commit", [0.0, 0.1, 1.0]), ("start", [0.0, 0.05, 2.0])):
        for t in delays:
            result = simulate_wars_ordered(SLOW_WRITE, 3, 1, 1, read_delays=t,
                                           after=after, channels="fifo",
                                           coordinators="one", nodes=nodes,
                                           trials=20_000, seed=3)
            assert result.stale.sum() == 0
            assert result.new.all()


@settings(max_examples=40)
@given(replicas=st.integers(1, 5), data=st.data(),
       scales=st.lists(st.floats(0.05, 20.0), min_size=4, max_size=4),
       delay=st.floats(0.0, 5.0), after=st.sampled_from(["start", "commit"]),
       extra_nodes=st.integers(0, 3), seed=st.integers(0, 2**32 - 1))
def test_fifo_through_one_coordinator_is_never_stale_and_never_faster(
        replicas, data, scales, delay, after, extra_nodes, seed):
    read_quorum = data.draw(st.integers(1, replicas), label="read quorum")
    write_quorum = data.draw(st.integers(1, replicas), label="write quorum")
    laws = MessageLaws(*(stats.expon(scale=scale) for scale in scales))
    common = dict(read_delays=delay, after=after, coordinators="one",
                  nodes=replicas + extra_nodes, trials=300, seed=seed)
    fifo = simulate_wars_ordered(laws, replicas, read_quorum, write_quorum,
                                 channels="fifo", **common)
    independent = simulate_wars_ordered(laws, replicas, read_quorum, write_quorum,
                                        channels="independent", **common)
    assert fifo.new.all() and fifo.stale.sum() == 0
    np.testing.assert_array_equal(fifo.commit, independent.commit)
    assert np.all(fifo.read_latency >= independent.read_latency)


def test_the_same_reads_with_independent_channels_are_often_stale():
    # The control of the test above: the zero is the channels' doing.
    result = simulate_wars_ordered(SLOW_WRITE, 3, 1, 1, read_delays=0.0,
                                   channels="independent", trials=20_000, seed=3)
    row = result.summary().set_index("event").loc["stale"]
    assert row.low > 0.2


def test_in_flight_reads_under_independent_channels_often_miss_the_write():
    result = simulate_wars_ordered(SLOW_WRITE, 3, 1, 1, read_delays=0.2, after="start",
                                   channels="independent", trials=20_000, seed=4)
    summary = result.summary().set_index("event")
    assert summary.loc["in_flight", "low"] > 0.9
    assert summary.loc["new_in_flight", "high"] < 0.7
    # Started before commit: never counted stale.
    assert result.stale.sum() <= (~result.in_flight).sum()


def test_fifo_delays_reads_only_behind_the_same_coordinators_messages():
    common = dict(read_delays=0.5, after="start", trials=10_000, seed=5)
    fifo = simulate_wars_ordered(SAME, 3, 2, 1, channels="fifo", **common)
    independent = simulate_wars_ordered(SAME, 3, 2, 1, channels="independent",
                                        **common)
    # Messages wait behind earlier ones and never overtake: never faster.
    assert np.all(fifo.read_latency >= independent.read_latency)
    assert np.any(fifo.read_latency > independent.read_latency)
    np.testing.assert_array_equal(fifo.commit, independent.commit)


def test_fifo_matters_only_when_both_operations_pick_the_same_coordinator():
    # 4 nodes, 3 replicas, random coordinators: both operations use the one
    # non-replica node with probability 1/16; only then can the channels matter
    # (a replica coordinating both reads its own new copy first anyway).
    common = dict(read_delays=0.0, coordinators="random", nodes=4, trials=20_000,
                  seed=6)
    fifo = simulate_wars_ordered(SLOW_WRITE, 3, 1, 1, channels="fifo", **common)
    independent = simulate_wars_ordered(SLOW_WRITE, 3, 1, 1, channels="independent",
                                        **common)
    differ = int((fifo.new != independent.new).sum())
    assert differ > 0
    assert differ <= stats.binom(fifo.trials, 1 / 16).ppf(0.9999)
    assert 0 < fifo.stale.sum() < independent.stale.sum()


def test_token_aware_reads_with_quorum_one_ignore_the_channels():
    # The read's coordinator is a replica and answers first, at once, with what it
    # holds: the write's own coordinator (new), or another replica (channels from
    # the writer to it are not the reader's).
    common = dict(read_delays=0.0, coordinators="token-aware", trials=20_000, seed=6)
    fifo = simulate_wars_ordered(SLOW_WRITE, 3, 1, 1, channels="fifo", **common)
    independent = simulate_wars_ordered(SLOW_WRITE, 3, 1, 1, channels="independent",
                                        **common)
    np.testing.assert_array_equal(fifo.new, independent.new)
    assert 0 < fifo.stale.sum() < fifo.trials


def test_token_aware_writes_commit_at_once_with_write_quorum_one():
    # The coordinator is a replica; its own write and ack take no time.
    result = simulate_wars_ordered(SAME, 3, 1, 1, coordinators="token-aware",
                                   trials=5_000, seed=7)
    assert np.all(result.commit == 0.0)
    assert np.all(result.read_latency == 0.0)


def test_random_coordinators_are_replicas_with_probability_replicas_over_nodes():
    # W = 1 commits at once exactly when the write's coordinator is a replica.
    result = simulate_wars_ordered(SAME, 3, 1, 1, coordinators="random", nodes=6,
                                   trials=20_000, seed=8)
    at_once = int((result.commit == 0.0).sum())
    interval = stats.binomtest(at_once, result.trials).proportion_ci(0.999)
    assert interval.low <= 0.5 <= interval.high


@pytest.mark.parametrize("channels", ["fifo", "independent"])
@pytest.mark.parametrize("coordinators", ["one", "random", "token-aware"])
def test_strict_quorums_are_never_stale(channels, coordinators):
    result = simulate_wars_ordered(SAME, 5, 3, 3, read_delays=0.0, channels=channels,
                                   coordinators=coordinators, trials=5_000, seed=9)
    assert result.stale.sum() == 0


def test_netem_constant_delays_give_the_hand_computed_trial():
    # One-way 1 ms, writes 3 ms, acks 0.5 ms: commit at 3.5. A read started 1 after
    # the write's start reaches the replicas at 2 < 3: old with independent
    # channels, answered at 3. With FIFO it is held behind the write until 3, new,
    # and answered at 4 (after the ack, 3.5).
    laws = MessageLaws(netem(3.0), netem(0.5), netem(1.0), netem(1.0))
    common = dict(read_delays=1.0, after="start", trials=10, seed=10)
    independent = simulate_wars_ordered(laws, 3, 1, 1, channels="independent",
                                        **common)
    fifo = simulate_wars_ordered(laws, 3, 1, 1, channels="fifo", **common)
    assert np.all(independent.commit == 3.5) and not independent.new.any()
    np.testing.assert_allclose(independent.read_latency, 2.0)
    assert fifo.new.all()
    np.testing.assert_allclose(fifo.read_latency, 3.0)
    # A read started 3 after commit: its response (arriving at 8.5) is not held.
    later = simulate_wars_ordered(laws, 3, 1, 1, read_delays=3.0, channels="fifo",
                                  trials=10, seed=10)
    np.testing.assert_allclose(later.read_latency, 2.0)


def test_read_delays_from_a_law_or_an_array():
    law = stats.uniform(0, 2)
    drawn = simulate_wars_ordered(SAME, 3, 1, 1, read_delays=law, trials=2_000, seed=12)
    assert 0.0 <= drawn.read_start.min() and np.any(drawn.read_start > drawn.commit)
    again = simulate_wars_ordered(SAME, 3, 1, 1, read_delays=law, trials=2_000, seed=12)
    np.testing.assert_array_equal(drawn.read_start, again.read_start)
    given = np.linspace(0, 1, 2_000)
    result = simulate_wars_ordered(SAME, 3, 1, 1, read_delays=given, after="start",
                                   trials=2_000, seed=12)
    np.testing.assert_array_equal(result.read_start, given)


@pytest.mark.parametrize("kwargs, message", [
    (dict(channels="tcp"), "fifo, independent"),
    (dict(coordinators="nearest"), "one, random, token-aware"),
    (dict(after="end"), "'start'"),
    (dict(read_delays=-1.0), ">= 0"),
    (dict(read_delays=[0.0, 1.0]), "one per trial"),
    (dict(nodes=2), "nodes must be a whole number >= 3"),
])
def test_bad_settings_say_how_to_fix_them(kwargs, message):
    with pytest.raises(ConfigError, match=message):
        simulate_wars_ordered(SAME, 3, 1, 1, trials=10, **kwargs)


def test_quorum_larger_than_replicas_is_refused():
    with pytest.raises(ConfigError, match="use 1 <= read quorum <= replicas"):
        simulate_wars_ordered(SAME, 3, 4, 1, trials=10)


def test_laws_must_be_message_laws_drawing_delays_at_least_zero():
    with pytest.raises(ConfigError, match="MessageLaws"):
        simulate_wars_ordered(EXP, 3, 1, 1, trials=10)
    negative = MessageLaws(stats.norm(0, 1), EXP, EXP, EXP)
    with pytest.raises(ConfigError, match=r"law on \[0, inf\)"):
        simulate_wars_ordered(negative, 3, 1, 1, trials=100)


def test_summary_refuses_a_confidence_outside_zero_one():
    result = simulate_wars_ordered(SAME, 3, 1, 1, trials=10)
    with pytest.raises(ConfigError, match="strictly between 0 and 1"):
        result.summary(confidence=95)


def test_wide_area_laws_are_refused():
    with pytest.raises(ConfigError, match="remote_delay=0"):
        simulate_wars_ordered(MessageLaws(EXP, EXP, EXP, EXP, remote_delay=75.0),
                              3, 1, 1, trials=10)
