"""The Fig. 2 reproduction (validation.fig2), on a tiny sub-grid."""

import numpy as np
import pandas as pd
import pytest

import analytic
from forkjoin_cli import main as cli
from forkjoin_sim.measure.statistics import summarize
from validation import fig2


@pytest.fixture
def registered():
    """Every command is in forkjoin_cli.main.COMMANDS; nothing to register."""


def test_paper_protocol_measures_exactly_100000_jobs():
    jobs = fig2.jobs_for_samples(fig2.PAPER_SAMPLES, fig2.PAPER_SAMPLE_EVERY)
    for total, expected in ((jobs, fig2.PAPER_SAMPLES), (jobs - 1, fig2.PAPER_SAMPLES - 1)):
        got = summarize(np.arange(total, dtype=float), warmup=fig2.WARMUP,
                        sample_every=fig2.PAPER_SAMPLE_EVERY).jobs_measured
        assert got == expected


def test_full_grid_is_the_papers_400_points():
    from forkjoin_sim.sweep.runner import expand
    points, _ = expand(fig2.grid_spec(jobs=1000))
    cells = {(p["nodes"], p["replicas"], p["quorum"]) for p in points}
    assert len(cells) == 50 and len(points) == 400


def test_cli_writes_csv_and_png_for_a_sub_grid(tmp_path, monkeypatch, capsys, registered):
    monkeypatch.setattr(fig2, "NODES", (5,))
    monkeypatch.setattr(fig2, "REPLICAS", (3,))
    monkeypatch.setattr(fig2, "LOADS", (0.5, 1.5))
    out = tmp_path / "fig2"
    assert cli.main(["fig2", "--jobs", "60000", "--out", str(out), "--workers", "1",
                     "--seed", "7"]) == 0
    table = pd.read_csv(out / "fig2.csv")
    assert list(table.columns[:len(fig2.COLUMNS)]) == fig2.COLUMNS
    assert len(table) == 6
    assert (out / "fig2.png").stat().st_size > 10_000
    for row in table.itertuples():
        expected = analytic.estimates(row.n, row.r, row.k, row.rho)
        assert row.approx == pytest.approx(expected["approx"], rel=1e-5)
        assert row.per_node_load == pytest.approx(3 * row.rho / 5)
        assert row.error == pytest.approx(row.approx / row.sim_mean - 1, abs=1e-7)
        assert row.sim_ci_low <= row.sim_mean <= row.sim_ci_high
    for name in analytic.ESTIMATORS:
        for row in table.itertuples():
            value = analytic.all_estimates(row.n, row.r, row.k, row.rho)[name]
            assert getattr(row, name) == pytest.approx(value, rel=1e-6)
        assert table[f"err_{name}"].to_numpy() == pytest.approx(
            (table[name] / table["sim_mean"] - 1).to_numpy(), abs=1e-7)
    assert (out / "fig2_estimators.png").stat().st_size > 10_000
    printed = capsys.readouterr().out
    assert "|error| > 25%" in printed and "Paper:" in printed
    assert "interpolation" in printed


