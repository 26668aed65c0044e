"""Fused kernel benchmark: jobs per second against the fast engine, on one and two
cores, closed loop and empirical service as ratios, and the peak memory of a long run.

Run:  .venv/bin/python benchmarks/bench_fused.py [--jobs 10000000] [--skip-memory]

(9,3,2), exponential service of mean 1, per-node load 0.9 (2.7 jobs per unit time),
every job measured (sample_every=1). All rows come from the same run so that their
ratios are meaningful on a shared machine; wall-clock time, compile caches warm.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time

import numpy as np
from scipy import stats

from forkjoin_sim.laws.empirical import Empirical
from forkjoin_sim.engines.fused.kernel import JobClass, KernelModel, poisson, run_fused

NODES, REPLICAS, QUORUM, RATE = 9, 3, 2, 2.7


def fused_model(service=None, closed=False) -> KernelModel:
    job = JobClass(REPLICAS, QUORUM, service if service is not None else stats.expon())
    if closed:
        # 27 clients thinking 6 time units: close to the open system's load.
        return KernelModel((1.0,) * NODES, (job,), clients=27,
                           think=stats.expon(scale=6.0))
    return KernelModel((1.0,) * NODES, (job,), arrival=poisson(RATE))


def best_rate(run, jobs: int, repeats: int = 2) -> tuple[float, float]:
    """Best jobs per wall-clock second, and jobs per CPU second of that run (all
    threads): on a shared machine the second shows what the cores could do."""
    best, cpu = float("inf"), float("inf")
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        run()
        wall = time.perf_counter() - start
        if wall < best:
            best, cpu = wall, time.process_time() - start_cpu
    return jobs / best, jobs / cpu


def fast_engine_rate(jobs: int) -> tuple[float, float]:
    from forkjoin_sim.model import ForkJoinModel
    from forkjoin_sim.simulation import simulate

    model = ForkJoinModel(NODES, REPLICAS, QUORUM, load=RATE)
    simulate(model, jobs=20_000, seed=0, engine="fast")
    return best_rate(lambda: simulate(model, jobs=jobs, seed=1, engine="fast"), jobs)


def fused_rate(model: KernelModel, jobs: int, workers: int = 1) -> tuple[float, float]:
    """Jobs per second of ``workers`` replications of ``jobs / workers`` jobs each on
    ``workers`` threads."""
    run_fused(model, total_jobs=20_000, seed=0, replications=workers, workers=workers)
    per = jobs // workers
    return best_rate(lambda: run_fused(model, total_jobs=per, seed=1,
                                       replications=workers, workers=workers),
                     per * workers)


_MEMORY_CHILD = """
import sys, time
from forkjoin_sim.engines.fused.kernel import JobClass, KernelModel, poisson, run_fused
from forkjoin_sim.engines.fused.laws import exponential
jobs, workers = int(sys.argv[1]), int(sys.argv[2])
model = KernelModel((1.0,) * 9, (JobClass(3, 2, exponential(1.0)),), arrival=poisson(2.7))
start = time.perf_counter()
r = run_fused(model, total_jobs=jobs // workers, replications=workers, workers=workers,
              seed=7)
seconds = time.perf_counter() - start
p = r.percentiles()
print(seconds, r.jobs_measured(), r.mean(), p["p99"], p["p999"])
"""


def memory_run(jobs: int, workers: int = 2) -> dict:
    """Seconds, peak resident set (MB) and results of a fresh process simulating
    ``jobs`` jobs (``workers`` replications, every job measured, percentiles kept)."""
    command = [sys.executable, "-c", _MEMORY_CHILD, str(jobs), str(workers)]
    timer = shutil.which("time") or "/usr/bin/time"
    if os.path.exists(timer):
        done = subprocess.run([timer, "-v", *command], capture_output=True, text=True,
                              check=True)
        peak_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)",
                                done.stderr).group(1))
    else:  # no GNU time: the child's own high-water mark would need code in it
        done = subprocess.run(command, capture_output=True, text=True, check=True)
        peak_kb = float("nan")
    seconds, measured, mean, p99, p999 = done.stdout.split()
    return {"jobs": jobs, "seconds": float(seconds), "peak_rss_mb": peak_kb / 1024,
            "measured": int(measured), "mean": float(mean), "p99": float(p99),
            "p999": float(p999)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=10_000_000)
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--memory-limit-seconds", type=float, default=120.0,
                        help="run the 1e9-job memory test only if the 1e8 run "
                             "projects it under this many seconds")
    args = parser.parse_args()
    jobs = args.jobs
    load = os.getloadavg()[0]
    rates = {
        "fast engine, simulate(engine='fast'), 1 core": fast_engine_rate(jobs),
        "fused kernel, 1 core": fused_rate(fused_model(), jobs),
        "fused kernel, 2 cores (2 replications)": fused_rate(fused_model(), jobs, 2),
        "fused kernel closed loop (27 clients), 1 core":
            fused_rate(fused_model(closed=True), jobs),
        "fused kernel empirical service (10^4 values), 1 core":
            fused_rate(fused_model(Empirical(np.random.default_rng(0).exponential(
                1.0, 10_000))), jobs),
    }
    fast = rates["fast engine, simulate(engine='fast'), 1 core"][0]
    one = rates["fused kernel, 1 core"][0]
    print(f"command: {' '.join([os.path.basename(sys.executable)] + sys.argv)}")
    print(f"(9,3,2), exponential, per-node load 0.9, {jobs:,} jobs per row, every job "
          f"measured; load average at start {load:.2f} on {os.cpu_count()} cores\n")
    print("| run | jobs/s (wall) | vs fast engine | jobs per CPU second |")
    print("|---|---:|---:|---:|")
    for name, (rate, per_cpu) in rates.items():
        print(f"| {name} | {rate / 1e6:.2f} M | {rate / fast:.2f}x | "
              f"{per_cpu / 1e6:.2f} M |")
    closed = rates["fused kernel closed loop (27 clients), 1 core"][0]
    empirical = rates["fused kernel empirical service (10^4 values), 1 core"][0]
    print(f"\nclosed / open: {closed / one:.2f};  empirical / exponential: "
          f"{empirical / one:.2f};  2 cores / 1 core: "
          f"{rates['fused kernel, 2 cores (2 replications)'][0] / one:.2f} (wall; below"
          " 2 when other processes hold a core)")
    if args.skip_memory:
        return
    print("\n| jobs | seconds | jobs/s | peak RSS | measured | mean | p99 | p99.9 |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    rows = [memory_run(10**8)]
    if rows[0]["seconds"] * 10 < args.memory_limit_seconds:
        rows.append(memory_run(10**9))
    else:
        print(f"(1e9 skipped: the 1e8 run took {rows[0]['seconds']:.0f} s, projecting "
              f"over {args.memory_limit_seconds:.0f} s)")
    for row in rows:
        print(f"| {row['jobs']:.0e} | {row['seconds']:.1f} | "
              f"{row['jobs'] / row['seconds'] / 1e6:.1f} M | {row['peak_rss_mb']:.0f} MB |"
              f" {row['measured']:,} | {row['mean']:.4f} | {row['p99']:.3f} | "
              f"{row['p999']:.3f} |")


if __name__ == "__main__":
    main()
