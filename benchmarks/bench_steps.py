"""Speed of the steps engine: compiled kernel vs SimPy on the same Cassandra read.

Model: 3 nodes, 3 replicas, QUORUM (2 of 3) reads, a queued coordinator step, shared
cores (4 per node), random coordinator, 100 closed-loop client threads with
exponential think times; exponential step times (ms). Both engines get the same
pre-drawn numbers; the script checks they agree per job, then prints operations (jobs)
per second of one core.

``--one-step``: also the paper's (9,3,2) job (exponential service, mean 1; open
Poisson at 70% load, and 20 closed-loop clients thinking 3 on average), which
`steps.simulate` hands to the fast Lindley engine: `simulate(...,
accelerate=False)` (the event engine, before) against the default (after), the same
inputs, alternating, best of ``--repeat``; wall and CPU seconds and their ratios.

    .venv/bin/python benchmarks/bench_steps.py [--jobs 1000000] [--simpy-jobs 20000]
        [--one-step] [--repeat 5]
"""

import argparse
import os
import time

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from scipy import stats  # noqa: E402

from forkjoin_sim.steps import (Closed, Open, cassandra_jobs,  # noqa: E402
                                cassandra_layout, draws, simulate)
from forkjoin_sim.steps.builders import one_step_jobs, one_step_layout  # noqa: E402
from forkjoin_sim.steps.engine import run_arrays  # noqa: E402
from forkjoin_sim.steps.graph import compile_templates, stations_of  # noqa: E402
from forkjoin_sim.steps.reference import run_reference  # noqa: E402

LAWS = {"client": stats.expon(scale=0.02), "hop": stats.expon(scale=0.1),
        "coordinate": stats.expon(scale=0.05), "message": stats.expon(scale=0.01),
        "replica_read": stats.expon(scale=0.2), "respond": stats.expon(scale=0.02)}
NODES, REPLICAS, QUORUM, CORES, CLIENTS, THINK = 3, 3, 2, 4, 100, 8.0


def inputs(jobs, seed=7):
    """The resolved arrays of ``jobs`` reads."""
    layout = cassandra_layout(NODES, "shared", cores=CORES, client_cores=8)
    templates, classes, parties, durations = cassandra_jobs(
        NODES, REPLICAS, QUORUM, LAWS, seed, jobs)
    compiled = compile_templates(templates)
    station = np.full(durations.shape, -1, np.int32)
    for c, t in enumerate(templates):
        rows = classes == c
        station[rows, :len(t.ops)] = stations_of(t, layout, parties[rows])
    think = draws.think_times(seed, stats.expon(scale=THINK), 0, jobs)
    return compiled, classes, station, durations, np.array(layout.servers), \
        Closed(CLIENTS, think)


def timed(function, *args, repeat=1):
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = function(*args)
        best = min(best, time.perf_counter() - t0)
    return out, best


def one_step_inputs(jobs, seed=7):
    """The paper's (9,3,2) job as steps: ``(templates, classes, parties, durations,
    layout, open arrivals, closed arrivals)``."""
    from forkjoin_sim import ForkJoinModel
    from forkjoin_sim.randomness.samplepath import PathSampler

    model = ForkJoinModel(9, 3, 2, load=0.7)
    path = PathSampler(model.system, model.arrival_process, seed).draw(jobs)
    templates, classes, parties, durations = one_step_jobs(path.nodes, path.service,
                                                           path.quorum)
    think = draws.think_times(seed, stats.expon(scale=3.0), 0, jobs)
    return (templates, classes, parties, durations, one_step_layout(9),
            Open(path.arrivals), Closed(20, think))


def one_step(jobs, repeat):
    """Event engine against the fast path on one-step jobs; prints the ratios."""
    templates, classes, parties, durations, layout, *loops = one_step_inputs(jobs)
    print(f"one-step (9,3,2) jobs, {jobs:,}: best of {repeat}, alternating")
    for arrivals in loops:
        runs = {}
        best = {False: [np.inf, np.inf], True: [np.inf, np.inf]}
        for _ in range(repeat + 1):         # the first round compiles (or loads)
            for accelerate in (False, True):
                wall, cpu = time.perf_counter(), time.process_time()
                runs[accelerate] = simulate(templates, layout, parties, durations,
                                            arrivals, classes=classes,
                                            accelerate=accelerate)
                wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
                best[accelerate] = [min(best[accelerate][0], wall),
                                    min(best[accelerate][1], cpu)]
        same = all(np.array_equal(getattr(runs[False], f), getattr(runs[True], f))
                   for f in ("start", "finish", "client"))
        assert same, "the fast path and the event engine disagree"
        (w0, c0), (w1, c1) = best[False], best[True]
        loop = "open" if isinstance(arrivals, Open) else f"closed ({arrivals.clients})"
        print(f"  {loop}: event engine {w0:.3f} s wall / {c0:.3f} s CPU "
              f"({jobs / c0:,.0f} jobs per CPU s); fast path {w1:.3f} / {c1:.3f} s "
              f"({jobs / c1:,.0f}); ratio {w0 / w1:.2f}x wall, {c0 / c1:.2f}x CPU; "
              "identical start, finish, client")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=1_000_000)
    parser.add_argument("--simpy-jobs", type=int, default=20_000)
    parser.add_argument("--one-step", action="store_true",
                        help="also time one-step jobs: event engine vs fast path")
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()

    args, t_draw = timed(inputs, options.jobs)
    run_arrays(*inputs(1000))                       # compile (or load the cache)
    out, t_kernel = timed(run_arrays, *args, repeat=3)
    small = inputs(options.simpy_jobs)
    ref, t_simpy = timed(run_reference, *small)
    check = run_arrays(*small)
    assert np.array_equal(check.finish, ref.finish), "engines disagree"
    mean = np.mean(out.sojourn[options.jobs // 10:])
    kernel = options.jobs / t_kernel
    simpy = options.simpy_jobs / t_simpy
    print(f"command: .venv/bin/python benchmarks/bench_steps.py --jobs {options.jobs} "
          f"--simpy-jobs {options.simpy_jobs}")
    print(f"model: {NODES} nodes, {REPLICAS} replicas, quorum {QUORUM}, shared "
          f"{CORES} cores, {CLIENTS} closed-loop clients thinking {THINK} ms on "
          f"average, {args[0].steps[args[1]].mean():.0f} steps per read (every "
          f"coordinator is a replica); mean latency {mean:.4f} ms, "
          f"throughput {options.jobs / out.finish.max():.1f} ops per ms (simulated)")
    print(f"drawing inputs: {options.jobs / t_draw:,.0f} jobs/s")
    compiled, classes = args[0], args[1]
    steps = compiled.steps[classes].sum() + options.jobs      # step ends and arrivals
    print(f"compiled kernel: {kernel:,.0f} ops/s ({t_kernel:.3f} s for {options.jobs:,}; "
          f"{steps / t_kernel / 1e6:.1f} M events/s, {steps / options.jobs:.1f} per op)")
    print(f"SimPy: {simpy:,.0f} ops/s ({t_simpy:.3f} s for {options.simpy_jobs:,}); "
          f"identical finish times on those jobs")
    print(f"speed-up: {kernel / simpy:,.0f}x")
    if options.one_step:
        one_step(options.jobs, options.repeat)


if __name__ == "__main__":
    main()
