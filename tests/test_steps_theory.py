"""The steps engine against queueing theory and against plain recursions.

M/M/c: the mean sojourn of one FCFS c-server station equals the Erlang-C formula
within a batch-means confidence interval (fixed seed). Two-node fork-join: the exact
mean (12 - load)/(8 mu (1 - load)) (Flatto-Hahn; Nelson-Tantawi). The (n,r,k) job: per
job the same finish time as a plain per-node Lindley recursion, purging or not.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from forkjoin_sim.steps import Open, draws, fork_join, simulate
from forkjoin_sim.steps.graph import Layout, Op, Template


def erlang_c_sojourn(arrival_rate, service_rate, servers):
    """Mean sojourn of M/M/c: P(wait) from Erlang's C formula, plus the service."""
    offered = arrival_rate / service_rate
    tail = stats.poisson.pmf(servers, offered) * servers / (servers - offered)
    waits = tail / (stats.poisson.cdf(servers - 1, offered) + tail)
    return waits / (servers * service_rate - arrival_rate) + 1 / service_rate


def batch_interval(values, batches=20, level=0.999):
    """Batch-means confidence interval of the mean of a stationary series."""
    means = values[:len(values) // batches * batches].reshape(batches, -1).mean(axis=1)
    half = stats.t.ppf(0.5 + level / 2, batches - 1) * means.std(ddof=1) / np.sqrt(batches)
    return means.mean() - half, means.mean() + half


@pytest.mark.parametrize("servers, load", [(1, 0.7), (3, 0.8), (8, 0.6)])
def test_mmc_station_mean_sojourn_matches_erlang_c(servers, load):
    jobs, seed, service_rate = 500_000, 20261125 + servers, 1.0
    arrival_rate = load * servers * service_rate
    template = Template((Op("service", party=0, stage="cores"),), parties=1)
    layout = Layout(("station",), (servers,), ("cores",), [[0]])
    service = draws.durations(template, {"service": stats.expon()}, seed, 0, jobs)
    arrivals = draws.poisson_arrivals(seed, arrival_rate, 0, jobs)
    out = simulate(template, layout, np.zeros((jobs, 1), int), service, Open(arrivals))
    low, high = batch_interval(out.sojourn[jobs // 10:])
    expected = erlang_c_sojourn(arrival_rate, service_rate, servers)
    assert low <= expected <= high, (low, expected, high)
    assert high - low < 0.1 * expected      # the interval is tight enough to mean much


def test_two_node_fork_join_matches_the_exact_mean():
    jobs, seed, load = 200_000, 7, 0.6
    template, layout = fork_join(2, 2, 2)
    parties = np.tile([0, 1], (jobs, 1))
    times = draws.durations(template, {"service": stats.expon(), "join": 0.0}, seed, 0,
                            jobs)
    out = simulate(template, layout, parties, times,
                   Open(draws.poisson_arrivals(seed, load, 0, jobs)))
    low, high = batch_interval(out.sojourn[jobs // 10:])
    expected = (12 - load) / (8 * (1 - load))
    assert low <= expected <= high, (low, expected, high)


def plain_fork_join(nodes, quorum, purging, arrivals, replica_nodes, service):
    """(n,r,k) sojourns by a per-node Lindley recursion in arrival order (FCFS
    single-server nodes: a job never waits for a later one)."""
    free = np.zeros(nodes)
    finish = np.empty(len(arrivals))
    for j in np.lexsort((np.arange(len(arrivals)), arrivals)):
        ends = np.maximum(free[replica_nodes[j]], arrivals[j]) + service[j]
        finish[j] = np.sort(ends)[quorum - 1]
        # a purged task frees its node at the answer, or never starts at all
        used = np.minimum(ends, finish[j]) if purging else ends
        free[replica_nodes[j]] = np.maximum(free[replica_nodes[j]], used)
    return finish


@settings(max_examples=60)
@given(st.integers(1, 7).flatmap(lambda n: st.tuples(
    st.just(n), st.integers(1, n).flatmap(lambda r: st.tuples(
        st.just(r), st.integers(1, r))))),
    st.booleans(), st.floats(0.2, 1.5), st.integers(0, 2**32 - 1))
def test_one_step_fork_join_equals_the_plain_recursion(shape, purging, load, seed):
    nodes, (replicas, quorum) = shape
    jobs = 300
    template, layout = fork_join(nodes, replicas, quorum, purging)
    placement = draws.replica_sets(seed, nodes, replicas, 0, jobs)
    times = draws.durations(template, {"service": stats.expon(), "join": 0.0}, seed, 0,
                            jobs)
    arrivals = draws.poisson_arrivals(seed, load * nodes / replicas, 0, jobs)
    out = simulate(template, layout, placement, times, Open(arrivals))
    expected = plain_fork_join(nodes, quorum, purging and quorum < replicas, arrivals,
                               placement, times[:, :replicas])
    np.testing.assert_array_equal(out.finish, expected)
