"""The paper's Fig. 2: Theorem 3's estimate (APP) against simulation (SIM).

The grid is the paper's: n in {3,5,7,9}, r in {3,5,7,9} with r <= n, k = 1..r (50
(n,r,k) cells) times eight loads, exponential service with mu = 1, random placement:
400 points. ``error = approx/sim_mean - 1``, as in the paper.
"""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from analytic.estimators import ESTIMATORS
from forkjoin_sim.files.io import atomic_group, atomic_save
from forkjoin_sim.sweep.runner import SweepNote, sweep
from sizing.sweep_columns import annotate
from validation.estimators import accuracy, error_figure, with_estimates

from validation.paper_grid import (LOADS, NODES, PAPER_SAMPLE_EVERY,  # noqa: F401
                                   PAPER_SAMPLES, REPLICAS, WARMUP, jobs_for_samples)

#: The quick default: jobs per point, every job measured. 400 points take about a
#: minute on 2 cores; see docs/validation.md for the measured time.
QUICK_JOBS = 200_000
#: Largest --jobs per point: 400 points of this many jobs is already days of work.
MAX_JOBS = 10 ** 9
#: |error| above which the paper calls an estimate poor.
ERROR_THRESHOLD = 0.25

COLUMNS = ["n", "r", "k", "rho", "per_node_load", "sim_mean", "sim_ci_low",
           "sim_ci_high", "nelson", "lower", "upper", "approx", "error"]
EXTRA_COLUMNS = ["error_ci_low", "error_ci_high", "lower_pk", "jobs_measured",
                 "sample_every", "sim_warnings", "sim_doubts"]
#: Per estimator of ``analytic.estimators``: its value and ``err_<name> = APP/SIM - 1``.
ESTIMATOR_COLUMNS = [c for name in ESTIMATORS for c in (name, f"err_{name}")]


def grid_spec(jobs: int, sample_every: int = 1, seed: int = 0, service: str = "exp",
              nodes=None, replicas=None, loads=None) -> dict:
    """The sweep spec of the Fig. 2 grid (k > r combinations are skipped by ``expand``).

    ``nodes``, ``replicas`` and ``loads`` default to the paper's (``NODES``,
    ``REPLICAS``, ``LOADS``, read at call time).
    """
    nodes, replicas = nodes or NODES, replicas or REPLICAS
    loads = loads or LOADS
    return {"nodes": list(nodes), "replicas": list(replicas),
            "quorum": list(range(1, max(replicas) + 1)), "rho": list(loads),
            "service": service, "placement": "random", "warmup": WARMUP,
            "sample_every": sample_every, "jobs": jobs, "seed": seed,
            # the paper's protocol: one long run per point, exact percentiles
            "engine": "fast"}


def paper_size_table(workers: int = 2, seed: int = 2019) -> pd.DataFrame:
    """The 400 Fig. 2 points simulated by ``forkjoin-sim fig2 --paper``; the columns
    of :func:`validation.estimators.long_table` (the paper-size referee table)."""
    table = run_fig2(paper=True, workers=workers, seed=seed, progress=False)
    jobs = jobs_for_samples(PAPER_SAMPLES, PAPER_SAMPLE_EVERY)
    return table[["n", "r", "k", "rho", "sim_mean", "sim_ci_low", "sim_ci_high",
                  "sample_every"]].assign(jobs=jobs)


def failed_points(frame: pd.DataFrame) -> list[str]:
    """One line per point of a sweep frame that did not simulate."""
    if "status" not in frame:
        return []
    bad = frame[frame["status"] != "ok"]
    return [f"({r.nodes},{r.replicas},{r.quorum}) rho={r.rho}: {r.message}"
            for r in bad.itertuples()]


def warnings_text(value) -> str:
    """A sweep row's simulation warnings (or doubts) as one line ("" when there are
    none)."""
    if isinstance(value, str):
        try:
            value = ast.literal_eval(value) if value.strip() else []
        except (ValueError, SyntaxError):
            return value
    if isinstance(value, (list, tuple)):
        return "; ".join(map(str, value))
    return ""


