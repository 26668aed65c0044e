"""Every command, fed argument vectors drawn from its own parser: a clean answer or one line.

Hypothesis draws, for each sub-command of ``forkjoin-sim``, an argument vector from
that sub-command's argparse parser: every required option and a random subset of the
others, each with a valid value (small, so that runs stay fast) or an invalid one
(words, '1e12', superscript digits, negative or huge numbers, files with bad contents
or encodings, outputs under a file, a directory where a file is expected ...). The
command runs in this process through ``forkjoin_cli.main.main`` and must

* exit 0, or exit 2 with exactly one line on stderr;
* never raise (no traceback), never print a traceback;
* leave nothing behind when it fails, and no temporary file when it succeeds.

Commands whose valid runs take minutes (``fig2``, ``validate``, ``estimators
referee``, ``cassandra validate``) have their simulation replaced by a stub that
stops the run: reaching it means every check passed, so the output place drawn must
then be a writable one (checks come before work).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import io
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from forkjoin_cli import main as cli

pytestmark = pytest.mark.filterwarnings("ignore")


class WorkReached(Exception):
    """Raised by the stub of a long simulation: every check before it passed."""


def _stop(*args, **kwargs):
    raise WorkReached


#: (module, attribute) of the long runs replaced by ``_stop``.
STUBBED = {
    "fig2": ("forkjoin_cli.fig2", "run_fig2"),
    "validate": ("forkjoin_cli.validate", "run_checks"),
    "experiment staleness-load": ("validation.staleness_load", "run"),
    "experiment pbs-reproduction": ("validation.pbs_reproduction", "run"),
    "experiment calibration-holdout": ("validation.calibration_holdout", "run"),
    "estimators referee": ("forkjoin_cli.estimators", "_referee"),
    "cassandra validate": ("validation.cassandra", "run_validation"),
    "cassandra calibrate": ("forkjoin_cli._calibration", "calibrate"),
    "cassandra calibrate (closed network)": ("sizing.cluster_calibration",
                                             "calibrated"),
    "cassandra calibrate --structure auto": ("sizing.structure_choice", "choose"),
}

#: Known failures in files this change did not touch (issue 15, change requests to
#: forkjoin_cli/cassandra.py), relaxed here and only here until they are fixed:
#: ``cassandra validate`` checks its output place after the simulation, and turns
#: an invalid --levels or --loads item into an uncaught ValueError; a --config
#: file that is not UTF-8 raises UnicodeDecodeError (forkjoin_sim/cassandra/staged.py),
#: as does ``cassandra predict --basic-csv``; ``mix`` passes a 20-digit thread count
#: to numpy (OverflowError); ``simulate --seed -1`` raises numpy's ValueError and
#: ``simulate --jobs 99999999999999999999`` a MemoryError, ``--nodes`` of 20 digits a
#: ValueError from numpy (forkjoin_cli/main.py); ``mix`` and ``cassandra simulate``
#: take ``--seed -1`` too (numpy's ValueError).
OUTPUT_CHECKED_LATE: set = set()
DRAWN_VALID_ONLY: dict = {}

BAD_NUMBERS = ["-1", "0", "1e12", "²", "١", "nan", "inf", "abc", "", "1.5", "-0.5",
               "99999999999999999999", "True", "0x10"]


# --- the files an argument may name ----------------------------------------------------

GOOD_SPEC = ("nodes = 3\nreplicas = 2\nquorum = [1, 2]\nrho = 0.3\njobs = 400\n"
             "seed = 1\n")
REFEREE = ("n,r,k,rho,sim_mean,sim_ci_low,sim_ci_high\n"
           "3,2,1,0.3,0.6,0.58,0.62\n")


def make_files(root: Path) -> dict[str, Path]:
    """Input files, good and bad, and places for outputs, under ``root``."""
    files = {
        "spec": GOOD_SPEC, "spec_unknown_key": GOOD_SPEC + "color = 3\n",
        "spec_jobs0": GOOD_SPEC.replace("jobs = 400", "jobs = 0"),
        "spec_replications0": GOOD_SPEC + "replications = 0\n",
        "spec_warmup": GOOD_SPEC + "warmup = 1.5\n",
        "spec_invalid_points": GOOD_SPEC.replace("quorum = [1, 2]", "quorum = [5]"),
        "spec_garbage": "nodes = [\n",
        "bad_level": "operation,consistency,threads,mean_ms\nread,FOO,10,2\n",
        "nul_header": "operation,consistency\x00,threads,mean_ms\nread,ONE,1,2\n",
        "spec_empirical": GOOD_SPEC + 'service = ["exp", "empirical:samples.csv"]\n',
        "referee": REFEREE, "referee_columns": "a,b\n1,2\n",
        "referee_text": REFEREE.replace("0.6,", "fast,"), "empty": "",
        "samples": "\n".join(f"{0.5 + 0.01 * i:g}" for i in range(200)) + "\n",
        "samples_tiny": "1e-320\n" * 50, "samples_negative": "-1\n2\n3\n" * 20,
        "samples_words": "fast\nslow\n", "samples_one": "0.5\n",
        "config": "[bogus]\ntime_unit = \"furlongs\"\n",
        "ycsb": ("[OVERALL], RunTime(ms), 10000\n[OVERALL], Throughput(ops/sec), 100.0\n"
                 "[READ], Operations, 1000\n[READ], AverageLatency(us), 1500\n"
                 "[READ], Return=OK, 1000\n"),
    }
    paths = {}
    for name, text in files.items():
        paths[name] = root / f"{name}.txt"
        paths[name].write_text(text, encoding="utf-8")
    paths["side_csv"] = root / "side.csv"
    paths["side_csv"].write_text("file,threads,consistency\nycsb.txt,32,QUORUM\n",
                                 encoding="utf-8")
    # a side table of any name is read as one
    paths["side_runs"] = root / "side.runs"
    paths["side_runs"].write_text(paths["side_csv"].read_text(), encoding="utf-8")
    paths["samples_csv"] = root / "samples.csv"
    paths["samples_csv"].write_text(files["samples"], encoding="utf-8")
    paths["latin1"] = root / "latin1.csv"
    paths["latin1"].write_bytes("n,r,k\n3,2,1 caf\xe9\n".encode("latin-1"))
    paths["binary"] = root / "binary.toml"
    paths["binary"].write_bytes(bytes(range(256)))
    (root / "adir").mkdir()
    (root / "afile").write_text("x")
    return paths


def input_paths(files):
    names = ["referee", "referee_columns", "referee_text", "empty", "latin1", "binary",
             "samples", "config", "spec"]
    return st.sampled_from([str(files[n]) for n in names] + ["adir", "missing.csv"])


def output_file(suffix: str):
    """(path relative to the root, whether a command may write it)."""
    return st.sampled_from([(f"out{suffix}", True), (f"new/deeper/out{suffix}", True),
                            ("adir", False), (f"afile/out{suffix}", False),
                            ("afile", True)])


def output_dir():
    return st.sampled_from([("outdir", True), ("adir", True), ("afile", False),
                            ("afile/sub", False)])


# --- values by option name --------------------------------------------------------------

def _ints(low, high):
    return st.integers(low, high).map(str)


def _reals(low, high):
    return st.floats(low, high, allow_nan=False).map(lambda x: f"{x:.3g}")


BAD = st.sampled_from(BAD_NUMBERS)


def _texts(good, bad):
    return st.sampled_from(good), st.sampled_from(bad)


def service_specs(files):
    return _texts(["exp", "erlang:2", "lognormal:0.5", "deterministic", "lognorm:0.5",
                   f"empirical:{files['samples']}"],
                  ["exp:", "bogus", "", "uniform:-1,3", "pareto:1.1",
                   "empirical:missing.txt"]
                  + [f"empirical:{files[n]}" for n in
                     ("samples_tiny", "samples_negative", "samples_words", "latin1",
                      "empty")])


def _files(files, good, bad):
    return _texts([str(files[n]) for n in good],
                  [str(files[n]) for n in bad] + ["adir", "missing.csv"])


BAD_FILES = ["referee_columns", "referee_text", "empty", "latin1", "binary",
             "spec_garbage"]


def value_for(name: str, files, command: str = ""):
    """(valid, invalid) strategies of text for the option called ``name``."""
    if command == "cassandra validate" and name == "levels":  # detail levels, not CLs
        return _texts(["1", "2", "1,2"], ["a", "", "3", "1,,2"])
    per_name = {
        # Valid sizes always make a valid (n, r, k); other tests cover k > r and r > n.
        "nodes": (_ints(3, 6), BAD), "replicas": (_ints(2, 3), BAD),
        "quorum": (_ints(1, 2), BAD), "rho": (_reals(0.05, 0.9), BAD),
        "mu": (_reals(0.5, 2), BAD), "jobs": (_ints(100, 1500), BAD),
        "sim_jobs": (_ints(100, 1500), BAD),
        "seed": _texts(["0", "7", str(2 ** 63 - 1)], BAD_NUMBERS + [str(2 ** 63)]),
        "workers": _texts(["1"], ["0", "-2", "1e3", "99999", "²"]),
        "validate": _texts(["0", "300"], BAD_NUMBERS),
        "loads": _texts(["0.3", "0.3,0.6"], ["", "a", "0.3,,0.5", "-1", "0.3,2"]),
        "timeouts": _texts(["2", "1,3"], ["", "soon", "0", "-1"]),
        "percentile": (_reals(50, 99.9), BAD), "read_fraction": (_reals(0, 1), BAD),
        "rate": (_reals(0.1, 1), BAD), "write_rate": (_reals(0.1, 1), BAD),
        "target": (_reals(0.5, 20), BAD), "min_nodes": (_ints(1, 3), BAD),
        "max_nodes": _texts(["3", "5"], BAD_NUMBERS + ["1000000000"]),
        "min_replicas": (_ints(1, 2), BAD), "max_replicas": (_ints(1, 3), BAD),
        "levels": _texts(["ONE", "QUORUM,ALL", "1,2", "2"], ["a", "", "ONE,one", "1,,2"]),
        "service": service_specs(files), "read_service": service_specs(files),
        "write_service": service_specs(files), "think_law": service_specs(files),
        "local_service": service_specs(files), "remote_service": service_specs(files),
        "warmup": _texts(["0.1", "auto"], ["1.5", "-0.1", "abc", "1e12"]),
        "sample_every": (_ints(1, 3), BAD), "replications": (_ints(1, 2), BAD),
        "clients": (_ints(1, 4), BAD), "think": (_reals(0, 2), BAD),
        "speeds": _texts(["1,1,1", "slow:1:0.5"], ["bogus", "0,0,0", "1,,1"]),
        "dask": _texts(["tcp://127.0.0.1:1"], ["nowhere", "", "tcp://x:99999"]),
        "spec": _files(files, ["spec"], ["spec_unknown_key", "spec_jobs0", "spec_warmup",
                                         "spec_invalid_points", *BAD_FILES]),
        "referee": _files(files, ["referee"], BAD_FILES),
        "config": _files(files, ["config"], BAD_FILES),
        "measurements": _files(files, ["referee"], BAD_FILES),
        "basic_csv": _files(files, ["referee"], BAD_FILES),
        "model": _files(files, ["config"], BAD_FILES),
        "datacentres": _files(files, ["config"], BAD_FILES),
    }
    levels = _texts(["ONE", "QUORUM", "ALL", "2"], ["a", "", "FOUR", "0"])
    per_name.update({
        "reads": _texts(["C", "A", "0.5"], ["1.5", "Z", ""]),
        "read_consistency": levels, "write_consistency": levels, "consistency": levels,
        "data_read": service_specs(files), "digest_read": service_specs(files),
        "write": service_specs(files), "coordinator": service_specs(files),
        "client_hop": service_specs(files),
        "data_mean": (_reals(0.5, 2), BAD), "digest_mean": (_reals(0.1, 1), BAD),
        "write_mean": (_reals(0.5, 2), BAD), "local_mean": (_reals(0.1, 1), BAD),
        "remote_mean": (_reals(0.5, 2), BAD), "read_threads": (_ints(1, 3), BAD),
        "write_threads": (_ints(1, 3), BAD), "local_fraction": (_reals(0, 1), BAD),
        "policy": _texts(["token-aware", "round-robin", "remote", "local-fraction:0.5"],
                         ["exp", "", "local-fraction:2"]),
        "local_basic": (_reals(0.1, 1), BAD),
        "remote_basic": _texts(["1:1.2,2:1.5"], ["1:", "a", "0:1", "1:-1"]),
        "threads": _texts(["1,2,4"], ["", "0", "1,,2", "a"]),
    })
    return per_name.get(name, _texts(["1", "0.5", "ONE", "QUORUM", "exp"],
                                      ["a", "", "-1", "1e12", "²"]))


# --- argument vectors from a parser ----------------------------------------------------

def commands(parser: argparse.ArgumentParser, prefix=()):
    """(words, parser) of every leaf sub-command."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from commands(sub, (*prefix, name))
            return
    yield prefix, parser


