"""Read/write mixes at the strong pairs on Karpenko et al.'s clusters C and D: the interference
model (`sizing.mixes.predict_mix`) against eqs. 13-15 (the weighted average of the
read-only and write-only curves) and the paper's printed Table 2.

1. Calibrate each cluster's read-only and write-only rows with ``forkjoin-sim cassandra
   calibrate`` at its defaults (the same call a user makes).
2. For the strong pairs 1R-3W, 2R-2W, 3R-1W, the read shares and thread counts of the
   paper's Tables 2 and 3 (docs/data/karpenko2021/mixed.csv): the mix simulated on the model's
   demands (anchored to its pure predictions; messages folded, and queued as a
   sensitivity), eqs. 13-15 on the same model, eqs. 13-15 on the paper's curves
   (cluster_c.csv, cluster_d.csv), and the printed cell.
3. Write the tables to a markdown file (docs/cassandra/mixes.md).

Usage::

    .venv/bin/python benchmarks/mixes_karpenko.py --out docs/cassandra/mixes.md \
        [--clusters C,D] [--operations 40000] [--seed 0]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from sizing.closed_network import DEMANDS
from sizing.mixes import DIGEST_STRUCTURES, pair_name, predict_mix, strong_pairs, \
    weighted_averages
from sizing.network_fit import demands_of
from sizing.network_model_file import read_network_model

DATA = Path(__file__).resolve().parent.parent / "docs" / "data" / "karpenko2021"
LEVELS = {"ONE": 1, "QUORUM": 2, "ALL": 3}


def calibrate(cluster: str, path: str) -> None:
    """``cassandra calibrate`` of ``cluster`` ("C" or "D") at its defaults, the model to
    ``path``."""
    subprocess.run([sys.executable, "-m", "forkjoin_cli.main", "cassandra", "calibrate",
                    "--nodes", "3", "--replicas", "3", "--measurements",
                    str(DATA / f"cluster_{cluster.lower()}.csv"), "--out", path],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def curves(cluster: str) -> dict:
    """(write, level, threads) -> the paper's curve value (ms)."""
    rows = pd.read_csv(DATA / f"cluster_{cluster.lower()}.csv")
    return {(op == "write", LEVELS[level], int(t)): float(ms) for op, level, t, ms in
            zip(rows.operation, rows.consistency, rows.threads, rows.mean_ms)}


def grid(model, cluster: str, operations: int, seed: int) -> pd.DataFrame:
    """One row per (threads, read share, pair) of the cluster's table."""
    printed = pd.read_csv(DATA / "mixed.csv")
    printed = printed[printed.cluster == cluster]
    paper = curves(cluster)
    cases = [(pct / 100, int(t), r, w) for t in sorted(printed.threads.unique())
             for pct in sorted(printed.read_pct.unique()) for r, w in strong_pairs(3)]
    averages = weighted_averages(model, cases, seed=seed)
    out = []
    for (fraction, threads, r, w), average in zip(cases, averages):
        folded = predict_mix(model, fraction, threads, r, w, operations, seed)
        queued = predict_mix(model, fraction, threads, r, w, operations, seed,
                             messages="queued")
        cell = printed[(printed.threads == threads)
                       & (printed.read_pct == round(100 * fraction))
                       & (printed.setting == pair_name(r, w))]
        out.append(dict(
            threads=threads, read_pct=round(100 * fraction), pair=pair_name(r, w),
            mix_ms=folded.overall.mean, mix_low_ms=folded.overall.low,
            mix_high_ms=folded.overall.high,
            mix_read_ms=folded.read.mean, mix_write_ms=folded.write.mean,
            queued_ms=queued.overall.mean, queued_read_ms=queued.read.mean,
            queued_write_ms=queued.write.mean,
            eqs_ms=average.overall.mean, eqs_low_ms=average.overall.low,
            eqs_high_ms=average.overall.high,
            pure_read_ms=average.read.mean, pure_write_ms=average.write.mean,
            paper_eqs_ms=fraction * paper[(False, r, threads)]
            + (1 - fraction) * paper[(True, w, threads)],
            printed_ms=float(cell.latency_us.iloc[0]) / 1000,
            underlined=bool(cell.underlined.iloc[0])))
    table = pd.DataFrame(out)
    table["difference_pct"] = 100 * (table.mix_ms / table.eqs_ms - 1)
    table["queued_difference_pct"] = 100 * (table.queued_ms / table.eqs_ms - 1)
    return table


