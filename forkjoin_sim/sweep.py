"""Parameter sweeps: many simulation points, each a pure function of its description.

A sweep spec is a dict (or TOML file) whose keys are the ``forkjoin-sim simulate``
option names with underscores. A list is a grid axis, a scalar is fixed; ``jobs``,
``replications`` and ``seed`` are fixed keys. An optional ``points`` list holds
explicit entries (tables in TOML), each expanded like a spec of its own on top of
the shared keys. Each point's seed is derived from the base seed and the point's
canonical description, so the numbers of a point never depend on the backend, the
number of workers or the order in which points finish.

With ``out=``, rows are appended to the results file as points finish (a valid
CSV after every row), ``resume=True`` skips the points already in it, and at the
end the file is rewritten atomically in grid order: an interrupted and resumed
sweep leaves the same file as an uninterrupted one.
"""

from __future__ import annotations

import csv
import hashlib
import io
import itertools
import json
import math
import os
import traceback
from functools import lru_cache
from importlib.metadata import entry_points
from pathlib import Path
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
#: The columns that identify a point (its ``point_key``), first in every results file.
KEY_COLUMNS = (*POINT_DEFAULTS, "jobs", "replication", "seed")
#: Parameters that are real numbers, however the spec spells them.
REAL_KEYS = ("rho", "arrival_rate", "mu", "warmup")
BACKENDS = ("processes", "serial", "dask")
OUT_FORMATS = (".csv", ".parquet")


# ---------------------------------------------------------------------------
# Specs and points
# ---------------------------------------------------------------------------

def load_spec(source) -> dict:
    """A sweep spec: ``source`` itself if it is a dict, else the TOML file it names."""
    if isinstance(source, dict):
        return source
    if not isinstance(source, (str, os.PathLike)):
        raise ConfigError(f"a sweep spec is a dict or the path of a TOML file, got "
                          f"{type(source).__name__}")
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        try:
            import tomli as tomllib
        except ModuleNotFoundError:
            raise ConfigError("reading a TOML sweep spec needs Python >= 3.11 or the "
                              "tomli package (pip install tomli)") from None
    path = Path(source)
    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        raise ConfigError(f"sweep spec {path} does not exist; give the path of a TOML "
                          "file such as sweep.toml") from None
    except IsADirectoryError:
        raise ConfigError(f"sweep spec {path} is a directory; give a TOML file") from None
    except tomllib.TOMLDecodeError as exc:
        # tomllib's message names the line and column: "... (at line 3, column 7)".
        raise ConfigError(f"sweep spec {path} is not valid TOML: {exc}") from None


def _plain(value):
    """numpy scalars as Python ones, so a point's key and seed do not depend on them."""
    return value.item() if isinstance(value, np.generic) else value


def _axis(value) -> list:
    if isinstance(value, np.ndarray):
        value = value.tolist()
    return [_plain(v) for v in value] if isinstance(value, (list, tuple)) else [_plain(value)]


def _check_keys(keys, where: str) -> None:
    unknown = set(keys) - set(POINT_DEFAULTS) - set(FIXED_KEYS)
    if unknown:
        raise ConfigError(f"unknown sweep key(s) {', '.join(sorted(unknown))}{where}; "
                          f"valid keys: {', '.join([*POINT_DEFAULTS, *FIXED_KEYS])} "
                          "(and 'points', a list of tables)")


def _check_run_point(params: dict) -> None:
    """Raise ConfigError for an engine choice the simulator would refuse."""
    from .engines import ENGINES

    if params["engine"] not in ENGINES:
        raise ConfigError(f"engine {params['engine']!r} is unknown; use one of "
                          f"{', '.join(ENGINES)}")
    if params["purging"] and params["engine"] != "simpy":
        raise ConfigError("purging is modelled by the SimPy engine only; "
                          "use engine = 'simpy'")


def _grid(spec: dict, run: dict, notes: list[str]) -> list[dict]:
    """The valid points of one grid (no ``points`` key), with notes for the rest."""
    for need in ("nodes", "replicas", "quorum"):
        if need not in spec:
            raise ConfigError(f"sweep spec needs {need!r} (a number or a list)")
    if ("rho" in spec) == ("arrival_rate" in spec):
        raise ConfigError("sweep spec needs exactly one of 'rho' and 'arrival_rate'")
    names = list(POINT_DEFAULTS)
    axes = [_axis(spec.get(name, POINT_DEFAULTS[name])) for name in names]
    points = []
    for values in itertools.product(*axes):
        params = dict(zip(names, values))
        for name in REAL_KEYS:
            # rho = 1 and rho = 1.0 are one point, with one key and one seed.
            if isinstance(params[name], int) and not isinstance(params[name], bool):
                params[name] = float(params[name])
        try:
            build_model(params)
            _check_run_point(params)
        except ConfigError as exc:
            shown = {k: v for k, v in params.items() if v is not None and k in spec}
            notes.append(f"skipped {shown}: {exc}")
            continue
        for replication in range(run["replications"]):
            points.append({**params, "jobs": run["jobs"], "replication": replication,
                           "seed": run["seed"]})
    return points


