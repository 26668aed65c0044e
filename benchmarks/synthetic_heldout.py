"""Held-out error of `forkjoin-sim cassandra calibrate` and `cassandra predict` at their
defaults on synthetic clusters unlike the published data sets, whose truth is the
project's own simulator.

Each cluster of ``CLUSTERS`` is measured with ``forkjoin-sim mix`` in a closed loop (no
think time): every operation (reads, writes), consistency level and thread count is
one run of ``JOBS`` operations (10% dropped as warm-up), its seed drawn from
``SIMULATION_SEED`` and the run's coordinates. The rows (mean latency, throughput in
ops/s) are kept as measured ("clean") and with 3% lognormal noise on the mean and on
the throughput ("noisy", from ``NOISE_SEED``). The truth differs structurally from the
fitted model: four clusters queue on the steps engine, where a node is ONE pool of
``--cores`` shared by coordinator, message and replica work (the model's default
structure, ``lanes``, fits separate single-server lanes per node), and one
(``stages``) has Cassandra's separate read and mutation stages of 32 threads and
unqueued coordinator time.

Protocols, per data set and operation: (a) fit ONE, predict the other levels; (b) fit
two levels, predict the third (three cases, pooled; three-level clusters only); (c) fit
the smaller half of the thread counts, predict the larger; (c2) fit the 6 smallest
thread counts, predict the 2 largest; (d) fit reads, predict writes. Each case is
calibrated and predicted through the command line exactly as a user runs it, in a
temporary folder: ``calibrate --nodes N --replicas R --measurements fit.csv --out
M.toml`` and ``predict --model M.toml --measurements held.csv --out P.csv`` (no other
option). Beside each: the naive guess of `benchmarks/cassandra_heldout.py` (same as
ONE; line in the replicas asked; line in threads; writes = reads).

Cut from the probe this reproduces (five clusters) to stay near 10 minutes on 2
cores: the cluster ``n6r3c8`` (6 nodes of 8 cores, otherwise as ``n5r3``), 26 of the
118 calibrations. The runs are measured in the worker processes (``forkjoin-sim mix``'s
own ``main``, one start-up per worker), so they take well under a minute; the whole
run is about 12 CPU-minutes (6 minutes on 2 free cores).

Usage::

    .venv/bin/python benchmarks/synthetic_heldout.py --out docs/cassandra/synthetic_heldout.md \
        [--workers 2] [--keep DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import shutil
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cassandra_heldout as heldout  # noqa: E402  (the splits, naive guesses, publish)
from cli_defaults import COLUMNS, scored  # noqa: E402  (a case at the defaults)

SIMULATION_SEED = 7
NOISE_SEED = 20261128
NOISE_SD = 0.03
JOBS = 100_000
OPERATIONS = ("read", "write")
#: queued work shared by a node's cores (steps engine)
QUEUED = ["--coordinator-work", "exp:0.05", "--message-work", "exp:0.02",
          "--hop", "exp:0.1", "--client-hop", "exp:0.15"]
#: name -> the cluster, its levels and thread counts, and its ``mix`` options; the
#: service means are of a data read, a digest read and a mutation, in ms
CLUSTERS = {
    "n5r3": dict(nodes=5, replicas=3, levels=("ONE", "QUORUM", "ALL"),
                 threads=(2, 4, 8, 16, 32, 64, 128, 256), means=(0.3, 0.15, 0.12),
                 options=["--cores", "4", *QUEUED], stage_threads=None),
    "n3r2": dict(nodes=3, replicas=2, levels=("ONE", "ALL"),
                 threads=(2, 4, 8, 16, 32, 64, 128, 256), means=(0.3, 0.15, 0.12),
                 options=["--cores", "4", *QUEUED], stage_threads=None),
    "slowdisk": dict(nodes=4, replicas=3, levels=("ONE", "QUORUM", "ALL"),
                     threads=(1, 2, 4, 8, 16, 32, 64, 128), means=(3.0, 1.5, 1.2),
                     options=["--cores", "4", *QUEUED], stage_threads=None),
    "stages": dict(nodes=5, replicas=3, levels=("ONE", "QUORUM", "ALL"),
                   threads=(8, 16, 32, 64, 128, 256, 512, 1024), means=(1.0, 0.5, 0.5),
                   options=["--structure", "stages", "--coordinator", "exp:0.05",
                            "--client-hop", "exp:0.15"], stage_threads=32),
}
PROTOCOLS = ("a", "b", "c", "c2", "d")


def mix_arguments(name, operation, level, threads) -> list[str]:
    """The ``forkjoin-sim mix`` words of one measured row."""
    c = CLUSTERS[name]
    data, digest, write = c["means"]
    stage = "--read-threads" if operation == "read" else "--write-threads"
    words = ["mix", "--nodes", str(c["nodes"]), "--replicas", str(c["replicas"])]
    if c["stage_threads"]:
        words += [stage, str(c["stage_threads"])]
    if operation == "read":
        words += ["--reads", "1", "--read-consistency", level, "--data-mean", str(data)]
        if level != "ONE":
            words += ["--digest-mean", str(digest)]
    else:
        words += ["--reads", "0", "--write-consistency", level, "--write-mean", str(write)]
    coordinates = [SIMULATION_SEED, list(CLUSTERS).index(name),
                   OPERATIONS.index(operation), c["levels"].index(level), threads]
    seed = int(np.random.SeedSequence(coordinates).generate_state(1)[0])
    return words + c["options"] + ["--clients", str(threads), "--jobs", str(JOBS),
                                   "--seed", str(seed), "--json"]


def measure(row) -> dict:
    """One measured row: ``forkjoin-sim mix`` run in this process (no start-up per run)."""
    from forkjoin_cli.main import main as forkjoin_sim

    name, operation, level, threads = row
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        status = forkjoin_sim(mix_arguments(*row))
    if status != 0:
        raise SystemExit(f"mix {' '.join(mix_arguments(*row))} failed ({status})")
    result = json.loads(printed.getvalue())
    return dict(cluster=name, operation=operation, consistency=level, threads=threads,
                throughput=1000.0 * result["throughput"], mean_ms=result["mean"],
                warnings="; ".join(result.get("warnings") or []))


def data_sets(measured: pd.DataFrame) -> dict:
    """data set name -> (cluster name, rows), clean and noisy, in ``CLUSTERS`` order."""
    rng = np.random.default_rng(NOISE_SEED)
    out = {}
    for name in CLUSTERS:
        clean = measured[measured.cluster == name][COLUMNS].reset_index(drop=True)
        noisy = clean.copy()
        for column in ("mean_ms", "throughput"):
            noisy[column] *= rng.lognormal(0.0, NOISE_SD, len(noisy))
        out[f"{name}-clean"], out[f"{name}-noisy"] = (name, clean), (name, noisy)
    return out


def cases(sets):
    """(data set, cluster, operation, protocol, case, fitted, held-out, naive guess)."""
    for data, (name, rows) in sets.items():
        for operation in OPERATIONS:
            table = rows[rows.operation == operation]
            for protocol, splits in heldout.splits(table).items():
                for fitted, held in splits:
                    case = held.consistency.iloc[0] if protocol == "b" else ""
                    yield (data, name, operation, protocol, case, fitted, held,
                           heldout.naive(table, protocol, fitted, held))
            small = table.threads.isin(sorted(table.threads.unique())[:6])
            fitted, held = table[small], table[~small]
            yield (data, name, operation, "c2", "", fitted, held,
                   heldout.naive(table, "c", fitted, held))
        reads, writes = (rows[rows.operation == op] for op in OPERATIONS)
        yield data, name, "read", "d", "", reads, writes, heldout.naive(reads, "d", reads,
                                                                        writes)


def score(job) -> dict:
    """Calibrate and predict one case in its own folder; its errors and fit time."""
    (data, name, operation, protocol, case, fitted, held, guess), root = job
    folder = Path(root) / "_".join(filter(None, (data, operation, protocol, case)))
    folder.mkdir(parents=True)
    cluster = CLUSTERS[name]
    return dict(data=data, operation=operation if protocol != "d" else "read->write",
                protocol=protocol, **scored(folder, fitted, held, guess,
                                            cluster["nodes"], cluster["replicas"]))


def _pooled(table: pd.DataFrame) -> pd.DataFrame:
    """One row per data set, operation and protocol: (b)'s cases pooled by rows."""
    return table.groupby(["data", "operation", "protocol"], sort=False).apply(
        lambda g: pd.Series(dict(
            rows=g.rows.sum(), model=np.average(g.model, weights=g.rows),
            naive=np.average(g.naive, weights=g.rows),
            inside=np.average(g.inside, weights=g.rows), fit_s=g.fit_s.mean(),
            fits=len(g))), include_groups=False).reset_index().astype(
                dict(rows=int, fits=int))


