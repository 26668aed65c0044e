"""A calibrated closed-network Cassandra model: the fit, its anchors and its TOML text.

`cassandra calibrate` (the default structures of `sizing.closed_network`) writes this
model; `cassandra predict --model` reads it (`sizing.network_model_file`). Beside the
fitted demands it keeps the *anchors*: the log ratio measured / model of every fitted
row. A prediction is the model's value times the anchor that applies to the query row
(the model's discrepancy, carried to rows the fit did not see):

1. the same operation and level was fitted: its anchors, interpolated linearly in
   threads between the fitted thread counts (constant past the ends: the curve keeps
   its last known miss);
2. else the same operation was fitted at other levels: each one's anchor at these
   threads (as in 1), then interpolated linearly in the level k (the replicas it
   waits for) between them, constant past the outermost (one level: its anchor), as
   in threads. Between two measured levels a model without curvature in
   the level reproduces the line through them; past them the miss of the nearest
   measured level holds: a line through two noisy anchors would double their
   difference there (docs/cassandra/calibration.md, "Anchors", compares the two);
3. else none.

Rows fitted at several stated pauses between requests (``pause_ms``) are runs of
different settings: a row that states a pause takes the anchors of the pauses its
operation was fitted at by the rule above, interpolated linearly in the pause between
them (constant past the outermost, and where its operation has one pause, as one
level carries its anchor), with the rows that stated none; a row that states none,
all of them (`Anchors.pause_brackets`). How far a row extrapolates in threads is
counted from its own pauses' rows.

So the model supplies how latency changes between levels and loads, and the
measurements fix where the curve sits. `benchmarks/cassandra_heldout.py` compares
anchored and plain predictions on held-out rows (docs/cassandra/calibration.md).
"""

from __future__ import annotations

import functools

from dataclasses import dataclass, field, replace

import numpy as np
from scipy import stats

from forkjoin_sim.errors import ConfigError
from sizing.closed_network import DEMANDS, one_operation, reads_of, single_closed
from sizing.network_fit import COORDINATES, ROW_NOISE, Fit, Prior, band_about, \
    demands_of, fit

#: The ``kind`` of a model file written by this module.
KIND = "closed-network"


