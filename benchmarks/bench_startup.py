"""Start-up of `forkjoin-sim simulate` with 10^5 jobs, against numba's own start-up.

    .venv/bin/python benchmarks/bench_startup.py [PAIRS]

Runs, in turn and PAIRS times (default 7), whole processes with a warm compile cache:
the CLI with the fused and with the fast engine, a minimal program that loads one
cached numba function, ``import numpy, numba``, and an empty Python. Prints the
median wall time of each and the CLI's time as a ratio to the minimal numba program,
which is the floor of any command that runs a compiled kernel.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "forkjoin_cli", "simulate", "--nodes", "9", "--replicas",
       "3", "--quorum", "2", "--rho", "2.7", "--jobs", "100000", "--seed", "1", "--json"]
MINIMAL = """import numba

@numba.njit(cache=True)
def step(x):
    return x + 1
"""


def wall(command: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    pairs = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        (scratch / "minimal.py").write_text(MINIMAL)
        runs = {
            "forkjoin-sim simulate --engine fused (10^5 jobs)": (CLI + ["--engine", "fused"], HERE),
            "forkjoin-sim simulate --engine fast (10^5 jobs)": (CLI + ["--engine", "fast"], HERE),
            "one cached numba function": ([sys.executable, "-c", "import minimal; minimal.step(1)"],
                                          scratch),
            "import numpy, numba": ([sys.executable, "-c", "import numpy, numba"], scratch),
            "python -c pass": ([sys.executable, "-c", "pass"], scratch),
        }
        for command, cwd in runs.values():  # warm the compile caches
            wall(command, cwd)
        times: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(pairs):
            for name, (command, cwd) in runs.items():
                times[name].append(wall(command, cwd))
    load = os.getloadavg()[0]
    print(f"command: python benchmarks/bench_startup.py {pairs}")
    print(f"{pairs} rounds, warm compile caches; load average {load:.2f} on "
          f"{os.cpu_count()} cores\n")
    print("| process | median wall s | min | max |")
    print("|---|---:|---:|---:|")
    for name, values in times.items():
        print(f"| {name} | {statistics.median(values):.3f} | {min(values):.3f} | "
              f"{max(values):.3f} |")
    floor = statistics.median(times["one cached numba function"])
    for name in list(runs)[:2]:
        print(f"\n{name.split(' (')[0]} / one cached numba function: "
              f"{statistics.median(times[name]) / floor:.2f}", end="")
    print()


if __name__ == "__main__":
    main()
