"""The progress bar the commands draw on standard error: over the (R, W) pairs of
staleness and plan-consistency, over the jobs of the estimators' referee runs."""

from __future__ import annotations


def progress_bar(total: int, desc: str = "staleness", unit: str = "pair",
                 show: bool = True, **options):
    """`forkjoin_sim.run.progress_bar` over ``total`` items of ``unit`` (tqdm's
    ``options`` such as ``unit_scale``); none when not ``show``n (``--quiet``) or
    for fewer than two items (nothing to count)."""
    from forkjoin_sim.run import progress_bar as bar

    return bar(total, desc, unit, show=show and total >= 2, **options)