def _header() -> list[str]:
    lines = ["# Held-out error on synthetic clusters (`calibrate` / `predict` at defaults)",
             "", "Generated by `benchmarks/synthetic_heldout.py` (its docstring says how). "
             "The truth is `forkjoin-sim mix` in a closed loop without think time, "
             f"{JOBS:,} operations a run (10% warm-up dropped), seeds from "
             f"{SIMULATION_SEED} (simulation) and {NOISE_SEED} (noise); each data set is "
             "the measured rows as they are (clean) or with "
             f"{100 * NOISE_SD:.0f}% lognormal noise on mean and throughput (noisy).", "",
             "| cluster | nodes | replicas | levels | threads | a node | data / digest / "
             "mutation mean (ms) | other work |", "|---|---|---|---|---|---|---|---|"]
    for name, c in CLUSTERS.items():
        if c["stage_threads"]:
            node = f"a read stage or a mutation stage of {c['stage_threads']} threads"
            other = "coordinator exp 0.05 ms (unqueued), client hop exp 0.15 ms"
        else:
            node = f"one pool of {c['options'][1]} cores for all its work"
            other = ("coordinator work exp 0.05, per-message work exp 0.02 (queued on "
                     "the cores), hop exp 0.1, client hop exp 0.15 ms")
        lines.append(f"| {name} | {c['nodes']} | {c['replicas']} | "
                     f"{', '.join(c['levels'])} | {c['threads'][0]}-{c['threads'][-1]} "
                     f"(8) | {node} | {' / '.join(map(str, c['means']))} | {other} |")
    lines += ["", "The truth differs from the fitted model by structure: the clusters "
              "queue on a pool of cores per node (or on Cassandra's stages), while "
              "`calibrate`'s default structure (`lanes`) fits separate single-server "
              "lanes per node; no parameter of the model is the simulator's own. "
              "Protocols: (a) fit ONE, predict the other levels; (b) fit two levels, "
              "predict the third (its three cases pooled); (c) fit the smaller half of "
              "the thread counts, predict the larger; (c2) fit the 6 smallest, predict "
              "the 2 largest; (d) fit reads, predict writes. Naive: same as ONE; line in "
              "the replicas asked; line in threads (c and c2); writes = reads. Inside: "
              "share of held-out rows within [predicted_ci_low_ms, "
              "predicted_ci_high_ms]. Bold: model better than naive.", ""]
    return lines


