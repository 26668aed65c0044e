"""The fastest read and write quorums (R, W) that meet a staleness constraint under load.

A constraint is either

- *t-visibility*: P(a read issued between ``t`` and ``t + window`` after the latest
  commit returns it) >= ``probability`` (PBS's "consistent at t ms"); or
- *versions*: P(a read is at most ``versions_behind`` committed versions behind)
  >= ``probability`` (0 behind is "consistent"; PBS's k-staleness with k =
  versions_behind + 1).

One queueing simulation (``forkjoin_sim.staleness.queueing``) of the given load,
write share, replica structure and laws serves every (R, W) on the same sample path.
A pair *meets* the constraint when it is strict (R + W > N: every read returns the
latest commit, exactly) or when the lower end of the 95% Wilson interval of its
simulated probability is at least ``probability``; a pair whose interval straddles
it is *undecided* (more operations would decide it) and is not chosen. Among the
pairs that meet it, the fastest is the one with the smallest ``percentile`` of the
latency of the operation mix (reads' and writes' latencies pooled in their
proportion; ``objective="mean"``: the mix's mean latency), ties to smaller R + W.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from forkjoin_sim.errors import ConfigError, counted, percentile_label
from forkjoin_sim.checks import check_percentile, plain_float
from forkjoin_sim.nodes import SharedQueue, Stages
from forkjoin_sim.staleness.intervals import inflation, share
from forkjoin_sim.staleness.queueing import ReplicatedKey, exponential_delays, simulate_queues


@dataclass(frozen=True)
class StalenessConstraint:
    """P(consistent t after commit) >= probability (``t`` given), or
    P(at most ``versions_behind`` versions behind) >= probability."""

    probability: float
    t: float | None = None
    window: float = 1.0
    versions_behind: int | None = None

    def __post_init__(self) -> None:
        p = self.probability
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 < p < 1:
            raise ConfigError(f"probability {p!r} must be strictly between 0 and 1, "
                              "e.g. 0.999")
        if (self.t is None) == (self.versions_behind is None):
            raise ConfigError("a staleness constraint needs exactly one of t (time after "
                              "commit) and versions_behind")
        if self.t is not None and not (math.isfinite(self.t) and self.t >= 0
                                       and math.isfinite(self.window) and self.window > 0):
            raise ConfigError(f"t={self.t!r}, window={self.window!r}: give t >= 0 and a "
                              "window > 0 (reads issued in [t, t + window) after commit)")
        if self.versions_behind is not None and (
                isinstance(self.versions_behind, bool)
                or not isinstance(self.versions_behind, (int, np.integer))
                or self.versions_behind < 0):
            raise ConfigError(f"versions_behind={self.versions_behind!r} must be a whole "
                              "number >= 0 (0: the latest version)")

    def describe(self) -> str:
        if self.t is not None:
            return (f"P(consistent {self.t:.10g}-{self.t + self.window:.10g} after commit) >= "
                    f"{self.probability:.10g}")
        return (f"P(at most {self.versions_behind} version(s) behind) >= "
                f"{self.probability:.10g}")

    def measure(self, result) -> np.ndarray:
        """Per read this constraint counts in a ``StalenessResult`` (in issue order),
        whether it met it."""
        if self.t is not None:
            inside = ((result.since_commit >= self.t)
                      & (result.since_commit < self.t + self.window))
            return result.consistent[inside]
        return result.versions_behind <= self.versions_behind


_CONSTRAINT = re.compile(r"^\s*(t|behind)\s*=\s*([^:]+?)\s*(?:,\s*window\s*=\s*([^:]+?))?"
                         r"\s*:\s*(.+?)\s*$", re.IGNORECASE)


def parse_constraint(text: str) -> StalenessConstraint:
    """A constraint from ``t=T[,window=D]:P`` (P(consistent in [T, T+D) after commit)
    >= P; D defaults to 1) or ``behind=M:P`` (P(at most M versions behind) >= P),
    e.g. ``t=10:0.999`` or ``behind=1:0.9999``."""
    match = _CONSTRAINT.match(str(text))
    if not match:
        raise ConfigError(f"staleness constraint {text!r}: write t=T:P (e.g. t=10:0.999, "
                          "optionally t=10,window=2:0.999) or behind=M:P (e.g. "
                          "behind=1:0.9999)")
    kind, value, window, probability = match.groups()
    try:
        value_f, probability_f = plain_float(value), plain_float(probability)
        window_f = 1.0 if window is None else plain_float(window)
    except ValueError:
        raise ConfigError(f"staleness constraint {text!r}: T, D and P must be numbers"
                          ) from None
    if kind.lower() == "t":
        return StalenessConstraint(probability_f, t=value_f, window=window_f)
    if window is not None or not value_f.is_integer() or value_f < 0:
        raise ConfigError(f"staleness constraint {text!r}: behind=M takes a whole M >= 0 "
                          "(0: the latest version) and no window, e.g. behind=1:0.9999")
    return StalenessConstraint(probability_f, versions_behind=int(value_f))


@dataclass(frozen=True)
class StalenessPlan:
    """Every (R, W) with its staleness measure and latencies; ``best`` is None when no
    pair meets the constraint. ``options["warnings"]`` holds each pair's doubts about
    the run (`latency_warnings`); ``warnings``, the plan's own doubts: pairs faster
    than ``best`` that the run cannot decide, and a run too short for its intervals."""

    key: ReplicatedKey
    constraint: StalenessConstraint
    objective: str
    percentile: float
    options: pd.DataFrame = field(repr=False)
    best: tuple[int, int] | None
    warnings: tuple[str, ...] = ()
    #: The user's cluster, when the key stands for one (`plan_from_args`); "" else.
    cluster: str = ""

    def report(self) -> str:
        key = self.key.describe()
        if self.cluster:
            key = f"{self.cluster}; modelled as one key's replicas: {key}"
        lines = [key, f"constraint: {self.constraint.describe()}; "
                 f"fastest by the mix's {self._objective_name()}"]
        table = self.options.drop(columns="warnings", errors="ignore")
        table["pick"] = ["<- best" if (r, w) == self.best else ""
                         for r, w in zip(table.read_quorum, table.write_quorum)]
        lines.append(table.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
        if self.best is None:
            lines.append("no (R, W) meets the constraint")
        return "\n".join(lines)

    def rows(self) -> list[dict]:
        """The options as CSV rows, with a ``best`` column and the pair's
        ``warnings`` joined by "; " (empty: none)."""
        return [dict(row, warnings="; ".join(row.get("warnings", ())),
                     best=(row["read_quorum"], row["write_quorum"]) == self.best)
                for row in self.options.to_dict("records")]

    def _objective_name(self) -> str:
        return "mean latency" if self.objective == "mean" else percentile_label(self.percentile)


def plan_staleness(key: ReplicatedKey, constraint: StalenessConstraint,
                   objective: str = "percentile", percentile: float = 99,
                   operations: int = 200_000, seed=0,
                   warmup: float = 0.1, progress=None) -> StalenessPlan:
    """Simulate ``key`` once and rank every (R, W) (module docstring).

    ``key.rate`` is the rate of operations reaching the key's replicas (the model has
    one key, on every one of its N nodes). ``progress(done, total)``, if given, is
    called with 0 before the run and after each of the ``total`` pairs is measured.
    """
    if not isinstance(key, ReplicatedKey):
        raise ConfigError("key must be a ReplicatedKey (replicas, rate, write share, "
                          "node structure, laws)")
    if not isinstance(constraint, StalenessConstraint):
        raise ConfigError("constraint must be a StalenessConstraint (see parse_constraint)")
    if objective not in ("percentile", "mean"):
        raise ConfigError(f"objective {objective!r} is unknown; use percentile or mean")
    percentile = check_percentile(percentile)
    if key.write_share in (0, 1):
        raise ConfigError(needs_reads_and_writes("write_share", key.write_share))
    report = progress or (lambda done, total: None)
    n = key.replicas
    pairs = [(r, w) for r in range(1, n + 1) for w in range(1, n + 1)]
    report(0, len(pairs))
    run = simulate_queues(key, operations, seed, warmup)
    rows, needs = [], []
    for done, (read_quorum, write_quorum) in enumerate(pairs, 1):
        result = run.outcome(read_quorum, write_quorum)
        _check_measured(result, operations, warmup, percentile)
        notes, need = latency_warnings(result.read_latency, result.write_latency,
                                       operations)
        rows.append({**_option(result, constraint, percentile), "warnings": notes})
        needs.append(need)
        report(done, len(pairs))
    table = pd.DataFrame(rows)
    speed = "mix_mean" if objective == "mean" else "mix_percentile"
    meeting = table[table.verdict == "meets"].assign(size=lambda t: t.read_quorum
                                                     + t.write_quorum)
    best = None
    if len(meeting):
        top = meeting.sort_values([speed, "size"], kind="stable").iloc[0]
        best = (int(top.read_quorum), int(top.write_quorum))
    doubts = _undecided_notes(table, best, speed, constraint, operations)
    doubts += _run_notes(table, needs, operations)
    return StalenessPlan(key, constraint, objective, float(percentile), table, best,
                         tuple(doubts))


def _undecided_notes(table: pd.DataFrame, best, speed: str,
                     constraint: StalenessConstraint, operations: int) -> list[str]:
    """The pairs faster than ``best`` (all, without one) whose interval straddles
    the constraint, and the operations that would decide them."""
    undecided = table[table.verdict == "undecided"]
    if best is not None:
        chosen = table.set_index(["read_quorum", "write_quorum"]).loc[best, speed]
        undecided = undecided[undecided[speed] < chosen]
    if not len(undecided):
        return []
    names = ", ".join(f"({r}, {w})" for r, w in zip(undecided.read_quorum,
                                                  undecided.write_quorum))
    needs = []
    for p, reads, correlated in zip(undecided.probability.fillna(0), undecided.reads,
                                    undecided.inflation):
        need = _reads_to_decide(round(p * reads), reads, constraint.probability)
        # correlated reads are worth fewer independent ones: as many more are needed
        needs.append(None if need is None else math.ceil(need * correlated))
    if all(needs):
        longest = max(math.ceil(operations * need / reads)
                      for need, reads in zip(needs, undecided.reads))
        more = (f"about {longest:,} operations (--jobs) would decide "
                f"{'it' if len(undecided) == 1 else 'them'} if the estimates hold")
    else:
        more = (f"simulate more operations (--jobs) to decide "
                f"{'it' if len(undecided) == 1 else 'them'}")
    what = ("undecided, and no pair meets the constraint" if best is None
            else f"undecided and faster than the pick {best}")
    return [f"{what}: (R, W) = {names}; the 95% interval of the measured probability "
            f"straddles {constraint.describe()}; {more}"]


def _reads_to_decide(successes: int, reads: int, probability: float) -> int | None:
    """Reads at which the 95% Wilson interval of the proportion ``successes / reads``
    no longer holds ``probability`` (None: no reads, or an estimate equal to it).

    The Wilson interval is the score test's: the p with (estimate - p)**2 <= z**2 p
    (1 - p) / reads, so it leaves p once reads > z**2 p (1 - p) / (estimate - p)**2.
    """
    if reads == 0 or math.isclose(successes / reads, probability):
        return None
    z = stats.norm.ppf(0.975)
    return math.floor(z ** 2 * probability * (1 - probability)
                      / (successes / reads - probability) ** 2) + 1


def _run_notes(table: pd.DataFrame, needs: list, operations: int) -> list[str]:
    """One note when some pair doubts the run (`latency_warnings`)."""
    doubtful = table[table.warnings.map(bool)]
    if not len(doubtful):
        return []
    first = doubtful.iloc[0]
    longest = max((need for need in needs if need is not None), default=None)
    more = ("" if longest is None or longest <= operations else
            f"; about {longest:,} operations (--jobs) would give a +-1% mean interval")
    return [f"{len(doubtful)} of {len(table)} (R, W) pair(s) doubt the run of "
            f"{operations:,} operations, e.g. R={first.read_quorum}, "
            f"W={first.write_quorum}: {first.warnings[0]}; so the plan's intervals (low, "
            f"high) are too narrow and its latencies rough{more}"]


def latency_warnings(read_latency, write_latency, operations: int,
                     more: str = "operations (--jobs)") -> tuple[list[str], int | None]:
    """Doubts about a run under load, and the operations that would settle it (None
    without doubt).

    The first of ``simulate``'s two rules (its second, an interval wider than +-10%,
    is left out: a staleness run's latencies are a side result): the measured
    latencies of reads and of writes, each in issue order, are summarised by batch
    means; a summary that doubts itself (lag-1 autocorrelation of the batch means, too
    few batches) is reported with
    `forkjoin_sim.measure.convergence.convergence_notes`. A kind with fewer than two
    measured operations is reported as having no latency, and told to run more
    ``more`` (what to ask for, as the caller's option names it).
    """
    from forkjoin_sim.measure.convergence import convergence_notes, needed_jobs
    from forkjoin_sim.measure.statistics import summarize

    notes, need = [], None
    for kind, sample in (("read", read_latency), ("write", write_latency)):
        if sample.size < 2:
            notes.append(f"{sample.size} {kind}(s) measured (after the warm-up"
                         f"{', with a commit before them' if kind == 'read' else ''}): "
                         f"no {kind} latency; run more {more}")
            continue
        summary = summarize(sample, warmup=0)
        if summary.warnings:
            notes += [f"{kind} latency: {note}" for note in
                      convergence_notes(summary, operations, what="the mean")]
            need = max(need or 0, needed_jobs(summary, operations))
    return notes, need


def run_doubts(read_latency, write_latency, utilisation: float, operations: int,
               more: str = "operations (--jobs)") -> tuple[list[str], int | None]:
    """What a run under load says of one pair beyond its set-up: its latencies'
    convergence (`latency_warnings`) and a busiest stage near saturation
    (`saturation_note`), and the operations that would settle the first."""
    notes, need = latency_warnings(read_latency, write_latency, operations, more)
    return notes + saturation_note(utilisation), need


#: Busy share of the busiest stage past which a run under load is named as near
#: saturation: its queues grow for long stretches, so a run of this length has no
#: steady state to measure (a review saw P(stale) of 50 closed-loop clients at 99.5%
#: move from 0.455 to 0.471 between 200,000 and 800,000 operations, and two seeds of
#: 800,000 give 0.471 and 0.514, their intervals apart).
SATURATED = 0.95
#: How `saturation_note` begins.
SATURATION_START = "the busiest stage is busy"


def saturation_note(utilisation: float) -> list[str]:
    """The note on a run whose busiest stage is busy at least `SATURATED` of the time
    (none below)."""
    if not utilisation >= SATURATED:
        return []
    return [f"{SATURATION_START} {100 * utilisation:.1f}% of the time: so near "
            "saturation the queues drift for longer than the run, and its shares and "
            "latencies move with the run's length and seed beyond their intervals; "
            "lower the load (--rate, --clients) or the work per operation"]


def needs_reads_and_writes(name: str, share: float, of: str = "writes",
                           otherwise: str = "") -> str:
    """The one message refusing a mix without reads or without writes.

    ``name`` is the share as the user gave it (``"--write-share"``, ``"write_share"``),
    ``share`` its value, the fraction of operations that are ``of`` (``"writes"`` or
    ``"reads"``); ``otherwise`` is what to do instead, e.g. ``"use forkjoin-sim
    plan-consistency"`` (empty: nothing)."""
    writes = share if of == "writes" else 1 - share
    example = 0.1 if of == "writes" else 0.9  # one write in ten, either way
    return (f"{name} {share:g} has no {'writes' if writes == 0 else 'reads'}, and "
            "staleness needs both reads and writes (a read is stale only against a "
            f"write); give {name} strictly between 0 and 1 (e.g. {example:g})"
            + (f", or for latency alone {otherwise}" if otherwise else ""))


def operations_needed(write_share: float, warmup: float, percentile: float) -> int:
    """Operations a run needs for the rarer of reads and writes to bound the
    ``percentile`` of its latency on average: n measured values bound the
    distribution-free 95% interval of the p-th percentile on both sides once
    max(p, 1 - p) ** n <= 0.025."""
    rarer = min(write_share, 1 - write_share) * (1 - warmup)
    tail = max(percentile, 100 - percentile) / 100
    measured = math.ceil(math.log(0.025) / math.log(tail))
    return max(2, math.ceil(measured / rarer))


def _check_measured(result, operations: int, warmup: float, percentile: float) -> None:
    """Refuse a run that measured no reads (with a commit before them) or no writes
    for a pair: it has no latency to rank by."""
    for kind, sample in (("reads", result.read_latency), ("writes", result.write_latency)):
        if sample.size == 0:
            need = operations_needed(result.key.write_share, warmup, percentile)
            raise ConfigError(
                f"the run of {operations:,} operations measured no {kind} for R="
                f"{result.read_quorum}, W={result.write_quorum} (write share "
                f"{result.key.write_share:g}, warm-up {warmup:g}; a read counts once a "
                f"write committed before it), so it has no {percentile_label(percentile)} to rank by; "
                f"simulate at least {max(need, operations + 1):,} operations (--jobs)")


def _option(result, constraint: StalenessConstraint, percentile: float) -> dict[str, Any]:
    n = result.key.replicas
    strict = result.read_quorum + result.write_quorum > n
    met = constraint.measure(result)
    reads = int(met.size)
    correlated = inflation(met)
    estimate, low, high = share(met, inflated=correlated)  # NaN for no read
    if strict:
        verdict = "meets"  # exact: a read quorum meets every write quorum
    elif reads and low >= constraint.probability:
        verdict = "meets"
    elif reads and high < constraint.probability:
        verdict = "fails"
    else:
        verdict = "undecided"
    mix = np.concatenate([result.read_latency, result.write_latency])
    return {"read_quorum": result.read_quorum, "write_quorum": result.write_quorum,
            "strict": strict, "reads": reads, "probability": estimate, "low": low,
            "high": high, "verdict": verdict, "inflation": correlated,
            "read_percentile": float(np.percentile(result.read_latency, percentile)),
            "write_percentile": float(np.percentile(result.write_latency, percentile)),
            "mix_percentile": float(np.percentile(mix, percentile)),
            "mix_mean": float(mix.mean()),
            "utilisation": float(result.utilisation.max())}


def key_for(replicas: int, rate: float, write_share: float, structure: str = "stages",
            read_threads: int = 1, write_threads: int = 1, read_service: Any = None,
            write_service: Any = None, delays: Any = None) -> ReplicatedKey:
    """The ``ReplicatedKey`` of a planner question (defaults: exponential service of
    mean 1, every message exponential of mean 0.5)."""
    if structure not in ("stages", "shared"):
        raise ConfigError(f"structure {structure!r} is unknown; use stages or shared")
    node = (Stages(read_threads, write_threads) if structure == "stages"
            else SharedQueue(read_threads))
    return ReplicatedKey(replicas, rate, write_share, node=node,
                         read_service=stats.expon() if read_service is None else read_service,
                         write_service=stats.expon() if write_service is None
                         else write_service,
                         delays=exponential_delays() if delays is None else delays)


# --- command-line glue for ``plan-consistency --staleness`` -----------------------

#: Threads per stage the command line accepts (as ``mix``).
MAX_THREADS = 100_000



def _only(flags: list[str]) -> str:
    return f"{', '.join(flags)} only appl{'ies' if len(flags) == 1 else 'y'}"


#: What the staleness options are when not given.
STALENESS_DEFAULTS = {"structure": "stages", "read_threads": 1, "write_threads": 1,
                      "delays": "exp:0.5"}


def check_staleness_arguments(args, latency_only: dict[str, object]) -> None:
    """Refuse options that would do nothing, then fill in the defaults.

    Without ``--staleness`` the staleness options do nothing; with it, the
    ``latency_only`` options (name -> value when not given) do nothing, since every
    pair is simulated already.
    """
    def flag(name: str) -> str:
        return "--" + name.replace("_", "-")

    if not args.staleness:
        given = [flag(name) for name in STALENESS_DEFAULTS
                 if getattr(args, name) is not None]
        if given:
            raise ConfigError(f"{_only(given)} to the staleness plan; add --staleness "
                              "CONSTRAINT (e.g. t=10:0.999) or leave "
                              f"{'it' if len(given) == 1 else 'them'} out")
    else:
        given = [flag(name) for name, unset in latency_only.items()
                 if getattr(args, name) != unset]
        if given:
            raise ConfigError(f"{_only(given)} to the latency plan; with --staleness "
                              "every pair is simulated (its size is --jobs), so leave "
                              f"{'it' if len(given) == 1 else 'them'} out")
        parse_constraint(args.staleness)  # a bad constraint is refused before any work
        if args.read_fraction in (0, 1):
            raise ConfigError(needs_reads_and_writes(
                "--read-fraction", args.read_fraction, of="reads",
                otherwise="leave out --staleness"))
    _fill_defaults(args)


def _fill_defaults(args) -> None:
    for name, default in STALENESS_DEFAULTS.items():
        if getattr(args, name) is None:
            setattr(args, name, default)


def plan_from_args(args, read_service, write_service, progress=None) -> StalenessPlan:
    """The staleness plan that ``plan-consistency --staleness`` asks for; its
    ``warnings`` go to `warnings.warn` (the command shows them as "warning:" lines).

    Every node gets ``rate * replicas / nodes`` operations per unit time in the
    (n, r) cluster; the model's replica set of one key is given that rate, so a
    replica works as hard as in the cluster (all operations are on that key).
    ``progress`` is `plan_staleness`'s.
    """
    import warnings

    from forkjoin_sim.laws.service import parse_service
    from forkjoin_sim.staleness.wars import MessageLaws

    _fill_defaults(args)
    constraint = parse_constraint(args.staleness)
    delay = parse_service(args.delays, delay=True)
    key = key_for(args.replicas, args.rate * args.replicas / args.nodes,
                  1 - args.read_fraction, args.structure, args.read_threads,
                  args.write_threads, read_service,
                  read_service if write_service is None else write_service,
                  MessageLaws(delay, delay, delay, delay))
    plan = plan_staleness(key, constraint, args.objective, args.percentile,
                          operations=args.jobs, seed=args.seed, progress=progress)
    plan = replace(plan, cluster=f"{counted(args.nodes, 'node')}, "
                                 f"{counted(args.replicas, 'replica')}, {args.rate:g} "
                                 "ops per unit time in all")
    for note in plan.warnings:
        warnings.warn(note, UserWarning, stacklevel=2)
    return plan

