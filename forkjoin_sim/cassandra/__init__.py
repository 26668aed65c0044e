"""Cassandra writes as fork-join queues: the paper's model (level 1) and the staged
write path (level 2).

Reads and writes (the read path, mixed workloads)
    CassandraCluster
Model (writes, Theorem 4)
    CassandraModel, consistency_quorum, policy_local_fraction,
    CONSISTENCY_LEVELS, POLICIES
Workloads
    WritePath, WritePathSampler, basic_write_path
Level 2 (the staged write path as a graph of steps, on the steps engine)
    StagedConfig, load_staged_config, DEFAULT_STAGED_CONFIG, staged_layout,
    staged_write, staged_jobs, run_staged
Queued work and data centres (the steps engine; jobs from steps.cassandra_jobs)
    run_queued, DataCentres, load_datacentres
Simulation
    simulate_cassandra, simulate_quorums, simulate_basic, basic_latencies,
    CassandraResult
"""

from forkjoin_sim.cassandra.cluster import CassandraCluster
from forkjoin_sim.cassandra.model import (CONSISTENCY_LEVELS, POLICIES, CassandraModel, consistency_quorum,
                    policy_local_fraction)
from forkjoin_sim.cassandra.writes import WritePath, WritePathSampler, basic_write_path
from forkjoin_sim.cassandra.staged import (DEFAULT_STAGED_CONFIG, StagedConfig,
                                          load_staged_config)
from forkjoin_sim.cassandra.graphs import (run_staged, staged_jobs, staged_layout,
                                           staged_write)
from forkjoin_sim.cassandra.datacentres import DataCentres, load_datacentres
from forkjoin_sim.cassandra.queued import run_queued
from forkjoin_sim.cassandra.simulation import (CassandraResult, basic_latencies, simulate_basic, simulate_cassandra,
                         simulate_quorums)

__all__ = [
    "CassandraCluster", "CONSISTENCY_LEVELS", "POLICIES", "CassandraModel", "consistency_quorum",
    "policy_local_fraction",
    "WritePath", "WritePathSampler", "basic_write_path",
    "DEFAULT_STAGED_CONFIG", "StagedConfig", "load_staged_config", "staged_layout",
    "staged_write", "staged_jobs", "run_staged", "run_queued", "DataCentres",
    "load_datacentres",
    "CassandraResult", "basic_latencies", "simulate_basic", "simulate_cassandra", "simulate_quorums",
]
