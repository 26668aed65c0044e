"""Published Cassandra benchmark summaries: one row per measured configuration.

A measurement file is a CSV with the columns

=================  ==========================================================
``operation``      ``read`` or ``write``: the operation this row measures
``consistency``    ONE, TWO, THREE, QUORUM, ALL or a whole number k; LOCAL_ONE and
                   LOCAL_QUORUM are read as ONE and QUORUM (they ask the same
                   replicas of the client's data centre, the one ``replicas``
                   describes; a model placed in data centres refuses them, its
                   levels counting every replica); EACH_QUORUM is refused (see
                   below)
``threads``        closed loop: client threads (YCSB, cassandra-stress) -- or
``rate``           open loop: operations per second offered (exactly one of the
                   two per row)
``throughput``     measured operations per second (may be empty)
``mean_ms``        measured mean latency (empty in a query file)
``std_ms``, ``p50_ms``, ``p95_ms``, ``p99_ms``      optional measured spread
``read_fraction``  optional: share of reads in the run (default 1 for a read row,
                   0 for a write row; YCSB A 0.5, B 0.95)
``run``            optional: a name shared by the rows of one mixed run (its read
                   row and its write row), where runs of one load and mix differ
                   in something else (another read level, another cluster)
``think_ms``       optional, closed loop only: each client's pause between a reply
                   and its next request, as the benchmark was set up (JMeter's
                   timers, YCSB's ``-target`` per thread does not count); where a
                   row has no throughput, its clients' cycle is then known
                   (throughput = threads / (mean + think), Little's law)
=================  ==========================================================

Throughput and rate are per second, latencies in milliseconds (the model's time
unit); a time column may instead end in ``_us``, ``_ns`` or ``_s`` (``mean_us``,
``p99_s``) and is converted by moving the decimal point. Fields may be separated by
commas or, as spreadsheets in decimal-comma locales save them, by semicolons or tabs;
then numbers are read in the file's own locale: the decimal mark the file's numbers
show (``2,5``, ``0.654``, ``18.433,5``), with semicolons a comma where none shows
(``5,425`` is 5.425 and, beside it, ``18.433`` eighteen thousand), and a number that
reads both ways in a file that shows neither (``1,000`` with tabs, ``1.250`` with
semicolons and no comma) is refused, as is a file whose numbers show both; lines starting with ``#`` are comments. A table's usual
spellings are read as meant: ``update``, ``insert``, ``upsert`` are writes; a driver's
``ConsistencyLevel.ONE`` or ``CL.ONE`` is ONE; ``-``, ``n/a`` and the like are a value
not given; a value may carry its column's own unit (``5.4 ms``, ``7453 ops/s``), a
read fraction a per cent sign (``50%``), and a header name its unit in brackets
(``Mean latency (ms)``, ``Throughput [ops/s]``, ``Consistency Level``, ``CL``:
`header_name`); a units row under the header (``,,n,ops/s,ms``) is skipped, and a
title line above it is named. ANY, SERIAL and LOCAL_SERIAL are refused (the model does
not describe them). Header names are
read regardless of case and surrounding
spaces (``Mean_ms`` is ``mean_ms``), values too (``Read,one``); blank lines and rows
whose every field is empty (``,,,,`` from a spreadsheet) are skipped, and errors name
a row by its line in the file (in benchmark output, by its result's number, with the
output and its side table line when a side table names the outputs).

EACH_QUORUM waits for a quorum of replicas in every data centre: with several, a
wide-area round trip that neither the one-data-centre model nor ``--datacentres`` (a
quorum of all replicas, wherever they are) describes. Reading it as QUORUM would fit
that round trip to the local replicas, so such a row is refused; in one data centre
it equals QUORUM and can be written so.

Beyond each value's own range a row must be possible: ``p50_ms <= p95_ms <= p99_ms``;
a mean of at least 1 microsecond (one past `SLOWEST_MEAN_MS`, 10 s, is read with a
warning); in a closed loop at most ``threads`` requests in
flight by Little's law (``throughput * mean_ms / 1000``, each value taken at the low
end of its printed rounding: cassandra-stress prints 0.45 ms as 0.5), up to a factor
1 + `IN_FLIGHT_REFUSED` (past it, a unit error); in an open loop a throughput at most
that factor over the offered ``rate``. Rows that are possible but suspect are read
with a warning: past 1 + `IN_FLIGHT_SLACK` of that bound (noise, or values read off a
figure), under `FEW_IN_FLIGHT` of the threads in flight (long think time, or a unit
error), and two rows of one configuration whose results differ by more than
`CONFLICT_FACTOR`.
"""

from __future__ import annotations

import csv
import math
import re
import warnings
from collections import Counter
from dataclasses import dataclass, field, replace
from decimal import Decimal, InvalidOperation

from forkjoin_sim.cassandra.model import CONSISTENCY_LEVELS, consistency_quorum
from forkjoin_sim.errors import ConfigError, counted
from forkjoin_sim.checks import plain_float
from forkjoin_sim.laws.empirical import UNITS
from sizing.benchmark_formats import benchmark_rows

from sizing.columns import (COLUMNS, LOAD, MAX_THREADS, OPERATIONS, SEPARATORS,  # noqa: F401
                            OPTIONAL, PERCENTILE_COLUMNS, REQUIRED, TEXT_COLUMNS,  # (public here)
                            csv_records, separator_hint, whole_threads)
#: Smallest mean latency a row may have, in ms (1 microsecond): no database operation
#: through a client driver is faster, so a smaller mean is a unit error (seconds).
FASTEST_MEAN_MS = 1e-3
#: Mean latency (ms) past which a row is suspect: Cassandra's longest default request
#: timeout (range_request_timeout, 10 s; reads 5 s, writes 2 s) ends a request
#: before it (a warning, not a refusal: a timeout may have been raised).
SLOWEST_MEAN_MS = 10_000.0
#: Share by which throughput * mean may exceed the threads (closed loop), or
#: throughput the offered rate (open loop), unwarned: warm-up, timer jitter (beyond the
#: rounding of the printed values, which is allowed for apart).
IN_FLIGHT_SLACK = 0.10
#: Share past which the excess is refused as a unit error (microseconds, per minute,
#: several clients summed: factors of 2 and more); between the two a row is read with
#: a warning (noise, or values read off a published figure).
IN_FLIGHT_REFUSED = 0.50
#: Below this share of the threads in flight a closed-loop row is suspect: each thread
#: would wait 100 times as long between requests as for them.
FEW_IN_FLIGHT = 0.01
#: Two rows of one configuration whose mean or throughput differ by more than this
#: factor are suspect (repeat runs of the published JMeter set differ by up to 2.7).
CONFLICT_FACTOR = 2.0
#: Warnings of one kind shown per file (then a count of the rest).
MAX_WARNINGS = 5
# LOCAL_* levels ask the same number of replicas within one data centre.
_ALIASES = {"LOCAL_ONE": "ONE", "LOCAL_QUORUM": "QUORUM"}
#: The consistency levels a column of a paper's table may be named after.
LEVEL_NAMES = frozenset({"ONE", "TWO", "THREE", "QUORUM", "ALL", "ANY", "EACH_QUORUM",
                         "LOCAL_SERIAL", "SERIAL"})
