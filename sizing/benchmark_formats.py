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
    (``cassandra.readconsistencylevel=...``, ``cassandra.writeconsistencylevel``).
``cassandra-stress``
    Each ``Results:`` block (``Op rate``, ``Latency mean``, ``Latency median``,
    ``Latency 95th percentile``, ``Latency 99th percentile``, ``Total errors``;
    per-operation values in brackets, ``[READ: 9,000 op/s, WRITE: 1,000 op/s]``),
    with the threads of the ``Running with N threadCount`` (or ``Running WRITE
    with N threads``, ``Thread Count: N``) line before it, and the level of the
    settings (``Consistency Level: QUORUM``) or a ``cl=QUORUM`` in the output.

Every run gives one row per operation class (read, write) in the dict form of
`sizing.measurements` (text values; ms and ops/s): ``operation, consistency,
threads, throughput, mean_ms`` and, when given, ``p50_ms, p95_ms, p99_ms,
read_fraction``. ``throughput`` is the whole run's operations per second (what a
simulated run of the same mix is compared with); in a mixed run both rows carry it,
and ``read_fraction`` is the share of reads in the run. Writes of several kinds (YCSB
updates and inserts) are merged into one write row: their mean weighted by
operation count, their percentiles dropped (those of a mixture cannot be rebuilt
from its parts). Bad input raises `ConfigError`; failed operations warn.
"""

from __future__ import annotations

import csv
import re
import warnings
from pathlib import Path

from forkjoin_sim.cassandra.model import CONSISTENCY_LEVELS
from forkjoin_sim.errors import ConfigError
from forkjoin_sim.checks import check_input_file, plain_float
from sizing.columns import COLUMNS

YCSB = "ycsb"
CASSANDRA_STRESS = "cassandra-stress"
FORMATS = (YCSB, CASSANDRA_STRESS)
#: Levels a benchmark may name (the LOCAL_* and EACH_* forms are read as their
#: single-data-centre equivalents by `sizing.measurements`).
LEVELS = tuple(CONSISTENCY_LEVELS) + ("LOCAL_ONE", "LOCAL_QUORUM", "EACH_QUORUM")
#: Operation kinds of each tool that this project models, by operation class.
YCSB_OPERATIONS = {"READ": "read", "UPDATE": "write", "INSERT": "write",
                   "DELETE": "write"}
STRESS_OPERATIONS = {"READ": "read", "COUNTER_READ": "read", "WRITE": "write",
                     "COUNTER_WRITE": "write", "INSERT": "write"}
SIDE_TABLE_COLUMNS = ("file", "threads", "consistency")
_TO_MS = {"us": 1e-3, "ms": 1.0}
_YCSB_LINE = re.compile(r"^\[([^\]]+)\],\s*([^,]+?)\s*,\s*(\S+)\s*$")
_YCSB_LATENCY = re.compile(r"^(Average|\d+(?:\.\d+)?)(?:th)?(?:Percentile)?Latency"
                           r"\((us|ms)\)$")
_STRESS_THREADS = (re.compile(r"Running with (\d+) threadCount"),
                   re.compile(r"Running \S+ with (\d+) threads"),
                   re.compile(r"^\s*Thread Count:\s*(\d+)\s*$"))
_STRESS_LEVEL = (re.compile(r"^\s*Consistency Level:\s*([A-Za-z_]+)\s*$"),
                 re.compile(r"(?:^|\s)cl=([A-Za-z_]+)(?=\s|$)"))
_STRESS_ENTRY = re.compile(r"([A-Za-z_][\w.-]*)\s*:\s*(-?[\d,]*\.?\d+|NaN)")
_STRESS_KEYS = {"op rate": "rate", "latency mean": "mean_ms",
                "latency median": "p50_ms", "latency 95th percentile": "p95_ms",
                "latency 99th percentile": "p99_ms", "total errors": "errors"}


def detect_format(text: str, where: str = "benchmark output") -> str:
    """`YCSB` or `CASSANDRA_STRESS`, from the lines only that tool prints."""
    for line in text.splitlines():
        match = _YCSB_LINE.match(line.strip())
        if match and (match.group(1) == "OVERALL" or match.group(1) in YCSB_OPERATIONS):
            return YCSB
        if line.strip().lower() == "results:" or _STRESS_THREADS[0].search(line):
            return CASSANDRA_STRESS
    raise ConfigError(f"{where} is neither YCSB nor cassandra-stress output: no "
                      "'[OVERALL], Throughput(ops/sec), ...' line and no 'Results:' "
                      "block; give the complete text the benchmark printed")


def _text(value: float) -> str:
    return f"{value:.15g}"


def _number(text: str, what: str, where: str) -> float:
    try:
        return plain_float(text.replace(",", ""))
    except ValueError:
        raise ConfigError(f"{where}: {what} {text!r} is not a number; give the "
                          "benchmark's output unedited") from None


def _level(level, where: str, source: str) -> str:
    name = str(level).strip().upper()
    if name not in LEVELS and not (name.isascii() and name.isdigit()):
        raise ConfigError(f"{where}: consistency {level!r} ({source}) is unknown; use "
                          f"one of {', '.join(LEVELS)} or a whole number")
    return name


def _agree(given, found, what: str, where: str, source: str):
    """The caller's value, the file's, or refuse when both are given and differ."""
    if None not in (given, found) and str(given).upper() != str(found).upper():
        raise ConfigError(f"{where}: {what}={given} was given but {source} says "
                          f"{found}; drop one or correct it")
    return given if given is not None else found


def _threads(value, where: str) -> int:
    text = str(value).strip()
    if not (text.isascii() and text.isdigit()) or int(text) < 1:
        raise ConfigError(f"{where}: threads={value!r} must be a whole number >= 1 "
                          "(client threads of the run)")
    return int(text)


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
    return row


def _merge(parts: list[dict], where: str) -> dict:
    """One operation class from its kinds: count-weighted mean, no percentiles."""
    if len(parts) == 1:
        return parts[0]
    if any(not p.get("count") for p in parts):
        raise ConfigError(f"{where}: several write kinds ran but their operation "
                          "counts are missing, so their means cannot be merged; give "
                          "the full summary with the 'Operations' lines")
    count = sum(p["count"] for p in parts)
    return {"count": count,
            "mean_ms": sum(p["count"] * p["mean_ms"] for p in parts) / count}


def _rows(classes: dict, levels: dict, threads: int, throughput,
          where: str) -> list[dict]:
    """Rows of one run from its merged operation classes."""
    fraction = None
    if len(classes) == 2:
        reads, writes = classes["read"].get("count"), classes["write"].get("count")
        if not reads or not writes:
            raise ConfigError(f"{where}: a mixed run without operation counts per "
                              "kind; give the full summary so the share of reads is "
                              "known")
        fraction = reads / (reads + writes)
    out = []
    for operation in ("read", "write"):
        if operation in classes:
            if levels.get(operation) is None:
                raise ConfigError(f"{where}: the consistency level of the {operation}s "
                                  "is not known; pass consistency=... or add the file "
                                  "to a side table (file,threads,consistency)")
            out.append(_row(operation, levels[operation], threads, throughput,
                            classes[operation], fraction))
    return out


def _ycsb_command_line(text: str) -> dict:
    """Threads and consistency levels from YCSB's ``Command line:`` line, if any."""
    found = {}
    for line in text.splitlines():
        if not line.strip().startswith("Command line:"):
            continue
        words = line.split()
        for i, word in enumerate(words):
            if word == "-threads" and i + 1 < len(words):
                found["threads"] = words[i + 1]
            key, _, value = word.partition("=")
            if key == "threadcount":
                found["threads"] = value
            elif key == "cassandra.readconsistencylevel":
                found["read"] = value
            elif key == "cassandra.writeconsistencylevel":
                found["write"] = value
    return found


