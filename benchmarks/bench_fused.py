"""Fused kernel benchmark: the kernel now against the kernel of a baseline revision, in
the same run, on one and two cores, closed loop and empirical service; the default
``simulate`` command end to end, now against the same tree with the baseline's
kernel; and the peak memory of a long default run.

Run:  .venv/bin/python benchmarks/bench_fused.py [--jobs 10000000] [--baseline REV]
                                                 [--skip-command] [--skip-memory]
      .venv/bin/python benchmarks/bench_fused.py --profile [--jobs 5000000]

(9,3,2), exponential service of mean 1, per-node load 0.9 (2.7 jobs per unit time),
every job measured (sample_every=1). The machine is shared, so the two kernels run
in turn, row by row, several times, and the table gives the best of each and their
ratio: wall-clock jobs per second, and jobs per CPU second (all threads; it leaves
out the time other processes held the core). Compile caches warm.

``--profile`` prints where a job's time goes instead (CPU time of one thread, best
of five): in the job-by-job loop of the baseline (cumulative: the raw xoshiro
outputs, then every draw, the queue updates, the order statistic, the statistics)
and in today's blocks (each loop of a block alone, then the whole kernel with and
without measuring).

The baseline kernel is ``forkjoin_sim/engines/fused/kernel.py`` of ``--baseline``
(default: the revision before issue 29's blocks), imported from a copy beside its
own compile cache; it uses today's ``rng`` and ``laws`` modules, which only gained
functions since. The end-to-end baseline is this checkout's committed tree (``git
archive HEAD``) with the fused engine's files (`ENGINE_FILES`) of the baseline.
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import numpy as np
from scipy import stats

from forkjoin_sim.laws.empirical import Empirical
from forkjoin_sim.engines.fused import kernel as current

HERE = Path(__file__).resolve().parent.parent
NODES, REPLICAS, QUORUM, RATE = 9, 3, 2, 2.7
#: The fused kernel before issue 29 (item 2) cut it into blocks.
BASELINE = "fd7fbb86fa95a4210296a8101e514863f31512f2"
#: The files of the fused engine and its command (what the baseline tree takes from
#: the baseline revision).
ENGINE_FILES = ("forkjoin_sim/engines/fused/__init__.py",
                "forkjoin_sim/engines/fused/engine.py",
                "forkjoin_sim/engines/fused/kernel.py",
                "forkjoin_sim/engines/fused/laws.py",
                "forkjoin_sim/engines/fused/rng.py",
                "forkjoin_sim/engines/select.py",
                "forkjoin_cli/simulate.py")
#: What a run of the command line needs from the tree.
TREE_PATHS = ("analytic", "forkjoin_cli", "forkjoin_sim", "sizing", "validation",
              "setup.cfg")
DEFAULT_COMMAND = ["simulate", "--nodes", "9", "--replicas", "3", "--quorum", "2",
                   "--rho", "2.7", "--seed", "1", "--json"]


def child_environment(tree: Path | None = None) -> dict:
    """The environment of a timed command: Python may write bytecode caches (an
    installed package has them; PYTHONDONTWRITEBYTECODE would make every run compile
    every module from source, 50 ms of start-up), and ``tree`` comes first on the
    path."""
    environment = dict(os.environ)
    environment.pop("PYTHONDONTWRITEBYTECODE", None)
    if tree is not None:
        environment["PYTHONPATH"] = str(tree)
    return environment


def _git(*args: str) -> bytes:
    return subprocess.run(["git", *args], cwd=HERE, check=True,
                          capture_output=True).stdout


def baseline_kernel(rev: str):
    """The kernel module of revision ``rev``, imported from a copy in the temporary
    directory (kept between runs, so that its compile cache is too)."""
    text = _git("show", f"{rev}:forkjoin_sim/engines/fused/kernel.py")
    folder = Path(tempfile.gettempdir()) / f"forkjoin_bench_kernel_{rev[:12]}"
    folder.mkdir(exist_ok=True)
    path = folder / "baseline_kernel.py"
    if not path.exists() or path.read_bytes() != text:
        path.write_bytes(text)
    spec = importlib.util.spec_from_file_location("baseline_kernel", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["baseline_kernel"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def export_tree(into: Path, rev: str | None = None) -> Path:
    """This checkout's committed tree (`TREE_PATHS` of HEAD) in ``into``, with
    `ENGINE_FILES` of ``rev`` when given."""
    archive = _git("archive", "--format=tar", "HEAD", *TREE_PATHS)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    if rev is not None:
        for name in ENGINE_FILES:
            target = into / name
            try:
                target.write_bytes(_git("show", f"{rev}:{name}"))
            except subprocess.CalledProcessError:  # not in rev: not in its tree
                target.unlink(missing_ok=True)
    return into


def fused_model(kernel, service=None, closed=False):
    job = kernel.JobClass(REPLICAS, QUORUM,
                          service if service is not None else stats.expon())
    if closed:
        # 27 clients thinking 6 time units: close to the open system's load.
        return kernel.KernelModel((1.0,) * NODES, (job,), clients=27,
                                  think=stats.expon(scale=6.0))
    return kernel.KernelModel((1.0,) * NODES, (job,), arrival=kernel.poisson(RATE))


def timed(run) -> tuple[float, float]:
    """Wall-clock and CPU seconds (all threads) of ``run()``."""
    start, start_cpu = time.perf_counter(), time.process_time()
    run()
    return time.perf_counter() - start, time.process_time() - start_cpu


def compare(runs: dict, jobs: int, repeats: int) -> dict:
    """Best (wall, CPU) seconds of each of ``runs`` (name -> callable), taken in turn
    ``repeats`` times so that a busy spell of the machine hits all of them."""
    best = {name: [np.inf, np.inf] for name in runs}
    for _ in range(repeats):
        for name, run in runs.items():
            wall, cpu = timed(run)
            best[name][0] = min(best[name][0], wall)
            best[name][1] = min(best[name][1], cpu)
    return {name: (jobs / wall, jobs / cpu) for name, (wall, cpu) in best.items()}


def kernel_rows(jobs: int, baseline, repeats: int) -> list[tuple]:
    """(row, baseline rates, current rates) of the kernel runs."""
    empirical = Empirical(np.random.default_rng(0).exponential(1.0, 10_000))
    cases = {
        "open, 1 core": (dict(), 1),
        "open, 2 cores (2 replications)": (dict(), 2),
        "closed loop (27 clients), 1 core": (dict(closed=True), 1),
        "empirical service (10^4 values), 1 core": (dict(service=empirical), 1),
    }
    rows = []
    for name, (options, workers) in cases.items():
        runs = {}
        for label, kernel in (("baseline", baseline), ("now", current)):
            model = fused_model(kernel, **options)
            kernel.run_fused(model, total_jobs=20_000, seed=0, replications=workers,
                             workers=workers)  # compile or load, and warm up

            def run(kernel=kernel, model=model):
                kernel.run_fused(model, total_jobs=jobs // workers, seed=1,
                                 replications=workers, workers=workers)
            runs[label] = run
        rates = compare(runs, jobs // workers * workers, repeats)
        rows.append((name, rates["baseline"], rates["now"]))
    return rows


def fast_engine_rate(jobs: int, repeats: int) -> tuple[float, float]:
    from forkjoin_sim.model import ForkJoinModel
    from forkjoin_sim.simulation import simulate

    model = ForkJoinModel(NODES, REPLICAS, QUORUM, load=RATE)
    simulate(model, jobs=20_000, seed=0, engine="fast")
    return compare({"fast": lambda: simulate(model, jobs=jobs, seed=1, engine="fast")},
                   jobs, repeats)["fast"]


def command_seconds(tree: Path, jobs: int) -> tuple[float, float, float]:
    """Wall and CPU (user + system, all threads) seconds of the default ``forkjoin-sim
    simulate`` of ``jobs`` jobs run from ``tree``, and the mean it printed."""
    import json
    import resource

    command = [sys.executable, "-m", "forkjoin_cli", *DEFAULT_COMMAND, "--jobs",
               str(jobs)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=tree, env=child_environment(tree), check=True,
                          capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, json.loads(done.stdout)["mean"]


def command_rows(jobs: int, rev: str, repeats: int) -> list[tuple]:
    """(tree, best wall seconds, CPU seconds of that run, mean) of the default command
    in the baseline tree and in today's, in turn."""
    scratch = Path(tempfile.gettempdir()) / f"forkjoin_bench_trees_{rev[:12]}"
    shutil.rmtree(scratch, ignore_errors=True)
    trees = {"baseline kernel": export_tree(scratch / "baseline", rev),
             "now": export_tree(scratch / "now")}
    for tree in trees.values():
        command_seconds(tree, 1_000_000)  # compile caches
    best = {name: (np.inf, np.nan, np.nan) for name in trees}
    for _ in range(repeats):
        for name, tree in trees.items():
            seconds, cpu, mean = command_seconds(tree, jobs)
            if seconds < best[name][0]:
                best[name] = (seconds, cpu, mean)
    shutil.rmtree(scratch, ignore_errors=True)
    return [(name, *best[name]) for name in trees]


