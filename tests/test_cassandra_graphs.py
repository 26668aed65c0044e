"""Level 2 as a graph of steps: its shape, its draws by purpose, its latency against
hand computations (a feed-forward Jackson network of M/M/c stages, no-load sums) and
level 1, and the same writes on the SimPy reference."""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats

from forkjoin_sim.cassandra import (CassandraModel, StagedConfig, WritePath,
                                    WritePathSampler, simulate_cassandra, staged_jobs,
                                    staged_layout, staged_write)
from forkjoin_sim.errors import ConfigError
from forkjoin_sim.randomness.samplepath import SamplePath


def _config(**tables):
    quiet = {"request": {"mean": 0}, "response": {"mean": 0}, "network": {"mean": 0}}
    quiet.update(tables)
    return StagedConfig.from_mapping(quiet)


def test_a_local_write_skips_hops_and_the_response_stage():
    config = StagedConfig.from_mapping()
    remote = staged_write(3, 2, -1, config)
    local = staged_write(3, 2, 1, config)
    chain = ["network_out", "mutation", "network_back", "response"]
    assert [op.kind for op in remote.ops] == (["client_out", "request"] + chain * 3
                                               + ["client_back"])
    assert [op.kind for op in local.ops] == (["client_out", "request"] + chain
                                              + ["mutation"] + chain + ["client_back"])
    assert local.ops[6].party == 2 and local.ops[6].after == (1,)
    assert remote.ops[-1].need == 2 and not remote.ops[-1].purging
    # a stage without time is no step: nothing to queue at
    bare = staged_write(2, 1, -1, _config())
    assert [op.kind for op in bare.ops] == ["client_out", "network_out", "mutation",
                                            "network_back", "network_out", "mutation",
                                            "network_back", "client_back"]
    with pytest.raises(ConfigError, match="1 <= quorum <= replicas"):
        staged_write(2, 3, -1, config)


def test_layout_gives_each_node_its_three_pools():
    config = StagedConfig.from_mapping({"mutation": {"threads": 7}})
    layout = staged_layout(2, config)
    assert layout.servers == (128, 7, 12) * 2
    assert layout.table[1] == (3, 4, 5) and layout.names[4] == "node1.mutation"


def _prefix(writes, count):
    p = writes.path
    return WritePath(SamplePath(p.arrivals[:count], p.nodes[:count], p.service[:count],
                                p.quorum[:count]), writes.coordinator[:count],
                     writes.local_slot[:count], writes.node_count)


def test_stage_times_are_a_function_of_seed_stage_and_write():
    model = CassandraModel(6, 3, "ONE", 1.0, stats.expon(scale=0.2), stats.expon(),
                           "round-robin")
    config = StagedConfig.from_mapping({"client": {"mean": 0.1},
                                        "datacentres": {"nodes": [0, 0, 0, 1, 1, 1],
                                                        "mean": 2.0}})
    writes = WritePathSampler(model, 1).draw(6000)
    whole = staged_jobs(writes, config, 3, 1)
    part = staged_jobs(_prefix(writes, 100), config, 3, 1)
    np.testing.assert_array_equal(part[3], whole[3][:100, :part[3].shape[1]])
    np.testing.assert_array_equal(part[1], whole[1][:100])
    other = staged_jobs(writes, config, 4, 1)
    assert not np.array_equal(other[3], whole[3])
    # mutation times are the write path's own, wherever the template puts them
    for c, template in enumerate(whole[0]):
        rows = whole[1] == c
        columns = [i for i, op in enumerate(template.ops) if op.kind == "mutation"]
        np.testing.assert_array_equal(whole[3][np.ix_(rows, columns)],
                                      writes.path.service[rows])


def _mmc_sojourn(rate, mean, servers):
    """Mean time in an M/M/c station (Erlang C): wait + service."""
    a = rate * mean
    rho = a / servers
    top = a ** servers / math.factorial(servers) / (1 - rho)
    wait_probability = top / (sum(a ** i / math.factorial(i) for i in range(servers))
                              + top)
    return wait_probability * mean / (servers * (1 - rho)) + mean


def test_remote_writes_are_a_jackson_network_of_three_stages():
    # Two nodes, one replica, coordinator always the other node: a write is M/M/1 at
    # its coordinator's request stage, an exponential hop, M/M/2 at the replica's
    # mutation stage, a hop, M/M/1 at the coordinator's response stage; every
    # station sees Poisson arrivals at rate/2 (Burke), so the mean latency is the sum
    # of the stations' Erlang-C sojourns and the two hops.
    rate = 1.6
    model = CassandraModel(2, 1, "ONE", rate, stats.expon(), stats.expon(), "remote")
    config = StagedConfig.from_mapping({
        "request": {"threads": 1, "service": "exp", "mean": 0.5},
        "mutation": {"threads": 2},
        "response": {"threads": 1, "service": "exp", "mean": 0.25},
        "network": {"delay": "exp", "mean": 0.2}})
    expected = (_mmc_sojourn(rate / 2, 0.5, 1) + _mmc_sojourn(rate / 2, 1.0, 2)
                + _mmc_sojourn(rate / 2, 0.25, 1) + 2 * 0.2)
    result = simulate_cassandra(model, jobs=120_000, seed=2, level=2, config=config)
    s = result.summary
    assert s.ci_low <= expected <= s.ci_high
    assert s.ci_high - s.ci_low < 0.04 * expected  # strict: a 2% half-width


