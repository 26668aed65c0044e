"""Fitting the closed-network Cassandra model (`sizing.closed_network`) to benchmark rows.

The fit is a maximum a posteriori estimate: least squares on log mean latency (and log
throughput where a row has one), each row with a relative error of ``noise``, plus one
residual per coordinate of a Gaussian prior on the log demands. The coordinates are
scale-free ratios so that a prior carries over between clusters of different speed:

====================  ===========================================================
``work``              log data read time at a replica (ms)
``coordinate_share``  log coordinator work / replica work
``message_share``     log per-message work / replica work
``digest_ratio``      log digest read / data read
``client_share``      log client-machine time / replica work
``hop_client``        log one-way client-coordinator hop / replica work
``hop_ratio``         log coordinator-replica hop / client-coordinator hop
``outside_share``     log client work outside the measured latency / replica work
``branch_cv``         log coefficient of variation of a fork branch's random time
``link_window``       log messages in flight per direction of a link between two
                      data centres (only with a `sizing.geography.Geography`)
``mutation_ratio``    log mutation / data read at a replica
``lanes``             log separate single-server lanes per node (``lanes``
                      structures only)
``hop_spread``        log farthest / nearest fitted hop from a single coordinator
                      to the other data centres (fitted geographies only)
====================  ===========================================================

What the rows cannot determine (e.g. ``digest_ratio`` from ONE-only rows, where no
digest is read) stays at the prior; `Fit.resting_on_prior` names those coordinates by
how little the rows moved their uncertainty.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy import optimize, stats
from scipy.stats import qmc

from forkjoin_sim.errors import ConfigError
from sizing.closed_network import DEMANDS, SMALLEST_CV, predict, structure_of

#: The prior's coordinates, in order.
COORDINATES = ("work", "coordinate_share", "message_share", "digest_ratio",
               "client_share", "hop_client", "hop_ratio", "outside_share", "branch_cv",
               "link_window", "mutation_ratio", "lanes", "hop_spread")

#: Coordinates a file written before they existed may lack: a prior table takes the
#: vague prior's value and spread; a model file's posterior the value its release
#: computed with (`LEGACY_VALUES`, exactly), else the vague prior's.
LATER_COORDINATES = ("link_window", "mutation_ratio", "lanes", "hop_spread")

#: Largest size of a coordinate's log a file may give (e^30: 1e13 times its unit); past
#: it the model's arithmetic overflows.
LOG_LIMIT = 30.0

#: What a model file written before a coordinate existed computed with (log): a
#: mutation as dear as a data read, every fitted hop between nodes alike. (The window
#: and the lanes changed nothing before they existed.)
LEGACY_VALUES = {"mutation_ratio": 0.0, "hop_spread": 0.0}


#: The entries of a ``[prior]`` table besides ``source`` (a string), each with the
#: fields it may have.
PRIOR_FIELDS = dict({name: ("mean", "sd") for name in COORDINATES},
                    level_log_ratio=("mean", "sd"), level_shape=("sd",),
                    level_step_log_ms=("mean", "sd"),
                    level_step_log_ms_read=("mean", "sd"),
                    level_step_log_ms_write=("mean", "sd"),
                    level_step_scale=(), level_step_replicas=(),
                    level_miss=("sd",))


def _check_prior_keys(table, path: str) -> None:
    """Refuse a ``[prior]`` table with a key or an entry's field `PRIOR_FIELDS` does
    not know (a misspelling would be taken silently as absent)."""
    from difflib import get_close_matches

    if not isinstance(table, dict):
        raise ConfigError(f"{path}: prior must be a table; write [prior] and its "
                          "entries below it")
    for key in table:
        if key != "source" and key not in PRIOR_FIELDS:
            near = get_close_matches(key, PRIOR_FIELDS, 1)
            raise ConfigError(
                f"{path}: [prior] has unknown key {key!r}"
                + (f" (did you mean {near[0]!r}?)" if near else "")
                + f"; the keys are source, {', '.join(PRIOR_FIELDS)}")
        fields = PRIOR_FIELDS.get(key, ())
        if isinstance(table[key], dict) and not fields and key != "source":
            raise ConfigError(f"{path}: prior {key} is a number, not a table; write "
                              f"e.g. {key} = 0.5")
        if isinstance(table[key], dict) and set(table[key]) - set(fields):
            unknown = sorted(set(table[key]) - set(fields))
            raise ConfigError(f"{path}: prior {key} has unknown field(s) "
                              f"{', '.join(unknown)}; its fields are "
                              f"{', '.join(fields)}")


@dataclass(frozen=True)
class Prior:
    """Independent Gaussian prior on `COORDINATES` (natural logs): ``mean``, ``sd``."""

    mean: np.ndarray
    sd: np.ndarray
    source: str = "vague"
    #: Prior on how latency grows with the level, on what is measured rather than on a
    #: parameter: log(latency at quorum k / latency at ONE), same operation and
    #: threads, is about ``level_mean * (k - 1) / (replicas - 1)`` with spread
    #: ``level_sd`` (None: no such prior).
    level_mean: float | None = None
    level_sd: float | None = None
    #: Spread of the levels between ONE and ALL around the line in (k-1)/(replicas-1):
    #: log(latency at k / at ONE) - (k-1)/(replicas-1) log(at ALL / at ONE) is about 0
    #: with this sd (None: no such prior).
    level_shape_sd: float | None = None
    #: Prior on what the highest level costs a lone request: log(latency at ALL -
    #: latency at ONE) - ``level_step_scale`` * log(latency at ONE), of one client
    #: thread (ms), same operation, is about ``level_step_mean`` with spread
    #: ``level_step_sd`` (None: no such prior). A level adds the wait for farther
    #: replicas: round trips, about the same time on clusters whose own latency
    #: differs tenfold, and their work, which scales with it.
    level_step_mean: float | None = None
    level_step_sd: float | None = None
    #: How far (log, rms) the anchors miss a level they did not see, on the published
    #: clusters: the extrapolation error of a level not measured when the rows
    #: themselves have one level only (None: no such prior).
    level_miss: float | None = None
    #: The level-step prior of one operation alone, where its sources measured that
    #: operation: ``(("read" or "write", mean, sd), ...)``; an operation without one
    #: takes ``level_step_mean``/``level_step_sd``. A higher level costs a read more
    #: than a write: it adds digest reads to a read's work, while a write goes to every
    #: replica at any level and only waits for more of them (Karpenko C: 3.2 ms for a
    #: lone read, 1.5 ms for a write; george0st's writes 1.2-1.6 ms).
    level_step_by_operation: tuple = ()
    #: How the level step grows with the cluster's own latency (see
    #: ``level_step_mean``): 0, the step carries over in time; 1, as a ratio to ONE.
    #: 0 in files written before it existed.
    level_step_scale: float = 0.0
    #: Replicas of the clusters the level step was measured on: the step is what ALL
    #: of that many replicas costs a lone request. A cluster of other replicas takes
    #: the step at that count in its own model (`step_rows`), whose structure says what
    #: its own ALL then costs (waiting for 2 of 2 replicas less than for 3 of 3, for 5
    #: of 5 more). Every level source published so far ran 3.
    level_step_replicas: int = 3

    def level_step(self, write: bool) -> tuple[float, float] | None:
        """(mean, sd) of the level-step prior of writes (``write``) or reads; None
        without one."""
        name = "write" if write else "read"
        for operation, mean, sd in self.level_step_by_operation:
            if operation == name:
                return mean, sd
        if self.level_step_mean is None:
            return None
        return self.level_step_mean, self.level_step_sd

    @classmethod
    def vague(cls) -> "Prior":
        """Wide prior: the scale-free ratios (coordinator, message, client shares, hop
        ratio) within a factor of about 20 of their centre at one sd, the scales (work,
        client hop, outside work) vaguer still (sd 10); the digest and mutation ratios,
        window, lanes and hop spread centred on what Cassandra does (the comments
        below), and the branch cv on 1 (an exponential branch), within a factor e
        (hop spread: 0.5 in log)."""
        # digest_ratio: a digest read does the data read and hashes the row, so it
        # costs about a data read or less (sd 1: a factor e either way)
        # mutation_ratio: a mutation appends to the commit log and the memtable, a
        # data read may touch sstables, so a mutation costs a fraction of a data
        # read; 1/3 makes a write to three replicas cost what a data read does (the
        # guess "writes take as long as reads"), within a factor e (sd 1). A ratio
        # of 1 (the old centre) makes a write three times a ONE read's work where
        # the rows cannot tell, the extreme guess issue 27 warns against
        # lanes (structure lanes only): Cassandra's read and write stages run 32
        # threads per node by default; a factor e either way
        # link_window: a coordinator waits for its replicas on one of its native
        # transport request threads (native_transport_max_threads: 128 in
        # cassandra.yaml); the requests a coordinator has on a link to another data
        # centre are at most those, a factor e either way (operators raise it)
        # hop_spread (fitted hops from one coordinator to far data centres): the
        # farthest over the nearest, sqrt(2), midway in log between "as far as the
        # nearest" (1: ALL costs what QUORUM does) and the line through the levels
        # (2: ALL adds twice what QUORUM adds); sd 0.5 holds both within 0.7 sd
        return cls(np.array([0.0, -1.0, -3.0, -1.0, -1.0, -1.0, 0.0, -1.0, 0.0,
                             np.log(128.0), np.log(1.0 / 3.0), np.log(32.0),
                             0.5 * np.log(2.0)]),
                   np.array([10.0, 3.0, 3.0, 1.0, 3.0, 10.0, 3.0, 10.0, 1.0, 1.0, 1.0,
                             1.0, 0.5]))

    @classmethod
    def from_fits(cls, points: np.ndarray, source: str, floor: float = 0.5) -> "Prior":
        """Prior whose mean and sd are those of fitted coordinates ``points`` (one row
        per data set), the sd at least ``floor`` (few data sets); ``work``,
        ``hop_client`` and ``outside_share`` stay vague (they belong to one cluster and
        its client machine)."""
        points = np.atleast_2d(points)
        mean = points.mean(axis=0)
        sd = np.maximum(points.std(axis=0, ddof=1) if len(points) > 1
                        else np.zeros(points.shape[1]), floor)
        _vague_scale(mean, sd)
        return cls(mean, sd, source)

    def to_toml(self) -> str:
        """The prior as a TOML table ``[prior]`` (mean and sd per coordinate), each
        value to four decimals, or with all its digits where four would round it to
        zero (an sd of 3e-5 must not come back as 0, which the reader refuses)."""
        def number(value) -> str:
            text = f"{value:.4f}"
            return repr(float(value)) if value and float(text) == 0.0 else text

        def entry(name, mean, sd) -> str:
            inside = f"sd = {number(sd)}" if mean is None \
                else f"mean = {number(mean)}, sd = {number(sd)}"
            return f"{name} = {{ {inside} }}"

        lines = ["[prior]", f'source = "{self.source}"']
        lines += [entry(name, self.mean[i], self.sd[i]) for i, name in enumerate(COORDINATES)]
        if self.level_mean is not None:
            lines.append(entry("level_log_ratio", self.level_mean, self.level_sd))
        if self.level_shape_sd is not None:
            lines.append(entry("level_shape", None, self.level_shape_sd))
        if self.level_step_mean is not None:
            lines.append(entry("level_step_log_ms", self.level_step_mean,
                               self.level_step_sd))
        for operation, mean, sd in self.level_step_by_operation:
            lines.append(entry(f"level_step_log_ms_{operation}", mean, sd))
        if self.level_step_mean is not None or self.level_step_by_operation:
            lines.append(f"level_step_scale = {number(self.level_step_scale)}")
            lines.append(f"level_step_replicas = {self.level_step_replicas}")
        if self.level_miss is not None:
            lines.append(entry("level_miss", None, self.level_miss))
        return "\n".join(lines) + "\n"

    @classmethod
    def read(cls, path: str) -> "Prior":
        """Read the ``[prior]`` table of a TOML file written by `to_toml`."""
        from forkjoin_sim.files.io import read_toml

        return cls.from_file_table(read_toml(
            path, "the prior", "give a PRIOR.toml or a MODEL.toml written by "
            "forkjoin-sim cassandra calibrate"), path)

    @classmethod
    def from_file_table(cls, document: dict, path: str) -> "Prior":
        """The ``[prior]`` table of an already read TOML ``document`` (from ``path``,
        named in errors)."""
        table = document.get("prior")
        if table is None:
            raise ConfigError(f"{path} has no [prior] table; give a MODEL.toml written "
                              "by forkjoin-sim cassandra calibrate or a prior written by "
                              "benchmarks/cassandra_heldout.py --write-prior")
        _check_prior_keys(table, path)
        vague = cls.vague()
        table = dict(table)
        for name in LATER_COORDINATES:
            i = COORDINATES.index(name)
            table.setdefault(name, {"mean": float(vague.mean[i]), "sd": float(vague.sd[i])})
        missing = [name for name in COORDINATES if name not in table]
        if missing:
            raise ConfigError(f"{path}: prior lacks {missing}; give mean and sd for each "
                              f"of {', '.join(COORDINATES)}")
        for name in COORDINATES:
            entry = table[name]
            if not _valid_entry(entry, ("mean", "sd")):
                raise ConfigError(f"{path}: prior {name} = {entry!r}; give a number mean "
                                  f"(natural log, within +-{LOG_LIMIT:g}) and an sd > 0, "
                                  f"e.g. {name} = {{ mean = 0.0, sd = 1.0 }}")
        levels = table.get("level_log_ratio")
        if levels is not None and not _valid_entry(levels, ("mean", "sd")):
            raise ConfigError(f"{path}: level_log_ratio needs a mean and an sd > 0")
        shape = table.get("level_shape")
        if shape is not None and not _valid_entry(shape, ("sd",)):
            raise ConfigError(f"{path}: level_shape needs an sd > 0")
        steps = {key: table.get(key) for key in ("level_step_log_ms",
                                                 "level_step_log_ms_read",
                                                 "level_step_log_ms_write")}
        for key, step in steps.items():
            if step is not None and not _valid_entry(step, ("mean", "sd")):
                raise ConfigError(f"{path}: {key} needs a mean and an sd > 0")
        step = steps["level_step_log_ms"]
        own = {operation: steps[f"level_step_log_ms_{operation}"]
               for operation in ("read", "write")}
        by_operation = tuple((operation, float(own[operation]["mean"]),
                              float(own[operation]["sd"]))
                             for operation in ("read", "write") if own[operation] is not None)
        scale = table.get("level_step_scale", 0.0)
        if not (_is_number(scale) and 0.0 <= scale <= 1.0):
            raise ConfigError(f"{path}: level_step_scale = {scale!r}; give a number from 0 "
                              "(the level step carries over in ms) to 1 (as a ratio to "
                              "ONE), e.g. level_step_scale = 0.5")
        replicas = table.get("level_step_replicas", 3)
        if isinstance(replicas, bool) or not isinstance(replicas, int) or replicas < 2:
            raise ConfigError(f"{path}: level_step_replicas = {replicas!r}; give the "
                              "whole number of replicas (2 or more) of the clusters the "
                              "level step was measured on, e.g. level_step_replicas = 3")
        miss = table.get("level_miss")
        if miss is not None and not _valid_entry(miss, ("sd",)):
            raise ConfigError(f"{path}: level_miss needs an sd > 0")
        return cls(np.array([table[n]["mean"] for n in COORDINATES], float),
                   np.array([table[n]["sd"] for n in COORDINATES], float),
                   str(table.get("source", path)),
                   None if levels is None else float(levels["mean"]),
                   None if levels is None else float(levels["sd"]),
                   None if shape is None else float(shape["sd"]),
                   None if step is None else float(step["mean"]),
                   None if step is None else float(step["sd"]),
                   None if miss is None else float(miss["sd"]), by_operation,
                   float(scale), replicas)


def _is_number(value) -> bool:
    """Whether a TOML value is a finite number (a boolean is not)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) \
        and bool(np.isfinite(value))


