"""xoshiro256** (Blackman and Vigna, 2018), compiled inline for the fused engine.

A 256-bit state, a 64-bit output per step, period 2**256 - 1, and statistical
quality that passes BigCrush; see https://prng.di.unimi.it/ and Blackman & Vigna,
"Scrambled linear pseudorandom number generators", ACM TOMS 47(4), 2021. The
functions below advance row ``i`` of a ``uint64[streams, 4]`` state table in place, so
that numba inlines them into the simulation loop (a call through numpy's
``Generator`` costs several times more).

States are seeded from a ``numpy.random.SeedSequence`` (``generate_state``), one
independent stream per purpose (arrivals, class labels, each class's placement and
service), so a run is a function of its seed only.
"""

from __future__ import annotations

import numba
import numpy as np

_MASK = np.uint64(0xFFFFFFFFFFFFFFFF)


@numba.njit(cache=True, inline="always")
def _rotl(x, k):
    return (x << np.uint64(k)) | (x >> np.uint64(64 - k))


@numba.njit(cache=True, inline="always")
def next_u64(s, i):
    """The next 64-bit output of stream ``i``; advances ``s[i]`` in place."""
    s0, s1, s2, s3 = s[i, 0], s[i, 1], s[i, 2], s[i, 3]
    result = _rotl(s1 * np.uint64(5), 7) * np.uint64(9)
    t = s1 << np.uint64(17)
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s[i, 0], s[i, 1], s[i, 2], s[i, 3] = s0, s1, s2, _rotl(s3, 45)
    return result


@numba.njit(cache=True, inline="always")
def uniform(s, i):
    """A double uniform on (0, 1]: the top 53 bits, shifted off zero. (The
    conversions go through int64: uint64 to double is slow on x86.)"""
    return (float(np.int64(next_u64(s, i) >> np.uint64(11))) + 1.0) * (
        1.0 / 9007199254740992.0)


def _ziggurat_tables():
    """Marsaglia and Tsang's (2000) 256-layer ziggurat for the exponential law:
    ``k`` (integer acceptance bounds on 32 bits), ``w`` (layer widths / 2**32) and
    ``f`` (the density at the layer edges)."""
    m2 = 2.0 ** 32
    de, ve = 7.697117470131487, 3.949659822581572e-3
    k, w, f = np.zeros(256, dtype=np.uint64), np.zeros(256), np.zeros(256)
    q = ve / np.exp(-de)
    k[0] = np.uint64((de / q) * m2)
    k[1] = 0
    w[0], w[255] = q / m2, de / m2
    f[0], f[255] = 1.0, np.exp(-de)
    te = de
    for i in range(254, 0, -1):
        de = -np.log(ve / de + np.exp(-de))
        k[i + 1] = np.uint64((de / te) * m2)
        te = de
        f[i] = np.exp(-de)
        w[i] = de / m2
    return k, w, f


_ZK, _ZW, _ZF = _ziggurat_tables()
_ZR = 7.697117470131487


@numba.njit(cache=True)
def _exponential_tail(s, i, iz, jz):
    """The ziggurat's slow path (about 1.2% of draws)."""
    while True:
        if iz == 0:
            return _ZR - np.log(uniform(s, i))
        x = float(np.int64(jz)) * _ZW[iz]
        if _ZF[iz] + uniform(s, i) * (_ZF[iz - 1] - _ZF[iz]) < np.exp(-x):
            return x
        bits = next_u64(s, i)
        iz = np.int64(bits & np.uint64(255))
        jz = bits >> np.uint64(32)
        if jz < _ZK[iz]:
            return float(np.int64(jz)) * _ZW[iz]


@numba.njit(cache=True, inline="always")
def exponential(s, i):
    """A standard exponential variate of stream ``i`` by Marsaglia and Tsang's
    ziggurat (J. Stat. Software 5(8), 2000), with the layer index and the 32-bit value
    taken from disjoint bits of one 64-bit output."""
    bits = next_u64(s, i)
    iz = np.int64(bits & np.uint64(255))
    jz = bits >> np.uint64(32)
    if jz < _ZK[iz]:
        return float(np.int64(jz)) * _ZW[iz]
    return _exponential_tail(s, i, iz, jz)


@numba.njit(cache=True, inline="always")
def below(s, i, n):
    """A uniform integer in ``0 .. n-1`` (n < 2**32) of stream ``i`` by Lemire's
    multiply-and-shift with rejection: exactly uniform."""
    bound = np.uint64(n)
    m = (next_u64(s, i) >> np.uint64(32)) * bound
    low = m & np.uint64(0xFFFFFFFF)
    if low < bound:
        threshold = (np.uint64(0x100000000) - bound) % bound
        while low < threshold:
            m = (next_u64(s, i) >> np.uint64(32)) * bound
            low = m & np.uint64(0xFFFFFFFF)
    return np.int64(m >> np.uint64(32))


def seed_states(seed, count: int) -> np.ndarray:
    """``count`` independent xoshiro256** states (uint64[count, 4]) for ``seed``: the
    state of stream i is drawn from child i of the seed's SeedSequence."""
    from .streams import as_seed_sequence

    seq = as_seed_sequence(seed)
    states = np.empty((count, 4), dtype=np.uint64)
    for i in range(count):
        child = np.random.SeedSequence(seq.entropy, spawn_key=seq.spawn_key + (1000 + i,),
                                       pool_size=seq.pool_size)
        states[i] = child.generate_state(4, np.uint64)
        if not states[i].any():  # the all-zero state is the one fixed point
            states[i, 0] = 1
    return states
