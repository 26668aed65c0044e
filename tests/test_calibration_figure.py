"""The calibration figure: a whole PNG written atomically, whose curves are the model's
own predictions and bands."""

import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import PolyCollection
from matplotlib.container import ErrorbarContainer

import sizing.calibration_figure
from sizing.calibration_figure import BAND_EDGE, POINTS, curves, draw
from forkjoin_sim.errors import ConfigError
from forkjoin_sim.files.io import atomic_save
from sizing.closed_network import predict
from sizing.network_fit import demands_of, fit

# calibrate_cluster warns its doubts (tested where they matter); here they are noise
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

THREADS = np.array([1, 8, 30, 90])
LEVELS = {"ONE": 1, "ALL": 3}
DEMANDS = demands_of(np.log([0.3, 0.5, 0.1, 0.4, 0.5, 0.5, 1.0, 0.2, 1.0, 1000.0, 1.0, 32.0,
                             1.0]))


def _measured():
    """Reads at ONE and ALL and writes at ONE from known demands, one read without a
    mean (a query row) and one write without a throughput."""
    parts = []
    for operation, levels in (("read", ("ONE", "ALL")), ("write", ("ONE",))):
        for level in levels:
            parts.append(pd.DataFrame({"operation": operation, "consistency": level,
                                       "quorum": LEVELS[level], "threads": THREADS,
                                       "nodes": 3, "replicas": 3}))
    table = pd.concat(parts, ignore_index=True)
    rows = dict(threads=table.threads.to_numpy(float), think_ms=np.zeros(len(table)),
                nodes=table.nodes.to_numpy(), replicas=table.replicas.to_numpy(),
                quorum=table.quorum.to_numpy(), write=(table.operation == "write").to_numpy())
    latency, per_ms = predict(DEMANDS, rows, "shared-digest")
    table["mean_ms"], table["throughput"] = latency, per_ms * 1000.0
    table.loc[1, "mean_ms"] = np.nan
    table.loc[len(table) - 1, "throughput"] = np.nan
    return table, rows


@pytest.fixture(scope="module")
def fitted():
    table, rows = _measured()
    known = np.isfinite(table.mean_ms.to_numpy())
    own = {name: values[known] for name, values in rows.items()}
    return fit(own, table.mean_ms[known], "shared-digest", max_evaluations=40), table


@pytest.fixture(scope="module")
def grid(fitted):
    model, table = fitted
    return curves(model, table)


def test_draw_writes_a_whole_png_and_no_temporary_file(fitted, tmp_path):
    model, table = fitted
    path = tmp_path / "fit.png"
    # a coarse grid keeps the test fast: the band samples the posterior at every point
    draw(str(path), model, table, title="three nodes, three replicas", points=15)
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert data[-8:-4] == b"IEND"  # the PNG's last chunk: the file is complete
    assert len(data) > 20_000  # two panels of curves, bands and markers, not a blank image
    assert [p.name for p in tmp_path.iterdir()] == ["fit.png"]


def test_curves_pass_through_the_model_at_every_measured_row(fitted, grid):
    model, table = fitted
    # one curve per (operation, level), each on at least the default grid
    assert set(grid.groupby(["operation", "consistency"]).size().index) == {
        ("read", "ONE"), ("read", "ALL"), ("write", "ONE")}
    assert grid.groupby(["operation", "consistency"]).size().min() >= POINTS
    for _, row in table.iterrows():
        on_curve = grid[(grid.operation == row.operation)
                        & (grid.consistency == row.consistency)
                        & (grid.threads == row.threads)]
        assert len(on_curve) == 1
        alone = dict(threads=np.array([row.threads], float), think_ms=np.zeros(1),
                     nodes=np.array([3]), replicas=np.array([3]),
                     quorum=np.array([row.quorum]),
                     write=np.array([row.operation == "write"]))
        latency, throughput = model.predict(alone)
        assert on_curve.mean_ms.iloc[0] == pytest.approx(latency[0], rel=1e-9)
        assert on_curve.throughput.iloc[0] == pytest.approx(throughput[0], rel=1e-9)
    assert grid.threads.min() == THREADS.min() and grid.threads.max() == THREADS.max()


def test_bands_hold_the_curve(grid):
    assert np.all(grid.low_ms <= grid.mean_ms) and np.all(grid.mean_ms <= grid.high_ms)
    # (a band's end at the curve, where no draw reaches past it, maps back within
    # rounding)
    assert np.all(grid.throughput_low <= grid.throughput * (1 + 1e-12))
    assert np.all(grid.throughput <= grid.throughput_high * (1 + 1e-12))
    width = (grid.high_ms - grid.low_ms) / grid.mean_ms
    assert np.all(width > 0)


