"""The Cassandra write model: its reductions to the plain (n,r,k) queue, the staged
model's reductions to level 1, and Theorem 4 where it is exact."""

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats

import analytic
from forkjoin_sim.cassandra import (CassandraModel, StagedConfig, WritePathSampler,
                                    consistency_quorum, load_staged_config,
                                    policy_local_fraction, simulate_basic,
                                    simulate_cassandra, simulate_quorums)
from forkjoin_sim.cassandra.graphs import run_staged
from forkjoin_sim.laws.empirical import Empirical
from forkjoin_sim.errors import ConfigError
from forkjoin_sim.model import ForkJoinModel
from forkjoin_sim.randomness.samplepath import PathSampler
from forkjoin_sim.laws.service import Deterministic
from forkjoin_sim.simulation import simulate

LOCAL = stats.expon(scale=0.2)
REMOTE = stats.expon()


def agree(a, b):
    """Two independent estimates agree within their combined 95% intervals."""
    half = math.hypot((a.ci_high - a.ci_low) / 2, (b.ci_high - b.ci_low) / 2)
    return abs(a.mean - b.mean) <= half


@pytest.mark.parametrize("level, r, k", [("ONE", 3, 1), ("TWO", 3, 2), ("THREE", 5, 3),
                                         ("QUORUM", 5, 3), ("quorum", 4, 3),
                                         ("ALL", 4, 4), (2, 3, 2), ("2", 3, 2)])
def test_consistency_levels(level, r, k):
    assert consistency_quorum(level, r) == k
    if isinstance(level, str) and level.isalpha():
        assert analytic.consistency_level_to_k(level, r) == k


@pytest.mark.parametrize("level, r", [("THREE", 2), ("MOST", 3), (0, 3), (4, 3)])
def test_bad_consistency_is_a_config_error(level, r):
    with pytest.raises(ConfigError):
        consistency_quorum(level, r)


def test_policy_fractions_and_errors():
    assert policy_local_fraction("token-aware", 6, 3) == 1
    assert policy_local_fraction("round-robin", 6, 3) == 0.5
    assert policy_local_fraction("remote", 6, 3) == 0
    assert policy_local_fraction("local-fraction:0.25", 6, 3) == 0.25
    for bad in ("remote", "round-robin-ish", "local-fraction:1.5", "local-fraction:x"):
        with pytest.raises(ConfigError):
            policy_local_fraction(bad, 3, 3 if bad == "remote" else 2)


def test_unstable_level1_is_refused_with_the_limit():
    model = CassandraModel(6, 3, "ONE", 2.5, LOCAL, REMOTE, "remote")  # 3*2.5/6 > 1
    with pytest.raises(ConfigError, match="arrival_rate < 2"):
        simulate_cassandra(model, 100)


@settings(max_examples=20, deadline=None)
@given(st.integers(2, 7).flatmap(lambda n: st.tuples(st.just(n), st.integers(1, n))),
       st.sampled_from(["token-aware", "round-robin", "remote", "local-fraction:0.3"]),
       st.integers(0, 2**32 - 1))
def test_write_paths_put_local_tasks_on_the_coordinator(nr, policy, seed):
    n, r = nr
    if r == n and policy != "token-aware" and policy != "round-robin":
        return
    model = CassandraModel(n, r, "ONE", 0.1, Deterministic(0.5), Deterministic(2.0), policy)
    writes = WritePathSampler(model, seed).draw(300)
    nodes, slot = writes.path.nodes, writes.local_slot
    in_replicas = (nodes == writes.coordinator[:, None]).any(axis=1)
    np.testing.assert_array_equal(in_replicas, slot >= 0)
    rows = np.flatnonzero(slot >= 0)
    np.testing.assert_array_equal(nodes[rows, slot[rows]], writes.coordinator[rows])
    # Exactly the local task has the local service time.
    assert ((writes.path.service == 0.5).sum(axis=1) == (slot >= 0)).all()
    assert np.all((nodes - nodes[:, :1]) % n == np.arange(r))  # ring placement
    if model.local_fraction in (0.0, 1.0):
        assert np.all(in_replicas == bool(model.local_fraction))


def test_remote_policy_is_the_ring_queue_with_remote_service_exactly():
    """l = 0: the same sample path, number for number, as ForkJoinModel(ring)."""
    remote = stats.lognorm(0.7)
    model = CassandraModel(7, 3, "QUORUM", 0.9, LOCAL, remote, "remote")
    plain = ForkJoinModel(7, 3, 2, arrival_rate=0.9, service=remote, placement="ring")
    writes = WritePathSampler(model, 11).draw(5000)
    path = PathSampler(plain.system, plain.arrival_process, 11).draw(5000)
    for field in ("arrivals", "nodes", "service", "quorum"):
        np.testing.assert_array_equal(getattr(writes.path, field), getattr(path, field))
    ours = simulate_cassandra(model, 30_000, 5)
    theirs = simulate(plain, 30_000, 5)
    assert ours.mean == theirs.mean
    assert ours.summary.p99 == theirs.summary.p99


