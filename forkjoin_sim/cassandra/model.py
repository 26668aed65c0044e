"""The Cassandra write model: n nodes on a token ring, r replicas, consistency k.

A write is forked to the ``r`` replicas of its key (``r`` consecutive nodes of the
ring from the key's hashed token) by a coordinator that the client's load-balancing
policy picks. When the coordinator is itself a replica the write is *local*: that
replica's task takes the local service time, every other task the remote one
(docs/model.md section 5; the paper's Fig. 4).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from forkjoin_sim.arrivals import ClosedLoop, Poisson
from forkjoin_sim.errors import ConfigError, counted, numbers_in_range
from forkjoin_sim.checks import plain_float
from forkjoin_sim.model import distribution_mean, check_cluster

#: Consistency level names and how many acknowledgements each needs.
CONSISTENCY_LEVELS = ("ONE", "TWO", "THREE", "QUORUM", "ALL")
#: Load-balancing policies; ``local-fraction:L`` takes the local fraction L.
POLICIES = ("token-aware", "round-robin", "remote", "local-fraction:L")


def consistency_quorum(level: str | int, replicas: int) -> int:
    """The number of acknowledgements ``k`` a consistency level needs with ``replicas``.

    ONE=1, TWO=2, THREE=3, QUORUM=floor(r/2)+1, ALL=r, or a whole number k.
    """
    # The same table as analytic.consistency_level_to_k, duplicated on purpose:
    # forkjoin_sim must not import analytic, and this mapping is all it needs.
    # One rule for level names everywhere: any case, no surrounding blanks (a blank
    # is refused by name, so 'quorum ' does not pass where 'quor um' fails).
    if isinstance(level, str) and level != level.strip():
        raise ConfigError(f"consistency level {level!r} has blanks around it; write "
                          f"{level.strip()!r} (any case)")
    if isinstance(level, (int, np.integer)) and not isinstance(level, bool):
        k = int(level)
    elif isinstance(level, str) and level.strip().isascii() and level.strip().isdigit():
        k = int(level.strip())
    elif isinstance(level, str) and level.strip().upper() in CONSISTENCY_LEVELS:
        name = level.strip().upper()
        k = {"ONE": 1, "TWO": 2, "THREE": 3, "QUORUM": replicas // 2 + 1,
             "ALL": replicas}[name]
        if k > replicas:
            only = ("is only 1 replica" if replicas == 1
                    else f"are only {replicas} replicas")
            raise ConfigError(f"consistency {name} needs {k} acknowledgements but there "
                              f"{only}; use QUORUM, ALL or a level "
                              f"<= {replicas}")
    else:
        raise ConfigError(f"consistency level {level!r} is unknown; use one of "
                          f"{', '.join(CONSISTENCY_LEVELS)} or a whole number k")
    if not 1 <= k <= replicas:
        raise ConfigError(f"consistency k={k} must satisfy 1 <= k <= replicas "
                          f"r={replicas}; use 1 <= k <= {replicas}")
    return k


def policy_local_fraction(policy: str, nodes: int, replicas: int) -> float:
    """The fraction of writes whose coordinator is a replica under ``policy``.

    ``token-aware`` always picks a replica (1), ``round-robin`` picks any node
    uniformly (r/n), ``remote`` never picks a replica (0), ``local-fraction:L`` L.
    """
    check_cluster(nodes, replicas)
    if not isinstance(policy, str):
        raise ConfigError(f"policy must be a string, got {policy!r}; use one of "
                          f"{', '.join(POLICIES)}")
    name, _, argument = policy.strip().lower().partition(":")
    if name == "token-aware" and not argument:
        fraction = 1.0
    elif name == "round-robin" and not argument:
        fraction = replicas / nodes
    elif name == "remote" and not argument:
        fraction = 0.0
    elif name == "local-fraction":
        try:
            fraction = plain_float(argument)
        except ValueError:
            raise ConfigError(f"policy {policy!r} needs a fraction; write e.g. "
                              "local-fraction:0.5") from None
        if not 0 <= fraction <= 1:
            raise ConfigError(f"policy {policy!r}: the local fraction must lie in "
                              "[0, 1]")
    else:
        raise ConfigError(f"policy {policy!r} is unknown; use one of "
                          f"{', '.join(POLICIES)}")
    if fraction < 1 and replicas == nodes:
        raise ConfigError(f"policy {policy!r} needs coordinators that are not replicas, "
                          f"but every one of the {nodes} nodes is a replica; use "
                          "replicas < nodes or policy token-aware")
    return fraction


@numbers_in_range
@dataclass(frozen=True)
class CassandraModel:
    """Writes to an n-node Cassandra cluster, each node one FCFS queue (level 1).

    Parameters
    ----------
    nodes, replicas : int
        Cluster size n and replication factor r, 1 <= r <= n.
    consistency : str or int
        ONE, TWO, THREE, QUORUM, ALL or a whole number k of acknowledgements.
    arrival_rate : float or None
        Writes per unit time (Poisson). None with closed-loop ``clients``.
    local_service, remote_service : frozen scipy.stats distribution or Empirical
        Service time of the coordinator's own replica task in a local write, and of
        every other replica task.
    policy : str
        ``token-aware``, ``round-robin``, ``remote`` or ``local-fraction:L``
        (see :func:`policy_local_fraction`).
    clients, think, think_law : closed-loop clients instead of Poisson writes (see
        `forkjoin_sim.arrivals.ClosedLoop`); throughput is then an output.

    Stability depends on the level of detail (one server per node, or thread
    pools), so it is checked when a run starts (`check_stable` for level 1).
    """

    nodes: int
    replicas: int
    consistency: str | int
    arrival_rate: float
    local_service: Any
    remote_service: Any
    policy: str = "round-robin"
    clients: int | None = None
    think: float = 0.0
    think_law: Any = None

    def __post_init__(self) -> None:
        n, r = self.nodes, self.replicas
        check_cluster(n, r)
        consistency_quorum(self.consistency, r)
        policy_local_fraction(self.policy, n, r)
        distribution_mean(self.local_service, "local_service")
        distribution_mean(self.remote_service, "remote_service")
        if self.clients is not None:
            if self.arrival_rate is not None:
                raise ConfigError("with closed-loop clients the write rate is an output;"
                                  " drop arrival_rate (--rate) or drop clients")
            object.__setattr__(self, "_process",
                               ClosedLoop(self.clients, self.think, self.think_law))
            return
        rate = self.arrival_rate
        if not (isinstance(rate, (int, float, np.integer, np.floating))
                and not isinstance(rate, bool) and math.isfinite(rate) and rate > 0):
            raise ConfigError(f"arrival_rate must be a positive finite number of writes "
                              f"per unit time, got {rate!r}")
        object.__setattr__(self, "arrival_rate", float(rate))
        object.__setattr__(self, "_process", Poisson(float(rate)))

    @property
    def arrival_process(self):
        """Poisson writes at ``arrival_rate``, or the closed loop of ``clients``."""
        return self._process

    def check_stable(self, option: str = "arrival_rate") -> None:
        """Raise ConfigError unless each node, one FCFS server, keeps up (level 1);
        the message names the rate as ``option`` (the command line's ``--rate``).

        Not checked at construction: at level 2 a node's mutation stage has a pool of
        threads, and stability is the staged model's to judge.
        """
        if self.arrival_rate is not None and self.node_utilisation >= 1:
            top = self.arrival_rate / self.node_utilisation
            raise ConfigError(
                f"unstable load: each node is busy a fraction "
                f"rate/n * (l*E[local] + (r-l)*E[remote]) = {self.node_utilisation:.4g}"
                f" >= 1 of the time; use {option} < {top:.4g}")

    @property
    def quorum(self) -> int:
        """k, the acknowledgements a write waits for."""
        return consistency_quorum(self.consistency, self.replicas)

    @property
    def local_fraction(self) -> float:
        """l, the fraction of writes whose coordinator is a replica."""
        return policy_local_fraction(self.policy, self.nodes, self.replicas)

    @property
    def node_utilisation(self) -> float | None:
        """Fraction of time each node is busy.

        Each write brings ``l`` local tasks and ``r - l`` remote ones on average,
        spread evenly over the ring, so a node works
        ``rate/n * (l*E[local] + (r-l)*E[remote])`` per unit time.
        """
        if self.arrival_rate is None:
            return None
        l = self.local_fraction
        work = (l * float(self.local_service.mean())
                + (self.replicas - l) * float(self.remote_service.mean()))
        return self.arrival_rate * work / self.nodes

    def describe(self) -> str:
        """A one-line, human readable summary."""
        if self.clients is not None:
            load = self._process.describe()
        else:
            load = (f"{self.arrival_rate:g} writes per unit time, per-node load "
                    f"{self.node_utilisation:.4g}")
        return (f"Cassandra writes: {counted(self.nodes, 'node')}, "
                f"{counted(self.replicas, 'replica')}, "
                f"consistency {self.consistency} (k={self.quorum}), policy "
                f"{self.policy} (local fraction {self.local_fraction:.4g}), {load}")
