"""The ``forkjoin-sim`` command: JSON contract and one-line errors with status 2."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from forkjoin_cli.main import main

SIMULATE = ["simulate", "--nodes", "5", "--replicas", "3", "--quorum", "2",
            "--rho", "0.8", "--jobs", "20000", "--seed", "3"]


def test_simulate_json_contract(capsys):
    assert main(SIMULATE + ["--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("mean", "ci_low", "ci_high", "p50", "p95", "p99", "jobs_measured",
                "engine", "seconds"):
        assert key in out
    assert out["ci_low"] < out["mean"] < out["ci_high"]
    assert out["jobs_measured"] == 18_000 and out["engine"] == "fast"


def test_simulate_engines_agree_through_the_cli(capsys):
    main(SIMULATE + ["--json", "--service", "lognormal:0.8", "--placement", "ring"])
    fast = json.loads(capsys.readouterr().out)
    main(SIMULATE + ["--json", "--service", "lognormal:0.8", "--placement", "ring",
                     "--engine", "simpy"])
    reference = json.loads(capsys.readouterr().out)
    assert reference["mean"] == pytest.approx(fast["mean"], rel=1e-9)


def test_mu_scales_parametric_service(capsys):
    main(SIMULATE + ["--json", "--mu", "4"])
    fast = json.loads(capsys.readouterr().out)
    main(SIMULATE + ["--json"])
    slow = json.loads(capsys.readouterr().out)
    # Same seed, service times scaled by 1/4 and arrivals by 1/4: sojourns scale too.
    assert fast["mean"] == pytest.approx(slow["mean"] / 4, rel=1e-9)


def test_human_report_mentions_the_ci(capsys):
    assert main(SIMULATE) == 0
    assert "95% CI" in capsys.readouterr().out


@pytest.mark.parametrize("change,fragment", [
    (["--replicas", "7"], "replicas r=7"),
    (["--quorum", "4"], "quorum k=4"),
    (["--rho", "2.0"], "unstable load"),
    (["--service", "nonsense:1"], "nonsense"),
    (["--warmup", "soon"], "--warmup"),
    (["--nodes", "five"], "--nodes"),
    (["--workers", "2"], "--workers sets the fused engine's threads"),
    # a value starting like a negative number is read as a value by every command,
    # so its converter names what is wrong (argparse said "expected one argument")
    (["--rho", "-1,2"], "--rho '-1,2' is not a number"),
    (["--speeds", "-1,2"], "speeds '-1,2' gives 2 factor(s) for 5 nodes; give one per "
                           "node (1,1,1,1,0.5)"),
])
def test_bad_input_is_one_line_and_status_2(change, fragment):
    argv = list(SIMULATE)
    if change[0] in argv:
        argv[argv.index(change[0]) + 1] = change[1]
    else:
        argv += change
    proc = subprocess.run([sys.executable, "-m", "forkjoin_cli.main", *argv],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""


@pytest.mark.parametrize("change,fragment", [
    (["--rho", "5e-324"], "too small to simulate"),
    # 20,000 jobs a 1e13 time units apart: the clock resolves 0.04, services are ~1
    (["--rho", "1e-13"], "too coarse for service times"),
    (["--sample-every", "19999"], "would be measured"),
    (["--warmup", "0.99999", "--engine", "simpy"], "would be measured"),
])
def test_hopeless_runs_are_refused_before_any_job_runs(change, fragment):
    argv = list(SIMULATE)
    for option, value in zip(change[::2], change[1::2]):
        if option in argv:
            argv[argv.index(option) + 1] = value
        else:
            argv += [option, value]
    proc = subprocess.run([sys.executable, "-m", "forkjoin_cli.main", *argv],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    # nothing else on stderr, not even a progress bar cleared before the error
    assert proc.stderr.count("\n") == 1 and "\r" not in proc.stderr, repr(proc.stderr)
    assert fragment in proc.stderr


def _every_option():
    """(command, its parser, option) for every option of every command."""
    import argparse

    from forkjoin_cli.main import build_parser

    def walk(parser, name):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub, child in action.choices.items():
                    yield from walk(child, f"{name} {sub}")
            elif action.option_strings:
                yield name, parser, action

    yield from walk(build_parser(every=True), "forkjoin-sim")


def test_every_option_of_every_command_says_what_it_is():
    """--help explains every option: none is listed bare."""
    bare = [f"{name} {action.option_strings[-1]}"
            for name, _, action in _every_option() if not action.help]
    assert bare == []


def test_every_option_with_a_default_value_shows_it_in_the_help():
    """An option that takes a value when it is not given says which, as the user
    would write it (a list as 1,2, not ['1', '2'])."""
    import argparse

    silent = []
    for name, parser, action in _every_option():
        if (action.default is None or action.default is argparse.SUPPRESS
                or isinstance(action.default, bool)):
            continue
        text = parser._get_formatter()._format_action(action)
        if "default" not in text or "[" in text.split("default")[-1]:
            silent.append(f"{name} {action.option_strings[-1]}: {text.strip()}")
    assert silent == []


def test_the_cli_and_the_model_share_one_cluster_limit():
    from forkjoin_sim import system
    from forkjoin_cli import main as cli
    from forkjoin_sim.errors import ConfigError
    from forkjoin_sim.model import ForkJoinModel

    assert cli.MAX_NODES == system.MAX_NODES
    with pytest.raises(ConfigError, match="more than 1,000,000"):
        ForkJoinModel(system.MAX_NODES + 1, 3, 2, load=0.9)


def test_unwritable_standard_output_is_one_line_not_a_traceback():
    import os

    command = [sys.executable, "-m", "forkjoin_cli.main", *SIMULATE, "--json"]
    if os.path.exists("/dev/full"):
        with open("/dev/full", "w") as full:
            proc = subprocess.run(command, stdout=full, stderr=subprocess.PIPE, text=True)
        assert proc.returncode == 1
        assert proc.stderr.count("\n") == 1 and "cannot write the output" in proc.stderr
    # a reader that leaves at once (| true): quiet, no traceback
    reader = subprocess.Popen(["true"], stdin=subprocess.PIPE)
    proc = subprocess.run(command, stdout=reader.stdin, stderr=subprocess.PIPE, text=True)
    reader.wait()
    assert "Traceback" not in proc.stderr and "Exception" not in proc.stderr


def test_the_python_api_refuses_what_the_cli_refuses():
    import forkjoin_sim as fj
    from forkjoin_sim.errors import ConfigError

    model = fj.ForkJoinModel(6, 3, 2, load=0.9)
    # engine=None is the default (auto); a name that is no engine is refused
    for kwargs, message in ((dict(jobs=10**15, engine="fast"), "memory"),
                            (dict(engine=3), "engine"),
                            (dict(engine="warp"), "fast, simpy, fused")):
        with pytest.raises(ConfigError, match=message):
            fj.simulate(model, **kwargs)
    with pytest.raises(ConfigError, match="too large"):
        fj.Poisson(10**400)


def _closing(streams: str, command: list[str], **kwargs):
    """Run ``command`` with the given standard streams closed (``>&-``, ``2>&-``)."""
    return subprocess.run(["sh", "-c", f'exec "$@" {streams}', "sh", *command],
                          capture_output=True, text=True, timeout=120, **kwargs)


TIMEOUTS = [sys.executable, "-m", "forkjoin_cli.main", "timeouts", "--nodes", "6",
            "--replicas", "3", "--quorum", "2", "--loads", "0.5", "--timeouts", "1,2",
            "--basic", "independent", "--sim-jobs", "2000"]


def test_closed_standard_output_is_refused_before_the_work_unless_there_is_out(tmp_path):
    # 5*10^7 jobs take a while; the refusal comes first, and without progress output
    proc = _closing(">&-", [sys.executable, "-m", "forkjoin_cli.main", *SIMULATE[:-4],
                            "--jobs", "50000000"])
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        "forkjoin-sim simulate: error: standard output is closed; give --out FILE or "
        "open it (e.g. >/dev/null)"]
    proc = _closing(">&-", TIMEOUTS)  # its table would go to standard output
    assert proc.returncode == 2 and "standard output is closed" in proc.stderr
    assert "Traceback" not in proc.stderr
    # with --out the result has somewhere to go: the work is done, nothing is lost
    out = tmp_path / "t.csv"
    proc = _closing(">&-", TIMEOUTS + ["--out", str(out)])
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(out.read_text().splitlines()) == 3  # header and the two timeouts


def test_a_numba_setting_it_refuses_is_one_line_naming_the_variable():
    import os

    proc = subprocess.run([sys.executable, "-m", "forkjoin_cli.main", *SIMULATE],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "NUMBA_NUM_THREADS": "0"})
    assert proc.returncode == 2
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and "NUMBA_NUM_THREADS='0'" in lines[0], proc.stderr
    assert "fix or unset the variable" in lines[0] and proc.stdout == ""


# A command standing in for any that writes its files: the signal arrives while the
# temporary files exist, as it does for fig2 in its write phase.
_INTERRUPTED_WRITER = """
import os, signal, sys, time
# as started from a terminal: a test runner under nohup hands down an ignored SIGHUP,
# which the command rightly keeps ignoring (main._stop_signals_interrupt)
signal.signal(signal.SIGHUP, signal.SIG_DFL)
signal.signal(signal.SIGTERM, signal.SIG_DFL)
from forkjoin_cli import main as cli
from forkjoin_cli import simulate as command
from forkjoin_sim.files.io import atomic_group, atomic_write

