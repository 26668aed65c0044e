"""Calibration from benchmark summaries: recovery of known parameters, identifiability
warnings, measurement-file validation, the model file, the two commands."""

import csv
import math
import re
from dataclasses import replace

import numpy as np
import pytest

from forkjoin_sim.cli import main
from forkjoin_sim.errors import ConfigError
from sizing.calibrated_model import CalibratedModel, read_model, write_model
from sizing.calibration import calibrate, predict, simulate_row
from sizing.measurements import Measurement, read_measurements

TRUTH = CalibratedModel(nodes=6, replicas=3, threads=4, data_read_ms=0.8,
                        digest_ratio=0.6, write_ms=0.5, overhead_ms=0.3, think_ms=0.0)
HEADER = "operation,consistency,threads,throughput,mean_ms"


def _measure(model, configs, seed=99):
    """Rows 'measured' on the simulator: long runs of ``model``."""
    rows = []
    for i, (operation, level, threads) in enumerate(configs):
        sim = simulate_row(model, Measurement(operation, level, threads), 150_000,
                           np.random.SeedSequence([seed, i]))
        rows.append(Measurement(operation, level, threads, throughput=sim.throughput,
                                mean_ms=sim.mean))
    return rows


@pytest.fixture(scope="module")
def recovery():
    configs = [(op, level, threads) for op, levels in
               (("read", ("ONE", "QUORUM", "ALL")), ("write", ("ONE", "ALL")))
               for level in levels for threads in (6, 48)]
    rows = _measure(TRUTH, configs)
    return rows, calibrate(rows, 6, 3, seed=1, threads=(2, 4, 8), confirm=False)


def test_recovers_known_parameters_within_their_intervals(recovery):
    _, fit = recovery
    assert fit.model.threads == TRUTH.threads
    assert set(fit.model.free) == {"data_read_ms", "digest_ratio", "write_ms",
                                   "overhead_ms", "think_ms"}
    for name, (low, high) in fit.model.intervals().items():
        assert low <= getattr(TRUTH, name) <= high, (name, low, high)
        if name != "think_ms":  # true value 0, on its bound
            assert high - low < 0.25 * getattr(TRUTH, name), name


def test_predicts_an_unseen_configuration_within_its_interval(recovery):
    _, fit = recovery
    query = Measurement("read", "QUORUM", 24)
    truth = _measure(TRUTH, [("read", "QUORUM", 24)], seed=7)[0]
    [pred] = predict(fit.model, [query], seed=3, jobs=100_000)
    assert pred["predicted_ci_low_ms"] <= truth.mean_ms <= pred["predicted_ci_high_ms"]
    width = pred["predicted_ci_high_ms"] - pred["predicted_ci_low_ms"]
    assert width < 0.1 * truth.mean_ms


def test_one_only_reads_say_nothing_about_digests():
    rows = _measure(TRUTH, [("read", "ONE", t) for t in (4, 16, 48)])
    fit = calibrate(rows, 6, 3, seed=1, threads=(4,), confirm=False)
    assert "digest_ratio" not in fit.model.free and "write_ms" not in fit.model.free
    assert any("digest" in w for w in fit.warnings)
    assert any("write service" in w for w in fit.warnings)


def test_light_load_rows_cannot_split_service_from_overhead():
    # One client never queues: latency = overhead + service, only their sum shows.
    rows = _measure(TRUTH, [("read", "ONE", 1), ("read", "ONE", 2)])
    fit = calibrate(rows, 6, 3, seed=1, threads=(4,), confirm=False)
    assert any("cannot tell apart" in w and "data-read" in w and "overhead" in w
               for w in fit.warnings), fit.warnings


def test_one_row_cannot_bound_three_parameters():
    # One closed-loop write row is one observation (latency and throughput are tied
    # by N = X (R + Z)); write service, overhead and think time are three unknowns.
    # Directions no row sees must come out unbounded, not certain.
    rows = _measure(TRUTH, [("write", "ONE", 10)])
    fit = calibrate(rows, 6, 3, seed=1, threads=(4,), confirm=False)
    assert set(fit.model.free) == {"write_ms", "overhead_ms", "think_ms"}
    intervals = fit.model.intervals()
    assert all(high == math.inf for _, high in intervals.values()), intervals


def test_identifiable_rows_give_no_parameter_warning(recovery):
    _, fit = recovery
    assert not any("cannot tell apart" in w or "say nothing" in w
                   for w in fit.warnings), fit.warnings


# --- measurement files -----------------------------------------------------------

