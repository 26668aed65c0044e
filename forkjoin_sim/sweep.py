"""Parameter sweeps: many simulation points, each a pure function of its description.

A sweep spec is a dict (or TOML file) whose keys are the ``forkjoin-sim simulate``
option names with underscores. A list is a grid axis, a scalar is fixed; ``jobs``,
``replications`` and ``seed`` are fixed keys. Each point's seed is derived from the
base seed and the point's canonical description, so the numbers of a point never
depend on the backend, the number of workers or the order in which points finish.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import traceback
from importlib.metadata import entry_points
from typing import Any, Iterable, Iterator

import numpy as np

from .errors import ConfigError

#: Model and run parameters a point may set, with their defaults.
POINT_DEFAULTS: dict[str, Any] = {
    "nodes": None, "replicas": None, "quorum": None, "rho": None, "arrival_rate": None,
    "mu": 1.0, "service": "exp", "placement": "random", "purging": False,
    "engine": "fast", "warmup": 0.1, "sample_every": 1,
}
FIXED_KEYS = ("jobs", "replications", "seed")
RUN_DEFAULTS = {"jobs": 100_000, "replications": 1, "seed": 0}


def _axis(value) -> list:
    return list(value) if isinstance(value, (list, tuple)) else [value]


def expand(spec: dict) -> tuple[list[dict], list[str]]:
    """The points of a sweep spec, and a note for each combination that is skipped.

    Returns ``(points, notes)``. A point is a dict of every parameter in
    ``POINT_DEFAULTS`` plus ``jobs``, ``replication`` and ``seed``; invalid
    combinations (k > r, unstable load ...) are skipped with a note, not fatal.
    """
    unknown = set(spec) - set(POINT_DEFAULTS) - set(FIXED_KEYS)
    if unknown:
        raise ConfigError(f"unknown sweep key(s) {', '.join(sorted(unknown))}; valid keys: "
                          f"{', '.join(list(POINT_DEFAULTS) + list(FIXED_KEYS))}")
    run = {key: spec.get(key, default) for key, default in RUN_DEFAULTS.items()}
    for key, value in run.items():
        if isinstance(value, (list, tuple)) or not isinstance(value, int) or value < 0:
            raise ConfigError(f"sweep key {key!r} must be one whole number, got {value!r}")
    for need in ("nodes", "replicas", "quorum"):
        if need not in spec:
            raise ConfigError(f"sweep spec needs {need!r} (a number or a list)")
    if ("rho" in spec) == ("arrival_rate" in spec):
        raise ConfigError("sweep spec needs exactly one of 'rho' and 'arrival_rate'")

    names = list(POINT_DEFAULTS)
    axes = [_axis(spec.get(name, POINT_DEFAULTS[name])) for name in names]
    points, notes = [], []
    for values in itertools.product(*axes):
        params = dict(zip(names, values))
        try:
            build_model(params)
        except ConfigError as exc:
            shown = {k: v for k, v in params.items() if v is not None and k in spec}
            notes.append(f"skipped {shown}: {exc}")
            continue
        for replication in range(run["replications"]):
            points.append({**params, "jobs": run["jobs"], "replication": replication,
                           "seed": run["seed"]})
    return points, notes


def point_key(point: dict) -> str:
    """Canonical text of a point (sorted JSON): its identity for seeds and resume."""
    return json.dumps({k: point[k] for k in sorted(point)}, sort_keys=True,
                      separators=(",", ":"), default=str)


def point_seed(point: dict) -> np.random.SeedSequence:
    """The point's SeedSequence: base seed plus a hash of its canonical description."""
    digest = hashlib.sha256(point_key(point).encode()).digest()
    words = np.frombuffer(digest, dtype=np.uint32)
    return np.random.SeedSequence([int(point["seed"]), *map(int, words)])


