"""The fused engine as ``simulate(..., engine="fused")`` sees it.

`forkjoin_sim.engines.fused.kernel` draws, queues and measures in one compiled
loop (xoshiro256** streams, constant memory, replications on threads). This module
maps a run-stack model (a `System` and an arrival process) onto the kernel's
`KernelModel`, and the kernel's `FusedResult` back onto the one result type,
`SimulationResult`. What the kernel does not model (staged or multi-thread nodes,
time outside the queues, purging, trace arrivals) is refused with a message that
names the fast engine.
"""

from __future__ import annotations

import math

import numpy as np

from forkjoin_sim.errors import ConfigError
from forkjoin_sim.engines.fused import kernel


def _unsupported(what: str) -> ConfigError:
    return ConfigError(f"{what} is not in the fused engine; use engine fast")


def kernel_model(system, arrivals, seed) -> kernel.KernelModel:
    """The kernel's description of ``system`` under ``arrivals`` (node speeds drawn
    for ``seed`` when they are stragglers)."""
    from forkjoin_sim.arrivals import ClosedLoop, Periodic, Poisson, Renewal
    from forkjoin_sim.nodes import is_plain
    from forkjoin_sim.placement import RandomPlacement, RingPlacement, get_placement
    from forkjoin_sim.laws.service import Deterministic

    if system.purging:
        raise ConfigError("purging is modelled by the SimPy engine only; use engine "
                          "simpy")
    if not is_plain(system.node):
        raise _unsupported("a node of several stages or threads")
    classes = []
    for c in system.classes:
        if c.overhead is not None:
            raise _unsupported(f"class {c.name!r}: time outside the queues (overhead)")
        placement = get_placement(c.placement if c.placement is not None
                                  else system.placement)
        if not isinstance(placement, (RandomPlacement, RingPlacement)):
            raise _unsupported(f"class {c.name!r}: placement {placement.name!r}")
        classes.append(kernel.JobClass(c.replicas, c.quorum, c.service, c.fraction,
                                       placement.name))
    speeds = tuple(float(s) for s in system.node_speeds(seed))
    if isinstance(arrivals, ClosedLoop):
        think = None
        if arrivals.think > 0:
            think = arrivals.think_law
            if think is None:
                from forkjoin_sim.laws.exponential import Exponential

                think = Exponential(arrivals.think)
            else:
                from forkjoin_sim.laws.service import rescale

                think = rescale(think, arrivals.think)
        return kernel.KernelModel(speeds, tuple(classes), clients=arrivals.clients,
                                  think=think)
    if type(arrivals) is Poisson:
        gaps = kernel.poisson(arrivals.rate)
    elif type(arrivals) is Periodic:
        gaps = kernel.renewal(Deterministic(1.0), arrivals.rate)
    elif isinstance(arrivals, Renewal):
        gaps = kernel.renewal(arrivals.law, arrivals.rate)
    else:
        raise _unsupported(f"{type(arrivals).__name__} arrivals")
    return kernel.KernelModel(speeds, tuple(classes), arrival=gaps)


def fused_refusal(model, seed) -> str | None:
    """Why the fused kernel cannot run ``model`` (its ConfigError's text), or None
    when it can: the model, its laws and its arrivals all map onto the kernel."""
    try:
        kernel._compile(kernel_model(model.system, model.arrival_process, seed))
    except ConfigError as exc:
        return str(exc)
    return None


