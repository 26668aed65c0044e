"""``simulate(engine="fused")``: the kernel's own numbers, queued by the fast and
SimPy engines, give its means; exact references within intervals; worker-count
independence; what it refuses. (The kernel itself: tests/test_fused_kernel.py.)"""

import json
import math

import numpy as np
import pytest
from scipy import stats

from analytic.mva import mean_value_analysis
from forkjoin_sim import ForkJoinModel, JobClass, Workload, simulate
from forkjoin_cli import main as cli
from forkjoin_sim.engines import FastEngine, SimPyEngine
from forkjoin_sim.engines.fused.engine import kernel_model
from forkjoin_sim.engines.fused.kernel import draw_twin_path, run_fused
from forkjoin_sim.errors import ConfigError
from forkjoin_sim.nodes import Stages
from forkjoin_sim.randomness.samplepath import SamplePath


def _twin(model, jobs, seed):
    km = kernel_model(model.system, model.arrival_process, seed)
    twin = draw_twin_path(km, jobs, seed)
    path = SamplePath(twin.arrivals.copy(), twin.nodes, twin.service, twin.quorum,
                      twin.labels if len(km.classes) > 1 else None,
                      None if twin.think is None else twin.think)
    return km, path, twin.initial_release


@pytest.mark.parametrize("model", [
    ForkJoinModel(9, 3, 2, load=2.4),
    ForkJoinModel(5, 5, 3, load=0.4, placement="ring", speeds=(1, 1, 0.5, 1, 1)),
    ForkJoinModel(6, 3, 2, clients=30, think=1.0),
    Workload(6, [JobClass("read", 0.7, 3, 1),
                 JobClass("write", 0.3, 3, 2, service=stats.expon(scale=0.5),
                          placement="ring")], arrival_rate=1.0),
], ids=["open", "ring-uneven", "closed", "two-classes"])
def test_the_fast_engine_on_the_kernels_numbers_gives_its_mean(model):
    jobs = 4000
    km, path, first = _twin(model, jobs, 5)
    result = run_fused(km, total_jobs=jobs, first_measured=0, batches=10, seed=5)
    _, sojourns = FastEngine(model.system.nodes, initial_release=first).run(path)
    assert result.mean() == pytest.approx(sojourns.mean(), rel=1e-9)


def test_simpy_on_the_kernels_closed_loop_numbers_gives_its_mean():
    model = ForkJoinModel(4, 2, 1, clients=12, think=0.5, speeds=(1, 2, 1, 0.5))
    km, path, first = _twin(model, 800, 2)
    result = run_fused(km, total_jobs=800, first_measured=0, batches=10, seed=2)
    _, sojourns = SimPyEngine(4, initial_release=first).run(path)
    assert result.mean() == pytest.approx(sojourns.mean(), rel=1e-9)


def test_mm1_and_flatto_hahn_means_within_the_interval():
    mm1 = simulate(ForkJoinModel(1, 1, 1, load=0.7), jobs=2_000_000, seed=1,
                   engine="fused", replications=2)
    assert mm1.summary.ci_low <= 1 / (1 - 0.7) <= mm1.summary.ci_high
    q = 0.6  # (2,2,2): T = (12 - q) / (8 (1 - q)) (Flatto and Hahn)
    fh = simulate(ForkJoinModel(2, 2, 2, load=q), jobs=2_000_000, seed=2,
                  engine="fused", replications=2)
    assert fh.summary.ci_low <= (12 - q) / (8 * (1 - q)) <= fh.summary.ci_high


def test_closed_loop_matches_exact_mva_and_the_response_time_law():
    result = simulate(ForkJoinModel(4, 1, 1, clients=20, think=2.0), jobs=400_000,
                      seed=3, engine="fused", replications=2)
    exact = mean_value_analysis([0.25] * 4, 20, 2.0)
    assert result.summary.ci_low <= exact.response_time <= result.summary.ci_high
    assert result.throughput.low <= exact.throughput <= result.throughput.high


def test_numbers_do_not_depend_on_the_worker_count():
    model = ForkJoinModel(9, 3, 2, load=2.4)
    one = simulate(model, jobs=200_000, seed=4, engine="fused", replications=4,
                   workers=1)
    two = simulate(model, jobs=200_000, seed=4, engine="fused", replications=4,
                   workers=2)
    assert one.summary == two.summary and one.throughput == two.throughput


