"""The run loop: the one place where a sample path meets an engine and a recorder.

Every simulation in the package (the plain queue, workloads, Cassandra at both
levels, the experiments in ``validation``) goes through `run_path`: draw a block of
the path, let the engine compute its completions, hand the per-job values to the
`~forkjoin_sim.measure.statistics.SojournRecorder` (which alone decides what is measured),
and account each node's busy time.
"""

from __future__ import annotations

import contextlib
import os
import sys
from dataclasses import dataclass
from typing import Callable

import numpy as np

from forkjoin_sim.arrivals import is_closed
from forkjoin_sim.engines import ENGINES
from forkjoin_sim.errors import ConfigError
from forkjoin_sim.randomness.samplepath import PathSampler
from forkjoin_sim.measure.statistics import SojournRecorder

#: Jobs per block of a block-wise engine: large enough to amortise numpy calls, small
#: enough to keep memory flat (about 50 MB at r = 9). Results do not depend on it
#: beyond floating-point rounding of the open-arrival clock.
BLOCK_JOBS = 1 << 17
#: Tasks per block at most: jobs of many tasks come in smaller blocks (at r = 1000 a
#: block of BLOCK_JOBS jobs would hold 1.3e8 tasks, several GB).
BLOCK_TASKS = 1 << 22
#: Bytes a block keeps per task while it runs (service, node, completion and the
#: engine's work arrays); measured about 40 at r = 1000.
BYTES_PER_TASK = 64
#: Seconds a progress bar waits before it first shows: a run that ends (or fails)
#: sooner leaves nothing on stderr but its result or its one error line.
PROGRESS_DELAY = 1.0
#: An environment variable: "1" draws progress bars where standard error is not a
#: terminal too (a log file, a pipe), which they otherwise leave alone.
PROGRESS_ENV = "FORKJOIN_SIM_PROGRESS"


def bar_shown() -> bool:
    """Whether a progress bar may draw on standard error: it exists (not pythonw, not
    closed) and is a terminal, whose line a bar redraws in place; in a log or a pipe
    each redraw would stay as clutter, unless `PROGRESS_ENV` is "1"."""
    if sys.stderr is None:
        return False
    if os.environ.get(PROGRESS_ENV) == "1":
        return True
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # a stand-in stream, or a closed one
        return False


#: Tasks per second and thread each engine manages at least on the machine of
#: BENCHMARKS.md (it measured 5-13 M for fast, 12-32 M per thread for fused, 70 k for
#: SimPy): the basis of the run-time estimate, deliberately on the slow side.
TASK_RATE = {"fast": 5e6, "fused": 1.2e7, "simpy": 5e4}
#: Runs estimated to take longer than a day of computing are refused.
MAX_RUN_SECONDS = 86_400.0


def estimated_seconds(jobs: int, tasks_per_job: float, engine: str = "fast",
                      threads: int = 1) -> float:
    """A rough, slow-side estimate of the seconds ``jobs`` jobs of ``tasks_per_job``
    tasks take on ``engine`` (`TASK_RATE`) with ``threads`` threads."""
    rate = TASK_RATE.get(engine, TASK_RATE["simpy"]) * max(threads, 1)
    return float(jobs) * tasks_per_job / rate


def check_work(jobs: int, tasks_per_job: float, engine: str = "fast",
               threads: int = 1, faster: str = "") -> float:
    """The `estimated_seconds` of a run, or ConfigError when that exceeds a day
    (``faster`` names a quicker way to run it, e.g. another engine)."""
    seconds = estimated_seconds(jobs, tasks_per_job, engine, threads)
    if seconds > MAX_RUN_SECONDS:
        faster = f", {faster}" if faster else ""
        raise ConfigError(
            f"{int(jobs):,} jobs of {tasks_per_job:.4g} tasks each is about "
            f"{jobs * tasks_per_job:.3g} tasks, roughly {seconds / 86_400:.3g} days on "
            f"the {engine} engine, more than the day this allows; run fewer jobs"
            f"{faster} or a smaller model (the statistics settle long before)")
    return seconds


