"""Staleness and latency of partial quorums under load, next to PBS's load-free answer.

For N = 3 and 5, every (R, W) with R + W <= N and one strict pair as the control,
both replica structures (one FIFO queue; separate read and mutation stages), write
shares 0.1 and 0.5 and work per replica from 0 (no service: the load-free limit)
to 0.9: the queueing simulation (``forkjoin_sim.staleness.queueing``) gives
P(stale), t-visibility per bin of time after commit, k-staleness and p99 read and
write latency. Beside it, PBS's WARS Monte Carlo with the same message laws
(``forkjoin_sim.staleness.wars``) evaluated at the very times after commit the
simulated reads saw (so the two differ only by the queues), and the closed form
1 - C(N-W, R)/C(N, R).

Laws: 1 operation per ms, every one-way message exponential with mean 0.5 ms,
read and write service exponential with mean equal to the work per replica (ms per
ms of time), one thread per stage.

    forkjoin-sim experiment staleness-load            # writes docs/staleness/load.*
    forkjoin-sim experiment staleness-load --operations 50000 --out-dir /tmp/x
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from analytic.staleness import p_consistent
from forkjoin_sim.errors import ConfigError
from forkjoin_sim.files.io import atomic_save, atomic_write
from forkjoin_sim.nodes import SharedQueue, Stages
from forkjoin_sim.staleness.queueing import (ReplicatedKey, exponential_delays,
                                             run_notes, simulate_queues)
from forkjoin_sim.staleness.wars import simulate_wars
from sizing.staleness_planning import run_doubts

RATE = 1.0
MESSAGE_MEAN = 0.5
LOADS = (0.0, 0.1, 0.3, 0.5, 0.7, 0.9)
WRITE_SHARES = (0.1, 0.5)
REPLICAS = (3, 5)
STRUCTURES = {"shared": SharedQueue(), "stages": Stages()}
#: Bins of time after commit (ms) for t-visibility.
EDGES = (0.0, 1.0, 2.0, 5.0)
VERSIONS = (1, 2)
#: The columns the figures draw from (``--plot-only`` reads them back from load.csv).
PLOTTED = ("replicas", "read_quorum", "write_quorum", "structure", "write_share",
           "work_per_replica", "stale", "stale_low", "stale_high", "pbs_stale",
           "read_p99", "write_p99", "pbs_read_p99", "pbs_write_p99")
#: Loads the t-visibility figure simulates (N = 3, R = W = 1, half writes).
VISIBILITY_LOADS = (0.0, 0.5, 0.9)
#: The columns of load_visibility.csv, the t-visibility figure's data: per curve
#: ("queues" per structure and load, binned; "pbs" the WARS curve at points t_low).
VISIBILITY_COLUMNS = ("curve", "structure", "work_per_replica", "t_low", "t_high",
                      "probability", "low", "high")
#: What a run of this experiment asks more of, as its option names it.
MORE = "operations (--operations)"


def pairs(replicas: int) -> list[tuple[int, int]]:
    """Every partial (R + W <= N) pair and the majority pair as the strict control."""
    partial = [(r, w) for r in range(1, replicas) for w in range(1, replicas)
               if r + w <= replicas]
    majority = replicas // 2 + 1
    return partial + [(majority, majority)]


def simulations() -> int:
    """Simulations (WARS and queueing runs) the experiment makes: the unit of its
    progress bar (``--plot-only`` makes none)."""
    table = sum(len(pairs(n)) for n in REPLICAS) + (
        len(REPLICAS) * len(STRUCTURES) * len(WRITE_SHARES) * len(LOADS))
    return table + 1 + len(STRUCTURES) * len(VISIBILITY_LOADS)


def _tick(done) -> None:
    if done is not None:
        done()


def experiment(operations: int, seed: int, wars_trials: int, done=None) -> pd.DataFrame:
    """One row per (N, structure, write share, load, R, W); ``done()``, if given, is
    called after each simulation."""
    delays = exponential_delays(MESSAGE_MEAN)
    wars = {}
    for n in REPLICAS:
        for r, w in pairs(n):
            wars[(n, r, w)] = simulate_wars(delays, n, r, w, wars_trials, seed=seed + 1)
            _tick(done)
    rows = []
    for n in REPLICAS:
        for structure, node in STRUCTURES.items():
            for share in WRITE_SHARES:
                for load in LOADS:
                    law = None if load == 0 else stats.expon(scale=load / RATE)
                    key = ReplicatedKey(n, RATE, share, node=node, read_service=law,
                                        write_service=law, delays=delays)
                    run = simulate_queues(key, operations, seed)
                    _tick(done)
                    notes = run_notes(key, operations, unit=MORE)
                    for r, w in pairs(n):
                        result = run.outcome(r, w)
                        # what forkjoin-sim staleness says of the same pair's run
                        doubts, _ = run_doubts(result.read_latency, result.write_latency,
                                               float(result.utilisation.max()),
                                               operations, more=MORE)
                        rows.append(_row(result, wars[(n, r, w)], structure, load)
                                    | {"warnings": "; ".join(notes + doubts)})
    return pd.DataFrame(rows)


def _row(result, wars, structure: str, load: float) -> dict:
    key = result.key
    # PBS's answer for each simulated read: P(consistent | its own time after commit)
    pbs = np.searchsorted(wars.waits, result.since_commit, side="right") / wars.trials
    stale, low, high = result.stale()
    row = {"replicas": key.replicas, "read_quorum": result.read_quorum,
           "write_quorum": result.write_quorum, "structure": structure,
           "write_share": key.write_share, "work_per_replica": load,
           "busiest_stage": float(result.utilisation.max()), "reads": result.reads,
           "stale": stale, "stale_low": low, "stale_high": high,
           "pbs_stale": float(1 - pbs.mean()),
           "closed_form_consistent": p_consistent(key.replicas, result.read_quorum,
                                                  result.write_quorum)}
    # the library's own bins and intervals (widened by the correlation of reads)
    bins = np.searchsorted(EDGES, result.since_commit, side="right") - 1
    for j, bin_row in result.visibility(EDGES).iterrows():
        name = f"visible_{bin_row.t_low:g}"
        row[name] = bin_row.probability
        row[f"{name}_low"], row[f"{name}_high"] = bin_row.low, bin_row.high
        inside = bins == j
        row[f"pbs_{name}"] = float(pbs[inside].mean()) if inside.any() else np.nan
    for k_row in result.k_staleness([k for k in VERSIONS if k > 1]).itertuples():
        row[f"k_{k_row.k}"] = k_row.probability
        row[f"k_{k_row.k}_low"], row[f"k_{k_row.k}_high"] = k_row.low, k_row.high
    row["read_p99"] = float(np.percentile(result.read_latency, 99))
    row["write_p99"] = float(np.percentile(result.write_latency, 99))
    row["pbs_read_p99"] = float(np.percentile(wars.read_latency, 99))
    row["pbs_write_p99"] = float(np.percentile(wars.write_latency, 99))
    return row


def plot(table: pd.DataFrame, path: Path) -> None:
    """P(stale) against work per replica: rows N, columns write share; solid shared
    FIFO, dashed stages, dotted PBS at the reads' own times after commit."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(REPLICAS), len(WRITE_SHARES), figsize=(11, 7.5),
                             squeeze=False)
    for i, n in enumerate(REPLICAS):
        shown = [p for p in pairs(n)[:-1] if p[0] + p[1] in (2, n)][:3]
        for j, share in enumerate(WRITE_SHARES):
            ax = axes[i, j]
            for c, (r, w) in enumerate(shown):
                for structure, style in (("shared", "-"), ("stages", "--")):
                    part = table[(table.replicas == n) & (table.write_share == share)
                                 & (table.read_quorum == r) & (table.write_quorum == w)
                                 & (table.structure == structure)]
                    ax.errorbar(part.work_per_replica, 100 * part.stale,
                                yerr=[100 * (part.stale - part.stale_low),
                                      100 * (part.stale_high - part.stale)],
                                fmt="o" + style, color=f"C{c}", ms=3, capsize=2,
                                label=f"R={r} W={w} {structure}")
                    ax.plot(part.work_per_replica, 100 * part.pbs_stale, ":",
                            color=f"C{c}", alpha=0.7, lw=1.4 if structure == "stages" else 0.8)
            ax.set_title(f"N={n}, write share {share:g} (dotted: PBS at the same t)",
                         fontsize=9)
            ax.set_xlabel("work per replica (utilisation of a one-queue replica)")
            ax.set_ylabel("P(stale) %")
            ax.set_yscale("symlog", linthresh=0.1)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=6)
    fig.tight_layout()
    atomic_save(path, fig.savefig, dpi=120)
    plt.close(fig)


