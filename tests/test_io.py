"""Result files are replaced whole or not at all, with ordinary permissions."""

import os
from pathlib import Path
import stat

import pytest

from forkjoin_sim.files.io import atomic_save, atomic_write


def test_a_failed_write_leaves_the_old_file_and_no_debris(tmp_path):
    target = tmp_path / "out.csv"
    target.write_text("old\n")
    with pytest.raises(RuntimeError):
        with atomic_write(target) as handle:
            handle.write("half a ro")
            raise RuntimeError("interrupted")
    assert target.read_text() == "old\n"
    assert os.listdir(tmp_path) == ["out.csv"]


def test_a_successful_write_replaces_the_file_with_umask_permissions(tmp_path):
    target = tmp_path / "sub" / "out.csv"
    with atomic_write(target) as handle:
        handle.write("new\n")
    assert target.read_text() == "new\n"
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~mask


def test_atomic_save_with_a_saver_function(tmp_path):
    target = tmp_path / "fig.png"
    atomic_save(target, lambda path: open(path, "wb").write(b"\x89PNG"))
    assert target.read_bytes() == b"\x89PNG"
    with pytest.raises(ValueError):
        atomic_save(target, lambda path: (_ for _ in ()).throw(ValueError("bad")))
    assert target.read_bytes() == b"\x89PNG" and len(os.listdir(tmp_path)) == 1


def test_a_group_commits_every_file_together(tmp_path):
    from forkjoin_sim.files.io import atomic_group

    with atomic_group() as group:
        with group.open(tmp_path / "a.csv") as handle:
            handle.write("a\n")
        group.save(tmp_path / "b.txt", lambda tmp: open(tmp, "w").write("b\n"))
        # Nothing is visible under the final names before the group ends.
        assert not (tmp_path / "a.csv").exists() and not (tmp_path / "b.txt").exists()
    assert (tmp_path / "a.csv").read_text() == "a\n"
    assert (tmp_path / "b.txt").read_text() == "b\n"
    assert sorted(os.listdir(tmp_path)) == ["a.csv", "b.txt"]


def test_a_failed_group_changes_no_file_and_leaves_no_debris(tmp_path):
    from forkjoin_sim.files.io import atomic_group

    (tmp_path / "a.csv").write_text("old a\n")
    (tmp_path / "b.png").write_text("old b\n")
    with pytest.raises(KeyboardInterrupt):
        with atomic_group() as group:
            with group.open(tmp_path / "a.csv") as handle:
                handle.write("new a\n")
            raise KeyboardInterrupt  # e.g. Ctrl-C while the figure is drawn
    assert (tmp_path / "a.csv").read_text() == "old a\n"
    assert (tmp_path / "b.png").read_text() == "old b\n"
    assert sorted(os.listdir(tmp_path)) == ["a.csv", "b.png"]


def test_json_text_is_strict_json():
    import json

    import numpy as np

    from forkjoin_sim.files.io import json_text

    value = {"mean": float("nan"), "high": float("inf"), "n": np.int64(3),
             "p": np.float32(0.5), "rows": (1, np.array([2.0, np.nan]))}
    text = json_text(value)
    assert json.loads(text, parse_constant=lambda c: pytest.fail(c)) == {
        "mean": None, "high": None, "n": 3, "p": 0.5, "rows": [1, [2.0, None]]}


def test_a_pipe_given_as_a_toml_or_measurement_file_is_refused_not_read(tmp_path):
    import os

    from forkjoin_sim.errors import ConfigError
    from forkjoin_sim.files.io import read_toml
    from sizing.measurements import read_measurements

    fifo = tmp_path / "model.fifo"
    os.mkfifo(fifo)  # nobody writes: opening it would wait for ever
    with pytest.raises(ConfigError, match="not a regular file"):
        read_toml(fifo, "model file", "write one")
    with pytest.raises(ConfigError, match="not a regular file"):
        read_measurements(str(fifo), replicas=3)


def test_an_interrupted_write_leaves_the_old_file_and_no_debris(tmp_path):
    target = tmp_path / "out.csv"
    target.write_text("old\n")
    with pytest.raises(KeyboardInterrupt):  # Ctrl-C, or SIGTERM through the CLI
        with atomic_write(target) as handle:
            handle.write("half a ro")
            raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        atomic_save(tmp_path / "fig.png", lambda tmp: (_ for _ in ()).throw(
            KeyboardInterrupt))
    assert os.listdir(tmp_path) == ["out.csv"] and target.read_text() == "old\n"


@pytest.mark.skipif(not hasattr(os, "kill") or os.name != "posix", reason="POSIX signals")
def test_a_signal_during_the_renames_waits_for_their_end_even_with_other_threads():
    import signal
    import threading
    import time

    from forkjoin_sim.files.io import _signals_held

    events = []
    previous = signal.signal(signal.SIGTERM, lambda *_: events.append("signal"))
    # A thread that does not block the signal: the kernel hands it the signal, and
    # Python runs the handler in the main thread at once unless the handler is held.
    other = threading.Thread(target=time.sleep, args=(2.0,))
    other.start()
    try:
        with _signals_held():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.5)
            events.append("renamed")
        events.append("after")
    finally:
        signal.signal(signal.SIGTERM, previous)
        other.join()
    assert events == ["renamed", "signal", "after"]


def test_an_output_that_is_a_link_updates_the_file_it_points_to(tmp_path):
    from forkjoin_sim.files.io import atomic_group, atomic_save, atomic_write

    target = tmp_path / "real.csv"
    target.write_text("old\n")
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    with atomic_write(link) as handle:
        handle.write("new\n")
    assert link.is_symlink() and target.read_text() == "new\n"
    atomic_save(link, lambda name: Path(name).write_text("saved\n"))
    assert link.is_symlink() and target.read_text() == "saved\n"
    with atomic_group() as group:
        with group.open(link) as handle:
            handle.write("grouped\n")
    assert link.is_symlink() and target.read_text() == "grouped\n"


def test_a_parquet_file_without_pyarrow_is_refused_before_any_work(monkeypatch):
    """One check for every command that writes parquet: without pyarrow it says what
    to install, or to write a .csv; other suffixes, and parquet with pyarrow, pass."""
    import importlib.util

    from forkjoin_sim.errors import ConfigError
    from forkjoin_sim.files.io import check_parquet_writer

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "pyarrow" else real(name, *a))
    with pytest.raises(ConfigError, match=r"writing out\.PARQUET needs pyarrow "
                                          r"\(pip install pyarrow\); or write a \.csv"):
        check_parquet_writer("out.PARQUET")
    check_parquet_writer("out.csv")
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: object())
    check_parquet_writer("out.parquet")


def test_toml_text_spells_values_as_a_toml_file_does():
    from forkjoin_sim.files.io import toml_text

    assert [toml_text(v) for v in (True, False, "x", 3, 0.5, [1, "a"], {"k": True})] == \
        ["true", "false", '"x"', "3", "0.5", '[1, "a"]', "{k = true}"]
