"""Parameter sweeps: run many simulation points on local processes or Dask.

``sweep(spec)`` expands a spec into points (``sweep_points``), runs them on a
backend, appends each finished row to the results journal (``results_file``),
replaces the results file when all have run and returns a pandas DataFrame in grid
order. A point's numbers depend only on its
description and the base seed, never on the backend or the order of completion.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import traceback
import warnings
from typing import Iterable, Iterator

from forkjoin_sim.errors import ConfigError
from forkjoin_sim.sweep.results_file import (
    SETTINGS_COLUMN, Journal, cell_text, check_results_path, done_rows, journal_path,
    journaled, point_identity, resumed_spec, row_identity, rows_frame, write_final)
from forkjoin_sim.sweep.points import (KEY_COLUMNS, REPLAY_COLUMNS, build_model, expand,
                                      load_spec, point_key, point_seed, replay_command,
                                      run_seed)

__all__ = ["BACKENDS", "build_model", "check_run_settings", "expand", "init_worker",
           "load_spec", "point_engine", "point_key", "point_seed", "process_pool",
           "replay_command", "resumed_spec", "run_point", "run_points", "run_seed",
           "sweep"]

BACKENDS = ("processes", "serial", "dask")


# ---------------------------------------------------------------------------
# Running points
# ---------------------------------------------------------------------------

def annotators(annotate) -> tuple:
    """The functions ``(point, row) -> dict`` that add columns to every row.

    ``annotate`` is a sequence of such functions (module-level, so that worker
    processes can import them), or False/None for none. The library knows no
    annotator of its own: the analytic columns (``sizing.sweep_columns.annotate``)
    come from a layer above it, which passes them in.
    """
    if annotate is None or annotate is False:
        return ()
    if annotate is True:
        raise ConfigError("annotate=True named the analytic columns, which the library "
                          "does not import; pass annotate=(sizing.sweep_columns.annotate,)")
    if callable(annotate):
        annotate = (annotate,)
    return tuple(annotate)


def _error_text(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    if not isinstance(exc, ValueError):
        text += " | " + traceback.format_exc(limit=3).replace("\n", " ")
    return text


def _point_row(point: dict) -> dict:
    """The point's columns, then those that replay it alone (`REPLAY_COLUMNS`), None
    until they are made."""
    return {**point, **dict.fromkeys(REPLAY_COLUMNS)}


def _error_row(point: dict, exc: BaseException) -> dict:
    """The row of a point whose worker was lost: its replay columns as far as they
    can be made, None where they cannot (a second failure must not stop the sweep)."""
    row = _point_row(point)
    with contextlib.suppress(Exception):
        row["run_seed"] = run_seed(point)
        row["replay"] = replay_command(point, seed=row["run_seed"])
    return {**row, "status": "error", "message": _error_text(exc)}


def point_engine(point: dict) -> tuple[str, str]:
    """The engine ``point`` runs on, and why ("" when the point names its engine).

    Engine "auto" is `forkjoin_sim.simulation.choose_engine`'s choice, the engine
    ``simulate`` runs without one, for the point's model, jobs, seed and warm-up.
    """
    if point["engine"] != "auto":
        return point["engine"], ""
    from forkjoin_sim.simulation import choose_engine

    return choose_engine(build_model(point), point["jobs"], run_seed(point),
                         point["warmup"])


def _sweep_reason(engine: str, reason: str) -> str:
    """``simulate``'s reason for its engine, as it applies in a sweep."""
    if engine != "fused" or not reason:
        return reason
    from forkjoin_sim.simulation import AUTO_REPLICATIONS

    # simulate spreads the kernel's replications over every core; a sweep keeps each
    # point on one worker (points run side by side), which gives the same numbers
    return (reason.split("; runs on every core")[0]
            + f"; its {AUTO_REPLICATIONS} replications run on one worker, points side "
              "by side (engine = \"fast\" for exact percentiles)")