def parse_ycsb(text: str, threads: int | None = None, consistency: str | None = None,
               where: str = "YCSB output") -> list[dict]:
    """Measurement rows of one YCSB run's summary (see the module docstring).

    ``threads`` and ``consistency`` (one level for reads and writes) are needed unless
    the output's ``Command line:`` states them; given both ways, they must agree.
    """
    sections: dict[str, dict[str, str]] = {}
    for line in text.splitlines():
        match = _YCSB_LINE.match(line.strip())
        if match:
            sections.setdefault(match.group(1), {})[match.group(2)] = match.group(3)
    if "Throughput(ops/sec)" not in sections.get("OVERALL", {}):
        raise ConfigError(f"{where}: no '[OVERALL], Throughput(ops/sec), ...' line; "
                          "give the summary YCSB prints at the end of a run")
    throughput = _number(sections["OVERALL"]["Throughput(ops/sec)"], "throughput",
                         where)
    if scans := sections.get("SCAN", {}).get("Operations"):
        if _number(scans, "SCAN operations", where) > 0:
            raise ConfigError(f"{where}: the run has [SCAN] operations, which the "
                              "model has no counterpart for; run a workload without "
                              "scans (scanproportion=0)")
    parts: dict[str, list[dict]] = {}
    failed = 0.0
    for name, metrics in sections.items():
        if name.endswith("-FAILED"):
            failed += _number(metrics.get("Operations", "0"), "failed operations",
                              where)
        if name not in YCSB_OPERATIONS:
            continue
        stats = {"count": _number(metrics["Operations"], f"[{name}] Operations", where)
                 if "Operations" in metrics else None}
        if stats["count"] == 0:
            continue
        for metric, value in metrics.items():
            latency = _YCSB_LATENCY.match(metric)
            if latency:
                kind, unit = latency.groups()
                column = {"Average": "mean_ms", "50": "p50_ms", "95": "p95_ms",
                          "99": "p99_ms"}.get(kind)
                if column:
                    stats[column] = _TO_MS[unit] * _number(value, f"[{name}] {metric}",
                                                           where)
            elif metric.startswith("Return=") and metric[7:] not in ("OK", "0"):
                failed += _number(value, f"[{name}] {metric}", where)
        if stats.get("mean_ms") is None:
            raise ConfigError(f"{where}: [{name}] has no AverageLatency line; give the "
                              "complete summary YCSB prints at the end of a run")
        parts.setdefault(YCSB_OPERATIONS[name], []).append(stats)
    if not parts:
        raise ConfigError(f"{where}: no [READ], [UPDATE] or [INSERT] summary lines "
                          "with operations; give the output of a YCSB 'run' (not only "
                          "its [OVERALL] lines or status lines)")
    if failed:
        warnings.warn(f"{where}: {failed:g} operations failed; depending on the YCSB "
                      "version their latencies are in the averages", UserWarning,
                      stacklevel=2)
    stated = _ycsb_command_line(text)
    source = "the output's command line"
    file_threads = stated.get("threads")
    count = _agree(None if threads is None else _threads(threads, where),
                   None if file_threads is None else _threads(file_threads, where),
                   "threads", where, source)
    if count is None:
        raise ConfigError(f"{where}: the number of client threads is not known; pass "
                          "threads=N or add the file to a side table "
                          "(file,threads,consistency)")
    given = None if consistency is None else _level(consistency, where, "given")
    levels = {op: _agree(given, _level(stated[op], where, source) if op in stated
                         else None, "consistency", where, source)
              for op in ("read", "write")}
    classes = {op: _merge(p, where) for op, p in parts.items()}
    return _rows(classes, levels, count, throughput, where)


