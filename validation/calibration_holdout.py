"""Hold-out test of the calibrated Cassandra model against naive guesses.

For each measurement file: (a) fit on ONE, predict QUORUM and ALL (naive: the same
latency as ONE at the same threads); (b) fit on ONE and ALL, predict QUORUM (naive:
their midpoint); (c) fit on the two smallest thread counts of every level, predict
the larger ones (naive: the straight line through the two fitted points of that
level). Prints Markdown tables (per row and mean absolute percentage error)::

    forkjoin-sim experiment calibration-holdout --nodes 3 --replicas 3 \\
        docs/data/measurements/saulolks2022_rows1000_think1000_run1.csv ...

``--write-synthetic PATH`` writes the 30-row file with known parameters that the
calibration timing uses.
"""

from __future__ import annotations

import csv
import sys
import numpy as np

from forkjoin_sim.errors import ConfigError
from forkjoin_sim.files.io import atomic_write
from sizing.calibrated_model import CalibratedModel
from sizing.calibration import calibrate, predict, simulate_row
from sizing.measurements import Measurement, read_measurements

#: Rows whose source reports failed requests (see docs/data/measurements/README.md).
FAILED = {"saulolks2022_rows5000_think100_run1.csv": {("ONE", 50), ("ALL", 30),
                                                      ("ALL", 40)},
          "saulolks2022_rows10000_think100_run1.csv": {("QUORUM", 40)},
          "saulolks2022_rows5000_think500_run1.csv": {("ALL", 40)},
          "saulolks2022_rows10000_think500_run1.csv": {("QUORUM", 40), ("ALL", 40),
                                                       ("ALL", 50)}}


def _same_work(a, b) -> bool:
    """Rows of the same operation and mix, whose latencies a naive guess may share."""
    return a.operation == b.operation and a.reads == b.reads


def _naive(kind, row, fitted):
    """The guess a user would make for ``row`` from the ``fitted`` rows of the same
    operation (and mix); None where the rows it needs are missing."""
    fitted = [r for r in fitted if _same_work(r, row)]
    by = {(r.consistency, r.threads): r.mean_ms for r in fitted}
    if kind == "a":
        return by.get(("ONE", row.threads))
    if kind == "b":
        one, all_ = by.get(("ONE", row.threads)), by.get(("ALL", row.threads))
        return None if one is None or all_ is None else (one + all_) / 2
    # Rows repeated at one thread count (several runs) give one point: their mean.
    at = {}
    for r in fitted:
        if r.consistency == row.consistency and r.threads is not None:
            at.setdefault(r.threads, []).append(r.mean_ms)
    if len(at) < 2 or row.threads is None:
        return None
    (x0, y0), (x1, y1) = sorted((x, float(np.mean(y))) for x, y in at.items())[:2]
    return y0 + (y1 - y0) * (row.threads - x0) / (x1 - x0)


def _second_smallest(rows) -> int:
    return sorted({r.threads for r in rows})[1]


SCENARIOS = {
    "a": ("fit ONE, predict QUORUM and ALL", "same as ONE",
          lambda rows: [r.consistency == "ONE" for r in rows]),
    "b": ("fit ONE and ALL, predict QUORUM", "midpoint of ONE and ALL",
          lambda rows: [r.consistency != "QUORUM" for r in rows]),
    "c": ("fit the two smallest thread counts, predict the larger", "line in threads",
          lambda rows: [r.threads <= _second_smallest(rows) for r in rows]),
}


def _rows(path, replicas):
    """The rows of ``path`` the hold-out uses: those whose run reported no failures."""
    rows, _ = read_measurements(path, replicas)
    failed = FAILED.get(str(path).rsplit("/", 1)[-1], set())
    return [r for r in rows if (r.consistency, r.threads) not in failed]


def split(rows, scenario, path="the file"):
    """(fitted, held-out) rows of ``scenario``, or ConfigError when it cannot be formed."""
    if scenario not in SCENARIOS:
        raise ConfigError(f"unknown scenario {scenario!r}; use letters from "
                          f"{''.join(SCENARIOS)}")
    if scenario == "c":
        if any(r.threads is None for r in rows):
            raise ConfigError(f"{path}: scenario c fits the smallest thread counts, but "
                              "some rows are at a fixed rate (no threads); drop c from "
                              "--scenarios for this file")
        if len({r.threads for r in rows}) < 3:
            raise ConfigError(f"{path}: scenario c needs rows at 3 or more thread counts "
                              "(2 to fit, the rest to predict); drop c from --scenarios "
                              "for this file")
    mask = SCENARIOS[scenario][2](rows)
    fitted = [r for r, m in zip(rows, mask) if m]
    held = [r for r, m in zip(rows, mask) if not m]
    if not fitted or not held:
        title = SCENARIOS[scenario][0]
        raise ConfigError(f"{path}: scenario {scenario} ({title}) finds no rows to "
                          f"{'fit' if not fitted else 'predict'}; drop {scenario} from "
                          "--scenarios for this file")
    return fitted, held