def _best(table: pd.DataFrame, column: str) -> pd.Series:
    """Per (threads, read share) the pair with the smallest ``column``."""
    return table.loc[table.groupby(["threads", "read_pct"])[column].idxmin()].set_index(
        ["threads", "read_pct"]).pair


HEADER = """# Read/write mixes at the strong pairs: interference vs eqs. 13-15 (issue 27 item 5)

Made by

```sh
{command}
```

({seconds:.0f} s on this machine.) Karpenko, Tarasyuk, Gorbenko (2021): 3 nodes, 3
replicas; cluster C in one region, cluster D across four. Each cluster's 60 read-only
and write-only rows (docs/data/karpenko2021/) calibrated by `forkjoin-sim cassandra
calibrate` at its defaults. For each strong pair, read share and thread count of the
paper's mixed tables (Table 2 for C, Table 3 for D):

- **mix**: `sizing.mixes.predict_mix`, reads and writes in the same queues. For the
  default structure (`lanes`, both clusters here) that is the closed network's two
  classes in one loop, evaluated, not simulated (the steps engine has no random-lane
  stations), anchored as the pure rows are, its band the model's posterior. For the
  simulated structures it is the steps engine (closed loop, no think time,
  {operations:,} operations, the first 20% dropped, 95% batch-means interval), each
  operation's latency anchored to the model's own read-only (R) or write-only (W)
  prediction at the same threads, so that only the change a mix makes comes from the
  simulation; message work folded into its node's visit (`sizing/mixes.py` says why);
  **queued msgs**: the same with every message a visit of its own in the node's line (a
  sensitivity: the pure runs cannot tell the two apart; for `lanes` the same as mix);
- **eqs. 13-15**: `sizing.mixes.weighted_average`, P_read x read-only(R) + P_write x
  write-only(W) of the same model, with the model's 95% prediction interval: no
  interference. These thread counts are fitted rows, where the anchored model returns
  the paper's curves exactly, so this column is the paper's eqs. 13-15 on its own
  curves (checked below);
- **printed**: the paper's cell (docs/data/karpenko2021/mixed.csv). **These are not
  measurements**: the paper computed them with eqs. 13-15 from its fitted curves (the
  README there reproduces every 10/30/90 % cell of Table 2 to 0.01%, Table 3 to 3.4%);
  the 50 % columns were evaluated at the wrong thread counts (README item 1), hence the
  large gaps there. The paper compares eqs. 13-15 with measured mixed runs only in words
  ("at most 17%", the right setting in 92% of cases); those runs are not published, so
  nothing here is checked against a measured mix.

Difference = mix / eqs. 13-15 - 1.
"""


