"""forkjoin-sim: simulation of non-purging (n, r, k) fork-join queues.

The public API, by concept:

=====================  ======================================================
``ForkJoinModel``      one frozen, validated description of a queue
``Empirical``          a service-time distribution built from measured latencies
``parse_service``      "exp", "lognormal:1.0", "empirical:PATH" ... -> distribution
``draw_sample_path``   arrivals, placements and service times of a run
``FastEngine``         exact FCFS engine (numba Lindley recursion), bounded memory
``SimPyEngine``        event-level reference engine; models purging
``simulate``           run a model, get a ``SimulationResult`` (mean, CI, percentiles)
``summarize``          steady-state statistics of a sojourn sequence
``sweep``              many points on local processes or Dask -> pandas DataFrame
``Workload``           several job classes (e.g. reads and writes) on shared nodes
``simulate_workload``  per-class statistics of a ``Workload``
``CassandraModel``     NWR writes: ring replicas, coordinator policy, local/remote
``simulate_cassandra`` the paper's model (level 1) or the staged write path (level 2)
``ConfigError``        every invalid input; its message says how to fix it
=====================  ======================================================
"""

from .cassandra import CassandraModel, simulate_cassandra
from .empirical import Empirical
from .engines import FastEngine, SimPyEngine
from .errors import ConfigError
from .model import ForkJoinModel
from .samplepath import SamplePath, draw_sample_path
from .service import parse_service
from .simulation import SimulationResult, simulate
from .statistics import Summary, summarize
from .sweeps import sweep
from .workload import JobClass, Workload, simulate_workload

__all__ = [
    "CassandraModel", "ConfigError", "Empirical", "FastEngine", "ForkJoinModel",
    "JobClass", "SamplePath", "SimPyEngine", "SimulationResult", "Summary", "Workload",
    "draw_sample_path", "parse_service", "simulate", "simulate_cassandra",
    "simulate_workload", "summarize", "sweep",
]
__version__ = "0.1.0"
