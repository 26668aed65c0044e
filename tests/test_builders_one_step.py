"""One-step models: the run stack's fork-join path on the steps engine, and back.

The fast (Lindley) engine and the fused kernel are the accelerated paths of one-step
models; on the same random numbers they give the general engine's answer, job by job
(fast) or in the mean over the same jobs (fused, whose statistics are all it returns).
"""

import numpy as np
import pytest
from scipy import stats

from forkjoin_sim import ForkJoinModel, JobClass, Workload
from forkjoin_sim.engines import FastEngine
from forkjoin_sim.engines.fused.engine import kernel_model
from forkjoin_sim.engines.fused.kernel import draw_twin_path, run_fused
from forkjoin_sim.randomness.samplepath import PathSampler
from forkjoin_sim.steps import Closed, Open, cassandra_jobs, cassandra_layout, simulate
from forkjoin_sim.steps.builders import one_step_jobs, one_step_layout, one_step_path

MODELS = {
    "open": ForkJoinModel(9, 3, 2, load=2.4),
    "ring": ForkJoinModel(5, 5, 3, load=0.4, placement="ring"),
    "two widths": Workload(6, [JobClass("read", 0.6, 2, 1),
                               JobClass("write", 0.4, 3, 2,
                                        service=stats.expon(scale=0.5))],
                           arrival_rate=1.0),
}


def _steps(path, nodes, arrivals):
    templates, classes, parties, durations = one_step_jobs(path.nodes, path.service,
                                                           path.quorum)
    return simulate(templates, one_step_layout(nodes), parties, durations, arrivals,
                    classes=classes)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_the_fast_engine_gives_the_steps_engines_sojourns(name):
    model = MODELS[name]
    path = PathSampler(model.system, model.arrival_process, 4).draw(5000)
    _, sojourns = FastEngine(model.system.nodes).run(path)
    out = _steps(path, model.system.nodes, Open(path.arrivals))
    np.testing.assert_allclose(out.sojourn, sojourns, rtol=1e-12, atol=1e-12)


def test_the_fast_engine_gives_the_closed_loops_sojourns_without_think_time():
    # with no think time both engines number jobs in the order they are sent
    model = ForkJoinModel(6, 3, 2, clients=15, think=0.0)
    sampler = PathSampler(model.system, model.arrival_process, 2)
    path = sampler.draw(4000)
    _, sojourns = FastEngine(6, initial_release=sampler.initial_release).run(path)
    out = _steps(path, 6, Closed(15, np.zeros(4000)))
    np.testing.assert_allclose(out.start, path.arrivals, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(out.sojourn, sojourns, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["open", "two widths"])
def test_the_fused_kernel_gives_the_steps_engines_mean_on_its_numbers(name):
    model, jobs = MODELS[name], 4000
    km = kernel_model(model.system, model.arrival_process, 5)
    twin = draw_twin_path(km, jobs, 5)
    result = run_fused(km, total_jobs=jobs, first_measured=0, batches=10, seed=5)
    out = _steps(twin, model.system.nodes, Open(twin.arrivals))
    assert result.mean() == pytest.approx(out.sojourn.mean(), rel=1e-9)


def test_one_step_path_finds_the_arrays_back_and_refuses_other_graphs():
    model = MODELS["two widths"]
    path = PathSampler(model.system, model.arrival_process, 1).draw(300)
    templates, classes, parties, durations = one_step_jobs(path.nodes, path.service,
                                                           path.quorum)
    layout = one_step_layout(6)
    nodes, service, quorum = one_step_path(templates, layout, parties, durations,
                                           classes)
    # one column per step: the tasks, then the joins and padding as no task
    width = path.nodes.shape[1]
    np.testing.assert_array_equal(nodes[:, :width], path.nodes)
    assert np.all(nodes[:, width:] == -1)
    np.testing.assert_array_equal(service[:, :width][nodes[:, :width] >= 0],
                                  path.service[path.nodes >= 0])
    np.testing.assert_array_equal(quorum, path.quorum)
    # a join that takes time, a station of two servers, a Cassandra read: not one step
    late = durations.copy()
    late[:, -1] = 0.5
    assert one_step_path(templates, layout, parties, late, classes) is None
    wide = type(layout)(layout.names, (2,) * 6, layout.stages, layout.table)
    assert one_step_path(templates, wide, parties, durations, classes) is None
    laws = {"client": 0.0, "hop": 0.0, "coordinate": 0.0, "message": 0.0,
            "replica_read": 1.0, "respond": 0.0}
    read = cassandra_jobs(3, 3, 2, laws, 0, 10)
    assert one_step_path(read[0], cassandra_layout(3), read[2], read[3], read[1]) is None
