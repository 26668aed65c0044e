"""Tests for forkjoin_cli.plan_consistency: ``forkjoin-sim plan-consistency``."""

import numpy as np
from scipy import stats

from forkjoin_cli.main import build_parser
from forkjoin_cli.plan_consistency import staleness_plan

STALENESS = ["plan-consistency", "--nodes", "6", "--replicas", "3", "--rate", "1",
             "--read-fraction", "0.5", "--percentile", "99", "--objective",
             "percentile", "--jobs", "2000", "--seed", "2", "--staleness",
             "behind=0:0.5"]


def test_the_staleness_plan_shows_a_progress_bar_over_the_pairs(capsys, monkeypatch):
    import forkjoin_sim.run
    from sizing.staleness_planning import plan_from_args

    monkeypatch.setattr(forkjoin_sim.run, "PROGRESS_DELAY", 0.0)  # the bar draws at once
    monkeypatch.setenv(forkjoin_sim.run.PROGRESS_ENV, "1")  # captured stderr: no terminal
    args = build_parser("plan-consistency").parse_args(STALENESS)
    plan = staleness_plan(args, stats.expon(), None)
    err = capsys.readouterr().err
    assert "plan-consistency" in err and "/9" in err and "pair" in err
    alone = plan_from_args(args, stats.expon(), None)  # the same plan, without a bar
    assert plan.best == alone.best
    np.testing.assert_array_equal(plan.options.mix_percentile, alone.options.mix_percentile)


def test_the_bar_counts_each_pair_once(monkeypatch):
    import contextlib

    import forkjoin_cli._progress

    steps = []

    class Bar:
        def update(self, n=1):
            steps.append(n)

    def bar(total, desc):
        steps.append(("total", total))
        return contextlib.nullcontext(Bar())

    monkeypatch.setattr(forkjoin_cli._progress, "progress_bar", bar)
    staleness_plan(build_parser("plan-consistency").parse_args(STALENESS),
                   stats.expon(), None)
    assert steps[0] == ("total", 9)
    assert [n for n in steps[1:] if n] == [1] * 9  # the 0 before the run moves nothing


def test_one_replica_has_one_pair_and_no_bar(capsys, monkeypatch):
    import forkjoin_sim.run

    monkeypatch.setattr(forkjoin_sim.run, "PROGRESS_DELAY", 0.0)
    argv = list(STALENESS)
    argv[argv.index("--replicas") + 1] = "1"
    plan = staleness_plan(build_parser("plan-consistency").parse_args(argv),
                          stats.expon(), None)
    # R + W = 2 > 1 replica: the one pair is strict, so it meets any constraint
    assert plan.best == (1, 1) and len(plan.options) == 1
    assert "pair" not in capsys.readouterr().err  # nothing to count


def test_the_report_names_the_users_cluster_before_the_one_key_model():
    """The plan's header says the cluster asked about (6 nodes, rate 1 in all) and
    then the one-key model standing for it (3 replicas at 1 x 3 / 6 = 0.5 each)."""
    plan = staleness_plan(build_parser("plan-consistency").parse_args(STALENESS),
                          stats.expon(), None)
    header = plan.report().splitlines()[0]
    assert header.startswith("6 nodes, 3 replicas, 1 ops per unit time in all; "
                             "modelled as one key's replicas: 3 replicas, 0.5 ops per "
                             "unit time")


def test_an_unmeasured_value_is_an_empty_cell(tmp_path, capsys):
    """All reads: the write columns have no value, written as empty cells as predict
    writes them (they were 'nan'; a probe)."""
    import csv
    import warnings
    from pathlib import Path

    import pandas as pd

    from forkjoin_cli.main import main
    from sizing.cluster_calibration import calibrate_cluster

    table = pd.read_csv(Path(__file__).resolve().parent.parent
                        / "docs/data/karpenko2021/cluster_c.csv")
    model = tmp_path / "c.toml"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        calibrate_cluster(table[table.operation == "read"], 3, 3).save(str(model))
    out = tmp_path / "plan.csv"
    assert main(["plan-consistency", "--model", str(model), "--read-fraction", "1",
                 "--threads", "500", "--out", str(out)]) == 0
    capsys.readouterr()
    rows = list(csv.DictReader(out.open()))
    assert rows and all(row["write_ms"] == "" for row in rows)
    assert all(float(row["read_ms"]) > 0 for row in rows)