@dataclass(frozen=True)
class Anchors:
    """Log ratio measured / model per fitted row, with the row's operation (``write``),
    ``quorum`` and load ``threads``: client threads of a closed loop, or, where
    ``open`` is set, the rate (ops/s) an open loop offered. A row of a mixed run also
    keeps its share of ``reads`` and the other operation's quorum (``other_quorum``),
    so that the fitted rows can be predicted again; None: every row closed, one
    operation per run. Open and closed rows are anchored apart (their loads are
    different axes); the mix of a run does not split them. ``pause``: each row's
    stated pause between a reply and its client's next request (ms, NaN where the row
    stated none), so that the fitted rows can be predicted again; None: no row stated
    one."""

    write: np.ndarray
    quorum: np.ndarray
    threads: np.ndarray
    residual: np.ndarray
    open: np.ndarray | None = None
    reads: np.ndarray | None = None
    other_quorum: np.ndarray | None = None
    pause: np.ndarray | None = None

    @classmethod
    def of(cls, fit: Fit, rows, latency_ms) -> "Anchors":
        """The anchors of ``fit`` on the rows it was fitted to."""
        predicted = fit.predict(rows)[0]
        return cls.at(rows, np.log(np.asarray(latency_ms, float) / predicted))

    @classmethod
    def at(cls, rows, values) -> "Anchors":
        """Anchors of ``values`` on ``rows`` (the mapping of
        `sizing.closed_network.predict`)."""
        write = np.asarray(rows["write"], bool)
        load, is_open = _load(rows)
        reads = reads_of(rows)
        quorum = np.asarray(rows["quorum"], int)
        other = np.asarray(rows.get("other_quorum", quorum), int)
        plain = bool(np.all(single_closed(rows)))
        pause = given_pauses(rows)
        return cls(write, quorum, load, np.asarray(values, float),
                   None if plain else is_open, None if plain else reads,
                   None if plain else other,
                   pause if np.isfinite(pause).any() else None)

    def is_open(self) -> np.ndarray:
        """Per row, whether it was an open loop (``threads`` then holds its rate)."""
        return np.zeros(len(self.write), bool) if self.open is None else self.open

    def read_shares(self) -> np.ndarray:
        """Per row, its run's share of reads (a run of one operation: 1 or 0)."""
        return np.where(self.write, 0.0, 1.0) if self.reads is None else self.reads

    def rows(self, nodes: int, replicas: int) -> dict:
        """The anchored rows, as `sizing.closed_network.predict` takes them (no think
        time; their stated pauses as ``pause_ms``, which
        `NetworkModel.with_outside` turns into it)."""
        n, is_open = len(self.threads), self.is_open()
        out = dict(threads=np.where(is_open, np.nan, self.threads), think_ms=np.zeros(n),
                   nodes=np.full(n, nodes), replicas=np.full(n, replicas),
                   quorum=self.quorum, write=self.write)
        if self.open is not None:
            out.update(rate=np.where(is_open, self.threads, np.nan), reads=self.reads,
                       other_quorum=self.other_quorum)
        if self.pause is not None:
            out["pause_ms"] = self.pause
        return out

    @property
    def spread(self) -> float:
        """Root mean square of the anchors: how far the model misses its own rows."""
        return float(np.sqrt(np.mean(self.residual ** 2))) if len(self.residual) else 0.0

    def _only(self, keep) -> "Anchors":
        """The anchors of the rows ``keep`` selects."""
        def part(values):
            return None if values is None else values[keep]
        return Anchors(self.write[keep], self.quorum[keep], self.threads[keep],
                       self.residual[keep], part(self.open), part(self.reads),
                       part(self.other_quorum), part(self.pause))

    def with_residual(self, residual) -> "Anchors":
        """The same rows with other values."""
        return Anchors(self.write, self.quorum, self.threads, np.asarray(residual, float),
                       self.open, self.reads, self.other_quorum, self.pause)

    def _groups(self):
        """(write, open) of every operation and loop kind anchored."""
        return sorted({(bool(w), bool(o)) for w, o in zip(self.write, self.is_open())})

    def _kind(self, write: bool, is_open: bool) -> np.ndarray:
        """Which anchors are of this operation and loop kind."""
        return (self.write == write) & (self.is_open() == is_open)

    def _kind_at(self, write: bool, is_open: bool, paused: np.ndarray) -> np.ndarray:
        """Which anchors are of this operation and loop kind and among ``paused`` (a
        row of `pause_mask`), or of the kind at any pause where none is."""
        kind = self._kind(write, is_open)
        return kind & paused if (kind & paused).any() else kind

    def level_miss(self) -> float | None:
        """How far the rule misses a measured level it did not see: root mean square,
        over the fitted rows, of the row's anchor minus the correction the other
        levels of its operation give it (None when no operation has two levels)."""
        misses = []
        for write, is_open in self._groups():
            mine = self._kind(write, is_open)
            if len(np.unique(self.quorum[mine])) < 2:
                continue
            for k in np.unique(self.quorum[mine]):
                group = mine & (self.quorum == k)
                # the rule reads neither the cluster's size nor its replicas
                rows = self._only(group).rows(nodes=1, replicas=1)
                misses.append(self.residual[group]
                              - self._only(~group).correction(rows))
        return float(np.sqrt(np.mean(np.concatenate(misses) ** 2))) if misses else None

    def thread_miss(self) -> float | None:
        """How far the rule misses one step past the largest fitted thread count:
        root mean square, over every operation and level with two or more thread
        counts, of the anchor at the largest minus the one at the next (None when none
        has two)."""
        steps = []
        # rows at other pauses are other runs: each pause's rows on their own
        pauses = self.pause if len(self.pauses()) > 1 else np.zeros(len(self.write))
        for write, is_open in self._groups():
            mine = self._kind(write, is_open)
            for k, pause in {(int(k), _plain(p)) for k, p in zip(self.quorum[mine],
                                                                 pauses[mine])}:
                group = mine & (self.quorum == k) & _same_pause(pauses, pause)
                loads = np.unique(self.threads[group])
                if len(loads) < 2:
                    continue
                top, below = (_along_threads(self.threads[group], self.residual[group],
                                             t) for t in loads[-2:][::-1])
                steps.append(top - below)
        return float(np.sqrt(np.mean(np.square(steps)))) if steps else None

    def extrapolation(self, rows, level_fallback: float | None = None) -> np.ndarray:
        """Per query row, the spread (log) of the anchors' own error where the row is an
        extrapolation: `level_miss` (``level_fallback`` where no operation has two
        levels fitted) for an operation and level not fitted, plus
        `thread_miss` per step (the fitted thread counts' spacing) past the largest
        fitted thread count of its operation and level."""
        write = np.asarray(rows["write"], bool)
        quorum = np.asarray(rows["quorum"], int)
        threads, is_open = _load(rows)
        level, step = self.level_miss(), self.thread_miss()
        if level is None:
            level = level_fallback
        out = np.zeros(len(threads))
        # rows at other pauses are other runs: a row extrapolates from its own pauses'
        mask = self.pause_mask(rows)
        for i in range(len(threads)):
            same_op = self._kind_at(write[i], is_open[i], mask[i])
            group = same_op & (self.quorum == quorum[i])
            if not group.any():
                group = same_op
                out[i] += (level or 0.0) ** 2
            loads = np.unique(self.threads[group])
            if step and len(loads) >= 2 and np.isfinite(threads[i]) \
                    and threads[i] > loads[-1]:
                spacing = float(np.median(np.diff(loads)))
                out[i] += (step * (threads[i] - loads[-1]) / spacing) ** 2
        return np.sqrt(out)

    def pauses(self) -> np.ndarray:
        """The distinct pauses the anchored rows stated (ms; none: an empty array)."""
        return (np.zeros(0) if self.pause is None else
                np.unique(self.pause[np.isfinite(self.pause)]))

    def pause_brackets(self, rows) -> list | None:
        """Per row of ``rows``, the fitted pauses it is carried from with their
        weights, [(pause, weight), ...], or None for every anchor: where the anchored
        rows stated two or more pauses, a row that states one takes the pauses its
        operation and loop kind were fitted at (any kind's where its own has none):
        the two either side of its pause, by linear interpolation, or the nearest
        one, past the outermost or where its kind has one (as a level carries its
        anchor); a row that states none takes every anchor. None where the anchors
        stated fewer than two pauses (nothing to keep apart)."""
        pauses = self.pauses()
        if len(pauses) < 2:
            return None
        asked = given_pauses(rows)
        write = np.asarray(rows["write"], bool)
        is_open = _load(rows)[1]
        out = []
        for i, pause in enumerate(asked):
            if not np.isfinite(pause):
                out.append(None)
                continue
            kind = self._kind(write[i], is_open[i]) & np.isfinite(self.pause)
            theirs = np.unique(self.pause[kind]) if kind.any() else pauses
            j = int(np.searchsorted(theirs, pause))
            if j == 0 or j == len(theirs) or theirs[j] == pause:
                nearest = theirs[min(j, len(theirs) - 1)]
                out.append([(float(nearest), 1.0)])
                continue
            below, above = theirs[j - 1], theirs[j]
            share = (pause - below) / (above - below)
            out.append([(float(below), 1.0 - share), (float(above), share)])
        return out

    def pause_mask(self, rows) -> np.ndarray:
        """Per row of ``rows`` and anchor, whether the anchor is of a pause the row is
        carried from (`pause_brackets`) or stated none; all True where the anchors
        stated fewer than two pauses or the row states none."""
        brackets = self.pause_brackets(rows)
        count = len(np.atleast_1d(rows["write"]))
        out = np.ones((count, len(self.write)), bool)
        if brackets is None:
            return out
        for i, bracket in enumerate(brackets):
            if bracket is not None:
                out[i] = np.isnan(self.pause) | np.isin(self.pause,
                                                        [p for p, _ in bracket])
        return out

    def _by_pause(self, rows, carried) -> np.ndarray | None:
        """``carried(anchors, rows)`` (a value per row) over the pauses each row is
        carried from (`pause_brackets`): each pause's anchors (with the rows that
        stated none) weighted as the brackets say; every anchor for a row that states
        none. None where the anchors stated fewer than two pauses."""
        brackets = self.pause_brackets(rows)
        if brackets is None:
            return None
        out = np.zeros(len(brackets))
        whole = replace(self, pause=None)  # handed on whole: not split again
        every = np.array([b is None for b in brackets])
        if every.any():
            out[every] = carried(whole, _subset(rows, every))
        for pause in sorted({p for b in brackets if b is not None for p, _ in b}):
            weight = np.array([0.0 if b is None else sum(w for p, w in b if p == pause)
                               for b in brackets])
            used = weight > 0
            out[used] += weight[used] * carried(
                whole._only(np.isnan(self.pause) | (self.pause == pause)),
                _subset(rows, used))
        return out

    def correction(self, rows, across_operations: bool = False,
                   trend: bool = False) -> np.ndarray:
        """Per query row, the anchors' value carried to it by the rule of the module
        docstring, in the anchors' own unit (a log factor for the model's misses; ms
        for the clients' time outside the latency, `NetworkModel.outside`, which with
        ``trend`` grows past the largest fitted threads where it grew like a queue,
        `_queue_slope`); with
        ``across_operations``, a row of an operation with no anchors of its own takes
        those of the other operations of its loop kind (as rule 2 within an operation)
        instead of none."""
        by_pause = self._by_pause(rows, lambda anchors, part: anchors.correction(
            part, across_operations, trend))
        if by_pause is not None:
            return by_pause
        write = np.asarray(rows["write"], bool)
        quorum = np.asarray(rows["quorum"], int)
        threads, is_open = _load(rows)
        out = np.zeros(len(threads))
        known = np.isfinite(threads)
        for kind in {(bool(w), bool(o)) for w, o in zip(write, is_open)}:
            same_op = self._kind(*kind)
            if across_operations and not same_op.any():
                same_op = self.is_open() == kind[1]
            query = np.flatnonzero((write == kind[0]) & (is_open == kind[1]) & known)
            if not same_op.any() or not len(query):
                continue
            # each fitted level's anchor at the query rows' loads
            ks = np.unique(self.quorum[same_op])
            at = np.array([_along_threads(self.threads[same_op & (self.quorum == k)],
                                          self.residual[same_op & (self.quorum == k)],
                                          threads[query], trend) for k in ks])
            fitted = {int(k): row for row, k in enumerate(ks)}
            for j, i in enumerate(query):
                if quorum[i] in fitted:
                    out[i] = at[fitted[quorum[i]], j]
                    continue
                # other levels: interpolated in the level, constant past the
                # outermost
                out[i] = np.interp(quorum[i], ks, at[:, j])
        return out


