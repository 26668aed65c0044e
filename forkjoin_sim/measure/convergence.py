"""How long a run must be: the jobs a batch-means interval needs for a stated width.

A batch-means interval's half-width shrinks like ``1/sqrt(measured jobs)`` once the
batches are long compared with the correlation time of the sojourns (Law & Kelton,
*Simulation Modeling and Analysis*, ch. 9). From one run's `Summary` this gives the
run length for a target relative half-width. When the batch means are themselves
correlated (lag-1 autocorrelation ``a > 0``), the interval is too narrow: the
variance of their mean is understated by about ``(1 + a) / (1 - a)`` (the AR(1)
variance factor), which the estimate adds. When MSER-5 truncated at its limit (half
the run) the run has not settled, so at least twice the jobs are asked for.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from forkjoin_sim.errors import ConfigError
from forkjoin_sim.measure.statistics import MSER_LIMIT_NOTE, Interval, Summary

#: The relative half-width of the mean's interval a run is judged against (1%).
DEFAULT_RELATIVE_HALF_WIDTH = 0.01
# Above this the AR(1) factor explodes; such a run needs a far longer run anyway.
_LAG1_CAP = 0.9


def needed_jobs(summary: Summary | Interval, jobs: int,
                relative_half_width: float = DEFAULT_RELATIVE_HALF_WIDTH) -> int:
    """Jobs a run like this one needs for a mean interval of +- ``relative_half_width``.

    Parameters
    ----------
    summary : the `Summary` of a run of ``jobs`` jobs (warm-up included), or any
        batch-means `Interval` of it (a throughput, a timeout availability); an
        `Interval` carries no lag-1 autocorrelation or MSER-5 note to correct by
    jobs : int
        Jobs simulated in that run.
    relative_half_width : float
        Target half-width of the confidence interval, relative to the mean.

    The warm-up is a fraction of the run, so jobs scale with measured jobs. The
    answer may be smaller than ``jobs`` (the run was longer than needed).
    """
    if not 0 < relative_half_width < 1:
        raise ConfigError(f"relative_half_width {relative_half_width} must lie in (0, 1),"
                          " e.g. 0.01 for +-1%")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ConfigError(f"jobs must be a whole number >= 1, got {jobs!r}")
    low, high = _bounds(summary)
    half = (high - low) / 2
    if summary.mean == 0 or half == 0:
        return jobs
    factor = (half / (relative_half_width * abs(summary.mean))) ** 2
    factor *= _correlation_factor(summary)
    if MSER_LIMIT_NOTE in getattr(summary, "warnings", ()):
        factor = max(factor, 2.0)
    return max(1, math.ceil(jobs * factor))


def _correlation_factor(summary) -> float:
    """How far the batch means' positive lag-1 autocorrelation understates the
    variance of their mean: the AR(1) factor (1 + a) / (1 - a) (1 without it)."""
    lag1 = getattr(summary, "batch_lag1", None)
    if lag1 is None or not lag1 > 0:
        return 1.0
    lag1 = min(lag1, _LAG1_CAP)
    return (1 + lag1) / (1 - lag1)


def _bounds(estimate) -> tuple[float, float]:
    if isinstance(estimate, Interval):
        return estimate.low, estimate.high
    return estimate.ci_low, estimate.ci_high


@dataclass(frozen=True)
class ConvergenceNote:
    """One note on a run's interval, and whether the run doubts that interval.

    ``doubt`` is True for the run's own warnings (MSER-5 at its limit, correlated or
    too few batch means): the interval itself is not to be trusted. It is False for
    the note that the interval, trusted, is only wider than asked for (``text`` says
    how many jobs would narrow it).
    """

    text: str
    doubt: bool


def classified_notes(summary: Summary | Interval, jobs: int,
                     relative_half_width: float = DEFAULT_RELATIVE_HALF_WIDTH,
                     what: str = "the mean") -> tuple[ConvergenceNote, ...]:
    """The notes of `convergence_notes`, each with whether it doubts the interval."""
    notes = [ConvergenceNote(text, doubt=True)
             for text in getattr(summary, "warnings", ())]
    need = needed_jobs(summary, jobs, relative_half_width)
    if need > jobs:
        low, high = _bounds(summary)
        half = (high - low) / 2 / abs(summary.mean)
        # An interval already within the target asks for more jobs only through the
        # corrections needed_jobs makes: say which, or the note contradicts itself.
        why = ""
        if half <= relative_half_width:
            widened = half * math.sqrt(_correlation_factor(summary))
            if widened > relative_half_width:
                why = (f" (+-{_percent(widened)}% once widened for the batch means' "
                       f"lag-1 autocorrelation {summary.batch_lag1:.2f})")
            else:
                why = " (the run has not settled: MSER-5 truncated at its limit)"
        notes.append(ConvergenceNote(
            f"{what}: 95% interval +-{_percent(half)}% after {jobs:,} jobs{why}; about "
            f"{need:,} jobs would give +-{100 * relative_half_width:g}%", doubt=False))
    return tuple(notes)


def _percent(fraction: float) -> str:
    """``fraction`` in percent, two significant digits, never in exponent form
    (+-1.1e+02%; 99.6 rounds to 1e+02 in two digits)."""
    return f"{100 * fraction:.2g}" if 100 * fraction < 99.5 else f"{100 * fraction:.0f}"


def convergence_notes(summary: Summary | Interval, jobs: int,
                      relative_half_width: float = DEFAULT_RELATIVE_HALF_WIDTH,
                      what: str = "the mean") -> tuple[str, ...]:
    """The run's own warnings (MSER-5 at its limit, batch lag-1 autocorrelation) and,
    when the run is too short for ``relative_half_width``, how many jobs it needs
    (the texts of `classified_notes`)."""
    return tuple(note.text for note in
                 classified_notes(summary, jobs, relative_half_width, what))
