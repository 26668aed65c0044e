"""xoshiro256**: the published reference outputs, uniformity of the derived draws."""

import numba
import numpy as np
from scipy import stats

from forkjoin_sim.xoshiro import below, exponential, next_u64, seed_states, uniform


@numba.njit
def _outputs(state, count):
    out = np.empty(count, dtype=np.uint64)
    for i in range(count):
        out[i] = next_u64(state, 0)
    return out


def test_reference_outputs_from_state_1_2_3_4():
    # The reference C implementation (prng.di.unimi.it/xoshiro256starstar.c) seeded
    # with s = {1, 2, 3, 4} starts with these outputs.
    state = np.array([[1, 2, 3, 4]], dtype=np.uint64)
    out = _outputs(state, 4)
    assert out.tolist() == [11520, 0, 1509978240, 1215971899390074240]


@numba.njit
def _draws(state, count, kind, n):
    out = np.empty(count)
    for i in range(count):
        if kind == 0:
            out[i] = uniform(state, 0)
        elif kind == 1:
            out[i] = exponential(state, 0)
        else:
            out[i] = below(state, 0, n)
    return out


def test_uniform_exponential_and_bounded_draws_have_their_laws():
    state = seed_states(7, 1)
    u = _draws(state, 200_000, 0, 0)
    assert u.min() > 0 and u.max() <= 1
    assert stats.kstest(u, "uniform").pvalue > 1e-3
    e = _draws(state, 1_000_000, 1, 0)
    assert stats.kstest(e, "expon").pvalue > 1e-3
    # Moments of the ziggurat draws: 1, 2, 6 within 5 standard errors.
    for order, exact, sd in ((1, 1, 1), (2, 2, np.sqrt(20)), (3, 6, np.sqrt(684))):
        assert abs(np.mean(e ** order) - exact) < 5 * sd / np.sqrt(e.size)
    k = _draws(state, 70_000, 2, 7).astype(int)
    counts = np.bincount(k, minlength=7)
    assert counts.size == 7
    assert stats.chisquare(counts).pvalue > 1e-3


def test_seed_states_are_a_function_of_the_seed():
    a, b = seed_states(3, 4), seed_states(3, 4)
    np.testing.assert_array_equal(a, b)
    assert len({tuple(row) for row in a}) == 4
    assert not np.array_equal(seed_states(4, 1), seed_states(3, 1))
