"""The staleness-under-load experiment: its load.csv read back, its progress bar."""

import pandas as pd
import pytest

import validation.staleness_load as experiment
from forkjoin_cli import main as cli
from forkjoin_sim.errors import ConfigError


def _small(monkeypatch):
    """One replica count, share and two loads: seconds, not minutes."""
    monkeypatch.setattr(experiment, "REPLICAS", (3,))
    monkeypatch.setattr(experiment, "WRITE_SHARES", (0.5,))
    monkeypatch.setattr(experiment, "LOADS", (0.0, 0.5))


@pytest.mark.parametrize("text, words", [
    ("", "is empty"), ("a,b\n1,2\n", "lacks the column(s) replicas, read_quorum"),
    (",".join(experiment.PLOTTED) + "\n", "has a header but no rows")])
def test_a_bad_load_csv_is_one_line_saying_what_is_wrong(capsys, tmp_path, text, words):
    (tmp_path / "load.csv").write_text(text)
    status = cli.main(["experiment", "staleness-load", "--out-dir", str(tmp_path),
                       "--plot-only"])
    err = capsys.readouterr().err
    assert status == 2 and words in err and "without --plot-only" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_text_in_a_number_column_is_refused(tmp_path):
    row = {c: 1 for c in experiment.PLOTTED} | {"structure": "shared", "stale": "x"}
    pd.DataFrame([row]).to_csv(tmp_path / "load.csv", index=False)
    with pytest.raises(ConfigError, match="column stale holds text"):
        experiment.read_table(tmp_path / "load.csv")


def test_progress_counts_every_simulation(monkeypatch, tmp_path):
    _small(monkeypatch)
    argv = ["experiment", "staleness-load", "--operations", "300", "--wars-trials", "300",
            "--out-dir", str(tmp_path)]
    total = experiment.simulations()
    # 4 WARS pairs of N = 3 + 2 structures x 2 loads, then the visibility figure's
    # WARS run and 2 structures x 3 loads.
    assert total == 4 + 4 + 1 + 6
    counted = []

    def bar(n):
        counted.append([n, 0])

        class Bar:
            def __enter__(self):
                return self

            def __exit__(self, *_):
                return False

            def update(self, step=1):
                counted[-1][1] += step
        return Bar()

    # The bar ends full: each simulation ticks it once.
    monkeypatch.setattr(experiment, "_progress_bar", bar)
    assert cli.main(argv) == 0
    assert counted == [[total, total]]
    assert len(experiment.read_table(tmp_path / "load.csv")) == 4 * 4


FIGURES = ("load.png", "load_latency.png", "load_visibility.png")