def section(table: pd.DataFrame, cluster: str, model) -> str:
    """The summary and tables of one cluster."""
    folded_best = _best(table, "mix_ms")
    eqs_best = _best(table, "eqs_ms")
    printed_best = table[table.underlined].set_index(["threads", "read_pct"]).pair
    queued_best = _best(table, "queued_ms")
    biggest = table.loc[table.difference_pct.abs().idxmax()]
    queued_big = table.loc[table.queued_difference_pct.abs().idxmax()]
    inside = ((table.mix_ms > table.eqs_low_ms) & (table.mix_ms < table.eqs_high_ms))
    own = (table.eqs_ms / table.paper_eqs_ms - 1).abs().max()
    lines = [
        f"## Cluster {cluster}", "",
        f"Model: structure `{model.fit.structure}`, {model.fit.cores} cores per node, "
        f"{model.fit.client_cores} client cores; eqs. 13-15 on the model vs on the "
        f"paper's curves: at most {100 * own:.2g}% apart. {_node_work(model)}", "",
        *([CAUTION_D, ""] if cluster == "D" else []),
        "### Summary", "",
        f"- **Mean latency of all operations**: the mix and eqs. 13-15 differ by "
        f"{table.difference_pct.abs().mean():.1f}% on average, at most "
        f"{biggest.difference_pct:+.1f}% ({biggest.pair}, {biggest.read_pct}% reads, "
        f"{biggest.threads} threads); with queued messages on average "
        f"{table.queued_difference_pct.abs().mean():.1f}%, at most "
        f"{queued_big.queued_difference_pct:+.1f}% ({queued_big.pair}, "
        f"{queued_big.read_pct}% reads, {queued_big.threads} threads). The mix lies "
        f"inside eqs. 13-15's own 95% prediction interval in {int(inside.sum())} of "
        f"{len(table)} cells.",
        f"- **Fastest pair**: the mix and eqs. 13-15 pick the same pair in "
        f"{int((folded_best == eqs_best).sum())} of {len(eqs_best)} (threads, read share) "
        f"cells (queued messages: {int((queued_best == eqs_best).sum())}); eqs. 13-15 on "
        f"the model and the paper's underlining agree in "
        f"{int((eqs_best == printed_best).sum())} of {len(eqs_best)}."
        + _close_calls(table, folded_best, eqs_best),
        "- **Each operation's latency**, which eqs. 13-15 take from the pure curves, is "
        "where they disagree. Mix against pure, per pair (folded; queued messages in "
        "brackets):", ""]
    for pair, rows in table.groupby("pair", sort=False):
        lines.append(f"  - {pair}: reads {_range(rows, 'mix_read_ms', 'pure_read_ms')} "
                     f"({_range(rows, 'queued_read_ms', 'pure_read_ms')}), writes "
                     f"{_range(rows, 'mix_write_ms', 'pure_write_ms')} "
                     f"({_range(rows, 'queued_write_ms', 'pure_write_ms')})")
    lines += ["", "### Mean latency of all operations (ms)", "",
              "| threads | reads | pair | mix [95%] | eqs. 13-15 [95%] | difference | "
              "queued msgs | printed | fastest: mix / eqs. / printed |",
              "|---|---|---|---|---|---|---|---|---|"]
    for row in table.itertuples():
        key = (row.threads, row.read_pct)
        marks = " / ".join("x" if best[key] == row.pair else "-" for best in
                           (folded_best, eqs_best, printed_best))
        lines.append(
            f"| {row.threads} | {row.read_pct}% | {row.pair} | {row.mix_ms:.4g} "
            f"[{row.mix_low_ms:.4g}, {row.mix_high_ms:.4g}] | {row.eqs_ms:.4g} "
            f"[{row.eqs_low_ms:.4g}, {row.eqs_high_ms:.4g}] | {row.difference_pct:+.1f}% "
            f"| {row.queued_ms:.4g} ({row.queued_difference_pct:+.1f}%) | "
            f"{row.printed_ms:.4g} | {marks} |")
    lines += ["", "### Each operation's latency: pure curve -> in the mix (ms)", "",
              "| threads | reads | pair | read: pure -> mix (queued msgs) | "
              "write: pure -> mix (queued msgs) |", "|---|---|---|---|---|"]
    for row in table.itertuples():
        lines.append(
            f"| {row.threads} | {row.read_pct}% | {row.pair} | {row.pure_read_ms:.4g} -> "
            f"{row.mix_read_ms:.4g} ({row.queued_read_ms:.4g}) | "
            f"{row.pure_write_ms:.4g} -> {row.mix_write_ms:.4g} "
            f"({row.queued_write_ms:.4g}) |")
    return "\n".join(lines) + "\n"


def _node_work(model) -> str:
    """Each operation's mean work on the nodes (ms) from the model's demands, as the
    MVA counts it (digest structures; the coordinator is a replica with probability
    replicas / nodes)."""
    d = dict(zip(DEMANDS, demands_of(model.fit.point)))
    local = model.replicas / model.nodes
    digest = d["digest_ratio"] if model.fit.structure in DIGEST_STRUCTURES else 1.0

    def work(asked, data, others):
        return d["coordinate"] + data + others + 4 * d["message"] * (asked - local)
    reads = [work(k, d["work"], (k - 1) * digest * d["work"]) for k in (1, 2, 3)]
    write = work(3, 3 * d["work"] * d["mutation_ratio"], 0.0)
    return (f"Node work per operation from the fitted demands: read at ONE / QUORUM / "
            f"ALL {reads[0]:.3g} / {reads[1]:.3g} / {reads[2]:.3g} ms, write "
            f"{write:.3g} ms (any level; digest read = {d['digest_ratio']:.3g} x data "
            f"read).")