def expand(spec: dict) -> tuple[list[dict], list[str]]:
    """The points of a sweep spec, and a note for each combination that is skipped.

    Returns ``(points, notes)``. A point is a dict of every parameter in
    ``POINT_DEFAULTS`` plus ``jobs``, ``replication`` and ``seed``; invalid
    combinations (k > r, unstable load ...) are skipped with a note, not fatal.
    With a ``points`` list, each entry is a grid of its own over the shared keys
    (an entry's keys win), in the order listed; a point listed twice runs once.
    """
    spec = load_spec(spec)
    entries = spec.get("points")
    shared = {k: v for k, v in spec.items() if k != "points"}
    _check_keys(shared, "")
    run = {key: spec.get(key, default) for key, default in RUN_DEFAULTS.items()}
    for key, value in run.items():
        value = _plain(value)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ConfigError(f"sweep key {key!r} must be one whole number >= 0, got "
                              f"{value!r}")
        run[key] = value
    if entries is None:
        grids = [shared]
    else:
        if not isinstance(entries, (list, tuple)) or not entries or not all(
                isinstance(e, dict) for e in entries):
            raise ConfigError("sweep key 'points' must be a non-empty list of tables "
                              "(dicts), e.g. [[points]] nodes = 6 ... in TOML")
        grids = []
        for i, entry in enumerate(entries):
            _check_keys(entry, f" in points[{i}]")
            fixed = set(entry) & set(FIXED_KEYS)
            if fixed:
                raise ConfigError(f"points[{i}] sets {', '.join(sorted(fixed))}; jobs, "
                                  "replications and seed apply to the whole sweep: "
                                  "set them at the top level")
            grid = {**shared, **entry}
            if "rho" in entry or "arrival_rate" in entry:
                grid.pop("arrival_rate" if "rho" in entry else "rho", None)
            grids.append(grid)
    points, notes, seen = [], [], set()
    for grid in grids:
        for point in _grid(grid, run, notes):
            key = point_key(point)
            if key in seen:
                notes.append(f"point {key} is listed twice; it runs once")
                continue
            seen.add(key)
            points.append(point)
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
    if isinstance(mu, bool) or not isinstance(mu, (int, float)) or not mu > 0:
        raise ConfigError(f"mu={mu!r} must be a positive number")
    service = parse_service(params.get("service", "exp"), mean=1.0 / mu)
    # No int() here: the model itself refuses 3.5 nodes rather than truncating them.
    return ForkJoinModel(params["nodes"], params["replicas"], params["quorum"],
                         load=params.get("rho"), arrival_rate=params.get("arrival_rate"),
                         service=service, placement=params.get("placement", "random"),
                         purging=params.get("purging", False))


# ---------------------------------------------------------------------------
# Running points
# ---------------------------------------------------------------------------

@lru_cache(maxsize=None)
def _loaded_annotators() -> tuple:
    return tuple(ep.load() for ep in entry_points(group="forkjoin_sim.annotators"))


def annotators() -> list:
    """Functions ``(point, row) -> dict`` adding analytic columns.

    Registered in the ``forkjoin_sim.annotators`` entry-point group; loaded once per
    process.
    """
    return list(_loaded_annotators())


