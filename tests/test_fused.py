"""The fused engine: the numbers it draws, queued by the fast and SimPy engines,
give its sojourns exactly; exact references within intervals; worker-count
independence; histogram percentiles within their stated error."""

import numpy as np
import pytest
from hypothesis import given, settings
from scipy import stats

from analytic.mva import mean_value_analysis
from forkjoin_sim import ForkJoinModel, JobClass, Workload, cli, simulate
from forkjoin_sim.engines import FastEngine, SimPyEngine
from forkjoin_sim.engines.fused import run_replication
from forkjoin_sim.errors import ConfigError
from forkjoin_sim.histogram import RELATIVE_ERROR, BINS, bin_of, quantiles
from forkjoin_sim.nodes import Stages
from strategies import closed_loop_models, fork_join_models


def _copy(path):
    return type(path)(*[None if getattr(path, f) is None else getattr(path, f).copy()
                        for f in path._FIELDS])


def _supported(model):
    from forkjoin_sim.engines.fused import plan
    try:
        plan(model.system, model.arrival_process)
    except ConfigError:
        return False
    return True


@settings(max_examples=25, deadline=None)
@given(fork_join_models())
def test_fused_sojourns_equal_the_fast_engine_on_the_numbers_it_drew(model):
    if not _supported(model):
        return
    jobs = 3000
    totals, path, first = run_replication(model.system, model.arrival_process, jobs, 5,
                                          0, 1, jobs, 30, record=True)
    _, sojourns = FastEngine(model.nodes, initial_release=first).run(path)
    assert totals.counts[-1] == jobs
    assert totals.sums[-1] == pytest.approx(sojourns.sum(), rel=1e-12)


@settings(max_examples=15, deadline=None)
@given(closed_loop_models())
def test_fused_closed_loop_equals_simpy_on_common_random_numbers(model):
    if not _supported(model):
        return
    jobs = 500
    totals, path, first = run_replication(model.system, model.arrival_process, jobs, 2,
                                          0, 1, jobs, 30, record=True)
    _, sojourns = SimPyEngine(model.nodes, initial_release=first).run(_copy(path))
    assert totals.sums[-1] == pytest.approx(sojourns.sum(), rel=1e-9)


def test_two_classes_and_stages_on_common_random_numbers():
    workload = Workload(6, [JobClass("read", 0.7, 3, 1, kinds="read"),
                            JobClass("write", 0.3, 3, 2, service=stats.expon(scale=0.5),
                                     kinds="write", placement="ring")],
                        arrival_rate=1.0, node=Stages(2, 1))
    totals, path, _ = run_replication(workload.system, workload.arrival_process, 4000,
                                      1, 0, 1, 4000, 30, record=True)
    _, sojourns = FastEngine(6, node=workload.node).run(path)
    for c in (0, 1):
        assert totals.sums[c] == pytest.approx(sojourns[path.labels == c].sum(),
                                               rel=1e-12)


def test_mm1_and_flatto_hahn_means_within_the_interval():
    mm1 = simulate(ForkJoinModel(1, 1, 1, load=0.7), jobs=2_000_000, seed=1,
                   engine="fused", replications=2)
    assert mm1.summary.ci_low <= 1 / (1 - 0.7) <= mm1.summary.ci_high
    # (2,2,2), per-node load q: T = (12 - q) / (8 (1 - q)) (Flatto and Hahn).
    q = 0.6
    fh = simulate(ForkJoinModel(2, 2, 2, load=q), jobs=2_000_000, seed=2,
                  engine="fused", replications=2)
    assert fh.summary.ci_low <= (12 - q) / (8 * (1 - q)) <= fh.summary.ci_high


def test_closed_loop_matches_exact_mva():
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
    assert one.summary == two.summary
    assert one.throughput == two.throughput


def test_histogram_percentiles_within_the_stated_error():
    x = np.random.default_rng(1).lognormal(0, 1.5, 100_000)
    counts = np.zeros(BINS)
    np.add.at(counts, [bin_of(v) for v in x], 1)
    qs = [0.5, 0.9, 0.99, 0.999]
    approx = quantiles(counts, qs)
    exact = np.quantile(x, qs)
    assert np.all(np.abs(approx / exact - 1) <= RELATIVE_ERROR)


def test_unsupported_models_name_the_fast_engine():
    with pytest.raises(ConfigError, match="use engine fast"):
        simulate(ForkJoinModel(3, 2, 1, load=0.5, service=stats.lognorm(0.5)),
                 jobs=1000, engine="fused")
    with pytest.raises(ConfigError, match="not 'auto'"):
        simulate(ForkJoinModel(3, 2, 1, load=0.5), jobs=1000, engine="fused",
                 warmup="auto")
    with pytest.raises(ConfigError, match="replications are run by the fused"):
        simulate(ForkJoinModel(3, 2, 1, load=0.5), jobs=1000, replications=2)


def test_cli_fused(capsys):
    assert cli.main(["simulate", "--nodes", "6", "--replicas", "1", "--quorum", "1",
                     "--clients", "20", "--think", "2", "--jobs", "200000", "--engine",
                     "fused", "--replications", "2", "--workers", "2", "--json"]) == 0
    import json
    out = json.loads(capsys.readouterr().out)
    exact = mean_value_analysis([1 / 6] * 6, 20, 2.0)
    assert out["ci_low"] <= exact.response_time <= out["ci_high"]
    assert out["engine"] == "fused"
