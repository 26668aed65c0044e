"""Ring placement: r consecutive nodes of a token ring from a uniform start (Cassandra)."""

from __future__ import annotations

import numpy as np


class RingPlacement:
    """A key's replicas are ``replicas`` consecutive nodes from a uniform start node."""

    name = "ring"

    def draw(self, node_count: int, replicas: int, jobs: int,
             rng: np.random.Generator) -> np.ndarray:
        start = rng.integers(0, node_count, size=jobs, dtype=np.int32)
        return ((start[:, None] + np.arange(replicas, dtype=np.int32)) % node_count
                ).astype(np.int32)

    def __repr__(self) -> str:
        return "RingPlacement()"
