"""Empirical service times: the distribution of measured latencies, resampled.

``Empirical`` is built from samples (``from_samples``) or a latency file
(``from_file``: one number per line, a CSV column, or YCSB raw measurements) and
answers like a frozen scipy.stats distribution (``rvs``, ``mean``, ``moment``,
``var``, ``std``, ``cdf``, ``ppf``), so a model takes it wherever it takes scipy.
"""

from __future__ import annotations

import csv
import math
import os
from pathlib import Path
from typing import Any

import numpy as np
from scipy import special

from forkjoin_sim.errors import ConfigError
from forkjoin_sim.checks import plain_float

#: Seconds per unit, for ``from_file(unit=..., to=...)``.
UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
#: File formats ``from_file`` reads.
FORMATS = ("lines", "csv", "ycsb")
SMOOTHINGS = (None, "kde")

_YCSB_HINT = "YCSB raw measurement lines look like OPERATION,timestamp,latency"


class Empirical:
    """The distribution of measured latencies: resampling the data, optionally smoothed.

    Without smoothing this is the empirical distribution of the samples: ``rvs``
    draws them uniformly with replacement, and ``mean``/``moment`` are the exact
    sample moments. With ``smoothing="kde"`` a draw is a resampled value plus
    Gaussian noise of standard deviation ``bandwidth`` (Silverman's rule of thumb,
    ``0.9 * min(std, IQR/1.349) * n**(-1/5)``), reflected at 0 (``|x + h Z|``) so
    times stay >= 0. Smoothing changes the distribution slightly: the second moment
    grows by exactly ``bandwidth**2`` (reflection does not change squares), the mean
    grows by the reflected mass near 0. ``mean``, ``moment``, ``cdf`` and ``ppf``
    always describe the distribution ``rvs`` samples, exactly (closed forms for
    the Gaussian mixture; ``ppf`` by bisection on ``cdf`` when smoothed).

    Parameters
    ----------
    samples : array_like, 1-D
        Measured latencies: finite, >= 0, at least one > 0.
    smoothing : None or "kde"
    source : str, optional
        Where the samples came from (a file name), for labels.
    """

    def __init__(self, samples: Any, *, smoothing: str | None = None,
                 source: str | None = None) -> None:
        if smoothing not in SMOOTHINGS:
            raise ConfigError(f"smoothing {smoothing!r} is unknown; use None (resample "
                              "the data) or 'kde' (add Gaussian kernel noise)")
        data = _validated(samples)
        data.sort()
        data.flags.writeable = False
        self._sorted = data
        self.smoothing = smoothing
        self.source = source
        self.bandwidth = _silverman_bandwidth(data) if smoothing == "kde" else 0.0
        self._moments: dict[int, float] = {}

    @classmethod
    def from_samples(cls, samples: Any, smoothing: str | None = None) -> Empirical:
        """The empirical distribution of ``samples`` (see the class docstring)."""
        return cls(samples, smoothing=smoothing)

    @classmethod
    def from_file(cls, path: str | os.PathLike, *, format: str | None = None,
                  column: str | int | None = None, operation: str | None = None,
                  unit: str | None = None, to: str | None = None,
                  smoothing: str | None = None) -> Empirical:
        """The empirical distribution of the latencies in a text file.

        Formats (``format=None`` detects one from the first data line; giving
        ``column`` implies "csv", giving ``operation`` implies "ycsb"):

        - ``"lines"``: one number per line (detected when the first data line is
          a number; a first line that is a word is read as a one-column CSV header).
        - ``"csv"``: comma separated, latencies in one column; ``column`` is a header
          name (``"latency_ms"``) or a 0-based index (``2`` is the third column).
          A first row with any non-numeric field is a header. A single-column file
          needs no ``column``.
        - ``"ycsb"``: YCSB raw measurements (``measurementtype=raw``), lines
          ``OPERATION,timestamp,latency`` such as ``INSERT,1539325438000,1234``;
          ``operation`` (case-insensitive) selects one; it may be omitted when the
          file holds one operation. Summary lines (``[INSERT], AverageLatency(us),
          ...``) and ``... latency raw data: ...`` headers are skipped. YCSB writes
          latencies in microseconds.

        Blank lines and lines starting with ``#`` are skipped in every format.

        ``unit`` is the unit of the numbers in the file and ``to`` the unit wanted
        (each one of "s", "ms", "us", "ns"); values are multiplied by
        ``UNITS[unit] / UNITS[to]``; ``unit`` without ``to`` is refused (it would
        convert nothing).

        Raises ``ConfigError`` naming the file (and the 1-based line, for a bad
        value): missing or unreadable file, no latencies, a value that is not a
        number, NaN, infinite or negative, all values 0, a missing column, an
        operation the file does not hold.
        """
        name = os.fspath(path)
        factor = _unit_factor(unit, to)
        lines = _read_lines(name)
        if format is None:
            format = ("csv" if column is not None else "ycsb" if operation is not None
                      else _detect_format(lines))
        if operation is not None and format != "ycsb":
            raise ConfigError(f"{name}: operation={operation} picks an operation of YCSB "
                              f"raw output, but the file is read as {format}; drop "
                              "operation (or column, which makes it a CSV)")
        if format == "lines":
            linenos, tokens, hint = _lines_tokens(name, lines)
        elif format == "csv":
            linenos, tokens, hint = _csv_tokens(name, lines, column)
        elif format == "ycsb":
            linenos, tokens, hint = _ycsb_tokens(name, lines, operation)
        else:
            raise ConfigError(f"format {format!r} is unknown; use one of "
                              f"{', '.join(FORMATS)} or None to detect it")
        values = _latencies(name, linenos, tokens, hint)
        return cls(values * factor, smoothing=smoothing, source=Path(name).name)

    @property
    def samples(self) -> np.ndarray:
        """The measured latencies, sorted ascending (read-only)."""
        return self._sorted

    def rvs(self, size: int | tuple[int, ...] | None = None,
            random_state: Any = None) -> Any:
        """Draw ``size`` service times (a float when ``size`` is None).

        ``random_state`` is a ``numpy.random.Generator`` (or a seed for one, or a
        legacy ``RandomState``), as in scipy.stats.
        """
        rng = random_state
        if not isinstance(rng, (np.random.Generator, np.random.RandomState)):
            rng = np.random.default_rng(rng)
        count = len(self._sorted)
        if isinstance(rng, np.random.Generator):
            index = rng.integers(0, count, size=size)
        else:
            index = rng.randint(0, count, size=size)
        draws = self._sorted[index]
        if self.bandwidth > 0:
            draws = np.abs(draws + self.bandwidth * rng.standard_normal(size=size))
        return draws

    def mean(self) -> float:
        """Mean of the distribution (the sample mean when not smoothed)."""
        return self.moment(1)

    def moment(self, order: int) -> float:
        """E[X**order], exactly (the sample moment when not smoothed)."""
        if not isinstance(order, (int, np.integer)) or isinstance(order, bool) or order < 0:
            raise ConfigError(f"moment order must be a whole number >= 0, got {order!r}")
        order = int(order)
        if order not in self._moments:
            if self.bandwidth > 0:
                value = _reflected_mixture_moment(self._sorted, self.bandwidth, order)
            else:
                value = float(np.mean(self._sorted ** order))
            self._moments[order] = value
        return self._moments[order]

    def var(self) -> float:
        """Variance (population form: ``moment(2) - mean()**2``)."""
        return max(self.moment(2) - self.mean() ** 2, 0.0)

    def std(self) -> float:
        """Standard deviation."""
        return math.sqrt(self.var())

    def cdf(self, x: Any) -> Any:
        """P(X <= x): the empirical CDF (a smoothed mixture when smoothed)."""
        x = np.asarray(x, dtype=float)
        if self.bandwidth > 0:
            result = _reflected_mixture_cdf(self._sorted, self.bandwidth, x)
        else:
            result = np.searchsorted(self._sorted, x, side="right") / len(self._sorted)
        return result[()] if result.ndim == 0 else result

    def ppf(self, q: Any) -> Any:
        """The quantile function, ``inf{x : cdf(x) >= q}``; nan outside [0, 1].

        Unsmoothed, this is the step-function inverse of the empirical CDF
        (``numpy.quantile(..., method="inverted_cdf")``): ``ppf(u)`` is the
        ``ceil(n*u)``-th smallest sample, so the integral of ``ppf(u)**m`` over
        (0, 1) is the m-th sample moment.
        """
        q = np.asarray(q, dtype=float)
        valid = (q >= 0) & (q <= 1)
        inside = np.where(valid, q, 0.5)
        if self.bandwidth > 0:
            result = _bisect_quantile(self, inside)
        else:
            result = np.quantile(self._sorted, inside, method="inverted_cdf")
        result = np.where(valid, result, np.nan)
        return result[()] if result.ndim == 0 else result

    def scaled(self, factor: float) -> Empirical:
        """The same distribution with every latency multiplied by ``factor``.

        Silverman's bandwidth scales with the data, so a smoothed distribution is
        scaled exactly too (its mean becomes ``factor * mean()``).
        """
        if not (isinstance(factor, (int, float, np.integer, np.floating))
                and math.isfinite(factor) and factor > 0):
            raise ConfigError(f"scale factor must be a positive finite number, "
                              f"got {factor!r}")
        return Empirical(self._sorted * float(factor), smoothing=self.smoothing,
                         source=self.source)

    def __repr__(self) -> str:
        parts = [f"n={len(self._sorted)}", f"mean={self.mean():.4g}"]
        if self.smoothing:
            parts.append(f"smoothing={self.smoothing!r}")
        if self.source:
            parts.append(f"source={self.source!r}")
        return f"Empirical({', '.join(parts)})"