@dataclass(frozen=True)
class RunTotals:
    """What a run accumulates besides the recorder: busy time per node, or per node
    and stage for staged nodes (None when purging, where cancelled partial service is
    not tracked), the time of the last arrival, and the threads of each stage."""

    busy: np.ndarray | None
    horizon: float
    threads: np.ndarray | None = None

    def utilisation(self) -> np.ndarray | None:
        """Busy fraction of each node (of each thread of each stage, staged nodes)."""
        if self.busy is None:
            return None
        if self.threads is None:
            return self.busy / self.horizon
        return self.busy / (self.horizon * self.threads[None, :])


def busy_time(path, node_count: int, stage_of: np.ndarray | None = None,
              stages: int = 1) -> np.ndarray:
    """Service time each node (and stage) gives the path's tasks (all of it)."""
    present = path.nodes >= 0
    if stage_of is None:
        return np.bincount(path.nodes[present], weights=path.service[present],
                           minlength=node_count)
    kinds = (path.kinds[present] if path.kinds is not None
             else np.zeros(int(present.sum()), dtype=np.int8))
    cell = path.nodes[present] * stages + stage_of[kinds]
    return np.bincount(cell, weights=path.service[present],
                       minlength=node_count * stages).reshape(node_count, stages)


#: Fewest jobs a run may have (a summary needs two measured values).
MIN_JOBS = 2


def check_run(jobs, engine: str | None = None, purging: bool = False) -> int:
    """``jobs`` as an int >= `MIN_JOBS`, and the engine name checked; ConfigError
    otherwise."""
    if engine is not None:
        if engine not in ENGINES and engine != "fused":
            raise ConfigError(f"engine {engine!r} is unknown; use one of "
                              f"{', '.join([*ENGINES, 'fused'])}")
        if purging and engine != "simpy":
            raise ConfigError("purging is modelled by the SimPy engine only; "
                              "use engine simpy")
    if isinstance(jobs, bool) or not isinstance(jobs, (int, np.integer)) or \
            jobs < MIN_JOBS:
        raise ConfigError(f"jobs={jobs!r} must be a whole number >= {MIN_JOBS}")
    return int(jobs)


def make_engine(name: str, system, sampler: PathSampler):
    """The engine ``name`` for ``system``, with the closed-loop clients' first release
    times when the sampler has them."""
    kwargs = {"initial_release": sampler.initial_release, "node": system.node}
    if name == "simpy":
        kwargs["purging"] = system.purging
    return ENGINES[name](system.nodes, **kwargs)


