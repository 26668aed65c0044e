"""Argument checks shared by the arrival processes."""

from __future__ import annotations

import math

import numpy as np

from forkjoin_sim.errors import ConfigError


def positive_rate(rate, what: str = "arrival rate") -> float:
    """``rate`` as a positive finite float."""
    if isinstance(rate, (int, np.integer)) and not isinstance(rate, bool) \
            and abs(int(rate)) > 10**300:
        raise ConfigError(f"{what} above 1e300 is too large to simulate; give times in "
                          "another unit")
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


#: Finest time step, relative to a mean service time, that a run's clock must still
#: resolve at its end (float64 carries about 16 digits: far out on the clock, short
#: services round away and sojourns come out as 0 or in coarse steps).
CLOCK_RESOLUTION = 1e-4


def check_clock(rate: float, jobs: int, service_mean: float) -> None:
    """Refuse an open run whose clock, at about ``jobs / rate``, can no longer resolve
    service times of ``service_mean`` (e.g. a per-job load of 1e-13)."""
    end = jobs / rate
    step = end * np.finfo(float).eps
    if step > CLOCK_RESOLUTION * service_mean:
        raise ConfigError(f"{jobs:,} jobs at {rate:g} per unit time take the clock to "
                          f"about {end:.3g}, where time resolves only to {step:.2g}: too "
                          f"coarse for service times of about {service_mean:.3g}; raise "
                          "the load (the answer at this load is the no-load one) or run "
                          "fewer jobs")
