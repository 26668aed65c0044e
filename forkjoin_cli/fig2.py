"""``forkjoin-sim fig2``: the paper's Fig. 2, Theorem 3 against simulation."""

from __future__ import annotations

import os
import sys

from forkjoin_cli import types
from forkjoin_sim import checks as options
from validation.fig2 import (MAX_JOBS, OUTPUT_FILES, PAPER_SAMPLES, PAPER_SAMPLE_EVERY, QUICK_JOBS, doubt_lines, estimators_text, jobs_for_samples, run_fig2, summary_text, write_outputs)


def _cmd_fig2(args) -> int:
    import time

    options.check_output_dir(args.out, OUTPUT_FILES)
    jobs = args.jobs or (jobs_for_samples(PAPER_SAMPLES, PAPER_SAMPLE_EVERY) if args.paper
                         else QUICK_JOBS)
    options.check_jobs_fit(jobs, runs=args.workers or os.cpu_count() or 1)
    paper_jobs = jobs_for_samples(PAPER_SAMPLES, PAPER_SAMPLE_EVERY)
    if args.paper and args.jobs is not None and args.jobs < paper_jobs:
        kept = len(range(jobs // 10, jobs, PAPER_SAMPLE_EVERY))
        print(f"warning: --paper with --jobs {jobs:,} keeps {kept:,} samples per point "
              f"(every {PAPER_SAMPLE_EVERY}th after the warm-up), not the paper's "
              f"{PAPER_SAMPLES:,}: its protocol at a smaller size; leave --jobs out for "
              f"the paper's ({paper_jobs:,} jobs)", file=sys.stderr)
    started = time.perf_counter()
    table = run_fig2(jobs=args.jobs, paper=args.paper, workers=args.workers,
                     seed=args.seed, progress=True)
    seconds = time.perf_counter() - started
    csv_path, png_path = write_outputs(table, args.out)
    print(summary_text(table))
    print(estimators_text(table))
    print(f"simulated {len(table)} points in {seconds:.1f} s; wrote {csv_path} and "
          f"{png_path}")
    for line in doubt_lines(table):
        print(line, file=sys.stderr)
    return 0


def register(subparsers) -> None:
    """Add ``fig2`` to the ``forkjoin-sim`` sub-commands."""
    p = subparsers.add_parser(
        "fig2", help="reproduce the paper's Fig. 2 (Theorem 3 vs simulation)",
        description="Simulate the paper's 400-point grid (n in 3,5,7,9; r <= n in "
                    "3,5,7,9; k = 1..r; 8 loads; exponential service) and compare it "
                    "with Theorem 3. Writes OUT/fig2.csv and OUT/fig2.png and prints "
                    "where |error| exceeds 25%.")
    p.add_argument("--jobs", type=types.count(MAX_JOBS, "--jobs", low=2), default=None,
                   help=f"jobs per point, warm-up included (default {QUICK_JOBS:,}; "
                        f"with --paper, enough for {PAPER_SAMPLES:,} samples)")
    p.add_argument("--paper", action="store_true",
                   help="the paper's protocol: after a 10%% warm-up keep every 10th "
                        f"job, {PAPER_SAMPLES:,} samples per point "
                        f"({jobs_for_samples(PAPER_SAMPLES, PAPER_SAMPLE_EVERY):,} jobs)")
    p.add_argument("--out", default="results/fig2", help="output directory")
    p.add_argument("--workers", type=types.workers, default=None,
                   help="worker processes (default: one per CPU)")
    p.add_argument("--seed", type=types.seed, default=0, help="base seed of the sweep")
    p.set_defaults(handler=_cmd_fig2)
