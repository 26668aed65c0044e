"""The progress bar the staleness and plan-consistency commands draw over their
(R, W) pairs on standard error."""

from __future__ import annotations


def progress_bar(total: int, desc: str = "staleness"):
    """`forkjoin_sim.run.progress_bar` over ``total`` (rate, R, W) items; none for fewer
    than two (nothing to count)."""
    from forkjoin_sim.run import progress_bar as bar

    return bar(total, desc, "pair", show=total >= 2)
