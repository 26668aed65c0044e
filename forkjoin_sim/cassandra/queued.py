"""Cassandra workloads of steps, run and measured: the queued-work runs of ``mix`` and
``cassandra simulate`` (client, coordinator and message work that queues, hops,
several data centres; `forkjoin_sim.steps.builders.cassandra_jobs` builds the jobs)."""

from __future__ import annotations

import time

import numpy as np
from scipy import stats

from forkjoin_sim.measure.statistics import SojournRecorder, throughput_fields
from forkjoin_sim.steps import Closed, Open, draws, run_arrays, run_reference
from forkjoin_sim.steps.graph import compile_templates, stations_of


def run_queued(*, layout, templates, classes, parties, durations, seed, jobs, warmup,
               rate=None, clients=None, think=0.0, think_law=None, engine="steps",
               sample_every=1, unqueued=()):
    """Run Cassandra jobs of steps on the steps engine (or its SimPy reference,
    ``engine='simpy'``) and measure them: ``(result, fields)``, the summary (the keys
    of ``forkjoin-sim simulate --json``) and the throughput, utilisation and per
    operation type summaries (reads are classes 0 and 1, writes 2 and 3).

    ``templates, classes, parties, durations`` are `steps.builders.cassandra_jobs`'
    output; open loop at ``rate`` (Poisson, drawn by purpose) or ``clients`` with
    think times of mean ``think`` (law ``think_law``, default exponential).

    Steps of the kinds in ``unqueued`` (work not asked for) become zero delays: a step
    of no work must not wait in a station's line.
    """
    if rate is not None:
        arrivals = Open(draws.poisson_arrivals(seed, rate, 0, jobs))
    else:
        law = think_law if think_law is not None else stats.expon(scale=think)
        gaps = (np.zeros(jobs) if think == 0
                else draws.think_times(seed, law, 0, jobs))
        arrivals = Closed(clients, gaps)
    compiled = compile_templates(templates)
    station = np.full(durations.shape, -1, np.int32)
    for c, template in enumerate(templates):
        rows = classes == c
        station[rows, :len(template.ops)] = stations_of(
            template, layout, parties[rows, :template.parties])
        skip = [i for i, op in enumerate(template.ops) if op.kind in unqueued]
        station[np.ix_(np.flatnonzero(rows), skip)] = -1
    servers = np.array(layout.servers)
    started = time.perf_counter()
    runner = run_reference if engine == "simpy" else run_arrays
    out = runner(compiled, classes, station, durations, servers, arrivals)
    seconds = time.perf_counter() - started
    order = np.argsort(out.start, kind="stable")
    is_write = classes[order] >= 2
    recorder = SojournRecorder(jobs, warmup=warmup, sample_every=sample_every,
                               labels=True, times=True)
    recorder.add(out.sojourn[order], labels=is_write.astype(np.int64),
                 times=out.start[order])
    result = recorder.summary().to_dict()
    result.update(engine="steps" if engine != "simpy" else "steps-simpy",
                  seconds=round(seconds, 6), jobs=jobs, seed=seed)
    fields = throughput_fields(recorder.throughput())
    # the utilisation law (busy = throughput x work) over the measured jobs: work of
    # a job's unneeded replicas may end after the run's last answer
    measured = order[recorder.measured()["dropped"]:]
    rows = station[measured]
    busy = np.bincount(rows[rows >= 0], weights=durations[measured][rows >= 0],
                       minlength=len(servers))
    horizon = float(out.start[measured].max() - out.start[measured].min())
    node_stations = [i for i, name in enumerate(layout.names) if name != "client"]
    use = busy[node_stations] / (servers[node_stations] * horizon)
    fields.update(utilisation_mean=float(np.mean(use)), utilisation_max=float(np.max(use)))
    if 0 < is_write.mean() < 1:
        fields["classes"] = {name: recorder.summary(label=label).to_dict()
                             for label, name in ((0, "read"), (1, "write"))}
    return result, fields
