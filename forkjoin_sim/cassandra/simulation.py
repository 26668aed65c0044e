"""Simulating Cassandra writes at level 1 (fast engine) or level 2 (the staged write
path as a graph of steps, on the steps engine)."""

from __future__ import annotations

import dataclasses
import os
import time
from dataclasses import dataclass
from typing import Any, Iterable

import numpy as np

from forkjoin_sim.engines import FastEngine
from forkjoin_sim.errors import ConfigError
from forkjoin_sim.run import block_jobs, check_run, check_work, run_path
from forkjoin_sim.measure.statistics import (Interval, SojournRecorder, Summary, summarize,
                                             throughput_fields)
from forkjoin_sim.cassandra.model import CassandraModel
from forkjoin_sim.cassandra.graphs import run_staged, staged_write
from forkjoin_sim.cassandra.staged import StagedConfig, check_stable, stage_utilisation
from forkjoin_sim.cassandra.writes import WritePath, WritePathSampler, basic_write_path
from forkjoin_sim.checks import check_memory

LEVELS = (1, 2)
#: Bytes level 2 holds per step of a write while it runs (the whole run is one block:
#: durations, stations, step states, recorded end times and the drawn stage times).
BYTES_PER_STEP = 48


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
    throughput: Interval | None = None

    @property
    def engine(self) -> str:
        return "fast" if self.level == 1 else "steps"

    @property
    def engine_reason(self) -> str:
        """Why this engine: the fastest one that is exact for the model."""
        if self.level == 1:
            return ("a write's replicas have a local and a remote service law, by where "
                    "each lands; the fused kernel has one law per job class, so the fast "
                    "engine (exact percentiles)")
        return "the staged write path is a graph of steps: the steps engine"

    @property
    def mean(self) -> float:
        return self.summary.mean

    def to_dict(self) -> dict:
        m = self.model
        out = dict(self.summary.to_dict())
        out.update(engine=self.engine, engine_reason=self.engine_reason,
                   seconds=round(self.seconds, 6), jobs=self.jobs, replications=1,
                   seed=self.seed, nodes=m.nodes, replicas=m.replicas, quorum=m.quorum,
                   # the job load in the mean task's service (local and remote
                   # tasks as they land), so that per_node_load = replicas * rho /
                   # nodes as in simulate's output (it was the rate x the remote mean)
                   rho=(None if m.arrival_rate is None
                        else m.node_utilisation * m.nodes / m.replicas),
                   per_node_load=m.node_utilisation, level=self.level,
                   consistency=str(m.consistency), policy=m.policy,
                   local_fraction=m.local_fraction, arrival_rate=m.arrival_rate)
        if m.clients is not None:
            out.update(clients=m.clients, think=m.think)
        out.update(throughput_fields(self.throughput))
        return out

    def report(self) -> str:
        s = self.summary
        lines = [
            self.model.describe(),
            f"level {self.level} ({self.engine} engine), writes simulated "
            f"{self.jobs:,}, measured {s.jobs_measured:,} ({self.seconds:.2f} s)",
            f"engine: {self.engine}, because {self.engine_reason}",
            f"mean latency  {s.mean:.6g}  95% CI [{s.ci_low:.6g}, {s.ci_high:.6g}]",
            f"percentiles   p50 {s.p50:.4g}  p90 {s.p90:.4g}  p95 {s.p95:.4g}  "
            f"p99 {s.p99:.4g}  p99.9 {s.p999:.4g}"]
        if self.throughput is not None:
            x = self.throughput
            lines.append(f"throughput    {x.mean:.6g} writes per unit time  95% CI "
                         f"[{x.low:.6g}, {x.high:.6g}]")
        lines += [f"warning: {note}" for note in s.warnings]
        return "\n".join(lines)


def _check_run(jobs: int, level: int, replicas: int = 1) -> None:
    if level not in LEVELS:
        raise ConfigError(f"level {level!r} is unknown; use 1 (one FCFS queue per node) "
                          "or 2 (staged write path)")
    check_run(jobs)
    if level == 1:
        check_work(jobs, replicas, "fast")
        return
    # level 2 runs the whole path as one block on the steps engine
    steps = len(staged_write(replicas, 1, -1, StagedConfig(1, 1, 1, 1, 1)).ops)
    check_memory(float(jobs) * steps * BYTES_PER_STEP, f"level 2 with {int(jobs):,} "
                 "writes", "use fewer jobs (level 2 holds the whole run in memory)")


def _latencies(completions: np.ndarray, arrivals: np.ndarray,
               quorums: Iterable[int]) -> dict[int, np.ndarray]:
    ordered = np.sort(completions, axis=1)
    return {k: ordered[:, k - 1] - arrivals for k in quorums}