#: A driver's name of a level (``ConsistencyLevel.ONE``, ``CL.QUORUM``): its prefix.
_DRIVER_PREFIX = re.compile(r"^(?:CONSISTENCY_?LEVEL|CL)\s*(?:\.|::|=|:)\s*")
#: Cassandra levels the model does not describe, and why.
UNMODELLED_LEVELS = {
    "ANY": "(a write acknowledged by any node, a hint included) is not described by the "
           "model, whose writes wait for replicas",
    "SERIAL": "is the Paxos level of lightweight transactions, which the model does not "
              "describe",
    "LOCAL_SERIAL": "is the Paxos level of lightweight transactions, which the model "
                    "does not describe"}
#: Operation names of benchmark tables and tools, as the model's two operations.
OPERATION_WORDS = {"reads": "read", "read-only": "read", "select": "read",
                   "writes": "write", "write-only": "write", "update": "write",
                   "insert": "write", "upsert": "write"}


def level_asked(level: str) -> str:
    """The level ``level`` (any case, no blanks) asks as: LOCAL_ONE and LOCAL_QUORUM
    as ONE and QUORUM, a driver's ``ConsistencyLevel.ONE`` or ``CL.ONE`` as ONE, any
    other as written (upper case)."""
    level = _DRIVER_PREFIX.sub("", str(level).upper())
    return _ALIASES.get(level, level)
#: A header line every measurement file may start with, and a row under it.
EXAMPLE_HEADER = "operation,consistency,threads,throughput,mean_ms"
EXAMPLE_ROW = "read,ONE,16,5200,3.1"


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
    #: Where the row was read, as messages name it ("line 14"; "result 3" of benchmark
    #: output); empty for a row not read from a file.
    place: str = field(default="", compare=False)
    #: Closed loop: each client's stated pause between a reply and its next request
    #: (ms); None: not stated.
    think_ms: float | None = None
    #: The name of the run the row was measured in (a mixed run's rows share it);
    #: None: not named.
    run: str | None = None

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
        load = counted(self.threads, "thread") if self.closed else f"{self.rate:g}/s"
        mix = "" if self.reads in (0.0, 1.0) else f", {100 * self.reads:.3g}% reads"
        return f"{self.operation} {self.consistency} {load}{mix}"


#: (missing column, pattern of a header name that may hold it, what to say) for the
#: refusal of a header without a required column.
_LIKELY_NAMES = (
    ("operation", r"^op$|oper|^type$|^kind$",
     "each row's operation, name it operation, read or write"),
    ("consistency", r"^cl$|consist|level",
     "each row's consistency level, name it consistency: ONE, QUORUM, ALL, ..."),
    ("threads or rate", r"client|thread|concurren|user|conn|worker",
     "each run's client threads, name it threads, or rate for an open loop's "
     "offered ops/s"),
    ("mean_ms", r"lat|mean|avg|average",
     "each row's mean latency, name it mean_ms in milliseconds, or mean_us or mean_s"))


#: Words of a spreadsheet's summary row under the measured runs (``Total``,
#: ``Average``): a row of one of these is no run of its own.
SUMMARY_WORDS = frozenset({"total", "totals", "sum", "average", "avg", "mean",
                           "overall", "median", "all runs"})


def _refuse_summary(cells, where: str) -> None:
    """Refuse a row whose ``cells`` hold one of `SUMMARY_WORDS` as a summary row."""
    word = next((cell.strip() for cell in cells if isinstance(cell, str)
                 and cell.strip().lower().rstrip(":") in SUMMARY_WORDS), None)
    if word:
        raise ConfigError(f"{where}: a summary row ({word!r}), not a measured run; "
                          "delete it or start it with #")


#: What a spreadsheet or a paper's table writes in a cell that holds no value.
NOT_GIVEN = frozenset({"-", "\u2013", "\u2014", "n/a", "na", "none", "null", "nan", "?"})
#: The unit a value of a column may carry after it (``5.4 ms``, ``7453 ops/s``).
_UNIT_WRITTEN = {"ms": ("ms",), "throughput": ("ops/s", "op/s", "/s"),
                 "rate": ("ops/s", "op/s", "/s")}
#: Each column's example value, for messages.
_EXAMPLE = {"read_fraction": "0.5", "threads": "16", "throughput": "5200"}


def _number(text: str, column: str, where: str) -> float | None:
    """The value of a numeric cell: None where it is empty or says none is given
    (`NOT_GIVEN`); a unit written after it dropped where it is the column's own, a
    read fraction in per cent divided by 100; refused if it is not a number >= 0."""
    text = (text or "").strip()
    if not text or text.lower() in NOT_GIVEN:
        return None
    units = _UNIT_WRITTEN.get("ms" if column.endswith("_ms") else column, ())
    number = next((text[:-len(u)].strip() for u in units if text.lower().endswith(u)
                   and text[:-len(u)].strip()), text)
    scale = 1.0
    if column == "read_fraction" and number.endswith("%"):
        number, scale = number[:-1].strip(), 0.01
    try:
        value = plain_float(number) * scale
    except ValueError:
        unit = re.search(r"[^\d\s.,+-].*$", text)
        unit = unit.group(0).strip() if unit and re.match(r"[\d.]", text) else None
        time_unit = _HEADER_UNITS.get(unit, unit)
        empty = ("empty only in a file of rows to predict" if column == "mean_ms" else
                 "or leave it empty where not measured")
        fix = (separator_hint(text)[2:]
               or (f"that is in {unit}, not ms: name the column "
                   f"{column.removesuffix('_ms')}_{time_unit} (its times in {unit}) or "
                   "write them in ms" if column.endswith("_ms") and time_unit in UNITS
                   and time_unit != "ms" else "")
               or (f"write it as a plain number of operations per second (not {unit})"
                   if unit and column in ("throughput", "rate") else "")
               or (f"write it without {unit!r}: the column's name gives its unit"
                   if unit else "")
               or f"write e.g. {column}={_EXAMPLE.get(column, '12.5')} ({empty})")
        raise ConfigError(f"{where}: {column}={text!r} is not a number; {fix}") from None
    if not math.isfinite(value) or value < 0:
        raise ConfigError(f"{where}: {column}={text!r} must be a finite number "
                          + ("> 0" if column in ("mean_ms", "rate") else ">= 0"))
    return value


