"""Jobs as steps through queues, on one compiled engine (issue 26).

Graph (`graph`)
    `Op`, `Template`     a job class: steps (tasks at a party's stage, or delays) in
                         topological order, sequence/AND/k-of-r joins, purging or not;
                         ``Op(link=(from_party, to_party))``: an ordered hop, a delay
                         that never overtakes the one sent before it on that connection
    `Layout`             FCFS stations (servers each) and node x stage -> station
    `stations_of`        per job and step, its station (``-2 - channel`` for a hop)
Builders (`builders`)
    `fork_join`          the paper's (n,r,k) job and its single-server nodes
    `cassandra_read`, `cassandra_write`, `cassandra_layout` ('shared' cores or stage
                         'pools'), `cassandra_parties`, `cassandra_jobs`
    `read_law`           a read's replica law: the data read, then digest reads
    `one_step_jobs`, `one_step_layout`   the run stack's fork-join path as steps
    `one_step_path`, `one_step_arrays`   a one-step model's arrays for the fast
                         engine, or None (templates, or resolved arrays)
Randomness (`draws`)
    `draws.PURPOSES`, `draws.draw`, `draws.durations`, `draws.poisson_arrivals`,
    `draws.think_times`, `draws.coordinators`, `draws.replica_sets`: every value a
                         function of (seed, purpose, job index)
Engines
    `simulate`, `Open`, `Closed`, `Outcome`   the compiled event engine (`engine`);
                         one-step models go to the fast Lindley engine by themselves,
                         same numbers (``accelerate=False`` keeps the event engine)
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
                                         cassandra_write, fork_join, one_step_arrays,
                                         one_step_jobs, one_step_layout, one_step_path,
                                         read_law)
from forkjoin_sim.steps.engine import Closed, Open, Outcome, run_arrays, simulate
from forkjoin_sim.steps.graph import Layout, Op, Template, compile_templates, stations_of
from forkjoin_sim.steps.reference import run_reference

__all__ = ["Op", "Template", "Layout", "stations_of", "compile_templates", "fork_join",
           "cassandra_read", "cassandra_write", "cassandra_layout", "cassandra_parties",
           "cassandra_jobs", "read_law", "one_step_jobs", "one_step_layout",
           "one_step_path", "one_step_arrays", "draws", "simulate", "run_arrays", "Open",
           "Closed", "Outcome", "run_reference"]
