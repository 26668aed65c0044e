"""``forkjoin-sim cassandra``: the predict / simulate / validate contract."""

import importlib.util
import json

import numpy as np
import pytest

import analytic
from forkjoin_cli import main as cli


def run(capsys, *argv):
    status = cli.main(["cassandra", *argv])
    out = capsys.readouterr()
    return status, out.out, out.err


def test_predict_json_maps_every_applicable_level(capsys):
    status, out, _ = run(capsys, "predict", "--nodes", "6", "--replicas", "3",
                         "--policy", "round-robin", "--local-basic", "0.25",
                         "--remote-basic", "1:1.0,2:1.6,3:2.1", "--json")
    assert status == 0
    values = json.loads(out)
    assert list(values) == ["ONE", "TWO", "THREE", "QUORUM", "ALL"]
    remote = {1: 1.0, 2: 1.6, 3: 2.1}
    for name, value in values.items():
        k = analytic.consistency_level_to_k(name, 3)
        assert value == pytest.approx(float(analytic.cassandra_write_latency(
            3, k, 0.5, 0.25, remote)))
    # ALL, round-robin l = 1/2: half RT(3,3,3), half the max of 2 remotes RT(2,2,2).
    assert values["ALL"] == pytest.approx(0.5 * 2.1 + 0.5 * 1.6)


@pytest.mark.parametrize("extra, words", [
    (["--figure", "f.png"], "--figure goes with --model"),
    (["--seed", "0"], "--seed goes with --model"),
    (["--local-basic", "0.3"], "--local-basic and the local rows of --basic-csv"),
    (["--remote-basic", "1:1"], "--remote-basic and the remote rows of --basic-csv")])
def test_theorem4_predict_refuses_options_that_would_do_nothing(tmp_path, capsys, extra,
                                                                words):
    """They were accepted and silently did nothing (no figure written), or overruled
    the CSV's value."""
    basic = tmp_path / "b.csv"
    basic.write_text("kind,size,mean\nlocal,1,0.25\nremote,1,1.0\nremote,2,1.6\n"
                     "remote,3,2.1\n")
    argv = ["predict", "--nodes", "6", "--replicas", "3", "--policy", "round-robin",
            "--basic-csv", str(basic)]
    status, _, err = run(capsys, *argv, *extra)
    assert status == 2 and len(err.strip().splitlines()) == 1 and words in err
    # the CSV's remote rows with a local latency it lacks: still taken
    basic.write_text("kind,size,mean\nremote,1,1.0\nremote,2,1.6\nremote,3,2.1\n")
    status, out, _ = run(capsys, *argv, "--local-basic", "0.25", "--json")
    assert status == 0 and json.loads(out)["ALL"] == pytest.approx(0.5 * 2.1 + 0.5 * 1.6)


@pytest.mark.parametrize("where", [["--local-fraction", "0"], ["--policy", "remote"]])
def test_a_local_basic_latency_no_write_uses_is_refused(tmp_path, capsys, where):
    """At local fraction 0 --local-basic does nothing, yet it changed which levels the
    rounding warning named (its own rounding counted): a fuzz."""
    argv = ["predict", "--nodes", "6", "--replicas", "3", *where]
    status, _, err = run(capsys, *argv, "--remote-basic", "1:2.0,2:3.0,3:3.5",
                         "--local-basic", "1")
    assert status == 2 and "--local-basic does nothing with local fraction 0" in err
    assert len(err.strip().splitlines()) == 1
    # a 'local' row of --basic-csv plays no part either: the output and warnings of
    # the same rows without it
    remote = "kind,size,mean\nremote,1,2.0\nremote,2,3.0\nremote,3,3.5\n"
    (tmp_path / "a.csv").write_text(remote)
    (tmp_path / "b.csv").write_text(remote + "local,1,1\n")
    alone = run(capsys, *argv, "--basic-csv", str(tmp_path / "a.csv"))
    beside = run(capsys, *argv, "--basic-csv", str(tmp_path / "b.csv"))
    assert alone == beside and alone[0] == 0 and "ONE 0.5 +- 0.35" in alone[2]


