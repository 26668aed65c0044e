"""What ``cassandra calibrate`` and ``cassandra predict`` write, shared by the simulated
model's commands (`forkjoin_cli._calibration`) and the closed network's
(`forkjoin_cli._network_calibration`): the output checks and the predicted rows."""

from __future__ import annotations

import csv
import io
import math
import sys

from forkjoin_sim.files.io import atomic_save, atomic_write, check_parquet_writer, \
    json_text


def to_stderr(message: str) -> None:
    """One line of the commands' own talk (progress, warnings) on standard error, at
    once."""
    print(message, file=sys.stderr, flush=True)


#: Suffixes of ``--report``: a markdown or a JSON report.
REPORT_SUFFIXES = (".md", ".json")


def check_writable(path: str, option: str, suffixes: tuple[str, ...] = ()) -> None:
    """Raise `ConfigError` unless ``path`` can be written (checked before any work;
    an output over an input file `forkjoin_cli.arguments.check_outputs_spare_inputs`
    refuses for every command)."""
    from forkjoin_sim.checks import check_output_file

    check_output_file(path, option, suffixes or None)


#: Suffixes of predicted rows' ``--out``: the format is read off the name.
ROW_SUFFIXES = (".csv", ".json", ".parquet")


def check_rows_out(path: str, option: str = "--out") -> None:
    """Raise `ConfigError` unless predicted rows can be written to ``path`` (a .csv,
    .json or .parquet file; parquet needs pyarrow), checked before any work."""
    check_writable(path, option, ROW_SUFFIXES)
    check_parquet_writer(path)


def emit_rows(args, columns, table) -> None:
    """Predicted rows to ``--out`` (atomically, in the format its suffix names: CSV, a
    JSON list of objects, or parquet, with a line on standard error saying so) or
    else to standard output (CSV); with ``--json``, a JSON list on standard output
    either way (as the other commands that write rows do)."""
    if args.out:
        suffix = str(args.out).lower().rsplit(".", 1)[-1]
        if suffix == "json":
            with atomic_write(args.out) as handle:
                handle.write(_json_rows(table) + "\n")
        elif suffix == "parquet":
            atomic_save(args.out, lambda tmp: _frame(columns, table).to_parquet(
                tmp, index=False))
        else:
            with atomic_write(args.out, newline="") as handle:
                _write_csv(handle, columns, table)
        to_stderr(f"predict: wrote {len(table)} rows to {args.out}")
    if args.json:
        print(_json_rows(table))
    elif not args.out:
        buffer = io.StringIO()
        _write_csv(buffer, columns, table)
        print(buffer.getvalue(), end="")


def _json_rows(table) -> str:
    """The rows as a JSON list of objects, input cells as `_json_cell` reads them."""
    return json_text([{k: _json_cell(v) for k, v in entry.items()} for entry in table])


def _frame(columns, table):
    """The rows as the DataFrame their CSV reads back as (numbers as numbers, empty
    cells missing)."""
    import pandas as pd

    buffer = io.StringIO()
    _write_csv(buffer, columns, table)
    buffer.seek(0)
    return pd.read_csv(buffer)


def _json_cell(value):
    """An echoed input cell as JSON has it: a number as a number, an empty cell as
    null, other text as text."""
    if not isinstance(value, str):
        return value
    if not value.strip():
        return None
    for kind in (int, float):
        try:
            number = kind(value)
        except ValueError:
            continue
        return number if math.isfinite(number) else value
    return value


def _write_csv(handle, columns, table) -> None:
    writer = csv.DictWriter(handle, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for entry in table:
        writer.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v)
                         for k, v in entry.items()})