def test_one_node_of_c_mutation_threads_is_mmc():
    # One node, every write local: the mutation stage alone, an M/M/4 queue at 70%.
    model = CassandraModel(1, 1, "ONE", 2.8, stats.expon(), stats.expon(), "token-aware")
    config = _config(mutation={"threads": 4})
    result = simulate_cassandra(model, jobs=300_000, seed=7, level=2, config=config)
    expected = _mmc_sojourn(2.8, 1.0, 4)
    assert result.summary.ci_low <= expected <= result.summary.ci_high
    assert result.summary.ci_high - result.summary.ci_low < 0.04 * expected


def test_quorums_read_one_open_run():
    # Under open arrivals every consistency level reads the same run: a higher k waits
    # at least as long, write by write.
    from forkjoin_sim.cassandra.simulation import _run_level2

    model = CassandraModel(5, 3, "ONE", 2.0, stats.expon(scale=0.2), stats.expon(),
                           "round-robin")
    writes = WritePathSampler(model, 5).draw(3000)
    latency = _run_level2(writes, StagedConfig.from_mapping(), 1, [1, 2, 3])
    assert np.all(latency[1] <= latency[2]) and np.all(latency[2] <= latency[3])
    assert latency[1].mean() < latency[3].mean()


def test_level2_hops_per_pair_of_data_centres_at_no_load():
    # [datacentres.hops] gives the hop between data centres 0 and 1 its own law (10,
    # each way) while hops within one keep [network] (1); no stage time, light load on
    # 32 threads: a write's latency is its slowest replica's hops and mutation
    from forkjoin_sim.cassandra.simulation import _run_level2

    model = CassandraModel(4, 2, "ALL", 0.05, stats.expon(scale=0.2), stats.expon(),
                           "round-robin")
    config = _config(network={"delay": "deterministic", "mean": 1.0},
                     datacentres={"nodes": [0, 0, 1, 1], "hops": {"0-1": 10.0}})
    writes = WritePathSampler(model, 8).draw(500)
    latency = _run_level2(writes, config, 2, [2])[2]
    centre = np.array([0, 0, 1, 1])
    far = centre[writes.path.nodes] != centre[writes.coordinator][:, None]
    local = np.arange(2)[None, :] == writes.local_slot[:, None]
    expected = writes.path.service + np.where(local, 0.0, np.where(far, 20.0, 2.0))
    assert far.any() and (~far & ~local).any() and local.any()
    np.testing.assert_allclose(latency, expected.max(axis=1), rtol=1e-9)
    with pytest.raises(ConfigError, match="give one: hops"):
        _config(datacentres={"nodes": [0, 1], "hops": {"0-1": 1.0}, "mean": 2.0})
    with pytest.raises(ConfigError, match='no law for "0-1"'):
        _config(datacentres={"nodes": [0, 1], "hops": {"1-1": 1.0}})


def test_both_levels_run_the_same_writes_beyond_one_block():
    # one mutation thread and no other stage: level 2 is level 1, write for write,
    # over more writes than level 1 draws in one block
    from forkjoin_sim.run import block_jobs

    model = CassandraModel(4, 2, "ONE", 1.2, stats.expon(scale=0.3), stats.expon(),
                           "round-robin")
    jobs = block_jobs(2) + 5000
    one = simulate_cassandra(model, jobs, seed=3, level=1, warmup=0.0)
    two = simulate_cassandra(model, jobs, seed=3, level=2, warmup=0.0,
                             config=_config(mutation={"threads": 1}))
    assert one.summary.jobs_measured == two.summary.jobs_measured == jobs
    assert two.mean == pytest.approx(one.mean, rel=1e-12)
    assert two.summary.p999 == pytest.approx(one.summary.p999, rel=1e-12)


@settings(max_examples=15, deadline=None)
@given(replicas=st.integers(1, 3), extra=st.integers(0, 2), threads=st.integers(1, 3),
       stages=st.sampled_from(["all", "none", "request", "response"]),
       policy=st.sampled_from(["token-aware", "round-robin", "remote"]),
       closed=st.booleans(), seed=st.integers(0, 10**6))
def test_the_staged_graph_gives_the_same_writes_on_simpy(replicas, extra, threads,
                                                          stages, policy, closed, seed):
    # the graph of each write, run by the compiled engine and by the SimPy reference
    # on the same arrays: the same issue and answer time for every write
    from forkjoin_sim.steps import Closed, Open, run_arrays, run_reference
    from forkjoin_sim.steps.graph import compile_templates, stations_of

    nodes = replicas + extra
    if policy == "remote" and extra == 0:
        policy = "token-aware"
    model = CassandraModel(nodes, replicas, 1, 3.0, stats.expon(scale=0.3),
                           stats.expon(), policy)
    config = StagedConfig.from_mapping({
        "request": {"threads": threads, "mean": 0.2 * (stages in ("all", "request"))},
        "mutation": {"threads": threads},
        "response": {"threads": threads, "mean": 0.1 * (stages in ("all", "response"))},
        "network": {"mean": 0.1}, "client": {"mean": 0.05 * (stages == "all")}})
    writes = WritePathSampler(model, seed).draw(150)
    templates, classes, parties, durations = staged_jobs(writes, config, seed,
                                                         1 + seed % replicas)
    layout = staged_layout(nodes, config)
    station = np.full(durations.shape, -1, np.int32)
    for c, template in enumerate(templates):
        rows = classes == c
        station[rows, :len(template.ops)] = stations_of(
            template, layout, parties[rows, :template.parties])
    arrivals = (Closed(4, np.random.default_rng(seed).exponential(0.5, 150)) if closed
                else Open(writes.path.arrivals))
    args = (compile_templates(templates), classes, station, durations,
            np.asarray(layout.servers), arrivals)
    fast, reference = run_arrays(*args), run_reference(*args)
    np.testing.assert_allclose(fast.start, reference.start, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(fast.finish, reference.finish, rtol=1e-12, atol=1e-12)
