"""Benchmark output as the tools print it, turned into measurement rows.

Two formats are read, told apart by `detect_format`:

``ycsb``
    The summary YCSB prints at the end of a run, one ``[SECTION], metric, value``
    line each: ``[OVERALL], Throughput(ops/sec)``, and per operation ``[READ]``,
    ``[UPDATE]``, ``[INSERT]`` (``[DELETE]``) lines with ``Operations``,
    ``AverageLatency(us)``, ``95thPercentileLatency(us)``,
    ``99thPercentileLatency(us)`` (``(ms)`` in old versions) and ``Return=...``
    counts. Client threads come from the caller, a side table, or the
    ``Command line:`` line YCSB prints (``-threads N``, ``-p threadcount=N``);
    consistency levels from the caller, a side table, or that line
    (``cassandra.readconsistencylevel=...``, ``cassandra.writeconsistencylevel``, or
    the ScyllaDB binding's ``scylla.*consistencylevel``). A run held to a rate
    (``-target N``, reached within `PACED`) gives open-loop rows at that rate. A
    run spread over several YCSB clients is several files, each one client's threads
    and throughput: a side table gives them one ``run`` name, and they are read as
    one run, as the cluster saw it (`_clients_as_one`).
    The summary may also come as YCSB's JSON exporters write it (`_output_text`), or
    as ``-p measurementtype=raw`` names its metrics (`_RAW_METRICS`).
    A failed operation is counted once (YCSB 0.17 prints it both as a ``Return=``
    code of its operation and in its ``[READ-FAILED]`` (...) section, or with
    ``reportlatencyforeacherror`` in one per code, `_failed_by_code`); a read that
    found no row (``Return=NOT_FOUND``) completed, and counts in the share of reads;
    where YCSB lists those reads alone in ``[READ-FAILED]``, with their mean, they are
    in the read mean too (weighted by count with the reads that found a row; the
    percentiles, of the found ones alone, are dropped).
    Workload F's throughput is the database's reads and updates per second, not
    YCSB's read-modify-writes.
    A run of more than 2^31 operations wraps YCSB's 32-bit operation counter and
    prints a throughput short by 2^32 operations over its run time (negative, even):
    the sections' operation counts restore it, with a warning; sections that count
    fewer operations than the run time and throughput give are doubted in one, and
    refused as cut inside the summary when more than `TRUNCATED_SHORTFALL` fewer.
``cassandra-stress``
    Each ``Results:`` block (``Op rate``, ``Latency mean``, ``Latency median``,
    ``Latency 95th percentile``, ``Latency 99th percentile``, ``Total errors``;
    per-operation values in brackets, ``[READ: 9,000 op/s, WRITE: 1,000 op/s]``;
    each latency in the unit printed after it, ``us``, ``ms`` or ``s``, ms where none
    is, and refused in any other),
    with the threads of the ``Running with N threadCount`` (or ``Running WRITE
    with N threads``, ``Thread Count: N``) line before it, and the level of the
    settings (``Consistency Level: QUORUM``) or a ``cl=QUORUM`` in the output; a
    threads value given by the caller or a side table is for a file of one block (a
    file of several runs states each one's threads before each block, or is split, one
    run per file: a later block without its own line is refused, not read at the count
    of the run before it). The operations of a user profile (``insert``, ``simple1``)
    other than ``insert`` (a write) are named read or write by the caller or a side
    table. A block printed in a locale whose decimal mark is a comma (Java formats by
    the machine's: ``1,5 ms``, ``10.120 op/s`` or ``10 120 op/s``) is read in it. A
    run held to a rate (``OpsPer Sec: R`` in its settings, from ``fixed=R/s`` or
    ``throttle=R/s``) that it reached within `PACED` gives open-loop rows at that
    rate, as YCSB's ``-target``.

A side table names outputs that do not state everything: a CSV with the header
``file`` and any of ``threads``, ``consistency``, ``operations``, ``read_consistency``,
``write_consistency``, ``run`` (`SIDE_TABLE_COLUMNS`; empty cells: stated in the
output; the two level columns give a YCSB run's reads and writes levels of their
own, as a read ONE / write QUORUM run has; outputs of one ``run`` name are the
clients of one run, `_clients_as_one`). ``file`` is a path relative to the table's own
folder (or absolute); ``threads`` a whole number (``50.0`` is 50); ``operations``
pairs ``name=read`` or ``name=write`` separated by spaces, for a cassandra-stress
user profile (``insert=write simple1=read``). Given in place of a measurement file,
it is read as the rows of every output it lists. Like a measurement CSV it may
separate its fields by semicolons or tabs and hold comment lines (``#`` first). An
output is found in it by its path, or by its bare name when only one row has that
name.

Every run gives one row per operation class (read, write) in the dict form of
`sizing.measurements` (text values; ms and ops/s): ``operation, consistency,
threads, throughput, mean_ms`` and, when given, ``p50_ms, p95_ms, p99_ms,
read_fraction``. ``throughput`` is the whole run's operations per second (what a
simulated run of the same mix is compared with); in a mixed run both rows carry it,
and ``read_fraction`` is the share of reads in the run. Writes of several kinds (YCSB
updates and inserts) are merged into one write row: their mean weighted by
operation count, their percentiles dropped (those of a mixture cannot be rebuilt
from its parts). Files are read as UTF-8 with or without a byte-order mark, or as
UTF-16 with one. Bad input raises `ConfigError` naming the line of the file and the
value as the tool printed it; failed operations warn. A cassandra-stress ``Results:`` block whose
errors reach its operations (rate x ``Total operation time``) measured no latency: the
file is refused, not read without that block, since whatever failed every operation of
one run (a node down, a missing keyspace) leaves its other runs in doubt. An output cut before its summary (the lines a tool
prints first, `_STARTS`, and no summary after them) is refused as truncated; a
cassandra-stress run cut inside one of its thread counts (an auto run interrupted)
gives the thread counts it finished, with a warning naming the one left out.
"""

from __future__ import annotations

import csv
import math
import re
import warnings
from pathlib import Path

import numpy as np

from forkjoin_sim.cassandra.model import CONSISTENCY_LEVELS
from forkjoin_sim.errors import ConfigError, counted as counted_text
from forkjoin_sim.laws.empirical import UNITS
from forkjoin_sim.checks import check_input_file, input_encoding, plain_float
from sizing.columns import COLUMNS, csv_records, header_line, separator_of, \
    whole_threads

YCSB = "ycsb"
CASSANDRA_STRESS = "cassandra-stress"
FORMATS = (YCSB, CASSANDRA_STRESS)
#: Levels a benchmark may name (`sizing.measurements` reads the LOCAL_* forms as their
#: single-data-centre equivalents and refuses EACH_QUORUM, saying why).
LEVELS = tuple(CONSISTENCY_LEVELS) + ("LOCAL_ONE", "LOCAL_QUORUM", "EACH_QUORUM")
#: Share of a YCSB run's operations ([OVERALL] run time x throughput) its sections may
#: leave uncounted before the summary is doubted (`_run_throughput`).
COUNT_SHORTFALL = 0.02
#: Share past which that shortfall is refused as output cut inside its summary: twice
#: the largest seen in unedited output (benchANT's 5.8e9-operation Aerospike runs, 5%),
#: and a fifth of the smallest section the core workloads A, C and F can lose (A's
#: updates, 50%; F's read-modify-writes' updates, 33%). Workloads B and D write 5%:
#: their write section cut off is only doubted, in a warning.
TRUNCATED_SHORTFALL = 0.10
#: A YCSB run with ``-target`` whose throughput is within this share of the target was
#: paced by it: its rows are an open loop at that rate.
PACED = 0.02
#: Operation kinds of each tool that this project models, by operation class.
YCSB_OPERATIONS = {"READ": "read", "UPDATE": "write", "INSERT": "write",
                   "DELETE": "write"}
STRESS_OPERATIONS = {"READ": "read", "COUNTER_READ": "read", "WRITE": "write",
                     "COUNTER_WRITE": "write", "INSERT": "write"}
SIDE_TABLE_COLUMNS = ("file", "threads", "consistency", "operations", "read_consistency",
                      "write_consistency", "run")
#: Divisor of YCSB's latency units to milliseconds, from the units table (a division:
#: 4386 us / 1000 is the double nearest 4.386, as the same value typed in ms; times
#: 1e-3 is not).
_PER_MS = {unit: float(round(UNITS["ms"] / UNITS[unit])) for unit in ("us", "ms")}
_YCSB_LINE = re.compile(r"^\[([^\]]+)\],\s*([^,]+?)\s*,\s*(\S+)\s*$")
_YCSB_LATENCY = re.compile(r"^(Average|\d+(?:\.\d+)?)(?:th)?(?:Percentile)?Latency"
                           r"\((us|ms)\)$")
_STRESS_THREADS = (re.compile(r"Running with (\d+) threadCount"),
                   # "Running WRITE with 4 threads", "Running [READ, WRITE] with 50
                   # threads" (3.0-3.9: a mixed run or a profile's several operations)
                   re.compile(r"Running (?:\[[^\]]*\]|\S+) with (\d+) threads"),
                   # (ScyllaDB's cql-stress prints "Thread count")
                   re.compile(r"^\s*Thread Count:\s*(\d+)\s*$", re.I))
