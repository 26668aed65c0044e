"""The model file of a calibrated closed-network model: reading it back, checked.

`NetworkModel.to_toml` (`sizing.network_model`) writes the file `cassandra calibrate`
keeps; `read_network_model` reads it for `cassandra predict --model` and
`plan-consistency --model`, refusing, one line per problem, a file that no calibration
writes (a table or key misspelt, a list of another length, a value edited out of
range) before any prediction.
"""

from __future__ import annotations

import numpy as np

from forkjoin_sim.errors import ConfigError
from forkjoin_sim.files.io import read_toml
from sizing.closed_network import DEMANDS, STRUCTURES
from sizing.geography import Geography
from sizing.network_fit import COORDINATES, LATER_COORDINATES, LEGACY_VALUES, LOG_LIMIT, \
    Fit, Prior, demands_of
from sizing.network_model import KIND, Anchors, NetworkModel


def _anchors_of(table: dict, values: str) -> Anchors:
    """Anchors read from a model file's table (``values``: the key of the values)."""
    kinds = [None, None, None]
    for key in ("write", "quorum", "threads", values, "open", "reads", "other_quorum",
                "pause_ms"):
        if key in table and not isinstance(table[key], list):
            raise ValueError(f"{key} must be a list, one value per fitted row")
    for flag in ("write", "open"):
        if flag in table and not all(isinstance(v, bool) for v in table[flag]):
            raise ValueError(f"{flag} must be a list of true and false")
    for key in ("quorum", "threads", values, "reads", "other_quorum", "pause_ms"):
        # true and false are numbers to Python, not to a model file
        if key in table and not all(isinstance(v, (int, float))
                                    and not isinstance(v, bool) for v in table[key]):
            raise ValueError(f"{key} must be a list of numbers")
    if "open" in table:
        kinds = [np.array(table["open"], bool), np.array(table["reads"], float),
                 np.array(table["other_quorum"], int)]
    pause = np.array(table["pause_ms"], float) if "pause_ms" in table else None
    return Anchors(np.array(table["write"], bool), np.array(table["quorum"], int),
                   np.array(table["threads"], float), np.array(table[values], float),
                   *kinds, pause)


def _lengths(anchors: Anchors) -> set:
    return {len(v) for v in (anchors.write, anchors.quorum, anchors.threads,
                             anchors.residual, anchors.open, anchors.reads,
                             anchors.other_quorum, anchors.pause) if v is not None}


def _profile_of(entries, older, path: str) -> tuple:
    """The ``[[posterior.profile]]`` points of a model file (`Fit.alternatives`)."""
    size = len(COORDINATES)
    if not isinstance(entries, list) or (entries and older):
        raise ConfigError(f"{path}: [[posterior.profile]] is not as calibrate writes "
                          "it; recalibrate")
    out = []
    for entry in entries:
        try:
            weight = float(entry["weight"])
            point = np.array(entry["point"], float)
            covariance = np.array(entry["covariance"], float)
        except (KeyError, TypeError, ValueError):
            raise ConfigError(f"{path}: each [[posterior.profile]] needs weight, point "
                              "and covariance; recalibrate") from None
        if not (np.isfinite(weight) and weight > 0) or point.shape != (size,) \
                or covariance.shape != (size, size) or not np.all(np.isfinite(point)) \
                or not np.all(np.isfinite(covariance)):
            raise ConfigError(f"{path}: a [[posterior.profile]] needs a positive weight, "
                              f"{size} finite coordinates and a {size} x {size} finite "
                              "covariance; recalibrate")
        out.append((weight, point, covariance))
    return tuple(out)


def is_network_model(path: str) -> bool:
    """Whether ``path`` is a model file of this module (else the simulation model's,
    whose reader then says what is wrong with a file that is neither)."""
    try:
        table = read_toml(path, "--model", "")
    except ConfigError:
        return False
    model = table.get("model")
    return isinstance(model, dict) and model.get("kind") == KIND


#: The tables of a model file (`NetworkModel.to_toml`).
TABLES = ("model", "demands_ms", "posterior", "anchors", "outside", "fit", "prior",
          "datacentres")


def _whole(model: dict, key: str, path: str) -> int:
    """``[model] key`` of file ``path``, which must be a whole number."""
    value = model[key]
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{path}: [model] {key} = {value!r}; give a whole "
                          "number, or recalibrate")
    return value


#: Highest offered rate (ops/s) an open-loop anchor may hold.
MOST_RATE = 1e12


