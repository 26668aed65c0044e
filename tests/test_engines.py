"""The two engines agree exactly on a common sample path, and are right where exact
answers exist without statistics (hand-checked paths)."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from forkjoin_sim.engines import FastEngine, SimPyEngine
from forkjoin_sim.model import ForkJoinModel
from forkjoin_sim.randomness.samplepath import SamplePath, draw_sample_path
from strategies import fork_join_models


@settings(max_examples=40, deadline=None)
@given(fork_join_models(), st.integers(0, 2**32 - 1))
def test_fast_and_simpy_agree_on_a_common_path(model, seed):
    path = draw_sample_path(model, 400, seed)
    fast_done, fast_sojourn = FastEngine(model.nodes).run(path)
    simpy_done, simpy_sojourn = SimPyEngine(model.nodes).run(path)
    np.testing.assert_allclose(simpy_done, fast_done, rtol=1e-9)
    np.testing.assert_allclose(simpy_sojourn, fast_sojourn, rtol=1e-9)


@settings(max_examples=25, deadline=None)
@given(fork_join_models(), st.integers(0, 2**32 - 1), st.integers(1, 399))
def test_fast_engine_in_blocks_equals_one_pass(model, seed, cut):
    path = draw_sample_path(model, 400, seed)
    _, whole = FastEngine(model.nodes).run(path)
    engine = FastEngine(model.nodes)
    _, first = engine.run(path.slice(0, cut))
    _, second = engine.run(path.slice(cut, 400))
    np.testing.assert_array_equal(np.concatenate([first, second]), whole)


def _path(arrivals, nodes, service, quorum):
    nodes = np.asarray(nodes, dtype=np.int32)
    return SamplePath(np.asarray(arrivals, float), nodes, np.asarray(service, float),
                      np.full(len(arrivals), quorum, dtype=np.int32))


@pytest.mark.parametrize("engine", [FastEngine, SimPyEngine])
def test_hand_checked_two_node_path(engine):
    # Job 0 at t=0 on nodes 0,1 with service 3,1; job 1 at t=1 with service 1,5.
    # Node 0: job 0 done 3, job 1 starts 3 done 4. Node 1: job 0 done 1, job 1 done 6.
    path = _path([0.0, 1.0], [[0, 1], [0, 1]], [[3.0, 1.0], [1.0, 5.0]], quorum=1)
    done, sojourn = engine(2).run(path)
    np.testing.assert_allclose(done, [[3.0, 1.0], [4.0, 6.0]])
    np.testing.assert_allclose(sojourn, [1.0, 3.0])


def test_purging_cancels_the_slower_tasks_and_frees_their_nodes():
    # Same path, quorum 1, purging: job 0 finishes at t=1 on node 1 and cancels its
    # task on node 0 (in service since 0), so job 1's node-0 task starts at 1, ends 2.
    path = _path([0.0, 1.0], [[0, 1], [0, 1]], [[3.0, 1.0], [1.0, 5.0]], quorum=1)
    done, sojourn = SimPyEngine(2, purging=True).run(path)
    assert np.isnan(done[0, 0]) and done[0, 1] == 1.0
    assert done[1, 0] == 2.0 and np.isnan(done[1, 1])
    np.testing.assert_allclose(sojourn, [1.0, 1.0])


def test_narrow_jobs_skip_padding():
    path = _path([0.0, 0.5], [[0, -1], [0, 1]], [[2.0, 9.0], [1.0, 1.0]], quorum=1)
    done, sojourn = FastEngine(2).run(path)
    assert np.isnan(done[0, 1])
    np.testing.assert_allclose(sojourn, [2.0, 1.0])  # job 1: node 1 idle, done at 1.5


def test_simpy_engine_runs_one_path_only():
    model = ForkJoinModel(3, 2, 1, load=0.5)
    engine = SimPyEngine(3)
    engine.run(draw_sample_path(model, 10, 1))
    with pytest.raises(RuntimeError):
        engine.run(draw_sample_path(model, 10, 2))


def test_an_engine_smaller_than_the_path_is_refused_not_a_crash():
    # the compiled loop would write past the engine's per-node state (a segfault)
    import forkjoin_sim as fj
    from forkjoin_sim.errors import ConfigError

    path = fj.draw_sample_path(fj.ForkJoinModel(60, 30, 2, load=0.9), 2000, seed=1)
    with pytest.raises(ConfigError, match="this engine has 1"):
        fj.FastEngine(1).run(path)
    with pytest.raises(ConfigError, match="node_count=0"):
        fj.FastEngine(0)
    assert np.isfinite(fj.FastEngine(60).run(path)[1]).all()


@pytest.mark.parametrize("purging", [False, True])
def test_simpy_reports_its_jobs_as_it_goes_and_gives_the_same_numbers(purging,
                                                                       monkeypatch):
    """A whole-path engine feeds a progress bar while it runs (every few thousand
    events here), never more jobs than the path holds, in order; stepping the events
    one by one to report changes no number."""
    model = ForkJoinModel(6, 3, 2, load=1.5)
    path = draw_sample_path(model, 3000, 11)
    plain_done, plain_sojourn = SimPyEngine(6, purging=purging).run(path)
    monkeypatch.setattr(SimPyEngine, "PROGRESS_EVENTS", 2000)
    engine, seen = SimPyEngine(6, purging=purging), []
    engine.on_progress = seen.append
    done, sojourn = engine.run(path)
    np.testing.assert_array_equal(done, plain_done)
    np.testing.assert_array_equal(sojourn, plain_sojourn)
    assert len(seen) >= 3 and all(step > 0 for step in seen)
    assert sum(seen) == engine.reported <= path.jobs
