"""The Python API answers wrong arguments with one ConfigError that says what to give,
not a TypeError, AttributeError or crash from deep inside (found by a fuzz run)."""

import pytest
from scipy import stats

import forkjoin_sim as fj
from forkjoin_sim.sweep import runner as sweeps
from forkjoin_sim.arrivals import Trace
from forkjoin_sim.cassandra import CassandraModel, simulate_cassandra
from forkjoin_sim.errors import ConfigError
from forkjoin_sim.measure.statistics import summarize
from forkjoin_sim.workload import JobClass, Workload

MODEL = fj.ForkJoinModel(6, 3, 2, load=0.9)
CASSANDRA = CassandraModel(6, 3, "QUORUM", 0.5, stats.expon(scale=0.2),
                           stats.expon(scale=1.0), "token-aware")

CASES = {
    "placement as a list": (lambda: fj.ForkJoinModel(6, 3, 2, load=0.9,
                                                     placement=["ring"]), "placement"),
    "kinds as a number": (lambda: JobClass("r", 0.5, 3, 2, kinds=5), "kinds"),
    "no classes": (lambda: Workload(6, None, arrival_rate=0.5), "list of JobClass"),
    "one class, not a list": (lambda: Workload(6, JobClass("r", 1.0, 3, 2),
                                               arrival_rate=0.5), "list of JobClass"),
    "trace of words": (lambda: Trace(["a", "b"]), "numbers"),
    "sojourns as text": (lambda: summarize("1,2,3"), "sequence of numbers"),
    "jobs as text": (lambda: fj.draw_sample_path(MODEL, "100"), "whole number"),
    "a path of a name": (lambda: fj.draw_sample_path("m", 100), "ForkJoinModel"),
    "a closed loop's path": (lambda: fj.draw_sample_path(
        fj.ForkJoinModel(6, 3, 2, clients=3), 100), "closed loop"),
    "a path beyond memory": (lambda: fj.draw_sample_path(MODEL, 10**12), "memory"),
    "a Cassandra run of a name": (lambda: simulate_cassandra("m"), "CassandraModel"),
    "a config of a number": (lambda: simulate_cassandra(CASSANDRA, level=2, config=5),
                             "StagedConfig"),
    "a sweep of a list": (lambda: sweeps.sweep([1, 2], progress=False), "dict or"),
    # the fused engine once passed seeds straight to its own stream set-up
    "fused seed -1": (lambda: fj.simulate(MODEL, 4000, seed=-1, engine="fused"), "seed"),
    "fused seed None": (lambda: fj.simulate(MODEL, 4000, seed=None, engine="fused"),
                        "seed"),
    "fused seed True": (lambda: fj.simulate(MODEL, 4000, seed=True, engine="fused"),
                        "seed"),
    "fused seed 1.0": (lambda: fj.simulate(MODEL, 4000, seed=1.0, engine="fused"), "seed"),
    "results to a number": (lambda: sweeps.sweep(
        {"nodes": 6, "replicas": 3, "quorum": 2, "rho": 0.5, "jobs": 2000}, out=5,
        progress=False), "file path"),
}


@pytest.mark.parametrize("name", CASES)
def test_wrong_arguments_are_one_config_error(name):
    call, fragment = CASES[name]
    with pytest.raises(ConfigError, match=fragment):
        call()


def test_a_staged_config_may_be_given_as_its_toml_tables():
    """The tables are read as `StagedConfig.from_mapping` reads them (the same run to
    the digit), and they are not ignored: one mutation thread instead of the default
    queues writes longer (same seed, so the default's interval lies below)."""
    from forkjoin_sim.cassandra.staged import StagedConfig

    tables = {"mutation": {"threads": 1}}
    given = simulate_cassandra(CASSANDRA, jobs=3000, level=2, config=tables, seed=1)
    read = simulate_cassandra(CASSANDRA, jobs=3000, level=2, seed=1,
                              config=StagedConfig.from_mapping(tables))
    default = simulate_cassandra(CASSANDRA, jobs=3000, level=2, seed=1)
    assert given.summary.mean == read.summary.mean
    assert default.summary.ci_high < given.summary.ci_low


def test_a_class_too_rare_for_the_run_is_refused_before_it_runs(monkeypatch):
    import forkjoin_sim.simulation as simulation

    monkeypatch.setattr(simulation, "_simulate", None)  # any work would fail
    workload = Workload(6, [JobClass("read", 0.95, 3, 1), JobClass("write", 0.05, 3, 2)],
                        arrival_rate=0.5)
    with pytest.raises(ConfigError, match="class 'write' .* run at least 223 jobs"):
        simulation.simulate(workload, jobs=200)


