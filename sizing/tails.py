"""Tail latency from Theorem 1 on whole distributions, checked against simulation.

The model side (`model_distribution`) builds the (n,r,k) sojourn CDF as
``sum_i W(r,k,i) F_i`` with the basic (i,i,i) CDFs ``F_i`` at the per-node load
``r*rho/n`` taken either from simulation (any service distribution; one independent
run per i, its empirical CDF and a batch-means standard error per grid point) or
from an analytic approximation (exponential service; see `analytic.distribution`).
The simulation side runs the (n,r,k) queue itself. `compare_percentiles` and
`timeout_table` put the two side by side.

Percentile intervals of a simulation come from sectioning: the run's percentile is
the estimate, and the spread of the percentiles of ``batches`` consecutive sections
gives a Student-t interval (Law & Kelton, *Simulation Modeling and Analysis*, 5th
ed., section 9.5.3 on quantiles); batches absorb the serial correlation of sojourns.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import numpy as np
from scipy import stats

from analytic.coefficients import w_coefficients
from analytic.distribution import BASIC_APPROXIMATIONS, QuorumDistribution, quorum_cdf
from forkjoin_sim.checks import check_percentile
from forkjoin_sim.errors import ConfigError
from forkjoin_sim.laws.service import as_service
from forkjoin_sim.model import ForkJoinModel
from forkjoin_sim.randomness.streams import as_seed_sequence
from forkjoin_sim.run import simulate_nested_basic
from forkjoin_sim.simulation import MOST_JOBS, simulate
from forkjoin_sim.measure.statistics import Interval, batch_means_ci, warmup_count
from forkjoin_sim.staleness.intervals import share

#: Basic-queue sources: "simulation" or an analytic approximation's name.
BASIC_SOURCES = ("simulation",) + tuple(BASIC_APPROXIMATIONS)
DEFAULT_PERCENTILES = (50, 95, 99)
#: Sections for quantile intervals: fewer than for means, so each section still
#: holds many exceedances of p99 (a section of 2,000 jobs holds about 20).
QUANTILE_BATCHES = 20
GRID_POINTS = 2001
#: Warm-up fraction of every run here (basic queues and direct runs).
WARMUP = 0.1
#: Chance that a class's measured jobs fall short of what its percentile interval
#: needs in a run `section_jobs` called long enough (the class count is random).
SHORTFALL_RISK = 1e-6


# --- simulation-side statistics ---------------------------------------------------

def empirical_cdf(samples, grid) -> np.ndarray:
    """The right-continuous empirical CDF of ``samples`` at each grid point."""
    ordered = np.sort(np.asarray(samples, dtype=float))
    return np.searchsorted(ordered, np.asarray(grid, dtype=float), side="right") / ordered.size



def _sections(samples, batches: int) -> tuple[np.ndarray, np.ndarray]:
    """The run and its last ``batches * size`` values as ``batches`` consecutive
    sections (the oldest leftover values are dropped, nearest the warm-up)."""
    x = np.asarray(samples, dtype=float)
    size = x.size // batches
    if size < 2:
        raise ConfigError(f"{x.size} samples are too few for {batches} batches; "
                          "simulate more jobs")
    return x, x[x.size - batches * size:].reshape(batches, size)


def section_jobs(share: float = 1.0, batches: int = QUANTILE_BATCHES,
                 warmup: float = WARMUP, risk: float = SHORTFALL_RISK) -> int:
    """Fewest jobs of a run whose class of probability ``share`` gets a percentile
    interval: ``batches`` sections of at least 2 measured jobs after the warm-up.

    With ``share`` 1 (one class) the count is exact; otherwise the class's measured
    jobs are binomial and fall short with probability at most ``risk``.
    """
    if not 0 < share <= 1:
        raise ConfigError(f"share={share!r} must be in (0, 1]")
    need = 2 * batches
    if need / share > MOST_JOBS:
        raise ConfigError(f"a class of {share:.3g} of the jobs would need about "
                          f"{need / share:.3g} jobs for its percentile interval, more "
                          f"than any run ({MOST_JOBS:.0e}); give it a share of "
                          f"at least {need / MOST_JOBS:.3g}")
    measured = need
    if share < 1:
        enough = lambda m: stats.binom.ppf(risk, m, share) >= need  # noqa: E731
        high = need
        while not enough(high):
            high *= 2
        low = high // 2 if high > need else need
        while low < high:  # the fewest measured jobs that are enough
            middle = (low + high) // 2
            low, high = (low, middle) if enough(middle) else (middle + 1, high)
        measured = low
    jobs = math.ceil(measured / (1 - warmup))
    # warm-up counts are floors: step to the exact fewest
    while jobs - warmup_count(jobs, warmup) < measured:
        jobs += 1
    while (jobs - 1) - warmup_count(jobs - 1, warmup) >= measured:
        jobs -= 1
    return jobs


def empirical_cdf_with_error(samples, grid, batches: int = QUANTILE_BATCHES
                             ) -> tuple[np.ndarray, np.ndarray]:
    """Empirical CDF of a correlated sequence and its batch-means standard error.

    The series is cut into ``batches`` consecutive sections; the standard deviation
    of the sections' CDFs over ``sqrt(batches)`` is the error of the overall CDF at
    each point (independent-sample formulas would be far too small).
    """
    x, sections = _sections(samples, batches)
    per_batch = np.array([empirical_cdf(s, grid) for s in sections])
    return empirical_cdf(x, grid), per_batch.std(axis=0, ddof=1) / math.sqrt(batches)


def percentile_interval(samples, q: float, batches: int = QUANTILE_BATCHES,
                        confidence: float = 0.95) -> Interval:
    """The q-th percentile of a correlated run with a sectioning interval."""
    x, sections = _sections(samples, batches)
    centre = float(np.percentile(x, q))
    scale = float(np.percentile(sections, q, axis=1).std(ddof=1)) / math.sqrt(batches)
    if scale == 0:
        return Interval(centre, centre, centre)
    low, high = stats.t.interval(confidence, batches - 1, loc=centre, scale=scale)
    return Interval(centre, float(low), float(high))


@dataclass(frozen=True)
class SimulatedTimeout:
    """Timeout metrics of a simulated run, each a point estimate with an interval."""

    availability: Interval
    answered_mean: Interval
    waiting_mean: Interval


def simulated_timeout(samples, timeout: float, batches: int = 30,
                      confidence: float = 0.95) -> SimulatedTimeout:
    """Availability P(T <= t), E[T | T <= t] and E[min(T, t)] from measured sojourns.

    Availability is the share of jobs answered in time, with Wilson's interval of
    the sample size that correlated successive jobs are worth
    (`forkjoin_sim.staleness.intervals.share`, as staleness takes a share): a run in
    which every job is answered still has a lower end below 1. The waiting time is a
    mean of per-job quantities (a batch-means interval). The answered mean is a
    ratio; its interval is the t-interval of the per-batch ratios (the classical
    batch ratio estimator, slightly biased for short batches). A t-interval can reach
    past what the quantity can be, so the answered mean and the waiting time are
    clipped to [0, timeout].
    """
    x = np.asarray(samples, dtype=float)
    if isinstance(timeout, bool) or not (isinstance(timeout, numbers.Real)
                                         and timeout > 0):
        raise ConfigError(f"timeout={timeout!s} must be a positive number")
    answered = x <= timeout
    availability = Interval(*share(answered, confidence))
    waiting = _clipped(batch_means_ci(np.minimum(x, timeout), confidence, batches),
                       timeout)
    if not answered.any():
        nan = Interval(math.nan, math.nan, math.nan)
        return SimulatedTimeout(availability, nan, waiting)
    centre = float(x[answered].mean())
    size = x.size // batches
    sections = slice(x.size - batches * size, None)
    sums = (x * answered)[sections].reshape(batches, size).sum(axis=1)
    counts = answered[sections].reshape(batches, size).sum(axis=1)
    ratios = sums[counts > 0] / counts[counts > 0]
    if ratios.size < 2 or ratios.std() == 0:
        return SimulatedTimeout(availability, Interval(centre, centre, centre), waiting)
    low, high = stats.t.interval(confidence, ratios.size - 1, loc=centre,
                                 scale=ratios.std(ddof=1) / math.sqrt(ratios.size))
    return SimulatedTimeout(availability,
                            _clipped(Interval(centre, float(low), float(high)), timeout),
                            waiting)


def _clipped(interval: Interval, high: float) -> Interval:
    """``interval`` with its ends clipped to [0, ``high``]."""
    low_end, high_end = np.clip([interval.low, interval.high], 0.0, high)
    return Interval(interval.mean, float(low_end), float(high_end))


# --- model side -------------------------------------------------------------------

def is_exponential(service: Any) -> bool:
    """Whether ``service`` is a frozen scipy.stats exponential with loc 0."""
    family = getattr(service, "dist", None)
    return (getattr(family, "name", None) == "expon"
            and float(service.support()[0]) == 0.0)


def simulated_basic_sojourns(sizes: Iterable[int], node_load: float, service: Any,
                             jobs: int, seed=0, common: bool = True,
                             warmup: float = 0.1) -> dict[int, np.ndarray]:
    """Measured sojourns of the basic (i,i,i) queue at ``node_load`` for each size i.

    ``common=True`` (common random numbers): one path of the widest queue is drawn
    and the (i,i,i) queue runs on its first i columns, so every size sees the same
    arrivals and the same service times on its nodes. Each size is still an exact
    sample of its own queue, but their errors are positively correlated and largely
    cancel in Theorem 1's alternating sum. ``common=False``: one independent run per
    size (seed child i), as if each basic queue were benchmarked separately.
    The first ``warmup`` fraction of jobs is dropped.
    """
    sizes = sorted(set(sizes))
    if not sizes or sizes[0] < 1:
        raise ConfigError(f"basic queue sizes {sizes} must be whole numbers >= 1")
    if not common:
        children = as_seed_sequence(seed).spawn(sizes[-1] + 1)
        return {i: simulate(ForkJoinModel(i, i, i, load=node_load, service=service),
                            jobs=jobs, seed=children[i], warmup=warmup,
                            engine="fast", progress=False).sojourns
                for i in sizes}
    widest = ForkJoinModel(sizes[-1], sizes[-1], sizes[-1], load=node_load,
                           service=service)
    runs = simulate_nested_basic(widest.system, widest.arrival_process, sizes, jobs,
                                 seed, warmup)
    return {i: sojourns for i, (sojourns, _) in runs.items()}


def basic_cdfs_on_grid(samples: dict[int, np.ndarray], grid
                       ) -> tuple[dict[int, np.ndarray], dict[int, np.ndarray]]:
    """Empirical CDFs and their standard errors on ``grid`` for each size's samples."""
    cdfs, errors = {}, {}
    for i, s in samples.items():
        cdfs[i], errors[i] = empirical_cdf_with_error(s, grid)
    return cdfs, errors


