"""Closed-form estimators of the (n,r,k) mean sojourn time, refereed by simulation.

Two referee tables, both cached as CSV under ``docs/data/`` so that the accuracy
numbers in ``docs/estimators.md`` can be recomputed without simulating:

- the *paper-size* table: the 400 points of the paper's Fig. 2, one simulation per
  point at the paper's size (10% warm-up, then every 10th job: 100,000 measured
  jobs), exactly as ``forkjoin-sim fig2 --paper`` runs them;
- the *long* table: one long run per (nodes, replicas, load) whose sample path serves
  every quorum at once (the non-purging queue does not depend on the quorum, so the
  k-th smallest task completion of each job is the (n,r,k) sojourn for every k).
  Its length grows like ``1/(1-q)^2`` with the node load ``q``, because the
  relative error of a mean sojourn estimate grows like ``1/(1-q)``: at the paper's
  size the 95% interval of a q = 0.95 point is about +-6%, too wide to referee a 5%
  target.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np
import pandas as pd

#: Jobs of a long referee run: ``LONG_JOBS_SCALE / (1 - q)^2``, within the limits.
LONG_JOBS_SCALE = 400_000
LONG_JOBS_MIN = 4_000_000
LONG_JOBS_MAX = 160_000_000
#: Off-grid runs are wider (r up to 15), so shorter: scale/(1-q)^2 up to the cap.
OFFGRID_JOBS_SCALE = 200_000
OFFGRID_JOBS_MAX = 40_000_000
#: Jobs per group whose mean is kept (the batch-means interval uses group means).
GROUP_JOBS = 1024
from forkjoin_sim.run import BLOCK_JOBS  # noqa: E402  (whole blocks of the run loop)
from validation.paper_grid import paper_grid  # noqa: E402,F401  (the grid, re-exported)


def offgrid_configs() -> list[tuple[int, int, float]]:
    """(nodes, replicas, load) of the off-grid check: up to 20 nodes and 15 replicas.

    Node loads ``q = r*rho/n`` of 0.3, 0.6, 0.8, 0.9 and 0.95 for each (n, r).
    Every quorum of each is measured.
    """
    shapes = [(4, 2), (4, 4), (6, 6), (8, 4), (10, 2), (10, 10), (12, 6), (12, 12),
              (15, 5), (15, 15), (20, 4), (20, 10), (20, 15)]
    return [(n, r, q * n / r) for n, r in shapes for q in (0.3, 0.6, 0.8, 0.9, 0.95)]


def cassandra_configs() -> list[tuple[int, int, float]]:
    """(6, 3, rho) at node loads 0.1 .. 0.95: the (6,3,k) clusters of Cassandra users."""
    return [(6, 3, q * 2) for q in (0.1, 0.3, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95)]


# ---------------------------------------------------------------------------
# Long table (one run per (n, r, rho), every quorum from the same sample path)
# ---------------------------------------------------------------------------

def long_jobs(nodes: int, replicas: int, load: float, scale: int = LONG_JOBS_SCALE,
              cap: int = LONG_JOBS_MAX) -> int:
    """Jobs of a long referee run at node load ``q = r*rho/n``: ``scale/(1-q)^2``.

    At least ``LONG_JOBS_MIN`` (and ``cap`` at most), rounded up to whole blocks.
    """
    q = replicas * load / nodes
    jobs = min(cap, max(LONG_JOBS_MIN, scale / (1 - q) ** 2))
    return int(math.ceil(jobs / BLOCK_JOBS)) * BLOCK_JOBS


def _config_seed(seed: int, nodes: int, replicas: int, load: float):
    return np.random.SeedSequence([seed, nodes, replicas, int(round(load * 1e9))])


def quorum_sweep(nodes: int, replicas: int, load: float, jobs: int, seed: int = 0,
                 warmup: float = 0.1, on_jobs: Callable[[int], None] | None = None
                 ) -> list[dict]:
    """Mean sojourn of the non-purging (nodes, replicas, k) queue for every quorum k.

    One exponential-service sample path (random placement) of ``jobs`` jobs; the
    first ``warmup`` fraction (whole blocks) is dropped, every later job measured.
    Means of consecutive groups of ``GROUP_JOBS`` jobs are kept and given to the
    batch-means interval, which equals the interval on the jobs themselves.
    ``on_jobs(count)`` is told the jobs of each block as it is simulated (progress
    within the run). Returns one row per quorum: ``n, r, k, rho, sim_mean,
    sim_ci_low, sim_ci_high, jobs, sample_every``.
    """
    from forkjoin_sim.engines import FastEngine
    from forkjoin_sim.model import ForkJoinModel
    from forkjoin_sim.run import run_path
    from forkjoin_sim.randomness.samplepath import PathSampler
    from forkjoin_sim.measure.statistics import SojournRecorder, batch_means_ci

    model = ForkJoinModel(nodes, replicas, replicas, load=load)
    sampler = PathSampler(model.system, model.arrival_process,
                          _config_seed(seed, nodes, replicas, load))
    blocks = max(2, -(-jobs // BLOCK_JOBS))
    skip = int(math.ceil(warmup * blocks))
    recorder = SojournRecorder(blocks * BLOCK_JOBS, warmup_jobs=skip * BLOCK_JOBS,
                               columns=replicas, group=GROUP_JOBS)
    def observe(path, completions, _):
        if on_jobs is not None:
            on_jobs(path.jobs)
        return np.sort(completions, axis=1) - path.arrivals[:, None]

    run_path(sampler, FastEngine(nodes), blocks * BLOCK_JOBS, recorder, nodes,
             observe=observe, track_busy=False)
    groups = recorder.measured()["values"].reshape(-1, replicas)
    rows = []
    for k in range(1, replicas + 1):
        mean, low, high = batch_means_ci(groups[:, k - 1])
        rows.append({"n": nodes, "r": replicas, "k": k, "rho": load, "sim_mean": mean,
                     "sim_ci_low": low, "sim_ci_high": high,
                     "jobs": blocks * BLOCK_JOBS, "sample_every": 1})
    return rows


#: The jobs this worker process has simulated, shared with the process that made the
#: pool (set by `_share_counter`; None in the main process).
_jobs_done = None
#: Seconds between two looks of the parent at the workers' count of jobs.
PROGRESS_POLL_SECONDS = 0.5


def _share_counter(counter) -> None:
    """Pool initializer: this worker adds its simulated jobs to ``counter``."""
    global _jobs_done
    _jobs_done = counter


def _count_jobs(count: int) -> None:
    with _jobs_done.get_lock():
        _jobs_done.value += count


def _quorum_sweep_task(args):
    return quorum_sweep(*args, on_jobs=None if _jobs_done is None else _count_jobs)


def referee_tasks(configs, seed: int = 0, scale: int = LONG_JOBS_SCALE,
                  cap: int = LONG_JOBS_MAX) -> list[tuple]:
    """The runs of a long table: ``(nodes, replicas, load, jobs, seed)``, longest
    first (lengths from :func:`long_jobs`)."""
    return sorted(((n, r, rho, long_jobs(n, r, rho, scale, cap), seed)
                   for n, r, rho in configs), key=lambda t: -t[3] * t[1])


def referee_jobs(configs, scale: int = LONG_JOBS_SCALE, cap: int = LONG_JOBS_MAX) -> int:
    """The jobs a long table simulates in all (a progress bar's total)."""
    return sum(task[3] for task in referee_tasks(configs, 0, scale, cap))


def long_table(configs, seed: int = 0, workers: int = 2, scale: int = LONG_JOBS_SCALE,
               cap: int = LONG_JOBS_MAX,
               on_jobs: Callable[[int], None] | None = None) -> pd.DataFrame:
    """Long referee runs of ``(nodes, replicas, load)`` configurations, every quorum.

    Lengths from :func:`long_jobs` (``scale``, ``cap``); the longest runs start first.
    ``on_jobs(count)`` is told the jobs simulated as the runs go (a progress bar's
    ``update``; with several workers, every `PROGRESS_POLL_SECONDS`), so that a run
    of minutes shows its progress, not only its end.
    """
    tasks = referee_tasks(configs, seed, scale, cap)
    if workers == 1:
        rows = [row for task in tasks for row in quorum_sweep(*task, on_jobs=on_jobs)]
    else:
        rows = _pool_rows(tasks, workers, on_jobs)
    return pd.DataFrame(rows).sort_values(["n", "r", "k", "rho"]).reset_index(drop=True)


def _pool_rows(tasks, workers: int, on_jobs) -> list[dict]:
    """The rows of ``tasks`` run on ``workers`` processes, in the tasks' order."""
    import multiprocessing
    from concurrent.futures import FIRST_EXCEPTION, wait

    from forkjoin_sim.sweep.runner import process_pool

    counter = multiprocessing.Value("q", 0)
    told = 0
    # workers that end with the command (Ctrl-C, SIGTERM, or a killed parent)
    # instead of running on for minutes
    with process_pool(workers, _share_counter, (counter,)) as pool:
        futures = [pool.submit(_quorum_sweep_task, task) for task in tasks]
        pending = set(futures)
        while pending:
            done, pending = wait(pending, timeout=PROGRESS_POLL_SECONDS,
                                 return_when=FIRST_EXCEPTION)
            for future in done:
                future.result()  # a failed run stops the table now
            now = counter.value
            if on_jobs is not None and now > told:
                on_jobs(now - told)
                told = now
    return [row for future in futures for row in future.result()]


# ---------------------------------------------------------------------------
# Comparison
# ---------------------------------------------------------------------------

def with_estimates(referee: pd.DataFrame, mu: float = 1.0) -> pd.DataFrame:
    """``referee`` plus, per estimator, its value and ``err_<name> = APP/SIM - 1``."""
    from analytic.estimators import ESTIMATORS

    out = referee.copy()
    for name, estimator in ESTIMATORS.items():
        values = [estimator(int(n), int(r), int(k), float(rho), mu)
                  for n, r, k, rho in zip(out["n"], out["r"], out["k"], out["rho"])]
        out[name] = values
        out[f"err_{name}"] = out[name] / out["sim_mean"] - 1
    out["sim_rel_halfwidth"] = (out["sim_ci_high"] - out["sim_ci_low"]) / (2 * out["sim_mean"])
    return out


def accuracy(compared: pd.DataFrame) -> pd.DataFrame:
    """Per estimator: max and mean |APP/SIM - 1|, the worst point, share within 5%.

    ``inside_ci`` is the share of points whose estimate lies inside the simulation's
    95% interval.
    """
    from analytic.estimators import ESTIMATORS

    rows = []
    for name in ESTIMATORS:
        err = compared[f"err_{name}"]
        worst = err.abs().idxmax()
        w = compared.loc[worst]
        inside = (compared[name] >= compared["sim_ci_low"]) & (
            compared[name] <= compared["sim_ci_high"])
        rows.append({"estimator": name, "points": len(err),
                     "max_abs_err": float(err.abs().max()),
                     "mean_abs_err": float(err.abs().mean()),
                     "within_5pct": float((err.abs() <= 0.05).mean()),
                     "inside_ci": float(inside.mean()),
                     "worst": f"({int(w.n)},{int(w.r)},{int(w.k)}) rho={w.rho:g}: "
                              f"{err[worst]:+.1%}"})
    return pd.DataFrame(rows).set_index("estimator")


def accuracy_markdown(table: pd.DataFrame) -> str:
    """An :func:`accuracy` table as Markdown (percentages), for docs/estimators.md."""
    lines = ["| estimator | points | max abs err | mean abs err | within 5% | in sim CI "
             "| worst point |", "|---|---:|---:|---:|---:|---:|---|"]
    for name, row in table.iterrows():
        lines.append(f"| {name} | {row.points} | {row.max_abs_err:.1%} | "
                     f"{row.mean_abs_err:.2%} | {row.within_5pct:.1%} | "
                     f"{row.inside_ci:.0%} | {row.worst} |")
    return "\n".join(lines)


def error_figure(panels: dict, out) -> None:
    """Save a figure of the estimators' errors: one panel per referee table.

    ``panels`` maps a title to a :func:`with_estimates` frame. Each panel shows, per
    estimator, the share of points (y) whose ``|APP/SIM - 1|`` is at most x
    (log scale), with the 5% target marked.
    """
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from analytic.estimators import ESTIMATORS

    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 4.2),
                             squeeze=False, sharey=True)
    for ax, (title, compared) in zip(axes[0], panels.items()):
        for name in ESTIMATORS:
            err = np.sort(compared[f"err_{name}"].abs().to_numpy())
            err = np.maximum(err, 1e-5)
            share = np.arange(1, err.size + 1) / err.size
            ax.step(err, share, where="post", label=name)
        ax.axvline(0.05, color="grey", linestyle="--", linewidth=0.8)
        ax.set_xscale("log")
        ax.set_xlim(1e-4, 3)
        ax.set_xlabel("|APP/SIM - 1|")
        ax.set_title(f"{title} ({len(compared)} points)")
        ax.grid(True, which="major", alpha=0.3)
    axes[0][0].set_ylabel("share of points with error <= x")
    axes[0][-1].legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    from forkjoin_sim.files.io import atomic_save
    atomic_save(out, fig.savefig, dpi=120)
    plt.close(fig)
