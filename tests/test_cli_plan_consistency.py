"""Tests for forkjoin_cli.plan_consistency: ``forkjoin-sim plan-consistency``."""

import numpy as np
import pytest
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


@pytest.fixture(scope="module")
def reads_model(tmp_path_factory):
    """Karpenko's cluster C calibrated on its reads (the default lanes: a plan is
    evaluated, not simulated)."""
    import warnings
    from pathlib import Path

    import pandas as pd

    from sizing.cluster_calibration import calibrate_cluster

    table = pd.read_csv(Path(__file__).resolve().parent.parent
                        / "docs/data/karpenko2021/cluster_c.csv")
    model = tmp_path_factory.mktemp("model") / "c.toml"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its notes on the prior concern no test here
        calibrate_cluster(table[table.operation == "read"], 3, 3).save(str(model))
    return str(model)


#: --threads of the --json plans compared: one count, and two
THREADS = ("100", "100,500")


@pytest.fixture(scope="module")
def json_plans(reads_model, tmp_path_factory):
    """threads -> (the --json plan, the rows of its --out CSV as pandas reads them,
    that CSV's path), at each of `THREADS`, on an all-read mix."""
    import contextlib
    import io
    import json
    import warnings

    import pandas as pd

    from forkjoin_cli.main import main

    plans = {}
    for threads in THREADS:
        out = tmp_path_factory.mktemp("plan") / "plan.csv"
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed), \
                contextlib.redirect_stderr(io.StringIO()), warnings.catch_warnings():
            assert main(["plan-consistency", "--model", reads_model, "--read-fraction",
                         "1", "--threads", threads, "--json", "--out", str(out)]) == 0
        plans[threads] = json.loads(printed.getvalue()), pd.read_csv(out), out
    return plans


def test_an_unmeasured_value_is_an_empty_cell(json_plans):
    """All reads: the write columns have no value, written as empty cells as predict
    writes them (they were 'nan'; a probe)."""
    import csv

    rows = list(csv.DictReader(json_plans["100"][2].open()))
    assert rows and all(row["write_ms"] == "" for row in rows)
    assert all(float(row["read_ms"]) > 0 for row in rows)


def test_the_json_has_one_shape_whatever_the_number_of_thread_counts(json_plans):
    """--threads 100 and --threads 100,500 give the same keys of the same types:
    threads and best are lists in the order given (one thread count gave scalars),
    best one {threads, pair} record per count, as pairs are records of the CSV's
    columns; the single count's plan is the first count's part of the two."""
    one, two = (json_plans[threads][0] for threads in THREADS)
    assert list(one) == list(two)
    assert {key: type(value) for key, value in one.items()} == {
        key: type(value) for key, value in two.items()}
    assert one["threads"] == [100] and two["threads"] == [100, 500]
    for plan in (one, two):
        fastest = [{"threads": p["threads"], "pair": p["pair"]} for p in plan["pairs"]
                   if p["best"]]
        assert plan["best"] == fastest
        assert [b["threads"] for b in plan["best"]] == plan["threads"]
    assert two["best"][:1] == one["best"]
    assert two["pairs"][:len(one["pairs"])] == one["pairs"]


@pytest.mark.parametrize("threads", THREADS)
def test_the_csv_holds_the_json_pairs_under_the_same_columns(json_plans, threads):
    """--out beside --json writes the JSON's pairs as rows, threads first, with the
    same columns and types for one thread count as for several; a value not measured
    (the writes of an all-read mix) is null in the JSON, an empty cell (NaN) in the
    CSV."""
    import math

    plan, table, _ = json_plans[threads]
    assert list(table.columns) == list(plan["pairs"][0])
    assert list(table.columns)[:2] == ["threads", "pair"]
    assert table["threads"].dtype.kind == "i" and table["best"].dtype == bool
    assert len(table) == len(plan["pairs"]) == 3 * len(plan["threads"])
    assert table["write_ms"].isna().all()
    for row, pair in zip(table.to_dict("records"), plan["pairs"]):
        for key, value in pair.items():
            if value is None:
                assert math.isnan(row[key]), key
            elif isinstance(value, float):
                assert row[key] == pytest.approx(value, rel=1e-12), key
            else:
                assert row[key] == value, key