def _common_standard_error(replicas: int, quorum: int, samples: dict[int, np.ndarray],
                           grid, batches: int = QUANTILE_BATCHES) -> np.ndarray:
    """Batch-means standard error of the whole alternating sum (correlated inputs)."""
    weights = w_coefficients(replicas, quorum)
    length = min(s.size for s in samples.values())
    size = length // batches
    sums = np.zeros((batches, len(grid)))
    for i, w in weights.items():
        sections = samples[i][:batches * size].reshape(batches, size)
        sums += float(w) * np.array([empirical_cdf(b, grid) for b in sections])
    return sums.std(axis=0, ddof=1) / math.sqrt(batches)


def needs_simulated_basic(basic: str, service: Any) -> bool:
    """Whether ``basic`` is an analytic approximation, which assumes exponential
    service, and ``service`` is not exponential."""
    return basic in BASIC_APPROXIMATIONS and not is_exponential(service)


def _check_basic(basic: str, service: Any, sources=BASIC_SOURCES) -> None:
    if basic not in sources:
        raise ConfigError(f"basic={basic!r} is unknown; use one of {', '.join(sources)}")
    if needs_simulated_basic(basic, service):
        raise ConfigError(f"basic={basic!r} assumes exponential service; use "
                          "basic='simulation' for other service distributions")