#: The rate a cassandra-stress run was held to (``-rate threads=N fixed=R/s`` or
#: ``throttle=R/s``; 0: none), as its settings print it.
_STRESS_PACE = re.compile(r"^\s*OpsPer Sec:\s*(\d+)\s*$")
_STRESS_LEVEL = (re.compile(r"^\s*Consistency Level:\s*([A-Za-z_]+)\s*$"),
                 re.compile(r"(?:^|\s)cl=([A-Za-z_]+)(?=\s|$)"))
_STRESS_ENTRY = re.compile(r"([A-Za-z_][\w.-]*)\s*:\s*(-?[\d,']*\.?\d+|NaN)"
                           r"(?:[ \t]*([^\s,\]\d][^\s,\]]*))?")
#: Time units cassandra-stress may print after a latency (ms in 2.2 on; none in 2.1,
#: read as ms), as the units table names them.
_STRESS_TIME_UNITS = {"us": "us", "\u00b5s": "us", "\u03bcs": "us", "ms": "ms", "s": "s"}
_STRESS_KEYS = {"op rate": "rate", "latency mean": "mean_ms",
                "latency median": "p50_ms", "latency 95th percentile": "p95_ms",
                "latency 99th percentile": "p99_ms", "total errors": "errors"}
_STRESS_LABELS = {"rate": "Op rate", "mean_ms": "Latency mean",
                  "p50_ms": "Latency median", "p95_ms": "Latency 95th percentile",
                  "p99_ms": "Latency 99th percentile", "errors": "Total errors"}
#: A latency as cassandra-stress prints it (to 0.1 ms) in a locale whose decimal mark
#: is a comma (Java formats by the machine's locale: ``1,5`` ms in German, French,
#: Croatian): a comma between digits, followed by one or two.
_DECIMAL_COMMA = re.compile(r"\d,\d{1,2}(?!\d)")
#: A digit-group separator of such a locale (``10.120``, ``10 120`` with a space,
#: no-break or narrow no-break space): before three digits, not more.
_LOCALE_GROUPING = re.compile(r"(?<=\d)[. \u00a0\u202f](?=\d{3}(?!\d))")
#: How each parser names its text when the caller gives no file name.
_YCSB_TEXT = "YCSB output"
_STRESS_TEXT = "cassandra-stress output"


#: Lines each tool prints before its summary, and no measurement CSV has, as (what
#: they are, pattern): a text with one but no summary is that tool's output cut short.
_STARTS = {
    YCSB: (("its java command line",
            re.compile(r"\b(?:site|com\.yahoo)\.ycsb\.Client\b")),
           ("its 'Command line:'", re.compile(r"^Command line:.*\s-(?:db|P)\s")),
           ("'YCSB Client'", re.compile(r"^YCSB Client \d")),
           ("'Loading workload...'", re.compile(r"^Loading workload\.\.\.$")),
           ("'Starting test.'", re.compile(r"^Starting test\.$")),
           ("a status line", re.compile(r"\d+ sec: \d+ operations;"))),
    CASSANDRA_STRESS: (
        ("its settings banner", re.compile(r"^\*+ Stress Settings \*+$")),
        ("'Running with N threadCount'", _STRESS_THREADS[0]),
        ("'Running ... with N threads'", _STRESS_THREADS[1]),
        ("'Warming up'", re.compile(r"^Warming up \S+ with \d+ iterations")),
        ("its progress table", re.compile(r"^type\s+total ops,\s*op/s,")),
        ("'Connected to cluster'",
         re.compile(r"^Connected to cluster: .*max pending requests")))}
#: What a tool's output cut before its summary lacks.
_SUMMARY = {YCSB: "no [OVERALL]/[READ] summary lines",
            CASSANDRA_STRESS: "no 'Results:' block"}


#: One measurement as YCSB's JSON exporters write it (``-p exporter=site.ycsb.
#: measurements.exporter.JSONMeasurementsExporter``, one object after another, or
#: ``JSONArrayMeasurementsExporter``, a list; pretty-printed or not).
_YCSB_JSON = re.compile(r'\{\s*"metric"\s*:\s*"([^"]+)"\s*,\s*"measurement"\s*:\s*'
                        r'"([^"]+)"\s*,\s*"value"\s*:\s*"?([^",}\s]+)"?\s*\}')


def _output_text(path) -> str:
    """The text of a benchmark output, YCSB's JSON-exported measurements written as
    the summary lines it prints (``[OVERALL], RunTime(ms), 48982``), each on a line
    of its own, the rest (a command line echoed before them) kept."""
    text = Path(path).read_text(encoding=input_encoding(path))

    def line(match) -> str:
        # on the object's own line where it has one, and as many lines as it spanned,
        # so that messages name the file's own line numbers
        start, end = match.start(), match.end()
        before = "" if start == 0 or text[start - 1] == "\n" else "\n"
        after = "" if end == len(text) or text[end] in "\r\n" else "\n"
        return (f"{before}[{match.group(1)}], {match.group(2)}, {match.group(3)}"
                + "\n" * match.group(0).count("\n") + after)
    return _YCSB_JSON.sub(line, text)


def _started_as(text: str) -> tuple[str, str, int] | None:
    """(tool, what it printed, line number) of the first line that only YCSB or
    cassandra-stress prints before its summary (`_STARTS`), or None."""
    for number, line in enumerate(text.splitlines(), start=1):
        if line.lstrip().startswith("#"):
            continue  # a comment, as a measurement file may have
        for tool, starts in _STARTS.items():
            for what, pattern in starts:
                if pattern.search(line.strip()):
                    return tool, what, number
    return None


def _cut_short(where: str, tool: str, evidence: str, missing: str) -> str:
    """The refusal of ``tool``'s output that lacks its summary (``missing``)."""
    name = "YCSB" if tool == YCSB else tool
    return (f"{where} looks like truncated (incomplete) {name} output ({evidence}) "
            f"but has {missing}: give the complete text the benchmark printed at the "
            "end of the run")


def detect_format(text: str, where: str = "benchmark output") -> str:
    """`YCSB` or `CASSANDRA_STRESS`, from the lines only that tool prints: its summary,
    or, in an output cut before it, the lines it prints first (`_STARTS`)."""
    for line in text.splitlines():
        match = _YCSB_LINE.match(line.strip())
        if match and (match.group(1) == "OVERALL" or match.group(1) in YCSB_OPERATIONS):
            return YCSB
        if line.strip().lower() == "results:" or _STRESS_THREADS[0].search(line):
            return CASSANDRA_STRESS
    if started := _started_as(text):
        return started[0]  # cut short: its parser says what is missing
    raise ConfigError(f"{where} is neither YCSB nor cassandra-stress output: no "
                      "'[OVERALL], Throughput(ops/sec), ...' line and no 'Results:' "
                      "block; give the complete text the benchmark printed")


def _text(value: float) -> str:
    return f"{value:.15g}"


def _number(text: str, what: str, where: str) -> float:
    """A value as the tool printed it (thousands separators allowed: ``10,120``, or
    ``10'120`` as a Swiss locale prints it): finite, >= 0."""
    try:
        value = plain_float(re.sub(r"(?<=\d)'(?=\d{3})", "", text.replace(",", "")))
    except ValueError:
        raise ConfigError(f"{where}: {what} {text!r} is not a number; give the "
                          "benchmark's output unedited") from None
    if not math.isfinite(value):
        raise ConfigError(f"{where}: {what} is {text}, no measurement (the tool prints "
                          "that when no such operation completed); give the summary "
                          "of a run whose operations completed")
    if value < 0:
        raise ConfigError(f"{where}: {what} is {text}, below 0, which no run prints; "
                          "give the benchmark's output unedited")
    return value


def _positive(text: str, what: str, where: str) -> float:
    """A latency or throughput as printed: a measured one is never 0."""
    value = _number(text, what, where)
    if value == 0:
        raise ConfigError(f"{where}: {what} is 0, which no run that completed "
                          "operations prints; give the summary of a run whose "
                          "operations completed, unedited")
    return value


_PLACEHOLDERS = {"threads": "<threads>", "consistency": "<level>"}


def _python_keyword(column: str, example: str) -> str:
    if column == "operations":
        pairs = (item.partition("=") for item in example.split())
        return "operations={" + ", ".join(f"{n!r}: {k!r}" for n, _, k in pairs) + "}"
    return {"threads": "threads=N", "consistency": "consistency='QUORUM'"}[column]


def _how_to_give(columns: dict, name: str, listed_in: str | None) -> str:
    """Advice to state ``columns`` ({column: example value}) of an output: in its
    side table row, for the command line (a side table is read in place of the
    outputs it lists) and for Python callers alike."""
    if listed_in:
        cells = " and ".join(f"{c} (e.g. {v})" for c, v in columns.items())
        return (f"fill in {cells} in its row ({listed_in}), adding the column to the "
                "header if it lacks it")
    width = 4 if "operations" in columns else 3
    row = ",".join([name] + [columns.get(c, "") for c in SIDE_TABLE_COLUMNS[1:width]])
    python = ", ".join(_python_keyword(c, v) for c, v in columns.items())
    return (f"list it in a side table, a CSV with the header "
            f"{','.join(SIDE_TABLE_COLUMNS[:width])} and the row {row.rstrip(',')} "
            "(path relative to the table, empty cells stated in the output), given in "
            f"place of the output (from Python: {python})")


def _not_stated(where: str, missing: dict, name: str, listed_in: str | None):
    """Refuse an output that does not state ``missing`` ({column: what the output
    would say it with}), naming all at once."""
    raise ConfigError(f"{where}: the output does not state the run's "
                      + _unstated(missing, name, listed_in))


