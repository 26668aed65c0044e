"""The law of a sum of independent times (e.g. two network hops plus coordinator work)."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from forkjoin_sim.errors import ConfigError


class SumOf:
    """X_1 + ... + X_m for independent X_i of the given laws.

    Offers what the run stack asks of a law: ``rvs(size, random_state)`` (each part
    drawn in turn from the same generator), ``mean()`` and ``moment(2)``.
    """

    def __init__(self, parts: Sequence[Any]):
        parts = [p for p in parts if p is not None]
        if not parts or not all(hasattr(p, "rvs") and hasattr(p, "mean") for p in parts):
            raise ConfigError("SumOf needs at least one law with rvs() and mean()")
        self.parts = tuple(parts)

    def rvs(self, size=None, random_state=None):
        total = 0.0
        for part in self.parts:
            total = total + np.asarray(part.rvs(size=size, random_state=random_state),
                                       dtype=float)
        return total

    def mean(self) -> float:
        return float(sum(float(p.mean()) for p in self.parts))

    def var(self) -> float:
        return float(sum(float(p.var()) for p in self.parts))

    def moment(self, order: int) -> float:
        if order == 1:
            return self.mean()
        if order == 2:
            return self.var() + self.mean() ** 2
        raise ConfigError("SumOf gives moments of order 1 and 2 only")

    def __repr__(self) -> str:
        return f"SumOf({', '.join(map(repr, self.parts))})"
