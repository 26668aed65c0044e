"""Published Cassandra benchmark summaries: one row per measured configuration.

A measurement file is a CSV with the columns

=================  ==========================================================
``operation``      ``read`` or ``write``: the operation this row measures
``consistency``    ONE, TWO, THREE, QUORUM, ALL (LOCAL_ONE, LOCAL_QUORUM as ONE,
                   QUORUM on one data centre) or a whole number k
``threads``        closed loop: client threads (YCSB, cassandra-stress) -- or
``rate``           open loop: operations per second offered (exactly one of the
                   two per row)
``throughput``     measured operations per second (may be empty)
``mean_ms``        measured mean latency (empty in a query file)
``std_ms``, ``p50_ms``, ``p95_ms``, ``p99_ms``      optional measured spread
``read_fraction``  optional: share of reads in the run (default 1 for a read row,
                   0 for a write row; YCSB A 0.5, B 0.95)
=================  ==========================================================

Throughput and rate are per second, latencies in milliseconds; the model's time
unit is the millisecond.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field

from forkjoin_sim.cassandra.model import consistency_quorum
from forkjoin_sim.errors import ConfigError
from forkjoin_sim.options import plain_float

REQUIRED = ("operation", "consistency", "mean_ms")
LOAD = ("threads", "rate")
#: Most client threads a row may have (each is simulated as one closed-loop client).
MAX_THREADS = 10_000
OPTIONAL = ("throughput", "std_ms", "p50_ms", "p95_ms", "p99_ms", "read_fraction")
COLUMNS = REQUIRED + LOAD + OPTIONAL
PERCENTILE_COLUMNS = ("p50_ms", "p95_ms", "p99_ms")
OPERATIONS = ("read", "write")
# LOCAL_* levels ask the same number of replicas within one data centre.
_ALIASES = {"LOCAL_ONE": "ONE", "LOCAL_QUORUM": "QUORUM", "EACH_QUORUM": "QUORUM"}


@dataclass(frozen=True)
class Measurement:
    """One measured configuration (a row of a measurement file)."""

    operation: str
    consistency: str
    threads: int | None = None
    rate: float | None = None
    throughput: float | None = None
    mean_ms: float | None = None
    read_fraction: float | None = None
    extra: dict = field(default_factory=dict, compare=False)
    raw: dict = field(default_factory=dict, compare=False)

    @property
    def reads(self) -> float:
        """Share of reads in the run (default: the row's own operation only)."""
        if self.read_fraction is not None:
            return self.read_fraction
        return 1.0 if self.operation == "read" else 0.0

    @property
    def closed(self) -> bool:
        return self.threads is not None

    def label(self) -> str:
        load = f"{self.threads} threads" if self.closed else f"{self.rate:g}/s"
        return f"{self.operation} {self.consistency} {load}"


def _number(text: str, column: str, where: str, whole: bool = False) -> float | None:
    text = (text or "").strip()
    if not text:
        return None
    try:
        value = plain_float(text)
    except ValueError:
        raise ConfigError(f"{where}: {column}={text!r} is not a number; write e.g. "
                          f"{column}=12.5 or leave it empty") from None
    if not math.isfinite(value) or value < 0:
        raise ConfigError(f"{where}: {column}={text!r} must be a finite number >= 0")
    if whole and value != int(value):
        raise ConfigError(f"{where}: {column}={text!r} must be a whole number")
    return value


def parse_row(row: dict, replicas: int, where: str, need_mean: bool) -> Measurement:
    """One validated `Measurement` from a CSV row (``where`` names it in errors)."""
    operation = (row.get("operation") or "").strip().lower()
    if operation not in OPERATIONS:
        raise ConfigError(f"{where}: operation={row.get('operation')!r} is unknown; use "
                          "read or write")
    level = (row.get("consistency") or "").strip().upper()
    level = _ALIASES.get(level, level)
    try:
        consistency_quorum(level, replicas)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    values = {c: _number(row.get(c), c, where, whole=(c == "threads"))
              for c in COLUMNS if c not in ("operation", "consistency")}
    if (values["threads"] is None) == (values["rate"] is None):
        raise ConfigError(f"{where}: give exactly one of threads (closed loop: client "
                          "threads) and rate (open loop: operations per second)")
    if values["threads"] is not None and not 1 <= values["threads"] <= MAX_THREADS:
        raise ConfigError(f"{where}: threads must be a whole number in 1..{MAX_THREADS:,} "
                          "(client threads of one benchmark run)")
    if values["rate"] is not None and values["rate"] <= 0:
        raise ConfigError(f"{where}: rate must be > 0 operations per second")
    if need_mean and not values["mean_ms"]:
        raise ConfigError(f"{where}: mean_ms is missing or 0; a row to fit needs its "
                          "measured mean latency in milliseconds")
    if values["throughput"] == 0:
        raise ConfigError(f"{where}: throughput 0; leave it empty if not measured")
    share = values["read_fraction"]
    if share is None:
        share = 1.0 if operation == "read" else 0.0
    if share > 1 or (operation == "read" and share == 0) or \
            (operation == "write" and share == 1):
        raise ConfigError(f"{where}: read_fraction={share:g} must lie in [0, 1] and "
                          f"leave some {operation}s in the run")
    extra = {c: values[c] for c in ("std_ms",) + PERCENTILE_COLUMNS
             if values[c] is not None}
    return Measurement(operation, level,
                       None if values["threads"] is None else int(values["threads"]),
                       values["rate"], values["throughput"], values["mean_ms"],
                       float(share), extra, dict(row))


def read_measurements(path: str, replicas: int,
                      need_mean: bool = True) -> tuple[list[Measurement], list[str]]:
    """The validated rows of a measurement CSV, and its column names in file order.

    Raises `ConfigError` (one message, naming the row) on a missing or unknown
    column, an unknown operation or consistency level, a non-numeric or negative
    value, or a row with both or neither of ``threads`` and ``rate``.
    """
    from forkjoin_sim.options import check_input_file

    check_input_file(path, "measurement file")  # missing, a directory, a FIFO, not UTF-8
    try:
        with open(path, newline="") as handle:
            reader = csv.DictReader(handle)
            names = [n.strip() for n in (reader.fieldnames or [])]
            rows = list(reader)
    except FileNotFoundError:
        raise ConfigError(f"measurement file {path} does not exist") from None
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise ConfigError(f"cannot read measurement file {path}: {exc}") from None
    unknown = [n for n in names if n not in COLUMNS]
    if unknown:
        raise ConfigError(f"{path}: unknown column(s) {', '.join(unknown)}; use "
                          f"{', '.join(COLUMNS)}")
    missing = [c for c in REQUIRED if c not in names]
    if missing or not any(c in names for c in LOAD):
        missing += [] if any(c in names for c in LOAD) else ["threads or rate"]
        raise ConfigError(f"{path}: missing column(s) {', '.join(missing)}; the header "
                          f"needs {', '.join(REQUIRED)} and threads or rate")
    if not rows:
        raise ConfigError(f"{path} has a header but no rows")
    out = []
    for number, row in enumerate(rows, start=2):
        row = {(k or "").strip(): v for k, v in row.items()}
        if None in row.values() or "" in row:
            raise ConfigError(f"{path} line {number}: the row has a different number of "
                              "fields than the header")
        out.append(parse_row(row, replicas, f"{path} line {number}", need_mean))
    return out, names
