"""``forkjoin-sim experiment``: bad input refused in one line before the work."""

import pytest

from forkjoin_cli import main as cli
from forkjoin_sim.files.io import atomic_write


def run(capsys, *argv):
    status = cli.main(["experiment", *argv])
    out = capsys.readouterr()
    return status, out.out, out.err


@pytest.mark.parametrize("text, words", [
    ("xyz", "unknown letter(s) 'x', 'y', 'z'"), ("d", "unknown letter(s) 'd'"),
    ("", "names no scenario"), ("aa", "names 'a' twice")])
def test_scenarios_are_letters_from_abc_each_once(capsys, text, words):
    status, out, err = run(capsys, "calibration-holdout", "--scenarios", text)
    assert status == 2 and out == ""
    assert words in err
    assert "use letters from a, b, c" in err or "give each scenario once" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_staleness_load_refuses_one_operation_before_any_run(capsys, tmp_path):
    """--operations 1 ran 15 of the 70 simulations before the library refused it."""
    status, _, err = run(capsys, "staleness-load", "--operations", "1", "--out-dir",
                         str(tmp_path / "out"))
    assert status == 2 and "--operations 1 must be at least 2" in err
    assert len(err.strip().splitlines()) == 1 and "run/s" not in err  # no run started
    assert not (tmp_path / "out").exists()


def test_scenarios_accept_any_order_and_case():
    parser = cli.build_parser("experiment")
    args = parser.parse_args(["experiment", "calibration-holdout", "--scenarios", "Ca"])
    assert args.scenarios == "ca"


def test_a_scenario_a_file_cannot_form_is_refused_before_calibrating(capsys, tmp_path,
                                                                     monkeypatch):
    import validation.calibration_holdout as holdout

    def calibrate(*_, **__):
        raise AssertionError("calibrated before the input was checked")

    monkeypatch.setattr(holdout, "calibrate", calibrate)
    path = tmp_path / "two.csv"
    with atomic_write(path) as handle:
        handle.write("operation,consistency,threads,throughput,mean_ms\n"
                     "read,ONE,4,100,1.0\nread,ONE,16,300,1.5\n"
                     "read,ALL,4,90,2.0\nread,ALL,16,250,2.5\n")
    status, out, err = run(capsys, "calibration-holdout", "--scenarios", "bc", str(path))
    assert status == 2 and out == ""
    assert "scenario b" in err and "no rows to predict" in err
    assert len(err.strip().splitlines()) == 1
