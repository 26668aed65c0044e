"""Score the default Cassandra model out of sample on this folder's measurement files.

For every measurement file (one configuration: database, operation, data set size; all at
LOCAL_QUORUM, 3 nodes, replication factor 3) and two protocols it runs the command line
as a user would, in a temporary directory:

- protocol (c): fit the rows at 1 and 8 threads, predict 32 and 128;
- protocol (c+): fit 1, 8 and 32 threads, predict 128;
- protocol (d): fit every read row of a database and data set size, predict its writes
  (naive guess: writes take what reads take at the same threads).

``forkjoin-sim cassandra calibrate --nodes N --replicas RF --measurements FIT.csv --out
M.toml`` then ``forkjoin-sim cassandra predict --model M.toml --measurements HELD.csv --out
P.csv``; nothing but the nodes and replicas is given, so every other setting is the
default. The naive guess of (c) and (c+) is a straight line in threads through the
fitted rows' mean latency (``np.polyfit`` of degree 1), evaluated at the held-out thread
counts. In the tables "line" is the naive guess of each protocol.

Usage (from the repository root)::

    .venv/bin/python docs/data/huskicajla_cassandra_scylla/score_defaults.py

It prints markdown: per file the model's and the line's mean absolute percentage error
(MAPE) over the held-out rows, how many measured rows fall inside the model's 95%
interval, per row the numbers, then totals per database, then every warning the two
commands printed.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
CLI = ROOT / ".venv" / "bin" / "forkjoin-sim"
NAME = re.compile(r"^(?P<database>[a-z]+)_(?P<suite>[a-z0-9_]+)_n(?P<nodes>\d+)_rf(?P<rf>\d+)_"
                  r"(?P<operation>read|write)_(?P<size>\w+)\.csv$")
#: protocol -> thread counts fitted (the rest of the file is held out)
PROTOCOLS = {"c": (1, 8), "c+": (1, 8, 32)}


def measurement_files() -> list[tuple[Path, dict]]:
    """The measurement files of this folder with what their names say."""
    found = []
    for path in sorted(HERE.glob("*.csv")):
        match = NAME.match(path.name)
        if match:
            found.append((path, match.groupdict()))
    return found


def run(command: list[str]) -> tuple[int, list[str], str]:
    """Exit status, warning lines printed, and the last error line of one command."""
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    lines = (done.stdout + "\n" + done.stderr).splitlines()
    # calibrate prints each warning twice (report on stdout, stderr); keep stderr's
    warnings = [line.strip() for line in done.stderr.splitlines() if "warning" in line.lower()]
    error = next((line for line in reversed(lines) if line.strip()), "") if done.returncode else ""
    return done.returncode, warnings, error


def score(path: Path, meta: dict, fitted: tuple[int, ...], work: Path) -> dict:
    """One case of (c) or (c+): calibrate on the fitted thread counts, predict the rest;
    the naive guess is a line in threads through the fitted rows."""
    table = pd.read_csv(path, keep_default_na=False)
    fit = table[table["threads"].isin(fitted)]
    held = table[~table["threads"].isin(fitted)]
    line = np.polyfit(fit["threads"].to_numpy(float), fit["mean_ms"].to_numpy(float), 1)
    case = {"file": path.name, "database": meta["database"], "fitted": fitted}
    return predicted(case, fit, held, np.polyval(line, held["threads"].to_numpy(float)),
                     meta, work)


def score_reads_to_writes(reads: Path, writes: Path, meta: dict, work: Path) -> dict:
    """One case of (d): calibrate on every read row, predict the writes of the same
    cluster and data set; the naive guess is the reads' latency at the same threads."""
    fit = pd.read_csv(reads, keep_default_na=False)
    held = pd.read_csv(writes, keep_default_na=False)
    same = fit.set_index("threads")["mean_ms"].reindex(held["threads"]).to_numpy(float)
    case = {"file": writes.name, "database": meta["database"], "fitted": ("reads",)}
    return predicted(case, fit, held, same, meta, work)


def predicted(case: dict, fit: pd.DataFrame, held: pd.DataFrame, naive, meta: dict,
              work: Path) -> dict:
    """``case`` with the held-out rows scored: ``calibrate`` on ``fit``, ``predict``
    ``held``, beside the ``naive`` guess of each held-out row."""
    fit.to_csv(work / "fit.csv", index=False)
    held.to_csv(work / "held.csv", index=False)
    model, predictions = work / "model.toml", work / "predicted.csv"
    case.update(rows=[], warnings=[], error="")
    status, warnings, error = run([str(CLI), "cassandra", "calibrate", "--nodes", meta["nodes"],
                                   "--replicas", meta["rf"], "--measurements",
                                   str(work / "fit.csv"), "--out", str(model)])
    case["warnings"] += [f"calibrate: {w}" if not w.startswith("calibrate") else w
                         for w in warnings]
    if status:
        case["error"] = f"calibrate exited {status}: {error}"
        return case
    status, warnings, error = run([str(CLI), "cassandra", "predict", "--model", str(model),
                                   "--measurements", str(work / "held.csv"),
                                   "--out", str(predictions)])
    case["warnings"] += warnings
    if status:
        case["error"] = f"predict exited {status}: {error}"
        return case
    table = pd.read_csv(predictions)
    for (_, row), (_, guess), naive_ms in zip(held.iterrows(), table.iterrows(), naive):
        case["rows"].append({
            "threads": int(row["threads"]), "measured": float(row["mean_ms"]),
            "model": float(guess["predicted_mean_ms"]),
            "low": float(guess["predicted_ci_low_ms"]),
            "high": float(guess["predicted_ci_high_ms"]), "naive": float(naive_ms)})
    return case


