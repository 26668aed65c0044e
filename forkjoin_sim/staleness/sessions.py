"""Session guarantees of partial quorums without load: does a client see its own
write, and can it see time go backwards?

The cluster is that of ``forkjoin_sim.staleness.channels`` (the key's replicas are
nodes 0 .. replicas-1, ordered or independent channels, one, random or token-aware
coordinators, no time for a node's messages to itself). Each trial is one session:

* ``"read-your-writes"``: the client writes the key, and reads it ``gap`` after
  the write returns (its commit). Violated if the read returns the old version.
  This is ``simulate_wars_ordered`` with ``after="commit"``: the same numbers.
* ``"monotonic-reads"``: another client's write starts at 0; this client reads
  ``gap`` after the write's start, then reads again ``think`` after the first read
  returns. Violated if the first read returns the new version and the second the
  old one. On FIFO channels the second read follows the first (and the write) on
  every channel they share.

With ``coordinators="random"`` or ``"token-aware"`` each operation of a session
has its own coordinator, as a driver that does not stick a session to a node.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import pandas as pd

from forkjoin_sim.errors import ConfigError
from forkjoin_sim.randomness.streams import WARS_COORDINATOR, WARS_READ, WARS_READ_DELAY
from forkjoin_sim.randomness.streams import WARS_RESPONSE, child_rng
from forkjoin_sim.staleness.intervals import share
from forkjoin_sim.staleness.channels import (_check_level, _read_delays, _trace,
                                             read_messages, read_outcome,
                                             simulate_wars_ordered)
from forkjoin_sim.staleness.wars import MessageLaws

GUARANTEES = ("read-your-writes", "monotonic-reads")
#: The second read of a monotonic-reads session draws from index 1 of the WARS
#: purposes (its coordinator, request and response delays, the think time), so the
#: write and the first read keep the numbers of ``simulate_wars_ordered``.
_SECOND = 1


@dataclass(frozen=True)
class SessionResult:
    """Per session: the time between the write and the (first) read, and whether
    the guarantee was violated; ``correlated``: sessions of one run under load, in
    issue order, whose queues make violations come in runs, so their intervals are
    widened as a loaded run's shares are (`forkjoin_sim.staleness.intervals.share`);
    else independent trials (Wilson's interval)."""

    guarantee: str
    replicas: int
    read_quorum: int
    write_quorum: int
    channels: str
    coordinators: str
    nodes: int
    gap: np.ndarray = field(repr=False)
    violated: np.ndarray = field(repr=False)
    correlated: bool = False

    @property
    def trials(self) -> int:
        """Number of sessions simulated."""
        return int(self.violated.size)

    def _share(self, violated: np.ndarray, confidence: float) -> dict:
        """Count, total, fraction and its interval (NaN without sessions)."""
        _check_level(confidence, "confidence")
        p, low, high = share(violated, confidence, None if self.correlated else 1.0)
        return {"sessions": int(violated.size), "violations": int(violated.sum()),
                "probability": p, "low": low, "high": high}

    def summary(self, confidence: float = 0.95) -> dict:
        """``violations``, ``sessions``, ``probability`` and its interval ``low``,
        ``high``."""
        return self._share(self.violated, confidence)

    def by_gap(self, edges: Sequence[float], confidence: float = 0.95) -> pd.DataFrame:
        """P(violated) per bin [edges[j], edges[j+1]) of the gap (the last bin is
        open): columns ``gap_low``, ``gap_high`` (NaN for the last), ``sessions``,
        ``violations``, ``probability``, ``low``, ``high``."""
        edges = [float(e) for e in edges]
        if not edges or any(b <= a for a, b in zip(edges, edges[1:])):
            raise ConfigError(f"gap bin edges {edges!r} must be one or more increasing "
                              "numbers, e.g. 0,1,2,5,10")
        rows = []
        for j, low in enumerate(edges):
            high = edges[j + 1] if j + 1 < len(edges) else None
            inside = (self.gap >= low) & (True if high is None else self.gap < high)
            row = self._share(self.violated[inside], confidence)
            rows.append({"gap_low": low, "gap_high": high, **row})
        return pd.DataFrame(rows)


def read_your_writes(laws: MessageLaws, replicas: int, read_quorum: int,
                     write_quorum: int, *, gap: Any = 0.0, channels: str = "fifo",
                     coordinators: str = "one", nodes: int | None = None,
                     trials: int = 100_000, seed: int | np.random.SeedSequence = 0
                     ) -> SessionResult:
    """Sessions that write, then read ``gap`` after the write returns (module
    docstring). ``gap``: a number >= 0, one per trial, or a law with ``rvs``."""
    run = simulate_wars_ordered(laws, replicas, read_quorum, write_quorum,
                                read_delays=gap, after="commit", channels=channels,
                                coordinators=coordinators, nodes=nodes, trials=trials,
                                seed=seed)
    return SessionResult("read-your-writes", replicas, read_quorum, write_quorum,
                         channels, coordinators, run.nodes, run.read_start - run.commit,
                         ~run.new)


def monotonic_reads(laws: MessageLaws, replicas: int, read_quorum: int,
                    write_quorum: int, *, gap: Any = 0.0, think: Any = 0.0,
                    channels: str = "fifo", coordinators: str = "one",
                    nodes: int | None = None, trials: int = 100_000,
                    seed: int | np.random.SeedSequence = 0) -> SessionResult:
    """Sessions that read ``gap`` after another client's write starts and again
    ``think`` after that read returns (module docstring). ``gap`` and ``think``: a
    number >= 0, one per trial, or a law with ``rvs``."""
    first, messages = _trace(laws, replicas, read_quorum, write_quorum,
                             read_delays=gap, after="start", channels=channels,
                             coordinators=coordinators, nodes=nodes, trials=trials,
                             seed=seed)
    trials, nodes = first.trials, first.nodes
    writer, reader = messages["writer"], messages["reader"]
    if coordinators == "one":
        second_reader = reader
    else:
        choices = nodes if coordinators == "random" else replicas
        second_reader = child_rng(seed, WARS_COORDINATOR, _SECOND).integers(choices,
                                                                            size=trials)
    start, reached = first.read_start, messages["reached"]
    returned = start + first.read_latency
    pause = _second(think, trials, seed)
    request, response = (np.asarray(getattr(laws, role).rvs(
        size=(trials, replicas), random_state=child_rng(seed, purpose, _SECOND)),
        dtype=float) for role, purpose in (("read", WARS_READ),
                                           ("response", WARS_RESPONSE)))
    if np.any(request < 0) or np.any(response < 0):
        raise ConfigError("WARS read or response law drew negative delays; use a law "
                          "on [0, inf)")
    earlier = ([(writer, reached, messages["acked"]),
                (reader, messages["asked"], messages["answered"])]
               if channels == "fifo" else [])
    asked_again, answered_again = read_messages(returned + pause, second_reader,
                                                request, response, earlier)
    new_second, _ = read_outcome(asked_again, answered_again, reached, read_quorum)
    return SessionResult("monotonic-reads", replicas, read_quorum, write_quorum,
                         channels, coordinators, nodes, start, first.new & ~new_second)


def simulate_session(guarantee: str, laws: MessageLaws, replicas: int,
                     read_quorum: int, write_quorum: int, **options) -> SessionResult:
    """``read_your_writes`` or ``monotonic_reads`` by the name of the guarantee."""
    if guarantee == "read-your-writes":
        if "think" in options:
            raise ConfigError("think is the pause between the two reads of "
                              "monotonic-reads; read-your-writes has one read")
        return read_your_writes(laws, replicas, read_quorum, write_quorum, **options)
    if guarantee == "monotonic-reads":
        return monotonic_reads(laws, replicas, read_quorum, write_quorum, **options)
    raise ConfigError(f"session guarantee {guarantee!r} is unknown; use one of "
                      f"{', '.join(GUARANTEES)}")


def level_names(quorum: int, replicas: int) -> str:
    """Cassandra's names of the consistency level that waits for ``quorum`` of
    ``replicas`` replies, e.g. "TWO/QUORUM" for 2 of 3 ("-" if none)."""
    from forkjoin_sim.cassandra.model import CONSISTENCY_LEVELS, consistency_quorum

    names = []
    for name in CONSISTENCY_LEVELS:
        try:
            if consistency_quorum(name, replicas) == quorum:
                names.append(name)
        except ConfigError:  # a level needing more replicas than there are
            pass
    return "/".join(names) or "-"


def _second(think: Any, trials: int, seed) -> np.ndarray:
    """The think time between the two reads per trial, from its own stream."""
    if callable(getattr(think, "rvs", None)):
        think = think.rvs(size=trials, random_state=child_rng(seed, WARS_READ_DELAY,
                                                             _SECOND))
    try:
        return _read_delays(think, trials, seed)
    except ConfigError:
        raise ConfigError("think must be a number >= 0, one per trial or a law with "
                          "rvs(size, random_state) on [0, inf)") from None



