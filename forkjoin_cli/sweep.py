"""The ``forkjoin-sim sweep`` sub-command: run a TOML sweep spec into a results file."""

from __future__ import annotations

import sys
import warnings

from forkjoin_sim import checks as options

from forkjoin_cli import types
from forkjoin_sim.errors import ConfigError

EXAMPLE_SPEC = """\
# sweep.toml: the simulate options, with underscores; a list is a grid axis
nodes = 6
replicas = 3
quorum = [1, 2, 3]
rho = [0.3, 0.9, 1.5]
service = ["exp", "lognormal:1.0"]
jobs = 100000
replications = 2
seed = 1
# engine = "fast"   # exact percentiles; unset ("auto"): the engine simulate picks"""

#: Seconds a remote Dask scheduler has to accept a connection before the sweep starts.
DASK_TIMEOUT = 5.0
#: Failed points listed on stderr at the end; the rest are in the file.
SHOWN_FAILURES = 5


#: Notes on skipped combinations printed in full up to this many.
NOTES_SHOWN = 20


def _given(value) -> bool:
    """Whether a results cell holds a value (not None, NaN or empty)."""
    import pandas as pd

    return not (value is None or (not isinstance(value, (list, tuple, dict, str))
                                  and pd.isna(value)) or value == "")


def register(subparsers) -> tuple[type[BaseException], ...]:
    """Add ``sweep`` to ``subparsers``; return the exceptions that mean bad input."""
    import argparse

    p = subparsers.add_parser(
        "sweep", help="run a grid of simulations from a TOML spec",
        description="Simulate every point of a grid. The spec's keys are the simulate "
                    "options with underscores; a list is an axis, a scalar is fixed; "
                    "jobs, replications and seed are fixed keys; [[points]] tables "
                    "list points explicitly. Without an engine key each point runs "
                    "on the engine simulate would choose (engine = \"auto\"; the "
                    "results name it in engine_ran and engine_reason); set engine = "
                    "\"fast\" for exact percentiles. Each row's run_seed is "
                    "the point's own seed and replay the simulate command (with "
                    "--seed RUN_SEED) that gives its numbers alone. Rows are written to "
                    "OUT.partial.csv as points finish; OUT is replaced, in grid "
                    "order, only when every point has run. Exit status 1 if a point failed "
                    "(its row says why), 2 for a bad spec.",
        epilog="example spec:\n" + EXAMPLE_SPEC,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("spec", help="the sweep spec, a TOML file")
    p.add_argument("--out", required=True,
                   help="results file, .csv or .parquet (parquet needs pyarrow)")
    p.add_argument("--workers", type=types.workers, default=None,
                   help="local worker processes (default: all CPUs; 1 runs in this "
                        "process) or, with --dask local, the LocalCluster's workers")
    p.add_argument("--dask", metavar="ADDRESS", default=None,
                   help="run on Dask: 'local' starts a LocalCluster, otherwise a "
                        "scheduler address such as tcp://10.0.0.1:8786 (it must answer "
                        f"within {DASK_TIMEOUT:g} s)")
    p.add_argument("--resume", action="store_true",
                   help="skip the points that finished: those in OUT.partial.csv "
                        "after an interrupted run, else in --out (failed ones run "
                        "again)")
    p.add_argument("--no-analytic", action="store_true",
                   help="leave out the analytic columns (Theorem 3 estimate, bounds)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(handler=_cmd_sweep)
    return (ConfigError,)


def _cmd_sweep(args) -> int:
    from forkjoin_sim.sweep.results_file import (check_results_path, journal_path,
                                                  journaled, resumed_spec)
    from forkjoin_sim.checks import check_not_an_input
    from forkjoin_sim.laws.service import spec_files
    from forkjoin_sim.sweep.runner import (SweepNote, check_run_settings, expand,
                                           load_spec, sweep)
    from sizing.sweep_columns import annotate

    # Everything that can be refused is refused here, before any point runs.
    options.check_input_file(args.spec, "sweep spec")
    out = check_results_path(args.out, inputs=(args.spec,), what="--out")
    spec = load_spec(args.spec)
    if args.resume:
        # a file written when sweeps defaulted to the fast engine resumes on it
        spec, legacy = resumed_spec(spec, out)
        if legacy is not None:
            print(f"note: {legacy}", file=sys.stderr)
    try:
        points, notes = expand(spec)
        if not points:
            raise ConfigError("no valid point: " + ("; ".join(notes[:3]) or
                                                    "the spec is empty"))
        check_run_settings(points, args.workers)
    except ConfigError as exc:
        raise ConfigError(f"{args.spec}: {exc}") from None
    # a latency file of the spec's services would be overwritten by the results
    check_not_an_input(out, "--out", sorted({
        (path, f"service {point['service']} in {args.spec}") for point in points
        for path in spec_files(point.get("service"))}))
    if args.dask is not None:  # --dask '' is a wrong address, not "no Dask"
        import importlib.util
        if importlib.util.find_spec("distributed") is None:
            raise ConfigError("--dask needs dask.distributed; pip install "
                              "'dask[distributed]'")
        options.check_scheduler(args.dask, DASK_TIMEOUT)
    # every note of a small grid; of a large one the first few and a count (a grid
    # of 155,000 combinations printed 44,280 lines)
    shown = notes if len(notes) <= NOTES_SHOWN else notes[:NOTES_SHOWN // 2]
    for note in shown:
        print(f"note: {note}", file=sys.stderr)
    if len(shown) < len(notes):
        rest = notes[len(shown):]
        skipped = sum(note.startswith("skipped") for note in rest)
        kinds = ([f"{skipped:,} more combinations of the grid that cannot run (such "
                  "as k > r)"] if skipped else []) + (
            [f"{len(rest) - skipped:,} more notes"] if len(rest) > skipped else [])
        print(f"note: and {' and '.join(kinds)}", file=sys.stderr)
    backend = "dask" if args.dask is not None else "processes"
    try:
        with warnings.catch_warnings():
            # printed above, before any point ran
            warnings.simplefilter("ignore", SweepNote)
            frame = sweep(spec, backend=backend, workers=args.workers, out=args.out,
                          annotate=() if args.no_analytic else (annotate,),
                          progress=not args.quiet, resume=args.resume, address=args.dask)
    except KeyboardInterrupt:
        # out is replaced only at the end: the finished points are in the journal
        kept = f" ({args.out} is unchanged)" if out.exists() else ""
        finished = journaled(out)
        if finished:
            print(f"the {finished} finished point(s) are in {journal_path(out)}{kept}; "
                  f"run again with --resume to complete {args.out}", file=sys.stderr)
        else:
            print(f"no point finished{kept}", file=sys.stderr)
        raise
    failed = frame[frame["status"] != "ok"]
    print(f"{len(frame)} rows ({len(frame) - len(failed)} ok, {len(failed)} failed) "
          f"-> {args.out}")
    from forkjoin_sim.sweep.points import POINT_DEFAULTS

    for _, row in failed.head(SHOWN_FAILURES).iterrows():
        # the parameters the point sets (clients, rho ...; not those at their
        # defaults), so the line tells two failed points apart
        named = " ".join(f"{key}={row[key]}" for key in (*POINT_DEFAULTS, "replication")
                         if key in row and _given(row[key])
                         and row[key] != POINT_DEFAULTS.get(key))
        print(f"failed: {named}: {row['message']}", file=sys.stderr)
    return 1 if len(failed) else 0