def build_model(params: dict):
    """The :class:`ForkJoinModel` of a point (raises ConfigError if invalid)."""
    from .model import ForkJoinModel
    from .service import parse_service

    mu = params.get("mu", 1.0)
    if not isinstance(mu, (int, float)) or mu <= 0:
        raise ConfigError(f"mu={mu!r} must be a positive number")
    service = parse_service(str(params.get("service", "exp")), mean=1.0 / mu)
    return ForkJoinModel(int(params["nodes"]), int(params["replicas"]),
                         int(params["quorum"]),
                         load=params.get("rho"), arrival_rate=params.get("arrival_rate"),
                         service=service, placement=params.get("placement", "random"),
                         purging=bool(params.get("purging", False)))


def annotators() -> list:
    """Functions ``point -> dict`` adding analytic columns (``forkjoin_sim.annotators``)."""
    return [ep.load() for ep in entry_points(group="forkjoin_sim.annotators")]


def run_point(point: dict, annotate: bool = True) -> dict:
    """Simulate one point; a row of statistics (and analytic columns where they apply).

    A failing point returns a row with ``status="error"`` and the message, so a sweep
    goes on.
    """
    from .simulation import simulate

    row = dict(point)
    try:
        model = build_model(point)
        result = simulate(model, jobs=point["jobs"], seed=point_seed(point),
                          engine=point["engine"], warmup=point["warmup"],
                          sample_every=point["sample_every"])
        stats = result.to_dict()
        for key in ("nodes", "replicas", "quorum", "rho", "seed", "jobs", "engine"):
            stats.pop(key, None)
        row.update(stats)
        if annotate:
            for annotator in annotators():
                row.update(annotator(point, row))
        row["status"], row["error"] = "ok", ""
    except Exception as exc:  # recorded, not fatal: one bad point must not stop a sweep
        row["status"] = "error"
        row["error"] = f"{type(exc).__name__}: {exc}"
        if not isinstance(exc, ValueError):
            row["error"] += " | " + traceback.format_exc(limit=3).replace("\n", " ")
    return row


def _run_serial(points, annotate) -> Iterator[dict]:
    for point in points:
        yield run_point(point, annotate)


def _run_processes(points, annotate, workers) -> Iterator[dict]:
    from concurrent.futures import ProcessPoolExecutor, as_completed

    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(run_point, point, annotate) for point in points]
        try:
            for future in as_completed(futures):
                yield future.result()
        finally:
            for future in futures:
                future.cancel()


def run_points(points: list[dict], backend: str = "processes", workers: int | None = None,
               annotate: bool = True) -> Iterable[dict]:
    """Rows of ``points`` in completion order, on the chosen backend."""
    if backend == "serial" or (backend == "processes" and workers == 1):
        return _run_serial(points, annotate)
    if backend == "processes":
        return _run_processes(points, annotate, workers)
    raise ConfigError(f"backend {backend!r} is unknown; use 'processes' or 'serial'")


def sweep(spec: dict, backend: str = "processes", workers: int | None = None,
          out=None, annotate: bool = True, progress: bool = True):
    """Run every point of ``spec``; a pandas DataFrame, one row per point and replication.

    Rows are sorted by the points' order in the grid, whatever order they finished in.
    """
    import pandas as pd
    from tqdm.auto import tqdm

    points, notes = expand(spec)
    order = {point_key(p): i for i, p in enumerate(points)}
    rows = []
    for row in tqdm(run_points(points, backend, workers, annotate), total=len(points),
                    disable=not progress, unit="point", desc="sweep"):
        rows.append(row)
    frame = pd.DataFrame(rows)
    if len(frame):
        frame["_order"] = [order[point_key({k: r[k] for k in points[0]})] for r in rows]
        frame = frame.sort_values("_order").drop(columns="_order").reset_index(drop=True)
    frame.attrs["notes"] = notes
    if out is not None:
        from .io import atomic_write
        with atomic_write(out) as handle:
            frame.to_csv(handle, index=False)
    return frame
