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
    return float(rate)