def plot_latency(table: pd.DataFrame, path: Path) -> None:
    """p99 read and write latency against work per replica, ONE/ONE and the majority
    pair, write share 0.5; dotted: PBS (no queues)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(REPLICAS), figsize=(11, 4.2), squeeze=False)
    for i, n in enumerate(REPLICAS):
        ax = axes[0, i]
        majority = n // 2 + 1
        for c, (r, w) in enumerate([(1, 1), (majority, majority)]):
            for structure, style in (("shared", "-"), ("stages", "--")):
                part = table[(table.replicas == n) & (table.write_share == 0.5)
                             & (table.read_quorum == r) & (table.write_quorum == w)
                             & (table.structure == structure)]
                ax.plot(part.work_per_replica, part.read_p99, "o" + style, color=f"C{2 * c}",
                        ms=3, label=f"read p99, R={r} W={w}, {structure}")
                ax.plot(part.work_per_replica, part.write_p99, "s" + style,
                        color=f"C{2 * c + 1}", ms=3,
                        label=f"write p99, R={r} W={w}, {structure}")
            if len(part):  # a load.csv cut short may lack the pair
                ax.axhline(part.pbs_read_p99.iloc[0], color=f"C{2 * c}", ls=":", lw=1)
                ax.axhline(part.pbs_write_p99.iloc[0], color=f"C{2 * c + 1}", ls=":",
                           lw=1)
        ax.set_yscale("log")
        ax.set_title(f"N={n}, write share 0.5 (dotted: PBS, no queues)", fontsize=9)
        ax.set_xlabel("work per replica")
        ax.set_ylabel("99th percentile latency (ms)")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=6)
    fig.tight_layout()
    atomic_save(path, fig.savefig, dpi=120)
    plt.close(fig)


def visibility(operations: int, seed: int, wars_trials: int,
               done=None) -> pd.DataFrame:
    """The t-visibility figure's data (`VISIBILITY_COLUMNS`): N = 3, R = W = 1, half
    writes, P(consistent) per bin of 0.25 ms after commit for each structure and load
    of `VISIBILITY_LOADS`, and PBS's curve; ``done()``, if given, is called after each
    simulation."""
    edges = np.round(np.arange(0, 4.01, 0.25), 2)
    delays = exponential_delays(MESSAGE_MEAN)
    wars = simulate_wars(delays, 3, 1, 1, wars_trials, seed=seed + 1)
    _tick(done)
    parts = []
    for structure, node in STRUCTURES.items():
        for load in VISIBILITY_LOADS:
            law = None if load == 0 else stats.expon(scale=load / RATE)
            key = ReplicatedKey(3, RATE, 0.5, node=node, read_service=law,
                                write_service=law, delays=delays)
            table = simulate_queues(key, operations, seed).outcome(1, 1).visibility(edges)
            _tick(done)
            parts.append(table.assign(curve="queues", structure=structure,
                                      work_per_replica=load))
    grid = np.linspace(0, 4, 200)
    parts.append(pd.DataFrame({"curve": "pbs", "structure": "", "work_per_replica": 0.0,
                               "t_low": grid, "t_high": grid,
                               "probability": wars.consistency(grid).probability,
                               "low": np.nan, "high": np.nan}))
    return pd.concat(parts, ignore_index=True)[list(VISIBILITY_COLUMNS)]


def plot_visibility(table: pd.DataFrame, path: Path) -> None:
    """PBS-style t-visibility from `visibility`'s table: P(consistent) against time
    after commit at three loads, one panel per structure, PBS's curve dotted."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pbs = table[table.curve == "pbs"]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for ax, structure in zip(axes, STRUCTURES):
        queues = table[(table.curve == "queues") & (table.structure == structure)]
        for c, (load, part) in enumerate(queues.groupby("work_per_replica", sort=True)):
            # the last bin, [4 ms, inf), has no middle: left out
            part = part.sort_values("t_low").iloc[:-1]
            ax.errorbar((part.t_low + part.t_high) / 2, part.probability,
                        yerr=[part.probability - part.low, part.high - part.probability],
                        fmt="o-", ms=3, color=f"C{c}", capsize=2,
                        label=f"work per replica {load:g}")
        ax.plot(pbs.t_low, pbs.probability, ":", color="black",
                label="PBS (WARS, no queues), read exactly t after commit")
        ax.set_title(f"{structure}: N=3, R=W=1, 1 op/ms, half writes", fontsize=9)
        ax.set_xlabel("t after commit (ms); points: bins of 0.25 ms")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")
    axes[0].set_ylabel("P(consistent)")
    fig.tight_layout()
    atomic_save(path, fig.savefig, dpi=120)
    plt.close(fig)


