"""The fused kernel: equal to a plain Lindley pass over its twin sample path, the same
for any chunk size and worker count, and within its interval of exact references."""

import heapq
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from strategies import latency_samples, stable_queues

from forkjoin_sim.laws.empirical import Empirical
from forkjoin_sim.engines.fused.kernel import (JobClass, KernelModel, draw_twin_path,
                                               measured_count, poisson, renewal,
                                               run_fused)
from forkjoin_sim.errors import ConfigError
from forkjoin_sim.engines.fused.laws import exponential
from forkjoin_sim.laws.service import Deterministic
from forkjoin_sim.measure.sketch import BINS, bucket

SPEEDS = (1.0, 0.5, 2.0, 1.0, 1.0, 0.8)
MEASURED_DATA = Empirical(np.random.default_rng(9).gamma(2.0, 0.4, 300))
TWO_CLASSES = (
    # Reads: one data request (exponential) and two digests (lognormal), first answer.
    JobClass(3, 1, (stats.expon(scale=0.3), stats.lognorm(0.5, scale=0.2),
                    stats.lognorm(0.5, scale=0.2)), probability=0.7),
    # Writes: measured service times on a ring of three replicas, two acks.
    JobClass(3, 2, MEASURED_DATA, probability=0.3, placement="ring"),
)
RULE = dict(total_jobs=20_000, first_measured=2_000, sample_every=3, batches=10,
            mini_batches=50)

MODELS = {
    "open-two-classes": KernelModel(SPEEDS, TWO_CLASSES, arrival=poisson(5.0)),
    "closed-two-classes": KernelModel(SPEEDS, TWO_CLASSES, clients=7,
                                      think=stats.expon(scale=0.5)),
    "closed-no-think": KernelModel(SPEEDS, TWO_CLASSES, clients=4),
    "renewal-ring": KernelModel((1.0, 1.0, 1.5, 1.0, 0.7),
                                (JobClass(2, 2, stats.weibull_min(1.5), placement="ring"),),
                                arrival=renewal(stats.gamma(0.5), 1.2)),
}


def plain_lindley(path, nodes):
    """Issue times, sojourns and per-node busy time of the twin path, job by job (FCFS
    nodes; closed loop: the client with the earliest release, ties by index)."""
    jobs = path.nodes.shape[0]
    free = np.zeros(nodes)
    issue = np.empty(jobs)
    sojourn = np.empty(jobs)
    heap = None
    if path.think is not None:
        heap = [(t, c) for c, t in enumerate(path.initial_release)]
        heapq.heapify(heap)
    for j in range(jobs):
        if heap is not None:
            a, client = heapq.heappop(heap)
        else:
            a = path.arrivals[j]
        done = []
        for node, x in zip(path.nodes[j], path.service[j]):
            if node < 0:
                continue
            free[node] = max(free[node], a) + x
            done.append(free[node])
        finish = sorted(done)[path.quorum[j] - 1]
        issue[j], sojourn[j] = a, finish - a
        if heap is not None:
            heapq.heappush(heap, (finish + path.think[j], client))
    return issue, sojourn


@pytest.mark.parametrize("name", sorted(MODELS))
def test_kernel_equals_plain_lindley_on_its_twin_path(name):
    model = MODELS[name]
    total, first, every = RULE["total_jobs"], RULE["first_measured"], RULE["sample_every"]
    path = draw_twin_path(model, total, seed=21)
    issue, sojourn = plain_lindley(path, model.nodes)
    result = run_fused(model, seed=21, **RULE)

    measured = np.arange(first, total, every)
    assert measured.size == measured_count(total, first, every)
    labels = path.labels[measured]
    values = sojourn[measured]
    classes = len(model.classes)
    for c in range(classes):
        mine = labels == c
        assert result.counts[0, c] == mine.sum() > 0
        assert result.sums[0, c] == pytest.approx(values[mine].sum(), rel=1e-9)
    assert result.counts[0, -1] == measured.size
    assert result.mean() == pytest.approx(values.mean(), rel=1e-9)
    batch = np.arange(measured.size) * RULE["batches"] // measured.size
    assert np.array_equal(result.batch_counts[0, -1], np.bincount(batch))
    assert np.allclose(result.batch_sums[0, -1], np.bincount(batch, weights=values),
                       rtol=1e-9)
    starts = np.flatnonzero(np.diff(batch, prepend=-1))
    assert np.array_equal(result.batch_first[0], issue[measured][starts])
    expected_hist = np.bincount([bucket(x) for x in values], minlength=BINS)
    assert np.array_equal(result.histogram[-1], expected_hist)
    busy = np.bincount(path.nodes[first:][path.nodes[first:] >= 0],
                       weights=path.service[first:][path.nodes[first:] >= 0],
                       minlength=model.nodes)
    assert np.allclose(result.busy[0], busy, rtol=1e-9)
    if path.think is not None:
        assert result.think_sums[0] == pytest.approx(path.think[measured].sum(), rel=1e-9)
        assert np.all(np.diff(issue) >= 0)
    else:
        assert result.last_issue[0] == path.arrivals[-1]


