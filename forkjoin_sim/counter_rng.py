"""Philox4x32-10, a counter-based generator: each random number is a pure function of
(key, counter), compiled for use inside numba loops.

Philox4x32-10 (Salmon, Moraes, Dror & Shaw, "Parallel random numbers: as easy as 1,
2, 3", SC 2011; the Random123 library) maps a 128-bit counter and a 64-bit key to 128
random bits through ten rounds of multiply-xor; it passes TestU01's BigCrush. Because
there is no sequential state, the fused kernel gives every draw an address

    counter = (job index: low 32 bits, high 32 bits, purpose | sub << 8, attempt)

so a number depends only on the seed (through the key), what it is for (``purpose``,
e.g. a task's service time), the job it belongs to and the task position ``sub``,
never on the order in which an engine happens to draw it, on block sizes or on
worker threads. ``attempt`` numbers the further blocks a rejection sampler needs.

Uniform variates take 53 bits from two 32-bit words and are centred,
``(x + 0.5) / 2**53``, so they lie in the open interval (0, 1): ``-log(u)`` and
inverse distribution functions never see 0 or 1.
"""

from __future__ import annotations

import numba
import numpy as np

#: What a number is for: the third counter word's low byte.
ARRIVAL, CLASS, PLACEMENT, SERVICE, FIRST_THINK = 0, 1, 2, 3, 4

_M0 = np.uint64(0xD2511F53)
_M1 = np.uint64(0xCD9E8D57)
_W0 = np.uint64(0x9E3779B9)
_W1 = np.uint64(0xBB67AE85)
_LOW = np.uint64(0xFFFFFFFF)
_TWO_M53 = 2.0 ** -53


@numba.njit(cache=True, inline="always")
def philox4x32(c0, c1, c2, c3, k0, k1):
    """The four 32-bit output words (as uint64) of Philox4x32-10 for counter
    ``(c0, c1, c2, c3)`` and key ``(k0, k1)`` (32-bit words held in uint64)."""
    c0 = np.uint64(c0)
    c1 = np.uint64(c1)
    c2 = np.uint64(c2)
    c3 = np.uint64(c3)
    k0 = np.uint64(k0)
    k1 = np.uint64(k1)
    for _ in range(10):
        p0 = _M0 * c0
        p1 = _M1 * c2
        c0, c1, c2, c3 = ((p1 >> np.uint64(32)) ^ c1 ^ k0, p1 & _LOW,
                          (p0 >> np.uint64(32)) ^ c3 ^ k1, p0 & _LOW)
        k0 = (k0 + _W0) & _LOW
        k1 = (k1 + _W1) & _LOW
    return c0, c1, c2, c3


@numba.njit(cache=True, inline="always")
def block(key, index, purpose, sub, attempt):
    """The four words addressed by (job ``index``, ``purpose``, ``sub``, ``attempt``)
    under ``key`` (uint64[2] holding two 32-bit words)."""
    i = np.uint64(index)
    return philox4x32(i & _LOW, i >> np.uint64(32),
                      np.uint64(purpose) | (np.uint64(sub) << np.uint64(8)),
                      np.uint64(attempt), key[0], key[1])


@numba.njit(cache=True, inline="always")
def _to_unit(hi, lo):
    x = (hi << np.uint64(21)) ^ (lo >> np.uint64(11))
    return (np.float64(x) + 0.5) * _TWO_M53


@numba.njit(cache=True, inline="always")
def uniform_pair(key, index, purpose, sub, attempt):
    """Two independent uniforms in (0, 1), 53 bits each, from one Philox block."""
    w0, w1, w2, w3 = block(key, index, purpose, sub, attempt)
    return _to_unit(w0, w1), _to_unit(w2, w3)


@numba.njit(cache=True, inline="always")
def _word(w0, w1, w2, w3, which):
    if which == 0:
        return w0
    if which == 1:
        return w1
    if which == 2:
        return w2
    return w3


@numba.njit(cache=True, inline="always")
def below_from(word, n):
    """``floor(word * n / 2**32)`` and whether it is unbiased (Lemire's test): a
    rejected word must be replaced by a fresh one."""
    m = word * np.uint64(n)
    low = m & _LOW
    if low < np.uint64(n):
        threshold = ((_LOW + np.uint64(1)) - np.uint64(n)) % np.uint64(n)
        if low < threshold:
            return np.int64(0), False
    return np.int64(m >> np.uint64(32)), True


@numba.njit(cache=True)
def below(key, index, purpose, t, n):
    """A uniform integer in ``[0, n)`` (``n < 2**32``), the ``t``-th of its job and
    purpose: word ``t % 4`` of block ``sub = t // 4``, exactly unbiased (Lemire 2019);
    a rejected word (probability < n / 2**32) is replaced by the same word of the
    next attempt's block."""
    attempt = 0
    while True:
        w0, w1, w2, w3 = block(key, index, purpose, t // 4, attempt)
        value, ok = below_from(_word(w0, w1, w2, w3, t % 4), n)
        if ok:
            return value
        attempt += 1


def key_of(seed, replication: int = 0) -> np.ndarray:
    """The Philox key (uint64[2] of 32-bit words) of replication ``replication`` of
    ``seed`` (an int or a ``numpy.random.SeedSequence``): child ``replication`` of the
    seed's SeedSequence, as ``spawn`` would give it, without advancing it."""
    seq = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    child = np.random.SeedSequence(seq.entropy, spawn_key=seq.spawn_key + (replication,),
                                   pool_size=seq.pool_size)
    return child.generate_state(2, np.uint32).astype(np.uint64)


__all__ = ["ARRIVAL", "CLASS", "FIRST_THINK", "PLACEMENT", "SERVICE", "below",
           "below_from", "block", "key_of", "philox4x32", "uniform_pair"]