def test_missing_columns_say_which_to_give(fitted, tmp_path):
    model, table = fitted
    with pytest.raises(ConfigError, match="quorum"):
        draw(str(tmp_path / "fit.png"), model, table.drop(columns="quorum"))
    assert list(tmp_path.iterdir()) == []


@pytest.fixture(scope="module")
def anchored():
    """A calibrated model anchored on rows 10% slower above 20 threads than its own
    demands give, and those rows."""
    from sizing.network_fit import Prior
    from sizing.network_model import calibrated

    table, _ = _measured()
    table = table[np.isfinite(table.mean_ms.to_numpy())].reset_index(drop=True)
    table["mean_ms"] *= np.where(table.threads > 20, 1.1, 1.0)
    return calibrated(table, "shared-digest", Prior.vague(), 4, 4), table


def test_a_calibrated_models_own_curve_is_drawn_beside_its_anchored_one(anchored):
    # anchored on rows 10% slower than its own demands give, the model's curve passes
    # through the rows, and the dashed curve is the model before the anchors
    model, table = anchored
    grid = curves(model, table, points=5)
    keys = table[["operation", "consistency", "threads", "mean_ms"]].astype(
        {"threads": float})
    at_rows = grid.merge(keys,
                         on=["operation", "consistency", "threads"], suffixes=("", "_row"))
    assert len(at_rows) == len(table)
    np.testing.assert_allclose(at_rows.mean_ms, at_rows.mean_ms_row, rtol=1e-6)
    rows = dict(threads=at_rows.threads.to_numpy(float), think_ms=np.zeros(len(at_rows)),
                nodes=at_rows.nodes.to_numpy(), replicas=at_rows.replicas.to_numpy(),
                quorum=at_rows.quorum.to_numpy(),
                write=(at_rows.operation == "write").to_numpy())
    np.testing.assert_allclose(at_rows.plain_ms, model.predict(rows, anchored=False)[0],
                               rtol=1e-9)
    # the 10% step the model's smooth curve cannot follow shows between the two
    assert np.max(np.abs(np.log(at_rows.plain_ms / at_rows.mean_ms))) > 0.02


def test_a_fit_without_anchors_has_no_second_curve(grid):
    assert grid.plain_ms.isna().all()


def _figure(monkeypatch, path, model, table):
    """The figure `draw` writes to ``path``, kept as it is saved (after checking the
    PNG was written)."""
    saved = []

    def keeping(target, save, *args, **kwargs):
        saved.append(save.__self__)
        atomic_save(target, save, *args, **kwargs)

    monkeypatch.setattr(sizing.calibration_figure, "atomic_save", keeping)
    draw(str(path), model, table, points=10)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    (figure,) = saved
    return figure


def _panels(figure):
    """{(operation, 'latency' or 'throughput'): axes} of a figure of reads and writes."""
    top_read, top_write, bottom_read, bottom_write = figure.axes[:4]
    return {("read", "latency"): top_read, ("write", "latency"): top_write,
            ("read", "throughput"): bottom_read, ("write", "throughput"): bottom_write}


def _bars(ax):
    """(x, y, low, high) of every visible marker with an error bar on ``ax``."""
    found = []
    for container in ax.containers:
        if not isinstance(container, ErrorbarContainer):
            continue
        line, _, (bars,) = container.lines
        assert line.get_visible() and line.get_marker() not in (None, "", " ", "None")
        assert line.get_markersize() > 0
        for (x, y), ((_, low), (_, high)) in zip(line.get_xydata(), bars.get_segments()):
            found.append((x, y, low, high))
    return sorted(found, key=lambda bar: bar[1])


def _rows(table):
    return dict(threads=table.threads.to_numpy(float), think_ms=np.zeros(len(table)),
                nodes=table.nodes.to_numpy(), replicas=table.replicas.to_numpy(),
                quorum=table.quorum.to_numpy(),
                write=(table.operation == "write").to_numpy())


def _one_load(threads):
    """A query of one load per level: reads at ONE and ALL, writes at ONE."""
    return pd.DataFrame({"operation": ["read", "read", "write"],
                         "consistency": ["ONE", "ALL", "ONE"], "quorum": [1, 3, 1],
                         "threads": threads, "nodes": 3, "replicas": 3,
                         "mean_ms": np.nan, "throughput": np.nan})