def _measured_sums(path, sojourn, first, every, classes):
    measured = np.arange(first, len(sojourn), every)
    return np.array([sojourn[measured][path.labels[measured] == c].sum()
                     for c in range(classes)] + [sojourn[measured].sum()])


@st.composite
def kernel_models(draw):
    """Small models of every kind: open or closed, random or ring placement, uneven
    speeds, exponential, deterministic (ties) or measured service."""
    nodes, replicas, quorum, load = draw(stable_queues(max_nodes=8))
    speeds = tuple(draw(st.lists(st.sampled_from([0.5, 1.0, 1.0, 2.0]),
                                 min_size=nodes, max_size=nodes)))
    service = draw(st.one_of(st.just(stats.expon()), st.just(Deterministic(1.0)),
                             latency_samples().map(Empirical)))
    job = JobClass(replicas, quorum, service,
                   placement=draw(st.sampled_from(["random", "ring"])))
    if draw(st.booleans()):
        return KernelModel(speeds, (job,), clients=draw(st.integers(1, 10)),
                           think=draw(st.sampled_from([None, stats.expon(scale=2.0)])))
    return KernelModel(speeds, (job,), arrival=poisson(load))


@settings(max_examples=25, deadline=None)
@given(kernel_models(), st.integers(0, 2**32 - 1))
def test_kernel_equals_plain_lindley_on_any_small_model(model, seed):
    path = draw_twin_path(model, 1500, seed=seed)
    _, sojourn = plain_lindley(path, model.nodes)
    result = run_fused(model, total_jobs=1500, first_measured=100, sample_every=2,
                       batches=5, seed=seed)
    expected = _measured_sums(path, sojourn, 100, 2, 1)
    assert np.allclose(result.sums[0], expected, rtol=1e-9, atol=1e-12)
    assert result.counts[0, -1] == 700


def test_twin_path_layout():
    path = draw_twin_path(MODELS["open-two-classes"], 2000, seed=3)
    assert path.nodes.shape == path.service.shape == (2000, 3)
    assert set(np.unique(path.labels)) == {0, 1}
    assert np.array_equal(path.quorum, np.where(path.labels == 0, 1, 2))
    for row in path.nodes:
        assert len(set(row)) == 3 and row.min() >= 0
    ring = path.nodes[path.labels == 1]
    assert np.all((ring[:, 1] - ring[:, 0]) % 6 == 1)
    assert np.all(np.diff(path.arrivals) > 0)
    # Service times already carry the node speed: writes resample the measurements.
    write = path.labels == 1
    speed = np.asarray(SPEEDS)[path.nodes[write]]
    assert np.all(np.isin(np.round(path.service[write] * speed, 12),
                          np.round(MEASURED_DATA.samples, 12)))


def test_results_do_not_depend_on_chunks_or_workers():
    model = MODELS["closed-two-classes"]
    rule = dict(RULE, total_jobs=30_000)
    one = run_fused(model, seed=5, replications=3, workers=1, **rule)
    for kwargs in (dict(workers=2), dict(workers=3, chunk_jobs=777),
                   dict(workers=1, chunk_jobs=4096)):
        other = run_fused(model, seed=5, replications=3, **kwargs, **rule)
        for field in ("counts", "sums", "squares", "batch_counts", "batch_sums",
                      "batch_first", "batch_last", "mini_counts", "mini_sums",
                      "histogram", "busy", "think_sums", "last_issue"):
            assert np.array_equal(getattr(one, field), getattr(other, field)), field


@pytest.mark.parametrize("name", ["open-two-classes", "closed-two-classes", "wide"])
def test_results_do_not_depend_on_the_block_size(name, monkeypatch):
    # blocks of 1, 7 and 13 jobs against the default, also across chunk ends; "wide"
    # places 12 tasks by permuting an array, the others by tracing swaps back
    from forkjoin_sim.engines.fused import kernel as fused_kernel

    model = MODELS.get(name) or KernelModel(
        (1.0,) * 15, (JobClass(12, 5, exponential(1.0)),), arrival=poisson(0.9))
    rule = dict(RULE, total_jobs=6_000, chunk_jobs=1_000, seed=4)
    default = run_fused(model, **rule)
    for tasks in (1, 7 * model.width, 13 * model.width):
        monkeypatch.setattr(fused_kernel, "BLOCK_TASKS", tasks)
        other = run_fused(model, **rule)
        for field in ("counts", "sums", "squares", "batch_counts", "batch_sums",
                      "batch_first", "batch_last", "mini_counts", "mini_sums",
                      "histogram", "busy", "think_sums", "last_issue"):
            assert np.array_equal(getattr(default, field), getattr(other, field)), field


