"""Node models: how a node queues the tasks it receives.

Every task has a *kind*: a plain fork-join task, a data read, a digest read or a
write (mutation). A node model maps each kind to one of its *stages*; each stage is a
FCFS queue served by its own pool of threads. Two models:

- `SharedQueue`: one FIFO queue for every kind (the paper's node, with one thread);
- `Stages`: Cassandra's SEDA structure, reads (data and digest) in a ReadStage and
  mutations in a MutationStage, each with its own threads, so a read can overtake
  writes still waiting for the mutation stage.

A new node model is one class in one module here with ``stage_of`` (an int array
indexed by kind) and ``threads`` (threads per stage).
"""

from __future__ import annotations

from forkjoin_sim.nodes.shared_queue import SharedQueue
from forkjoin_sim.nodes.stages import Stages

#: Task kinds, the column codes of ``SamplePath.kinds``.
TASK, READ, DIGEST, WRITE = 0, 1, 2, 3
KINDS = {"task": TASK, "read": READ, "digest": DIGEST, "write": WRITE}


def is_plain(node) -> bool:
    """True for the paper's node: one FIFO queue, one thread."""
    return node is None or (isinstance(node, SharedQueue) and node.threads == 1)


__all__ = ["DIGEST", "KINDS", "READ", "SharedQueue", "Stages", "TASK", "WRITE",
           "is_plain"]