def _unstated(missing: dict, name: str, listed_in: str | None) -> str:
    """What an output does not state (``missing`` as in `_not_stated`), and how to give
    it."""
    labels = {"threads": "client threads", "consistency": "consistency level"}
    return (f"{' or '.join(labels[c] for c in missing)} (no "
            f"{' or '.join(missing.values())}); "
            + _how_to_give({c: _PLACEHOLDERS[c] for c in missing}, name, listed_in))


def _level(level, where: str, source: str) -> str:
    name = str(level).strip().upper()
    if name not in LEVELS and not (name.isascii() and name.isdigit()):
        fix = (f"use one of {', '.join(LEVELS)} or a whole number"
               if source in ("given", "side table") else
               f"the model describes only {', '.join(LEVELS)} or a whole number of "
               "replicas; give a run at one of those")
        raise ConfigError(f"{where}: consistency {level!r} ({source}) is unknown; "
                          f"{fix}")
    return name


def _agree(given, found, what: str, where: str, source: str, given_by: str):
    """The caller's value, the file's, or refuse when both are given and differ."""
    if None not in (given, found) and str(given).upper() != str(found).upper():
        fix = ("correct it, or leave that cell empty to take the output's value"
               if given_by.startswith("side table") else "correct one or drop one")
        raise ConfigError(f"{where}: {what} {given} was given ({given_by}) but "
                          f"{source} says {found}; {fix}")
    return given if given is not None else found


def _agree_level(given, found, where: str, source: str, given_by: str):
    """`_agree` for the level an output states (``found``): a run at EACH_QUORUM may
    be given as QUORUM, as the measurement reader asks, since in one data centre they
    are the same level."""
    if str(found).upper() == "EACH_QUORUM" and str(given).upper() in (
            "QUORUM", "LOCAL_QUORUM"):
        return given
    return _agree(given, found, "consistency", where, source, given_by)


def _row(operation: str, level: str, threads: int, throughput: float | None,
         stats: dict, read_fraction: float | None) -> dict:
    row = {"operation": operation, "consistency": level, "threads": str(threads),
           "throughput": "" if throughput is None else _text(throughput),
           "mean_ms": _text(stats["mean_ms"])}
    for name in ("p50_ms", "p95_ms", "p99_ms"):
        if stats.get(name) is not None:
            row[name] = _text(stats[name])
    if read_fraction is not None:
        row["read_fraction"] = _text(read_fraction)
    if stats.get("count"):
        # its operations (or their rate), to weigh it against other clients of its run
        row["_count"] = stats["count"]
    return row


def _merge(parts: list[dict], where: str) -> dict:
    """One operation class from its kinds: count-weighted mean, no percentiles."""
    if len(parts) == 1:
        return parts[0]
    if any(not p.get("count") for p in parts):
        raise ConfigError(f"{where}: several write kinds ran but their operation "
                          "counts are missing, so their means cannot be merged; give "
                          "the full summary with the 'Operations' lines")
    return {"count": sum(p["count"] for p in parts),
            "mean_ms": float(np.average([p["mean_ms"] for p in parts],
                                        weights=[p["count"] for p in parts]))}


def _rows(classes: dict, levels: dict, threads: int, throughput,
          where: str, unfinished: dict | None = None) -> list[dict]:
    """Rows of one run from its merged operation classes (levels all known);
    ``unfinished``: operations per class attempted but not in its count (`_unfinished`),
    which count in the share of reads."""
    fraction = None
    if len(classes) == 2:
        reads, writes = classes["read"].get("count"), classes["write"].get("count")
        if not reads or not writes:
            raise ConfigError(f"{where}: a mixed run without operation counts per "
                              "kind; give the full summary so the share of reads is "
                              "known")
        unfinished = unfinished or {}
        reads, writes = reads + unfinished.get("read", 0.0), \
            writes + unfinished.get("write", 0.0)
        fraction = reads / (reads + writes)
    out = []
    for operation in ("read", "write"):
        if operation in classes:
            out.append(_row(operation, levels[operation], threads, throughput,
                            classes[operation], fraction))
    return out


def _one_level_for_two(consistency, stated: dict, where: str, given_by: str) -> None:
    """Refuse one level given for a YCSB run whose command line sets its reads and
    writes at two different levels, naming both and the columns that take them."""
    found = {op: stated[op] for op in ("read", "write") if op in stated}
    if consistency is None or len(found) < 2:
        return
    levels = {op: _level(value, f"{where} line {line}", f"{key} on the command line")
              for op, (value, key, line) in found.items()}
    if levels["read"] == levels["write"]:
        return
    column = given_by.startswith("side table")
    fix = ("give read_consistency and write_consistency columns in the side table "
           "instead, or leave the consistency cell empty to take the levels the output "
           "states" if column else
           "give consistency={'read': ..., 'write': ...}, or none to take the levels "
           "the output states")
    raise ConfigError(
        f"{where}: consistency {consistency} was given ({given_by}) for reads and "
        f"writes, but the output's command line sets reads at {levels['read']} and "
        f"writes at {levels['write']} ({found['read'][1]}, {found['write'][1]}, line "
        f"{found['write'][2]}); {fix}")


#: YCSB bindings whose consistency levels default to a known one when the command
#: line does not set them: YCSB's own Cassandra CQL binding reads and writes at ONE
#: (its README, "cassandra.readconsistencylevel ... Default value is ONE"); other
#: bindings (a driver-4 fork defaults to QUORUM) are not assumed.
BINDING_LEVELS = {"site.ycsb.db.CassandraCQLClient": "ONE",
                  "com.yahoo.ycsb.db.CassandraCQLClient": "ONE", "cassandra-cql": "ONE"}


def _binding_defaults(levels: dict, stated: dict, where: str, parts) -> None:
    """Fill in, with a warning, the level an operation of the run left to its
    binding's default (`BINDING_LEVELS`), where the command line names the binding."""
    if "db" not in stated:
        return
    default = BINDING_LEVELS.get(stated["db"][0])
    unset = [op for op in ("read", "write") if levels[op] is None and op in parts]
    if default is None or not unset:
        return
    for op in unset:
        levels[op] = default
    warnings.warn(f"{where}: the command line sets no {' or '.join(unset)} consistency "
                  f"level; taken as {default}, the default of {stated['db'][0]} (give "
                  f"-p cassandra.{unset[0]}consistencylevel, or the level in a side "
                  "table, if the cluster set another)", UserWarning, stacklevel=3)


def _ycsb_command_line(text: str) -> dict:
    """{what: (value, option as written, line number)} of the threads and
    consistency levels on YCSB's ``Command line:`` line, if any."""
    found = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip().startswith("Command line:"):
            continue
        words = line.split()
        for i, word in enumerate(words):
            if word == "-threads" and i + 1 < len(words):
                found["threads"] = (words[i + 1], "-threads", number)
            if word == "-target" and i + 1 < len(words):
                found["target"] = (words[i + 1], "-target", number)
            if word == "-db" and i + 1 < len(words):
                found["db"] = (words[i + 1], "-db", number)
            key, _, value = word.partition("=")
            if key == "threadcount":
                found["threads"] = (value, "threadcount", number)
            elif key == "target":  # -p target=N, the property -target N sets
                found["target"] = (value, "target", number)
            # the Cassandra binding's keys, and the ScyllaDB binding's (ScyllaCQLClient)
            elif key in ("cassandra.readconsistencylevel", "scylla.readconsistencylevel"):
                found["read"] = (value, key, number)
            elif key in ("cassandra.writeconsistencylevel",
                         "scylla.writeconsistencylevel"):
                found["write"] = (value, key, number)
    return found


