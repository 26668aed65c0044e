"""The validation layer: typed options refuse what is not meant, checks run before work."""

import argparse
import os
import socket

import pytest
from hypothesis import given, strategies as st

from forkjoin_sim import checks as options
from forkjoin_cli import types
from forkjoin_sim.errors import ConfigError


@pytest.mark.parametrize("text", ["1e12", "1.0", "True", "²", "١٢", "1_000", "", " ",
                                  "0x10", "nan", "--3"])
def test_whole_numbers_are_ascii_digits_only(text):
    with pytest.raises(argparse.ArgumentTypeError, match="not a whole number"):
        types.whole()(text)


@given(st.integers(-10**30, 10**30))
def test_every_written_whole_number_reads_back(value):
    assert types.whole()(str(value)) == value


@pytest.mark.parametrize("text", ["1_000", "\uff11", "\u0661", "\u00b2", "x", ""])
def test_plain_float_refuses_what_only_python_reads(text):
    with pytest.raises(ValueError):
        options.plain_float(text)


@given(st.floats(allow_nan=False))
def test_plain_float_reads_every_written_float(value):
    assert options.plain_float(repr(value)) == value


@pytest.mark.parametrize("convert", [types.real_list(what="--x"),
                                     types.whole_list(what="--x")])
def test_list_options_refuse_a_repeated_value(convert):
    assert convert("3,1,2") == [3, 1, 2]
    with pytest.raises(argparse.ArgumentTypeError, match="gives 1 more than once"):
        convert("1,2,1")


def test_whole_numbers_outside_the_bounds_say_the_bound():
    convert = types.count(100, "--jobs")
    assert convert("100") == 100
    with pytest.raises(argparse.ArgumentTypeError, match="at least 1"):
        convert("0")
    with pytest.raises(argparse.ArgumentTypeError, match="limit 100"):
        convert("101")


def test_seeds_are_non_negative_and_below_2_to_the_63():
    assert types.seed(str(2**63 - 1)) == 2**63 - 1
    for bad in ("-1", str(2**63)):
        with pytest.raises(argparse.ArgumentTypeError):
            types.seed(bad)


@pytest.mark.parametrize("text", ["nan", "inf", "-inf", "1e400", "0x1p3", "one", "",
                                  "1,5", "True"])
def test_reals_are_finite_decimal_numbers(text):
    with pytest.raises(argparse.ArgumentTypeError):
        types.real()(text)


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_every_finite_float_reads_back(value):
    assert types.real()(repr(value)) == value


def test_real_ranges_open_and_closed():
    assert types.fraction("0") == 0.0 and types.fraction("1") == 1.0
    with pytest.raises(argparse.ArgumentTypeError, match="> 0"):
        types.positive_real("0")
    with pytest.raises(argparse.ArgumentTypeError, match="< 100"):
        types.percentile("100")


def test_lists_refuse_empty_items_and_unknown_names():
    assert types.real_list(0, low_open=True)("0.5, 2") == [0.5, 2.0]
    for bad in ("", "0.5,,2", "0.5,"):
        with pytest.raises(argparse.ArgumentTypeError, match="empty item"):
            types.real_list()(bad)
    levels = types.choice_list(("ONE", "QUORUM", "ALL"), "--levels")
    assert levels("one,ALL") == ["ONE", "ALL"]
    for bad, message in (("a", "unknown 'a'"), ("", "empty item"),
                         ("ONE,one", "twice")):
        with pytest.raises(argparse.ArgumentTypeError, match=message):
            levels(bad)


def test_python_values_refuse_bools_and_non_finite_numbers():
    assert options.check_whole(3, "jobs", 1) == 3
    for bad in (True, 2.0, "3"):
        with pytest.raises(ConfigError):
            options.check_whole(bad, "jobs")
    for bad in (True, float("nan"), float("inf"), "1.0"):
        with pytest.raises(ConfigError):
            options.check_real(bad, "load")


def test_input_files_must_exist_be_files_and_be_utf8(tmp_path):
    good = tmp_path / "good.txt"
    good.write_text("1.5\n2.5\n", encoding="utf-8")
    assert types.input_file(str(good)) == str(good)
    latin = tmp_path / "latin.csv"
    latin.write_bytes("x\n1.5\ncafé\n".encode("latin-1"))
    cut = tmp_path / "cut.txt"
    cut.write_bytes("é".encode()[:1])
    for path, message in ((tmp_path / "none", "does not exist"), (tmp_path, "directory"),
                          (latin, "byte 9"), (cut, "ends inside")):
        with pytest.raises(ConfigError, match=message):
            options.check_input_file(path)


