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
from dataclasses import dataclass, field

import numpy as np

from .arrivals import is_closed
from .errors import ConfigError
from .run import BLOCK_JOBS, simulate_system  # noqa: F401  (BLOCK_JOBS: public name)
from .statistics import Interval, Summary


@dataclass(frozen=True)
class SimulationResult:
    """The outcome of one simulation run.

    Attributes
    ----------
    model : the model simulated (`ForkJoinModel`, `Workload` ...)
    engine, jobs, seed : the run's configuration
    sojourns : the measured sojourn times (after warm-up, every s-th job), in order
    summary : mean with batch-means confidence interval, percentiles (all jobs)
    utilisation : per-node busy fraction: service handed to the node over the time
        the jobs were sent (docs/model.md, section 6); None under purging, where
        cancelled partial service is not tracked
    seconds : wall-clock time of the run
    labels : class index of each measured job (None for one class)
    classes : class name -> `Summary` of that class's measured jobs (several classes)
    throughput : jobs per unit time over the measured jobs, with its interval
    speeds : this run's node speed factors
    """

    model: object
    engine: str
    jobs: int
    seed: int
    sojourns: np.ndarray
    summary: Summary
    utilisation: np.ndarray | None
    seconds: float
    labels: np.ndarray | None = None
    classes: dict = field(default_factory=dict)
    throughput: Interval | None = None
    speeds: np.ndarray | None = None
    notes: tuple[str, ...] = ()

    @property
    def warnings(self) -> tuple[str, ...]:
        """Doubts about the run: the summary's (warm-up, batches) and the run's own."""
        return tuple(self.summary.warnings) + tuple(self.notes)

    @property
    def mean(self) -> float:
        return self.summary.mean

    @property
    def ci(self) -> tuple[float, float]:
        return (self.summary.ci_low, self.summary.ci_high)

    # A multi-class run's names, kept for workload code.
    @property
    def summaries(self) -> dict:
        return self.classes

    @property
    def overall(self) -> Summary:
        return self.summary

    @property
    def workload(self):
        return self.model

    def class_sojourns(self, name: str) -> np.ndarray:
        """Measured sojourns of the class called ``name``, in arrival order."""
        index = self.model.system.index(name)
        if self.labels is None:
            return self.sojourns
        return self.sojourns[self.labels == index]

    def response_time_law(self) -> dict | None:
        """Closed loop: the two sides of R = N/X - Z (Little's law on the whole loop)
        with the mean response R measured directly, X the measured throughput."""
        process = self.model.arrival_process
        if not is_closed(process) or self.throughput is None:
            return None
        x = self.throughput
        return {"measured_mean": self.mean,
                "law_mean": process.clients / x.mean - process.think,
                "law_ci_low": process.clients / x.high - process.think,
                "law_ci_high": process.clients / x.low - process.think}

    def to_dict(self) -> dict:
        """Flat, JSON-ready statistics (the ``simulate --json`` object)."""
        out = dict(self.summary.to_dict())
        out["warnings"] = list(self.warnings)
        out.update(engine=self.engine, seconds=round(self.seconds, 6), jobs=self.jobs,
                   seed=self.seed)
        out.update(self.model.summary_fields())
        if self.throughput is not None:
            out.update(throughput=self.throughput.mean,
                       throughput_ci_low=self.throughput.low,
                       throughput_ci_high=self.throughput.high)
        if self.utilisation is not None:
            out["utilisation_mean"] = float(np.mean(self.utilisation))
            out["utilisation_max"] = float(np.max(self.utilisation))
        if self.speeds is not None and np.any(self.speeds != 1):
            out["speeds"] = [float(s) for s in self.speeds]
        if self.classes:
            out["classes"] = {name: s.to_dict() for name, s in self.classes.items()}
        return out

    def report(self) -> str:
        s = self.summary
        lines = [self.model.describe(),
                 f"jobs simulated {self.jobs:,}, measured {s.jobs_measured:,} "
                 f"({self.engine} engine, {self.seconds:.2f} s)",
                 f"mean sojourn  {s.mean:.6g}  95% CI [{s.ci_low:.6g}, {s.ci_high:.6g}]",
                 f"percentiles   p50 {s.p50:.4g}  p90 {s.p90:.4g}  p95 {s.p95:.4g}  "
                 f"p99 {s.p99:.4g}  p99.9 {s.p999:.4g}"]
        for name, c in self.classes.items():
            lines.append(f"{name:>10}: n={c.jobs_measured:,} mean {c.mean:.5g} "
                         f"[{c.ci_low:.5g}, {c.ci_high:.5g}]  p50 {c.p50:.4g}  "
                         f"p95 {c.p95:.4g}  p99 {c.p99:.4g}")
        if self.throughput is not None:
            x = self.throughput
            lines.append(f"throughput    {x.mean:.6g} jobs per unit time  95% CI "
                         f"[{x.low:.6g}, {x.high:.6g}]")
        law = self.response_time_law()
        if law is not None:
            lines.append(f"response time law  N/X - Z = {law['law_mean']:.6g}  "
                         f"(measured mean {law['measured_mean']:.6g})")
        if self.utilisation is not None and self.utilisation.ndim == 2:
            names = self.model.system.node_model.stage_names
            for stage, name in enumerate(names):
                busy = self.utilisation[:, stage]
                lines.append(f"{name} stage utilisation  mean {busy.mean():.4f}  "
                             f"(min {busy.min():.4f}, max {busy.max():.4f})")
        elif self.utilisation is not None:
            lines.append(f"node utilisation  mean {np.mean(self.utilisation):.4f}  "
                         f"(min {np.min(self.utilisation):.4f}, "
                         f"max {np.max(self.utilisation):.4f})")
        for note in self.warnings:
            lines.append(f"warning: {note}")
        return "\n".join(lines)