def _refuse_to_simulate(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("--plot-only simulated")

    monkeypatch.setattr(experiment, "simulate_queues", refuse)
    monkeypatch.setattr(experiment, "simulate_wars", refuse)


def test_plot_only_draws_every_figure_from_the_saved_tables(monkeypatch, capsys,
                                                             tmp_path):
    """--plot-only simulated the t-visibility figure again, at --operations (a probe:
    a run of 20,000 operations redrawn with --operations 2000 drew other numbers, and
    said "360 rows in 2 s"). Its data are now saved beside load.csv, and --plot-only
    draws all three figures from the files, simulating nothing, and says so."""
    _small(monkeypatch)
    argv = ["experiment", "staleness-load", "--operations", "300", "--wars-trials",
            "300", "--out-dir", str(tmp_path)]
    assert cli.main(argv) == 0
    for name in FIGURES:
        (tmp_path / name).unlink()
    _refuse_to_simulate(monkeypatch)
    capsys.readouterr()
    assert cli.main(["experiment", "staleness-load", "--plot-only", "--operations",
                     "2000", "--out-dir", str(tmp_path)]) == 0
    assert all((tmp_path / name).stat().st_size > 0 for name in FIGURES)
    captured = capsys.readouterr()
    assert captured.out == (
        f"redrew load.png, load_latency.png, load_visibility.png from the 16 rows of "
        f"{tmp_path}/load.csv and load_visibility.csv (nothing simulated)\n")
    # a warnings column of empty cells (NaN floats as read back) says nothing, and
    # pandas is not asked to fill text into it (a FutureWarning leaked once)
    assert captured.err == ""
    curves = experiment.read_table(tmp_path / "load_visibility.csv",
                                   experiment.VISIBILITY_COLUMNS)
    # 2 structures x 3 loads x 17 bins of 0.25 ms (the last open), PBS at 200 points
    assert (curves.curve == "queues").sum() == 2 * 3 * 17
    assert (curves.curve == "pbs").sum() == 200


def test_plot_only_without_the_visibility_table_says_that_figure_is_not_redrawn(
        monkeypatch, capsys, tmp_path):
    """A directory from before load_visibility.csv was kept: the two figures of
    load.csv are redrawn, and the third is named as not redrawn, with the fix."""
    _small(monkeypatch)
    argv = ["experiment", "staleness-load", "--operations", "300", "--wars-trials",
            "300", "--out-dir", str(tmp_path)]
    assert cli.main(argv) == 0
    (tmp_path / "load_visibility.csv").unlink()
    (tmp_path / "load_visibility.png").unlink()
    _refuse_to_simulate(monkeypatch)
    capsys.readouterr()
    assert cli.main(argv + ["--plot-only"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("redrew load.png, load_latency.png from the 16 rows")
    assert "load_visibility.png is not redrawn: run the experiment without " \
        "--plot-only" in captured.err
    assert not (tmp_path / "load_visibility.png").exists()


def test_rows_of_a_run_too_short_for_its_load_carry_the_warning(monkeypatch, capsys,
                                                               tmp_path):
    """2,000 operations on one shared queue at load 0.9 give it 2,000 services, fewer
    than 10 relaxation times (1/(1 - sqrt(0.9))^2, about 380 services each): those
    rows' warnings column says their numbers are biased low and how many operations
    they need, and stderr says it once, as staleness and simulate do. The stages at
    work 0.9 (each stage at load 0.45) and the load-free rows carry nothing."""
    _small(monkeypatch)
    monkeypatch.setattr(experiment, "LOADS", (0.0, 0.9))
    assert cli.main(["experiment", "staleness-load", "--operations", "2000",
                     "--wars-trials", "300", "--out-dir", str(tmp_path)]) == 0
    table = experiment.read_table(tmp_path / "load.csv")
    warned = table[table.warnings.fillna("") != ""]
    assert set(zip(warned.structure, warned.work_per_replica)) == {("shared", 0.9)}
    assert len(warned) == 4 and warned.warnings.str.startswith(
        "the busiest stage is loaded 0.9: a queue this loaded forgets its start over "
        "about 380 services").all()
    assert warned.warnings.str.contains("run at least 3,798 operations "
                                        "(--operations)", regex=False).all()
    (line,) = [line for line in capsys.readouterr().err.splitlines()
               if line.startswith("warning:")]
    assert line.startswith("warning: 4 of 16 rows carry warnings (their warnings column "
                           "says which), e.g. N=3, shared, write share 0.5, work per "
                           "replica 0.9: the busiest stage is loaded 0.9")


def test_rows_carry_what_staleness_says_of_the_same_run(monkeypatch, capsys):
    """4,000 operations at load 0.9 are long enough for the relaxation rule (3,798) but
    some pairs' latencies doubt their batch means: each row's warnings are those
    `forkjoin-sim staleness` gives the same key, pair, length and seed (the same run),
    where before the experiment's column stayed empty for them."""
    import json

    _small(monkeypatch)
    monkeypatch.setattr(experiment, "LOADS", (0.9,))
    monkeypatch.setattr(experiment, "STRUCTURES",
                        {"shared": experiment.STRUCTURES["shared"]})
    table = experiment.experiment(4000, 7, 300)
    delay = f"exp:{experiment.MESSAGE_MEAN}"
    assert cli.main(["staleness", "--replicas", "3", "--all-pairs", "--rate", "1",
                     "--write-share", "0.5", "--structure", "shared",
                     "--read-service", "exp:0.9", "--write-service", "exp:0.9",
                     "--delay-w", delay, "--delay-a", delay, "--delay-r", delay,
                     "--delay-s", delay, "--jobs", "4000", "--seed", "7",
                     "--json"]) == 0
    said = {(row["read_quorum"], row["write_quorum"]): "; ".join(row["warnings"])
            for row in json.loads(capsys.readouterr().out)}
    rows = {(r, w): text for r, w, text in
            zip(table.read_quorum, table.write_quorum, table.warnings)}
    assert rows == {pair: said[pair] for pair in rows}
    assert sum(text.startswith("read latency: batch means") for text in rows.values()) >= 1
