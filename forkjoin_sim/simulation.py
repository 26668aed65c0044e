"""``simulate``: run a model on an engine and summarise the steady state.

A model is anything with a ``system`` (`forkjoin_sim.system.System`) and an
``arrival_process`` (`forkjoin_sim.arrivals`): the plain queue `ForkJoinModel`, a
`Workload` of several job classes, or your own. The run itself is
`forkjoin_sim.run.simulate_system`; this module turns its output into one result
type, `SimulationResult`.
"""

from __future__ import annotations

import dataclasses
import math
import time

import numpy as np

from forkjoin_sim.errors import ConfigError
from forkjoin_sim.run import BLOCK_JOBS, simulate_system  # noqa: F401  (BLOCK_JOBS: public name)
from forkjoin_sim.measure.result import SimulationResult, run_notes
from forkjoin_sim.system import open_load

#: ``jobs="auto"``: the first run's length, the longest run, and the interval aimed at.
AUTO_FIRST_JOBS = 200_000
AUTO_MAX_JOBS = 50_000_000
AUTO_RELATIVE_HALF_WIDTH = 0.01
#: Relative half-width of the mean's 95% interval above which a run warns that it
#: is too short to rely on, with the jobs a +-1% interval needs (`needed_jobs`).
WIDE_INTERVAL = 0.10


#: Jobs per closed-loop client a run needs at least (each client's first jobs start
#: from an empty system).
CLIENT_JOBS = 10


#: Expected measured jobs of the rarest class below which a multi-class run is refused
#: before it starts (its summary needs at least 2, and an interval many more).
CLASS_JOBS = 10
#: Most jobs any refusal asks a run to make (for its rarest class, its percentile
#: sections, its rarer operation): past it the class is too rare to measure, and a
#: larger share is the fix, not a longer run.
MOST_JOBS = 10 ** 12
#: Runs estimated to take longer show a progress bar when ``progress`` is None.
LONG_RUN_SECONDS = 10.0

#: ``engine=None``: runs of fewer jobs take the fast engine. Measured (BENCHMARKS.md,
#: "Default engine"): below about a million jobs the fused kernel's start-up (loading
#: its compiled code, starting threads) costs as much as it saves, and the fast engine
#: keeps exact order statistics for free.
AUTO_FUSED_JOBS = 1_000_000
#: ``engine=None`` on the fused kernel: independent replications, a fixed number so
#: that the numbers never depend on the machine's cores (they run on every core).
AUTO_REPLICATIONS = 8


def choose_engine(model, jobs, seed=0, warmup=0.1) -> tuple[str, str]:
    """The engine ``simulate(engine=None)`` runs ``model`` on, and why.

    The fused kernel where the model is in it and the run is long enough to repay
    its start-up (`AUTO_FUSED_JOBS`); otherwise the fast engine (exact order
    statistics); the SimPy engine for purging, which only it models.
    """
    if model.system.purging:
        return "simpy", "purging is modelled by the SimPy engine only"
    if warmup == "auto":
        return "fast", "warm-up 'auto' (MSER-5) needs every job, which the fast engine keeps"
    if jobs == "auto":
        return "fast", "jobs 'auto' starts from short runs, which the fast engine starts sooner"
    if isinstance(jobs, (int, np.integer)) and jobs < AUTO_FUSED_JOBS:
        return "fast", (f"fewer than {AUTO_FUSED_JOBS:,} jobs: the fast engine starts "
                        "sooner than the fused one and keeps exact percentiles")
    from forkjoin_sim.engines.fused.engine import fused_refusal

    refusal = fused_refusal(model, seed)
    if refusal is not None:
        why = refusal.split("; use engine")[0]
        return "fast", f"not in the fused kernel ({why})"
    return "fused", (f"the model is in the fused kernel and {int(jobs):,} jobs repay its "
                     "start-up; runs on every core (--engine fast for exact percentiles)")


