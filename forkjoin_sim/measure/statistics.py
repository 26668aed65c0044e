"""Output analysis of a simulation's per-job sojourn sequence, in job arrival order.

Steady-state conventions, each with its source:

- Warm-up: a fixed fraction of the run, or chosen automatically by MSER-5
  (White 1997; White, Cobb & Spratt 2000; Franklin & White 2008).
- Sampling: every s-th job after the warm-up (the paper keeps 10% of jobs, s = 10).
- Mean: a confidence interval by non-overlapping batch means with Student t
  quantiles, because successive sojourns are positively correlated and the i.i.d.
  interval is far too narrow. 30 batches, the top of the 10-30 that Schmeiser (1982)
  recommends.
- Percentiles: numpy's default (linear interpolation).

References
----------
White, K. P., Jr. (1997). An effective truncation heuristic for bias reduction in
simulation output. *Simulation* 69(6), 323-334.
White, K. P., Jr., Cobb, M. J. & Spratt, S. C. (2000). A comparison of five steady-state
truncation heuristics for simulation. *Proc. Winter Simulation Conference*, 755-760.
Franklin, W. W. & White, K. P., Jr. (2008). Stationarity tests and MSER-5: exploring the
intuition behind mean-squared-error-reduction in warm-up period determination.
*Proc. Winter Simulation Conference*, 541-546.
Schmeiser, B. (1982). Batch size effects in the analysis of simulation output.
*Operations Research* 30(3), 556-568.
Little, J. D. C. (1961). A proof for the queuing formula L = lambda W.
*Operations Research* 9(3), 383-387.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from forkjoin_sim.errors import ConfigError

MSER_BATCH = 5
DEFAULT_BATCHES = 30
SUMMARY_PERCENTILES = (50, 90, 95, 99, 99.9)
# A lag-1 autocorrelation of independent batch means above this one-sided quantile
# is unlikely (1%) by chance. A fixed cut such as 0.2 would raise a false alarm on
# about one run in ten at 30 batches, where the estimate's spread is ~1/sqrt(30).
LAG1_ALARM_QUANTILE = 0.99
MSER_LIMIT_NOTE = ("MSER-5 truncated at its limit, half the run: the run may not have "
                   "reached steady state; simulate more jobs")


# ---------------------------------------------------------------------------
# Input checks
# ---------------------------------------------------------------------------

def _series(x: ArrayLike, what: str = "sojourn times") -> np.ndarray:
    """``x`` as a 1-D float array of finite values."""
    if isinstance(x, (str, bytes)):
        raise ConfigError(f"{what} must be a sequence of numbers, got the text {x!r}; "
                          "pass a list or array, one value per job")
    try:
        arr = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise ConfigError(f"{what} must be numbers, one per job; got {type(x).__name__} "
                          "holding something else") from None
    if arr.ndim != 1:
        raise ConfigError(f"{what} must be a 1-D sequence, got shape {arr.shape}; "
                          "pass one value per job in arrival order")
    finite = np.isfinite(arr)
    if not finite.all():
        bad = int(np.flatnonzero(~finite)[0])
        raise ConfigError(f"{what} contain a non-finite value {arr[bad]} at index {bad};"
                          " remove it or fix the simulation that produced it")
    return arr


def _check_warmup(warmup: float | str) -> float | str:
    """``warmup`` as a fraction in [0, 1) or the string ``"auto"``."""
    if isinstance(warmup, str):
        if warmup == "auto":
            return warmup
        raise ConfigError(f"warmup {warmup!r} is unknown; use a fraction in [0, 1) "
                          "or 'auto' (MSER-5)")
    if isinstance(warmup, bool) or not isinstance(warmup, (int, float, np.number)):
        raise ConfigError(f"warmup must be a fraction in [0, 1) or 'auto', "
                          f"got {warmup!r}")
    if not 0 <= warmup < 1:
        raise ConfigError(f"warmup fraction {warmup} is outside [0, 1); e.g. 0.1 drops "
                          "the first 10% of jobs, or use 'auto' (MSER-5)")
    return float(warmup)


def _check_sample_every(sample_every: int) -> int:
    if (isinstance(sample_every, bool) or not isinstance(sample_every, (int, np.integer))
            or sample_every < 1):
        raise ConfigError(f"sample_every must be a whole number >= 1, got "
                          f"{sample_every!r}; e.g. 10 keeps every 10th job")
    return int(sample_every)


def _check_confidence(confidence: float) -> float:
    if not 0 < confidence < 1:
        raise ConfigError(f"confidence {confidence} is outside (0, 1); e.g. 0.95")
    return float(confidence)


# ---------------------------------------------------------------------------
# Warm-up
# ---------------------------------------------------------------------------

def _mser5(x: np.ndarray) -> tuple[int, bool]:
    """MSER-5 truncation of ``x`` and whether it sits at the search limit."""
    batches = x.size // MSER_BATCH
    # Search d in [0, batches/2] (White 1997), keeping at least two batches so the
    # statistic is not trivially zero on a single remaining batch.
    limit = min(batches // 2, batches - 2)
    if limit <= 0:
        return 0, False
    means = x[: batches * MSER_BATCH].reshape(batches, MSER_BATCH).mean(axis=1)
    if np.ptp(means) == 0:
        return 0, False
    # Centring keeps the suffix sums of squares from cancelling on long runs.
    means = means - means.mean()
    tail_sum = np.cumsum(means[::-1])[::-1][: limit + 1]
    tail_sq = np.cumsum((means * means)[::-1])[::-1][: limit + 1]
    remaining = (batches - np.arange(limit + 1)).astype(float)
    sse = np.maximum(tail_sq - tail_sum**2 / remaining, 0.0)
    mser = sse / remaining**2
    # Ties within rounding (e.g. a constant tail) go to the earliest point.
    tol = 8 * np.finfo(float).eps * batches * tail_sq[0] / remaining[-1] ** 2
    best = int(np.flatnonzero(mser <= mser.min() + tol)[0])
    return MSER_BATCH * best, best == limit


def mser5_truncation(x: ArrayLike) -> int:
    """Number of leading observations that MSER-5 says to discard.

    MSER-5 (White 1997; White, Cobb & Spratt 2000; Franklin & White 2008) forms the
    means z_1..z_m of consecutive batches of 5 observations and picks the number of
    batches d in [0, m/2] minimising
    ``MSER(d) = sum_{j>d} (z_j - mean(z_{d+1..m}))**2 / (m - d)**2``,
    i.e. the squared standard error of the truncated mean. The returned count is
    ``5 * d``. Series shorter than 15 observations are not truncated. Runs in
    O(n) with cumulative sums.
    """
    return _mser5(_series(x))[0]


def warmup_count(n_obs: int, warmup: float | str) -> int:
    """Number of leading jobs a warm-up *fraction* discards: ``floor(warmup * n_obs)``.

    ``"auto"`` (MSER-5) depends on the data, not only on its length: use
    `apply_warmup` for it.
    """
    warmup = _check_warmup(warmup)
    if warmup == "auto":
        raise ConfigError("warmup 'auto' (MSER-5) needs the data, not only its length; "
                          "use apply_warmup(x, 'auto') or mser5_truncation(x)")
    if n_obs < 0:
        raise ConfigError(f"n_obs={n_obs} must be >= 0")
    return math.floor(warmup * n_obs)


def apply_warmup(x: ArrayLike, warmup: float | str) -> tuple[np.ndarray, int]:
    """``x`` without its warm-up, and the number of observations dropped.

    ``warmup`` is a fraction in [0, 1) of ``len(x)`` or ``"auto"`` for MSER-5.
    """
    x = _series(x)
    warmup = _check_warmup(warmup)
    dropped = _mser5(x)[0] if warmup == "auto" else warmup_count(x.size, warmup)
    return x[dropped:], dropped


# ---------------------------------------------------------------------------
# Mean, its confidence interval, percentiles
# ---------------------------------------------------------------------------

class Interval(NamedTuple):
    """A point estimate with a two-sided confidence interval."""

    mean: float
    low: float
    high: float


def throughput_fields(throughput: Interval | None) -> dict:
    """A run's throughput as its JSON keys, the same in every run: null where a run
    was too short to measure it."""
    x = throughput
    return dict(throughput=None if x is None else x.mean,
                throughput_ci_low=None if x is None else x.low,
                throughput_ci_high=None if x is None else x.high)


def _batch_means(x: np.ndarray, batches: int) -> np.ndarray:
    """Means of non-overlapping equal batches of ``x``.

    With fewer than ``2 * batches`` observations the batches shrink in number (to
    ``len(x) // 2``, at least 2) rather than to one observation each. The
    ``len(x) % batches`` leftover observations are taken from the start, the part of
    a run nearest its warm-up.
    """
    if isinstance(batches, bool) or not isinstance(batches, (int, np.integer)) \
            or batches < 2:
        raise ConfigError(f"batches must be a whole number >= 2, got {batches!r}; "
                          "10 to 30 is usual (Schmeiser 1982)")
    if x.size < 2:
        raise ConfigError(f"a confidence interval needs at least 2 observations, got "
                          f"{x.size}; run more jobs or lower warmup / sample_every")
    used = max(2, min(int(batches), x.size // 2))
    size = x.size // used
    return x[x.size - used * size:].reshape(used, size).mean(axis=1)


def batch_means_ci(x: ArrayLike, confidence: float = 0.95,
                   batches: int = DEFAULT_BATCHES) -> Interval:
    """Mean of ``x`` with a batch-means confidence interval, as ``(mean, low, high)``.

    The run is cut into ``batches`` non-overlapping batches; their means are nearly
    independent and normal when batches are long compared with the correlation time,
    so ``mean +- t_{batches-1} * sd(batch means) / sqrt(batches)`` covers the
    steady-state mean at the stated confidence (Law & Kelton, *Simulation Modeling
    and Analysis*, ch. 9). 30 batches is the upper end of the 10-30 Schmeiser (1982)
    recommends: enough degrees of freedom for a tight t quantile while each batch
    stays long. Short series fall back to fewer batches (see `_batch_means`). The
    point estimate is the mean of all of ``x``.
    """
    x = _series(x)
    confidence = _check_confidence(confidence)
    return t_interval(float(x.mean()), _batch_means(x, batches), confidence)


def t_interval(centre: float, means: np.ndarray, confidence: float) -> Interval:
    """``centre +- t_{b-1} * sd(means) / sqrt(b)`` for ``b`` batch means."""
    means = np.asarray(means, dtype=float)
    scale = float(means.std(ddof=1)) / math.sqrt(means.size)
    if scale == 0:
        return Interval(centre, centre, centre)
    # scipy.stats.t.interval, term for term, without importing scipy.stats
    low, high = (special.stdtrit(means.size - 1, np.array([(1 - confidence) / 2,
                                                       (1 + confidence) / 2]))
                 * scale + centre)
    return Interval(centre, float(low), float(high))


def batch_lag1(x: ArrayLike, batches: int = DEFAULT_BATCHES) -> float | None:
    """Lag-1 autocorrelation of the batch means of ``x``, a check on batch length.

    The usual estimator ``sum (z_i - zbar)(z_{i+1} - zbar) / sum (z_i - zbar)**2``.
    Clearly positive values mean batches are too short for the batch-means
    interval to be trusted. ``None`` when undefined (fewer than 3 batches, or equal
    batch means).
    """
    means = _batch_means(_series(x), batches)
    centred = means - means.mean()
    denominator = float(centred @ centred)
    if means.size < 3 or denominator == 0:
        return None
    return float(centred[:-1] @ centred[1:]) / denominator


def percentiles(x: ArrayLike, qs: tuple[float, ...] = SUMMARY_PERCENTILES) -> dict:
    """``{q: q-th percentile of x}`` for each q in ``qs`` (numpy's linear method)."""
    x = _series(x)
    if x.size == 0:
        raise ConfigError("percentiles of an empty sample are undefined; run more jobs")
    values = np.percentile(x, qs)
    return {q: float(v) for q, v in zip(qs, values)}


# ---------------------------------------------------------------------------
# Summary of a run
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Summary:
    """Steady-state statistics of the measured jobs of one run.

    ``warmup_dropped`` counts jobs before the first measured one (in arrival order;
    in one class's summary of a run of several classes, the run's jobs of every class
    before the cut, which is the run's); after it every ``sample_every``-th job is
    measured. ``warnings`` holds
    human-readable doubts about the run (too short a run, too short batches).
    """

    mean: float
    ci_low: float
    ci_high: float
    p50: float
    p90: float
    p95: float
    p99: float
    p999: float
    jobs_measured: int
    warmup_dropped: int
    sample_every: int
    confidence: float
    batches: int
    batch_lag1: float | None
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        """Plain ``dict`` of the fields (``warnings`` as a list), ready for JSON."""
        out = asdict(self)
        out["warnings"] = list(self.warnings)
        return out


def _auto_truncate(sampled: np.ndarray,
                   sample_every: int) -> tuple[np.ndarray, int, list[str]]:
    """MSER-5 on a sampled series: kept values, raw jobs dropped, warnings."""
    drop, at_limit = _mser5(sampled)
    notes = [MSER_LIMIT_NOTE] if at_limit else []
    return sampled[drop:], drop * sample_every, notes


def _summary(kept: np.ndarray, dropped: int, sample_every: int, confidence: float,
             batches: int, notes: list[str]) -> Summary:
    if kept.size < 2:
        raise ConfigError(f"only {kept.size} job(s) measured after warm-up and "
                          "sampling; at least 2 are needed: run more jobs or lower "
                          "warmup / sample_every")
    p = percentiles(kept, SUMMARY_PERCENTILES)
    return summary_from_batches(float(kept.mean()), _batch_means(kept, batches), p,
                                int(kept.size), dropped, sample_every, confidence,
                                batches, notes)


def summary_from_batches(centre: float, means: np.ndarray, p: dict, measured: int,
                         dropped: int, sample_every: int, confidence: float,
                         batches: int, notes: list[str]) -> Summary:
    """A `Summary` from the mean of the measured jobs, their batch means and their
    percentiles ``p`` ({50: ..., 90: ..., 95: ..., 99: ..., 99.9: ...}): the one place
    that turns batch means into an interval and judges them (lag-1 alarm)."""
    means = np.asarray(means, dtype=float)
    _, low, high = t_interval(centre, means, confidence)
    used = means.size
    centred = means - means.mean()
    denominator = float(centred @ centred)
    lag1 = (None if used < 3 or denominator == 0
            else float(centred[:-1] @ centred[1:]) / denominator)
    notes = list(notes)
    if used < batches:
        notes.append(f"only {measured} jobs measured: {used} batches used instead of "
                     f"{batches}; the interval is rough")
    if lag1 is not None:
        alarm = -1 / used + special.ndtri(LAG1_ALARM_QUANTILE) / math.sqrt(used)
        if lag1 > alarm:
            notes.append(f"batch means lag-1 autocorrelation {lag1:.2f} > {alarm:.2f}: "
                         "batches may be too short for the interval; run more jobs")
    return Summary(mean=centre, ci_low=low, ci_high=high, p50=p[50], p90=p[90],
                   p95=p[95], p99=p[99], p999=p[99.9], jobs_measured=int(measured),
                   warmup_dropped=int(dropped), sample_every=sample_every,
                   confidence=confidence, batches=used, batch_lag1=lag1,
                   warnings=tuple(notes))


def summarize(sojourns: ArrayLike, *, warmup: float | str = 0.1, sample_every: int = 1,
              confidence: float = 0.95, batches: int = DEFAULT_BATCHES) -> Summary:
    """Steady-state `Summary` of per-job sojourn times given in arrival order.

    With a warm-up fraction f, the first ``floor(f * len)`` jobs are dropped and
    every ``sample_every``-th job from there on is measured. With ``"auto"``, MSER-5
    runs on the sampled series ``sojourns[::sample_every]``, so that the streaming
    `SojournRecorder` (which cannot keep every job) gives the identical answer; the
    result is still "drop the first ``warmup_dropped`` jobs, then every s-th".
    """
    x = _series(sojourns)
    warmup = _check_warmup(warmup)
    every = _check_sample_every(sample_every)
    confidence = _check_confidence(confidence)
    if warmup == "auto":
        kept, dropped, notes = _auto_truncate(x[::every], every)
    else:
        dropped = warmup_count(x.size, warmup)
        kept, notes = x[dropped::every], []
    return _summary(kept, dropped, every, confidence, batches, notes)


class SojournRecorder:
    """Streaming selection of the measured jobs from a run delivered in chunks.

    The one place that decides which jobs a run measures. Keeps exactly the jobs
    `summarize` would measure on the whole sequence and nothing else: with a warm-up
    fraction, every ``sample_every``-th job from the cutoff
    ``floor(warmup * total_jobs)`` on; with ``"auto"``, every ``sample_every``-th job
    from the start, truncated at `finish` by MSER-5 run on that sampled series
    (keeping every job to run it on the full series would defeat the point). Indices
    are global, so chunk boundaries do not matter. Memory: one float per measured
    (auto: sampled) job and column, allocated up front.

    Parameters
    ----------
    total_jobs : int
    warmup, sample_every : the measurement rule
    columns : int
        Values recorded per job (e.g. the latency at several quorums of one run);
        column 0 is the one MSER-5 judges.
    labels, times : bool
        Also keep each measured job's class label / arrival time (for per-class
        summaries and the throughput).
    group : int
        Keep only the means of consecutive groups of ``group`` measured jobs (for
        runs too long to keep every job; percentiles are then unavailable). Chunks
        must then start and end on whole groups, and sample_every be 1.
    warmup_jobs : int, optional
        The warm-up as a count of jobs instead of a fraction (e.g. whole blocks).
    """

    def __init__(self, total_jobs: int, *, warmup: float | str = 0.1,
                 sample_every: int = 1, columns: int = 1, labels: bool = False,
                 times: bool = False, group: int = 1,
                 warmup_jobs: int | None = None) -> None:
        if (isinstance(total_jobs, bool) or not isinstance(total_jobs, (int, np.integer))
                or total_jobs < 0):
            raise ConfigError(f"total_jobs must be a whole number >= 0, got "
                              f"{total_jobs!r}")
        self.total_jobs = int(total_jobs)
        self.warmup = _check_warmup(warmup)
        self.sample_every = _check_sample_every(sample_every)
        self._start = 0 if self.warmup == "auto" else warmup_count(total_jobs,
                                                                   self.warmup)
        if warmup_jobs is not None:
            if not 0 <= warmup_jobs < self.total_jobs:
                raise ConfigError(f"warmup_jobs={warmup_jobs} must lie in [0, "
                                  f"{self.total_jobs})")
            self.warmup, self._start = warmup_jobs / self.total_jobs, int(warmup_jobs)
        self.group = int(group)
        if self.group > 1 and (self.sample_every != 1 or self.warmup == "auto"
                               or (self.total_jobs - self._start) % self.group):
            raise ConfigError("group means need sample_every 1, a fixed warm-up and a "
                              "measured count that is a whole number of groups")
        size = len(range(self._start, self.total_jobs, self.sample_every)) // self.group
        self.columns = int(columns)
        self._kept = np.empty((size, self.columns)) if columns > 1 else np.empty(size)
        self._labels = np.zeros(size, dtype=np.int16) if labels else None
        self._times = np.empty(size) if times else None
        self._seen = 0
        self._finished = False
        self._dropped_kept = 0

    def check_enough(self) -> None:
        """Refuse, before any job runs, a fixed warm-up and sampling that would leave
        fewer than 2 measured jobs (a summary needs 2)."""
        size = len(range(self._start, self.total_jobs, self.sample_every)) // self.group
        if self.warmup != "auto" and size < 2:
            raise ConfigError(f"only {size} job(s) would be measured after warm-up and "
                              f"sampling ({self.total_jobs} jobs, warmup {self.warmup:g}, "
                              f"sample_every {self.sample_every}); at least 2 are needed: "
                              "run more jobs or lower warmup / sample_every")

    def add(self, chunk_sojourns: ArrayLike, labels: ArrayLike | None = None,
            times: ArrayLike | None = None) -> None:
        """Record the next chunk of jobs (in arrival order): their values (one per job,
        or (jobs, columns)), and their labels and arrival times if kept."""
        if self._finished:
            raise ConfigError("add() after finish(); use a new SojournRecorder per run")
        chunk = np.asarray(chunk_sojourns, dtype=float)
        if self.columns == 1:
            chunk = _series(chunk.reshape(-1) if chunk.ndim == 2 and chunk.shape[1] == 1
                            else chunk)
        elif chunk.ndim != 2 or chunk.shape[1] != self.columns:
            raise ConfigError(f"chunk must have shape (jobs, {self.columns})")
        first, end = self._seen, self._seen + chunk.shape[0]
        if end > self.total_jobs:
            raise ConfigError(f"received {end} jobs but the recorder was built for "
                              f"total_jobs={self.total_jobs}; pass the run's job count")
        # Kept global indices are start, start + s, ...: find the first in the chunk.
        behind = max(self._start, first) - self._start
        index = self._start + -(-behind // self.sample_every) * self.sample_every
        if index < end and self.group > 1:
            taken = chunk[index - first:]
            if (index - self._start) % self.group or taken.shape[0] % self.group:
                raise ConfigError("with group means every chunk must hold whole groups")
            means = taken.reshape(-1, self.group, *taken.shape[1:]).mean(axis=1)
            slot = (index - self._start) // self.group
            self._kept[slot:slot + means.shape[0]] = means
        elif index < end:
            picked = slice(index - first, None, self.sample_every)
            taken = chunk[picked]
            slot = slice((index - self._start) // self.sample_every, None)
            slot = slice(slot.start, slot.start + taken.shape[0])
            self._kept[slot] = taken
            for store, given in ((self._labels, labels), (self._times, times)):
                if store is not None and given is not None:
                    store[slot] = np.asarray(given)[picked]
        self._seen = end

    def _final(self) -> tuple[np.ndarray, int, list[str]]:
        if self._seen != self.total_jobs:
            raise ConfigError(f"recorder got {self._seen} of total_jobs="
                              f"{self.total_jobs} jobs; add() every chunk before "
                              "finish()")
        if not self._finished:
            self._finished = True
            self._notes = []
            self._dropped = self._start
            if self.warmup == "auto":
                first = self._kept if self.columns == 1 else self._kept[:, 0]
                drop, at_limit = _mser5(first)
                if at_limit:
                    self._notes.append(MSER_LIMIT_NOTE)
                self._dropped_kept = drop
                self._dropped = drop * self.sample_every
        kept = self._kept[self._dropped_kept:]
        return kept, self._dropped, list(self._notes)

    def finish(self) -> tuple[np.ndarray, int]:
        """The measured values (column 0) and the number of warm-up jobs dropped."""
        kept, dropped, _ = self._final()
        return (kept if self.columns == 1 else kept[:, 0]), dropped

    def measured(self) -> dict:
        """Everything kept for the measured jobs: ``values`` (jobs,) or (jobs,
        columns), ``labels`` and ``times`` (None unless kept), ``dropped``."""
        kept, dropped, _ = self._final()
        cut = self._dropped_kept
        return {"values": kept, "dropped": dropped,
                "labels": None if self._labels is None else self._labels[cut:],
                "times": None if self._times is None else self._times[cut:]}

    def summary(self, *, column: int = 0, label: int | None = None,
                confidence: float = 0.95, batches: int = DEFAULT_BATCHES) -> Summary:
        """`Summary` of the recorded run, equal to `summarize` on the whole sequence
        (for one ``column``; restricted to jobs of class ``label`` if given)."""
        confidence = _check_confidence(confidence)
        kept, dropped, notes = self._final()
        values = kept if self.columns == 1 else kept[:, column]
        if label is not None:
            values = values[self._labels[self._dropped_kept:] == label]
        return _summary(values, dropped, self.sample_every, confidence, batches, notes)

    def throughput(self, confidence: float = 0.95,
                   batches: int = DEFAULT_BATCHES) -> Interval | None:
        """Jobs per unit time over the measured jobs, with a batch-means interval.

        The mean gap between successive measured arrivals (``sample_every`` jobs
        apart) has a batch-means interval; throughput is ``sample_every / gap`` and
        its interval the inverted one. None without kept times or with < 3 jobs.
        """
        times = self.measured()["times"]
        if times is None or times.size < 3:
            return None
        gaps = np.diff(times)
        mean, low, high = batch_means_ci(gaps, confidence, batches)
        if not mean > 0:
            return None  # every measured job arrived at one instant
        every = self.sample_every
        return Interval(every / mean, every / high if high > 0 else 0.0,
                        every / low if low > 0 else math.inf)


# ---------------------------------------------------------------------------
# Sample-path checks
# ---------------------------------------------------------------------------

class LittlesLaw(NamedTuple):
    """The two sides of L = lambda W measured on one sample path over a window."""

    in_system: float
    rate_times_sojourn: float


def littles_law(arrival_times: ArrayLike, departure_times: ArrayLike,
                window: tuple[float, float] | None = None) -> LittlesLaw:
    """Time-average number in system and throughput times mean sojourn.

    ``in_system`` is ``(1/T) * integral of N(t) dt`` over the window, computed
    exactly: each job contributes the overlap of [arrival, departure] with the
    window. ``rate_times_sojourn`` is (jobs arriving in the window / T) times their
    mean sojourn. Over the default window, first arrival to last departure, every
    job lies inside and the two agree exactly (Little 1961, sample-path form); over
    an interior window they differ by edge effects that vanish as T grows.
    """
    arrivals = _series(arrival_times, "arrival times")
    departures = _series(departure_times, "departure times")
    if arrivals.shape != departures.shape or arrivals.size == 0:
        raise ConfigError(f"need one departure per arrival and at least one job, got "
                          f"{arrivals.size} arrivals and {departures.size} departures")
    if np.any(departures < arrivals):
        bad = int(np.flatnonzero(departures < arrivals)[0])
        raise ConfigError(f"job {bad} departs at {departures[bad]} before it arrives "
                          f"at {arrivals[bad]}; pass departure (completion) times")
    start, end = ((float(arrivals.min()), float(departures.max())) if window is None
                  else map(float, window))
    if not end > start:
        raise ConfigError(f"window ({start}, {end}) is empty; use start < end")
    horizon = end - start
    overlap = np.minimum(departures, end) - np.maximum(arrivals, start)
    in_system = float(np.clip(overlap, 0, None).sum()) / horizon
    inside = (arrivals >= start) & (arrivals < end) if window is not None \
        else np.ones(arrivals.size, dtype=bool)
    mean_sojourn = float((departures - arrivals)[inside].mean()) if inside.any() else 0.0
    return LittlesLaw(in_system, float(inside.sum() / horizon * mean_sojourn))


def node_utilisation(busy_time_per_node: ArrayLike, horizon: float) -> np.ndarray:
    """Fraction of the horizon each node was busy."""
    busy = _series(busy_time_per_node, "busy times")
    if not horizon > 0:
        raise ConfigError(f"horizon {horizon} must be positive")
    if np.any(busy < 0) or np.any(busy > horizon * (1 + 1e-12)):
        raise ConfigError(f"busy times must lie in [0, horizon={horizon}], got "
                          f"[{busy.min()}, {busy.max()}]; measure them over the horizon")
    return busy / horizon