def test_a_level_at_one_load_is_a_marker_with_its_band_as_an_error_bar(
        fitted, monkeypatch, tmp_path):
    # a line through one point and a band over one load draw nothing: every panel
    # would be empty but for its legend
    model, _ = fitted
    query = _one_load(30)
    figure = _figure(monkeypatch, tmp_path / "one.png", model, query)
    latency, throughput = model.predict(_rows(query))
    low, high = model.interval(_rows(query))
    grid = curves(model, query)
    for (operation, panel), ax in _panels(figure).items():
        mine = (query.operation == operation).to_numpy()
        if panel == "latency":
            expected = np.column_stack([latency, low, high])[mine]
        else:
            expected = grid.loc[mine, ["throughput", "throughput_low",
                                       "throughput_high"]].to_numpy(float)
        bars = _bars(ax)
        assert len(bars) == mine.sum(), (operation, panel)
        for (x, y, bar_low, bar_high), (value, band_low, band_high) in zip(
                bars, sorted(expected.tolist())):
            assert x == 30
            assert y == pytest.approx(value, rel=1e-9)
            assert (bar_low, bar_high) == pytest.approx((band_low, band_high), rel=1e-9)
            # a band of some width, seen on the panel (one end may be the value
            # itself: each end reaches as far as the draws do on its side)
            assert bar_low <= y <= bar_high and bar_low < bar_high
            # the marker inside its panel (a band past twice the curves may run off)
            assert ax.get_ylim()[0] < y < ax.get_ylim()[1]
    legend = _panels(figure)[("read", "latency")].get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["ONE", "ALL"]


def test_curves_of_several_loads_keep_their_line_and_band_beside_a_lone_one(
        fitted, monkeypatch, tmp_path):
    model, table = fitted
    reads = table[table.operation == "read"]
    mixed = pd.concat([reads[reads.consistency == "ONE"],
                       reads[(reads.consistency == "ALL") & (reads.threads == 30)]],
                      ignore_index=True)
    figure = _figure(monkeypatch, tmp_path / "mixed.png", model, mixed)
    top, bottom = figure.axes[:2]  # reads only: one column
    for ax in (top, bottom):
        # ONE's line over the grid and its band; ALL, at 30 threads only, a marker
        lines = [line for line in ax.get_lines()
                 if line.get_linestyle() == "-" and len(line.get_xdata()) > 1
                 and line.get_gid() != BAND_EDGE]
        assert len(lines) == 1 and len(lines[0].get_xdata()) >= 10
        assert [c for c in ax.collections if isinstance(c, PolyCollection)]
        (bar,) = _bars(ax)
        assert bar[0] == 30
    assert [t.get_text() for t in top.get_legend().get_texts()] == ["ONE", "ALL"]
    alone = mixed.iloc[[-1]]
    assert _bars(top)[0][1] == pytest.approx(model.predict(_rows(alone))[0][0], rel=1e-9)


def test_a_calibrated_models_own_value_at_a_lone_load_is_a_cross(
        anchored, monkeypatch, tmp_path):
    model, _ = anchored
    # 40 threads was not fitted: the anchors move the model there
    query = _one_load(40)
    figure = _figure(monkeypatch, tmp_path / "anchored.png", model, query)
    plain = model.predict(_rows(query), anchored=False)[0]
    for operation, ax in (("read", figure.axes[0]), ("write", figure.axes[1])):
        crosses = sorted(line.get_ydata()[0] for line in ax.get_lines()
                         if line.get_marker() == "x" and line.get_xdata()[0] == 40)
        np.testing.assert_allclose(
            crosses, np.sort(plain[(query.operation == operation).to_numpy()]),
            rtol=1e-9)
        assert len(_bars(ax)) == len(crosses)


def test_only_the_latency_moves_the_throughput_band():
    """A closed loop's cycle is its think time, its clients' time outside the measured
    latency and the latency: along the band only the latency moves (the band scaled
    the whole cycle, so a JMeter loop with 108 ms outside its latency was drawn
    carrying up to 414 ops/s from 50 threads)."""
    from sizing.cluster_calibration import calibrate_cluster

    path = "docs/data/measurements/saulolks2022_rows1000_think100_run1.csv"
    fitted = calibrate_cluster(path, nodes=3, replicas=3)
    grid = curves(fitted.model, fitted.table, points=5)
    threads = grid.threads.to_numpy(float)
    cycle = threads * 1000.0 / grid.throughput.to_numpy(float)
    # the clients' time outside the latency is a large share of these cycles
    assert np.median((cycle - grid.mean_ms) / cycle) > 0.25
    for bound, latency in (("throughput_low", "high_ms"), ("throughput_high", "low_ms")):
        longer = threads * 1000.0 / grid[bound].to_numpy(float) - cycle
        np.testing.assert_allclose(longer, grid[latency] - grid.mean_ms, rtol=1e-9,
                                   atol=1e-9)