def render(table: pd.DataFrame, warned: pd.DataFrame, elapsed: float) -> str:
    """The markdown: one row per data set, operation and protocol, then the means."""
    pooled = _pooled(table)
    lines = _header() + [
        "| data set | operation | protocol | held-out rows | model MAPE % | naive MAPE % "
        "| inside 95% interval | calibrate s |", "|---|---|---|---|---|---|---|---|"]
    for r in pooled.itertuples():
        mark = "**" if r.model < r.naive else ""
        fits = f" ({r.fits} fits, mean)" if r.fits > 1 else ""
        lines.append(f"| {r.data} | {r.operation} | {r.protocol} | {r.rows} | "
                     f"{mark}{r.model:.1f}{mark} | {r.naive:.1f} | {100 * r.inside:.0f}% | "
                     f"{r.fit_s:.1f}{fits} |")
    lines += ["", "Means over the rows above (each row one case; (b) pooled per data set "
              "and operation):", "",
              "| protocol | cases | model MAPE % | naive MAPE % | inside 95% interval | "
              "model better | mean calibrate s |", "|---|---|---|---|---|---|---|"]

    def mean_line(label, g):
        return (f"| {label} | {len(g)} | {g.model.mean():.1f} | {g.naive.mean():.1f} | "
                f"{100 * g.inside.mean():.0f}% | {int((g.model < g.naive).sum())} of "
                f"{len(g)} | {g.fit_s.mean():.1f} |")
    for protocol in PROTOCOLS:
        lines.append(mean_line(protocol, pooled[pooled.protocol == protocol]))
    lines.append(mean_line("all", pooled))
    lines.append(mean_line("all but c2", pooled[pooled.protocol != "c2"]))
    lines += ["", f"{len(table)} calibrations in {len(pooled)} cases; model better than "
              f"naive in {int((pooled.model < pooled.naive).sum())} of {len(pooled)}. "
              f"Slowest calibrate {table.fit_s.max():.1f} s; run time {elapsed:.0f} s."]
    lines += [""] * (not warned.empty) + [f"Simulated row {r.cluster} {r.operation} {r.consistency} {r.threads} "
              f"threads warns: {r.warnings}" for r in warned.itertuples()]
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="also write the markdown here")
    parser.add_argument("--workers", type=int, default=2, help="processes (default 2)")
    parser.add_argument("--keep", help="keep every case's files in this new folder")
    args = parser.parse_args()
    started = time.time()
    rows = [(name, operation, level, threads) for name, c in CLUSTERS.items()
            for operation in OPERATIONS for level in c["levels"] for threads in c["threads"]]
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="synthetic_"))
    try:
        with ProcessPoolExecutor(args.workers) as pool:
            measured = pd.DataFrame(pool.map(measure, rows, chunksize=8))
            jobs = [(case, str(root)) for case in cases(data_sets(measured))]
            table = pd.DataFrame(pool.map(score, jobs))
        print(f"measured {len(rows)} rows, {len(jobs)} calibrations", file=sys.stderr)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    warned = measured[measured.warnings != ""]
    heldout.publish(render(table, warned, time.time() - started), args.out)


if __name__ == "__main__":
    main()