#: ``jobs="auto"``: the first run's length, the longest run, and the interval aimed at.
AUTO_FIRST_JOBS = 200_000
AUTO_MAX_JOBS = 50_000_000
AUTO_RELATIVE_HALF_WIDTH = 0.01


#: Jobs per closed-loop client a run needs at least (each client's first jobs start
#: from an empty system).
CLIENT_JOBS = 10
#: Expected measured jobs of the rarest class below which a multi-class run is refused
#: before it starts (its summary needs at least 2, and an interval many more).
CLASS_JOBS = 10
#: Runs estimated to take longer show a progress bar when ``progress`` is None.
LONG_RUN_SECONDS = 10.0


def check_clock_of(model, jobs: int) -> None:
    """Refuse an open run of ``jobs`` jobs of ``model`` whose clock would end too far
    out to resolve its service times (`forkjoin_sim.arrivals._checks.check_clock`)."""
    rate = getattr(model.arrival_process, "rate", None)
    if getattr(model.arrival_process, "clients", None) is None and rate is not None:
        from .arrivals._checks import check_clock

        check_clock(rate, jobs, min(c.mean_service for c in model.system.classes))


def simulate(model, jobs: int | str = 200_000, seed=0, engine: str = "fast",
             warmup: float | str = 0.1, sample_every: int = 1,
             progress: bool | None = None, replications: int = 1,
             workers: int | None = None) -> SimulationResult:
    """Simulate ``jobs`` jobs of ``model`` and summarise the steady state.

    Parameters
    ----------
    model : ForkJoinModel, Workload, or anything with ``system`` and
        ``arrival_process``
    jobs : int or "auto"
        Jobs simulated, warm-up included. ``"auto"`` runs 200,000 jobs, and if the
        mean's interval is wider than +-1% or the run shows convergence warnings,
        runs again with the length `forkjoin_sim.convergence.needed_jobs` estimates
        (at most 50 million jobs; twice at most).
    seed : int or numpy.random.SeedSequence
        The run is a pure function of (model, jobs, seed, warmup, sample_every,
        engine): ``fast`` and ``simpy`` give the same numbers; ``fused`` draws its own
        (xoshiro256** streams), so it agrees with them statistically, not number for
        number.
    engine : "fast", "fused" or "simpy"
        ``fast`` (numba Lindley recursion over drawn blocks, keeps every measured
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
        numbers depend on ``replications``, never on ``workers``.
    """
    if not (hasattr(model, "system") and hasattr(model, "arrival_process")):
        raise ConfigError(f"cannot simulate a {type(model).__name__}; give a "
                          "ForkJoinModel or a Workload")
    from .run import check_run

    if not isinstance(engine, str):
        raise ConfigError(f"engine={engine!r}; use 'fast', 'fused' or 'simpy'")
    from .streams import as_seed_sequence

    as_seed_sequence(seed)  # every engine takes the same seeds (the fused one, too)
    if jobs != "auto":
        jobs = check_run(jobs, engine)
        if isinstance(replications, (int, np.integer)) and not isinstance(
                replications, bool) and replications >= 1 and jobs // replications < 2:
            raise ConfigError(f"{replications:,} replications of {jobs:,} jobs leave fewer "
                              "than 2 jobs each; run more jobs or fewer replications")
        if engine != "fused":
            from .options import check_jobs_fit

            # the fast and SimPy engines keep every measured job; the fused one streams
            check_jobs_fit(jobs, "jobs", runs=1 if engine == "fast" else 20,
                           block_bytes=_block_bytes(model))
    clients = getattr(model.arrival_process, "clients", None)
    if clients is not None and isinstance(jobs, (int, np.integer)) and \
            jobs < CLIENT_JOBS * clients:
        raise ConfigError(f"{clients:,} clients and {jobs:,} jobs: each client would "
                          f"send fewer than {CLIENT_JOBS} jobs, too few for a steady "
                          f"state; run at least {CLIENT_JOBS * clients:,} jobs or use "
                          "fewer clients")
    classes = model.system.classes
    if len(classes) > 1 and isinstance(jobs, (int, np.integer)) and \
            isinstance(warmup, float) and isinstance(sample_every, int) and sample_every > 0:
        measured = jobs * (1 - warmup) / sample_every
        rarest = min(classes, key=lambda c: c.fraction)
        if measured * rarest.fraction < CLASS_JOBS:
            raise ConfigError(f"class {rarest.name!r} (fraction {rarest.fraction:g}) would "
                              f"get about {measured * rarest.fraction:.0f} measured jobs "
                              f"of {int(jobs):,}; run at least "
                              f"{math.ceil(CLASS_JOBS * jobs / (measured * rarest.fraction)):,}"
                              " jobs")
    first_run = AUTO_FIRST_JOBS if jobs == "auto" else int(jobs)
    check_clock_of(model, first_run)
    from .run import check_work, tasks_per_job

    seconds = check_work(first_run, tasks_per_job(model.system), engine,
                         _threads(engine, workers),
                         "" if engine == "fused" else "engine='fused' (--engine fused)")
    if progress is None:
        progress = seconds > LONG_RUN_SECONDS
    if jobs == "auto":
        return _simulate_auto(model, seed, engine, warmup, sample_every, progress,
                              replications, workers)
    result = _simulate(model, jobs, seed, engine, warmup, sample_every, progress,
                       replications, workers)
    result = dataclasses.replace(result, notes=result.notes + _law_notes(model))
    if result.summary.warnings:
        # A run that doubts its own interval says how long it should have been.
        from .convergence import convergence_notes

        extra = convergence_notes(result.summary, result.jobs)[len(result.summary.warnings):]
        result = dataclasses.replace(result, notes=result.notes + extra)
    return result


