"""Argument checks shared by the arrival processes."""

from __future__ import annotations

import math

import numpy as np

from ..errors import ConfigError


def positive_rate(rate, what: str = "arrival rate") -> float:
    """``rate`` as a positive finite float."""
    if (isinstance(rate, bool) or not isinstance(rate, (int, float, np.integer, np.floating))
            or not math.isfinite(rate) or rate <= 0):
        raise ConfigError(f"{what} must be a positive finite number of jobs per unit "
                          f"time, got {rate!r}")
    if not (1e-200 <= rate <= 1e200):
        # the gaps 1/rate (and their sums) would overflow to inf or underflow to 0
        raise ConfigError(f"{what} {rate:g} is too {'small' if rate < 1 else 'large'} "
                          "to simulate (gaps of 1/rate overflow); give times in another "
                          "unit so that the rate lies in [1e-200, 1e200]")
    return float(rate)