def check_clock_of(model, jobs: int) -> None:
    """Refuse an open run of ``jobs`` jobs of ``model`` whose clock would end too far
    out to resolve its service times (`forkjoin_sim.arrivals._checks.check_clock`)."""
    rate = getattr(model.arrival_process, "rate", None)
    if getattr(model.arrival_process, "clients", None) is None and rate is not None:
        from forkjoin_sim.arrivals._checks import check_clock

        check_clock(rate, jobs, min(c.mean_service for c in model.system.classes))


def check_jobs_per_client(model, jobs) -> None:
    """Refuse a closed-loop run of ``jobs`` jobs in which a client sends fewer than
    `CLIENT_JOBS`: too few for a steady state."""
    clients = getattr(model.arrival_process, "clients", None)
    if clients is not None and isinstance(jobs, (int, np.integer)) and \
            jobs < CLIENT_JOBS * clients:
        raise ConfigError(f"{clients:,} clients and {jobs:,} jobs: each client would "
                          f"send fewer than {CLIENT_JOBS} jobs, too few for a steady "
                          f"state; run at least {CLIENT_JOBS * clients:,} jobs or use "
                          "fewer clients")


def simulate(model, jobs: int | str = 200_000, seed=0, engine: str | None = None,
             warmup: float | str = 0.1, sample_every: int = 1,
             progress: bool | None = None, replications: int | None = None,
             workers: int | None = None) -> SimulationResult:
    """Simulate ``jobs`` jobs of ``model`` and summarise the steady state.

    The mean's interval is the batch-means one, its lower end clipped at 0 (a mean
    of sojourn times is not negative). The result warns when the interval is wider
    than +-`WIDE_INTERVAL` of the mean, or the batch statistics doubt it, saying how
    many jobs a +-1% interval needs; and when a node was measured busy longer than
    the run (under open arrivals, judged on the configured load).

    Parameters
    ----------
    model : ForkJoinModel, Workload, or anything with ``system`` and
        ``arrival_process``
    jobs : int or "auto"
        Jobs simulated, warm-up included. ``"auto"`` runs 200,000 jobs, and if the
        mean's interval is wider than +-1% or the run shows convergence warnings,
        runs again with the length `forkjoin_sim.measure.convergence.needed_jobs` estimates
        (at most 50 million jobs; twice at most).
    seed : int or numpy.random.SeedSequence
        The run is a pure function of (model, jobs, seed, warmup, sample_every,
        engine): ``fast`` and ``simpy`` give the same numbers; ``fused`` draws its own
        (xoshiro256** streams), so it agrees with them statistically, not number for
        number.
    engine : None, "auto", "fast", "fused" or "simpy"
        None or ``"auto"`` (the default): `choose_engine` picks one and the result
        says which and why (``engine_reason``). ``fast`` (numba Lindley recursion over drawn blocks, keeps every measured
        sojourn), ``fused`` (drawn and measured inside one compiled loop: constant
        memory, several cores, percentiles from a histogram within 0.39% of the
        exact order statistic) or ``simpy`` (event-level reference, needed for
        purging).
    warmup : float or "auto"
        Fraction of jobs discarded as warm-up, or "auto" for MSER-5.
    sample_every : int
        Keep every s-th job after warm-up (the paper keeps 10%: ``sample_every=10``).
    progress : bool or None
        Show a progress bar on stderr; None (the default) shows one when the run is
        estimated to take more than `LONG_RUN_SECONDS` (`estimated_seconds`). Runs
        estimated at more than a day (`MAX_RUN_SECONDS`) are refused before they
        start.
    replications, workers : int
        ``fused`` only: independent replications of ``jobs // replications`` jobs
        each (seed children), run on ``workers`` threads (default: every core). The
        numbers depend on ``replications``, never on ``workers``. None: 1, or
        `AUTO_REPLICATIONS` when the default engine is the fused one.
    """
    if not (hasattr(model, "system") and hasattr(model, "arrival_process")):
        raise ConfigError(f"cannot simulate a {type(model).__name__}; give a "
                          "ForkJoinModel or a Workload")
    from forkjoin_sim.run import check_run

    if engine is not None and not isinstance(engine, str):
        raise ConfigError(f"engine={engine!r}; use 'auto', 'fast', 'fused' or 'simpy'")
    reason = ""
    if engine is None or engine == "auto":
        engine, reason = choose_engine(model, jobs, seed, warmup)
        if replications is None and engine == "fused":
            replications = AUTO_REPLICATIONS
    if replications is None:
        replications = 1
    from forkjoin_sim.randomness.streams import as_seed_sequence

    as_seed_sequence(seed)  # every engine takes the same seeds (the fused one, too)
    if jobs != "auto":
        jobs = check_run(jobs, engine)
        if isinstance(replications, (int, np.integer)) and not isinstance(
                replications, bool) and replications >= 1 and jobs // replications < 2:
            raise ConfigError(f"{replications:,} replications of {jobs:,} jobs leave fewer "
                              "than 2 jobs each; run more jobs or fewer replications")
        if engine != "fused":
            from forkjoin_sim.checks import check_jobs_fit

            # the fast and SimPy engines keep every measured job; the fused one streams
            check_jobs_fit(jobs, "jobs", runs=1 if engine == "fast" else 20,
                           block_bytes=_block_bytes(model))
    check_jobs_per_client(model, jobs)
    classes = model.system.classes
    if len(classes) > 1 and isinstance(jobs, (int, np.integer)) and \
            isinstance(warmup, float) and isinstance(sample_every, int) and sample_every > 0:
        measured = jobs * (1 - warmup) / sample_every
        rarest = min(classes, key=lambda c: c.fraction)
        if measured * rarest.fraction < CLASS_JOBS:
            needed = CLASS_JOBS / ((1 - warmup) / sample_every * rarest.fraction)
            gets = (f"class {rarest.name!r} (fraction {rarest.fraction:g}) would get "
                    f"about {measured * rarest.fraction:.0f} measured jobs of "
                    f"{int(jobs):,}")
            if not needed <= MOST_JOBS:
                about = f" (about {needed:.3g} jobs)" if math.isfinite(needed) else ""
                raise ConfigError(f"{gets}, and no run is long enough for it{about}; "
                                  "give the class a larger fraction")
            raise ConfigError(f"{gets}; run at least {math.ceil(needed):,} jobs")
    first_run = AUTO_FIRST_JOBS if jobs == "auto" else int(jobs)
    check_clock_of(model, first_run)
    from forkjoin_sim.run import check_work, tasks_per_job

    seconds = check_work(first_run, tasks_per_job(model.system), engine,
                         _threads(engine, workers),
                         "" if engine == "fused" else "engine fused")
    if progress is None:
        progress = seconds > LONG_RUN_SECONDS
    if jobs == "auto":
        result = _simulate_auto(model, seed, engine, warmup, sample_every, progress,
                                replications, workers)
        return _finished(model, dataclasses.replace(result, engine_reason=reason))
    result = _simulate(model, jobs, seed, engine, warmup, sample_every, progress,
                       replications, workers)
    result = dataclasses.replace(result, engine_reason=reason)
    return _finished(model, result)


