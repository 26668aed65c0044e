"""Jobs as small graphs of steps through FCFS stations.

A *layout* is the set of stations (FCFS, ``servers`` each) and the table that says
which station is stage ``s`` of node ``i``. A *template* is what one job class does:
an ordered list of operations in topological order, each a task at a station or a pure
delay (a network hop, no queue), with its predecessors and a ``need`` count (all
predecessors for a sequence/AND, ``k`` of ``r`` for a quorum join). A job is a template
plus its *parties*: the node of each role (client, coordinator, replica j), so the
station of every operation of a job is ``layout.table[parties[op.party], op.stage]``.

A delay with ``link=(a, b)`` is an *ordered hop*: a message on the connection from
party ``a``'s node to party ``b``'s node, which delivers in order, so the hop ends at
max(its start + its duration, the end of the hop that started before it on the same
connection). Connection ``(x, y)`` of nodes x, y is channel ``x * nodes + y``.

A join with ``purging=True`` cancels, at the instant it fires, every unfinished
operation whose only use is that join (the join post-dominates it): waiting tasks leave
their line, tasks in service stop and free their server at that time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np

from forkjoin_sim.errors import ConfigError


#: Most predecessors of one step (the engine keeps the count in 12 bits).
MAX_PREDECESSORS = 4095


@dataclass(frozen=True)
class Op:
    """One step of a job: a task at ``(party, stage)``, or a pure delay (``party=None``).

    ``kind`` names what its duration is drawn from (e.g. ``"replica_read"``, ``"hop"``).
    ``need`` defaults to the number of predecessors (a sequence or AND join).
    ``link=(from_party, to_party)`` makes a delay an ordered hop on that connection.
    """

    kind: str
    after: tuple = ()
    party: Optional[int] = None
    stage: str = ""
    need: Optional[int] = None
    purging: bool = False
    link: Optional[tuple] = None

    @property
    def quorum(self) -> int:
        """Predecessors that must complete before this step starts."""
        return len(self.after) if self.need is None else self.need


@dataclass(frozen=True)
class Template:
    """A job class: steps in topological order; the last is the job's answer.

    ``parties`` is the number of roles a job of this class names (its row length in
    the per-job ``parties`` array).
    """

    ops: tuple
    parties: int
    name: str = "job"

    def __post_init__(self):
        ops = tuple(self.ops)
        object.__setattr__(self, "ops", ops)
        if not ops:
            raise ConfigError(f"template {self.name!r} has no steps; give at least one Op")
        if self.parties < 1:
            raise ConfigError(f"template {self.name!r}: parties={self.parties}; a job "
                              "names at least one node, use parties >= 1")
        has_successor = np.zeros(len(ops), bool)
        for i, op in enumerate(ops):
            where = f"template {self.name!r} step {i} ({op.kind!r})"
            if not isinstance(op, Op):
                raise ConfigError(f"{where} is {type(op).__name__}; build steps with Op")
            if not op.kind:
                raise ConfigError(f"{where}: empty kind; name what its duration is")
            after = tuple(int(a) for a in op.after)
            if len(set(after)) != len(after):
                raise ConfigError(f"{where} lists a predecessor twice {after}; "
                                  "list each once")
            for a in after:
                if not 0 <= a < i:
                    raise ConfigError(f"{where} comes after step {a}; steps must be in "
                                      f"topological order, so use predecessors 0..{i - 1}")
                has_successor[a] = True
            if len(after) > MAX_PREDECESSORS:
                raise ConfigError(f"{where} has {len(after)} predecessors; the engine "
                                  f"counts up to {MAX_PREDECESSORS}, so join through "
                                  "intermediate steps")
            need = op.quorum
            if after and not 1 <= need <= len(after):
                raise ConfigError(f"{where}: need={need} with {len(after)} "
                                  f"predecessors; use 1 <= need <= {len(after)}")
            if not after and need != 0:
                raise ConfigError(f"{where} has no predecessors but need={need}; "
                                  "a first step needs 0")
            if op.purging and not need < len(after):
                raise ConfigError(f"{where} is purging but waits for all {len(after)} "
                                  "predecessors; purging needs need < predecessors")
            if op.party is not None:
                if not 0 <= op.party < self.parties:
                    raise ConfigError(f"{where} runs at party {op.party}; use a party "
                                      f"0..{self.parties - 1} or raise parties")
                if not op.stage:
                    raise ConfigError(f"{where} names party {op.party} but no stage; "
                                      "give the stage (e.g. 'cores') it queues at")
            if op.link is not None:
                link = tuple(op.link)
                if op.party is not None:
                    raise ConfigError(f"{where} is a task at party {op.party} and has "
                                      "a link; only a delay (party=None) is a hop")
                if len(link) != 2 or not all(
                        isinstance(p, (int, np.integer)) and 0 <= p < self.parties
                        for p in link):
                    raise ConfigError(f"{where} has link={op.link!r}; give (from_party, "
                                      f"to_party), each in 0..{self.parties - 1}")
        sinks = [i for i in range(len(ops) - 1) if not has_successor[i]]
        if sinks:
            raise ConfigError(f"template {self.name!r}: steps {sinks} lead nowhere; "
                              f"every step but the last ({len(ops) - 1}) must precede "
                              "another")

    @property
    def ordered(self) -> bool:
        """Whether any step is an ordered hop."""
        return any(op.link is not None for op in self.ops)

    @property
    def kinds(self) -> tuple:
        """The distinct ``kind`` names, in order of first use."""
        return tuple(dict.fromkeys(op.kind for op in self.ops))

    def width(self, kind: str) -> int:
        """How many steps of a job draw from ``kind``."""
        return sum(op.kind == kind for op in self.ops)

    def successors(self) -> list:
        """Per step, its successors in increasing order."""
        succ = [[] for _ in self.ops]
        for i, op in enumerate(self.ops):
            for a in op.after:
                succ[a].append(i)
        return succ

    def cancelled_by(self, join: int) -> list:
        """Steps a purging ``join`` cancels, in increasing order: those it
        post-dominates (their every path to the answer passes through it), except the
        ones before all its predecessors (done when it fires)."""
        succ = self.successors()
        inside = np.zeros(len(self.ops), bool)
        for a in range(join - 1, -1, -1):
            inside[a] = bool(succ[a]) and all(s == join or inside[s] for s in succ[a])
        ancestors = [0] * len(self.ops)      # bit sets
        for i, op in enumerate(self.ops):
            for a in op.after:
                ancestors[i] |= ancestors[a] | (1 << a)
        shared = -1
        for a in self.ops[join].after:
            shared &= ancestors[a]
        return [int(a) for a in np.flatnonzero(inside) if not shared >> int(a) & 1]


@dataclass(frozen=True)
class Layout:
    """FCFS stations and where they are: ``table[node][stage]`` is a station or -1."""

    names: tuple
    servers: tuple
    stages: tuple
    table: tuple

    def __post_init__(self):
        for name, value in (("names", self.names), ("servers", self.servers),
                            ("stages", self.stages)):
            object.__setattr__(self, name, tuple(value))
        object.__setattr__(self, "table", tuple(tuple(int(s) for s in row)
                                                for row in self.table))
        if len(self.names) != len(self.servers):
            raise ConfigError(f"{len(self.names)} station names but {len(self.servers)} "
                              "server counts; give one count per station")
        for name, c in zip(self.names, self.servers):
            if int(c) != c or c < 1:
                raise ConfigError(f"station {name!r} has servers={c}; use a whole "
                                  "number >= 1")
        for i, row in enumerate(self.table):
            if len(row) != len(self.stages):
                raise ConfigError(f"layout row {i} has {len(row)} entries for "
                                  f"{len(self.stages)} stages; give one per stage")
            for s in row:
                if not -1 <= s < len(self.names):
                    raise ConfigError(f"layout row {i} names station {s}; use -1 (none) "
                                      f"or 0..{len(self.names) - 1}")

    @property
    def nodes(self) -> int:
        """Rows of the table (machines that can be a party)."""
        return len(self.table)

    @property
    def channels(self) -> int:
        """Connections between ordered pairs of nodes (a node to itself included)."""
        return self.nodes * self.nodes

    def stage(self, name: str) -> int:
        """Index of stage ``name``."""
        try:
            return self.stages.index(name)
        except ValueError:
            raise ConfigError(f"stage {name!r} is not in the layout {self.stages}; "
                              "use one of those or add it") from None


def stations_of(template: Template, layout: Layout, parties) -> np.ndarray:
    """Per job and step, its station (-1 for a delay, ``-2 - channel`` for an ordered
    hop on ``channel``): an ``int32`` array ``(jobs, steps)``.

    ``parties`` is an int array ``(jobs, template.parties)`` of node indices.
    """
    parties = np.asarray(parties)
    if parties.ndim != 2 or parties.shape[1] != template.parties:
        raise ConfigError(f"parties has shape {parties.shape}; template "
                          f"{template.name!r} needs (jobs, {template.parties})")
    if parties.size and (parties.min() < 0 or parties.max() >= layout.nodes):
        raise ConfigError(f"parties name nodes {parties.min()}..{parties.max()}; the "
                          f"layout has nodes 0..{layout.nodes - 1}")
    table = np.asarray(layout.table, np.int32).reshape(layout.nodes, len(layout.stages))
    out = np.full((parties.shape[0], len(template.ops)), -1, np.int32)
    for i, op in enumerate(template.ops):
        if op.link is not None:
            a, b = op.link
            out[:, i] = -2 - (parties[:, a] * layout.nodes + parties[:, b])
            continue
        if op.party is None:
            continue
        column = table[parties[:, op.party], layout.stage(op.stage)]
        if (column < 0).any():
            node = parties[np.argmax(column < 0), op.party]
            raise ConfigError(f"step {i} ({op.kind!r}) runs at stage {op.stage!r} of "
                              f"node {node}, which has no such station; add it to the "
                              "layout or place the party elsewhere")
        out[:, i] = column
    return out


@dataclass(frozen=True)
class Compiled:
    """Templates as padded arrays for the engine (class ``c``, step ``o``)."""

    steps: np.ndarray = field(repr=False)       # (classes,) steps per class
    need: np.ndarray = field(repr=False)        # (classes, width)
    succ_ptr: np.ndarray = field(repr=False)    # (classes, width + 1)
    succ: np.ndarray = field(repr=False)        # (classes, max successors total)
    purge_ptr: np.ndarray = field(repr=False)   # (classes, width + 1)
    purge: np.ndarray = field(repr=False)       # (classes, max cancellations total)
    roots_ptr: np.ndarray = field(repr=False)   # (classes, 2)
    roots: np.ndarray = field(repr=False)       # (classes, max roots)

    @property
    def width(self) -> int:
        """Steps of the longest class (the padded row length)."""
        return self.need.shape[1]


def _csr(lists, width):
    ptr = np.zeros(width + 1, np.int64)
    ptr[1:len(lists) + 1] = np.cumsum([len(x) for x in lists])
    ptr[len(lists) + 1:] = ptr[len(lists)]
    flat = np.array([v for x in lists for v in x], np.int64)
    return ptr, flat


def compile_templates(templates: Sequence[Template]) -> Compiled:
    """Padded arrays of one or more templates, in the order given (class index)."""
    templates = list(templates)
    width = max(len(t.ops) for t in templates)
    classes = len(templates)
    steps = np.array([len(t.ops) for t in templates], np.int64)
    need = np.zeros((classes, width), np.int64)
    rows = {"succ": [], "purge": [], "roots": []}
    for c, t in enumerate(templates):
        need[c, :len(t.ops)] = [op.quorum for op in t.ops]
        rows["succ"].append(_csr(t.successors(), width))
        rows["purge"].append(_csr([t.cancelled_by(i) if op.purging else []
                                   for i, op in enumerate(t.ops)], width))
        roots = [i for i, op in enumerate(t.ops) if not op.after]
        rows["roots"].append((np.array([0, len(roots)], np.int64),
                              np.array(roots, np.int64)))

    def stack(pairs):
        ptr = np.stack([p for p, _ in pairs])
        flat = np.zeros((classes, max(1, max(len(f) for _, f in pairs))), np.int64)
        for c, (_, f) in enumerate(pairs):
            flat[c, :len(f)] = f
        return ptr, flat

    succ_ptr, succ = stack(rows["succ"])
    purge_ptr, purge = stack(rows["purge"])
    roots_ptr, roots = stack(rows["roots"])
    return Compiled(steps, need, succ_ptr, succ, purge_ptr, purge, roots_ptr, roots)