def run_point(point: dict, annotate=()) -> dict:
    """Simulate one point; a row of statistics (and analytic columns where they apply).

    The row holds the point's parameters, ``run_seed`` and ``replay`` (the seed and
    the ``forkjoin-sim simulate`` command that give its numbers alone), ``status``
    ("ok" or "error"), ``message``
    (what failed, "" when ok; not ``error``, which the analytic columns use for
    the relative error of Theorem 3), ``engine_ran`` and ``engine_reason`` (the
    engine that ran, and why when the point left the choice to "auto"), the
    statistics of ``simulate``, ``doubts`` (its ``warnings`` but a note that the
    interval is merely wide: `SimulationResult.doubts`) and the annotators'
    columns. A failing point (its seed, model, replay command or run) returns
    ``status="error"`` and the message, so a sweep goes on, with ``run_seed`` if it
    was drawn and ``replay`` if it was made (None otherwise); a point whose model
    fails keeps the command that reproduces the failure alone, or "" for an
    arrival rate (its command is the load that makes the rate, which needs the
    model). If only the analytic columns fail, the statistics are kept. The point's
    model is built at most once.
    """
    from forkjoin_sim.simulation import simulate

    row = {**_point_row(point), "status": "ok", "message": ""}
    try:
        row["run_seed"] = run_seed(point)
        try:
            model = build_model(point)
        except Exception:
            # its replay command reproduces the failure alone; an arrival rate's
            # needs the model, and building it again would only fail again
            if point.get("arrival_rate") is not None:
                row["replay"] = ""
            else:
                with contextlib.suppress(Exception):
                    row["replay"] = replay_command(point, seed=row["run_seed"])
            raise
        row["replay"] = replay_command(point, model=model, seed=row["run_seed"])
        # One thread: the fused kernel's numbers depend on its replications, never
        # on its threads, and the sweep's workers already fill the cores.
        result = simulate(model, jobs=point["jobs"], seed=row["run_seed"],
                          engine=point["engine"], warmup=point["warmup"],
                          sample_every=point["sample_every"], progress=False,
                          workers=1)
    except Exception as exc:  # recorded, not fatal: one bad point must not stop a sweep
        return {**row, "status": "error", "message": _error_text(exc)}
    stats = result.to_dict()
    for key in (*KEY_COLUMNS, "run_seed"):
        # the point's own spelling identifies its row (think None, speeds as given),
        # not the model's normalised value (think 0.0, speeds as a list)
        stats.pop(key, None)
    row["engine_ran"] = result.engine
    row["engine_reason"] = _sweep_reason(result.engine, stats.pop("engine_reason", ""))
    row.update(stats)
    row["doubts"] = list(result.doubts)
    if annotate:
        try:
            for annotator in annotators(annotate):
                row.update(annotator(point, row))
        except Exception as exc:
            row["status"] = "error"
            row["message"] = "analytic columns failed: " + _error_text(exc)
    return row


def _run_serial(points, annotate) -> Iterator[dict]:
    for point in points:
        yield run_point(point, annotate)


#: Seconds between a worker's checks that its parent is alive.
PARENT_POLL_SECONDS = 1.0


def _watch_parent(parent: int, interval: float) -> None:
    import time

    while os.getppid() == parent:
        time.sleep(interval)
    # Orphaned (the parent was killed, e.g. SIGKILL): nobody will read our result, and
    # an orphan would hold the caller's pipes open. Exit at once, skipping cleanup
    # that could wait on the dead parent.
    os._exit(1)


def init_worker(parent: int, interval: float = PARENT_POLL_SECONDS) -> None:
    """Initialise a pool worker: ignore Ctrl-C, and exit when the parent dies."""
    import signal
    import threading

    # Ctrl-C goes to the whole process group; the parent alone decides what stops.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # A forked worker inherits the CLI's SIGTERM/SIGHUP handlers, which turn the
    # signal into KeyboardInterrupt; in a worker that would come back to the parent
    # as a task's result. A worker told to stop simply stops.
    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    if os.getppid() != parent:  # the parent died before this worker started
        os._exit(1)
    threading.Thread(target=_watch_parent, args=(parent, interval), daemon=True,
                     name="watch-parent").start()


def _stop_pool(pool) -> None:
    """Stop ``pool`` now: cancel what has not started and end the running workers."""
    if hasattr(pool, "terminate_workers"):  # Python 3.14+
        pool.terminate_workers()
        return
    # Before 3.14 there is no public way. shutdown(wait=False) alone lets running
    # tasks finish, and the interpreter's exit then joins the pool's manager thread,
    # which can wait for ever (CPython issues 83386, 94440). Ended workers make the
    # manager thread mark the pool broken and return.
    processes = list((pool._processes or {}).values())
    manager = pool._executor_manager_thread
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        with contextlib.suppress(ProcessLookupError, ValueError):
            process.terminate()
    if manager is not None:
        manager.join()