def test_fitted_and_held_out_rows_are_told_apart(anchored, monkeypatch, tmp_path):
    """Drawn with rows the model was not fitted to, the fitted rows are hollow, the
    others filled, and a dotted line marks the largest fitted load."""
    model, table = anchored
    small = table[table.threads <= 30].reset_index(drop=True)
    from sizing.network_fit import Prior
    from sizing.network_model import calibrated

    part = calibrated(small, "shared-digest", Prior.vague(), 4, 4)
    figure = _figure(monkeypatch, tmp_path / "pred.png", part, table)
    top = _panels(figure)[("read", "latency")]
    markers = [line for line in top.get_lines() if line.get_marker() == "o"]
    hollow = sum(len(line.get_xdata()) for line in markers if line.get_mfc() == "none")
    filled = sum(len(line.get_xdata()) for line in markers if line.get_mfc() != "none")
    reads = table[(table.operation == "read") & table.mean_ms.notna()]
    assert hollow == (reads.threads <= 30).sum() and filled == (reads.threads > 30).sum()
    (edge,) = [line for line in top.get_lines() if line.get_linestyle() == ":"]
    assert edge.get_xdata()[0] == 30


def test_each_stated_pause_has_a_line_style_of_its_own(tmp_path, monkeypatch):
    """Rows at two stated pauses: a level keeps its colour, each pause its line style,
    so the legend's entries differ (a probe saw three identical 'ONE' lines), and no
    pause's style is taken for the largest fitted load's dotted line."""
    from sizing.cluster_calibration import calibrate_cluster

    path = tmp_path / "paused.csv"
    path.write_text("operation,consistency,threads,mean_ms,think_ms\n" + "".join(
        f"read,{level},{users},{mean},{pause}\n" for level, users, mean, pause in (
            ("ONE", 10, 20.0, 1000), ("ONE", 40, 30.0, 1000), ("ALL", 10, 40.0, 1000),
            ("ALL", 40, 60.0, 1000), ("ONE", 10, 25.0, 100), ("ONE", 40, 60.0, 100),
            ("ALL", 10, 45.0, 100), ("ALL", 40, 90.0, 100))))
    fitted = calibrate_cluster(str(path), nodes=3, replicas=3)
    table = fitted.table.assign(think_ms=fitted.table.think_ms.astype(float))
    figure = _figure(monkeypatch, tmp_path / "fit.png", fitted.model, table)
    top = figure.axes[0]
    curves = {line.get_label(): line for line in top.get_lines()
              if not line.get_label().startswith("_")}
    assert set(curves) == {"ONE, 100 ms pause", "ALL, 100 ms pause",
                           "ONE, 1000 ms pause", "ALL, 1000 ms pause"}
    for level in ("ONE", "ALL"):
        short, long = curves[f"{level}, 100 ms pause"], curves[f"{level}, 1000 ms pause"]
        assert short.get_color() == long.get_color()
        assert short.get_linestyle() != long.get_linestyle()
    legend = [text.get_text() for text in top.get_legend().get_texts()]
    assert "largest fitted load" not in legend


def test_a_level_keeps_its_colour_in_every_figure():
    from sizing.calibration_figure import _colours

    def colours(levels):
        return {c: colour for (_, c, _, _), colour in _colours(pd.DataFrame(
            {"quorum": [{"ONE": 1, "QUORUM": 2, "ALL": 3}[c] for c in levels],
             "consistency": levels, "nodes": 3, "replicas": 3})).items()}

    assert colours(["ONE", "QUORUM", "ALL"]) == {"ONE": "C0", "QUORUM": "C1", "ALL": "C2"}
    assert colours(["QUORUM", "ALL"]) == {"QUORUM": "C1", "ALL": "C2"}