@dataclass
class _Draws:
    """The posterior draws of one `NetworkModel.interval` call: per draw, its point and
    its anchors (None: a draw the rows rule out), once drawn; and per row asked (a
    tuple of its fields), the draws' anchored log latencies."""

    kept: list | None = None
    rows: dict = field(default_factory=dict)
    #: Per draw, whether the fitted rows rule it out for rows no anchor reaches
    #: (`NetworkModel._ruled_out`).
    ruled_out: np.ndarray | None = None


def _plain(value):
    """One row's value of a row field as a hashable key part; NaN as None, so that two
    NaN match."""
    value = value.item() if hasattr(value, "item") else value
    return None if isinstance(value, float) and value != value else value


def _same_pause(pauses, pause) -> np.ndarray:
    """Which of ``pauses`` are ``pause`` (None: the rows that stated none)."""
    return np.isnan(pauses) if pause is None else pauses == pause


def _subset(rows, which):
    """The rows ``which`` selects (a mask or positions) of a row table; a field given
    once for all rows (a scalar) stays as it is."""
    return {k: np.asarray(v)[which] if np.ndim(v) else v for k, v in rows.items()}


def _load(rows):
    """Per row, its load (threads of a closed loop, or ops/s offered by an open one)
    and whether it is an open loop."""
    threads = np.asarray(rows["threads"], float)
    rate = np.asarray(rows.get("rate", np.full(len(threads), np.nan)), float)
    is_open = np.isfinite(rate)
    return np.where(is_open, rate, threads), is_open


def _along_threads(loads, residual, threads, trend: bool = False):
    """Mean anchor per thread count, interpolated linearly in threads (constant past
    the ends; with ``trend``, past the largest along `_queue_slope`)."""
    unique, where = np.unique(loads, return_inverse=True)
    means = np.bincount(where, residual) / np.bincount(where)
    at = np.interp(threads, unique, means)
    if trend:
        past = np.maximum(np.asarray(threads, float) - unique[-1], 0.0)
        # never faster than in proportion to the threads
        at = np.minimum(at + _queue_slope(unique, means) * past,
                        np.maximum(at, means[-1] * (unique[-1] + past) / unique[-1]))
    return at


