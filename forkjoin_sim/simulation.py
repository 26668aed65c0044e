"""``simulate``: run a model on an engine and summarise the steady-state sojourns."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from tqdm.auto import tqdm

from .engines import ENGINES
from .errors import ConfigError
from .model import ForkJoinModel
from .samplepath import PathSampler
from .statistics import SojournRecorder, Summary

#: Jobs per block of the fast engine: large enough to amortise numpy calls, small
#: enough to keep memory flat (about 50 MB at r = 9). Part of the run's definition:
#: results do not depend on it beyond floating-point rounding of the arrival clock.
BLOCK_JOBS = 1 << 17


@dataclass(frozen=True)
class SimulationResult:
    """The outcome of one simulation run.

    Attributes
    ----------
    model : ForkJoinModel
    engine, jobs, seed : the run's configuration
    sojourns : the measured sojourn times (after warm-up, every s-th job), in order
    summary : mean with batch-means confidence interval, percentiles
    utilisation : per-node busy fraction (None under purging, where cancelled
        partial service is not tracked)
    seconds : wall-clock time of the run
    """

    model: ForkJoinModel
    engine: str
    jobs: int
    seed: int
    sojourns: np.ndarray
    summary: Summary
    utilisation: np.ndarray | None
    seconds: float

    @property
    def mean(self) -> float:
        return self.summary.mean

    @property
    def ci(self) -> tuple[float, float]:
        return (self.summary.ci_low, self.summary.ci_high)

    def to_dict(self) -> dict:
        """Flat, JSON-ready statistics (the ``simulate --json`` object)."""
        out = dict(self.summary.to_dict())
        out.update(engine=self.engine, seconds=round(self.seconds, 6), jobs=self.jobs,
                   seed=self.seed, nodes=self.model.nodes, replicas=self.model.replicas,
                   quorum=self.model.quorum, rho=self.model.load,
                   per_node_load=self.model.node_utilisation)
        if self.utilisation is not None:
            out["utilisation_mean"] = float(np.mean(self.utilisation))
        return out

    def report(self) -> str:
        s = self.summary
        lines = [self.model.describe(),
                 f"jobs simulated {self.jobs:,}, measured {s.jobs_measured:,} "
                 f"({self.engine} engine, {self.seconds:.2f} s)",
                 f"mean sojourn  {s.mean:.6g}  95% CI [{s.ci_low:.6g}, {s.ci_high:.6g}]",
                 f"percentiles   p50 {s.p50:.4g}  p90 {s.p90:.4g}  p95 {s.p95:.4g}  "
                 f"p99 {s.p99:.4g}  p99.9 {s.p999:.4g}"]
        if self.utilisation is not None:
            lines.append(f"node utilisation  mean {np.mean(self.utilisation):.4f}  "
                         f"(min {np.min(self.utilisation):.4f}, "
                         f"max {np.max(self.utilisation):.4f})")
        return "\n".join(lines)


def _busy_time(path, node_count: int) -> np.ndarray:
    """Service time each node gives the path's tasks (all of it: no purging)."""
    return np.bincount(path.nodes.ravel(), weights=path.service.ravel(),
                       minlength=node_count)


def simulate(model: ForkJoinModel, jobs: int = 200_000, seed=0, engine: str = "fast",
             warmup: float | str = 0.1, sample_every: int = 1,
             progress: bool = False) -> SimulationResult:
    """Simulate ``jobs`` jobs of ``model`` and summarise the steady state.

    Parameters
    ----------
    model : ForkJoinModel
    jobs : int
        Jobs simulated, warm-up included.
    seed : int or numpy.random.SeedSequence
        The run is a pure function of (model, jobs, seed, warmup, sample_every);
        the engine does not change the numbers.
    engine : "fast" or "simpy"
        ``fast`` (numba Lindley recursion, constant memory) or ``simpy`` (event-level
        reference, needed for purging).
    warmup : float or "auto"
        Fraction of jobs discarded as warm-up, or "auto" for MSER-5.
    sample_every : int
        Keep every s-th job after warm-up (the paper keeps 10%: ``sample_every=10``).
    progress : bool
        Show a progress bar on stderr.
    """
    if engine not in ENGINES:
        raise ConfigError(f"engine {engine!r} is unknown; use one of {', '.join(ENGINES)}")
    if model.purging and engine != "simpy":
        raise ConfigError("purging is modelled by the SimPy engine only; "
                          "use engine='simpy' (--engine simpy)")
    if not isinstance(jobs, (int, np.integer)) or jobs < 2:
        raise ConfigError(f"jobs={jobs!r} must be a whole number >= 2")
    if not isinstance(sample_every, (int, np.integer)) or sample_every < 1:
        raise ConfigError(f"sample_every={sample_every!r} must be a whole number >= 1")
    if warmup != "auto" and not (isinstance(warmup, (int, float)) and 0 <= warmup < 1):
        raise ConfigError(f"warmup={warmup!r} must be a fraction in [0, 1) or 'auto'")

    started = time.perf_counter()
    sampler = PathSampler(model, seed)
    recorder = SojournRecorder(jobs, warmup=warmup, sample_every=sample_every)
    busy = np.zeros(model.nodes)
    if engine == "simpy":
        # One block: the event engine cannot carry queued work across blocks.
        path = sampler.draw(jobs)
        runner = ENGINES[engine](model.nodes, purging=model.purging)
        _, sojourns = runner.run(path)
        recorder.add(sojourns)
        busy += _busy_time(path, model.nodes)
        horizon = float(path.arrivals[-1])
    else:
        runner = ENGINES[engine](model.nodes)
        with tqdm(total=jobs, disable=not progress, unit="job", unit_scale=True,
                  desc=f"simulate {model.nodes},{model.replicas},{model.quorum}",
                  leave=False) as bar:
            done = 0
            while done < jobs:
                path = sampler.draw(min(BLOCK_JOBS, jobs - done))
                _, sojourns = runner.run(path)
                recorder.add(sojourns)
                busy += _busy_time(path, model.nodes)
                done += path.jobs
                bar.update(path.jobs)
            horizon = float(path.arrivals[-1])
    summary = recorder.summary()
    kept, _ = recorder.finish()
    return SimulationResult(model=model, engine=engine, jobs=int(jobs),
                            seed=seed if isinstance(seed, int) else -1,
                            sojourns=kept, summary=summary,
                            utilisation=None if model.purging else busy / horizon,
                            seconds=time.perf_counter() - started)
