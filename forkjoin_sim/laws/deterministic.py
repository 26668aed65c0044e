"""A constant time as a law (``deterministic`` and ``const:`` specs)."""

from __future__ import annotations

from typing import Any

import math

import numpy as np

from forkjoin_sim.errors import ConfigError


class Deterministic:
    """A point mass: every service time equals ``value``.

    scipy.stats has no frozen degenerate continuous distribution, so this supplies
    the same interface. ``rvs`` draws no random numbers from ``random_state``.
    """

    def __init__(self, value: float) -> None:
        _check_mean(value, "deterministic service time")
        self.value = float(value)

    def rvs(self, size: int | tuple[int, ...] | None = None,
            random_state: Any = None) -> Any:
        """``size`` copies of ``value`` (a float when ``size`` is None)."""
        return self.value if size is None else np.full(size, self.value)

    def mean(self) -> float:
        """The value."""
        return self.value

    def moment(self, order: int) -> float:
        """``value ** order``."""
        return self.value ** order

    def var(self) -> float:
        """0."""
        return 0.0

    def std(self) -> float:
        """0."""
        return 0.0

    def cdf(self, x: Any) -> Any:
        """1 where ``x >= value``, else 0."""
        result = np.where(np.asarray(x, dtype=float) >= self.value, 1.0, 0.0)
        return result[()] if result.ndim == 0 else result

    def ppf(self, q: Any) -> Any:
        """``value`` for q in [0, 1], nan outside."""
        q = np.asarray(q, dtype=float)
        result = np.where((q >= 0) & (q <= 1), self.value, np.nan)
        return result[()] if result.ndim == 0 else result

    def scaled(self, factor: float) -> Deterministic:
        """The point mass at ``factor * value``."""
        return Deterministic(self.value * factor)

    def __repr__(self) -> str:
        return f"Deterministic({self.value:g})"



def _check_mean(value: Any, what: str) -> None:
    if isinstance(value, int) and not isinstance(value, bool) and value > 10**300:
        raise ConfigError(f"{what} above 1e300 is too large; give times in another unit")
    if not (isinstance(value, (int, float, np.integer, np.floating))
            and not isinstance(value, bool) and math.isfinite(value) and value > 0):
        raise ConfigError(f"{what} must be a positive finite number, got {value!r}")