# --- validation and smoothing -----------------------------------------------------

def _validated(samples: Any) -> np.ndarray:
    """``samples`` as a fresh 1-D float64 array, or ConfigError saying how to fix it."""
    try:
        data = np.array(samples, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"latency samples must be numbers ({exc}); pass a 1-D "
                          "array of measured latencies") from None
    if data.ndim != 1:
        raise ConfigError(f"latency samples must be a 1-D array, got shape {data.shape};"
                          " flatten it (e.g. with numpy.ravel) first")
    if data.size == 0:
        raise ConfigError("no latency samples given; pass at least one measured latency")
    bad = np.flatnonzero(~np.isfinite(data))
    if bad.size:
        raise ConfigError(f"latency sample {bad[0]} is {data[bad[0]]} ({bad.size} not "
                          "finite in all); drop NaN and infinite values first")
    bad = np.flatnonzero(data < 0)
    if bad.size:
        raise ConfigError(f"latency sample {bad[0]} is {data[bad[0]]:g} ({bad.size} "
                          "negative in all); latencies must be >= 0, check the data's "
                          "sign or unit")
    if not np.any(data > 0):
        raise ConfigError("all latency samples are 0; give at least one positive "
                          "latency (or use a finer unit)")
    return data


def _silverman_bandwidth(data: np.ndarray) -> float:
    """Silverman's rule of thumb, ``0.9 * min(std, IQR/1.349) * n**(-1/5)``.

    The IQR guards against the long tails latencies have; when it is 0 (heavily
    tied data) the standard deviation alone is used. Constant data gives 0.
    """
    spread = float(np.std(data, ddof=1)) if data.size > 1 else 0.0
    from scipy import stats

    iqr = float(stats.iqr(data))
    if iqr > 0:
        spread = min(spread, iqr / 1.349)
    return 0.9 * spread * data.size ** -0.2


