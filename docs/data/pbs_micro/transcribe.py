"""Transcribe PBS's Cassandra micro-benchmark logs into small CSV files.

The logs are in github.com/pbailis/pbs-vldb-historical-paper-material, branch
``archived``, folder ``results/micro/``: one folder per cluster size
(``3N-...``, ``5N-...``, each with a ``params.txt``) holding one folder per
quorum setting (``3N1R2W`` = N 3, R 1, W 2). In each, the coordinator's
``PROXY-<host>/cassandra.log`` and each replica's ``<host>/cassandra.log``.

Usage (from the repository root)::

    .venv/bin/python docs/data/pbs_micro/transcribe.py \
        /work/.mirror/pbailis+pbs-vldb-historical-paper-material/repo

The argument is either a git directory (bare or not; the ``archived`` ref is
read with ``git cat-file``, no work tree needed) or a checkout whose
``results/micro`` folder exists. Writes ``runs.csv``, ``write_acks.csv.gz``,
``reads.csv.gz`` next to this script (``--out`` to change).

Coordinator lines (all after ``ERNST:``), times in the coordinator's clocks:
``WS <nanoTime>, <version>, <ms>`` write start; ``<version> /<ip> finished at
<ms>`` a replica's acknowledgement; ``WC <nanoTime>, <version> <ms>`` write
commit; ``RS <nanoTime>`` read start; ``RC <nanoTime> <version>`` read return.
Replica lines: ``<version> remote applied at <ms>`` on the replica's own clock.
One client writes versions 1, 2, ... one at a time (about 100 ms apart) and one
client reads, one read at a time, both through the same coordinator.
"""

from __future__ import annotations

import argparse
import gzip
import re
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

REF = "archived"
ROOT = "results/micro"
HERE = Path(__file__).resolve().parent

_WS = re.compile(r"ERNST: WS (\d+), (\d+), (\d+)$")
_WC = re.compile(r"ERNST: WC (\d+), (\d+) (\d+)$")
_ACK = re.compile(r"ERNST: (\d+) /([\d.]+) finished at (\d+)$")
_RS = re.compile(r"ERNST: RS (\d+)$")
_RC = re.compile(r"ERNST: RC (\d+) (\d+)$")
_APPLIED = re.compile(r"ERNST: (\d+) remote applied at (\d+)\s*$", re.M)
_ADDRESS = re.compile(r"Starting Messaging Service on /([\d.]+):")
_RUN = re.compile(r"^(\d+)N(\d+)R(\d+)W$")