def _ycsb_sections(text: str, where: str = _YCSB_TEXT
                   ) -> dict[str, dict[str, tuple[str, int]]]:
    """{section: {metric: (value, line number)}} of YCSB's summary lines; a metric
    given twice (two runs' summaries in one file) is refused."""
    sections: dict[str, dict[str, tuple[str, int]]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        match = _YCSB_LINE.match(line.strip())
        if match:
            metrics = sections.setdefault(match.group(1), {})
            if match.group(2) in metrics:
                raise ConfigError(f"{where} line {number}: a second '[{match.group(1)}], "
                                  f"{match.group(2)}' line (the first is line "
                                  f"{metrics[match.group(2)][1]}): two runs' summaries "
                                  "in one file; give each run its own file")
            metrics[match.group(2)] = (match.group(3), number)
    for name, metrics in sections.items():
        if _RAW_SUMMARY in metrics:
            sections[name] = {_RAW_METRICS.get(metric, metric): value
                              for metric, value in metrics.items()}
    return _failed_by_code(_two_in_one(sections, where), where)


#: The prefixes of ``-p measurementtype=hdrhistogram+histogram`` (or ``+raw``): YCSB
#: measures each operation twice, in sections ``[HdrREAD]`` (with its Return= lines)
#: and ``[BucketREAD]`` (``[RawREAD]``); the HdrHistogram one is read.
_TWO_IN_ONE = ("Hdr", ("Bucket", "Raw"))


def _two_in_one(sections: dict, where: str) -> dict:
    """``sections`` with each operation measured two ways (`_TWO_IN_ONE`) as its
    HdrHistogram section under the operation's own name, the other dropped."""
    first, others = _TWO_IN_ONE
    out = {}
    for name, metrics in sections.items():
        if name.startswith(others) and first + name.removeprefix(
                next(p for p in others if name.startswith(p))) in sections:
            continue  # the same operations, measured the other way
        if name.startswith(first) and name != first:
            plain = name.removeprefix(first)
            if plain in sections:
                raise ConfigError(f"{where}: sections [{name}] and [{plain}] both "
                                  f"measure {plain}: two runs' summaries in one file? "
                                  "Give each run its own file")
            name = plain
        out[name] = metrics
    return out


#: The line of a section summarised by ``-p measurementtype=raw``, whose metrics are
#: named otherwise (`_RAW_METRICS`: as the default histograms name them; times in us).
_RAW_SUMMARY = "Below is a summary of latency in microseconds:"
_RAW_METRICS = {"Total Operations": "Operations", "Average": "AverageLatency(us)",
                "p50": "50thPercentileLatency(us)", "p95": "95thPercentileLatency(us)",
                "p99": "99thPercentileLatency(us)"}


#: YCSB's return codes other than OK (``site.ycsb.Status``): with
#: ``-p reportlatencyforeacherror=true`` (or codes listed in
#: ``latencytrackederrors``) an operation that returned one is measured in a section of
#: its own, ``[READ-NOT_FOUND]``, instead of ``[READ-FAILED]``.
_RETURN_CODES = ("ERROR", "NOT_FOUND", "NOT_IMPLEMENTED", "UNEXPECTED_STATE",
                 "BAD_REQUEST", "FORBIDDEN", "SERVICE_UNAVAILABLE")


def _failed_by_code(sections: dict, where: str) -> dict:
    """``sections`` with an operation's sections per return code (`_RETURN_CODES`)
    and its ``-FAILED`` one counted as one ``-FAILED`` section, as YCSB prints it
    without ``reportlatencyforeacherror``: their operations summed (their latencies
    are not used; a ``-NOT_FOUND`` section stays too, for the mean of its reads,
    `_not_found`)."""
    for operation in YCSB_OPERATIONS:
        names = [f"{operation}-{code}" for code in ("FAILED",) + _RETURN_CODES
                 if f"{operation}-{code}" in sections]
        if not names or names == [f"{operation}-FAILED"]:
            continue
        counts = []
        for name in names:
            if "Operations" not in sections[name]:
                raise ConfigError(f"{where}: [{name}] has no Operations line; give the "
                                  "complete summary YCSB prints at the end of a run")
            value, line = sections[name]["Operations"]
            counts.append(_number(value, f"[{name}], Operations", f"{where} line {line}"))
        first = sections[names[0]]["Operations"][1]
        for name in names:
            if not name.endswith("-NOT_FOUND"):
                del sections[name]
        sections[f"{operation}-FAILED"] = {"Operations": (_text(sum(counts)), first)}
    return sections


def _operation_counts(sections: dict, where: str) -> dict[str, float]:
    """{section: its ``Operations`` count} of every section that has one."""
    return {name: _number(metrics["Operations"][0], f"[{name}], Operations",
                          f"{where} line {metrics['Operations'][1]}")
            for name, metrics in sections.items() if "Operations" in metrics}


def _refuse_cut_line(text: str, sections: dict, where: str) -> None:
    """Refuse YCSB output cut inside an operation's summary: its last line ends
    without a newline on a count or latency that is read, of [READ], [UPDATE], ...
    whose ``Return=`` lines (YCSB prints them after those, and every line with its
    newline) are missing, so its number may be cut short (``191`` of 1911.04). A
    histogram's or time series' lines come after the Return= lines: a file ending on
    one without its newline is complete."""
    if not text or text.endswith(("\n", "\r")):
        return
    number = text.count("\n") + 1
    match = _YCSB_LINE.match(text.rsplit("\n", 1)[-1].strip())
    if not match:
        return
    section, metric = match.group(1), match.group(2)
    name = section.removeprefix(_TWO_IN_ONE[0])
    read = metric == "Operations" or _YCSB_LATENCY.match(metric)
    if name in YCSB_OPERATIONS and read and not any(
            other.startswith("Return=") for other in sections.get(name, {})):
        raise ConfigError(_cut_short(
            where, YCSB, f"line {number}, its last, ends without a newline on "
            f"'[{section}], {metric}, {match.group(3)}', whose number may be cut short",
            f"no Return= line of [{section}], which YCSB prints after it"))


def _run_throughput(sections: dict, counts: dict, where: str) -> float:
    """The run's throughput (ops/s): ``[OVERALL], Throughput(ops/sec)``, or, where YCSB's
    32-bit operation counter wrapped (a run of more than 2^31 operations prints a
    throughput short by a multiple of 2^32 over its run time, negative even), the
    printed one plus the wraps that the sections' operation counts show, with a
    warning. The wraps are read off while the sections miss fewer than 2^31
    operations. A summary whose sections count fewer operations than its run time and
    throughput give (a file cut short, a section renamed) is doubted in a warning:
    unedited long runs fall a few per cent short too (benchANT's 5.8e9-operation
    Aerospike runs by 5%); past `TRUNCATED_SHORTFALL` it is refused as truncated. A
    read-modify-write is counted in its read and its update
    too, so its own count is taken off for these checks, and the throughput returned
    is the database's: its reads and updates per second, as the share of reads counts
    them (workload F's throughput is 1.5 times what YCSB prints). Without any
    ``Operations`` line nothing is compared (``counts``: `_operation_counts`)."""
    value, line = sections["OVERALL"]["Throughput(ops/sec)"]
    printed_at = f"{where} line {line}"
    runtime = sections["OVERALL"].get("RunTime(ms)")
    rmw = counts.get("READ-MODIFY-WRITE", 0.0)
    counted = sum(count for name, count in counts.items()
                  if name in YCSB_OPERATIONS or name == "SCAN"
                  or name.endswith("-FAILED")) - rmw
    if runtime is None or counted <= 0:
        return _positive(value, "[OVERALL], Throughput(ops/sec)", printed_at)
    try:
        printed = plain_float(value.replace(",", ""))
    except ValueError:
        printed = math.nan
    seconds = _positive(runtime[0], "[OVERALL], RunTime(ms)",
                        f"{where} line {runtime[1]}") / 1000.0
    done = printed * seconds
    wraps = round((counted - done) / 2 ** 32) if math.isfinite(done) else 0
    if wraps >= 1:
        throughput = (done + wraps * 2 ** 32) / seconds
        warnings.warn(f"{printed_at}: YCSB's 32-bit operation counter wrapped "
                      f"{counted_text(wraps, 'time')} in this run of about "
                      f"{counted:,.0f} operations, so it printed a throughput of {value}; "
                      f"taken as {throughput:,.6g} ops/s (the printed value plus "
                      f"{wraps} x 2^32 operations over the run time)", UserWarning,
                      stacklevel=3)
        done += wraps * 2 ** 32
    else:
        throughput = _positive(value, "[OVERALL], Throughput(ops/sec)", printed_at)
    if counted < (1 - TRUNCATED_SHORTFALL) * done:
        named = ", ".join(f"[{name}] {count:,.0f}" for name, count in counts.items()
                          if name in YCSB_OPERATIONS or name == "SCAN"
                          or name.endswith("-FAILED"))
        raise ConfigError(f"{where}: its operation sections ({named}) count "
                          f"{counted:,.0f} operations where [OVERALL] gives {done:,.0f} "
                          f"(run time x throughput), {100 * (1 - counted / done):.0f}% "
                          "fewer: the output looks truncated inside its summary (a "
                          "section missing); give the complete output YCSB printed at "
                          "the end of the run")
    if counted < (1 - COUNT_SHORTFALL) * done:
        warnings.warn(f"{where}: its operation sections count {counted:,.0f} operations "
                      f"where [OVERALL] gives {done:,.0f} (run time x throughput), "
                      f"{100 * (1 - counted / done):.0f}% fewer: is a section missing or "
                      "renamed (a file cut short)? Each row carries the whole run's "
                      "throughput", UserWarning, stacklevel=3)
    # YCSB counts a read-modify-write once; the database served its read and its
    # update, as the rows' share of reads counts them
    return throughput * (counted + rmw) / counted


def _ycsb_failed(sections: dict, counts: dict, where: str) -> float:
    """Failed operations, each counted once: YCSB 0.17 records a failure both as a
    ``Return=ERROR`` of its operation and in the ``[READ-FAILED]`` section. A read
    that found no row (``Return=NOT_FOUND``, common under ``requestdistribution=
    latest``) completed: it is not a failure, though YCSB lists it in
    ``[READ-FAILED]`` too. Per operation: the larger of its error returns and its
    ``-FAILED`` count less its NOT_FOUND returns (``counts``: `_operation_counts`)."""
    failed_sections = {name.removesuffix("-FAILED"): counts.get(name, 0.0)
                       for name in sections if name.endswith("-FAILED")}
    returns = {name: _returns(name, metrics, where) for name, metrics in sections.items()
               if not name.endswith("-FAILED")}
    return sum(max(returns.get(name, {}).get("error", 0.0),
                   failed_sections.get(name, 0.0)
                   - returns.get(name, {}).get("not_found", 0.0))
               for name in set(returns) | set(failed_sections))


def _returns(section: str, metrics: dict, where: str) -> dict[str, float]:
    """A section's ``Return=`` counts by kind: ``ok`` (OK, or 0 in old versions),
    ``not_found`` (a read that found no row, which completed) and ``error`` (any
    other code)."""
    out = {"ok": 0.0, "not_found": 0.0, "error": 0.0}
    for metric, (value, line) in metrics.items():
        code = metric.removeprefix("Return=")
        if code != metric:
            kind = ("ok" if code in ("OK", "0") else
                    "not_found" if code == "NOT_FOUND" else "error")
            out[kind] += _number(value, f"[{section}], {metric}", f"{where} line {line}")
    return out


def _refuse_all_returns_failed(section: str, metrics: dict, count, where: str) -> None:
    """Refuse a section whose every operation returned an error: YCSB before 0.9
    counts failed operations in the section's own ``Operations`` and latencies, so a
    run that failed them all still prints a mean (of how long the errors took)."""
    returns = _returns(section, metrics, where)
    failed = returns["error"]
    if count and not returns["ok"] and failed >= count:
        raise ConfigError(f"{where}: every [{section}] operation failed ({failed:,.0f} "
                          f"error returns, {count:,.0f} operations, none OK): its "
                          "latencies are how long the errors took; fix what made them "
                          "fail (the database unreachable, a missing keyspace or "
                          "table?) and rerun")


def _not_found(sections: dict, counts: dict, where: str) -> dict[str, dict]:
    """{section: its reads that found no row, as a part (count, mean_ms)} where YCSB
    lists them, and only them, in its ``-FAILED`` section (whose ``Operations`` equal
    the section's ``Return=NOT_FOUND``) with their mean: they completed, so their
    latency belongs in the mean, as their count in the share of reads. Where that
    section holds errors too its mean is not theirs, and they are left out of the
    mean (``counts``: `_operation_counts`)."""
    parts = {}
    for name in YCSB_OPERATIONS:
        found = sections.get(name, {}).get("Return=NOT_FOUND")
        if found is None or name not in counts:
            continue
        count = _number(found[0], f"[{name}], Return=NOT_FOUND",
                        f"{where} line {found[1]}")
        # their own section (reportlatencyforeacherror), else the failed one if it
        # holds them alone
        own = f"{name}-NOT_FOUND" if f"{name}-NOT_FOUND" in sections else f"{name}-FAILED"
        if not count or own.endswith("-FAILED") and counts.get(own) != count:
            continue
        for metric, (value, line) in sections[own].items():
            latency = _YCSB_LATENCY.match(metric)
            if latency and latency.group(1) == "Average":
                parts[name] = {"count": count, "mean_ms": _positive(
                    value, f"[{own}], {metric}", f"{where} line {line}")
                    / _PER_MS[latency.group(2)]}
    return parts


def _unfinished(counts: dict) -> dict[str, float]:
    """Per operation class, the operations YCSB lists in its ``-FAILED`` sections and
    not in ``Operations`` (errors, and reads that found no row): attempted operations
    of that kind, so they count in the share of reads (``counts``:
    `_operation_counts`)."""
    out: dict[str, float] = {}
    for name, count in counts.items():
        kind = YCSB_OPERATIONS.get(name.removesuffix("-FAILED"))
        if name.endswith("-FAILED") and kind:
            out[kind] = out.get(kind, 0.0) + count
    return out


def parse_ycsb(text: str, threads: int | None = None,
               consistency: str | dict | None = None, where: str = _YCSB_TEXT, *,
               listed_in: str | None = None) -> list[dict]:
    """Measurement rows of one YCSB run's summary (see the module docstring).

    ``consistency``: one level for reads and writes, or ``{"read": ..., "write":
    ...}`` (None where the output states it).

    ``threads`` and ``consistency`` (one level for reads and writes) are needed unless
    the output's ``Command line:`` states them; given both ways, they must agree.
    ``listed_in`` names the side table row they come from, for errors.
    """
    name = "<file>" if where == _YCSB_TEXT else Path(where).name
    given_by = listed_in or "by the caller"
    sections = _ycsb_sections(text, where)
    _refuse_cut_line(text, sections, where)
    start = _started_as(text)
    cut = start is not None and start[0] == YCSB  # the run's own lines, no summary
    if "Throughput(ops/sec)" not in sections.get("OVERALL", {}):
        if cut:
            raise ConfigError(_cut_short(
                where, YCSB, f"{start[1]} at line {start[2]}",
                "no '[OVERALL], Throughput(ops/sec)' line" if sections else
                _SUMMARY[YCSB]))
        raise ConfigError(f"{where}: no '[OVERALL], Throughput(ops/sec), ...' line; "
                          "give the summary YCSB prints at the end of a run")
    counts = _operation_counts(sections, where)
    if counts.get("SCAN", 0.0) > 0:
        raise ConfigError(f"{where} line {sections['SCAN']['Operations'][1]}: the run "
                          "has [SCAN] operations, which the model has no counterpart "
                          "for; run a workload without scans (scanproportion=0)")
    parts: dict[str, list[dict]] = {}
    for section, metrics in sections.items():
        if section not in YCSB_OPERATIONS:
            continue
        stats = {"count": counts.get(section)}
        if stats["count"] == 0:
            continue
        _refuse_all_returns_failed(section, metrics, stats["count"], where)
        for metric, (value, line) in metrics.items():
            latency = _YCSB_LATENCY.match(metric)
            column = latency and {"Average": "mean_ms", "50": "p50_ms", "95": "p95_ms",
                                  "99": "p99_ms"}.get(latency.group(1))
            if column:
                read = _positive if column == "mean_ms" else _number
                stats[column] = read(value, f"[{section}], {metric}",
                                     f"{where} line {line}") / _PER_MS[latency.group(2)]
        if stats.get("mean_ms") is None:
            raise ConfigError(f"{where}: [{section}] has no AverageLatency line; give "
                              "the complete summary YCSB prints at the end of a run")
        parts.setdefault(YCSB_OPERATIONS[section], []).append(stats)
    unfinished = _unfinished(counts)
    for section, part in _not_found(sections, counts, where).items():
        # a part of its class like another kind (count-weighted mean, no percentiles),
        # no longer among the operations left out of the class's count
        parts.setdefault(YCSB_OPERATIONS[section], []).append(part)
        unfinished[YCSB_OPERATIONS[section]] -= part["count"]
    if not parts and (failed := _ycsb_failed(sections, counts, where)):
        zero = " and ".join(f"'[{name}], Operations, {sections[name]['Operations'][0]}'"
                            for name in sections if name in YCSB_OPERATIONS
                            and counts.get(name) == 0)
        raise ConfigError(f"{where}: every operation failed ({failed:,.0f} errors, 0 "
                          f"completed){f', as {zero} says' if zero else ''}: the run "
                          "measured no latency; fix what made them fail (the database "
                          "unreachable, a missing keyspace or table?) and rerun")
    if not parts and cut:
        raise ConfigError(_cut_short(where, YCSB, f"{start[1]} at line {start[2]}",
                                     "no [READ], [UPDATE] or [INSERT] summary lines"))
    if not parts:
        raise ConfigError(f"{where}: no [READ], [UPDATE] or [INSERT] summary lines "
                          "with operations; give the output of a YCSB 'run' (not only "
                          "its [OVERALL] lines or status lines)")
    throughput = _run_throughput(sections, counts, where)
    failed = _ycsb_failed(sections, counts, where)
    if failed:
        warnings.warn(f"{where}: {failed:g} operations failed; depending on the YCSB "
                      "version their latencies are in the averages", UserWarning,
                      stacklevel=2)
    stated = _ycsb_command_line(text)
    count = None
    if "threads" in stated:
        value, option, line = stated["threads"]
        count = whole_threads(value, f"{where} line {line} ('Command line:')", option)
    count = _agree(None if threads is None else whole_threads(threads, where), count,
                   "threads", where, "the output's command line", given_by)
    given_levels = consistency if isinstance(consistency, dict) else \
        {"read": consistency, "write": consistency}
    if not isinstance(consistency, dict):
        _one_level_for_two(consistency, stated, where, given_by)
    levels = {}
    for op in ("read", "write"):
        given = given_levels.get(op)
        given = None if given is None else _level(given, where, "given")
        found = None
        if op in stated:
            value, key, line = stated[op]
            found = _level(value, f"{where} line {line}", f"{key} on the command line")
        levels[op] = _agree_level(given, found, where, "the output's command line",
                                  given_by)
    _binding_defaults(levels, stated, where, parts)
    classes = {op: _merge(p, where) for op, p in parts.items()}
    missing = {}
    if count is None:
        missing["threads"] = "'Command line:' with -threads N"
    if unstated := [op for op in classes if levels[op] is None]:
        missing["consistency"] = " or ".join(
            f"-p cassandra.{op}consistencylevel=... (scylla.{op}consistencylevel)"
            for op in unstated)
    if missing:
        _not_stated(where, missing, name, listed_in)
    rows = _rows(classes, levels, count, throughput, where, unfinished)
    if "target" in stated and _number(stated["target"][0], stated["target"][1],
                                      f"{where} line {stated['target'][2]}") == 0:
        del stated["target"]  # YCSB's default: 0 ops/s holds the run to no rate
    if "target" in stated:
        value, option, line = stated["target"]
        target = _positive(value, option, f"{where} line {line} ('Command line:')")
        if throughput >= (1 - PACED) * target:
            # YCSB paced each thread to reach the target: requests arrive at the rate
            # asked, not when the previous one returns, so the run is an open loop
            asked = f"-target {value}" if option == "-target" else f"-p target={value}"
            warnings.warn(f"{where}: the run was held to {asked} ops/s and "
                          f"reached {throughput:,.6g}: its rows are read as an open loop "
                          f"at that rate (rate), not as {count} closed-loop threads",
                          UserWarning, stacklevel=2)
            for row in rows:
                row["rate"], row["threads"] = row["throughput"], ""
    return rows


def _stress_value(text: str, key: str, where: str) -> tuple[float, dict]:
    """The total and the per-operation values of one ``Results:`` line; latencies in
    ms, from the unit printed after each (`_STRESS_TIME_UNITS`; none: ms)."""
    head, _, bracket = text.partition("[")
    column = _STRESS_KEYS[key]
    read = _positive if column in ("rate", "mean_ms") else _number

    def value(number: str, unit: str, what: str) -> float:
        amount = read(number, what, where)
        if not column.endswith("_ms") or not unit:
            return amount
        if unit not in _STRESS_TIME_UNITS:
            raise ConfigError(f"{where}: {what} is in {unit!r}, a unit this reader does "
                              "not know; give the output unedited (latencies in us, ms "
                              "or s)")
        # a division for units below ms, as `_PER_MS` (600 us / 1000 is the double
        # nearest 0.6; times 1e-3 is not)
        factor = UNITS[_STRESS_TIME_UNITS[unit]] / UNITS["ms"]
        return amount / round(1 / factor) if factor < 1 else amount * round(factor)

    words = head.split()
    per_op = {name: value(number, unit,
                          f"'{_STRESS_LABELS[column]}' of {name}")
              for name, number, unit in _STRESS_ENTRY.findall(bracket)}
    total = value(words[0] if words else "", words[1] if len(words) > 1 else "",
                  f"'{_STRESS_LABELS[column]}'")
    return total, per_op


def _in_points(value: str) -> str:
    """A line's values from a decimal-comma locale as this reader takes them: digit
    groups joined (`_LOCALE_GROUPING`), decimal commas as points (``10.120 op/s``
    -> ``10120 op/s``, ``1,5 ms`` -> ``1.5 ms``)."""
    return re.sub(r"(?<=\d),(?=\d)", ".", _LOCALE_GROUPING.sub("", value))


def _stress_block(lines: list[str], start: int, where: str) -> dict:
    """{column: (total, {operation: value})} of the ``Results:`` block at ``start``
    (``where``: the file); printed in a locale whose decimal mark is a comma (one of
    its latencies shows one, `_DECIMAL_COMMA`), its numbers are read in it."""
    entries, ended = [], True  # (line number, key, value) of each line of the block
    for number, line in enumerate(lines[start + 1:], start=start + 2):
        key, colon, value = line.partition(":")
        if not colon or not line.strip():
            ended = False
            break
        entries.append((number, " ".join(key.lower().split()), value))
    comma = any(key.startswith("latency") and _DECIMAL_COMMA.search(value)
                for _, key, value in entries)
    block, closed = {}, False
    for number, key, value in entries:
        # the block's last line in versions that print no Total errors (3.0)
        if key == "total operation time":
            closed = True
            block["time"] = value.strip()
        if key in _STRESS_KEYS:
            if not value.strip():
                raise ConfigError(f"{where} line {number}: '{lines[number - 1].strip()}'"
                                  " has no value; give the output unedited")
            block[_STRESS_KEYS[key]] = _stress_value(
                _in_points(value) if comma else value, key, f"{where} line {number}")
    # a block the text ends in before its rate and mean, or before its last summary
    # line (Total errors; Total operation time where there is none), was cut there
    lacking = [column for column in ("rate", "mean_ms", "errors") if column not in block
               and not (column == "errors" and closed)]
    if ended and lacking:
        raise _CutShort(f"{where} line {start + 1}: a 'Results:' block cut short "
                        f"before '{_STRESS_LABELS[lacking[0]]}'; give the complete "
                        "block cassandra-stress prints at the end of a run")
    for column in ("rate", "mean_ms"):
        if column not in block:
            raise ConfigError(f"{where} line {start + 1}: a 'Results:' block without "
                              f"'{_STRESS_LABELS[column]}'; give the complete block "
                              "cassandra-stress prints at the end of a run")
    return block


def _refuse_all_failed(block: dict, where: str) -> None:
    """Refuse a ``Results:`` block (`_stress_block`) in which every operation, or every
    one of an operation kind, failed: its errors reach its operations, counted as its
    rate over its ``Total operation time`` at the low end of their rounding (rate less
    0.5 op/s, the time as printed in whole seconds)."""
    time = re.fullmatch(r"(\d+):(\d\d):(\d\d)", block.get("time", ""))
    if "errors" not in block or not time:
        return  # no operation count to hold the errors against
    seconds = 3600 * int(time[1]) + 60 * int(time[2]) + int(time[3])
    (rate, rates), (errors, per_op) = block["rate"], block["errors"]
    kinds = [(op, rates[op], per_op[op]) for op in rates if op in per_op]
    for kind, ops_rate, failed in [("", rate, errors)] + kinds:
        least = (ops_rate - 0.5) * seconds
        # under one operation at the low end (a run under a second, printed 00:00:00,
        # or a rate under 0.5 op/s): too short to tell
        if least >= 1 and failed >= least:
            counted = f"{kind}: {failed:,.0f} errors" if kind else \
                f"Total errors {failed:,.0f}"
            raise ConfigError(
                f"{where}: every {kind + ' ' if kind else ''}operation of this "
                f"'Results:' block failed ({counted} against about "
                f"{ops_rate * seconds:,.0f} operations: "
                f"{f'{ops_rate:,.0f}' if ops_rate >= 10 else f'{ops_rate:.3g}'} "
                f"op/s over {block['time']}): the run measured no latency; fix what made "
                "them fail and rerun (in a file of several runs, leave this one out)")


class _CutShort(ConfigError):
    """A ``Results:`` block lacking lines because the text ends inside it."""


def _stress_classes(block: dict, single: str | None, operations: dict,
                    where: str, name: str, listed_in: str | None) -> dict:
    names = list(block["rate"][1]) or ([single] if single else [])
    if not names:
        raise ConfigError(f"{where}: the results do not say which operation ran (no "
                          "[NAME: ...] after 'Op rate' and no 'Running NAME with N "
                          "threads'); give the output unedited")
    if names == [single] and single.upper() in ("MIXED", "USER"):
        # one rate and latency for the whole mix (cassandra-stress 2.1, ScyllaDB's
        # cql-stress): no side table can split it into its operations
        raise ConfigError(f"{where}: a {single.lower()} run whose results give one "
                          "latency for all its operations together (no [NAME: ...] per "
                          "operation), so no operation's own is known; run reads and "
                          "writes apart (cassandra-stress from 2.2 on prints each "
                          "operation's values in brackets)")
    unnamed = [n for n in names
               if operations.get(n.upper(), STRESS_OPERATIONS.get(n.upper()))
               not in ("read", "write")]
    if unnamed:
        example = " ".join(f"{n}=read" for n in unnamed)
        what = (f"operations {', '.join(unnamed)} of a user profile may be reads or "
                "writes" if len(unnamed) > 1 else
                f"operation {unnamed[0]} of a user profile may be a read or a write")
        raise ConfigError(f"{where}: {what}; say which: "
                          + _how_to_give({"operations": example}, name, listed_in))
    parts: dict[str, list[dict]] = {}
    for op in names:
        kind = operations.get(op.upper(), STRESS_OPERATIONS.get(op.upper()))
        stats = {"count": block["rate"][1].get(op, block["rate"][0])}
        for column in ("mean_ms", "p50_ms", "p95_ms", "p99_ms"):
            if column in block:
                total, per_op = block[column]
                stats[column] = per_op.get(op, total if len(names) == 1 else None)
        if stats["mean_ms"] is None:
            raise ConfigError(f"{where}: no mean latency for operation {op!r}; give "
                              "the output unedited")
        parts.setdefault(kind, []).append(stats)
    return {kind: _merge(p, where) for kind, p in parts.items()}


def _operations(text: str, where: str) -> dict:
    """{NAME: 'read' or 'write'} from a side table's ``operations`` cell."""
    mapping = {}
    for item in text.replace(";", " ").split():
        op, equals, kind = item.partition("=")
        if not (op and equals and kind.strip().lower() in ("read", "write")):
            raise ConfigError(f"{where}: operations {text!r} is not a list of "
                              "name=read or name=write separated by spaces; write "
                              "e.g. insert=write simple1=read")
        mapping[op.upper()] = kind.strip().lower()
    return mapping


def parse_cassandra_stress(text: str, consistency: str | None = None,
                           threads: int | None = None, operations: dict | None = None,
                           where: str = _STRESS_TEXT, *,
                           listed_in: str | None = None) -> list[dict]:
    """Measurement rows of every ``Results:`` block of a cassandra-stress output.

    ``threads`` is needed only when the output does not print its thread count;
    ``consistency`` when it does not print its settings; ``operations`` maps the names
    of user-profile operations to ``'read'`` or ``'write'``. ``listed_in`` names the
    side table row these come from, for errors.
    """
    name = "<file>" if where == _STRESS_TEXT else Path(where).name
    given_by = listed_in or "by the caller"
    operations = {k.upper(): str(v).lower() for k, v in (operations or {}).items()}
    lines = text.splitlines()
    given_level = None if consistency is None else _level(consistency, where, "given")
    given_threads = None if threads is None else whole_threads(threads, where)
    file_level, file_threads, single, rows = None, None, None, []
    pace = (0, 0)  # (the rate the settings hold the run to, their line)
    blocks = sum(line.strip().lower() == "results:" for line in lines)
    # the line that stated the thread count since the last block: a later block without
    # one would take an earlier run's count
    stated_at = None
    # since the last block: a level stated, a run of its own begun ("Running WRITE with
    # N threads" with no auto run's "Running with N threadCount" before it)
    level_since, own_run, auto = False, False, False
    # (threads, line) of the run begun since the last results: an auto run stopped
    # before its last thread count's results ends inside it
    started = None
    for index, line in enumerate(lines):
        for pattern in _STRESS_LEVEL:
            if match := pattern.search(line):
                file_level = _level(match.group(1), f"{where} line {index + 1}",
                                    "the output's settings")
                level_since = True
        for pattern in _STRESS_THREADS:
            if match := pattern.search(line):
                file_threads = whole_threads(match.group(1), f"{where} line {index + 1}")
                stated_at = index + 1
                auto = auto or pattern is _STRESS_THREADS[0]
                own_run = own_run or (pattern is _STRESS_THREADS[1] and not auto)
                if pattern is not _STRESS_THREADS[2] and started is None:
                    started = (file_threads, index + 1)
        if match := re.search(r"Running (\S+) with \d+ threads", line):
            single = match.group(1)
        elif match := re.match(r"^\s*Type:\s*([A-Za-z_]+)\s*$", line):
            # the settings' command (ScyllaDB's cql-stress prints no "Running ...")
            single = match.group(1).upper()
        if match := _STRESS_PACE.match(line):
            pace = (int(match.group(1)), index + 1)
        if line.strip().lower() != "results:":
            continue
        try:
            block = _stress_block(lines, index, where)
        except _CutShort:
            started = started or (given_threads or file_threads, index + 1)
            break
        started = None
        run = f"{where} line {index + 1}"
        _refuse_all_failed(block, run)
        source = "the output"
        if file_threads is None and given_threads is not None and blocks > 1:
            # each block of an auto run (or of runs pasted together) ran at its own
            # thread count: one value given for them all would be wrong for all but one
            raise ConfigError(
                f"{where}: the file has {blocks} 'Results:' blocks and no 'Running with "
                f"N threadCount' line before the one at line {index + 1}: one threads "
                f"value ({given_threads}, given "
                f"{given_by if given_by.startswith('by ') else 'in ' + given_by}) cannot "
                "apply to all of them; split the file, one run per file, or give the "
                "thread counts in it (a 'Running with N threadCount' line before each "
                "block)")
        if rows and stated_at is None and file_threads is not None:
            raise ConfigError(
                f"{where}: the 'Results:' block at line {index + 1} states no thread "
                f"count since the block before it (which ran at {file_threads} threads): "
                "that count is another run's; give the thread count before each block "
                "(a 'Running with N threadCount' line), or split the file, one run per "
                "file")
        if rows and own_run and not level_since and given_level is None:
            raise ConfigError(
                f"{where}: the run whose 'Results:' block is at line {index + 1} states "
                f"no consistency level of its own (the run before it ran at "
                f"{file_level}): that level is another run's; give each run with its "
                "settings banner (Consistency Level:), or split the file, one run per "
                "file")
        stated_at, level_since, own_run, auto = None, False, False, False
        count = _agree(given_threads, file_threads, "threads", run, source, given_by)
        level = _agree_level(given_level, file_level, run, source, given_by)
        missing = {}
        if count is None:
            missing["threads"] = "'Running with N threadCount' line before the results"
        if level is None:
            missing["consistency"] = "'Consistency Level:' setting or cl=..."
        try:
            classes = _stress_classes(block, single, operations, run, name, listed_in)
        except ConfigError as error:
            if not missing:
                raise
            # one refusal naming all that is missing, not one per attempt
            raise ConfigError(f"{error}; nor does it state the run's "
                              + _unstated(missing, name, listed_in)) from None
        if missing:
            _not_stated(run, missing, name, listed_in)
        errors = block.get("errors", (0, {}))[0]
        if errors:
            warnings.warn(f"{where}: {errors:g} operations failed at {count} threads",
                          UserWarning, stacklevel=2)
        found = _rows(classes, {"read": level, "write": level}, count,
                      block["rate"][0], f"{run} ({count} threads)")
        if pace[0] and block["rate"][0] >= (1 - PACED) * pace[0]:
            # held to a rate it reached, as YCSB's -target: requests arrive at that
            # rate, not when the previous one returns, so the run is an open loop
            warnings.warn(f"{run}: the run was held to {pace[0]:,} ops/s (OpsPer Sec, "
                          f"line {pace[1]}) and reached {block['rate'][0]:,.6g}: its rows "
                          "are read as an open loop at that rate (rate), not as "
                          f"{count} closed-loop threads", UserWarning, stacklevel=2)
            for row in found:
                row["rate"], row["threads"] = row["throughput"], ""
        rows += found
    if started is not None:
        count, line = started
        run = f"the run at {count} threads" if count else "a run"
        if not rows:
            raise ConfigError(_cut_short(where, CASSANDRA_STRESS,
                                         f"it ends inside {run}, begun at line {line}",
                                         "no complete 'Results:' block"))
        warnings.warn(f"{where}: the output ends inside {run} (begun at line {line}; "
                      "incomplete: interrupted?), so that run is left out; the "
                      f"runs at {', '.join(dict.fromkeys(r['threads'] for r in rows))} "
                      "threads are read", UserWarning, stacklevel=2)
    elif rows and (re.search(r"^\s*Auto:\s*true\s*$", text, re.M | re.I)
                   or _STRESS_THREADS[0].search(text)) and not any(
            line.strip() == "END" for line in lines):
        # an auto run ('Auto: true' in 3.x-4.x settings; 'Running with N threadCount',
        # which only auto runs print, in 2.1 too) prints its summary table and END after
        # its last thread count: stopped between two counts, it shows no run begun
        warnings.warn(f"{where}: an auto run without its closing summary and END "
                      "(incomplete: interrupted?); the runs at "
                      f"{', '.join(dict.fromkeys(r['threads'] for r in rows))} threads "
                      "are read; thread counts it did not reach may be missing",
                      UserWarning, stacklevel=2)
    if not rows:
        if (start := _started_as(text)) and start[0] == CASSANDRA_STRESS:
            raise ConfigError(_cut_short(where, CASSANDRA_STRESS,
                                         f"{start[1]} at line {start[2]}",
                                         _SUMMARY[CASSANDRA_STRESS]))
        raise ConfigError(f"{where}: no 'Results:' block; give the complete output "
                          "of a finished cassandra-stress run")
    return rows


def _csv_header(text: str) -> list[str]:
    """The lower-case names of the first line of a CSV text that is neither blank nor a
    comment (``#`` first), split at its separator (`separator_of`)."""
    line = header_line(text)
    return [cell.strip().lower() for cell in
            next(csv.reader([line], delimiter=separator_of(line)))] if line else []


def read_side_table(path) -> dict[str, dict]:
    """{file as written: entry} of a side table (see the module docstring).

    Each entry holds ``threads`` (int or None), ``consistency`` (str or None),
    ``operations`` ({NAME: 'read' or 'write'}), ``path`` (the file's path, relative to
    the table's folder) and ``row`` (the table and line, for errors); an empty cell
    is None: the output states it.
    """
    check_input_file(path, "side table")
    folder = Path(path).parent
    # blank and comment lines skipped, as in a measurement file
    header, records, _ = csv_records(path)
    if header is None:
        raise ConfigError(f"side table {path} is empty; give the header "
                          f"{','.join(SIDE_TABLE_COLUMNS[:3])} and one row per output")
    header = [name.lower() for name in header]
    unknown = [n for n in header if n not in SIDE_TABLE_COLUMNS]
    if "file" not in header or unknown or len(set(header)) < len(header):
        raise ConfigError(
            f"side table {path}: the header must name file and any of "
            f"{', '.join(SIDE_TABLE_COLUMNS[1:])}, each once, e.g. "
            f"{','.join(SIDE_TABLE_COLUMNS[:3])} (got {','.join(header)})")
    table, seen = {}, {}
    for line, fields in records:
        where = f"side table {path} line {line}"
        if len(fields) > len(header):
            raise ConfigError(f"{where}: {len(fields)} fields under a header of "
                              f"{len(header)}; give one field per column")
        row = dict(zip(header, (f.strip() for f in fields)))
        if not row.get("file"):
            raise ConfigError(f"{where}: no file named; give the path of a "
                              "benchmark output relative to the side table")
        key, file = row["file"], folder / row["file"]
        if file.resolve() in seen:
            raise ConfigError(f"{where}: file {key!r} is listed twice (also line "
                              f"{seen[file.resolve()]}); keep one row per file")
        seen[file.resolve()] = line
        both = _level(row["consistency"], where, "side table") \
            if row.get("consistency") else None
        levels = {op: _agree(both, _level(row[f"{op}_consistency"], where,
                                           "side table")
                             if row.get(f"{op}_consistency") else None,
                             "consistency", where, f"its {op}_consistency cell",
                             "in its consistency cell")
                  for op in ("read", "write")}
        table[key] = {
            "threads": whole_threads(row["threads"], where) if row.get("threads")
            else None,
            "consistency": both if levels["read"] == levels["write"] else None,
            "levels": levels,
            "operations": _operations(row.get("operations", ""), where),
            "run": row.get("run") or None,
            "path": file, "row": where}
    return table


def _side_entry(table: dict, path, where: str) -> dict:
    """The entry of ``path``: the one naming the same file, else the only one with
    its bare name."""
    target = Path(path).resolve()
    for key, entry in table.items():
        if Path(entry.get("path", key)).resolve() == target:
            return entry
    same_name = [entry for key, entry in table.items()
                 if Path(key).name == Path(path).name]
    if len(same_name) == 1:
        return same_name[0]
    if same_name:
        raise ConfigError(f"{where}: several side table rows name a file "
                          f"{Path(path).name}; name it by its path relative to the "
                          "side table")
    raise ConfigError(f"{where}: not in the side table; add a row naming it "
                      f"({Path(path).name},<threads>,<consistency> for a table in the "
                      "same folder; paths are relative to the table's folder)")


def read_benchmark_output(path, threads: int | None = None,
                          consistency: str | None = None,
                          side_table: dict | None = None,
                          operations: dict | None = None) -> list[dict]:
    """Measurement rows of one benchmark output file, its format detected by content.

    ``side_table`` (from `read_side_table`) supplies threads, consistency and
    operations for the file (found as the module docstring says); values given here
    and there must agree.
    """
    check_input_file(path, "benchmark output")
    where = str(path)
    text = _output_text(path)
    listed_in, entry = None, None
    if side_table is not None:
        entry = _side_entry(side_table, path, where)
        listed_in = entry.get("row", "the side table")
        threads = _agree(threads, entry.get("threads"), "threads", where, listed_in,
                         "by the caller")
        consistency = _agree(consistency, entry.get("consistency"), "consistency",
                             where, listed_in, "by the caller")
        mapping = {k.upper(): str(v).lower() for k, v in (operations or {}).items()}
        for op, kind in (entry.get("operations") or {}).items():
            mapping[op] = _agree(mapping.get(op), kind, f"operation {op}", where,
                                 listed_in, "by the caller")
        operations = mapping
    levels = (entry or {}).get("levels") or {}
    if detect_format(text, where) == YCSB:
        if entry is not None and entry.get("operations"):
            raise ConfigError(f"{entry['row']}: operations is for cassandra-stress "
                              "user profiles; YCSB names its own ([READ], [UPDATE], "
                              "...): leave that cell empty")
        if levels.get("read") != levels.get("write"):
            per = {op: _agree(consistency, levels.get(op), "consistency", where,
                              listed_in, "by the caller") for op in ("read", "write")}
            return parse_ycsb(text, threads, per, where, listed_in=listed_in)
        return parse_ycsb(text, threads, consistency, where, listed_in=listed_in)
    if levels.get("read") != levels.get("write"):
        raise ConfigError(f"{entry['row']}: a cassandra-stress run has one consistency "
                          "level (cl=); give it in the consistency cell")
    return parse_cassandra_stress(text, consistency, threads, operations, where,
                                  listed_in=listed_in)


def write_measurement_file(rows: list[dict], path) -> None:
    """Write rows as a measurement CSV (the columns any row uses, in file order)."""
    columns = [c for c in COLUMNS if any(c in row for row in rows)]
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns, restval="",
                                lineterminator="\n", extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)


