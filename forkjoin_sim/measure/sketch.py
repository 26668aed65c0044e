"""Streaming statistics in constant memory: a log-linear histogram for quantiles, and
the batch-means interval of accumulated batch sums.

The histogram is HdrHistogram's layout with a power-of-two sub-bucket count: a value
``x = m * 2**e`` (``0.5 <= m < 1``) falls in octave ``e - 1`` and, within it, in one
of ``SUB = 2**SUB_BITS`` equal sub-buckets, so each bucket is ``[L, L + 2**(e-1)/SUB)``
with ``L >= 2**(e-1)``: relative width at most ``1/SUB``. A quantile is read as the
midpoint of the bucket holding its rank, so it is within ``RELATIVE_ERROR =
1/(2*SUB)`` (0.39%) of the exact order statistic, relatively. Octaves span
``[2**EMIN, 2**EMAX)``; smaller values (and 0) go to an underflow bucket, larger to an
overflow bucket, and a quantile whose rank lands there is reported as NaN.
"""

from __future__ import annotations

import math

import numba
import numpy as np

SUB_BITS = 7
SUB = 2 ** SUB_BITS
EMIN, EMAX = -32, 40
#: Buckets: underflow, (EMAX - EMIN) octaves of SUB sub-buckets, overflow.
BINS = (EMAX - EMIN) * SUB + 2
#: Bound on the relative error of a quantile read from the histogram (a value in a
#: regular bucket).
RELATIVE_ERROR = 1.0 / (2 * SUB)
_LOW = 2.0 ** EMIN
_HIGH = 2.0 ** EMAX


_FIRST = ((1023 + EMIN) << SUB_BITS) - 1


@numba.njit(cache=True, inline="always")
def bucket(x):
    """The histogram bucket of ``x``."""
    if not x >= _LOW:
        return 0
    if x >= _HIGH:
        return BINS - 1
    # The IEEE-754 bits of a positive double, shifted right by 52 - SUB_BITS, are its
    # biased exponent followed by the top SUB_BITS bits of its mantissa: exactly the
    # octave and sub-bucket, without frexp.
    return (np.float64(x).view(np.int64) >> (52 - SUB_BITS)) - _FIRST


def bucket_bounds(index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper value of regular buckets ``index`` (1 .. BINS - 2)."""
    index = np.asarray(index) - 1
    octave = np.ldexp(1.0, (index // SUB + EMIN).astype(int))
    lower = octave * (1 + (index % SUB) / SUB)
    return lower, lower + octave / SUB


def quantiles(counts: np.ndarray, qs) -> np.ndarray:
    """The ``qs`` (in [0, 1]) quantiles of the values counted in ``counts``.

    The q-quantile is the order statistic of rank ``max(1, ceil(q * N))`` (numpy's
    ``method="inverted_cdf"``), read as the midpoint of its bucket: within
    `RELATIVE_ERROR` of it, or NaN if it lies outside ``[2**EMIN, 2**EMAX)``.
    """
    counts = np.asarray(counts, dtype=np.int64)
    qs = np.atleast_1d(np.asarray(qs, dtype=float))
    total = int(counts.sum())
    if total == 0:
        return np.full(qs.shape, np.nan)
    cumulative = np.cumsum(counts)
    ranks = np.maximum(1, np.ceil(qs * total - 1e-9 * qs * total)).astype(np.int64)
    index = np.searchsorted(cumulative, np.minimum(ranks, total), side="left")
    regular = (index > 0) & (index < BINS - 1)
    lower, upper = bucket_bounds(np.where(regular, index, 1))
    return np.where(regular, (lower + upper) / 2, np.nan)


def t_interval(values: np.ndarray, confidence: float, centre: float | None = None
               ) -> tuple[float, float, float]:
    """``(centre, low, high)``: Student-t interval of the mean of i.i.d. ``values``
    (``centre`` defaults to their mean)."""
    values = np.asarray(values, dtype=float)
    centre = float(values.mean()) if centre is None else float(centre)
    if values.size < 2:
        return centre, math.nan, math.nan
    scale = float(values.std(ddof=1)) / math.sqrt(values.size)
    if scale == 0:
        return centre, centre, centre
    # scipy.special rather than scipy.stats: the same quantile, a tenth the import.
    from scipy.special import stdtrit

    half = float(stdtrit(values.size - 1, 0.5 + confidence / 2)) * scale
    low, high = centre - half, centre + half
    return centre, float(low), float(high)


def batch_interval(sums: np.ndarray, counts: np.ndarray, confidence: float = 0.95
                   ) -> tuple[float, float, float]:
    """``(mean, low, high)`` from batch sums and counts (any shape; empty batches
    ignored): the mean of all observations, with the Student-t interval of the
    batch means, which are treated as i.i.d. (long batches)."""
    sums = np.asarray(sums, dtype=float).ravel()
    counts = np.asarray(counts, dtype=float).ravel()
    used = counts > 0
    if not used.any():
        return math.nan, math.nan, math.nan
    centre = sums[used].sum() / counts[used].sum()
    return t_interval(sums[used] / counts[used], confidence, centre)


__all__ = ["BINS", "EMAX", "EMIN", "RELATIVE_ERROR", "SUB", "SUB_BITS",
           "batch_interval", "bucket", "bucket_bounds", "quantiles", "t_interval"]
