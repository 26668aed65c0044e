"""The run's random streams: independent generators, each a pure function of the seed.

Every ingredient of a sample path (arrivals, placement and service of each class,
class labels, stragglers ...) has its own child of the run's ``SeedSequence``, so its
numbers do not depend on the others, on block sizes, or on the engine.
"""

from __future__ import annotations

import numpy as np

#: Child indices of the run's SeedSequence. Class c >= 1 uses
#: ``CLASS_BASE + 2*(c-1)`` (placement) and the next one (service); class 0 keeps
#: 1 and 2, so a one-class run draws exactly what the plain fork-join queue draws.
ARRIVALS, PLACEMENT, SERVICE, CLASS_LABELS, CLASS_BASE = 0, 1, 2, 3, 4
#: Class c's overhead (time outside the node queues) uses child OVERHEAD_BASE + c.
OVERHEAD_BASE = 40


def as_seed_sequence(seed) -> np.random.SeedSequence:
    """``seed`` (a whole number >= 0, or a SeedSequence) as a SeedSequence."""
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        from .errors import ConfigError

        raise ConfigError(f"seed must be a whole number >= 0, got {seed!r}; e.g. --seed 1")
    return np.random.SeedSequence(int(seed))


def child_rng(seed, *key: int) -> np.random.Generator:
    """The generator of child ``key`` of ``seed``, as ``seed.spawn`` would give it,
    built without advancing the SeedSequence."""
    seq = as_seed_sequence(seed)
    return np.random.default_rng(np.random.SeedSequence(
        seq.entropy, spawn_key=seq.spawn_key + key, pool_size=seq.pool_size))


def class_streams(seed, index: int) -> tuple[np.random.Generator, np.random.Generator]:
    """(placement, service) generators of class ``index``."""
    if index == 0:
        return child_rng(seed, PLACEMENT), child_rng(seed, SERVICE)
    base = CLASS_BASE + 2 * (index - 1)
    return child_rng(seed, base), child_rng(seed, base + 1)