def side_table_files(path) -> list[Path]:
    """The benchmark outputs a side table at ``path`` lists (as it resolves them),
    for the commands to keep their outputs off them; [] for any other file and for a
    side table that cannot be read (reading it as input says why)."""
    try:
        # the header is on the first lines (after comments): no whole file read
        with open(path, encoding=input_encoding(path), errors="replace") as handle:
            start = handle.read(1 << 16)
        if not is_side_table(_csv_header(start)):
            return []
        return [entry["path"] for entry in read_side_table(path).values()]
    except (OSError, UnicodeError, ConfigError, csv.Error):
        return []


def is_side_table(header: list[str]) -> bool:
    """Whether a CSV header (lower-case names) is a side table's: it names ``file``
    and not the ``operation`` and ``mean_ms`` of a measurement file."""
    return "file" in header and not {"operation", "mean_ms"} & set(header)


def _clients_as_one(rows: list[dict], table) -> list[dict]:
    """``rows`` (from a side table's outputs, each with its ``_file`` and ``_run``
    name) with the rows of the outputs of one run name, the clients of one run,
    merged per operation as the cluster saw them: threads, throughputs (and paced
    rates) added up, each mean weighted by the client's operations of its kind (its
    ``_count``, else its throughput times its share of them), the share of reads of
    the whole run, percentiles dropped (those of a mixture are not its parts'). The
    clients must agree on the level and the loop; rows without a run name are kept
    as they are, and several outputs of one configuration among them are warned
    about (repeats, or clients not named as one run?)."""
    out, groups = [], {}
    for row in rows:
        run = row.pop("_run")
        if run is None:
            out.append(row)
        else:
            groups.setdefault(run, []).append(row)
    alike = {}
    for row in out:
        alike.setdefault(tuple(row.get(column) for column in _CONFIGURATION),
                         set()).add(row["_file"])
    if same := next((sorted(files) for files in alike.values() if len(files) > 1), None):
        warnings.warn(f"side table {table}: {' and '.join(same)} measured the same "
                      "operation, level, load and mix: repeats, or the clients of one "
                      "run? If clients, give them one name in a run column (their "
                      "threads and throughputs are then added up)", UserWarning,
                      stacklevel=3)
    for run, members in groups.items():
        where = f"side table {table}, run {run!r}"
        files = sorted({row["_file"] for row in members})
        if len(files) < 2:
            out += members  # one client: nothing to add up
            continue
        for operation in ("read", "write"):
            parts = [row for row in members if row["operation"] == operation]
            if parts:
                out.append(_one_run(parts, operation, files, run, where))
    return out


