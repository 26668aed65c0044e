"""``forkjoin-sim estimators accuracy``: what a referee table may hold."""

import re

import pytest

from forkjoin_cli.main import main

HEADER = "n,r,k,rho,sim_mean,sim_ci_low,sim_ci_high\n"
GOOD = "6,3,2,1.0,1.2,1.1,1.3\n"


@pytest.mark.parametrize("row, says", [
    ("6,3,2,1.2,-1,-1.1,-0.9\n", "line 3 column 'sim_mean': -1 must be a positive mean"),
    ("6,3,2,1.2,0,0,0\n", "line 3 column 'sim_mean': 0 must be a positive mean"),
    ("6,3,2,1.2,1.2,1.3,1.4\n", "line 3 column 'sim_ci_low': 1.3 exceeds sim_mean"),
    ("6,3,2,1.2,1.2,1.0,1.1\n", "line 3 column 'sim_ci_high': 1.1 is below sim_mean"),
    ("6,3,2,1.2,,1.0,1.4\n", "line 3 column 'sim_mean' is empty"),
    ("6,3,2,1.2,inf,1.0,1.4\n", "line 3 column 'sim_mean' is not finite \\('inf'\\)"),
    ("6,3,2,1.2,abc,1.0,1.4\n", "line 3 column 'sim_mean' is not a number \\('abc'\\)"),
    ("6,3,2,1.2,nan,1.0,1.4\n", "line 3 column 'sim_mean' is not a number \\('nan'\\)"),
])
def test_impossible_referee_values_are_one_line_naming_file_line_and_column(
        tmp_path, capsys, row, says):
    path = tmp_path / "referee.csv"
    path.write_text(HEADER + GOOD + row, encoding="utf-8")
    assert main(["estimators", "accuracy", "--referee", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"referee table {str(path)!r} " in err
    assert "np.float64" not in err
    assert re.search(says, err), err


def test_a_sound_referee_table_is_accepted(tmp_path, capsys):
    path = tmp_path / "referee.csv"
    path.write_text(HEADER + GOOD, encoding="utf-8")
    assert main(["estimators", "accuracy", "--referee", str(path)]) == 0
    assert "(6,3,2) rho=1" in capsys.readouterr().out
