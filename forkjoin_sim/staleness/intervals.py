"""Intervals of shares and percentiles of correlated operations.

Under load a queue makes successive operations of one run alike: a write waiting in a
replica's queue leaves every read behind it stale, a busy period makes a run of slow
reads. The Wilson interval of independent draws is then too narrow; here it is that
of the sample size the draws are worth, the draws over their *inflation* (batch
means over consecutive stretches of the run, in issue order).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats


#: Consecutive batches (in issue order) whose means show how far a run's successive
#: operations are correlated (`inflation`).
CORRELATION_BATCHES = 20


def inflation(values, confidence: float = 0.95,
              batches: int = CORRELATION_BATCHES) -> float:
    """How many times the variance of the mean of ``values`` (in issue order) is that
    of as many independent draws, as an interval at ``confidence`` needs it: by batch
    means, the batch size times the variance of the batch means over the variance of
    the values, times (t / z)^2, Student's t of ``batches`` - 1 degrees of freedom over
    the normal quantile (the batch means' variance is itself an estimate, of that
    many degrees of freedom); at least 1 (1 where there are too few values or no
    spread). A queue that makes stale or slow operations come in runs shows as more
    than 1 (the interval of a share or a percentile widens by its square root).

    Why t: loaded three-replica keys (LNKD-DISK, 1 and 1.6 operations per ms, 5,000
    to 80,000 operations, 48 seeds) held the long-run P(stale), t-visibility and
    k-staleness inside their 95% intervals in 88.9-93.5% of (seed, share) pairs with
    the normal quantile, 91.5-95.1% with t (`benchmarks/staleness_interval_coverage.py`).
    Taking the largest estimate over 10, 20 and 40 batches reached 94-96%, but gave
    independent draws a median inflation of 1.37 (90th percentile 2.35; here 1.14 and
    1.70), so it was not kept."""
    values = np.asarray(values, float)
    size = values.size // batches
    if size < 2:
        return 1.0
    used = values[: size * batches]
    spread = used.var(ddof=1)
    if not spread > 0:
        return 1.0
    means = used.reshape(batches, size).mean(axis=1)
    t_over_z = (stats.t.ppf(0.5 + confidence / 2, batches - 1)
                / stats.norm.ppf(0.5 + confidence / 2))
    return max(1.0, size * means.var(ddof=1) / spread * t_over_z ** 2)


def share(outcomes, confidence: float = 0.95,
          inflated: float | None = None) -> tuple[float, float, float]:
    """The share of true ``outcomes`` (one per operation, in issue order) and its
    interval at ``confidence``: Wilson's, widened by their correlation (``inflated``,
    by default their `inflation`); NaN for none."""
    outcomes = np.asarray(outcomes, bool)
    return wilson(int(outcomes.sum()), int(outcomes.size), confidence,
                  inflation(outcomes, confidence) if inflated is None else inflated)


def wilson(count: int, total: int, confidence: float,
           inflated: float = 1.0) -> tuple[float, float, float]:
    """The share ``count / total`` and its Wilson interval at ``confidence``, of the
    sample size ``total / inflated`` that correlated draws are worth (1: independent
    draws, the plain Wilson interval); NaN for no draw."""
    if total == 0:
        return math.nan, math.nan, math.nan
    worth = max(int(round(total / inflated)), 1)
    ci = stats.binomtest(min(int(round(count / inflated)), worth), worth).proportion_ci(
        confidence, method="wilson")
    return count / total, float(ci.low), float(ci.high)