def model_distribution(nodes: int, replicas: int, quorum: int, load: float,
                       service: Any = None, basic: str = "simulation",
                       jobs: int = 50_000, seed=0, grid_end: float | None = None,
                       points: int = GRID_POINTS,
                       common: bool = True) -> QuorumDistribution:
    """The (n,r,k) sojourn CDF by Theorem 1 with basic queues at ``r*load/n``.

    Parameters
    ----------
    nodes, replicas, quorum : int
    load : float
        Job load rho = lambda * E[X] (as `ForkJoinModel.load`).
    service : distribution, default exponential mean 1
    basic : "simulation", "independent" or "mean-matched"
        Source of the basic-queue CDFs (module docstring).
    jobs, seed : size and seed of the basic-queue runs ("simulation" only)
    common : bool
        Basic queues from one path with common random numbers (default) or from
        independent runs (`simulated_basic_sojourns`).
    grid_end : float, optional
        Last grid point; default the largest simulated basic sojourn, or a point
        past which the analytic tail is below 1e-7.
    """
    service = as_service(service)
    _check_basic(basic, service)
    node_load = ForkJoinModel(nodes, replicas, quorum, load=load,
                              service=service).node_utilisation
    sizes = range(quorum, replicas + 1)
    if basic == "simulation":
        samples = simulated_basic_sojourns(sizes, node_load, service, jobs, seed,
                                           common=common)
        end = max(float(s.max()) for s in samples.values())
        grid = _grid(end, grid_end, points)
        cdfs, errors = basic_cdfs_on_grid(samples, grid)
        if not common:
            return quorum_cdf(replicas, quorum, cdfs, grid, errors)
        return dataclasses.replace(
            quorum_cdf(replicas, quorum, cdfs, grid),
            standard_error=_common_standard_error(replicas, quorum, samples, grid))
    mu = 1.0 / float(service.mean())
    end = (math.log(replicas) - math.log(1e-7)) / (mu * (1 - node_load))
    grid = _grid(end, grid_end, points)
    approximation = BASIC_APPROXIMATIONS[basic]
    return quorum_cdf(replicas, quorum,
                      {i: approximation(i, grid, node_load, mu) for i in sizes}, grid)