def _valid_entry(entry, fields) -> bool:
    """Whether a prior file's entry has every one of ``fields``, each a finite number,
    its mean (if it has one) within `LOG_LIMIT` and its sd > 0."""
    return isinstance(entry, dict) and set(fields) <= set(entry) \
        and all(_is_number(entry[k]) for k in fields) \
        and abs(entry.get("mean", 0.0)) <= LOG_LIMIT and entry["sd"] > 0


def default_prior() -> tuple[Prior, str]:
    """The built-in prior (``sizing/default_prior.toml``, fitted on the published
    clusters in docs/data by ``benchmarks/cassandra_heldout.py --write-prior``) and the
    structure it names: the one with the smallest held-out error there."""
    from importlib import resources

    from forkjoin_sim.files.io import read_toml

    with resources.as_file(resources.files("sizing") / "default_prior.toml") as path:
        document = read_toml(path, "the built-in prior", "reinstall forkjoin-sim")
    return (Prior.from_file_table(document, str(path)),
            document.get("structure", "shared-digest-client"))


#: Smallest prior sd (natural log) of a ratio carried over from another cluster:
#: clusters differ by more than one fit's own uncertainty says.
CARRY_OVER_SD = 0.5


#: Coordinates that belong to one cluster and its client machine (its scale): a prior
#: carried from other clusters keeps them vague.
OWN_SCALE = ("work", "hop_client", "outside_share")


