"""Node models: one shared FIFO queue or separate read and write stages, threads,
task kinds, and time spent outside the queues."""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats

from forkjoin_sim import ForkJoinModel, JobClass, Workload, simulate
from forkjoin_sim.errors import ConfigError
from forkjoin_sim.nodes import SharedQueue, Stages
from forkjoin_sim.placement import RingSubset


def erlang_c_mean(servers: int, arrival_rate: float, service_rate: float) -> float:
    """Mean sojourn of the M/M/c queue (Erlang C)."""
    a = arrival_rate / service_rate
    rho = a / servers
    top = a ** servers / math.factorial(servers) / (1 - rho)
    wait_probability = top / (sum(a ** i / math.factorial(i) for i in range(servers))
                              + top)
    return wait_probability / (servers * service_rate - arrival_rate) + 1 / service_rate


@pytest.mark.parametrize("threads", [2, 4])
def test_a_node_with_threads_is_the_mmc_queue(threads):
    rate = 0.8 * threads
    model = ForkJoinModel(1, 1, 1, arrival_rate=rate, node=SharedQueue(threads))
    result = simulate(model, jobs=400_000, seed=1)
    exact = erlang_c_mean(threads, rate, 1.0)
    assert result.summary.ci_low <= exact <= result.summary.ci_high


def read_write(read_share=0.5, overhead=None):
    reads = JobClass("read", read_share, 2, 2,
                     service=(stats.expon(scale=1.0), stats.expon(scale=0.3)),
                     kinds=("read", "digest"), placement=RingSubset(3), overhead=overhead)
    writes = JobClass("write", 1 - read_share, 3, 2, service=stats.expon(scale=0.8),
                      kinds="write", placement="ring", overhead=overhead)
    return [reads, writes]


@settings(max_examples=25, deadline=None)
@given(node=st.sampled_from([None, SharedQueue(2), Stages(), Stages(3, 1)]),
       closed=st.booleans(), overhead=st.sampled_from([None, stats.expon(scale=0.3)]),
       share=st.sampled_from([0.2, 0.5, 0.95]))
def test_fast_and_simpy_agree_for_every_node_model(node, closed, overhead, share):
    how = {"clients": 15, "think": 0.5} if closed else {"arrival_rate": 0.8}
    workload = Workload(6, read_write(share, overhead), node=node, **how)
    fast = simulate(workload, jobs=600, seed=3, warmup=0.0)
    event = simulate(workload, jobs=600, seed=3, warmup=0.0, engine="simpy")
    np.testing.assert_allclose(fast.sojourns, event.sojourns, rtol=1e-9, atol=1e-9)


def test_stages_equal_the_shared_queue_when_only_reads_come():
    reads = [JobClass("read", 1.0, 3, 2, kinds="read")]
    shared = simulate(Workload(5, reads, arrival_rate=1.0), jobs=20_000, seed=2)
    staged = simulate(Workload(5, reads, arrival_rate=1.0, node=Stages()), jobs=20_000,
                      seed=2)
    np.testing.assert_array_equal(shared.sojourns, staged.sojourns)


def test_reads_overtake_queued_writes_in_separate_stages():
    shared = simulate(Workload(6, read_write(), arrival_rate=1.8), jobs=200_000, seed=4)
    staged = simulate(Workload(6, read_write(), arrival_rate=1.8, node=Stages()),
                      jobs=200_000, seed=4)
    assert staged.classes["read"].ci_high < shared.classes["read"].ci_low


def test_overhead_adds_to_each_latency_and_changes_nothing_else():
    plain = simulate(Workload(6, read_write(), arrival_rate=1.0), jobs=5000, seed=8)
    late = simulate(Workload(6, read_write(overhead=stats.uniform(1.0, 1.0)),
                             arrival_rate=1.0), jobs=5000, seed=8)
    extra = late.sojourns - plain.sojourns
    assert np.all((extra >= 1.0) & (extra <= 2.0))


def test_staged_stability_counts_each_stage_and_its_threads():
    # Writes alone load the mutation stage: 1.0 * 3 * 0.8 / 6 = 0.4 per thread at
    # rate 1, so rate 2.6 overloads one write thread but not two.
    writes = [JobClass("write", 1.0, 3, 2, service=stats.expon(scale=0.8),
                       kinds="write")]
    with pytest.raises(ConfigError, match="unstable"):
        Workload(6, writes, arrival_rate=2.6, node=Stages(1, 1))
    Workload(6, writes, arrival_rate=2.6, node=Stages(1, 2))


def test_bad_node_settings_say_how_to_fix():
    with pytest.raises(ConfigError, match="threads must be a whole number"):
        Stages(0, 1)
    with pytest.raises(ConfigError, match="kinds"):
        JobClass("read", 1.0, 2, 1, kinds=("read", "scan"))
    with pytest.raises(ConfigError, match="window"):
        simulate(Workload(3, [JobClass("read", 1.0, 3, 1,
                                       placement=RingSubset(2))], arrival_rate=0.1),
                 jobs=100)
