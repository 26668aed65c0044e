"""A Cassandra model fitted to measurements: its parameters, their covariance, its file.

The parametrisation (every time in milliseconds):

==================  ==============================================================
``data_read_ms``    mean service of a data read at a replica (exponential)
``digest_ratio``    mean digest read / mean data read (a digest reads the row but
                    returns a hash)
``write_ms``        mean service of a mutation at a replica (exponential)
``overhead_ms``     time outside the replica queues per operation: coordinator work
                    plus the client-coordinator hops, constant (part of the latency)
``think_ms``        closed loop: time a client thread spends between a reply and its
                    next request, exponential (client work *outside* the measured
                    latency; 0 for a YCSB thread that never pauses)
``threads``         effective parallel servers per stage (read stage, mutation
                    stage) of every node, a small whole number chosen by the fit
==================  ==============================================================

A model file is TOML: ``[cluster]`` holds what `CassandraCluster` needs, ``[fit]``
how it was fitted (the free parameters and their covariance), ``[intervals]`` a 95%
interval per fitted parameter. `read_model` refuses parameters outside `RANGES` and a
covariance that is not a finite symmetric positive semidefinite matrix.
"""

from __future__ import annotations

import hashlib
import math
import warnings
from dataclasses import dataclass, field, replace

import numpy as np
from scipy import stats

from forkjoin_sim.cassandra.cluster import CassandraCluster
from forkjoin_sim.errors import ConfigError
from forkjoin_sim.files.io import atomic_write, read_toml
from forkjoin_sim.nodes import Stages
from forkjoin_sim.laws.service import Deterministic

#: The fitted parameters, in the order of every vector and covariance matrix.
PARAMETERS = ("data_read_ms", "digest_ratio", "write_ms", "overhead_ms", "think_ms")
FORMAT = "forkjoin-sim calibrated Cassandra model 1"
#: What a model file holds: its tables, the keys of each, and the structure the
#: fit assumes (written by `write_model`; anything else in a file is refused).
MODEL_TABLES = ("cluster", "fit", "intervals")
FIXED_STRUCTURE = {"node": "stages", "service_law": "exp",
                   "overhead_law": "deterministic", "think_law": "exp"}
CLUSTER_KEYS = ("format", "nodes", "replicas", "threads", *FIXED_STRUCTURE,
                *PARAMETERS, "digest_read_ms")
FIT_KEYS = ("free", "covariance", "rows", "seed", "threads_tried", "threads_cost",
            "fixed", "residual_rms", "degrees_of_freedom", "evaluations", "warnings",
            "measurements", "measurements_sha256", "fitted_operations",
            "fitted_threads_max", "fitted_rate_max")
#: What `read_model` accepts per parameter: (smallest positive value, largest value,
#: whether 0 is allowed). Service times from 1 ns to about 3 hours (1e7 ms): beyond
#: any real operation at both ends (the fit itself stays above 1e-3 ms), yet far from
#: the float range, so rates, job counts and sums stay finite. A digest read costs
#: 1/1000 to 1000 times a data read (the fit searches 0.05 to 3). Overhead and think
#: time may be 0 (none) or, as the fit bounds them by 0 only, any value near it down
#: to 1e-100 ms (the simulator's rates overflow below 1e-200).
RANGES = {"data_read_ms": (1e-6, 1e7, False), "digest_ratio": (1e-3, 1e3, False),
          "write_ms": (1e-6, 1e7, False), "overhead_ms": (1e-100, 1e7, True),
          "think_ms": (1e-100, 1e7, True)}
#: Relative tolerance of the covariance checks: the fit's own matrix is symmetric and
#: positive semidefinite to rounding (about 1e-16); anything beyond 1e-6 is an edit.
COVARIANCE_TOLERANCE = 1e-6
# An interval wider than this many times its value is reported as unbounded.
UNBOUNDED = 1e3


