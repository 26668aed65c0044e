"""Start-up of `forkjoin-sim simulate` with 10^5 jobs, now and with a baseline
revision's fused-engine files, against numba's own start-up; and the cost of
calibration-sized runs after the first in one process.

    .venv/bin/python benchmarks/bench_startup.py [PAIRS] [--baseline REV]

Runs, in turn and PAIRS times (default 7), whole processes with a warm compile cache:
the CLI with the default engine (the fast one at 10^5 jobs) and with the fused engine,
each from this checkout's committed tree (``git archive HEAD``) and from the same tree
with the fused engine's files of the baseline revision (`bench_fused.ENGINE_FILES`);
a minimal program that loads one cached numba function, ``import numpy, numba``, and
an empty Python. Prints the median wall time of each and the CLI's time as a ratio to
the minimal numba program, which is the floor of any command that runs a compiled
kernel. Bytecode caches are warm too (`bench_fused.child_environment`). Then, in this process, `simulate` of 10^4 and 10^5 jobs six times each: the
first call (loading compiled code) and the median of the others, which should pay no
compile and no import.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_fused import BASELINE, child_environment, export_tree

CLI = [sys.executable, "-m", "forkjoin_cli", "simulate", "--nodes", "9", "--replicas",
       "3", "--quorum", "2", "--rho", "2.7", "--jobs", "100000", "--seed", "1", "--json"]
MINIMAL = """import numba

@numba.njit(cache=True)
def step(x):
    return x + 1
"""


def wall(command: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                   env=child_environment(cwd))
    return time.perf_counter() - start


def processes(pairs: int, rev: str) -> None:
    scratch = Path(tempfile.mkdtemp(prefix="forkjoin_bench_startup_"))
    try:
        (scratch / "minimal.py").write_text(MINIMAL)
        baseline = export_tree(scratch / "baseline", rev)
        now = export_tree(scratch / "now")
        runs = {
            "simulate, default engine (fast at 10^5), baseline fused files":
                (CLI, baseline),
            "simulate, default engine (fast at 10^5), now": (CLI, now),
            "simulate --engine fused, baseline fused files":
                (CLI + ["--engine", "fused"], baseline),
            "simulate --engine fused, now": (CLI + ["--engine", "fused"], now),
            "one cached numba function": ([sys.executable, "-c",
                                           "import minimal; minimal.step(1)"], scratch),
            "import numpy, numba": ([sys.executable, "-c", "import numpy, numba"],
                                    scratch),
            "python -c pass": ([sys.executable, "-c", "pass"], scratch),
        }
        for command, cwd in runs.values():  # warm the compile caches
            wall(command, cwd)
        times: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(pairs):
            for name, (command, cwd) in runs.items():
                times[name].append(wall(command, cwd))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"{pairs} rounds, warm compile caches; baseline {rev[:12]}; load average "
          f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} cores\n")
    print("| process | median wall s | min | max | / one cached numba function |")
    print("|---|---:|---:|---:|---:|")
    floor = statistics.median(times["one cached numba function"])
    for name, values in times.items():
        middle = statistics.median(values)
        print(f"| {name} | {middle:.3f} | {min(values):.3f} | {max(values):.3f} | "
              f"{middle / floor:.2f} |")


def in_process() -> None:
    """First and later `simulate` calls of calibration size in this process."""
    from forkjoin_sim.model import ForkJoinModel
    from forkjoin_sim.simulation import simulate

    model = ForkJoinModel(9, 3, 2, load=2.7)
    print("\n| simulate() in one process | engine | first call s | later calls, "
          "median s |")
    print("|---|---|---:|---:|")
    for engine in (None, "fused"):
        for jobs in (10_000, 100_000):
            seconds = []
            for seed in range(6):
                start = time.perf_counter()
                result = simulate(model, jobs=jobs, seed=seed, engine=engine)
                seconds.append(time.perf_counter() - start)
            print(f"| {jobs:,} jobs, engine={engine!r} | {result.engine} | "
                  f"{seconds[0]:.4f} | {statistics.median(seconds[1:]):.4f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("pairs", nargs="?", type=int, default=7)
    parser.add_argument("--baseline", default=BASELINE,
                        help="revision whose fused-engine files are the baseline")
    args = parser.parse_args()
    print(f"command: python benchmarks/bench_startup.py {' '.join(sys.argv[1:])}")
    processes(args.pairs, args.baseline)
    in_process()


if __name__ == "__main__":
    main()
