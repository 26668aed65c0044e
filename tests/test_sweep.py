"""Sweeps: specs, per-point determinism across backends, the results file, resume."""

import os
import re
import sys

import numpy as np
import pandas as pd
import pytest

from forkjoin_cli import main as cli
from forkjoin_sim.errors import ConfigError
from forkjoin_cli.sweep import register

from forkjoin_sim.sweep import runner as sweeps
from sizing.sweep_columns import annotate

ANALYTIC = (annotate,)  # Theorem 3 beside each row, as the sweep command adds

# Small but not trivial: 2 node counts x 3 quorums x 2 loads x 2 services, of which
# the 6 with nodes=3, rho=1.2 are unstable; two replications: 36 rows.
SPEC = {"nodes": [3, 6], "replicas": 3, "quorum": [1, 2, 3], "rho": [0.5, 1.2],
        "service": ["exp", "lognormal:1.0"], "jobs": 2000, "replications": 2, "seed": 7}
SPEC_TOML = """\
nodes = [3, 6]
replicas = 3
quorum = [1, 2, 3]
rho = [0.5, 1.2]
service = ["exp", "lognormal:1.0"]
jobs = 2000
replications = 2
seed = 7
"""
# Wall-clock time of a point: the one column that differs between two runs.
TIMING = ["seconds"]
ROWS = 36


@pytest.fixture(scope="module")
def dask_cluster():
    distributed = pytest.importorskip("distributed")
    # Threads, not processes: starts in a fraction of a second. The process-based
    # LocalCluster is exercised by examples/dask_sweep.py (tests/test_examples.py).
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def serial_frame():
    return sweeps.sweep(SPEC, backend="serial", progress=False, annotate=ANALYTIC)


def _without_timing(frame):
    return frame.drop(columns=TIMING)


def _text_without_timing(path):
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    return frame.drop(columns=TIMING).to_csv(index=False)


# --- specs --------------------------------------------------------------------

def test_toml_and_dict_specs_give_the_same_points(tmp_path):
    path = tmp_path / "spec.toml"
    path.write_text(SPEC_TOML)
    from_toml, toml_notes = sweeps.expand(path)
    from_dict, dict_notes = sweeps.expand(SPEC)
    assert from_toml == from_dict and toml_notes == dict_notes
    assert len(from_dict) == ROWS and len(dict_notes) == 6


def test_numpy_values_give_the_same_points_and_seeds():
    spec = {**SPEC, "nodes": np.array([3, 6]), "rho": [np.float64(0.5), 1.2],
            "jobs": np.int64(2000)}
    points, _ = sweeps.expand(spec)
    reference, _ = sweeps.expand(SPEC)
    assert points == reference
    assert [sweeps.point_seed(p).entropy for p in points] == \
           [sweeps.point_seed(p).entropy for p in reference]


def test_whole_numbers_for_real_parameters_give_the_same_points():
    points, _ = sweeps.expand({**SPEC, "rho": [1, 0.5], "mu": 1, "warmup": 0})
    reference, _ = sweeps.expand({**SPEC, "rho": [1.0, 0.5], "mu": 1.0, "warmup": 0.0})
    assert [sweeps.point_key(p) for p in points] == \
           [sweeps.point_key(p) for p in reference]


def test_invalid_combinations_are_skipped_with_a_note():
    points, notes = sweeps.expand({"nodes": 3, "replicas": 3, "quorum": [2, 4],
                                   "rho": [0.5, 1.5], "purging": [False, True],
                                   "engine": ["fast", "simpy"], "jobs": 100})
    kept = {(p["quorum"], p["rho"], p["purging"], p["engine"]) for p in points}
    assert kept == {(2, 0.5, False, "fast"), (2, 0.5, False, "simpy"),
                    (2, 0.5, True, "simpy")}
    assert len(notes) == 16 - 3
    assert any("quorum k=4" in n for n in notes)
    assert any("unstable load" in n for n in notes)
    assert any("purging" in n and "simpy" in n.lower() for n in notes)


def test_mu_beside_a_service_that_fixes_its_own_scale_is_a_spec_error():
    """mu = 2 with exp:2 (mean 2 whatever mu says) ran and wrote rows saying mu = 2.0;
    simulate refuses the same pair, and so does the spec now. mu with a shape alone,
    or exp:2 without mu, stays."""
    with pytest.raises(ConfigError, match="sweep keys 'mu' and 'service': mu does "
                                          "nothing here: service 'exp:2' fixes its own"):
        sweeps.expand({"nodes": 3, "replicas": 3, "quorum": 2, "rho": 0.5, "mu": 2,
                       "service": ["exp", "exp:2"], "jobs": 100})
    for spec in ({"mu": 2, "service": "lognormal:1"}, {"service": "exp:2"}):
        points, _ = sweeps.expand({"nodes": 3, "replicas": 3, "quorum": 2, "rho": 0.5,
                                   "jobs": 100, **spec})
        assert len(points) == 1


def test_a_service_no_point_can_take_is_a_spec_error_not_a_skip():
    """A mistyped law ("bogus:1") fails in every combination: it was skipped with a
    note per point and the sweep exited 0; now the spec is refused before any point
    runs, naming the key. A law the grid can take stays."""
    with pytest.raises(ConfigError, match="sweep key 'service': service 'bogus:1' is "
                       "unknown"):
        sweeps.expand({"nodes": 3, "replicas": 3, "quorum": [1, 2], "rho": 0.5,
                       "service": ["exp", "bogus:1"], "jobs": 100})
    points, notes = sweeps.expand({"nodes": 3, "replicas": 3, "quorum": 1, "rho": 0.5,
                                   "service": ["exp", "erlang:2"], "jobs": 100})
    assert [p["service"] for p in points] == ["exp", "erlang:2"] and notes == []


def test_explicit_points_expand_over_the_shared_keys_and_run_once():
    spec = {"rho": [0.3, 0.6], "jobs": 100, "seed": 1, "points": [
        {"nodes": 6, "replicas": 3, "quorum": 1},
        {"nodes": 9, "replicas": 3, "quorum": [1, 2], "rho": 0.6},
        {"nodes": 6, "replicas": 3, "quorum": 1, "rho": 0.3},  # a repeat
    ]}
    points, notes = sweeps.expand(spec)
    assert [(p["nodes"], p["quorum"], p["rho"]) for p in points] == \
           [(6, 1, 0.3), (6, 1, 0.6), (9, 1, 0.6), (9, 2, 0.6)]
    assert len(notes) == 1 and "listed twice" in notes[0]


