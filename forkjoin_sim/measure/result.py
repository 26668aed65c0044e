"""The result of one run: estimates with intervals, percentiles, warnings, and the
run's description."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from forkjoin_sim.arrivals import is_closed
from forkjoin_sim.errors import ConfigError
from forkjoin_sim.measure.statistics import Interval, Summary, throughput_fields


@dataclass(frozen=True)
class SimulationResult:
    """The outcome of one simulation run.

    Attributes
    ----------
    model : the model simulated (`ForkJoinModel`, `Workload` ...)
    engine, jobs, seed : the run's configuration
    sojourns : the measured sojourn times (after warm-up, every s-th job), in order;
        None from the fused engine, which keeps a histogram of them instead (its
        percentiles are in ``summary``; ``engine="fast"`` keeps the times)
    summary : mean with batch-means confidence interval, percentiles (all jobs)
    utilisation : per-node busy fraction: service handed to the node over the time
        the jobs were sent (docs/model.md, section 6); None under purging, where
        cancelled partial service is not tracked
    seconds : wall-clock time of the run
    labels : class index of each measured job (None for one class)
    classes : class name -> `Summary` of that class's measured jobs (several classes)
    throughput : jobs per unit time over the measured jobs, with its interval
    speeds : this run's node speed factors
    engine_reason : why the engine ran when the caller left the choice to
        `forkjoin_sim.simulation.choose_engine`; "" when the caller named it
    width_notes : those of ``notes`` that only say the interval of the mean is wider
        than asked for and how many jobs would narrow it, without doubting it
        (`forkjoin_sim.measure.convergence.ConvergenceNote`)
    replications : independent replications the run was made of (the fused engine's
        ``--replications``; each ``jobs // replications`` jobs with its own warm-up)
    """

    model: object
    engine: str
    jobs: int
    seed: int
    sojourns: np.ndarray | None
    summary: Summary
    utilisation: np.ndarray | None
    seconds: float
    labels: np.ndarray | None = None
    classes: dict = field(default_factory=dict)
    throughput: Interval | None = None
    speeds: np.ndarray | None = None
    notes: tuple[str, ...] = ()
    engine_reason: str = ""
    width_notes: tuple[str, ...] = ()
    replications: int = 1

    @property
    def warnings(self) -> tuple[str, ...]:
        """Notes on the run: the summary's (warm-up, batches) and the run's own
        (`doubts` are those that doubt its results)."""
        return tuple(self.summary.warnings) + tuple(self.notes)

    @property
    def doubts(self) -> tuple[str, ...]:
        """The warnings that doubt the run's results: all but `width_notes` (a merely
        wide interval still bounds the mean)."""
        return tuple(note for note in self.warnings if note not in self.width_notes)

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
        if self.sojourns is None:
            raise ConfigError(f"the {self.engine} engine keeps no sojourn times, only "
                              "their histogram (the summary's percentiles); simulate "
                              "with engine='fast' to keep them")
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
                   replications=self.replications, seed=int(self.seed))
        if self.engine_reason:
            out["engine_reason"] = self.engine_reason
        out.update(self.model.summary_fields())
        out.update(throughput_fields(self.throughput))
        if self.utilisation is not None:
            out["utilisation_mean"] = float(np.mean(self.utilisation))
            out["utilisation_max"] = float(np.max(self.utilisation))
        if self.speeds is not None and np.any(self.speeds != 1):
            out["speeds"] = [float(s) for s in self.speeds]
        if self.classes:
            out["classes"] = {name: s.to_dict() for name, s in self.classes.items()}
        return out

    def _replicated(self) -> str:
        """"8 independent replications of 250,000 jobs, each with its own warm-up, "
        or "" for one run."""
        if self.replications <= 1:
            return ""
        return (f"{self.replications} independent replications of "
                f"{self.jobs // self.replications:,} jobs, each with its own warm-up, ")

    def report(self) -> str:
        s = self.summary
        lines = [self.model.describe(),
                 f"jobs simulated {self.jobs:,}, measured {s.jobs_measured:,} "
                 f"({self.engine} engine, {self._replicated()}{self.seconds:.2f} s)",
                 *([f"engine        {self.engine}: {self.engine_reason}"]
                   if self.engine_reason else []),
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


#: Busy fraction above which a node is reported as overloaded. A stable node's
#: measured fraction exceeds 1 only by the work still queued at the end of the run.
OVERLOAD_ALARM = 1.05


#: Runs shorter than this many relaxation times of their busiest node's queue are
#: said not to have reached its steady state (`saturation_note`).
RELAXATIONS = 10


def saturation_note(open_load: float | None, jobs: int, classes,
                    nodes: int) -> str | None:
    """The warning for an open-loop run too short for its load (`relaxation_note`),
    its busiest node receiving ``jobs`` of ``classes`` (each ``fraction`` x
    ``replicas`` tasks) spread over ``nodes``."""
    tasks = sum(c.fraction * c.replicas for c in classes) or 1.0
    note = relaxation_note(open_load, jobs, tasks / nodes)
    return None if note is None else note + ", or compare with approx"


#: The M/M/1 mean wait, in services (load / (1 - load)), below which a queue's empty
#: start biases nothing worth a warning.
NEGLIGIBLE_WAIT = 1e-3


def relaxation_note(load: float | None, jobs: int, services_per_job: float,
                    queue: str = "node", unit: str = "jobs",
                    bias: str = "the mean is biased low and its interval does not "
                                "hold the steady state's") -> str | None:
    """The warning for an open-loop run too short for its load: a queue busy a
    fraction ``load`` of the time forgets its start over about
    1 / (1 - sqrt(load))^2 services (the M/M/1 relaxation time, Morse 1955; longer for
    more variable services), and a run of ``jobs`` giving its busiest ``queue``
    (``services_per_job`` services per job) fewer than `RELAXATIONS` of them
    measures a queue still filling: ``bias``. None for a closed loop (``load``
    None), or a run long enough."""
    if load is None or not 0 < load < 1 or not jobs:
        return None
    if load / (1.0 - load) < NEGLIGIBLE_WAIT:
        # an empty start leaves out at most the waiting, a mean of this share of a
        # service at this load (M/M/1): nothing a run's length could bias (a probe saw
        # a million nodes at load 1.5e-6 told to run 3.3 million jobs)
        return None
    relaxation = 1.0 / (1.0 - math.sqrt(load)) ** 2
    per_queue = jobs * services_per_job
    if per_queue >= RELAXATIONS * relaxation:
        return None
    return (f"the busiest {queue} is loaded {load:.4g}: a queue this loaded forgets "
            f"its start over about {relaxation:,.0f} services (1/(1-sqrt(load))^2, "
            f"the M/M/1 relaxation time), and this run gives each {queue} about "
            f"{per_queue:,.0f}: {bias}; run at least "
            f"{math.ceil(RELAXATIONS * relaxation / services_per_job):,} {unit}")


def run_notes(utilisation: np.ndarray | None, system, open_load: float | None,
              jobs: int, replications: int = 1) -> tuple[str, ...]:
    """A run's warnings about its nodes' load and its service laws: `overload_notes`
    and `saturation_note` of ``system``'s classes and nodes, for ``replications``
    independent replications of ``jobs`` jobs each (a queue fills and drains in each
    one, not over their total), and the heavy tails of its service laws
    (`forkjoin_sim.system.law_notes`)."""
    from forkjoin_sim.system import law_notes

    near = saturation_note(open_load, jobs, system.classes, system.nodes)
    return overload_notes(utilisation, system.classes, open_load, jobs,
                          system.nodes, replications) + (
        (near,) if near is not None else ()) + law_notes(system)


#: Fewest tasks per node of a closed loop in which a busy fraction above
#: `OVERLOAD_ALARM` is read as an overload: in a shorter run the work still queued at
#: its end can exceed a twentieth of the run (a probe: 20 jobs of 2 clients on 5
#: nodes, 12 tasks each, measured busy 1.13-1.34 in 5 of 6 seeds; with 2,000 jobs,
#: 0.70).
SHORT_RUN_TASKS = 1_000


def overload_notes(utilisation: np.ndarray | None, classes=(),
                   open_load: float | None = None, jobs: int | None = None,
                   nodes: int | None = None, replications: int = 1) -> tuple[str, ...]:
    """A warning when a node was measured busy for longer than the run lasted.

    Under a closed loop (``open_load`` None) this happens without any instability
    check failing: with quorum k < r a job does not wait for its slowest tasks, so
    clients can go on sending work to a slow node faster than it serves it, and its
    backlog grows for ever (non-purging). Such a run has no steady state at that
    node. When every class waits for all its tasks (k = r) no backlog can outgrow
    the clients' jobs: a value just above 1 at the bottleneck is the work still
    queued when the run stops (of order clients x service time over the run's
    length), not an overload.

    Under open arrivals the configured load (``open_load``, `forkjoin_sim.system.
    open_load`) says whether there is a steady state: below 1 a busy fraction above
    `OVERLOAD_ALARM` is a short run's noise (work still queued at its end, a burst of
    long services), not an overload. A closed loop has no such load: a run of
    ``jobs`` (per replication, of ``replications``) giving each of ``nodes`` fewer
    than `SHORT_RUN_TASKS` tasks is too short to tell the two apart, and the note
    says so.
    """
    if utilisation is None:
        return ()
    if open_load is None and classes and all(c.quorum == c.replicas for c in classes):
        return ()
    per_node = utilisation if utilisation.ndim == 1 else utilisation.max(axis=1)
    over = np.flatnonzero(per_node > OVERLOAD_ALARM)
    if over.size == 0:
        return ()
    names = ", ".join(f"{i} ({per_node[i]:.2f})" for i in over[:5])
    if open_load is not None and open_load < 1:
        return (f"node(s) {names} measured busy for longer than the run (busy fraction "
                f"> 1) at a configured load of {open_load:.3g} < 1: the run is too "
                "short to measure the nodes' busy fractions (work still queued at its "
                "end, a burst of long services), not an overload; run more jobs",)
    tasks = sum(c.fraction * c.replicas for c in classes) or 1.0
    if open_load is None and jobs and nodes and jobs * tasks / nodes < SHORT_RUN_TASKS:
        each = "" if replications == 1 else " per replication"
        least = math.ceil(SHORT_RUN_TASKS * nodes / tasks)
        fix = (f"{least:,} jobs" if replications == 1 else
               f"{least:,} jobs per replication ({least * replications:,} in all), or "
               "fewer replications")
        return (f"node(s) {names} measured busy for longer than the run (busy fraction "
                f"> 1) after {jobs:,} jobs{each}, about {jobs * tasks / nodes:,.0f} "
                f"tasks per node: too short to tell an overload (a quorum below the "
                "replicas lets a closed loop outrun a slow node) from work still "
                f"queued at its end; run at least {fix}",)
    if open_load is not None:
        return (f"node(s) {names} received more work than they can serve: the "
                f"configured load is {open_load:.3g} >= 1, so their backlog grows "
                "without bound and the run has no steady state there. Use purging, "
                "faster nodes, or a lower arrival rate",)
    return (f"node(s) {names} received more work than they can serve (busy fraction "
            "> 1): their backlog grows without bound, so the run has no steady state "
            "there; jobs complete only because their quorum skips those nodes. Use "
            "purging, faster nodes, or fewer clients",)
