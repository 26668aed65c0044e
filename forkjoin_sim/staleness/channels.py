"""WARS with ordered connections and a choice of coordinators (no load).

PBS's WARS (``forkjoin_sim.staleness.wars``) draws every message delay
independently, so a read request may overtake, on the wire, the write request that
the same coordinator sent to the same replica before it. Cassandra sends all
requests from one node to another over one long-lived TCP connection, which
delivers in order. Here each ordered pair of nodes is one channel:

* ``channels="independent"``: every message's delay is its own draw (WARS).
* ``channels="fifo"``: a message arrives no earlier than the message sent before it
  on the same channel. A read request that a coordinator sends to replica i after
  the write request reaches i at max(own arrival, the write's arrival); i's read
  response, sent after its acknowledgement, comes back no earlier than the ack.

Coordinators: the key's replicas are nodes 0 .. replicas-1 of ``nodes``.

* ``"one"``: the write and the read go through the same node: the last node,
  which holds no replica when ``nodes > replicas`` (the default ``nodes`` is then
  replicas + 1, PBS's micro-benchmark set-up), else replica ``nodes - 1``.
* ``"random"``: each operation's coordinator is a uniformly random node.
* ``"token-aware"``: each operation's coordinator is a uniformly random replica.

A message from a node to itself takes no time. Each trial: the write starts at 0
and is sent to every replica; it commits at the ``write_quorum``-th
acknowledgement; the read starts ``read_delays`` after the write's start or commit
(``after``), is sent to every replica and returns with the first ``read_quorum``
responses, new iff one of them comes from a replica the write had reached when the
read request arrived. A read is *stale* if it started at or after the commit and is
not new; a read started before the commit (in flight) is never stale.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from numbers import Integral
from typing import Any, Sequence

import numpy as np
import pandas as pd

from forkjoin_sim.checks import check_percentile
from forkjoin_sim.errors import ConfigError
from forkjoin_sim.randomness.streams import WARS_COORDINATOR as _COORDINATOR
from forkjoin_sim.randomness.streams import WARS_READ_DELAY as _READ_DELAY
from forkjoin_sim.randomness.streams import child_rng
from forkjoin_sim.staleness.intervals import wilson
from forkjoin_sim.staleness.wars import MessageLaws

CHANNELS = ("fifo", "independent")
COORDINATORS = ("one", "random", "token-aware")
# The delays use the WARS streams of `randomness.streams` in simulate_wars's order
# (write, ack, read, response), so the same seed gives the same delays.
_ROLES = ("write", "ack", "read", "response")


@dataclass(frozen=True)
class OrderedResult:
    """Per trial: commit time, read start (both after the write's start), whether
    the read returned the new version, and the read latency."""

    replicas: int
    read_quorum: int
    write_quorum: int
    channels: str
    coordinators: str
    nodes: int
    commit: np.ndarray = field(repr=False)
    read_start: np.ndarray = field(repr=False)
    new: np.ndarray = field(repr=False)
    read_latency: np.ndarray = field(repr=False)

    @property
    def trials(self) -> int:
        """Number of (write, read) pairs simulated."""
        return int(self.commit.size)

    @property
    def in_flight(self) -> np.ndarray:
        """Per trial: the read started before the write committed."""
        return self.read_start < self.commit

    @property
    def stale(self) -> np.ndarray:
        """Per trial: the read started at or after commit and returned the old
        version."""
        return ~self.in_flight & ~self.new

    def summary(self, confidence: float = 0.95) -> pd.DataFrame:
        """Counts and probabilities with Wilson intervals: ``stale`` among all
        reads, ``in_flight`` among all reads, ``new_in_flight`` among in-flight
        reads. Columns ``event``, ``count``, ``of``, ``probability``, ``low``,
        ``high``."""
        _check_level(confidence, "confidence")
        flight = self.in_flight
        rows = []
        for event, count, total in (
                ("stale", int(self.stale.sum()), self.trials),
                ("in_flight", int(flight.sum()), self.trials),
                ("new_in_flight", int((self.new & flight).sum()), int(flight.sum()))):
            p, low, high = wilson(count, total, confidence)
            rows.append({"event": event, "count": count, "of": total,
                         "probability": p, "low": low, "high": high})
        return pd.DataFrame(rows)

    def latency_quantiles(self, percentiles: Sequence[float] = (50, 90, 99, 99.9)
                          ) -> pd.DataFrame:
        """Read and write (commit) latency at each percentile (``numpy.percentile``)."""
        percentiles = [check_percentile(p) for p in percentiles]
        return pd.DataFrame({"percentile": percentiles,
                             "read": np.percentile(self.read_latency, percentiles),
                             "write": np.percentile(self.commit, percentiles)})


def simulate_wars_ordered(laws: MessageLaws, replicas: int, read_quorum: int,
                          write_quorum: int, *, read_delays: Any = 0.0,
                          after: str = "commit", channels: str = "fifo",
                          coordinators: str = "one", nodes: int | None = None,
                          trials: int = 100_000,
                          seed: int | np.random.SeedSequence = 0) -> OrderedResult:
    """Run ``trials`` independent (write, read) pairs with ordered or independent
    channels (module docstring).

    ``read_delays``: when the read starts after the write's start (``after=
    "start"``) or commit (``"commit"``): a number >= 0, an array of one value per
    trial, or a law with ``rvs(size, random_state)``. The delays come from the
    same child streams of ``seed`` as ``simulate_wars``'s, so with
    ``channels="independent"``, a coordinator that holds no replica and reads at a
    fixed t after commit the trials are exactly those of ``simulate_wars``.
    """
    return _trace(laws, replicas, read_quorum, write_quorum, read_delays=read_delays,
                  after=after, channels=channels, coordinators=coordinators,
                  nodes=nodes, trials=trials, seed=seed)[0]


def _trace(laws: MessageLaws, replicas: int, read_quorum: int, write_quorum: int, *,
           read_delays: Any, after: str, channels: str, coordinators: str,
           nodes: int | None, trials: int, seed) -> tuple[OrderedResult, dict]:
    """``simulate_wars_ordered``'s result and its messages: ``writer``, ``reader``
    (coordinator per trial), ``reached``, ``acked`` (the write at and back from each
    replica), ``asked``, ``answered`` (the read's), for sessions that go on."""
    replicas = _whole(replicas, "replicas", 1)
    read_quorum = _whole(read_quorum, "read quorum", 1)
    write_quorum = _whole(write_quorum, "write quorum", 1)
    for label, quorum in (("read", read_quorum), ("write", write_quorum)):
        if quorum > replicas:
            raise ConfigError(f"{label} quorum {quorum} exceeds replicas {replicas}; "
                              f"use 1 <= {label} quorum <= replicas")
    trials = _whole(trials, "trials", 1)
    if channels not in CHANNELS:
        raise ConfigError(f"channels={channels!r}; use one of {', '.join(CHANNELS)}")
    if coordinators not in COORDINATORS:
        raise ConfigError(f"coordinators={coordinators!r}; use one of "
                          f"{', '.join(COORDINATORS)}")
    if after not in ("start", "commit"):
        raise ConfigError(f"after={after!r}; use 'start' (read delays from the "
                          "write's start) or 'commit' (from its commit)")
    if nodes is None:
        nodes = replicas + 1 if coordinators == "one" else replicas
    nodes = _whole(nodes, "nodes", replicas)
    if not isinstance(laws, MessageLaws):
        raise ConfigError(f"laws must be a MessageLaws (write, ack, read, response), "
                          f"got {type(laws).__name__}")
    if laws.remote_delay > 0:
        raise ConfigError("simulate_wars_ordered has no wide-area layout; give "
                          "MessageLaws with remote_delay=0")
    delays = _draw(laws, replicas, trials, seed)

    writer, reader = _coordinators(coordinators, nodes, replicas, trials, seed)
    index = np.arange(replicas)
    # A node's messages to itself take no time.
    local_write = writer[:, None] == index
    reached = np.where(local_write, 0.0, delays["write"])
    acked = reached + np.where(local_write, 0.0, delays["ack"])
    commit = np.partition(acked, write_quorum - 1, axis=1)[:, write_quorum - 1]

    start = _read_delays(read_delays, trials, seed)
    if after == "commit":
        start = start + commit
    earlier = [(writer, reached, acked)] if channels == "fifo" else []
    asked, answered = read_messages(start, reader, delays["read"], delays["response"],
                                    earlier)
    is_new, returned = read_outcome(asked, answered, reached, read_quorum)
    result = OrderedResult(replicas, read_quorum, write_quorum, channels, coordinators,
                           nodes, commit, start, is_new, returned - start)
    return result, {"writer": writer, "reader": reader, "reached": reached,
                    "acked": acked, "asked": asked, "answered": answered}


def read_messages(start: np.ndarray, reader: np.ndarray, request: np.ndarray,
                  response: np.ndarray, earlier: Sequence[tuple] = ()
                  ) -> tuple[np.ndarray, np.ndarray]:
    """(arrival of the read request at each replica, arrival of its response back at
    the coordinator), both (trials, replicas), for a read that coordinator ``reader``
    starts at ``start`` with one-way delays ``request`` and ``response``.

    ``earlier``: messages sent before on the same channels, as (coordinator, arrival
    at each replica, arrival of the reply back); on FIFO channels the read's request
    and response arrive no earlier than those of an earlier message of the same
    coordinator. Give none for independent channels.
    """
    local = reader[:, None] == np.arange(request.shape[1])
    # A node's messages to itself take no time.
    asked = start[:, None] + np.where(local, 0.0, request)
    for sender, sent_arrival, _ in earlier:
        asked = np.where((sender == reader)[:, None], np.maximum(asked, sent_arrival),
                         asked)
    answered = asked + np.where(local, 0.0, response)
    for sender, _, reply_arrival in earlier:
        answered = np.where((sender == reader)[:, None],
                            np.maximum(answered, reply_arrival), answered)
    return asked, answered


def read_outcome(asked: np.ndarray, answered: np.ndarray, reached: np.ndarray,
                 read_quorum: int) -> tuple[np.ndarray, np.ndarray]:
    """Per trial: whether the read returned the new version (one of its first
    ``read_quorum`` responders had the write, arriving at ``reached``, when the
    request arrived), and when it returned."""
    first = np.argsort(answered, axis=1, kind="stable")[:, :read_quorum]
    returned = np.take_along_axis(answered, first[:, -1:], axis=1)[:, 0]
    return np.take_along_axis(reached <= asked, first, axis=1).any(axis=1), returned


def _draw(laws: MessageLaws, replicas: int, trials: int, seed) -> dict[str, np.ndarray]:
    """The (trials, replicas) one-way delays of each message type."""
    delays = {}
    for key, role in enumerate(_ROLES):
        drawn = np.asarray(getattr(laws, role).rvs(size=(trials, replicas),
                                                   random_state=child_rng(seed, key)),
                           dtype=float)
        if (drawn.shape != (trials, replicas) or not np.all(np.isfinite(drawn))
                or np.any(drawn < 0)):
            raise ConfigError(f"WARS {role} law drew values that are not finite "
                              "delays >= 0; use a law on [0, inf)")
        delays[role] = drawn
    return delays


def _whole(value: Any, what: str, lowest: int) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral) or value < lowest:
        raise ConfigError(f"{what} must be a whole number >= {lowest}, got {value!r}")
    return int(value)