OUTPUT_NAMES = {"out", "report"}
#: Options that go together, one set at a time (open or closed arrivals, the two ways
#: of ``cassandra predict``): the drawn set is given, the others are left out.
ALTERNATIVES = {
    "simulate": [{"rho"}, {"clients", "think", "think_law"}],
    "mix": [{"rate"}, {"clients", "think", "think_law"}],
    "cassandra simulate": [{"rate"}, {"clients", "think", "think_law"}],
    "cassandra predict": [{"nodes", "replicas", "policy"},
                          {"nodes", "replicas", "local_fraction"},
                          {"model", "measurements", "out"}],
}
SIZE_NAMES = {"jobs", "sim_jobs", "max_nodes"}  # always given: defaults are large


@st.composite
def argv_for(draw, words, parser, files):
    """An argument vector for ``parser`` and the output places it names."""
    argv, outputs = list(words), []
    dir_output = (words[0] in ("fig2", "validate")
                  or list(words[:2]) == ["cassandra", "validate"])
    # Half the vectors are valid but for the outputs; the rest break one to three
    # options, so that each check is reached alone as well as in company.
    breaks = draw(st.sampled_from([0, 0, 0, 1, 1, 2, 3]))
    options_ = [a for a in parser._actions
                if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))]
    broken = set(draw(st.permutations(range(len(options_))))[:breaks])
    groups = ALTERNATIVES.get(" ".join(words), [])
    chosen = draw(st.sampled_from(groups)) if groups else set()
    excluded = set().union(*groups) - chosen
    for index, action in enumerate(options_):
        dest = action.dest
        if dest in excluded and index not in broken:
            continue
        required = (action.required or dest in SIZE_NAMES or dest in chosen
                    or index in broken)
        if not required and not draw(st.booleans()):
            continue
        if isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction)):
            argv.append(action.option_strings[0])
            continue
        if dest in OUTPUT_NAMES:
            suffix = {"estimators figure": ".png"}.get(" ".join(words), ".csv")
            if dest == "report":
                suffix = ".md"
            text, ok = draw(output_dir() if dir_output else output_file(suffix))
            outputs.append((text, ok))
        elif action.choices is not None:
            text = "nonsense" if index in broken else str(
                draw(st.sampled_from(list(action.choices))))
        else:
            keep_valid = dest in DRAWN_VALID_ONLY.get(" ".join(words), ())
            text = draw(value_for(dest, files, " ".join(words))[
                index in broken and not keep_valid])
        values = [text] * (2 if action.nargs == "+" and draw(st.booleans()) else 1)
        argv += ([action.option_strings[0]] if action.option_strings else []) + values
    return argv, outputs


