"""Separate read and write stages per node (Cassandra's ReadStage and MutationStage)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from forkjoin_sim.errors import ConfigError


@dataclass(frozen=True)
class Stages:
    """Reads (data and digest requests, and plain tasks) queue in a read stage of
    ``read_threads`` threads; writes in a mutation stage of ``write_threads``. Each
    stage is FCFS; the stages do not wait for each other, so a read arriving after a
    write at the same node can finish first."""

    read_threads: int = 1
    write_threads: int = 1

    def __post_init__(self) -> None:
        for name in ("read_threads", "write_threads"):
            value = getattr(self, name)
            if (isinstance(value, bool) or not isinstance(value, (int, np.integer))
                    or value < 1):
                raise ConfigError(f"{name} must be a whole number >= 1, got {value!r}")

    @property
    def stage_of(self) -> np.ndarray:
        # kinds: task, read, digest -> stage 0 (reads); write -> stage 1 (mutations)
        return np.array([0, 0, 0, 1], dtype=np.int64)

    @property
    def stage_threads(self) -> np.ndarray:
        return np.array([self.read_threads, self.write_threads], dtype=np.int64)

    @property
    def stage_names(self) -> tuple[str, ...]:
        return ("read", "mutation")

    def describe(self) -> str:
        return (f"separate stages per node: reads {self.read_threads} thread(s), "
                f"mutations {self.write_threads} thread(s)")
