"""Rows written as CSV, JSON or parquet by the file name's suffix (`files.tables`)."""

import json
import math

import pytest

from forkjoin_sim.errors import ConfigError
from forkjoin_sim.files.tables import check_table_out, json_cell, write_table

ROWS = [{"level": "ONE", "threads": 10, "mean_ms": 1.0 / 3.0, "echoed": "2.50",
         "missing": math.nan},
        {"level": "ALL", "threads": 20, "mean_ms": 2.0, "echoed": "", "missing": 4.0}]
CSV = ("level,threads,mean_ms,echoed,missing\nONE,10,0.333333,2.50,\n"
       "ALL,20,2.0,,4.0\n")


def test_json_has_every_digit_numbers_as_numbers_and_gaps_as_null(tmp_path):
    out = tmp_path / "rows.json"
    write_table(out, ROWS, CSV)
    got = json.loads(out.read_text())
    assert got[0] == {"level": "ONE", "threads": 10, "mean_ms": 1.0 / 3.0,
                      "echoed": 2.5, "missing": None}
    assert got[1]["echoed"] is None and got[1]["missing"] == 4.0
    assert [json_cell(v) for v in ("7", "x", " ", "inf", 1.5)] == [7, "x", None, "inf", 1.5]


def test_csv_is_the_commands_own_text(tmp_path):
    write_table(tmp_path / "rows.csv", ROWS, CSV)
    assert (tmp_path / "rows.csv").read_text() == CSV


def test_parquet_keeps_every_digit_numbers_as_numbers_and_gaps_missing(tmp_path):
    """Read back from the CSV the parquet held 0.333333 (the CSV's 6 digits)."""
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    write_table(tmp_path / "rows.parquet", ROWS, CSV)
    got = pd.read_parquet(tmp_path / "rows.parquet")
    assert list(got.columns) == ["level", "threads", "mean_ms", "echoed", "missing"]
    assert got.mean_ms.tolist() == [1.0 / 3.0, 2.0]
    assert got.threads.tolist() == [10, 20] and got.threads.dtype.kind == "i"
    assert got.echoed.iloc[0] == 2.5 and pd.isna(got.echoed.iloc[1])
    assert pd.isna(got.missing.iloc[0]) and got.missing.iloc[1] == 4.0
    # numbers and text in one column (an 'inf' echoed among numbers) become text
    mixed = [{"cell": "inf"}, {"cell": 2.0}, {"cell": ""}]
    write_table(tmp_path / "mixed.parquet", mixed, "cell\ninf\n2.0\n\n")
    cells = pd.read_parquet(tmp_path / "mixed.parquet").cell
    assert cells.tolist()[:2] == ["inf", "2.0"] and pd.isna(cells.iloc[2])


def test_another_suffix_is_refused_with_the_ones_it_takes(tmp_path):
    with pytest.raises(ConfigError, match=r"--out .*rows\.txt must end in \.csv or "
                                          r"\.json or \.parquet"):
        check_table_out(str(tmp_path / "rows.txt"), "--out")
    check_table_out(str(tmp_path / "rows.JSON"), "--out")
