"""The staleness-under-load experiment: its load.csv read back, its progress bar."""

import pandas as pd
import pytest

import forkjoin_sim.run
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


def test_progress_counts_every_simulation(monkeypatch, capsys, tmp_path):
    _small(monkeypatch)
    argv = ["experiment", "staleness-load", "--operations", "300", "--wars-trials", "300",
            "--out-dir", str(tmp_path)]
    total = experiment.simulations()
    # 4 WARS pairs of N = 3 + 2 structures x 2 loads, then the visibility figure's
    # WARS run and 2 structures x 3 loads.
    assert total == 4 + 4 + 1 + 6
    counted = []
    real = experiment._progress_bar

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
    # --plot-only redraws from the file: only the visibility figure simulates; the
    # bar is tqdm's on stderr.
    monkeypatch.setattr(experiment, "_progress_bar", real)
    monkeypatch.setattr(forkjoin_sim.run, "PROGRESS_DELAY", 0.0)  # the bar draws at once
    monkeypatch.setenv(forkjoin_sim.run.PROGRESS_ENV, "1")  # captured stderr: no terminal
    capsys.readouterr()
    assert cli.main(argv + ["--plot-only"]) == 0
    assert "staleness-load:   0%|          | 0/7" in capsys.readouterr().err


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
    assert warned.warnings.str.endswith("run at least 3,798 operations "
                                        "(--operations)").all()
    (line,) = [line for line in capsys.readouterr().err.splitlines()
               if line.startswith("warning:")]
    assert line.startswith("warning: 4 of 16 rows carry warnings (their warnings column "
                           "says which), e.g. N=3, shared, write share 0.5, work per "
                           "replica 0.9: the busiest stage is loaded 0.9")