def mape(case: dict, key: str) -> float:
    """Mean absolute percentage error of one case's held-out rows."""
    return 100.0 * float(np.mean([abs(r[key] / r["measured"] - 1.0) for r in case["rows"]]))


def inside(case: dict) -> int:
    """Held-out rows whose measured mean lies inside the model's 95% interval."""
    return sum(r["low"] <= r["measured"] <= r["high"] for r in case["rows"])


def report(cases: list[dict]) -> str:
    """The markdown tables: per case, per row, totals, warnings."""
    out = ["| database | file | protocol | fitted threads | model MAPE | line MAPE | "
           "inside 95% | note |", "|---|---|---|---|---|---|---|---|"]
    for c in cases:
        if c["error"]:
            out.append(f"| {c['database']} | `{c['file']}` | {c['protocol']} | "
                       f"{','.join(map(str, c['fitted']))} | - | - | - | {c['error']} |")
            continue
        won = "model better" if mape(c, "model") < mape(c, "naive") else "line better"
        out.append(f"| {c['database']} | `{c['file']}` | {c['protocol']} | "
                   f"{','.join(map(str, c['fitted']))} | {mape(c, 'model'):.1f}% | "
                   f"{mape(c, 'naive'):.1f}% | {inside(c)}/{len(c['rows'])} | {won} |")
    out += ["", "Per held-out row (ms):", "",
            "| file | protocol | threads | measured | model | 95% interval | line |",
            "|---|---|---|---|---|---|---|"]
    for c in cases:
        for r in c["rows"]:
            out.append(f"| `{c['file']}` | {c['protocol']} | {r['threads']} | "
                       f"{r['measured']:.3f} | {r['model']:.3f} | "
                       f"[{r['low']:.3f}, {r['high']:.3f}] | {r['naive']:.3f} |")
    out += ["", "Totals (mean over cases of each case's MAPE):", "",
            "| database | protocol | cases | model mean MAPE | line mean MAPE | "
            "cases model better | rows inside 95% |", "|---|---|---|---|---|---|---|"]
    scored = [c for c in cases if not c["error"]]
    groups = [(d, p) for d in ("cassandra", "scylla") for p in (*PROTOCOLS, "d", "all")]
    for database, protocol in groups:
        mine = [c for c in scored if c["database"] == database
                and (protocol == "all" or c["protocol"] == protocol)]
        if not mine:
            continue
        rows = sum(len(c["rows"]) for c in mine)
        out.append(
            f"| {database} | {protocol} | {len(mine)} | "
            f"{np.mean([mape(c, 'model') for c in mine]):.1f}% | "
            f"{np.mean([mape(c, 'naive') for c in mine]):.1f}% | "
            f"{sum(mape(c, 'model') < mape(c, 'naive') for c in mine)} of {len(mine)} | "
            f"{sum(inside(c) for c in mine)} of {rows} |")
    out += ["", "Warnings printed (verbatim, per case):", ""]
    for c in cases:
        out.append(f"- `{c['file']}` ({c['protocol']}):")
        out += [f"  - {w}" for w in c["warnings"]] or ["  - (none)"]
    return "\n".join(out)


def main() -> int:
    cases = []
    files = measurement_files()
    for path, meta in files:
        for protocol, fitted in PROTOCOLS.items():
            with tempfile.TemporaryDirectory(prefix="huskicajla-") as work:
                case = score(path, meta, fitted, Path(work))
            case["protocol"] = protocol
            cases.append(case)
            print(f"scored {path.name} ({protocol})", file=sys.stderr)
    for path, meta in files:
        writes = path.with_name(path.name.replace("_read_", "_write_"))
        if meta["operation"] != "read" or not writes.exists():
            continue
        with tempfile.TemporaryDirectory(prefix="huskicajla-") as work:
            case = score_reads_to_writes(path, writes, meta, Path(work))
        case["protocol"] = "d"
        cases.append(case)
        print(f"scored {path.name} -> {writes.name} (d)", file=sys.stderr)
    print(report(cases))
    return 1 if any(c["error"] for c in cases) else 0


if __name__ == "__main__":
    raise SystemExit(main())
