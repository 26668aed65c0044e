"""Engine benchmark: fast vs SimPy, throughput end to end, memory, and scaling.

Run:  .venv/bin/python benchmarks/bench_engines.py [--quick]

Everything is measured in one run and reported as ratios where the machine's noise
would otherwise dominate. Single core: numba and numpy run single-threaded here.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from forkjoin_sim.engines import FastEngine, SimPyEngine  # noqa: E402
from forkjoin_sim.model import ForkJoinModel  # noqa: E402
from forkjoin_sim.randomness.samplepath import draw_sample_path  # noqa: E402
from forkjoin_sim.simulation import simulate  # noqa: E402

# (9,3,2), exponential service, per-node load r*rho/n = 0.9.
REFERENCE = dict(nodes=9, replicas=3, quorum=2, load=2.7)


def _best_of(fn, repeats=3):
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def engines_side_by_side(simpy_jobs: int, fast_jobs: int) -> dict:
    """Jobs per second of both engines on the same model (engine time only), and
    end-to-end ``simulate`` (path drawing, statistics) on the fast engine."""
    model = ForkJoinModel(**REFERENCE)
    small = draw_sample_path(model, simpy_jobs, seed=1)
    big = draw_sample_path(model, fast_jobs, seed=2)
    FastEngine(model.nodes).run(small)  # compile outside the timing
    simpy_s = _best_of(lambda: SimPyEngine(model.nodes).run(small), repeats=1)
    fast_s = _best_of(lambda: FastEngine(model.nodes).run(big))
    simulate(model, jobs=10_000, seed=0)
    end_to_end_s = _best_of(lambda: simulate(model, jobs=fast_jobs, seed=3))
    return {
        "simpy_jobs_per_s": simpy_jobs / simpy_s,
        "fast_engine_jobs_per_s": fast_jobs / fast_s,
        "fast_over_simpy": (fast_jobs / fast_s) / (simpy_jobs / simpy_s),
        "end_to_end_jobs_per_s": fast_jobs / end_to_end_s,
    }


# Peak RSS from VmHWM: getrusage's ru_maxrss survives execve on Linux, so a child
# started from this (large) process would report the parent's peak.
_MEMORY_CHILD = """
import re, sys, time
from forkjoin_sim.model import ForkJoinModel
from forkjoin_sim.simulation import simulate
jobs, every = int(sys.argv[1]), int(sys.argv[2])
start = time.perf_counter()
r = simulate(ForkJoinModel(9, 3, 2, load=2.7), jobs=jobs, seed=1, sample_every=every)
seconds = time.perf_counter() - start
hwm = int(re.search(r"VmHWM:\\s+(\\d+)", open("/proc/self/status").read()).group(1))
print(seconds, hwm, r.summary.jobs_measured)
"""


def memory_and_time_vs_jobs(job_counts, measured=100_000) -> list[dict]:
    """Peak RSS and time of a fresh process per job count, keeping ``measured``
    sojourns (sample_every = jobs / measured) so only the engine's memory grows."""
    rows = []
    for jobs in job_counts:
        every = max(1, jobs // measured)
        out = subprocess.run([sys.executable, "-c", _MEMORY_CHILD, str(jobs), str(every)],
                             capture_output=True, text=True, check=True).stdout.split()
        seconds, rss_kb, kept = float(out[0]), int(out[1]), int(out[2])
        rows.append({"jobs": jobs, "sample_every": every, "measured": kept,
                     "seconds": seconds, "jobs_per_s": jobs / seconds,
                     "peak_rss_mb": rss_kb / 1024})
    return rows


def scaling(jobs: int) -> dict:
    """Engine jobs per second as n grows (r=3) and as r grows (n=15), load 0.9."""
    def rate(n, r):
        model = ForkJoinModel(n, r, max(1, r // 2), load=0.9 * n / r)
        path = draw_sample_path(model, jobs, seed=4)
        FastEngine(n).run(path.slice(0, 100))
        return jobs / _best_of(lambda: FastEngine(n).run(path))
    return {"vs_nodes_r3": {n: rate(n, 3) for n in (3, 6, 9, 15, 30, 60)},
            "vs_replicas_n15": {r: rate(15, r) for r in (1, 3, 5, 9, 15)}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    quick = args.quick
    results = {
        "side_by_side": engines_side_by_side(20_000 if quick else 100_000,
                                             2_000_000 if quick else 20_000_000),
        "memory_vs_jobs": memory_and_time_vs_jobs(
            [10**5, 10**6, 10**7] if quick else [10**5, 10**6, 10**7, 10**8]),
        "scaling": scaling(1_000_000 if quick else 5_000_000),
    }
    if args.json:
        print(json.dumps(results, indent=2))
        return
    s = results["side_by_side"]
    print("(9,3,2) exponential, per-node load 0.9, one core")
    print(f"  SimPy engine        {s['simpy_jobs_per_s']:>14,.0f} jobs/s")
    print(f"  fast engine         {s['fast_engine_jobs_per_s']:>14,.0f} jobs/s")
    print(f"  fast / SimPy        {s['fast_over_simpy']:>14,.0f} x")
    print(f"  simulate() end to end (drawing + engine + statistics) "
          f"{s['end_to_end_jobs_per_s']:,.0f} jobs/s")
    print("memory and time vs jobs (fresh process each; sample_every = jobs/100,000, so 90,000 sojourns kept after warm-up)")
    for row in results["memory_vs_jobs"]:
        print(f"  {row['jobs']:>12,} jobs  {row['seconds']:8.2f} s  "
              f"{row['jobs_per_s']:>12,.0f} jobs/s  peak RSS {row['peak_rss_mb']:7.1f} MB")
    print("fast engine jobs/s vs nodes (r=3) and vs replicas (n=15), load 0.9")
    for label, table in results["scaling"].items():
        print(f"  {label}: " + ", ".join(f"{key}: {value / 1e6:.1f}M"
                                         for key, value in table.items()))


if __name__ == "__main__":
    main()
