"""A Cassandra cluster serving reads and writes: the read path, mixed workloads.

The mapping onto the run stack (`System` + arrival process):

- **Reads** at consistency level k: the coordinator sends one *data* request to one
  replica of the key and k - 1 *digest* requests to other replicas, and answers when
  all k have answered. The key's r replicas are r consecutive ring nodes; the k asked
  are a uniformly random ordered subset of them (`RingSubset`): with a token-aware
  client the coordinator is a replica and serves the data request itself. Data and
  digest requests have their own service laws (a digest reads but returns a hash).
- **Writes** at level k: every one of the r replicas applies the mutation; the
  coordinator answers at the k-th acknowledgement (the other r - k still run).
- **Every request** also spends time outside the replicas' queues: the coordinator's
  own work and the client-to-coordinator hop, there and back (`overhead`: added to
  the latency, and to the client's cycle in a closed loop).
- **Nodes** queue reads and mutations in separate stages (`Stages`, Cassandra's
  ReadStage and MutationStage) by default, or in one FIFO queue (`SharedQueue`).
  Threads here are *effective* parallel servers (what the hardware lets run at once),
  not the thread-pool sizes of cassandra.yaml.
- **Load**: open Poisson operations at ``rate`` per unit time, or ``clients`` closed-
  loop threads (YCSB, cassandra-stress) with think time ``think``.

Time unit: the one of the service laws (milliseconds in the Cassandra docs).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scipy import stats

from forkjoin_sim.errors import ConfigError, counted
from forkjoin_sim.model import check_cluster
from forkjoin_sim.nodes import Stages
from forkjoin_sim.placement import RingSubset
from forkjoin_sim.laws.sumlaw import SumOf
from forkjoin_sim.system import JobClass, RunInput, System, law_mean
from forkjoin_sim.cassandra.model import consistency_quorum


@dataclass(frozen=True)
class CassandraCluster(RunInput):
    """Reads and writes on an n-node ring with replication factor r.

    Parameters
    ----------
    nodes, replicas : int
    read_fraction : float
        Share of operations that are reads (YCSB C: 1, B: 0.95, A: 0.5); the rest
        are writes.
    read_consistency, write_consistency : str or int
        ONE, TWO, THREE, QUORUM, ALL or a whole number.
    data_read, digest_read, write : laws
        Service time of one data request, one digest request and one mutation at a
        replica.
    coordinator : law, optional
        Coordinator work per operation (outside the replica queues).
    client_hop : law, optional
        One-way client-to-coordinator network time (paid twice per operation).
    node : `Stages` (default) or `SharedQueue`
    rate : float, optional
        Open loop: operations per unit time (Poisson).
    clients, think, think_law : closed loop: client threads, mean think time and
        its law (default exponential; e.g. a constant JMeter timer).
    """

    nodes: int
    replicas: int
    read_fraction: float = 1.0
    read_consistency: Any = "ONE"
    write_consistency: Any = "ONE"
    data_read: Any = field(default_factory=lambda: stats.expon())
    digest_read: Any = None
    write: Any = field(default_factory=lambda: stats.expon())
    coordinator: Any = None
    client_hop: Any = None
    node: Any = field(default_factory=Stages)
    rate: float | None = None
    clients: int | None = None
    think: float = 0.0
    think_law: Any = None

    def __post_init__(self) -> None:
        check_cluster(self.nodes, self.replicas)
        share = self.read_fraction
        if isinstance(share, bool) or not isinstance(share, (int, float)) \
                or not 0 <= share <= 1:
            raise ConfigError(f"read_fraction={share!r} must lie in [0, 1] (YCSB C: 1, "
                              "B: 0.95, A: 0.5)")
        digest = self.digest_read if self.digest_read is not None else self.data_read
        object.__setattr__(self, "digest_read", digest)
        overhead = None
        parts = [self.coordinator, self.client_hop, self.client_hop]
        if any(p is not None for p in parts):
            for p in parts:
                if p is not None:
                    law_mean(p, "coordinator / client hop time")
            overhead = SumOf(parts)
        # both levels are checked, a class without operations too: a level the
        # replicas cannot serve is a mistake in the input either way
        read_k = consistency_quorum(self.read_consistency, self.replicas)
        write_k = consistency_quorum(self.write_consistency, self.replicas)
        classes = []
        if share > 0:
            k = read_k
            classes.append(JobClass("read", float(share), k, k,
                                    service=(self.data_read,) + (digest,) * (k - 1),
                                    kinds=("read",) + ("digest",) * (k - 1),
                                    overhead=overhead,
                                    placement=RingSubset(self.replicas)))
        if share < 1:
            k = write_k
            classes.append(JobClass("write", 1.0 - float(share), self.replicas, k,
                                    service=self.write, kinds="write", overhead=overhead,
                                    placement="ring"))
        system = System(self.nodes, classes, placement="ring", node=self.node)
        self._bind(system, self.rate, self.clients, self.think, self.think_law,
                   "rate (open, operations per unit time)")

    @property
    def read_quorum(self) -> int:
        return consistency_quorum(self.read_consistency, self.replicas)

    @property
    def write_quorum(self) -> int:
        return consistency_quorum(self.write_consistency, self.replicas)

    progress_label = "cassandra"

    def summary_fields(self) -> dict:
        out = {"nodes": self.nodes, "replicas": self.replicas,
               "read_fraction": self.read_fraction,
               "read_consistency": str(self.read_consistency),
               "write_consistency": str(self.write_consistency), "rate": self.rate}
        if self.clients is not None:
            out.update(clients=self.clients, think=self.think)
        return out

    def describe(self) -> str:
        load = (self._process.describe() if self.clients is not None
                else f"{self.rate:g} operations per unit time")
        return (f"Cassandra cluster: {counted(self.nodes, 'node')}, "
                f"{counted(self.replicas, 'replica')}, "
                f"reads {self.read_fraction:g} at {self.read_consistency}, writes at "
                f"{self.write_consistency}, {self.node.describe()}, {load}")