def _check_anchors(anchors: Anchors, replicas: int, path: str, name: str,
                   values: str) -> None:
    """Refuse anchors of a hand-edited model file whose values no calibration writes:
    a non-finite value, a load below one thread (or a rate <= 0), a quorum outside
    1..replicas."""
    from sizing.columns import MAX_THREADS

    if not len(anchors.threads):
        raise ConfigError(f"{path}: the [{name}] lists are empty (a calibrated "
                          "model keeps one entry per fitted row); recalibrate")
    loads_ok = np.all(np.isfinite(anchors.threads)) and np.all(
        np.where(anchors.is_open(),
                 (anchors.threads > 0) & (anchors.threads <= MOST_RATE),
                 (anchors.threads >= 1) & (anchors.threads <= MAX_THREADS)))
    if not np.all(np.isfinite(anchors.residual)):
        raise ConfigError(f"{path}: [{name}] {values} must be finite numbers; "
                          "recalibrate")
    if anchors.pause is not None and not np.all(np.isnan(anchors.pause) | (
            np.isfinite(anchors.pause) & (anchors.pause >= 0))):
        raise ConfigError(f"{path}: [{name}] pause_ms must be pauses >= 0 in ms (nan "
                          "where a row stated none); recalibrate")
    if name == "anchors" and np.any(np.abs(anchors.residual) > LOG_LIMIT):
        raise ConfigError(f"{path}: [anchors] residual (a log correction) must "
                          f"lie within +-{LOG_LIMIT:g}; recalibrate")
    if not loads_ok:
        raise ConfigError(f"{path}: [{name}] threads must lie in 1..{MAX_THREADS:,} "
                          f"(an open loop's rate in (0, {MOST_RATE:.0e}] ops/s); "
                          "recalibrate")
    if np.any((anchors.quorum < 1) | (anchors.quorum > replicas)) or (
            anchors.other_quorum is not None and np.any(
                (anchors.other_quorum < 1) | (anchors.other_quorum > replicas))):
        raise ConfigError(f"{path}: [{name}] quorum and other_quorum must lie "
                          f"in 1..{replicas} (the model's replicas); recalibrate")
    if anchors.reads is not None and not np.all((anchors.reads >= 0)
                                                & (anchors.reads <= 1)):
        raise ConfigError(f"{path}: [{name}] reads (a run's share of reads) "
                          "must lie in [0, 1]; recalibrate")


#: Demands a release before their lower bound of 1 wrote as fitted (below 1 too).
_UNBOUNDED = ("lanes", "hop_spread")


def _check_demands(table: dict, point: np.ndarray, path: str) -> None:
    """``[demands_ms]`` is written for people to read; the model computes from
    ``[posterior]``. A value that differs from what the posterior gives (an edit there,
    which would be silently ignored, or an edit of the posterior that left it stale)
    and a key that is not a demand (a misspelt edit) are refused."""
    shown = table.get("demands_ms")
    if shown is None:
        return
    if not isinstance(shown, dict):
        raise ConfigError(f"{path}: demands_ms must be a table; recalibrate")
    unknown = [key for key in shown if key not in DEMANDS]
    if unknown:
        raise ConfigError(f"{path}: [demands_ms] has unknown key(s) "
                          f"{', '.join(unknown)}; its keys are {', '.join(DEMANDS)} (the "
                          "table is shown for reading only: delete it, or recalibrate)")
    for name, value in zip(DEMANDS, demands_of(point)):
        given = shown.get(name, value)
        fitted = [value] + ([float(np.exp(point[COORDINATES.index(name)]))]
                            if name in _UNBOUNDED else [])
        if isinstance(given, bool) or not isinstance(given, (int, float)) or not any(
                np.isclose(given, v, rtol=1e-9, atol=0.0) for v in fitted):
            raise ConfigError(
                f"{path}: [demands_ms] {name} = {given!r} is not what "
                f"[posterior] gives ({float(value)!r}); [demands_ms] is shown for "
                "reading only (the model computes from [posterior], natural logs), so "
                "an edit there does nothing: undo it or delete the table (after "
                "editing [posterior] it is stale: delete it), or recalibrate")


