"""Multi-class workloads: validation, sample paths, and queueing results."""

import numpy as np
import pytest
from scipy import stats

from forkjoin_sim.engines import FastEngine
from forkjoin_sim.errors import ConfigError
from forkjoin_sim.measure.statistics import batch_means_ci
from forkjoin_sim.randomness.samplepath import PathSampler
from forkjoin_sim.workload import JobClass, Workload, simulate_workload


def _draw(w, seed, jobs, sampler=None):
    path = (sampler or PathSampler(w.system, w.arrival_process, seed)).draw(jobs)
    return path, path.labels


def read_write(nodes=5, rate=0.5, placement="random"):
    return Workload(nodes, [JobClass("read", 0.7, 1, 1),
                            JobClass("write", 0.3, 3, 2, stats.expon(scale=2.0))],
                    arrival_rate=rate, placement=placement)


@pytest.mark.parametrize("make, fragment", [
    (lambda: JobClass("w", 0.5, 3, 4), "1 <= quorum <= replicas=3"),
    (lambda: JobClass("w", 0.0, 3, 2), "must be in (0, 1]"),
    (lambda: Workload(2, [JobClass("w", 1.0, 3, 1)], 0.1), "add nodes"),
    (lambda: Workload(5, [JobClass("a", 0.5, 1, 1), JobClass("b", 0.4, 1, 1)], 0.1),
     "sum to 0.9"),
    (lambda: Workload(5, [JobClass("a", 0.5, 1, 1), JobClass("a", 0.5, 1, 1)], 0.1),
     "repeat"),
    (lambda: read_write(rate=10.0), "use an arrival rate <"),
])
def test_invalid_workloads_say_how_to_fix(make, fragment):
    with pytest.raises(ConfigError, match=None) as info:
        make()
    assert fragment in str(info.value)


def test_unstable_message_names_the_stable_rate():
    w = read_write(rate=0.5)
    limit = w.nodes / w.work_per_job
    with pytest.raises(ConfigError) as info:
        read_write(rate=limit * 1.01)
    assert f"{limit:.4g}" in str(info.value)
    assert read_write(rate=limit * 0.99).node_utilisation < 1


@pytest.mark.parametrize("placement", ["random", "ring"])
def test_path_pads_narrow_classes_and_sets_each_jobs_quorum(placement):
    w = read_write(placement=placement)
    path, labels = _draw(w, 7, 2000)
    reads, writes = labels == 0, labels == 1
    assert np.all(path.nodes[reads, 1:] == -1) and np.all(path.nodes[reads, 0] >= 0)
    assert np.all(path.nodes[writes] >= 0)
    assert np.all(path.quorum[reads] == 1) and np.all(path.quorum[writes] == 2)
    rows = np.sort(path.nodes[writes], axis=1)
    assert np.all(np.diff(rows, axis=1) > 0)  # distinct nodes within a job
    assert np.all(np.diff(path.arrivals) >= 0)
    # Class frequencies: a 4-sigma binomial band around 0.7.
    assert abs(reads.mean() - 0.7) < 4 * np.sqrt(0.21 / 2000)


def test_paths_are_reproducible_and_independent_of_block_size():
    w = read_write()
    whole, whole_labels = _draw(w, 3, 500)
    sampler = PathSampler(w.system, w.arrival_process, 3)
    parts = [_draw(w, 3, n, sampler) for n in (200, 300)]
    assert np.array_equal(whole_labels, np.concatenate([p[1] for p in parts]))
    for name in ("nodes", "service", "quorum"):
        assert np.array_equal(getattr(whole, name),
                              np.concatenate([getattr(p[0], name) for p in parts]))
    assert np.allclose(whole.arrivals, np.concatenate([p[0].arrivals for p in parts]))
    other, _ = _draw(w, 4, 500)
    assert not np.array_equal(whole.service, other.service)


def test_each_job_completes_at_its_own_quorum():
    w = read_write()
    path, labels = _draw(w, 11, 3000)
    completions, sojourns = FastEngine(w.nodes).run(path)
    done = np.sort(np.where(path.nodes >= 0, completions, np.inf), axis=1)
    expected = done[np.arange(path.jobs), path.quorum - 1] - path.arrivals
    assert np.allclose(sojourns, expected)


def test_two_classes_on_one_node_match_pollaczek_khinchine():
    # One node, every job one task: an M/G/1 queue with hyperexponential service.
    fast, slow = stats.expon(scale=0.5), stats.expon(scale=2.0)
    w = Workload(1, [JobClass("fast", 0.7, 1, 1, fast), JobClass("slow", 0.3, 1, 1, slow)],
                 arrival_rate=0.5)
    second_moment = 0.7 * fast.moment(2) + 0.3 * slow.moment(2)
    wait = w.arrival_rate * second_moment / (2 * (1 - w.node_utilisation))
    result = simulate_workload(w, jobs=200_000, seed=1)
    for name, dist in (("fast", fast), ("slow", slow)):
        mean, low, high = batch_means_ci(result.class_sojourns(name), 0.99)
        assert low <= wait + dist.mean() <= high, (name, mean, wait + dist.mean())
    assert result.utilisation[0] == pytest.approx(w.node_utilisation, rel=0.03)


def test_simulate_workload_summaries_and_utilisation():
    w = read_write(rate=0.8)
    result = simulate_workload(w, jobs=30_000, seed=2, sample_every=2)
    assert set(result.summaries) == {"read", "write"}
    counts = sum(s.jobs_measured for s in result.summaries.values())
    assert counts == result.overall.jobs_measured == result.sojourns.size == 13_500
    # Per-node utilisation: every node gets the same share of the work.
    assert np.allclose(result.utilisation, w.node_utilisation, rtol=0.08)
    assert result.summaries["write"].mean > result.summaries["read"].mean
    assert "read" in result.report()