def _vague_scale(mean: np.ndarray, sd: np.ndarray) -> None:
    """Set the `OWN_SCALE` coordinates of a carried prior's ``mean`` and ``sd`` (in
    place) to the vague prior's."""
    vague = Prior.vague()
    for name in OWN_SCALE:
        i = COORDINATES.index(name)
        mean[i], sd[i] = vague.mean[i], vague.sd[i]


def prior_from_model(model, source: str) -> Prior:
    """Prior from another cluster's fitted model: every coordinate but the cluster's
    own scale (its ratios such as digest/data, coordinator, message and client shares,
    hop ratio, branch cv, window, mutation ratio, lanes, hop spread) at its fitted
    value, with its posterior spread widened to at least `CARRY_OVER_SD`; the scale
    (replica work, client hop, outside work) vague."""
    fitted = model.fit
    sd = np.sqrt(fitted.posterior_sd ** 2 + CARRY_OVER_SD ** 2)
    mean = fitted.point.copy()
    _vague_scale(mean, sd)
    # the level prior it was fitted with carries over as it was
    return replace(fitted.prior, mean=mean, sd=sd,
                   source=f"the model {source} (structure {fitted.structure})")


def demands_of(point: np.ndarray) -> np.ndarray:
    """Demands in the order of `sizing.closed_network.DEMANDS` from a point of
    `COORDINATES`."""
    work, coord, msg, digest, client, hop_c, hop_ratio, outside, cv, window, mutation, \
        lanes, spread = np.exp(point)
    hop_client = hop_c * work
    values = {"client": client * work, "hop_client": hop_client,
              "hop_replica": hop_ratio * hop_client, "coordinate": coord * work,
              "message": msg * work, "work": work, "digest_ratio": digest,
              "client_outside": outside * work, "branch_cv": cv, "link_window": window,
              "mutation_ratio": mutation, "lanes": max(lanes, 1.0),
              "hop_spread": max(spread, 1.0)}
    return np.array([values[name] for name in DEMANDS])


