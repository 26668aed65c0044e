"""Random placement: a uniformly random r-subset of the nodes per job (Definition 1)."""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def _random_subsets(offsets: np.ndarray, node_count: int) -> np.ndarray:
    """Ordered uniform r-subsets of range(node_count) by partial Fisher-Yates.

    ``offsets[j, t]`` is uniform on ``0 .. node_count - t - 1``; the swaps are undone
    after each job so every job starts from the identity permutation.
    """
    jobs, width = offsets.shape
    out = np.empty((jobs, width), dtype=np.int32)
    perm = np.arange(node_count, dtype=np.int32)
    for j in range(jobs):
        for t in range(width):
            s = t + offsets[j, t]
            perm[t], perm[s] = perm[s], perm[t]
            out[j, t] = perm[t]
        for t in range(width - 1, -1, -1):
            s = t + offsets[j, t]
            perm[t], perm[s] = perm[s], perm[t]
    return out


class RandomPlacement:
    """Each job's tasks go to a uniformly random set of ``replicas`` distinct nodes."""

    name = "random"

    def draw(self, node_count: int, replicas: int, jobs: int,
             rng: np.random.Generator) -> np.ndarray:
        if replicas == node_count:
            # Every node gets a task; order within a job is irrelevant to FCFS queues.
            return np.broadcast_to(np.arange(node_count, dtype=np.int32),
                                   (jobs, replicas)).copy()
        offsets = rng.integers(0, node_count - np.arange(replicas), size=(jobs, replicas))
        return _random_subsets(offsets, node_count)

    def __repr__(self) -> str:
        return "RandomPlacement()"
