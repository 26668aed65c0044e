"""Theorems 1 and 2 and the Lemma, each checked against simulation.

Every check is two steps: a list of sweep-spec entries (the points it needs) and a
table built from the simulated rows. ``simulate_entries`` runs the entries of several
checks as one sweep, so shared points run once and the pool stays busy.

- Theorem 1 in the (r,r,k) queue is exact for any service distribution:
  ``T(r,r,k) = sum_i W(r,k,i) T(i,i,i)`` at the same per-node load.
- The Lemma ``T(n,r,k; rho) = T(r,r,k; r*rho/n)`` neglects the dependence between
  sub-queues; its gap is measured for r < n, random and ring placement.
- Theorem 2: lower bounds below the simulated mean; the upper bound
  ``T(k,k,k; r*rho/n)`` (simulated) and its Nelson estimate UpT above it.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import analytic
from forkjoin_sim.sweep.runner import SweepNote, sweep
from sizing.sweep_columns import annotate

#: Per-node loads and replica counts of the Theorem 1 check.
THEOREM1_LOADS = (0.5, 0.9)
THEOREM1_REPLICAS = (2, 3, 5, 7, 9)
#: The general service of the Theorem 2 check: lognormal with sigma = 1 (cv 1.31).
GENERAL_SERVICE = "lognormal:1"
#: Draws behind the empirical service of the Theorem 1 check, and their seed.
EMPIRICAL_DRAWS = 20_000
EMPIRICAL_SEED = 20190917
EMPIRICAL_SIGMA = 1.0


def write_empirical_samples(path) -> str:
    """Write lognormal draws (sigma 1, mean 1, fixed seed) to ``path``; its service spec.

    They stand in for measured latencies: the simulator resamples them as an
    ``Empirical`` distribution (``empirical:PATH``).
    """
    from forkjoin_sim.files.io import atomic_write

    rng = np.random.default_rng(EMPIRICAL_SEED)
    draws = rng.lognormal(mean=-EMPIRICAL_SIGMA ** 2 / 2, sigma=EMPIRICAL_SIGMA,
                          size=EMPIRICAL_DRAWS)
    path = Path(path).resolve()
    with atomic_write(path) as handle:
        handle.write("\n".join(f"{x:.9g}" for x in draws) + "\n")
    return f"empirical:{path}"


# --- running points ---------------------------------------------------------------

def _key(nodes, replicas, quorum, rho, service="exp", placement="random") -> tuple:
    return (int(nodes), int(replicas), int(quorum), round(float(rho), 12), str(service),
            str(placement))


class Results:
    """Simulated rows of a sweep, looked up by (n, r, k, rho, service, placement)."""

    def __init__(self, frame: pd.DataFrame):
        self.frame = frame
        self._rows = {_key(r.nodes, r.replicas, r.quorum, r.rho, r.service, r.placement):
                      r._asdict() for r in frame.itertuples(index=False)}

    def get(self, nodes, replicas, quorum, rho, service="exp", placement="random") -> dict:
        """The row of one point; KeyError if it was not simulated."""
        return self._rows[_key(nodes, replicas, quorum, rho, service, placement)]

    def mean_hw(self, *point, **where) -> tuple[float, float]:
        """Simulated mean and half-width of its confidence interval."""
        row = self.get(*point, **where)
        return row["mean"], (row["ci_high"] - row["ci_low"]) / 2


def simulate_entries(entries: list[dict], jobs: int, sample_every: int = 1,
                     seed: int = 0, workers: int | None = None,
                     progress: bool = True) -> Results:
    """Run the sweep-spec ``entries`` (a ``points`` list) as one sweep."""
    # one long run per point (the protocol the checks were written for), as before
    spec = {"points": entries, "jobs": jobs, "sample_every": sample_every, "seed": seed,
            "warmup": 0.1, "engine": "fast"}
    with warnings.catch_warnings():
        # the checks' grids skip k > r and list shared points twice, by design
        warnings.simplefilter("ignore", SweepNote)
        frame = sweep(spec, workers=workers, progress=progress, annotate=(annotate,))
    bad = frame[frame["status"] != "ok"]
    if len(bad):
        raise RuntimeError("points failed to simulate:\n" + "\n".join(
            f"({r.nodes},{r.replicas},{r.quorum}) rho={r.rho} {r.service}: {r.message}"
            for r in bad.itertuples()))
    return Results(frame)


# --- Theorem 1 ----------------------------------------------------------------------

def theorem1_entries(services: dict[str, str], loads=THEOREM1_LOADS,
                     replicas=THEOREM1_REPLICAS) -> list[dict]:
    """Points of the Theorem 1 check: (r,r,k) for k < r and every basic (i,i,i)."""
    entries = []
    for spec in services.values():
        for r in replicas:
            entries.append({"nodes": r, "replicas": r, "quorum": list(range(1, r)),
                            "rho": list(loads), "service": spec})
        for i in range(1, max(replicas) + 1):
            entries.append({"nodes": i, "replicas": i, "quorum": i, "rho": list(loads),
                            "service": spec})
    return entries


def combined_half_width(weights: dict[int, int], half_widths: dict[int, float],
                        own: float) -> float:
    """Half-width of ``sum_i W_i T_i - T`` from independent runs' half-widths."""
    return math.sqrt(sum((w * half_widths[i]) ** 2 for i, w in weights.items()) + own ** 2)