def _error_text(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    if not isinstance(exc, ValueError):
        text += " | " + traceback.format_exc(limit=3).replace("\n", " ")
    return text


def _error_row(point: dict, exc: BaseException) -> dict:
    return {**point, "status": "error", "message": _error_text(exc)}


def run_point(point: dict, annotate: bool = True) -> dict:
    """Simulate one point; a row of statistics (and analytic columns where they apply).

    The row holds the point's parameters, ``status`` ("ok" or "error"), ``message``
    (what failed, "" when ok; not ``error``, which the analytic columns use for
    the relative error of Theorem 3), the statistics of ``simulate`` and the annotators'
    columns. A failing point returns ``status="error"`` and the message, so a
    sweep goes on; if only the analytic columns fail, the statistics are kept.
    """
    from .simulation import simulate

    row = {**point, "status": "ok", "message": ""}
    try:
        model = build_model(point)
        result = simulate(model, jobs=point["jobs"], seed=point_seed(point),
                          engine=point["engine"], warmup=point["warmup"],
                          sample_every=point["sample_every"])
    except Exception as exc:  # recorded, not fatal: one bad point must not stop a sweep
        return _error_row(point, exc)
    stats = result.to_dict()
    for key in ("nodes", "replicas", "quorum", "rho", "seed", "jobs", "engine"):
        stats.pop(key, None)
    row.update(stats)
    if annotate:
        try:
            for annotator in annotators():
                row.update(annotator(point, row))
        except Exception as exc:
            row["status"] = "error"
            row["message"] = "analytic columns failed: " + _error_text(exc)
    return row


def _run_serial(points, annotate) -> Iterator[dict]:
    for point in points:
        yield run_point(point, annotate)


def _ignore_interrupts() -> None:
    # Ctrl-C goes to the whole process group; the parent alone decides what stops.
    import signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _run_processes(points, annotate, workers) -> Iterator[dict]:
    from concurrent.futures import ProcessPoolExecutor, as_completed

    pool = ProcessPoolExecutor(max_workers=workers, initializer=_ignore_interrupts)
    finished = False
    try:
        futures = {pool.submit(run_point, point, annotate): point for point in points}
        for future in as_completed(futures):
            try:
                yield future.result()
            except Exception as exc:  # a dead worker process, not a failing point
                yield _error_row(futures[future], exc)
        finished = True
    finally:
        pool.shutdown(wait=finished, cancel_futures=True)


def _run_dask(points, annotate, workers, address) -> Iterator[dict]:
    try:
        from distributed import Client, LocalCluster, as_completed
    except ModuleNotFoundError:
        raise ConfigError("backend 'dask' needs dask.distributed; "
                          "pip install 'dask[distributed]'") from None
    cluster = None
    if hasattr(address, "submit"):
        client, own_client = address, False
    elif address in (None, "local"):
        cluster = LocalCluster(n_workers=workers or default_workers(),
                               threads_per_worker=1, dashboard_address=None)
        client, own_client = Client(cluster), True
    else:
        client, own_client = Client(address), True
    futures = {}
    try:
        for point in points:
            text = point_key(point) + f"annotate={annotate}"
            key = "run_point-" + hashlib.sha256(text.encode()).hexdigest()
            futures[client.submit(run_point, point, annotate, key=key, pure=False)] = point
        for future in as_completed(futures):
            try:
                yield future.result()
            except Exception as exc:  # a lost worker, not a failing point
                yield _error_row(futures[future], exc)
    finally:
        client.cancel(list(futures))
        if own_client:
            client.close()
        if cluster is not None:
            cluster.close()


def default_workers() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _check_backend(backend, workers, address) -> None:
    if backend not in BACKENDS:
        raise ConfigError(f"backend {backend!r} is unknown; use one of "
                          f"{', '.join(BACKENDS)}")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int)
                                or workers < 1):
        raise ConfigError(f"workers={workers!r} must be a whole number >= 1")
    if address is not None and backend != "dask":
        raise ConfigError("a scheduler address is for backend='dask'; "
                          "drop it or use backend='dask'")
    if backend == "dask" and workers is not None and address not in (None, "local"):
        raise ConfigError("workers sets the size of a local Dask cluster; a remote "
                          "scheduler's cluster has the workers it has: drop workers")


def run_points(points: list[dict], backend: str = "processes", workers: int | None = None,
               annotate: bool = True, address=None) -> Iterable[dict]:
    """Rows of ``points`` in completion order, on the chosen backend.

    backend : "processes" (a local process pool of ``workers``, default all CPUs),
        "serial" (this process) or "dask" (``address``: None or "local" for a
        ``LocalCluster`` of ``workers`` single-threaded workers, a scheduler address,
        or a ``distributed.Client``).
    """
    _check_backend(backend, workers, address)
    if backend == "serial" or (backend == "processes" and workers == 1):
        return _run_serial(points, annotate)
    if backend == "processes":
        return _run_processes(points, annotate, workers or default_workers())
    return _run_dask(points, annotate, workers, address)


# ---------------------------------------------------------------------------
# The results file
# ---------------------------------------------------------------------------