def test_output_files_are_checked_before_any_work(tmp_path):
    a_file = tmp_path / "file"
    a_file.write_text("x")
    assert options.check_output_file(tmp_path / "new" / "out.csv") == tmp_path / "new" / "out.csv"
    for path, message in ((tmp_path, "is a directory"),
                          (a_file / "out.csv", "which is a file"),
                          (tmp_path / "out.txt", "must end in .csv")):
        with pytest.raises(ConfigError, match=message):
            options.check_output_file(path, suffixes=[".csv"])
    assert os.listdir(tmp_path) == ["file"]  # nothing created by a check
    # a directory given for a figure: the example names a figure, not a table
    with pytest.raises(ConfigError, match="e.g. .*results.png"):
        options.check_output_file(tmp_path, "--figure", suffixes=(".png",))


def test_a_trailing_slash_names_a_directory_and_is_refused(tmp_path):
    """pathlib drops a trailing '/', so "out.csv/" was taken for the file out.csv and
    replaced it; it names a directory, and the message says what to give instead."""
    existing = tmp_path / "out.csv"
    existing.write_text("keep")
    with pytest.raises(ConfigError, match=r"--out .*out.csv/ ends with '/', so it names "
                                          r"a directory, not a file; give a file name, "
                                          r"e.g. .*out.csv$"):
        options.check_output_file(f"{existing}/", "--out", suffixes=(".csv",))
    with pytest.raises(ConfigError, match=r"e.g. .*new/results.png$"):
        options.check_output_file(f"{tmp_path}/new/", "--figure", suffixes=(".png",))
    with pytest.raises(ConfigError, match="ends with '/'"):
        options.check_output_file(f"{tmp_path}/")  # a directory that exists, too
    assert existing.read_text() == "keep" and sorted(os.listdir(tmp_path)) == ["out.csv"]


@pytest.mark.parametrize("command", [
    ["timeouts", "--nodes", "6", "--replicas", "3", "--quorum", "2", "--jobs", "5000",
     "--sim-jobs", "5000", "--loads", "0.6", "--timeouts", "2", "--out"],
    ["sweep", "SPEC", "--workers", "1", "--out"]])
def test_an_output_with_a_trailing_slash_leaves_the_file_alone(command, tmp_path,
                                                               capsys):
    """The probe's commands: `timeouts ... --out to.csv/` and `sweep sw.toml --out
    sw.csv/` exited 0 and replaced to.csv / sw.csv; now they are refused up front."""
    from forkjoin_cli.main import main

    spec = tmp_path / "sw.toml"
    spec.write_text("nodes = 6\nreplicas = 3\nquorum = 2\nrho = 0.3\njobs = 2000\n")
    existing = tmp_path / "out.csv"
    existing.write_text("keep")
    argv = [str(spec) if word == "SPEC" else word for word in command]
    assert main(argv + [f"{existing}/"]) == 2
    err = capsys.readouterr().err
    assert f"--out {existing}/ ends with '/', so it names a directory" in err
    assert len(err.strip().splitlines()) == 1
    assert existing.read_text() == "keep"


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_a_read_only_directory_is_refused(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    with pytest.raises(ConfigError, match="not writable"):
        options.check_output_file(locked / "out.csv")


def test_output_directories(tmp_path):
    a_file = tmp_path / "file"
    a_file.write_text("x")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "fig2.csv").mkdir()
    assert options.check_output_dir(tmp_path / "new" / "deeper") == tmp_path / "new" / "deeper"
    with pytest.raises(ConfigError, match="is a file"):
        options.check_output_dir(a_file)
    with pytest.raises(ConfigError, match="which is a file"):
        options.check_output_dir(a_file / "sub")
    with pytest.raises(ConfigError, match="fig2.csv is a directory"):
        options.check_output_dir(tmp_path / "out", ["fig2.csv"])


def test_a_run_larger_than_memory_is_refused_with_the_estimate():
    free = options.available_memory()
    assert free is not None and free > 0
    with pytest.raises(ConfigError, match="of memory"):
        options.check_jobs_fit(10**15)
    assert options.check_jobs_fit(1000) == 1000


def test_an_unreachable_dask_scheduler_is_refused_quickly():
    with socket.socket() as server:  # a port that is surely closed: bound, not listening
        server.bind(("127.0.0.1", 0))
        port = server.getsockname()[1]
        with pytest.raises(ConfigError, match="cannot reach"):
            options.check_reachable(f"tcp://127.0.0.1:{port}", timeout=2)
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        options.check_reachable(f"tcp://127.0.0.1:{server.getsockname()[1]}", timeout=2)
    options.check_reachable("inproc://192.0.2.2/1/1")  # not TCP: nothing to try
    for bad in ("nowhere", "tcp://x", "tcp://h:99999"):
        with pytest.raises(ConfigError):
            options.check_reachable(bad)


