"""Predict PBS's Cassandra micro-benchmarks with WARS, FIFO and independent channels.

Fit on some runs, report on the others:

* Fit: every acknowledgement's estimated round trip (``write_acks.csv.gz``,
  ``round_trip_ms``) in the runs with W = N (``3N/3N1R3W``, ``5N/5N1R5W``), the
  only runs whose acknowledgements are all logged. Assumption: each one-way delay
  (write, ack, read request, read response) is an independent draw of half a
  round trip (``Empirical`` of round_trip / 2; the clocks of the replicas are too
  far off to split round trips from the logs). The logs hold no per-replica read
  messages, so reads are assumed to travel like writes.
* Predict, for each of the 19 other runs (N, R, W): one write, then one read that
  starts when that run's reads started after the newest write's start (its
  measured ``since_start_ms``, resampled), through the same coordinator, which
  holds no replica (PBS's set-up), with ``channels="fifo"`` and
  ``"independent"``. ``--split`` moves the share of a round trip taken by the
  request away from one half, ``--longest`` drops the tail of the fitted
  round trips (sensitivity checks). Compared: P(stale), the
  share of reads started while the write was in flight, the share of those that
  returned the new version, and read and write latency quantiles. A second
  prediction takes only the reads started with no write in flight, each its
  measured time after the last commit (``after="commit"``), so that it does not
  hinge on the simulated commit time.

Usage (from the repository root, about 10 s)::

    .venv/bin/python docs/data/pbs_micro/compare.py

prints a Markdown table and writes ``predictions.csv`` next to this script.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from forkjoin_sim.laws.empirical import Empirical
from forkjoin_sim.staleness.channels import simulate_wars_ordered
from forkjoin_sim.staleness.wars import MessageLaws

HERE = Path(__file__).resolve().parent
FIT_RUNS = ("3N/3N1R3W", "5N/5N1R5W")
PERCENTILES = (50, 99, 99.9)


def message_laws(acks: pd.DataFrame, split: float = 0.5,
                 longest: float = np.inf) -> MessageLaws:
    """Requests (write, read) take ``split`` of a resampled round trip of the fit
    runs, replies (ack, response) the rest, each message an independent draw;
    round trips over ``longest`` ms are left out."""
    trips = acks.loc[acks.run.isin(FIT_RUNS), "round_trip_ms"].dropna().to_numpy()
    trips = trips[trips <= longest]
    out = Empirical.from_samples(trips * split)
    back = Empirical.from_samples(trips * (1 - split))
    return MessageLaws(out, back, out, back, name=f"PBS micro, split {split:g}")


def wilson(count: int, total: int) -> tuple[float, float]:
    ci = stats.binomtest(int(count), int(total)).proportion_ci(0.95, method="wilson")
    return ci.low, ci.high


def since_commit(reads: pd.DataFrame, writes: pd.DataFrame) -> pd.Series:
    """For reads started with no write in flight: start minus the last commit."""
    after = reads[reads.in_flight == 0].merge(
        writes.rename(columns={"version": "started", "latency_ms": "write_ms"}),
        on=["run", "started"])
    return after.set_index("run").since_start_ms - after.set_index("run").write_ms


def predict(runs, reads, writes, laws, trials: int, seed: int) -> pd.DataFrame:
    rows = []
    waits = since_commit(reads, writes)
    for index, run in runs.iterrows():
        if run.run in FIT_RUNS:
            continue
        starts = reads.loc[reads.run == run.run, "since_start_ms"].to_numpy()
        choose = np.random.default_rng(np.random.SeedSequence([seed, index]))
        delays = choose.choice(starts, size=trials)
        after_commit = choose.choice(waits.loc[run.run].to_numpy(), size=trials)
        measured_flight = int(run.reads_in_flight)
        row = {"run": run.run, "nodes": run.nodes, "read_quorum": run.read_quorum,
               "write_quorum": run.write_quorum, "reads": int(run.reads),
               "measured_stale": int(run.stale_reads),
               "measured_p_stale_high": run.p_stale_high,
               "measured_in_flight": measured_flight / run.reads,
               "measured_new_in_flight": run.in_flight_new / measured_flight}
        for p in PERCENTILES:
            row[f"measured_read_p{p:g}"] = run[f"read_ms_p{p:g}"]
            row[f"measured_write_p{p:g}"] = run[f"write_ms_p{p:g}"]
        for channels in ("fifo", "independent"):
            result = simulate_wars_ordered(
                laws, int(run.nodes), int(run.read_quorum), int(run.write_quorum),
                read_delays=delays, after="start", channels=channels,
                coordinators="one", trials=trials,
                seed=np.random.SeedSequence([seed, index, 1]))
            summary = result.summary().set_index("event")
            # The after-commit reads alone, each started its measured time after
            # the (simulated) commit: no dependence on the simulated commit time.
            later = simulate_wars_ordered(
                laws, int(run.nodes), int(run.read_quorum), int(run.write_quorum),
                read_delays=after_commit, after="commit", channels=channels,
                coordinators="one", trials=trials,
                seed=np.random.SeedSequence([seed, index, 2]))
            row[f"{channels}_p_stale_after_commit"] = later.stale.mean()
            row[f"{channels}_p_stale"] = summary.loc["stale", "probability"]
            row[f"{channels}_p_stale_high"] = summary.loc["stale", "high"]
            row[f"{channels}_in_flight"] = summary.loc["in_flight", "probability"]
            row[f"{channels}_new_in_flight"] = summary.loc["new_in_flight",
                                                           "probability"]
            quantiles = result.latency_quantiles(PERCENTILES).set_index("percentile")
            for p in PERCENTILES:
                row[f"{channels}_read_p{p:g}"] = quantiles.loc[p, "read"]
                row[f"{channels}_write_p{p:g}"] = quantiles.loc[p, "write"]
        rows.append(row)
    return pd.DataFrame(rows)


def markdown(table: pd.DataFrame) -> str:
    """``table`` as a GitHub Markdown table, numbers to 4 significant digits."""
    def cell(value):
        if isinstance(value, (float, np.floating)):
            return f"{value:.4g}"
        return str(value)
    lines = ["| " + " | ".join(table.columns) + " |",
             "|" + "---|" * len(table.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |"
              for row in table.itertuples(index=False)]
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=2012)
    parser.add_argument("--split", type=float, default=0.5,
                        help="share of a round trip taken by the request (0.5: "
                             "halves)")
    parser.add_argument("--longest", type=float, default=np.inf,
                        help="leave out fitted round trips over this many ms "
                             "(drops the tail: a sensitivity check)")
    parser.add_argument("--out", type=Path, default=HERE / "predictions.csv")
    args = parser.parse_args(argv)
    runs = pd.read_csv(HERE / "runs.csv")
    reads = pd.read_csv(HERE / "reads.csv.gz")
    acks = pd.read_csv(HERE / "write_acks.csv.gz")
    laws = message_laws(acks, args.split, args.longest)
    trips = laws.write.samples / args.split
    print(f"fit: {trips.size:,} round trips (<= {args.longest:g} ms) from "
          f"{FIT_RUNS}, median "
          f"{np.median(trips):.3f} ms, mean {trips.mean():.3f} ms; requests take "
          f"{args.split:g} of a round trip")
    writes = pd.read_csv(HERE / "writes.csv.gz")
    table = predict(runs, reads, writes, laws, args.trials, args.seed)
    table.to_csv(args.out, index=False, float_format="%.6g")

    held = runs[~runs.run.isin(FIT_RUNS)]
    stale, total = int(held.stale_reads.sum()), int(held.reads.sum())
    flight, new = int(held.reads_in_flight.sum()), int(held.in_flight_new.sum())
    print(f"\nheld-out runs: {len(held)}, reads {total:,}, stale {stale} "
          f"(95% upper {wilson(stale, total)[1]:.2g}); in flight {flight:,}, "
          f"new {new:,} ({new / flight:.4%}, 95% {wilson(new, flight)[0]:.4f}.."
          f"{wilson(new, flight)[1]:.4f})")
    weights = table.reads / table.reads.sum()
    for channels in ("fifo", "independent"):
        expected_stale = float((table[f"{channels}_p_stale"] * table.reads).sum())
        share_new = float((table[f"{channels}_new_in_flight"]
                           * table[f"{channels}_in_flight"] * weights).sum()
                          / (table[f"{channels}_in_flight"] * weights).sum())
        later = float((table[f"{channels}_p_stale_after_commit"]
                       * held.set_index("run").loc[table.run,
                                                   "reads_after_commit"].to_numpy()
                       ).sum())
        old = float(((1 - table[f"{channels}_new_in_flight"])
                     * held.set_index("run").loc[table.run,
                                                 "reads_in_flight"].to_numpy()).sum())
        print(f"{channels}: expected old in-flight reads {old:.1f} (seen "
              f"{flight - new})")
        print(f"{channels}: expected stale reads {expected_stale:.1f} "
              f"(P(0 stale) = {stats.poisson(expected_stale).pmf(0):.3g}), "
              f"new among in-flight reads {share_new:.4f}; after-commit reads at "
              f"their measured time after commit: expected stale {later:.1f} "
              f"(P(0) = {stats.poisson(later).pmf(0):.3g})")

    columns = ["run", "reads", "measured_stale", "measured_p_stale_high",
               "fifo_p_stale", "independent_p_stale",
               "independent_p_stale_after_commit",
               "measured_in_flight", "fifo_in_flight", "measured_new_in_flight",
               "fifo_new_in_flight", "independent_new_in_flight"]
    print("\n" + markdown(table[columns]))
    latency = ["run"] + [f"{who}_{op}_p{p:g}" for op in ("read", "write")
                         for p in (50, 99.9)
                         for who in ("measured", "fifo", "independent")]
    print("\n" + markdown(table[latency]))


if __name__ == "__main__":
    main()