class Source:
    """The files of ``results/micro`` in a git directory or in a checkout."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.checkout = (self.path / ROOT).is_dir()
        if self.checkout:
            self.files = sorted(str(p.relative_to(self.path))
                                for p in (self.path / ROOT).rglob("*") if p.is_file())
            self.commit = ""
            return
        self.commit = self._git("rev-parse", REF).decode().strip()
        listing = self._git("ls-tree", "-r", REF, ROOT).decode().splitlines()
        self.blobs = {line.split("\t", 1)[1]: line.split()[2] for line in listing}
        self.files = sorted(self.blobs)

    def _git(self, *args: str) -> bytes:
        return subprocess.run(["git", "--git-dir", str(self.path), *args],
                              check=True, capture_output=True).stdout

    def text(self, name: str) -> str:
        if self.checkout:
            return (self.path / name).read_text(errors="replace")
        return self._git("cat-file", "blob", self.blobs[name]).decode(errors="replace")


def parse_params(text: str) -> dict:
    """``params.txt`` (``Servers: 4``, ``WriteMS: 100`` ...) as a dict of ints."""
    params = {}
    for line in text.splitlines():
        if ":" in line:
            key, value = line.split(":", 1)
            params[key.strip().lower().replace(" ", "_")] = int(value)
    return params


def parse_coordinator(text: str):
    """Writes (start/commit in ns and ms), acks and reads of one coordinator log."""
    writes, acks, reads = {}, [], []
    pending = None
    for line in text.splitlines():
        if "ERNST:" not in line:
            continue
        line = line.rstrip()
        if m := _WS.search(line):
            writes.setdefault(int(m[2]), {})
            writes[int(m[2])].update(start_ns=int(m[1]), start_ms=int(m[3]))
        elif m := _WC.search(line):
            writes.setdefault(int(m[2]), {})
            writes[int(m[2])].update(commit_ns=int(m[1]), commit_ms=int(m[3]))
        elif m := _ACK.search(line):
            acks.append((int(m[1]), m[2], int(m[3])))
        elif m := _RS.search(line):
            pending = int(m[1])
        elif m := _RC.search(line):
            if pending is not None:
                reads.append((pending, int(m[1]), int(m[2])))
            pending = None
    writes = pd.DataFrame.from_dict(writes, orient="index").rename_axis("version")
    writes = writes.dropna().astype("int64").sort_index().reset_index()
    acks = pd.DataFrame(acks, columns=["version", "address", "ack_ms"])
    reads = pd.DataFrame(reads, columns=["start_ns", "return_ns", "version"])
    return writes, acks, reads


def parse_replica(text: str):
    """(address, {version: last apply time in ms on the replica's clock})."""
    address = _ADDRESS.search(text)
    applied = {}
    for m in _APPLIED.finditer(text):
        # version 1 also appears once for a set-up write before the run; keep the last
        applied[int(m[1])] = int(m[2])
    return (address[1] if address else None), applied


def wilson(successes: int, trials: int) -> tuple[float, float]:
    if trials == 0:
        return float("nan"), float("nan")
    ci = stats.binomtest(int(successes), int(trials)).proportion_ci(
        0.95, method="wilson")
    return ci.low, ci.high


def classify_reads(writes: pd.DataFrame, reads: pd.DataFrame) -> pd.DataFrame:
    """Each read with the write state at its start, on the coordinator's nanoTime.

    ``committed``: the newest version whose commit was logged before the read
    started; ``in_flight``: a newer version had started but not committed;
    ``stale``: the read returned a version older than ``committed``; ``new``:
    for in-flight reads, whether it returned the in-flight version (or newer).
    ``since_commit_ms``: start minus the commit of ``committed``;
    ``since_start_ms``: start minus the start of the newest started version.
    """
    commits = writes.sort_values("commit_ns")
    starts = writes.sort_values("start_ns")
    i = np.searchsorted(commits.commit_ns.to_numpy(), reads.start_ns.to_numpy(),
                        side="right") - 1
    j = np.searchsorted(starts.start_ns.to_numpy(), reads.start_ns.to_numpy(),
                        side="right") - 1
    keep = (i >= 0) & (j >= 0)
    reads, i, j = reads[keep].copy(), i[keep], j[keep]
    committed = commits.version.to_numpy()[i]
    started = starts.version.to_numpy()[j]
    reads["committed"] = committed
    reads["started"] = started
    reads["in_flight"] = started > committed
    reads["stale"] = reads.version < committed
    reads["new"] = reads.version >= started
    reads["since_commit_ms"] = (reads.start_ns - commits.commit_ns.to_numpy()[i]) / 1e6
    reads["since_start_ms"] = (reads.start_ns - starts.start_ns.to_numpy()[j]) / 1e6
    reads["latency_ms"] = (reads.return_ns - reads.start_ns) / 1e6
    return reads


def exact_start_ms(writes: pd.DataFrame, window: int = 21) -> pd.Series:
    """Each write's start on the coordinator's millisecond clock, to well under 1 ms.

    The ``WS`` line holds both ``nanoTime`` (precise, no steps) and
    ``currentTimeMillis`` (whole ms, stepped by NTP by up to 0.26 s in the 5-node
    runs). With ms = floor(ns / 1e6 + offset), offset >= ms - ns / 1e6 for every
    line; the largest such bound among the ``window`` nearest writes (start and
    commit lines) estimates the offset locally. Where the bounds in the window
    spread over 2 ms or more the clock stepped nearby: NaN.
    """
    bounds = np.maximum(writes.start_ms - writes.start_ns / 1e6,
                        writes.commit_ms - writes.commit_ns / 1e6)
    rolling = bounds.rolling(window, center=True, min_periods=1)
    offset = rolling.max().where(rolling.max() - rolling.min() < 2.0)
    return pd.Series((writes.start_ns / 1e6 + offset).to_numpy(),
                     index=writes.version.to_numpy())


def quantiles(values, prefix: str) -> dict:
    values = np.asarray(values, dtype=float)
    row = {f"{prefix}_p{q:g}": float(np.quantile(values, q / 100))
           for q in (50, 90, 99, 99.9)}
    row[f"{prefix}_mean"] = float(values.mean())
    return row


def transcribe(source: Source):
    runs, ack_tables, read_tables, write_tables = [], [], [], []
    params_of = {}
    for name in source.files:
        parts = name.split("/")
        if len(parts) == 4 and parts[3] == "params.txt":
            params_of[parts[2]] = parse_params(source.text(name))
    run_dirs = sorted({tuple(name.split("/")[2:4]) for name in source.files
                       if len(name.split("/")) == 6 and _RUN.match(name.split("/")[3])})
    for series, run in run_dirs:
        nodes, read_quorum, write_quorum = map(int, _RUN.match(run).groups())
        prefix = f"{ROOT}/{series}/{run}/"
        logs = [n for n in source.files
                if n.startswith(prefix) and n.endswith("/cassandra.log")]
        coordinator = [n for n in logs if n[len(prefix):].startswith("PROXY-")]
        writes, acks, reads = parse_coordinator(source.text(coordinator[0]))
        applied = {}
        for name in logs:
            if name in coordinator:
                continue
            address, versions = parse_replica(source.text(name))
            applied[address] = versions
        run_id = f"{series.split('-')[0]}/{run}"
        reads = classify_reads(writes, reads)
        writes["latency_ms"] = (writes.commit_ns - writes.start_ns) / 1e6

        replicas = sorted(applied)
        acks = acks.merge(writes[["version", "start_ms", "commit_ms"]], on="version")
        acks["replica"] = acks.address.map({a: k for k, a in enumerate(replicas)})
        acks["ack_minus_start_ms"] = acks.ack_ms - acks.start_ms
        acks["round_trip_ms"] = acks.ack_ms + 0.5 - acks.version.map(
            exact_start_ms(writes))
        acks["before_commit"] = acks.ack_ms <= acks.commit_ms
        acks["apply_minus_start_ms"] = [
            applied.get(a, {}).get(v, np.nan) - s
            for a, v, s in zip(acks.address, acks.version, acks.start_ms)]
        acks.insert(0, "run", run_id)
        acks = acks.round({"round_trip_ms": 3})
        ack_tables.append(acks[["run", "version", "replica", "round_trip_ms",
                                "ack_minus_start_ms", "apply_minus_start_ms",
                                "before_commit"]]
                          .astype({"before_commit": int}))

        params = params_of.get(series, {})
        flight = reads[reads.in_flight]
        after = reads[~reads.in_flight]
        stale = int(reads.stale.sum())
        low, high = wilson(stale, len(reads))
        row = {"run": run_id, "nodes": nodes, "read_quorum": read_quorum,
               "write_quorum": write_quorum, "servers": params.get("servers"),
               "write_interval_ms": params.get("writems"),
               "read_interval_ms": params.get("readms"),
               "duration_s": params.get("total_time"),
               "replicas_seen": len(replicas),
               "writes": len(writes), "reads": len(reads), "acks_logged": len(acks),
               **quantiles(reads.latency_ms, "read_ms"),
               **quantiles(writes.latency_ms, "write_ms"),
               "stale_reads": stale, "p_stale": stale / len(reads),
               "p_stale_low": low, "p_stale_high": high,
               "reads_after_commit": len(after),
               "stale_after_commit": int(after.stale.sum()),
               "reads_in_flight": len(flight),
               "in_flight_new": int(flight.new.sum()),
               "in_flight_old": int((~flight.new & ~flight.stale).sum()),
               "in_flight_older": int(flight.stale.sum())}
        runs.append(row)
        reads.insert(0, "run", run_id)
        reads["returned_minus_started"] = reads.version - reads.started
        reads = reads.round({"since_start_ms": 3, "latency_ms": 3})
        read_tables.append(reads[["run", "started", "since_start_ms", "latency_ms",
                                  "returned_minus_started", "in_flight", "stale"]]
                           .astype({"in_flight": int, "stale": int}))
        writes.insert(0, "run", run_id)
        write_tables.append(writes[["run", "version", "latency_ms"]].round(
            {"latency_ms": 4}))
    return (pd.DataFrame(runs), pd.concat(write_tables, ignore_index=True),
            pd.concat(ack_tables, ignore_index=True),
            pd.concat(read_tables, ignore_index=True))


def write_gzip_csv(frame: pd.DataFrame, path: Path) -> None:
    """CSV, gzip-compressed without a time stamp so re-runs give identical bytes."""
    text = frame.to_csv(index=False)
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0,
                                                filename="") as out:
        out.write(text.encode())


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("source", type=Path,
                        help="git directory of pbs-vldb-historical-paper-material, "
                             "or a checkout of its archived branch")
    parser.add_argument("--out", type=Path, default=HERE)
    args = parser.parse_args(argv)
    source = Source(args.source)
    runs, writes, acks, reads = transcribe(source)
    args.out.mkdir(parents=True, exist_ok=True)
    runs.to_csv(args.out / "runs.csv", index=False, float_format="%.6g")
    write_gzip_csv(writes, args.out / "writes.csv.gz")
    write_gzip_csv(acks, args.out / "write_acks.csv.gz")
    write_gzip_csv(reads, args.out / "reads.csv.gz")
    print(f"source commit {source.commit or '(checkout)'}: {len(runs)} runs, "
          f"{runs.reads.sum():,} reads ({runs.stale_reads.sum():,} stale), "
          f"{runs.writes.sum():,} writes, {len(acks):,} acks")


if __name__ == "__main__":
    main()
