"""Random numbers by purpose: values depend on (seed, purpose, job index) only."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from forkjoin_sim.errors import ConfigError
from forkjoin_sim.steps import cassandra_read, draws


@settings(max_examples=40)
@given(st.integers(0, 3 * draws.CHUNK), st.integers(1, 2 * draws.CHUNK),
       st.integers(0, 2**63 - 1))
def test_values_do_not_depend_on_block_size(first, count, seed):
    law = stats.gamma(2.5)
    whole = draws.draw(seed, "think", law, 0, first + count, 2)
    blocks = [draws.draw(seed, "think", law, a, min(first, a + 777) - a, 2)
              for a in range(0, first, 777)]
    blocks.append(draws.draw(seed, "think", law, first, count, 2))
    np.testing.assert_array_equal(np.concatenate(blocks), whole)


def test_poisson_arrivals_chain_across_blocks_to_the_same_sums():
    whole = draws.poisson_arrivals(5, 2.0, 0, 10_000)
    head = draws.poisson_arrivals(5, 2.0, 0, 3_333)
    tail = draws.poisson_arrivals(5, 2.0, 3_333, 6_667, previous=head[-1])
    np.testing.assert_array_equal(np.concatenate([head, tail]), whole)
    gaps = np.diff(whole)
    assert stats.kstest(gaps, stats.expon(scale=0.5).cdf).pvalue > 1e-3


def test_purposes_and_step_kinds_have_their_own_streams():
    template = cassandra_read(3, 2)
    laws = {kind: stats.expon() for kind in template.kinds}
    base = draws.durations(template, laws, 11, 0, 500)
    slower = draws.durations(template, {**laws, "hop": stats.expon(scale=5)}, 11, 0, 500)
    hops = [i for i, op in enumerate(template.ops) if op.kind == "hop"]
    others = [i for i in range(len(template.ops)) if i not in hops]
    np.testing.assert_array_equal(base[:, others], slower[:, others])
    np.testing.assert_allclose(slower[:, hops], 5 * base[:, hops])
    assert not np.array_equal(draws.think_times(11, stats.expon(), 0, 50),
                              draws.draw(11, "arrival", stats.expon(), 0, 50)[:, 0])
    assert not np.array_equal(base, draws.durations(template, laws, 12, 0, 500))


def test_replica_sets_are_distinct_nodes_each_equally_likely():
    sets = draws.replica_sets(3, 7, 3, 0, 21_000)
    assert all(len(set(row)) == 3 for row in sets[:2000])
    counts = np.bincount(sets.ravel(), minlength=7)
    assert stats.chisquare(counts).pvalue > 1e-3
    ring = draws.replica_sets(3, 7, 3, 0, 100, ring=True)
    np.testing.assert_array_equal((ring[:, 1:] - ring[:, :-1]) % 7, 1)


def test_laws_may_be_numbers_functions_or_scipy():
    assert np.all(draws.draw(1, "think", 2.5, 0, 3) == 2.5)
    values = draws.draw(1, "think", lambda g, shape: g.uniform(3, 4, shape), 0, 100)
    assert values.shape == (100, 1) and np.all((values >= 3) & (values < 4))
    with pytest.raises(ConfigError, match="scipy.stats distribution"):
        draws.draw(1, "think", "fast", 0, 3)
    with pytest.raises(ConfigError, match="unknown purpose"):
        draws.draw(1, "weather", 1.0, 0, 3)
    with pytest.raises(ConfigError, match="no law for step kinds"):
        draws.durations(cassandra_read(3, 2), {"hop": 1.0}, 1, 0, 3)
    with pytest.raises(ConfigError, match="negative"):
        draws.durations(cassandra_read(1, 1), {k: -1.0 for k in
                                               cassandra_read(1, 1).kinds}, 1, 0, 3)