@dataclass(frozen=True)
class Fit:
    """A fitted point of `COORDINATES`, its approximate posterior (Laplace: sd, and the
    covariance when known), and the setting it was fitted in."""

    point: np.ndarray
    posterior_sd: np.ndarray
    prior: Prior
    structure: str
    cores: int
    client_cores: int
    cost: float
    covariance: np.ndarray | None = None
    #: Data centres of the nodes and the client (`sizing.geography.Geography`), or
    #: None: one data centre, symmetric nodes.
    geography: object = None
    #: Other points of the posterior along the scale's profile: (weight relative to
    #: the fitted point's 1, at most 1; point; covariance with the work held), each
    #: drawn in that share (`fit`).
    alternatives: tuple = ()

    def draws(self, samples: int, rng: np.random.Generator) -> np.ndarray:
        """Points drawn from the Laplace posterior: with its covariance (the level
        prior ties coordinates together) when known, else from the marginal sds; and
        from each of the ``alternatives``, in the share of its weight (the rest, and
        the remainder of the rounding, about the fitted point). The
        draws are scrambled Sobol' points (seeded by ``rng``) sent through the normal
        quantile function: the ends of a band settle with fewer of them than with
        independent draws (Karpenko C reads: the spread of band widths across seeds
        halves, median 9.5% to 6.2%, at 200 draws)."""
        covariance = (self.covariance if self.covariance is not None
                      else np.diag(self.posterior_sd ** 2))
        parts = [(1.0, self.point, covariance)] + list(self.alternatives)
        weights = np.array([w for w, _, _ in parts])
        counts = np.floor(samples * weights / weights.sum()).astype(int)
        counts[0] += samples - counts.sum()
        out = []
        for (_, centre, spread), count in zip(parts, counts):
            if count <= 0:
                continue
            values, vectors = np.linalg.eigh(spread)
            factor = vectors * np.sqrt(np.clip(values, 0.0, None))
            sobol = qmc.Sobol(len(centre), seed=rng).random_base2(
                int(np.ceil(np.log2(max(count, 2)))))[:count]
            out.append(centre + stats.norm.ppf(np.clip(sobol, 1e-12, 1 - 1e-12))
                       @ factor.T)
        return np.concatenate(out) if out else np.empty((0, len(self.point)))

    def predict(self, rows, point: np.ndarray | None = None):
        """Mean latency (ms) and throughput (ops/s) per row."""
        latency, per_ms = predict(demands_of(self.point if point is None else point), rows,
                                  self.structure, self.cores, self.client_cores,
                                  self.geography)
        return latency, per_ms * 1000.0

    def interval(self, rows, samples: int = 256, seed: int = 0, level: float = 0.95):
        """Prediction interval of the mean latency per row from the posterior draws
        (`draws`: they hold the prior's spread where the rows say nothing), as
        `band_about` the fitted point's prediction: each end as far as the draws reach
        on its side (so the band always holds the curve drawn)."""
        draws = self.draws(samples, np.random.default_rng(seed))
        values = np.log([self.predict(rows, d)[0] for d in draws])
        point = self.predict(rows)[0]
        low, high = band_about(np.log(point), values, level)
        # an end the draws do not move is the point itself, not its log's exp
        return np.minimum(low, point), np.maximum(high, point)

    def resting_on_prior(self, keep: float = 0.5, replicas=None) -> list[str]:
        """Coordinates the structure uses (on a cluster of ``replicas``) whose posterior
        sd is more than ``keep`` of the prior's: the rows barely informed them."""
        unused = unused_coordinates(self.structure, self.geography, replicas)
        return [name for name, post, pri in zip(COORDINATES, self.posterior_sd,
                                                self.prior.sd)
                if post > keep * pri and name not in unused]


