"""`cassandra.queued.run_queued`: Cassandra jobs of steps, run and measured."""

import pytest
from scipy import stats

from forkjoin_sim.cassandra.queued import run_queued
from forkjoin_sim.steps import cassandra_jobs, cassandra_layout


def test_open_throughput_and_utilisation_follow_the_offered_work():
    # Poisson reads and writes on 3 nodes of 2 cores: the throughput is the rate,
    # and each node's busy fraction is its share of the work offered per unit time
    # (every read asks 2 of 3 replicas, every write all 3; coordinator work twice)
    laws = {"client": 0.0, "hop": stats.expon(scale=0.1), "coordinate": 0.05,
            "message": 0.0, "replica_read": stats.expon(scale=0.2),
            "replica_write": stats.expon(scale=0.3), "respond": 0.05}
    rate, jobs, writes = 4.0, 60_000, 0.25
    templates, classes, parties, durations = cassandra_jobs(
        3, 3, 1, laws, 3, jobs, writes=writes, read_quorum=2)
    result, fields = run_queued(
        layout=cassandra_layout(3, "shared", cores=2), templates=templates,
        classes=classes, parties=parties, durations=durations, seed=3, jobs=jobs,
        warmup=0.1, rate=rate, unqueued=("client", "message"))
    assert fields["throughput_ci_low"] <= rate <= fields["throughput_ci_high"]
    work = 2 * 0.05 + (1 - writes) * 2 * 0.2 + writes * 3 * 0.3
    assert fields["utilisation_mean"] == pytest.approx(rate * work / (3 * 2), rel=0.03)
    reads, written = fields["classes"]["read"], fields["classes"]["write"]
    assert reads["jobs_measured"] + written["jobs_measured"] == result["jobs_measured"]
    assert written["jobs_measured"] == pytest.approx(writes * result["jobs_measured"],
                                                     rel=0.05)
    assert result["ci_low"] <= result["mean"] <= result["ci_high"]