def _init_worker_then(parent: int, initializer, initargs: tuple) -> None:
    """`init_worker`, then the caller's own ``initializer(*initargs)``."""
    init_worker(parent)
    initializer(*initargs)


@contextlib.contextmanager
def process_pool(workers: int, initializer=None, initargs: tuple = ()):
    """A ``ProcessPoolExecutor`` whose workers ignore Ctrl-C and end with this process.

    If the block raises (Ctrl-C, SIGTERM, a failed write) the pool is stopped at
    once, its running tasks abandoned, instead of waited for. ``initializer(
    *initargs)`` runs in each worker after that set-up (e.g. to receive a shared
    ``multiprocessing.Value``, which only reaches a worker when it starts).
    """
    from concurrent.futures import ProcessPoolExecutor

    if initializer is None:
        setup, args = init_worker, (os.getpid(),)
    else:
        setup, args = _init_worker_then, (os.getpid(), initializer, tuple(initargs))
    pool = ProcessPoolExecutor(max_workers=workers, initializer=setup, initargs=args)
    try:
        yield pool
    except BaseException:
        _stop_pool(pool)
        raise
    pool.shutdown(wait=True)


def _run_processes(points, annotate, workers) -> Iterator[dict]:
    from concurrent.futures import as_completed

    with process_pool(workers) as pool:
        futures = {pool.submit(run_point, point, annotate): point for point in points}
        for future in as_completed(futures):
            try:
                yield future.result()
            except Exception as exc:  # a dead worker process, not a failing point
                yield _error_row(futures[future], exc)


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
        from forkjoin_sim.checks import check_reachable
        check_reachable(str(address))  # one line now, not a traceback after a timeout
        try:
            client, own_client = Client(address), True
        except Exception as exc:  # whatever answered is not a usable scheduler
            raise ConfigError(f"no Dask scheduler answered at {address} "
                              f"({type(exc).__name__}); check the address") from None
    futures = {}
    try:
        for point in points:
            text = point_key(point) + f"annotate={bool(annotators(annotate))}"
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


def check_run_settings(points: list[dict], workers: int | None = None) -> None:
    """Refuse, before any work, run settings no point can run with.

    ``jobs``, ``warmup``, ``sample_every`` and ``engine`` are the same rules as
    ``simulate``'s; the largest run that keeps its jobs (any engine but the fused
    kernel) must also fit in memory on each of ``workers`` processes at once.
    """
    from forkjoin_sim.checks import check_jobs_fit
    from forkjoin_sim.run import check_run
    from forkjoin_sim.measure.statistics import _check_sample_every, _check_warmup, warmup_count

    for point in points:
        try:
            engine = None if point["engine"] == "auto" else point["engine"]
            jobs = check_run(point["jobs"], engine, point["purging"])
            warmup = _check_warmup(point["warmup"])
            every = _check_sample_every(point["sample_every"])
        except ConfigError as exc:
            raise ConfigError(f"bad run settings in the sweep spec: {exc}") from None
        if warmup != "auto" and len(range(warmup_count(jobs, warmup), jobs, every)) < 2:
            raise ConfigError(f"jobs={jobs} with warmup={warmup} and sample_every={every} "
                              "measures fewer than 2 jobs per point; run more jobs")
    # The fused kernel streams; the other engines keep every measured job. The
    # longest point that keeps them bounds the memory (points that cannot build a
    # model fail on their own row), on as many workers as points run at once. Where
    # the longest point of all fits, no point's engine needs choosing (building
    # every model of a grid of 27,720 points took minutes before any ran).
    runs = min(workers or default_workers(), len(points))
    try:
        check_jobs_fit(max(p["jobs"] for p in points), "sweep key 'jobs'", runs=runs)
        return
    except ConfigError:
        pass
    for point in sorted(points, key=lambda p: p["jobs"], reverse=True):
        try:
            streams = point_engine(point)[0] == "fused"
        except ConfigError:
            continue
        if not streams:
            check_jobs_fit(point["jobs"], "sweep key 'jobs'", runs=runs)
            break


def run_points(points: list[dict], backend: str = "processes", workers: int | None = None,
               annotate=(), address=None) -> Iterable[dict]:
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
# The sweep
# ---------------------------------------------------------------------------

class SweepNote(UserWarning):
    """A note on a sweep's grid: combinations skipped (k > r), or how a resumed file
    was read (the command line prints these itself)."""