def _cell(value) -> str:
    """The CSV text of a value; ``repr`` of floats so that they read back exactly."""
    value = _plain(value)
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value, default=str)
    # One physical line per row: a truncated last line is then easy to recognise.
    return str(value).replace("\r", " ").replace("\n", " ")


def _identity_value(text: str):
    """A cell's value for matching a file row to a point (text from CSV or parquet)."""
    if text in ("", "nan", "None"):
        return None
    if text in ("True", "False"):
        return text == "True"
    try:
        return float(text)
    except ValueError:
        return text


def _identity(cells: dict) -> tuple:
    return tuple(_identity_value(cells.get(c, "")) for c in KEY_COLUMNS)


def _point_identity(point: dict) -> tuple:
    return _identity({k: _cell(v) for k, v in point.items()})


def _csv_line(values: list[str]) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerow(values)
    return buffer.getvalue()


def _journal_path(out: Path) -> Path:
    """Where rows are appended as they finish: the CSV itself, or a CSV beside parquet."""
    return out if out.suffix == ".csv" else out.with_name(out.name + ".partial.csv")


def _read_csv_rows(path: Path) -> list[dict]:
    """Rows of a results CSV as dicts of cell text; a truncated last line is dropped."""
    text = path.read_text(encoding="utf-8")
    if not text:
        return []
    if not text.endswith("\n"):
        text = text[: text.rfind("\n") + 1]  # interrupted mid-row
    lines = list(csv.reader(io.StringIO(text)))
    if not lines:
        return []
    header, body = lines[0], lines[1:]
    missing = [c for c in KEY_COLUMNS if c not in header]
    if missing:
        raise ConfigError(f"{path} is not a sweep results file (no column(s) "
                          f"{', '.join(missing)}); use another --out or drop --resume")
    rows = []
    for number, values in enumerate(body, start=2):
        if len(values) != len(header):
            raise ConfigError(f"{path} line {number} has {len(values)} fields, the header "
                              f"{len(header)}; the file was edited or is not a sweep's: "
                              "use another --out or drop --resume")
        rows.append({c: v for c, v in zip(header, values) if v != ""})
    return rows


def _read_parquet_rows(path: Path) -> list[dict]:
    import pandas as pd

    frame = pd.read_parquet(path)
    return [{c: _cell(v) for c, v in row.items()
             if not (v is None or (isinstance(v, float) and math.isnan(v)))}
            for row in frame.to_dict(orient="records")]


class _Journal:
    """The results file while a sweep runs: a valid CSV after every appended row.

    Rows are dicts of cell text. A row with a column the header lacks rewrites the
    file atomically with the wider header (rare: the first row of each kind).
    """

    def __init__(self, path: Path, rows: list[dict]):
        self.path = path
        self.rows = list(rows)
        self.header = [*KEY_COLUMNS, "status", "message"]
        self._handle = None
        for row in self.rows:
            self._widen(row)
        self._rewrite()

    def _widen(self, row: dict) -> bool:
        new = [c for c in row if c not in self.header]
        self.header += new
        return bool(new)

    def _rewrite(self) -> None:
        from .io import atomic_write

        self.close()
        with atomic_write(self.path, encoding="utf-8", newline="") as handle:
            if self.header:
                handle.write(_csv_line(self.header))
            for row in self.rows:
                handle.write(_csv_line([row.get(c, "") for c in self.header]))
        self._handle = open(self.path, "a", encoding="utf-8", newline="")

    def add(self, row: dict) -> None:
        self.rows.append(row)
        if self._widen(row):
            self._rewrite()
        else:
            # One write per row, then flush: an interrupt leaves whole rows only.
            self._handle.write(_csv_line([row.get(c, "") for c in self.header]))
            self._handle.flush()

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


def _columns(rows: list[dict]) -> list[str]:
    """Key columns, status, message, then the rest by first appearance in ``rows``."""
    columns = {c: None for c in (*KEY_COLUMNS, "status", "message")}
    for row in rows:
        columns.update(dict.fromkeys(c for c in row if c not in columns))
    return list(columns)


def _frame(rows: list[dict]):
    """The DataFrame a results CSV of ``rows`` reads back as."""
    import pandas as pd

    columns = _columns(rows)
    text = _csv_line(columns) + "".join(_csv_line([r.get(c, "") for c in columns])
                                         for r in rows)
    return pd.read_csv(io.StringIO(text))