def memory_run(jobs: int) -> dict:
    """Seconds, peak resident set (MB) and results of the default command of ``jobs``
    jobs in a fresh process (every job measured, percentiles kept)."""
    import json

    command = [sys.executable, "-m", "forkjoin_cli", *DEFAULT_COMMAND, "--jobs",
               str(jobs)]
    timer = shutil.which("time") or "/usr/bin/time"
    start = time.perf_counter()
    done = subprocess.run([timer, "-v", *command], cwd=HERE, capture_output=True,
                          text=True, check=True, env=child_environment())
    seconds = time.perf_counter() - start
    peak_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)",
                            done.stderr).group(1))
    result = json.loads(done.stdout)
    return {"jobs": jobs, "seconds": seconds, "peak_rss_mb": peak_kb / 1024,
            "measured": result["jobs_measured"], "mean": result["mean"],
            "p99": result["p99"], "p999": result["p999"]}


def _profile_kernels():
    """Compiled pieces for `profile`: the baseline's job-by-job loop cut after each
    stage, and loops that repeat one of today's block loops."""
    import numba

    from forkjoin_sim.engines.fused.kernel import (_draw_gaps, _draw_job, _draw_nodes,
                                                   _draw_services, _kth_smallest,
                                                   _queue_open)
    from forkjoin_sim.engines.fused.laws import draw
    from forkjoin_sim.engines.fused.rng import ARRIVAL, next_u64

    jit = numba.njit(_nrt=False, error_model="numpy")

    @jit
    def job_by_job(stage, jobs, states, speeds, cdf, replicas, quorum, placement,
                   law_index, codes, params, offsets, lengths, data, arrival_law, perm,
                   swaps, chosen, service, done, free, out):
        a = 0.0
        total = 0.0
        bits = np.uint64(0)
        for _ in range(jobs):
            if stage == 0:  # the 7 raw outputs a (9,3,2) job takes, state in memory
                for k in range(7):
                    bits ^= next_u64(states, k & 3)
                continue
            a += draw(arrival_law, codes, params, offsets, lengths, data, states,
                      ARRIVAL)
            c = _draw_job(states, speeds, cdf, replicas, placement, law_index, codes,
                          params, offsets, lengths, data, perm, swaps, chosen, service)
            if stage == 1:
                total += service[0] + chosen[0]
                continue
            for t in range(replicas[c]):
                node = chosen[t]
                begin = free[node] if free[node] > a else a
                free[node] = begin + service[t]
                done[t] = free[node]
            if stage == 2:
                total += done[0] + done[1]
                continue
            total += _kth_smallest(done, replicas[c], quorum[c]) - a
        out[0] = a + total + np.float64(bits & np.uint64(1))

    @jit
    def block_loops(stage, blocks, states, speeds, labels, replicas, quorum, placement,
                    law_index, codes, params, offsets, lengths, data, arrival_law, perm,
                    swaps, nodes, service, gaps, done, free, issued, sojourns):
        width = law_index.shape[1]
        size = labels.size
        a = 0.0
        for _ in range(blocks):
            if stage == 0:
                _draw_nodes(states, speeds.size, width, replicas, placement, labels,
                            size, perm, swaps, nodes)
            elif stage == 1:
                _draw_services(states, speeds, width, replicas, law_index, codes,
                               params, offsets, lengths, data, labels, nodes, size,
                               service, law_index[0, 0])
            elif stage == 2:
                _draw_gaps(states, arrival_law, codes, params, offsets, lengths, data,
                           size, gaps)
            else:
                a = _queue_open(a, replicas[0], quorum[0], width, size, gaps, nodes,
                                service, free, done, issued, sojourns)

    return job_by_job, block_loops


