"""The (n,r,k) and Cassandra builders: structure, light-load latency, both engines."""

import numpy as np
import pytest
from scipy import stats

from forkjoin_sim.errors import ConfigError
from forkjoin_sim.steps import (Closed, Open, cassandra_jobs, cassandra_layout,
                                cassandra_parties, cassandra_read, cassandra_write,
                                compile_templates, draws, fork_join, run_reference,
                                simulate, stations_of)
from forkjoin_sim.steps.engine import run_arrays

LAWS = {"client": stats.expon(scale=0.02), "hop": stats.expon(scale=0.1),
        "coordinate": stats.expon(scale=0.05), "message": stats.expon(scale=0.01),
        "replica_read": stats.expon(scale=0.2), "replica_write": stats.expon(scale=0.3),
        "respond": stats.expon(scale=0.02)}


@pytest.mark.parametrize("replicas", [1, 3, 5])
def test_cassandra_templates_have_one_chain_per_remote_replica(replicas):
    remote = cassandra_read(replicas, 1)
    local = cassandra_read(replicas, 1, local=True)
    assert len(remote.ops) == 6 + 7 * replicas
    assert len(local.ops) == 6 + 1 + 7 * (replicas - 1)
    # the local replica's work is on the coordinator's read stage, right after it
    assert local.ops[3].party == 1 and local.ops[3].stage == "read"
    assert remote.width("hop") == 2 + 2 * replicas
    assert local.width("hop") == 2 + 2 * (replicas - 1)
    write = cassandra_write(replicas, replicas)
    assert write.width("replica_write") == replicas and write.ops[-3].quorum == replicas


def test_an_isolated_read_takes_its_critical_path():
    # far-apart arrivals and large pools: nothing queues, so a job's latency is the
    # common steps plus the quorum-th fastest replica branch
    nodes, replicas, quorum, jobs = 5, 3, 2, 200
    templates, classes, parties, times = cassandra_jobs(nodes, replicas, quorum, LAWS,
                                                        3, jobs)
    layout = cassandra_layout(nodes, "pools", threads={s: 50 for s in
                                                       ("native", "messaging", "read",
                                                        "mutation", "response")},
                              client_cores=50)
    out = simulate(templates, layout, parties, times, Open(np.arange(jobs) * 100.0),
                   classes=classes)
    for j in range(jobs):
        t = times[j]
        local = classes[j] == 1
        branches = [t[3]] if local else []
        first = 4 if local else 3
        for b in range(replicas - local):
            branches.append(t[first + 7 * b:first + 7 * b + 7].sum())
        quorum_th = np.sort(branches)[quorum - 1]
        steps = len(templates[classes[j]].ops)
        expected = t[0] + t[1] + t[2] + quorum_th + t[steps - 3] + t[steps - 2] + \
            t[steps - 1]
        assert out.sojourn[j] == pytest.approx(expected, abs=1e-10)   # clock rounding


@pytest.mark.parametrize("structure, writes, purging, coordinator", [
    ("shared", 0.0, False, "random"), ("shared", 1.0, True, "replica"),
    ("pools", 0.0, True, "random"), ("pools", 0.3, False, "random")])
def test_cassandra_workloads_agree_on_both_engines(structure, writes, purging,
                                                   coordinator):
    nodes, jobs = 4, 400
    layout = cassandra_layout(nodes, structure, cores=2, threads={"messaging": 1},
                              client_cores=2)
    templates, classes, parties, times = cassandra_jobs(
        nodes, 3, 2, LAWS, 9, jobs, writes=writes, coordinator=coordinator,
        purging=purging)
    compiled = compile_templates(templates)
    station = np.full(times.shape, -1, np.int32)
    for c, t in enumerate(templates):
        station[classes == c, :len(t.ops)] = stations_of(t, layout, parties[classes == c])
    arrivals = Closed(20, draws.think_times(9, stats.expon(scale=1.0), 0, jobs))
    args = (compiled, classes, station, times, np.array(layout.servers), arrivals)
    fast = run_arrays(*args, record_steps=True)
    ref = run_reference(*args, record_steps=True)
    np.testing.assert_array_equal(fast.finish, ref.finish)
    np.testing.assert_array_equal(fast.steps, ref.steps)
    lengths = np.array([len(t.ops) for t in templates])[classes]
    real = np.arange(times.shape[1]) < lengths[:, None]
    assert np.isnan(fast.steps[real]).any() == purging     # purged branches undone
    assert np.mean(classes >= 2) == pytest.approx(writes, abs=0.07)


def test_reads_and_writes_share_their_common_step_times():
    reads = cassandra_jobs(5, 3, 2, LAWS, 4, 300)
    mixed = cassandra_jobs(5, 3, 2, LAWS, 4, 300, writes=0.5)
    np.testing.assert_array_equal(reads[2], mixed[2])         # same placements
    same = mixed[1] == reads[1]                                 # the jobs still reads
    assert 0.3 < same.mean() < 0.7
    np.testing.assert_array_equal(reads[3][same], mixed[3][same])
    write = mixed[1] >= 2
    work = [i for i, op in enumerate(reads[0][0].ops) if op.kind == "replica_read"]
    assert not np.isin(mixed[3][write & (mixed[1] == 2)][:, work], reads[3]).any()
    with pytest.raises(ConfigError, match="0 <= writes <= 1"):
        cassandra_jobs(5, 3, 2, LAWS, 4, 10, writes=1.5)


def test_parties_put_a_local_coordinator_first_among_its_replicas():
    parties, local = cassandra_parties(6, 3, 4, 0, 6000)
    assert np.all(parties[:, 0] == 6)
    np.testing.assert_array_equal(local, (parties[:, 2:] == parties[:, 1:2]).any(1))
    assert np.all(parties[local, 2] == parties[local, 1])
    assert stats.binomtest(int(local.sum()), 6000, 0.5).pvalue > 1e-3
    parties, local = cassandra_parties(6, 3, 4, 0, 100, coordinator="replica")
    assert local.all()


def test_layouts_shared_and_pools():
    shared = cassandra_layout(3, "shared", cores=4, client_cores=8)
    assert shared.servers == (4, 4, 4, 8)
    pools = cassandra_layout(3, "pools", cores=4, threads={"read": 32})
    assert len(pools.names) == 3 * 5 + 1
    assert pools.servers[pools.table[1][pools.stage("read")]] == 32
    assert pools.servers[pools.table[1][pools.stage("native")]] == 4
    with pytest.raises(ConfigError, match="unknown stages"):
        cassandra_layout(3, "pools", threads={"gossip": 1})
    with pytest.raises(ConfigError, match="'shared' or 'pools'"):
        cassandra_layout(3, "seda")


@pytest.mark.parametrize("args, message", [((3, 4, 1), "1 <= replicas <= nodes"),
                                           ((3, 2, 3), "1 <= quorum <= replicas"),
                                           ((3, 2, 0), "1 <= quorum <= replicas")])
def test_fork_join_shapes_are_checked(args, message):
    with pytest.raises(ConfigError, match=message):
        fork_join(*args)


def test_cassandra_shapes_are_checked():
    with pytest.raises(ConfigError, match="replicas >= 1"):
        cassandra_read(0, 1)
    with pytest.raises(ConfigError, match="1 <= quorum <= replicas"):
        cassandra_write(3, 4)
