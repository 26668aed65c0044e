"""Writing result files so that a reader never sees a half-written one."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from forkjoin_sim.errors import ConfigError


def _umask_mode() -> int:
    """The mode ``open()`` would give a new file (mkstemp's 0600 is too private)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def _through_links(path: Path) -> Path:
    """The file a symbolic link ``path`` points to (``path`` itself otherwise): the
    rename must replace the target, as writing through the link would, not the link."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


@contextlib.contextmanager
def _replacing(path: Path, suffix: str):
    """A temporary file beside ``path`` (as ``(fd, name)``), renamed over ``path`` if
    the block succeeds and removed if it raises (bad input, Ctrl-C)."""
    path = _through_links(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = None
    try:
        with _signals_held():  # an interrupt must not come between create and record
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix,
                                       dir=path.parent)
        yield fd, tmp
        os.chmod(tmp, _umask_mode())
        os.replace(tmp, path)
    except BaseException:
        if tmp is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        raise


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "w", **open_kwargs):
    """Open a temporary file beside ``path``; on success, rename it over ``path``.

    If the block raises, the temporary file is removed and any previous ``path`` is
    left untouched.
    """
    with _replacing(Path(path), ".tmp") as (fd, _):
        with os.fdopen(fd, mode, **open_kwargs) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())


def atomic_save(path: str | os.PathLike, save, *args, **kwargs) -> None:
    """Call ``save(tmp_path, *args, **kwargs)`` (e.g. ``fig.savefig``), then rename.

    The temporary name keeps ``path``'s suffix, which savers read the format from.
    """
    path = Path(path)
    with _replacing(path, path.suffix) as (fd, tmp):
        os.close(fd)
        save(tmp, *args, **kwargs)


def check_parquet_writer(path: str | os.PathLike) -> None:
    """Raise `ConfigError` if ``path`` is a .parquet file and pyarrow, which writes
    it, is not installed (checked before any work)."""
    import importlib.util

    if Path(path).suffix.lower() == ".parquet" and importlib.util.find_spec(
            "pyarrow") is None:
        raise ConfigError(f"writing {path} needs pyarrow (pip install pyarrow); "
                          "or write a .csv")


@contextlib.contextmanager
def _signals_held():
    """Hold SIGINT, SIGTERM and SIGHUP back: one that arrives in the block is
    delivered, to the handler it would have reached, at the end of the block."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield  # Python runs signal handlers in the main thread only, never here
        return
    # Replacing the handlers, not blocking the signals (pthread_sigmask), because a
    # blocked signal is taken by another thread (a pool's, a progress bar's) and
    # its Python handler still runs here at once.
    arrived: list[int] = []
    previous = {}
    try:
        for name in ("SIGINT", "SIGTERM", "SIGHUP"):
            number = getattr(signal, name, None)
            if number is not None and signal.getsignal(number) is not None:
                previous[number] = signal.signal(
                    number, lambda signum, frame: arrived.append(signum))
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        for number in dict.fromkeys(arrived):
            signal.raise_signal(number)


class _Group:
    """The files of one :func:`atomic_group`: each written to a temporary name."""

    def __init__(self):
        self._pending: list[tuple[str, Path]] = []

    def path(self, target: str | os.PathLike) -> str:
        """A temporary path beside ``target`` (same suffix, so savers read the format
        from it), renamed to ``target`` when the group commits."""
        target = _through_links(Path(target))
        target.parent.mkdir(parents=True, exist_ok=True)
        with _signals_held():  # an interrupt here would leave an untracked file
            fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=target.suffix,
                                       dir=target.parent)
            self._pending.append((tmp, target))
        os.close(fd)
        return tmp

    @contextlib.contextmanager
    def open(self, target: str | os.PathLike, mode: str = "w", **open_kwargs):
        """An open temporary file for ``target``."""
        with open(self.path(target), mode, **open_kwargs) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())

    def save(self, target: str | os.PathLike, save, *args, **kwargs) -> None:
        """Call ``save(tmp_path, *args, **kwargs)`` for ``target``."""
        save(self.path(target), *args, **kwargs)

    def _commit(self) -> None:
        mode = _umask_mode()
        for tmp, _ in self._pending:
            os.chmod(tmp, mode)
        # Every byte is written; what is left are renames, which need no space. An
        # interrupt between two of them would mix old and new files, so it waits.
        with _signals_held():
            for tmp, target in self._pending:
                os.replace(tmp, target)
            self._pending.clear()

    def _discard(self) -> None:
        for tmp, _ in self._pending:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        self._pending.clear()


@contextlib.contextmanager
def atomic_group():
    """Write several files that belong together: all appear, or none changes.

    Each file is written under a temporary name beside its target (``group.open(path)``
    or ``group.save(path, fig.savefig)``); when the block succeeds every temporary
    file is renamed over its target, and if it raises (bad input, Ctrl-C) every one
    is removed, so old outputs are never mixed with new ones.
    """
    group = _Group()
    try:
        yield group
    except BaseException:
        group._discard()
        raise
    try:
        group._commit()
    except BaseException:
        group._discard()
        raise


def read_toml(path, what: str, missing_hint: str) -> dict:
    """The TOML file at ``path`` as a dict, or one ConfigError that names ``what`` it
    was (a sweep spec, a staged config ...) and how to fix it; ``missing_hint`` says
    what to give when the file does not exist."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    if Path(path).exists() and not Path(path).is_file() and not Path(path).is_dir():
        # a FIFO or device would be read for ever
        raise ConfigError(f"{what} {path} is not a regular file; give a TOML file")
    try:
        with open(path, "rb") as handle:
            data = handle.read()
        # a byte-order mark (saved by some Windows editors) is not TOML; drop it
        return tomllib.loads(data.removeprefix(b"\xef\xbb\xbf").decode("utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{what} {path} does not exist; {missing_hint}") from None
    except IsADirectoryError:
        raise ConfigError(f"{what} {path} is a directory; give a TOML file") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{what} {path} is not UTF-8 text; give a TOML file") from None
    except tomllib.TOMLDecodeError as exc:
        # tomllib's message names the line and column: "... (at line 3, column 7)".
        raise ConfigError(f"{what} {path} is not valid TOML: {exc}") from None
    except RecursionError:  # tomllib parses nested arrays and tables recursively
        raise ConfigError(f"{what} {path} nests arrays or tables too deeply to read; "
                          "no setting needs more than a few levels") from None
    except OSError as exc:
        raise ConfigError(f"{what} {path} cannot be read ({exc.strerror})") from None


def toml_text(value) -> str:
    """``value`` as a TOML file spells it (true, "text", [1, 2]): what a message
    about a TOML file's value shows, where Python's repr would say True or 'text'."""
    import json

    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(map(toml_text, value)) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {toml_text(v)}" for k, v in value.items()) + "}"
    return repr(value)


def strict_json(value):
    """``value`` as strict JSON can hold it: NaN and infinities as null (JSON has
    neither; Python would write NaN and Infinity, which other readers refuse), numpy
    scalars and arrays as Python numbers and lists, tuples as lists."""
    import math

    if isinstance(value, dict):
        return {k: strict_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [strict_json(v) for v in value]
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        return strict_json(value.tolist())  # numpy scalars and arrays
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def json_text(value, **kwargs) -> str:
    """``json.dumps`` of `strict_json` (``value``), refusing NaN should any remain."""
    import json

    return json.dumps(strict_json(value), allow_nan=False, **kwargs)
