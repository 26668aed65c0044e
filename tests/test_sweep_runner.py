"""Running sweep points: every per-point failure is a row, each model is built once."""

import pytest

from forkjoin_sim.sweep import points as sweep_points
from forkjoin_sim.sweep import runner as sweeps


def _points(**spec):
    points, _ = sweeps.expand({"nodes": 6, "replicas": 3, "quorum": [1, 2], "jobs": 2000,
                               "seed": 3, **spec})
    return points


def _assert_ran_alone(row, point):
    assert row["status"] == "ok" and row["message"] == ""
    assert row["run_seed"] == sweeps.run_seed(point)
    assert row["replay"] == sweeps.replay_command(point)
    assert row["mean"] == sweeps.run_point(point, annotate=False)["mean"]


@pytest.mark.parametrize("backend, workers", [("serial", None), ("processes", 2)])
def test_a_point_whose_seed_cannot_be_drawn_is_an_error_row_and_the_others_run(
        backend, workers):
    """run_seed raised outside the point's guard: the whole sweep stopped."""
    good = _points(rho=0.9)
    bad = {**good[0], "seed": -1}
    rows = list(sweeps.run_points([good[0], bad, good[1]], backend=backend,
                                  workers=workers, annotate=False))
    assert len(rows) == 3
    failed = [row for row in rows if row["seed"] == -1]
    assert len(failed) == 1
    assert failed[0]["status"] == "error"
    assert "seed must be a whole number >= 0, got -1" in failed[0]["message"]
    assert failed[0]["run_seed"] is None and failed[0]["replay"] is None
    for point in good:
        row, = (r for r in rows if r["seed"] == 3 and r["quorum"] == point["quorum"])
        _assert_ran_alone(row, point)


def test_a_point_whose_replay_command_fails_is_an_error_row_and_the_others_run(
        monkeypatch):
    good = _points(rho=0.9)
    real = sweeps.replay_command

    def failing(point, *args, **kwargs):
        if point["quorum"] == 2:
            raise RuntimeError("no shell quoting for this point")
        return real(point, *args, **kwargs)

    monkeypatch.setattr(sweeps, "replay_command", failing)
    monkeypatch.setattr(sweep_points, "replay_command", failing)
    rows = list(sweeps.run_points(good, backend="serial", annotate=False))
    monkeypatch.undo()
    assert [row["status"] for row in rows] == ["ok", "error"]
    assert rows[1]["message"].startswith("RuntimeError: no shell quoting for this point")
    # the seed was drawn before the replay command failed: the row keeps it
    assert rows[1]["run_seed"] == sweeps.run_seed(good[1])
    assert rows[1]["replay"] is None
    _assert_ran_alone(rows[0], good[0])


def test_a_point_whose_model_cannot_be_built_keeps_its_seed_and_replay_command():
    """The replay command of such a point reproduces its failure alone."""
    point = {**_points(rho=0.9)[0], "service": "empirical:/nonexistent/latencies.txt"}
    row = sweeps.run_point(point, annotate=False)
    assert row["status"] == "error" and "/nonexistent/latencies.txt" in row["message"]
    assert row["run_seed"] == sweeps.run_seed(point)
    assert row["replay"] == sweeps.replay_command(point)
    assert "--service empirical:/nonexistent/latencies.txt" in row["replay"]


@pytest.mark.parametrize("load", [{"rho": 0.9}, {"arrival_rate": 0.9}])
def test_a_point_builds_its_model_once(monkeypatch, load):
    """An arrival rate's replay command needs the model (the load that makes the
    rate): it was built a second time for it."""
    point = _points(**load)[0]
    expected = sweeps.replay_command(point)
    assert "--rho 0.9" in expected  # the command was found, not given up ("")
    built = _count_builds(monkeypatch)
    row = sweeps.run_point(point, annotate=False)
    assert len(built) == 1
    assert row["status"] == "ok" and row["replay"] == expected
    assert row["run_seed"] == sweeps.run_seed(point)


@pytest.mark.parametrize("load, replays", [({"rho": 0.9}, True),
                                           ({"arrival_rate": 0.9}, False)])
def test_a_point_whose_model_fails_tries_to_build_it_once(monkeypatch, load, replays):
    """A failed model was built again for an arrival rate's replay command (which
    needs it, and then gave up: ""). A load's command needs no model: it is kept."""
    point = {**_points(**load)[0], "service": "empirical:/nonexistent/latencies.txt"}
    built = _count_builds(monkeypatch)
    row = sweeps.run_point(point, annotate=False)
    assert len(built) == 1
    assert row["status"] == "error" and "/nonexistent/latencies.txt" in row["message"]
    assert row["run_seed"] == sweeps.run_seed(point)
    if replays:
        assert "--rho 0.9" in row["replay"]
        assert "--service empirical:/nonexistent/latencies.txt" in row["replay"]
    else:
        assert row["replay"] == ""


def _count_builds(monkeypatch) -> list:
    """The points whose model is built from now on (both modules' references)."""
    real = sweep_points.build_model
    built = []

    def counting(params):
        built.append(params)
        return real(params)

    monkeypatch.setattr(sweep_points, "build_model", counting)
    monkeypatch.setattr(sweeps, "build_model", counting)
    return built
