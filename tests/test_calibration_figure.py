"""The calibration figure: a whole PNG written atomically, whose curves are the model's
own predictions and bands."""

import numpy as np
import pandas as pd
import pytest

from sizing.calibration_figure import POINTS, curves, draw
from forkjoin_sim.errors import ConfigError
from sizing.closed_network import predict
from sizing.network_fit import demands_of, fit

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
    assert np.all(grid.throughput_low <= grid.throughput)
    assert np.all(grid.throughput <= grid.throughput_high)
    width = (grid.high_ms - grid.low_ms) / grid.mean_ms
    assert np.all(width > 0)


def test_missing_columns_say_which_to_give(fitted, tmp_path):
    model, table = fitted
    with pytest.raises(ConfigError, match="quorum"):
        draw(str(tmp_path / "fit.png"), model, table.drop(columns="quorum"))
    assert list(tmp_path.iterdir()) == []


def test_a_calibrated_models_own_curve_is_drawn_beside_its_anchored_one():
    # anchored on rows 10% slower than its own demands give, the model's curve passes
    # through the rows, and the dashed curve is the model before the anchors
    from sizing.network_fit import Prior
    from sizing.network_model import calibrated

    table, _ = _measured()
    table = table[np.isfinite(table.mean_ms.to_numpy())].reset_index(drop=True)
    table["mean_ms"] *= np.where(table.threads > 20, 1.1, 1.0)
    model = calibrated(table, "shared-digest", Prior.vague(), 4, 4)
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
