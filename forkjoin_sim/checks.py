"""Checks made before any work: plain numbers, files, memory, addresses.

* Parsers of plain numbers (:func:`plain_float`, :func:`parse_whole`, :func:`parse_real`)
  shared by every reader of text (specs, CSV cells, options); the command line's
  ``type=`` converters (``forkjoin_cli.types``) are built on them.
* Checks run by a command before it starts working (:func:`check_output_file`,
  :func:`check_output_dir`, :func:`check_memory`, :func:`check_reachable` ...). They
  raise :class:`~forkjoin_sim.errors.ConfigError`, which the CLI prints as one line
  with exit status 2.

Every message says what is wrong and how to fix it.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import socket
from pathlib import Path

from forkjoin_sim.errors import ConfigError

#: Seeds are SeedSequence entropy; 63 bits keeps them within a signed 64-bit integer,
#: so that they survive CSV, parquet and JSON round trips.
SEED_LIMIT = 2 ** 63
#: Worker processes or threads a command may start; more is almost surely a typo.
MAX_WORKERS = 1024
#: Bytes a fast-engine run keeps per job: the measured sojourn time, and a copy
#: sorted for the exact percentiles (plus slack for the per-block arrays).
BYTES_PER_JOB = 24
#: Fraction of the available memory a single run may plan to use.
MEMORY_SHARE = 0.8

_WHOLE = re.compile(r"[+-]?[0-9]+")
_REAL = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")


# ---------------------------------------------------------------------------
# Values
# ---------------------------------------------------------------------------

def plain_float(text) -> float:
    """``float(text)`` for a number written plainly in ASCII.

    Python's ``float`` also reads '1_000' as 1000 and full-width or other Unicode
    digits as numbers; in a spec, a data file or an option they are far more likely
    a typo or a paste from elsewhere, so they raise ValueError here like any word.
    """
    text = str(text)
    if not text.isascii() or "_" in text:
        raise ValueError(f"could not convert string to float: {text!r}")
    return float(text)


def is_plain_whole(text) -> bool:
    """Whether ``text`` is a whole number in ASCII digits (``str.isdigit`` also takes
    superscripts and other scripts' digits, which ``int`` then refuses)."""
    return bool(_WHOLE.fullmatch(str(text).strip()))


def parse_whole(text: str, what: str, low: int | None = None, high: int | None = None,
                error=ConfigError) -> int:
    """``text`` as a whole number in ``[low, high]``.

    Only ASCII digits with an optional sign: '1e12', '3.0', 'True', superscript or
    other Unicode digits and underscores are refused, so a typo never becomes a size.
    """
    text = str(text).strip()
    if not _WHOLE.fullmatch(text):
        hint = (" (write it out in digits, e.g. 1000000)" if re.fullmatch(
            r"[0-9.]+[eE][+-]?[0-9]+", text) else "")
        raise error(f"{what} {text!r} is not a whole number{hint}")
    if len(text.lstrip("+-")) > 100:  # int() refuses 4,300 digits; nothing needs 100
        raise error(f"{what} has {len(text.lstrip('+-')):,} digits, beyond any limit "
                    "here; give a sensible number")
    value = int(text)
    _check_range(value, what, low, high, error, text)
    return value


def parse_real(text: str, what: str, low: float | None = None, high: float | None = None,
               low_open: bool = False, high_open: bool = False, error=ConfigError) -> float:
    """``text`` as a finite real number in the given range (open or closed ends).

    'nan', 'inf', hexadecimal floats and words are refused.
    """
    text = str(text).strip()
    if not _REAL.fullmatch(text):
        raise error(f"{what} {text!r} is not a number (e.g. 0.5 or 2e-3)")
    value = float(text)
    if not math.isfinite(value):
        raise error(f"{what} {text!r} is too large for a float; use a finite number")
    if low is not None and (value <= low if low_open else value < low):
        raise error(f"{what} {text} must be {'>' if low_open else '>='} {low:g}")
    if high is not None and (value >= high if high_open else value > high):
        raise error(f"{what} {text} must be {'<' if high_open else '<='} {high:g}")
    return value


def _check_range(value, what, low, high, error, text=None) -> None:
    text = value if text is None else text
    if low is not None and value < low:
        raise error(f"{what} {text} must be at least {low:,}")
    if high is not None and value > high:
        raise error(f"{what} {text} exceeds the limit {high:,}; use at most {high:,}")


def check_whole(value, what: str, low: int | None = None, high: int | None = None) -> int:
    """A Python-API value that must be a whole number in ``[low, high]`` (bool refused)."""
    import numbers

    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ConfigError(f"{what}={value!r} must be a whole number")
    _check_range(int(value), what, low, high, ConfigError)
    return int(value)


def check_real(value, what: str, low: float | None = None, high: float | None = None,
               low_open: bool = False) -> float:
    """A Python-API value that must be a finite real number (bool refused)."""
    import numbers

    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(
            float(value)):
        raise ConfigError(f"{what}={value!r} must be a finite number")
    return parse_real(repr(float(value)), what, low, high, low_open=low_open)


def fraction_note(value: float, written: str) -> str | None:
    """The refusal of a percentile written as a fraction (0.99 for p99), ``written``
    as the caller shows it ("--percentile 0.99", "percentile=0.99"); None for any
    other value."""
    if not 0 < value < 1:
        return None
    return (f"{written} would be the {value:g}th percentile; percentiles here run from "
            f"1 to 100, so write {100 * value:g} for p{100 * value:g}")


def check_percentile(value, what: str = "percentile") -> float:
    """A Python-API percentile: a finite number in [1, 100), as the command line takes
    it; a fraction (0.99 for p99) is refused with the number meant, as is 100 (the
    maximum is no percentile a finite run estimates)."""
    import numbers

    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(
            float(value)):
        raise ConfigError(f"{what}={value!r} must be a finite number, e.g. 99")
    value = float(value)
    if (fraction := fraction_note(value, f"{what}={value:g}")) is not None:
        raise ConfigError(fraction)
    if not 1 <= value < 100:
        raise ConfigError(f"{what}={value:g} is outside [1, 100); give e.g. 99 for p99")
    return value


#: Byte-order marks of the text encodings an input file may come in besides UTF-8:
#: Windows PowerShell's ``>`` and ``Out-File`` write UTF-16 with one.
_UTF16_MARKS = (b"\xff\xfe", b"\xfe\xff")


def input_encoding(path) -> str:
    """The encoding to read the text file ``path`` with: ``utf-16`` where it starts
    with a UTF-16 byte-order mark, else ``utf-8-sig`` (UTF-8, a spreadsheet's
    byte-order mark dropped)."""
    try:
        with open(path, "rb") as handle:
            start = handle.read(2)
    except OSError:
        return "utf-8-sig"  # the caller's open says what is wrong
    return "utf-16" if start in _UTF16_MARKS else "utf-8-sig"


#: A character no text file holds: a C0 control other than tab, line feed, form feed
#: and carriage return.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f]")


def _utf16_unmarked(start: bytes) -> bool:
    """Whether a file's first bytes look like UTF-16 without its byte-order mark:
    ASCII text with a 0 byte beside every character (90% of the first 256 pairs)."""
    pairs = start[:512]
    if len(pairs) < 4:
        return False
    even, odd = pairs[0::2], pairs[1::2]
    return max(even.count(0) / len(even), odd.count(0) / len(odd)) >= 0.9


def check_input_file(path, what: str = "input file", utf8: bool = True) -> Path:
    """``path`` as an existing, readable regular file; with ``utf8``, one whose bytes
    decode as text in its `input_encoding` (UTF-8, or UTF-16 with a byte-order mark;
    checked in chunks, so large files cost no memory)."""
    import codecs

    path = Path(path)
    _statable(path, what)
    if not path.exists():
        raise ConfigError(f"{what} {path} does not exist; check the path")
    if path.is_dir():
        raise ConfigError(f"{what} {path} is a directory; give a file")
    if not path.is_file():
        # a device, FIFO or socket: /dev/zero would be read for ever
        raise ConfigError(f"{what} {path} is not a regular file; give a file saved "
                          "on disk")
    try:
        with open(path, "rb") as handle:
            if utf8:
                encoding = input_encoding(path)
                name = "UTF-16" if encoding == "utf-16" else "UTF-8"
                decoder = codecs.getincrementaldecoder(encoding)()
                offset = 0
                while chunk := handle.read(1 << 20):
                    if offset == 0 and name == "UTF-8" and _utf16_unmarked(chunk):
                        raise ConfigError(
                            f"{what} {path} looks like UTF-16 text without a byte-order "
                            "mark (every other byte 0); save it as UTF-8")
                    try:
                        text = decoder.decode(chunk)
                    except UnicodeDecodeError as exc:
                        raise ConfigError(
                            f"{what} {path} is not {name} text (byte "
                            f"{offset + exc.start}); save it as UTF-8") from None
                    if name == "UTF-16" and (control := _CONTROL.search(text)):
                        # a byte-order mark alone does not make a file text (UTF-32's
                        # starts with UTF-16's; a binary file may)
                        raise ConfigError(
                            f"{what} {path} is not UTF-16 text (control character "
                            f"{ord(control.group()):#04x}); save it as UTF-8") from None
                    offset += len(chunk)
                try:
                    decoder.decode(b"", final=True)
                except UnicodeDecodeError:
                    raise ConfigError(f"{what} {path} ends inside a {name} character; "
                                      "save it as UTF-8") from None
    except OSError as exc:
        raise ConfigError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    return path



#: Bytes a temporary results file adds to the name it will be renamed to.
TEMPORARY_NAME_EXTRA = 16


def _writable_place(path: Path, what: str) -> None:
    """The nearest existing ancestor of ``path`` is a directory this process may write
    (missing directories below it will be created)."""
    parent = path.parent
    while not parent.exists():
        if parent.is_symlink():  # a dangling link: mkdir would fail later
            raise ConfigError(f"{what} {path}: {parent} is a broken symbolic link")
        if parent == parent.parent:
            break
        parent = parent.parent
    if not parent.is_dir():
        raise ConfigError(f"{what} {path} lies under {parent}, which is a file, not a "
                          "directory; choose another path")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ConfigError(f"{what} {path}: directory {parent} is not writable; choose "
                          "a writable place")
    try:
        longest = os.pathconf(parent, "PC_NAME_MAX")
    except (OSError, ValueError):
        longest = 255
    # the results are written to a temporary ".NAME.XXXXXXXX.tmp" first, then renamed
    too_long = [part for part in path.relative_to(parent).parts
                if len(os.fsencode(part)) + TEMPORARY_NAME_EXTRA > longest]
    if too_long:
        raise ConfigError(f"{what} {path}: the name {too_long[0][:40]}... is longer than "
                          f"this file system allows ({longest} bytes); choose a shorter "
                          "name")
    # os.access says yes to root everywhere, and /proc or /sys refuse new files: try
    import tempfile

    try:
        fd, probe = tempfile.mkstemp(prefix=".forkjoin-sim-probe-", dir=parent)
    except OSError as exc:
        raise ConfigError(f"{what} {path}: cannot create a file in {parent} "
                          f"({exc.strerror}); choose another place") from None
    os.close(fd)
    os.unlink(probe)


def check_output_file(path, what: str = "output file", suffixes=None,
                      inputs=()) -> Path:
    """``path`` as a file this process can create or replace, checked before any work.

    Refused: an existing directory, a name ending in a path separator (which names
    a directory, and which ``Path`` would silently drop: "out.csv/" would replace
    the file out.csv), a path under a file, an unwritable directory, an existing
    file that may not be replaced, (with ``suffixes``) another suffix, or one of the
    command's ``inputs`` (it would be overwritten by its own results).
    """
    text = os.fspath(path) if isinstance(path, (str, os.PathLike)) else str(path)
    separators = tuple(s for s in (os.sep, os.altsep) if s)
    if text.endswith(separators) and text.rstrip("".join(separators)):
        name = text.rstrip("".join(separators))
        example = (name if Path(name).suffix else
                   str(Path(name) / (f"results{next(iter(suffixes))}" if suffixes
                                     else "results.csv")))
        raise ConfigError(f"{what} {text} ends with {text[-1]!r}, so it names a "
                          f"directory, not a file; give a file name, e.g. {example}")
    path = Path(path)
    if str(path) in ("", "."):
        raise ConfigError(f"{what} is empty; give a file name")
    _statable(path, what)
    check_not_an_input(path, what, inputs)
    if path.is_dir():
        example = f"results{next(iter(suffixes))}" if suffixes else "results.csv"
        raise ConfigError(f"{what} {path} is a directory; give a file name inside it, "
                          f"e.g. {path / example}")
    if path.exists() and not path.is_file():
        raise ConfigError(f"{what} {path} exists and is not a regular file")
    if suffixes is not None:
        check_suffix(path, what, suffixes)
    _writable_place(path, what)
    return path


def check_suffix(path, what: str, suffixes) -> str:
    """The suffix of ``path`` among ``suffixes`` (any case), or ConfigError; a bare
    '.csv' is a hidden file with no suffix, which is refused as such."""
    path = Path(path)
    name = path.name.lower()
    if name in suffixes:
        raise ConfigError(f"{what} {path} has only an extension; give a name before it, "
                          f"e.g. {path.with_name('results' + name)}")
    if path.suffix.lower() not in suffixes:
        raise ConfigError(f"{what} {path} must end in {' or '.join(suffixes)}")
    return path.suffix.lower()


def _statable(path: Path, what: str) -> None:
    """Refuse a path the system cannot even look up (a name longer than the file
    system allows raises OSError from ``exists()``)."""
    try:
        path.exists()
    except OSError as exc:
        raise ConfigError(f"{what} {str(path)[:60]}...: {exc.strerror}; choose a "
                          "shorter name") from None


def check_not_an_input(path, what: str, inputs=()) -> None:
    """A ConfigError if the output ``path`` is one of ``inputs`` (paths, or (path,
    option) pairs naming where the input was given): it would be overwritten by its
    own results."""
    for source in inputs:
        source, given = source if isinstance(source, tuple) else (source, None)
        if source is not None and same_file(Path(path), Path(source)):
            where = f" (of {given})" if given else ""
            raise ConfigError(f"{what} {path} is also the input {source}{where}; write "
                              "the results to another file")


def same_file(a, b) -> bool:
    """Whether paths ``a`` and ``b`` name one file (existing: the same inode, through
    links; else the same resolved path)."""
    a, b = Path(a), Path(b)
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
        return a.resolve() == b.resolve()
    except (OSError, ValueError):  # a name no file can have (too long, a NUL)
        return False


def check_output_dir(path, names=(), what: str = "output directory") -> Path:
    """``path`` as a directory this process can create or write into, checked before
    any work; each of ``names`` (files it will write) must not be a directory."""
    if not str(path).strip():  # Path("") is ".": the results would land where one is
        raise ConfigError(f"{what} is empty; give a directory, e.g. results")
    path = Path(path)
    _statable(path, what)
    if path.exists() and not path.is_dir():
        raise ConfigError(f"{what} {path} is a file, not a directory; choose another "
                          "--out")
    if path.is_dir():
        if not os.access(path, os.W_OK | os.X_OK):
            raise ConfigError(f"{what} {path} is not writable; choose a writable place")
        for name in names:
            if (path / name).is_dir():
                raise ConfigError(f"{path / name} is a directory, but the command writes "
                                  "a file there; remove it or choose another --out")
    else:
        # a directory to create: its place must take new entries, as a file's does
        _writable_place(path, what)
    return path


# ---------------------------------------------------------------------------
# Work and resources
# ---------------------------------------------------------------------------

def available_memory() -> int | None:
    """Bytes of memory available to a new allocation (Linux MemAvailable), or None."""
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def check_memory(nbytes: float, what: str, fix: str) -> None:
    """Refuse a run that would need ``nbytes`` when less memory is available."""
    free = available_memory()
    if free is not None and nbytes > MEMORY_SHARE * free:
        raise ConfigError(f"{what} needs about {_size(nbytes)} of memory, more than "
                          f"{MEMORY_SHARE:.0%} of the {_size(free)} available "
                          f"({_size(MEMORY_SHARE * free)}, leaving room for the rest of "
                          f"the run); {fix}")


def check_jobs_fit(jobs: int, what: str = "--jobs", runs: int = 1,
                   block_bytes: float = 0.0) -> int:
    """Refuse ``runs`` simultaneous runs of ``jobs`` jobs that do not fit in memory
    (with ``block_bytes`` for the block of the path being simulated)."""
    at_once = f" on each of {runs} workers at once" if runs > 1 else ""
    check_memory(float(jobs) * BYTES_PER_JOB * runs + block_bytes,
                 f"{what} {jobs:,}{at_once}",
                 "use fewer jobs" + (" or fewer workers" if runs > 1 else ""))
    return jobs


def _size(nbytes: float) -> str:
    for unit in ("B", "kB", "MB", "GB", "TB", "PB"):
        if nbytes < 1000 or unit == "PB":
            return f"{nbytes:.3g} {unit}"
        nbytes /= 1000
    raise AssertionError("unreachable")


_ADDRESS = re.compile(r"(?:(?P<scheme>[a-z]+)://)?(?P<host>\[[0-9a-fA-F:]+\]|[^:/\s]+)"
                      r":(?P<port>[0-9]{1,5})/?")


def check_scheduler(address: str, timeout: float = 5.0) -> None:
    """Refuse a ``--dask`` address that no Dask scheduler answers within ``timeout``
    seconds: only 'local' and tcp:// or tls:// addresses can be reached from a
    command line, the port must accept a connection, and what answers must speak
    Dask's protocol (any TCP service otherwise passes)."""
    if address == "local":
        return
    scheme = re.match(r"([a-z]+)://", address)
    if scheme and scheme[1] not in ("tcp", "tls"):
        raise ConfigError(f"--dask {address!r}: {scheme[1]}:// schedulers cannot be "
                          "reached from a command line; use 'local' or tcp://HOST:PORT")
    check_reachable(address, timeout)
    import subprocess
    import sys

    # In a child process with a deadline: a client talking to something that is not
    # a scheduler can wait for ever on a frame that never ends, or ask for exabytes.
    probe = ("import sys\nfrom distributed import Client\n"
             "Client(sys.argv[1], timeout=float(sys.argv[2])).close()\n")
    try:
        done = subprocess.run([sys.executable, "-c", probe, address, str(timeout)],
                              capture_output=True, text=True, timeout=2 * timeout + 5)
        failure = done.stderr.strip().splitlines()[-1:] if done.returncode else None
    except subprocess.TimeoutExpired:
        failure = ["no answer in time"]
    if failure is not None:
        reason = failure[0].split(":")[0].rsplit(".", 1)[-1] if failure else "no answer"
        raise ConfigError(f"--dask {address}: no Dask scheduler answered there "
                          f"({reason}); check the address and port")


def check_reachable(address: str, timeout: float = 5.0) -> None:
    """Refuse a Dask scheduler ``address`` (``tcp://host:port``) that does not accept a
    TCP connection within ``timeout`` seconds ('local' and non-TCP schemes such as
    ``inproc://`` are not checked)."""
    if address == "local":
        return
    scheme = re.match(r"([a-z]+)://", address)
    if scheme and scheme[1] not in ("tcp", "tls"):
        return  # inproc://, ucx:// ...: not a TCP port this check could try
    match = _ADDRESS.fullmatch(address.strip())
    if not match:
        raise ConfigError(f"--dask {address!r} is not a scheduler address; use 'local' "
                          "or tcp://HOST:PORT, e.g. tcp://10.0.0.1:8786")
    host, port = match["host"].strip("[]"), int(match["port"])
    if not 0 < port < 65536:
        raise ConfigError(f"--dask {address!r}: port {port} is out of range 1-65535")
    try:
        with socket.create_connection((host, port), timeout=timeout):
            pass
    except OSError as exc:
        reason = "timed out" if isinstance(exc, TimeoutError) else (exc.strerror or exc)
        raise ConfigError(f"--dask {address}: cannot reach the scheduler ({reason} "
                          f"within {timeout:g} s); start it or check the address") from None


def printable(text: str) -> str:
    """``text`` with each character a terminal would act on or hide (a NUL, an escape
    sequence from a binary file quoted in a message) written as its escape."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


@contextlib.contextmanager
def warnings_after_success():
    """Hold back warnings (numpy RuntimeWarnings, cancellation notes) raised in the
    block: shown when it succeeds, one line each ("warning: ..."; repeats once),
    dropped when it fails, so an error line is the only line of a failed command."""
    import sys
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    shown = set()
    for item in caught:
        line = printable(" ".join(str(item.message).split()))
        if line not in shown:
            shown.add(line)
            print(f"warning: {line}", file=sys.stderr)