#: The columns that make two rows the same configuration: a repeat, or another client.
_CONFIGURATION = ("operation", "consistency", "threads", "rate", "read_fraction")


def _one_run(parts: list[dict], operation: str, files: list[str], run: str,
             where: str) -> dict:
    """The row of ``operation`` of one run from its clients' rows (`_clients_as_one`)."""
    if len(parts) != len(files):
        raise ConfigError(f"{where}: {len(parts)} of its {len(files)} outputs "
                          f"measured {operation}s; clients of one run run the same "
                          "workload: check the files, or give each its own run name")
    differ = [column for column in ("consistency", "threads", "rate")
              if len({p.get(column) if column == "consistency" else bool(p.get(column))
                      for p in parts}) > 1]
    if differ:
        raise ConfigError(f"{where}: its outputs ({', '.join(files)}) differ in "
                          f"{differ[0]}; clients of one run share its level and loop: "
                          "give each its own run name")
    if lacking := [p["_file"] for p in parts if not p.get("throughput")]:
        raise ConfigError(f"{where}: {lacking[0]} states no throughput, by which the "
                          "clients of one run are added up; give its complete output, "
                          "or list it apart (without the run name)")
    throughput = [float(p["throughput"]) for p in parts]
    share = [float(p["read_fraction"]) if p.get("read_fraction") else
             (1.0 if operation == "read" else 0.0) for p in parts]
    done = ([float(p["_count"]) for p in parts] if all("_count" in p for p in parts) else
            [t * (r if operation == "read" else 1.0 - r) for t, r in zip(throughput, share)])
    merged = {"operation": operation, "consistency": parts[0]["consistency"],
              "threads": str(sum(int(p["threads"]) for p in parts))
              if parts[0].get("threads") else "",
              "throughput": _text(sum(throughput)),
              "mean_ms": _text(float(np.average([float(p["mean_ms"]) for p in parts],
                                                weights=done))),
              "_from": f"{' + '.join(files)}, run {run!r}", "_file": " + ".join(files)}
    if parts[0].get("rate"):
        merged["rate"] = merged["throughput"]
    if any(p.get("read_fraction") for p in parts):
        merged["read_fraction"] = _text(float(np.average(share, weights=throughput)))
    return merged


