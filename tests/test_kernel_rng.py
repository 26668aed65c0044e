"""xoshiro256** streams of the fused kernel: the published reference outputs, and the
uniformity of the variates derived from them."""

import numba
import numpy as np
from scipy import stats

from forkjoin_sim.engines.fused.rng import (STREAMS, below, below_step, load, next_u64,
                                           seed_states, step, store, uniform,
                                           uniform_step)


@numba.njit
def _outputs(states, count):
    out = np.empty(count, dtype=np.uint64)
    for i in range(count):
        out[i] = next_u64(states, 0)
    return out


@numba.njit
def _uniforms(states, count):
    out = np.empty(count)
    for i in range(count):
        out[i] = uniform(states, 1)
    return out


@numba.njit
def _below(states, count, n):
    out = np.empty(count, dtype=np.int64)
    for i in range(count):
        out[i] = below(states, 2, n)
    return out


def test_reference_outputs_from_state_1_2_3_4():
    # Outputs of the reference C implementation (prng.di.unimi.it/xoshiro256starstar.c)
    # from the state {1, 2, 3, 4}, as published in the tests of the Rust rand_xoshiro
    # crate (rust-random/rand, xoshiro256starstar.rs).
    states = np.array([[1, 2, 3, 4]], dtype=np.uint64)
    expected = [11520, 0, 1509978240, 1215971899390074240, 1216172134540287360,
                607988272756665600, 16172922978634559625, 8476171486693032832,
                10595114339597558777, 2904607092377533576]
    assert _outputs(states, 10).tolist() == expected


def test_streams_advance_independently():
    states = np.array([[1, 2, 3, 4], [1, 2, 3, 4]], dtype=np.uint64)
    first = _outputs(states, 3)
    assert states[1].tolist() == [1, 2, 3, 4]
    assert first[0] == 11520


def test_uniforms_are_uniform_on_the_open_interval():
    u = _uniforms(seed_states(7), 200_000)
    assert 0 < u.min() and u.max() < 1
    assert stats.kstest(u, "uniform").pvalue > 1e-3


def test_integers_below_n_are_uniform():
    for n in (2, 7, 9, 1000):
        draws = _below(seed_states(11), 90_000, n)
        assert draws.min() >= 0 and draws.max() < n
        counts = np.bincount(draws, minlength=n)
        if n <= 9:
            assert stats.chisquare(counts).pvalue > 1e-3
        else:
            assert stats.kstest(draws + 0.5, stats.uniform(0, n).cdf).pvalue > 1e-3


def test_seed_states_are_a_function_of_seed_and_replication():
    a = seed_states(5, 0)
    assert a.shape == (STREAMS, 4) and a.dtype == np.uint64
    assert np.array_equal(a, seed_states(5, 0))
    assert np.array_equal(a, seed_states(np.random.SeedSequence(5), 0))
    assert not np.array_equal(a, seed_states(5, 1))
    assert not np.array_equal(a, seed_states(6, 0))
    # Every purpose has its own stream.
    assert len({tuple(row) for row in a}) == STREAMS


@numba.njit
def _on_a_tuple(states, count, n):
    """The outputs, uniforms and integers below n that `step`, `uniform_step` and
    `below_step` draw from a state tuple of streams 0, 1 and 2."""
    bits = np.empty(count, dtype=np.uint64)
    us = np.empty(count)
    ints = np.empty(count, dtype=np.int64)
    state = load(states, 0)
    for i in range(count):
        bits[i], state = step(state)
    store(states, 0, state)
    state = load(states, 1)
    for i in range(count):
        us[i], state = uniform_step(state)
    store(states, 1, state)
    state = load(states, 2)
    for i in range(count):
        ints[i], state = below_step(state, n)
    store(states, 2, state)
    return bits, us, ints


def test_a_state_tuple_draws_what_the_state_array_draws():
    # n = 3 * 2**30 rejects about a quarter of the raw draws: the rejection path too
    n = 3 * 2**30
    on_rows, on_tuples = seed_states(11), seed_states(11)
    bits, us, ints = _on_a_tuple(on_tuples, 5000, n)
    assert np.array_equal(bits, _outputs(on_rows, 5000))
    assert np.array_equal(us, _uniforms(on_rows, 5000))
    assert np.array_equal(ints, _below(on_rows, 5000, n))
    assert np.array_equal(on_rows, on_tuples)  # and both streams end in the same state
