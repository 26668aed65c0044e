"""Re-derive ``runs.csv`` and ``runs_meta.csv`` from benchANT's raw YCSB output.

Source: github.com/benchANT/aerospike-apache-cassandra-benchmark, commit
0914d4f92f8caac17a7ca2ee27f3e931aa16d4ec, folders
``results/performance/calibration/*cassandra-503-<N>-threads*``: one closed-loop
YCSB run of Apache Cassandra 5.0.3 per client thread count N. Each holds
``0_run.txt`` (YCSB output; its final ``[OP], Metric, value`` lines are read
here) and ``evaluationScenario.json``. The 50-thread run's ``0_run.txt`` is
not in the git objects (listed, blob missing), so that run is absent.

A YCSB read that finds no row is counted under ``[READ-FAILED]`` (status
NOT_FOUND) and left out of ``[READ]``; here the read mean covers both (they
pass through the same QUORUM read path), weighted by their counts. The write
mean covers INSERT, UPDATE and DELETE, weighted likewise. Throughput is all
operations divided by the run time (YCSB's own figure overflows a 32-bit
counter in some runs).

Usage (from the repository root)::

    .venv/bin/python docs/data/benchant_cassandra5/check.py \
        /work/.mirror/benchANT+aerospike-apache-cassandra-benchmark/repo     # compare
    .venv/bin/python docs/data/benchant_cassandra5/check.py GITDIR --write
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

COMMIT = "0914d4f92f8caac17a7ca2ee27f3e931aa16d4ec"
FOLDER = "results/performance/calibration/aerospike_sow2-production_aws-cassandra-503-"
RUNS = [
    "100-threads_0_tCBmmP06",
    "200-threads_0_BKW1V8DB",
    "250-threads_0_inLndsPI",
    "300-threads_0_SPnNQSF6",
    "400-threads_0_9g8ZPCGj",
]
READS = ("READ", "READ-FAILED")
WRITES = ("INSERT", "UPDATE", "DELETE")
NAMES = {"READ": "read_found", "READ-FAILED": "read_notfound", "INSERT": "insert",
         "UPDATE": "update", "DELETE": "delete"}
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from transcription import check, git_show, summary  # noqa: E402 (the folder above)




def pooled_mean_us(values: dict, operations: tuple[str, ...]) -> tuple[float, int]:
    """Count-weighted mean latency (µs) over YCSB operation types, and the count."""
    counts = np.array([values[(op, "Operations")] for op in operations])
    means = np.array([values[(op, "AverageLatency(us)")] for op in operations])
    return float(np.average(means, weights=counts)), int(counts.sum())


def tables(gitdir: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The measurement table and its per-row provenance table."""
    rows, meta = [], []
    for run in RUNS:
        folder = FOLDER + run
        text = git_show(gitdir, COMMIT, f"{folder}/0_run.txt")
        scenario = json.loads(git_show(gitdir, COMMIT, f"{folder}/evaluationScenario.json"))
        values = summary(text)
        workload = scenario["benchmark"]["ycsb"]["workload"]
        read_mean, reads = pooled_mean_us(values, READS)
        write_mean, writes = pooled_mean_us(values, WRITES)
        runtime_ms = values[("OVERALL", "RunTime(ms)")]
        throughput = (reads + writes) / (runtime_ms / 1000.0)
        levels = dict(re.findall(r"setting (read|write)[^']* Consistency to '(\w+)'", text))
        for operation, mean, count, parts in (("read", read_mean, reads, READS),
                                              ("write", write_mean, writes, WRITES)):
            rows.append({
                "operation": operation,
                "consistency": levels[operation],
                "threads": workload["threadCount"],
                "rate": None,
                "throughput": round(throughput, 3),
                "mean_ms": round(mean / 1000.0, 6),
                "read_fraction": workload["readProportion"],
            })
            meta.append({
                "operation": operation,
                "threads": workload["threadCount"],
                "run_folder": folder,
                "client_instance": scenario["benchmarkDeployment"]["benchmarkNodes"]
                ["resource"]["ec2Vm"]["instanceType"],
                "runtime_ms": int(runtime_ms),
                "operations": count,
                "ycsb_throughput": values[("OVERALL", "Throughput(ops/sec)")],
                **{f"{NAMES[op]}_ops": int(values[(op, "Operations")]) for op in parts},
                **{f"{NAMES[op]}_mean_ms": values[(op, "AverageLatency(us)")] / 1000.0
                   for op in parts},
                **{f"{NAMES[op]}_p50_ms": values[(op, "50thPercentileLatency(us)")] / 1000.0
                   for op in parts},
            })
    return pd.DataFrame(rows), pd.DataFrame(meta)


def main() -> int:
    return check(__doc__.splitlines()[0], "benchANT/aerospike-apache-cassandra-benchmark", tables, HERE)


if __name__ == "__main__":
    sys.exit(main())
