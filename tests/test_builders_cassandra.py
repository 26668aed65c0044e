"""`steps.builders.cassandra_jobs`' Cassandra options: reads that ask k replicas, the
client's own hop law, a local replica's own law, and the data/digest read law."""

import numpy as np
import pytest
from scipy import stats

from forkjoin_sim.errors import ConfigError
from forkjoin_sim.steps import Open, cassandra_jobs, cassandra_layout, simulate
from forkjoin_sim.steps.builders import read_law

LAWS = {"client": stats.expon(scale=0.02), "hop": stats.expon(scale=0.1),
        "coordinate": stats.expon(scale=0.05), "message": stats.expon(scale=0.01),
        "replica_read": stats.expon(scale=0.2), "replica_write": stats.expon(scale=0.3),
        "respond": stats.expon(scale=0.02)}


def _values(template, row, kind):
    return [row[i] for i, op in enumerate(template.ops) if op.kind == kind]


def test_a_read_of_level_k_asks_k_replicas_with_the_values_it_has_at_all():
    everyone = cassandra_jobs(5, 3, 1, LAWS, 2, 400)
    two = cassandra_jobs(5, 3, 1, LAWS, 2, 400, read_quorum=2)
    np.testing.assert_array_equal(two[1], everyone[1])
    np.testing.assert_array_equal(two[2], everyone[2])
    for c in (0, 1):
        assert two[0][c].width("replica_read") == 2
        assert two[0][c].ops[-3].need == 2
        for j in np.flatnonzero(two[1] == c)[:20]:
            for kind in two[0][c].kinds:
                mine = _values(two[0][c], two[3][j], kind)
                full = _values(everyone[0][c], everyone[3][j], kind)
                # each kind's steps take the job's drawn values of it in order
                assert mine == full[:len(mine)], (c, kind)
    with pytest.raises(ConfigError, match="1 <= read_quorum <= replicas"):
        cassandra_jobs(5, 3, 1, LAWS, 2, 10, read_quorum=4)


def test_an_isolated_read_of_level_k_waits_for_its_slowest_asked_replica():
    # constant laws, far-apart reads, large pools: nothing queues, so a remote read of
    # level 2 is client + hop + coordinate + its slowest of 2 chains + respond + hop +
    # client, each chain message + hop + message + read + message + hop + message;
    # a local read's own chain is its read alone
    laws = {"client": 0.5, "hop": 1.0, "coordinate": 0.25, "message": 0.125,
            "replica_read": 4.0, "respond": 0.0625}
    templates, classes, parties, times = cassandra_jobs(5, 3, 1, laws, 1, 100,
                                                        read_quorum=2)
    layout = cassandra_layout(5, "shared", cores=50, client_cores=50)
    out = simulate(templates, layout, parties, times, Open(np.arange(100) * 1000.0),
                   classes=classes)
    ends = 0.5 + 1.0 + 0.25 + 0.0625 + 1.0 + 0.5
    remote = 4 * 0.125 + 2 * 1.0 + 4.0
    assert (classes == 0).any() and (classes == 1).any()
    np.testing.assert_allclose(out.sojourn, ends + remote, rtol=1e-12)


def test_client_hops_and_a_local_replica_take_their_own_laws():
    laws = dict(LAWS, hop=1.0, replica_write=2.0)
    templates, classes, _, times = cassandra_jobs(
        5, 3, 2, laws, 4, 300, writes=1.0, client_hop=7.0,
        local={"replica_write": 3.0})
    assert set(np.unique(classes)) == {2, 3}
    for c in (2, 3):
        rows = times[classes == c]
        steps = templates[c].ops
        hops = [i for i, op in enumerate(steps) if op.kind == "hop"]
        np.testing.assert_array_equal(rows[:, hops[0]], 7.0)
        np.testing.assert_array_equal(rows[:, hops[-1]], 7.0)
        np.testing.assert_array_equal(rows[:, hops[1:-1]], 1.0)
        work = rows[:, [i for i, op in enumerate(steps) if op.kind == "replica_write"]]
        np.testing.assert_array_equal(work[:, 0], 3.0 if c == 3 else 2.0)
        np.testing.assert_array_equal(work[:, 1:], 2.0)


def test_read_law_gives_the_first_asked_replica_the_data_read():
    law = read_law(stats.uniform(loc=10, scale=1), stats.uniform(loc=0, scale=1))
    values = law(np.random.default_rng(0), (1000, 3))
    assert values.shape == (1000, 3)
    assert np.all(values[:, 0] >= 10) and np.all(values[:, 1:] < 1)


def test_two_data_centres_at_no_load_match_a_hand_calculation():
    # four nodes in two data centres, writes to two replicas at ALL, constant laws,
    # far-apart writes on large pools: a write's latency is its common steps plus its
    # slowest replica chain, whose two hops take the law of the coordinator's and the
    # replica's data centres (0-0 keeps the run's hop law, 1 here)
    class Centres:
        nodes = (0, 0, 1, 1)
        hops = {(0, 1): 10.0, (1, 1): 2.0}

    laws = {"client": 0.5, "hop": 1.0, "coordinate": 0.25, "message": 0.125,
            "replica_write": 4.0, "respond": 0.0625}
    jobs = 300
    templates, classes, parties, times = cassandra_jobs(
        4, 2, 2, laws, 6, jobs, writes=1.0, datacentres=Centres())
    out = simulate(templates, cassandra_layout(4, "shared", cores=50, client_cores=50),
                   parties, times, Open(np.arange(jobs) * 1000.0), classes=classes)
    centre = np.array(Centres.nodes)
    pair = {(0, 0): 1.0, (0, 1): 10.0, (1, 0): 10.0, (1, 1): 2.0}
    expected = []
    for j in range(jobs):
        coordinator, replicas = parties[j, 1], parties[j, 2:]
        chains = [4.0 if classes[j] == 3 and i == 0 else
                  4 * 0.125 + 2 * pair[centre[coordinator], centre[node]] + 4.0
                  for i, node in enumerate(replicas)]
        expected.append(0.5 + 1.0 + 0.25 + max(chains) + 0.0625 + 1.0 + 0.5)
    crossing = centre[parties[:, 1]] != centre[parties[:, 2:]].T
    assert crossing.any() and (~crossing).any() and (classes == 3).any()
    np.testing.assert_allclose(out.sojourn, expected, rtol=1e-12)
    with pytest.raises(ConfigError, match="nodes lists 4 nodes but the cluster has 5"):
        cassandra_jobs(5, 2, 2, laws, 6, 10, writes=1.0, datacentres=Centres())