def test_round_robin_with_equal_services_is_the_general_ring_queue():
    service = stats.gamma(2, scale=0.5)
    model = CassandraModel(6, 3, "TWO", 1.4, service, service, "round-robin")
    plain = ForkJoinModel(6, 3, 2, arrival_rate=1.4, service=service, placement="ring")
    ours = simulate_cassandra(model, 120_000, 1).summary
    theirs = simulate(plain, 120_000, 2).summary
    assert agree(ours, theirs)
    assert model.node_utilisation == pytest.approx(plain.node_utilisation)


def test_all_quorums_come_from_one_run():
    model = CassandraModel(6, 4, "ALL", 1.0, LOCAL, REMOTE, "round-robin")
    many = simulate_quorums(model, [1, 2, 3, 4], 20_000, 3)
    for k in (1, 4):
        single = simulate_cassandra(CassandraModel(6, 4, k, 1.0, LOCAL, REMOTE,
                                                   "round-robin"), 20_000, 3)
        assert single.mean == many[k].mean
    assert [many[k].mean for k in (1, 2, 3, 4)] == sorted(many[k].mean for k in many)


def _empirical_remote():
    """Measured-looking remote latencies: a bimodal sample, far from exponential."""
    rng = np.random.default_rng(2024)
    samples = np.concatenate([rng.gamma(8, 0.1, 1500), rng.gamma(4, 0.5, 500)])
    return Empirical.from_samples(samples)


@pytest.mark.parametrize("remote", [REMOTE, _empirical_remote()],
                         ids=["exponential", "empirical"])
@pytest.mark.parametrize("policy", ["token-aware", "remote"])
def test_theorem4_is_exact_for_one_replica(remote, policy):
    """With r = 1 each node receives a Poisson(rate/n) share of writes, all local or all
    remote, so the cluster is n independent copies of the basic configuration."""
    nodes, rate = 6, 0.6 * 6 / float(remote.mean())
    model = CassandraModel(nodes, 1, "ONE", rate, LOCAL, remote, policy)
    direct = simulate_cassandra(model, 150_000, 7).summary
    local = simulate_basic("local", 1, rate / nodes, LOCAL, 150_000, 8)
    basic = simulate_basic("remote", 1, rate / nodes, remote, 150_000, 8)
    predicted = analytic.cassandra_write_latency(1, 1, model.local_fraction, local.mean,
                                                 {1: basic.mean})
    used = local if policy == "token-aware" else basic
    assert predicted == used.mean
    assert agree(direct, used)


def test_theorem4_local_one_misses_the_mixed_queue():
    """Documented failure: a local ONE write waits behind remote tasks of other
    writes, which LT(1,1,1) (a node with local tasks only) never sees."""
    model = CassandraModel(6, 3, "ONE", 2.4, LOCAL, REMOTE, "token-aware")
    direct = simulate_cassandra(model, 60_000, 4).summary
    local = simulate_basic("local", 1, 3 * 2.4 / 6, LOCAL, 60_000, 4)
    assert direct.ci_low > local.ci_high


# --- level 2 ------------------------------------------------------------------------

ZERO = StagedConfig(1, 1, 1, None, None, None)


@pytest.mark.parametrize("policy", ["token-aware", "round-robin", "remote"])
def test_staged_with_one_thread_and_no_stage_time_is_level1(policy):
    model = CassandraModel(5, 3, "QUORUM", 1.2, LOCAL, stats.lognorm(0.6), policy)
    writes = WritePathSampler(model, 9).draw(3000)
    start, acks = run_staged(writes, ZERO, 0, model.quorum)
    from forkjoin_sim.engines import FastEngine
    done, sojourn = FastEngine(5).run(writes.path)
    np.testing.assert_array_equal(start, writes.path.arrivals)
    np.testing.assert_allclose(acks, done, rtol=1e-12)
    np.testing.assert_allclose(np.sort(acks, axis=1)[:, 1] - start, sojourn, rtol=1e-12)


def test_staged_deterministic_network_adds_two_hops_to_remote_writes():
    hop = 0.3
    config = StagedConfig(1, 1, 1, None, None, Deterministic(hop))
    model = CassandraModel(4, 1, "ONE", 1.0, LOCAL, REMOTE, "remote")
    writes = WritePathSampler(model, 2).draw(2000)
    start, acks = run_staged(writes, config, 0, 1)
    from forkjoin_sim.engines import FastEngine
    _, plain = FastEngine(4).run(writes.path)
    np.testing.assert_allclose(acks[:, 0] - start, plain + 2 * hop, rtol=1e-12)