def _reflected_mixture_moment(data: np.ndarray, h: float, order: int) -> float:
    """E|V|**order for V = x + h Z, x drawn uniformly from ``data``, Z ~ N(0, 1).

    For even orders |V|**m = V**m, a binomial sum of data moments and normal
    moments. For odd orders |V|**m = V**m + 2 (V^-)**m, and with a = -x/h,
    E[(V^-)**m] = h**m E[(a - Z)**m; Z < a], a sum of the partial moments
    M_j = E[Z**j; Z < a], which satisfy M_0 = Phi(a), M_1 = -phi(a),
    M_j = -a**(j-1) phi(a) + (j-1) M_(j-2).
    """
    from scipy import stats

    even = np.arange(0, order + 1, 2)
    plain = sum(special.comb(order, j) * h ** j * stats.norm.moment(j)
                * np.mean(data ** (order - j)) for j in even)
    if order % 2 == 0:
        return float(plain)
    a = -data / h
    density = stats.norm.pdf(a)
    partial = [special.ndtr(a), -density]
    for j in range(2, order + 1):
        partial.append(-a ** (j - 1) * density + (j - 1) * partial[j - 2])
    negative_part = h ** order * np.mean(sum(
        special.comb(order, j) * (-1) ** j * a ** (order - j) * partial[j]
        for j in range(order + 1)))
    return float(plain + 2 * negative_part)