def _queue_slope(threads, times) -> float:
    """How fast (ms per thread) the clients' time outside the latency grows past the
    largest fitted thread count: the slope of the least-squares line through the upper
    half of the thread counts (at least the last two) where it grows like a queue at
    the client machine, from about nothing (the line at no threads at most half its
    rise at the largest: a YCSB client of 5-500 threads spends 0.1 ms per request
    outside the latency at 5-50 threads, 1.2 ms at 200, 3.9 ms at 500); else 0: a
    think time (JMeter's 100 ms, give or take 3) or no time at all, give or take
    noise, stays as it is."""
    if len(threads) < 2:
        return 0.0
    upper = slice(min(len(threads) // 2, len(threads) - 2), None)
    slope, at_none = np.polyfit(threads[upper], times[upper], 1)
    return float(slope) if slope > 0 and at_none <= 0.5 * slope * threads[-1] else 0.0


#: The rule that leaves out posterior draws the fitted rows rule out, for rows of an
#: operation no fitted row measured (`NetworkModel._ruled_out`): the chi-square
#: quantile, and the least share of draws kept (a row's log miss in units of
#: `sizing.network_fit.ROW_NOISE`). Fitted on huskicajla's Cassandra reads, the
#: writes' bands ran from 0.001-0.15 ms to 4,900-21,500 ms; a probe saw
#: [0.00014, 2143] ms for a 1.25 ms write.
RULE_LEVEL, RULE_KEEP = 0.999, 0.1


#: The clients' time outside the latency that may grow past the most threads it was
#: measured at, as a share of the latency there (`NetworkModel._outside_matters`).
OUTSIDE_MATTERS = 0.1


#: Largest share of its throughput a closed loop is taken to lose past saturation
#: when threads are added (queueing networks lose none; measured clusters do: Karpenko
#: D's QUORUM reads 3% from 500 to 1,000 threads, george0st's Cassandra 4 writes at
#: ONE 24% from 36 to 81 threads).
THROUGHPUT_LOSS = 0.5


@dataclass(frozen=True)
class NetworkModel:
    """A fitted closed-network model of one cluster: ``fit`` (demands, posterior, prior,
    structure), ``anchors``, the cluster's ``nodes`` and ``replicas``, and ``meta``
    (provenance: measurements file, its hash, warnings, parameters resting on the
    prior)."""

    fit: Fit
    anchors: Anchors
    nodes: int
    replicas: int
    meta: dict = field(default_factory=dict)
    #: Per fitted row with a measured throughput, the clients' time outside the
    #: measured latency (ms, Little's law: threads / throughput - latency, at least 0),
    #: interpolated to other rows by the anchors' rule (an operation without rows of
    #: its own takes the other's: the time is the client's), and past the largest
    #: fitted threads along its growth where it grew like a queue at the client
    #: machine (`_queue_slope`); None: no throughput measured.
    outside: Anchors | None = None

    @functools.cached_property
    def pause(self) -> "Anchors | None":
        """The fitted rows' stated pauses (`pause_anchors`), for rows that state none."""
        return pause_anchors(self.anchors.rows(self.nodes, self.replicas))

    def with_outside(self, rows) -> dict:
        """``rows`` with ``think_ms`` set to the clients' time between a reply and their
        next request: each row's stated pause (``pause_ms``; where a row states none,
        the fitted rows' pauses carried to it, `pause_anchors`, or none) and the time
        outside the latency beyond it that the fitted throughputs show (``outside``).
        Rows without ``pause_ms`` keep their ``think_ms`` where the model has neither."""
        if self.outside is None and self.pause is None and "pause_ms" not in rows:
            return rows
        return timed_rows(rows, self.pause, self.outside,
                          self.outside is not None and self._outside_matters,
                          self.as_fitted(rows))

    @functools.cached_property
    def _outside_matters(self) -> bool:
        """Whether the clients' time outside the latency, at the most threads with a
        measured throughput, is `OUTSIDE_MATTERS` of the model's latency there or
        more: then past those threads it may grow (`_queue_slope`); less is what
        Little's law reads off a throughput's noise and rounding (cassandra-stress at
        0.6-3 ms: 0.01-0.1 ms)."""
        if self.fit is None:
            return False
        top = self.outside.threads == np.max(self.outside.threads)
        rows = _subset(self.outside.rows(self.nodes, self.replicas), top)
        rows["think_ms"] = self.outside.residual[top] + stated_pauses(rows, self.pause)
        latency = self.fit.predict(rows)[0]
        return bool(np.any(self.outside.residual[top] >= OUTSIDE_MATTERS * latency))

    def size_asked(self, nodes: int | None) -> int:
        """The cluster size to predict (``nodes``, default the fitted one), or a
        `ConfigError` saying why the model cannot predict it: another size keeps each
        node's work, lanes and cores and reads the anchors at the same load per node
        (`as_fitted`), which a placement in data centres cannot."""
        from forkjoin_sim.model import check_cluster

        if nodes is None or nodes == self.nodes:
            return self.nodes
        if self.fit.geography is not None:
            raise ConfigError(f"the model places its {self.nodes} nodes in data centres, "
                              f"so it predicts that cluster only, not {nodes} nodes; "
                              "calibrate a placement of that size (--datacentres) to "
                              "predict it")
        check_cluster(nodes, 1)  # a whole number of nodes
        if nodes < self.replicas:
            raise ConfigError(f"{nodes} nodes cannot hold the model's {self.replicas} "
                              f"replicas of each key; give at least {self.replicas} "
                              "nodes")
        return int(nodes)

    def resized_note(self, nodes: int) -> str:
        """What a prediction for ``nodes`` nodes from a model fitted on another size
        rests on."""
        return (f"predicted for {nodes:,} nodes from a model fitted on {self.nodes:,}: "
                "each node keeps its fitted work, lanes and cores, the client machine "
                f"stays as fitted, requests spread over all {nodes:,}, and the measured "
                "rows' corrections (anchors) are read at the same load per node; no "
                "measured row of this size checks it, so the change of size rests on "
                "the model's structure")

    def as_fitted(self, rows) -> dict:
        """``rows`` as the anchors read them: a row of a cluster of another size than
        the fitted one at the same load per node (its threads, or an open loop's rate,
        times the fitted nodes over its nodes); ``rows`` itself when every row is of
        the fitted size."""
        nodes = np.asarray(rows.get("nodes", self.nodes), float)
        if np.all(nodes == self.nodes):
            return rows
        scale = self.nodes / nodes
        out = dict(rows, threads=np.asarray(rows["threads"], float) * scale)
        if "rate" in rows:
            out["rate"] = np.asarray(rows["rate"], float) * scale
        return out

    def predict(self, rows, anchored: bool = True):
        """Mean latency (ms) and throughput (ops/s) per row; anchored by default, and
        then never below the same row's anchored latency at a lower level (waiting
        for more replicas is never faster; anchors of noisy rows could say so), and a
        closed loop's throughput the threads over its clients' cycle (Little's law):
        the time outside the latency and the anchored latency, in a mixed run of each
        operation by its share. An open loop keeps the model's throughput."""
        rows = self.with_outside(rows)
        latency, throughput = self.fit.predict(rows)
        if anchored:
            latency = self._anchored(rows, latency)
            think = np.asarray(rows.get("think_ms", np.zeros(len(latency))), float)
            cycle = latency + think
            load, is_open = _load(rows)
            mixed = np.flatnonzero(~is_open & ~single_closed(rows))
            if len(mixed):
                # the other operation's row of the same run: its share of the cycle
                write = np.asarray(rows["write"], bool)
                other = {key: np.asarray(value)[mixed] for key, value in rows.items()}
                # the other operation's level, the row's own where not given (as
                # `sizing.closed_network.predict` reads it)
                other.update(write=~write[mixed],
                             quorum=other.get("other_quorum", other["quorum"]),
                             other_quorum=np.asarray(rows["quorum"])[mixed])
                other = self.with_outside(other)
                theirs = self._anchored(other, self.fit.predict(other)[0]) \
                    + np.asarray(other["think_ms"], float)
                reads = reads_of(rows)[mixed]
                own = np.where(write[mixed], 1.0 - reads, reads)
                cycle[mixed] = own * cycle[mixed] + (1.0 - own) * theirs
            throughput = np.where(is_open, throughput, 1000.0 * load / cycle)
        return latency, throughput

    def _anchored(self, rows, latency):
        """The model's ``latency`` of ``rows`` anchored, no slower than the same run
        measured at a higher level (`measured_above`), never below the row's anchored
        latency at a lower level, and an open loop's never below the same row's at
        each fitted rate below its own (`_fitted_rates_below`; both floors win where
        measured rows are out of order)."""
        latency = self._level_anchored(rows, latency)
        for which, there in self._fitted_rates_below(rows):
            latency[which] = np.maximum(latency[which], self._level_anchored(
                there, self.fit.predict(there)[0]))
        return latency

    def _level_anchored(self, rows, latency):
        """`_anchored` but for the floor of the fitted rates below."""
        latency = np.minimum(latency * np.exp(self.anchors.correction(
            self.as_fitted(rows))), self.measured_above(rows))
        quorum = np.asarray(rows["quorum"], int)
        for k in range(1, int(quorum.max(initial=1))):
            lower = dict(rows, quorum=np.minimum(quorum, k))
            below = self.fit.predict(lower)[0] * np.exp(
                self.anchors.correction(self.as_fitted(lower)))
            latency = np.where(quorum > k, np.maximum(latency, below), latency)
        return latency

    def _fitted_rates_below(self, rows):
        """Per fitted open-loop rate of an operation, the open-loop rows of that
        operation asked at a higher rate (``which``) and those rows at the fitted rate
        (at their own cluster size), as (which, rows there). A higher offered rate
        never lowers the latency, and the fitted rates are where the anchors' line
        bends: between two of them the model, convex in the rate, and a straight
        anchor can dip only below its ends, so a row's prediction that is no lower
        than at each fitted rate below is no lower than at any rate below (a mix of
        50% reads fitted at 120,000 and 150,000 ops/s put a read's lower end at
        0.33 ms at 140,000 between 0.70 and 1.35 ms at those)."""
        # rates compared at the fitted cluster's load per node
        fitted_load, is_open = _load(self.as_fitted(rows))
        own_load = _load(rows)[0]
        write = np.asarray(rows["write"], bool)
        a = self.anchors
        opened = a.is_open()
        for w, rate in sorted({(bool(w), float(t))
                               for w, t in zip(a.write[opened], a.threads[opened])}):
            # (a row at a fitted rate of another cluster size reads back within
            # rounding of it)
            which = is_open & (write == w) & (fitted_load > rate * (1 + 1e-9))
            if not which.any():
                continue
            there = _subset(rows, which)
            there["rate"] = rate * own_load[which] / fitted_load[which]
            yield which, there

    def measured_above(self, rows) -> np.ndarray:
        """Per row, the measured latency of the same load, operation, mix and stated
        pause (rows that stated none: any) at the
        nearest higher level (inf if none was fitted; the geometric mean of its
        repeats, as the anchors take them): waiting for fewer replicas is never
        slower. Rows of another cluster size than the fitted one have none. (The
        level below bounds a row through the anchored prediction there, which at a
        fitted row is the measured one; george0st's rows have QUORUM measured below
        ONE at some loads, so a lower bound from them would cut off true values.)"""
        count = len(np.asarray(rows["threads"]))
        ceiling = np.full(count, np.inf)
        nodes = np.broadcast_to(np.asarray(rows.get("nodes", self.nodes)), (count,))
        a = self.anchors
        if not len(a.residual):
            return ceiling
        log_measured = self.measured_log_ms
        load, is_open = _load(rows)
        their_open, reads, theirs = a.is_open(), reads_of(rows), a.read_shares()
        write, quorum = np.asarray(rows["write"], bool), np.asarray(rows["quorum"], int)
        other = np.asarray(rows.get("other_quorum", quorum), int)
        their_other = a.other_quorum if a.other_quorum is not None else a.quorum
        # a row at another pause is another run: its level above bounds nothing here
        # (rows that stated no pause bound a row of any pause, as they anchor it)
        asked, theirs_paused = given_pauses(rows), a.pause
        several = len(a.pauses()) > 1
        for i in np.flatnonzero(nodes == self.nodes):
            if theirs_paused is not None and (np.isfinite(asked[i]) or several):
                paused = np.isnan(theirs_paused) | np.isclose(theirs_paused, asked[i],
                                                              rtol=1e-9)
            else:
                paused = True
            same = (paused & (a.write == write[i]) & (their_open == is_open[i])
                    # the anchors keep an open row's rate as its load
                    & np.isclose(a.threads, load[i], rtol=1e-9)
                    & np.isclose(theirs, reads[i]))
            if 0 < reads[i] < 1:
                same &= their_other == other[i]
            above = same & (a.quorum > quorum[i])
            if above.any():
                # the nearest level's repeats together, as the anchors take them
                nearest = above & (a.quorum == a.quorum[above].min())
                ceiling[i] = np.exp(log_measured[nearest].mean())
        return ceiling

    def anchor_rows(self) -> dict:
        """The fitted rows behind the anchors, as `sizing.closed_network.predict` takes
        them."""
        return self.with_outside(self.anchors.rows(self.nodes, self.replicas))

    @functools.cached_property
    def measured_log_ms(self) -> np.ndarray:
        """The log latency measured at each fitted row (the model's plus its anchor),
        computed once per model."""
        return np.log(self.fit.predict(self.anchor_rows())[0]) + self.anchors.residual

    def interval(self, rows, level: float = 0.95, samples: int = 256, seed: int = 0,
                 extrapolation: bool = True):
        """Prediction interval of each row's mean latency.

        Each draw of the posterior (the Laplace approximation with its covariance,
        which holds the prior's spread where the rows say nothing, and the points of
        the scale's profile, `Fit.alternatives`) is re-anchored on the measured rows,
        as the fitted model is (a draw past its capacity at an open-loop rate the
        fitted point carries is left out: the rows rule it out, while the Laplace
        approximation, blind to that cliff, would draw it). On the log scale, each end
        of the band is as far from the fitted model's prediction as the draws' central
        ``level`` range reaches on that side (nothing where it stops short of the
        prediction), widened in quadrature by the anchors' own spread (how far the
        model misses measured rows) and, with ``extrapolation``, by the anchors' own
        error where the row is an extrapolation (`Anchors.extrapolation`); past the
        fitted thread counts of a closed loop, narrowed to what the loop allows from
        there (`_within_loop_bounds`: never below the band at the largest fitted
        count, nor higher than its threads allow); above ONE, its lower end
        never below that of the level below at the same row, and below ALL its upper
        end never above that of the level above and of the same run measured there
        (waiting for more replicas is never faster, as in `predict`); an open loop's
        ends never below those of the same row at each fitted rate below its own (a
        higher offered rate never lowers the latency, as in `predict`:
        `_fitted_rates_below`).
        """
        # rows by position, as `predict` takes them (a Series' labels play no part)
        given = {k: np.asarray(v) if np.ndim(v) else v for k, v in rows.items()}
        return self._interval(given, level, samples, seed, extrapolation, _Draws())

    def _interval(self, given, level, samples, seed, extrapolation, draws: "_Draws",
                  sides: tuple[str, ...] = ("floor", "ceiling", "lone", "rates")):
        """`interval`, with the posterior draws' predictions of rows already asked
        (``draws``: shared with the calls below for the levels beneath and above,
        the fitted rates below and the largest fitted thread count, which take the
        same draws: the same seed and size). ``sides``: whether the level beneath
        bounds the lower end ("floor"), the level above the upper end ("ceiling"), a
        lone request of the row's operation and level the lower end ("lone"), and the
        fitted rates below an open loop's rate both ends ("rates"); each neighbour's
        own band is bounded on the side away from this level only, so the levels are
        walked once each way, and the bands at the fitted rates are not bounded by
        the rates below them (every one of those bounds the row itself)."""
        rows = self.with_outside(given)
        centre = np.log(self.predict(rows)[0])
        low, high = self._posterior_band(rows, centre, level, samples, seed,
                                         extrapolation, draws)
        if "lone" in sides:
            # no load makes a request faster than it is alone: a probe's open loop of
            # a mix the fit had not seen put a read's lower end at 0.18 ms, where a
            # lone read took 0.495
            low = np.minimum(np.maximum(low, self._lone_low(given, level, samples, seed,
                                                            extrapolation, draws)),
                             np.exp(centre))
        quorum = np.asarray(rows["quorum"], int)
        replicas = np.broadcast_to(np.asarray(rows.get("replicas", self.replicas)),
                                   quorum.shape)
        higher, below_all = quorum > 1, quorum < replicas
        # waiting for more replicas is never faster: no lower than the band of the
        # level beneath at the same row, no higher than that of the level above
        if "floor" in sides and higher.any():
            lower = _subset(given, higher)
            lower["quorum"] = quorum[higher] - 1
            floor = self._interval(lower, level, samples, seed, extrapolation, draws,
                                   ("floor",))[0]
            low = low.copy()
            low[higher] = np.minimum(np.maximum(low[higher], floor),
                                     np.exp(centre[higher]))
        if "ceiling" in sides and below_all.any():
            upper = _subset(given, below_all)
            upper["quorum"] = quorum[below_all] + 1
            ceiling = self._interval(upper, level, samples, seed, extrapolation, draws,
                                     ("ceiling",))[1]
            high = high.copy()
            high[below_all] = np.maximum(np.minimum(high[below_all], ceiling),
                                         np.exp(centre[below_all]))
        # no slower than the same run measured at a higher level, give or take how far
        # the model misses measured rows (their noise): held out, the bands' 90th
        # percentile width fell from 26 to 14, the rows inside them the same
        slack = np.exp(self.anchors.spread)
        high = np.maximum(np.minimum(high, self.measured_above(rows) * slack),
                          np.exp(centre))
        if "rates" in sides:
            # last, as the prediction's floor wins over the measured level above:
            # each band at a fitted rate below lies about a prediction no higher
            # than this row's, so the band still holds it
            low, high = low.copy(), high.copy()
            kept = tuple(side for side in sides if side != "rates")
            for which, there in self._fitted_rates_below(given):
                there_low, there_high = self._interval(there, level, samples, seed,
                                                       extrapolation, draws, kept)
                low[which] = np.maximum(low[which], there_low)
                high[which] = np.maximum(high[which], there_high)
        return low, high

    def _posterior_band(self, rows, centre, level, samples, seed, extrapolation,
                        draws: "_Draws"):
        """(low, high) of ``rows`` (with the time outside) from the posterior draws
        alone, about ``centre`` (the anchored log prediction of the fitted point), with
        the row noise and the anchors' extrapolation error in quadrature, never below
        the round trips of a model placed in data centres, and past the fitted thread
        counts within what a closed loop allows (`_within_loop_bounds`)."""
        fitted = self.fit
        values = self._draw_values(rows, samples, seed, draws)
        finite = np.isfinite(values).all(axis=1)
        # rows no anchor reaches (an operation and loop kind no fitted row measured):
        # no anchor pulls a draw back onto the rows, so a draw they rule out is left
        # out there (every draw where none would be left)
        ruled = draws.ruled_out[finite][:, None] & self._unanchored(rows)[None, :]
        ruled[:, ruled.all(axis=0)] = False
        values = np.where(ruled, np.nan, values[finite])
        if not len(values):
            values = np.log(self.predict(rows)[0])[None, :]
        z = stats.norm.ppf(1 - (1 - level) / 2)
        other = (z * self._row_noise()) ** 2 + extrapolation * (
            z * self.anchors.extrapolation(self.as_fitted(rows),
                                           fitted.prior.level_miss)) ** 2
        # each side the draws' own reach from the fitted point's prediction: a band
        # centred on the point held out put 3 of 10 rows of a JMeter cluster's levels
        # inside (now 10), and a geo-distributed cluster's ONE writes from QUORUM and
        # ALL 2 of 10 (now 10)
        low, high = band_about(centre, values, level, np.sqrt(other))
        if fitted.geography is not None:
            # no request returns before its round trips (less the slack of published
            # round trips against a benchmark's)
            low = np.minimum(np.maximum(low, fitted.geography.floor_ms(rows["quorum"])),
                             np.exp(centre))
        if extrapolation:
            low, high = self._within_loop_bounds(rows, np.exp(centre), low, high,
                                                 level, samples, seed, draws)
        return low, high

    def _draw_values(self, rows, samples: int, seed: int, draws: "_Draws") -> np.ndarray:
        """Per posterior draw (``samples`` of them from ``seed``) and row of ``rows``
        (with the time outside), the draw's anchored log latency; NaN throughout a
        draw past its capacity at an open-loop rate the fitted point carries (the rows
        rule it out, while the Laplace approximation, blind to that cliff, would draw
        it). Rows already in ``draws`` are not computed again."""
        fitted = self.fit
        if draws.kept is None:
            base = self.anchor_rows()
            measured = self.measured_log_ms
            offered = np.asarray(base.get("rate", np.full(len(measured), np.nan)), float)
            # open-loop rows the fitted point carries in full
            carried_rows = fitted.predict(base)[1] >= (1 - 1e-6) * offered
            kept = []
            for point in fitted.draws(samples, np.random.default_rng(seed)):
                own, carried = fitted.predict(base, point)
                kept.append(None if np.any(carried_rows & (carried < (1 - 1e-6) * offered))
                            else (point, self.anchors.with_residual(measured
                                                                    - np.log(own))))
            draws.kept = kept
            draws.ruled_out = self._ruled_out(kept)
        count = len(np.asarray(rows["threads"]))
        keyed = {k: np.broadcast_to(np.asarray(v), (count,)) for k, v in rows.items()}
        if "other_quorum" in rows:
            # a run of one operation has no other class: its other quorum changes
            # nothing, so rows that differ only there are one row
            keyed["other_quorum"] = np.where(one_operation(rows), keyed["quorum"],
                                             keyed["other_quorum"])
        keys = [tuple((name, _plain(value[i])) for name, value in sorted(keyed.items()))
                for i in range(count)]
        done = draws.rows
        # each row not yet computed, once however often it is asked
        unique = list({keys[i]: i for i in range(count) if keys[i] not in done}.values())
        if unique:
            part = _subset(rows, unique)
            computed = np.full((samples, len(unique)), np.nan)
            for d, kept in enumerate(draws.kept):
                if kept is not None:
                    point, anchors = kept
                    computed[d] = np.log(fitted.predict(part, point)[0]) \
                        + anchors.correction(self.as_fitted(part))
            for j, i in enumerate(unique):
                done[keys[i]] = computed[:, j]
        return np.stack([done[key] for key in keys], axis=1) if count \
            else np.full((samples, 0), np.nan)

    def _lone_low(self, given, level, samples, seed, extrapolation, draws) -> np.ndarray:
        """Per row, the lower end of the band of a lone request of its operation and
        level on its cluster: one client thread, no think time, a run of that
        operation alone."""
        count = len(np.asarray(given["quorum"]))
        lone = {key: np.broadcast_to(np.asarray(given[key]), (count,)).copy()
                for key in ("write", "quorum", "nodes", "replicas") if key in given}
        write = np.asarray(lone["write"], bool)
        lone.update(threads=np.ones(count), think_ms=np.zeros(count),
                    rate=np.full(count, np.nan), reads=np.where(write, 0.0, 1.0),
                    other_quorum=np.asarray(lone["quorum"]))
        return self._interval(lone, level, samples, seed, extrapolation, draws, ())[0]

    def _row_noise(self) -> float:
        """How far a measured row's mean may lie from the model's anchored value (log):
        the anchors' rms miss, and never less than the noise the rows were fitted to
        within (`ROW_NOISE`: re-anchored on the rows, every draw passes through them,
        so a model that fits three rows exactly gave a band of +-1% around a mean
        printed as "1.0 ms"; held out the rows inside went from 97% to 98%, the band
        widths the same)."""
        return max(self.anchors.spread, ROW_NOISE)

    def _unanchored(self, rows) -> np.ndarray:
        """Per row, whether no fitted row is of its operation and loop kind (writes
        of a model fitted on reads; an open loop of a model fitted on closed ones):
        its prediction is the model's own, as no anchor corrects it. (A row of a
        mixed run is anchored by its own operation's rows.)"""
        write = np.asarray(rows["write"], bool)
        is_open = _load(rows)[1]
        return np.array([not self.anchors._kind(w, o).any()
                         for w, o in zip(write, is_open)], bool)

    def _ruled_out(self, kept) -> np.ndarray:
        """Per posterior draw (``kept``: point and anchors, None for a draw left out
        already), whether the fitted rows rule it out: its misfit (squared log misses
        in units of `ROW_NOISE`, or of the fitted point's rms miss, the larger)
        exceeds the fitted point's by more than the `RULE_LEVEL` quantile of a
        chi-square with one degree of freedom per coordinate the posterior moves. The
        Laplace approximation is blind to how fast the rows' fit worsens away from
        the point: a coordinate the rows barely pin (a hop, a share) drawn at its
        prior's spread can make them thousands of times slower. Where fewer than
        `RULE_KEEP` of the draws pass, the best-fitting quarter are kept."""
        noise = self._row_noise()
        own = float(np.sum((self.anchors.residual / noise) ** 2))
        misfit = np.array([np.inf if k is None else
                           float(np.sum((k[1].residual / noise) ** 2)) for k in kept])
        moved = int(np.sum(self.fit.posterior_sd > 1e-9)) or 1
        out = misfit - own > stats.chi2.ppf(RULE_LEVEL, moved)
        drawn = np.isfinite(misfit)
        if np.sum(~out) < RULE_KEEP * len(kept) and drawn.any():
            out = ~drawn | (misfit > np.quantile(misfit[drawn], 0.25))
        return out

    def fitted_top(self, rows) -> np.ndarray:
        """Per closed-loop row of ``rows``, the largest fitted thread count of its
        operation and level (else of its operation) at the pauses it is carried from
        (`Anchors.pause_mask`), NaN for an open row or an operation not fitted."""
        threads, is_open = _load(self.as_fitted(rows))
        write = np.asarray(rows["write"], bool)
        quorum = np.asarray(rows["quorum"], int)
        mask = self.anchors.pause_mask(rows)
        tops = np.full(len(threads), np.nan)
        for i in np.flatnonzero(~is_open):
            mine = self.anchors._kind_at(write[i], False, mask[i])
            same = mine & (self.anchors.quorum == quorum[i])
            group = same if same.any() else mine
            if group.any():
                tops[i] = self.anchors.threads[group].max()
        return tops

    def _within_loop_bounds(self, rows, centre, low, high, level, samples, seed,
                                   draws: "_Draws"):
        """``low`` and ``high`` of the closed-loop rows (of one operation, or a mix at
        its share of reads) past the largest fitted thread count of their operation
        and level (else operation) at their pauses (`fitted_top`), narrowed to what
        the loop allows from there. More threads never lower the
        latency: the lower end is at least the one at the largest fitted count M. A
        closed loop's throughput falls by at most `THROUGHPUT_LOSS` past saturation,
        so its mean latency at T threads is at most (the one at M + time outside at M)
        T / M / (1 - `THROUGHPUT_LOSS`) - time outside at T. Both ends are taken from the
        interval at M (``centre``: the predictions, which the band keeps holding). (An
        open loop's rows take the bands at the fitted rates below them instead, in
        `_interval`, with no ceiling: near its capacity the latency grows without
        bound.)"""
        # thread counts compared at the fitted cluster's load per node
        threads = _load(self.as_fitted(rows))[0]
        tops = self.fitted_top(rows)
        # (a row at the top of another cluster size reads back within rounding of it)
        beyond = np.isfinite(tops) & (threads > tops * (1 + 1e-9))
        if not beyond.any():
            return low, high
        at_top = _subset(rows, beyond)
        # the largest fitted count, at the query row's own cluster size
        at_top["threads"] = tops[beyond] * _load(rows)[0][beyond] / threads[beyond]
        # the clients' time at M is its own where it grows past M (`_queue_slope`)
        at_top = self.with_outside(at_top)
        top_low, top_high = self._interval(at_top, level, samples, seed, True, draws)
        outside = np.asarray(rows.get("think_ms", np.zeros(len(threads))), float)[beyond]
        outside_top = np.asarray(at_top.get("think_ms", np.zeros(len(outside))), float)
        centre = centre[beyond]
        low, high = low.copy(), high.copy()
        low[beyond] = np.minimum(np.maximum(low[beyond], top_low), centre)
        # the clients' cycle at T is at most theirs at M x T / M / (1 - loss)
        ceiling = (top_high + outside_top) * threads[beyond] / tops[beyond] \
            / (1.0 - THROUGHPUT_LOSS) - outside
        high[beyond] = np.maximum(np.minimum(high[beyond], ceiling), centre)
        return low, high

    def to_toml(self) -> str:
        """The model file's text."""
        f = self.fit
        lines = ["# Cassandra model written by forkjoin-sim cassandra calibrate",
                 "[model]", f'kind = "{KIND}"', f'structure = "{f.structure}"',
                 f"nodes = {self.nodes}", f"replicas = {self.replicas}",
                 f"cores = {f.cores}", f"client_cores = {f.client_cores}",
                 f"cost = {f.cost!r}", "", "[demands_ms]"]
        for name, value in zip(DEMANDS, demands_of(f.point)):
            lines.append(f"{name} = {float(value)!r}")
        lines += ["", "[posterior]"]
        for i, name in enumerate(COORDINATES):
            lines.append(f"{name} = {{ mean = {float(f.point[i])!r}, "
                         f"sd = {float(f.posterior_sd[i])!r} }}")
        if f.covariance is not None:
            lines.append("covariance = " + _matrix(f.covariance))
        for weight, point, covariance in f.alternatives:
            lines += ["", "[[posterior.profile]]", f"weight = {float(weight)!r}",
                      "point = " + _numbers(point), "covariance = " + _matrix(covariance)]
        lines += [""] + _anchor_lines(self.anchors, "anchors", "residual")
        if self.outside is not None:
            lines += _anchor_lines(self.outside, "outside", "ms")
        lines += ["[fit]"]
        for key, value in self.meta.items():
            lines.append(f"{key} = {_toml(value)}")
        places = "" if f.geography is None else "\n" + f.geography.to_toml()
        return "\n".join(lines) + "\n\n" + f.prior.to_toml() + places


def throughput_interval(rows, latency, throughput, low, high):
    """The interval of the model's throughput (ops/s) per row of ``rows`` (as
    `sizing.closed_network.predict` takes them) that holds its latency (ms) interval
    ``low`` to ``high`` (``latency``, ``throughput``: the model's values), as
    (low, high).

    A closed loop of one operation carries its threads over its clients' cycle
    (Little's law): the think time, their time outside the latency (what the model's
    ``throughput`` leaves beside ``latency`` and the think time, held at the model's)
    and the latency, so the latency's interval maps onto the throughput's, its high
    end onto the low end. An open loop the model carries carries its offered rate,
    at both ends, mixed or not. An open loop past the model's capacity and a
    closed-loop mixed run (whose cycle holds the other operation's latency too) have
    no interval here: NaN."""
    latency, throughput = np.asarray(latency, float), np.asarray(throughput, float)
    low, high = np.asarray(low, float), np.asarray(high, float)
    think = np.asarray(rows.get("think_ms", np.zeros(len(latency))), float)
    rate = np.asarray(rows.get("rate", np.full(len(latency), np.nan)), float)
    plain = single_closed(rows)
    threads = np.where(plain, np.asarray(rows["threads"], float), 1.0)
    # the clients' time between requests beside the think time: it does not move
    # with the latency (scaling it with the latency made a JMeter loop with 108 ms
    # outside carry 414 ops/s from 50 threads)
    waits = think + np.maximum(threads * 1000.0 / throughput - think - latency, 0.0)
    # an open loop below capacity: the model's throughput is the rate offered (as
    # `sizing.calibration_notes.prediction_notes` tells a row past it)
    carried = np.isfinite(rate) & (throughput >= (1 - 1e-6) * rate)
    # more latency, less throughput: the band's high end is the throughput's low end
    return (np.where(plain, threads * 1000.0 / (waits + high),
                     np.where(carried, throughput, np.nan)),
            np.where(plain, threads * 1000.0 / (waits + low),
                     np.where(carried, throughput, np.nan)))


def _anchor_lines(anchors: Anchors, table: str, values: str) -> list[str]:
    """The TOML table ``table`` of ``anchors`` (their values under the key ``values``,
    as `sizing.network_model_file.read_network_model` reads them back), with the open
    loops and mixes where any row is one, and a blank line after it."""
    lines = [f"[{table}]", f"write = {_toml([bool(v) for v in anchors.write])}",
             f"quorum = {_toml([int(v) for v in anchors.quorum])}",
             f"threads = {_toml([float(v) for v in anchors.threads])}",
             f"{values} = {_toml([float(v) for v in anchors.residual])}"]
    if anchors.open is not None:
        lines += [f"open = {_toml([bool(v) for v in anchors.open])}",
                  f"reads = {_toml([float(v) for v in anchors.reads])}",
                  f"other_quorum = {_toml([int(v) for v in anchors.other_quorum])}"]
    if anchors.pause is not None:  # nan: a row that stated no pause
        lines.append(f"pause_ms = {_toml([float(v) for v in anchors.pause])}")
    return lines + [""]


def _toml(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    text = str(value).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{text}"'


def outside_of(table) -> "Anchors | None":
    """The clients' time outside the measured latency (ms) of every closed-loop row of
    ``table`` (columns as `rows_of_table`, with throughput (ops/s, NaN if not
    measured), mean_ms and optionally run_mean_ms, the mean over a mixed run's
    operations) with a measured throughput, by Little's law (threads / throughput -
    the run's mean latency, at least 0; a row whose run mean is NaN, a mixed run
    without its other operation's latency, has none), as anchors to interpolate; None
    if no row has one."""
    rows = rows_of_table(table)
    measured = table.throughput.to_numpy(float)
    run = (table.run_mean_ms if "run_mean_ms" in table else table.mean_ms).to_numpy(float)
    has = (np.isfinite(measured) & (measured > 0) & ~np.isfinite(rows["rate"])
           & ~_lone_mixed(table, rows))
    if not has.any():
        return None
    # beyond the clients' stated pauses (each row's, or the others' carried to it)
    pause = stated_pauses(rows, pause_anchors(rows))
    time_out = np.maximum(1000.0 * rows["threads"] / np.where(has, measured, 1.0) - run
                          - pause, 0.0)
    return Anchors.at({k: v[has] for k, v in rows.items()}, time_out[has])


def timed_rows(rows, pause: "Anchors | None", outside: "Anchors | None",
               trend: bool = False, lookup=None) -> dict:
    """``rows`` with ``think_ms`` the clients' time between a reply and their next
    request: each row's stated pause, or where it states none the ``pause`` anchors'
    (`stated_pauses`), and the time outside the latency beyond it that fitted
    throughputs showed (``outside``; with ``trend`` growing past the largest fitted
    threads, `_queue_slope`). ``lookup``: the rows as the anchors read them (default
    ``rows``; another cluster size's at the fitted load per node)."""
    lookup = rows if lookup is None else lookup
    out = dict(rows)
    # the time is the client's, not the operation's: an operation the model did
    # not measure takes the other's
    extra = 0.0 if outside is None else np.maximum(outside.correction(
        lookup, across_operations=True, trend=trend), 0.0)
    out["think_ms"] = np.zeros(len(np.atleast_1d(rows["write"]))) + \
        stated_pauses(lookup, pause) + extra
    return out


def given_pauses(rows) -> np.ndarray:
    """Per row of ``rows``, the pause it states (``pause_ms``, ms), NaN where none."""
    return np.asarray(rows.get("pause_ms", np.full(len(np.atleast_1d(rows["write"])),
                                                   np.nan)), float)


def pause_anchors(rows) -> "Anchors | None":
    """The stated pauses (``pause_ms``, ms) of the rows of ``rows`` that state one, as
    anchors that carry them to rows that state none (the anchors' rule: the same
    operation and level in threads, then the other levels, then the other operation);
    None where no row states one."""
    pause = given_pauses(rows)
    stated = np.isfinite(pause)
    if not stated.any():
        return None
    return Anchors.at({k: np.asarray(v)[stated] for k, v in rows.items()}, pause[stated])


def stated_pauses(rows, anchors: "Anchors | None") -> np.ndarray:
    """Per row of ``rows``, its stated pause (``pause_ms``), or where it states none
    the ``anchors``' (`pause_anchors`) carried to it, or 0 without any."""
    pause = given_pauses(rows)
    if np.isnan(pause).any():
        fill = (np.zeros(len(pause)) if anchors is None
                else anchors.correction(rows, across_operations=True))
        pause = np.where(np.isnan(pause), fill, pause)
    return pause


def _lone_mixed(table, rows) -> np.ndarray:
    """Per row of ``table`` (``rows``: `rows_of_table`), whether it is a closed mixed
    run's row without its other operation's latency (``run_mean_ms`` NaN): its
    throughput tells no time outside the latency."""
    run = (table.run_mean_ms if "run_mean_ms" in table else table.mean_ms).to_numpy(float)
    return ~np.isfinite(run) & ~np.isfinite(rows["rate"])


def rows_of_table(table) -> dict:
    """The row mapping of `sizing.closed_network.predict` of a measurement table
    (columns operation, quorum, threads, nodes, replicas, and optionally rate (ops/s,
    NaN for a closed loop), reads (the run's share of reads) and other_quorum (the
    quorum of a mixed run's other operation)); no think time: the clients' stated
    pauses (``think_ms``, NaN where not given) are its ``pause_ms``, which
    `NetworkModel.with_outside` turns into the think time with the clients' time
    outside the latency (`outside_of`)."""
    n = len(table)
    write = (table.operation == "write").to_numpy()
    pause = (table.think_ms.to_numpy(float) if "think_ms" in table
             else np.full(n, np.nan))
    return dict(threads=table.threads.to_numpy(float), think_ms=np.zeros(n),
                pause_ms=pause,
                nodes=table.nodes.to_numpy(np.int64),
                replicas=table.replicas.to_numpy(np.int64),
                quorum=table.quorum.to_numpy(np.int64), write=write,
                rate=(table.rate.to_numpy(float) if "rate" in table
                      else np.full(n, np.nan)),
                reads=(table.reads.to_numpy(float) if "reads" in table
                       else np.where(write, 0.0, 1.0)),
                other_quorum=(table.other_quorum.to_numpy(np.int64)
                              if "other_quorum" in table
                              else table.quorum.to_numpy(np.int64)))


def calibrated(table, structure: str, prior: Prior, cores: int, client_cores: int,
               geography=None, progress=None) -> NetworkModel:
    """The calibrated model of a measurement table (columns operation, quorum,
    threads, nodes, replicas, mean_ms, throughput (NaN where not measured)): the
    clients' time outside the latency read off the throughputs, the fit
    (`sizing.network_fit.fit`), and the anchors on the same rows."""
    outside = outside_of(table)
    nodes, replicas = int(table.nodes.iloc[0]), int(table.replicas.iloc[0])
    given = rows_of_table(table)
    rows = timed_rows(given, pause_anchors(given), outside)
    latency = table.mean_ms.to_numpy(float)
    # the clients' time outside the latency of a lone mixed row is unknown, so its
    # throughput cannot say what the model's cycle is (fitted with none, the operation
    # not measured took the clients' time)
    throughput = np.where(_lone_mixed(table, rows), np.nan,
                          table.throughput.to_numpy(float))
    fitted = fit(rows, latency, structure, prior, cores, client_cores,
                 throughput=throughput, progress=progress, geography=geography)
    return NetworkModel(fitted, Anchors.of(fitted, rows, latency), nodes, replicas,
                        outside=outside)


def _numbers(values) -> str:
    """Numbers as a TOML array, every digit kept."""
    return "[" + ", ".join(repr(float(v)) for v in values) + "]"


def _matrix(rows) -> str:
    """A matrix as a TOML array of arrays, every digit kept."""
    return "[" + ", ".join(_numbers(row) for row in rows) + "]"
