"""Jobs as steps through queues, on one compiled engine (issue 26).

Graph (`graph`)
    `Op`, `Template`     a job class: steps (tasks at a party's stage, or delays) in
                         topological order, sequence/AND/k-of-r joins, purging or not
    `Layout`             FCFS stations (servers each) and node x stage -> station
    `stations_of`        per job and step, its station
Builders (`builders`)
    `fork_join`          the paper's (n,r,k) job and its single-server nodes
    `cassandra_read`, `cassandra_write`, `cassandra_layout` ('shared' cores or stage
                         'pools'), `cassandra_parties`, `cassandra_jobs`
Randomness (`draws`)
    `draws.PURPOSES`, `draws.draw`, `draws.durations`, `draws.poisson_arrivals`,
    `draws.think_times`, `draws.coordinators`, `draws.replica_sets`: every value a
                         function of (seed, purpose, job index)
Engines
    `simulate`, `Open`, `Closed`, `Outcome`   the compiled event engine (`engine`)
    `run_arrays`, `run_reference`             both engines on resolved arrays

Example: QUORUM reads on 3 nodes of 4 shared cores, 100 closed-loop clients::

    from scipy import stats
    from forkjoin_sim.steps import Closed, cassandra_jobs, cassandra_layout, draws, simulate
    laws = {"client": 0.02, "hop": stats.expon(scale=0.1), "coordinate": 0.05,
            "message": 0.01, "replica_read": stats.expon(scale=0.2), "respond": 0.02}
    templates, classes, parties, times = cassandra_jobs(3, 3, 2, laws, seed=1,
                                                        count=100_000)
    think = draws.think_times(1, stats.expon(scale=8.0), 0, 100_000)
    out = simulate(templates, cassandra_layout(3, "shared", cores=4), parties, times,
                   Closed(100, think), classes=classes)
    out.sojourn.mean()
"""

from forkjoin_sim.steps import draws
from forkjoin_sim.steps.builders import (cassandra_jobs, cassandra_layout,
                                         cassandra_parties, cassandra_read,
                                         cassandra_write, fork_join)
from forkjoin_sim.steps.engine import Closed, Open, Outcome, run_arrays, simulate
from forkjoin_sim.steps.graph import Layout, Op, Template, compile_templates, stations_of
from forkjoin_sim.steps.reference import run_reference

__all__ = ["Op", "Template", "Layout", "stations_of", "compile_templates", "fork_join",
           "cassandra_read", "cassandra_write", "cassandra_layout", "cassandra_parties",
           "cassandra_jobs", "draws", "simulate", "run_arrays", "Open", "Closed",
           "Outcome", "run_reference"]
