"""Speed of staleness under load: the steps engine against the engine it replaced.

Model: 3 replicas (Stages, one read and one mutation thread each), one key, half
writes, exponential services (mean 0.2) and message delays (mean 0.5), the
coordinator a fourth node, R = W = 1. Closed loop: 100 clients thinking exp(20).
Sessions: each write followed by a read of its key (read-your-writes), pause
exp(0.5). Also the closed loop whose speed docs/staleness/sessions.md quoted for the
old code (R = W = 2, 16 clients thinking exp(2), services exp(1)).

The old code (``staleness/queueing.py`` before it moved onto the steps engine: a
one-pass kernel for the open loop, SimPy for the closed loop) is loaded from git
commit ``--old-commit`` into this run, so both are timed in the same process on the
same machine; the ratios are what to read (the machine is shared). Each line
prints operations per CPU second (``time.process_time``) and per wall second, and
P(stale) with its interval so that the two runs can be compared.

    .venv/bin/python benchmarks/bench_staleness.py [--jobs 1000000] [--old-jobs 20000]
"""

import argparse
import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

from scipy import stats  # noqa: E402

from forkjoin_sim.nodes import Stages  # noqa: E402
from forkjoin_sim.staleness import queueing  # noqa: E402

#: The last commit with the old engine of staleness under load.
OLD_COMMIT = "0efa4a25ad617045724d7af71443e6baeb2375d5"
SERVICE, CLIENTS, THINK = 0.2, 100, 20.0


def old_module(commit: str):
    """``staleness/queueing.py`` as it was at ``commit``, or None without git."""
    root = Path(__file__).resolve().parent.parent
    try:
        text = subprocess.run(["git", "show", f"{commit}:forkjoin_sim/staleness/queueing.py"],
                              cwd=root, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    path = Path(os.environ.get("TMPDIR", "/tmp")) / "staleness_queueing_before.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("staleness_queueing_before", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def model(module, rate=None, **extra):
    law = stats.expon(scale=SERVICE)
    return module.ReplicatedKey(3, rate, 0.5, node=Stages(), read_service=law,
                                write_service=law, **extra)


def timed(label, operations, work):
    """Run ``work`` once to compile, then time it; print and return ops per CPU s.
    ``operations(result)`` is the number of operations the run simulated."""
    work()
    wall, cpu = time.perf_counter(), time.process_time()
    result = work()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    count = operations(result)
    stale = (result.stale() if hasattr(result, "stale")
             else tuple(result.summary()[k] for k in ("probability", "low", "high")))
    print(f"{label:<44} {count:>9,} ops {count / cpu:>11,.0f} ops/cpu-s "
          f"{count / wall:>11,.0f} ops/wall-s   P = {stale[0]:.4f} "
          f"[{stale[1]:.4f}, {stale[2]:.4f}]", flush=True)
    return count / cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=1_000_000)
    parser.add_argument("--old-jobs", type=int, default=20_000,
                        help="operations of the old closed loop (SimPy, slow)")
    parser.add_argument("--old-commit", default=OLD_COMMIT)
    args = parser.parse_args()
    jobs, old_jobs = args.jobs, args.old_jobs
    new = queueing
    old = old_module(args.old_commit)
    loop = new.ClosedLoop(CLIENTS, stats.expon(scale=THINK))
    rows = {}
    print(f"operations simulated per second (a session is two); {CLIENTS} clients, "
          f"think exp({THINK:g}), service exp({SERVICE:g}), N=3, R=W=1")
    if old is not None:
        old_loop = old.ClosedLoop(CLIENTS, stats.expon(scale=THINK))
        rows["old closed"] = timed(
            "closed loop, old (SimPy)", lambda _: old_jobs,
            lambda: old.simulate_closed(model(old), 1, 1, old_loop, old_jobs, seed=1))
        rows["old open"] = timed(
            "open loop rate 4, old (one-pass kernel)", lambda _: jobs,
            lambda: old.simulate_staleness(model(old, 4.0), 1, 1, jobs, seed=1))
    rows["new closed"] = timed(
        "closed loop, steps engine", lambda _: jobs,
        lambda: new.simulate_closed(model(new), 1, 1, loop, jobs, seed=1))
    rows["new open"] = timed(
        "open loop rate 4, steps engine", lambda _: jobs,
        lambda: new.simulate_staleness(model(new, 4.0), 1, 1, jobs, seed=1))
    rows["new fifo"] = timed(
        "closed loop, fifo, token-aware, steps engine", lambda _: jobs,
        lambda: new.simulate_closed(model(new, channels="fifo",
                                          coordinators="token-aware"),
                                    1, 1, loop, jobs, seed=1))
    session = new.Session("read-your-writes", stats.expon(scale=0.5))
    sessions = {}

    def run_sessions():
        run = new.simulate_sessions(model(new), 1, 1, session, loop, jobs, seed=1)
        sessions["operations"] = run.operations.issue.size
        return run.sessions(1, 1)

    rows["new sessions"] = timed(
        "closed-loop sessions (RYW), steps engine",
        lambda result: sessions["operations"], run_sessions)
    documented = new.ClosedLoop(16, stats.expon(scale=2.0))
    slow = dict(read_service=stats.expon(), write_service=stats.expon())
    if old is not None:
        old_documented = old.ClosedLoop(16, stats.expon(scale=2.0))
        rows["old documented"] = timed(
            "R=W=2, 16 clients exp(2), service exp(1), old", lambda _: old_jobs,
            lambda: old.simulate_closed(old.ReplicatedKey(3, None, 0.5, **slow), 2, 2,
                                        old_documented, old_jobs, seed=1))
    rows["new documented"] = timed(
        "R=W=2, 16 clients exp(2), service exp(1), new", lambda _: jobs,
        lambda: new.simulate_closed(new.ReplicatedKey(3, None, 0.5, **slow), 2, 2,
                                    documented, jobs, seed=1))
    if old is not None:
        print(f"new / old (operations per CPU second): closed loop "
              f"{rows['new closed'] / rows['old closed']:,.0f}x, the documented closed "
              f"loop {rows['new documented'] / rows['old documented']:,.0f}x, open loop "
              f"{rows['new open'] / rows['old open']:.2f}x")


if __name__ == "__main__":
    main()