def fig2_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The Fig. 2 table (``COLUMNS`` then ``EXTRA_COLUMNS``) from an annotated sweep."""
    ok = frame[frame["status"] == "ok"] if "status" in frame else frame
    table = pd.DataFrame({
        "n": ok["nodes"].astype(int), "r": ok["replicas"].astype(int),
        "k": ok["quorum"].astype(int), "rho": ok["rho"].astype(float),
        "per_node_load": ok["replicas"] * ok["rho"] / ok["nodes"],
        "sim_mean": ok["mean"], "sim_ci_low": ok["ci_low"], "sim_ci_high": ok["ci_high"],
        "nelson": ok["nelson"], "lower": ok["lower"], "upper": ok["upper"],
        "approx": ok["approx"]})
    table["error"] = table["approx"] / table["sim_mean"] - 1
    table["error_ci_low"] = table["approx"] / ok["ci_high"] - 1
    table["error_ci_high"] = table["approx"] / ok["ci_low"] - 1
    table["lower_pk"] = ok["lower_pk"]
    table["jobs_measured"] = ok["jobs_measured"]
    table["sample_every"] = ok["sample_every"]
    table["sim_warnings"] = [warnings_text(w) for w in ok["warnings"]]
    # the warnings that doubt the point's interval: all but a note that it is wide
    table["sim_doubts"] = [warnings_text(w) for w in ok["doubts"]]
    table = table.sort_values(["n", "r", "k", "rho"]).reset_index(drop=True)
    # One value and one error column per closed-form estimator (issue 8).
    return with_estimates(table).drop(columns="sim_rel_halfwidth")


def run_fig2(jobs: int | None = None, paper: bool = False, workers: int | None = None,
             seed: int = 0, progress: bool = True) -> pd.DataFrame:
    """Simulate the Fig. 2 grid and return its table.

    ``paper=True`` follows the paper's protocol (every 10th job after warm-up,
    100,000 samples per point); otherwise every job of ``jobs`` (default
    ``QUICK_JOBS``) after warm-up is measured.
    """
    if paper:
        sample_every = PAPER_SAMPLE_EVERY
        jobs = jobs or jobs_for_samples(PAPER_SAMPLES, PAPER_SAMPLE_EVERY)
    else:
        sample_every, jobs = 1, jobs or QUICK_JOBS
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SweepNote)  # the grid's k > r, skipped by design
        frame = sweep(grid_spec(jobs, sample_every, seed), workers=workers,
                      progress=progress, annotate=(annotate,))
    failures = failed_points(frame)
    if failures:
        raise RuntimeError("Fig. 2 points failed to simulate:\n" + "\n".join(failures))
    return fig2_table(frame)


# --- the summary ------------------------------------------------------------------

def doubted_and_wide(table: pd.DataFrame) -> tuple[int, int]:
    """Points of a Fig. 2 table whose run doubts its own interval (``sim_doubts``),
    and points whose only notes say that their interval is wide.

    A wide point's error is known within bounds (``error_ci_low/high``); a doubted
    point's is not.
    """
    doubted = table["sim_doubts"] != ""
    wide = (table["sim_warnings"] != "") & ~doubted
    return int(doubted.sum()), int(wide.sum())


def doubt_lines(table: pd.DataFrame) -> list[str]:
    """What a Fig. 2 table's runs doubt (`doubted_and_wide`), as the lines a command
    prints: a warning for points whose errors are not to be trusted, a note for
    points known only within wide bounds."""
    from forkjoin_sim.simulation import WIDE_INTERVAL

    suspect, wide = doubted_and_wide(table)
    lines = []
    if suspect:
        lines.append(f"warning: {suspect} of {len(table)} points carry convergence "
                     "warnings (their sim_warnings column says which and how many jobs "
                     "they need); their errors are not to be trusted: run more --jobs")
    if wide:
        lines.append(f"note: {wide} of {len(table)} points have 95% intervals wider "
                     f"than +-{100 * WIDE_INTERVAL:g}% (error_ci_low and error_ci_high "
                     "bound their errors; sim_warnings says how many jobs would narrow "
                     "them)")
    return lines


def quorum_class(k: int, r: int) -> str:
    """Where k sits relative to r: the paper's "small k" is k < r/2."""
    if k == 1:
        return "k=1"
    if 2 * k < r:
        return "1<k<r/2"
    if k < r:
        return "r/2<=k<r"
    return "k=r"