def parse_row(row: dict, replicas: int, where: str, need_mean: bool,
              notes: list[str] | None = None) -> Measurement:
    """One validated `Measurement` from a CSV row (``where`` names it in errors);
    doubts about a possible but suspect row are appended to ``notes`` (warned about
    when not given)."""
    operation = (row.get("operation") or "").strip().lower()
    operation = OPERATION_WORDS.get(operation, operation)
    if operation not in OPERATIONS:
        _refuse_summary(row.values(), where)
        if not operation:
            raise ConfigError(f"{where}: operation is empty; give read or write (each "
                              "row is one measured run)")
        raise ConfigError(f"{where}: operation={row.get('operation')!r} is unknown; use "
                          "read or write")
    level = level_asked((row.get("consistency") or "").strip())
    if level in UNMODELLED_LEVELS:
        raise ConfigError(f"{where}: {level} {UNMODELLED_LEVELS[level]}; leave the row "
                          "out")
    if level == "EACH_QUORUM":
        raise ConfigError(f"{where}: EACH_QUORUM waits for a quorum in every data "
                          "centre, which the model does not describe (--datacentres "
                          "models a quorum of all replicas); if the cluster is in one "
                          "data centre it equals QUORUM: write QUORUM (for benchmark "
                          "output, in a side table's consistency cell), else leave the "
                          "row out")
    try:
        consistency_quorum(level, replicas)
    except ConfigError as exc:
        # a name this reader does not know: say the other names it reads
        also = ("" if level.strip().isdigit() or level.strip() in CONSISTENCY_LEVELS
                else " (LOCAL_ONE and LOCAL_QUORUM are read as ONE and QUORUM)")
        raise ConfigError(f"{where}: {exc}{also}") from None
    values = {c: _number(row.get(c), c, where)
              for c in COLUMNS if c not in TEXT_COLUMNS + ("threads",)}
    threads = (row.get("threads") or "").strip()
    values["threads"] = whole_threads(threads, where) if threads else None
    if (values["threads"] is None) == (values["rate"] is None):
        raise ConfigError(f"{where}: give exactly one of threads (closed loop: client "
                          "threads) and rate (open loop: operations per second)")
    if values["rate"] is not None and values["rate"] <= 0:
        raise ConfigError(f"{where}: rate must be > 0 operations per second")
    if values["rate"] is not None and values["think_ms"]:
        raise ConfigError(f"{where}: think_ms is a closed loop's pause between a reply "
                          "and the next request; an open loop (rate) offers its "
                          "requests whatever the replies: leave think_ms empty")
    if need_mean and not values["mean_ms"]:
        raise ConfigError(f"{where}: mean_ms is missing or 0; a row to fit needs its "
                          "measured mean latency in milliseconds")
    if values["throughput"] == 0:
        raise ConfigError(f"{where}: throughput 0; leave it empty if not measured")
    share = values["read_fraction"]
    if share is None:
        share = 1.0 if operation == "read" else 0.0
    if share > 1:
        raise ConfigError(f"{where}: read_fraction={share:g} exceeds 1; it is the share "
                          "of reads in the run, in [0, 1] (YCSB A 0.5, B 0.95)")
    if operation == "read" and share == 0:
        raise ConfigError(f"{where}: read_fraction=0 on a read row says the run had no "
                          "reads; a read row needs read_fraction > 0 (the run's share of "
                          "reads, e.g. 0.5) or empty for a reads-only run")
    if operation == "write" and share == 1:
        raise ConfigError(f"{where}: read_fraction=1 on a write row says the run had no "
                          "writes; a write row needs read_fraction < 1 (the run's share "
                          "of reads, e.g. 0.5) or empty for a writes-only run")
    own_share = share if operation == "read" else 1.0 - share
    doubt = _check_possible(values, where, own_share, row)
    if doubt and notes is None:
        warnings.warn(doubt, UserWarning, stacklevel=2)
    elif doubt:
        notes.append(doubt)
    extra = {c: values[c] for c in ("std_ms",) + PERCENTILE_COLUMNS
             if values[c] is not None}
    return Measurement(operation, level,
                       None if values["threads"] is None else int(values["threads"]),
                       values["rate"], values["throughput"], values["mean_ms"],
                       float(share), extra, dict(row), think_ms=values["think_ms"],
                       run=(row.get("run") or "").strip() or None)


def _half_unit(text, value: float) -> float:
    """Half a unit of the last digit ``text`` (a value as written: '0.5' -> 0.05,
    '4386' -> 0.5; ``value``'s shortest form when there is no text) was rounded to."""
    written = str(value if text is None else text).strip()
    try:
        exponent = Decimal(written).as_tuple().exponent
    except InvalidOperation:
        return 0.0
    return 0.5 * 10.0 ** exponent if isinstance(exponent, int) else 0.0


