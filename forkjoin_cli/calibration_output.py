"""What ``cassandra calibrate`` and ``cassandra predict`` write, shared by the simulated
model's commands (`forkjoin_cli._calibration`) and the closed network's
(`forkjoin_cli._network_calibration`): the output checks and the predicted rows."""

from __future__ import annotations

import csv
import io
import sys

from forkjoin_sim.files.tables import json_rows, write_table


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


def emit_rows(args, columns, table) -> None:
    """Predicted rows to ``--out`` (atomically, in the format its suffix names: CSV, a
    JSON list of objects or parquet, `forkjoin_sim.files.tables`, with a line on
    standard error saying so) or else to standard output (CSV); with ``--json``, a
    JSON list on standard output either way (as the other commands that write rows
    do)."""
    buffer = io.StringIO()
    _write_csv(buffer, columns, table)
    if args.out:
        write_table(args.out, table, buffer.getvalue())
        to_stderr(f"predict: wrote {len(table)} rows to {args.out}")
    if args.json:
        print(json_rows(table))
    elif not args.out:
        print(buffer.getvalue(), end="")


def _write_csv(handle, columns, table) -> None:
    writer = csv.DictWriter(handle, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for entry in table:
        writer.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v)
                         for k, v in entry.items()})
