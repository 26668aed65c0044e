"""Theorem 4 (analytic.cassandra): Cassandra write latency and consistency levels."""

from fractions import Fraction

import pytest
from hypothesis import given, strategies as st

from analytic import (
    ConfigError, cassandra_write_latency, consistency_level_to_k, expand_basic, harmonic)
from strategies import replicas_and_quorum

latencies = st.fractions(Fraction(1, 100), 50)


@pytest.mark.parametrize("level, r, k", [
    ("ONE", 3, 1), ("two", 3, 2), ("Three", 3, 3), ("QUORUM", 3, 2), ("quorum", 4, 3),
    ("QUORUM", 1, 1), ("QUORUM", 5, 3), ("ALL", 5, 5), ("all", 2, 2)])
def test_consistency_levels(level, r, k):
    assert consistency_level_to_k(level, r) == k


def test_consistency_level_errors():
    with pytest.raises(ConfigError, match="THREE needs 3 replicas .* r=2"):
        consistency_level_to_k("three", 2)
    with pytest.raises(ConfigError, match="ONE, TWO, THREE, QUORUM, ALL"):
        consistency_level_to_k("LOCAL_QUORUM", 3)
    with pytest.raises(ConfigError):
        consistency_level_to_k(2, 3)
    with pytest.raises(ConfigError):
        consistency_level_to_k("ONE", 0)


@given(replicas_and_quorum(), st.data())
def test_all_remote_is_theorem1(rk, data):
    r, k = rk
    remote = {i: data.draw(latencies) for i in range(k, r + 1)}
    assert cassandra_write_latency(r, k, 0, None, remote) == expand_basic(r, k, remote)


@given(st.integers(1, 9), latencies)
def test_all_local_one_is_local_basic(r, local):
    assert cassandra_write_latency(r, 1, 1, local, {}) == local


@given(replicas_and_quorum(), st.fractions(0, 1), latencies, st.data())
def test_mixture(rk, l, local, data):
    r, k = rk
    remote = {i: data.draw(latencies) for i in range(max(k - 1, 1), r + 1)}
    local_part = local if k == 1 else expand_basic(r - 1, k - 1, remote)
    expected = l * local_part + (1 - l) * expand_basic(r, k, remote)
    assert cassandra_write_latency(r, k, l, local, remote) == expected


def test_hand_value_exponential_quorum():
    # RT(i,i,i) = H_i (max of i Exp(1)), r = 3, QUORUM: remote = 2nd smallest of 3,
    # H3 - H1 = 5/6; local = 1st of the 2 other replicas, H2 - H1 = 1/2; l = 1/2.
    remote = {i: harmonic(i, exact=True) for i in range(1, 4)}
    k = consistency_level_to_k("QUORUM", 3)
    assert cassandra_write_latency(3, k, Fraction(1, 2), None, remote) == Fraction(2, 3)


@pytest.mark.parametrize("args, message", [
    ((3, 2, 0.5, None, {2: 1.0, 3: 2.0}), r"i = 1; .* i = 1\.\.2"),
    ((3, 2, 0.0, None, {2: 1.0}), r"i = 3"),
    ((3, 1, 0.5, None, {1: 1.0, 2: 1.5, 3: 2.0}), "local_basic"),
    ((3, 1, 1.5, 1.0, {1: 1.0, 2: 1.5, 3: 2.0}), "local_fraction"),
    ((3, 4, 0.5, 1.0, {}), "quorum k=4 exceeds replicas r=3"),
])
def test_invalid(args, message):
    with pytest.raises(ConfigError, match=message):
        cassandra_write_latency(*args)



@pytest.mark.parametrize("text", ["quorum ", " ONE", "\tall"])
def test_level_names_with_surrounding_blanks_are_refused_by_both_tables(text):
    from analytic.cassandra import consistency_level_to_k
    from forkjoin_sim.cassandra.model import consistency_quorum
    from forkjoin_sim.errors import ConfigError

    with pytest.raises(ConfigError, match="blanks around it"):
        consistency_quorum(text, 3)
    with pytest.raises(ValueError, match="blanks around it"):
        consistency_level_to_k(text, 3)
    assert consistency_quorum(text.strip().lower(), 3) == \
        consistency_level_to_k(text.strip().capitalize(), 3)
