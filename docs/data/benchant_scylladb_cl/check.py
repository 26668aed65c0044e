"""Re-derive ``runs.csv`` and ``runs_meta.csv`` from benchANT's raw YCSB output.

Source: github.com/benchANT/mongodb-vs-scylladb, commit
4491eab35270906ac1faea73cc9d1ae30e40dd35, folders
``results/{caching,social}/nuggets/client-consistency-impact/*scylladb*``.
Each folder holds one YCSB run: ``0_run.txt`` (YCSB output; the final
``[OP], Metric, value`` summary lines are read here) and
``evaluationScenario.json`` (cluster and client configuration).

Usage (from the repository root)::

    .venv/bin/python docs/data/benchant_scylladb_cl/check.py \
        /work/.mirror/benchANT+mongodb-vs-scylladb/repo          # compare
    .venv/bin/python docs/data/benchant_scylladb_cl/check.py GITDIR --write

The argument is the git directory of a clone or of the ``fetch`` mirror (read
with ``git show``, no work tree needed). Without ``--write`` the script
rebuilds both tables in memory and exits non-zero if they differ from the
files next to it.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pandas as pd

COMMIT = "4491eab35270906ac1faea73cc9d1ae30e40dd35"
RUNS = [
    "results/caching/nuggets/client-consistency-impact/"
    "scylladb-vs-mongodb_caching-uniform_scylladb-medium-default_0_jlzPDO4j",
    "results/caching/nuggets/client-consistency-impact/"
    "scylladb-vs-mongodb_caching-uniform_scylladb-medium-weak-consistency_0_FEjq921w",
    "results/social/nuggets/client-consistency-impact/"
    "scylladb-vs-mongodb_social-uniform_scylladb-medium-default_0_v35V6jo0",
    "results/social/nuggets/client-consistency-impact/"
    "scylladb-vs-mongodb_social-uniform_scylladb-medium-weak-consistency_0_1x3K5Pow",
]
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from transcription import check, git_show, summary  # noqa: E402 (the folder above)




def command_option(text: str, name: str) -> str:
    """Value of ``-p name=value`` on YCSB's ``Command line:`` line."""
    line = next(l for l in text.splitlines() if l.startswith("Command line:"))
    return re.search(rf"-p {re.escape(name)}=(\S+)", line)[1]


def tables(gitdir: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The measurement table and its per-row provenance table."""
    rows, meta = [], []
    for folder in RUNS:
        text = git_show(gitdir, COMMIT, f"{folder}/0_run.txt")
        scenario = json.loads(git_show(gitdir, COMMIT, f"{folder}/evaluationScenario.json"))
        values = summary(text)
        cluster = scenario["dbmsDeployment"]["DBAAS"]["scylladbinstance"]
        workload = scenario["benchmark"]["ycsb"]["workload"]
        threads = int(re.search(r" -threads (\d+)", text)[1])
        for op, operation, option in (("READ", "read", "scylla.readconsistencylevel"),
                                      ("UPDATE", "write", "scylla.writeconsistencylevel")):
            level = command_option(text, option)
            rows.append({
                "operation": operation,
                "consistency": level,
                "threads": threads,
                "rate": None,
                "throughput": round(values[("OVERALL", "Throughput(ops/sec)")], 3),
                "mean_ms": round(values[(op, "AverageLatency(us)")] / 1000.0, 6),
                "read_fraction": workload["readProportion"],
            })
            meta.append({
                "operation": operation,
                "consistency": level,
                "read_fraction": workload["readProportion"],
                "run_folder": folder,
                "contact_points": command_option(text, "scylla.hosts"),
                "nodes": cluster["numberOfNodes"],
                "instance": cluster["instanceFlavor"],
                "replication_factor": cluster["replicationFactor"],
                "scylla_version": cluster["scyllaVersion"],
                "read_cl": command_option(text, "scylla.readconsistencylevel"),
                "write_cl": command_option(text, "scylla.writeconsistencylevel"),
                "runtime_ms": int(values[("OVERALL", "RunTime(ms)")]),
                "operations": int(values[(op, "Operations")]),
                "ok": int(values[(op, "Return=OK")]),
                "p95_ms": values[(op, "95thPercentileLatency(us)")] / 1000.0,
                "p99_ms": values[(op, "99thPercentileLatency(us)")] / 1000.0,
                "max_ms": values[(op, "MaxLatency(us)")] / 1000.0,
            })
    return pd.DataFrame(rows), pd.DataFrame(meta)


def main() -> int:
    return check(__doc__.splitlines()[0], "benchANT/mongodb-vs-scylladb", tables, HERE)


if __name__ == "__main__":
    sys.exit(main())
