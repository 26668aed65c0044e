"""What reads return: versions, replica states and commits from operations' times.

The measurement of staleness under load, on the per-step times of any engine run.
Each operation is for one key, issued at ``issue``; per replica i its task there
ended at ``finish[:, i]`` (a write is *applied* then: the replica's state of the key
becomes max(state, version); a read reads the state then) and its reply reached the
coordinator at ``replied[:, i]``. Versions of a key are its writes' issue order
(last writer wins). A write commits at its W-th reply; a read returns the highest
version among its first R replies.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numba
import numpy as np


@dataclass(frozen=True)
class Operations:
    """Per operation: issue time, write or read, key, and per replica its task's end
    (``finish``) and its reply's arrival (``replied``), both ``(operations,
    replicas)``."""

    issue: np.ndarray
    is_write: np.ndarray
    key: np.ndarray
    finish: np.ndarray = field(repr=False)
    replied: np.ndarray = field(repr=False)

    def versions(self) -> np.ndarray:
        """Each write's version of its key (1, 2, ... in issue order per key, ties in
        operation order), 0 for reads."""
        writes = np.flatnonzero(self.is_write)
        order = writes[np.lexsort((writes, self.issue[writes], self.key[writes]))]
        keys = self.key[order]
        starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
        first = np.repeat(starts, np.diff(np.r_[starts, keys.size]))
        version = np.zeros(self.issue.size, np.int64)
        version[order] = np.arange(order.size) - first + 1
        return version

    def commits(self, write_quorum: int) -> np.ndarray:
        """Per write (in operation order) its commit: its ``write_quorum``-th reply."""
        acked = self.replied[self.is_write]
        return np.partition(acked, write_quorum - 1, axis=1)[:, write_quorum - 1]

    def returned(self, read_quorum: int) -> tuple[np.ndarray, np.ndarray]:
        """Per read (in operation order): the version it returned (the highest among
        its first ``read_quorum`` replies, ties by replica) and when it returned."""
        writes, reads = np.flatnonzero(self.is_write), np.flatnonzero(~self.is_write)
        version = self.versions()[writes]
        write_key, read_key = self.key[writes], self.key[reads]
        by_replica = self.finish.T          # one replica's times side by side
        states = np.empty((self.finish.shape[1], reads.size), np.int64)
        for i, finish in enumerate(by_replica):
            states[i] = newest_by_key(write_key, finish[writes], version, read_key,
                                      finish[reads])
        return _first_replies(self.replied[reads], states.T, read_quorum)


@numba.njit(cache=True)
def _first_replies(replied, states, quorum):
    """Per row: the highest state among the ``quorum`` earliest replies (ties by
    column), and the time of the last of them."""
    rows, width = replied.shape
    returned = np.zeros(rows, np.int64)
    at = np.empty(rows)
    taken = np.zeros(width, np.bool_)
    for r in range(rows):
        taken[:] = False
        best = 0
        last = 0.0
        for _ in range(quorum):
            pick = -1
            for i in range(width):
                if not taken[i] and (pick < 0 or replied[r, i] < replied[r, pick]):
                    pick = i
            taken[pick] = True
            best = max(best, states[r, pick])
            last = replied[r, pick]
        returned[r] = best
        at[r] = last
    return returned, at


def newest_by_key(event_key, event_time, event_version, query_key, query_time):
    """Per query: the highest version among the events of its key at or before its
    time (events first on ties), 0 if none: events and queries each sorted by (key,
    time), a running maximum per key over the events, one merge."""
    event_key = np.asarray(event_key, np.int64)
    query_key = np.asarray(query_key, np.int64)
    events, queries = _by_key_and_time(event_key, event_time), _by_key_and_time(
        query_key, query_time)
    newest = np.empty(query_key.size, np.int64)
    newest[queries] = _merge(event_key[events], np.asarray(event_time)[events],
                             np.asarray(event_version, np.int64)[events],
                             query_key[queries], np.asarray(query_time)[queries])
    return newest


def _by_key_and_time(key, time):
    if key.size and key.min() != key.max():
        return np.lexsort((time, key))
    return np.argsort(time, kind="stable")


@numba.njit(cache=True)
def _merge(key, time, version, query_key, query_time):
    """``newest_by_key`` with events and queries both sorted by (key, time)."""
    out = np.zeros(query_key.size, np.int64)
    e = 0
    best = 0
    for q in range(query_key.size):
        k, t = query_key[q], query_time[q]
        while e < key.size and (key[e] < k or (key[e] == k and time[e] <= t)):
            best = version[e] if e == 0 or key[e] != key[e - 1] else max(best, version[e])
            e += 1
        if e > 0 and key[e - 1] == k:
            out[q] = best
    return out


@numba.njit(cache=True)
def versions_behind(returned, latest, committed_at, first, issued):
    """Per read: committed versions of its key newer than the one returned (versions
    above ``latest`` had not committed when the read was issued). Version v of the
    read's key committed at ``committed_at[first + v - 1]``."""
    behind = np.zeros(returned.size, dtype=np.int64)
    for r in range(returned.size):
        for version in range(returned[r] + 1, latest[r] + 1):
            if committed_at[first[r] + version - 1] <= issued[r]:
                behind[r] += 1
    return behind


@dataclass(frozen=True)
class Reads:
    """Per read (operation order): returned version, latest committed version of its
    key when it was issued (0: none), committed versions newer than the returned one,
    time since that latest commit (inf if none), latency; per write its commit."""

    returned: np.ndarray
    latest: np.ndarray
    behind: np.ndarray
    since: np.ndarray
    latency: np.ndarray
    committed_at: np.ndarray


def staleness(ops: Operations, read_quorum: int, write_quorum: int) -> Reads:
    """Every read's outcome with quorums (R, W)."""
    writes, reads = np.flatnonzero(ops.is_write), np.flatnonzero(~ops.is_write)
    version = ops.versions()[writes]
    write_key, read_key = ops.key[writes], ops.key[reads]
    committed_at = ops.commits(write_quorum)
    returned, at = ops.returned(read_quorum)
    issued = ops.issue[reads]
    latest = newest_by_key(write_key, committed_at, version, read_key, issued)
    # commit time of version v of key k at by_version[start[k] + v - 1]
    counts = np.bincount(write_key, minlength=int(ops.key.max(initial=0)) + 1)
    start = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    by_version = np.empty(writes.size)
    by_version[start[write_key] + version - 1] = committed_at
    base = start[read_key]
    since = np.full(reads.size, np.inf)
    known = latest > 0
    since[known] = issued[known] - by_version[base[known] + latest[known] - 1]
    behind = versions_behind(returned, latest, by_version, base, issued)
    return Reads(returned, latest, behind, since, at - issued, committed_at)