def _run_level2(writes: WritePath, config: StagedConfig, seed,
                quorums: Iterable[int]) -> dict[int, np.ndarray]:
    """Open-loop writes through the staged path: per quorum, every write's latency
    (without purging the quorum does not change what the cluster does)."""
    quorums = list(quorums)
    start, acks = run_staged(writes, config, seed, min(quorums))
    return _latencies(acks, start, quorums)


class _InBlocks:
    """A write sampler whose one block is drawn in level 1's blocks, so that both
    levels run the same writes (the coordinators' draws depend on the block size)."""

    def __init__(self, sampler: WritePathSampler, block: int):
        self.sampler, self.block = sampler, block
        self.initial_release = sampler.initial_release

    def draw(self, jobs: int) -> WritePath:
        return self.sampler.draw_in_blocks(jobs, self.block)


class _Level2:
    """`run_path`'s engine for level 2: a whole write path through the staged graph
    on the steps engine (closed loop: the issue times are written into the path)."""

    blockwise = False

    def __init__(self, config: StagedConfig, seed, quorum: int, clients=None,
                 initial_release=None):
        self.config, self.seed, self.quorum = config, seed, quorum
        self.clients, self.initial_release = clients, initial_release

    def run(self, writes: WritePath) -> tuple[np.ndarray, np.ndarray]:
        think = None
        if self.clients is not None:
            # client c first waits its own release, then write j waits think[j]
            think = np.concatenate([self.initial_release, writes.path.think])[
                :writes.jobs]
        start, acks = run_staged(writes, self.config, self.seed, self.quorum,
                                 self.clients, think)
        writes.path.arrivals[:] = start
        kth = np.sort(acks, axis=1)[:, self.quorum - 1]
        return acks, kth - start


def _model_stages(model: CassandraModel, config: StagedConfig) -> None:
    if model.arrival_rate is None:
        return  # a closed loop cannot overload a stage: it waits for its replies
    per_node = model.arrival_rate / model.nodes
    check_stable(stage_utilisation(
        config, writes_per_coordinator=per_node,
        remote_acks_per_coordinator=per_node * (model.replicas - model.local_fraction),
        mutation_work_per_node=model.node_utilisation))


def _run_writes(model: CassandraModel, quorums: list[int], jobs: int, seed, level: int,
                config: StagedConfig | None, warmup, sample_every,
                progress: bool = False) -> SojournRecorder:
    """One run of ``model``'s writes; the recorder holds a latency column per quorum
    (every k reads the same run: without purging the k-th acknowledgement does not
    change what the cluster does, under open arrivals)."""
    sampler = WritePathSampler(model, seed)
    if level == 1:
        model.check_stable()
        engine = FastEngine(model.nodes, initial_release=sampler.initial_release)
    else:
        config = config or StagedConfig.from_mapping()
        _model_stages(model, config)
        if config.datacentre and len(config.datacentre) != model.nodes:
            raise ConfigError(f"[datacentres] nodes lists {len(config.datacentre)} nodes "
                              f"but the cluster has {model.nodes}; give one per node")
        engine = _Level2(config, seed, min(quorums), model.clients,
                         sampler.initial_release)
        sampler = _InBlocks(sampler, block_jobs(model.replicas))
    recorder = SojournRecorder(jobs, warmup=warmup, sample_every=sample_every,
                               columns=len(quorums), times=True)
    recorder.check_enough()

    def observe(writes, completions, sojourns):
        ordered = np.sort(completions, axis=1)
        latency = ordered[:, np.asarray(quorums) - 1] - writes.path.arrivals[:, None]
        return latency[:, 0] if len(quorums) == 1 else latency

    run_path(sampler, engine, jobs, recorder, model.nodes, observe=observe,
             progress=progress, desc="cassandra", track_busy=False, width=model.replicas)
    return recorder


def simulate_quorums(model: CassandraModel, quorums: Iterable[int], jobs: int = 200_000,
                     seed: int | np.random.SeedSequence = 0, level: int = 1,
                     config: StagedConfig | None = None, warmup: float | str = 0.1,
                     sample_every: int = 1) -> dict[int, Summary]:
    """Write-latency summaries for several consistency levels k.

    Under open arrivals every k reads the same run (common random numbers across
    k). Under a closed loop the level changes how fast clients come back, so each k
    is a run of its own (same seed).
    """
    _check_run(jobs, level, model.replicas)
    quorums = sorted(set(int(k) for k in quorums))
    for k in quorums:
        if not 1 <= k <= model.replicas:
            raise ConfigError(f"consistency k={k} must satisfy 1 <= k <= replicas "
                              f"r={model.replicas}")
    if model.clients is not None:
        out = {}
        for k in quorums:
            own = dataclasses.replace(model, consistency=k)
            recorder = _run_writes(own, [k], jobs, seed, level, config, warmup,
                                   sample_every)
            out[k] = recorder.summary()
        return out
    recorder = _run_writes(model, quorums, jobs, seed, level, config, warmup,
                           sample_every)
    # The recorder's summary keeps its MSER-5 warnings (warmup="auto").
    return {k: recorder.summary(column=i) for i, k in enumerate(quorums)}