def _finished(model, result: SimulationResult) -> SimulationResult:
    """``result`` with its notes on precision, and its intervals of mean sojourn times
    clipped at 0."""
    wide = _precision_notes(result)
    return dataclasses.replace(
        result, notes=result.notes + wide, width_notes=wide,
        summary=_clipped(result.summary),
        classes={name: _clipped(summary) for name, summary in result.classes.items()})


def relative_half_width(summary) -> float:
    """Half the width of ``summary``'s interval of the mean, relative to the mean
    (NaN when the mean is not positive)."""
    if not summary.mean > 0:
        return math.nan
    return (summary.ci_high - summary.ci_low) / 2 / summary.mean


def _precision_notes(result: SimulationResult) -> tuple[str, ...]:
    """How many jobs a +-1% interval needs, when the run doubts its own interval
    (batch-means or MSER-5 warnings) or the interval is wider than `WIDE_INTERVAL`:
    the convergence notes that do not doubt the interval (those that do are the
    summary's warnings, already the result's)."""
    summary = result.summary
    if not summary.warnings and not relative_half_width(summary) > WIDE_INTERVAL:
        return ()
    from forkjoin_sim.measure.convergence import classified_notes

    return tuple(note.text for note in classified_notes(summary, result.jobs)
                 if not note.doubt)


