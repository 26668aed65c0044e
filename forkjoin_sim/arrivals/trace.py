"""Trace arrivals: measured request timestamps replayed in order."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from forkjoin_sim.errors import ConfigError


@dataclass(frozen=True, eq=False)
class Trace:
    """Arrival times taken from a recorded trace (shifted to start at its first gap).

    ``times`` are absolute, non-decreasing timestamps in the service time unit. A
    run may use at most ``len(times)`` jobs.
    """

    times: np.ndarray
    closed = False

    def __post_init__(self) -> None:
        try:
            times = np.asarray(self.times, dtype=float)
        except (TypeError, ValueError):
            raise ConfigError("a trace holds numbers, one arrival timestamp each; got "
                              f"{str(self.times)[:40]}") from None
        if times.ndim != 1 or times.size < 2:
            raise ConfigError("a trace needs at least 2 timestamps in one column")
        if not np.all(np.isfinite(times)):
            raise ConfigError("a trace holds a non-finite timestamp; remove it")
        if np.any(np.diff(times) < 0):
            bad = int(np.flatnonzero(np.diff(times) < 0)[0]) + 1
            raise ConfigError(f"trace timestamps must not decrease, but entry {bad} "
                              f"({times[bad]}) is before entry {bad - 1}; sort the trace")
        times = times - times[0]
        if times[-1] <= 0:
            raise ConfigError("a trace must span a positive time")
        object.__setattr__(self, "times", times)

    @classmethod
    def from_file(cls, path: str | Path, scale: float = 1.0) -> "Trace":
        """One timestamp per line (``#`` comments allowed), multiplied by ``scale``."""
        from forkjoin_sim.laws.empirical import _content, _is_number, _read_lines
        from forkjoin_sim.checks import plain_float

        name = str(path)
        if isinstance(scale, bool) or not isinstance(scale, (int, float, np.number)) \
                or not (np.isfinite(scale) and scale > 0):
            raise ConfigError(f"scale={scale!r} must be a positive number (the factor "
                              "that turns the file's timestamps into the service unit)")
        values = []
        for number, text in _content(_read_lines(name)):
            if not _is_number(text):
                raise ConfigError(f"{name} line {number}: {text!r} is not a number; a "
                                  "trace file holds one arrival timestamp per line")
            values.append(plain_float(text))
        return cls(np.asarray(values) * scale)

    @property
    def rate(self) -> float:
        """Mean arrival rate over the trace."""
        return (self.times.size - 1) / float(self.times[-1])

    def arrival_times(self, clock: float, first: int, jobs: int,
                      rng: np.random.Generator) -> np.ndarray:
        if first + jobs > self.times.size:
            raise ConfigError(f"the trace has {self.times.size} arrivals but the run "
                              f"asks for {first + jobs}; use at most that many jobs")
        return self.times[first:first + jobs].copy()

    def describe(self) -> str:
        return (f"trace arrivals, {self.times.size:,} timestamps, "
                f"{self.rate:g} jobs per unit time")
