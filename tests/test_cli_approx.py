"""``forkjoin-sim approx`` through the CLI entry point."""

import json

import pytest

import analytic
from forkjoin_cli import main as cli
from forkjoin_cli import approx as approx_cli


def test_json_keys_and_values_are_the_closed_forms(capsys):
    assert cli.main(["approx", "--nodes", "9", "--replicas", "5", "--quorum", "2",
                     "--rho", "0.8", "--mu", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out)[:len(approx_cli.FIELDS)] == list(approx_cli.FIELDS)
    assert out["per_node_load"] == pytest.approx(5 * 0.8 / 9)
    assert out["nelson"] == pytest.approx(analytic.nelson_estimate(9, 5, 2, 0.8, 2))
    assert out["lower"] == pytest.approx(analytic.lower_bound(9, 5, 2, 0.8, 2))
    assert out["lower_pk"] == pytest.approx(analytic.lower_bound_pk(9, 5, 2, 0.8, 2))
    assert out["upper"] == pytest.approx(analytic.upper_estimate(9, 5, 2, 0.8, 2))
    assert out["approx"] == pytest.approx(analytic.theorem3_estimate(9, 5, 2, 0.8, 2))


def test_method_picks_the_estimate_and_every_estimator_is_listed(capsys):
    argv = ["approx", "--nodes", "6", "--replicas", "3", "--quorum", "1", "--rho", "1.2"]
    assert cli.main(argv + ["--json"]) == 0
    default = json.loads(capsys.readouterr().out)
    assert default["method"] == analytic.RECOMMENDED
    assert default["estimators"] == pytest.approx(analytic.all_estimates(6, 3, 1, 1.2))
    assert default["estimate"] == default["estimators"][analytic.RECOMMENDED]
    assert cli.main(argv + ["--json", "--method", "theorem3"]) == 0
    paper = json.loads(capsys.readouterr().out)
    assert paper["estimate"] == pytest.approx(paper["approx"])
    assert cli.main(argv) == 0
    text = capsys.readouterr().out
    assert all(name in text for name in analytic.ESTIMATORS)


def test_undefined_pk_bound_is_json_null(capsys):
    assert cli.main(["approx", "--nodes", "9", "--replicas", "9", "--quorum", "7",
                     "--rho", "0.9", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["lower_pk"] is None


def test_text_output_names_every_quantity(capsys):
    assert cli.main(["approx", "--nodes", "3", "--replicas", "3", "--quorum", "1",
                     "--rho", "0.5"]) == 0
    text = capsys.readouterr().out
    for label in approx_cli.FIELDS.values():
        assert label in text


@pytest.mark.parametrize("argv, words", [
    (["--nodes", "3", "--replicas", "4", "--quorum", "2", "--rho", "0.5"], "r <= n"),
    (["--nodes", "5", "--replicas", "3", "--quorum", "4", "--rho", "0.5"], "k <= r"),
    (["--nodes", "3", "--replicas", "3", "--quorum", "1", "--rho", "1.5"], "unstable"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, words):
    assert cli.main(["approx", *argv, "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and words in captured.err


def test_estimates_below_the_lower_bound_carry_a_warning(capsys):
    # Nelson's raw formula turns negative for wide jobs at low load
    assert cli.main(["approx", "--nodes", "200", "--replicas", "200", "--quorum", "1",
                     "--rho", "0.5", "--method", "nelson_raw", "--json"]) == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert out["estimate"] < 0 < out["lower"]
    assert out["warnings"] == [w.removeprefix("warning: ")
                               for w in captured.err.strip().splitlines()]
    assert "nelson_raw gives -17.65, below the lower bound" in out["warnings"][0]
    # a queue where every estimator respects the bound has none
    assert cli.main(["approx", "--nodes", "6", "--replicas", "3", "--quorum", "2",
                     "--rho", "0.5", "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["warnings"] == [] and captured.err == ""


def test_interpolation_in_its_weak_region_carries_a_warning(capsys):
    """Quorum 1 of 15 replicas at node load 0.75: up to 10% high (docs/estimators.md)."""
    assert cli.main(["approx", "--nodes", "20", "--replicas", "15", "--quorum", "1",
                     "--rho", "1.0", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert any("interpolation overestimates quorum 1" in w and "(here 0.75)" in w
               for w in out["warnings"])
    # another method, or the same queue at light load, has no such note
    for extra in (["--rho", "1.0", "--method", "copula"], ["--rho", "0.4"]):
        argv = ["approx", "--nodes", "20", "--replicas", "15", "--quorum", "1",
                "--json", *extra]
        assert cli.main(argv) == 0
        assert not any("interpolation overestimates" in w
                       for w in json.loads(capsys.readouterr().out)["warnings"])


def test_an_estimate_far_from_the_recommended_one_carries_a_warning(capsys):
    """theorem3 at (40,30,2), rho 1.2 prints 4.96 where a long simulation gives 1.40
    and interpolation 1.49: a warning names the factor; close estimators say nothing."""
    assert cli.main(["approx", "--nodes", "40", "--replicas", "30", "--quorum", "2",
                     "--rho", "1.2", "--method", "theorem3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    (far,) = [w for w in out["warnings"] if "times above interpolation" in w]
    ratio = out["estimate"] / out["estimators"]["interpolation"]
    assert ratio > 3 and far.startswith(
        f"theorem3 gives {out['estimate']:.4g}, {ratio:.3g} times above")
    assert cli.main(["approx", "--nodes", "6", "--replicas", "3", "--quorum", "2",
                     "--rho", "1.2", "--method", "copula", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["warnings"] == []


def test_a_load_just_below_one_is_not_printed_as_one(capsys):
    """--rho 0.9999999999 on (3,3,3) printed "rho=1" and "per-node load ... 1", the
    limit the load is below; a load six digits show well stays short."""
    assert cli.main(["approx", "--nodes", "3", "--replicas", "3", "--quorum", "3",
                     "--rho", "0.9999999999"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == ("(3,3,3) non-purging fork-join, rho=0.9999999999, mu=1, "
                        "exponential service")
    assert lines[1].split() == ["per-node", "load", "r*rho/n", "0.9999999999"]
    assert cli.main(["approx", "--nodes", "9", "--replicas", "3", "--quorum", "2",
                     "--rho", "2.7"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "rho=2.7," in lines[0] and lines[1].split()[-1] == "0.9"