def band_about(centre, values, level: float, widen=0.0):
    """The ``level`` prediction band (low, high) per row about ``centre`` (log
    predictions) from posterior draws ``values`` (log, one row per draw; NaN: a draw
    left out): on the log scale each end is as far from ``centre`` as the draws'
    central ``level`` range reaches on its side (nothing where it stops short of
    ``centre``), widened in quadrature by ``widen`` (a log half-width per row). A
    posterior skewed, or of two explanations (`Fit.alternatives`), reaches further
    on one side than a band centred on the prediction would."""
    tail = (1 - level) / 2
    low, high = (np.nanquantile(values, q, axis=0) for q in (tail, 1 - tail))
    below = np.sqrt(np.clip(centre - low, 0.0, None) ** 2 + np.square(widen))
    above = np.sqrt(np.clip(high - centre, 0.0, None) ** 2 + np.square(widen))
    return np.exp(centre - below), np.exp(centre + above)


def unused_coordinates(structure: str, geography=None, replicas=None) -> set[str]:
    """Coordinates that change no prediction of ``structure`` (with ``geography``, a
    `sizing.geography.Geography` or None, on a cluster of ``replicas``, None: not
    known): a fit leaves them at the prior."""
    layout = structure_of(structure)
    unused = set() if layout.outside_queued else {"outside_share"}
    if not layout.digest_reads:
        unused.add("digest_ratio")  # reads ask every replica for data there
    if replicas is not None and np.all(np.asarray(replicas) == 1):
        # a lone replica is asked for its data alone, and is both nearest and farthest
        unused.update(("digest_ratio", "hop_spread"))
    if geography is None:
        unused.add("link_window")
    if not layout.lanes:
        unused.add("lanes")
    if geography is None or not geography.spreads():
        unused.add("hop_spread")
    return unused