def benchmark_rows(path) -> list[dict] | None:
    """Measurement rows of ``path`` if it is benchmark output (YCSB, cassandra-stress)
    or a side table of such outputs (see the module docstring); None for anything
    else (a measurement CSV)."""
    text = _output_text(path)
    if is_side_table(_csv_header(text)):
        table = read_side_table(path)
        rows = []
        for key, entry in table.items():
            if not entry["path"].exists():
                raise ConfigError(f"{entry['row']}: {key} does not exist (looked for "
                                  f"{entry['path']}: paths are relative to the side "
                                  "table's folder); correct the path")
            # the output each row came from, for messages about the row
            rows += [dict(row, _from=f"{key}, side table {entry['row'].split()[-2]} "
                                     f"{entry['row'].split()[-1]}", _file=key,
                          _run=entry["run"])
                     for row in read_benchmark_output(entry["path"], side_table=table)]
        rows = _clients_as_one(rows, path)
        if not rows:
            raise ConfigError(f"side table {path} lists no benchmark output; add a "
                              "row per output: file,threads,consistency")
        return rows
    if {"operation", "consistency"} <= set(_csv_header("\n".join(
            line for line in text.splitlines() if not line.lstrip().startswith("#")))):
        return None  # a measurement CSV, whatever its comments quote
    try:
        detect_format(text, str(path))
    except ConfigError:
        return None
    return read_benchmark_output(path)