def _reflected_mixture_cdf(data: np.ndarray, h: float, x: np.ndarray) -> np.ndarray:
    """P(|x_i + h Z| <= x) averaged over the data, for each x (0 below 0)."""
    flat = np.maximum(x.ravel(), 0.0)
    out = np.empty(flat.shape)
    # Bound the (queries x data) temporary at a few million entries.
    step = max(1, 4_000_000 // data.size)
    for start in range(0, flat.size, step):
        y = flat[start:start + step, None]
        out[start:start + step] = np.mean(
            special.ndtr((y - data) / h) - special.ndtr((-y - data) / h), axis=1)
    return np.where(x.ravel() < 0, 0.0, out).reshape(x.shape)


def _bisect_quantile(dist: Empirical, q: np.ndarray) -> np.ndarray:
    """Smoothed ``ppf`` by bisection on the (continuous, increasing) ``cdf``."""
    low = np.zeros(q.shape)
    high = np.full(q.shape, dist.samples[-1] + 40 * dist.bandwidth)
    for _ in range(200):
        middle = 0.5 * (low + high)
        if not np.any((middle > low) & (middle < high)):
            break
        below = dist.cdf(middle) < q
        low = np.where(below, middle, low)
        high = np.where(below, high, middle)
    return np.where(q >= 1, np.inf, np.where(q <= 0, 0.0, high))


# --- latency files ----------------------------------------------------------------

def _unit_factor(unit: str | None, to: str | None) -> float:
    for label, value in (("unit", unit), ("to", to)):
        if value is not None and value not in UNITS:
            raise ConfigError(f"{label}={value!r} is not a time unit; use one of "
                              f"{', '.join(UNITS)}")
    if to is None and unit is not None:
        # nothing would be converted: an option that does nothing is refused
        raise ConfigError(f"unit={unit!r} alone converts nothing; add to=, the unit "
                          f"the run's times are in (e.g. unit={unit},to=ms)")
    if to is None:
        return 1.0
    if unit is None:
        raise ConfigError(f"to={to!r} needs unit=, the unit of the numbers in the file "
                          f"(one of {', '.join(UNITS)})")
    return UNITS[unit] / UNITS[to]


def _read_lines(name: str) -> list[str]:
    from forkjoin_sim.checks import _statable, input_encoding

    _statable(Path(name), "latency file")
    if Path(name).is_dir() or (Path(name).exists() and not Path(name).is_file()):
        # a directory, device, FIFO or socket (/dev/zero would be read for ever)
        raise ConfigError(f"{name}: not a regular file; give the path of a latency "
                          "file saved on disk")
    try:
        # utf-8-sig drops the byte-order mark spreadsheets put before a CSV header;
        # PowerShell writes UTF-16.
        with open(name, encoding=input_encoding(name)) as handle:
            return handle.read().splitlines()
    except FileNotFoundError:
        raise ConfigError(f"{name}: no such file; give the path of a latency file "
                          "(one number per line, CSV or YCSB raw output)") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{name}: not a UTF-8 text file; give a text file of "
                          "latencies") from None
    except OSError as exc:
        raise ConfigError(f"{name}: cannot be read ({exc.strerror}); give the path "
                          "of a readable latency file") from None


def _content(lines: list[str], skip_ycsb: bool = False):
    """(1-based line number, stripped text) of the lines that hold data."""
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        if skip_ycsb and (text.startswith("[") or "latency raw data" in text):
            continue
        yield number, text


def _is_number(text: str) -> bool:
    try:
        plain_float(text)
    except ValueError:
        return False
    return True


def _detect_format(lines: list[str]) -> str:
    for _, text in _content(lines):
        if text.startswith("[") or "latency raw data" in text:
            return "ycsb"
        fields = [field.strip() for field in text.split(",")]
        if len(fields) == 1:
            # A lone word first ("latency") is a one-column CSV header.
            return "lines" if _is_number(fields[0]) else "csv"
        if (len(fields) == 3 and not _is_number(fields[0])
                and _is_number(fields[1]) and _is_number(fields[2])):
            return "ycsb"
        return "csv"
    return "lines"


def _lines_tokens(name: str, lines: list[str]):
    rows = list(_content(lines))
    return ([n for n, _ in rows], [t for _, t in rows],
            "the file must hold one latency per line")


