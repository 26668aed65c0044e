"""One FIFO queue per node for every kind of task (the paper's node)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from forkjoin_sim.errors import ConfigError


@dataclass(frozen=True)
class SharedQueue:
    """All tasks, reads and writes alike, wait in one FCFS queue served by ``threads``
    threads. A read never overtakes a write queued before it at the same node (with
    one thread)."""

    threads: int = 1

    def __post_init__(self) -> None:
        if (isinstance(self.threads, bool) or not isinstance(self.threads, (int, np.integer))
                or self.threads < 1):
            raise ConfigError(f"threads must be a whole number >= 1, got {self.threads!r}")

    @property
    def stage_of(self) -> np.ndarray:
        return np.zeros(4, dtype=np.int64)

    @property
    def stage_threads(self) -> np.ndarray:
        return np.array([self.threads], dtype=np.int64)

    @property
    def stage_names(self) -> tuple[str, ...]:
        return ("queue",)

    def describe(self) -> str:
        return f"one shared FIFO queue per node ({self.threads} thread(s))"