def test_a_band_past_the_panel_is_marked_and_its_reach_said(fitted, monkeypatch,
                                                            tmp_path):
    """A band reaching far past the curves runs off the panel (which stops at twice
    their height): a triangle on the top edge marks it, and the panel says how far."""
    model, table = fitted

    class Wide:
        def predict(self, rows, anchored=True):
            return model.predict(rows)

        def interval(self, rows, level=0.95, seed=0):
            latency = model.predict(rows)[0]
            drawn.extend(1000 * latency[~np.asarray(rows["write"], bool)])
            return latency / 2, latency * 1000

    drawn = []  # the highest ends of the read bands the figure asked for
    figure = _figure(monkeypatch, tmp_path / "wide.png", Wide(), table)
    top = _panels(figure)[("read", "latency")]
    texts = [t.get_text() for t in top.texts]
    assert any("a band runs past the top" in t for t in texts)
    assert any(line.get_marker() == "^" for line in top.get_lines())
    said = next(t for t in texts if "past the top" in t).split("to ")[1].split()[0]
    reach = float(said.replace(",", ""))
    # the text gives 4 significant digits of the highest end drawn
    assert reach == pytest.approx(max(drawn), rel=1e-3)


def test_the_largest_fitted_load_is_drawn_at_the_asked_clusters_load_per_node(
        monkeypatch, tmp_path):
    """A model of Karpenko C (3 nodes, fitted up to 1,000 threads) asked for 6 nodes:
    the text says extrapolation starts past 2,000 threads (the same load per node);
    the figure drew its dotted line at 1,000 (a probe). The title says the size it was
    fitted on."""
    from pathlib import Path

    import warnings
    from sizing.cluster_calibration import calibrate_cluster, predict_table

    table = pd.read_csv(Path(__file__).resolve().parent.parent
                        / "docs/data/karpenko2021/cluster_c.csv")
    saved = []

    def keeping(target, save, *args, **kwargs):
        saved.append(save.__self__)
        atomic_save(target, save, *args, **kwargs)

    monkeypatch.setattr(sizing.calibration_figure, "atomic_save", keeping)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = calibrate_cluster(table[table.operation == "read"], nodes=3, replicas=3)
        query = pd.DataFrame(dict(operation="read", consistency="QUORUM",
                                  threads=[400, 1600, 3000]))
        predict_table(fitted, query, nodes=6, figure=str(tmp_path / "six.png"))
    (figure,) = saved
    top = figure.axes[0]
    (edge,) = [line for line in top.get_lines() if line.get_linestyle() == ":"]
    assert edge.get_xdata()[0] == pytest.approx(2000.0)
    assert "for 6 nodes (fitted on 3)" in figure._suptitle.get_text()


def test_a_band_reach_is_written_in_plain_digits():
    """The overflow note wrote 1.051e+04 ms in one panel and 8,674 ms in the next (a
    probe)."""
    from sizing.calibration_figure import _plain_number

    assert [_plain_number(v) for v in (10510.4, 8674.2, 1.23456, 0.000123456)] == \
        ["10,510", "8,674", "1.235", "0.0001235"]


def test_closed_and_open_rows_are_drawn_on_axes_of_their_own(fitted, monkeypatch,
                                                             tmp_path):
    """Client threads and an offered rate (ops/s) shared one x axis, labelled with
    both."""
    model, table = fitted
    closed = table[(table.operation == "read") & (table.consistency == "ONE")]
    carried = model.predict(_rows(closed.iloc[[-1]]))[1][0]
    rates = np.array([0.3, 0.5, 0.7]) * carried  # within what 90 threads carry
    offered = pd.DataFrame({"operation": "read", "consistency": "ONE", "quorum": 1,
                            "threads": np.nan, "rate": rates, "nodes": 3,
                            "replicas": 3, "mean_ms": np.nan, "throughput": np.nan})
    both = pd.concat([closed.assign(rate=np.nan), offered], ignore_index=True)
    figure = _figure(monkeypatch, tmp_path / "both.png", model, both)
    top_closed, top_open, bottom_closed, bottom_open = figure.axes[:4]
    assert bottom_closed.get_xlabel() == "client threads"
    assert bottom_open.get_xlabel() == "offered load (ops/s)"
    assert "closed loop" in top_closed.get_title()
    assert "open loop" in top_open.get_title()
    for ax, loads in ((top_closed, THREADS), (bottom_closed, THREADS),
                      (top_open, rates), (bottom_open, rates)):
        drawn = np.concatenate([line.get_xdata() for line in ax.get_lines()
                                if line.get_linestyle() == "-"
                                and line.get_gid() != BAND_EDGE])
        assert drawn.min() == pytest.approx(loads.min(), rel=1e-12), ax.get_title()
        assert drawn.max() == pytest.approx(loads.max(), rel=1e-12), ax.get_title()