def _level_rows(rows, prior: Prior):
    """Pairs of rows (ONE, quorum k) at every fitted operation and thread count for the
    level prior; each pair's position (k-1)/(replicas-1); the weight that gives the
    pairs of one level, together, the information of one measured ratio; and for each
    pair the index, among the ALL pairs, of the ALL pair at its operation and threads."""
    if prior.level_mean is None and prior.level_shape_sd is None:
        return None, None, None, None
    rates = rows.get("rate", np.full(len(rows["write"]), np.nan))
    # an open loop's load is its rate (threads NaN), a closed loop's its threads
    keys = sorted({(bool(w), float(t) if np.isfinite(t) else -1.0,
                    float(x) if np.isfinite(x) else -1.0, int(n), int(r))
                   for w, t, x, n, r in zip(rows["write"], rows["threads"], rates,
                                            rows["nodes"], rows["replicas"])})
    pairs, position, count, owner = [], [], {}, []
    tops = 0
    for write, threads, rate, nodes, replicas in keys:
        if replicas < 2:
            continue
        threads = np.nan if threads < 0 else threads
        rate = np.nan if rate < 0 else rate
        for k in range(2, replicas + 1):
            pairs += [(write, threads, rate, nodes, replicas, 1),
                      (write, threads, rate, nodes, replicas, k)]
            position.append((k - 1) / (replicas - 1))
            count[(write, k)] = count.get((write, k), 0) + 1
            owner.append(tops)
        tops += 1
    if not position:
        return None, None, None, None
    columns = list(zip(*pairs))
    pseudo = dict(write=np.array(columns[0], bool), threads=np.array(columns[1], float),
                  rate=np.array(columns[2], float), think_ms=np.zeros(len(pairs)),
                  nodes=np.array(columns[3]), replicas=np.array(columns[4]),
                  quorum=np.array(columns[5]))
    ks = pseudo["quorum"][1::2]
    weight = 1.0 / np.sqrt([count[(w, k)] for w, k in zip(pseudo["write"][1::2], ks)])
    return pseudo, np.array(position), weight, np.array(owner)


def step_rows(rows, replicas: int | None = None):
    """Pairs of rows (ONE, ALL) of one client thread, no think time, per operation and
    cluster size of ``rows`` (replicas >= 2), for `level_step`; None if there are none.
    With ``replicas``, ALL is that many replicas' (on at least as many nodes): what a
    level prior measured on clusters of that many replicas speaks of
    (`Prior.level_step_replicas`)."""
    keys = sorted({(bool(w), int(n), int(r)) for w, n, r in
                   zip(rows["write"], rows["nodes"], rows["replicas"]) if r >= 2})
    if not keys:
        return None
    if replicas is not None:
        keys = sorted({(w, max(n, replicas), replicas) for w, n, _ in keys})
    pairs = [(w, n, r, k) for w, n, r in keys for k in (1, r)]
    count = len(pairs)
    return dict(write=np.array([p[0] for p in pairs], bool), threads=np.ones(count),
                think_ms=np.zeros(count), nodes=np.array([p[1] for p in pairs]),
                replicas=np.array([p[2] for p in pairs]),
                quorum=np.array([p[3] for p in pairs]))


def lone_levels(demands, pairs, structure: str, cores: int, client_cores: int):
    """Per pair of `step_rows`, log(latency at ALL - latency at ONE) and log(latency at
    ONE) of a lone request (ms)."""
    alone = predict(demands, pairs, structure, cores, client_cores)[0]
    return np.log(np.maximum(alone[1::2] - alone[0::2], 1e-9)), np.log(alone[0::2])


def level_step(demands, pairs, structure: str, cores: int, client_cores: int,
               scale: float = 0.0):
    """Per pair of `step_rows`, log(latency at ALL - latency at ONE) of a lone request
    (ms), less ``scale`` times log(its latency at ONE): what the highest level costs it
    (`Prior.level_step_mean`, `Prior.level_step_scale`)."""
    step, one = lone_levels(demands, pairs, structure, cores, client_cores)
    return step - scale * one


#: Windows (messages in flight per wide-area link) a fit with data centres starts
#: from: wide open, and tight enough to bind a few hundred requests per second over
#: a 100-300 ms round trip.
WINDOW_STARTS = (1000.0, 100.0, 10.0)


#: The log miss a measured row's mean latency is fitted to within (its noise, a
#: measured mean's own spread and rounding: cassandra-stress prints "1.0 ms").
ROW_NOISE = 0.05


#: Shares of `COORDINATES` that are ratios to the replica work (log): moving the work
#: by a factor and these by its inverse keeps their times in ms.
SCALED = ("coordinate_share", "message_share", "client_share", "hop_client",
          "outside_share")

#: Offsets (log) of the replica work from the fitted point at which the profile of
#: the posterior is fitted (`fit`).
PROFILE_OFFSETS = (-3.0, -2.0, -1.0, 1.0)

#: Excess cost past which a profile point carries no weight (e^-4: 2%).
PROFILE_CUT = 4.0