@pytest.mark.parametrize("spec, message", [
    ({**SPEC, "replica": 3}, "unknown sweep key(s) replica"),
    ({**SPEC, "jobs": [100, 200]}, "'jobs' must be one whole number"),
    ({k: v for k, v in SPEC.items() if k != "quorum"}, "needs 'quorum'"),
    ({**SPEC, "arrival_rate": 0.5}, "exactly one of 'rho', 'arrival_rate'"),
    ({"jobs": 10, "points": [{"nodes": 3, "replicas": 3, "quorum": 1, "rho": 0.5,
                              "seed": 2}]}, "points[0] sets seed"),
    ({"jobs": 10, "points": [{"nodes": 3, "replicas": 3, "quorom": 1}]},
     "quorom in points[0]"),
    # refused before a single point is built: 10^8 dicts would take minutes
    ({**SPEC, "replications": 10**8}, "has 2,400,000,000 points"),
    ({**SPEC, "rho": list(np.linspace(0.1, 0.9, 100_000))}, "more than 1,000,000"),
    # a value of the wrong kind is an error in the spec, not a point to skip
    ({**SPEC, "quorum": [1, 2.0]}, "'quorum' takes whole numbers, e.g. 3; 2.0 is not"),
    ({**SPEC, "rho": [0.5, "0.9"]}, "'rho' takes numbers"),
    ({**SPEC, "nodes": True}, "'nodes' takes whole numbers"),
    ({**SPEC, "purging": "no"}, "'purging' takes true or false"),
    ({**SPEC, "service": 3}, "'service' takes text"),
    ({**SPEC, "replications": 0}, "'replications' must be one whole number >= 1"),
])
def test_bad_specs_raise_config_errors(spec, message):
    with pytest.raises(ConfigError) as info:
        sweeps.expand(spec)
    assert message in str(info.value)


