"""The picture of a calibrated Cassandra model beside its benchmark rows.

One column per operation (read, write) and kind of loop (rows of a closed loop against
their client threads, rows of an open loop against the rate it offers, each on an axis
of its own); the top row is mean latency against the load, the bottom row throughput
against the load. Per consistency level (and mix of reads and writes): the
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
from sizing.network_model import throughput_interval

#: Columns `draw` and `curves` read from the measured rows.
NEEDED = ("operation", "consistency", "quorum", "threads", "nodes", "replicas",
          "mean_ms", "throughput")

#: One configuration drawn as one curve: rows that differ only in their load.
_CURVE = ["operation", "consistency", "quorum", "nodes", "replicas", "think_ms", "open",
          "reads", "other_quorum"]

_OPERATIONS = ("read", "write")


def _checked(measured: pd.DataFrame) -> pd.DataFrame:
    """``measured`` with a ``think_ms`` column (the stated pauses: NaN where absent or
    not stated), or a ConfigError."""
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
        table["think_ms"] = np.nan
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

    The throughput band (`sizing.network_model.throughput_interval`) of a closed
    loop of one operation follows from the latency band by Little's law, ``threads =
    throughput (think + outside + latency)``, the clients' time outside the measured
    latency held at the model's; an open loop the model carries carries its offered
    rate (a band of no width, mixed or not); past the model's capacity, and in a
    closed-loop mixed run, whose cycle holds the other operation's latency too, the
    band is unknown (NaN) and not drawn.
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
                think_ms=np.nan_to_num(grid.think_ms.to_numpy(float)),
                pause_ms=grid.think_ms.to_numpy(float),
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
    # the clients' cycle as the model keeps it (stated pauses, time outside)
    timed = fit.with_outside(rows) if hasattr(fit, "with_outside") else rows
    grid["throughput_low"], grid["throughput_high"] = throughput_interval(
        timed, latency, throughput, low, high)
    return grid


def _label(consistency, nodes, replicas, several_clusters: bool,
           reads: float | None = None, pause: float | None = None) -> str:
    """A legend entry: the level's name, the mix of a mixed run, the clients' stated
    pause where runs of several are drawn, and the cluster where several are drawn."""
    name = str(consistency)
    if isinstance(consistency, (int, np.integer, float, np.floating)):
        name = f"{int(consistency)} of {int(replicas)}"
    if reads is not None and reads not in (0.0, 1.0):
        name += f", {100 * reads:.3g}% reads"
    if pause is not None and np.isfinite(pause):
        name += f", {pause:.4g} ms pause"
    return f"{name} ({nodes} nodes, {replicas} replicas)" if several_clusters else name


def _lone(values: np.ndarray) -> np.ndarray:
    """Which points of a curve (in load order) a line cannot show: finite ones with no
    finite neighbour, such as the one point of a curve measured at a single load."""
    finite = np.isfinite(values)
    before = np.concatenate([[False], finite[:-1]])
    after = np.concatenate([finite[1:], [False]])
    return finite & ~before & ~after


#: The ``gid`` of a band's edge lines (told apart from the curves).
BAND_EDGE = "band edge"


def _model(ax, load: np.ndarray, value: np.ndarray, low: np.ndarray, high: np.ndarray,
           colour: str, label: str, style="-") -> None:
    """The model's ``value`` against ``load`` on ``ax``: a line (``style``) in a filled
    band (``low`` to ``high``) where it has neighbours, a hollow diamond with an error
    bar where it stands alone (a line or band of one point draws nothing)."""
    lone = _lone(value)
    joined = np.isfinite(value) & ~lone
    if joined.any():
        ax.plot(load, value, linestyle=style, color=colour, label=label)
        ax.fill_between(load, low, high, color=colour, alpha=0.2, linewidth=0)
        # the band's edges in its colour: overlapping bands stay told apart
        for edge in (low, high):
            ax.plot(load, edge, "-", color=colour, linewidth=0.5, alpha=0.6,
                    gid=BAND_EDGE)
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


#: Colour of each named level in every figure (a fit's and its prediction's agree);
#: levels named by a number, and the same level of several clusters, take the next
#: free colours.
LEVEL_COLOURS = {"ONE": "C0", "LOCAL_ONE": "C0", "QUORUM": "C1", "LOCAL_QUORUM": "C1",
                 "ALL": "C2", "TWO": "C3", "THREE": "C4"}


def pause_style(order: int):
    """The line style of the ``order``-th stated pause drawn (0: solid; then a dash
    followed by ``order`` dots), one of its own for every pause (a level keeps its
    colour; plain dashes are the curve before anchoring, dots the largest fitted
    load)."""
    return "-" if order == 0 else (0, (5, 1.5) + (1, 1.5) * order)
#: The ``gid`` of the line at the largest fitted load.
FITTED_EDGE = "largest fitted load"


def _pause_styles(pauses) -> dict:
    """{pause (None: not stated): line style} of the pauses drawn."""
    known = sorted({float(p) for p in pauses if pd.notna(p)})
    out = {p: pause_style(i) for i, p in enumerate(known)}
    out[None] = pause_style(len(known))
    return out


def _colours(levels: pd.DataFrame) -> dict:
    """{(quorum, consistency, nodes, replicas): colour} of the levels drawn."""
    out, used = {}, set()
    for level in levels.itertuples(index=False):
        colour = LEVEL_COLOURS.get(str(level.consistency).upper())
        if colour is None or colour in used:
            colour = next(f"C{i}" for i in range(5, 100) if f"C{i}" not in used) \
                if len(used) < 95 else "k"
        used.add(colour)
        out[tuple(level)] = colour
    return out


def _fitted(fit, table: pd.DataFrame) -> np.ndarray:
    """Which rows of ``table`` a calibrated model (``fit`` with ``anchors``) was fitted
    to: its operation, level, loop, load and mix (all False without anchors)."""
    anchors = getattr(fit, "anchors", None)
    found = np.zeros(len(table), bool)
    if anchors is None or not len(anchors.threads):
        return found
    is_open, reads = anchors.is_open(), anchors.read_shares()
    for i, row in enumerate(table.itertuples(index=False)):
        found[i] = bool(np.any(
            (anchors.write == (row.operation == "write"))
            & (anchors.quorum == row.quorum) & (is_open == bool(row.open))
            & np.isclose(anchors.threads, row.load, rtol=1e-9)
            & np.isclose(reads, row.reads, atol=1e-9)))
    return found


def _clipped(ax, load: np.ndarray, high: np.ndarray, colour: str) -> float:
    """Marks with a small triangle on the top edge of ``ax`` the loads where a band
    (``high``) runs past the panel; the highest such end, or 0."""
    top = ax.get_ylim()[1]
    past = np.isfinite(high) & (high > top)
    if past.any():
        ax.plot(load[past], np.full(past.sum(), top), "^", color=colour, ms=5,
                clip_on=False)
    return float(np.max(high[past])) if past.any() else 0.0


def _plain_number(value: float) -> str:
    """``value`` to 4 significant digits, in plain digits with thousands separators
    however large (":,.4g" writes 10,510 as 1.051e+04)."""
    return f"{float(f'{value:.4g}'):,.10g}"


def _wrapped(text: str, width: int) -> str:
    """``text`` broken into lines of at most ``width`` characters."""
    import textwrap
    return "\n".join(textwrap.wrap(text, width, break_long_words=True,
                                   break_on_hyphens=False))


def _described(fit, title: str = "") -> str:
    """What a calibrated model is, for a figure's title: structure, cluster, data
    centres and the rows it was fitted on unless ``title`` names them ("" for a bare
    fit)."""
    meta, inner = getattr(fit, "meta", None), getattr(fit, "fit", fit)
    parts = []
    if getattr(inner, "structure", None):
        parts.append(f"structure {inner.structure}")
    if getattr(fit, "nodes", None):
        parts.append(f"{fit.nodes} nodes, {fit.replicas} replicas")
    if meta and meta.get("datacentres"):
        parts.append(f"data centres {meta['datacentres']}")
    if meta and meta.get("measurements") and str(meta["measurements"]) not in title:
        parts.append(f"fitted on {meta['measurements']}")
    return "; ".join(parts)


def draw(path: str, fit, measured: pd.DataFrame, title: str = "",
         points: int = POINTS, seed: int = 0) -> None:
    """Write a PNG of the model curves of ``fit`` (``points`` grid points each) with 95%
    bands and the ``measured`` rows (see `curves`) to ``path``, atomically.

    ``fit`` has ``predict(rows) -> (latency_ms, throughput_ops_per_s)`` and
    ``interval(rows, level, seed) -> (low_ms, high_ms)``, e.g. `sizing.network_fit.Fit`
    (``seed``: of the bands' posterior draws). Rows a calibrated model was fitted to
    are hollow circles, the others filled, with a dotted line at the largest fitted
    load where rows reach past it; each level keeps its colour in every figure
    (`LEVEL_COLOURS`). A band reaching past twice the highest curve or measured point
    runs off its panel (the panel stops there, so that the curves stay readable): a
    triangle on the top edge marks where, and the panel says how far it reaches.
    """
    # matplotlib only here: the command line's start-up must not pay for it
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.ticker import MaxNLocator

    table = _checked(measured)
    grid = curves(fit, table, points, seed=seed)
    table["fitted"] = _fitted(fit, table)
    # a column per operation and loop: threads and an offered rate share no axis
    panels = [(op, is_open) for op in _OPERATIONS for is_open in (False, True)
              if np.any((table.operation == op) & (table.open == is_open))]
    both_loops = len({is_open for _, is_open in panels}) > 1
    several = table[["nodes", "replicas"]].drop_duplicates().shape[0] > 1
    pauses = table.think_ms.nunique(dropna=False) > 1
    levels = (table[["quorum", "consistency", "nodes", "replicas"]]
              .drop_duplicates().sort_values(["nodes", "replicas", "quorum"]))
    colours = _colours(levels)
    styles = _pause_styles(table.think_ms) if pauses else {}
    anchors = getattr(fit, "anchors", None)

    fig = Figure(figsize=(5.0 * len(panels), 7.5))
    FigureCanvasAgg(fig)  # a canvas of its own: no pyplot, no global backend switch
    axes = fig.subplots(2, len(panels), squeeze=False, sharex="col")
    for column, (operation, is_open) in enumerate(panels):
        top, bottom = axes[0, column], axes[1, column]
        bands = []  # (axes, load, high, colour) of every band, for the top edge
        mine = (grid.operation == operation) & (grid.open == is_open)
        for key, curve in grid[mine].groupby(_CURVE, sort=False, dropna=False):
            configuration = dict(zip(_CURVE, key))
            colour = colours[(configuration["quorum"], configuration["consistency"],
                              configuration["nodes"], configuration["replicas"])]
            label = _label(configuration["consistency"], configuration["nodes"],
                           configuration["replicas"], several, configuration["reads"],
                           configuration["think_ms"] if pauses else None)
            # a pause not stated (NaN) is its own configuration, as in the groups
            rows = table[np.logical_and.reduce(
                [((table[c] == v) | (table[c].isna() & pd.isna(v))).to_numpy()
                 for c, v in configuration.items()])]
            load = curve.load.to_numpy(float)
            pause = configuration["think_ms"]
            style = styles.get(None if pd.isna(pause) else float(pause), "-")
            _model(top, load, curve.mean_ms.to_numpy(float), curve.low_ms.to_numpy(float),
                   curve.high_ms.to_numpy(float), colour, label, style)
            _before_anchoring(top, load, curve.plain_ms.to_numpy(float), colour)
            _model(bottom, load, curve.throughput.to_numpy(float),
                   curve.throughput_low.to_numpy(float),
                   curve.throughput_high.to_numpy(float), colour, label, style)
            bands += [(top, load, curve.high_ms.to_numpy(float), colour),
                      (bottom, load, curve.throughput_high.to_numpy(float), colour)]
            for ax, column_name in ((top, "mean_ms"), (bottom, "throughput")):
                shown = rows[np.isfinite(rows[column_name].to_numpy(float))]
                for fitted, face in ((True, "none"), (False, colour)):
                    part = shown[shown.fitted == fitted]
                    ax.plot(part.load, part[column_name], "o", color=colour, mfc=face,
                            ms=4)
        shown = grid[mine]
        at = table[(table.operation == operation) & (table.open == is_open)]
        alone = any(_lone(curve.mean_ms.to_numpy(float)).any()
                    for _, curve in shown.groupby(_CURVE, sort=False, dropna=False))
        plain, mean = shown.plain_ms.to_numpy(float), shown.mean_ms.to_numpy(float)
        # the dashed curve is named only where it shows beside the solid one
        anchored = bool(np.any(np.abs(plain / mean - 1.0) > 0.005))
        loop = ((", open loop" if is_open else ", closed loop") if both_loops else "")
        top.set_title(f"{operation}s{loop}: model (line, 95% band)"
                      + (" and measured (dots)" if at.mean_ms.notna().any() else "")
                      + ("\na lone load: diamond and 95% bar"
                         + (" (x: before anchoring)" if anchored else "")
                         if alone else "")
                      + ("\ndashed: the model before anchoring on the fitted rows"
                         if anchored else ""), fontsize=9)
        top.set_ylabel("mean latency (ms)")
        mixed = bool(np.any((at.reads > 0.0) & (at.reads < 1.0)))
        bottom.set_ylabel("throughput of the whole run, reads and writes (ops/s)"
                          if mixed else "throughput (ops/s)")
        bottom.set_xlabel("offered load (ops/s)" if is_open else "client threads")
        if is_open:
            # rates of six digits: the default ticks run into each other
            bottom.xaxis.set_major_locator(MaxNLocator(nbins=5))
        for ax, curves_drawn, measured, unit in (
                (top, (shown.mean_ms, shown.plain_ms), at.mean_ms, "ms"),
                (bottom, (shown.throughput,), at.throughput, "ops/s")):
            ax.grid(alpha=0.3)
            # the panel starts at zero, so its margin is a share of all its height (else
            # a lone point, whose data span no height, would sit on the top edge)
            ax.update_datalim([(0.0, 0.0)], updatex=False)
            ax.autoscale_view()
            # a wide band must not flatten the curves: past twice their height it runs off
            highest = np.nanmax(np.concatenate(
                [c.to_numpy(float) for c in (*curves_drawn, measured)]))
            ax.set_ylim(0, min(ax.get_ylim()[1], 2.0 * highest))
            reach = max([_clipped(a, load, high, colour)
                         for a, load, high, colour in bands if a is ax] or [0.0])
            if reach:
                ax.text(0.02, 0.97, "\u25b2 a band runs past the top, to "
                        f"{_plain_number(reach)} {unit}", transform=ax.transAxes,
                        va="top", fontsize=7)
        # where the fitted rows end and the rows asked go on
        if anchors is not None and len(anchors.threads):
            mine = (anchors.write == (operation == "write"))
            closed = mine if anchors.open is None else mine & ~anchors.open
            beyond = at.load[~at.open & ~at.fitted]
            # on a cluster of another size, at the same load per node
            per_node = (float(at.nodes.max()) / fit.nodes
                        if getattr(fit, "nodes", None) else 1.0)
            edge = anchors.threads[closed].max() * per_node if closed.any() else 0.0
            if closed.any() and len(beyond) and beyond.max() > edge:
                for ax in (top, bottom):
                    ax.axvline(edge, ls=":", color="grey", lw=0.8, gid=FITTED_EDGE)
        handles, _ = top.get_legend_handles_labels()
        kinds = set(at.fitted[at.mean_ms.notna()])
        if anchors is not None:
            handles += [Line2D([], [], ls="", marker="o", color="grey", mfc=face, ms=4,
                               label=text)
                        for fitted, face, text in (
                            (True, "none", "measured, fitted"),
                            (False, "grey", "measured, not fitted"))
                        if fitted in kinds]
            if any(line.get_gid() == FITTED_EDGE for line in top.get_lines()):
                handles.append(Line2D([], [], ls=":", color="grey", lw=0.8,
                                      label="largest fitted load"))
        top.legend(handles=handles, title="consistency", fontsize=8, title_fontsize=8)
    heading = "; ".join(part for part in (title, _described(fit, title)) if part)
    if heading:
        fig.suptitle(_wrapped(heading, int(11 * 5.0 * len(panels))), fontsize=9)
    fig.tight_layout()
    atomic_save(path, fig.savefig, dpi=120)
