"""Reads, writes and sessions on a replicated key as graphs of steps.

The staleness model on the general engine (`forkjoin_sim.steps`). Nodes
0 .. replicas-1 hold every key; nodes from ``replicas`` up only coordinate. An
operation, sent by its coordinator to every replica, is for each replica i a request
hop (coordinator -> i), a task at i's read or mutation stage and a reply hop (i ->
coordinator), joined at the quorum's reply::

    request_i -> task_i -> reply_i   (i = 0 .. replicas-1)   -> join (need = quorum)

A hop from a node to itself takes no time. With ordered channels every hop is an
ordered hop (``Op.link``): each ordered pair of nodes is one connection delivering in
order, for every message type.

A job is one operation, or a session of two on the same key: a write then a read
(read-your-writes) or a read then another read (monotonic-reads), the second sent a
``pause`` after the first returns, through the job's second coordinator.

Parties: 0 the first operation's coordinator, 1 the second's, ``2 + i`` replica i.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from forkjoin_sim.errors import ConfigError
from forkjoin_sim.nodes import READ, WRITE
from forkjoin_sim.steps import draws
from forkjoin_sim.steps.graph import Layout, Op, Template

#: The message and task kinds of each role: (request, replica task, reply, task kind).
ROLES = {"write": ("write_request", "write_service", "write_ack", WRITE),
         "read": ("read_request", "read_service", "read_response", READ),
         "second_read": ("second_read_request", "second_read_service",
                         "second_read_response", READ)}
#: Parties before the replicas: the two coordinators of a job.
COORDINATOR_PARTIES = 2


def block_steps(replicas: int) -> int:
    """Steps of one operation: a request, a task and a reply per replica, and a join."""
    return 3 * replicas + 1


@dataclass(frozen=True)
class Columns:
    """Where one operation's steps are in its job's row: ``request``, ``task``,
    ``reply`` (``replicas`` columns each) and ``join``."""

    base: int
    replicas: int

    @property
    def request(self) -> slice:
        return slice(self.base, self.base + self.replicas)

    @property
    def task(self) -> slice:
        return slice(self.base + self.replicas, self.base + 2 * self.replicas)

    @property
    def reply(self) -> slice:
        return slice(self.base + 2 * self.replicas, self.base + 3 * self.replicas)

    @property
    def join(self) -> int:
        return self.base + 3 * self.replicas


def operation(role: str, replicas: int, quorum: int, coordinator: int, stage: str,
              ordered: bool, base: int = 0, after: tuple = ()) -> list:
    """The steps of one operation (module docstring), the first at position
    ``base``, its requests after the steps ``after`` (none: it starts the job)."""
    request, service, reply, _ = ROLES[role]
    cols = Columns(base, replicas)
    replica = [COORDINATOR_PARTIES + i for i in range(replicas)]
    ops = [Op(request, tuple(after), link=(coordinator, replica[i]) if ordered else None)
           for i in range(replicas)]
    ops += [Op(service, (cols.request.start + i,), party=replica[i], stage=stage)
            for i in range(replicas)]
    ops += [Op(reply, (cols.task.start + i,),
               link=(replica[i], coordinator) if ordered else None)
            for i in range(replicas)]
    ops.append(Op("join", tuple(range(cols.reply.start, cols.reply.stop)), need=quorum))
    return ops


def templates(replicas: int, read_quorum: int, write_quorum: int, stage_names: dict,
              ordered: bool, session: str | None = None) -> tuple:
    """(read job, write job): one operation each, or under ``session``
    ``"read-your-writes"`` a write then a read, under ``"monotonic-reads"`` a read
    then a second read. ``stage_names[kind]`` is the stage a READ or WRITE task
    queues at."""
    def single(role, quorum, party=0, base=0, after=()):
        stage = stage_names[ROLES[role][3]]
        return operation(role, replicas, quorum, party, stage, ordered, base, after)

    quorum = {"read": read_quorum, "write": write_quorum, "second_read": read_quorum}
    jobs = {"read": single("read", read_quorum), "write": single("write", write_quorum)}
    first = {"read-your-writes": "write", "monotonic-reads": "read"}.get(session)
    if session is not None and first is None:
        raise ConfigError(f"session {session!r} is unknown; use read-your-writes or "
                          "monotonic-reads")
    if first is not None:
        second = "read" if first == "write" else "second_read"
        ops = single(first, quorum[first])
        join = len(ops) - 1
        ops.append(Op("pause", (join,)))
        ops += single(second, quorum[second], party=1, base=len(ops),
                      after=(join + 1,))
        jobs[first] = ops
    parties = COORDINATOR_PARTIES + replicas
    return (Template(tuple(jobs["read"]), parties, name="read"),
            Template(tuple(jobs["write"]), parties, name="write"))


def layout(replicas: int, nodes: int, node) -> Layout:
    """The stations: each replica node's stages (``node.stage_names``, threads
    ``node.stage_threads``); coordinator-only nodes have none."""
    stages = tuple(node.stage_names)
    names, servers, table = [], [], []
    for i in range(nodes):
        row = []
        for s, stage in enumerate(stages):
            if i < replicas:
                row.append(len(names))
                names.append(f"node{i}.{stage}")
                servers.append(int(node.stage_threads[s]))
            else:
                row.append(-1)
        table.append(row)
    return Layout(tuple(names), tuple(servers), stages, table)


def stage_names(node) -> dict:
    """READ and WRITE task kinds -> the name of the stage they queue at."""
    return {kind: node.stage_names[node.stage_of[kind]] for kind in (READ, WRITE)}


def coordinators(seed: int, mode: str, nodes: int, replicas: int, jobs: int
                 ) -> np.ndarray:
    """Per job its two coordinators ``(jobs, 2)``: the last node (``"one"``), a
    uniformly random node (``"random"``) or replica (``"token-aware"``) each."""
    if mode == "one":
        return np.full((jobs, 2), nodes - 1, np.int64)
    choices = nodes if mode == "random" else replicas
    return draws.draw(seed, "staleness_coordinator",
                      lambda g, shape: g.integers(0, choices, shape), 0, jobs,
                      2).astype(np.int64)


def message_times(seed: int, role: str, laws: dict, jobs: int, replicas: int) -> tuple:
    """(request, service, reply) times ``(jobs, replicas)`` of ``role`` for every
    job, as drawn (a service law of None is no service)."""
    out = []
    for kind in ROLES[role][:3]:
        law = laws[kind]
        if law is None:
            out.append(np.zeros((jobs, replicas)))
            continue
        values = draws.draw(seed, "staleness_" + kind, law, 0, jobs, replicas)
        if not np.all(np.isfinite(values) & (values >= 0)):
            raise ConfigError(f"the {kind.replace('_', ' ')} law {law!r} drew values "
                              "that are not finite times >= 0; use a law on [0, inf)")
        out.append(values)
    return tuple(out)


@numba.njit(cache=True)
def _fill(out, base, jobs, request, service, reply, coordinator):
    """Write one operation's times into rows ``jobs`` of ``out`` from column
    ``base``: per replica its request, service, reply; a hop between a coordinator
    and itself takes none."""
    replicas = request.shape[1]
    for j in jobs:
        for i in range(replicas):
            local = coordinator[j] == i
            out[j, base + i] = 0.0 if local else request[j, i]
            out[j, base + replicas + i] = service[j, i]
            out[j, base + 2 * replicas + i] = 0.0 if local else reply[j, i]


def durations(seed: int, laws: dict, is_write: np.ndarray, coordinator: np.ndarray,
              replicas: int, width: int, session: str | None = None,
              pause=0.0) -> np.ndarray:
    """Per job and step its time ``(jobs, width)``: the first operation's from the
    write or read purposes by the job's kind, a session's pause and second operation
    (a read after a write, a second read after a read) after them."""
    jobs = is_write.size
    out = np.zeros((jobs, width))
    writers, readers = np.flatnonzero(is_write), np.flatnonzero(~is_write)
    first = Columns(0, replicas)
    drawn = {role: message_times(seed, role, laws, jobs, replicas)
             for role in ("write", "read")}
    for role, rows in (("write", writers), ("read", readers)):
        _fill(out, first.base, rows, *drawn[role], coordinator[:, 0])
    if session is None:
        return out
    second = Columns(first.join + 2, replicas)
    role, rows = (("read", writers) if session == "read-your-writes"
                  else ("second_read", readers))
    pauses = draws.draw(seed, "staleness_pause", pause, 0, jobs)[:, 0]
    if not np.all(np.isfinite(pauses) & (pauses >= 0)):
        raise ConfigError(f"the session pause {pause!r} drew values that are not "
                          "finite times >= 0; use a law on [0, inf)")
    out[rows, first.join + 1] = pauses[rows]
    if role not in drawn:
        drawn[role] = message_times(seed, role, laws, jobs, replicas)
    # a write job's row of the read purposes is its session's read (unused otherwise)
    _fill(out, second.base, rows, *drawn[role], coordinator[:, 1])
    return out