def theorem1_table(results: Results, services: dict[str, str], loads=THEOREM1_LOADS,
                   replicas=THEOREM1_REPLICAS) -> pd.DataFrame:
    """Simulated T(r,r,k) beside ``sum_i W(r,k,i) T(i,i,i)`` from separate runs.

    ``agrees`` is true when the difference lies within the combined half-width;
    ``z`` is the difference in units of its standard error (1.96 half-widths).
    ``abs_w_sum`` = sum |W(r,k,i)| is how much the alternating sum can amplify
    noise; ``noise_ratio`` is the expansion's half-width over the direct run's.
    """
    rows = []
    for label, spec in services.items():
        for load in loads:
            for r in replicas:
                for k in range(1, r):
                    direct, direct_hw = results.mean_hw(r, r, k, load, spec)
                    basic = {i: results.mean_hw(i, i, i, load, spec) for i in range(k, r + 1)}
                    weights = analytic.w_coefficients(r, k)
                    with warnings.catch_warnings():
                        # Rounding of float inputs is ~1e-13 here, far below the noise.
                        warnings.simplefilter("ignore", analytic.CancellationWarning)
                        expansion = analytic.expand_basic(r, k, {i: m for i, (m, _) in
                                                                basic.items()})
                    expansion_hw = combined_half_width(
                        weights, {i: hw for i, (_, hw) in basic.items()}, 0.0)
                    both = math.hypot(expansion_hw, direct_hw)
                    rows.append({
                        "service": label, "per_node_load": load, "r": r, "k": k,
                        "direct": direct, "direct_hw": direct_hw, "expansion": expansion,
                        "expansion_hw": expansion_hw, "combined_hw": both,
                        "difference": expansion - direct, "z": (expansion - direct) / (both / 1.96),
                        "agrees": abs(expansion - direct) <= both,
                        "abs_w_sum": sum(abs(w) for w in weights.values()),
                        "noise_ratio": expansion_hw / direct_hw})
    return pd.DataFrame(rows)


# --- the Lemma ----------------------------------------------------------------------

def lemma_cells(nodes, replicas) -> list[tuple[int, int, int]]:
    """The (n,r,k) cells with r < n of a grid."""
    return [(n, r, k) for n in nodes for r in replicas if r < n for k in range(1, r + 1)]