def _close_calls(table, folded_best, eqs_best) -> str:
    """The cells where the two best pairs are within 1% (a near tie)."""
    gaps = []
    for (threads, pct), rows in table.groupby(["threads", "read_pct"]):
        values = np.sort(rows.eqs_ms.to_numpy())
        if values[1] / values[0] - 1 < 0.01:
            gaps.append(f"{threads} threads {pct}%")
    if not gaps:
        return ""
    return (" Near ties (the two fastest pairs within 1% by eqs. 13-15): "
            + ", ".join(gaps) + ".")


CAUTION_D = ("**A caution on cluster D.** At the defaults its rows show the wide-area "
             "signature, so it is fitted across data centres with no round trips given "
             "(each node and the client machine in one of its own, the round trips and "
             "each link's window fitted; docs/cassandra/calibration.md, geo-distributed "
             "clusters): the interference below is between operations that wait on the "
             "same wide-area links as the fit placed them, not from a measured mix.")

FOOTER = """## Where and why they disagree

- **The total is linear in the mix wherever the nodes are in the same state alone and
  mixed.** A saturated closed loop's mean latency is threads / throughput, and its
  throughput is the cores over the mean node work per operation, which is linear in the
  read share, as eqs. 13-15 are; an unloaded one's latency is the sum of its hops and
  work, linear too. Eqs. 13-15 miss where one operation saturates the nodes alone and
  the other does not: the heavy operation's pure curve carries a queue that a mix with
  fewer of them does not have, so the weighted average is above the mix. Whether that
  happens is the "node work" line of each section: in cluster C's fit a read and a
  write load the nodes within about 30% of each other (the coordinator's work is a
  large part of both) and the totals agree within about 1%. In cluster D's fit
  (across data centres) what saturates is each wide-area link's window, which a
  request holds only while it waits for a replica across it: writes at ALL and reads at QUORUM and ALL hold the links, requests
  at ONE do not, so the pure ALL-write curve carries a link queue that a mix of mostly
  ONE reads does not have, and the mix falls far below eqs. 13-15 there (the largest
  difference in its summary).
- **Each operation's latency moves much more than the total.** In a mix all operations
  wait in the same lines, so the common wait is shared by each operation's path, not
  by the load it would make alone: an operation that waits for one reply (ONE) loses
  less to the queues than one waiting for the slowest of three (ALL), and a heavy read
  no longer waits only behind other heavy reads. Eqs. 13-15 give no per-operation
  latency; quoting a pure curve for a mix's reads or writes is off by the ranges in
  each summary.
- **The fastest pair** is the same by the mix and by eqs. 13-15 wherever the two fastest
  pairs are more than about 1% apart (the near ties are listed); it agrees with the
  paper's underlining (which is eqs. 13-15) by construction.
- **What the pure runs cannot determine.** How far each operation moves depends on how
  the node queues treat many small visits (folded vs queued messages, in brackets),
  which pure runs cannot tell apart; cluster D's windows and round trips are fitted
  from its pure rows alone, and how operations share its links is the model's, not
  measured.
  The totals and the fastest pair are robust to the message choice; the per-operation
  split is not.

## Planning a calibrated cluster

```sh
forkjoin-sim cassandra calibrate --nodes 3 --replicas 3 \\
    --measurements docs/data/karpenko2021/cluster_c.csv --out c.toml
forkjoin-sim plan-consistency --model c.toml --read-fraction 0.3 --threads 800 [--json]
forkjoin-sim plan-consistency --model c.toml --read-fraction 0.3 --threads 100,400,800
```

prints, per thread count and strong pair (`threads` first; several counts, comma-separated,
plan each, as one count alone would), `read_ms`, `write_ms`, `overall_ms` (each with `*_low_ms` and
`*_high_ms`: 95% prediction intervals; for the default `lanes` the mix is evaluated,
not simulated, and its band is the model's posterior; for a simulated structure the
simulation's and the model's spread added on the log scale), `throughput`
(operations/s, with `throughput_low`, `throughput_high`: threads over the cycle, which
holds the latency and, for a model fitted on rows with throughputs, the clients' time
outside it), `simulation_low_ms` /
`simulation_high_ms` (for a simulated structure the simulation's interval of
`overall_ms` alone: the pairs share the model's posterior draws, so this is what
separates them as far as the simulation goes; for `lanes` both equal `overall_ms`,
there being no simulation error),
`eqs_13_15_ms` and `best` (the smallest `overall_ms`); `--json` prints `model`,
`structure`, `nodes`, `fitted_nodes`, `replicas`, `read_fraction`, `operations`, `seed`
and three lists, the same shape for one thread count as for several: `threads` (in the
order given), `best` (one `{"threads": N, "pair": "1R-3W"}` record per thread count, in
that order) and `pairs` (the rows, one record per thread count and pair, keyed as the
CSV's columns; a value not measured is `null` there, an empty cell in the CSV).
`--out plan.csv` beside `--json` also writes the rows. `--operations` sets the
operations simulated per pair for a simulated structure (default 40,000, about half a
second each; unused by `lanes`).

The line on stderr names the fastest pair (and a near tie where the simulation
intervals overlap). A warning (also in `plan_notes`, for Python) names every pair whose
`overall_ms` is closer to the fastest's than the model comes to its own measured rows
(the anchors' rms miss in log, as a factor): the shared posterior cannot separate what
the model's structure misses by more. On the C model above, at 50% reads and 1,000
threads, 1R-3W (25.52 ms) leads 2R-2W by 0.04% and 3R-1W by 5.6%, under the model's
6.13% rms miss of C's rows (in log, a factor 1.063): it cannot rank them (eqs. 13-15
pick 2R-2W there).

`--nodes N` plans a cluster of N nodes from a model calibrated on another size, as
`cassandra predict --nodes` predicts one (`docs/cassandra/calibration.md`, "Another
cluster size"): each node keeps its fitted work, lanes and cores, requests spread over
all N, the anchors are read at the same load per node, and a warning says that no
measured row of that size checks the plan (Python: `plan_strong_pairs(model, F, N_threads,
nodes=N)`, and `nodes=` on `predict_mix` and `weighted_average`). On the Karpenko C model
above at 50% reads and 500 threads, 3 nodes give 1R-3W at 13.55 ms [11.9, 15.88], 6
nodes 1R-3W at 8.379 ms [7.355, 11.74]. A model placed in data centres plans its own
size only.

## What is approximated or missing

- The model is fitted on pure runs only; interference is its structure (shared node
  cores, FCFS lines) extrapolated, not measured. No published mixed run exists to check
  it against.
- Intervals: for `lanes` the mix's is the model's posterior (evaluated, not simulated);
  for a simulated structure the simulation's alone (paired by batch with its pure runs,
  common random numbers), then widened by the model's spread. Eqs. 13-15's is the
  model's posterior and anchor spread.
  `forkjoin-sim plan-consistency --model MODEL.toml --read-fraction F --threads N`
  combines the two for each strong pair and marks the fastest.
"""