def _check_possible(values: dict, where: str, own_share: float = 1.0,
                    texts: dict | None = None) -> str | None:
    """Refuse a row no benchmark can have measured; the doubt about a suspect one.

    ``own_share`` is this operation's share of the run's throughput: in a mixed run
    only that share of the operations is in flight with this row's mean latency
    (Little's law per operation), the others with theirs. ``texts``: the row's cells
    as written (their rounding is allowed for)."""
    texts = texts or {}
    given = [(c, values[c]) for c in PERCENTILE_COLUMNS if values[c] is not None]
    for (low_name, low), (high_name, high) in zip(given, given[1:]):
        if low > high:
            raise ConfigError(f"{where}: {low_name}={low:g} > {high_name}={high:g}; "
                              "percentiles cannot decrease (p50 <= p95 <= p99): check "
                              "the header names the columns in the right order")
    mean, throughput = values["mean_ms"], values["throughput"]
    if mean is not None and 0 < mean < FASTEST_MEAN_MS:
        raise ConfigError(f"{where}: mean_ms={mean:g} is under 1 microsecond, faster "
                          "than any database operation; latencies are in milliseconds "
                          f"(was it written in seconds? then mean_ms={mean * 1e3:g})")
    slow = (f"{where}: mean_ms={mean:g} is longer than a Cassandra coordinator lets a "
            f"request wait ({SLOWEST_MEAN_MS / 1000:g} s, its longest default timeout): "
            f"a unit slip? (in microseconds it is mean_ms={mean / 1000:g})"
            if mean is not None and mean > SLOWEST_MEAN_MS else None)
    if throughput is None:
        return slow
    # the smallest values the printed ones can stand for
    low_throughput = throughput - _half_unit(texts.get("throughput"), throughput)
    if values["rate"] is not None:
        rate = values["rate"]
        if low_throughput > (1 + IN_FLIGHT_REFUSED) * rate:
            raise ConfigError(f"{where}: throughput {throughput:g}/s exceeds the offered "
                              f"rate {rate:g}/s; an open loop cannot complete "
                              "more operations than it is offered: check both are per "
                              "second")
        if low_throughput > (1 + IN_FLIGHT_SLACK) * rate:
            return (f"{where}: throughput {throughput:g}/s is "
                    f"{100 * (throughput / rate - 1):.0f}% over the offered rate "
                    f"{rate:g}/s, more than timer noise explains; the row is read as "
                    "measured: check both are per second if it is not noise")
        return slow
    if not mean:
        return slow
    threads = values["threads"]
    low_mean = mean - _half_unit(texts.get("mean_ms"), mean)
    # Little's law (ops/ms * ms), at the low ends of the printed values
    in_flight = own_share * low_throughput * low_mean / 1000.0
    shown = own_share * throughput * mean / 1000.0
    share_text = "" if own_share == 1 else f" x this operation's share {own_share:g}"
    product = (f"throughput {throughput:g}/s{share_text} x mean_ms {mean:g} ms = "
               f"{shown:.4g} requests in flight")
    if in_flight > (1 + IN_FLIGHT_REFUSED) * threads:
        raise ConfigError(f"{where}: {product}, but "
                          f"{counted(threads, 'thread')} can have at most "
                          f"{threads:g} (Little's law); check the units "
                          "(mean in microseconds? throughput per minute or summed over "
                          "several clients?)")
    if in_flight > (1 + IN_FLIGHT_SLACK) * threads:
        return (f"{where}: {product}, {100 * (shown / threads - 1):.0f}% more than "
                f"the {counted(threads, 'thread')} can have (Little's law), more than "
                "rounding or timer noise explains; the row is fitted with no time "
                "outside the latency: check the values if they were read off a figure, "
                "or the units if they were not")
    think = values.get("think_ms")
    if think is not None:
        # the clients' whole cycle, the stated pause included, fills the threads; in
        # a mixed run the cycle's latency is at least this operation's share of it
        cycles = low_throughput * (own_share * low_mean + think) / 1000.0
        if cycles > (1 + IN_FLIGHT_SLACK) * threads:
            return (f"{where}: throughput {throughput:g}/s x (mean_ms {mean:g}"
                    f"{share_text} + think_ms {think:g}) ms = "
                    f"{throughput * (own_share * mean + think) / 1000:.4g} "
                    f"clients' cycles at once, more than the "
                    f"{counted(threads, 'thread')} (Little's law): is think_ms in "
                    "milliseconds, and per client? The row is fitted with its "
                    "measured throughput")
        return slow
    # the doubt is about units, so it reads the row as if every operation took this
    # mean: a rare operation of a mix is not suspect for being rare
    as_if_all = throughput * mean / 1000.0
    if as_if_all < FEW_IN_FLIGHT * threads:
        return (f"{where}: throughput {throughput:g}/s x mean_ms {mean:g} ms = "
                f"{as_if_all:.3g} requests in flight, under {100 * FEW_IN_FLIGHT:g}% of "
                f"the {counted(threads, 'thread')}: each thread "
                "waits over 100 times longer "
                "between requests than for them; unless the clients pause that long "
                "(think time), mean_ms may be in seconds or throughput per minute")
    return slow


def _conflicts(rows: list, lines: list[int], path: str,
               unit: str = "line") -> list[str]:
    """One doubt per pair of rows of one configuration with very different results
    (each row against the first of its configuration; ``lines``: each row's number,
    a ``unit`` of the file)."""
    first, out, copies = {}, [], []
    for line, row in zip(lines, rows):
        # rows of other pauses, or of mixed runs named apart (whose other operation
        # may differ), measure other configurations
        key = (row.operation, row.consistency, row.threads, row.rate, row.reads,
               row.think_ms, row.run if row.reads not in (0.0, 1.0) else None)
        if key not in first:
            first[key] = (row, line)
            continue
        other, other_line = first[key]
        if (other.mean_ms, other.throughput, other.extra) == (row.mean_ms,
                                                              row.throughput, row.extra):
            # two runs may agree on a mean of two digits (5.4 ms), hardly on more
            if row.mean_ms is not None and (row.throughput
                                            or _digits(row.mean_ms) >= COPY_DIGITS):
                copies.append((line, other_line))
            continue
        for column in ("mean_ms", "throughput"):
            a, b = getattr(other, column), getattr(row, column)
            if a and b and max(a, b) > CONFLICT_FACTOR * min(a, b):
                out.append(f"{path} {unit}s {other_line} and {line} measure the same "
                           f"configuration ({row.label()}) but {column} {a:g} and {b:g} "
                           f"differ by more than a factor {CONFLICT_FACTOR:g}; the fit "
                           "will split the difference: check both rows' threads, "
                           "consistency and units")
                break
    if copies:
        shown = ", ".join(f"{line} (of {other})" for line, other in copies[:5])
        more = f" and {len(copies) - 5} more" if len(copies) > 5 else ""
        out.append(f"{path} {unit}s {shown}{more} repeat earlier rows value for value: "
                   "each copy counts again in the fit; if a run was pasted twice, drop "
                   "the copies")
    return out


#: Significant digits of a mean that two runs hardly share by chance: a row that
#: repeats another's mean to as many (or its throughput too) is a copy.
COPY_DIGITS = 3


def _digits(value) -> int:
    """Significant digits of a value as it prints (``5.425`` 4, ``5.4`` 2)."""
    return len(f"{value:.12g}".split("e")[0].replace(".", "").replace("-", "").strip("0"))


def _warn(notes: list[str], shown: int = MAX_WARNINGS) -> None:
    for note in notes[:shown]:
        warnings.warn(note, UserWarning, stacklevel=3)
    if len(notes) > shown:
        warnings.warn(f"... and {len(notes) - shown} more like these", UserWarning,
                      stacklevel=3)