@pytest.mark.parametrize("make", [
    lambda: fj.ForkJoinModel(6, 3, 2, load=10**400),
    lambda: fj.ForkJoinModel(6, 3, 2, clients=5, think=10**400),
    lambda: JobClass("r", 10**400, 3, 2),
    lambda: Workload(6, (JobClass("r", 1.0, 3, 2),), arrival_rate=10**400),
    lambda: fj.Poisson(10**400),
    lambda: CassandraModel(6, 3, "QUORUM", 10**400, stats.expon(), stats.expon(),
                           "token-aware"),
])
def test_python_ints_beyond_float_range_are_a_config_error(make):
    with pytest.raises(ConfigError, match="too large"):
        make()


def test_a_wars_run_beyond_memory_is_refused():
    from forkjoin_sim.staleness.queueing import exponential_delays
    from forkjoin_sim.staleness.wars import simulate_wars

    with pytest.raises(ConfigError, match="use fewer trials"):
        simulate_wars(exponential_delays(), 3, 2, 2, trials=10**12)


def test_more_wrong_arguments():
    with pytest.raises(ConfigError, match="too large"):
        fj.parse_service("exp", mean=10**400)
    with pytest.raises(ConfigError, match="takes a SamplePath"):
        fj.FastEngine(6).run(None)


def test_messages_name_the_cause(tmp_path):
    with pytest.raises(ConfigError, match="3,000 replications of 2,000 jobs"):
        fj.simulate(MODEL, jobs=2000, engine="fused", replications=3000)
    # a byte-order mark (Windows editors) before TOML is not an "invalid statement"
    from forkjoin_sim.files.io import read_toml

    spec = tmp_path / "spec.toml"
    spec.write_bytes(b"\xef\xbb\xbfnodes = 6\n")
    assert read_toml(spec, "sweep spec", "give one") == {"nodes": 6}


def test_messages_say_what_is_wrong():
    from forkjoin_sim.cassandra.staged import StagedConfig
    from forkjoin_sim.laws.mixture import Mixture
    from forkjoin_sim.system import parse_speeds

    with pytest.raises(ConfigError, match="7 slow nodes of 6"):
        parse_speeds("slow:7:0.5", 6)
    with pytest.raises(ConfigError, match="must be a list of 1 numbers"):
        Mixture([stats.expon()], None)
    with pytest.raises(ConfigError, match=r"network = 5 must be a table"):
        StagedConfig.from_mapping({"network": 5})


def test_a_service_spec_is_read_as_the_command_line_reads_it():
    """A notebook's first guess, ForkJoinModel(..., service="lognormal:1"), is the law
    --service lognormal:1 gives (mean 1, or the spec's own scale), and a spec no law
    matches is one ConfigError naming the specs."""
    from forkjoin_sim.laws.service import parse_service

    model = fj.ForkJoinModel(6, 3, 2, load=0.5, service="lognormal:1")
    expected = parse_service("lognormal:1")
    assert model.service.mean() == pytest.approx(1.0)
    assert model.service.var() == pytest.approx(expected.var())
    assert fj.ForkJoinModel(6, 3, 2, load=0.5, service="exp:2").service.mean() == \
        pytest.approx(2.0)
    with pytest.raises(ConfigError, match="service 'bogus' is unknown"):
        fj.ForkJoinModel(6, 3, 2, load=0.5, service="bogus")


def test_sizing_offers_its_main_functions_at_the_top_without_loading_them_early():
    import subprocess
    import sys

    code = ("import sys, sizing; assert 'pandas' not in sys.modules; "
            "from sizing.planning import plan_capacity; "
            "assert sizing.plan_capacity is plan_capacity; "
            "assert all(callable(getattr(sizing, n)) for n in sizing.__all__); "
            "print('ok')")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True,
                          text=True).stdout.strip() == "ok"
    import sizing

    with pytest.raises(AttributeError, match="no attribute 'calibrate'"):
        sizing.calibrate


def test_counted_writes_its_number_as_number_text_does():
    """A count in a message is written as every other number is: in full where six
    digits would round it to another whole number (so never '1 thread' for
    0.9999999999), plural unless it reads 1."""
    from forkjoin_sim.errors import counted, number_text

    assert counted(1, "replica") == "1 replica" and counted(3, "replica") == "3 replicas"
    assert counted(0.9999999999, "thread") == "0.9999999999 threads"
    for value in (0.9999999999, 2.5, 1e7 + 0.4, 12345678):
        assert counted(value, "row").split()[0] == number_text(value)
