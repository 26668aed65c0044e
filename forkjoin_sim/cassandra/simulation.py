"""Simulating Cassandra writes at level 1 (fast engine) or level 2 (staged SimPy)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Iterable

import numpy as np

from ..engines import FastEngine
from ..errors import ConfigError
from ..statistics import SojournRecorder, Summary, summarize
from .model import CassandraModel
from .staged import StagedConfig, StagedEngine, check_stable, stage_utilisation
from .writes import STAGES, WritePath, WritePathSampler, basic_write_path, spawn_streams

LEVELS = (1, 2)
#: Writes per block of the level-1 run (as ``simulation.BLOCK_JOBS``).
BLOCK_JOBS = 1 << 17


@dataclass(frozen=True)
class CassandraResult:
    """The outcome of one Cassandra write simulation.

    ``summary`` describes the write latency (arrival to k-th acknowledgement) of
    the measured writes; ``to_dict`` has the keys of ``forkjoin-sim simulate
    --json`` plus the Cassandra ones (level, consistency, policy, local fraction).
    """

    model: CassandraModel
    level: int
    jobs: int
    seed: int
    summary: Summary
    seconds: float

    @property
    def engine(self) -> str:
        return "fast" if self.level == 1 else "staged"

    @property
    def mean(self) -> float:
        return self.summary.mean

    def to_dict(self) -> dict:
        m = self.model
        out = dict(self.summary.to_dict())
        out.update(engine=self.engine, seconds=round(self.seconds, 6), jobs=self.jobs,
                   seed=self.seed, nodes=m.nodes, replicas=m.replicas, quorum=m.quorum,
                   rho=m.arrival_rate * float(m.remote_service.mean()),
                   per_node_load=m.node_utilisation, level=self.level,
                   consistency=str(m.consistency), policy=m.policy,
                   local_fraction=m.local_fraction, arrival_rate=m.arrival_rate)
        return out

    def report(self) -> str:
        s = self.summary
        return "\n".join([
            self.model.describe(),
            f"level {self.level} ({self.engine} engine), writes simulated "
            f"{self.jobs:,}, measured {s.jobs_measured:,} ({self.seconds:.2f} s)",
            f"mean latency  {s.mean:.6g}  95% CI [{s.ci_low:.6g}, {s.ci_high:.6g}]",
            f"percentiles   p50 {s.p50:.4g}  p90 {s.p90:.4g}  p95 {s.p95:.4g}  "
            f"p99 {s.p99:.4g}  p99.9 {s.p999:.4g}"])


def _check_run(jobs: int, level: int) -> None:
    if level not in LEVELS:
        raise ConfigError(f"level {level!r} is unknown; use 1 (one FCFS queue per node) "
                          "or 2 (staged write path)")
    if isinstance(jobs, bool) or not isinstance(jobs, (int, np.integer)) or jobs < 2:
        raise ConfigError(f"jobs={jobs!r} must be a whole number >= 2")


def _latencies(completions: np.ndarray, arrivals: np.ndarray,
               quorums: Iterable[int]) -> dict[int, np.ndarray]:
    ordered = np.sort(completions, axis=1)
    return {k: ordered[:, k - 1] - arrivals for k in quorums}


def _run_level2(writes: WritePath, config: StagedConfig, rng: np.random.Generator,
                quorums: Iterable[int]) -> dict[int, np.ndarray]:
    acks, _ = StagedEngine(config, writes.node_count).run(writes, rng)
    return _latencies(acks, writes.path.arrivals, quorums)


def _model_stages(model: CassandraModel, config: StagedConfig) -> None:
    per_node = model.arrival_rate / model.nodes
    check_stable(stage_utilisation(
        config, writes_per_coordinator=per_node,
        remote_acks_per_coordinator=per_node * (model.replicas - model.local_fraction),
        mutation_work_per_node=model.node_utilisation))


def simulate_quorums(model: CassandraModel, quorums: Iterable[int], jobs: int = 200_000,
                     seed: int | np.random.SeedSequence = 0, level: int = 1,
                     config: StagedConfig | None = None, warmup: float | str = 0.1,
                     sample_every: int = 1) -> dict[int, Summary]:
    """Write-latency summaries for several consistency levels k from one run.

    Without purging the k-th acknowledgement does not change what the cluster does,
    so every k reads the same run (common random numbers across k).
    """
    _check_run(jobs, level)
    quorums = sorted(set(int(k) for k in quorums))
    for k in quorums:
        if not 1 <= k <= model.replicas:
            raise ConfigError(f"consistency k={k} must satisfy 1 <= k <= replicas "
                              f"r={model.replicas}")
    sampler = WritePathSampler(model, seed)
    recorders = {k: SojournRecorder(jobs, warmup=warmup, sample_every=sample_every)
                 for k in quorums}
    if level == 1:
        model.check_stable()
        engine = FastEngine(model.nodes)
        done = 0
        while done < jobs:
            writes = sampler.draw(min(BLOCK_JOBS, jobs - done))
            completions, _ = engine.run(writes.path)
            for k, x in _latencies(completions, writes.path.arrivals, quorums).items():
                recorders[k].add(x)
            done += writes.jobs
    else:
        config = config or StagedConfig.from_mapping()
        _model_stages(model, config)
        # One block: the event engine cannot carry queued work across blocks.
        writes = sampler.draw(jobs)
        for k, x in _run_level2(writes, config, sampler.streams[STAGES],
                                quorums).items():
            recorders[k].add(x)
    # The recorder's summary keeps its MSER-5 warnings (warmup="auto").
    return {k: recorder.summary() for k, recorder in recorders.items()}


def simulate_cassandra(model: CassandraModel, jobs: int = 200_000,
                       seed: int | np.random.SeedSequence = 0, level: int = 1,
                       config: StagedConfig | None = None, warmup: float | str = 0.1,
                       sample_every: int = 1) -> CassandraResult:
    """Simulate ``jobs`` writes of ``model`` and summarise their steady-state latency.

    Parameters
    ----------
    model : CassandraModel
    jobs : int
        Writes simulated, warm-up included.
    seed : int or numpy.random.SeedSequence
        The run is a pure function of its arguments.
    level : 1 or 2
        1: each node one FCFS queue (the paper's Fig. 4), fast engine. 2: the staged
        write path (:mod:`.staged`), where the local and remote service times are the
        mutation-stage times and ``config`` adds the other stages.
    config : StagedConfig, optional
        Level 2 only; default ``StagedConfig.from_mapping()``.
    warmup, sample_every : as in :func:`forkjoin_sim.simulation.simulate`.
    """
    started = time.perf_counter()
    summary = simulate_quorums(model, [model.quorum], jobs, seed, level, config,
                               warmup, sample_every)[model.quorum]
    return CassandraResult(model=model, level=level, jobs=int(jobs),
                           seed=seed if isinstance(seed, (int, np.integer)) else -1,
                           summary=summary, seconds=time.perf_counter() - started)


def basic_latencies(kind: str, replicas: int, arrival_rate: float, service: Any,
                    jobs: int = 200_000, seed: int | np.random.SeedSequence = 0,
                    level: int = 1, config: StagedConfig | None = None) -> np.ndarray:
    """Every write's latency (warm-up included) in a basic configuration: LT(1,1,1)
    (``kind="local"``, replicas=1) or RT(i,i,i) (``kind="remote"``, replicas=i).

    For one seed all basic configurations share their arrivals, so their latency
    series can be combined write by write. See
    :func:`~forkjoin_sim.cassandra.writes.basic_write_path`.
    """
    _check_run(jobs, level)
    mean = float(service.mean())
    if level == 1 and arrival_rate * mean >= 1:
        raise ConfigError(f"unstable basic configuration: each node is busy "
                          f"{arrival_rate * mean:.4g} >= 1 of the time; lower the rate")
    writes = basic_write_path(kind, replicas, arrival_rate, service, jobs, seed)
    if level == 1:
        completions, _ = FastEngine(writes.node_count).run(writes.path)
        return _latencies(completions, writes.path.arrivals, [replicas])[replicas]
    config = config or StagedConfig.from_mapping()
    acks = 0.0 if kind == "local" else arrival_rate * replicas
    check_stable(stage_utilisation(config, arrival_rate, acks, arrival_rate * mean))
    return _run_level2(writes, config, spawn_streams(seed)[STAGES], [replicas])[replicas]


def simulate_basic(kind: str, replicas: int, arrival_rate: float, service: Any,
                   jobs: int = 200_000, seed: int | np.random.SeedSequence = 0,
                   level: int = 1, config: StagedConfig | None = None,
                   warmup: float | str = 0.1, sample_every: int = 1) -> Summary:
    """Steady-state latency `Summary` of a basic configuration (see `basic_latencies`)."""
    return summarize(basic_latencies(kind, replicas, arrival_rate, service, jobs, seed,
                                     level, config),
                     warmup=warmup, sample_every=sample_every)