def lemma_entries(nodes, replicas, loads, placements=("random", "ring")) -> list[dict]:
    """Points of the Lemma check: (n,r,k) at rho, and (r,r,k) at r*rho/n."""
    entries = []
    for n, r, k in lemma_cells(nodes, replicas):
        entries.append({"nodes": n, "replicas": r, "quorum": k, "rho": list(loads),
                        "placement": list(placements)})
        entries.append({"nodes": r, "replicas": r, "quorum": k,
                        "rho": [r * rho / n for rho in loads]})
    return entries


def lemma_table(results: Results, nodes, replicas, loads,
                placements=("random", "ring")) -> pd.DataFrame:
    """The Lemma's relative gap ``T(n,r,k; rho) / T(r,r,k; r*rho/n) - 1`` per point.

    ``significant`` marks gaps whose difference exceeds the combined half-width.
    """
    rows = []
    for n, r, k in lemma_cells(nodes, replicas):
        for rho in loads:
            reduced, reduced_hw = results.mean_hw(r, r, k, r * rho / n)
            for placement in placements:
                full, full_hw = results.mean_hw(n, r, k, rho, placement=placement)
                both = math.hypot(full_hw, reduced_hw)
                rows.append({"n": n, "r": r, "k": k, "rho": rho, "placement": placement,
                             "per_node_load": r * rho / n, "full": full, "full_hw": full_hw,
                             "reduced": reduced, "reduced_hw": reduced_hw,
                             "gap": full / reduced - 1,
                             "significant": abs(full - reduced) > both})
    return pd.DataFrame(rows)


# --- Theorem 2 ----------------------------------------------------------------------

def theorem2_entries(nodes, replicas, loads, service: str) -> list[dict]:
    """Points of the Theorem 2 check: (n,r,k) at rho and the bound (k,k,k) at r*rho/n."""
    entries = []
    for n in nodes:
        for r in replicas:
            if r > n:
                continue
            entries.append({"nodes": n, "replicas": r, "quorum": list(range(1, r + 1)),
                            "rho": list(loads), "service": service})
            for k in range(1, r + 1):
                entries.append({"nodes": k, "replicas": k, "quorum": k,
                                "rho": [r * rho / n for rho in loads], "service": service})
    return entries


def theorem2_table(results: Results, nodes, replicas, loads, service: str) -> pd.DataFrame:
    """Theorem 2's bounds beside the simulated mean of every (n,r,k, rho) point.

    ``lower_general`` (any service) and, for exponential service, ``lower`` (LowT),
    ``lower_pk`` and the estimate ``upper`` (UpT). ``*_violated`` marks a bound on
    the wrong side of the whole CI; ``upper_sim`` is the simulated T(k,k,k; r*rho/n)
    and ``upper_sim_violated`` a mean above it by more than the combined half-width.
    """
    rows = []
    for n in nodes:
        for r in replicas:
            if r > n:
                continue
            for k in range(1, r + 1):
                for rho in loads:
                    row = results.get(n, r, k, rho, service)
                    bound, bound_hw = results.mean_hw(k, k, k, r * rho / n, service)
                    mean, hw = row["mean"], (row["ci_high"] - row["ci_low"]) / 2
                    out = {"n": n, "r": r, "k": k, "rho": rho, "service": service,
                           "per_node_load": r * rho / n, "sim_mean": mean,
                           "sim_ci_low": row["ci_low"], "sim_ci_high": row["ci_high"],
                           "lower_general": row["lower_general"],
                           "lower_general_violated": row["lower_general"] > row["ci_high"],
                           "upper_sim": bound, "upper_sim_hw": bound_hw,
                           "upper_sim_violated": mean - bound > math.hypot(hw, bound_hw)}
                    if "approx" in row and pd.notna(row.get("approx")):
                        for name in ("lower", "lower_pk"):
                            out[name] = row[name]
                            out[f"{name}_violated"] = bool(row[name] > row["ci_high"])
                        out["upper"] = row["upper"]
                        out["upper_exceeded"] = bool(row["ci_low"] > row["upper"])
                    rows.append(out)
    return pd.DataFrame(rows)