@pytest.mark.parametrize("name", ["closed-two-classes", "closed-no-think"])
def test_the_closed_loops_scan_and_heap_choose_the_same_clients(name, monkeypatch):
    # up to SCAN_CLIENTS clients the kernel scans release times, beyond through a
    # heap; both issue the earliest release first, ties to the lower client (all of
    # the first requests tie without think times)
    from forkjoin_sim.engines.fused import kernel as fused_kernel

    model = MODELS[name]
    rule = dict(RULE, total_jobs=6_000, chunk_jobs=1_000, seed=6)
    assert model.clients <= fused_kernel.SCAN_CLIENTS
    scanned = run_fused(model, **rule)
    monkeypatch.setattr(fused_kernel, "SCAN_CLIENTS", 0)
    heap = run_fused(model, **rule)
    for field in ("counts", "sums", "squares", "batch_counts", "batch_sums",
                  "batch_first", "batch_last", "mini_counts", "mini_sums", "histogram",
                  "busy", "think_sums", "last_issue"):
        assert np.array_equal(getattr(scanned, field), getattr(heap, field)), field


def test_wide_jobs_and_progress_callbacks():
    # 50 tasks per job (the kernel selects the 20th instead of sorting), in chunks
    # of CHUNK_TASKS tasks, each reported to on_chunk
    from forkjoin_sim.engines.fused import kernel as fused_kernel

    model = KernelModel((1.0,) * 60, (JobClass(50, 20, exponential(1.0)),),
                        arrival=poisson(0.6))
    path = draw_twin_path(model, 3000, seed=8)
    _, sojourn = plain_lindley(path, model.nodes)
    done = []
    result = run_fused(model, total_jobs=3000, first_measured=0, batches=5, seed=8,
                       replications=2, workers=2, chunk_jobs=700, on_chunk=done.append)
    assert result.sums[0, -1] == pytest.approx(sojourn.sum(), rel=1e-9)
    assert sum(done) == 6000 and max(done) == 700
    assert fused_kernel.CHUNK_TASKS // model.width < 1 << 22


def test_replications_are_independent_runs_with_their_own_warmup():
    model = KernelModel((1.0,), (JobClass(1, 1, exponential(1.0)),), arrival=poisson(0.5))
    pooled = run_fused(model, total_jobs=4000, seed=2, replications=2, batches=5)
    alone = run_fused(model, total_jobs=4000, seed=2, replications=1, batches=5)
    assert np.array_equal(pooled.sums[0], alone.sums[0])
    assert pooled.sums[1, -1] != pooled.sums[0, -1]
    assert pooled.counts[:, -1].tolist() == [3600, 3600]


def test_mm1_mean_utilisation_and_throughput():
    rate = 0.5
    model = KernelModel((1.0,), (JobClass(1, 1, exponential(1.0)),), arrival=poisson(rate))
    result = run_fused(model, total_jobs=300_000, seed=1, replications=4, workers=2)
    mean, low, high = result.interval(confidence=0.99)
    assert low < 1 / (1 - rate) < high
    assert high - low < 0.1
    assert result.utilisation()[0] == pytest.approx(rate, rel=0.02)
    _, low, high = result.throughput(0.99)
    assert low < rate < high
    summary = result.summary(0.99)
    assert (summary["mean"], summary["ci_low"], summary["ci_high"]) == \
        result.interval(confidence=0.99)
    assert summary["jobs_measured"] == 4 * 270_000 and summary["batches"] == 4 * 30
    assert abs(summary["batch_lag1"]) < 0.3
    # Sojourn times of M/M/1 are exponential of rate mu - lambda.
    p90 = result.quantiles([0.9])[0]
    assert p90 == pytest.approx(math.log(10) / (1 - rate), rel=0.05)


def test_flatto_hahn_two_node_fork_join_mean():
    load = 0.6  # per node
    model = KernelModel((1.0, 1.0), (JobClass(2, 2, stats.expon()),), arrival=poisson(load))
    result = run_fused(model, total_jobs=400_000, seed=3, replications=4, workers=2)
    exact = (12 - load) / (8 * (1 - load))
    _, low, high = result.interval(confidence=0.99)
    assert low < exact < high
    assert (high - low) / exact < 0.05