QUORUM_CLASSES = ("k=1", "1<k<r/2", "r/2<=k<r", "k=r")


def error_breakdown(table: pd.DataFrame, threshold: float = ERROR_THRESHOLD) -> pd.DataFrame:
    """Counts of points with |error| > threshold, by load (rows) and quorum class."""
    classes = [quorum_class(k, r) for k, r in zip(table["k"], table["r"])]
    big = table["error"].abs() > threshold
    counts = pd.crosstab(table["rho"], pd.Categorical(classes, QUORUM_CLASSES),
                         values=big.astype(int), aggfunc="sum", dropna=False)
    totals = pd.crosstab(table["rho"], pd.Categorical(classes, QUORUM_CLASSES),
                         dropna=False)
    cells = counts.fillna(0).astype(int).astype(str) + "/" + totals.astype(str)
    cells.columns = [str(c) for c in cells.columns]
    cells["all"] = [f"{int(big[table['rho'] == rho].sum())}/{int((table['rho'] == rho).sum())}"
                    for rho in cells.index]
    return cells


def error_summary(table: pd.DataFrame, threshold: float = ERROR_THRESHOLD) -> dict:
    """Headline numbers of the Fig. 2 comparison, set against the paper's claim.

    The paper says |error| > 25% happens only under heavy load (rho > 0.8) with small
    k (k < r/2). ``outside_claim`` counts points that break that sentence; ``robust``
    counts large errors whose whole CI-derived error interval lies beyond the threshold.
    """
    err = table["error"].abs()
    big = err > threshold
    claimed = (table["rho"] > 0.8) & (2 * table["k"] < table["r"])
    robust = big & (np.minimum(table["error_ci_low"].abs(), table["error_ci_high"].abs())
                    > threshold) & (np.sign(table["error_ci_low"])
                                    == np.sign(table["error_ci_high"]))
    worst = table.loc[err.idxmax()]
    return {
        "points": int(len(table)),
        "mean_abs_error": float(err.mean()),
        "median_abs_error": float(err.median()),
        "max_abs_error": float(err.max()),
        "worst_point": (int(worst.n), int(worst.r), int(worst.k), float(worst.rho),
                        float(worst.error)),
        "over_threshold": int(big.sum()),
        "over_threshold_robust": int(robust.sum()),
        "in_claimed_region": int(claimed.sum()),
        "over_in_claimed_region": int((big & claimed).sum()),
        "outside_claim": int((big & ~claimed).sum()),
        "outside_claim_points": [
            (int(r.n), int(r.r), int(r.k), float(r.rho), float(r.error))
            for r in table[big & ~claimed].itertuples()],
        "over_estimates": int((big & (table["error"] > 0)).sum()),
        "under_estimates": int((big & (table["error"] < 0)).sum()),
    }