def report(sections: list[str], command: str, seconds: float, operations: int) -> str:
    return "\n".join([HEADER.format(command=command, seconds=seconds,
                                     operations=operations)] + sections + [FOOTER])


def _range(table, mix, pure) -> str:
    change = 100 * (table[mix] / table[pure] - 1)
    return f"{change.min():+.0f}% to {change.max():+.0f}%"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="markdown file to write")
    parser.add_argument("--clusters", default="C,D", help="C, D or C,D")
    parser.add_argument("--operations", type=int, default=40_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    sections = []
    for cluster in args.clusters.split(","):
        with tempfile.TemporaryDirectory() as tmp:
            path = str(Path(tmp) / f"cluster_{cluster.lower()}.toml")
            calibrate(cluster, path)
            model = read_network_model(path)
        table = grid(model, cluster, args.operations, args.seed)
        sections.append(section(table, cluster, model))
        print(f"cluster {cluster}: {time.perf_counter() - started:.0f} s", file=sys.stderr)
    command = ".venv/bin/python benchmarks/mixes_karpenko.py --out " + args.out + (
        f" --operations {args.operations}" if args.operations != 40_000 else "") + (
        f" --seed {args.seed}" if args.seed else "") + (
        f" --clusters {args.clusters}" if args.clusters != "C,D" else "")
    text = report(sections, command, time.perf_counter() - started, args.operations)
    Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