def _check_level(value: Any, what: str) -> None:
    if not (isinstance(value, (int, float, np.floating)) and 0 < value < 1):
        raise ConfigError(f"{what} must be strictly between 0 and 1, got {value!r} "
                          "(e.g. 0.95)")


def _coordinators(mode: str, nodes: int, replicas: int, trials: int, seed
                  ) -> tuple[np.ndarray, np.ndarray]:
    """(write coordinator, read coordinator) node index per trial."""
    if mode == "one":
        node = np.full(trials, nodes - 1)
        return node, node
    choices = nodes if mode == "random" else replicas
    drawn = child_rng(seed, _COORDINATOR).integers(choices, size=(2, trials))
    return drawn[0], drawn[1]


def _read_delays(read_delays: Any, trials: int, seed) -> np.ndarray:
    """The read start per trial after the reference point, as floats >= 0."""
    if callable(getattr(read_delays, "rvs", None)):
        values = read_delays.rvs(size=trials,
                                 random_state=child_rng(seed, _READ_DELAY))
    else:
        values = read_delays
    try:
        values = np.broadcast_to(np.asarray(values, dtype=float), (trials,)).copy()
    except (TypeError, ValueError):
        raise ConfigError(f"read_delays must be a number, {trials} numbers (one per "
                          "trial) or a law with rvs(size, random_state)") from None
    if not np.all(np.isfinite(values)) or np.any(values < 0):
        raise ConfigError("read_delays must be finite and >= 0; the read starts after "
                          "the write's start or commit")
    return values