def test_replications_are_the_runs_description_not_a_warning():
    """How a fused run was split is part of its description (``replications``, the
    report's jobs line), not a warning a user must tell apart from real doubts."""
    model = ForkJoinModel(9, 3, 2, load=1.5)
    result = simulate(model, jobs=40_000, seed=4, engine="fused", replications=4,
                      workers=1)
    assert result.replications == 4 and result.to_dict()["replications"] == 4
    assert not any("replications" in note for note in result.warnings)
    assert "4 independent replications of 10,000 jobs, each with its own warm-up" \
        in result.report()
    single = simulate(model, jobs=20_000, seed=4, engine="fast")
    assert single.replications == 1 and "independent" not in single.report()


def test_refusals_name_the_engine_to_use():
    staged = Workload(3, [JobClass("r", 1.0, 2, 1, kinds="read")], arrival_rate=0.5,
                      node=Stages())
    with pytest.raises(ConfigError, match="use engine fast"):
        simulate(staged, jobs=1000, engine="fused")
    with pytest.raises(ConfigError, match="not 'auto'"):
        simulate(ForkJoinModel(3, 2, 1, load=0.5), jobs=1000, engine="fused",
                 warmup="auto")
    with pytest.raises(ConfigError, match="replications are run by the fused"):
        simulate(ForkJoinModel(3, 2, 1, load=0.5), jobs=1000, replications=2)


def test_cli_fused(capsys):
    assert cli.main(["simulate", "--nodes", "6", "--replicas", "1", "--quorum", "1",
                     "--clients", "20", "--think", "2", "--jobs", "200000", "--engine",
                     "fused", "--replications", "2", "--workers", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    exact = mean_value_analysis([1 / 6] * 6, 20, 2.0)
    assert out["ci_low"] <= exact.response_time <= out["ci_high"]
    assert out["throughput_ci_low"] <= exact.throughput <= out["throughput_ci_high"]
    assert out["engine"] == "fused"


def test_throughput_of_many_short_replications_has_a_proper_interval(capsys):
    """The issue's run: 50 replications of 60 jobs printed throughput 0.4908 with
    95% CI [-0.529, 1.511]. The arrival rate is 0.5 (rho 0.5, mean service 1)."""
    assert cli.main(["simulate", "--nodes", "5", "--replicas", "3", "--quorum", "2",
                     "--rho", "0.5", "--jobs", "3000", "--engine", "fused",
                     "--replications", "50", "--workers", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    low, high = out["throughput_ci_low"], out["throughput_ci_high"]
    assert 0 < low < 0.5 < high and high - low < 0.1
    assert not any("throughput" in note for note in out["warnings"])


def test_a_throughput_without_a_proper_interval_carries_a_warning():
    """Four batches of two to three jobs (10 jobs in 2 replications, seed 3): the
    interval of the mean gap reaches 0, so the throughput has no upper end, and the
    result says so instead of printing a finite interval it cannot back."""
    result = simulate(ForkJoinModel(5, 3, 2, load=0.5), jobs=10, seed=3,
                      engine="fused", replications=2, workers=1)
    assert result.throughput.low > 0 and result.throughput.high == math.inf
    assert any(note.startswith("throughput: no proper 95% interval")
               for note in result.doubts)


def test_a_fused_run_says_it_keeps_no_sojourn_times():
    """At 10^6 jobs simulate() picks the fused engine, whose sojourns were an empty
    array, so np.percentile(result.sojourns, 99.9) raised IndexError (an API probe):
    they are None, as documented, class_sojourns names the fix, and to_dict stays
    JSON with a numpy seed."""
    result = simulate(ForkJoinModel(3, 2, 1, load=0.3), jobs=20_000, seed=np.int64(3),
                      engine="fused")
    assert result.sojourns is None
    with pytest.raises(ConfigError, match="keeps no sojourn times.*engine='fast'"):
        result.class_sojourns("default")
    assert json.loads(json.dumps(result.to_dict()))["seed"] == 3
