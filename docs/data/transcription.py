"""The command line every ``check.py`` of a transcribed data set shares: rebuild
``runs.csv`` and ``runs_meta.csv`` from the source's raw files and compare them with the
committed ones (or rewrite them with ``--write``)."""

from __future__ import annotations

import argparse
import re
import subprocess
from pathlib import Path

import pandas as pd

#: A line of YCSB's end-of-run summary: ``[READ], AverageLatency(us), 812.3`` (indented
#: in some notes).
SUMMARY = re.compile(r"^\s*\[([A-Z-]+)\], ([^,]+), (-?[\d.]+)\s*$")


def git_show(gitdir: str, commit: str, path: str) -> str:
    """Text of ``path`` at ``commit`` in the git directory ``gitdir``."""
    return subprocess.run(["git", "--git-dir", gitdir, "show", f"{commit}:{path}"],
                          check=True, capture_output=True, text=True).stdout


def summary(text: str) -> dict[tuple[str, str], float]:
    """YCSB's end-of-run summary lines of ``text`` as {(operation, metric): value}."""
    found = {}
    for line in text.splitlines():
        match = SUMMARY.match(line)
        if match:
            found[(match[1], match[2])] = float(match[3])
    return found


def check(description: str, repository: str, tables, here: Path) -> int:
    """Exit status of the check: 0 when the rebuilt tables (``tables(gitdir)`` ->
    runs, meta) equal the files in ``here``, else 1."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("gitdir", help=f"git directory of {repository}")
    parser.add_argument("--write", action="store_true", help="rewrite the CSV files")
    args = parser.parse_args()
    runs, meta = tables(args.gitdir)
    if args.write:
        runs.to_csv(here / "runs.csv", index=False)
        meta.to_csv(here / "runs_meta.csv", index=False)
        return 0
    same = all(table.equals(pd.read_csv(here / name).astype(table.dtypes.to_dict()))
               for table, name in ((runs, "runs.csv"), (meta, "runs_meta.csv")))
    print("runs.csv and runs_meta.csv match the raw files" if same else "MISMATCH")
    return 0 if same else 1
