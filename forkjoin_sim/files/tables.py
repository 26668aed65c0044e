"""Rows of results written as a table: CSV, JSON or parquet, the format read off the
file name's suffix, whole or not at all (`forkjoin_sim.files.io`).

Each command keeps its own CSV text (its columns and number formatting); JSON and
parquet are made from the same rows, with every digit: JSON as a list of objects,
parquet as a table (numbers as numbers, empty cells missing).
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

from forkjoin_sim.checks import check_output_file
from forkjoin_sim.files.io import atomic_save, atomic_write, check_parquet_writer, \
    json_text

#: The suffixes a table of rows may be written to.
TABLE_SUFFIXES = (".csv", ".json", ".parquet")


def check_table_out(path, option: str) -> None:
    """Raise `ConfigError` unless a table can be written to ``path`` (one of
    `TABLE_SUFFIXES`, writable, parquet only with pyarrow), before any work."""
    check_output_file(path, option, suffixes=TABLE_SUFFIXES)
    check_parquet_writer(path)


def json_rows(rows: list[dict]) -> str:
    """The rows as a JSON list of objects (`json_cell` for each value; a number that
    is not finite is null, as in every JSON the project writes)."""
    return json_text([{k: json_cell(v) for k, v in row.items()} for row in rows])


def json_cell(value):
    """A value as JSON has it: text that reads as a finite number (a cell echoed from
    an input file) as that number, an empty cell as null, other text as text, any
    other value as it is."""
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


def table_frame(rows: list[dict], columns: list[str]):
    """The rows as a DataFrame with every digit: values as `json_cell` reads them
    (numbers as numbers, empty cells missing; a column of nothing but empty cells as
    missing numbers); a column of numbers and text (a cell such as 'inf' among
    numbers) as text, which parquet can hold."""
    import pandas as pd

    frame = pd.DataFrame([{c: json_cell(row.get(c)) for c in columns} for row in rows],
                         columns=columns)
    for column in frame.columns[frame.dtypes == object]:
        kinds = {type(v) for v in frame[column] if v is not None and v == v}
        if not kinds:  # nothing in it: missing numbers, as a CSV reader takes them
            frame[column] = frame[column].astype(float)
        elif len(kinds) > 1:
            frame[column] = [None if v is None or v != v else str(v)
                             for v in frame[column]]
    return frame


def _columns(csv_text: str) -> list[str]:
    """The column names of a CSV text's header."""
    return next(csv.reader(io.StringIO(csv_text)))


def write_table(path, rows: list[dict], csv_text: str) -> None:
    """``rows`` to ``path`` in the format its suffix names; ``csv_text`` is the same
    rows as the command writes them in CSV."""
    suffix = Path(path).suffix.lower()
    if suffix == ".json":
        with atomic_write(path, encoding="utf-8") as handle:
            handle.write(json_rows(rows) + "\n")
    elif suffix == ".parquet":
        frame = table_frame(rows, _columns(csv_text))
        atomic_save(path, lambda tmp: frame.to_parquet(tmp, index=False))
    else:
        with atomic_write(path, encoding="utf-8", newline="") as handle:
            handle.write(csv_text)