def test_bad_toml_files_raise_config_errors_naming_the_problem(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        sweeps.load_spec(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("nodes = 3\nreplicas = = 3\n")
    with pytest.raises(ConfigError, match=r"not valid TOML: .*line 2"):
        sweeps.load_spec(bad)


def test_a_sweep_with_no_valid_point_is_an_error():
    with pytest.raises(ConfigError, match="no valid point"):
        sweeps.sweep({"nodes": 3, "replicas": 3, "quorum": 1, "rho": 5.0},
                     backend="serial", progress=False, annotate=ANALYTIC)


@pytest.mark.parametrize("kwargs, message", [
    ({"backend": "threads"}, "backend 'threads' is unknown"),
    ({"backend": "processes", "workers": 0}, "workers=0"),
    ({"backend": "serial", "address": "tcp://x:8786"}, "for backend='dask'"),
    ({"backend": "serial", "out": "r.txt"}, "must end in .csv or .parquet"),
    ({"backend": "serial", "resume": True}, "resume needs the results file"),
])
def test_bad_run_options_raise_config_errors(kwargs, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        sweeps.sweep(SPEC, progress=False, annotate=ANALYTIC, **kwargs)


# --- determinism ----------------------------------------------------------------

def test_results_are_identical_across_backends_and_worker_counts(serial_frame,
                                                                 dask_cluster):
    processes = sweeps.sweep(SPEC, backend="processes", workers=2, progress=False, annotate=ANALYTIC)
    dask = sweeps.sweep(SPEC, backend="dask", address=dask_cluster.scheduler_address,
                        progress=False, annotate=ANALYTIC)
    assert len(serial_frame) == ROWS and (serial_frame["status"] == "ok").all()
    for other in (processes, dask):
        pd.testing.assert_frame_equal(_without_timing(serial_frame),
                                      _without_timing(other), check_exact=True)


def test_a_point_has_the_same_numbers_alone_as_in_a_grid(serial_frame):
    alone = sweeps.sweep({**SPEC, "nodes": 6, "quorum": 2, "rho": 1.2,
                          "service": "lognormal:1.0"}, backend="serial", progress=False, annotate=ANALYTIC)
    in_grid = serial_frame[(serial_frame["nodes"] == 6) & (serial_frame["quorum"] == 2)
                           & (serial_frame["rho"] == 1.2)
                           & (serial_frame["service"] == "lognormal:1.0")]
    in_grid = in_grid[alone.columns].reset_index(drop=True)
    pd.testing.assert_frame_equal(_without_timing(alone), _without_timing(in_grid),
                                  check_exact=True)
    # Replications are different draws, not copies.
    assert alone["mean"].nunique() == 2


def test_an_empirical_point_depends_on_the_data_not_on_the_file_path(tmp_path):
    data = "\n".join(str(0.2 + 0.37 * (i % 11)) for i in range(200)) + "\n"
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "lat.txt").write_text(data)
    (tmp_path / "copy.txt").write_text(data)
    (tmp_path / "other.txt").write_text(data.replace("0.2\n", "0.3\n"))

    def mean(path):
        spec = {"nodes": 4, "replicas": 2, "quorum": 1, "arrival_rate": 0.5,
                "service": f"empirical:{path}", "jobs": 4000, "seed": 3}
        return sweeps.sweep(spec, backend="serial", progress=False, annotate=ANALYTIC)["mean"].iloc[0]

    assert mean(tmp_path / "a" / "lat.txt") == mean(tmp_path / "copy.txt")
    assert mean(tmp_path / "a" / ".." / "copy.txt") == mean(tmp_path / "copy.txt")
    assert mean(tmp_path / "other.txt") != mean(tmp_path / "copy.txt")


def test_rows_are_in_grid_order_with_analytic_columns_where_they_apply(serial_frame):
    points, _ = sweeps.expand(SPEC)
    got = serial_frame[["nodes", "quorum", "rho", "service", "replication"]]
    expected = [(p["nodes"], p["quorum"], p["rho"], p["service"], p["replication"])
                for p in points]
    assert list(got.itertuples(index=False, name=None)) == expected
    exp = serial_frame["service"] == "exp"
    # Theorem 3 applies to exponential service only.
    assert serial_frame.loc[exp, "approx"].notna().all()
    assert serial_frame.loc[~exp, "approx"].isna().all()
    np.testing.assert_allclose(serial_frame.loc[exp, "error"],
                               serial_frame.loc[exp, "approx"]
                               / serial_frame.loc[exp, "mean"] - 1)
    plain = sweeps.sweep(SPEC, backend="serial", annotate=False, progress=False)
    assert "approx" not in plain.columns
    assert not plain["analytic"].any() and serial_frame["analytic"].all()
    shared = [c for c in plain.columns if c != "analytic"]
    pd.testing.assert_frame_equal(_without_timing(plain[shared]),
                                  _without_timing(serial_frame[shared]), check_exact=True)


def test_a_rows_doubts_are_its_runs_warnings_but_a_merely_wide_interval(serial_frame):
    import ast

    from forkjoin_sim.simulation import simulate

    points, _ = sweeps.expand(SPEC)
    warned = serial_frame["warnings"] != "[]"
    doubted = serial_frame["doubts"] != "[]"
    # this grid has both: runs that doubt their interval, and runs whose only
    # warning is their interval's width
    assert doubted.any() and (warned & ~doubted).any()
    for i, only_wide in ((doubted.idxmax(), False), ((warned & ~doubted).idxmax(), True)):
        point, row = points[i], serial_frame.loc[i]
        result = simulate(sweeps.build_model(point), jobs=point["jobs"],
                          seed=sweeps.point_seed(point), engine=point["engine"],
                          warmup=point["warmup"], sample_every=point["sample_every"],
                          progress=False, workers=1)
        assert ast.literal_eval(row["warnings"]) == list(result.warnings)
        assert ast.literal_eval(row["doubts"]) == list(result.doubts)
        assert (result.warnings == result.width_notes) == only_wide


# --- failures -------------------------------------------------------------------

def test_a_failing_point_does_not_lose_the_others():
    good, _ = sweeps.expand({"nodes": 6, "replicas": 3, "quorum": [1, 2], "rho": 0.9,
                             "jobs": 2000, "seed": 3})
    bad = {**good[0], "service": "empirical:/nonexistent/latencies.txt"}
    rows = list(sweeps.run_points([good[0], bad, good[1]], backend="processes",
                                  workers=2, annotate=False))
    by_service = {(r["service"], r["quorum"]): r for r in rows}
    assert len(rows) == 3
    failed = by_service[(bad["service"], 1)]
    assert failed["status"] == "error" and "/nonexistent/latencies.txt" in failed["message"]
    for point in good:
        row = by_service[("exp", point["quorum"])]
        assert row["status"] == "ok" and row["message"] == ""
        assert row["mean"] == sweeps.run_point(point, annotate=False)["mean"]


def test_a_failed_point_is_recorded_in_the_file_and_rerun_by_resume(tmp_path,
                                                                    monkeypatch):
    spec = {"nodes": 6, "replicas": 3, "quorum": [1, 2, 3], "rho": 0.9, "jobs": 2000,
            "seed": 5}
    reference = tmp_path / "reference.csv"
    sweeps.sweep(spec, backend="serial", out=reference, progress=False, annotate=ANALYTIC)

    import forkjoin_sim.simulation as simulation
    real = simulation.simulate

    def crashing(model, **kwargs):
        if model.quorum == 2:
            raise RuntimeError("node 4 lost its disk")
        return real(model, **kwargs)

    monkeypatch.setattr(simulation, "simulate", crashing)
    out = tmp_path / "results.csv"
    frame = sweeps.sweep(spec, backend="serial", out=out, progress=False, annotate=ANALYTIC)
    assert list(frame["status"]) == ["ok", "error", "ok"]
    assert "RuntimeError: node 4 lost its disk" in frame.loc[1, "message"]
    written = pd.read_csv(out)
    assert list(written["status"]) == ["ok", "error", "ok"]
    expected = pd.read_csv(reference)
    assert list(written.loc[[0, 2], "mean"]) == list(expected.loc[[0, 2], "mean"])

    monkeypatch.setattr(simulation, "simulate", real)
    sweeps.sweep(spec, backend="serial", out=out, resume=True, progress=False, annotate=ANALYTIC)
    assert _text_without_timing(out) == _text_without_timing(reference)


def test_failing_analytic_columns_keep_the_statistics(monkeypatch):
    def broken(point, row):
        raise ZeroDivisionError("no estimate here")

    point = sweeps.expand({"nodes": 3, "replicas": 3, "quorum": 1, "rho": 0.5,
                           "jobs": 2000})[0][0]
    row = sweeps.run_point(point, annotate=(broken,))
    assert row["status"] == "error"
    assert row["message"].startswith("analytic columns failed: ZeroDivisionError")
    assert row["mean"] == sweeps.run_point(point, annotate=False)["mean"]


# --- the results file and resume ----------------------------------------------

def _interrupt_after(monkeypatch, calls: int) -> list:
    """Make the serial backend raise KeyboardInterrupt on point ``calls + 1``."""
    real, seen = sweeps.run_point, []

    def interrupted(point, annotate=True):
        if len(seen) == calls:
            raise KeyboardInterrupt
        seen.append(sweeps.point_key(point))
        return real(point, annotate)

    monkeypatch.setattr(sweeps, "run_point", interrupted)
    return seen


def test_resume_after_an_interrupt_gives_the_uninterrupted_file(tmp_path, monkeypatch,
                                                                serial_frame):
    uninterrupted = tmp_path / "uninterrupted.csv"
    sweeps.sweep(SPEC, backend="serial", out=uninterrupted, progress=False, annotate=ANALYTIC)

    out = tmp_path / "results.csv"
    _interrupt_after(monkeypatch, 7)
    # The same points listed in another order: the rows written before the
    # interrupt are not a prefix of the grid, so only the final sort restores it.
    shuffled = {**SPEC, "quorum": [3, 1, 2], "service": SPEC["service"][::-1]}
    with pytest.raises(KeyboardInterrupt):
        sweeps.sweep(shuffled, backend="serial", out=out, progress=False, annotate=ANALYTIC)
    assert not out.exists()  # written only when every point has run
    journal = tmp_path / "results.csv.partial.csv"
    partial = pd.read_csv(journal)  # a valid CSV of the finished points
    assert len(partial) == 7 and (partial["status"] == "ok").all()
    # A run killed in the middle of writing a row leaves a truncated last line.
    with open(journal, "a") as handle:
        handle.write("6,3,2,0.5,,1.0,exp,rand")

    monkeypatch.undo()
    ran = _interrupt_after(monkeypatch, 10**9)
    # without resume the journal would start afresh, the 7 points lost (a fuzz)
    before = journal.read_bytes()
    with pytest.raises(ConfigError, match=r"results.csv.partial.csv holds 7 finished "
                       r"point\(s\) of an interrupted sweep to .*add --resume"):
        sweeps.sweep(SPEC, backend="serial", out=out, progress=False, annotate=ANALYTIC)
    assert ran == [] and journal.read_bytes() == before
    # a finished row damaged by hand is run again, not copied into the results
    lines = journal.read_text().splitlines(keepends=True)
    header = lines[0].rstrip("\n").split(",")
    cells = lines[1].rstrip("\n").split(",")
    cells[header.index("p99")] = "abc"
    journal.write_text("".join([lines[0], ",".join(cells) + "\n", *lines[2:]]))
    frame = sweeps.sweep(SPEC, backend="serial", out=out, resume=True, progress=False, annotate=ANALYTIC)
    assert len(ran) == ROWS - 7 + 1
    assert _text_without_timing(out) == _text_without_timing(uninterrupted)
    assert not journal.exists()
    pd.testing.assert_frame_equal(_without_timing(frame), _without_timing(serial_frame),
                                  check_exact=True)

    # Resuming a finished file runs nothing and changes nothing.
    before = out.read_bytes()
    ran.clear()
    sweeps.sweep(SPEC, backend="serial", out=out, resume=True, progress=False, annotate=ANALYTIC)
    assert ran == [] and out.read_bytes() == before


def test_resume_refuses_a_file_of_another_sweep(tmp_path):
    out = tmp_path / "results.csv"
    small = {"nodes": 3, "replicas": 3, "quorum": 1, "rho": 0.5, "jobs": 500}
    sweeps.sweep(small, backend="serial", out=out, progress=False, annotate=ANALYTIC)
    with pytest.raises(ConfigError, match="not points of this sweep"):
        sweeps.sweep({**small, "seed": 1}, backend="serial", out=out, resume=True,
                     progress=False, annotate=ANALYTIC)


def test_parquet_results_read_back_as_the_csv_ones(tmp_path, monkeypatch):
    pytest.importorskip("pyarrow")
    spec = {"nodes": 6, "replicas": 3, "quorum": [1, 3], "rho": [0.5, 0.9],
            "service": ["exp", "gamma:2"], "jobs": 1000, "seed": 2}
    csv_frame = sweeps.sweep(spec, backend="serial", out=tmp_path / "r.csv",
                             progress=False, annotate=ANALYTIC)
    out = tmp_path / "r.parquet"
    _interrupt_after(monkeypatch, 3)
    with pytest.raises(KeyboardInterrupt):
        sweeps.sweep(spec, backend="serial", out=out, progress=False, annotate=ANALYTIC)
    assert not out.exists() and len(pd.read_csv(tmp_path / "r.parquet.partial.csv")) == 3
    monkeypatch.undo()
    sweeps.sweep(spec, backend="serial", out=out, resume=True, progress=False, annotate=ANALYTIC)
    assert not (tmp_path / "r.parquet.partial.csv").exists()
    pd.testing.assert_frame_equal(_without_timing(pd.read_parquet(out)),
                                  _without_timing(csv_frame), check_exact=True)


# Two points of another sweep: the earlier results an interrupted run must keep.
OLD_SPEC = {"nodes": 3, "replicas": 3, "quorum": [1, 2], "rho": 0.5, "jobs": 500,
            "seed": 4}
NEW_SPEC = {"nodes": 6, "replicas": 3, "quorum": [1, 2, 3], "rho": 0.5, "jobs": 500,
            "seed": 5}


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_an_interrupted_sweep_leaves_the_earlier_results_file_as_it_was(
        tmp_path, monkeypatch, suffix):
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
    out = tmp_path / f"results{suffix}"
    journal = tmp_path / f"results{suffix}.partial.csv"
    sweeps.sweep(OLD_SPEC, backend="serial", out=out, progress=False, annotate=False)
    before = out.read_bytes()
    _interrupt_after(monkeypatch, 2)
    with pytest.raises(KeyboardInterrupt):
        sweeps.sweep(NEW_SPEC, backend="serial", out=out, progress=False, annotate=False)
    assert out.read_bytes() == before
    assert len(pd.read_csv(journal)) == 2  # the finished points, journaled beside it
    monkeypatch.undo()
    ran = _interrupt_after(monkeypatch, 10**9)
    frame = sweeps.sweep(NEW_SPEC, backend="serial", out=out, resume=True,
                         progress=False, annotate=False)
    assert len(ran) == 1 and not journal.exists()
    written = pd.read_csv(out) if suffix == ".csv" else pd.read_parquet(out)
    assert list(written["nodes"]) == [6, 6, 6] and list(written["quorum"]) == [1, 2, 3]
    pd.testing.assert_frame_equal(_without_timing(written), _without_timing(frame),
                                  check_exact=True)


def test_a_failed_final_write_leaves_the_earlier_results_and_the_journal(tmp_path,
                                                                          monkeypatch):
    out = tmp_path / "results.csv"
    sweeps.sweep(OLD_SPEC, backend="serial", out=out, progress=False, annotate=False)
    before = out.read_bytes()

    def full_disk(handle_or_path, *args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(sweeps, "write_final", full_disk)
    with pytest.raises(OSError):
        sweeps.sweep(NEW_SPEC, backend="serial", out=out, progress=False, annotate=False)
    assert out.read_bytes() == before
    assert len(pd.read_csv(tmp_path / "results.csv.partial.csv")) == 3


# --- command line ---------------------------------------------------------------

def _main(argv):
    """``forkjoin-sim`` with only the sweep sub-command, as cli.main runs it."""
    parser = cli._Parser(prog="forkjoin-sim")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=cli._Parser)
    errors = register(sub)
    args = parser.parse_args(argv)
    try:
        return args.handler(args)
    except errors as exc:
        print(f"forkjoin-sim {args.command}: error: {exc}", file=sys.stderr)
        return cli.EXIT_BAD_INPUT


def test_cli_writes_the_results_and_prints_the_notes(tmp_path, capsys):
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC_TOML)
    out = tmp_path / "results.csv"
    # through cli.main, which prints the library's warnings after success
    assert cli.main(["sweep", str(spec), "--out", str(out), "--workers", "1",
                     "--quiet"]) == 0
    captured = capsys.readouterr()
    # once each: the library's SweepNote warning is not printed again
    assert captured.err.count("note: skipped") == 6
    assert captured.err.count("skipped") == 6 and "warning:" not in captured.err
    assert f"{ROWS} rows ({ROWS} ok, 0 failed)" in captured.out
    written = pd.read_csv(out)
    assert len(written) == ROWS and "approx" in written.columns


def test_a_failed_points_line_names_every_parameter_it_sets(tmp_path, capsys,
                                                            monkeypatch):
    """A point that fails while it runs is named by its own parameters (clients, think),
    not by nodes, replicas and quorum alone (two points then read alike)."""
    import forkjoin_sim.simulation

    def fails(model, **_):
        raise ConfigError("a run that cannot go on")

    monkeypatch.setattr(forkjoin_sim.simulation, "simulate", fails)
    spec = tmp_path / "spec.toml"
    spec.write_text("nodes = 6\nreplicas = 3\nquorum = 2\nclients = [4, 8]\n"
                    "think = 1.0\njobs = 1000\n")
    assert _main(["sweep", str(spec), "--out", str(tmp_path / "r.csv"), "--workers",
                  "1", "--quiet"]) == 1
    lines = [line for line in capsys.readouterr().err.splitlines()
             if line.startswith("failed: ")]
    assert len(lines) == 2 and "clients=4 " in lines[0] and "clients=8 " in lines[1]
    assert "think=1.0" in lines[0] and "replication=0" in lines[0]
    assert lines[0].endswith("a run that cannot go on") and "rho=" not in lines[0]
    assert "service=" not in lines[0] and "mu=" not in lines[0]  # at their defaults


def test_a_closed_point_with_too_few_jobs_per_client_is_skipped_before_any_runs():
    """1,000 clients and 5,000 jobs: skipped with a note when the spec is read (it
    failed while the sweep ran, and replaced --out with an error row)."""
    points, notes = sweeps.expand({"nodes": 6, "replicas": 3, "quorum": 2,
                                   "clients": [4, 1000], "think": 1.0, "jobs": 5000})
    assert [p["clients"] for p in points] == [4]
    assert len(notes) == 1 and "each client would send fewer than 10 jobs" in notes[0]


@pytest.mark.parametrize("text, message", [
    (None, "does not exist"),
    ("nodes = [3, 6]\nreplicas = = 3\n", "line 2"),
    (SPEC_TOML + "replica = 3\n", "unknown sweep key(s) replica"),
])
def test_cli_bad_spec_is_one_line_and_exit_2(tmp_path, capsys, text, message):
    spec = tmp_path / "spec.toml"
    if text is not None:
        spec.write_text(text)
    assert _main(["sweep", str(spec), "--out", str(tmp_path / "r.csv")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("forkjoin-sim sweep: error:") and message in err
    assert err.count("\n") == 1


def test_cli_exit_status_1_when_a_point_fails(tmp_path, capsys, monkeypatch):
    import forkjoin_sim.simulation as simulation

    def crashing(model, **kwargs):
        raise RuntimeError("out of memory")

    monkeypatch.setattr(simulation, "simulate", crashing)
    spec = tmp_path / "spec.toml"
    spec.write_text("nodes = 3\nreplicas = 3\nquorum = [1, 2]\nrho = 0.5\njobs = 100\n")
    out = tmp_path / "r.csv"
    assert _main(["sweep", str(spec), "--out", str(out), "--workers", "1",
                  "--quiet"]) == 1
    failures = [line for line in capsys.readouterr().err.splitlines()
                if line.startswith("failed:")]
    assert len(failures) == 2 and all("RuntimeError: out of memory" in f for f in failures)
    assert list(pd.read_csv(out)["status"]) == ["error", "error"]


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_cli_interrupt_names_the_file_that_holds_the_finished_points(
        tmp_path, capsys, monkeypatch, suffix):
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
    spec = tmp_path / "spec.toml"
    spec.write_text("nodes = 6\nreplicas = 3\nquorum = [1, 2, 3]\nrho = 0.5\n"
                    "jobs = 500\n")
    out = tmp_path / f"r{suffix}"
    sweeps.sweep(OLD_SPEC, backend="serial", out=out, progress=False, annotate=False)
    before = out.read_bytes()
    _interrupt_after(monkeypatch, 1)
    assert cli.main(["sweep", str(spec), "--out", str(out), "--workers", "1",
                     "--quiet"]) == 130
    err = capsys.readouterr().err
    journal = tmp_path / f"r{suffix}.partial.csv"
    assert f"the 1 finished point(s) are in {journal} ({out} is unchanged)" in err
    assert f"--resume to complete {out}" in err
    assert out.read_bytes() == before and len(pd.read_csv(journal)) == 1
    # interrupted before any point finished, with no earlier file: nothing to name
    journal.unlink()
    out.unlink()
    _interrupt_after(monkeypatch, 0)
    assert cli.main(["sweep", str(spec), "--out", str(out), "--workers", "1",
                     "--quiet"]) == 130
    err = capsys.readouterr().err
    assert "no point finished" in err and "finished point(s) are in" not in err
    assert not out.exists()


def _children(pid: int) -> set[int]:
    import pathlib

    found = set()
    for task in pathlib.Path(f"/proc/{pid}/task").glob("*"):
        try:
            found |= {int(c) for c in (task / "children").read_text().split()}
        except OSError:
            pass
    return found


def _alive(pid: int) -> bool:
    import pathlib

    try:  # a zombie has exited; only its parent's wait is missing
        return pathlib.Path(f"/proc/{pid}/stat").read_text().split(")")[1].split()[0] != "Z"
    except OSError:
        return False


def _survivors(workers, wait: float = 20.0) -> list[int]:
    """The ``workers`` still alive after up to ``wait`` seconds; they are killed, so
    a failing test does not leave them running."""
    import signal
    import time

    deadline = time.monotonic() + wait
    while any(_alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = [w for w in workers if _alive(w)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    return left


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_pool_workers_exit_when_the_sweep_is_killed(tmp_path):
    import signal
    import subprocess
    import time

    spec = tmp_path / "long.toml"
    spec.write_text("nodes = 6\nreplicas = 3\nquorum = [1, 2, 3]\nrho = 0.5\n"
                    "jobs = 50000000\n")
    proc = subprocess.Popen([sys.executable, "-m", "forkjoin_cli.main", "sweep", str(spec),
                             "--out", str(tmp_path / "out.csv"), "--workers", "2",
                             "--quiet", "--no-analytic"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        workers = set()
        while len(workers) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
            workers = {c for c in _children(proc.pid) if _alive(c)}
        assert len(workers) >= 2, "the pool did not start"
        time.sleep(1.0)  # the workers are inside their first point
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    left = _survivors(workers)
    assert not left, "orphaned pool workers kept running after the sweep was killed"


def test_resume_refuses_a_file_written_with_other_analytic_settings(tmp_path):
    out = tmp_path / "results.csv"
    small = {"nodes": 3, "replicas": 3, "quorum": [1, 2], "rho": 0.5, "jobs": 500}
    sweeps.sweep(small, backend="serial", out=out, annotate=False, progress=False)
    before = out.read_bytes()
    with pytest.raises(ConfigError, match="without the analytic columns"):
        sweeps.sweep(small, backend="serial", out=out, resume=True, progress=False,
                     annotate=ANALYTIC)
    assert out.read_bytes() == before


@pytest.mark.parametrize("setting, message", [
    ({"jobs": 0}, "'jobs' must be one whole number >= 2, got 0"),
    ({"warmup": 1.5}, "warmup fraction 1.5"),
    ({"sample_every": 0}, "sample_every"), ({"jobs": 3, "sample_every": 5}, "fewer than 2"),
])
def test_bad_run_settings_exit_2_before_any_work(tmp_path, capsys, monkeypatch, setting,
                                                 message):
    ran = []
    monkeypatch.setattr(sweeps, "run_point", lambda *a, **k: ran.append(a))
    body = {"nodes": 6, "replicas": 3, "quorum": 2, "rho": 0.5, "jobs": 1000, **setting}
    spec = tmp_path / "spec.toml"
    spec.write_text("".join(f"{k} = {v!r}\n" for k, v in body.items()))
    out = tmp_path / "out.csv"
    assert cli.main(["sweep", str(spec), "--out", str(out), "--workers", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err
    assert ran == [] and not out.exists()


def test_a_spec_of_invalid_points_only_is_one_line(tmp_path, capsys):
    spec = tmp_path / "spec.toml"
    spec.write_text("nodes = 6\nreplicas = 3\nquorum = [4, 5]\nrho = 0.5\n")
    assert cli.main(["sweep", str(spec), "--out", str(tmp_path / "o.csv")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no valid point" in err


def test_an_unreachable_dask_scheduler_is_one_config_error():
    pytest.importorskip("distributed")
    points, _ = sweeps.expand({"nodes": 3, "replicas": 2, "quorum": 1, "rho": 0.3,
                               "jobs": 200})
    with pytest.raises(ConfigError, match="cannot reach"):
        list(sweeps.run_points(points, backend="dask", address="tcp://127.0.0.1:1"))


def test_closed_loop_and_uneven_points_keep_their_own_spelling_and_skip_closed_forms(
        tmp_path):
    # A point's row must carry the point's values (think unset, speeds as written), or
    # the rows cannot be matched back to the points; the closed forms assume Poisson
    # arrivals on identical nodes, so they are left empty there.
    spec = {"nodes": 6, "replicas": 3, "quorum": 2, "jobs": 2000, "seed": 1,
            "points": [{"clients": 4}, {"rho": 0.9, "speeds": "1,1,1,1,1,0.5"},
                       {"rho": 0.9}]}
    out = tmp_path / "o.csv"
    frame = sweeps.sweep(spec, out=out, backend="serial", progress=False,
                         annotate=ANALYTIC)
    assert list(frame["status"]) == ["ok", "ok", "ok"]
    assert frame["clients"].tolist()[0] == 4 and pd.isna(frame["think"].tolist()[0])
    assert frame["speeds"].tolist()[1] == "1,1,1,1,1,0.5"
    assert frame["approx"].isna().tolist() == [True, True, False]
    again = sweeps.sweep(spec, out=out, backend="serial", progress=False, resume=True,
                         annotate=ANALYTIC)
    pd.testing.assert_frame_equal(again, frame)


def test_a_results_file_that_is_the_spec_is_refused_and_the_spec_kept(tmp_path, capsys):
    spec = tmp_path / "spec.csv"
    text = "nodes = 6\nreplicas = 3\nquorum = 2\nrho = 0.5\njobs = 2000\n"
    spec.write_text(text)
    assert cli.main(["sweep", str(spec), "--out", str(spec)]) == 2
    assert "is also the input" in capsys.readouterr().err
    assert spec.read_text() == text


def test_resume_from_a_file_it_did_not_write_is_one_line_and_cut_rows_rerun(tmp_path,
                                                                           capsys):
    spec = tmp_path / "spec.toml"
    spec.write_text("nodes = 6\nreplicas = 3\nquorum = [1, 2]\nrho = 0.5\njobs = 2000\n")
    out = tmp_path / "out.csv"
    out.write_bytes(b"\xff\xfe\x00binary")
    assert cli.main(["sweep", str(spec), "--out", str(out), "--resume", "--workers",
                     "1", "--quiet"]) == 2
    assert "cannot resume from" in capsys.readouterr().err
    # a row cut before its statistics (status written, mean not) is run again
    frame = sweeps.sweep(str(spec), out=out, backend="serial", progress=False, annotate=ANALYTIC)
    import csv
    import io

    # cells are CSV (engine_reason holds commas): read and write them as such
    lines = list(csv.reader(io.StringIO(out.read_text())))
    lines[1][lines[0].index("mean")] = ""
    text = io.StringIO()
    csv.writer(text, lineterminator="\n").writerows(lines)
    out.write_text(text.getvalue())
    again = sweeps.sweep(str(spec), out=out, backend="serial", progress=False, annotate=ANALYTIC,
                         resume=True)
    pd.testing.assert_frame_equal(_without_timing(again), _without_timing(frame))


def test_points_whose_clock_cannot_resolve_service_are_skipped_with_a_note():
    points, notes = sweeps.expand({"nodes": 6, "replicas": 3, "quorum": 2,
                                   "rho": [0.5, 1e-13], "jobs": 10**6})
    assert [p["rho"] for p in points] == [0.5]
    assert len(notes) == 1 and "too coarse for service times" in notes[0]


# --- engines -------------------------------------------------------------------

# Nodes serving one replica each at per-node load 0.5, service mean 1: M/M/1 queues
# (random placement splits a Poisson stream), mean sojourn 1 / (1 - 0.5) = 2.
MM1_POINT = {"nodes": 3, "replicas": 1, "quorum": 1, "rho": 1.5}
MM1_MEAN = 1 / (1 - 0.5)


def test_a_spec_without_engine_runs_simulates_choice_and_names_it():
    from forkjoin_sim.simulation import choose_engine

    spec = {"nodes": 6, "replicas": 3, "quorum": 2, "rho": [0.5, 0.9],
            "purging": [False, True], "jobs": 600, "seed": 3}
    points, _ = sweeps.expand(spec)
    assert [p["engine"] for p in points] == ["auto"] * 4
    assert all('"engine":"auto"' in sweeps.point_key(p) for p in points)
    frame = sweeps.sweep(spec, backend="serial", progress=False, annotate=False)
    assert (frame["status"] == "ok").all() and (frame["engine"] == "auto").all()
    for point, (_, row) in zip(points, frame.iterrows()):
        ran, why = choose_engine(sweeps.build_model(point), point["jobs"],
                                 sweeps.point_seed(point), point["warmup"])
        assert (row["engine_ran"], row["engine_reason"]) == (ran, why)
    assert list(frame["engine_ran"]) == ["fast", "simpy", "fast", "simpy"]


def test_a_long_point_runs_the_fused_kernel_with_the_same_numbers_on_1_or_2_workers():
    from forkjoin_sim.simulation import AUTO_FUSED_JOBS, AUTO_REPLICATIONS, simulate

    spec = {**MM1_POINT, "jobs": AUTO_FUSED_JOBS, "replications": 2, "seed": 5}
    serial = sweeps.sweep(spec, backend="serial", progress=False, annotate=False)
    pool = sweeps.sweep(spec, backend="processes", workers=2, progress=False,
                        annotate=False)
    pd.testing.assert_frame_equal(_without_timing(serial), _without_timing(pool),
                                  check_exact=True)
    assert (serial["engine_ran"] == "fused").all()
    assert serial["engine_reason"].str.contains(
        f"its {AUTO_REPLICATIONS} replications run on one worker").all()
    assert not serial["engine_reason"].str.contains("every core").any()
    # the numbers simulate gives without an engine on every core of this machine
    point = sweeps.expand(spec)[0][0]
    alone = simulate(sweeps.build_model(point), jobs=point["jobs"],
                     seed=sweeps.point_seed(point), workers=2, progress=False)
    assert alone.engine == "fused"
    for column in ("mean", "ci_low", "ci_high", "p99", "jobs_measured"):
        assert serial[column].iloc[0] == alone.to_dict()[column]
    # and they are statistics of the queue: both intervals, at 99.9% (two 95%
    # intervals both hold it for only 90% of seeds), hold the M/M/1 mean
    from scipy import stats

    df = serial["batches"] - 1
    half = ((serial["ci_high"] - serial["ci_low"]) / 2 * stats.t.ppf(0.9995, df)
            / stats.t.ppf((1 + serial["confidence"]) / 2, df))
    assert ((serial["mean"] - MM1_MEAN).abs() < half).all()
    assert serial["mean"].nunique() == 2


def test_an_explicit_fast_point_keeps_its_identity_and_runs_simulates_fast_engine():
    spec = {"nodes": 6, "replicas": 3, "quorum": 2, "rho": 0.5, "engine": "fast",
            "jobs": 2000, "seed": 7}
    point = sweeps.expand(spec)[0][0]
    # The text every point's seed is hashed from; with engine "fast" it is the one
    # sweeps wrote before the default was "auto" (the spec format), so such points
    # keep their identity (their rows resume) and seeds.
    assert sweeps.point_key(point) == (
        '{"arrival_rate":null,"engine":"fast","jobs":2000,"mu":1.0,"nodes":6,'
        '"placement":"random","purging":false,"quorum":2,"replicas":3,"replication":0,'
        '"rho":0.5,"sample_every":1,"seed":7,"service":"exp","warmup":0.1}')
    from forkjoin_sim.simulation import simulate

    frame = sweeps.sweep(spec, backend="serial", progress=False, annotate=False)
    alone = simulate(sweeps.build_model(point), jobs=2000, seed=sweeps.point_seed(point),
                     engine="fast", progress=False).to_dict()
    row = frame.iloc[0]
    assert row["engine"] == row["engine_ran"] == "fast"
    assert "engine_reason" not in frame  # the spec named the engine: nothing to explain
    for column in ("mean", "ci_low", "ci_high", "p50", "p99", "p999", "jobs_measured"):
        assert row[column] == alone[column]


def _strip_column(path, column):
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    frame.drop(columns=[column]).to_csv(path, index=False)


def test_rows_written_before_seeds_were_replayable_run_again_on_resume(tmp_path):
    """Rows without run_seed drew from the old point seeds (no simulate --seed gives
    them): a resume reruns them, so the file is the one an uninterrupted sweep writes,
    every row replayable."""
    spec = {**SPEC, "nodes": 6, "replications": 1}
    full, old = tmp_path / "full.csv", tmp_path / "old.csv"
    sweeps.sweep(spec, backend="serial", out=full, progress=False, annotate=ANALYTIC)
    frame = pd.read_csv(full, dtype=str, keep_default_na=False)
    # an earlier version's file: no replay columns, and (its seeds) other numbers
    frame = frame.drop(columns=["run_seed", "replay"]).assign(mean="9.5")
    frame.head(3).to_csv(old, index=False)
    sweeps.sweep(spec, backend="serial", out=old, resume=True, progress=False,
                 annotate=ANALYTIC)
    pd.testing.assert_frame_equal(_without_timing(pd.read_csv(old)),
                                  _without_timing(pd.read_csv(full)), check_exact=True)


def test_a_file_written_when_fast_was_the_default_resumes_on_fast_and_says_so(
        tmp_path, capsys):
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC_TOML)
    full, old = tmp_path / "full.csv", tmp_path / "old.csv"
    fast = {**SPEC, "engine": "fast"}
    sweeps.sweep(fast, backend="serial", out=full, progress=False, annotate=ANALYTIC)
    # what an earlier version wrote: engine "fast" in every row, no engine_ran, and
    # cut off after 10 points
    _strip_column(full, "engine_ran")
    old.write_text("".join(full.read_text().splitlines(keepends=True)[:11]))
    assert _main(["sweep", str(spec), "--out", str(old), "--workers", "1", "--quiet",
                  "--resume"]) == 0
    notes = [line for line in capsys.readouterr().err.splitlines()
             if "resuming with engine" in line]
    assert len(notes) == 1 and 'add that line to the spec' in notes[0]
    resumed = pd.read_csv(old)
    assert (resumed["engine"] == "fast").all() and len(resumed) == ROWS
    pd.testing.assert_frame_equal(_without_timing(resumed).drop(columns="engine_ran"),
                                  _without_timing(pd.read_csv(full)), check_exact=True)
    # the library says so in the frame's notes; a file of "auto" rows needs no note
    again = sweeps.sweep(SPEC, backend="serial", out=old, resume=True, progress=False,
                         annotate=ANALYTIC)
    assert "resuming with engine" in again.attrs["notes"][0]
    new = tmp_path / "new.csv"
    sweeps.sweep(SPEC, backend="serial", out=new, progress=False, annotate=ANALYTIC)
    later = sweeps.sweep(SPEC, backend="serial", out=new, resume=True, progress=False,
                         annotate=ANALYTIC)
    assert not any("resuming" in n for n in later.attrs["notes"])
    assert (later["engine"] == "auto").all()


def test_a_spec_that_names_an_engine_is_not_switched_to_fast(tmp_path):
    out = tmp_path / "results.csv"
    small = {"nodes": 3, "replicas": 3, "quorum": 1, "rho": 0.5, "jobs": 500,
             "engine": "fast"}
    sweeps.sweep(small, backend="serial", out=out, progress=False, annotate=False)
    with pytest.raises(ConfigError, match="not points of this sweep"):
        sweeps.sweep({**small, "engine": "simpy"}, backend="serial", out=out,
                     resume=True, progress=False, annotate=False)


@pytest.mark.parametrize("engine, message", [
    ("fused", "use engine = 'auto' (the default)"),
    ("turbo", "use one of auto, fast, simpy"),
])
def test_an_engine_a_sweep_cannot_run_is_refused_with_how_to_fix_it(engine, message):
    """An engine no point can run on is a spec error (it was a note per point and a
    sweep with fewer rows); tests/test_sweep_points.py has the other keys."""
    with pytest.raises(ConfigError,
                       match=f"sweep key 'engine': .*{re.escape(message)}"):
        sweeps.expand({**MM1_POINT, "engine": ["fast", engine], "jobs": 100})


def test_memory_is_checked_for_points_that_keep_their_jobs_only():
    huge = {**MM1_POINT, "jobs": 10**10}
    sweeps.check_run_settings(sweeps.expand(huge)[0], workers=2)  # fused: streams
    with pytest.raises(ConfigError, match="GB of memory"):
        sweeps.check_run_settings(sweeps.expand({**huge, "engine": "fast"})[0], workers=2)


# --- closed streams, stopped pools ------------------------------------------------

def test_no_standard_error_drops_the_progress_bar_not_the_sweep(monkeypatch):
    import forkjoin_sim.run

    # as under pythonw, or a daemon started with stderr closed
    monkeypatch.setattr(sys, "stderr", None)
    monkeypatch.setattr(forkjoin_sim.run, "PROGRESS_DELAY", 0.0)  # the bar draws at once
    frame = sweeps.sweep({**SPEC, "nodes": 6, "rho": 0.5, "replications": 1},
                         backend="serial", progress=True, annotate=False)
    assert len(frame) == 6 and (frame["status"] == "ok").all()


def test_a_pool_sweep_with_standard_error_closed_completes(tmp_path):
    import subprocess

    spec = tmp_path / "spec.toml"
    # long enough (seconds) for the progress bar to draw
    spec.write_text("nodes = 6\nreplicas = 3\nquorum = [1, 2, 3]\nrho = [0.5, 0.9]\n"
                    "jobs = 400000\n")
    out = tmp_path / "out.csv"
    proc = subprocess.run(
        ["sh", "-c", 'exec "$@" 2>&-', "sh", sys.executable, "-m", "forkjoin_cli.main",
         "sweep", str(spec), "--out", str(out), "--workers", "2", "--no-analytic"],
        capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0
    assert "6 rows (6 ok, 0 failed)" in proc.stdout
    assert (pd.read_csv(out)["status"] == "ok").sum() == 6


_LEFT_EARLY = """
import sys
from forkjoin_sim.sweep import runner as sweeps

quick, _ = sweeps.expand({"nodes": 6, "replicas": 3, "quorum": 1, "rho": 0.5,
                          "jobs": 2000})
# minutes of work each (event-level engine): left running, they would hold the exit
slow, _ = sweeps.expand({"nodes": 6, "replicas": 3, "quorum": [1, 2, 3], "rho": 0.5,
                         "jobs": 3000000, "engine": "simpy"})
rows = sweeps.run_points(quick + slow, workers=2, annotate=False)
next(rows)
print(*sorted(p.pid for p in __import__("multiprocessing").active_children()))
sys.stdout.flush()
rows.close()  # the caller leaves early (an error, Ctrl-C)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_leaving_a_pool_early_ends_its_workers_and_the_process_exits():
    import signal
    import subprocess

    try:
        proc = subprocess.run([sys.executable, "-c", _LEFT_EARLY], capture_output=True,
                              text=True, timeout=60)
    except subprocess.TimeoutExpired as exc:
        workers = [int(pid) for pid in (exc.stdout or b"").split()]
        for pid in workers:  # do not leave them running if the test fails
            os.kill(pid, signal.SIGKILL)
        pytest.fail("the process did not exit: its pool waited for the running points")
    assert proc.returncode == 0, proc.stderr
    workers = [int(pid) for pid in proc.stdout.split()]
    assert len(workers) == 2 and not any(_alive(w) for w in workers)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_sigterm_ends_estimators_referee_and_its_pool_workers(tmp_path):
    import signal
    import subprocess
    import time

    (tmp_path / "run").mkdir()
    out = tmp_path / "run" / "r.csv"
    errors = tmp_path / "stderr.txt"
    # stderr to a file, not a pipe: orphaned workers would hold a pipe open for ever
    with open(errors, "w") as stderr:
        proc = subprocess.Popen([sys.executable, "-m", "forkjoin_cli.main", "estimators",
                                 "referee", "--set", "six-three", "--out", str(out),
                                 "--workers", "2"],
                                stdout=subprocess.DEVNULL, stderr=stderr,
                                start_new_session=True)
    workers = set()
    try:
        deadline = time.monotonic() + 60
        while len(workers) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
            workers = {c for c in _children(proc.pid) if _alive(c)}
        assert len(workers) >= 2, "the pool did not start"
        time.sleep(1.0)  # the workers are inside their first run
        proc.send_signal(signal.SIGTERM)
        status = proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
        left = _survivors(workers)
    assert not left, "pool workers kept running after the referee was stopped"
    assert status == 128 + signal.SIGTERM
    assert errors.read_text().splitlines() == [
        "forkjoin-sim estimators: interrupted by SIGTERM"]
    assert os.listdir(tmp_path / "run") == []


def test_the_library_warns_of_the_points_it_skips():
    """A notebook's sweep lost its k > r points with only frame.attrs to say so (an
    API probe): one SweepNote warning says so before any point runs, however many
    (the paper's grid skips hundreds: one warning each buried fig2's output)."""
    with pytest.warns(sweeps.SweepNote) as caught:
        frame = sweeps.sweep(SPEC, backend="serial", progress=False, annotate=ANALYTIC)
    said = [str(w.message) for w in caught if issubclass(w.category, sweeps.SweepNote)]
    notes = frame.attrs["notes"]
    assert len(notes) == 6
    assert said == [f"{notes[0]} (and 5 more notes: frame.attrs['notes'] lists them)"]


def test_the_validation_grids_skip_their_points_quietly(capsys, tmp_path):
    """fig2 printed 752 warning lines of its grid's k > r points (a docs check)."""
    assert cli.main(["fig2", "--out", str(tmp_path), "--jobs", "2000", "--workers",
                     "1"]) == 0
    assert "skipped" not in capsys.readouterr().err


def test_a_large_grids_notes_are_counted_not_listed(tmp_path, capsys):
    """A grid of 155,000 combinations printed 44,280 'note: skipped' lines (a fuzz):
    past 20 notes the command prints the first 10 and a count."""
    spec = tmp_path / "spec.toml"
    spec.write_text("nodes = [1, 2]\nreplicas = [1, 2]\nquorum = [1, 2, 3, 4, 5, 6]\n"
                    "rho = [0.1, 0.2, 0.3]\njobs = 400\nseed = 1\n")
    out = tmp_path / "results.csv"
    assert _main(["sweep", str(spec), "--out", str(out), "--workers", "1",
                  "--quiet"]) == 0
    err = capsys.readouterr().err
    assert err.count("note: skipped") == 10
    # 3 loads x (1 node: 5 quorums over 1 replica, all 6 over 2 > 1 node; 2 nodes: 5
    # over 1 replica, 4 over 2) = 60 skipped, less the 10 shown
    assert "note: and 50 more combinations of the grid that cannot run (such as k > r)" \
        in err


def test_the_memory_check_counts_the_points_that_can_run_at_once(tmp_path):
    """27 points on --workers 300 were refused as 300 runs at once (a fuzz)."""
    from forkjoin_sim.checks import BYTES_PER_JOB, available_memory

    free = available_memory()
    if free is None:
        pytest.skip("the system does not say how much memory is free")
    # a run that fits 3 times but not 300 times over
    jobs = int(0.8 * free / BYTES_PER_JOB / 30)
    points = [{"nodes": 3, "replicas": 2, "quorum": 1, "rho": 0.3, "engine": "fast",
               "purging": False, "jobs": jobs, "warmup": 0.1, "sample_every": 1}] * 3
    sweeps.check_run_settings(points, workers=300)  # 3 at once: fits
    with pytest.raises(ConfigError, match="on each of 300 workers at once.*or fewer "
                                          "workers"):
        sweeps.check_run_settings(points * 100, workers=300)


def test_the_count_of_notes_names_their_kind(tmp_path, capsys):
    """24 'listed twice' notes were counted as '14 more combinations of the grid that
    cannot run' (a review): notes of another kind are counted as notes."""
    entry = ("[[points]]\nnodes = 3\nreplicas = 3\nquorum = [1, 2, 3]\n"
             "rho = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]\n")
    spec = tmp_path / "spec.toml"
    spec.write_text("jobs = 400\nseed = 1\n" + entry + entry)
    out = tmp_path / "results.csv"
    assert _main(["sweep", str(spec), "--out", str(out), "--workers", "1",
                  "--quiet"]) == 0
    err = capsys.readouterr().err
    assert err.count("is listed twice") == 10
    assert "note: and 14 more notes\n" in err and "cannot run" not in err
