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
    # configurations no queue can be (a probe's n = 0 was named without file or line)
    ("0,3,2,1.2,1.2,1.1,1.3\n", "line 3 column 'n': 0 must be at least 1 node"),
    ("6,7,2,1.2,1.2,1.1,1.3\n", "line 3 column 'r': 7 must be a replica count"),
    ("6,3,4,1.2,1.2,1.1,1.3\n", "line 3 column 'k': 4 must be a quorum from 1 to r"),
    ("6,3,2,0,1.2,1.1,1.3\n", "line 3 column 'rho': 0 must be a positive load"),
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


def _estimates(tmp_path, table: str, *extra: str):
    """The accuracy command's per-point table for the referee ``table``."""
    import pandas as pd

    path, out = tmp_path / "referee.csv", tmp_path / "points.csv"
    path.write_text(table, encoding="utf-8")
    status = main(["estimators", "accuracy", "--referee", str(path), "--out", str(out),
                   *extra])
    return status, (pd.read_csv(out) if status == 0 else None)


def test_the_estimates_are_for_the_service_rate_the_table_was_simulated_at(tmp_path):
    """A mean sojourn time scales as 1/mu: a table that says mu = 2 gets estimates
    half those of mu = 1, from its own column or from --mu for a table without one."""
    from analytic.estimators import ESTIMATORS, RECOMMENDED

    at_one = ESTIMATORS[RECOMMENDED](6, 3, 2, 1.0, 1.0)
    status, from_column = _estimates(tmp_path, "n,r,k,rho,mu,sim_mean,sim_ci_low,"
                                     "sim_ci_high\n6,3,2,1.0,2,0.6,0.55,0.65\n")
    assert status == 0
    assert from_column[RECOMMENDED].iloc[0] == pytest.approx(at_one / 2, rel=1e-12)
    status, from_option = _estimates(tmp_path, HEADER + "6,3,2,1.0,0.6,0.55,0.65\n",
                                     "--mu", "2")
    assert status == 0
    assert from_option[RECOMMENDED].iloc[0] == pytest.approx(at_one / 2, rel=1e-12)


@pytest.mark.parametrize("mu_cells, extra, says", [
    (("2", "2"), ("--mu", "1"), "--mu 1 contradicts the referee table"),
    (("1", "2"), (), "column 'mu' must hold one positive service rate"),
    (("0", "0"), (), "column 'mu' must hold one positive service rate"),
    (("x", "x"), (), "column 'mu' must hold one positive service rate"),
])
def test_a_service_rate_the_table_contradicts_or_cannot_give_is_refused(
        tmp_path, capsys, mu_cells, extra, says):
    rows = "".join(f"6,3,{k},1.0,{mu},1.2,1.1,1.3\n" for k, mu in zip((1, 2), mu_cells))
    status, _ = _estimates(tmp_path, "n,r,k,rho,mu,sim_mean,sim_ci_low,sim_ci_high\n"
                           + rows, *extra)
    err = capsys.readouterr().err.strip()
    assert status == 2 and len(err.splitlines()) == 1 and says in err, err


def test_a_referee_table_says_its_service_rate(tmp_path, monkeypatch):
    """``estimators referee`` writes the rate it simulated at, next to rho."""
    import pandas as pd

    from forkjoin_cli import estimators as command

    simulated = pd.DataFrame({"n": [6], "r": [3], "k": [2], "rho": [1.0],
                              "sim_mean": [1.2], "sim_ci_low": [1.1],
                              "sim_ci_high": [1.3]})
    monkeypatch.setattr(command, "_referee", lambda *_: simulated.copy())
    out = tmp_path / "referee.csv"
    assert main(["estimators", "referee", "--out", str(out)]) == 0
    table = pd.read_csv(out)
    assert list(table.columns[3:5]) == ["rho", "mu"] and table["mu"].tolist() == [1.0]