def read_table(path: Path, columns=PLOTTED) -> pd.DataFrame:
    """A load.csv (or, with ``columns`` `VISIBILITY_COLUMNS`, a load_visibility.csv)
    this experiment wrote, or ConfigError saying what it lacks."""
    fix = "run the experiment without --plot-only to write it again"
    try:
        table = pd.read_csv(path)
    except pd.errors.EmptyDataError:
        raise ConfigError(f"{path} is empty; {fix}") from None
    except (pd.errors.ParserError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path} is not a CSV table ({str(error).strip()}); "
                          f"{fix}") from None
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise ConfigError(f"{path} lacks the column(s) {', '.join(missing)} the figures "
                          f"draw from; {fix}")
    if table.empty:
        raise ConfigError(f"{path} has a header but no rows; {fix}")
    words = [c for c in columns if c not in ("structure", "curve")
             and not pd.api.types.is_numeric_dtype(table[c])]
    if words:
        raise ConfigError(f"{path}: column {words[0]} holds text where numbers belong; "
                          f"{fix}")
    return table


def _progress_bar(total: int):
    """The bar over the simulations on stderr (`forkjoin_sim.run.progress_bar`)."""
    from forkjoin_sim.run import progress_bar

    return progress_bar(total, "staleness-load", "run")