def mva(stations, demand, think, clients):
    """Exact mean-value analysis of a closed network of FCFS exponential stations of
    equal ``demand`` (visit ratio x mean service) and a delay station ``think``:
    (response time, throughput)."""
    queue = np.zeros(stations)
    for population in range(1, clients + 1):
        residence = demand * (1 + queue)
        response = residence.sum()
        throughput = population / (think + response)
        queue = throughput * residence
    return response, throughput


def test_closed_loop_matches_exact_mean_value_analysis():
    nodes, clients, think = 4, 6, 2.0
    model = KernelModel((1.0,) * nodes, (JobClass(1, 1, stats.expon()),),
                        clients=clients, think=stats.expon(scale=think))
    result = run_fused(model, total_jobs=200_000, seed=8, replications=4, workers=2)
    response, throughput = mva(nodes, 1.0 / nodes, think, clients)
    _, low, high = result.interval(confidence=0.99)
    assert low < response < high
    rate, low, high = result.throughput(0.99)
    assert low < throughput < high
    assert rate <= nodes * 1.0 / 1  # capacity: nodes * mu / replicas


def test_closed_loop_throughput_never_exceeds_capacity():
    # Many clients, no think time: the nodes saturate at nodes * mu / replicas.
    model = KernelModel((1.0,) * 6, (JobClass(3, 2, stats.expon()),), clients=60)
    rate, _, _ = run_fused(model, total_jobs=60_000, seed=1).throughput()
    assert 0.9 * 6 / 3 < rate <= 6 / 3


def test_configuration_errors_say_how_to_fix_them():
    good = JobClass(2, 1, stats.expon())
    with pytest.raises(ConfigError, match="1 <= k <= r"):
        run_fused(KernelModel((1.0, 1.0), (JobClass(2, 3, stats.expon()),),
                              arrival=poisson(1.0)), total_jobs=100)
    with pytest.raises(ConfigError, match="placement"):
        run_fused(KernelModel((1.0, 1.0), (JobClass(2, 1, stats.expon(), placement="x"),),
                              arrival=poisson(1.0)), total_jobs=100)
    with pytest.raises(ConfigError, match="arrival gap law"):
        run_fused(KernelModel((1.0, 1.0), (good,)), total_jobs=100)
    with pytest.raises(ConfigError, match="run more jobs"):
        run_fused(KernelModel((1.0, 1.0), (good,), arrival=poisson(1.0)), total_jobs=50)
    with pytest.raises(ConfigError, match="positive factor"):
        run_fused(KernelModel((1.0, 0.0), (good,), arrival=poisson(1.0)), total_jobs=100)


def _short_replications(replications: int, per: int, seed: int):
    """The run `simulate --jobs per*replications --replications R` makes: a 10%
    warm-up and about two measured jobs per batch when replications are short."""
    rate = 0.5
    model = KernelModel((1.0,) * 5, (JobClass(3, 2, exponential(1.0)),),
                        arrival=poisson(rate))
    start = per // 10
    batches = min(30, max(2, (per - start) // 2))
    return run_fused(model, total_jobs=per, first_measured=start, sample_every=1,
                     batches=batches, seed=seed, replications=replications, workers=1)


def test_throughput_interval_of_many_short_replications_is_proper():
    """50 replications of 60 jobs give batches of one gap each, whose rates (one over
    an exponential gap) have no variance: the interval was [-0.53, 1.51] around 0.49.
    Now it is the mean gap's interval inverted: positive, around the arrival rate
    0.5, about +-1.96 * 0.5 / sqrt(1,350 gaps) = +-0.027 wide."""
    for replications, per in ((30, 100), (50, 60), (100, 30)):
        rate, low, high = _short_replications(replications, per, seed=4).throughput()
        assert 0 < low <= rate <= high < math.inf
        assert low < 0.5 < high
        assert high - low < 0.1


def test_throughput_interval_narrows_with_replications_and_jobs():
    """Ten times the gaps, about a third of the width (1/sqrt(10)), whether they come
    from more replications of the same length or from longer ones."""
    def width(replications, per):
        _, low, high = _short_replications(replications, per, seed=5).throughput()
        return high - low

    base = width(50, 60)
    assert width(500, 60) < base / 2
    assert width(50, 600) < base / 2


def test_throughput_interval_covers_the_arrival_rate_about_95_percent_of_runs():
    """100 seeds of 50 replications of 60 jobs: an honest 95% interval misses 0.5
    in about 5 (fewer than 88 hits has probability 0.0015, all 100 0.006; the
    interval of the batches' rates, wide as the axis, held it in all 100)."""
    hits = 0
    for seed in range(100):
        _, low, high = _short_replications(50, 60, seed=seed).throughput()
        hits += low < 0.5 < high
    assert 88 <= hits <= 99