def _stress_value(text: str, key: str, where: str) -> tuple[float, dict]:
    """The total and the per-operation values of one ``Results:`` line."""
    head, _, bracket = text.partition("[")
    total = head.split()[0] if head.split() else ""
    per_op = {name: _number(value, f"{key} of {name}", where)
              for name, value in _STRESS_ENTRY.findall(bracket)}
    return _number(total, key, where), per_op


def _stress_block(lines: list[str], start: int, where: str) -> dict:
    """{column: (total, {operation: value})} of the ``Results:`` block at ``start``."""
    block = {}
    for line in lines[start + 1:]:
        key, colon, value = line.partition(":")
        if not colon or not line.strip():
            break
        key = " ".join(key.lower().split())
        if key in _STRESS_KEYS:
            if not value.strip():
                raise ConfigError(f"{where}: '{key}' has no value; give the output "
                                  "unedited")
            block[_STRESS_KEYS[key]] = _stress_value(value, key, where)
    for column, label in (("rate", "Op rate"), ("mean_ms", "Latency mean")):
        if column not in block:
            raise ConfigError(f"{where}: a 'Results:' block without '{label}'; give "
                              "the complete block cassandra-stress prints at the end "
                              "of a run")
    return block


def _stress_classes(block: dict, single: str | None, operations: dict,
                    where: str) -> dict:
    names = list(block["rate"][1]) or ([single] if single else [])
    if not names:
        raise ConfigError(f"{where}: the results do not say which operation ran; pass "
                          "operations={'<name>': 'read' or 'write'}")
    parts: dict[str, list[dict]] = {}
    for name in names:
        kind = operations.get(name.upper(), STRESS_OPERATIONS.get(name.upper()))
        if kind not in ("read", "write"):
            raise ConfigError(f"{where}: operation {name!r} is neither a read nor a "
                              f"write here; pass operations={{'{name}': 'read'}} (or "
                              "'write')")
        stats = {"count": block["rate"][1].get(name, block["rate"][0])}
        for column in ("mean_ms", "p50_ms", "p95_ms", "p99_ms"):
            if column in block:
                total, per_op = block[column]
                stats[column] = per_op.get(name, total if len(names) == 1 else None)
        if stats["mean_ms"] is None:
            raise ConfigError(f"{where}: no mean latency for operation {name!r}; give "
                              "the output unedited")
        parts.setdefault(kind, []).append(stats)
    return {kind: _merge(p, where) for kind, p in parts.items()}