def test_warnings_of_a_failed_block_are_dropped(capsys):
    import warnings

    with pytest.raises(ConfigError):
        with options.warnings_after_success():
            warnings.warn("overflow in exp", RuntimeWarning)
            raise ConfigError("bad input")
    assert capsys.readouterr().err == ""
    with options.warnings_after_success():
        warnings.warn("heavy tail:\n  the mean converges slowly", UserWarning)
        warnings.warn("heavy tail:\n  the mean converges slowly", UserWarning)
    # one line each, without the source line Python would print, repeats once
    assert capsys.readouterr().err == ("warning: heavy tail: the mean converges "
                                       "slowly\n")


def test_a_port_that_answers_but_is_not_a_dask_scheduler_is_refused():
    # A service that answers TCP with something else (here: bytes that read as a huge
    # frame length) must give one line, not a MemoryError traceback from the client.
    import contextlib
    import threading

    pytest.importorskip("distributed")
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()

        def answer():
            connection, _ = server.accept()
            with connection, contextlib.suppress(OSError):
                connection.sendall(b"\xff" * 64)
                connection.recv(1024)

        threading.Thread(target=answer, daemon=True).start()
        with pytest.raises(ConfigError, match="no Dask scheduler answered"):
            options.check_scheduler(f"tcp://127.0.0.1:{server.getsockname()[1]}",
                                    timeout=1)
    with pytest.raises(ConfigError, match="cannot be reached from a command line"):
        options.check_scheduler("inproc://192.0.2.2/1/1")
    options.check_scheduler("local")  # started by the sweep itself


def test_an_output_that_is_one_of_the_inputs_is_refused(tmp_path, monkeypatch):
    source = tmp_path / "rows.csv"
    source.write_text("a\n1\n")
    monkeypatch.chdir(tmp_path)
    for spelling in (source, "rows.csv", "./rows.csv", tmp_path / "." / "rows.csv"):
        with pytest.raises(ConfigError, match="is also the input"):
            options.check_output_file(spelling, "--out", inputs=(str(source),))
    options.check_output_file(tmp_path / "out.csv", "--out", inputs=(str(source), None))
    assert source.read_text() == "a\n1\n"


def test_outputs_the_file_system_would_refuse_after_the_run_are_refused_now(tmp_path):
    with pytest.raises(ConfigError, match="longer than this file system allows"):
        options.check_output_file(tmp_path / ("x" * 250 + ".csv"), "--out")
    with pytest.raises(ConfigError, match="longer than this file system allows"):
        options.check_output_file(tmp_path / ("d" * 250) / "out.csv", "--out")
    if os.path.isdir("/sys/kernel"):  # root may "write" there by os.access, yet cannot
        with pytest.raises(ConfigError, match="(cannot create a file in|directory) /sys"):
            options.check_output_file("/sys/kernel/results.csv", "--out")
    if os.path.isdir("/proc/self"):
        with pytest.raises(ConfigError, match="(cannot create a file in|directory) /proc"):
            options.check_output_file("/proc/self/results.csv", "--out")
    options.check_output_file(tmp_path / ("y" * 200 + ".csv"), "--out")
    assert not list(tmp_path.iterdir())  # the probe leaves nothing behind


def test_a_name_the_system_cannot_look_up_is_one_line(tmp_path):
    long = tmp_path / ("n" * 300)  # stat() itself fails: ENAMETOOLONG
    with pytest.raises(ConfigError, match="File name too long"):
        options.check_output_file(str(long) + ".csv", "--out")
    with pytest.raises(ConfigError, match="File name too long"):
        options.check_output_dir(long, ("fig2.csv",), "--out")


def test_inputs_nested_or_named_beyond_what_the_system_reads_are_one_line(tmp_path):
    from forkjoin_sim.laws.empirical import Empirical
    from forkjoin_sim.files.io import read_toml

    deep = tmp_path / "deep.toml"
    deep.write_text("x = " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(ConfigError, match="nests arrays or tables too deeply"):
        read_toml(deep, "sweep spec", "write one")
    long_name = str(tmp_path / ("a" * 5000))
    for check in (lambda: options.check_input_file(long_name, "sweep spec"),
                  lambda: Empirical.from_file(long_name)):
        with pytest.raises(ConfigError, match="File name too long; choose a shorter") \
                as info:
            check()
        assert len(str(info.value)) < 200


def test_values_of_any_length_give_a_short_line():
    from forkjoin_sim.errors import LONGEST_WORD

    with pytest.raises(argparse.ArgumentTypeError, match="has 5,000 digits"):
        types.whole(what="--jobs")("1" * 5000)
    message = str(ConfigError("service " + "x" * 10**6 + " is unknown; use exp"))
    assert len(message) < 2 * LONGEST_WORD and message.endswith("is unknown; use exp")
    assert "(999,880 characters)" in message
    short = "quorum k=4 exceeds replicas r=3; use 1 <= k <= r"
    assert str(ConfigError(short)) == short
