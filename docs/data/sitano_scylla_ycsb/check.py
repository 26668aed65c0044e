"""Re-derive ``runs.csv`` and ``runs_meta.csv`` from Ivan Prisyazhnyy's YCSB result notes.

Source: github.com/sitano/scylla-ycsb-test-results, commit
bd3de263f8024facdd8e0a006ab8ece34e830120, files
``scylla/ycsb/scylla-ycsb-w{a,b,c,d}.md``. Each file has one ``## `` section
per YCSB run: the command line (``$ bin/ycsb run scylla ...`` or ``-db ...``)
and YCSB's final ``[OP], Metric, value`` summary, indented.

Kept: sections with a summary, consistency ONE/ONE, workloads A-D, neither
``scylla.lwt=true`` (Paxos, a different protocol) nor ``dataintegrity=true``
(extra client-side verification). Read mean: YCSB's ``[READ]`` (row found)
pooled with ``[READ-FAILED]`` when every failed read is NOT_FOUND (a served
read that found no row, workload D and the 1680-thread runs); when they are
ERRORs (5 s client timeouts) they are left out and counted in
``runs_meta.csv``. Write: ``[UPDATE]`` (A, B) or ``[INSERT]`` (D).

Usage (from the repository root)::

    .venv/bin/python docs/data/sitano_scylla_ycsb/check.py \
        /work/.mirror/sitano+scylla-ycsb-test-results/repo/.git      # compare
    .venv/bin/python docs/data/sitano_scylla_ycsb/check.py GITDIR --write
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

COMMIT = "bd3de263f8024facdd8e0a006ab8ece34e830120"
FILES = [f"scylla/ycsb/scylla-ycsb-w{w}.md" for w in "abcd"]
READ_FRACTION = {"a": 0.5, "b": 0.95, "c": 1.0, "d": 0.95}  # YCSB's workload files
WRITE_OP = {"a": "UPDATE", "b": "UPDATE", "d": "INSERT"}
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from transcription import check, git_show, summary  # noqa: E402 (the folder above)



def sections(text: str) -> list[tuple[int, str, list[str]]]:
    """(line number of the header, header, body lines) per ``## `` section."""
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith("## "):
            found.append((number, line[3:].strip(), []))
        elif found:
            found[-1][2].append(line)
    return found


def option(command: str, name: str) -> str | None:
    """Value of ``-p name=value`` (or of ``-name value``) on a YCSB command line."""
    match = re.search(rf"-p {re.escape(name)}=(\S+)", command) or \
        re.search(rf"(?:^|\s)-{re.escape(name)} (\S+)", command)
    return match[1] if match else None


def run_rows(path: str, number: int, header: str, body: list[str]) -> list[tuple[dict, dict]]:
    """The CSV rows (with their provenance) of one section, or none if it is left out."""
    command = next((l for l in body if " run scylla " in l or "-db site.ycsb" in l), None)
    values = summary("\n".join(body))
    if command is None or ("OVERALL", "RunTime(ms)") not in values:
        return []
    workload = re.search(r"workloads/workload([a-f])", command)[1]
    if (workload not in READ_FRACTION or option(command, "scylla.lwt") == "true"
            or option(command, "dataintegrity") == "true"):
        return []
    levels = {op: option(command, f"scylla.{op}consistencylevel") for op in ("read", "write")}
    if set(levels.values()) != {"ONE"}:
        return []
    threads = int(option(command, "threads"))
    target = option(command, "target")
    hosts = option(command, "scylla.hosts") or option(command, "hosts")
    found = values[("READ", "Operations")]
    failed = values.get(("READ-FAILED", "Operations"), 0.0)
    not_found = values.get(("READ", "Return=NOT_FOUND"), 0.0)
    errors = values.get(("READ", "Return=ERROR"), 0.0)
    if failed and failed == not_found:
        read_mean = np.average([values[("READ", "AverageLatency(us)")],
                                values[("READ-FAILED", "AverageLatency(us)")]],
                               weights=[found, failed])
    elif failed == errors:
        read_mean = values[("READ", "AverageLatency(us)")]
    else:
        raise ValueError(f"{path}:{number}: failed reads are neither all NOT_FOUND nor all ERROR")
    operations = [("read", float(read_mean), int(found + not_found))]
    if workload in WRITE_OP:
        op = WRITE_OP[workload]
        operations.append(("write", values[(op, "AverageLatency(us)")],
                           int(values[(op, "Operations")])))
    rows = []
    for operation, mean_us, count in operations:
        rows.append(({
            "operation": operation,
            "consistency": levels[operation],
            "threads": None if target else threads,
            "rate": int(target) if target else None,
            "throughput": round(values[("OVERALL", "Throughput(ops/sec)")], 3),
            "mean_ms": round(mean_us / 1000.0, 6),
            "read_fraction": READ_FRACTION[workload],
        }, {
            "operation": operation,
            "file": path,
            "line": number,
            "section": header,
            "workload": workload,
            "records": int(option(command, "recordcount")),
            "hosts": hosts,
            "client_threads": threads,
            "target": int(target) if target else None,
            "runtime_ms": int(values[("OVERALL", "RunTime(ms)")]),
            "operations": count,
            "read_not_found": int(not_found) if operation == "read" else None,
            "read_errors_excluded": int(errors) if operation == "read" else None,
        }))
    return rows


def tables(gitdir: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The measurement table and its per-row provenance table."""
    pairs = []
    for path in FILES:
        for number, header, body in sections(git_show(gitdir, COMMIT, path)):
            pairs += run_rows(path, number, header, body)
    runs = pd.DataFrame([p[0] for p in pairs]).astype({"threads": "Int64", "rate": "Int64"})
    meta = pd.DataFrame([p[1] for p in pairs]).astype(
        {"target": "Int64", "read_not_found": "Int64", "read_errors_excluded": "Int64"})
    return runs, meta


def main() -> int:
    return check(__doc__.splitlines()[0], "sitano/scylla-ycsb-test-results", tables, HERE)


if __name__ == "__main__":
    sys.exit(main())