def test_staged_large_pools_never_queue():
    config = StagedConfig(1000, 1000, 1000, Deterministic(0.1), Deterministic(0.05),
                          Deterministic(0.2))
    model = CassandraModel(3, 2, "ALL", 5.0, LOCAL, REMOTE, "token-aware")
    writes = WritePathSampler(model, 4).draw(2000)
    _, acks = run_staged(writes, config, 0, 2)
    local = np.arange(2)[None, :] == writes.local_slot[:, None]
    expected = (writes.path.arrivals[:, None] + 0.1 + writes.path.service
                + np.where(local, 0.0, 0.2 + 0.2 + 0.05))
    np.testing.assert_allclose(acks, expected, rtol=1e-12)


def test_staged_config_toml_overrides_and_errors(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('[mutation]\nthreads = 4\n[network]\nmean = 0\n')
    config = load_staged_config(path)
    assert config.mutation_threads == 4 and config.network_delay is None
    assert config.request_threads == 128 and config.response_threads == 12
    path.write_text('[mutation]\nthread = 4\n')
    with pytest.raises(ConfigError, match="unknown key"):
        load_staged_config(path)
    with pytest.raises(ConfigError, match="does not exist"):
        load_staged_config(tmp_path / "missing.toml")


@pytest.mark.parametrize("toml, said", [
    ('[mutation]\nthreads = "x"\n',
     'staged config [mutation] threads = "x" must be a whole number >= 1, e.g. '
     'threads = 32'),
    ('[request]\nthreads = true\n',
     "staged config [request] threads = true must be a whole number >= 1, e.g. "
     "threads = 128"),
    ('[network]\nmean = "fast"\n',
     'staged config [network] mean = "fast" must be a number >= 0'),
    ('[request]\nservice = "bogus"\n', "staged config [request] service: service "
                                         "'bogus' is unknown")])
def test_a_bad_staged_config_value_is_named_as_the_file_writes_it(tmp_path, toml, said):
    """A probe: [mutation] threads = "x" said "mutation_threads must be a whole number
    >= 1, got 'x'" (the Python field), not naming the file: the message names the
    file, the table and the key, and shows the value as TOML spells it."""
    path = tmp_path / "c.toml"
    path.write_text(toml)
    with pytest.raises(ConfigError) as info:
        load_staged_config(path)
    assert str(info.value).startswith(f"{path}: {said}")
    assert "_threads" not in str(info.value) and "True" not in str(info.value)
    # the Python constructor keeps its own field names
    with pytest.raises(ConfigError, match="mutation_threads must be a whole number >= 1, "
                                          "got 'x'"):
        StagedConfig(mutation_threads="x")


def test_staged_unstable_pool_is_refused():
    model = CassandraModel(3, 3, "ONE", 2.0, REMOTE, REMOTE, "token-aware")
    with pytest.raises(ConfigError, match="mutation stage"):
        simulate_cassandra(model, 100, level=2, config=StagedConfig(1, 1, 1))


def test_staged_runs_are_reproducible():
    model = CassandraModel(4, 2, "ONE", 2.0, LOCAL, REMOTE, "round-robin")
    a = simulate_cassandra(model, 1500, 3, level=2)
    b = simulate_cassandra(model, 1500, 3, level=2)
    assert a.mean == b.mean and a.to_dict()["engine"] == "steps"
    c = simulate_cassandra(model, 1500, 4, level=2)
    assert c.mean != a.mean  # the stage times follow the seed too


def test_level2_cross_datacentre_hops_add_their_delay_exactly():
    # Remote writes, no stage or network time, 32 mutation threads per node at a
    # light load: no write ever queues, so a write's latency is its mutation time,
    # plus exactly 2 x 5 ms when its coordinator and replica sit in different data
    # centres.
    from forkjoin_sim.cassandra.simulation import _run_level2

    model = CassandraModel(4, 1, "ONE", 0.2, stats.expon(scale=0.2),
                           stats.expon(scale=1.0), policy="remote")
    quiet = {"request": {"mean": 0}, "response": {"mean": 0}, "network": {"mean": 0}}
    base = StagedConfig.from_mapping(quiet)
    split = StagedConfig.from_mapping({**quiet, "datacentres": {
        "nodes": [0, 1, 0, 1], "delay": "deterministic", "mean": 5.0}})
    writes = WritePathSampler(model, 3).draw(300)
    plain = _run_level2(writes, base, 1, [1])[1]
    far = _run_level2(writes, split, 1, [1])[1]
    centre = np.asarray(split.datacentre)
    crossing = centre[writes.path.nodes[:, 0]] != centre[writes.coordinator]
    assert crossing.any() and (~crossing).any()
    np.testing.assert_allclose(far - plain, np.where(crossing, 10.0, 0.0), atol=1e-9)
    np.testing.assert_allclose(plain, writes.path.service[:, 0], atol=1e-9)


def test_level2_datacentre_list_must_match_the_cluster():
    model = CassandraModel(4, 1, "ONE", 0.2, stats.expon(scale=0.2),
                           stats.expon(scale=1.0), policy="remote")
    config = StagedConfig.from_mapping({"datacentres": {"nodes": [0, 1], "mean": 1.0}})
    with pytest.raises(ConfigError, match="one per node"):
        simulate_cassandra(model, jobs=100, level=2, config=config)


@pytest.mark.parametrize("policy", ["token-aware", "round-robin"])
def test_closed_loop_level2_with_one_thread_and_no_stage_time_is_level1(policy):
    # One mutation thread and no other stage or hop: each node is one FCFS server, the
    # paper's level-1 model. The two levels index think times differently (level 2
    # gives write j its own), so they agree in law: means and throughputs within
    # their intervals, and both obey Little's law for the closed loop.
    model = CassandraModel(6, 3, "QUORUM", None, stats.expon(scale=0.3),
                           stats.expon(scale=1.0), policy=policy, clients=12, think=1.0)
    config = StagedConfig.from_mapping({"request": {"mean": 0}, "response": {"mean": 0},
                                        "network": {"mean": 0}, "mutation": {"threads": 1}})
    one = simulate_cassandra(model, jobs=30_000, seed=5, level=1)
    two = simulate_cassandra(model, jobs=30_000, seed=6, level=2, config=config)
    assert agree(one.summary, two.summary)
    x, y = one.throughput, two.throughput
    assert abs(x.mean - y.mean) <= math.hypot((x.high - x.low) / 2, (y.high - y.low) / 2)
    for run in (one, two):
        law = model.clients / run.throughput.mean - model.think
        assert run.summary.ci_low - 0.05 * law <= law <= run.summary.ci_high + 0.05 * law


def test_runs_beyond_a_day_are_refused_before_any_work():
    wide = CassandraModel(10**5, 10**5, "ONE", 0.001, LOCAL, REMOTE, "token-aware")
    with pytest.raises(ConfigError, match=r"about 1e\+12 tasks, roughly 2.31 days"):
        simulate_cassandra(wide, jobs=10**7)
    # level 2 holds the whole run: 2e10 writes of 15 steps is petabytes
    narrow = CassandraModel(6, 3, "ONE", 0.1, LOCAL, REMOTE, "token-aware")
    with pytest.raises(ConfigError, match="level 2 holds the whole run in memory"):
        simulate_cassandra(narrow, jobs=2 * 10**10, level=2)


def test_a_heavy_tailed_service_law_is_named_in_the_warnings():
    """A remote service law with an infinite third moment (lomax of shape 2.5) makes
    the waiting times' variance infinite: the run's warnings name it, as simulate's
    do (forkjoin_sim.system.heavy_tail_note); the exponential local law is not named."""
    model = CassandraModel(6, 3, "QUORUM", 0.5, LOCAL, stats.lomax(2.5, scale=1.5),
                           "remote")
    (note,) = [w for w in simulate_cassandra(model, 5000, 1).summary.warnings
               if "third moment" in w]
    assert note.startswith("the remote service law, lomax(c=2.5, mean=1), has an "
                           "infinite third moment")
    light = CassandraModel(6, 3, "QUORUM", 0.5, LOCAL, REMOTE, "remote")
    assert not any("third moment" in w
                   for w in simulate_cassandra(light, 5000, 1).summary.warnings)


@pytest.mark.parametrize("local, remote, words", [
    (0.3, {1: -1.2, 2: 1.9, 3: 2.5}, "RT(1,1,1)=-1.2 must be a finite number >= 0"),
    (-0.3, {1: 1.2, 2: 1.9, 3: 2.5}, "local_basic LT(1,1,1)=-0.3 must be a finite"),
    (0.3, {1: 1.2, 2: float("inf"), 3: 2.5}, "RT(2,2,2)=inf must be a finite")])
def test_theorem4_refuses_a_basic_latency_no_write_has(local, remote, words):
    """A negative basic latency gave a negative write latency (-1.8), silently, where
    the command line refuses it (an API probe)."""
    k = 2 if local == 0.3 and remote[1] < 0 else 1
    with pytest.raises(analytic.ConfigError, match=re.escape(words)):
        analytic.cassandra_write_latency(3, k, 0.5, local, remote)