def _parser_commands():
    parser = cli.build_parser(every=True)
    return [(words, sub) for words, sub in commands(parser)]


COMMANDS = _parser_commands()


def _snapshot(root: Path) -> dict[str, float]:
    return {str(p.relative_to(root)): p.stat().st_mtime_ns
            for p in root.rglob("*") if p.is_file()}


@contextlib.contextmanager
def _in(directory: Path):
    old = os.getcwd()
    os.chdir(directory)
    try:
        yield
    finally:
        os.chdir(old)


def run(argv) -> tuple[int | None, str, str, BaseException | None]:
    """(exit status, stdout, stderr, uncaught exception) of ``main(argv)``."""
    out, err = io.StringIO(), io.StringIO()
    code, raised = None, None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main(argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 2
        except WorkReached as exc:
            raised = exc
        except Exception as exc:  # the failure this test looks for
            raised = exc
    return code, out.getvalue(), err.getvalue(), raised


#: (command, outcome) -> count; printed with ``pytest -s`` to see what was reached.
OUTCOMES: collections.Counter = collections.Counter()


def check_run(words, argv, outputs, root: Path, before: dict) -> None:
    command = " ".join(words)
    code, out, err, raised = run(argv)
    OUTCOMES[command, "work" if isinstance(raised, WorkReached) else code] += 1
    if os.environ.get("FORKJOIN_FUZZ_VERBOSE") and err.strip():
        print(f"  {command}: {code} {err.strip().splitlines()[-1][:150]}")
    after = _snapshot(root)
    stray = [name for name in after if Path(name).name.startswith(".")]
    assert not stray, f"{argv}: temporary files left behind: {stray}"
    if isinstance(raised, WorkReached):
        if command not in OUTPUT_CHECKED_LATE:
            assert all(ok for _, ok in outputs), \
                f"{argv}: the work started although the output place cannot be written"
        assert after == before, f"{argv}: files written before the work started"
        return
    assert raised is None, f"{argv}: uncaught {type(raised).__name__}: {raised}"
    assert "Traceback" not in err, f"{argv}: traceback on stderr:\n{err}"
    # plan-capacity exits 1 when no configuration searched meets the target (a result,
    # documented in its --help, not bad input)
    allowed = (0, 1, 2) if command == "plan-capacity" else (0, 2)
    assert code in allowed, f"{argv}: exit status {code}; stderr: {err}"
    if code == 1:
        assert "no configuration in the search space meets" in err.strip().splitlines()[-1]
    if code == 2:
        lines = err.strip("\n").splitlines()
        assert len(lines) == 1 and "error" in lines[0], \
            f"{argv}: exit 2 needs exactly one error line on stderr, got:\n{err}"
        changed = {k for k in after if before.get(k) != after[k]}
        assert not changed, f"{argv}: a failed command left files: {sorted(changed)}"


@pytest.fixture(scope="module")
def stubbed():
    import importlib

    saved = []
    for module_name, attribute in STUBBED.values():
        module = importlib.import_module(module_name)
        saved.append((module, attribute, getattr(module, attribute)))
        setattr(module, attribute, _stop)
    yield
    for module, attribute, original in saved:
        setattr(module, attribute, original)


@pytest.mark.parametrize("words, parser", COMMANDS, ids=[" ".join(w) for w, _ in COMMANDS])
def test_every_argument_vector_gets_a_result_or_one_line(words, parser, stubbed):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files = make_files(root)

        @settings(max_examples=EXAMPLES, deadline=None, database=None,
                  derandomize=not os.environ.get("FORKJOIN_FUZZ_RANDOM"),
                  suppress_health_check=list(HealthCheck))
        @given(argv_for(words, parser, files))
        def check(drawn):
            argv, outputs = drawn
            with _in(root):
                before = _snapshot(root)
                check_run(words, argv, outputs, root, before)
                # Successful runs may write outputs; the next example starts afresh.
                for name in set(_snapshot(root)) - set(before):
                    (root / name).unlink()

        check()
    command = " ".join(words)
    print(command, {k[1]: v for k, v in OUTCOMES.items() if k[0] == command})


#: The same examples on every run (stable in CI); FORKJOIN_FUZZ_RANDOM=1 explores anew.
#: Examples per command: 16 commands, so about 640 runs (about 30 s on 2 cores).
EXAMPLES = int(os.environ.get("FORKJOIN_FUZZ_EXAMPLES", "40"))


# --- the examples of issue 15 ----------------------------------------------------------

Q = ["--nodes", "5", "--replicas", "3", "--quorum", "2"]
ISSUE_EXAMPLES = [
    (["approx", *Q, "--rho", "0.5", "--seed", "1"], "--seed is not an option of this command"),
    (["approx", "--nodes", "2000", "--replicas", "2000", "--quorum", "1", "--rho", "0.1"],
     "limit 200"),
    (["approx", *Q, "--rho", "0.5", "--mu", "1e-300"], "outside"),
    (["approx", *Q, "--rho", "0.5", "--mu", "nan"], "not a number"),
    (["approx", "--nodes", "5²", "--replicas", "3", "--quorum", "2", "--rho", "0.5"],
     "not a whole number"),
    (["timeouts", *Q, "--loads", "0.5", "--timeouts", "2", "--jobs", "0"],
     "at least 44"),
    (["timeouts", *Q, "--loads", "0.5", "--timeouts", "2", "--jobs", "1e12"],
     "digits"),
    (["timeouts", *Q, "--loads", "0.5", "--timeouts", "2", "--seed", "-1"], "seed"),
    (["timeouts", *Q, "--loads", "0.5", "--timeouts", "2", "--jobs", "999999999",
      "--sim-jobs", "999999999"], "memory"),
    (["plan-consistency", "--nodes", "5", "--replicas", "3", "--read-fraction", "0.8",
      "--rate", "1", "--validate", "-5"], "--validate"),
    # Found by the fuzz test: the plan was printed before the validation run failed.
    (["plan-consistency", "--nodes", "3", "--replicas", "2", "--read-fraction", "0.875",
      "--rate", "1", "--validate", "300", "--jobs", "320"], "--validate 300"),
    (["plan-capacity", "--write-rate", "1", "--target", "5", "--max-nodes",
      "1000000000"], "limit 1,000"),
    (["plan-capacity", "--write-rate", "1", "--target", "5", "--levels", ""], "empty"),
    (["plan-capacity", "--write-rate", "1", "--target", "5", "--out", "afile/x.csv"],
     "which is a file"),
    (["estimators", "accuracy", "--referee", "empty.txt"], "not a CSV"),
    (["estimators", "accuracy", "--referee", "latin1.csv"], "not UTF-8"),
    (["estimators", "accuracy", "--referee", "referee_text.txt"], "not a number"),
    (["estimators", "figure", "referee.txt", "--out", "errors.xyz"], "must end in"),
    (["sweep", "spec.txt", "--out", "o.csv", "--dask", "tcp://127.0.0.1:1"],
     "cannot reach"),
    (["sweep", "spec_jobs0.txt", "--out", "o.csv"], "'jobs' must be one whole number >= 2"),
    (["sweep", "latin1.csv", "--out", "o.csv"], "not UTF-8"),
    (["sweep", "spec.txt", "--out", "adir"], "is a directory; give a file name inside"),
    (["fig2", "--out", "afile"], "is a file"),
    (["fig2", "--workers", "0"], "at least 1"),
    (["validate", "--out", "afile/sub"], "which is a file"),
    (["validate", "--docs", "--out", "x"], "drop --out"),
    (["estimators", "referee", "--out", "adir"], "is a directory"),
    # Found by a fuzz campaign after the issue: unclear messages ...
    (["sweep", "spec.txt", "--out", "o.csv", "--dask", ""], "--dask is empty; give a value"),
    (["sweep", "spec_replications0.txt", "--out", "o.csv"], "'replications' must be"),
    (["plan-consistency", "--nodes", "5", "--replicas", "3", "--read-fraction", "0.8",
      "--rate", "1", "--staleness", "t=5:0.9", "--read-threads", "0"],
     "--read-threads 0 must be at least 1"),
    # ... options that would do nothing ...
    (["plan-consistency", "--nodes", "5", "--replicas", "3", "--read-fraction", "0.8",
      "--rate", "1", "--delays", "exp:1"], "--delays only applies to the staleness"),
    (["plan-consistency", "--nodes", "5", "--replicas", "3", "--read-fraction", "0.8",
      "--rate", "1", "--staleness", "t=5:0.9", "--validate", "100"],
     "--validate only applies to the latency plan"),
    (["plan-consistency", "--nodes", "5", "--replicas", "3", "--read-fraction", "0.8",
      "--rate", "1", "--staleness", "t=5:0.9", "--structure", "shared",
      "--write-threads", "2"], "does not have"),
    (["simulate", *Q, "--rho", "0.5", "--service", "exp:2", "--mu", "2"],
     "--mu does nothing here"),
    (["simulate", *Q, "--clients", "4", "--think-law", "exp:2", "--think", "1"],
     "--think does nothing here"),
    (["simulate", *Q, "--clients", "4", "--think-law", "pareto:3"], "add --think"),
    (["timeouts", *Q, "--loads", "0.5", "--timeouts", "2", "--service",
      "empirical:samples.txt", "--mu", "3"], "--mu does nothing here"),
    (["cassandra", "simulate", "--nodes", "6", "--replicas", "3", "--consistency", "ONE",
      "--policy", "token-aware", "--local-service", "exp:0.2", "--local-mean", "2",
      "--remote-service", "exp", "--rate", "0.2"], "--local-mean does nothing here"),
    (["mix", "--nodes", "5", "--replicas", "3", "--reads", "0.9", "--rate", "0.5",
      "--write", "pareto:3,scale=0.2", "--write-mean", "1"], "--write-mean does nothing"),
    # ... an analytic basic queue for a service that is not exponential, in the
    # command line's words (it said basic='independent') ...
    (["timeouts", *Q, "--loads", "0.5", "--timeouts", "2", "--basic", "independent",
      "--service", "lognormal:1"], "--basic independent assumes exponential service, "
                                   "and --service lognormal:1 is not"),
    (["plan-consistency", "--nodes", "5", "--replicas", "3", "--read-fraction", "0.5",
      "--rate", "1", "--basic", "mean-matched", "--read-service", "gamma:2"],
     "--basic mean-matched assumes exponential service, and --read-service gamma:2"),
    # ... and a mix's options for an operation or a digest it never runs
    (["mix", "--nodes", "5", "--replicas", "3", "--clients", "3", "--write-threads", "2"],
     "--write-threads does nothing here: the mix has no writes (--reads C)"),
    (["mix", "--nodes", "5", "--replicas", "3", "--reads", "0", "--clients", "3",
      "--digest-mean", "0.3"], "--digest-mean does nothing here: the mix has no reads"),
    (["mix", "--nodes", "5", "--replicas", "3", "--reads", "A", "--clients", "3",
      "--digest-mean", "0.3", "--read-consistency", "ONE"],
     "--digest-mean does nothing here: a read at ONE asks one replica"),
    # ... repeated values in lists that are sets ...
    (["timeouts", *Q, "--loads", "0.5", "--timeouts", "2,1,1"], "more than once"),
    (["cassandra", "validate", "--loads", "0.5,0.5"], "more than once"),
    (["staleness", "--replicas", "3", "--rate", "1,1"], "more than once"),
    # ... output names: a suffix the command does not write, a bare extension, none ...
    (["timeouts", *Q, "--loads", "0.5", "--timeouts", "2", "--out", "o.xlsx"],
     "must end in .csv"),
    (["estimators", "referee", "--out", "r.txt"], "must end in .csv"),
    (["staleness", "--replicas", "3", "--rate", "1", "--read-quorum", "1",
      "--write-quorum", "1", "--out", ".csv"], "has only an extension"),
    (["sweep", "spec.txt", "--out", ".parquet"], "has only an extension"),
    (["fig2", "--out", ""], "--out is empty; give a value"),
    # ... service times the run's clock cannot resolve (found by this test) ...
    (["plan-capacity", "--write-rate", "1", "--target", "1", "--mu",
      "99999999999999999999", "--max-nodes", "3", "--jobs", "100"], "too coarse"),
    # ... an option twice or abbreviated ...
    (["simulate", *Q, "--rho", "0.5", "--jobs", "1000", "--jobs=2000"],
     "--jobs is given twice"),
    (["simulate", *Q, "--rho", "0.5", "--job", "1000"],
     "--job is not an option of this command; did you mean --jobs?"),
    # ... named before a required option it was meant to be is called missing
    (["simulate", "--nodes", "6", "--replicas", "3", "--quor", "2", "--rho", "0.5"],
     "--quor is not an option of this command; did you mean --quorum?"),
    (["cassandra", "calibrate", "--nodse", "3"], "did you mean --nodes?"),
    # ... the nearest by meaning where no spelling is near (the load of simulate is
    # --rho, "load per job"), and no guess where neither is (calibrate has no level
    # option: the levels are the file's)
    (["simulate", *Q, "--load", "0.5"], "--load is not an option of this command; "
                                        "did you mean --rho?"),
    (["cassandra", "calibrate", "--level", "ONE"],
     "--level is not an option of this command (see"),
    # ... the load as a rate (simulate has no --rate: not the service rate --mu)
    (["simulate", *Q, "--rate", "0.5"], "--rate is not an option of this command; "
                                        "did you mean --rho?"),
    (["mix", "--nodes", "3", "--replicas", "3", "--lambda", "2"], "did you mean --rate?"),
    (["simulate", *Q, "--rho", "0.5", "--jobs", "1" * 5000], "has 5,000 digits"),
    # ... percentiles written as fractions (0.99 for p99) ...
    (["plan-consistency", "--nodes", "5", "--replicas", "3", "--read-fraction", "0.8",
      "--rate", "1", "--percentile", "0.99"], "write 99 for p99"),
    (["staleness", "--replicas", "3", "--rate", "1", "--percentiles", "50,0.999"],
     "write 99.9 for p99.9"),
    # ... and numbers Python's float() reads but nobody means.
    (["mix", "--nodes", "5", "--replicas", "3", "--reads", "0.9", "--rate", "0_5"],
     "not a number"),
    (["simulate", *Q, "--rho", "0.5", "--service", "gamma:１"], "not a number"),
    (["simulate", *Q, "--rho", "0.5", "--speeds", "1,1,1,1,0_5"], "not understood"),
    (["cassandra", "simulate", "--nodes", "6", "--replicas", "3", "--consistency", "ONE",
      "--policy", "local-fraction:0_5", "--local-service", "exp", "--remote-service",
      "exp", "--rate", "0.2"], "needs a fraction"),
    # issue 29: one sample is a constant, not a measured law ...
    (["simulate", *Q, "--rho", "0.5", "--service", "empirical:samples_one.txt"],
     "holds one sample (0.5): that is a constant"),
    # Found by a probe: --out over a latency file a service spec reads (exit 0, the
    # samples replaced by the results), and over other inputs without a check of
    # their own
    (["timeouts", *Q, "--loads", "0.3", "--timeouts", "5", "--jobs", "2000",
      "--sim-jobs", "2000", "--service", "empirical:samples.txt", "--out",
      "samples.txt"], "--out samples.txt is also the input samples.txt (of --service"),
    (["staleness", "--replicas", "3", "--read-service", "empirical:./samples.txt",
      "--out", "samples.txt"], "is also the input ./samples.txt (of --read-service"),
    # ... also where the spec reads its file with options (column=...): the file is
    # what comes before them (a probe saw three commands overwrite it)
    (["staleness", "--replicas", "3", "--read-service",
      "empirical:samples.txt,column=0", "--out", "samples.txt"],
     "is also the input samples.txt (of --read-service empirical:samples.txt,column=0)"),
    (["plan-capacity", "--write-rate", "1", "--target", "5", "--service",
      "empirical:samples.txt,column=0", "--out", "samples.txt"],
     "is also the input samples.txt"),
    (["plan-capacity", "--write-rate", "1", "--target", "5", "--service",
      "mix:0.5*exp;0.5*empirical:samples.txt", "--out", "samples.txt"],
     "is also the input samples.txt"),
    (["sweep", "spec_empirical.txt", "--out", "samples.csv"],
     "is also the input samples.csv (of service empirical:samples.csv in"),
    (["cassandra", "predict", "--nodes", "6", "--replicas", "3", "--policy",
      "round-robin", "--basic-csv", "samples.txt", "--out", "samples.txt"],
     "is also the input samples.txt (of --basic-csv)"),
    # ... and over a benchmark output that a side table lists (a fuzz: the YCSB
    # output replaced by the predictions, or by the report)
    (["cassandra", "calibrate", "--nodes", "3", "--replicas", "3", "--measurements",
      "side.csv", "--out", "m.toml", "--report", "ycsb.txt"],
     "--report ycsb.txt is also the input ycsb.txt (of --measurements side.csv)"),
    (["cassandra", "calibrate", "--nodes", "3", "--replicas", "3", "--measurements",
      "side.runs", "--out", "ycsb.txt"],
     "--out ycsb.txt is also the input ycsb.txt (of --measurements side.runs)"),
    # ... an unknown level of a measurement file lists the LOCAL_ names it reads too
    (["cassandra", "calibrate", "--nodes", "3", "--replicas", "3", "--measurements",
      "bad_level.txt", "--out", "m.toml"],
     "(LOCAL_ONE and LOCAL_QUORUM are read as ONE and QUORUM)"),
    # ... a positional input and a list of them, named as the command line spells them
    (["sweep", "spec.txt", "--out", "spec.txt"], "is also the input spec.txt (of spec)"),
    (["experiment", "calibration-holdout", "samples.txt", "--write-synthetic",
      "samples.txt"], "--write-synthetic samples.txt is also the input samples.txt "
     "(of files)"),
    # ... what plan-consistency --model lacks, each said for itself
    (["plan-consistency", "--model", "samples.txt", "--read-fraction", "0.5"],
     "--model needs --threads (the client threads)"),
    # ... two outputs in one file named as outputs, not as an input
    (["cassandra", "calibrate", "--nodes", "3", "--replicas", "3", "--measurements",
      "samples.txt", "--out", "m.toml", "--report", "./m.toml"],
     "--report ./m.toml is also the file of --out; give each output a file of its own"),
    # ... too many fused replications for the jobs, in the words of the options
    (["simulate", *Q, "--rho", "0.5", "--jobs", "2000", "--engine", "fused",
      "--replications", "1000"], "2,000 jobs in 1,000 replications leave 2 measured "
     "each after the warm-up, fewer than the 4 a replication needs (two batches of "
     "two); run more jobs, or fewer replications"),
    (["simulate", *Q, "--rho", "0.5", "--jobs", "2000", "--engine", "fused",
      "--sample-every", "1000"], "2,000 jobs leave 2 measured after the warm-up (one "
     "in 1,000 sampled), fewer than the 4 a replication needs (two batches of two); run "
     "more jobs, or a sample_every below 1000"),
    # ... the option a bad law or speed came from is named
    (["simulate", *Q, "--rho", "0.5", "--speeds", "1,1,1,1,-1"],
     "node speeds must be positive finite factors (node 4: -1); give each node"),
    (["mix", "--nodes", "3", "--replicas", "3", "--rate", "0.5", "--hop", "exp:0.1",
      "--client-hop", "exp:-1"], "--client-hop: service 'exp:-1'"),
    (["mix", "--nodes", "3", "--replicas", "3", "--rate", "0.5", "--data-read",
      "exp:-1"], "--data-read: service 'exp:-1'"),
    # ... control characters of a file quoted in a message are written as escapes,
    # not sent to the terminal
    (["cassandra", "calibrate", "--nodes", "3", "--replicas", "3", "--measurements",
      "nul_header.txt", "--out", "m.toml"], "consistency\\x00 is not a column"),
    # ... and a run too large for memory named by the option that asks for it, with
    # the share of the memory the check allows
    (["timeouts", *Q, "--loads", "0.3", "--timeouts", "5", "--jobs", "2000",
      "--sim-jobs", "1000000000"], "--sim-jobs 1,000,000,000 needs about 24 GB of "
     "memory, more than 80% of the 4 GB available (3.2 GB"),
    (["plan-capacity", "--write-rate", "1", "--target", "5", "--jobs", "2000",
      "--validate", "1000000000"], "--validate 1,000,000,000 needs about"),
    # ... and level names take any case but no blanks around them
    (["cassandra", "simulate", "--nodes", "6", "--replicas", "3", "--consistency",
      "quorum ", "--policy", "token-aware", "--local-service", "exp", "--remote-service",
      "exp", "--rate", "0.2"], "blanks around it"),
    # ... also in a list of names (the same rule, not a second one)
    (["plan-capacity", "--write-rate", "1", "--target", "5", "--levels", "ONE, ALL"],
     "blanks around it"),
]


@pytest.mark.parametrize("argv, message", ISSUE_EXAMPLES,
                         ids=[" ".join(a)[:60] for a, _ in ISSUE_EXAMPLES])
def test_the_issue_examples_get_one_line_and_exit_2(argv, message, stubbed, tmp_path,
                                                    monkeypatch):
    from forkjoin_sim import checks as options

    # The same answer on any machine: 4 GB free.
    monkeypatch.setattr(options, "available_memory", lambda: 4 * 10 ** 9)
    make_files(tmp_path)
    with _in(tmp_path):
        before = _snapshot(tmp_path)
        code, out, err, raised = run(argv)
        assert raised is None, f"{type(raised).__name__}: {raised}"
        assert code == 2 and out == "", (code, out, err)
        assert len(err.strip().splitlines()) == 1 and message in err, err
        assert _snapshot(tmp_path) == before


def test_the_fuzz_covers_every_command_of_main():
    from forkjoin_cli.main import COMMANDS as REGISTERED

    fuzzed = {words[0] for words, _ in COMMANDS}
    assert fuzzed == set(REGISTERED)
    for group in ("cassandra", "estimators", "experiment"):
        assert sum(words[0] == group and len(words) > 1 for words, _ in COMMANDS) >= 2


@pytest.mark.parametrize("argv", [
    ["timeouts", "--nodes", "3", "--replicas", "3", "--quorum", "2", "--loads", "0.5",
     "--timeouts", "1", "--out", ""],
    ["plan-capacity", "--write-rate", "1", "--target", "5", "--out", " "],
    ["cassandra", "calibrate", "--nodes", "3", "--replicas", "3", "--measurements",
     "m.csv", "--out", "m.toml", "--report", ""]])
def test_an_empty_option_value_is_refused_not_read_as_not_given(argv, capsys):
    """``--out ''`` wrote to standard output, as if no --out had been given."""
    from forkjoin_cli.main import main

    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "is empty; give a value" in err


def test_a_value_longer_than_a_file_name_is_no_input_file(stubbed, tmp_path):
    """The check of outputs against input files asked the file system about every
    option's text: 150 speed factors (300 characters) crashed simulate with 'File
    name too long' (a review), as a mixture of 100 laws (900 characters) did
    timeouts. Such a value is no file; the command goes on to its work."""
    service = "mix:" + ";".join(["0.01*exp"] * 100)
    with _in(tmp_path):
        code, _, err, raised = run(["timeouts", *Q, "--loads", "0.3", "--timeouts", "5",
                                    "--service", service, "--out", "o.csv"])
    assert raised is None or isinstance(raised, WorkReached), raised
    assert raised is not None or code == 0, err
