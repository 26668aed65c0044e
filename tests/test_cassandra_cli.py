"""``forkjoin-sim cassandra``: the predict / simulate / validate contract."""

import json

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