def _short_referee(monkeypatch, blocks: int):
    """``--set six-three`` cut to one (3, 2, 0.6) run of ``blocks`` blocks of jobs."""
    from forkjoin_sim.run import BLOCK_JOBS
    from validation import estimators as harness

    monkeypatch.setattr(harness, "cassandra_configs", lambda: [(3, 2, 0.6)])
    monkeypatch.setattr(harness, "long_jobs", lambda *_, **__: blocks * BLOCK_JOBS)
    return blocks * BLOCK_JOBS


@pytest.mark.parametrize("workers", ["1", "2"])
def test_referee_progress_moves_within_a_run(tmp_path, monkeypatch, workers):
    """One long run was one silent step of the bar (minutes that looked hung); the
    bar now counts its jobs as each block is simulated, in this process or a pool's."""
    import contextlib

    from forkjoin_sim import run
    from forkjoin_sim.run import BLOCK_JOBS
    from validation import estimators as harness

    jobs = _short_referee(monkeypatch, blocks=6)
    monkeypatch.setattr(harness, "PROGRESS_POLL_SECONDS", 0.002)
    bars, updates = [], []

    class Bar:
        update = staticmethod(updates.append)

    def spy(total, desc, unit, show=True, **options):
        if desc == "simulate":  # run_path's own bar, never shown here
            return contextlib.nullcontext(run._NoBar())
        bars.append((total, desc, unit, show))
        return contextlib.nullcontext(Bar())

    monkeypatch.setattr(run, "progress_bar", spy)
    out = tmp_path / "referee.csv"
    assert main(["estimators", "referee", "--set", "six-three", "--out", str(out),
                 "--workers", workers]) == 0
    assert bars == [(jobs, "referee six-three", "job", True)]
    assert sum(updates) == jobs and all(u % BLOCK_JOBS == 0 for u in updates)
    if workers == "1":
        assert updates == [BLOCK_JOBS] * 6  # each block as it is done
    # with a pool, how often the parent looks in is timing: see the test below


def test_a_pool_run_is_counted_while_it_runs(monkeypatch):
    """The parent passes on the workers' count of jobs while a run is still going:
    the fake run below does one block, then waits until the parent has told the bar
    of it before doing the second (threads stand in for the pool's processes, so
    the order is fixed, not a matter of timing)."""
    import contextlib
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from forkjoin_sim.sweep import runner
    from validation import estimators as harness

    told = threading.Event()
    updates = []

    def run(*task, on_jobs=None):
        on_jobs(100)
        assert told.wait(timeout=60), "the parent never passed on the first block"
        on_jobs(100)
        return [{"task": task}]

    @contextlib.contextmanager
    def pool(workers, initializer, initargs):
        with ThreadPoolExecutor(workers, initializer=initializer,
                                initargs=initargs) as executor:
            yield executor

    def on_jobs(count):
        updates.append(count)
        told.set()

    monkeypatch.setattr(harness, "_jobs_done", None)  # restored after the test
    monkeypatch.setattr(harness, "quorum_sweep", run)
    monkeypatch.setattr(harness, "PROGRESS_POLL_SECONDS", 0.001)
    monkeypatch.setattr(runner, "process_pool", pool)
    rows = harness._pool_rows([(3, 2, 0.5, 200, 0)], 1, on_jobs)
    assert rows == [{"task": (3, 2, 0.5, 200, 0)}]
    assert updates == [100, 100]


def test_referee_bar_draws_on_a_terminal_unless_quiet(tmp_path, monkeypatch, capsys):
    from forkjoin_sim import run

    _short_referee(monkeypatch, blocks=2)
    monkeypatch.setattr(run, "PROGRESS_DELAY", 0)
    out = str(tmp_path / "referee.csv")
    argv = ["estimators", "referee", "--set", "six-three", "--out", out, "--workers", "1"]
    # standard error here is no terminal: no bar
    assert main(argv) == 0
    assert capsys.readouterr().err == f"wrote 2 rows to {out}\n"
    monkeypatch.setenv(run.PROGRESS_ENV, "1")  # as a terminal would
    assert main(argv) == 0
    assert "referee six-three" in capsys.readouterr().err
    assert main([*argv, "--quiet"]) == 0
    assert capsys.readouterr().err == f"wrote 2 rows to {out}\n"