def _grid(end: float, grid_end: float | None, points: int) -> np.ndarray:
    """``points`` grid points from 0 to ``end`` (where the distribution's mass ends),
    and ``grid_end`` after them where it lies further out: spread to ``grid_end``
    instead, a timeout list holding 100,000 put the first point past 0 at 50 and read
    the CDF at a timeout of 2 as 0.04 (simulated: 0.71)."""
    grid = np.linspace(0.0, end, points)
    return np.append(grid, grid_end) if grid_end is not None and grid_end > end else grid


# --- side by side -----------------------------------------------------------------

def compare_percentiles(queues: Sequence[tuple[int, int, int, float]],
                        percentiles: Sequence[float] = DEFAULT_PERCENTILES,
                        basic: str = "simulation", service: Any = None,
                        jobs: int = 50_000, basic_jobs: int | None = None,
                        seed=0) -> list[dict]:
    """Model percentiles vs direct simulation for each ``(n, r, k, load)``.

    One row per queue and percentile: the model's value, its bracket from the
    CDF's uncertainty (`QuorumDistribution.percentile_bracket`) and whether it is
    reliable; the simulated value with its sectioning interval; and
    ``error = model / simulated - 1``. Seeds: queue j uses child j of ``seed`` for
    the direct run and another child for its basic queues.
    """
    service = as_service(service)
    percentiles = [check_percentile(q) for q in percentiles]
    children = as_seed_sequence(seed).spawn(2 * len(queues))
    rows = []
    for j, (n, r, k, load) in enumerate(queues):
        direct = simulate(ForkJoinModel(n, r, k, load=load, service=service),
                          jobs=jobs, seed=children[2 * j], engine="fast",
                          progress=False).sojourns
        model = model_distribution(n, r, k, load, service, basic,
                                   jobs=basic_jobs or jobs, seed=children[2 * j + 1],
                                   grid_end=float(direct.max()))
        for q in percentiles:
            low, high = model.percentile_bracket(q)
            measured = percentile_interval(direct, q)
            value = model.percentile(q)
            rows.append(dict(
                nodes=n, replicas=r, quorum=k, load=load, basic=basic, percentile=q,
                model=value, model_low=low, model_high=high,
                model_reliable=model.percentile_reliable(q),
                raw_violations=int(model.violations.sum()),
                simulated=measured.mean, simulated_low=measured.low,
                simulated_high=measured.high, error=value / measured.mean - 1))
    return rows