@dataclass(frozen=True)
class CalibratedModel:
    """A Cassandra cluster described by fitted parameters (see the module table)."""

    nodes: int
    replicas: int
    threads: int
    data_read_ms: float
    digest_ratio: float
    write_ms: float
    overhead_ms: float
    think_ms: float
    free: tuple[str, ...] = PARAMETERS
    covariance: tuple[tuple[float, ...], ...] = ()
    fit: dict = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        for name in ("nodes", "replicas", "threads"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) \
                    or value < 1:
                raise ConfigError(f"{name}={value!r} must be a whole number >= 1")
        if self.replicas > self.nodes:
            raise ConfigError(f"replicas={self.replicas} exceeds nodes={self.nodes}; "
                              "use 1 <= replicas <= nodes")
        for name in PARAMETERS:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float, np.number)) \
                    or not (math.isfinite(value) and value >= 0):
                raise ConfigError(f"{name}={value!r} must be a finite number >= 0 "
                                  "(milliseconds, or a ratio for digest_ratio)")

    @property
    def vector(self) -> np.ndarray:
        return np.array([getattr(self, name) for name in PARAMETERS])

    def with_vector(self, values) -> "CalibratedModel":
        return replace(self, **dict(zip(PARAMETERS, map(float, values))))

    @property
    def digest_read_ms(self) -> float:
        return self.data_read_ms * self.digest_ratio

    def cluster(self, row) -> CassandraCluster:
        """The `CassandraCluster` of one measured configuration (a `Measurement`)."""
        open_rate = None if row.closed else row.rate / 1000.0
        return CassandraCluster(
            self.nodes, self.replicas, row.reads, row.consistency,
            row.consistency,
            data_read=stats.expon(scale=self.data_read_ms),
            digest_read=stats.expon(scale=self.digest_read_ms),
            write=stats.expon(scale=self.write_ms),
            coordinator=Deterministic(self.overhead_ms) if self.overhead_ms > 0 else None,
            node=Stages(self.threads, self.threads), rate=open_rate,
            clients=row.threads, think=self.think_ms if row.closed else 0.0)

    def intervals(self, confidence: float = 0.95) -> dict[str, tuple[float, float]]:
        """A ``confidence`` interval per free parameter from the covariance (Student
        t with the fit's degrees of freedom, normal without any; clipped at 0)."""
        if not self.covariance:
            return {}
        dof = int(self.fit.get("degrees_of_freedom", 0))
        z = (stats.t.ppf(0.5 + confidence / 2, dof) if dof > 0
             else stats.norm.ppf(0.5 + confidence / 2))
        cov = np.asarray(self.covariance)
        out = {}
        for i, name in enumerate(self.free):
            value, se = getattr(self, name), math.sqrt(max(cov[i, i], 0.0))
            if z * se > UNBOUNDED * max(abs(value), 1e-9):
                out[name] = (0.0, math.inf)  # the rows do not constrain it
            else:
                out[name] = (max(value - z * se, 0.0), value + z * se)
        return out


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        value = float(value)
        if not math.isfinite(value):
            return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
        return repr(value)
    if isinstance(value, str):
        escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        return f'"{escaped}"'
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} to TOML")


def toml_text(tables: dict[str, dict]) -> str:
    """Flat TOML tables (values: numbers, strings, booleans, nested arrays)."""
    lines = []
    for name, table in tables.items():
        lines.append(f"[{name}]")
        lines.extend(f"{key} = {_toml_value(value)}" for key, value in table.items())
        lines.append("")
    return "\n".join(lines)


