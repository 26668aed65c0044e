"""xoshiro256** streams for the fused kernel: one generator per purpose, compiled.

xoshiro256** (Blackman & Vigna, "Scrambled linear pseudorandom number generators",
ACM TOMS 47(4), 2021; reference code at https://prng.di.unimi.it/) keeps 256 bits of
state, returns 64 bits per step with two multiplications, a rotation and shifts, has
period 2**256 - 1 and passes BigCrush and PractRand. A replication owns one stream
per purpose (arrival gaps or think times, class labels, placements, service times),
each seeded from its own child of the run's ``numpy.random.SeedSequence``, and each
consumed in job order; so a replication's numbers depend on its seed only, never on
how the run is cut into chunks or spread over threads.

Uniform variates take the top 53 bits, centred: ``((x >> 11) + 0.5) / 2**53``, in
the open interval (0, 1), so ``-log(u)`` and inverse distribution functions never
see 0 or 1. Integers below ``n`` use Lemire's multiply-shift on the top 32 bits with
exact rejection ("Fast random integer generation in an interval", ACM TOMACS 29(1),
2019).
"""

from __future__ import annotations

import numba
import numpy as np

from forkjoin_sim.randomness.streams import (FUSED_ARRIVAL as ARRIVAL,
                                             FUSED_CLASS as CLASS,
                                             FUSED_PLACEMENT as PLACEMENT,
                                             FUSED_SERVICE as SERVICE)

#: Streams (rows of the state array): one per purpose of the one table.
STREAMS = 4
_LOW = np.uint64(0xFFFFFFFF)
_TWO_M53 = 2.0 ** -53


@numba.njit(cache=True, inline="always")
def next_u64(states, stream):
    """The next output of stream ``stream`` (a row of uint64 ``states``); advances it
    (`step` on the row: one xoshiro256** in the module)."""
    result, (s0, s1, s2, s3) = step((states[stream, 0], states[stream, 1],
                                     states[stream, 2], states[stream, 3]))
    states[stream, 0] = s0
    states[stream, 1] = s1
    states[stream, 2] = s2
    states[stream, 3] = s3
    return result


@numba.njit(cache=True, inline="always")
def uniform(states, stream):
    """A uniform variate in (0, 1) with 53 random bits."""
    return (np.float64(next_u64(states, stream) >> np.uint64(11)) + 0.5) * _TWO_M53


@numba.njit(cache=True, inline="always")
def below(states, stream, n):
    """A uniform integer in ``[0, n)``, ``1 <= n < 2**32``, exactly unbiased."""
    bound = np.uint64(n)
    while True:
        m = (next_u64(states, stream) >> np.uint64(32)) * bound
        low = m & _LOW
        if low >= bound or low >= ((_LOW + np.uint64(1)) - bound) % bound:
            return np.int64(m >> np.uint64(32))


# The same generator on a state held in four local variables rather than a row of
# the state array: a loop that draws from one stream keeps it in registers (a row
# of an array must be stored and reloaded around every other array store, which
# numba cannot prove distinct). `load` and `store` move a stream between the two.

@numba.njit(cache=True, inline="always")
def load(states, stream):
    """The state of stream ``stream`` as a tuple of four uint64."""
    return (states[stream, 0], states[stream, 1], states[stream, 2], states[stream, 3])


@numba.njit(cache=True, inline="always")
def store(states, stream, state):
    """Write ``state`` (a tuple from `load` or `step`) back to row ``stream``."""
    states[stream, 0] = state[0]
    states[stream, 1] = state[1]
    states[stream, 2] = state[2]
    states[stream, 3] = state[3]


@numba.njit(cache=True, inline="always")
def step(state):
    """``(output, next state)``: `next_u64` on a state tuple."""
    s0, s1, s2, s3 = state
    x = s1 * np.uint64(5)
    result = ((x << np.uint64(7)) | (x >> np.uint64(57))) * np.uint64(9)
    t = s1 << np.uint64(17)
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = (s3 << np.uint64(45)) | (s3 >> np.uint64(19))
    return result, (s0, s1, s2, s3)


@numba.njit(cache=True, inline="always")
def uniform_step(state):
    """``(u, next state)``: `uniform` on a state tuple."""
    bits, state = step(state)
    return (np.float64(bits >> np.uint64(11)) + 0.5) * _TWO_M53, state


@numba.njit(cache=True, inline="always")
def below_step(state, n):
    """``(i, next state)``: `below` on a state tuple."""
    bound = np.uint64(n)
    while True:
        bits, state = step(state)
        m = (bits >> np.uint64(32)) * bound
        low = m & _LOW
        if low >= bound or low >= ((_LOW + np.uint64(1)) - bound) % bound:
            return np.int64(m >> np.uint64(32)), state


def seed_states(seed, replication: int = 0) -> np.ndarray:
    """The (STREAMS, 4) uint64 state of replication ``replication`` of ``seed`` (an int
    or a ``numpy.random.SeedSequence``): stream ``p`` from child ``(replication, p)``
    of the seed's SeedSequence, built without advancing it."""
    seq = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    states = np.empty((STREAMS, 4), dtype=np.uint64)
    for purpose in range(STREAMS):
        child = np.random.SeedSequence(seq.entropy,
                                       spawn_key=seq.spawn_key + (replication, purpose),
                                       pool_size=seq.pool_size)
        states[purpose] = child.generate_state(4, np.uint64)
        if not states[purpose].any():  # the one state xoshiro cannot leave
            states[purpose, 0] = 1
    return states


__all__ = ["ARRIVAL", "CLASS", "PLACEMENT", "SERVICE", "STREAMS", "below", "below_step",
           "load", "next_u64", "seed_states", "step", "store", "uniform", "uniform_step"]