def holdout(path, nodes, replicas, scenario, seed=0, progress=None):
    """Per held-out row: measured, model (with interval), naive guess; plus warnings."""
    fitted, held = split(_rows(path, replicas), scenario, path)
    fit = calibrate(fitted, nodes, replicas, seed=seed, progress=progress,
                    confirm=False)
    preds = predict(fit.model, held, seed=seed)
    out = []
    for row, pred in zip(held, preds):
        guess = _naive(scenario, row, fitted)
        out.append({"row": row.label(), "measured": row.mean_ms,
                    "model": pred["predicted_mean_ms"],
                    "low": pred["predicted_ci_low_ms"],
                    "high": pred["predicted_ci_high_ms"],
                    "naive": guess})
    return fit, out


def _pct(value, truth):
    return 100 * (value - truth) / truth


def mape(table) -> tuple[float, float, int, int]:
    """Model MAPE, naive MAPE (where the guess exists) and their row counts, in %."""
    model = [abs(_pct(t["model"], t["measured"])) for t in table]
    naive = [abs(_pct(t["naive"], t["measured"])) for t in table
             if t["naive"] is not None]
    return (float(np.mean(model)), float(np.mean(naive)) if naive else float("nan"),
            len(model), len(naive))


def summary(results) -> str:
    """One line per (file, scenario): model and naive MAPE, and who wins."""
    lines = ["| file | scenario | model MAPE | naive MAPE | rows (naive) | better |",
             "|---|---|---|---|---|---|"]
    for path, scenario, table in results:
        model, naive, n, m = mape(table)
        better = "n/a" if m == 0 else ("model" if model < naive else "naive")
        lines.append(f"| {path.rsplit('/', 1)[-1].removesuffix('.csv')} | {scenario} | "
                     f"{model:.1f}% | {naive:.1f}% | {n} ({m}) | {better} |")
    return "\n".join(lines) + "\n"


def markdown(path, scenario, fit, table) -> str:
    title, naive_name, _ = SCENARIOS[scenario]
    m = fit.model
    lines = [f"#### {path.rsplit('/', 1)[-1]}: ({scenario}) {title}", "",
             f"Fitted: threads/stage {m.threads}, data read {m.data_read_ms:.3g} ms, "
             f"digest/data {m.digest_ratio:.3g}, overhead {m.overhead_ms:.3g} ms, think "
             f"{m.think_ms:.4g} ms ({fit.seconds:.0f} s).", ""]
    lines += [f"- warning: {w}" for w in fit.warnings]
    lines += ["", f"| row | measured ms | model ms [95%] | model error | {naive_name} | "
                  "naive error |", "|---|---|---|---|---|---|"]
    model_err, naive_err = [], []
    for t in table:
        e = _pct(t["model"], t["measured"])
        model_err.append(abs(e))
        if t["naive"] is None:
            naive_cell = err_cell = "n/a"
        else:
            n = _pct(t["naive"], t["measured"])
            naive_err.append(abs(n))
            naive_cell, err_cell = f"{t['naive']:.4g}", f"{n:+.1f}%"
        lines.append(f"| {t['row']} | {t['measured']:.4g} | {t['model']:.4g} "
                     f"[{t['low']:.4g}, {t['high']:.4g}] | {e:+.1f}% | {naive_cell} | "
                     f"{err_cell} |")
    naive_mape = f"{np.mean(naive_err):.1f}%" if naive_err else "n/a"
    lines.append(f"| **MAPE** | | | **{np.mean(model_err):.1f}%** | | **{naive_mape}** |")
    return "\n".join(lines) + "\n"


#: The known parameters of the synthetic 30-row file (docs/cassandra/calibration.md).
SYNTHETIC = CalibratedModel(nodes=6, replicas=3, threads=4, data_read_ms=0.8,
                            digest_ratio=0.6, write_ms=0.5, overhead_ms=0.3, think_ms=0.0)


def write_synthetic(path: str, model: CalibratedModel = SYNTHETIC, seed: int = 99) -> None:
    """Reads and writes at ONE, QUORUM, ALL and 4 to 128 threads, 'measured' on the
    simulator (200,000 jobs per row): a 30-row file with known parameters."""
    rows = []
    for operation in ("read", "write"):
        for level in ("ONE", "QUORUM", "ALL"):
            for threads in (4, 16, 32, 64, 128):
                sim = simulate_row(model, Measurement(operation, level, threads), 200_000,
                                   np.random.SeedSequence([seed, len(rows)]), details=True)
                rows.append({"operation": operation, "consistency": level,
                             "threads": threads, "throughput": round(sim.throughput, 1),
                             "mean_ms": round(sim.mean, 4),
                             "p95_ms": round(sim.percentiles["p95_ms"], 4)})
    with atomic_write(path, newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def run(args) -> int:
    """Run the experiment with the options of ``forkjoin-sim experiment calibration-holdout``."""
    # Every file and scenario is read and split first: a scenario one file cannot
    # form is refused before minutes of calibration on the others.
    rows = {path: _rows(path, args.replicas) for path in args.files}
    for path in args.files:
        for scenario in args.scenarios:
            split(rows[path], scenario, path)
    if args.write_synthetic:
        write_synthetic(args.write_synthetic)
    results = []
    for path in args.files:
        for scenario in args.scenarios:
            fit, table = holdout(path, args.nodes, args.replicas, scenario, args.seed,
                                 progress=lambda msg: print(msg, file=sys.stderr))
            results.append((path, scenario, table))
            if not args.summary_only:
                print(markdown(path, scenario, fit, table), flush=True)
    if results:
        print(summary(results))
    return 0