def simulate_fused(model, jobs: int, seed, warmup, sample_every: int,
                   replications: int, workers: int | None, started: float,
                   progress: bool = False):
    """`simulate` on the fused engine: ``replications`` independent replications of
    ``jobs // replications`` jobs each, pooled."""
    import time

    from forkjoin_sim.run import check_run
    from forkjoin_sim.measure.result import SimulationResult, run_notes
    from forkjoin_sim.system import open_load
    from forkjoin_sim.measure.statistics import (DEFAULT_BATCHES, Interval, _check_sample_every,
                              _check_warmup, summary_from_batches, warmup_count)

    if (isinstance(replications, bool) or not isinstance(replications, (int, np.integer))
            or replications < 1):
        raise ConfigError(f"replications must be a whole number >= 1, got "
                          f"{replications!r}")
    if workers is None:
        workers = kernel_workers()
    if isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) \
            or workers < 1:
        raise ConfigError(f"workers must be a whole number >= 1, got {workers!r}")
    jobs = check_run(jobs)
    if _check_warmup(warmup) == "auto":
        raise ConfigError("the fused engine takes a warm-up fraction, not 'auto' "
                          "(MSER-5 needs every job); use warmup 0.1, say, or engine "
                          "fast")
    every = _check_sample_every(sample_every)
    per = jobs // replications
    system = model.system
    arrivals = model.arrival_process
    if not getattr(arrivals, "closed", False):
        system.check_stable(arrivals.rate)
    start = warmup_count(per, warmup)
    measured = kernel.measured_count(per, start, every)
    if measured < 4:
        # each replication's interval needs two batches of two jobs
        fixes = ["run more jobs"] + (["fewer replications"] if replications > 1 else [])
        fixes += [f"a sample_every below {every}"] if every > 1 else []
        sampled = f" (one in {every:,} sampled)" if every > 1 else ""
        split = "" if replications == 1 else f" in {replications:,} replications"
        raise ConfigError(f"{jobs:,} jobs{split} leave {measured} measured "
                          f"{'each ' if split else ''}after the warm-up{sampled}, fewer "
                          "than the 4 a replication needs (two batches of two); "
                          f"{', or '.join(fixes)}")
    batches = min(DEFAULT_BATCHES, max(2, measured // 2))
    bar = None
    # run imports the engines, so not at the top
    from forkjoin_sim.run import PROGRESS_DELAY, bar_shown

    if progress and bar_shown():
        # tqdm only when a bar may show: its import is a fiftieth of a run's start-up
        from tqdm.auto import tqdm

        bar = tqdm(total=per * replications, unit="job", unit_scale=True,
                   desc=getattr(model, "progress_label", "simulate"),
                   delay=PROGRESS_DELAY, leave=False)
    try:
        result = kernel.run_fused(kernel_model(system, arrivals, seed), total_jobs=per,
                                  first_measured=start, sample_every=every,
                                  batches=batches, seed=seed, replications=replications,
                                  workers=int(workers),
                                  on_chunk=None if bar is None else bar.update)
    finally:
        if bar is not None:
            bar.close()
    names = [c.name for c in system.classes]

    def summary(job_class):
        row = result._row(job_class)
        counts = result.batch_counts[:, row]
        used = counts > 0
        means = result.batch_sums[:, row][used] / counts[used]
        p = result.percentiles(job_class)
        percentiles = {50: p["p50"], 90: p["p90"], 95: p["p95"], 99: p["p99"],
                       99.9: p["p999"]}
        return summary_from_batches(result.mean(job_class), means, percentiles,
                                    result.jobs_measured(job_class),
                                    start * replications, every, 0.95,
                                    batches * replications, [])

    overall = summary(None)
    classes = ({name: summary(i) for i, name in enumerate(names)}
               if len(names) > 1 else {})
    rate, low, high = result.throughput()
    utilisation = result.utilisation()
    notes = run_notes(utilisation, system, open_load(model), per, replications)
    if not 0 < low <= high < math.inf:  # nan fails too
        notes += (f"throughput: no proper 95% interval from "
                  f"{int(np.count_nonzero(result.batch_counts[:, -1] > 1))} batches ("
                  f"{per} jobs per replication); run more jobs",)
    return SimulationResult(model=model, engine="fused", jobs=per * replications,
                            seed=seed if isinstance(seed, (int, np.integer)) else -1,
                            sojourns=None, summary=overall,
                            utilisation=utilisation,
                            seconds=time.perf_counter() - started, classes=classes,
                            throughput=Interval(float(rate), float(low), float(high)),
                            speeds=np.asarray(system.node_speeds(seed)), notes=notes,
                            replications=replications)


def kernel_workers() -> int:
    """Cores this process may use (the default number of worker threads)."""
    import os

    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


__all__ = ["fused_refusal", "kernel_model", "kernel_workers", "simulate_fused"]
