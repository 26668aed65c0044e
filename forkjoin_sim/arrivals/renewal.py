"""Renewal arrivals: i.i.d. gaps of any law, rescaled to a given rate."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from forkjoin_sim.errors import ConfigError
from forkjoin_sim.arrivals._checks import positive_rate


@dataclass(frozen=True)
class Renewal:
    """Gaps drawn from ``law`` (any frozen scipy.stats distribution, ``Empirical`` ...)
    and scaled so that their mean is ``1/rate``."""

    law: Any
    rate: float
    closed = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "rate", positive_rate(self.rate))
        if not (hasattr(self.law, "rvs") and hasattr(self.law, "mean")):
            raise ConfigError(f"renewal gap law must be a frozen scipy.stats distribution "
                              f"or an Empirical, got {type(self.law).__name__}")
        mean = float(self.law.mean())
        if not mean > 0 or mean == float("inf"):
            raise ConfigError(f"renewal gap law must have a finite positive mean, got "
                              f"{mean}")

    def arrival_times(self, clock: float, first: int, jobs: int,
                      rng: np.random.Generator) -> np.ndarray:
        gaps = np.asarray(self.law.rvs(size=jobs, random_state=rng), dtype=float)
        return clock + np.cumsum(gaps * (1.0 / (self.rate * float(self.law.mean()))))

    def describe(self) -> str:
        return f"renewal arrivals, {self.rate:g} jobs per unit time"
