"""The estimator comparison harness: grids, the all-quorum referee, accuracy tables."""

import numpy as np
import pandas as pd
import pytest

from analytic.estimators import ESTIMATORS
from forkjoin_sim.model import ForkJoinModel
from forkjoin_sim.simulation import simulate
from validation import estimators as harness


def test_paper_grid_has_the_400_points_of_fig2():
    grid = harness.paper_grid()
    assert len(grid) == 400 and len(set(grid)) == 400
    assert all(1 <= k <= r <= n for n, r, k, _ in grid)


def test_referee_tables_cover_the_grid():
    for name in ("long_grid", "paper_size"):
        table = pd.read_csv(f"docs/data/estimators_{name}.csv")
        assert set(zip(table.n, table.r, table.k, table.rho)) == set(harness.paper_grid())
        assert (table.sim_ci_low < table.sim_mean).all()
        assert (table.sim_mean < table.sim_ci_high).all()


def test_quorum_sweep_equals_simulate_for_each_quorum():
    # Same seed, same blocks, same warm-up: the k-th column is the (n,r,k) run.
    blocks = 4
    jobs = blocks * harness.BLOCK_JOBS
    rows = harness.quorum_sweep(4, 3, 0.9, jobs=jobs, seed=5, warmup=0.25)
    for row in rows:
        model = ForkJoinModel(4, 3, row["k"], load=0.9)
        # A fresh SeedSequence each time: spawning children advances it.
        seed = harness._config_seed(5, 4, 3, 0.9)
        result = simulate(model, jobs=jobs, seed=seed, warmup=0.25)
        assert row["sim_mean"] == pytest.approx(result.mean, rel=1e-12)


def test_long_runs_grow_with_load():
    light, heavy = harness.long_jobs(9, 9, 0.2), harness.long_jobs(9, 9, 0.95)
    assert light == pytest.approx(harness.LONG_JOBS_MIN, rel=0.05)
    assert heavy == pytest.approx(harness.LONG_JOBS_MAX, rel=0.05)
    assert light % harness.BLOCK_JOBS == 0 and heavy % harness.BLOCK_JOBS == 0


def test_accuracy_reports_every_estimator():
    referee = pd.DataFrame({"n": [3, 3], "r": [3, 3], "k": [1, 3], "rho": [0.5, 0.5],
                            "sim_mean": [0.8, 3.4], "sim_ci_low": [0.79, 3.3],
                            "sim_ci_high": [0.81, 3.5]})
    compared = harness.with_estimates(referee)
    table = harness.accuracy(compared)
    assert list(table.index) == list(ESTIMATORS)
    expected = np.abs(compared["interpolation"] / compared["sim_mean"] - 1)
    assert table.loc["interpolation", "max_abs_err"] == pytest.approx(expected.max())
    assert table.loc["interpolation", "mean_abs_err"] == pytest.approx(expected.mean())


def test_cli_accuracy_and_estimate(tmp_path, capsys):
    import argparse

    from forkjoin_sim.errors import ConfigError
    from forkjoin_cli import estimators as estimators_cli

    assert estimators_cli.estimate("interpolation", 2, 2, 2, 0.5) == pytest.approx(2.875)
    with pytest.raises(ConfigError, match="unknown"):
        estimators_cli.estimate("nelson", 2, 2, 2, 0.5)

    referee = tmp_path / "referee.csv"
    pd.DataFrame({"n": [2], "r": [2], "k": [2], "rho": [0.5], "sim_mean": [2.875],
                  "sim_ci_low": [2.8], "sim_ci_high": [2.9]}).to_csv(referee, index=False)
    parser = argparse.ArgumentParser()
    estimators_cli.register(parser.add_subparsers())
    args = parser.parse_args(["estimators", "accuracy", "--referee", str(referee),
                              "--markdown"])
    assert args.handler(args) == 0
    out = capsys.readouterr().out
    assert "| interpolation | 1 | 0.0% |" in out
    args = parser.parse_args(["estimators", "accuracy", "--referee",
                              str(tmp_path / "missing.csv")])
    with pytest.raises(ConfigError, match="does not exist"):
        args.handler(args)


def test_long_referee_runs_are_the_same_on_one_worker_and_on_a_pool():
    """Every random result is a function of its configuration and seed, whatever the
    worker count (the pool path once failed outright: it was not run by any test)."""
    from validation.estimators import long_table

    configs = [(3, 2, 0.3), (4, 2, 0.5)]
    one = long_table(configs, seed=5, workers=1, scale=2000, cap=4000)
    pool = long_table(configs, seed=5, workers=2, scale=2000, cap=4000)
    assert len(one) == 4 and list(one.k) == [1, 2, 1, 2]
    pd.testing.assert_frame_equal(one, pool)
