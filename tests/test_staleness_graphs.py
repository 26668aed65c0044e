"""Tests for forkjoin_sim.staleness.graphs and .versions: operations as step graphs,
and what reads return from the steps' times."""

import numpy as np
import pytest
from scipy import stats

from forkjoin_sim.errors import ConfigError
from forkjoin_sim.nodes import READ, WRITE, SharedQueue, Stages
from forkjoin_sim.staleness import graphs
from forkjoin_sim.staleness.versions import Operations, newest_by_key, staleness
from forkjoin_sim.steps import Closed, Open, simulate


def test_an_operation_forks_to_every_replica_and_joins_at_its_quorum():
    read, write = graphs.templates(3, 2, 1, graphs.stage_names(Stages()), ordered=True)
    cols = graphs.Columns(0, 3)
    assert len(write.ops) == graphs.block_steps(3) == 10
    join = write.ops[cols.join]
    assert join.after == (6, 7, 8) and join.need == 1 and read.ops[cols.join].need == 2
    assert [op.stage for op in write.ops[cols.task]] == ["mutation"] * 3
    assert [op.stage for op in read.ops[cols.task]] == ["read"] * 3
    # requests go from the coordinator (party 0) to replica i (party 2 + i) and back
    assert [op.link for op in write.ops[cols.request]] == [(0, 2), (0, 3), (0, 4)]
    assert [op.link for op in write.ops[cols.reply]] == [(2, 0), (3, 0), (4, 0)]
    plain, _ = graphs.templates(3, 2, 1, graphs.stage_names(Stages()), ordered=False)
    assert all(op.link is None for op in plain.ops)


def test_a_session_is_two_operations_through_two_coordinators():
    names = graphs.stage_names(SharedQueue())
    read, write = graphs.templates(2, 1, 2, names, ordered=False,
                                   session="read-your-writes")
    first, second = graphs.Columns(0, 2), graphs.Columns(graphs.block_steps(2) + 1, 2)
    assert len(write.ops) == 2 * graphs.block_steps(2) + 1 and len(read.ops) == 7
    assert write.ops[first.join + 1].after == (first.join,)           # the pause
    assert all(op.after == (first.join + 1,) for op in write.ops[second.request])
    assert write.ops[second.join].need == 1 and write.ops[first.join].need == 2
    assert {op.stage for op in write.ops[second.task]} == {"queue"}
    mr_read, mr_write = graphs.templates(2, 1, 2, names, False, "monotonic-reads")
    assert len(mr_read.ops) == 15 and len(mr_write.ops) == 7
    assert mr_read.ops[second.request][0].kind == "second_read_request"
    with pytest.raises(ConfigError, match="read-your-writes or monotonic-reads"):
        graphs.templates(2, 1, 1, names, False, "causal")


def test_layout_gives_replica_nodes_their_stages_and_coordinators_none():
    layout = graphs.layout(2, 3, Stages(2, 4))
    assert layout.names == ("node0.read", "node0.mutation", "node1.read", "node1.mutation")
    assert layout.servers == (2, 4, 2, 4)
    assert layout.table == ((0, 1), (2, 3), (-1, -1))
    assert graphs.stage_names(Stages()) == {READ: "read", WRITE: "mutation"}


def test_a_hop_between_a_coordinator_and_itself_takes_no_time():
    laws = {kind: stats.expon() for role in graphs.ROLES.values() for kind in role[:3]}
    coordinator = np.array([[0, 1], [2, 2], [1, 0]])
    is_write = np.array([True, False, True])
    times = graphs.durations(3, laws, is_write, coordinator, 2, 15,
                             "read-your-writes", 0.25)
    first, second = graphs.Columns(0, 2), graphs.Columns(8, 2)
    assert times[0, first.request][0] == times[0, first.reply][0] == 0
    assert np.all(times[0, first.request][1:] > 0)
    assert np.all(times[1, first.request] > 0)          # node 2 holds no replica
    assert times[0, second.request][1] == 0 and times[2, second.request][0] == 0
    np.testing.assert_array_equal(times[[0, 2], first.join + 1], 0.25)
    assert np.all(times[:, first.task] > 0)             # services are never zeroed


def test_coordinators_one_random_and_token_aware():
    assert np.all(graphs.coordinators(1, "one", 5, 3, 100) == 4)
    drawn = graphs.coordinators(1, "random", 5, 3, 20_000)
    assert set(np.unique(drawn)) == set(range(5))
    assert set(np.unique(graphs.coordinators(1, "token-aware", 5, 3, 20_000))) == {0, 1, 2}
    np.testing.assert_array_equal(drawn[:100], graphs.coordinators(1, "random", 5, 3, 100))


def test_the_graphs_run_on_the_engine_in_an_open_and_a_closed_loop():
    # one write with constant times: request 1, service 2, ack 1 on each replica
    read, write = graphs.templates(2, 1, 2, graphs.stage_names(SharedQueue()), True)
    layout = graphs.layout(2, 3, SharedQueue())
    parties = np.array([[2, 2, 0, 1]] * 2)
    times = np.array([[1.0, 1.0, 2.0, 2.0, 1.0, 1.0, 0.0]] * 2)
    out = simulate([read, write], layout, parties, times, Open(np.array([0.0, 0.5])),
                   classes=np.array([1, 1]), record_steps=True)
    # the second write queues behind the first at each replica: served 3..5, acked 6
    np.testing.assert_array_equal(out.finish, [4.0, 6.0])
    closed = simulate([read, write], layout, parties, times, Closed(1, np.zeros(2)),
                      classes=np.array([1, 1]))
    np.testing.assert_array_equal(closed.finish, [4.0, 8.0])


def test_versions_states_and_returns_on_a_hand_made_run():
    # key 0: write A (issued 0) then write B (issued 1); reads at 3 and 5. Two replicas.
    ops = Operations(
        issue=np.array([0.0, 1.0, 3.0, 5.0]), is_write=np.array([True, True, False, False]),
        key=np.zeros(4, np.int64),
        finish=np.array([[1.0, 6.0], [2.0, 2.5], [3.5, 3.5], [5.5, 5.5]]),
        replied=np.array([[1.5, 6.5], [2.5, 3.0], [4.5, 4.0], [6.0, 7.0]]))
    np.testing.assert_array_equal(ops.versions(), [1, 2, 0, 0])
    np.testing.assert_array_equal(ops.commits(1), [1.5, 2.5])
    np.testing.assert_array_equal(ops.commits(2), [6.5, 3.0])
    returned, at = ops.returned(1)
    # read 1's first reply is replica 1's (4.0), which then held B (applied at 2.5)
    np.testing.assert_array_equal(returned, [2, 2])
    np.testing.assert_array_equal(at, [4.0, 6.0])
    reads = staleness(ops, 1, 2)
    # with W = 2, B commits at 3.0 and A at 6.5: at 3, B is the latest committed
    np.testing.assert_array_equal(reads.latest, [2, 2])
    np.testing.assert_array_equal(reads.since, [0.0, 2.0])
    np.testing.assert_array_equal(reads.behind, [0, 0])


def test_newest_by_key_counts_events_at_the_query_time_and_keeps_keys_apart():
    newest = newest_by_key(np.array([0, 1, 0]), np.array([1.0, 2.0, 3.0]),
                           np.array([1, 5, 2]), np.array([0, 0, 1, 1, 0]),
                           np.array([0.5, 1.0, 1.9, 2.0, 9.0]))
    np.testing.assert_array_equal(newest, [0, 1, 0, 5, 2])
