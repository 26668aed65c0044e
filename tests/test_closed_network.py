"""Approximate MVA of the Cassandra path against the steps engine and basic laws."""

import numpy as np
import pytest
from scipy import stats

from forkjoin_sim.errors import ConfigError
from forkjoin_sim.steps import Closed, cassandra_jobs, cassandra_layout, simulate
from sizing.closed_network import Demands, predict

LAWS = {"client": 0.05, "hop": 0.1, "coordinate": 0.05, "message": 0.02,
        "replica_read": stats.expon(scale=0.2), "replica_write": stats.expon(scale=0.2),
        "respond": 0.05}
# the same path in the MVA's terms: two client steps, coordinate + respond
DEMANDS = Demands(client=0.1, hop_client=0.1, hop_replica=0.1, coordinate=0.1,
                  message=0.02, work=0.2, digest_ratio=1.0)


def _simulated(quorum, threads, write, count=60_000):
    templates, classes, parties, times = cassandra_jobs(
        3, 3, quorum, LAWS, seed=7, count=count, writes=1.0 if write else 0.0)
    out = simulate(templates, cassandra_layout(3, "shared", cores=4, client_cores=4),
                   parties, times, Closed(threads, np.zeros(count)), classes=classes)
    sojourn = out.sojourn[count // 5:]
    # batch means: 20 batches, their spread bounds the simulation's own error
    batches = np.array([b.mean() for b in np.array_split(sojourn, 20)])
    return batches.mean(), stats.sem(batches)


def _rows(threads, quorum, write):
    return dict(threads=[threads], think_ms=[0.0], nodes=[3], replicas=[3],
                quorum=[quorum], write=[write])


# Stated tolerance of the approximation (Seidmann + Schweitzer + the order-statistic
# join): 10% of the simulated mean, light load to saturation of the 4 node cores.
@pytest.mark.parametrize("quorum,threads,write", [(1, 5, False), (2, 20, False),
                                                  (3, 60, False), (1, 60, True),
                                                  (2, 5, True), (3, 20, True)])
def test_matches_steps_engine(quorum, threads, write):
    mean, sem = _simulated(quorum, threads, write)
    structure = "shared" if not write else "shared-digest-client"
    predicted, _ = predict(DEMANDS, _rows(threads, quorum, write), structure,
                           cores=4, client_cores=4)
    assert abs(predicted[0] - mean) < 0.10 * mean + 3 * sem


def test_one_client_without_queueing_is_the_sum_of_its_demands():
    d = Demands(client=0.3, hop_client=0.2, hop_replica=0.7, coordinate=0.1,
                message=0.05, work=0.4)
    latency, throughput = predict(d, _rows(1, 1, False), "shared", cores=4)
    # coordinator is a replica (nodes = replicas): ONE waits for the first of a local
    # Exp(0.4) and two remote 1.4 + Exp(0.6)
    local = stats.expon(scale=0.4)
    remote = stats.expon(loc=1.4, scale=0.6)
    grid = np.linspace(0, 40, 400_001)
    survive = local.sf(grid) * remote.sf(grid) ** 2
    first = np.trapezoid(survive, grid)
    assert latency[0] == pytest.approx(0.3 + 0.4 + 0.1 + first, rel=2e-3)
    assert throughput[0] == pytest.approx(1 / latency[0], rel=1e-9)


def test_latency_grows_with_threads_and_throughput_saturates_at_the_cores():
    d = Demands(work=1.0, coordinate=0.2)
    threads = np.array([1, 10, 100, 1000, 10000])
    rows = dict(threads=threads, think_ms=np.zeros(5), nodes=np.full(5, 3),
                replicas=np.full(5, 3), quorum=np.full(5, 3), write=np.ones(5, bool))
    latency, throughput = predict(d, rows, "shared", cores=2)
    assert np.all(np.diff(latency) > 0)
    # 3 nodes x 2 cores / (3 mutations + coordinator) per request
    assert throughput[-1] == pytest.approx(6 / 3.2, rel=1e-3)


def test_bad_inputs_say_how_to_fix_them():
    with pytest.raises(ConfigError, match="use one of"):
        predict(DEMANDS, _rows(5, 1, False), "magic")
    with pytest.raises(ConfigError, match="1 <= quorum <= replicas"):
        predict(DEMANDS, _rows(5, 4, False))


def test_client_work_outside_the_latency_caps_throughput_at_the_client_cores():
    d = Demands(client=0.1, client_outside=0.9, work=0.01)
    rows = dict(threads=[2000], think_ms=[0.0], nodes=[3], replicas=[3], quorum=[1],
                write=[False])
    latency, throughput = predict(d, rows, "client-bound", cores=4, client_cores=4)
    # 4 client cores / (0.1 + 0.9) ms per request; the latency holds only 0.1 of it
    assert throughput[0] == pytest.approx(4.0, rel=1e-3)
    assert latency[0] == pytest.approx(0.1 * 2000 / 4.0, rel=0.02)


@pytest.mark.parametrize("cv", [0.5, 1.0, 2.0])
def test_branch_variability_sets_the_join_of_one_client(cv):
    """One client, no queueing: ALL waits for the last of a local branch and two
    remote ones; each branch's random part has coefficient of variation ``cv``
    (below 1 a constant plus a shorter exponential, above 1 a balanced two-phase
    hyperexponential), checked against the integral of the survival function."""
    d = Demands(client=0.0, hop_client=0.0, hop_replica=0.5, coordinate=0.0,
                message=0.0, work=0.4, branch_cv=cv)
    latency, _ = predict(d, _rows(1, 3, False), "shared", cores=4)
    if cv <= 1:
        local = stats.expon(loc=(1 - cv) * 0.4, scale=cv * 0.4)
        remote = stats.expon(loc=1.0 + (1 - cv) * 0.4, scale=cv * 0.4)
        done = [local.cdf, remote.cdf, remote.cdf]
    else:
        fast = 0.5 * (1 + np.sqrt((cv ** 2 - 1) / (cv ** 2 + 1)))

        def hyper(shift):
            return lambda t: np.where(t > shift, 1 - fast * np.exp(
                -(t - shift) * 2 * fast / 0.4) - (1 - fast) * np.exp(
                -(t - shift) * 2 * (1 - fast) / 0.4), 0.0)
        done = [hyper(0.0), hyper(1.0), hyper(1.0)]
    grid = np.linspace(0, 80, 800_001)
    last = np.trapezoid(1 - done[0](grid) * done[1](grid) * done[2](grid), grid)
    assert latency[0] == pytest.approx(last, rel=2e-3)