def sweep(spec, backend: str = "processes", workers: int | None = None, out=None,
          annotate=(), progress: bool = True, resume: bool = False,
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
        Rows are appended as points finish to the journal ``<out>.partial.csv``;
        ``out`` is replaced atomically, in grid order, only when every point has
        run (an interrupted sweep leaves an earlier ``out`` as it was) and the
        journal is then removed.
    annotate : sequence of callables
        Functions ``(point, row) -> dict`` adding columns to each row, e.g.
        ``(sizing.sweep_columns.annotate,)`` for Theorem 3's estimate and error.
    progress : bool
        A progress bar with ETA on stderr.
    resume : bool
        Skip the points that finished with status "ok": those in the journal of
        an interrupted run, or in ``out`` when there is no journal. A spec that
        sets no engine resumes a file whose rows all have engine "fast" (written
        before the default was "auto") on engine "fast", with a note saying so.

    Rows are sorted by the points' order in the grid, whatever order they finished
    in. The frame reads like the results file (it is that CSV, parsed): a failed
    point has ``status == "error"`` and what failed in ``message``. Notes on skipped
    combinations are in ``frame.attrs["notes"]``, said in one `SweepNote` warning
    before any point runs.
    """
    from contextlib import closing

    from tqdm.auto import tqdm

    _check_backend(backend, workers, address)
    if not isinstance(spec, (dict, str, os.PathLike)):
        raise ConfigError(f"a sweep spec is a dict or the path of a TOML file, got "
                          f"{type(spec).__name__}")
    if out is not None and not isinstance(out, (str, os.PathLike)):
        raise ConfigError(f"out must be a file path (.csv or .parquet) or None, got "
                          f"{type(out).__name__}")
    if not isinstance(spec, dict):
        from forkjoin_sim.checks import check_input_file
        check_input_file(spec, "sweep spec")
    spec = load_spec(spec)
    out = None if out is None else check_results_path(out)
    if resume and out is None:
        raise ConfigError("resume needs the results file: give out=...")
    if not resume and out is not None and (kept := journaled(out)):
        # a new run would start the journal afresh: the interrupted run's finished
        # points would be lost without a word
        raise ConfigError(f"{journal_path(out)} holds {kept} finished point(s) of an "
                          f"interrupted sweep to {out}; add --resume (resume=True) to "
                          "complete it, or delete that file to start again")
    legacy = None
    if resume:
        spec, legacy = resumed_spec(spec, out)
    points, notes = expand(spec)
    if legacy is not None:
        notes = [legacy, *notes]
    if not points:
        raise ConfigError("no valid point in the sweep spec: "
                          + ("; ".join(notes[:3]) or "it is empty"))
    check_run_settings(points, workers if backend != "serial" else 1)
    if notes:
        # a notebook sees that its grid lost points (k > r), not only in frame.attrs:
        # once, however many (a grid of the paper's skips hundreds)
        more = (f" (and {len(notes) - 1:,} more notes: frame.attrs['notes'] lists "
                "them)" if len(notes) > 1 else "")
        warnings.warn(f"{notes[0]}{more}", SweepNote, stacklevel=2)
    order = {point_identity(p): i for i, p in enumerate(points)}
    done = done_rows(out, order, bool(annotators(annotate))) if resume else {}
    todo = [p for p in points if point_identity(p) not in done]
    journal = None if out is None else Journal(journal_path(out), list(done.values()))
    rows = list(done.values())
    from forkjoin_sim.run import PROGRESS_DELAY, bar_shown

    try:
        # a bar only on a terminal (`bar_shown`: no stderr, a log or a pipe get none)
        with tqdm(total=len(points), initial=len(done),
                  disable=not progress or not bar_shown(),
                  delay=PROGRESS_DELAY,
                  unit="point", desc="sweep", dynamic_ncols=True) as bar, \
                closing(run_points(todo, backend, workers, annotate, address)) as results:
            for row in results:
                row[SETTINGS_COLUMN] = bool(annotators(annotate))
                cells = {k: text for k, text in ((k, cell_text(v)) for k, v in row.items())
                         if text != ""}
                rows.append(cells)
                if journal is not None:
                    journal.add(cells)
                bar.update(1)
    finally:
        if journal is not None:
            journal.close()
    rows.sort(key=lambda cells: order[row_identity(cells)])
    if out is not None:
        write_final(out, rows)
        journal_path(out).unlink(missing_ok=True)
    frame = rows_frame(rows)
    frame.attrs["notes"] = notes
    return frame