def read_network_model(path: str, option: str = "--model") -> NetworkModel:
    """Read a model file written by `NetworkModel.to_toml` (checked: one line per
    problem, naming the file as given by ``option``)."""
    table = read_toml(path, option, "give a file written by forkjoin-sim cassandra "
                      "calibrate")
    path = f"{option} {path}"  # as messages name it from here on
    unknown = [name for name in table if name not in TABLES]
    if unknown:
        raise ConfigError(f"{path} has unknown table(s) {', '.join(unknown)}; a "
                          f"model file has {', '.join(TABLES)}: give a file written by "
                          "forkjoin-sim cassandra calibrate")
    try:
        model, posterior, anchors = table["model"], table["posterior"], table["anchors"]
        structure = model["structure"]
        if structure not in STRUCTURES:
            raise ConfigError(f"{path}: structure {structure!r} is not one of "
                              f"{', '.join(STRUCTURES)}; recalibrate")
        prior = Prior.from_file_table(table, path)
        # a file written before a coordinate existed: it predicts as its release did
        # (the value it computed with, held), else the coordinate sits at the prior
        older = [n for n in LATER_COORDINATES if n not in posterior]
        if older and tuple(older) != COORDINATES[len(COORDINATES) - len(older):]:
            raise ConfigError(f"{path}: [posterior] lacks {', '.join(older)} but "
                              "has coordinates that came after it; recalibrate")
        posterior = dict(posterior, **{
            n: {"mean": LEGACY_VALUES[n], "sd": 0.0} if n in LEGACY_VALUES else
            {"mean": prior.mean[COORDINATES.index(n)], "sd": prior.sd[COORDINATES.index(n)]}
            for n in older})
        for n in COORDINATES:
            if not isinstance(posterior[n], dict):
                raise ConfigError(f"{path}: [posterior] {n} = {posterior[n]!r}; "
                                  "give a table { mean = ..., sd = ... } (natural logs), "
                                  "or recalibrate")
        point = np.array([posterior[n]["mean"] for n in COORDINATES], float)
        sd = np.array([posterior[n]["sd"] for n in COORDINATES], float)
        covariance = posterior.get("covariance")
        if covariance is not None:
            try:
                covariance = np.array(covariance, float)
            except ValueError:  # rows of different lengths
                covariance = np.zeros(0)
            if older and covariance.shape == (len(COORDINATES) - len(older),) * 2:
                known = [i for i, n in enumerate(COORDINATES) if n not in older]
                full = np.diag(sd ** 2)
                full[np.ix_(known, known)] = covariance
                covariance = full
            elif older:
                # a release before them wrote no row of them: a line lost since
                raise ConfigError(f"{path}: [posterior] lacks {', '.join(older)} "
                                  "though its covariance has a row for every coordinate; "
                                  "recalibrate")
            if covariance.shape != (len(COORDINATES), len(COORDINATES)) or \
                    not np.all(np.isfinite(covariance)):
                raise ConfigError(f"{path}: [posterior] covariance must be "
                                  f"{len(COORDINATES)} x {len(COORDINATES)} finite "
                                  "numbers; recalibrate")
        profile = _profile_of(posterior.get("profile", []), older, path)
        geography = None
        if "datacentres" in table:
            geography = Geography.from_mapping(table["datacentres"])
            geography.check_cluster(_whole(model, "nodes", path),
                                    _whole(model, "replicas", path))
        fit = Fit(point, sd, prior, structure, _whole(model, "cores", path),
                  _whole(model, "client_cores", path), float(model.get("cost", 0.0)),
                  covariance, geography, profile)
        found = _anchors_of(anchors, "residual")
        nodes, replicas = _whole(model, "nodes", path), _whole(model, "replicas", path)
        outside = None
        if "outside" in table:
            o = table["outside"]
            outside = _anchors_of(o, "ms")
            if len(_lengths(outside)) != 1 or np.any(outside.residual < 0):
                raise ConfigError(f"{path}: [outside] lists differ in length "
                                  "or hold a negative time; recalibrate")
    except KeyError as exc:
        raise ConfigError(f"{path} lacks {exc.args[0]!r}; give a file written "
                          "by forkjoin-sim cassandra calibrate") from None
    except (TypeError, ValueError) as exc:
        if isinstance(exc, ConfigError):
            raise
        raise ConfigError(f"{path} has a malformed value ({exc}); give a file "
                          "written by forkjoin-sim cassandra calibrate") from None
    if len(_lengths(found)) != 1:
        raise ConfigError(f"{path}: the [anchors] lists differ in length; "
                          "recalibrate")
    if not (np.all(np.isfinite(point)) and np.all(np.isfinite(sd)) and np.all(sd >= 0)
            and np.all(np.abs(point) <= LOG_LIMIT) and np.all(sd <= LOG_LIMIT)):
        raise ConfigError(f"{path}: [posterior] needs finite means within "
                          f"+-{LOG_LIMIT:g} and sds in 0..{LOG_LIMIT:g}; recalibrate")
    if not 1 <= replicas <= nodes:
        raise ConfigError(f"{path}: replicas={replicas} nodes={nodes}; need "
                          "1 <= replicas <= nodes")
    if fit.cores < 1 or fit.client_cores < 1:
        raise ConfigError(f"{path}: [model] cores and client_cores must be at "
                          "least 1; recalibrate")
    _check_anchors(found, replicas, path, "anchors", "residual")
    if outside is not None:
        _check_anchors(outside, replicas, path, "outside", "ms")
    _check_demands(table, point, path)
    out = NetworkModel(fit, found, nodes, replicas, dict(table.get("fit", {})), outside)
    _check_predicts(out, path)
    return out


def _check_predicts(model: NetworkModel, path: str) -> None:
    """Refuse a hand-edited model whose parameters or anchors, each within its bounds,
    together give no finite, positive latency for the model's own fitted rows (a
    branch_cv of e^20, an anchor of e^300)."""
    rows = model.anchor_rows()
    try:
        with np.errstate(all="ignore"):
            latency = model.predict(rows)[0]
    except (ArithmeticError, FloatingPointError):
        latency = np.array([np.nan])
    if not np.all(np.isfinite(latency) & (latency > 0)):
        raise ConfigError(f"{path}: its parameters and anchors give no finite "
                          "latency for its own fitted rows (a value edited out of "
                          "range?); undo the edit, or recalibrate")