def parse_cassandra_stress(text: str, consistency: str | None = None,
                           threads: int | None = None, operations: dict | None = None,
                           where: str = "cassandra-stress output") -> list[dict]:
    """Measurement rows of every ``Results:`` block of a cassandra-stress output.

    ``threads`` is needed only when the output does not print its thread count;
    ``consistency`` when it does not print its settings; ``operations`` maps the names
    of user-profile operations to ``'read'`` or ``'write'``.
    """
    operations = {k.upper(): v for k, v in (operations or {}).items()}
    lines = text.splitlines()
    given_level = None if consistency is None else _level(consistency, where, "given")
    given_threads = None if threads is None else _threads(threads, where)
    file_level, file_threads, single, rows = None, None, None, []
    for index, line in enumerate(lines):
        for pattern in _STRESS_LEVEL:
            if match := pattern.search(line):
                file_level = _level(match.group(1), where, "the output's settings")
        for pattern in _STRESS_THREADS:
            if match := pattern.search(line):
                file_threads = _threads(match.group(1), where)
        if match := re.search(r"Running (\S+) with \d+ threads", line):
            single = match.group(1)
        if line.strip().lower() != "results:":
            continue
        block = _stress_block(lines, index, where)
        source = "the output"
        count = _agree(given_threads, file_threads, "threads", where, source)
        if count is None:
            raise ConfigError(f"{where}: the number of client threads is not known; "
                              "pass threads=N or add the file to a side table "
                              "(file,threads,consistency)")
        level = _agree(given_level, file_level, "consistency", where, source)
        errors = block.get("errors", (0, {}))[0]
        if errors:
            warnings.warn(f"{where}: {errors:g} operations failed at {count} threads",
                          UserWarning, stacklevel=2)
        classes = _stress_classes(block, single, operations, where)
        rows += _rows(classes, {"read": level, "write": level}, count,
                      block["rate"][0], f"{where} ({count} threads)")
    if not rows:
        raise ConfigError(f"{where}: no 'Results:' block; give the complete output "
                          "of a finished cassandra-stress run")
    return rows


