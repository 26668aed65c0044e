"""``forkjoin-sim experiment NAME``: the experiments whose results are in docs/
(PBS's published staleness reproduced, staleness under load, the calibration
hold-out, Theorem 2's general bound for low-variance services). Each is a module of ``validation`` with a ``run(args)``."""

from __future__ import annotations

import argparse
import importlib
from pathlib import Path

from forkjoin_cli import types
from forkjoin_cli.arguments import SEED_HELP, _Parser


#: Files each experiment writes into its output directory.
_STALENESS_FILES = ("load.csv", "load_visibility.csv", "load.png", "load_latency.png",
                    "load_visibility.png")


#: The hold-out's scenarios (validation.calibration_holdout.SCENARIOS), by letter.
_SCENARIOS = "abc"


def _scenarios(text: str) -> str:
    """An argparse ``type=``: hold-out scenario letters from a, b, c, each once."""
    letters = text.strip().lower()
    unknown = sorted(set(letters) - set(_SCENARIOS))
    if not letters or unknown:
        wrong = ("names no scenario" if not letters else
                 f"has unknown letter(s) {', '.join(map(repr, unknown))}")
        raise argparse.ArgumentTypeError(
            f"--scenarios {text!r} {wrong}; use letters from a, b, c, e.g. abc or c")
    repeated = sorted({c for c in letters if letters.count(c) > 1})
    if repeated:
        raise argparse.ArgumentTypeError(
            f"--scenarios {text!r} names {repeated[0]!r} twice; give each scenario once, "
            f"e.g. {''.join(dict.fromkeys(letters))}")
    return letters


def _check_outputs(args) -> None:
    """Refuse an output place that cannot be written, before the work starts."""
    from forkjoin_sim.checks import check_input_file, check_output_dir, check_output_file

    if args.experiment == "staleness-load":
        check_output_dir(args.out_dir, _STALENESS_FILES, what="--out-dir")
        if args.plot_only:
            check_input_file(Path(args.out_dir) / "load.csv", "--plot-only's load.csv")
    elif args.experiment == "pbs-reproduction" and args.out is not None:
        check_output_file(args.out, "--out", suffixes=(".csv",))
    elif args.experiment == "theorem2-low-variance" and args.out is not None:
        check_output_file(args.out, "--out", suffixes=(".md",))
    elif args.experiment == "calibration-holdout":
        if args.write_synthetic is not None:
            check_output_file(args.write_synthetic, "--write-synthetic", suffixes=(".csv",))
        for path in args.files:
            check_input_file(path, "measurement file")


def _run(args) -> int:
    _check_outputs(args)
    return importlib.import_module(f"validation.{args.module}").run(args)


def register(subparsers) -> None:
    top = subparsers.add_parser("experiment", help="the experiments behind docs/")
    sub = top.add_subparsers(dest="experiment", required=True, parser_class=_Parser)

    p = sub.add_parser("staleness-load", help="staleness of partial quorums under load "
                       "(docs/staleness/load.md)")
    p.add_argument("--operations", type=types.whole(2, 10**9, "--operations"), default=400_000,
                        help="operations per queueing run (one run serves every pair)")
    p.add_argument("--wars-trials", type=types.whole(1, 10**9, "--wars-trials"),
                   default=400_000, help="trials of the load-free WARS model per pair "
                                         "(default 400,000)")
    p.add_argument("--seed", type=types.seed, default=2026, help=SEED_HELP)
    p.add_argument("--out-dir", default="docs/staleness",
                   help="where load.csv and the figures go (default docs/staleness)")
    p.add_argument("--plot-only", action="store_true",
                        help="redraw the figures from OUT_DIR/load.csv and "
                             "load_visibility.csv, simulating nothing")
    p.set_defaults(handler=_run, module="staleness_load")

    p = sub.add_parser("pbs-reproduction", help="PBS's published t-visibility, reproduced "
                       "(docs/staleness/pbs_reproduction.md)")
    p.add_argument("--trials", type=types.whole(1, 10**9, "--trials"), default=2_000_000,
                   help="WARS trials per configuration (default 2,000,000)")
    p.add_argument("--seed", type=types.seed, default=2012, help=SEED_HELP)
    p.add_argument("--out", help="write the comparison as CSV here")
    p.set_defaults(handler=_run, module="pbs_reproduction")

    p = sub.add_parser("calibration-holdout", help="calibration fitted on some rows, "
                       "judged on the others (docs/cassandra/calibration.md)")
    p.add_argument("files", nargs="*")
    p.add_argument("--write-synthetic", metavar="PATH",
                        help="write the synthetic 30-row file with known parameters "
                             "(always the same file, 'measured' with its own seed 99, "
                             "not --seed)")
    p.add_argument("--nodes", type=types.whole(1, 10**9, "--nodes"), default=3,
                   help="nodes of the measured cluster (default 3)")
    p.add_argument("--replicas", type=types.whole(1, 10**9, "--replicas"), default=3,
                   help="replication factor of the measured cluster (default 3)")
    p.add_argument("--scenarios", type=_scenarios, default=_SCENARIOS,
                   help="which hold-outs, letters from abc: (a) fit ONE, predict QUORUM "
                        "and ALL; (b) fit ONE and ALL, predict QUORUM; (c) fit the two "
                        "smallest thread counts, predict the larger")
    p.add_argument("--seed", type=types.seed, default=0, help=SEED_HELP)
    p.add_argument("--summary-only", action="store_true",
                        help="print only the MAPE table at the end")
    p.set_defaults(handler=_run, module="calibration_holdout")

    p = sub.add_parser("theorem2-low-variance", help="Theorem 2's general lower bound "
                       "against simulation for services less variable than the "
                       "exponential (docs/theorem2_low_variance.md)")
    p.add_argument("--jobs", type=types.whole(10_000, 10**9, "--jobs"), default=300_000,
                   help="jobs per simulated queue")
    p.add_argument("--seed", type=types.seed, default=0, help=SEED_HELP)
    p.add_argument("--out", help="also write the Markdown here (.md)")
    p.set_defaults(handler=_run, module="theorem2_low_variance")
