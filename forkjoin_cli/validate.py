"""``forkjoin-sim validate``: every theorem of the paper against simulation, as a report."""

from __future__ import annotations

import sys
from pathlib import Path

from forkjoin_cli import types
from forkjoin_sim import checks as options
from validation.report import (ASSET_FILES, DEFAULT_OUT, EMPIRICAL_FILE, SIZES, fig2, run_checks, write_report)


def _command_line(args) -> str:
    """The ``forkjoin-sim validate`` invocation that ``args`` stands for."""
    words = ["forkjoin-sim validate"]
    words += ["--docs"] if args.docs else [f"--out {args.out or DEFAULT_OUT}"]
    words += ["--paper"] if args.paper else ["--quick"] if args.quick else []
    if args.seed:
        words.append(f"--seed {args.seed}")
    return " ".join(words)


def _cmd_validate(args) -> int:
    size = "paper" if args.paper else "quick" if args.quick else "default"
    if args.docs and args.out is not None:
        from forkjoin_sim.errors import ConfigError
        raise ConfigError("--docs writes docs/validation.md and docs/figures/; drop "
                          "--out, or drop --docs to write elsewhere")
    if args.docs:
        md_path, assets = Path("docs/validation.md"), Path("docs/figures")
    else:
        md_path = Path(args.out or DEFAULT_OUT) / "report.md"
        assets = Path(args.out or DEFAULT_OUT)
    options.check_output_dir(assets, (*ASSET_FILES, EMPIRICAL_FILE))
    options.check_output_dir(md_path.parent, (md_path.name,))
    checks = run_checks(size, assets, args.workers, args.seed,
                        progress=True)
    write_report(checks, md_path, assets, _command_line(args))
    print(fig2.summary_text(checks["fig2"]))
    print(f"{checks['points']} points in {checks['seconds']:.0f} s; wrote {md_path}")
    for line in fig2.doubt_lines(checks["fig2"]):
        print(f"Fig. 2: {line}", file=sys.stderr)
    return 0


def register(subparsers) -> None:
    """Add ``validate`` to the ``forkjoin-sim`` sub-commands."""
    p = subparsers.add_parser(
        "validate", help="check Theorems 1-3 and the Lemma by simulation; write a report",
        description="Simulate every check (Theorem 1 in (r,r,k) for four services, the "
                    "Lemma gap with random and ring placement, Theorem 2's bounds for "
                    "exponential and lognormal service, Theorem 3 as Fig. 2) and write "
                    "OUT/report.md with CSVs and figures.")
    p.add_argument("--out", default=None,
                   help=f"output directory (default {DEFAULT_OUT}; not with --docs)")
    size = p.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true",
                      help=f"{SIZES['quick']['jobs']:,} jobs per point (a smoke test)")
    size.add_argument("--paper", action="store_true",
                      help="the paper's protocol for every point: 10%% warm-up, every "
                           f"10th job, {fig2.PAPER_SAMPLES:,} samples")
    p.add_argument("--docs", action="store_true",
                   help="write docs/validation.md and docs/figures/ (instead of --out); "
                        "the committed report is `forkjoin-sim validate --paper --docs`")
    p.add_argument("--workers", type=types.workers, default=None,
                   help="worker processes (default: one per CPU)")
    p.add_argument("--seed", type=types.seed, default=0, help="base seed of the sweep")
    p.set_defaults(handler=_cmd_validate)