def file_sha256(path: str) -> str:
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def write_model(model: CalibratedModel, path: str) -> None:
    """Write ``model`` to ``path`` as TOML, atomically."""
    cluster = {"format": FORMAT, "nodes": model.nodes, "replicas": model.replicas,
               "node": "stages", "threads": model.threads, "service_law": "exp",
               "overhead_law": "deterministic", "think_law": "exp"}
    cluster.update({name: getattr(model, name) for name in PARAMETERS})
    cluster["digest_read_ms"] = model.digest_read_ms
    fit = {"free": list(model.free),
           "covariance": [list(map(float, r)) for r in model.covariance]}
    fit.update(model.fit)
    intervals = {name: list(bounds) for name, bounds in model.intervals().items()}
    with atomic_write(path) as handle:
        handle.write(f"# {FORMAT}: written by forkjoin-sim cassandra calibrate\n")
        handle.write(toml_text({"cluster": cluster, "fit": fit,
                                "intervals": intervals}))


def read_model(path: str) -> CalibratedModel:
    """The `CalibratedModel` in a TOML file written by `write_model`."""
    data = read_toml(path, "model file",
                     "write one with forkjoin-sim cassandra calibrate")
    cluster, fit = data.get("cluster", {}), data.get("fit")
    if isinstance(cluster, dict) and cluster.get("format") == FORMAT and fit is None:
        raise ConfigError(f"{path} has no [fit] table (the free parameters and their "
                          "covariance, which calibrate always writes); without it the "
                          "intervals would leave out the parameters' uncertainty: "
                          "restore it or recalibrate with forkjoin-sim cassandra "
                          "calibrate")
    if not isinstance(cluster, dict) or not isinstance(fit, (dict, type(None))):
        raise ConfigError(f"{path}: [cluster] and [fit] must be tables; write the file "
                          "with forkjoin-sim cassandra calibrate")
    fit = dict(fit or {})
    if cluster.get("format") != FORMAT:
        # a TOML of calibrate's other inputs is the likely mix-up
        kind = (" (a --datacentres file: calibrate takes it with --datacentres)"
                if "datacentres" in data else
                " (a prior: calibrate takes it with --prior)" if "prior" in data else "")
        raise ConfigError(f"{path} is not a calibrated model file{kind}; make one with "
                          "forkjoin-sim cassandra calibrate --nodes N --replicas R "
                          "--measurements FIT.csv --out MODEL.toml")
    missing = [k for k in ("nodes", "replicas", "threads") + PARAMETERS
               if k not in cluster]
    if missing:
        raise ConfigError(f"{path}: [cluster] lacks {', '.join(missing)}")
    intervals = data.get("intervals", {})
    for where, keys, known in (("the file", data, MODEL_TABLES),
                               ("[cluster]", cluster, CLUSTER_KEYS),
                               ("[fit]", fit, FIT_KEYS),
                               ("[intervals]", intervals if isinstance(intervals, dict)
                                else {"(not a table)": 0}, PARAMETERS)):
        unknown = sorted(set(keys) - set(known))
        if unknown:
            raise ConfigError(f"{path}: {where} has unknown key(s) {', '.join(unknown)}; "
                              f"known: {', '.join(known)}")
    for key, value in FIXED_STRUCTURE.items():
        if cluster.get(key, value) != value:
            raise ConfigError(f"{path}: [cluster] {key} = {cluster[key]!r}; this model "
                              f"has {key} = {value!r} only (the laws it was fitted with)")
    absent = [key for key in ("free", "covariance") if key not in fit]
    if absent:
        raise ConfigError(f"{path}: [fit] lacks {' and '.join(absent)} (calibrate always "
                          "writes both); restore them or recalibrate with forkjoin-sim "
                          "cassandra calibrate")
    try:
        free = tuple(fit.pop("free", ()))
        cov = tuple(tuple(_real(v) for v in r) for r in fit.pop("covariance", ()))
    except (TypeError, ValueError):
        cov, free = None, ()
    if cov is None or any(name not in PARAMETERS for name in free) or \
            (cov and (len(cov) != len(free) or any(len(r) != len(free) for r in cov))):
        raise ConfigError(f"{path}: [fit] free/covariance are inconsistent; rewrite the "
                          "file with forkjoin-sim cassandra calibrate")
    sizes = {}
    for key in ("nodes", "replicas", "threads"):
        value = cluster[key]
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{path}: [cluster] {key} = {value!r} must be a whole number")
        sizes[key] = value
    values = {}
    for name in PARAMETERS:
        try:
            values[name] = _real(cluster[name])
        except (TypeError, ValueError):
            raise ConfigError(f"{path}: [cluster] {name} = {cluster[name]!r} must be a "
                              "number") from None
    _check_reach(fit, path)
    try:
        model = CalibratedModel(sizes["nodes"], sizes["replicas"], sizes["threads"],
                                *(values[name] for name in PARAMETERS),
                                free=free, covariance=cov, fit=fit)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    _check_ranges(model, path)
    _check_covariance(model, path)
    return model


