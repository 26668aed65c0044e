"""Tests for forkjoin_sim.staleness.queueing: staleness of partial quorums under load,
measured on the steps engine's per-step times."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from analytic.staleness import p_miss
from forkjoin_sim.errors import ConfigError
from forkjoin_sim.laws.deterministic import Deterministic
from forkjoin_sim.laws.mixture import Mixture
from forkjoin_sim.nodes import SharedQueue, Stages
from forkjoin_sim.staleness.queueing import (ClosedLoop, ReplicatedKey, Session, _run,
                                             exponential_delays, simulate_closed,
                                             simulate_queues, simulate_sessions,
                                             simulate_staleness)
from forkjoin_sim.staleness.sessions import read_your_writes
from forkjoin_sim.staleness.wars import MessageLaws, simulate_wars

STRUCTURES = [SharedQueue(), Stages(), SharedQueue(2), Stages(2, 3)]


def issue_key(node, work_per_replica, replicas=3):
    """The issue's example: 1 op/ms, half writes, messages and service exponential,
    message mean 0.5 ms; ``work_per_replica`` is the service mean (0: no service)."""
    law = None if work_per_replica == 0 else stats.expon(scale=work_per_replica)
    return ReplicatedKey(replicas, 1.0, 0.5, node=node, read_service=law, write_service=law)


@pytest.mark.parametrize("replicas", [3, 5])
@pytest.mark.parametrize("node", [SharedQueue(), Stages(), Stages(1, 2)], ids=str)
@pytest.mark.parametrize("work", [0, 0.45, 0.85])
def test_strict_quorums_always_read_the_latest_commit(replicas, node, work):
    # A read quorum meets every write quorum; the common replica applied the write
    # before acknowledging it, hence before the commit and before the read began.
    run = simulate_queues(issue_key(node, work, replicas), 20_000, seed=5)
    for read_quorum, write_quorum in itertools.product(range(1, replicas + 1), repeat=2):
        result = run.outcome(read_quorum, write_quorum)
        if read_quorum + write_quorum > replicas:
            assert result.consistent.all()
            assert not result.versions_behind.any()
        elif read_quorum == write_quorum == 1:
            assert not result.consistent.all()


def test_load_free_limit_agrees_with_wars_at_every_t():
    # No service and operations far apart: each read meets the latest committed
    # write as in WARS, so P(consistent | t) must match PBS's Monte Carlo for the
    # times t the reads actually saw (averaged over each bin).
    key = ReplicatedKey(3, 0.02, 0.5, node=Stages(), read_service=None,
                        write_service=None, delays=exponential_delays(0.5))
    wars = simulate_wars(key.delays, 3, 1, 1, trials=400_000, seed=2)
    result = simulate_staleness(key, 1, 1, operations=600_000, seed=4)
    edges = [0, 0.25, 0.5, 1, 2]
    table = result.visibility(edges)
    predicted = np.searchsorted(wars.waits, result.since_commit, side="right") / wars.trials
    bins = np.searchsorted(edges, result.since_commit, side="right") - 1
    for j in range(len(edges) - 1):
        inside = bins == j
        expected = predicted[inside].sum()
        spread = np.sqrt((predicted[inside] * (1 - predicted[inside])).sum())
        observed = table.consistent[j]
        assert table.reads[j] > 600
        assert abs(observed - expected) < 4 * spread + 1, (j, observed, expected)
    # the bins resolve the rise of P(consistent) after commit
    assert table.probability[0] < table.probability[3] - 0.03


@pytest.mark.parametrize("read_quorum, write_quorum", [(1, 1), (2, 2), (1, 3)])
def test_load_free_limit_agrees_with_the_closed_form(read_quorum, write_quorum):
    # Acks, read requests and replies take no time; write propagation is Exp(1).
    # At commit exactly W replicas hold the write (PBS's closed form at t = 0); by
    # memorylessness each other one has applied it t later with probability
    # 1 - exp(-t), independently, so P(stale | t) = E[p_miss(N, R, W + M)] with
    # M ~ Binomial(N - W, 1 - exp(-t)).
    replicas, none = 5, stats.expon(scale=1e-9)
    key = ReplicatedKey(replicas, 0.05, 0.5, node=SharedQueue(), read_service=None,
                        write_service=None,
                        delays=MessageLaws(stats.expon(), none, none, none))
    result = simulate_staleness(key, read_quorum, write_quorum, 600_000, seed=6)
    others = replicas - write_quorum
    applied = stats.binom.pmf(np.arange(others + 1)[:, None], others,
                              1 - np.exp(-result.since_commit)[None, :])
    miss = np.array([float(p_miss(replicas, read_quorum, write_quorum + m))
                     for m in range(others + 1)])
    predicted = 1 - miss @ applied
    edges = [0, 0.1, 0.3, 1]
    bins = np.searchsorted(edges, result.since_commit, side="right") - 1
    table = result.visibility(edges)
    for j in range(len(edges) - 1):
        inside = bins == j
        spread = np.sqrt((predicted[inside] * (1 - predicted[inside])).sum())
        assert table.reads[j] > 500
        assert abs(table.consistent[j] - predicted[inside].sum()) < 4 * spread + 1
    # the first bin is close to t = 0, where the closed form is 1 - C(N-W,R)/C(N,R)
    first = table.iloc[0]
    closed = 1 - float(p_miss(replicas, read_quorum, write_quorum))
    assert first.low - 0.02 < closed < first.high + 0.02


@pytest.mark.parametrize("node, direction", [(SharedQueue(), "falls"), (Stages(), "rises")],
                         ids=["shared", "stages"])
def test_direction_of_the_load_effect_matches_the_issue(node, direction):
    # The issue's independent model: shared FIFO about 4.5% -> 0.1% stale, separate
    # stages about 4.4% -> 13%, from no load to 0.9 work per replica.
    idle = simulate_staleness(issue_key(node, 0), 1, 1, 150_000, seed=7)
    busy = simulate_staleness(issue_key(node, 0.9), 1, 1, 150_000, seed=7)
    p_idle, low_idle, high_idle = idle.stale()
    p_busy, low_busy, high_busy = busy.stale()
    assert 0.035 < p_idle < 0.055
    if direction == "falls":
        assert high_busy < low_idle
        assert p_busy < 0.005
    else:
        assert low_busy > high_idle
        assert 0.10 < p_busy < 0.16
        first_ms = busy.visibility([0, 1]).iloc[0]
        assert first_ms.high < idle.visibility([0, 1]).iloc[0].low


def test_k_staleness_and_measured_utilisation():
    key = issue_key(Stages(), 0.8)
    result = simulate_staleness(key, 1, 1, 60_000, seed=9)
    table = result.k_staleness([1, 2, 3, 10])
    assert np.all(np.diff(table.probability) >= 0)
    assert table.probability[0] == pytest.approx(1 - result.stale()[0])
    assert result.versions_behind.max() >= 2
    # each stage of each replica is busy rate * share * mean service
    np.testing.assert_allclose(result.utilisation, 0.4, atol=0.02)
    latency = result.latency_percentiles([50, 99])
    assert np.all(latency.read_low <= latency.read) and np.all(latency.read <= latency.read_high)
    assert latency.write[1] > latency.write[0]


def test_results_are_a_function_of_the_seed():
    key = issue_key(SharedQueue(), 0.5)
    a = simulate_staleness(key, 1, 2, 5000, seed=3)
    b = simulate_staleness(key, 1, 2, 5000, seed=3)
    c = simulate_staleness(key, 1, 2, 5000, seed=4)
    np.testing.assert_array_equal(a.read_latency, b.read_latency)
    assert not np.array_equal(a.read_latency[:100], c.read_latency[:100])


@pytest.mark.parametrize("kwargs, message", [
    (dict(rate=1.0, write_share=0.5, read_service=stats.expon(scale=2.1)), "unstable"),
    (dict(rate=0.0, write_share=0.5), "rate"),
    (dict(rate=1.0, write_share=1.5), "write share"),
    (dict(rate=1.0, write_share=0.5, node="fifo"), "SharedQueue"),
])
def test_bad_models_are_refused(kwargs, message):
    with pytest.raises(ConfigError, match=message):
        ReplicatedKey(3, **kwargs)


def test_quorums_outside_one_to_n_are_refused():
    run = simulate_queues(issue_key(Stages(), 0.5), 1000, seed=1)
    with pytest.raises(ConfigError, match="read quorum 4 exceeds replicas 3"):
        run.outcome(4, 1)
    with pytest.raises(ConfigError, match="write quorum"):
        run.outcome(1, 0)
    with pytest.raises(ConfigError, match="t grid"):
        run.outcome(1, 1).visibility([1, 0.5])


def test_closed_loop_obeys_the_response_time_law_and_strict_quorums():
    key = ReplicatedKey(3, None, 0.5, node=Stages(), read_service=stats.expon(scale=0.9),
                        write_service=stats.expon(scale=0.9))
    loop = ClosedLoop(6, stats.expon(scale=2.0))
    result = simulate_closed(key, 2, 2, loop, operations=8000, seed=3)
    assert result.consistent.all()
    latencies = np.concatenate([result.read_latency, result.write_latency])
    # Little's law for the clients: N / X = mean response + mean think
    assert 6 / result.throughput - 2.0 == pytest.approx(latencies.mean(), rel=0.05)
    partial = simulate_closed(key, 1, 1, loop, operations=8000, seed=3)
    assert partial.throughput > result.throughput  # ONE/ONE waits for the fastest
    assert not partial.consistent.all()


def test_closed_loop_single_client_reads_right_after_a_commit_as_wars_at_t0():
    # One client, no think, no service: a read issued the moment the previous write
    # committed is PBS's read at t = 0 (older writes still propagating cannot matter).
    key = ReplicatedKey(3, None, 0.5, node=SharedQueue(), read_service=None,
                        write_service=None)
    result = simulate_closed(key, 1, 1, ClosedLoop(1), operations=20_000, seed=8)
    at_commit = result.since_commit == 0
    assert at_commit.sum() > 3000
    count, total = int(result.consistent[at_commit].sum()), int(at_commit.sum())
    wars = simulate_wars(key.delays, 3, 1, 1, trials=200_000, seed=1).consistency([0])
    ci = stats.binomtest(count, total).proportion_ci(0.999, method="wilson")
    assert ci.low < wars.probability[0] < ci.high
    assert wars.probability[0] < 0.95  # the check has something to find


def test_an_open_run_needs_a_rate():
    with pytest.raises(ConfigError, match="needs a rate"):
        simulate_queues(ReplicatedKey(3, None, 0.5), 100)
    with pytest.raises(ConfigError, match="clients"):
        ClosedLoop(0)


def test_versions_count_per_key_in_issue_order():
    ops = simulate_queues(ReplicatedKey(3, 1.0, 0.5, keys=3), 3000, seed=2).operations
    versions = ops.versions()
    assert not versions[~ops.is_write].any()
    for k in range(3):
        mine = np.flatnonzero(ops.is_write & (ops.key == k))
        mine = mine[np.argsort(ops.issue[mine], kind="stable")]
        np.testing.assert_array_equal(versions[mine], np.arange(1, mine.size + 1))


def test_zipf_popularity():
    weights = ReplicatedKey(3, 1.0, 0.5, keys=100, zipf=0.99).key_weights()
    assert weights.sum() == pytest.approx(1.0)
    assert weights[0] / weights[1] == pytest.approx(2 ** 0.99)
    np.testing.assert_allclose(ReplicatedKey(3, 1.0, 0.5, keys=4).key_weights(), 0.25)
    counts = np.bincount(simulate_queues(ReplicatedKey(3, 1.0, 0.5, keys=100, zipf=0.99),
                                         50_000, seed=1).operations.key, minlength=100)
    low, high = stats.binomtest(int(counts[0]), 50_000).proportion_ci(0.999)
    assert low < weights[0] < high


def test_without_queueing_k_keys_are_one_key_at_a_kth_of_the_rate():
    # No service: the replicas do not interact, and a key's operations are a Poisson
    # stream thinned to rate / keys, so its staleness is one key's at that rate.
    common = dict(node=Stages(), read_service=None, write_service=None)
    many = simulate_staleness(ReplicatedKey(3, 8.0, 0.5, keys=10, **common), 1, 1,
                              operations=200_000, seed=3)
    one = simulate_staleness(ReplicatedKey(3, 0.8, 0.5, **common), 1, 1,
                             operations=200_000, seed=4)
    faster = simulate_staleness(ReplicatedKey(3, 8.0, 0.5, **common), 1, 1,
                                operations=200_000, seed=5)
    (p_many, low_many, high_many), (p_one, low_one, high_one) = many.stale(0.999), one.stale(0.999)
    assert low_many < high_one and low_one < high_many
    assert faster.stale()[1] > 2 * p_many  # one key at the full rate is far staler


def test_under_load_more_keys_means_fewer_stale_reads_at_the_same_work():
    # Same queues (same total rate), the writes spread over more keys.
    law = stats.expon(scale=0.8)
    common = dict(node=Stages(), read_service=law, write_service=law)
    one = simulate_staleness(ReplicatedKey(3, 1.0, 0.5, **common), 1, 1, 100_000, seed=6)
    ten = simulate_staleness(ReplicatedKey(3, 1.0, 0.5, keys=10, **common), 1, 1, 100_000,
                             seed=6)
    assert ten.stale(0.999)[2] < one.stale(0.999)[1]
    # the latencies come from the same queues: within sampling error of each other
    assert np.mean(ten.read_latency) == pytest.approx(np.mean(one.read_latency), rel=0.05)


@pytest.mark.parametrize("kwargs, message", [
    (dict(keys=0), "keys"), (dict(keys=2.5), "keys"), (dict(zipf=-1), "zipf"),
    (dict(zipf=float("nan")), "zipf"), (dict(keys=10**9), "more than")])
def test_bad_key_settings_are_refused(kwargs, message):
    with pytest.raises(ConfigError, match=message):
        ReplicatedKey(3, 1.0, 0.5, **kwargs)


# --- the measurement against a brute-force reading of the same run ------------------

def brute_force(run, read_quorum, write_quorum):
    """Per measured read (consistent, versions behind, since commit, latency) and per
    measured write its latency, by looking at every write for every read; each in
    issue order."""
    ops = run.operations
    version = ops.versions()
    writes = np.flatnonzero(ops.is_write)
    commit = {w: np.sort(ops.replied[w])[write_quorum - 1] for w in writes}
    start = np.sort(ops.issue)[int(run.warmup * ops.issue.size)]
    rows, seen = [], {}
    for r in np.flatnonzero(~ops.is_write):
        same = writes[ops.key[writes] == ops.key[r]]
        committed = [w for w in same if commit[w] <= ops.issue[r]]
        first = np.argsort(ops.replied[r], kind="stable")[:read_quorum]
        returned = max(max([version[w] for w in same if ops.finish[w, i] <= ops.finish[r, i]],
                           default=0) for i in first)
        seen[r] = returned
        if ops.issue[r] < start or not committed:
            continue
        latest = max(committed, key=lambda w: version[w])
        rows.append((ops.issue[r], (returned >= version[latest],
                                    sum(version[w] > returned for w in committed),
                                    ops.issue[r] - commit[latest],
                                    ops.replied[r, first[-1]] - ops.issue[r])))
    rows = [row for _, row in sorted(rows, key=lambda pair: pair[0])]
    writes_measured = [commit[w] - ops.issue[w]
                       for w in sorted((w for w in writes if ops.issue[w] >= start),
                                       key=lambda w: ops.issue[w])]
    violated = []
    for later in np.flatnonzero(run.second):
        earlier = np.flatnonzero(~run.second & (run.job == run.job[later]))[0]
        if ops.issue[earlier] >= start:
            before = version[earlier] if ops.is_write[earlier] else seen[earlier]
            violated.append((ops.issue[earlier], seen[later] < before))
    # sessions in the issue order of their first operation (ties as found)
    violated = [v for _, v in sorted(violated, key=lambda pair: pair[0])]
    return rows, writes_measured, violated


@st.composite
def small_models(draw):
    """A small replicated key with continuous laws (no ties), any structure, channels
    and coordinators; an open rate or a closed loop; quorums."""
    replicas = draw(st.integers(1, 4))
    if draw(st.booleans()):
        node = SharedQueue(draw(st.integers(1, 3)))
    else:
        node = Stages(draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    laws = [stats.expon(scale=0.5), stats.uniform(0.1, 1.0),
            Mixture([stats.expon(scale=0.2), stats.pareto(3, scale=0.5)], [0.7, 0.3])]
    delays = MessageLaws(*(draw(st.sampled_from(laws)) for _ in range(4)))
    service = draw(st.sampled_from([None, stats.expon(scale=0.3), stats.gamma(2, scale=0.2)]))
    closed = draw(st.booleans())
    key = ReplicatedKey(replicas, None if closed else draw(st.floats(0.2, 1.5)),
                        draw(st.sampled_from([0.0, 0.2, 0.5, 0.9, 1.0])), node=node,
                        read_service=service, write_service=service, delays=delays,
                        keys=draw(st.sampled_from([1, 1, 2, 5])),
                        zipf=draw(st.sampled_from([0.0, 0.99])),
                        channels=draw(st.sampled_from(["independent", "fifo"])),
                        coordinators=draw(st.sampled_from(["one", "random", "token-aware"])))
    loop = ClosedLoop(draw(st.integers(1, 4)), draw(st.sampled_from([None, stats.expon()])))
    session = draw(st.sampled_from([None, Session("read-your-writes", 0.3),
                                    Session("monotonic-reads", stats.expon())]))
    return (key, loop if closed else None, session, draw(st.integers(1, replicas)),
            draw(st.integers(1, replicas)), draw(st.integers(0, 2**32)))


@settings(max_examples=40, deadline=None)
@given(small_models())
def test_the_measurement_equals_a_brute_force_reading_of_the_run(model):
    # open or closed, any channels, coordinators and sessions
    key, loop, session, read_quorum, write_quorum, seed = model
    if loop is None and session is None:
        run = simulate_queues(key, 150, seed)
    else:
        run = _run(key, 150, seed, 0.1, (read_quorum, write_quorum), loop, session)
    result = run.outcome(read_quorum, write_quorum)
    rows, writes, violated = brute_force(run, read_quorum, write_quorum)
    if session is not None:
        np.testing.assert_array_equal(run.sessions(read_quorum, write_quorum).violated,
                                      violated)
    assert result.reads == len(rows)
    if rows:
        consistent, behind, since, latency = map(np.array, zip(*rows))
        np.testing.assert_array_equal(result.consistent, consistent)
        np.testing.assert_array_equal(result.versions_behind, behind)
        np.testing.assert_allclose(result.since_commit, since, atol=1e-12)
        np.testing.assert_allclose(result.read_latency, latency, atol=1e-12)
    np.testing.assert_allclose(result.write_latency, writes, atol=1e-12)
    if read_quorum + write_quorum > key.replicas:
        assert result.consistent.all()


# --- channels and coordinators under load --------------------------------------------

def no_service_key(rate=0.2, **kwargs):
    return ReplicatedKey(3, rate, 0.5, node=SharedQueue(), read_service=None,
                         write_service=None, **kwargs)


def test_fifo_through_one_coordinator_never_reads_stale_without_service():
    # A read request follows every earlier write request on each connection, and a
    # replica applies a write the moment it arrives, so a read meets every write
    # issued before it: no stale read, whatever R and W. Independent channels do.
    fifo = simulate_queues(no_service_key(channels="fifo"), 40_000, seed=2)
    independent = simulate_queues(no_service_key(), 40_000, seed=2)
    for read_quorum, write_quorum in [(1, 1), (1, 2), (2, 1)]:
        assert fifo.outcome(read_quorum, write_quorum).consistent.all()
    assert independent.outcome(1, 1).stale()[1] > 0.01


def test_fifo_one_shared_queue_never_reads_stale_even_under_load():
    # One FIFO thread per replica: the read also queues behind the writes.
    key = ReplicatedKey(3, 1.0, 0.5, node=SharedQueue(), read_service=stats.expon(scale=0.6),
                        write_service=stats.expon(scale=0.6), channels="fifo")
    assert simulate_staleness(key, 1, 1, 40_000, seed=3).consistent.all()
    # separate stages let a read overtake a write waiting to be applied
    staged = ReplicatedKey(3, 1.0, 0.5, node=Stages(), read_service=stats.expon(scale=0.6),
                           write_service=stats.expon(scale=0.6), channels="fifo")
    assert simulate_staleness(staged, 1, 1, 40_000, seed=3).stale()[1] > 0.005


def test_a_token_aware_coordinator_answers_itself_without_a_hop():
    # No service: a write with W = 1 commits at once at its local replica, and a read
    # with R = 1 returns at once with the local replica's state.
    run = simulate_queues(no_service_key(coordinators="token-aware"), 5000, seed=4)
    result = run.outcome(1, 1)
    assert np.all(result.write_latency == 0) and np.all(result.read_latency == 0)
    assert run.key.cluster_nodes == 3
    one = simulate_queues(no_service_key(coordinators="one"), 5000, seed=4).outcome(1, 1)
    assert np.all(one.write_latency > 0)
    assert no_service_key(coordinators="one").cluster_nodes == 4


def test_random_coordinators_spread_over_the_nodes():
    run = simulate_queues(no_service_key(coordinators="random", nodes=5), 20_000, seed=6)
    ops = run.operations
    # a hop to itself takes no time: the share of zero request-reply round trips
    # is P(coordinator = that replica) = 1/5
    zero = (ops.replied == ops.issue[:, None]).mean(axis=0)
    for share in zero:
        low, high = stats.binomtest(int(share * ops.issue.size),
                                    ops.issue.size).proportion_ci(0.999)
        assert low < 0.2 < high


# --- sessions under load --------------------------------------------------------------

def two_point_writes():
    """Write propagation 0.1 or 10 with probability 1/2 each; other messages 0.1."""
    constant = Deterministic(0.1)
    return MessageLaws(Mixture([Deterministic(0.1), Deterministic(10.0)], [0.5, 0.5]),
                       constant, constant, constant)


@pytest.mark.parametrize("channels, expected", [("independent", 0.25), ("fifo", 0.0)])
def test_read_your_writes_exact_small_case(channels, expected):
    # N = 2, R = W = 1, no service, far-apart sessions. The write commits at the first
    # ack; the read, sent at once, reaches both replicas 0.1 later and replies come
    # back together, so it returns replica 0's state. Independent channels: it misses
    # the write iff W_0 = 10 and W_1 = 0.1 (probability 1/4). FIFO through one
    # coordinator: the read request follows the write's, so it never misses.
    key = ReplicatedKey(2, 0.002, 1.0, node=SharedQueue(), read_service=None,
                        write_service=None, delays=two_point_writes(), channels=channels)
    run = simulate_sessions(key, 1, 1, Session("read-your-writes"), None, 20_000, seed=7)
    result = run.sessions(1, 1)
    summary = result.summary(0.999)
    assert summary["sessions"] > 15_000
    assert summary["low"] <= expected <= summary["high"]
    if expected == 0:
        assert summary["violations"] == 0


def test_read_your_writes_at_low_load_is_the_no_load_value():
    # Operations far apart: each session is the no-load session of
    # staleness.sessions (a read right after the write returns).
    delays = exponential_delays(0.5)
    key = ReplicatedKey(3, 0.01, 0.5, node=Stages(), read_service=None, write_service=None,
                        delays=delays)
    loaded = simulate_sessions(key, 1, 1, Session("read-your-writes"), None, 60_000,
                               seed=8).sessions(1, 1).summary(0.999)
    idle = read_your_writes(delays, 3, 1, 1, channels="independent", coordinators="one",
                            trials=200_000, seed=9).summary(0.999)
    assert loaded["low"] < idle["high"] and idle["low"] < loaded["high"]
    assert idle["probability"] > 0.05   # something to find


def test_monotonic_reads_with_one_fifo_coordinator_and_constant_reads_never_go_back():
    # Both reads of a session take their reply from replica 0 (equal delays, ties by
    # replica), whose state only grows, and FIFO keeps the second behind the first.
    constant = Deterministic(0.1)
    delays = MessageLaws(stats.expon(scale=2.0), constant, constant, constant)
    common = dict(node=Stages(), read_service=None, write_service=None, delays=delays)
    fifo = ReplicatedKey(3, 0.5, 0.5, channels="fifo", **common)
    assert simulate_sessions(fifo, 1, 1, Session("monotonic-reads"), None, 20_000,
                             seed=3).sessions(1, 1).violated.sum() == 0
    # random read delays let the two reads hear from different replicas
    spread = ReplicatedKey(3, 0.5, 0.5, node=Stages(), read_service=None,
                           write_service=None, delays=exponential_delays(0.5))
    result = simulate_sessions(spread, 1, 1, Session("monotonic-reads"), None, 20_000,
                               seed=3).sessions(1, 1)
    assert result.summary()["low"] > 0.005


def test_closed_loop_sessions_pause_and_pace():
    key = ReplicatedKey(3, None, 0.5, node=Stages(), read_service=stats.expon(scale=0.3),
                        write_service=stats.expon(scale=0.3))
    loop = ClosedLoop(8, stats.expon(scale=1.0))
    run = simulate_sessions(key, 2, 2, Session("read-your-writes", stats.expon(scale=0.5)),
                            loop, 20_000, seed=5)
    result = run.sessions(2, 2)
    assert result.violated.sum() == 0          # R + W > N
    assert result.gap.mean() == pytest.approx(0.5, rel=0.05)
    with pytest.raises(ConfigError, match="run again for R=1, W=1"):
        run.sessions(1, 1)
    partial = simulate_sessions(key, 1, 1, Session("read-your-writes"), loop, 20_000,
                                seed=5).sessions(1, 1)
    assert partial.summary()["low"] > 0.01


@pytest.mark.parametrize("kwargs, message", [
    (dict(channels="tcp"), "channels"), (dict(coordinators="all"), "coordinators"),
    (dict(nodes=2), "nodes=2 is below replicas=3")])
def test_bad_cluster_settings_are_refused(kwargs, message):
    with pytest.raises(ConfigError, match=message):
        ReplicatedKey(3, 1.0, 0.5, **kwargs)


def test_bad_sessions_are_refused():
    with pytest.raises(ConfigError, match="read-your-writes"):
        Session("causal")
    with pytest.raises(ConfigError, match="pause"):
        Session("monotonic-reads", -1.0)
    with pytest.raises(ConfigError, match="no sessions"):
        simulate_queues(no_service_key(), 100).sessions(1, 1)
    # stable without sessions (0.8 per stage), not with every write followed by a read
    key = ReplicatedKey(3, 1.0, 0.5, node=SharedQueue(), read_service=stats.expon(scale=0.8),
                        write_service=stats.expon(scale=0.8))
    with pytest.raises(ConfigError, match="with the sessions' second reads: unstable"):
        simulate_sessions(key, 1, 1, Session("read-your-writes"), None, 100)


@pytest.mark.parametrize("coordinators", ["one", "random", "token-aware"])
def test_load_free_limit_with_channels_and_coordinators_is_the_no_load_model(coordinators):
    # No service and operations far apart: each read meets the latest committed
    # write as in staleness.channels (fifo, the same coordinator choice). The no-load
    # model is run once per read, at that read's own time after commit, so the two
    # proportions of consistent reads estimate the same number.
    from forkjoin_sim.staleness.channels import simulate_wars_ordered

    delays = exponential_delays(0.5)
    key = ReplicatedKey(3, 0.02, 0.5, node=Stages(), read_service=None,
                        write_service=None, delays=delays, channels="fifo",
                        coordinators=coordinators)
    result = simulate_staleness(key, 1, 1, operations=300_000, seed=4)
    early = result.since_commit < 1.0          # where staleness lives
    times = np.repeat(result.since_commit[early], 4)
    idle = simulate_wars_ordered(delays, 3, 1, 1, read_delays=times, after="commit",
                                 channels="fifo", coordinators=coordinators,
                                 trials=times.size, seed=5)
    loaded_stale, idle_stale = ~result.consistent[early], ~idle.new
    p = np.r_[loaded_stale, idle_stale].mean()
    spread = np.sqrt(p * (1 - p) * (1 / loaded_stale.size + 1 / idle_stale.size))
    assert abs(loaded_stale.mean() - idle_stale.mean()) <= 4 * spread
    if coordinators == "one":
        assert not loaded_stale.any()          # fifo through one node: never stale
    else:
        assert idle_stale.mean() > 0.01        # something to find


# --- intervals of correlated operations ------------------------------------------------

def test_inflation_is_one_for_independent_draws_and_the_run_length_for_runs():
    from forkjoin_sim.staleness.intervals import inflation

    rng = np.random.default_rng(3)
    independent = rng.random(60_000) < 0.2
    assert 1.0 <= inflation(independent) < 1.6
    # the same draws, each repeated 50 times in a row: 50 times the variance
    runs = np.repeat(independent[:1200], 50)
    assert 25 < inflation(runs) < 100
    assert inflation(np.ones(1000)) == 1.0 and inflation(np.arange(10)) == 1.0
    # the batch means' variance is an estimate of 19 degrees of freedom: Student's t
    # widens more at a higher confidence (t / z: 1.068 at 95%, 1.111 at 99%)
    assert inflation(runs, 0.99) / inflation(runs, 0.95) == pytest.approx(
        (1.111 / 1.068) ** 2, rel=0.001)


def _mm1_read_p99():
    """The 99th percentile of a read on one replica that is an M/M/1 queue at
    utilisation 0.9 (mean sojourn 9), plus its two exponential messages of mean 0.5:
    F(t) = integral over the messages' Erlang(2) density of the sojourn's CDF."""
    from scipy import integrate, optimize

    messages = stats.gamma(2, scale=0.5)
    sojourn = stats.expon(scale=9.0)

    def cdf(t):
        return integrate.quad(lambda y: messages.pdf(y) * sojourn.cdf(t - y), 0, t)[0]

    return optimize.brentq(lambda t: cdf(t) - 0.99, 1.0, 200.0)


def test_a_loaded_percentiles_interval_covers_the_exact_one():
    """At 90% utilisation a slow read comes in a busy period of slow reads: the
    order-statistic interval of independent draws held the exact p99 (42.5) in 3 of
    8 seeds (a review's check); widened by the correlation it holds it in about 95%."""
    exact = _mm1_read_p99()
    assert exact == pytest.approx(42.475, abs=0.01)
    key = ReplicatedKey(1, 1.0, 0.5, node=SharedQueue(),
                        read_service=stats.expon(scale=0.9),
                        write_service=stats.expon(scale=0.9))
    inside = 0
    for seed in range(1, 13):
        row = simulate_queues(key, 400_000, seed).outcome(1, 1).latency_percentiles(
            [99]).iloc[0]
        inside += row.read_low <= exact <= row.read_high
    # 12 seeds at 95%: 10 or more inside has probability 0.98
    assert inside >= 10


def test_an_extreme_percentiles_interval_holds_the_value_it_gives():
    """At the 99.99999th percentile of 2,000 operations the order statistics' lower
    end lay above numpy's interpolated value (a probe: 7.562337 against 7.562271)."""
    key = ReplicatedKey(3, 1.0, 0.5, node=Stages(), read_service=stats.expon(scale=0.5),
                        write_service=stats.expon(scale=0.5))
    table = simulate_queues(key, 2_000, 1).outcome(1, 1).latency_percentiles(
        [50, 99.99999])
    for name in ("read", "write"):
        assert np.all(table[f"{name}_low"] <= table[name])
        high = table[f"{name}_high"].fillna(np.inf)  # no order statistic above
        assert np.all(table[name] <= high)


def test_a_loaded_share_of_stale_reads_has_a_wider_interval_than_wilsons():
    """Stale reads under load come in runs (a queue holds several reads behind the
    same write): the interval of P(stale) is wider than the Wilson interval of as
    many independent reads, by about the square root of the inflation."""
    from forkjoin_sim.staleness.intervals import inflation

    key = ReplicatedKey(3, 1.0, 0.5, node=Stages(), read_service=stats.expon(scale=0.9),
                        write_service=stats.expon(scale=0.9))
    result = simulate_queues(key, 100_000, 11).outcome(1, 1)
    stale, low, high = result.stale()
    count = int((~result.consistent).sum())
    wilson = stats.binomtest(count, result.reads).proportion_ci(0.95, method="wilson")
    factor = inflation(~result.consistent)
    assert factor > 1.5
    assert (high - low) / (wilson.high - wilson.low) == pytest.approx(factor ** 0.5,
                                                                      rel=0.05)
    assert low < stale < high


def test_sessions_under_load_widen_their_interval_but_trials_without_load_do_not():
    from forkjoin_sim.staleness.intervals import inflation

    key = ReplicatedKey(3, 0.8, 0.5, node=Stages(), read_service=stats.expon(scale=0.7),
                        write_service=stats.expon(scale=0.7))
    loaded = simulate_sessions(key, 1, 1, Session("read-your-writes"), None, 60_000,
                               seed=1).sessions(1, 1)
    assert loaded.correlated
    summary = loaded.summary()
    wilson = stats.binomtest(summary["violations"], summary["sessions"]).proportion_ci(
        0.95, method="wilson")
    factor = inflation(loaded.violated)
    assert factor > 1.0
    assert (summary["high"] - summary["low"]) / (wilson.high - wilson.low) \
        == pytest.approx(factor ** 0.5, rel=0.05)
    alone = read_your_writes(exponential_delays(0.5), 3, 1, 1, trials=20_000, seed=2)
    assert not alone.correlated
    mine = alone.summary()
    plain = stats.binomtest(mine["violations"], mine["sessions"]).proportion_ci(
        0.95, method="wilson")
    assert (mine["low"], mine["high"]) == pytest.approx((plain.low, plain.high),
                                                        rel=1e-12)


@pytest.mark.parametrize("share, kind", [(0.0, "writes"), (1.0, "reads")])
def test_staleness_of_a_key_without_reads_or_writes_is_refused(share, kind):
    """With write share 0 every P(stale) and read latency came back NaN, silently (an
    API probe), where the command line refuses it."""
    from forkjoin_sim.staleness.queueing import simulate_closed, simulate_staleness

    key = ReplicatedKey(3, 0.5, share)
    message = f"write share {share:g} has no {kind}, and staleness needs both"
    with pytest.raises(ConfigError, match=message):
        simulate_staleness(key, 1, 1, operations=5000, seed=1)
    with pytest.raises(ConfigError, match=message):
        simulate_closed(key, 1, 1, ClosedLoop(3, None), operations=5000, seed=1)
