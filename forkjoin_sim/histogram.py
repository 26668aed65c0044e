"""A log-linear histogram: percentiles of a billion values in constant memory.

A positive value ``x = m * 2**e`` (``0.5 <= m < 1``) falls in octave ``e`` and, within
it, in one of ``SUB`` equal sub-buckets of ``m``, as in HdrHistogram. A sub-bucket
spans ``[x_lo, x_lo * (1 + 1/(SUB*m)))``, so its relative width is at most
``1/(SUB/2) = 2/SUB``; a percentile read at the sub-bucket's interpolated position
is within ``2/SUB`` (0.78% for ``SUB = 256``) of the exact order statistic, and usually
far closer. Values below ``2**EMIN`` (including 0) share the first bucket.
"""

from __future__ import annotations

import math

import numba
import numpy as np

SUB = 256
SUB_BITS = 8
EMIN, EMAX = -64, 64
BINS = (EMAX - EMIN) * SUB
#: Bound on the relative error of a percentile read from the histogram.
RELATIVE_ERROR = 2.0 / SUB


@numba.njit(cache=True, inline="always")
def bin_of(x):
    """The bucket of ``x`` (clamped to the histogram's range)."""
    if x <= 0.0:
        return 0
    m, e = math.frexp(x)
    if e < EMIN + 1:
        return 0
    if e > EMAX:
        return BINS - 1
    return (e - 1 - EMIN) * SUB + int((m - 0.5) * 2 * SUB)


@numba.njit(cache=True, inline="always")
def bin_of_bits(bits):
    """`bin_of` from the IEEE-754 bits of a double (no libm call): the exponent field
    and the top ``log2(SUB)`` bits of the mantissa."""
    if bits <= 0:
        return 0
    e = (bits >> 52) - 1023  # x = 1.f * 2**e = 0.5 * 1.f * 2**(e+1)
    if e < EMIN:
        return 0
    if e >= EMAX:
        return BINS - 1
    return (e - EMIN) * SUB + ((bits >> (52 - SUB_BITS)) & (SUB - 1))


def bin_edges() -> np.ndarray:
    """Lower edge of each bucket (and the upper edge of the last), ``BINS + 1`` values."""
    octave = np.repeat(np.arange(EMIN, EMAX, dtype=float), SUB)
    fraction = np.tile(np.arange(SUB) / (2 * SUB) + 0.5, EMAX - EMIN)
    lower = np.ldexp(fraction * 2, octave.astype(int))
    return np.append(lower, 2.0 ** EMAX)


_EDGES = None


def quantiles(counts: np.ndarray, qs) -> np.ndarray:
    """The ``qs`` (in [0, 1]) quantiles of the values counted in ``counts``, by linear
    interpolation within the bucket that holds each rank."""
    global _EDGES
    if _EDGES is None:
        _EDGES = bin_edges()
    counts = np.asarray(counts, dtype=float)
    total = counts.sum()
    if total <= 0:
        return np.full(len(qs), np.nan)
    cumulative = np.cumsum(counts)
    out = []
    for q in qs:
        rank = q * total
        i = int(np.searchsorted(cumulative, rank, side="left"))
        i = min(i, counts.size - 1)
        before = cumulative[i] - counts[i]
        share = 0.0 if counts[i] == 0 else (rank - before) / counts[i]
        out.append(_EDGES[i] + share * (_EDGES[i + 1] - _EDGES[i]))
    return np.array(out)
