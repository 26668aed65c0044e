"""The columns of a measurement file (one row per measured configuration), shared by
the CSV reader (`measurements`) and the readers of benchmark output
(`benchmark_formats`)."""

import csv
import io
import math
import re

from forkjoin_sim.checks import input_encoding, plain_float
from forkjoin_sim.errors import ConfigError

REQUIRED = ("operation", "consistency", "mean_ms")
LOAD = ("threads", "rate")
OPTIONAL = ("throughput", "std_ms", "p50_ms", "p95_ms", "p99_ms", "read_fraction",
            "think_ms", "run")
#: Columns of text, not numbers: a run's name (a mixed run's rows share it).
TEXT_COLUMNS = ("operation", "consistency", "run")
COLUMNS = REQUIRED + LOAD + OPTIONAL
PERCENTILE_COLUMNS = ("p50_ms", "p95_ms", "p99_ms")
OPERATIONS = ("read", "write")
#: Most client threads a row may have: a bound on typing slips (the closed-network
#: structures take any count; `SIMULATED_MAX_THREADS` is the simulated ones' own).
MAX_THREADS = 1_000_000
#: Most client threads where a structure is simulated (``--structure simulated``; the
#: mixes of the structures without lanes): each thread is a client of its own there,
#: so a run's cost grows with them.
SIMULATED_MAX_THREADS = 10_000
#: Field separators a CSV (a measurement file, a side table) may use, as a spreadsheet
#: saves it: commas, or semicolons (a decimal-comma locale) or tabs.
SEPARATORS = (",", ";", "\t")


def header_line(text: str) -> str:
    """The first line of a CSV text that is neither blank nor a comment (``#`` first):
    its header ("" if none)."""
    return next((line for line in text.splitlines()
                 if line.strip() and not line.lstrip().startswith("#")), "")


def csv_records(path) -> tuple[list[str] | None, list[tuple[int, list[str]]], str]:
    """The header names of a CSV file (stripped; None if it holds no line), its rows as
    (line number, fields) and its field separator (`separator_of` its header),
    skipping rows with no field given (blank lines, a spreadsheet's ``,,,,``) and
    comment lines (``#`` first). UTF-8 with or without a byte-order mark (a
    spreadsheet's "CSV UTF-8"), or UTF-16 with one (Windows PowerShell's)."""
    with open(path, newline="", encoding=input_encoding(path)) as handle:
        text = handle.read()
    # the header's most frequent separator (a name may hold a comma or a semicolon)
    separator = separator_of(header_line(text))
    header, records = None, []
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=separator)
    end = 0
    for fields in reader:
        line, end = end + 1, reader.line_num  # a quoted value may span lines
        if not any(field.strip() for field in fields) or (
                fields and fields[0].lstrip().startswith("#")):
            continue
        if header is None:
            header = [field.strip() for field in fields]
        else:
            records.append((line, fields))
    return header, records, separator


def separator_of(line: str) -> str:
    """The field separator of a CSV whose header is ``line``: its most frequent of
    `SEPARATORS` (a name may hold another), a comma where it has none."""
    return max(SEPARATORS, key=line.count) if any(c in line for c in SEPARATORS) else ","


def whole_threads(value, where: str, what: str = "threads") -> int:
    """Client threads of one benchmark run: a whole number in 1..`MAX_THREADS`, also
    written as one (``50.0``), or a `ConfigError` naming ``where`` and ``what``."""
    text = str(value).strip()
    try:
        number = plain_float(text)
    except ValueError:
        number = math.nan
    if not (math.isfinite(number) and number == int(number)
            and 1 <= number <= MAX_THREADS):
        raise ConfigError(f"{where}: {what}={text!r} must be a whole number in "
                          f"1..{MAX_THREADS:,} (client threads of one benchmark run)"
                          + separator_hint(text, whole=True))
    return int(number)


def separator_hint(text: str, whole: bool = False) -> str:
    """How to write a number copied with thousands separators (``'7,453.231'``,
    ``'1,000'``), for the end of its refusal, or nothing for other text. A lone comma
    may also be a decimal comma (``'1,000'`` one, or a thousand): then both readings
    are named, the decimal one only where it is a number of the kind asked for
    (``whole``: a count)."""
    if not re.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?", text):
        return ""
    hint = f"; write {text.replace(',', '')} without the thousands separator"
    if text.count(",") == 1 and "." not in text:
        decimal = text.replace(",", ".")
        if whole:
            decimal = text[:-4] if text.endswith(",000") else None
        if decimal:
            hint += f" (or {decimal} if the comma is a decimal comma)"
    return hint


def stripped_cell(cell):
    """A cell as read: without the blanks around it where it is text (a
    spreadsheet's " 300 " is 300, " quorum " QUORUM), so that output joins on it."""
    return cell.strip() if isinstance(cell, str) else cell