def _clipped(summary):
    """``summary`` with its interval's lower end raised to 0 where it is below: the
    batch-means interval is symmetric, but a mean of sojourn times, which are all
    positive, is not negative."""
    if not summary.ci_low < 0:
        return summary
    return dataclasses.replace(summary, ci_low=0.0)


def _block_bytes(model) -> float:
    """Memory of one block of ``model``'s path while it runs."""
    from forkjoin_sim.run import BYTES_PER_TASK, block_jobs, tasks_per_job

    width = tasks_per_job(model.system, widest=True)
    return float(block_jobs(width)) * width * BYTES_PER_TASK


def estimated_seconds(model, jobs: int, engine: str = "fast",
                      workers: int | None = None) -> float:
    """A rough upper estimate of the seconds ``simulate`` needs for ``jobs`` jobs of
    ``model`` (`forkjoin_sim.run.estimated_seconds`)."""
    from forkjoin_sim import run

    return run.estimated_seconds(jobs, run.tasks_per_job(model.system), engine,
                                 _threads(engine, workers))


def _threads(engine: str, workers: int | None) -> int:
    import os

    if engine != "fused":
        return 1
    return workers if isinstance(workers, int) and workers >= 1 else os.cpu_count() or 1


def _simulate_auto(model, seed, engine, warmup, sample_every, progress, replications,
                   workers) -> SimulationResult:
    """``jobs="auto"``: rerun with the length the first run says it needs."""
    from forkjoin_sim.measure.convergence import needed_jobs

    jobs = AUTO_FIRST_JOBS
    started = time.perf_counter()  # the result's seconds are every round's
    for _ in range(3):
        result = _simulate(model, jobs, seed, engine, warmup, sample_every, progress,
                           replications, workers)
        need = needed_jobs(result.summary, jobs, AUTO_RELATIVE_HALF_WIDTH)
        settled = not result.summary.warnings and need <= jobs
        if settled or jobs >= AUTO_MAX_JOBS:
            break
        jobs = min(AUTO_MAX_JOBS, max(need, 2 * jobs))
    notes = result.notes
    if not settled:
        notes += (f"jobs=auto stopped at {jobs:,} jobs (the limit); the run asks for "
                  f"about {need:,}: pass a larger --jobs if you need a +-1% interval",)
    return dataclasses.replace(result, notes=notes,
                               seconds=time.perf_counter() - started)


def _simulate(model, jobs, seed, engine, warmup, sample_every, progress, replications,
              workers) -> SimulationResult:
    started = time.perf_counter()
    system = model.system
    if engine == "fused":
        from forkjoin_sim.engines.fused.engine import simulate_fused

        return simulate_fused(model, jobs, seed, warmup, sample_every, replications,
                              workers, started, progress)
    if replications != 1:
        raise ConfigError(f"{replications} replications are run by the fused engine "
                          "only; use engine fused, or 1 replication")
    recorder, totals, speeds = simulate_system(
        system, model.arrival_process, jobs, seed, engine, warmup, sample_every,
        progress, desc=getattr(model, "progress_label", "simulate"))
    measured = recorder.measured()
    classes = {}
    if len(system.classes) > 1:
        for index, job_class in enumerate(system.classes):
            count = int(np.count_nonzero(measured["labels"] == index))
            if count < 2:
                raise ConfigError(f"class {job_class.name!r} has only {count} measured "
                                  "job(s); run more jobs or raise its fraction")
            classes[job_class.name] = recorder.summary(label=index)
    utilisation = totals.utilisation()
    return SimulationResult(model=model, engine=engine, jobs=int(jobs),
                            seed=seed if isinstance(seed, (int, np.integer)) else -1,
                            sojourns=measured["values"], summary=recorder.summary(),
                            utilisation=utilisation,
                            seconds=time.perf_counter() - started,
                            labels=measured["labels"], classes=classes,
                            throughput=recorder.throughput(), speeds=speeds,
                            notes=run_notes(utilisation, system, open_load(model),
                                            int(jobs)))