def writer(args):
    out = sys.argv[2]
    if sys.argv[3] == "group":
        with atomic_group() as group:
            with group.open(os.path.join(out, "table.csv")) as handle:
                handle.write("half a ta")
            group.save(os.path.join(out, "figure.png"), lambda tmp: None)
            os.kill(os.getpid(), getattr(signal, sys.argv[1]))
            time.sleep(30)
    else:
        with atomic_write(os.path.join(out, "table.csv")) as handle:
            handle.write("half a ta")
            os.kill(os.getpid(), getattr(signal, sys.argv[1]))
            time.sleep(30)
    return 0

command._cmd_simulate = writer
sys.exit(cli.main(["simulate", "--nodes", "3", "--replicas", "2", "--quorum", "1",
                   "--rho", "0.5"]))
"""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("name,status,writer", [("SIGTERM", 143, "file"),
                                                ("SIGHUP", 129, "group"),
                                                ("SIGTERM", 143, "group")])
def test_sigterm_and_sighup_stop_like_ctrl_c_and_leave_no_temporary_file(
        tmp_path, name, status, writer):
    import os

    old = tmp_path / "table.csv"
    old.write_text("old\n")
    proc = subprocess.run([sys.executable, "-c", _INTERRUPTED_WRITER, name,
                           str(tmp_path), writer],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == status
    assert proc.stderr.splitlines() == [f"forkjoin-sim simulate: interrupted by {name}"]
    assert os.listdir(tmp_path) == ["table.csv"] and old.read_text() == "old\n"


def test_version_names_the_installed_package(capsys):
    from importlib.metadata import version

    try:
        code = main(["--version"])
    except SystemExit as exc:
        code = exc.code
    assert code == 0
    assert capsys.readouterr().out.strip() == f"forkjoin-sim {version('forkjoin-sim')}"


@pytest.mark.parametrize("argv, fragment", [
    ([], "give a command: one of simulate, mix,"),
    (["cassandra"], "give a command: one of predict, calibrate, simulate, validate"),
    (["estimators"], "give a command: one of referee, accuracy, figure"),
    (["simulate", "--nodes", "3", "--replicas", "3", "--quorum", "2", "--rho", "0.5",
      "--service", ":"], "service ':' names no law; write one, e.g. exp"),
])
def test_a_missing_command_or_law_is_named_as_the_user_would(capsys, argv, fragment):
    """argparse named a missing subcommand by its internal destination
    ("cassandra_command"), and an empty law name read "write  alone or :VALUE"."""
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and fragment in err[0]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_stops_a_long_fused_run_on_several_threads_within_a_chunk():
    """Two replications of 50 billion jobs on two threads (days of work): Ctrl-C ends
    the run within a chunk (about a second) with status 130; before, the waiting
    thread stopped but the command waited for both replications to finish. The
    signal is sent once the progress bar shows jobs done, to a command started with
    SIGINT's default disposition: a suite run as a background job (SIGINT ignored,
    which the command then keeps ignoring) timed out here three times in five."""
    import os
    import signal
    import threading
    import time

    executable = str(Path(sys.executable).with_name("forkjoin-sim"))
    command = [executable, "simulate", "--nodes", "3", "--replicas", "3", "--quorum",
               "2", "--rho", "0.5", "--jobs", "100000000000", "--engine", "fused",
               "--replications", "2", "--workers", "2"]
    # as from a terminal: a suite started as a background job ignores SIGINT, and a
    # command started so keeps ignoring it (nohup's rule, on purpose), so the
    # command is started with the default disposition (exec keeps it)
    start = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
             "os.execv(sys.argv[1], sys.argv[1:])")
    proc = subprocess.Popen([sys.executable, "-c", start, *command],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=dict(os.environ, FORKJOIN_SIM_PROGRESS="1"))
    chunks, running = [], threading.Event()

    def read():
        while data := proc.stderr.read1(4096):
            chunks.append(data)
            if b"job/s" in b"".join(chunks[-2:]):
                running.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert running.wait(600), "the run never showed jobs done"
        os.kill(proc.pid, signal.SIGINT)
        sent = time.monotonic()
        proc.wait(timeout=90)
        stopped = time.monotonic() - sent
    finally:
        proc.kill()
    reader.join(10)
    assert stopped < 60
    assert proc.returncode == 130 and b"interrupted" in b"".join(chunks)


def test_simulate_json_has_the_same_throughput_keys_however_short_the_run(capsys):
    """A run too short to measure its throughput says null, not nothing: scripts read
    one schema."""
    keys = []
    for jobs in ("2", "2000"):
        assert main(["simulate", "--nodes", "3", "--replicas", "3", "--quorum", "2",
                     "--rho", "0.5", "--jobs", jobs, "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        keys.append({k for k in out if k.startswith("throughput")})
    assert keys[0] == keys[1] == {"throughput", "throughput_ci_low", "throughput_ci_high"}


def _parsers(parser, path=()):
    """(words that reach it, parser) of every parser below ``parser``."""
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield (*path, name), sub
                yield from _parsers(sub, (*path, name))


def _abbreviations(parser):
    """Each shortest ``--x`` that begins two or more of ``parser``'s options, with
    the options it begins."""
    options = sorted(o for o in parser._option_string_actions if o.startswith("--"))
    for prefix in sorted({o[:3] for o in options}):
        begun = [o for o in options if o.startswith(prefix)]
        if len(begun) > 1:
            yield prefix, begun


def test_an_abbreviation_of_several_options_names_them_all_in_every_command(capsys):
    from forkjoin_cli.main import build_parser

    checked = 0
    for path, parser in [((), build_parser(every=True)),
                         *_parsers(build_parser(every=True))]:
        for prefix, begun in _abbreviations(parser):
            assert main([*path, prefix, "1"]) == 2
            err = capsys.readouterr().err
            assert err.count("\n") == 1 and "Traceback" not in err
            assert f"{prefix} is not an option of this command" in err
            assert "never abbreviated" in err
            # every option it begins, none other
            named = set(re.findall(r"--[a-z][\w-]*", err.split(": it begins ")[1]
                                   .split(";")[0]))
            assert named == set(begun), (path, prefix)
            checked += 1
    assert checked > 20  # every command has such prefixes; the walk found them


@pytest.mark.parametrize("argv, fragment", [
    # --jo begins --jobs only (not --json): simulate suggested --json
    (["simulate", "--jo", "5"], "--jo is not an option of this command; did you mean "
                                "--jobs?"),
    (["simulate", "--se=1"], "it begins --seed and --service; give one in full"),
    # before the command, and before a group's sub-command: was "give a command"
    (["--ver"], "--ver is not an option of this command; did you mean --version?"),
    (["cassandra", "--he", "predict"], "--he is not an option of this command; did "
                                       "you mean --help?"),
    (["estimators", "--quiet", "referee"], "--quiet is not an option of this command"),
])
def test_an_unknown_option_anywhere_is_one_line_naming_what_was_meant(capsys, argv,
                                                                      fragment):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert fragment in err and err.count("\n") == 1


@pytest.mark.parametrize("levels, twice", [("TWO,2", True), ("1,one", True),
                                            ("THREE,3", True), ("ONE,2,QUORUM", False),
                                            ("ALL,3", False)])
def test_a_level_list_refuses_a_name_and_its_number_together(levels, twice):
    """TWO and 2 are one level: cassandra predict --consistency TWO,2 predicted it
    twice. QUORUM and ALL depend on the replicas, unknown while parsing: not refused
    there."""
    import argparse

    from forkjoin_cli.types import level_list

    convert = level_list(["ONE", "TWO", "THREE", "QUORUM", "ALL"])
    if twice:
        with pytest.raises(argparse.ArgumentTypeError, match="are one level"):
            convert(levels)
    else:
        assert convert(levels) == [p if p.isdigit() else p.upper()
                                   for p in levels.split(",")]


@pytest.mark.parametrize("extra, said", [
    (["--replications", "2"], "2 replications are run by the fused engine only; use "
                              "engine fused, or 1 replication"),
    (["--engine", "fused", "--warmup", "auto"],
     "the fused engine takes a warm-up fraction, not 'auto' (MSER-5 needs every job); "
     "use warmup 0.1, say, or engine fast"),
    (["--purging", "--engine", "fast"], "purging is modelled by the SimPy engine only; "
                                        "use engine simpy"),
    (["--purging", "--engine", "fused"], "purging is modelled by the SimPy engine only; "
                                         "use engine simpy")])
def test_engine_refusals_speak_neither_python_nor_only_the_cli(capsys, extra, said):
    """The library's refusals of an engine's options are shared with the Python API,
    so they name the setting and its value as both write them (engine fused, warmup
    0.1), where they said engine='fused' (--engine fused), replications=1 and
    warmup=0.1; the two purging refusals now say it in one way."""
    argv = ["simulate", "--nodes", "6", "--replicas", "3", "--quorum", "2", "--rho",
            "0.9", "--jobs", "50000", *extra]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"forkjoin-sim simulate: error: {said}"


def test_purging_where_no_task_is_ever_cancelled_is_warned_of(capsys):
    """--purging at k = r changed nothing but the engine (SimPy, slow), silently (a
    fuzz); warned, not refused, so that a sweep's replay of such a point still runs."""
    assert main(["simulate", "--nodes", "3", "--replicas", "3", "--quorum", "3", "--rho",
                 "0.5", "--jobs", "2000", "--purging"]) == 0
    err = capsys.readouterr().err
    assert ("warning: --purging does nothing with --quorum 3 = --replicas 3: a job "
            "waits for every task, so none is ever cancelled; it only moves the run "
            "onto the slower SimPy engine: leave it out") in err
    # with an engine that cannot purge, the fix named is to drop --purging (the
    # engine's refusal said to use the slower engine: a review)
    assert main(["simulate", "--nodes", "3", "--replicas", "3", "--quorum", "3", "--rho",
                 "0.5", "--jobs", "2000", "--purging", "--engine", "fast"]) == 2
    assert capsys.readouterr().err.strip().endswith(
        "cancelled; leave it out, and --engine fast runs")


def test_a_stop_signal_inside_compiled_code_is_an_interruption(monkeypatch, capsys):
    """Ctrl-C landing inside numba comes out as a SystemError around the
    KeyboardInterrupt (a probe saw a traceback once, near the end of a staleness
    run): it ends as any interruption does, one line and status 130; another
    SystemError still surfaces."""
    import forkjoin_cli.simulate as simulate_module
    from forkjoin_cli.main import main

    def compiled(args):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise SystemError("CPUDispatcher(<function f>) returned a result with an "
                              "exception set")

    monkeypatch.setattr(simulate_module, "_cmd_simulate", compiled)
    argv = ["simulate", "--nodes", "3", "--replicas", "3", "--quorum", "1", "--rho",
            "0.5", "--jobs", "2000"]
    assert main(argv) == 130
    assert capsys.readouterr().err.strip() == "forkjoin-sim simulate: interrupted"

    def broken(args):
        raise SystemError("something else")

    monkeypatch.setattr(simulate_module, "_cmd_simulate", broken)
    with pytest.raises(SystemError, match="something else"):
        main(argv)
