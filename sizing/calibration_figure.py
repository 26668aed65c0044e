"""The picture of a calibrated Cassandra model beside its benchmark rows.

One column per operation (read, write); the top row is mean latency against the load
(client threads of a closed loop, or the rate an open loop offers), the bottom row
throughput against the load. Per consistency level (and mix of reads and writes): the
model's curve on a fine grid of loads with its 95% band (a configuration at a single
load: the model's value as a diamond with its band as an error bar), and the
measured rows as markers of the same colour. A calibrated model's curve is anchored
on the rows it was fitted to (`sizing.network_model`), so it passes through them; its
own curve before anchoring is drawn dashed beside it (a cross at a single load), so
that how far the model misses is seen. Used by ``cassandra calibrate --figure`` and
``cassandra predict --figure``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from forkjoin_sim.errors import ConfigError
from forkjoin_sim.files.io import atomic_save
from sizing.closed_network import single_closed

#: Columns `draw` and `curves` read from the measured rows.
NEEDED = ("operation", "consistency", "quorum", "threads", "nodes", "replicas",
          "mean_ms", "throughput")

#: One configuration drawn as one curve: rows that differ only in their load.
_CURVE = ["operation", "consistency", "quorum", "nodes", "replicas", "think_ms", "open",
          "reads", "other_quorum"]

_OPERATIONS = ("read", "write")


def _checked(measured: pd.DataFrame) -> pd.DataFrame:
    """``measured`` with a ``think_ms`` column (0 where absent), or a ConfigError."""
    missing = [c for c in NEEDED if c not in measured.columns]
    if missing:
        raise ConfigError(f"measured rows lack columns {missing}; give "
                          f"{', '.join(NEEDED)} (mean_ms and throughput may be NaN)")
    if measured.empty:
        raise ConfigError("no measured rows to draw; give at least one row")
    unknown = sorted(set(measured.operation) - set(_OPERATIONS))
    if unknown:
        raise ConfigError(f"operation {unknown} in the measured rows; use read or write")
    table = measured.copy()
    if "think_ms" not in table.columns:
        table["think_ms"] = 0.0
    rate = (table.rate.to_numpy(float) if "rate" in table.columns
            else np.full(len(table), np.nan))
    table["open"] = np.isfinite(rate)
    # the x axis: client threads of a closed loop, the offered rate of an open one
    table["load"] = np.where(table.open, rate, table.threads.to_numpy(float))
    if "reads" not in table.columns:
        table["reads"] = np.where(table.operation == "write", 0.0, 1.0)
    if "other_quorum" not in table.columns:
        table["other_quorum"] = table.quorum
    return table


#: Grid points per curve: smooth at a figure's size; each costs a band of posterior
#: draws (`sizing.network_model.NetworkModel.interval`), so twice as many take
#: twice as long.
POINTS = 30


def curves(fit, measured: pd.DataFrame, points: int = POINTS,
           level: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """The model curves that `draw` plots: one row per grid point.

    Per configuration of ``measured`` (operation, consistency, quorum, nodes, replicas,
    think time, open or closed loop, share of reads and the other operation's quorum
    in a mixed run), the grid is ``points`` loads (client threads, or an open loop's
    offered rate, column ``load``) evenly spaced from the smallest to the largest
    measured one, plus every measured load (so the curve passes through the model at
    each marker). Columns: those of the configuration, ``load``, ``threads`` (NaN in
    an open loop), ``mean_ms``, ``low_ms``, ``high_ms`` (the ``level`` band of
    ``fit.interval``), ``throughput``, ``throughput_low``, ``throughput_high`` (ops/s),
    ``plain_ms`` (a model with anchors: its latency before anchoring; else NaN).

    The throughput band of a closed loop of one operation follows from the latency
    band by Little's law, ``threads = throughput (think + cycle)``, holding the share of
    the cycle that is measured latency at the fitted point's (exact when no client work
    lies outside the measured latency). An open loop's throughput is its offered rate
    up to the model's capacity, and a mixed run's cycle holds the other operation's
    latency too: their band is the curve.
    """
    table = _checked(measured)
    pieces = []
    for key, group in table.groupby(_CURVE, sort=False, dropna=False):
        measured_load = group.load.to_numpy(float)
        grid = np.union1d(np.linspace(measured_load.min(), measured_load.max(), points),
                          measured_load)
        piece = pd.DataFrame({name: [value] * len(grid) for name, value in zip(_CURVE, key)})
        piece["load"] = grid
        pieces.append(piece)
    grid = pd.concat(pieces, ignore_index=True)
    is_open = grid.open.to_numpy(bool)
    grid["threads"] = np.where(is_open, np.nan, grid.load.to_numpy(float))
    rows = dict(threads=grid.threads.to_numpy(float),
                rate=np.where(is_open, grid.load.to_numpy(float), np.nan),
                think_ms=grid.think_ms.to_numpy(float),
                nodes=grid.nodes.to_numpy(np.int64),
                replicas=grid.replicas.to_numpy(np.int64),
                quorum=grid.quorum.to_numpy(np.int64),
                other_quorum=grid.other_quorum.to_numpy(np.int64),
                reads=grid.reads.to_numpy(float),
                write=(grid.operation == "write").to_numpy())
    latency, throughput = fit.predict(rows)
    low, high = fit.interval(rows, level=level, seed=seed)
    grid["mean_ms"], grid["low_ms"], grid["high_ms"] = latency, low, high
    grid["throughput"] = throughput
    # a calibrated model's own curve, before its anchors move it onto the rows
    grid["plain_ms"] = (fit.predict(rows, anchored=False)[0]
                        if getattr(fit, "anchors", None) is not None
                        else np.full(len(grid), np.nan))
    plain = single_closed(rows)
    threads = np.where(plain, rows["threads"], 1.0)
    cycle_ms = threads * 1000.0 / throughput - rows["think_ms"]
    measured_share = latency / cycle_ms
    # more latency, less throughput: the band's high end is the throughput's low end
    grid["throughput_low"] = np.where(plain, threads * 1000.0 / (
        rows["think_ms"] + high / measured_share), throughput)
    grid["throughput_high"] = np.where(plain, threads * 1000.0 / (
        rows["think_ms"] + low / measured_share), throughput)
    return grid


def _label(consistency, nodes, replicas, several_clusters: bool,
           reads: float | None = None) -> str:
    """A legend entry: the level's name, the mix of a mixed run, and the cluster where
    several are drawn."""
    name = str(consistency)
    if isinstance(consistency, (int, np.integer, float, np.floating)):
        name = f"{int(consistency)} of {int(replicas)}"
    if reads is not None and reads not in (0.0, 1.0):
        name += f", {100 * reads:.3g}% reads"
    return f"{name} ({nodes} nodes, {replicas} replicas)" if several_clusters else name


def _lone(values: np.ndarray) -> np.ndarray:
    """Which points of a curve (in load order) a line cannot show: finite ones with no
    finite neighbour, such as the one point of a curve measured at a single load."""
    finite = np.isfinite(values)
    before = np.concatenate([[False], finite[:-1]])
    after = np.concatenate([finite[1:], [False]])
    return finite & ~before & ~after


def _model(ax, load: np.ndarray, value: np.ndarray, low: np.ndarray, high: np.ndarray,
           colour: str, label: str) -> None:
    """The model's ``value`` against ``load`` on ``ax``: a line in a filled band
    (``low`` to ``high``) where it has neighbours, a hollow diamond with an error bar
    where it stands alone (a line or band of one point draws nothing)."""
    lone = _lone(value)
    joined = np.isfinite(value) & ~lone
    if joined.any():
        ax.plot(load, value, "-", color=colour, label=label)
        ax.fill_between(load, low, high, color=colour, alpha=0.2, linewidth=0)
    if lone.any():
        # a band that missed its value would make a negative arm, which errorbar
        # refuses: that arm then ends at the value (NaN arms stay undrawn)
        arms = np.maximum(np.vstack([value - low, high - value])[:, lone], 0.0)
        ax.errorbar(load[lone], value[lone], yerr=arms, fmt="D", mfc="none",
                    color=colour, ms=6, capsize=4,
                    label=None if joined.any() else label)


def _before_anchoring(ax, load: np.ndarray, plain: np.ndarray, colour: str) -> None:
    """A calibrated model's own curve before anchoring: dashed, a cross at a lone
    point (nothing where the model has no anchors, ``plain`` all NaN)."""
    lone = _lone(plain)
    if (np.isfinite(plain) & ~lone).any():
        ax.plot(load, plain, "--", color=colour, linewidth=0.8)
    if lone.any():
        ax.plot(load[lone], plain[lone], "x", color=colour, ms=6)


def draw(path: str, fit, measured: pd.DataFrame, title: str = "",
         points: int = POINTS, seed: int = 0) -> None:
    """Write a PNG of the model curves of ``fit`` (``points`` grid points each) with 95%
    bands and the ``measured`` rows (see `curves`) to ``path``, atomically.

    ``fit`` has ``predict(rows) -> (latency_ms, throughput_ops_per_s)`` and
    ``interval(rows, level, seed) -> (low_ms, high_ms)``, e.g. `sizing.network_fit.Fit`
    (``seed``: of the bands' posterior draws).
    A band reaching past twice the highest curve or measured point runs off its panel
    (the panel stops there), so that the curves stay readable.
    """
    # matplotlib only here: the command line's start-up must not pay for it
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    table = _checked(measured)
    grid = curves(fit, table, points, seed=seed)
    operations = [op for op in _OPERATIONS if op in set(table.operation)]
    several = table[["nodes", "replicas"]].drop_duplicates().shape[0] > 1
    levels = (table[["quorum", "consistency", "nodes", "replicas"]]
              .drop_duplicates().sort_values(["nodes", "replicas", "quorum"]))
    # a level keeps its colour in every panel
    colours = {tuple(level): f"C{i % 10}" for i, level in enumerate(levels.itertuples(index=False))}

    anchored = np.isfinite(grid.plain_ms.to_numpy(float)).any()
    fig = Figure(figsize=(5.0 * len(operations), 7.5))
    FigureCanvasAgg(fig)  # a canvas of its own: no pyplot, no global backend switch
    axes = fig.subplots(2, len(operations), squeeze=False, sharex="col")
    for column, operation in enumerate(operations):
        top, bottom = axes[0, column], axes[1, column]
        for key, curve in grid[grid.operation == operation].groupby(_CURVE, sort=False,
                                                                     dropna=False):
            configuration = dict(zip(_CURVE, key))
            colour = colours[(configuration["quorum"], configuration["consistency"],
                              configuration["nodes"], configuration["replicas"])]
            label = _label(configuration["consistency"], configuration["nodes"],
                           configuration["replicas"], several, configuration["reads"])
            rows = table[np.logical_and.reduce(
                [(table[c] == v).to_numpy() for c, v in configuration.items()])]
            load = curve.load.to_numpy(float)
            _model(top, load, curve.mean_ms.to_numpy(float), curve.low_ms.to_numpy(float),
                   curve.high_ms.to_numpy(float), colour, label)
            _before_anchoring(top, load, curve.plain_ms.to_numpy(float), colour)
            _model(bottom, load, curve.throughput.to_numpy(float),
                   curve.throughput_low.to_numpy(float),
                   curve.throughput_high.to_numpy(float), colour, label)
            shown = rows[np.isfinite(rows.mean_ms.to_numpy(float))]
            top.plot(shown.load, shown.mean_ms, "o", color=colour, ms=4)
            shown = rows[np.isfinite(rows.throughput.to_numpy(float))]
            bottom.plot(shown.load, shown.throughput, "o", color=colour, ms=4)
        shown = grid[grid.operation == operation]
        at = table[table.operation == operation]
        alone = any(_lone(curve.mean_ms.to_numpy(float)).any()
                    for _, curve in shown.groupby(_CURVE, sort=False, dropna=False))
        top.set_title(f"{operation}s: model (line, 95% band)"
                      + (" and measured (dots)" if at.mean_ms.notna().any() else "")
                      + ("\na lone load: diamond and 95% bar"
                         + (" (x: before anchoring)" if anchored else "")
                         if alone else "")
                      + ("\ndashed: the model before anchoring on the rows"
                         if anchored else ""), fontsize=9)
        top.set_ylabel("mean latency (ms)")
        bottom.set_ylabel("throughput (ops/s)")
        loops = set(table[table.operation == operation].open)
        bottom.set_xlabel({frozenset([False]): "client threads",
                           frozenset([True]): "offered load (ops/s)"}.get(
            frozenset(loops), "client threads (closed loop) or offered ops/s (open)"))
        for ax, curves_drawn, measured in (
                (top, (shown.mean_ms, shown.plain_ms), at.mean_ms),
                (bottom, (shown.throughput,), at.throughput)):
            ax.grid(alpha=0.3)
            # the panel starts at zero, so its margin is a share of all its height (else
            # a lone point, whose data span no height, would sit on the top edge)
            ax.update_datalim([(0.0, 0.0)], updatex=False)
            ax.autoscale_view()
            # a wide band must not flatten the curves: past twice their height it runs off
            highest = np.nanmax(np.concatenate(
                [c.to_numpy(float) for c in (*curves_drawn, measured)]))
            ax.set_ylim(0, min(ax.get_ylim()[1], 2.0 * highest))
        top.legend(title="consistency", fontsize=8, title_fontsize=8)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    atomic_save(path, fig.savefig, dpi=120)
