"""Tests for forkjoin_sim.staleness.sessions: read-your-writes and monotonic reads."""

import numpy as np
import pytest
from scipy import stats

from forkjoin_sim.errors import ConfigError
from forkjoin_sim.laws.netem import netem
from forkjoin_sim.staleness.channels import simulate_wars_ordered
from forkjoin_sim.staleness.sessions import (level_names, monotonic_reads,
                                             read_your_writes, simulate_session)
from forkjoin_sim.staleness.wars import MessageLaws

TRIALS = 40_000


def constant(write=2.0, ack=1.0, read=1.0, response=1.0):
    return MessageLaws(netem(write), netem(ack), netem(read), netem(response))


def exponential(mean=1.0):
    law = stats.expon(scale=mean)
    return MessageLaws(law, law, law, law)


def inside(result, p):
    summary = result.summary(0.999)
    return summary["low"] <= p <= summary["high"]


@pytest.mark.parametrize("channels", ["fifo", "independent"])
@pytest.mark.parametrize("gap, expected", [(0.0, 0.5), (1.9, 0.5), (2.0, 0.0)])
def test_read_your_writes_exact_two_replicas(channels, gap, expected):
    """N = 2, R = W = 1, token-aware (each operation's coordinator is replica 0
    or 1, each with probability 1/2), constant delays: write 2, others 1.

    The writer's own replica has the write at 0 and acknowledges at once, so the
    write commits at 0 and the read starts at ``gap``. A read through the writer
    answers at once from the writer's replica: new. A read through the other
    replica answers at once from that replica (the writer's replica answers only
    at gap + 2), which has the write iff gap >= 2 (the write delay). So
    P(violated) = P(other coordinator) = 1/2 for gap < 2, and 0 for gap >= 2,
    whatever the channels (the two coordinators share no channel).
    """
    result = read_your_writes(constant(), 2, 1, 1, gap=gap, channels=channels,
                              coordinators="token-aware", trials=TRIALS, seed=1)
    assert np.all(result.gap == gap)
    if expected == 0:
        assert result.violated.sum() == 0
    else:
        assert inside(result, expected)


@pytest.mark.parametrize("think, expected", [(0.0, 0.25), (1.0, 0.25), (1.5, 0.0)])
def test_monotonic_reads_exact_two_replicas(think, expected):
    """N = 2, R = W = 1, token-aware, constant delays: write 2, others 1; first
    read 0.5 after the write's start, second ``think`` after the first returns.

    Each read through replica c answers at once from c (latency 0); the writer's
    replica has the write from 0, the other from 2. The first read (at 0.5) is new
    iff it goes through the writer's replica; the second (at 0.5 + think) is old iff
    it goes through the other replica and 0.5 + think < 2. The three coordinators
    are independent halves, so P(violated) = 1/2 * 1/2 = 1/4 for think < 1.5, else 0.
    """
    result = monotonic_reads(constant(), 2, 1, 1, gap=0.5, think=think,
                             channels="independent", coordinators="token-aware",
                             trials=TRIALS, seed=2)
    if expected == 0:
        assert result.violated.sum() == 0
    else:
        assert inside(result, expected)


@pytest.mark.parametrize("guarantee", ["read-your-writes", "monotonic-reads"])
@pytest.mark.parametrize("read_quorum, write_quorum", [(1, 1), (1, 2), (2, 1)])
def test_fifo_through_one_coordinator_never_violates(guarantee, read_quorum,
                                                      write_quorum):
    """Every request follows the write's on its channel, so every read is new."""
    options = dict(channels="fifo", coordinators="one", trials=20_000, seed=3,
                   gap=stats.expon(scale=0.5))
    assert simulate_session(guarantee, exponential(), 3, read_quorum, write_quorum,
                            **options).violated.sum() == 0
    independent = simulate_session(guarantee, exponential(), 3, read_quorum,
                                   write_quorum, **{**options,
                                                    "channels": "independent"})
    assert independent.summary()["low"] > 0


def test_read_your_writes_is_wars_staleness_after_commit():
    laws = exponential()
    session = read_your_writes(laws, 3, 1, 1, gap=0.3, channels="independent",
                               trials=5_000, seed=4)
    wars = simulate_wars_ordered(laws, 3, 1, 1, read_delays=0.3, channels="independent",
                                 trials=5_000, seed=4)
    assert np.array_equal(session.violated, wars.stale)


def test_violations_fall_with_the_gap():
    result = read_your_writes(exponential(), 3, 1, 1, gap=stats.expon(scale=2.0),
                              channels="independent", coordinators="random",
                              trials=TRIALS, seed=5)
    table = result.by_gap([0, 0.5, 2, 5])
    assert table.sessions.sum() == TRIALS
    assert table.violations.sum() == result.violated.sum()
    early, late = table.iloc[0], table.iloc[-2]
    assert early.low > late.high
    assert np.isnan(table.gap_high.iloc[-1])


def test_level_names():
    assert level_names(1, 3) == "ONE"
    assert level_names(2, 3) == "TWO/QUORUM"
    assert level_names(3, 3) == "THREE/ALL"
    assert level_names(3, 5) == "THREE/QUORUM"
    assert level_names(4, 5) == "-"


def test_bad_arguments_say_how_to_fix_them():
    with pytest.raises(ConfigError, match="use one of read-your-writes"):
        simulate_session("causal", exponential(), 3, 1, 1)
    with pytest.raises(ConfigError, match="read-your-writes has one read"):
        simulate_session("read-your-writes", exponential(), 3, 1, 1, think=1.0)
    with pytest.raises(ConfigError, match="think must be"):
        monotonic_reads(exponential(), 3, 1, 1, think=-1.0, trials=10)
    with pytest.raises(ConfigError, match="read quorum 4 exceeds replicas 3"):
        monotonic_reads(exponential(), 3, 4, 1, trials=10)
    with pytest.raises(ConfigError, match="must be one or more increasing"):
        read_your_writes(exponential(), 3, 1, 1, trials=10).by_gap([2, 1])
