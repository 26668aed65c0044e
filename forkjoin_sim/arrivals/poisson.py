"""Poisson arrivals (exponential gaps) and periodic arrivals (constant gaps)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._checks import positive_rate


@dataclass(frozen=True)
class Poisson:
    """A Poisson process of ``rate`` jobs per unit time (the paper's arrivals)."""

    rate: float
    closed = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "rate", positive_rate(self.rate))

    def arrival_times(self, clock: float, first: int, jobs: int,
                      rng: np.random.Generator) -> np.ndarray:
        return clock + np.cumsum(rng.exponential(1.0 / self.rate, size=jobs))

    def describe(self) -> str:
        return f"Poisson arrivals, {self.rate:g} jobs per unit time"


@dataclass(frozen=True)
class Periodic:
    """One job every ``1/rate`` time units (deterministic arrivals)."""

    rate: float
    closed = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "rate", positive_rate(self.rate))

    def arrival_times(self, clock: float, first: int, jobs: int,
                      rng: np.random.Generator) -> np.ndarray:
        return clock + np.cumsum(np.full(jobs, 1.0 / self.rate))

    def describe(self) -> str:
        return f"periodic arrivals, {self.rate:g} jobs per unit time"
