"""Planners built on Theorem 1 for whole distributions: consistency and capacity.

Consistency planner (`plan_consistency`)
    A read at consistency R asks R replicas and waits for all: an (n,R,R) job. A
    write at W is an (n,r,W) job. Reads and writes share the nodes, so every node
    runs at the load of the *mix*, ``lambda * (f*R*E[X_read] + (1-f)*r*E[X_write]) / n``
    for read fraction f. With the paper's Lemma each class is modelled by basic
    queues at that load: reads by the (R,R,R) CDF, writes by
    ``sum_i W(r,W,i) F_i``. The basic queues see the node's task mix (read tasks
    in proportion ``f*R : (1-f)*r``), and each class's ``F_i`` is measured on its
    own tasks. Every (R, W) with ``R + W > r`` (reads see the latest write) is
    listed with the mix's mean and percentile; the best is the one with the
    smallest percentile (or mean, ``objective="mean"``), ties to the smaller
    ``R + W``. `simulate_consistency` runs both classes together on shared nodes.

Capacity planner (`plan_capacity`)
    Search space: nodes ``n`` in ``[min_nodes, max_nodes]``, replication ``r`` in
    ``[min_replicas, min(max_replicas, n)]`` and the consistency levels given
    (ONE, TWO, THREE, QUORUM, ALL, or a number k of acknowledgements from 1 to the
    most replicas searched; a level needing more than r replicas is skipped, one
    that no r searched can hold is refused, and a level given twice, e.g. TWO and
    2, is planned once). A
    candidate meets the SLA when its node load is < 1 and its predicted
    write-latency percentile is <= the target. Objective, in order:
    fewest nodes (cost); then most replicas (durability); then the strongest
    consistency (largest k); then the smallest predicted percentile. Search stops at
    the first n with a feasible candidate. Each candidate's percentile comes, by
    default (``basic="direct"``), from a simulation of its own (n, r, k) queue, whose
    percentile interval is the bracket; or, as the paper builds distributions, from
    Theorem 1 on basic queues at the candidate's node load (the Lemma, whose tail is
    far off: p99 of (5,3,1) at 1 write per unit time 7.2 against a simulated 4.6,
    so the plan took 6 nodes where 5 meet a p99 of 6). ``confident`` says whether
    the percentile's uncertainty bracket also meets the target and the simulated
    distribution is within its sampling tolerance there (with too few ``jobs`` its
    tail rests on a handful of jobs). When no candidate meets the target,
    `CapacityPlan.why` names the limit that binds from each replica count's
    unloaded percentile (`unloaded_percentile`), a floor no load goes under.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
from scipy import stats

from analytic.distribution import (BASIC_APPROXIMATIONS, DEFAULT_RELATIVE_TOLERANCE,
                                   QuorumDistribution, invert_cdf, quorum_cdf)
from forkjoin_sim.cassandra.model import CONSISTENCY_LEVELS, consistency_quorum
from forkjoin_sim.checks import check_percentile, is_plain_whole
from forkjoin_sim.errors import ConfigError, counted, percentile_label
from forkjoin_sim.laws.service import as_service
from forkjoin_sim.randomness.streams import as_seed_sequence, child_seed
from forkjoin_sim.run import simulate_nested_basic
from forkjoin_sim.workload import JobClass, Workload, simulate_workload

from sizing.tails import (BASIC_SOURCES, GRID_POINTS, QUANTILE_BATCHES, WARMUP,
                          _check_basic, _common_standard_error, basic_cdfs_on_grid,
                          is_exponential, model_distribution, percentile_interval,
                          section_jobs)

DEFAULT_LEVELS = ("ONE", "QUORUM", "ALL")
#: Per-node load from which a candidate counts as unstable: 1 less a rounding margin,
#: since the model recomputes the load in another order and can land on exactly 1.
UNSTABLE = 1 - 1e-9
#: Largest cluster ``plan_capacity`` searches: each cluster size costs up to
#: (replicas x levels) simulations or Theorem 1 evaluations, so the search is
#: bounded in time.
MAX_NODES = 1000
#: ``basic`` of `plan_capacity` that simulates each candidate's own queue (module
#: docstring); the others are `sizing.tails.BASIC_SOURCES`.
DIRECT = "direct"
#: Fewest jobs beyond the percentile per section of a candidate's run for its
#: percentile to count as within its sampling tolerance (p99 of 100,000 jobs, 10%
#: of them warm-up, in 20 sections: 45).
SECTION_TAIL_JOBS = 10


def _check_fraction(value: float, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not 0 <= value <= 1:
        raise ConfigError(f"{what}={value!r} must be in [0, 1], e.g. 0.9")
    return float(value)


def _check_positive(value: float, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not (math.isfinite(value) and value > 0):
        raise ConfigError(f"{what}={value!r} must be a positive number")
    return float(value)


# --- consistency planner -------------------------------------------------------

@dataclass(frozen=True)
class ConsistencyOption:
    """Predicted latency of one (R, W) choice; ``*_q`` is the chosen percentile."""

    read_quorum: int
    write_quorum: int
    node_load: float
    read_mean: float
    read_q: float
    write_mean: float
    write_q: float
    mix_mean: float
    mix_q: float
    reliable: bool

    def as_row(self) -> dict:
        return dict(self.__dict__)


@dataclass(frozen=True)
class ConsistencyPlan:
    """All strongly consistent (R, W) pairs with predictions, and the best one."""

    nodes: int
    replicas: int
    read_fraction: float
    arrival_rate: float
    percentile: float
    objective: str
    basic: str
    options: tuple[ConsistencyOption, ...]
    best: ConsistencyOption

    def report(self) -> str:
        lines = [f"{self.nodes} nodes, r={self.replicas}, read fraction "
                 f"{self.read_fraction:g}, {self.arrival_rate:g} requests per unit "
                 f"time, basic queues: {self.basic}",
                 f"{'R':>2} {'W':>2} {'load':>6} {'read mean':>10} {'read p':>8} "
                 f"{'write mean':>10} {'write p':>8} {'mix mean':>9} "
                 f"{'mix ' + percentile_label(self.percentile):>9} reliable"]
        for o in self.options:
            mark = "  <- best" if o == self.best else ""
            lines.append(f"{o.read_quorum:>2} {o.write_quorum:>2} {o.node_load:6.3f} "
                         f"{o.read_mean:10.4g} {o.read_q:8.4g} {o.write_mean:10.4g} "
                         f"{o.write_q:8.4g} {o.mix_mean:9.4g} {o.mix_q:9.4g} "
                         f"{str(o.reliable):>8}{mark}")
        return "\n".join(lines)


def consistency_pairs(replicas: int) -> list[tuple[int, int]]:
    """All (R, W) with 1 <= R, W <= r and R + W > r."""
    return [(R, W) for R in range(1, replicas + 1) for W in range(1, replicas + 1)
            if R + W > replicas]


def _class_basic_sojourns(sizes, node_load, read_task_share, read_service,
                          write_service, jobs, seed, warmup=0.1):
    """Per size i: (read sojourns, write sojourns) of the basic (i,i,i) queue whose
    tasks are reads with probability ``read_task_share`` (common random numbers:
    nested columns of one path on the widest queue)."""
    widest = max(sizes)
    classes = []
    if read_task_share > 0:
        classes.append(JobClass("read", read_task_share, widest, widest, read_service))
    if read_task_share < 1:
        classes.append(JobClass("write", 1 - read_task_share, widest, widest,
                                write_service))
    work = sum(c.fraction * c.mean_service for c in classes)
    workload = Workload(widest, classes, arrival_rate=node_load / work)
    names = [c.name for c in classes]
    runs = simulate_nested_basic(workload.system, workload.arrival_process, sizes, jobs,
                                 seed, warmup)
    out = {}
    for i, (sojourns, kept) in runs.items():
        if kept is None:
            kept = np.zeros(sojourns.size, dtype=np.int16)
        out[i] = {name: sojourns[kept == c] for c, name in enumerate(names)}
    return out


def _simulated_class_distribution(replicas, quorum, samples, grid) -> QuorumDistribution:
    cdfs, _ = basic_cdfs_on_grid(samples, grid)
    d = quorum_cdf(replicas, quorum, cdfs, grid)
    return dataclasses.replace(d, standard_error=_common_standard_error(
        replicas, quorum, samples, grid))


def _mix(fraction, read, write, q):
    """Mean and q-th percentile of the read/write mixture of two CDFs on one grid."""
    cdf = fraction * read.cdf + (1 - fraction) * write.cdf
    mean = fraction * read.mean() + (1 - fraction) * write.mean()
    return mean, invert_cdf(read.grid, cdf, q / 100)


def plan_consistency(nodes: int, replicas: int, read_fraction: float,
                     arrival_rate: float, read_service: Any = None,
                     write_service: Any = None, percentile: float = 99,
                     objective: str = "percentile", basic: str = "simulation",
                     jobs: int = 100_000, seed=0) -> ConsistencyPlan:
    """Predict every strongly consistent (R, W) and pick the best (module docstring).

    Parameters
    ----------
    nodes, replicas : int
        n and r; reads use R of the r replicas.
    read_fraction : float
        Fraction of requests that are reads.
    arrival_rate : float
        Requests (reads + writes) per unit time.
    read_service, write_service : distributions
        Task service times; default exponential mean 1; writes default to reads'.
    percentile : float
        The percentile predicted and (``objective="percentile"``) minimised.
    basic : "simulation", "independent" or "mean-matched"
        Basic-queue source; the analytic ones need one exponential service.
    jobs, seed : basic-queue simulation size and seed
    """
    read_service = as_service(read_service, "read_service")
    write_service = read_service if write_service is None else as_service(
        write_service, "write_service")
    read_fraction = _check_fraction(read_fraction, "read fraction")
    arrival_rate = _check_positive(arrival_rate, "arrival rate")
    if objective not in ("percentile", "mean"):
        raise ConfigError(f"objective {objective!r} is unknown; use percentile or mean")
    _check_basic(basic, read_service)
    if basic != "simulation" and (not is_exponential(write_service)
                                  or write_service.mean() != read_service.mean()):
        raise ConfigError(f"basic={basic!r} needs reads and writes to share one "
                          "exponential service; use basic='simulation'")
    if isinstance(replicas, bool) or not isinstance(replicas, int) \
            or not 1 <= replicas <= nodes:
        raise ConfigError(f"replicas={replicas!r} must satisfy 1 <= replicas <= "
                          f"nodes={nodes}")
    percentile = check_percentile(percentile)
    read_mean, write_mean = float(read_service.mean()), float(write_service.mean())
    children = as_seed_sequence(seed).spawn(replicas + 1)
    options = []
    for R in range(1, replicas + 1):
        writes = [W for W in range(1, replicas + 1) if R + W > replicas]
        node_load = consistency_load(nodes, replicas, read_fraction, arrival_rate, R,
                                     read_mean, write_mean)
        if node_load >= UNSTABLE:
            # Unstable: latency grows without bound, so the pair can never be best.
            options += [ConsistencyOption(R, W, node_load, *([math.inf] * 6), False)
                        for W in writes]
            continue
        read_share = (read_fraction * R / (read_fraction * R
                                          + (1 - read_fraction) * replicas))
        sizes = sorted({R} | set(range(min(writes), replicas + 1)))
        if basic == "simulation":
            samples = _class_basic_sojourns(sizes, node_load, read_share, read_service,
                                            write_service, jobs, children[R])
            end = max(float(s.max()) for by in samples.values() for s in by.values()
                      if s.size)
            grid = np.linspace(0.0, end, GRID_POINTS)
            read_samples = {i: by["read"] for i, by in samples.items() if "read" in by}
            write_samples = {i: by["write"] for i, by in samples.items() if "write" in by}
            read = (_simulated_class_distribution(R, R, read_samples, grid)
                    if read_samples else None)
        else:
            mu = 1.0 / read_mean
            end = (math.log(replicas) - math.log(1e-7)) / (mu * (1 - node_load))
            grid = np.linspace(0.0, end, GRID_POINTS)
            approximation = BASIC_APPROXIMATIONS[basic]
            basic_cdfs = {i: approximation(i, grid, node_load, mu) for i in sizes}
            read = quorum_cdf(R, R, {R: basic_cdfs[R]}, grid)
        for W in writes:
            if basic == "simulation":
                write = (_simulated_class_distribution(replicas, W, write_samples, grid)
                         if write_samples else None)
            else:
                write = quorum_cdf(replicas, W, basic_cdfs, grid)
            read_d = read if read is not None else write
            write_d = write if write is not None else read
            mix_mean, mix_q = _mix(read_fraction, read_d, write_d, percentile)
            reliable = all(d.percentile_reliable(percentile)
                           for d in (read, write) if d is not None)
            # an operation the mix never issues was not simulated: nothing to show
            # (its columns once repeated the other operation's)
            shown_read = ((read.mean(), read.percentile(percentile))
                          if read is not None else (math.nan, math.nan))
            shown_write = ((write.mean(), write.percentile(percentile))
                           if write is not None else (math.nan, math.nan))
            options.append(ConsistencyOption(
                read_quorum=R, write_quorum=W, node_load=node_load,
                read_mean=shown_read[0], read_q=shown_read[1],
                write_mean=shown_write[0], write_q=shown_write[1],
                mix_mean=mix_mean, mix_q=mix_q, reliable=reliable))
    key = ((lambda o: (o.mix_q, o.read_quorum + o.write_quorum))
           if objective == "percentile"
           else (lambda o: (o.mix_mean, o.read_quorum + o.write_quorum)))
    if all(o.node_load >= UNSTABLE for o in options):
        lightest = min(o.node_load for o in options)
        if not math.isfinite(lightest):
            raise ConfigError(f"unstable: an arrival rate of {arrival_rate:g} loads every "
                              "node past any finite load; give a rate the nodes can "
                              "serve (each node's load is below 1)")
        raise ConfigError(
            f"unstable: every (R, W) loads each node to >= {lightest:.3g}; lower the "
            f"arrival rate below {arrival_rate / lightest:.4g} or add nodes")
    best = min(options, key=key)
    return ConsistencyPlan(nodes, replicas, read_fraction, arrival_rate, percentile,
                           objective, basic, tuple(options), best)


def consistency_load(nodes: int, replicas: int, read_fraction: float,
                     arrival_rate: float, read_quorum: int, read_mean: float,
                     write_mean: float) -> float:
    """Load of a node under `plan_consistency`'s mix at read quorum ``read_quorum``:
    reads ask ``read_quorum`` replicas, writes every replica."""
    read_work = read_fraction * read_quorum * read_mean
    write_work = (1 - read_fraction) * replicas * write_mean
    return arrival_rate * (read_work + write_work) / nodes


def consistency_jobs(replicas: int, read_fraction: float, node_load=None) -> int:
    """Fewest basic-queue jobs `plan_consistency` needs (``basic="simulation"``): each
    class's tasks in the basic queues of every R it simulates get a percentile
    interval (`sizing.tails.section_jobs` of the rarest task share). ``node_load(R)``,
    if given, leaves out the R whose load `plan_consistency` finds unstable (it
    simulates none of their queues)."""
    read_fraction = _check_fraction(read_fraction, "read fraction")
    shares = []
    for R in range(1, replicas + 1):
        if node_load is not None and node_load(R) >= UNSTABLE:
            continue
        read = read_fraction * R / (read_fraction * R + (1 - read_fraction) * replicas)
        shares += [share for share in (read, 1 - read) if share > 0]
    return section_jobs(min(shares)) if shares else section_jobs()


def validation_jobs(read_fraction: float) -> int:
    """Fewest jobs of `simulate_consistency`: reads and writes (the rarer of the two)
    each get a percentile interval (`sizing.tails.section_jobs`)."""
    read_fraction = _check_fraction(read_fraction, "read fraction")
    return section_jobs(min(share for share in (read_fraction, 1 - read_fraction)
                            if share > 0))


def simulate_consistency(nodes: int, replicas: int, read_fraction: float,
                         arrival_rate: float, read_quorum: int, write_quorum: int,
                         read_service: Any = None, write_service: Any = None,
                         percentile: float = 99, jobs: int = 100_000,
                         seed=0) -> dict:
    """Reads (n,R,R) and writes (n,r,W) simulated together on shared nodes.

    Returns means with batch-means intervals and ``percentile`` with sectioning
    intervals for reads, writes and the mix (keys ``read_mean``, ``read_mean_low``,
    ..., ``mix_q_high``).
    """
    read_service = as_service(read_service, "read_service")
    write_service = read_service if write_service is None else as_service(
        write_service, "write_service")
    classes = []
    if read_fraction > 0:
        classes.append(JobClass("read", read_fraction, read_quorum, read_quorum,
                                read_service))
    if read_fraction < 1:
        classes.append(JobClass("write", 1 - read_fraction, replicas, write_quorum,
                                write_service))
    result = simulate_workload(Workload(nodes, classes, arrival_rate), jobs=jobs,
                               seed=seed)
    out = dict(read_quorum=read_quorum, write_quorum=write_quorum,
               node_load=float(result.utilisation.mean()))
    parts = [(c.name, result.class_sojourns(c.name)) for c in classes]
    parts.append(("mix", result.sojourns))
    for name, x in parts:
        s = result.summaries.get(name, result.overall)
        q = percentile_interval(x, percentile)
        out.update({f"{name}_mean": s.mean, f"{name}_mean_low": s.ci_low,
                    f"{name}_mean_high": s.ci_high, f"{name}_q": q.mean,
                    f"{name}_q_low": q.low, f"{name}_q_high": q.high})
    return out


# --- capacity planner -------------------------------------------------------------

@dataclass(frozen=True)
class CapacityCandidate:
    """One (n, r, consistency) evaluated by the capacity planner."""

    nodes: int
    replicas: int
    level: str
    quorum: int
    node_load: float
    predicted: float
    bracket_high: float
    meets: bool
    confident: bool

    def as_row(self) -> dict:
        return dict(self.__dict__)

    def consistency(self) -> str:
        """The level as a report names it: "QUORUM (k=2)", or "k=2" for a level
        given as its number of acknowledgements."""
        return (f"k={self.quorum}" if self.level == str(self.quorum)
                else f"{self.level} (k={self.quorum})")


@dataclass(frozen=True)
class CapacityPlan:
    """The cheapest configuration meeting the SLA (or None) and every candidate tried."""

    write_rate: float
    target: float
    percentile: float
    basic: str
    best: CapacityCandidate | None
    candidates: tuple[CapacityCandidate, ...] = field(default=())
    #: The search space (as `plan_capacity` takes it, with its defaults), whose
    #: binding limit `why` names when no candidate meets the target.
    levels: tuple = DEFAULT_LEVELS
    service: Any = None
    min_replicas: int = 1
    max_replicas: int = 5
    max_nodes: int = 20

    def report(self) -> str:
        head = (f"SLA: {percentile_label(self.percentile)} write latency <= {self.target:g} at "
                f"{self.write_rate:g} writes per unit time ("
                + ("each candidate's queue simulated" if self.basic == DIRECT else
                   f"basic queues: {self.basic}") + ")")
        if self.best is None:
            return (head + "\nno configuration in the search space meets "
                    f"{percentile_label(self.percentile)} <= {self.target:g}: {self.why()}")
        b = self.best
        return (head + f"\nbest: n={b.nodes}, r={b.replicas}, {b.consistency()},"
                f" node load {b.node_load:.3f}, predicted {percentile_label(self.percentile)} "
                f"{b.predicted:.4g} (bracket up to {_upper(b.bracket_high)}; "
                f"{'confident' if b.confident else 'NOT confident'})"
                f"\n{len(self.candidates)} candidates evaluated")


    def why(self) -> str:
        """Why no candidate meets the target, and which limit of the search to change
        (`_binding_limit`)."""
        stable = [c for c in self.candidates if math.isfinite(c.predicted)]
        if not stable:
            return ("no candidate's percentile lies within its simulated range; raise "
                    "--jobs")
        fastest = min(stable, key=lambda c: c.predicted)
        return (f"the fastest candidate, n={fastest.nodes}, r={fastest.replicas}, "
                f"{fastest.consistency()} (node load {fastest.node_load:.3f}), predicts "
                f"{percentile_label(self.percentile)} {fastest.predicted:.4g} > "
                f"{self.target:g}; {self._binding_limit(fastest)}")

    def _work(self) -> float:
        """Writes per unit time times the mean service time."""
        service = stats.expon() if self.service is None else self.service
        return self.write_rate * float(service.mean())

    def _binding_limit(self, fastest: CapacityCandidate) -> str:
        """What to change, from each replica count's unloaded percentile
        (`fastest_unloaded`), below which no load of any cluster goes: if some
        replicas searched reach the target unloaded, the nodes bind (lighter loads
        get there); else the replicas, if more (or fewer) reach it; else the levels,
        if ONE would; else only the target."""
        label = percentile_label(self.percentile)
        service = stats.expon() if self.service is None else self.service
        floor = fastest_unloaded(self.levels, self.percentile, service)
        reach = np.flatnonzero(floor <= self.target) + 1
        widest = min(self.max_replicas, self.max_nodes)
        searched = reach[(reach >= self.min_replicas) & (reach <= widest)]
        if searched.size:
            r = fastest.replicas if fastest.replicas in searched else int(searched[-1])
            # one replica more could help: it is stable on a cluster the search takes
            # (each copy loads every node more) and, unloaded, both faster than the
            # most searched and within the target
            wider = (fastest.replicas == self.max_replicas < MAX_NODES
                     and (self.max_replicas + 1) * self._work() / MAX_NODES < UNSTABLE
                     and floor[self.max_replicas] < floor[self.max_replicas - 1]
                     and floor[self.max_replicas] <= self.target)
            more = f"--max-replicas above {self.max_replicas}"
            unloaded = f"unloaded, {_reach(r)} {label} {floor[r - 1]:.4g}"
            if self.max_nodes < MAX_NODES:
                return (f"raise --max-nodes above {self.max_nodes} (lighter node loads: "
                        f"{unloaded}){f' or {more}' if wider else ''} or relax --target")
            # no larger search is taken: the load is the lever
            return (f"even {MAX_NODES:,} nodes, the largest search, load each node too "
                    f"much ({unloaded}): lower --write-rate or the mean service time "
                    f"({SERVICE_OPTIONS}){f', raise {more}' if wider else ''} or relax "
                    "--target")
        if (reach > widest).any():
            need = int(reach[reach > widest].min())
            flags = [flag for flag, value in (("--max-replicas", self.max_replicas),
                                              ("--max-nodes", self.max_nodes))
                     if value < need]
            return (f"raise {' and '.join(flags)} to at least {need} (even unloaded, "
                    f"{counted(widest, 'replica')} or fewer miss it: {_reach(need)} {label} "
                    f"{floor[need - 1]:.4g}) or relax --target")
        if reach.size:
            need = int(reach.max())
            return (f"lower --min-replicas to {need} (even unloaded, more replicas at "
                    f"these levels miss it: {_reach(need)} {label} "
                    f"{floor[need - 1]:.4g}) or relax --target")
        one = np.flatnonzero(fastest_unloaded(("ONE",), self.percentile, service)
                             <= self.target) + 1
        if one.size and 1 not in {level_key(level) for level in self.levels}:
            return (f"add ONE to --levels (even unloaded, no level given reaches it on "
                    f"up to {MAX_NODES:,} replicas; ONE on {int(one[0])} does) or relax "
                    "--target")
        return (f"even unloaded, no cluster of up to {MAX_NODES:,} replicas has "
                f"{label} below {floor.min():.4g}: relax --target")


def _reach(replicas: int) -> str:
    return f"{replicas} {'replica reaches' if replicas == 1 else 'replicas reach'}"


def unloaded_percentile(replicas, quorum, percentile: float, service: Any):
    """The ``percentile`` of the ``quorum``-th shortest of ``replicas`` service times
    (that of ``quorum`` of ``replicas`` uniforms is Beta(quorum, replicas - quorum +
    1)): a write's latency when nothing queues. A task's sojourn is never shorter
    than its service, so no load on any number of nodes goes below it."""
    return service.ppf(stats.beta.ppf(percentile / 100, quorum, replicas - quorum + 1))


def fastest_unloaded(levels: Sequence[str | int], percentile: float,
                     service: Any) -> np.ndarray:
    """For r = 1 .. `MAX_NODES` replicas (entry r - 1), the lowest
    `unloaded_percentile` of the ``levels`` usable on r (inf where none is)."""
    replicas = np.arange(1, MAX_NODES + 1)
    fastest = np.full(MAX_NODES, np.inf)
    for level in levels:
        quorum = np.array([_quorum(level, r) or 0 for r in replicas])
        usable = quorum > 0
        fastest[usable] = np.minimum(fastest[usable], unloaded_percentile(
            replicas[usable], quorum[usable], percentile, service))
    return fastest


def fewest_stable_nodes(work_rate: float, replicas: int) -> int:
    """Fewest nodes on which ``replicas`` copies of ``work_rate`` (writes per unit
    time times E[X]) load each node below 1."""
    if not math.isfinite(replicas * work_rate / UNSTABLE):
        raise ConfigError(f"{replicas} replica(s) of {work_rate:g} units of work per "
                          "unit time overflow a float; give a write rate (or service "
                          "mean) that a cluster of at most 10^300 nodes could carry")
    nodes = math.floor(replicas * work_rate / UNSTABLE) + 1
    while replicas * work_rate / nodes >= UNSTABLE:
        # one node more changes nothing a float can see past 2^53 nodes: step by a
        # part in 10^12 there (a count past any cluster anyway)
        nodes += max(1, nodes // 10 ** 12)
    return nodes


def _upper(value: float) -> str:
    return (f"{value:.4g}" if math.isfinite(value)
            else "beyond the simulated range: raise --jobs")


#: The parameters of `plan_capacity` that `check_capacity_search` checks or names
#: (``service``, whose mean is a lever of an overload), by the names its messages
#: give them unless the caller passes its own.
SEARCH_PARAMETERS = ("write_rate", "levels", "min_replicas", "max_replicas",
                     "min_nodes", "max_nodes", "service")
#: How `CapacityPlan.why`, worded in the CLI's options, names the mean service
#: time: the command's ``names`` for ``service``.
SERVICE_OPTIONS = "--mu or --service"


@dataclass(frozen=True)
class _Names:
    """How a message names a search parameter and its value: as `plan_capacity`'s
    argument (``max_nodes=4``) or, through ``names``, as the caller's option
    (``--max-nodes 4``)."""

    names: Mapping[str, str] | None = None

    def __call__(self, parameter: str, value: Any = None) -> str:
        if not self.names:
            return parameter if value is None else f"{parameter}={value}"
        return self.names[parameter] + ("" if value is None else f" {value}")


def check_capacity_search(write_rate: float, service: Any,
                          levels: Sequence[str | int], min_replicas: int = 1,
                          max_replicas: int = 5, min_nodes: int = 1,
                          max_nodes: int = 20,
                          names: Mapping[str, str] | None = None) -> None:
    """Refuse a search space of `plan_capacity` that is empty, larger than
    `MAX_NODES`, holds a level no candidate can use, or overloads every cluster.

    ``names`` maps each of `SEARCH_PARAMETERS` to the name its messages use, the
    value after a blank (the CLI's ``{"max_nodes": "--max-nodes", ...}``: "--max-nodes
    4"; ``service``, whose mean an overload names, never has a value: the CLI's
    "--mu or --service"); by default they are `plan_capacity`'s arguments
    ("max_nodes=4"). Every limit a message advises is one the search takes (at most
    `MAX_NODES`), and fewer replicas are advised only down to the fewest some level
    given runs on.
    """
    name = _Names(names)
    if not levels:
        raise ConfigError(f"no consistency level given ({name('levels')}); give at "
                          "least one, e.g. QUORUM")
    bounds = {"min_replicas": min_replicas, "max_replicas": max_replicas,
              "min_nodes": min_nodes, "max_nodes": max_nodes}
    for parameter, value in bounds.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ConfigError(f"{name(parameter, repr(value))} must be a whole number "
                              ">= 1")
        if value > MAX_NODES:
            # each cluster size costs up to (replicas x levels) runs; a lower bound
            # past it would be advised a refused upper one
            raise ConfigError(f"{name(parameter, value)} exceeds the limit "
                              f"{MAX_NODES:,} of the search; give {name(parameter)} at "
                              f"most {MAX_NODES:,}")
    for low, high in (("min_replicas", "max_replicas"), ("min_nodes", "max_nodes"),
                      ("min_replicas", "max_nodes")):
        if bounds[low] > bounds[high]:
            raise ConfigError(
                f"{name(low, bounds[low])} exceeds {name(high, bounds[high])}, so there "
                f"is nothing to search; give {name(low)} at most {bounds[high]} or "
                f"{name(high)} at least {bounds[low]}")
    for level in levels:
        if not (_is_count(level) and int(level) > MAX_NODES):
            consistency_quorum(level, MAX_NODES)  # its spelling, and k >= 1 for a number
    _check_levels_fit(levels, max_replicas, max_nodes, name)
    work = write_rate * float(service.mean())
    # the lightest candidate a level given runs on (THREE runs on no 2 replicas)
    least = min(fewest_replicas(level) for level in levels)
    lightest = max(min_replicas, least)
    if lightest * work / max_nodes >= UNSTABLE:
        fewest = fewest_stable_nodes(work, lightest)
        if fewest <= MAX_NODES:
            fix = f"raise {name('max_nodes')} to at least {_count(fewest)}"
        else:
            fix = (f"it needs {_count(fewest)} nodes, beyond the limit {MAX_NODES:,}: "
                   f"lower {name('write_rate')} or the mean service time "
                   f"({name('service')})")
            # fewer copies load each node less: the most replicas some search carries,
            # through a lower minimum, or else through levels that run on fewer
            fewer = next((r for r in range(lightest - 1, 0, -1)
                          if fewest_stable_nodes(work, r) <= MAX_NODES), None)
            if fewer is not None and fewer >= least:
                needed = fewest_stable_nodes(work, fewer)
                fix += (f", or lower {name('min_replicas')} to {fewer}"
                        + (f" and raise {name('max_nodes')} to at least {needed:,}"
                           if needed > max_nodes else ""))
            elif fewer is not None:
                fix += f", or give levels that run on {fewer} replica(s) ({name('levels')})"
        why = "" if lightest == min_replicas else ", the fewest any level given runs on"
        raise ConfigError(
            f"every cluster of up to {name('max_nodes', max_nodes)} is overloaded at "
            f"{name('write_rate', f'{write_rate:g}')} (node load = replicas x rate x "
            f"mean service / nodes >= 1 with {lightest} replica(s){why}); {fix}")


def _check_levels_fit(levels, max_replicas: int, max_nodes: int, name: _Names) -> None:
    """Refuse a level that no candidate can use: one needing more replicas than the
    most searched (``max_replicas``, and ``max_nodes``, since replicas never exceed
    nodes). A level that fits only some candidates (THREE with r from 1 to 5) is
    skipped where it does not fit, by `plan_capacity`."""
    widest = min(max_replicas, max_nodes)
    over = [level for level in levels if fewest_replicas(level) > widest]
    if not over:
        return
    named = [str(level) for level in over if not _is_count(level)]
    needs = [f"{level} needs {fewest_replicas(level)} replicas" for level in named]
    if len(named) < len(over):
        needs.append("a level of k acknowledgements needs k replicas")
    # only a level within the largest search is fixed by a larger one: the limits
    # named are those to raise for it, else those that set the most searched
    reach = [fewest_replicas(level) for level in over
             if fewest_replicas(level) <= MAX_NODES]
    beyond = [str(level) for level in over if fewest_replicas(level) > MAX_NODES]
    bound = max(reach) if reach else widest + 1
    limit = {"max_replicas": max_replicas, "max_nodes": max_nodes}
    limits = [parameter for parameter, value in limit.items() if value < bound]
    fitting = [level for level in CONSISTENCY_LEVELS if fewest_replicas(level) <= widest]
    message = (f"{name('levels', ','.join(map(str, over)))}: {', '.join(needs)}, and "
               f"the search has at most {widest} ("
               + " and ".join(name(parameter, limit[parameter]) for parameter in limits)
               + f"); give levels from 1 to {widest}"
               + (f" or names from {','.join(fitting)}" if named else ""))
    if reach:
        message += (", or raise " + " and ".join(map(name, limits))
                    + f" to at least {bound}")
    if beyond:
        message += (f"; {','.join(beyond)} {'is' if len(beyond) == 1 else 'are'} past "
                    f"the largest search, {MAX_NODES:,} replicas")
    raise ConfigError(message)


def _count(nodes: int) -> str:
    """A number of nodes as a message gives it (a float's digits past 10^15)."""
    return f"{nodes:,}" if nodes < 10 ** 15 else f"{nodes:.3g}"


def plan_capacity(write_rate: float, target: float, percentile: float = 99,
                  service: Any = None, levels: Sequence[str | int] = DEFAULT_LEVELS,
                  min_replicas: int = 1, max_replicas: int = 5, min_nodes: int = 1,
                  max_nodes: int = 20, basic: str = DIRECT, jobs: int = 100_000,
                  seed=0, progress: bool = False) -> CapacityPlan:
    """The smallest cluster meeting "p``percentile`` write latency <= target".

    Search space and objective: module docstring. Each candidate's percentile is a
    simulation of its own queue (``basic="direct"``, `simulated_percentile`; the
    candidates of one (n, r) share one seed, so their percentiles are ordered as
    their quorums) or Theorem 1 on basic queues at its node load
    ``r * write_rate * E[X] / n`` (`sizing.tails.model_distribution`);
    ``jobs``/``seed`` size the simulations. ``progress`` prints the worst-case number of
    those runs (`capacity_runs`) and a bar on stderr, with the time left.
    """
    service = as_service(service)
    percentile = check_percentile(percentile)
    if isinstance(levels, (str, int)):
        levels = [levels]  # one level by itself ("QUORUM" was read letter by letter)
    write_rate = _check_positive(write_rate, "write rate")
    from forkjoin_sim.arrivals._checks import positive_rate

    positive_rate(write_rate, "write rate")  # within what a run's clock can hold
    target = _check_positive(target, "latency target")
    _check_basic(basic, service, (DIRECT, *BASIC_SOURCES))
    check_capacity_search(write_rate, service, levels, min_replicas, max_replicas,
                          min_nodes, max_nodes)
    # the same level given twice (TWO and 2, or QUORUM and quorum) is planned once
    distinct = {}
    for level in levels:
        distinct.setdefault(level_key(level), str(level).upper())

    from tqdm.auto import tqdm

    mean_service = float(service.mean())
    search = (tuple(levels), service, min_replicas, max_replicas, max_nodes)
    candidates = []
    cache: dict[tuple[int, int, int], tuple[float, float, bool]] = {}
    worst = (capacity_runs(write_rate * mean_service, levels, min_replicas, max_replicas,
                           min_nodes, max_nodes) if basic in (DIRECT, "simulation") else 0)
    what = "queue" if basic == DIRECT else "basic-queue"
    if progress and worst:
        print(f"plan-capacity: at most {worst:,} {what} simulations of {jobs:,} jobs "
              f"(nodes {max(min_nodes, min_replicas)}..{max_nodes}); the search stops "
              "at the first node count that meets the target", file=sys.stderr)
    from forkjoin_sim.run import PROGRESS_DELAY, bar_shown

    with tqdm(total=worst, disable=not (progress and worst) or not bar_shown(), unit="run", leave=False,
              delay=PROGRESS_DELAY,
              desc=f"plan-capacity {what}s") as bar:
        for n in range(max(min_nodes, min_replicas), max_nodes + 1):
            feasible = []
            for r in range(min_replicas, min(max_replicas, n) + 1):
                node_load = r * write_rate * mean_service / n
                for level in distinct.values():
                    k = _quorum(level, r)
                    if k is None:
                        continue  # e.g. THREE with r = 2
                    if node_load >= UNSTABLE:
                        candidates.append(CapacityCandidate(
                            n, r, level, k, node_load, math.inf, math.inf, False, False))
                        continue
                    key = (n, r, k)
                    if key not in cache:
                        cache[key] = _percentile(n, r, k, write_rate, percentile,
                                                 service, basic, jobs, seed)
                        bar.update(1)
                    predicted, high, reliable = cache[key]
                    meets = not math.isnan(predicted) and predicted <= target
                    # the bracket's upper end meets it, and the percentile is not
                    # lost in the simulation's sampling error (few jobs)
                    confident = meets and high <= target and reliable
                    c = CapacityCandidate(n, r, level, k, node_load, predicted, high,
                                          meets, confident)
                    candidates.append(c)
                    if meets:
                        feasible.append(c)
            if feasible:
                best = min(feasible, key=lambda c: (-c.replicas, -c.quorum, c.predicted))
                return CapacityPlan(write_rate, target, percentile, basic, best,
                                    tuple(candidates), *search)
        return CapacityPlan(write_rate, target, percentile, basic, None,
                            tuple(candidates), *search)


def _percentile(nodes, replicas, quorum, write_rate, percentile, service, basic, jobs,
                seed) -> tuple[float, float, bool]:
    """A candidate's predicted percentile, its bracket's upper end (inf past what was
    simulated) and whether it is within its sampling tolerance."""
    if basic == DIRECT:
        # one seed per (n, r): its quorums see one sample path, so ONE's percentile
        # never comes out above QUORUM's
        value = simulated_percentile(nodes, replicas, quorum, write_rate, percentile,
                                     service, jobs, child_seed(seed, nodes, replicas))
        # a section's percentile rests on its jobs beyond it: with few of them the
        # sectioning interval says nothing (100 jobs: p99 is each section's maximum)
        beyond = jobs * (1 - WARMUP) * (1 - percentile / 100) / QUANTILE_BATCHES
        reliable = (beyond >= SECTION_TAIL_JOBS and (value.high - value.low) / 2
                    <= DEFAULT_RELATIVE_TOLERANCE * value.mean)
        return value.mean, value.high, reliable
    d = model_distribution(nodes, replicas, quorum, write_rate * float(service.mean()),
                           service, basic, jobs=jobs, seed=seed)
    high = d.percentile_bracket(percentile)[1]
    # nan: the bracket's upper end lies beyond the simulated range.
    return (d.percentile(percentile), math.inf if math.isnan(high) else high,
            d.percentile_reliable(percentile))


def _quorum(level: str | int, replicas: int) -> int | None:
    """The quorum of ``level`` (a name or a number of acknowledgements) on
    ``replicas`` copies, or None if it needs more."""
    try:
        return consistency_quorum(level, replicas)
    except ConfigError:
        return None


def fewest_replicas(level: str | int) -> int:
    """Fewest replicas a consistency level can be used on: k for a number k of
    acknowledgements, 2 for TWO, 1 for QUORUM or ALL."""
    if _is_count(level):
        return int(level)
    return next(r for r in range(1, MAX_NODES + 1) if _quorum(level, r) is not None)


#: The level names whose quorum is the same on any number of replicas (ONE, TWO,
#: THREE), and that quorum: read off `consistency_quorum`, the table of levels.
FIXED_QUORUMS = {name: _quorum(name, MAX_NODES) for name in CONSISTENCY_LEVELS
                 if _quorum(name, MAX_NODES) == _quorum(name, MAX_NODES - 1)}


def level_key(level: str | int) -> str | int:
    """What makes two consistency levels one: a name in `FIXED_QUORUMS` is its
    number of acknowledgements (TWO is 2, "2" and 2); any other name is itself, in
    any case (QUORUM, ALL, and names the model does not know, such as LOCAL_ONE)."""
    if _is_count(level):
        return int(level)
    return FIXED_QUORUMS.get(level.upper(), level.upper())


def _is_count(level: str | int) -> bool:
    """Whether ``level`` is a number of acknowledgements (3 or "3"), not a name."""
    return not isinstance(level, str) or is_plain_whole(level)


def capacity_runs(work_rate: float, levels: Sequence[str | int], min_replicas: int,
                  max_replicas: int, min_nodes: int, max_nodes: int) -> int:
    """How many simulations `plan_capacity` runs at most (of candidates' queues, or of
    basic queues): one per stable (nodes, replicas, quorum) of the search space (it
    stops at the first node count that meets the target). ``work_rate`` is writes per
    unit time times E[X]."""
    runs = 0
    for n in range(max(min_nodes, min_replicas), max_nodes + 1):
        for r in range(min_replicas, min(max_replicas, n) + 1):
            if r * work_rate / n >= UNSTABLE:
                continue
            quorums = {_quorum(level, r) for level in levels} - {None}
            runs += len(quorums)
    return runs


def simulate_capacity(candidate: CapacityCandidate, write_rate: float,
                      percentile: float = 99, service: Any = None,
                      jobs: int = 100_000, seed=0):
    """Direct simulation of a candidate: its percentile with a sectioning interval."""
    return simulated_percentile(candidate.nodes, candidate.replicas, candidate.quorum,
                                write_rate, percentile, service, jobs, seed)


def simulated_percentile(nodes: int, replicas: int, quorum: int, write_rate: float,
                         percentile: float = 99, service: Any = None,
                         jobs: int = 100_000, seed=0):
    """The ``percentile`` of an (n, r, k) queue's write latency at ``write_rate``,
    simulated (fast engine), with a sectioning interval."""
    from forkjoin_sim.model import ForkJoinModel
    from forkjoin_sim.simulation import simulate

    service = as_service(service)
    percentile = check_percentile(percentile)
    model = ForkJoinModel(nodes, replicas, quorum, arrival_rate=write_rate,
                          service=service)
    return percentile_interval(simulate(model, jobs=jobs, seed=seed, engine="fast",
                                        progress=False).sojourns, percentile)
