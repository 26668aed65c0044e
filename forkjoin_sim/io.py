"""Writing result files so that a reader never sees a half-written one."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def _umask_mode() -> int:
    """The mode ``open()`` would give a new file (mkstemp's 0600 is too private)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


@contextlib.contextmanager
def _replacing(path: Path, suffix: str):
    """A temporary file beside ``path`` (as ``(fd, name)``), renamed over ``path`` if
    the block succeeds and removed if it raises (bad input, Ctrl-C)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix, dir=path.parent)
    try:
        yield fd, tmp
        os.chmod(tmp, _umask_mode())
        os.replace(tmp, path)
    except BaseException:
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
