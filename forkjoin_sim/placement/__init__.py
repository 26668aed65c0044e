"""Placement policies: which distinct nodes a job's tasks go to.

A placement is an object with ``name`` and ``draw(node_count, replicas, jobs, rng)``
returning an int32 array of shape (jobs, replicas) whose rows hold distinct nodes.
A new policy is one class in one module here, added to ``PLACEMENTS``.
"""

from __future__ import annotations

from forkjoin_sim.errors import ConfigError
from forkjoin_sim.placement.random_subset import RandomPlacement
from forkjoin_sim.placement.ring import RingPlacement
from forkjoin_sim.placement.ring_subset import RingSubset

PLACEMENTS = {p.name: p for p in (RandomPlacement(), RingPlacement())}


def get_placement(placement):
    """The placement object for a name ("random", "ring") or a placement object."""
    if isinstance(placement, str):
        try:
            return PLACEMENTS[placement]
        except KeyError:
            raise ConfigError(f"placement {placement!r} is unknown; use one of "
                              f"{', '.join(PLACEMENTS)}") from None
    if not (hasattr(placement, "draw") and hasattr(placement, "name")):
        raise ConfigError(f"placement must be a name ({', '.join(PLACEMENTS)}) or an "
                          f"object with name and draw(), got {placement!r}")
    return placement


__all__ = ["PLACEMENTS", "RandomPlacement", "RingPlacement", "RingSubset", "get_placement"]