def read_measurements(path: str, replicas: int,
                      need_mean: bool = True) -> tuple[list[Measurement], list[str]]:
    """The validated rows of a measurement file, and its column names (lower case)
    in file order.

    The file is a measurement CSV, or benchmark output as the tool printed it (YCSB's
    summary lines, cassandra-stress's summary; threads and level read from the output),
    or a side table ``file,threads,consistency`` naming such outputs beside it
    (`sizing.benchmark_formats`).

    Columns it does not know are ignored with a warning. Raises `ConfigError` (one
    message, naming the row) on an empty file, a missing (``mean_ms`` only with
    ``need_mean``) or repeated column, an unknown operation or consistency level
    (EACH_QUORUM among them), a non-numeric or
    negative value, a row with both or neither of ``threads`` and ``rate``, or an
    impossible row (see the module docstring); warns about suspect rows.
    """
    from forkjoin_sim.checks import check_input_file

    check_input_file(path, "measurement file")  # missing, a directory, a FIFO, not UTF-8
    try:
        converted = benchmark_rows(path)
        if converted is not None:  # benchmark output as it comes, turned into rows
            names = [c for c in COLUMNS if any(c in row for row in converted)]
            spelt = names
            records = [(number, [row.get(c, "") for c in names])
                       for number, row in enumerate(converted, start=1)]
            # the output has no line per row; a side table's rows say which output
            origins = {number: f" ({row['_from']})" for number, row
                       in enumerate(converted, start=1) if "_from" in row}
            unit = "result"
        else:
            spelt, records = _csv_records(path)
            unit, origins = "line", {}
    except FileNotFoundError:
        raise ConfigError(f"measurement file {path} does not exist") from None
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise ConfigError(f"cannot read measurement file {path}: {exc}") from None
    if spelt is None:
        raise ConfigError(f"measurement file {path} is empty; it needs a header line "
                          f"{EXAMPLE_HEADER} (rate instead of threads for an open loop) "
                          f"and one row per measured configuration, e.g. {EXAMPLE_ROW}")
    names = [header_name(n) for n in spelt]
    if records and not set(names) & set(COLUMNS) and len(
            set(map(header_name, records[0][1])) & set(COLUMNS)) >= 2:
        raise ConfigError(f"{path}: the first line ({', '.join(filter(None, spelt))!r}) "
                          f"is not a header, and {unit} {records[0][0]} looks like it: "
                          "delete the lines above the header or start them with #")
    records = _without_units_row(names, records, path, unit)
    names, spelt, records = _one_row_per_level(names, spelt, records, path, unit,
                                               need_mean)
    written = dict(records)  # each row's fields as written, for messages
    _one_unit_each(names, spelt, path)
    names, records, renamed = _in_ms(names, records)
    # columns without a name (trailing commas) are set aside below, however many
    twice = [n for n, count in Counter(names).items() if count > 1 and n]
    if twice:
        raise ConfigError(f"{path}: column(s) {', '.join(twice)} appear more than once "
                          "in the header (the last would silently win; names are read "
                          "regardless of case); keep one of each")
    # a column without a name or a value (a spreadsheet's trailing separators) is
    # nothing to say
    unknown = [name or f"(column {i + 1}, no name)" for i, name in enumerate(spelt)
               if names[i] not in COLUMNS and (name or any(
                   i < len(cells) and cells[i].strip() for _, cells in records))]
    needed = [c for c in REQUIRED if need_mean or c != "mean_ms"]
    missing = [c for c in needed if c not in names]
    if missing or not any(c in names for c in LOAD):
        if not set(names) & set(COLUMNS):
            _refuse_other_text(path, spelt)
        missing += [] if any(c in names for c in LOAD) else ["threads or rate"]
        hint = (f" ({', '.join(unknown)} is not a column this reader knows: a "
                "misspelling?)" if unknown else "")
        guesses = [f"{found[0]} is not a column this reader knows: if it holds {what}"
                   for column, pattern, what in _LIKELY_NAMES if column in missing
                   for found in [[u for u in unknown if re.search(pattern, u, re.I)]]
                   if found]
        if guesses:
            hint = f" ({'; '.join(guesses)})"
        # a paper's table: a column of mean latencies per level
        levels = {u: re.sub(r"\s*([(\[].*|_(ms|us|ns|s))$", "", u.strip())
                  for u in unknown}
        levels = {u: level for u, level in levels.items()
                  if level_asked(level) in LEVEL_NAMES}
        if "consistency" in missing and levels:
            first = next(iter(levels.values())).upper()
            hint = (f" ({', '.join(levels)} look like one column of mean latencies per "
                    "level: give one row per level and load instead, e.g. "
                    f"read,{first},100,,2.1 under {EXAMPLE_HEADER}; "
                    "pandas does it with df.melt(id_vars=['threads'], "
                    "var_name='consistency', value_name='mean_ms') and an operation "
                    "column)")
        raise ConfigError(f"{path}: missing column(s) {', '.join(missing)}; the header "
                          f"needs {', '.join(needed)} and threads or rate{hint}")
    if unknown:
        # a run id, p999, notes: kept out of the model, said once
        warnings.warn(f"{path}: column(s) {', '.join(unknown)} ignored (the columns "
                      f"read are {', '.join(COLUMNS)})", UserWarning, stacklevel=2)
    if not records:
        raise ConfigError(f"{path} has a header but no rows; add one row per measured "
                          f"configuration, e.g. {EXAMPLE_ROW} under {EXAMPLE_HEADER}")
    out, lines, notes = [], [], []
    for number, fields in records:
        _check_field_count(fields, names, path, unit, number)
        row = {n: v for n, v in zip(names, fields) if n in COLUMNS}
        place = f"{unit} {number}{origins.get(number, '')}"
        operation = (row.get("operation") or "").strip().lower()
        if OPERATION_WORDS.get(operation, operation) not in OPERATIONS:
            _refuse_summary(fields, f"{path} {place}")  # the word may be in any column
        try:
            parsed = parse_row(row, replicas, f"{path} {place}", need_mean, notes)
        except ConfigError as exc:
            raise ConfigError(_as_written(str(exc), renamed, row,
                                          written[number])) from None
        out.append(replace(parsed, place=place))
        lines.append(number)
    _warn([_as_written(note, renamed) for note in notes])
    _warn(_conflicts(out, lines, path, unit))
    if unit == "line" and "mean_ms" not in renamed:
        _warn(_all_too_fast(out, path))
    return out, [n for n in names if n in COLUMNS]


#: Column names of the summary table a cassandra-stress auto run prints at its end
#: (``id, type      total ops,    op/s,    pk/s,   row/s,    mean, ...``; its second
#: name starts with ``type``).
_STRESS_TABLE = frozenset({"id", "op/s", "mean"})


