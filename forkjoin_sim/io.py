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
def atomic_write(path: str | os.PathLike, mode: str = "w", **open_kwargs):
    """Open a temporary file beside ``path``; on success, rename it over ``path``.

    If the block raises (bad input, Ctrl-C), the temporary file is removed and any
    previous ``path`` is left untouched.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, mode, **open_kwargs) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, _umask_mode())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def atomic_save(path: str | os.PathLike, save, *args, **kwargs) -> None:
    """Call ``save(tmp_path, *args, **kwargs)`` (e.g. ``fig.savefig``), then rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=path.suffix, dir=path.parent)
    os.close(fd)
    try:
        save(tmp, *args, **kwargs)
        os.chmod(tmp, _umask_mode())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