def _csv_tokens(name: str, lines: list[str], column: str | int | None):
    content = list(_content(lines))
    rows = list(zip([number for number, _ in content],
                    csv.reader([text for _, text in content])))
    if not rows:
        return [], [], ""
    header = None
    if not all(_is_number(field) for field in rows[0][1]):
        header, rows = [field.strip() for field in rows[0][1]], rows[1:]
    width = len(header) if header is not None else len(rows[0][1]) if rows else 1
    if isinstance(column, str):
        if header is None:
            raise ConfigError(f"{name}: has no header row to find column {column!r} in; "
                              "use column=INDEX (0-based)")
        if column not in header:
            raise ConfigError(f"{name} line {_first_line(lines)}: no column {column!r} "
                              f"in the header; its columns are {', '.join(header)}")
        index = header.index(column)
    elif column is None:
        if width != 1:
            names = ", ".join(header) if header is not None else f"0..{width - 1}"
            raise ConfigError(f"{name}: has {width} columns ({names}); choose the "
                              "latency column with column=NAME or column=INDEX (0-based)")
        index = 0
    elif isinstance(column, (int, np.integer)) and not isinstance(column, bool):
        if not 0 <= column < width:
            raise ConfigError(f"{name}: column {column} does not exist; it has {width} "
                              f"columns, use column=0..{width - 1} (0-based)")
        index = int(column)
    else:
        raise ConfigError(f"column must be a header name or a 0-based index, "
                          f"got {column!r}")
    label = repr(header[index]) if header is not None else str(index)
    linenos, tokens = [], []
    for number, fields in rows:
        if index >= len(fields):
            raise ConfigError(f"{name} line {number}: has {len(fields)} fields, so no "
                              f"column {label}; every row needs the latency column")
        linenos.append(number)
        tokens.append(fields[index].strip())
    return linenos, tokens, f"column {label} must hold one latency per row"


def _first_line(lines: list[str]) -> int:
    return next(_content(lines))[0]


def _ycsb_tokens(name: str, lines: list[str], operation: str | None):
    by_operation: dict[str, tuple[list[int], list[str]]] = {}
    for number, text in _content(lines, skip_ycsb=True):
        fields = text.split(",")
        if len(fields) != 3:
            raise ConfigError(f"{name} line {number}: {text!r} is not a YCSB raw "
                              f"measurement; {_YCSB_HINT}")
        numbers, tokens = by_operation.setdefault(fields[0].strip().upper(), ([], []))
        numbers.append(number)
        tokens.append(fields[2].strip())
    if not by_operation:
        raise ConfigError(f"{name}: holds no YCSB raw measurement lines; {_YCSB_HINT} "
                          "(run YCSB with measurementtype=raw)")
    found = ", ".join(by_operation)
    if operation is None:
        if len(by_operation) > 1:
            raise ConfigError(f"{name}: holds several operations ({found}); choose one "
                              "with operation=")
        operation = next(iter(by_operation))
    key = operation.strip().upper()
    if key not in by_operation:
        raise ConfigError(f"{name}: has no {operation!r} measurements; it holds {found}")
    numbers, tokens = by_operation[key]
    return numbers, tokens, _YCSB_HINT


#: A latency more than this many times the file's median is refused as a corrupt line
#: or a unit slip (measured tails reach 10^3-10^5 times the median, not 10^9).
OUTLIER_FACTOR = 1e9


def _latencies(name: str, linenos: list[int], tokens: list[str], hint: str) -> np.ndarray:
    """The tokens as latencies, or ConfigError naming the file and line of a bad one."""
    if not tokens:
        raise ConfigError(f"{name}: holds no latencies (empty, or only blank and "
                          f"comment lines); {hint or 'give a file of latencies'}")
    try:
        # numpy, like float(), reads '1_0' and full-width digits; refuse them first.
        if not all(token.isascii() and "_" not in token for token in tokens):
            raise ValueError("not plain ASCII numbers")
        values = np.array(tokens, dtype=float)
    except ValueError:
        # The slow path only runs to find and name the offending line.
        for number, token in zip(linenos, tokens):
            if not _is_number(token):
                raise ConfigError(f"{name} line {number}: {token!r} is not a number; "
                                  f"{hint}") from None
        values = np.array([plain_float(token) for token in tokens])
    checks = ((np.isnan(values), "is NaN; remove it or fix the measurement"),
              (np.isinf(values), "is infinite; remove it or fix the measurement"),
              (values < 0, "is negative; latencies must be >= 0"))
    for bad, problem in checks:
        where = np.flatnonzero(bad)
        if where.size:
            i = where[0]
            raise ConfigError(f"{name} line {linenos[i]}: {tokens[i]!r} {problem}")
    if not np.any(values > 0):
        raise ConfigError(f"{name}: all {values.size} latencies are 0; an empirical "
                          "distribution needs a positive one (is the unit too coarse?)")
    typical = float(np.median(values[values > 0]))
    i = int(np.argmax(values))
    if values[i] > OUTLIER_FACTOR * typical:
        raise ConfigError(f"{name} line {linenos[i]}: {tokens[i]!r} is "
                          f"{values[i] / typical:.3g} times the median latency "
                          f"({typical:.6g}); no measured tail is that long: a corrupt "
                          "line or another unit? Fix or remove it")
    return values
