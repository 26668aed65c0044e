"""Poisson arrivals (exponential gaps) and periodic arrivals (constant gaps)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from forkjoin_sim.arrivals._checks import positive_rate


@dataclass(frozen=True)
class Poisson:
    """A Poisson process of ``rate`` jobs per unit time (the paper's arrivals)."""

    rate: float
    closed = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "rate", positive_rate(self.rate))

    def gaps(self, jobs: int, rng: np.random.Generator) -> np.ndarray:
        return rng.exponential(1.0 / self.rate, size=jobs)

    def arrival_times(self, clock: float, first: int, jobs: int,
                      rng: np.random.Generator) -> np.ndarray:
        return clock + np.cumsum(self.gaps(jobs, rng))

    def describe(self) -> str:
        return f"{type(self).__name__.lower()} arrivals, {self.rate:g} jobs per unit time"


class Periodic(Poisson):
    """One job every ``1/rate`` time units (deterministic arrivals)."""

    def gaps(self, jobs: int, rng: np.random.Generator) -> np.ndarray:
        return np.full(jobs, 1.0 / self.rate)
