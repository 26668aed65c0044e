"""Re-derive the three measurement files and ``runs_meta.csv`` from the README table of
github.com/george0st/cql-stress-mng.

Source: commit fa612ecac98d7fd443d9b2d2bb01de543ea872c6 (2024-12-08), ``README.md``,
section "Compare as text": tab-separated rows ``<cluster> write_<level>_<compaction>``,
then seven throughputs (op/s) and seven mean latencies (ms, decimal comma) for the
thread counts named in the row above them. Rows repeated for side-by-side comparison
are kept once. The newest commit (a1559ab803c4c85412a5957d890f3df7a3f5a37c, 2025-01-28)
still carries the STCS rows unchanged; ``--check-head`` confirms that too.

Usage (from the repository root)::

    .venv/bin/python docs/data/george0st_cassandra_stress/check.py \
        /work/.mirror/george0st+cql-stress-mng/repo                 # compare
    .venv/bin/python docs/data/george0st_cassandra_stress/check.py GITDIR --write

The argument is the git directory of a clone or of the ``fetch`` mirror (read with
``git show``, no work tree needed). Without ``--write`` the script rebuilds the tables in
memory and exits non-zero if they differ from the files next to it.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import pandas as pd

COMMIT = "fa612ecac98d7fd443d9b2d2bb01de543ea872c6"
HEAD = "a1559ab803c4c85412a5957d890f3df7a3f5a37c"
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from transcription import git_show  # noqa: E402 (the folder above)

# the README's cluster label and compaction -> the file its rows go to
FILES = {("v5", "STCS"): "cassandra5_stcs.csv",
         ("v5", "UCS4"): "cassandra5_ucs4.csv",
         ("v4", "STCS"): "cassandra4_stcs.csv"}
LABEL = re.compile(r"^(v[45]) (write|read)_(LOCAL_ONE|LOCAL_QUORUM)_(\w+)$")


def table_rows(readme: str) -> list[dict]:
    """Every distinct data row of the README's tab-separated tables."""
    rows, seen, threads = [], set(), None
    for number, line in enumerate(readme.splitlines(), start=1):
        cells = line.split("\t")
        if cells[0] == "Test case":
            threads = [int(c) for c in cells[1:]]
            continue
        match = LABEL.match(cells[0])
        if not match or line in seen:
            continue
        seen.add(line)
        count = len(threads) // 2
        assert threads[:count] == threads[count:], "throughput and latency thread lists differ"
        cluster, operation, level, compaction = match.groups()
        for i, thread in enumerate(threads[:count]):
            rows.append({"cluster": cluster, "compaction": compaction,
                         "operation": operation, "consistency": level, "threads": thread,
                         "throughput": int(cells[1 + i]),
                         "mean_ms": float(cells[1 + count + i].replace(",", ".")),
                         "readme_line": number, "test_case": cells[0]})
    return rows


def tables(gitdir: str) -> dict[str, pd.DataFrame]:
    """File name -> table, for the three measurement files and ``runs_meta.csv``."""
    rows = table_rows(git_show(gitdir, COMMIT, "README.md"))
    out, meta = {}, []
    for (cluster, compaction), name in FILES.items():
        mine = [r for r in rows if (r["cluster"], r["compaction"]) == (cluster, compaction)]
        out[name] = pd.DataFrame([{
            "operation": r["operation"], "consistency": r["consistency"],
            "threads": r["threads"], "rate": None, "throughput": r["throughput"],
            "mean_ms": r["mean_ms"], "read_fraction": 0.0} for r in mine])
        for r in mine:
            meta.append({"file": name, "test_case": r["test_case"],
                         "readme_line": r["readme_line"], "threads": r["threads"],
                         "throughput": r["throughput"], "mean_ms": r["mean_ms"],
                         # Little's law: the mean time per request cycle of one thread
                         "little_ms": round(1000.0 * r["threads"] / r["throughput"], 4)})
    out["runs_meta.csv"] = pd.DataFrame(meta)
    return out


def same_at_head(gitdir: str) -> bool:
    """Whether every row the newest README still shows equals the transcribed one."""
    old = {(r["test_case"], r["threads"]): r for r in
           table_rows(git_show(gitdir, COMMIT, "README.md"))}
    new = table_rows(git_show(gitdir, HEAD, "README.md"))
    keys = ("throughput", "mean_ms")
    return bool(new) and all(
        all(old[(r["test_case"], r["threads"])][k] == r[k] for k in keys) for r in new)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("gitdir", help="git directory of george0st/cql-stress-mng")
    parser.add_argument("--write", action="store_true", help="rewrite the CSV files")
    args = parser.parse_args()
    built = tables(args.gitdir)
    if args.write:
        for name, table in built.items():
            table.to_csv(HERE / name, index=False)
        return 0
    same = all(table.equals(pd.read_csv(HERE / name).astype(table.dtypes.to_dict()))
               for name, table in built.items())
    head = same_at_head(args.gitdir)
    print("tables match the README" if same else "MISMATCH",
          "| newest README agrees" if head else "| newest README DIFFERS")
    return 0 if same and head else 1


if __name__ == "__main__":
    raise SystemExit(main())
