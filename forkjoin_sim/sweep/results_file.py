"""The results file of a sweep: a journal while it runs, resumable, final.

While a sweep runs, each finished point's row is appended and flushed to the
journal ``<out>.partial.csv``, a valid CSV after every row; ``out`` itself, if an
earlier run wrote it, is left as it was. A resumed sweep reads back the rows of
the points that finished. At the end ``out`` is replaced atomically by the file in
grid order and the journal removed, so an interrupted sweep never loses or
half-writes ``out``, and an interrupted and resumed sweep leaves the same file as
an uninterrupted one.
"""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

from forkjoin_sim.errors import ConfigError
from forkjoin_sim.sweep.points import KEY_COLUMNS, LEGACY_ENGINE, REPLAY_COLUMNS, _plain

OUT_FORMATS = (".csv", ".parquet")
#: A setting that changes a row but not the point's identity: whether the analytic
#: columns were computed. ``--resume`` refuses a file written with the other setting.
SETTINGS_COLUMN = "analytic"


# ---------------------------------------------------------------------------
# The results file
# ---------------------------------------------------------------------------

def cell_text(value) -> str:
    """The CSV text of a value; ``repr`` of floats so that they read back exactly."""
    value = _plain(value)
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value, default=str)
    # One physical line per row: a truncated last line is then easy to recognise.
    return str(value).replace("\r", " ").replace("\n", " ")


def _identity_value(text: str):
    """A cell's value for matching a file row to a point (text from CSV or parquet)."""
    if text in ("", "nan", "None"):
        return None
    if text in ("True", "False"):
        return text == "True"
    try:
        return float(text)
    except ValueError:
        return text


def row_identity(cells: dict) -> tuple:
    return tuple(_identity_value(cells.get(c, "")) for c in KEY_COLUMNS)


def point_identity(point: dict) -> tuple:
    return row_identity({k: cell_text(v) for k, v in point.items()})


def _csv_line(values: list[str]) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerow(values)
    return buffer.getvalue()


def journal_path(out: Path) -> Path:
    """Where rows are appended as they finish: a CSV beside ``out``, never ``out``
    itself (which keeps an earlier run's results until this one is complete)."""
    return out.with_name(out.name + ".partial.csv")


def journaled(out: Path) -> int:
    """How many whole rows the journal of ``out`` holds (0 when there is none)."""
    journal = journal_path(out)
    try:
        return len(_read_csv_rows(journal)) if journal.exists() else 0
    except Exception:  # not a journal this command wrote: it holds no finished point
        return 0


def resume_source(out: Path) -> Path | None:
    """The file ``--resume`` reads the finished rows from, None if there is none.

    The journal of an interrupted run when there is one (it begins with every row
    that run resumed from, so it holds all that finished), otherwise ``out`` itself:
    a finished file, or the CSV an older version appended to in place.
    """
    for path in (journal_path(out), out):
        if path.exists():
            return path
    return None


def _read_csv_rows(path: Path) -> list[dict]:
    """Rows of a results CSV as dicts of cell text; a truncated last line is dropped."""
    text = path.read_text(encoding="utf-8")
    if not text:
        return []
    if not text.endswith("\n"):
        text = text[: text.rfind("\n") + 1]  # interrupted mid-row
    lines = list(csv.reader(io.StringIO(text)))
    if not lines:
        return []
    header, body = lines[0], lines[1:]
    missing = [c for c in KEY_COLUMNS if c not in header]
    if missing:
        raise ConfigError(f"{path} is not a sweep results file (no column(s) "
                          f"{', '.join(missing)}); use another --out or drop --resume")
    rows = []
    for number, values in enumerate(body, start=2):
        if len(values) != len(header):
            raise ConfigError(f"{path} line {number} has {len(values)} fields, the header "
                              f"{len(header)}; the file was edited or is not a sweep's: "
                              "use another --out or drop --resume")
        rows.append({c: v for c, v in zip(header, values) if v != ""})
    return rows


def _read_parquet_rows(path: Path) -> list[dict]:
    import pandas as pd

    frame = pd.read_parquet(path)
    return [{c: cell_text(v) for c, v in row.items()
             if not (v is None or (isinstance(v, float) and math.isnan(v)))}
            for row in frame.to_dict(orient="records")]


class Journal:
    """The results file while a sweep runs: a valid CSV after every appended row.

    Rows are dicts of cell text. A row with a column the header lacks rewrites the
    file atomically with the wider header (rare: the first row of each kind).
    """

    def __init__(self, path: Path, rows: list[dict]):
        self.path = path
        self.rows = list(rows)
        self.header = [*KEY_COLUMNS, *REPLAY_COLUMNS, "status", "message",
                       SETTINGS_COLUMN]
        self._handle = None
        for row in self.rows:
            self._widen(row)
        self._rewrite()

    def _widen(self, row: dict) -> bool:
        new = [c for c in row if c not in self.header]
        self.header += new
        return bool(new)

    def _rewrite(self) -> None:
        from forkjoin_sim.files.io import atomic_write

        self.close()
        with atomic_write(self.path, encoding="utf-8", newline="") as handle:
            if self.header:
                handle.write(_csv_line(self.header))
            for row in self.rows:
                handle.write(_csv_line([row.get(c, "") for c in self.header]))
        self._handle = open(self.path, "a", encoding="utf-8", newline="")

    def add(self, row: dict) -> None:
        self.rows.append(row)
        if self._widen(row):
            self._rewrite()
        else:
            # One write per row, then flush: an interrupt leaves whole rows only.
            self._handle.write(_csv_line([row.get(c, "") for c in self.header]))
            self._handle.flush()

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