def _check_reach(fit: dict, path: str) -> None:
    """Refuse a hand-edited record of what the fitted rows measured
    (`sizing.calibration.fitted_reach`) that predict could not compare with."""
    how = "; fix it or recalibrate with forkjoin-sim cassandra calibrate"
    operations = fit.get("fitted_operations", ["read"])
    if not isinstance(operations, list) or not operations or not all(
            o in ("read", "write") for o in operations):
        raise ConfigError(f"{path}: [fit] fitted_operations = {operations!r} must list "
                          f"read, write or both{how}")
    threads = fit.get("fitted_threads_max", 1)
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ConfigError(f"{path}: [fit] fitted_threads_max = {threads!r} must be a "
                          f"whole number of at least 1{how}")
    rate = fit.get("fitted_rate_max", 1.0)
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or \
            not math.isfinite(rate) or rate <= 0:
        raise ConfigError(f"{path}: [fit] fitted_rate_max = {rate!r} must be a positive "
                          f"number{how}")


def _check_ranges(model: CalibratedModel, path: str) -> None:
    for name, (low, high, zero) in RANGES.items():
        value = getattr(model, name)
        if (value == 0 and zero) or low <= value <= high:
            continue
        unit = "" if name == "digest_ratio" else " ms"
        allowed = f"{'0 or ' if zero else ''}between {low:g} and {high:g}{unit}"
        raise ConfigError(f"{path}: [cluster] {name} = {value!r} must be {allowed} "
                          "(times are in milliseconds); fix the value or recalibrate "
                          "with forkjoin-sim cassandra calibrate")


def _check_covariance(model: CalibratedModel, path: str) -> None:
    """Refuse a covariance that is not finite, symmetric and positive semidefinite
    (within `COVARIANCE_TOLERANCE`); warn when a model has none."""
    if not model.covariance:
        if model.free:
            warnings.warn(f"{path}: [fit] covariance is empty: the parameters' "
                          "uncertainty is unknown, so prediction intervals are "
                          "simulation noise only", UserWarning, stacklevel=3)
        return
    cov = np.asarray(model.covariance, dtype=float)
    where = f"{path}: [fit] covariance"
    how = "; rewrite the file with forkjoin-sim cassandra calibrate"
    if not np.isfinite(cov).all():
        raise ConfigError(f"{where} has a non-finite entry (nan or inf){how}")
    for name, variance in zip(model.free, np.diag(cov)):
        if variance < 0:
            raise ConfigError(f"{where}: the variance of {name} is {variance:g}; a "
                              f"variance cannot be negative{how}")
    size = float(np.abs(cov).max())
    if np.abs(cov - cov.T).max() > COVARIANCE_TOLERANCE * size:
        raise ConfigError(f"{where} is not symmetric (entry [i][j] must equal "
                          f"[j][i]){how}")
    lowest = float(np.linalg.eigvalsh((cov + cov.T) / 2).min())
    if lowest < -COVARIANCE_TOLERANCE * size:
        raise ConfigError(f"{where} is not positive semidefinite (eigenvalue "
                          f"{lowest:.3g}): it would give negative variances{how}")


def _real(value) -> float:
    """A TOML number as a float (TypeError/ValueError for anything else)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{value!r} is not a number")
    return float(value)