def run(args) -> int:
    """Run the experiment with the options of ``forkjoin-sim experiment staleness-load``;
    with ``--plot-only``, redraw its figures from the load.csv and load_visibility.csv
    it wrote, simulating nothing."""
    out = Path(args.out_dir)
    started = time.time()
    if args.plot_only:
        return _redraw(out)
    with _progress_bar(simulations()) as bar:
        table = experiment(args.operations, args.seed, args.wars_trials, bar.update)
        curves = visibility(args.operations, args.seed, args.wars_trials, bar.update)
    with atomic_write(out / "load.csv", newline="") as handle:
        table.to_csv(handle, index=False, float_format="%.6g")
    with atomic_write(out / "load_visibility.csv", newline="") as handle:
        curves.to_csv(handle, index=False, float_format="%.6g")
    plot(table, out / "load.png")
    plot_latency(table, out / "load_latency.png")
    plot_visibility(curves, out / "load_visibility.png")
    _warn_rows(table)
    print(f"{len(table)} rows in {time.time() - started:.0f} s -> {out}/load.csv, "
          "load_visibility.csv, load.png, load_latency.png, load_visibility.png")
    return 0


def _redraw(out: Path) -> int:
    """``--plot-only``: the figures from the saved tables; load_visibility.png only
    when its table was saved (runs before it was kept left none)."""
    table = read_table(out / "load.csv")
    drawn = ["load.png", "load_latency.png"]
    plot(table, out / "load.png")
    plot_latency(table, out / "load_latency.png")
    if (out / "load_visibility.csv").exists():
        plot_visibility(read_table(out / "load_visibility.csv", VISIBILITY_COLUMNS),
                        out / "load_visibility.png")
        drawn.append("load_visibility.png")
    else:
        print(f"warning: {out}/load_visibility.csv, the data of load_visibility.png, "
              "is absent (an older run did not keep it); load_visibility.png is not "
              "redrawn: run the experiment without --plot-only to make both",
              file=sys.stderr)
    if "warnings" in table.columns:
        _warn_rows(table)
    print(f"redrew {', '.join(drawn)} from the {len(table)} rows of {out}/load.csv"
          + (" and load_visibility.csv" if len(drawn) == 3 else "")
          + " (nothing simulated)")
    return 0


def _warn_rows(table: pd.DataFrame) -> None:
    """One line on stderr when some rows' runs doubt themselves (their ``warnings``),
    with the first such doubt."""
    # a column of empty cells reads back as NaN floats: no fill of text into them
    doubted = table[table.warnings.notna() & (table.warnings.astype(str) != "")]
    if len(doubted):
        first = doubted.iloc[0]
        print(f"warning: {len(doubted)} of {len(table)} rows carry warnings (their "
              f"warnings column says which), e.g. N={first.replicas}, "
              f"{first.structure}, write share {first.write_share:g}, work per "
              f"replica {first.work_per_replica:g}: {first.warnings}", file=sys.stderr)