def _refuse_other_text(path, header: list[str]) -> None:
    """Refuse, saying what to give instead, a file that is no measurement CSV (its
    first line, ``header``, names no column this reader knows) and no output
    `benchmark_rows` reads: cassandra-stress's closing summary table saved alone,
    another tool's output."""
    names = {name.strip().lower() for name in header}
    if _STRESS_TABLE <= names and any(name.startswith("type") for name in names):
        raise ConfigError(
            f"{path} is the summary table a cassandra-stress auto run prints at its end, "
            "which does not state the consistency level; give the whole output (from "
            "its settings banner to END), or write its rows as a measurement CSV "
            f"{EXAMPLE_HEADER}: threads from 'id' (4 threadCount), operation from 'type', "
            "throughput from 'op/s', mean_ms from 'mean'")
    if len([name for name in header if name.strip()]) <= 1:
        first = next((name.strip() for name in header if name.strip()), "")
        raise ConfigError(
            f"{path} is neither a measurement CSV (its first line, {first[:40]!r}, is "
            "not comma-, semicolon- or tab-separated column names) nor YCSB or "
            "cassandra-stress output (no "
            "'[OVERALL], Throughput(ops/sec), ...' line, no 'Results:' block); give a "
            f"CSV {EXAMPLE_HEADER} with one row per run (another tool's numbers written "
            "in it), or the complete text YCSB or cassandra-stress printed")


#: A mean latency (ms) below any request's over a network (a round trip within one
#: data centre, 0.1-0.5 ms): a file whose every mean is shorter was likely written in
#: seconds.
NETWORK_FLOOR_MS = 0.05


def _all_too_fast(rows, path) -> list[str]:
    """A warning if every row's mean is under `NETWORK_FLOOR_MS`."""
    means = [row.mean_ms for row in rows if row.mean_ms is not None]
    if not means or max(means) >= NETWORK_FLOOR_MS:
        return []
    return [f"{path}: every mean_ms is under {NETWORK_FLOOR_MS:g} ms (the largest "
            f"{max(means):.3g} ms), shorter than a request over a network takes: if "
            "the means were written in seconds, name the column mean_s (mean_us for "
            "microseconds); the rows are read as milliseconds"]


#: Header names of benchmark tables for the columns (before any unit in brackets).
_HEADER_WORDS = {"consistency level": "consistency", "consistency_level": "consistency",
                 "cl": "consistency",
                 "thread count": "threads", "thread": "threads",
                 "mean": "mean", "mean latency": "mean", "latency mean": "mean",
                 "average latency": "mean", "avg latency": "mean",
                 "mean_latency": "mean", "avg_latency": "mean",
                 "throughput": "throughput", "op rate": "throughput", "ops/s": "throughput",
                 "median": "p50", "p50": "p50", "p95": "p95", "p99": "p99",
                 "95th percentile": "p95", "99th percentile": "p99"}
#: Units a header may give in brackets, for the time columns and the rest.
_HEADER_UNITS = {"ms": "ms", "us": "us", "\u00b5s": "us", "\u03bcs": "us", "ns": "ns",
                 "s": "s", "ops/s": "", "op/s": "", "n": "", "#": "", "1/s": ""}


def header_name(spelt: str) -> str:
    """The column a header name stands for: itself in lower case, or a benchmark
    table's name for it with its unit in brackets (``Mean latency (ms)`` is mean_ms,
    ``Throughput [ops/s]`` throughput, ``Consistency Level`` consistency); a time
    column without a unit keeps its name (the reader asks for one)."""
    name = spelt.strip().lower()
    if name in COLUMNS:
        return name
    match = re.fullmatch(r"(.*?)\s*[(\[]\s*([^)\]]*?)\s*[)\]]", name)
    base, unit = (match.group(1), match.group(2)) if match else (name, None)
    if unit is not None and unit not in _HEADER_UNITS:
        return name
    suffix = re.search(r"_(ms|us|ns|s)$", base)
    if suffix:  # avg_latency_ms: the unit in the name
        if unit is not None and _HEADER_UNITS[unit] != suffix.group(1):
            return name  # two units: the reader asks which
        base, unit = base[:suffix.start()], suffix.group(1)
    base = _HEADER_WORDS.get(base, base)
    if base in ("mean", "std", "p50", "p95", "p99"):
        unit = _HEADER_UNITS.get(unit) if unit else None
        return f"{base}_{unit}" if unit else name
    if base in COLUMNS and not _HEADER_UNITS.get(unit or ""):
        return base
    return name


def _check_field_count(fields, names, path, unit, number) -> None:
    """Refuse a row of another number of fields than the header has (empty fields past
    the header's last column, a trailing separator, are no data and are let be)."""
    if len(fields) > len(names) and not any(f.strip() for f in fields[len(names):]):
        return
    if len(fields) != len(names):
        fix = ("a value with a comma (a decimal comma?) must be quoted"
               if len(fields) > len(names) else
               "give every column a field, left empty if not measured")
        raise ConfigError(f"{path} {unit} {number}: the row has a different number "
                          f"of fields than the header ({len(fields)}, not "
                          f"{len(names)}); {fix}")


def _level_columns(spelt) -> dict[int, tuple[str, str | None]]:
    """The columns of a paper's table named after a consistency level (``ONE``,
    ``QUORUM (ms)``, ``ALL_us``): index -> (the level as named, its time unit, None
    where the name gives none)."""
    out = {}
    for i, name in enumerate(spelt):
        name = (name or "").strip()
        match = re.fullmatch(r"(.*?)\s*(?:[(\[]\s*([^)\]]*?)\s*[)\]]|_(ms|us|ns|s))?",
                             name)
        level, unit = match.group(1), match.group(2) or match.group(3)
        if level and level_asked(level) in LEVEL_NAMES and (
                unit is None or unit.lower() in _HEADER_UNITS):
            out[i] = (level, None if unit is None else _HEADER_UNITS[unit.lower()])
    return out


