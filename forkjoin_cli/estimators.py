"""CLI sub-command ``estimators``: referee tables and the accuracy of every estimator.

    forkjoin-sim estimators referee --set grid --out docs/data/estimators_long_grid.csv
    forkjoin-sim estimators accuracy --referee docs/data/estimators_long_grid.csv
    forkjoin-sim estimators figure docs/data/estimators_long_*.csv --out errors.png

``referee`` simulates (long all-quorum runs, or the paper-size sweep) and writes a
CSV; ``accuracy`` reads one and prints, per estimator, max and mean |APP/SIM - 1|.
For ``approx --method`` the estimators themselves are :data:`ESTIMATORS` and
:func:`all_estimates` (re-exported from :mod:`analytic.estimators`).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from analytic.estimators import ESTIMATORS, RECOMMENDED, all_estimates
from forkjoin_sim import checks as options
from forkjoin_cli import types
from forkjoin_cli.arguments import SEED_HELP
from forkjoin_sim.errors import ConfigError
from forkjoin_sim.files.io import atomic_write

__all__ = ["ESTIMATORS", "RECOMMENDED", "all_estimates", "estimate", "register"]

#: Referee sets of ``estimators referee --set`` (see :func:`_referee`).
REFEREE_SETS = ("grid", "paper-size", "six-three", "offgrid")


def estimate(method: str, n: int, r: int, k: int, rho: float, mu: float = 1.0) -> float:
    """The estimate of T(n,r,k; rho) by the estimator named ``method``."""
    if method not in ESTIMATORS:
        raise ConfigError(f"estimator {method!r} is unknown; use one of "
                          f"{', '.join(ESTIMATORS)}")
    return float(ESTIMATORS[method](n, r, k, rho, mu))


def _referee(name: str, seed: int, workers: int, quiet: bool = False):
    """The referee table of set ``name``; a bar over the jobs of its long runs shows
    progress within each run (not with ``quiet``, nor where no bar may draw)."""
    from validation import estimators as harness

    if name == "paper-size":
        from validation.fig2 import paper_size_table

        return paper_size_table(workers=workers, seed=seed)
    if name == "grid":
        configs, lengths = sorted({(n, r, rho) for n, r, _, rho in harness.paper_grid()}), {}
    elif name == "six-three":
        configs, lengths = harness.cassandra_configs(), {}
    else:
        configs = harness.offgrid_configs()
        lengths = {"scale": harness.OFFGRID_JOBS_SCALE, "cap": harness.OFFGRID_JOBS_MAX}
    from forkjoin_cli._progress import progress_bar

    with progress_bar(harness.referee_jobs(configs, **lengths), desc=f"referee {name}",
                      unit="job", show=not quiet, unit_scale=True) as bar:
        return harness.long_table(configs, seed=seed, workers=workers,
                                  on_jobs=bar.update, **lengths)


#: Columns a referee table must have.
REFEREE_COLUMNS = ("n", "r", "k", "rho", "sim_mean", "sim_ci_low", "sim_ci_high")


def _read_referee(path: str):
    """A referee table: a readable UTF-8 CSV with the referee columns and at least one
    row of numbers."""
    import pandas as pd

    options.check_input_file(path, "referee table")
    try:
        # only an empty cell is missing: a written "nan" is a value to name
        referee = pd.read_csv(path, keep_default_na=False, na_values=[""])
    except (pd.errors.EmptyDataError, pd.errors.ParserError, ValueError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ConfigError(f"referee table {path!r} is not a CSV table ({reason}); make "
                          "one with 'forkjoin-sim estimators referee'") from None
    missing = set(REFEREE_COLUMNS) - set(referee)
    if missing:
        raise ConfigError(f"referee table {path!r} lacks column(s) "
                          f"{', '.join(sorted(missing))}; make one with "
                          "'forkjoin-sim estimators referee'")
    if referee.empty:
        raise ConfigError(f"referee table {path!r} has no rows; make one with "
                          "'forkjoin-sim estimators referee'")
    columns = referee[list(REFEREE_COLUMNS)]
    numeric = columns.apply(pd.to_numeric, errors="coerce")
    bad = ~np.isfinite(numeric.to_numpy(dtype=float))
    if bad.any():
        row, col = next(zip(*bad.nonzero()))
        cell = columns.iat[row, col]
        what = ("is empty" if pd.isna(cell) else
                f"is not finite ({str(cell)!r})" if pd.notna(numeric.iat[row, col]) else
                f"is not a number ({str(cell)!r})")
        raise ConfigError(f"{_place(path, row, REFEREE_COLUMNS[col])} {what}; a "
                          "referee table holds finite numbers: fix or regenerate the file")
    referee[list(REFEREE_COLUMNS)] = numeric
    whole = numeric[["n", "r", "k"]]
    if not (whole == whole.round()).to_numpy().all():
        raise ConfigError(f"referee table {path!r} has a fractional n, r or k; "
                          "fix or regenerate the file")
    referee[["n", "r", "k"]] = whole.astype(int)
    _check_referee_values(path, numeric)
    return referee


def _place(path: str, row: int, column: str) -> str:
    """Where row ``row`` (from 0) of a referee table's ``column`` is in its file
    (line 1 is the header)."""
    return f"referee table {path!r} line {row + 2} column {column!r}"


def _check_referee_values(path: str, numeric) -> None:
    """Refuse, by line and column, what a configuration cannot be (n, r, k outside
    1 <= k <= r <= n, a load at or below 0) and what a simulated mean sojourn time and
    its interval cannot be: a mean at or below 0 (an error relative to it would be
    meaningless), or a mean outside its own interval."""
    n, r, k = (numeric[c] for c in ("n", "r", "k"))
    rules = [("n", n < 1, "must be at least 1 node"),
             ("r", (r < 1) | (r > n), "must be a replica count from 1 to n"),
             ("k", (k < 1) | (k > r), "must be a quorum from 1 to r"),
             ("rho", numeric["rho"] <= 0, "must be a positive load"),
             ("sim_mean", numeric["sim_mean"] <= 0,
              "must be a positive mean sojourn time"),
             ("sim_ci_low", numeric["sim_ci_low"] > numeric["sim_mean"],
              "exceeds sim_mean; the interval must hold its mean"),
             ("sim_ci_high", numeric["sim_ci_high"] < numeric["sim_mean"],
              "is below sim_mean; the interval must hold its mean")]
    for column, broken, what in rules:
        if broken.any():
            row = int(np.flatnonzero(broken.to_numpy())[0])
            raise ConfigError(f"{_place(path, row, column)}: "
                              f"{numeric[column].iat[row]:g} {what}; fix or regenerate "
                              "the file")


def _image_suffixes() -> set[str]:
    from matplotlib.backend_bases import FigureCanvasBase

    return {f".{ext}" for ext in FigureCanvasBase.get_supported_filetypes()}


#: The service rate every referee is simulated at (exponential service of mean 1);
#: its tables say so in a ``mu`` column, which `_referee_rate` reads.
REFEREE_MU = 1.0


def _referee_rate(path: str, referee, given: float | None) -> float:
    """The service rate the estimators take for ``referee``: the table's ``mu``
    column (one value), or ``--mu`` for a table without one (default 1). A ``--mu``
    that contradicts the table is refused: the estimates would be for other nodes
    than the ones simulated."""
    if "mu" not in referee:
        return REFEREE_MU if given is None else given
    rates = _numbers(referee["mu"])
    if not (np.isfinite(rates).all() and (rates > 0).all()) or len(set(rates)) != 1:
        raise ConfigError(f"referee table {path!r} column 'mu' must hold one positive "
                          "service rate for every row; fix or regenerate the file")
    rate = float(rates[0])
    if given is not None and not np.isclose(given, rate, rtol=1e-12):
        raise ConfigError(f"--mu {given:g} contradicts the referee table {path!r}, "
                          f"simulated at mu = {rate:g}; drop --mu (the table's rate is "
                          "used)")
    return rate


def _numbers(column) -> np.ndarray:
    """``column`` as floats, NaN where a cell is not a number."""
    import pandas as pd

    return pd.to_numeric(column, errors="coerce").to_numpy(dtype=float)


def _cmd_referee(args) -> int:
    options.check_output_file(args.out, "--out", suffixes=(".csv",))
    table = _referee(args.set, args.seed, args.workers, args.quiet)
    table.insert(list(table.columns).index("rho") + 1, "mu", REFEREE_MU)
    with atomic_write(args.out, encoding="utf-8") as handle:
        table.to_csv(handle, index=False)
    print(f"wrote {len(table)} rows to {args.out}", file=sys.stderr)
    return 0


def _cmd_accuracy(args) -> int:
    from validation.estimators import accuracy, accuracy_markdown, with_estimates

    if args.out is not None:
        options.check_output_file(args.out, "--out", suffixes=(".csv",))
    referee = _read_referee(args.referee)
    rate = _referee_rate(args.referee, referee, args.mu)
    with options.warnings_after_success():
        compared = with_estimates(referee, mu=rate)
        table = accuracy(compared)
    print(accuracy_markdown(table) if args.markdown else table.to_string(
        float_format=lambda v: f"{v:.4f}"))
    if args.out:
        with atomic_write(args.out, encoding="utf-8") as handle:
            compared.to_csv(handle, index=False)
        print(f"wrote {len(compared)} rows to {args.out}", file=sys.stderr)
    return 0


def _cmd_figure(args) -> int:
    from validation.estimators import error_figure, with_estimates

    suffixes = _image_suffixes()
    options.check_output_file(args.out, "--out", suffixes=sorted(suffixes))
    referees = {path: _read_referee(path) for path in args.referee}
    rates = {path: _referee_rate(path, referee, args.mu)
             for path, referee in referees.items()}
    panels = {}
    with options.warnings_after_success():
        for path, referee in referees.items():
            panels[Path(path).stem] = with_estimates(referee, mu=rates[path])
    error_figure(panels, args.out)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


def register(subparsers) -> None:
    """Add ``estimators referee``, ``estimators accuracy`` and ``estimators figure``."""
    p = subparsers.add_parser(
        "estimators", help="compare the closed-form estimators with simulation",
        description="Referee simulations and the accuracy of every closed-form "
                    f"estimator ({', '.join(ESTIMATORS)}; recommended: {RECOMMENDED}).")
    actions = p.add_subparsers(dest="action", required=True)

    ref = actions.add_parser("referee", help="simulate a referee table (CSV)")
    ref.add_argument("--set", choices=REFEREE_SETS, default="grid",
                     help="grid: Fig. 2's 400 points, long all-quorum runs; paper-size: "
                          "the same points at the paper's run size; six-three: (6,3,k); "
                          "offgrid: up to 20 nodes and 15 replicas")
    ref.add_argument("--out", required=True, help="CSV file to write")
    ref.add_argument("--seed", type=types.seed, default=2019, help=SEED_HELP)
    ref.add_argument("--workers", type=types.workers, default=2,
                     help="processes (the same numbers on any count; default 2)")
    ref.add_argument("--quiet", action="store_true",
                     help="no progress bar (a bar over the runs' jobs draws on a "
                          "terminal only)")
    ref.set_defaults(handler=_cmd_referee)

    acc = actions.add_parser("accuracy", help="errors of every estimator on a referee table")
    acc.add_argument("--referee", required=True, help="CSV from 'estimators referee'")
    acc.add_argument("--mu", type=types.positive_real, default=None,
                     help="service rate of the referee's nodes, for a table without a "
                          "mu column (default: the table's mu, else 1)")
    acc.add_argument("--markdown", action="store_true", help="print a Markdown table")
    acc.add_argument("--out", help="also write every point with every estimate (CSV)")
    acc.set_defaults(handler=_cmd_accuracy)

    fig = actions.add_parser("figure", help="plot every estimator's errors (one panel "
                                            "per referee table)")
    fig.add_argument("referee", nargs="+", help="CSV files from 'estimators referee'")
    fig.add_argument("--out", required=True, help="image file to write (PNG, PDF ...)")
    fig.add_argument("--mu", type=types.positive_real, default=None,
                     help="service rate of the referees' nodes, for tables without a "
                          "mu column (default: each table's mu, else 1)")
    fig.set_defaults(handler=_cmd_figure)
