"""Jobs of many tasks: tasks per second of the fast and fused engines, and peak memory.

    .venv/bin/python benchmarks/bench_wide_jobs.py [ROOT]

Runs (n, r, k) = (1000, 1000, 500) and (10^4, 10^4, 5000) at job load 0.5, each in
a process of its own (so its peak RSS is its own), with the package found under ROOT
(default: this checkout); pointing ROOT at an older checkout compares the two in one
run. Prints tasks per second (after a warm-up run that compiles) and peak RSS in MB.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

CASES = [((1000, 1000, 500), 20_000), ((10_000, 10_000, 5_000), 1_000)]
CHILD = """
import json, resource, sys, time
from forkjoin_sim import ForkJoinModel, simulate
(n, r, k), jobs, engine = json.loads(sys.argv[1])
model = ForkJoinModel(n, r, k, load=0.5)
simulate(model, jobs=50, engine=engine, progress=False)
start = time.perf_counter()
simulate(model, jobs=jobs, engine=engine, progress=False)
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps([jobs * r / seconds, peak]))
"""


def main() -> None:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent.parent)
    env = dict(os.environ, PYTHONPATH=str(root.resolve()))
    for (queue, jobs) in CASES:
        for engine in ("fast", "fused"):
            done = subprocess.run([sys.executable, "-c", CHILD,
                                   json.dumps([queue, jobs, engine])],
                                  capture_output=True, text=True, env=env, cwd=root)
            if done.returncode:
                print(f"{queue} {engine}: failed: {done.stderr.strip()[-200:]}")
                continue
            rate, peak = json.loads(done.stdout)
            print(f"{str(queue):<22} {engine:<6} {rate / 1e6:8.2f} M tasks/s  "
                  f"peak {peak:7.0f} MB")


if __name__ == "__main__":
    main()
