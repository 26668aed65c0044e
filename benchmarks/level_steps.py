"""What the highest level costs a lone request on each published cluster, and how well
it carries over from the others in time, as a ratio to ONE, or midway.

For every single-region data set of `cassandra_heldout.data_sets` (Karpenko D's level
cost is its inter-region round trips, fitted from its own input), the full fit of all
its rows (vague prior, the default structure) gives a lone request's latency at ONE
and its step to ALL. A level-step prior with scale s carries log(step) - s log(ONE)
over from other clusters (`sizing.network_fit.Prior.level_step_scale`): here each data
set's step is predicted from the mean of that quantity over the level sources
(`cassandra_heldout.LEVEL_SOURCES`) of the *other* clusters (reads and writes pooled,
where the prior keeps one mean per operation), its own ONE given, and the log error
is reported per data set and as rms over the level sources, over the data sets that
are not level sources (saulolks), and over all.

Usage::

    .venv/bin/python benchmarks/level_steps.py [--scales 0,0.5,1] [--out FILE.md]
"""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cassandra_heldout as heldout  # noqa: E402  (the data sets and their full fits)

STRUCTURE = "lanes"


def lone(job):
    """(data set, lone ONE ms, lone step to ALL ms) of one data set's full fit."""
    name, data = job
    point = heldout.full_fit((name, STRUCTURE, data))[2][0]
    step, one = heldout.unloaded_step(data, point, STRUCTURE)
    # one operation per data set: its first (ONE, ALL) pair
    return name, float(np.exp(one[0])), float(np.exp(step[0]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", default="0,0.5,1")
    parser.add_argument("--out", help="also write the markdown here")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    scales = [float(s) for s in args.scales.split(",")]
    sets = heldout.data_sets()
    names = [n for n, data in sets.items() if data[4] == (None,)]
    with ProcessPoolExecutor(args.workers) as pool:
        found = {n: (one, step) for n, one, step in pool.map(lone, [(n, sets[n])
                                                                     for n in names])}
    one = np.log([found[n][0] for n in names])
    step = np.log([found[n][1] for n in names])
    source = np.array([n in heldout.LEVEL_SOURCES for n in names])
    lines = ["| data set | lone ONE (ms) | step to ALL (ms) | step / ONE | "
             + " | ".join(f"error, scale {s:g}" for s in scales) + " |",
             "|---|---|---|---|" + "---|" * len(scales)]
    errors = np.empty((len(scales), len(names)))
    for j, scale in enumerate(scales):
        for i, name in enumerate(names):
            cluster = sets[name][0]
            others = [k for k, n in enumerate(names)
                      if source[k] and sets[n][0] != cluster]
            carried = np.mean(step[others] - scale * one[others])
            errors[j, i] = carried + scale * one[i] - step[i]
    for i, name in enumerate(names):
        lines.append(f"| {name} | {np.exp(one[i]):.2f} | {np.exp(step[i]):.2f} | "
                     f"{np.exp(step[i] - one[i]):.2f} | "
                     + " | ".join(f"{errors[j, i]:+.2f}" for j in range(len(scales)))
                     + " |")
    lines.append("")
    lines.append("Error: log of the carried-over step over the fitted one (the mean of "
                 "log(step) - scale log(ONE) over the level sources of the other "
                 "clusters). rms:")
    for j, scale in enumerate(scales):
        def rms(mask):
            return float(np.sqrt(np.mean(errors[j, mask] ** 2)))
        lines.append(f"- scale {scale:g}: level sources {rms(source):.2f}, others "
                     f"{rms(~source):.2f}, all {rms(np.ones(len(names), bool)):.2f}")
    text = "\n".join(lines) + "\n"
    heldout.publish(text, args.out)


if __name__ == "__main__":
    main()