class _Objective:
    """What the fit minimises, as residuals (half their sum of squares is the cost):
    each row's log miss of its mean latency and measured throughput in units of
    ``noise``, each coordinate's distance from the prior in prior sds, and, in one data
    centre, the level prior's terms (a lone request's step to ALL of the prior's
    sources' replicas; the levels' ratio and shape where the prior has them). Only the
    coordinates a prediction depends on are searched (``free``); `solve` searches them
    within bounds. ``progress(done, budget)`` is called at every evaluation."""

    def __init__(self, rows, latency_ms, structure, prior, cores, client_cores,
                 throughput, noise, geography, progress=None, budget=1):
        self.rows, self.latency_ms, self.structure = rows, latency_ms, structure
        self.prior, self.cores, self.client_cores = prior, cores, client_cores
        self.noise, self.geography = noise, geography
        self.progress, self.budget, self.calls = progress, budget, 0
        self.measured_x = (np.full(len(latency_ms), np.nan) if throughput is None
                           else np.asarray(throughput, float))
        self.has_x = np.isfinite(self.measured_x) & (self.measured_x > 0)
        self.pseudo, self.position, self.weight, self.owner = _level_rows(
            rows, prior if geography is None else Prior(prior.mean, prior.sd))
        steps = None if geography is not None else step_rows(rows,
                                                             prior.level_step_replicas)
        self.step_prior = None
        if steps is not None:
            # per (ONE, ALL) pair, its operation's level-step prior (mean, sd); pairs
            # of an operation without one are left out
            found = [prior.level_step(bool(w)) for w in steps["write"][0::2]]
            keep = np.array([f is not None for f in found])
            self.step_prior = np.array([f for f in found if f is not None]).T
            steps = {key: value[np.repeat(keep, 2)] for key, value in steps.items()} \
                if keep.any() else None
        self.steps = steps
        # only the coordinates a prediction depends on are fitted; the others stay at
        # the prior (a Jacobian column each would cost a model run and say nothing)
        unused = unused_coordinates(structure, geography)
        self.free = np.array([name not in unused for name in COORDINATES])

    def residuals(self, point):
        """The residuals at ``point`` (every coordinate, natural logs)."""
        self.calls += 1
        if self.progress is not None:
            self.progress(min(self.calls, self.budget), self.budget)
        prior, noise = self.prior, self.noise
        demands = demands_of(point)
        latency, x = predict(demands, self.rows, self.structure, self.cores,
                             self.client_cores, self.geography)
        has_x = self.has_x
        parts = [np.log(latency / self.latency_ms) / noise,
                 np.log(x[has_x] * 1000.0 / self.measured_x[has_x]) / noise,
                 (point - prior.mean) / prior.sd]
        if self.steps is not None:
            parts.append((level_step(demands, self.steps, self.structure, self.cores,
                                     self.client_cores, prior.level_step_scale)
                          - self.step_prior[0]) / self.step_prior[1])
        if self.pseudo is not None:
            level = np.log(predict(demands, self.pseudo, self.structure, self.cores,
                                   self.client_cores)[0])
            ratio = level[1::2] - level[0::2]
            position, weight = self.position, self.weight
            top = position == 1.0
            if prior.level_mean is not None:
                parts.append(weight[top] * (ratio[top] - prior.level_mean)
                             / prior.level_sd)
            if prior.level_shape_sd is not None and np.any(~top):
                # each middle level against the line from ONE to ALL at its threads
                middle = ratio[~top] - position[~top] * ratio[top][self.owner[~top]]
                parts.append(weight[~top] * middle / prior.level_shape_sd)
        return np.concatenate(parts)

    def solve(self, start, lower, upper, evaluations):
        """(point, `scipy.optimize.least_squares` result) of the search from
        ``start`` within ``lower``..``upper`` over the free coordinates (the others
        held at ``start``'s), at most ``evaluations`` of them."""
        fixed, free = start.copy(), self.free

        def on_free(values):
            point = fixed.copy()
            point[free] = values
            return self.residuals(point)

        result = optimize.least_squares(on_free, start[free], method="trf",
                                        bounds=(lower[free], upper[free]), diff_step=1e-4,
                                        x_scale=1.0, max_nfev=evaluations, ftol=1e-6,
                                        xtol=1e-6)
        fixed[free] = result.x
        return fixed, result


def _bounds() -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper) of every coordinate (natural logs) in a fit's search."""
    low, high = np.full(len(COORDINATES), -25.0), np.full(len(COORDINATES), 15.0)
    # below SMALLEST_CV a branch's law no longer changes: a fit would report a cv the
    # model does not use
    low[COORDINATES.index("branch_cv")] = np.log(SMALLEST_CV)
    # at least one lane per node: fewer would be a queue whose visits wait as if each
    # took longer than it does
    low[COORDINATES.index("lanes")] = 0.0
    # the farthest fitted hop is at least the nearest (a draw below counts as equal)
    low[COORDINATES.index("hop_spread")] = 0.0
    return low, high


def _profile(objective: _Objective, centre, cost, evaluations: int) -> list:
    """(cost, point, covariance) of each point of the scale's profile about
    ``centre`` (of cost ``cost``) within `PROFILE_CUT` of it.

    The fit with the replica work held a factor e, e^2, e^3 apart (`PROFILE_OFFSETS`),
    started from the other demands in ms where ``centre`` has them (the shares are
    ratios to the work). Where the rows cannot tell what saturates (busy nodes, or
    full wide-area links: Karpenko D's QUORUM and ALL writes), the cost along the
    scale is nearly flat and the explanation changes along it, which the Laplace
    approximation about the point cannot see. Each point kept has its own Laplace
    covariance at the held work."""
    free, prior = objective.free, objective.prior
    low, high = _bounds()
    held_free = free.copy()
    held_free[0] = False
    # the shares the structure uses (one it does not stays at its prior)
    scale_of = [i for i in map(COORDINATES.index, SCALED) if free[i]]
    found = []
    for offset in PROFILE_OFFSETS:
        start = centre.copy()
        start[0] += offset
        start[scale_of] -= offset
        start = np.clip(start, low, high)
        lower, upper = low.copy(), high.copy()
        lower[0], upper[0] = start[0] - 1e-6, start[0] + 1e-6
        there, held = objective.solve(start, lower, upper, evaluations)
        inner = _laplace(held.jac[:, held_free[free]], held_free, prior)[0]
        if held.cost - cost <= PROFILE_CUT and inner is not None:
            inner[0, :] = inner[:, 0] = 0.0
            found.append((held.cost, there, inner))
    return found