def test_predict_two_replicas_has_no_three(capsys):
    status, out, _ = run(capsys, "predict", "--nodes", "4", "--replicas", "2",
                         "--local-fraction", "0", "--remote-basic", "1:1,2:1.5", "--json")
    assert status == 0 and set(json.loads(out)) == {"ONE", "TWO", "QUORUM", "ALL"}


@pytest.mark.parametrize("argv", [
    ["predict", "--nodes", "6", "--replicas", "3", "--policy", "round-robin",
     "--remote-basic", "1:1.0,2:1.6", "--local-basic", "0.2", "--json"],
    ["predict", "--nodes", "6", "--replicas", "3", "--policy", "sideways",
     "--remote-basic", "1:1,2:2,3:3"],
    ["predict", "--nodes", "6", "--replicas", "3", "--local-fraction", "0.5",
     "--remote-basic", "1:x"],
    ["simulate", "--nodes", "6", "--replicas", "3", "--consistency", "FOUR",
     "--policy", "remote", "--rate", "1", "--local-service", "exp:0.2",
     "--remote-service", "exp:1"],
    ["simulate", "--nodes", "3", "--replicas", "3", "--consistency", "ONE",
     "--policy", "remote", "--rate", "1", "--local-service", "exp:0.2",
     "--remote-service", "exp:1"],
    ["simulate", "--nodes", "6", "--replicas", "3", "--consistency", "ONE",
     "--policy", "remote", "--rate", "9", "--local-service", "exp:0.2",
     "--remote-service", "exp:1"],
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv):
    status, out, err = run(capsys, *argv)
    assert status == 2
    assert out == "" and err.count("\n") == 1 and "error" in err


def test_simulate_names_the_rate_by_its_option_when_the_load_is_unstable(capsys):
    status, _, err = run(capsys, "simulate", "--nodes", "6", "--replicas", "3",
                         "--consistency", "ONE", "--policy", "remote", "--rate", "9",
                         "--local-service", "exp:0.2", "--remote-service", "exp:1")
    # 9 writes per unit time put 9/6 * 3 = 4.5 units of work on each node
    assert status == 2 and "= 4.5 >= 1" in err and "use --rate < 2" in err
    assert "arrival_rate" not in err


def test_simulate_json_has_the_simulate_keys(capsys):
    status, out, _ = run(capsys, "simulate", "--nodes", "6", "--replicas", "3",
                         "--consistency", "QUORUM", "--policy", "token-aware",
                         "--rate", "1", "--local-service", "exp:0.2",
                         "--remote-service", "lognormal:0.8", "--jobs", "5000", "--json")
    assert status == 0
    ours = json.loads(out)
    assert cli.main(["simulate", "--nodes", "6", "--replicas", "3", "--quorum", "2",
                     "--rho", "1", "--jobs", "500", "--json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert set(plain) - {"utilisation_mean", "utilisation_max"} <= set(ours)
    assert ours["quorum"] == 2 and ours["level"] == 1
    assert ours["ci_low"] <= ours["mean"] <= ours["ci_high"]


def test_simulate_level2_with_config(capsys, tmp_path):
    config = tmp_path / "stages.toml"
    config.write_text("[mutation]\nthreads = 2\n")
    status, out, _ = run(capsys, "simulate", "--nodes", "4", "--replicas", "2",
                         "--consistency", "ONE", "--policy", "round-robin", "--rate",
                         "1", "--local-service", "exp:0.2", "--remote-service", "exp:1",
                         "--level", "2", "--config", str(config), "--jobs", "800",
                         "--json")
    assert status == 0 and json.loads(out)["engine"] == "steps"


def test_quick_validate_writes_its_files(capsys, tmp_path):
    status, out, _ = run(capsys, "validate", "--out", str(tmp_path), "--quick",
                         "--levels", "1", "--loads", "0.5", "--jobs", "3000", "--json")
    assert status == 0
    paths = json.loads(out)
    import pandas as pd
    table = pd.read_csv(paths["cassandra_validation.csv"])
    # r = 1..5, three policies (no remote at r = n is impossible here: n = 6), 3 levels.
    assert len(table) == 5 * 3 * 3
    assert (tmp_path / "cassandra_level1.png").stat().st_size > 0
    assert "Theorem 4" in (tmp_path / "cassandra_summary.md").read_text()
    basics = pd.read_csv(paths["cassandra_basic_inputs.csv"])
    r3 = basics[basics.replicas == 3]
    r3.to_csv(tmp_path / "r3.csv", index=False)
    status, out, _ = run(capsys, "predict", "--nodes", "6", "--replicas", "3",
                         "--policy", "remote", "--basic-csv", str(tmp_path / "r3.csv"),
                         "--json")
    assert status == 0
    row = table[(table.replicas == 3) & (table.policy == "remote")
                & (table.consistency == "ALL")]
    assert json.loads(out)["ALL"] == pytest.approx(float(row.approx.iloc[0]), rel=1e-5)


def test_predict_warns_when_the_inputs_rounding_swamps_a_level(capsys):
    # r = 5, round-robin: TWO's alternating sums have terms near 10 that nearly cancel,
    # so inputs written to one decimal (+-0.05 each) leave TWO and QUORUM undetermined
    base = ["predict", "--nodes", "6", "--replicas", "5", "--policy", "round-robin",
            "--json"]
    status, out, err = run(capsys, *base, "--local-basic", "1.0",
                           "--remote-basic", "1:1.2,2:1.9,3:2.3,4:2.6,5:2.9")
    assert status == 0 and json.loads(out)["TWO"] < 0.1
    lines = [line for line in err.splitlines() if "rounding" in line]
    assert len(lines) == 1
    assert "TWO" in lines[0] and "QUORUM" in lines[0] and "ALL" not in lines[0]
    # the same values written with five more digits: nothing to warn about
    status, out, err = run(capsys, *base, "--local-basic", "1.000000",
                           "--remote-basic", "1:1.200000,2:1.900000,3:2.300000,"
                           "4:2.600000,5:2.900000")
    assert status == 0 and "rounding" not in err


def test_rounding_bounds_are_the_worst_case_over_every_rounding():
    from fractions import Fraction
    from itertools import product

    from validation.cassandra import rounding_bounds

    local, remote = Fraction(1), {1: Fraction(6, 5), 2: Fraction(19, 10),
                                  3: Fraction(23, 10), 4: Fraction(13, 5)}
    half = Fraction(1, 20)
    fraction = Fraction(3, 4)
    bounds = rounding_bounds(4, fraction, {"LT": 0.05, 1: 0.05, 2: 0.05, 3: 0.05,
                                           4: 0.05})
    for name, bound in bounds.items():
        k = analytic.consistency_level_to_k(name, 4)
        centre = analytic.cassandra_write_latency(4, k, fraction, local, remote)
        worst = max(abs(analytic.cassandra_write_latency(
            4, k, fraction, local + s[0] * half,
            {i: v + s[i] * half for i, v in remote.items()}) - centre)
            for s in product((-1, 1), repeat=5))
        assert bound == pytest.approx(float(worst), rel=1e-12)


@pytest.mark.parametrize("extra, message", [
    (["--level", "2", "--config", "DCLONG"], "[datacentres] nodes lists 7 nodes"),
    (["--sample-every", "1999"], "would be measured"),
    (["--config", "DCLONG"], "--config describes the stages of --level 2"),
])
def test_simulate_refuses_before_any_job_runs(capsys, tmp_path, monkeypatch, extra,
                                              message):
    import forkjoin_sim.cassandra.simulation as simulation

    monkeypatch.setattr(simulation, "run_path", None)  # any work would fail
    config = tmp_path / "dc.toml"
    config.write_text("[datacentres]\nnodes = [0, 0, 0, 1, 1, 1, 1]\nmean = 5.0\n")
    extra = [str(config) if e == "DCLONG" else e for e in extra]
    status, _, err = run(capsys, "simulate", "--nodes", "6", "--replicas", "3",
                         "--consistency", "QUORUM", "--policy", "token-aware",
                         "--local-service", "exp:0.2", "--remote-service", "exp:1",
                         "--rate", "0.5", "--jobs", "2000", *extra)
    assert status == 2 and message in err and err.count("\n") == 1, err


def test_predict_warns_when_a_basic_latency_falls_with_more_replicas(capsys):
    status, out, err = run(capsys, "predict", "--nodes", "6", "--replicas", "3",
                           "--policy", "remote", "--remote-basic", "1:3.000,2:2.000,3:1.000",
                           "--json")
    assert status == 0 and json.loads(out)
    assert "RT(2,2,2) = 2 < RT(1,1,1) = 3" in err
    status, _, err = run(capsys, "predict", "--nodes", "6", "--replicas", "3",
                         "--policy", "remote", "--remote-basic", "1:1.000,2:1.500,3:1.833",
                         "--json")
    assert status == 0 and "cannot be faster" not in err


def test_simulate_steps_with_two_data_centres_matches_a_hand_calculation(capsys,
                                                                        tmp_path):
    # two nodes in two data centres, token-aware writes at ALL: every write is local
    # and waits for the other data centre's replica; constant laws, no load
    config = tmp_path / "dc.toml"
    config.write_text('[datacentres]\nnodes = [0, 1]\n[datacentres.hops]\n'
                      '"0-1" = 10.0\n"1-1" = 3.0\n')
    status, out, _ = run(capsys, "simulate", "--nodes", "2", "--replicas", "2",
                         "--consistency", "ALL", "--policy", "token-aware", "--rate",
                         "0.01", "--local-service", "deterministic", "--local-mean", "2",
                         "--remote-service", "deterministic", "--remote-mean", "4",
                         "--coordinator-work", "netem:0.25:0", "--hop", "netem:1:0",
                         "--cores", "50", "--config", str(config), "--jobs", "1000",
                         "--json")
    assert status == 0
    result = json.loads(out)
    # client hops keep --hop; the replica chain: 2 hops of 10 and the remote write
    expected = 1 + 0.25 + max(2, 2 * 10 + 4) + 0.25 + 1
    assert result["mean"] == pytest.approx(expected, rel=1e-12)
    assert result["p99"] == pytest.approx(expected, rel=1e-12)


def test_theorem4_levels_out_of_order_are_warned(capsys):
    """A local write as slow as a remote one: Theorem 4 put TWO (0.9) under ONE (1.0)
    without a word (a probe); the warning names the pair. Consistent inputs get
    none."""
    status, out, err = run(capsys, "predict", "--nodes", "5", "--replicas", "3",
                           "--policy", "token-aware", "--local-basic", "1",
                           "--remote-basic", "1:1.2,2:1.5,3:1.8", "--json")
    values = json.loads(out)
    assert status == 0 and values["TWO"] < values["ONE"]
    assert f"Theorem 4 gives TWO {values['TWO']:.4g} below ONE {values['ONE']:.4g}" in err
    status, out, err = run(capsys, "predict", "--nodes", "6", "--replicas", "3",
                           "--policy", "round-robin", "--local-basic", "0.25",
                           "--remote-basic", "1:1.0,2:1.6,3:2.1", "--json")
    assert status == 0 and "below" not in err


def test_basic_csv_kinds_take_any_case(tmp_path, capsys):
    """'LOCAL' was refused where level and operation names take any case."""
    basic = tmp_path / "b.csv"
    basic.write_text("kind,size,mean\nLOCAL,1,0.25\nRemote,1,1.0\nremote,2,1.6\n"
                     "REMOTE,3,2.1\n")
    status, out, _ = run(capsys, "predict", "--nodes", "6", "--replicas", "3", "--policy",
                         "round-robin", "--basic-csv", str(basic), "--json")
    assert status == 0 and json.loads(out)["ALL"] == pytest.approx(0.5 * 2.1 + 0.5 * 1.6)


# --- calibrate / predict --model: what the outputs say of the fit and its rows ---

KARPENKO = "docs/data/karpenko2021"
SITANO = "docs/data/sitano_scylla_ycsb/runs.csv"


def _rows_of(path, keep, out):
    """The header and the lines of the CSV ``path`` for which ``keep(cells)`` holds,
    written to ``out``."""
    import csv

    with open(path, newline="") as handle:
        lines = list(csv.reader(handle))
    with open(out, "w", newline="") as handle:
        csv.writer(handle, lineterminator="\n").writerows(
            [lines[0]] + [line for line in lines[1:]
                          if keep(dict(zip(lines[0], line)))])
    return str(out)


def _calibrate_report(capsys, tmp_path, measurements, *extra):
    report = tmp_path / "report.json"
    status, out, _ = run(capsys, "calibrate", "--nodes", "3", "--replicas", "3",
                         "--measurements", measurements, "--out",
                         str(tmp_path / "m.toml"), "--report", str(report), *extra)
    assert status == 0
    return json.loads(report.read_text()), out


def test_a_fit_in_data_centres_does_not_describe_the_level_prior_as_used(tmp_path,
                                                                         capsys):
    """With data centres the fit leaves the level prior out (the round trips set what a
    level costs); the report named it among the prior's parts all the same."""
    light = _rows_of(f"{KARPENKO}/cluster_d.csv",
                     lambda row: row["threads"] in ("100", "500", "1000"),
                     tmp_path / "d.csv")
    report, markdown = _calibrate_report(
        capsys, tmp_path, light, "--datacentres",
        f"{KARPENKO}/cluster_d_client_us-west-2.toml")
    assert "level prior" not in report["prior"]
    assert report["prior"].startswith("vague parameters")
    assert report["prior_left_out"].startswith("level prior of ")
    assert "round trips" in report["prior_left_out"]
    (line,) = [line for line in markdown.splitlines() if "Prior: " in line]
    used, _, left = line.partition("Prior: ")[2].partition("; not used in the fit: ")
    assert "level prior" not in used and left.startswith("level prior of ")
    # in one data centre the level prior is used, and no wide-area link's window
    single = _rows_of(f"{KARPENKO}/cluster_c.csv",
                      lambda row: row["threads"] in ("100", "500", "1000"),
                      tmp_path / "c.csv")
    report, _ = _calibrate_report(capsys, tmp_path, single)
    assert "level prior of " in report["prior"] and "link window" not in report["prior"]
    assert report["prior_left_out"].startswith("link window of ")


@pytest.fixture(scope="module")
def mixed_model(tmp_path_factory):
    """A model fitted on the mixed runs of sitano's file only (50% and 95% reads)."""
    where = tmp_path_factory.mktemp("mixed")
    fit = _rows_of(SITANO, lambda row: row["read_fraction"] != "1.0", where / "fit.csv")
    model = where / "m.toml"
    assert cli.main(["cassandra", "calibrate", "--nodes", "3", "--replicas", "3",
                     "--measurements", fit, "--out", str(model)]) == 0
    return str(model)


MIX_HINT = "a query file with a read_fraction column asks for the fitted mix"


def test_the_mix_hint_is_given_only_to_rows_that_gave_no_mix(mixed_model, tmp_path,
                                                              capsys):
    """Rows of one operation asked of a model fitted on mixed runs: the hint to give a
    read_fraction was shown also to a query file whose rows gave one (1.0)."""
    capsys.readouterr()
    given = _rows_of(SITANO, lambda row: row["read_fraction"] == "1.0",
                     tmp_path / "given.csv")
    status, _, err = run(capsys, "predict", "--model", mixed_model, "--measurements",
                         given)
    assert status == 0
    assert "runs of one operation, while every fitted row was of mixed runs" in err
    assert MIX_HINT not in err
    # the same rows without the column, and a grid: the hint applies
    bare = tmp_path / "bare.csv"
    bare.write_text("".join(
        ",".join(line.split(",")[:-1]) + "\n"
        for line in open(given).read().splitlines()))
    for query in (["--measurements", str(bare)], ["--threads", "84",
                                                  "--consistency", "ONE"]):
        status, _, err = run(capsys, "predict", "--model", mixed_model, *query)
        assert status == 0 and MIX_HINT in err, query


def test_predicted_throughput_has_the_interval_the_figure_draws(mixed_model, tmp_path,
                                                                capsys):
    """--out had the throughput without the interval --figure draws around it."""
    import csv

    from sizing.calibration_figure import curves
    from sizing.cluster_calibration import PREDICTED, predicted_rows
    from sizing.network_model_file import read_network_model

    query = tmp_path / "q.csv"
    # a closed loop of reads, an open loop the model carries, a mixed run's pair
    query.write_text("operation,consistency,threads,rate,read_fraction\n"
                     "read,ONE,60,,1.0\nread,ONE,,130000,1.0\n"
                     "read,ONE,60,,0.5\nwrite,ONE,60,,0.5\n")
    out = tmp_path / "p.csv"
    status, _, _ = run(capsys, "predict", "--model", mixed_model, "--measurements",
                       str(query), "--out", str(out), "--figure", str(tmp_path / "p.png"),
                       "--seed", "3")
    assert status == 0
    with open(out, newline="") as handle:
        reader = csv.DictReader(handle)
        rows = list(reader)
    # the columns scripts read stay as they were; the interval's come after them
    assert reader.fieldnames == ["operation", "consistency", "threads", "rate",
                                 "read_fraction", *PREDICTED]
    assert PREDICTED[-2:] == ("predicted_throughput_ci_low",
                              "predicted_throughput_ci_high")
    model = read_network_model(mixed_model)
    table = predicted_rows(model, str(query), 3)[2]
    drawn = curves(model, table, points=3, seed=3)
    for row, asked in zip(rows, table.itertuples()):
        at = drawn[(drawn.operation == asked.operation) & (drawn.reads == asked.reads)
                   & (drawn.load == (asked.threads if asked.threads == asked.threads
                                     else asked.rate))]
        (low,), (high,) = at.throughput_low, at.throughput_high
        cells = row["predicted_throughput_ci_low"], row["predicted_throughput_ci_high"]
        if np.isnan(low):
            assert cells == ("", "")  # no interval drawn, none written
        else:
            assert [float(c) for c in cells] == pytest.approx([low, high], rel=1e-5)
    closed, carried, mixed_read, mixed_write = rows
    value = float(closed["predicted_throughput"])
    assert float(closed["predicted_throughput_ci_low"]) < value \
        < float(closed["predicted_throughput_ci_high"])
    # Little's law at 60 threads with the latency at either end of its interval
    cycle = 60 * 1000.0 / value
    assert 60 * 1000.0 / float(closed["predicted_throughput_ci_low"]) == pytest.approx(
        cycle + float(closed["predicted_ci_high_ms"]) - float(closed["predicted_mean_ms"]),
        rel=1e-4)
    assert float(carried["predicted_throughput_ci_low"]) == 130000.0 \
        == float(carried["predicted_throughput_ci_high"])
    assert mixed_read["predicted_throughput_ci_low"] == "" \
        == mixed_write["predicted_throughput_ci_high"]


def test_predict_out_writes_the_file_and_says_so_not_the_rows_again(mixed_model,
                                                                     tmp_path, capsys):
    """With --out the rows went to the file and to standard output as well (a probe:
    a script's output cluttered); now the file alone, a line on standard error saying
    so, as the other commands that write rows do; --json still prints them."""
    capsys.readouterr()
    out = tmp_path / "p.csv"
    query = ["predict", "--model", mixed_model, "--threads", "20,40", "--consistency",
             "ONE"]
    status, printed, err = run(capsys, *query, "--out", str(out))
    assert status == 0 and printed == ""
    assert f"predict: wrote 4 rows to {out}" in err.splitlines()
    status, alone, _ = run(capsys, *query)
    assert status == 0 and alone == out.read_text()
    status, listed, _ = run(capsys, *query, "--out", str(tmp_path / "q.csv"), "--json")
    assert status == 0 and len(json.loads(listed)) == 4


def test_predicted_rows_go_to_csv_json_or_parquet_by_the_out_suffix(tmp_path, capsys):
    """`predict --model --out` wrote CSV only (a .json or .parquet name was refused);
    the three files now hold the same rows, each in its own format, and a name of
    another suffix is refused before any work, leaving no file."""
    import pandas as pd

    fit = _rows_of(f"{KARPENKO}/cluster_c.csv",
                   lambda row: row["operation"] == "read" and row["threads"] in
                   ("100", "300", "500"), tmp_path / "fit.csv")
    query = _rows_of(f"{KARPENKO}/cluster_c.csv",
                     lambda row: row["operation"] == "read" and row["threads"] == "700",
                     tmp_path / "query.csv")
    model = str(tmp_path / "m.toml")
    assert run(capsys, "calibrate", "--nodes", "3", "--replicas", "3", "--measurements",
               fit, "--out", model)[0] == 0
    frames = {}
    for suffix in ("csv", "json"):
        out = tmp_path / f"p.{suffix}"
        status, _, err = run(capsys, "predict", "--model", model, "--measurements",
                             query, "--out", str(out), "--seed", "3")
        assert status == 0 and f"wrote 3 rows to {out}" in err
        frames[suffix] = (pd.read_csv(out) if suffix == "csv"
                          else pd.DataFrame(json.loads(out.read_text())))
    assert list(frames["json"].columns) == list(frames["csv"].columns)
    assert frames["json"].consistency.tolist() == ["ONE", "QUORUM", "ALL"]
    # the CSV prints 6 significant digits, the JSON every digit
    np.testing.assert_allclose(frames["json"].predicted_mean_ms,
                               frames["csv"].predicted_mean_ms, rtol=1e-5)
    assert frames["json"].throughput.isna().all()  # an empty input cell is null
    if importlib.util.find_spec("pyarrow") is not None:
        out = tmp_path / "p.parquet"
        assert run(capsys, "predict", "--model", model, "--measurements", query,
                   "--out", str(out), "--seed", "3")[0] == 0
        # every digit, as the JSON; the types as the CSV reads back
        expected = frames["json"].astype({"throughput": float})  # all empty: missing
        pd.testing.assert_frame_equal(pd.read_parquet(out), expected,
                                      check_dtype=False, rtol=1e-12)
        assert pd.read_parquet(out).dtypes.equals(frames["csv"].dtypes)
    status, _, err = run(capsys, "predict", "--model", model, "--measurements", query,
                         "--out", str(tmp_path / "p.txt"))
    assert status == 2 and "must end in .csv or .json or .parquet" in err
    assert not (tmp_path / "p.txt").exists()


def test_a_parquet_out_without_pyarrow_is_refused_before_any_work(tmp_path, capsys,
                                                                  monkeypatch):
    """One line, exit 2, no file, and the model file is not even read (a model that
    does not exist is not what is reported)."""
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "pyarrow" else real(name, *a))
    status, _, err = run(capsys, "predict", "--model", str(tmp_path / "none.toml"),
                         "--threads", "10", "--out", str(tmp_path / "p.parquet"))
    assert status == 2 and "Traceback" not in err
    (line,) = [line for line in err.splitlines() if line.strip()]
    assert "needs pyarrow (pip install pyarrow); or write a .csv" in line
    assert not (tmp_path / "p.parquet").exists()


def test_rows_below_the_fewest_fitted_threads_are_said_to_be_extrapolated(tmp_path,
                                                                         capsys):
    """Rows past the most fitted threads got a note, rows below the fewest none
    (1 thread from a fit of 300-1,000 came without a word)."""
    fit = _rows_of(f"{KARPENKO}/cluster_c.csv",
                   lambda row: row["operation"] == "read" and int(row["threads"]) >= 300,
                   tmp_path / "fit.csv")
    model = str(tmp_path / "m.toml")
    assert run(capsys, "calibrate", "--nodes", "3", "--replicas", "3", "--measurements",
               fit, "--out", model)[0] == 0
    status, _, err = run(capsys, "predict", "--model", model, "--threads", "1,300")
    assert status == 0
    assert ("rows below 300 threads, the fewest the model was fitted at, are "
            "extrapolated") in err and "rows past" not in err
    status, _, err = run(capsys, "predict", "--model", model, "--threads", "300,600")
    assert status == 0 and "rows below" not in err
    # every level of the grid was fitted: no level is said to be beyond them
    assert "a level the model was not fitted at" not in err


@pytest.mark.parametrize("loads, shown", [("1.2", "1.2"), ("1", "1"), ("0.4,1", "1")])
def test_validate_loads_are_refused_with_one_bound_as_typed(tmp_path, capsys, loads,
                                                            shown):
    """--loads 1.2 was told "must be <= 1", and then --loads 1 "--loads [1.0]: use
    fractions in (0, 1)" (a Python list): one bound, < 1, and the value as typed."""
    status, _, err = run(capsys, "validate", "--quick", "--out", str(tmp_path / "cv"),
                         "--levels", "1", "--jobs", "2000", "--loads", loads)
    assert status == 2
    assert f"--loads {shown} must be < 1" in err and "[" not in err
    assert len(err.strip().splitlines()) == 1


def test_a_remote_basic_latency_past_the_replicas_is_refused(capsys):
    """--remote-basic 4:3.0 with --replicas 3 was silently ignored: RT(i,i,i) is
    defined for 1 <= i <= replicas, and the message says so, naming the entry."""
    status, out, err = run(capsys, "predict", "--nodes", "6", "--replicas", "3",
                           "--policy", "remote",
                           "--remote-basic", "1:1.2,2:1.9,3:2.5,4:3.0")
    assert status == 2 and out == ""
    assert err.strip() == ("forkjoin-sim cassandra: error: --remote-basic entry '4:3.0' "
                           "gives RT(4,4,4), but RT(i,i,i) is defined for 1 <= i <= "
                           "replicas (--replicas 3); leave it out")


def test_missing_remote_basic_latencies_are_named_without_python_words(capsys):
    """With --replicas 3, --remote-basic 1:1.2,2:1.9 lacks RT(3,3,3): the message said
    "remote_basic lacks ...", the Python argument's name."""
    status, _, err = run(capsys, "predict", "--nodes", "6", "--replicas", "3",
                         "--policy", "round-robin", "--local-basic", "0.3",
                         "--remote-basic", "1:1.2,2:1.9")
    assert status == 2 and "remote_basic" not in err
    assert "the remote basic latencies lack RT(i,i,i) for i = 3; Theorem 4 with r=3, " \
        "k=1 needs them for i = 1..3" in err


def test_one_node_and_one_replica_are_singular(capsys):
    """"Theorem 4: 1 nodes, 1 replicas" read as a slip."""
    status, out, _ = run(capsys, "predict", "--nodes", "1", "--replicas", "1",
                         "--policy", "round-robin", "--local-basic", "0.3",
                         "--remote-basic", "1:1.2")
    assert status == 0 and out.splitlines()[0] == ("Theorem 4: 1 node, 1 replica, "
                                                   "local fraction 1")


def test_simulate_json_rho_is_the_job_load_behind_per_node_load(capsys):
    """rho was the rate x the remote mean, so replicas x rho / nodes was not the
    per-node load it sits beside when local tasks are faster (a fuzz): 0.2 writes per
    unit time, one local task of mean 0.5 and two remote of mean 1 on 5 nodes."""
    status, out, _ = run(capsys, "simulate", "--nodes", "5", "--replicas", "3",
                         "--consistency", "QUORUM", "--policy", "token-aware", "--rate",
                         "0.2", "--local-service", "exp:0.5", "--remote-service", "exp:1",
                         "--jobs", "5000", "--json")
    fields = json.loads(out)
    assert status == 0
    assert fields["per_node_load"] == pytest.approx(0.2 * (0.5 + 2 * 1) / 5, rel=1e-12)
    assert fields["rho"] == pytest.approx(0.2 * (0.5 + 2 * 1) / 3, rel=1e-12)