def _columns(rows: list[dict]) -> list[str]:
    """Key columns, replay columns, status, message, the settings column, then the
    rest by first appearance in ``rows``."""
    columns = {c: None for c in (*KEY_COLUMNS, *REPLAY_COLUMNS, "status", "message",
                                 SETTINGS_COLUMN)}
    for row in rows:
        columns.update(dict.fromkeys(c for c in row if c not in columns))
    return list(columns)


def rows_frame(rows: list[dict]):
    """The DataFrame a results CSV of ``rows`` reads back as."""
    import pandas as pd

    columns = _columns(rows)
    text = _csv_line(columns) + "".join(_csv_line([r.get(c, "") for c in columns])
                                         for r in rows)
    return pd.read_csv(io.StringIO(text))


def write_final(out: Path, rows: list[dict]) -> None:
    from forkjoin_sim.files.io import atomic_save, atomic_write

    if out.suffix.lower() == ".csv":
        columns = _columns(rows)
        with atomic_write(out, encoding="utf-8", newline="") as handle:
            handle.write(_csv_line(columns))
            for row in rows:
                handle.write(_csv_line([row.get(c, "") for c in columns]))
    else:
        atomic_save(out, lambda tmp: rows_frame(rows).to_parquet(tmp, index=False))


def check_results_path(out, inputs=(), what: str = "results file") -> Path:
    """``out`` as a results file that can be written (checked before any work), none
    of ``inputs`` (e.g. the sweep spec); ``what`` names it in messages."""
    from forkjoin_sim.checks import check_output_file
    from forkjoin_sim.files.io import check_parquet_writer

    check_output_file(out, what, suffixes=tuple(OUT_FORMATS), inputs=inputs)
    out = Path(out)
    check_output_file(journal_path(out), "results journal", inputs=inputs)
    check_parquet_writer(out)
    return out


def file_rows(out: Path) -> list[dict]:
    """The rows an earlier run left for ``out`` (see `resume_source`), as dicts of
    cell text; none when there is no such file."""
    source = resume_source(out)
    if source is None:
        return []
    read = _read_parquet_rows if source.suffix.lower() == ".parquet" else _read_csv_rows
    try:
        return read(source)
    except Exception as exc:  # not UTF-8, binary, a damaged parquet file ...
        raise ConfigError(f"cannot resume from {source}: it is not a results file "
                          f"this command wrote ({type(exc).__name__}); move it "
                          "away or run without --resume") from None


def _sets_engine(spec: dict) -> bool:
    entries = spec.get("points")
    return "engine" in spec or (isinstance(entries, (list, tuple)) and any(
        isinstance(entry, dict) and "engine" in entry for entry in entries))


def resumed_spec(spec: dict, out: Path) -> tuple[dict, str | None]:
    """The spec that resumes ``out``, and a note when it is not ``spec`` itself.

    A spec that sets no engine runs engine "auto"; a results file whose every row has
    engine "fast" was written when that was the default (or by a spec that named it).
    Its points then resume on "fast", with the identities, seeds and numbers they
    had, rather than being refused as another sweep's.
    """
    if _sets_engine(spec):
        return spec, None
    rows = file_rows(out)
    if not rows or any(row.get("engine") != LEGACY_ENGINE for row in rows):
        return spec, None
    return {**spec, "engine": LEGACY_ENGINE}, (
        f"{out} was written with engine \"{LEGACY_ENGINE}\" (the default before "
        f"\"auto\"), which the spec leaves unset: resuming with engine = "
        f"\"{LEGACY_ENGINE}\"; add that line to the spec to say so")


#: A finished row's statistics: a resumed row whose cells here do not read as numbers
#: (a file edited or damaged by hand) is run again, not copied into the results.
RESULT_NUMBERS = ("mean", "ci_low", "ci_high", "p50", "p90", "p95", "p99", "p999",
                  "jobs_measured", "warmup_dropped", "batches", "batch_lag1",
                  "throughput", "throughput_ci_low", "throughput_ci_high",
                  "utilisation_mean", "utilisation_max", "per_node_load")


def _numbers_intact(row: dict) -> bool:
    """Whether each statistic a row gives reads as a number (its mean a finite one)."""
    for column in RESULT_NUMBERS:
        text = row.get(column, "")
        if text == "":
            continue
        try:
            value = float(text)
        except ValueError:
            return False
        if column == "mean" and not math.isfinite(value):
            return False
    return True


def done_rows(out: Path, order: dict, annotate: bool | None = None) -> dict:
    """Rows of an earlier run of this sweep that finished, by point identity.

    With ``annotate`` given, a row written with the other analytic setting is refused
    (rows from before the setting was recorded are accepted).
    """
    rows = file_rows(out)
    done = {}
    foreign = 0
    for row in rows:
        made = row.get(SETTINGS_COLUMN)
        if annotate is not None and made is not None and made != str(bool(annotate)):
            made_with = "without" if made == "False" else "with"
            raise ConfigError(f"{out} was written {made_with} the analytic columns "
                              f"({'--no-analytic' if made == 'False' else 'no --no-analytic'}"
                              "); resume with the same options, or write to another file")
        identity = row_identity(row)
        if identity not in order:
            foreign += 1
        elif (row.get("status") == "ok" and row.get("mean", "") != ""
              and row.get("run_seed", "") != "" and _numbers_intact(row)):
            # failed points, rows cut short before their statistics, and rows of a
            # version whose point seeds no simulate --seed gives (no run_seed) run
            # again: the file is then the one an uninterrupted sweep writes
            done.setdefault(identity, row)
    if foreign:
        raise ConfigError(f"{foreign} row(s) of {resume_source(out)} are not points of "
                          "this sweep (another spec, seed or jobs?); resume with the "
                          "spec that wrote it, or write to another file")
    return done
