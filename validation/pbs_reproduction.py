"""PBS's published numbers next to our WARS Monte Carlo.

Reads the transcription ``docs/data/pbs_published.csv`` (Bailis et al., VLDB 2012),
simulates every configuration it names with ``forkjoin_sim.staleness`` and the
paper's own latency fits, and sets our estimate, its interval and the difference
beside each published value. Run ``forkjoin-sim experiment pbs-reproduction``.
"""

from __future__ import annotations

import math
import sys
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from forkjoin_sim.files.io import atomic_write
from forkjoin_sim.staleness import exponential_profile, profile, simulate_wars

PUBLISHED = Path(__file__).resolve().parents[1] / "docs" / "data" / "pbs_published.csv"
#: Tolerances of the reproduction: P(consistent) in absolute terms, latencies
#: relative to the published value.
PROBABILITY_TOLERANCE, LATENCY_TOLERANCE = 0.01, 0.05
_LATENCY = {"read_latency_p99.9_ms": ("read", 99.9), "write_latency_p99.9_ms": ("write", 99.9),
            "read_latency_p50_ms": ("read", 50.0), "write_latency_p50_ms": ("write", 50.0)}


def quantile_of(metric: str) -> float | None:
    """The quantile a metric's interval is an order-statistic interval of (None: a
    proportion, whose interval is always defined)."""
    if metric in _LATENCY:
        return _LATENCY[metric][1] / 100
    if metric.startswith("t_visibility_p") and metric.endswith("_ms"):
        return float(metric.removeprefix("t_visibility_p").removesuffix("_ms"))
    return None


def trials_for_interval(quantile: float, confidence: float = 0.95) -> int:
    """Fewest trials whose sample defines both bounds of the distribution-free
    interval of ``quantile`` (``scipy.stats.quantile_test``): with fewer, even the
    sample's largest (smallest) value has more than (1 - confidence)/2 chance of
    lying below (above) the quantile, and the bound is nan."""
    tail = (1 - confidence) / 2
    return math.ceil(max(math.log(tail) / math.log(quantile),
                         math.log(tail) / math.log1p(-quantile)))


def published() -> pd.DataFrame:
    """The transcribed published values, one row per number."""
    return pd.read_csv(PUBLISHED, comment="#")


def laws_of(name: str):
    """The WARS laws of a profile named in the CSV: a production fit, or
    ``EXP-W<rate>`` for the synthetic sweep."""
    if name.upper().startswith("EXP-W"):
        return exponential_profile(float(name[5:]))
    return profile(name)


def seed_of(name: str, replicas: int, read_quorum: int, write_quorum: int,
            base: int) -> np.random.SeedSequence:
    """A seed per configuration, fixed by its name (not by the CSV's row order)."""
    key = zlib.crc32(f"{name}/{replicas}/{read_quorum}/{write_quorum}".encode())
    return np.random.SeedSequence([base, key])


def reproduce(rows: pd.DataFrame, trials: int, base_seed: int = 2012,
              confidence: float = 0.95) -> pd.DataFrame:
    """``rows`` with columns ``ours``, ``ours_low``, ``ours_high``, ``difference``
    (ours - published: absolute for probabilities, relative for times) and
    ``within`` (the tolerance test: 1 point plus the published rounding for
    probabilities, 5% for latencies, our interval reaching a published lower bound;
    empty for t-visibility, which has no tolerance here)."""
    out = []
    keys = ["profile", "replicas", "read_quorum", "write_quorum"]
    for (name, n, r, w), group in rows.groupby(keys, sort=False):
        result = simulate_wars(laws_of(name), int(n), int(r), int(w), trials=trials,
                               seed=seed_of(name, n, r, w, base_seed))
        for _, row in group.iterrows():
            out.append({**row.to_dict(), **_estimate(result, row, confidence)})
    return pd.DataFrame(out)


