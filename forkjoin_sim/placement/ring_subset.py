"""Ring-subset placement: some of a key's replicas, e.g. the k replicas a read asks."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from forkjoin_sim.errors import ConfigError
from forkjoin_sim.placement.random_subset import _random_subsets


@dataclass(frozen=True)
class RingSubset:
    """The key's replicas are ``window`` consecutive ring nodes from a uniform start;
    a job's tasks go to a uniformly random ordered subset of them. A Cassandra read at
    consistency k asks k of the r replicas: ``RingSubset(r)`` with k tasks; the first
    task (the data request) goes to a uniformly chosen replica, as with a token-aware
    client whose coordinator is a replica, the others (digests) to distinct others."""

    window: int
    name = "ring-subset"

    def __post_init__(self) -> None:
        if (isinstance(self.window, bool) or not isinstance(self.window, (int, np.integer))
                or self.window < 1):
            raise ConfigError(f"ring-subset window must be a whole number >= 1, got "
                              f"{self.window!r}")

    def draw(self, node_count: int, replicas: int, jobs: int,
             rng: np.random.Generator) -> np.ndarray:
        if not replicas <= self.window <= node_count:
            raise ConfigError(f"ring-subset: {replicas} tasks from a window of "
                              f"{self.window} replicas on {node_count} nodes; need "
                              "tasks <= window <= nodes")
        start = rng.integers(0, node_count, size=jobs, dtype=np.int32)
        offsets = rng.integers(0, self.window - np.arange(replicas),
                               size=(jobs, replicas))
        chosen = _random_subsets(offsets, self.window)
        return ((start[:, None] + chosen) % node_count).astype(np.int32)