def timeout_table(nodes: int, replicas: int, quorum: int, loads: Sequence[float],
                  timeouts: Sequence[float], service: Any = None,
                  basic: str = "simulation", jobs: int = 100_000,
                  basic_jobs: int | None = None, seed=0) -> list[dict]:
    """Availability, answered mean and mean waiting time over load and timeout.

    For each load the (n,r,k) queue is simulated directly (``jobs`` jobs: the
    command line's ``--sim-jobs``) and modelled by Theorem 1 (`model_distribution`,
    on basic queues of ``basic_jobs`` jobs: its ``--jobs``; default ``jobs``, so the
    defaults are the command's); each timeout gives one row with both. Columns
    ``*_low``/``*_high`` are 95% intervals of the simulated values. ``loads`` and
    ``timeouts``: a number or a list of them.
    """
    service = as_service(service)
    loads = [loads] if isinstance(loads, numbers.Real) else list(loads)
    timeouts = [timeouts] if isinstance(timeouts, numbers.Real) else list(timeouts)
    if not timeouts or any(isinstance(t, bool) or not isinstance(t, numbers.Real)
                           or not t > 0 for t in timeouts):
        # str, not repr: a numpy number as its digits (np.float64(-1.0) as -1.0)
        raise ConfigError(f"timeouts {', '.join(map(str, timeouts))} must be positive "
                          "numbers, e.g. 2,5,10")
    timeouts = [float(t) for t in timeouts]
    if not loads:
        raise ConfigError("give at least one load")
    children = as_seed_sequence(seed).spawn(2 * len(loads))
    rows = []
    for j, load in enumerate(loads):
        run = simulate(ForkJoinModel(nodes, replicas, quorum, load=load,
                                     service=service),
                       jobs=jobs, seed=children[2 * j], engine="fast", progress=False)
        direct = run.sojourns
        model = model_distribution(nodes, replicas, quorum, load, service, basic,
                                   jobs=basic_jobs or jobs, seed=children[2 * j + 1],
                                   grid_end=max(max(timeouts), float(direct.max())))
        for t in timeouts:
            sim = simulated_timeout(direct, t)
            predicted = model.timeout(t)
            rows.append(dict(
                nodes=nodes, replicas=replicas, quorum=quorum, load=load, timeout=t,
                basic=basic,
                model_availability=predicted.availability,
                sim_availability=sim.availability.mean,
                sim_availability_low=sim.availability.low,
                sim_availability_high=sim.availability.high,
                model_answered_mean=predicted.answered_mean,
                sim_answered_mean=sim.answered_mean.mean,
                sim_answered_mean_low=sim.answered_mean.low,
                sim_answered_mean_high=sim.answered_mean.high,
                model_waiting_mean=predicted.waiting_mean,
                sim_waiting_mean=sim.waiting_mean.mean,
                sim_waiting_mean_low=sim.waiting_mean.low,
                sim_waiting_mean_high=sim.waiting_mean.high,
                # The direct run's doubts (correlated batches, jobs it would need).
                sim_warnings="; ".join(run.warnings)))
    return rows