def simulate_cassandra(model: CassandraModel, jobs: int = 200_000,
                       seed: int | np.random.SeedSequence = 0, level: int = 1,
                       config: StagedConfig | None = None, warmup: float | str = 0.1,
                       sample_every: int = 1, progress: bool = False) -> CassandraResult:
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
        write path as a graph of steps (:mod:`.graphs`) on the steps engine, where the
        local and remote service times are the mutation-stage times and ``config``
        adds the other stages.
    config : StagedConfig, optional
        Level 2 only; default ``StagedConfig.from_mapping()``.
    warmup, sample_every : as in :func:`forkjoin_sim.simulation.simulate`.
    """
    started = time.perf_counter()
    if not isinstance(model, CassandraModel):
        raise ConfigError(f"simulate_cassandra needs a CassandraModel, got "
                          f"{type(model).__name__}; for a plain fork-join queue use "
                          "simulate(ForkJoinModel(...))")
    if isinstance(config, dict):  # the tables of a TOML config, as a notebook has them
        config = StagedConfig.from_mapping(config)
    elif isinstance(config, (str, os.PathLike)):
        from forkjoin_sim.cassandra.staged import load_staged_config

        config = load_staged_config(config)
    elif config is not None and not isinstance(config, StagedConfig):
        raise ConfigError(f"config must be a StagedConfig, its TOML tables as a dict, or "
                          f"the path of a TOML file; got {type(config).__name__}")
    _check_run(jobs, level, model.replicas)
    if model.arrival_rate is not None:
        from forkjoin_sim.arrivals._checks import check_clock

        check_clock(model.arrival_rate, int(jobs),
                    min(float(model.local_service.mean()),
                        float(model.remote_service.mean())))
    recorder = _run_writes(model, [model.quorum], jobs, seed, level, config, warmup,
                           sample_every, progress=progress)
    summary = recorder.summary()
    if summary.warnings:
        from forkjoin_sim.measure.convergence import convergence_notes

        summary = dataclasses.replace(summary, warnings=convergence_notes(summary,
                                                                          int(jobs)))
    summary = dataclasses.replace(summary, warnings=(*summary.warnings,
                                                     *_law_notes(model)))
    return CassandraResult(model=model, level=level, jobs=int(jobs),
                           seed=seed if isinstance(seed, (int, np.integer)) else -1,
                           summary=summary, seconds=time.perf_counter() - started,
                           throughput=recorder.throughput())


def _law_notes(model: CassandraModel) -> tuple[str, ...]:
    """The heavy tails of the local and remote service laws
    (`forkjoin_sim.system.heavy_tail_note`), once for a law used for both."""
    from forkjoin_sim.system import heavy_tail_note

    laws = [("local", model.local_service)]
    if model.remote_service is not model.local_service:
        laws.append(("remote", model.remote_service))
    notes = (heavy_tail_note(law, f"the {where} service law") for where, law in laws)
    return tuple(note for note in notes if note)


def basic_latencies(kind: str, replicas: int, arrival_rate: float, service: Any,
                    jobs: int = 200_000, seed: int | np.random.SeedSequence = 0,
                    level: int = 1, config: StagedConfig | None = None) -> np.ndarray:
    """Every write's latency (warm-up included) in a basic configuration: LT(1,1,1)
    (``kind="local"``, replicas=1) or RT(i,i,i) (``kind="remote"``, replicas=i).

    For one seed all basic configurations share their arrivals, so their latency
    series can be combined write by write. See
    :func:`~forkjoin_sim.cassandra.writes.basic_write_path`.
    """
    _check_run(jobs, level, replicas)
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
    return _run_level2(writes, config, seed, [replicas])[replicas]


def simulate_basic(kind: str, replicas: int, arrival_rate: float, service: Any,
                   jobs: int = 200_000, seed: int | np.random.SeedSequence = 0,
                   level: int = 1, config: StagedConfig | None = None,
                   warmup: float | str = 0.1, sample_every: int = 1) -> Summary:
    """Steady-state latency `Summary` of a basic configuration (see `basic_latencies`)."""
    return summarize(basic_latencies(kind, replicas, arrival_rate, service, jobs, seed,
                                     level, config),
                     warmup=warmup, sample_every=sample_every)