def _one_row_per_level(names, spelt, records, path, unit, need_mean):
    """A paper's table with a column of mean latencies per level (``threads,ONE
    (ms),QUORUM (ms),ALL (ms)``, with an ``operation`` column) as one row per level
    and load, said in a warning; any other table as it is. Each new row is named by
    its line and level column (``line 3, QUORUM (ms)``); a level cell left empty (or
    ``-``, `NOT_GIVEN`) is a level not measured there (in rows to predict: a row to
    predict)."""
    levels = _level_columns(spelt)
    if not levels or "consistency" in names or any(
            re.fullmatch(r"mean_(ms|us|ns|s)|mean", n or "") for n in names):
        return names, spelt, records
    units = {u for _, u in levels.values()}
    listed = ", ".join(spelt[i].strip() for i in levels)
    if None in units or len(units) > 1:
        raise ConfigError(f"{path}: columns {listed} look like one column of mean "
                          "latencies per level, but their names do not give one unit: "
                          "name them with it, e.g. ONE (ms), QUORUM (ms), ALL (ms)")
    if "operation" not in names:
        raise ConfigError(f"{path}: columns {listed} look like one column of mean "
                          "latencies per level; add a column operation (read or write) "
                          "to say what they measured, e.g. operation,threads,"
                          + ",".join(spelt[i].strip() for i in levels))
    if "throughput" in names:
        raise ConfigError(f"{path}: a throughput column beside one latency column per "
                          f"level ({listed}) does not say which level it measured: give "
                          "one row per level and load instead, operation,consistency,"
                          "threads,throughput,mean_ms")
    (time,) = units
    keep = [i for i in range(len(spelt)) if i not in levels]
    out = []
    for number, fields in records:
        _check_field_count(fields, spelt, path, unit, number)
        for i, (level, _) in levels.items():
            # '-' and the like are a level not measured, as an empty cell is
            if fields[i].strip().lower() not in NOT_GIVEN | {""} or not need_mean:
                out.append((f"{number}, {spelt[i].strip()}",
                            [fields[j] for j in keep] + [level, fields[i]]))
    warnings.warn(f"{path}: columns {listed} read as one mean latency (in {time}) per "
                  f"level: {len(out)} rows of one level and load each", UserWarning,
                  stacklevel=3)
    return ([names[j] for j in keep] + ["consistency", f"mean_{time}"],
            [spelt[j] for j in keep] + ["consistency", f"mean_{time}"], out)


def _without_units_row(names, records, path, unit):
    """The records without a units row under the header (``,,n,ops/s,ms``: every cell
    given a unit or a count's mark, none a number), which a table copied with its units
    has; refused where a time column's unit is not the one its name gives."""
    if not records:
        return records
    line, cells = records[0]
    marks = [re.sub(r"^[(\[]\s*|\s*[)\]]$", "", c.strip().lower()) for c in cells]
    if not any(marks) or not all(m in _HEADER_UNITS or m in ("", "%", "-") for m in marks):
        return records
    for name, mark in zip(names, marks):
        time = re.fullmatch(r"(mean|std|p50|p95|p99)_(ms|us|ns|s)", name)
        if time and _HEADER_UNITS.get(mark, time.group(2)) not in ("", time.group(2)):
            raise ConfigError(f"{path} {unit} {line} gives {name}'s unit as {mark}: "
                              f"name the column {time.group(1)}_{_HEADER_UNITS[mark]} "
                              "(or give its times in the unit its name says)")
    return records[1:]


#: Times given in another unit, by the suffix of a time column's name (mean_us,
#: p99_s): the power of ten to milliseconds, from the units empirical laws read.
UNIT_SUFFIXES = {f"_{unit}": round(math.log10(seconds / UNITS["ms"]))
                 for unit, seconds in UNITS.items() if unit != "ms"}
TIME_COLUMNS = ("mean_ms", "std_ms", *PERCENTILE_COLUMNS, "think_ms")


def _one_unit_each(names: list[str], spelt: list[str], path: str) -> None:
    """Refuse two columns that give one time in different units (``think_s`` beside
    ``think_ms``): one of them would be dropped, and which one says nothing."""
    for base in TIME_COLUMNS:
        stem = base.removesuffix("_ms")
        given = [i for i, name in enumerate(names)
                 if name == base or name in {stem + suffix for suffix in UNIT_SUFFIXES}]
        if len({names[i] for i in given}) > 1:
            raise ConfigError(f"{path}: columns {' and '.join(spelt[i] for i in given)} "
                              f"give one time ({base}) in different units; keep one")


def _in_ms(names: list[str], records: list) -> tuple[list[str], list, dict]:
    """Time columns named in microseconds, nanoseconds or seconds (``mean_us``) as
    the ``_ms`` columns they are, their values converted by moving the decimal point
    (so the digits written, which the rounding checks read, stay as written); other
    columns as given. Also, per converted column, its index and the name it was
    written under."""
    scaled, renamed = {}, {}
    for i, name in enumerate(names):
        for suffix, power in UNIT_SUFFIXES.items():
            base = name[:-len(suffix)] + "_ms" if name.endswith(suffix) else None
            if base in TIME_COLUMNS and base not in names:
                names[i], scaled[i], renamed[base] = base, power, (i, name, power)
    if not scaled:
        return names, records, renamed

    def converted(text: str, power: int) -> str:
        try:
            value = Decimal(text.strip())
        except InvalidOperation:
            return text  # not a number: the row's check names it
        # Decimal's own text keeps the digits written (0.5 s is 5E+2 ms, to the
        # nearest 100 ms, which the rounding checks read; "500" would say 1 ms)
        return str(value.scaleb(power)) if value.is_finite() else text

    return names, [(number, [converted(f, scaled[i]) if i in scaled and f.strip()
                             else f for i, f in enumerate(fields)])
                   for number, fields in records], renamed


def _as_written(message: str, renamed: dict, row: dict | None = None,
                fields: list[str] | None = None) -> str:
    """A message about a row (``row``: its fields as read, ``fields``: as written) in
    the words of its file, for each converted time column (`_in_ms`): the text it
    quotes is the text written, a value it states as ``mean_ms=V`` is given in the
    column's own unit, its guesses at a unit slip in milliseconds are left out (the
    column names its unit), and any other mention names the column's source."""
    for base, (index, name, power) in renamed.items():
        quoted = (f"{base}={row[base].strip()!r}" if row is not None and base in row
                  and index < len(fields) else None)
        if quoted is not None and quoted in message:
            message = message.replace(quoted, f"{name}={fields[index].strip()!r}")
            # the unit hint of a cell in a column named in its own unit: said in that
            # unit (mean_us '2s': 'not us'), or, the cell's unit being the column's,
            # that the name gives it (think_s '0.1s')
            own = name.rsplit("_", 1)[-1]

            def hint(found):
                if _HEADER_UNITS.get(found.group(1), found.group(1)) == own:
                    return f"write it without its unit: the column's name ({name}) gives it"
                return found.group(0).replace("not ms", f"not {own}").replace(
                    "write them in ms", f"write them in {own}")
            message = re.sub(r"that is in (\S+), not ms: name the column \S+ \(its times "
                             r"in \S+\) or write them in ms", hint, message)
            message = re.sub(rf"\b{base}\b", name, message)
            continue
        if base not in message:
            continue
        message = _UNIT_SLIP.sub("", message)
        message = re.sub(rf"\b{base}=({_NUMBER})",
                         lambda m: f"{name}={float(m.group(1)) * 10.0 ** -power:g}",
                         message)
        message = re.sub(rf"\b{base}\b", f"{base} (from {name})", message)
    return message