def _block_bytes(model) -> float:
    """Memory of one block of ``model``'s path while it runs."""
    from .run import BYTES_PER_TASK, block_jobs, tasks_per_job

    width = tasks_per_job(model.system, widest=True)
    return float(block_jobs(width)) * width * BYTES_PER_TASK


def estimated_seconds(model, jobs: int, engine: str = "fast",
                      workers: int | None = None) -> float:
    """A rough upper estimate of the seconds ``simulate`` needs for ``jobs`` jobs of
    ``model`` (`forkjoin_sim.run.estimated_seconds`)."""
    from . import run

    return run.estimated_seconds(jobs, run.tasks_per_job(model.system), engine,
                                 _threads(engine, workers))


def _threads(engine: str, workers: int | None) -> int:
    import os

    if engine != "fused":
        return 1
    return workers if isinstance(workers, int) and workers >= 1 else os.cpu_count() or 1


def _law_notes(model) -> tuple[str, ...]:
    """Warnings about the model's service laws (heavy tails)."""
    from .system import heavy_tail_note

    notes = []
    for c in model.system.classes:
        for law in set(map(id, c.task_services)):
            dist = next(d for d in c.task_services if id(d) == law)
            note = heavy_tail_note(dist, f"the service law of {c.name!r}")
            if note:
                notes.append(note)
    return tuple(notes)


def _simulate_auto(model, seed, engine, warmup, sample_every, progress, replications,
                   workers) -> SimulationResult:
    """``jobs="auto"``: rerun with the length the first run says it needs."""
    from .convergence import needed_jobs

    jobs = AUTO_FIRST_JOBS
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
    return dataclasses.replace(result, notes=notes)


def _simulate(model, jobs, seed, engine, warmup, sample_every, progress, replications,
              workers) -> SimulationResult:
    started = time.perf_counter()
    system = model.system
    if engine == "fused":
        from .engines.fused import simulate_fused

        return simulate_fused(model, jobs, seed, warmup, sample_every, replications,
                              workers, started, progress)
    if replications != 1:
        raise ConfigError("replications are run by the fused engine; use "
                          "engine='fused' (--engine fused) or replications=1")
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
                            notes=overload_notes(utilisation, system.classes))


#: Busy fraction above which a node is reported as overloaded. A stable node's
#: measured fraction exceeds 1 only by the work still queued at the end of the run.
OVERLOAD_ALARM = 1.05


def overload_notes(utilisation: np.ndarray | None, classes=()) -> tuple[str, ...]:
    """A warning when a node was handed more work than it can do in the run's time.

    Under a closed loop this happens without any instability check failing: with
    quorum k < r a job does not wait for its slowest tasks, so clients can go on
    sending work to a slow node faster than it serves it, and its backlog grows for
    ever (non-purging). Such a run has no steady state at that node. When every
    class waits for all its tasks (k = r) no backlog can outgrow the clients' jobs:
    a value just above 1 at the bottleneck is the work still queued when the run
    stops (of order clients x service time over the run's length), not an overload.
    """
    if utilisation is None:
        return ()
    if classes and all(c.quorum == c.replicas for c in classes):
        return ()
    per_node = utilisation if utilisation.ndim == 1 else utilisation.max(axis=1)
    over = np.flatnonzero(per_node > OVERLOAD_ALARM)
    if over.size == 0:
        return ()
    nodes = ", ".join(f"{i} ({per_node[i]:.2f})" for i in over[:5])
    return (f"node(s) {nodes} received more work than they can serve (busy fraction "
            "> 1): their backlog grows without bound, so the run has no steady state "
            "there; jobs complete only because their quorum skips those nodes. Use "
            "purging, faster nodes, or fewer clients",)
