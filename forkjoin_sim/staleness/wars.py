"""The WARS model of a Dynamo-style quorum store, by Monte Carlo (PBS, no queues).

Bailis, Venkataraman, Franklin, Hellerstein, Stoica, "Probabilistically Bounded
Staleness for Practical Partial Quorums", VLDB 2012, Section 4. One write and one
read, each sent by its coordinator to all ``replicas``; every message takes an
independent one-way delay: W (write to a replica), A (its acknowledgement), R (read
request to a replica), S (read response). The write commits when the coordinator
holds ``write_quorum`` acks: at the W-th smallest W_i + A_i after it was sent. A
read starting ``t`` after commit reaches replica i at commit + t + R_i, so replica
i answers with the new version iff W_i <= commit + t + R_i. The read returns the
first ``read_quorum`` responses (smallest R_i + S_i) and is consistent iff one of
them is new.

Each trial gives the wait after commit that makes its read consistent,
min over the first responders of (W_i - commit - R_i), so one set of draws answers
every t at once: P(consistent | t) = P(wait <= t). Nothing queues, so the answer
does not depend on load.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from numbers import Integral
from typing import Any, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from forkjoin_sim.checks import check_percentile
from forkjoin_sim.errors import ConfigError, numbers_in_range
from forkjoin_sim.randomness.streams import child_rng
from forkjoin_sim.staleness.intervals import wilson

# Child streams of the seed, one per purpose, so that e.g. changing the read quorum
# leaves the write delays of every trial unchanged (common random numbers).
from forkjoin_sim.randomness.streams import (  # noqa: E402  (the table of purposes)
    WARS_ACK as _ACK, WARS_LOCAL as _LOCAL, WARS_READ as _READ,
    WARS_RESPONSE as _RESPONSE, WARS_WRITE as _WRITE)


@numbers_in_range
@dataclass(frozen=True)
class MessageLaws:
    """The four one-way delay laws of WARS, plus an optional wide-area layout.

    ``write``, ``ack``, ``read``, ``response`` are laws with ``rvs(size,
    random_state)`` (frozen scipy.stats, ``Empirical``, ``Mixture`` ...), in the
    time unit of the results. With ``remote_delay`` > 0 every operation has one
    replica in its coordinator's data centre, chosen uniformly at random and
    independently for the write and the read; each message to or from any other
    replica takes ``remote_delay`` more (PBS's WAN scenario, 75 ms).
    """

    write: Any
    ack: Any
    read: Any
    response: Any
    remote_delay: float = 0.0
    name: str = ""

    def __post_init__(self) -> None:
        for role in ("write", "ack", "read", "response"):
            if not callable(getattr(getattr(self, role), "rvs", None)):
                raise ConfigError(f"WARS {role} law {getattr(self, role)!r} has no "
                                  "rvs(size, random_state); use a frozen scipy.stats "
                                  "distribution, an Empirical or a Mixture")
        delay = self.remote_delay
        if (isinstance(delay, bool) or not isinstance(delay, (int, float, np.number))
                or not math.isfinite(delay) or delay < 0):
            raise ConfigError(f"remote_delay={delay!r}; give the extra one-way delay "
                              "to another data centre as a number >= 0 (0: one site)")


@dataclass(frozen=True)
class WarsResult:
    """The outcome of ``simulate_wars``: per trial, the wait after commit that makes
    the read consistent, and the read and write latencies.

    ``waits`` are sorted; a wait <= 0 means the read is consistent even when it
    starts at commit.
    """

    replicas: int
    read_quorum: int
    write_quorum: int
    laws: MessageLaws
    waits: np.ndarray = field(repr=False)
    read_latency: np.ndarray = field(repr=False)
    write_latency: np.ndarray = field(repr=False)

    @property
    def trials(self) -> int:
        """Number of (write, read) pairs simulated."""
        return int(self.waits.size)

    def consistency(self, times: Sequence[float] | float,
                    confidence: float = 0.95) -> pd.DataFrame:
        """t-visibility: P(consistent | the read starts t after commit) for each t.

        Columns ``t``, ``consistent`` (count), ``trials``, ``probability`` and the
        Wilson score interval ``low``, ``high`` at ``confidence``
        (`forkjoin_sim.staleness.intervals.wilson`).
        """
        times = np.atleast_1d(np.asarray(times, dtype=float))
        if times.ndim != 1 or not np.all(np.isfinite(times)) or np.any(times < 0):
            raise ConfigError(f"times after commit must be finite numbers >= 0, got "
                              f"{times.tolist()}")
        _check_level(confidence, "confidence")
        counts = np.searchsorted(self.waits, times, side="right")
        intervals = [wilson(int(c), self.trials, confidence) for c in counts]
        return pd.DataFrame({
            "t": times, "consistent": counts, "trials": self.trials,
            "probability": counts / self.trials,
            "low": [ci[1] for ci in intervals], "high": [ci[2] for ci in intervals]})

    def visibility_time(self, probability: float) -> float:
        """The t-visibility for ``probability``: the smallest t >= 0 with
        P(consistent | t) >= probability, from the empirical law of the waits."""
        _check_level(probability, "probability")
        wait = float(np.quantile(self.waits, probability, method="inverted_cdf"))
        return max(wait, 0.0)

    def latency_percentiles(self, percentiles: Sequence[float] = (50, 99, 99.9),
                            confidence: float = 0.95) -> pd.DataFrame:
        """Read latency (R-th smallest R_i + S_i) and write latency (W-th smallest
        W_i + A_i) at each percentile, with distribution-free intervals
        (``scipy.stats.quantile_test(...).confidence_interval``)."""
        _check_level(confidence, "confidence")
        rows = []
        for percentile in percentiles:
            percentile = check_percentile(percentile)
            row = {"percentile": percentile}
            for name, sample in (("read", self.read_latency),
                                 ("write", self.write_latency)):
                p = percentile / 100
                interval = stats.quantile_test(sample, p=p).confidence_interval(confidence)
                row[name] = float(np.quantile(sample, p))
                row[f"{name}_low"], row[f"{name}_high"] = interval.low, interval.high
            rows.append(row)
        return pd.DataFrame(rows)


def simulate_wars(laws: MessageLaws, replicas: int, read_quorum: int,
                  write_quorum: int, trials: int = 100_000,
                  seed: int | np.random.SeedSequence = 0) -> WarsResult:
    """Run ``trials`` independent WARS trials (one write, then one read).

    Vectorised: each law draws a (trials, replicas) array from its own child of
    ``seed`` (``forkjoin_sim.randomness.streams.child_rng``), so results are a function of the
    seed alone and the quorum sizes share their delays (common random numbers).
    """
    replicas = _whole(replicas, "replicas", 1)
    read_quorum = _whole(read_quorum, "read quorum", 1)
    write_quorum = _whole(write_quorum, "write quorum", 1)
    for label, quorum in (("read", read_quorum), ("write", write_quorum)):
        if quorum > replicas:
            raise ConfigError(f"{label} quorum {quorum} exceeds replicas {replicas}; "
                              f"use 1 <= {label} quorum <= replicas")
    trials = _whole(trials, "trials", 1)
    from forkjoin_sim.checks import check_memory

    # about a dozen (trials, replicas) float arrays live at once
    check_memory(96.0 * trials * replicas, f"trials={trials:,} on {replicas} replicas",
                 "use fewer trials")
    delays = _draw(laws, replicas, trials, seed)
    acked = delays["write"] + delays["ack"]
    commit = np.partition(acked, write_quorum - 1, axis=1)[:, write_quorum - 1]
    answered = delays["read"] + delays["response"]
    first = np.argsort(answered, axis=1, kind="stable")[:, :read_quorum]
    read_latency = np.take_along_axis(answered, first[:, -1:], axis=1)[:, 0]
    # Replica i is new for a read started t after commit iff t >= W_i - commit - R_i.
    needed = delays["write"] - commit[:, None] - delays["read"]
    waits = np.sort(np.take_along_axis(needed, first, axis=1).min(axis=1))
    for array in (waits, read_latency, commit):
        array.flags.writeable = False
    return WarsResult(replicas, read_quorum, write_quorum, laws, waits,
                      read_latency, commit)


def quorum_latencies(laws: MessageLaws, replicas: int, trials: int = 100_000,
                     seed: int | np.random.SeedSequence = 0,
                     percentiles: Sequence[float] = (50, 99, 99.9)) -> pd.DataFrame:
    """Read and write latency percentiles for every quorum size 1..replicas at once.

    The same draws as ``simulate_wars`` with the same seed (so its numbers equal
    ``simulate_wars(...).latency_percentiles`` for each quorum), sorted once per
    trial: the q-th smallest R_i + S_i and W_i + A_i. Columns ``quorum``,
    ``percentile``, ``read``, ``write``.
    """
    replicas = _whole(replicas, "replicas", 1)
    delays = _draw(laws, replicas, trials, seed)
    reads = np.sort(delays["read"] + delays["response"], axis=1)
    writes = np.sort(delays["write"] + delays["ack"], axis=1)
    rows = []
    for quorum in range(1, replicas + 1):
        for percentile in percentiles:
            percentile = check_percentile(percentile)
            rows.append({"quorum": quorum, "percentile": percentile,
                         "read": float(np.percentile(reads[:, quorum - 1], percentile)),
                         "write": float(np.percentile(writes[:, quorum - 1],
                                                      percentile))})
    return pd.DataFrame(rows)


def _draw(laws: MessageLaws, replicas: int, trials: int, seed) -> dict[str, np.ndarray]:
    """The (trials, replicas) one-way delays of each message type, remote delay
    included, each type from its own child stream of ``seed``."""
    trials = _whole(trials, "trials", 1)
    if not isinstance(laws, MessageLaws):
        raise ConfigError(f"laws must be a MessageLaws (write, ack, read, response), "
                          f"got {type(laws).__name__}")
    shape = (trials, replicas)
    delays = {}
    for key, role in ((_WRITE, "write"), (_ACK, "ack"), (_READ, "read"),
                      (_RESPONSE, "response")):
        drawn = np.asarray(getattr(laws, role).rvs(size=shape,
                                                   random_state=child_rng(seed, key)),
                           dtype=float)
        if drawn.shape != shape or not np.all(np.isfinite(drawn)) or np.any(drawn < 0):
            raise ConfigError(f"WARS {role} law drew values that are not finite "
                              "delays >= 0; use a law on [0, inf)")
        delays[role] = drawn
    if laws.remote_delay > 0:
        local = child_rng(seed, _LOCAL).integers(replicas, size=(2, trials))
        remote_write = np.arange(replicas) != local[0][:, None]
        remote_read = np.arange(replicas) != local[1][:, None]
        delays["write"] += laws.remote_delay * remote_write
        delays["ack"] += laws.remote_delay * remote_write
        delays["read"] += laws.remote_delay * remote_read
        delays["response"] += laws.remote_delay * remote_read
    return delays


def _whole(value: Any, what: str, lowest: int) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral) or value < lowest:
        raise ConfigError(f"{what} must be a whole number >= {lowest}, got {value!r}")
    return int(value)


def _check_level(value: Any, what: str) -> None:
    if not (isinstance(value, (int, float, np.floating)) and 0 < value < 1):
        raise ConfigError(f"{what} must be strictly between 0 and 1, got {value!r} "
                          "(e.g. 0.999)")