def fit(rows, latency_ms, structure: str = "shared-digest", prior: Prior | None = None,
        cores: int = 4, client_cores: int = 4, throughput=None, noise: float = ROW_NOISE,
        starts: int = 2, max_evaluations: int = 80, progress=None,
        geography=None) -> Fit:
    """MAP fit of the demands to measured mean latencies (ms) and optional throughputs
    (ops/s, NaN where absent) of ``rows`` (see `sizing.closed_network.predict`).

    Beside the point and its Laplace approximation, the fit keeps the points of the
    scale's profile the rows barely tell from it (`Fit.alternatives`, `_profile`),
    each weighted e^-(its excess cost) against the point's 1 (the rows' and the
    prior's support; the volume about each is not counted), which the prediction
    bands draw from too.

    ``progress(done, budget)``, if given, is called at every model evaluation (at most
    ``budget`` of them). ``geography`` (`sizing.geography.Geography`) places nodes and
    client in data centres; the level prior, which describes single-region clusters,
    is then left out: the round trips between data centres set what a level costs."""
    structure_of(structure)
    prior = prior or Prior.vague()
    latency_ms = np.asarray(latency_ms, float)
    if np.any(~np.isfinite(latency_ms) | (latency_ms <= 0)):
        raise ConfigError("every fitted row needs a positive mean latency")
    objective = _Objective(rows, latency_ms, structure, prior, cores, client_cores,
                           throughput, noise, geography, progress)
    free = objective.free
    # each evaluation the optimiser counts also pays one per coordinate (its Jacobian)
    objective.budget = int((starts * max_evaluations * (
        1 if geography is None else 1.25 * len(WINDOW_STARTS))
        + len(PROFILE_OFFSETS) * (max_evaluations // 2)) * (1 + free.sum()))

    best = None
    scale = np.log(np.median(latency_ms))
    window = COORDINATES.index("link_window")
    low, high = _bounds()
    # a saturating wide-area link and busy cores can both bend a curve, and a free
    # fit slides from one explanation to the other: with data centres, each start
    # first holds the window at one of WINDOW_STARTS (a quarter of the evaluations),
    # then frees it
    windows = [None] if geography is None else WINDOW_STARTS
    for shift, held in [(s, w) for s in np.linspace(-3.0, 0.0, starts) for w in windows]:
        start = np.clip(prior.mean, low, high)
        start[0] = scale + shift
        if held is not None:
            start[window] = np.log(held)
            lower, upper = low.copy(), high.copy()
            lower[window], upper[window] = start[window] - 1e-6, start[window] + 1e-6
            start = objective.solve(start, lower, upper, max_evaluations // 4)[0]
        point, result = objective.solve(start, low, high, max_evaluations)
        if best is None or result.cost < best[1].cost:
            best = point, result
    point, result = best
    covariance, sd = _laplace(result.jac, free, prior)
    alternatives = [] if covariance is None else \
        _profile(objective, point, result.cost, max_evaluations // 2)
    lowest = min(alternatives, key=lambda a: a[0], default=None)
    if lowest is not None and lowest[0] < result.cost:
        # a profile point below the fitted one: the starts missed the optimum; freed
        # from there, the better point is the fit, and the profile is taken about it
        better, again = objective.solve(lowest[1], low, high, max_evaluations)
        laplace = _laplace(again.jac, free, prior)
        if again.cost < result.cost and laplace[0] is not None:
            point, result, (covariance, sd) = better, again, laplace
            alternatives = _profile(objective, point, result.cost, max_evaluations // 2)
    # the fit is the lowest point found: a profile point below it (where the refit
    # failed) is left out, as the weights are against the fit's 1
    alternatives = [(float(np.exp(result.cost - cost)), there, inner)
                    for cost, there, inner in alternatives if cost >= result.cost]
    return Fit(point, np.minimum(sd, prior.sd), prior, structure, cores, client_cores,
               float(result.cost), covariance, geography, tuple(alternatives))


def _laplace(jac, free, prior):
    """(covariance, sd) of the Laplace approximation from the Jacobian ``jac`` of
    the residuals in the coordinates ``free``; the others at their prior,
    uncorrelated; (None, prior sd) where ``jac`` is singular."""
    covariance = np.diag(prior.sd ** 2)
    sd = prior.sd.copy()
    try:
        inner = np.linalg.inv(jac.T @ jac)
    except np.linalg.LinAlgError:
        return None, prior.sd.copy()
    inner = 0.5 * (inner + inner.T)
    covariance[np.ix_(free, free)] = inner
    sd[free] = np.sqrt(np.clip(np.diag(inner), 0, None))
    # no coordinate wider than its prior (a numerically flat direction)
    shrink = np.minimum(1.0, prior.sd / np.maximum(sd, 1e-300))
    return covariance * np.outer(shrink, shrink), sd