def _write_final(out: Path, rows: list[dict]) -> None:
    from .io import atomic_save, atomic_write

    if out.suffix == ".csv":
        columns = _columns(rows)
        with atomic_write(out, encoding="utf-8", newline="") as handle:
            handle.write(_csv_line(columns))
            for row in rows:
                handle.write(_csv_line([row.get(c, "") for c in columns]))
    else:
        atomic_save(out, lambda tmp: _frame(rows).to_parquet(tmp, index=False))


def _check_out(out) -> Path:
    out = Path(out)
    if out.suffix not in OUT_FORMATS:
        raise ConfigError(f"results file {out} must end in .csv or .parquet")
    if out.suffix == ".parquet":
        import importlib.util
        if importlib.util.find_spec("pyarrow") is None:
            raise ConfigError(f"writing {out} needs pyarrow (pip install pyarrow); "
                              "or write a .csv")
    return out


def _done_rows(out: Path, order: dict) -> dict:
    """Rows of an earlier run of this sweep that finished, by point identity."""
    journal = _journal_path(out)
    rows = []
    if out.suffix == ".parquet" and out.exists():
        rows += _read_parquet_rows(out)
    if journal.exists():
        rows += _read_csv_rows(journal)
    done = {}
    foreign = 0
    for row in rows:
        identity = _identity(row)
        if identity not in order:
            foreign += 1
        elif row.get("status") == "ok":  # failed points run again
            done.setdefault(identity, row)
    if foreign:
        raise ConfigError(f"{foreign} row(s) of {out} are not points of this sweep "
                          "(another spec, seed or jobs?); resume with the spec that "
                          "wrote it, or write to another file")
    return done


# ---------------------------------------------------------------------------
# The sweep
# ---------------------------------------------------------------------------

def sweep(spec, backend: str = "processes", workers: int | None = None, out=None,
          annotate: bool = True, progress: bool = True, resume: bool = False,
          address=None):
    """Run every point of ``spec``; a pandas DataFrame, one row per point and replication.

    Parameters
    ----------
    spec : dict or path of a TOML file
        See :func:`expand`.
    backend : "processes", "serial" or "dask"
        See :func:`run_points`; ``address`` selects the Dask cluster.
    workers : int, optional
        Local processes (default: all CPUs) or local Dask workers.
    out : path ending in .csv or .parquet, optional
        Rows are appended as points finish (for parquet, to ``<out>.partial.csv``,
        turned into parquet at the end); the finished file is in grid order.
    annotate : bool
        Add the analytic columns of the ``forkjoin_sim.annotators`` plugins.
    progress : bool
        A progress bar with ETA on stderr.
    resume : bool
        Skip the points that ``out`` already holds with status "ok".

    Rows are sorted by the points' order in the grid, whatever order they finished
    in. The frame reads like the results file (it is that CSV, parsed): a failed
    point has ``status == "error"`` and what failed in ``message``. Notes on skipped
    combinations are in ``frame.attrs["notes"]``.
    """
    from contextlib import closing

    from tqdm.auto import tqdm

    _check_backend(backend, workers, address)
    points, notes = expand(spec)
    if not points:
        raise ConfigError("no valid point in the sweep spec: "
                          + ("; ".join(notes[:3]) or "it is empty"))
    out = None if out is None else _check_out(out)
    if resume and out is None:
        raise ConfigError("resume needs the results file: give out=...")
    order = {_point_identity(p): i for i, p in enumerate(points)}
    done = _done_rows(out, order) if resume else {}
    if out is not None and not resume and out.suffix == ".parquet":
        out.unlink(missing_ok=True)  # replaced, as a CSV is, not mixed into a resume
    todo = [p for p in points if _point_identity(p) not in done]
    journal = None if out is None else _Journal(_journal_path(out), list(done.values()))
    rows = list(done.values())
    try:
        with tqdm(total=len(points), initial=len(done), disable=not progress,
                  unit="point", desc="sweep", dynamic_ncols=True) as bar, \
                closing(run_points(todo, backend, workers, annotate, address)) as results:
            for row in results:
                cells = {k: text for k, text in ((k, _cell(v)) for k, v in row.items())
                         if text != ""}
                rows.append(cells)
                if journal is not None:
                    journal.add(cells)
                bar.update(1)
    finally:
        if journal is not None:
            journal.close()
    rows.sort(key=lambda cells: order[_identity(cells)])
    if out is not None:
        _write_final(out, rows)
        if _journal_path(out) != out:
            _journal_path(out).unlink(missing_ok=True)
    frame = _frame(rows)
    frame.attrs["notes"] = notes
    return frame