def block_jobs(width: int) -> int:
    """Jobs per block when each job has ``width`` tasks (at most `BLOCK_TASKS` tasks)."""
    return max(1, min(BLOCK_JOBS, BLOCK_TASKS // max(int(width), 1)))


def run_path(sampler, engine, jobs: int, recorder: SojournRecorder, node_count: int, *,
             observe: Callable | None = None, progress: bool = False,
             desc: str = "simulate", track_busy: bool = True,
             node=None, width: int = 1) -> RunTotals:
    """Run ``jobs`` jobs of ``sampler``'s path through ``engine`` into ``recorder``.

    ``sampler.draw(n)`` gives the next block (a `SamplePath`, or an object whose
    ``path`` is one); ``engine.run(block)`` gives per-task completions and per-job
    sojourns. ``observe(block, completions, sojourns)`` may turn them into the
    values recorded per job (default: the sojourns). Engines that cannot carry
    queued work across blocks (``blockwise = False``) get the whole run at once.
    ``width`` (tasks per job, at most) sets the block size (`block_jobs`).
    """
    size = block_jobs(width) if getattr(engine, "blockwise", True) else jobs
    from forkjoin_sim.nodes import is_plain

    staged = not is_plain(node)
    stage_of = node.stage_of if staged else None
    threads = node.stage_threads if staged else None
    busy = None
    if track_busy:
        busy = np.zeros((node_count, threads.size)) if staged else np.zeros(node_count)
    done = 0
    path = None
    with progress_bar(jobs, desc, "job", show=progress, unit_scale=True) as bar:
        while done < jobs:
            block = sampler.draw(min(size, jobs - done))
            path = getattr(block, "path", block)
            if not getattr(engine, "blockwise", True) and not isinstance(bar, _NoBar):
                # a whole-path engine reports its jobs as it goes (SimPy's events)
                engine.on_progress = bar.update
            completions, sojourns = engine.run(block)
            values = sojourns if observe is None else observe(block, completions,
                                                              sojourns)
            recorder.add(values, labels=path.labels, times=path.arrivals)
            if busy is not None:
                busy += busy_time(path, node_count, stage_of,
                                  1 if threads is None else threads.size)
            done += path.jobs
            bar.update(path.jobs - getattr(engine, "reported", 0))
    return RunTotals(busy, float(path.arrivals[-1]), threads)


def progress_bar(total: int, desc: str, unit: str, show: bool = True, **options):
    """The progress bar the project's long runs draw on stderr: ``total`` items of
    ``unit``, shown after `PROGRESS_DELAY` seconds and gone when done (tqdm, with its
    ``options`` such as ``unit_scale``); one that counts nothing when not ``show``n or
    where no bar may draw (`bar_shown`). tqdm is
    imported only when a bar may show (its import is felt in short runs). Its
    ``update(n)`` counts on."""
    if not show or not bar_shown():
        return contextlib.nullcontext(_NoBar())
    from tqdm.auto import tqdm

    return tqdm(total=total, unit=unit, desc=desc, delay=PROGRESS_DELAY, leave=False,
                **options)


class _NoBar:
    """Stands in for a progress bar that is not shown."""

    def update(self, count: int = 1) -> None:
        pass

    def set_description(self, text: str) -> None:
        pass


def simulate_system(system, arrivals, jobs: int, seed, engine: str = "fast",
                    warmup: float | str = 0.1, sample_every: int = 1,
                    progress: bool = False, desc: str = "simulate"):
    """Run a system under an arrival process; returns (recorder, totals, speeds)."""
    jobs = check_run(jobs, engine, system.purging)
    if not is_closed(arrivals):
        system.check_stable(arrivals.rate)
    sampler = PathSampler(system, arrivals, seed)
    runner = make_engine(engine, system, sampler)
    recorder = SojournRecorder(jobs, warmup=warmup, sample_every=sample_every,
                               labels=len(system.classes) > 1, times=True)
    recorder.check_enough()
    totals = run_path(sampler, runner, jobs, recorder, system.nodes, progress=progress,
                      desc=desc, track_busy=not system.purging, node=system.node,
                      width=tasks_per_job(system, widest=True))
    return recorder, totals, sampler.speeds


def tasks_per_job(system, widest: bool = False) -> float:
    """Tasks a job of ``system`` forks on average (``widest``: at most)."""
    if widest:
        return max(c.replicas for c in system.classes)
    return sum(c.fraction * c.replicas for c in system.classes)


def simulate_nested_basic(system, arrivals, sizes, jobs: int, seed,
                          warmup: float = 0.1) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Basic (i, i, i) queues for each ``i`` in ``sizes`` on common random numbers.

    One path of ``system`` (whose classes all fork onto every one of its nodes) is
    drawn, and the (i, i, i) queue runs on the first i tasks of each job, so every
    size sees the same arrivals and the same service times on its nodes: each is an
    exact sample of its own queue, and their errors largely cancel in Theorem 1's
    alternating sum. Returns ``{i: (measured sojourns, their class labels)}``.
    """
    from forkjoin_sim.engines import FastEngine
    from forkjoin_sim.randomness.samplepath import PathReplay, leading_columns

    jobs = check_run(jobs)
    path = PathSampler(system, arrivals, seed).draw(jobs)
    out = {}
    for i in sorted(set(sizes)):
        recorder = SojournRecorder(jobs, warmup=warmup, labels=True)
        run_path(PathReplay(leading_columns(path, i)), FastEngine(i), jobs, recorder, i,
                 track_busy=False, width=i)
        measured = recorder.measured()
        out[i] = (measured["values"], measured["labels"])
    return out