def summary_text(table: pd.DataFrame, threshold: float = ERROR_THRESHOLD) -> str:
    """The printed Fig. 2 summary: counts, where they are, and the verdict on the claim."""
    s = error_summary(table, threshold)
    pct = f"{threshold:.0%}"
    lines = [
        f"Fig. 2: {s['points']} points; |error| mean {s['mean_abs_error']:.1%}, "
        f"median {s['median_abs_error']:.1%}, max {s['max_abs_error']:.1%} at "
        f"(n,r,k)=({s['worst_point'][0]},{s['worst_point'][1]},{s['worst_point'][2]}) "
        f"rho={s['worst_point'][3]:g} (error {s['worst_point'][4]:+.1%})",
        f"|error| > {pct}: {s['over_threshold']} points "
        f"({s['over_estimates']} over-, {s['under_estimates']} under-estimates; "
        f"{s['over_threshold_robust']} beyond {pct} across the whole simulation CI)",
        f"count with |error| > {pct} / points, by load rho and quorum k relative to "
        f"replicas r:",
        error_breakdown(table, threshold).to_string(),
        "by per-node load r*rho/n: " + ", ".join(
            f"{band}: {int(g.sum())}/{len(g)}" for band, g in
            (table["error"].abs() > threshold).groupby(
                pd.cut(table["per_node_load"], [0, 0.3, 0.6, 0.8, 1.0]),
                observed=True)),
        f"Paper: errors exceed {pct} only for rho > 0.8 and small k (k < r/2). In that "
        f"region {s['over_in_claimed_region']} of {s['in_claimed_region']} points exceed "
        f"{pct}; outside it {s['outside_claim']} points do.",
    ]
    if s["outside_claim"]:
        shown = ", ".join(f"({n},{r},{k}) rho={rho:g} {e:+.0%}"
                          for n, r, k, rho, e in s["outside_claim_points"][:12])
        more = len(s["outside_claim_points"]) - 12
        lines.append("The simulation DISAGREES with the paper's sentence: large errors "
                     f"also occur outside rho > 0.8, k < r/2: {shown}"
                     + (f" and {more} more" if more > 0 else ""))
    else:
        lines.append("The simulation agrees with the paper's sentence: every error "
                     f"beyond {pct} lies in rho > 0.8 with k < r/2.")
    return "\n".join(lines)


# --- the figure -------------------------------------------------------------------