def profile(jobs: int, baseline) -> None:
    """Print where a (9,3,2) job's time goes, in the baseline's loop (``baseline``,
    a kernel module) and today's."""
    from forkjoin_sim.engines.fused.kernel import BLOCK_TASKS, _compile
    from forkjoin_sim.engines.fused.rng import seed_states

    model = fused_model(current)
    arrays = _compile(model)
    width = arrays.law_index.shape[1]
    block = BLOCK_TASKS // width
    blocks = max(1, jobs // block)
    job_by_job, block_loops = _profile_kernels()
    model_arrays = (arrays.speeds, arrays.cdf, arrays.replicas, arrays.quorum,
                    arrays.placement, arrays.law_index, arrays.codes, arrays.params,
                    arrays.offsets, arrays.lengths, arrays.data, arrays.arrival_law)
    scratch = (np.arange(NODES, dtype=np.int64), np.zeros(width, dtype=np.int64),
               np.zeros(width, dtype=np.int64), np.zeros(width), np.zeros(width),
               np.zeros(NODES), np.zeros(1))
    buffers = (np.zeros(block * width, dtype=np.int64), np.zeros(block * width),
               np.zeros(block), np.zeros(width), np.zeros(NODES), np.zeros(block),
               np.zeros(block))
    # a block of draws to queue: the kernel's own
    for stage in range(3):
        block_loops(stage, 1, seed_states(1), arrays.speeds,
                    np.zeros(block, dtype=np.int64), *model_arrays[2:],
                    np.arange(NODES, dtype=np.int64), np.zeros(width, dtype=np.int64),
                    *buffers)

    def cpu(run, count) -> float:
        best = np.inf
        for _ in range(5):
            start = time.thread_time()
            run()
            best = min(best, time.thread_time() - start)
        return best / count * 1e9

    old = ["7 raw xoshiro outputs (state in memory)", "+ drawing: 1 gap, 3 nodes, "
           "3 services", "+ queue (3 Lindley updates)", "+ order statistic (sort of 3)"]
    cumulative = [cpu(lambda stage=stage: job_by_job(stage, jobs, seed_states(1),
                                                      *model_arrays, *scratch), jobs)
                  for stage in range(4)]
    old_model = fused_model(baseline)
    baseline.run_fused(old_model, total_jobs=20_000)
    cumulative.append(cpu(lambda: baseline.run_fused(old_model, total_jobs=jobs, seed=1),
                          jobs))
    old.append("+ statistics (the baseline kernel, every job measured)")
    whole = cpu(lambda: current.run_fused(model, total_jobs=jobs, seed=1), jobs)
    print("where a job's time goes, ns per job (CPU time of one thread, best of 5)\n")
    print("| job by job (the baseline's structure) | cumulative ns | added | share |")
    print("|---|---:|---:|---:|")
    previous = 0.0
    for name, value in zip(old, cumulative):
        print(f"| {name} | {value:.1f} | +{value - previous:.1f} | "
              f"{(value - previous) / cumulative[-1]:.0%} |")
        previous = value
    labels = np.zeros(block, dtype=np.int64)
    parts = {}
    for stage, name in enumerate(("nodes (3 bounded integers, swaps traced)",
                                  "service times (3 ziggurat exponentials)",
                                  "gaps (1 ziggurat exponential)",
                                  "queue: 3 Lindley updates and the order statistic")):
        parts[name] = cpu(lambda stage=stage: block_loops(
            stage, blocks, seed_states(1), arrays.speeds, labels, *model_arrays[2:],
            np.arange(NODES, dtype=np.int64), np.zeros(width, dtype=np.int64),
            *buffers), blocks * block)
    unmeasured = cpu(lambda: current.run_fused(model, total_jobs=jobs, seed=1,
                                               first_measured=jobs - 100, batches=2),
                     jobs)
    print("\n| blocks (today) | ns per job | share of the whole |")
    print("|---|---:|---:|")
    for name, value in parts.items():
        print(f"| {name} | {value:.1f} | {value / whole:.0%} |")
    rest = unmeasured - sum(parts.values())
    print(f"| the rest of the loop (kernel measuring nothing, minus the above) | "
          f"{rest:.1f} | {rest / whole:.0%} |")
    print(f"| statistics and busy time (whole minus measuring nothing) | "
          f"{whole - unmeasured:.1f} | {(whole - unmeasured) / whole:.0%} |")
    print(f"| the whole kernel, every job measured | {whole:.1f} | 100% |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=10_000_000,
                        help="jobs per kernel run (default 10^7)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--baseline", default=BASELINE,
                        help="revision whose kernel is the baseline")
    parser.add_argument("--command-jobs", type=int, default=10**8)
    parser.add_argument("--skip-command", action="store_true",
                        help="no end-to-end runs of the default command")
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--memory-jobs", type=int, default=10**9)
    parser.add_argument("--profile", action="store_true",
                        help="print where a job's time goes, and nothing else")
    args = parser.parse_args()
    jobs = args.jobs
    if args.profile:
        print(f"command: {' '.join([os.path.basename(sys.executable)] + sys.argv)}")
        profile(jobs, baseline_kernel(args.baseline))
        return
    print(f"command: {' '.join([os.path.basename(sys.executable)] + sys.argv)}")
    print(f"(9,3,2), exponential, per-node load 0.9, {jobs:,} jobs per row, every job "
          f"measured; baseline kernel of {args.baseline[:12]}; load average at start "
          f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; best of "
          f"{args.repeats}\n")
    rows = kernel_rows(jobs, baseline_kernel(args.baseline), args.repeats)
    fast = fast_engine_rate(jobs, args.repeats)
    print("| kernel run | baseline jobs/s | now jobs/s | now / baseline (wall) | "
          "now / baseline (per CPU second) | now / fast engine |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, (old, old_cpu), (new, new_cpu) in rows:
        print(f"| {name} | {old / 1e6:.1f} M | {new / 1e6:.1f} M | {new / old:.2f} | "
              f"{new_cpu / old_cpu:.2f} | {new / fast[0]:.1f}x |")
    print(f"| fast engine, simulate(engine='fast'), 1 core | | {fast[0] / 1e6:.1f} M | | "
          f"| 1.0x |")
    one = rows[0][2]
    print(f"\nnow, per CPU second: open {one[1] / 1e6:.1f} M jobs/s "
          f"({1e9 / one[1]:.1f} ns a job)")
    if not args.skip_command:
        print(f"\ndefault command (`forkjoin-sim {' '.join(DEFAULT_COMMAND)} --jobs "
              f"{args.command_jobs}`, 8 replications on every core), whole process, "
              f"best of {args.repeats}:\n")
        print("| tree | wall s | jobs/s end to end | CPU s (all threads) | mean |")
        print("|---|---:|---:|---:|---:|")
        for name, seconds, cpu, mean in command_rows(args.command_jobs, args.baseline,
                                                     args.repeats):
            print(f"| {name} | {seconds:.2f} | {args.command_jobs / seconds / 1e6:.1f} M "
                  f"| {cpu:.2f} | {mean:.6f} |")
    if args.skip_memory:
        return
    row = memory_run(args.memory_jobs)
    print("\n| jobs (default command) | seconds | jobs/s | peak RSS | measured | mean | "
          "p99 | p99.9 |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    print(f"| {row['jobs']:.0e} | {row['seconds']:.1f} | "
          f"{row['jobs'] / row['seconds'] / 1e6:.1f} M | {row['peak_rss_mb']:.0f} MB |"
          f" {row['measured']:,} | {row['mean']:.4f} | {row['p99']:.3f} | "
          f"{row['p999']:.3f} |")


if __name__ == "__main__":
    main()
