"""``forkjoin-sim validate`` end to end on shrunken grids (validation.report)."""

import re

import pandas as pd
import pytest

from forkjoin_cli import main as cli
from validation import fig2, report, theorems


@pytest.fixture
def tiny_grids(monkeypatch):
    monkeypatch.setattr(fig2, "NODES", (3, 5))
    monkeypatch.setattr(fig2, "REPLICAS", (3,))
    monkeypatch.setattr(fig2, "LOADS", (0.5,))
    monkeypatch.setattr(theorems, "THEOREM1_LOADS", (0.5,))
    monkeypatch.setattr(theorems, "THEOREM1_REPLICAS", (2, 3))


def test_validate_writes_a_report_whose_links_all_exist(tmp_path, tiny_grids, capsys):
    out = tmp_path / "validation"
    assert cli.main(["validate", "--quick", "--out", str(out), "--workers", "1"]) == 0
    text = (out / "report.md").read_text()
    for heading in ("## Theorem 3", "## Beyond Theorem 3", "## Theorem 1", "## The Lemma",
                    "## Theorem 2"):
        assert heading in text
    assert "forkjoin-sim validate --out" in text and "--quick" in text
    links = re.findall(r"\]\(([^)]+)\)", text)
    assert {"fig2.png", "fig2_estimators.png", "theorem1.png", "lemma.png", "theorem2.png",
            "fig2.csv", "theorem1.csv", "lemma.csv"} <= set(links)
    for link in links:
        assert (out / link).stat().st_size > 0, link
    table = pd.read_csv(out / "fig2.csv")
    assert list(table.columns[:len(fig2.COLUMNS)]) == fig2.COLUMNS and len(table) == 6
    t1 = pd.read_csv(out / "theorem1.csv")
    assert len(t1) == 4 * 3 and set(t1["r"]) == {2, 3}
    assert "Fig. 2: 6 points" in capsys.readouterr().out


def test_size_flags_are_exclusive(tmp_path, tiny_grids, capsys):
    assert cli.main(["validate", "--quick", "--paper", "--out", str(tmp_path / "x")]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert not (tmp_path / "x").exists()


def test_paper_size_is_the_papers_protocol():
    assert report.SIZES["paper"]["sample_every"] == 10
    assert report.SIZES["paper"]["jobs"] == fig2.jobs_for_samples(100_000, 10)
