"""The progress bar the staleness and plan-consistency commands draw over their
(R, W) pairs on standard error."""

from __future__ import annotations


def progress_bar(total: int, desc: str = "staleness"):
    """A progress bar over ``total`` (rate, R, W) items, as the project's long runs
    show one: after ``PROGRESS_DELAY`` seconds, gone when done, none without a
    stderr. Its ``update(n)`` counts on."""
    import contextlib
    import sys

    if total < 2 or sys.stderr is None:
        # nothing to count; tqdm's import is felt in short runs
        return contextlib.nullcontext(_NoBar())
    from tqdm.auto import tqdm

    from forkjoin_sim.run import PROGRESS_DELAY

    return tqdm(total=total, unit="pair", desc=desc, delay=PROGRESS_DELAY, leave=False)


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass

    def set_description(self, text: str) -> None:
        pass