def test_bad_jobs_is_one_line_exit_2_and_writes_nothing(tmp_path, capsys, registered):
    out = tmp_path / "never"
    # Refused while parsing, by argparse; main returns the status.
    assert cli.main(["fig2", "--jobs", "1", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--jobs" in err
    assert not out.exists()


def _table(rows):
    t = pd.DataFrame(rows, columns=["n", "r", "k", "rho", "error"])
    t["per_node_load"] = t["r"] * t["rho"] / t["n"]
    t["error_ci_low"], t["error_ci_high"] = t["error"] - 0.01, t["error"] + 0.01
    return t


def test_summary_counts_against_the_papers_region():
    table = _table([(9, 9, 1, 0.9, -0.9),   # large, inside rho > 0.8 and k < r/2
                    (9, 9, 2, 0.5, 0.4),    # large, outside (light load)
                    (9, 9, 6, 0.95, 0.3),   # large, outside (k >= r/2)
                    (3, 3, 1, 0.95, 0.1),   # small, inside
                    (3, 3, 3, 0.2, 0.0)])
    s = fig2.error_summary(table)
    assert s["over_threshold"] == 3
    assert s["in_claimed_region"] == 2 and s["over_in_claimed_region"] == 1
    assert s["outside_claim"] == 2
    assert s["max_abs_error"] == pytest.approx(0.9)
    assert s["worst_point"][:3] == (9, 9, 1)
    assert "DISAGREES" in fig2.summary_text(table)
    counts = fig2.error_breakdown(table)
    assert counts.loc[0.5, "1<k<r/2"] == "1/1" and counts.loc[0.95, "r/2<=k<r"] == "1/1"


def test_summary_agrees_when_large_errors_stay_in_the_region():
    table = _table([(9, 9, 1, 0.9, -0.5), (9, 9, 5, 0.9, 0.1), (9, 9, 1, 0.2, 0.2)])
    assert fig2.error_summary(table)["outside_claim"] == 0
    assert "agrees" in fig2.summary_text(table)


@pytest.mark.parametrize("k, r, label", [(1, 9, "k=1"), (4, 9, "1<k<r/2"),
                                         (5, 9, "r/2<=k<r"), (2, 4, "r/2<=k<r"),
                                         (9, 9, "k=r")])
def test_quorum_classes(k, r, label):
    assert fig2.quorum_class(k, r) == label


def test_short_runs_are_flagged_not_presented_as_results(tmp_path, monkeypatch, capsys,
                                                         registered):
    monkeypatch.setattr(fig2, "NODES", (5,))
    monkeypatch.setattr(fig2, "REPLICAS", (3,))
    monkeypatch.setattr(fig2, "LOADS", (0.5, 1.5))
    out = tmp_path / "fig2"
    assert cli.main(["fig2", "--jobs", "200", "--out", str(out), "--workers", "1"]) == 0
    table = pd.read_csv(out / "fig2.csv", keep_default_na=False)
    doubted = table["sim_doubts"] != ""
    wide = (table["sim_warnings"] != "") & ~doubted
    assert doubted.any()
    # the doubts are among the warnings, and a doubted point's warnings also say how
    # many jobs it needs
    for row in table[doubted].itertuples():
        assert row.sim_warnings.startswith(row.sim_doubts + "; ")
        assert "jobs would give +-1%" in row.sim_warnings
    err = capsys.readouterr().err
    assert f"warning: {int(doubted.sum())} of 6 points carry convergence warnings" in err
    # points whose only note is their interval's width are said apart, not distrusted
    assert (f"note: {int(wide.sum())} of 6 points have 95% intervals wider" in err) == \
        bool(wide.any())


def test_doubts_and_wide_intervals_are_told_apart_by_the_doubts_column():
    width = ("the mean: 95% interval +-19% after 200 jobs; about 220,241 jobs would "
             "give +-1%")
    table = pd.DataFrame({
        "sim_warnings": [width, width, "", "node(s) 0 (1.30) measured busy ..."],
        # the first point's text alone reads as a width note; its column says the run
        # doubts it (and the last's column says the opposite of its text)
        "sim_doubts": [width, "", "", ""]})
    assert fig2.doubted_and_wide(table) == (1, 2)


def test_validate_prints_what_its_fig2_points_doubt(monkeypatch, tmp_path, capsys):
    """`validate` ran Fig. 2 without a word on its doubted points (53 of 400 at
    --quick, a probe found) where `fig2` names them: it now prints the same lines,
    marked as Fig. 2's."""
    import forkjoin_cli.validate as command
    from forkjoin_cli.main import main

    width = "the mean: 95% interval +-19% after 200 jobs; about 220,241 jobs would give"
    table = pd.DataFrame({"sim_warnings": [width, width, ""],
                          "sim_doubts": [width, "", ""]})
    monkeypatch.setattr(command, "run_checks", lambda *a, **k: {
        "fig2": table, "points": 3, "seconds": 1.0})
    monkeypatch.setattr(command, "write_report", lambda *a, **k: None)
    monkeypatch.setattr(command.fig2, "summary_text", lambda t: "summary")
    assert main(["validate", "--quick", "--out", str(tmp_path / "v")]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == [f"Fig. 2: {line}" for line in fig2.doubt_lines(table)]
    assert err[0].startswith("Fig. 2: warning: 1 of 3 points carry convergence warnings")
    assert err[1].startswith("Fig. 2: note: 1 of 3 points have 95% intervals wider")


def test_the_paper_protocol_at_fewer_jobs_says_how_many_samples_it_keeps(tmp_path,
                                                                          capsys):
    """--paper --jobs 5000 kept 450 samples per point, not the paper's 100,000, and
    said nothing (a fuzz): the warning gives the count the CSV then shows."""
    assert cli.main(["fig2", "--paper", "--jobs", "2000", "--out", str(tmp_path),
                     "--workers", "1"]) == 0
    err = capsys.readouterr().err
    measured = pd.read_csv(tmp_path / "fig2.csv").jobs_measured.unique()
    assert list(measured) == [180]  # every 10th of the 1,800 after the warm-up
    assert ("warning: --paper with --jobs 2,000 keeps 180 samples per point (every "
            "10th after the warm-up), not the paper's 100,000") in err