def plot_fig2(table: pd.DataFrame, path, threshold: float = ERROR_THRESHOLD) -> None:
    """Fig. 2 as in the paper: (n,r,k) cells along x, one series per load.

    Top panel: simulated mean (markers, with CI bars) and Theorem 3's estimate (line)
    on a log scale. Bottom panel: error = APP/SIM - 1 in percent.
    """
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cells = table[["n", "r", "k"]].drop_duplicates().sort_values(["n", "r", "k"])
    position = {tuple(c): i for i, c in enumerate(cells.itertuples(index=False))}
    x_of = np.array([position[(n, r, k)] for n, r, k in
                     zip(table["n"], table["r"], table["k"])])
    loads = sorted(table["rho"].unique())
    colours = plt.get_cmap("viridis")(np.linspace(0, 0.95, len(loads)))

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(16, 9), sharex=True,
                                      gridspec_kw={"height_ratios": [3, 2]})
    for rho, colour in zip(loads, colours):
        sel = (table["rho"] == rho).to_numpy()
        order = np.argsort(x_of[sel])
        xs, sub = x_of[sel][order], table[sel].iloc[order]
        yerr = np.vstack([sub["sim_mean"] - sub["sim_ci_low"],
                          sub["sim_ci_high"] - sub["sim_mean"]])
        label = f"rho={rho:g}"
        for (n, r), group in sub.groupby(["n", "r"], sort=False):
            g = (sub["n"] == n).to_numpy() & (sub["r"] == r).to_numpy()
            top.plot(xs[g], group["approx"], "-", color=colour, lw=1.2)
            bottom.plot(xs[g], 100 * group["error"], "-", color=colour, lw=1.0)
        top.errorbar(xs, sub["sim_mean"], yerr=yerr, fmt="o", ms=3.5, color=colour,
                     mfc="none", elinewidth=0.8, label=label)
        bottom.plot(xs, 100 * sub["error"], "o", ms=3, color=colour)

    top.set_yscale("log")
    top.set_ylabel("mean sojourn time T(n,r,k) (units of 1/mu)")
    top.set_title("Theorem 3 estimate vs simulation, exponential service, mu = 1, "
                  "random placement, non-purging")
    handles, labels = top.get_legend_handles_labels()
    from matplotlib.lines import Line2D
    handles += [Line2D([], [], color="grey", marker="o", mfc="none", ls="none"),
                Line2D([], [], color="grey", ls="-")]
    labels += ["SIM: simulated\nmean, 95% CI", "APP: Theorem 3,\nmin(max(NelsonT,\nLowT), UpT)"]
    fig.legend(handles, labels, fontsize=8, loc="upper left", bbox_to_anchor=(0.875, 0.93),
               title="load rho (colour)", title_fontsize=8)

    bottom.axhline(0, color="black", lw=0.6)
    for sign in (1, -1):
        bottom.axhline(100 * sign * threshold, color="red", ls="--", lw=0.8)
    bottom.set_ylabel("error = APP/SIM - 1 (%)")
    bottom.text(0.995, 0.02, f"dashed: +-{threshold:.0%}", transform=bottom.transAxes,
                ha="right", va="bottom", fontsize=8, color="red")

    # Group separators and labels: one block per (n, r), ticks at k.
    bounds = cells.reset_index(drop=True).groupby(["n", "r"]).apply(
        lambda g: (g.index.min(), g.index.max()), include_groups=False)
    for (n, r), (lo, hi) in bounds.items():
        for ax in (top, bottom):
            ax.axvline(lo - 0.5, color="grey", lw=0.5)
        top.text((lo + hi) / 2, 1.0, f"n={n}\nr={r}", transform=top.get_xaxis_transform(),
                 ha="center", va="bottom", fontsize=8)
    bottom.set_xticks(range(len(cells)))
    bottom.set_xticklabels([str(k) for k in cells["k"]], fontsize=7)
    bottom.set_xlabel("quorum k, grouped by nodes n and replicas r (labels above the "
                      "top panel)")
    bottom.set_xlim(-0.7, len(cells) - 0.3)
    top.set_title(top.get_title(), pad=28)
    fig.tight_layout(rect=(0, 0, 0.87, 1))
    atomic_save(path, fig.savefig, dpi=130)
    plt.close(fig)


def estimators_text(table: pd.DataFrame) -> str:
    """Max and mean |APP/SIM - 1| of every estimator on the simulated points."""
    rows = accuracy(table)
    return "estimators, |APP/SIM - 1| max / mean: " + ", ".join(
        f"{name} {row.max_abs_err:.1%} / {row.mean_abs_err:.2%}"
        for name, row in rows.iterrows())


#: The files ``write_outputs`` writes into its directory.
OUTPUT_FILES = ("fig2.csv", "fig2.png", "fig2_estimators.png")


def write_outputs(table: pd.DataFrame, out_dir, group=None) -> tuple[Path, Path]:
    """Write ``fig2.csv``, ``fig2.png`` and ``fig2_estimators.png`` into ``out_dir``;
    the paths of the first two.

    The three files appear together or not at all (an interrupt while plotting leaves
    the old ones); pass an :func:`~forkjoin_sim.files.io.atomic_group` as ``group`` to commit
    them with other files.
    """
    out_dir = Path(out_dir)
    csv_path, png_path, errors_path = (out_dir / name for name in OUTPUT_FILES)
    if group is None:
        with atomic_group() as group:
            return write_outputs(table, out_dir, group)
    with group.open(csv_path) as handle:
        table[COLUMNS + EXTRA_COLUMNS + ESTIMATOR_COLUMNS].to_csv(
            handle, index=False, float_format="%.9g")
    plot_fig2(table, group.path(png_path))
    error_figure({"Fig. 2 grid": table}, group.path(errors_path))
    return csv_path, png_path
