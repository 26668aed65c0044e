"""forkjoin-sim: simulation of (n, r, k) fork-join queues and replicated stores.

The public API, by concept. A run is a *system* (what serves jobs) plus an *arrival
process* (when jobs come) on an *engine*, measured by one rule:

=====================  ======================================================
``ForkJoinModel``      the plain (n, r, k) queue: open arrivals or closed-loop
                       clients, even or uneven nodes
``Workload``           several job classes (e.g. reads and writes) on shared nodes
``System``             nodes (speeds), job classes (``JobClass``), placement
``Stragglers``         a random fraction of slow nodes, drawn per seed
``Poisson``, ``Periodic``, ``Renewal``, ``Trace``, ``ClosedLoop``
                       arrival processes
``Empirical``          a service-time distribution built from measured latencies
``Mixture``            a weighted mixture of laws (e.g. PBS's latency fits)
``SharedQueue``, ``Stages``
                       node models: one FIFO queue, or read and write stages
``simulate_wars``      load-free staleness of partial quorums (PBS's WARS model)
``parse_service``      "exp", "lognormal:1.0", "empirical:PATH" ... -> distribution
``draw_sample_path``   arrivals, placements and service times of a run
``FastEngine``         exact FCFS engine (numba Lindley recursion), bounded memory
``SimPyEngine``        event-level reference engine; models purging
``simulate``           run a model, get a ``SimulationResult`` (mean, CI,
                       percentiles, per-class summaries, throughput)
``summarize``          steady-state statistics of a sojourn sequence
``sweep``              many points on local processes or Dask -> pandas DataFrame
``CassandraModel``     NWR writes: ring replicas, coordinator policy, local/remote
``simulate_cassandra`` the paper's model (level 1) or the staged write path (level 2)
``ConfigError``        every invalid input; its message says how to fix it
=====================  ======================================================
"""

import importlib

#: Public name -> module that defines it, imported on first use: ``import
#: forkjoin_sim`` stays quick (no scipy.stats, pandas or SimPy until needed).
_WHERE = {
    "ClosedLoop": "arrivals", "Periodic": "arrivals", "Poisson": "arrivals",
    "Renewal": "arrivals", "Trace": "arrivals",
    "CassandraCluster": "cassandra", "CassandraModel": "cassandra",
    "simulate_cassandra": "cassandra",
    "Empirical": "laws.empirical", "FastEngine": "engines", "SimPyEngine": "engines",
    "ConfigError": "errors", "ForkJoinModel": "model",
    "SamplePath": "randomness.samplepath", "draw_sample_path": "randomness.samplepath",
    "parse_service": "laws.service", "SimulationResult": "measure.result",
    "simulate": "simulation", "Summary": "measure.statistics", "summarize": "measure.statistics",
    "sweep": "sweep.runner", "JobClass": "system", "Stragglers": "system",
    "System": "system", "Workload": "workload", "simulate_workload": "workload",
    "Mixture": "laws.mixture", "SharedQueue": "nodes", "Stages": "nodes",
    "MessageLaws": "staleness", "simulate_wars": "staleness",
}


def __getattr__(name):
    if name in _WHERE:
        value = getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'forkjoin_sim' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_WHERE))


__all__ = [
    "CassandraCluster", "CassandraModel", "MessageLaws", "Mixture", "SharedQueue",
    "Stages", "simulate_wars", "ClosedLoop", "ConfigError", "Empirical", "FastEngine",
    "ForkJoinModel", "JobClass", "Periodic", "Poisson", "Renewal", "SamplePath",
    "SimPyEngine", "SimulationResult", "Stragglers", "Summary", "System", "Trace",
    "Workload", "draw_sample_path", "parse_service", "simulate", "simulate_cassandra",
    "simulate_workload", "summarize", "sweep",
]
__version__ = "0.2.0"