#: A number as messages print it (``:g``).
_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?"
#: The hints of a row's messages that guess the unit of a column in ms.
_UNIT_SLIP = re.compile(r";? *latencies are in milliseconds|"
                        r" *\((?:was it written in seconds\?|in microseconds it is)[^)]*\)")


#: A number written with a decimal comma or point, or with groups of thousands
#: (``18.433,5``, ``1,000,000``), as its separators, perhaps with its unit after it
#: (``18.433 ops/s``): (sign, digits and separators, unit).
_WRITTEN_NUMBER = re.compile(r"^\s*([-+]?)(\d[\d.,]*\d)(\s*[^\d\s.,][^\d]*?)?\s*$")
#: One separator with three digits after it, the first digit not 0: a decimal comma
#: or point, or a thousands separator (``5,425``, ``18.433``).
_EITHER_WAY = re.compile(r"^[1-9]\d{0,2}[.,]\d{3}$")


def _csv_records(path: str) -> tuple[list[str] | None, list[tuple[int, list[str]]]]:
    """The header names of a measurement CSV and its rows (`sizing.columns.csv_records`);
    with semicolons or tabs a decimal comma (``5,425``) is a decimal point."""
    header, records, separator = csv_records(path)
    if separator != ",":
        records = _with_decimal_points(path, header, records, separator)
    return header, records


def _decimal_mark(digits: str) -> str | None:
    """Which separator a number written ``digits`` (digits, points and commas) shows
    to be its decimal mark, if it shows one: ``','`` for ``0,5``, ``2,5``, ``1234,5``
    or ``18.433,5``, ``'.'`` for their mirror images, None for a plain or a
    three-digit-group number (``25``, ``5,425``, ``1.000.000``)."""
    for mark, group in ((",", "."), (".", ",")):
        whole, _, fraction = digits.rpartition(mark)
        if not whole or not fraction.isdigit() or group in fraction:
            continue
        grouped = re.fullmatch(rf"[1-9]\d{{0,2}}(?:\{group}\d{{3}})+", whole)
        if mark in whole:
            continue
        if grouped or whole.isdigit() and (len(fraction) != 3 or whole[0] == "0"
                                            or len(whole) > 3):
            return mark
    return None


def _read_column(spelt: str) -> bool:
    """Whether a column of this header name is read (a measurement column, one in
    another time unit, a level's column of a paper's table), not set aside."""
    name = header_name(spelt)
    base = next((name[:-len(suffix)] + "_ms" for suffix in UNIT_SUFFIXES
                 if name.endswith(suffix)), name)
    return name in COLUMNS or base in TIME_COLUMNS or bool(_level_columns([spelt]))


def _with_decimal_points(path, header, records, separator):
    """The fields of a semicolon- or tab-separated file with their numbers written with
    a decimal point and no thousands separators. The decimal mark is the one the
    file's numbers show (`_decimal_mark`); with semicolons, as a decimal-comma locale
    saves them, a comma where none shows; a number that reads both ways (``5,425``:
    five, or five thousand) in a file that shows neither is refused, as is a file that
    shows both."""
    # only the columns read say the file's locale: a note's "1,5 GB heap" does not
    read = [_read_column(name) for name in header]
    shown, commas = {}, False
    for line, cells in records:
        for column, cell in enumerate(cells):
            if column < len(read) and not read[column]:
                continue
            if written := _WRITTEN_NUMBER.match(cell):
                commas = commas or "," in written.group(2)
                if mark := _decimal_mark(written.group(2)):
                    shown.setdefault(mark, (line, cell.strip()))
    if len(shown) == 2:
        (a, (line_a, field_a)), (b, (line_b, field_b)) = sorted(
            shown.items(), key=lambda item: item[1][0])
        raise ConfigError(
            f"{path}: line {line_a} writes {field_a!r} with a decimal "
            f"{'comma' if a == ',' else 'point'} and line {line_b} {field_b!r} with a "
            f"decimal {'comma' if b == ',' else 'point'}: write every number of the "
            "file one way (a spreadsheet set to one locale does)")
    mark = next(iter(shown), "," if separator == ";" else None)
    # a point where no number shows the mark and none has a comma: a semicolon file's
    # comma default says it groups thousands, but decimal-point locales save
    # semicolons too (Swiss Excel), and 1.250 ms read as 1,250 ms is a silent 1000x
    either_way = "." if separator == ";" and not shown and not commas else ""
    out = []
    for line, cells in records:
        converted = []
        for column, cell in enumerate(cells):
            written = _WRITTEN_NUMBER.match(cell)
            if not written or "," not in cell and "." not in cell:
                converted.append(cell)
                continue
            digits = written.group(2)
            if (mark is None or either_way and either_way in digits) \
                    and _EITHER_WAY.match(digits):
                if column < len(read) and not read[column]:
                    converted.append(cell)  # a column set aside: its reading is moot
                    continue
                name = header[column] if column < len(header) else f"column {column + 1}"
                point, grouped = digits.replace(",", "."), digits.replace(",", "").replace(
                    ".", "")
                # the decimal written so that it shows its mark (not three decimals):
                # 1.25 for 1.250, 5.0 for 5.000, 5.4250 for 5.425
                whole, fraction = point.split(".")
                shown_as = fraction.rstrip("0") or "0"
                shows = f"{whole}.{shown_as if len(shown_as) < 3 else fraction + '0'}"
                raise ConfigError(
                    f"{path} line {line}: {name}={cell.strip()!r} reads as {point} (a "
                    f"decimal {'comma' if ',' in digits else 'point'}) or as {grouped} "
                    "(a thousands separator), and no other number in this "
                    f"{'tab' if separator != ';' else 'semicolon'}-separated file shows "
                    f"which; write {grouped} or {shows}")
            group = "." if mark == "," else ","
            if mark is None or not re.fullmatch(
                    rf"(?:\d+|\d{{1,3}}(?:\{group}\d{{3}})+)(?:\{mark}\d+)?", digits):
                converted.append(cell)  # not a number of this file's kind: as written
                continue
            converted.append(written.group(1)
                             + digits.replace(group, "").replace(mark, ".")
                             + (written.group(3) or ""))
        out.append((line, converted))
    return out