def _csv(tmp_path, text, name="m.csv"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("text, message", [
    ("operation,consistency,threads,bogus,mean_ms\nread,ONE,4,1,2\n", "unknown column"),
    ("operation,threads,mean_ms\nread,4,2\n", "missing column.*consistency"),
    ("operation,consistency,mean_ms\nread,ONE,2\n", "threads or rate"),
    (HEADER + "\nscan,ONE,4,,2\n", "line 2: operation='scan'"),
    (HEADER + "\nread,MOST,4,,2\n", "line 2: consistency level 'MOST'"),
    (HEADER + "\nread,ONE,4,,2\nread,FOUR,4,,2\n", "line 3.*FOUR"),
    (HEADER + "\nread,ONE,four,,2\n", "threads='four' is not a number"),
    (HEADER + "\nread,ONE,4,,2_5\n", "mean_ms='2_5' is not a number"),
    (HEADER + "\nread,ONE,100000,,2\n", "threads must be a whole number in 1..10,000"),
    (HEADER + "\nread,ONE,4,,-2\n", "mean_ms='-2' must be"),
    (HEADER + "\nread,ONE,2.5,,2\n", "whole number"),
    (HEADER + "\nread,ONE,4,,\n", "mean_ms is missing"),
    (HEADER + ",rate\nread,ONE,4,,2,100\n", "exactly one of threads"),
    (HEADER + "\nread,ONE,4,,2,7\n", "different number of fields"),
    ("operation,consistency,threads,mean_ms\n", "no rows"),
])
def test_bad_measurement_files_raise_one_clear_error(tmp_path, text, message):
    with pytest.raises(ConfigError, match=message):
        read_measurements(_csv(tmp_path, text), replicas=3)


def test_measurement_rows_are_read_with_their_defaults(tmp_path):
    path = _csv(tmp_path, "operation,consistency,rate,mean_ms,p99_ms,read_fraction\n"
                          "read,local_quorum,500,2.5,9,\nwrite,ALL,200,3,,0.5\n")
    rows, names = read_measurements(path, replicas=3)
    assert names[-1] == "read_fraction"
    assert (rows[0].consistency, rows[0].reads, rows[0].closed) == ("QUORUM", 1.0, False)
    assert rows[0].extra == {"p99_ms": 9.0}
    assert (rows[1].reads, rows[1].rate) == (0.5, 200.0)


# --- model file ------------------------------------------------------------------

def test_model_file_round_trip(tmp_path):
    model = replace(TRUTH, free=("data_read_ms", "overhead_ms"),
                    covariance=((1e-4, -2e-5), (-2e-5, 3e-4)),
                    fit={"rows": 10, "warnings": ['say "this"'], "fixed": []})
    path = tmp_path / "model.toml"
    write_model(model, str(path))
    back = read_model(str(path))
    assert back == model
    assert back.fit["warnings"] == ['say "this"']
    assert back.intervals() == model.intervals()


def test_not_a_model_file_is_refused(tmp_path):
    path = _csv(tmp_path, "[cluster]\nnodes = 3\n", "other.toml")
    with pytest.raises(ConfigError, match="not a calibrated model"):
        read_model(path)


@pytest.mark.parametrize("old, new, message", [
    ("[cluster]\n", "cluster = 5\n[other]\n", "must be tables"),
    ("nodes = 6", "nodes = 0", "nodes=0 must be a whole number >= 1"),
    ("nodes = 6", "nodes = 2", "replicas=3 exceeds nodes=2"),
    ("nodes = 6", 'nodes = "6"', "nodes = '6' must be a whole number"),
    ("write_ms = 0.5\n", "write_ms = nan\n", "write_ms=nan must be a finite number"),
    ("write_ms = 0.5\n", "write_ms = -1.0\n", "write_ms=-1.0 must be a finite"),
    ('service_law = "exp"', 'service_law = "lognormal:1"', "service_law = 'exp' only"),
    ("[fit]\n", "[fit]\nbogus = 1\n", "[fit] has unknown key(s) bogus"),
    ("[intervals]\n", "[intervals]\nbogus = 1\n", "[intervals] has unknown key(s) bogus"),
    ("[intervals]\n", "[extra]\n[intervals]\n", "the file has unknown key(s) extra"),
])
def test_a_damaged_model_file_is_refused_naming_the_key(tmp_path, old, new, message):
    path = tmp_path / "model.toml"
    write_model(TRUTH, str(path))
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    with pytest.raises(ConfigError, match=re.escape(message)) as info:
        read_model(str(path))
    assert str(path) in str(info.value)


# --- commands ----------------------------------------------------------------------

def _one_line_error(capsys, argv):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


def test_predict_with_a_model_writes_every_row(tmp_path, capsys):
    model = tmp_path / "model.toml"
    write_model(TRUTH, str(model))
    query = _csv(tmp_path, "operation,consistency,threads,mean_ms,p95_ms\n"
                           "read,ALL,8,,\nwrite,QUORUM,8,1.0,\n")
    out = tmp_path / "pred.csv"
    assert main(["cassandra", "predict", "--model", str(model), "--measurements",
                 query, "--out", str(out)]) == 0
    rows = list(csv.DictReader(out.open()))
    assert [r["operation"] for r in rows] == ["read", "write"]
    for r in rows:
        low, mean, high = (float(r[f"predicted_{c}"])
                           for c in ("ci_low_ms", "mean_ms", "ci_high_ms"))
        assert 0 < low <= mean <= high
        assert float(r["predicted_p95_ms"]) > mean
        assert float(r["predicted_throughput"]) > 0


def test_calibrate_command_writes_model_and_report(tmp_path, capsys):
    rows = _measure(TRUTH, [("read", "ONE", 4), ("read", "ALL", 32)])
    text = HEADER + "\n" + "".join(f"read,{r.consistency},{r.threads},{r.throughput},"
                                   f"{r.mean_ms}\n" for r in rows)
    path = _csv(tmp_path, text)
    out, report = tmp_path / "m.toml", tmp_path / "r.json"
    assert main(["cassandra", "calibrate", "--nodes", "6", "--replicas", "3",
                 "--measurements", path, "--out", str(out), "--report", str(report),
                 "--threads", "4"]) == 0
    assert read_model(str(out)).threads == 4
    assert '"rows"' in report.read_text()


@pytest.mark.parametrize("argv, message", [
    (["calibrate", "--nodes", "6", "--replicas", "3", "--measurements", "BAD",
      "--out", "OUT"], "unknown column"),
    (["calibrate", "--nodes", "6", "--replicas", "3", "--measurements", "GOOD",
      "--out", "GOOD/m.toml"], "is a file"),
    (["calibrate", "--nodes", "6", "--replicas", "3", "--measurements", "GOOD",
      "--out", "GOOD"], "is also the input"),
    (["calibrate", "--nodes", "6", "--replicas", "3", "--measurements", "GOOD",
      "--out", "OUT", "--report", "r.txt"], ".md or .json"),
    (["calibrate", "--nodes", "6", "--replicas", "3", "--measurements", "GOOD",
      "--out", "OUT", "--threads", "2,x"], "--threads"),
    (["calibrate", "--nodes", "6", "--replicas", "3", "--measurements", "GOOD",
      "--out", "OUT", "--threads", "100000000"], "whole numbers in 1..4096"),
    (["calibrate", "--nodes", "6", "--replicas", "3", "--measurements", "GOOD",
      "--out", "OUT", "--threads", "1,1"], "more than once"),
    (["calibrate", "--nodes", "6", "--replicas", "3", "--measurements", "GOOD",
      "--out", "OUT", "--threads", "1,,2"], "--threads"),
    (["predict", "--model", "MODEL", "--nodes", "6", "--measurements", "GOOD"],
     "cannot be combined with --nodes"),
    (["predict", "--model", "MODEL"], "needs --measurements"),
    (["predict", "--nodes", "6"], "give --nodes, --replicas and --policy"),
    (["predict", "--model", "GOOD", "--measurements", "GOOD"], "is not valid TOML"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, argv, message):
    files = {"BAD": _csv(tmp_path, "operation,consistency,threads,x,mean_ms\n", "b.csv"),
             "GOOD": _csv(tmp_path, HEADER + "\nread,ONE,4,,1\n", "g.csv"),
             "OUT": str(tmp_path / "m.toml"), "MODEL": str(tmp_path / "model.toml")}
    write_model(TRUTH, files["MODEL"])
    line = _one_line_error(capsys, ["cassandra"] + [
        files.get(a, files["GOOD"] + a[4:] if a.startswith("GOOD/") else a) for a in argv])
    assert message in line
    assert not (tmp_path / "m.toml").exists()


def test_open_loop_rows_and_an_unstable_rate(tmp_path):
    # Read ONE capacity: 6 nodes x 4 threads / 0.8 ms = 30 per ms = 30,000 per second.
    rows = [Measurement("read", "ONE", rate=3_000.0), Measurement("read", "ONE",
                                                                  rate=40_000.0)]
    stable, unstable = predict(TRUTH, rows, seed=2, jobs=50_000)
    # ONE reads land on a uniform node: each node is an exact M/M/4 queue (Erlang C).
    servers, load = 4, 3.0 / 6 * 0.8
    idle_terms = sum(load ** j / math.factorial(j) for j in range(servers))
    tail = load ** servers / math.factorial(servers) * servers / (servers - load)
    wait = tail / (idle_terms + tail) * 0.8 / (servers - load)
    exact = TRUTH.overhead_ms + TRUTH.data_read_ms + wait
    assert stable["predicted_ci_low_ms"] <= exact <= stable["predicted_ci_high_ms"]
    assert stable["predicted_ci_high_ms"] - stable["predicted_ci_low_ms"] < 0.02 * exact
    assert stable["predicted_throughput"] == 3_000.0
    assert np.isnan(unstable["predicted_mean_ms"])
    assert "no steady state" in unstable["notes"][0]


def test_confirmation_runs_near_saturation_are_lengthened():
    row = Measurement("read", "ALL", 20)  # 20 clients on 6 x 4 threads: saturated
    short = simulate_row(TRUTH, row, 1_000, np.random.SeedSequence(5), details=True)
    assert short.jobs == 4_000 and short.needed > short.jobs
    assert any("jobs would give" in n for n in short.notes)
    [pred] = predict(TRUTH, [row], seed=5, jobs=1_000)
    # Rerun with 5 times the jobs (the cap): the interval shrinks by about sqrt(5).
    width = pred["simulation_ci_high_ms"] - pred["simulation_ci_low_ms"]
    assert width < (short.ci_high - short.ci_low) / 1.5
    assert any("after 20,000 jobs" in n for n in pred["notes"])