def _estimate(result, row, confidence) -> dict:
    value, metric = float(row["value"]), row["metric"]
    if metric == "p_consistent":
        t = 0.0 if pd.isna(row["t_ms"]) else float(row["t_ms"])
        ci = result.consistency(t, confidence).iloc[0]
        ours, low, high = ci.probability, ci.low, ci.high
        difference = ours - value
        # "41%" stands for 40.5..41.5%: the tolerance adds the published rounding.
        allowed = PROBABILITY_TOLERANCE + (0.0 if pd.isna(row["uncertainty"])
                                           else float(row["uncertainty"]))
        within = abs(difference) <= allowed if row["relation"] == "=" else None
        if row["relation"] in (">", ">="):
            within = bool(high >= value)  # our interval reaches the published bound
    elif metric in _LATENCY:
        kind, percentile = _LATENCY[metric]
        table = result.latency_percentiles([percentile], confidence).iloc[0]
        ours, low, high = table[kind], table[f"{kind}_low"], table[f"{kind}_high"]
        difference = ours / value - 1
        within = abs(difference) <= LATENCY_TOLERANCE
    elif metric == "t_visibility_p0.999_ms":
        ours = result.visibility_time(0.999)
        interval = stats.quantile_test(result.waits, p=0.999).confidence_interval(confidence)
        low, high = max(interval.low, 0.0), max(interval.high, 0.0)
        difference = ours / value - 1 if value > 0 else ours - value
        within = None
    else:
        raise ValueError(f"unknown metric {metric!r} in {PUBLISHED}")
    if not (np.isfinite(low) and np.isfinite(high)):
        within = None  # too few trials for the interval: no verdict (see `markdown`)
    return {"ours": float(ours), "ours_low": float(low), "ours_high": float(high),
            "difference": float(difference), "within": within}


def markdown(table: pd.DataFrame) -> str:
    """The comparison as a Markdown table."""
    lines = ["| profile | N | R | W | metric | t (ms) | paper | source | ours | 95% interval "
             "| difference | within |", "|" + "---|" * 12]
    for _, row in table.iterrows():
        probability = row["metric"] == "p_consistent"
        number = _percent if probability else (lambda x: f"{x:.4g}")

        def fmt(x, number=number):
            return "undefined" if pd.isna(x) else number(x)
        if probability:
            difference = f"{100 * row['difference']:+.2f} pp"
        elif row["metric"].startswith("t_visibility") and row["value"] == 0:
            difference = f"{row['difference']:+.3g} ms"
        else:
            difference = f"{100 * row['difference']:+.1f}%"
        undefined = pd.isna(row["ours_low"]) or pd.isna(row["ours_high"])
        within = {True: "yes", False: "**no**"}.get(row["within"], "")
        if undefined and not row["metric"].startswith("t_visibility"):
            within = "undetermined"
        t = "" if pd.isna(row["t_ms"]) else f"{row['t_ms']:g}"
        paper = f"{row['relation'] if row['relation'] != '=' else ''}{fmt(row['value'])}"
        lines.append(f"| {row['profile']} | {row['replicas']} | {row['read_quorum']} | "
                     f"{row['write_quorum']} | {row['metric']} | {t} | {paper} | "
                     f"{row['source']} | {fmt(row['ours'])} | [{fmt(row['ours_low'])}, "
                     f"{fmt(row['ours_high'])}] | {difference} | {within} |")
    return "\n".join(lines)


def _percent(x: float) -> str:
    # Enough digits to show a bound such as 99.99999%.
    return f"{100 * x:.2f}%" if x < 0.999 else f"{100 * x:.5f}%"


def short_of_trials(rows: pd.DataFrame, trials: int,
                    confidence: float = 0.95) -> tuple[int, int]:
    """(rows whose interval ``trials`` leave undefined, trials that define them all)."""
    need = {metric: trials_for_interval(q, confidence) for metric in rows.metric.unique()
            if (q := quantile_of(metric)) is not None}
    short = [metric for metric, n in need.items() if trials < n]
    return int(rows.metric.isin(short).sum()), max(need.values(), default=1)


def run(args) -> int:
    """Run the experiment with the options of ``forkjoin-sim experiment pbs-reproduction``."""
    rows = published()
    short, enough = short_of_trials(rows, args.trials)
    if short:
        print(f"warning: --trials {args.trials:,} is too few for the 95% intervals of "
              f"{short} of {len(rows)} rows (percentiles such as the 99.9th); their "
              f"bounds are undefined, and those with a verdict (not the t-visibility "
              f"rows) say 'undetermined'; --trials {enough:,} or more defines them",
              file=sys.stderr)
    table = reproduce(rows, args.trials, args.seed)
    if args.out:
        with atomic_write(args.out, newline="") as handle:
            table.to_csv(handle, index=False, float_format="%.6g")
    print(markdown(table))
    return 0