def read_side_table(path) -> dict[str, dict]:
    """{file name: {"threads": int or None, "consistency": str or None}} from a CSV
    with the columns ``file,threads,consistency`` (empty cells: stated in the file)."""
    check_input_file(path, "side table")
    with open(path, newline="") as handle:
        reader = csv.DictReader(handle)
        names = [n.strip() for n in reader.fieldnames or []]
        if "file" not in names or set(names) - set(SIDE_TABLE_COLUMNS):
            raise ConfigError(f"side table {path}: the header must be "
                              f"{','.join(SIDE_TABLE_COLUMNS)} (got {','.join(names)})")
        table = {}
        for line, row in enumerate(reader, start=2):
            row = {(k or "").strip(): (v or "").strip() for k, v in row.items()}
            where = f"side table {path} line {line}"
            if row["file"] in table:
                raise ConfigError(f"{where}: file {row['file']!r} is listed twice; "
                                  "keep one row per file")
            threads = row.get("threads")
            table[row["file"]] = {
                "threads": _threads(threads, where) if threads else None,
                "consistency": _level(row["consistency"], where, "side table")
                if row.get("consistency") else None}
    return table


def read_benchmark_output(path, threads: int | None = None,
                          consistency: str | None = None,
                          side_table: dict | None = None,
                          operations: dict | None = None) -> list[dict]:
    """Measurement rows of one benchmark output file, its format detected by content.

    ``side_table`` (from `read_side_table`) supplies threads and consistency by the
    file's name; values given here and there must agree.
    """
    check_input_file(path, "benchmark output")
    where = str(path)
    text = Path(path).read_text(encoding="utf-8")
    if side_table is not None:
        name = Path(path).name
        if name not in side_table:
            raise ConfigError(f"{where}: not in the side table; add a row "
                              f"{name},<threads>,<consistency>")
        entry = side_table[name]
        threads = _agree(threads, entry["threads"], "threads", where, "the side table")
        consistency = _agree(consistency, entry["consistency"], "consistency", where,
                             "the side table")
    if detect_format(text, where) == YCSB:
        return parse_ycsb(text, threads, consistency, where)
    return parse_cassandra_stress(text, consistency, threads, operations, where)


def write_measurement_file(rows: list[dict], path) -> None:
    """Write rows as a measurement CSV (the columns any row uses, in file order)."""
    columns = [c for c in COLUMNS if any(c in row for row in rows)]
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns, restval="",
                                lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def benchmark_rows(path) -> list[dict] | None:
    """Measurement rows of ``path`` if it is benchmark output (YCSB, cassandra-stress)
    or a side table ``file,threads,consistency`` of such outputs (file names relative
    to the table); None for anything else (a measurement CSV)."""
    text = Path(path).read_text(encoding="utf-8")
    first = text.lstrip().split("\n", 1)[0]
    header = [cell.strip() for cell in first.split(",")]
    if header and header[0] == "file" and not set(header) - set(SIDE_TABLE_COLUMNS):
        table = read_side_table(path)
        rows = []
        for name in table:
            rows += read_benchmark_output(Path(path).parent / name, side_table=table)
        if not rows:
            raise ConfigError(f"side table {path} lists no benchmark output; add rows "
                              "file,threads,consistency")
        return rows
    try:
        detect_format(text, str(path))
    except ConfigError:
        return None
    return read_benchmark_output(path)
