"""The run's random streams: independent generators, each a pure function of the seed.

Every ingredient of a sample path (arrivals, placement and service of each class,
class labels, stragglers ...) has its own child of the run's ``SeedSequence``, so its
numbers do not depend on the others, on block sizes, or on the engine.
"""

from __future__ import annotations

import numpy as np

# ---------------------------------------------------------------------------------
# The one table of stream purposes. Every random number of the package is a function
# of (seed, purpose, index): child ``purpose`` of the run's SeedSequence, drawn in
# index order. Each model family has its own run (its own seed), so families may
# reuse numbers; within a family each purpose has one number, and numbers never
# change (they are what makes a seed's results reproducible across versions).
# ---------------------------------------------------------------------------------

#: The fork-join run (`samplepath`, every engine). Class c >= 1 uses
#: ``CLASS_BASE + 2*(c-1)`` (placement) and the next one (service); class 0 keeps 1
#: and 2, so a one-class run draws exactly what the plain fork-join queue draws.
ARRIVALS, PLACEMENT, SERVICE, CLASS_LABELS, CLASS_BASE = 0, 1, 2, 3, 4
#: Class c's overhead (time outside the node queues) uses child OVERHEAD_BASE + c.
OVERHEAD_BASE = 40
#: Which nodes are the stragglers (`system.Stragglers`).
STRAGGLERS = 63

#: Cassandra writes (`cassandra.writes`): the first three match the fork-join run
#: (arrivals, placement, service), so a write workload with no local writes is the
#: plain ring-placement queue's path, number for number.
(WRITES_ARRIVALS, WRITES_PLACEMENT, WRITES_REMOTE_SERVICE, WRITES_COORDINATOR,
 WRITES_LOCAL_SERVICE, WRITES_STAGES) = range(6)

#: WARS without load (`staleness.wars`, `staleness.channels`): one stream per message
#: type, so changing the read quorum leaves every write delay unchanged.
WARS_WRITE, WARS_ACK, WARS_READ, WARS_RESPONSE, WARS_LOCAL = range(5)
#: Ordered channels and coordinators (`staleness.channels`): each operation's
#: coordinator, and a read's start after the write.
WARS_COORDINATOR, WARS_READ_DELAY = 5, 6

#: Jobs as steps (`steps.draws`): (purpose, chunk) keys, one row per job, chunked so
#: that values do not depend on block size; a step's service time uses
#: (STEP_BASE, crc32 of its kind).
STEP_PURPOSES = {"arrival": (1,), "think": (2,), "coordinator": (3,), "placement": (4,),
                 "class": (5,)}
STEP_BASE = 10
#: Cassandra level 2 on the steps engine (`cassandra.graphs`): the stage times of the
#: staged write path, one purpose per stage (the writes themselves, arrivals,
#: placement, coordinators and mutation times, are the `cassandra.writes` path that
#: level 1 runs too).
STEP_PURPOSES.update({"staged_request": (20,), "staged_network": (21,),
                      "staged_response": (22,), "staged_datacentre": (23,),
                      "staged_client": (24,)})
#: Staleness under load on the steps engine (`staleness.graphs`): per operation its
#: kind (read or write), key and coordinators; per message type and replica stage
#: its times (the first operation of a job, then the second read of a
#: monotonic-reads session); the pause inside a session.
STEP_PURPOSES.update({"staleness_kind": (30,), "staleness_key": (31,),
                      "staleness_coordinator": (32,),
                      "staleness_write_request": (33,), "staleness_write_service": (34,),
                      "staleness_write_ack": (35,), "staleness_read_request": (36,),
                      "staleness_read_service": (37,), "staleness_read_response": (38,),
                      "staleness_second_read_request": (39,),
                      "staleness_second_read_service": (40,),
                      "staleness_second_read_response": (41,),
                      "staleness_pause": (42,)})

#: The fused kernel (`engines.fused.rng`): one xoshiro256** state per purpose and
#: replication, seeded from child ``(replication, purpose)`` of the run's
#: SeedSequence (its numbers differ from the numpy engines' for the same seed).
FUSED_ARRIVAL, FUSED_CLASS, FUSED_PLACEMENT, FUSED_SERVICE = range(4)

#: Work made of several runs (a sweep's points, a calibration's candidates, a
#: planner's pairs, a validation's checks) gives each run its own seed, a child of
#: the work's seed spawned where the runs are made (``SeedSequence.spawn``); each run
#: then draws by this table.

#: Retired: the purposes of the engine staleness under load had of its own (before
#: it moved onto the steps engine, whose purposes are above). Nothing draws from them
#: now; they stay so that no number is ever given to another purpose.
(QUEUED_ARRIVALS, QUEUED_KINDS, QUEUED_WRITE, QUEUED_ACK, QUEUED_READ, QUEUED_RESPONSE,
 QUEUED_WRITE_SERVICE, QUEUED_READ_SERVICE, QUEUED_THINK, QUEUED_KEYS) = range(10)


def as_seed_sequence(seed) -> np.random.SeedSequence:
    """``seed`` (a whole number >= 0, or a SeedSequence) as a SeedSequence."""
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        from forkjoin_sim.errors import ConfigError

        raise ConfigError(f"seed must be a whole number >= 0, got {seed!r}; e.g. seed=1 "
                          "(--seed 1 on the command line)")
    return np.random.SeedSequence(int(seed))


def child_seed(seed, *key: int) -> np.random.SeedSequence:
    """Child ``key`` of ``seed``, as ``seed.spawn`` would give it, built without
    advancing the SeedSequence."""
    seq = as_seed_sequence(seed)
    return np.random.SeedSequence(seq.entropy, spawn_key=seq.spawn_key + tuple(key),
                                  pool_size=seq.pool_size)


def child_rng(seed, *key: int) -> np.random.Generator:
    """The generator of `child_seed` ``key`` of ``seed``."""
    return np.random.default_rng(child_seed(seed, *key))


def class_streams(seed, index: int) -> tuple[np.random.Generator, np.random.Generator]:
    """(placement, service) generators of class ``index``."""
    if index == 0:
        return child_rng(seed, PLACEMENT), child_rng(seed, SERVICE)
    base = CLASS_BASE + 2 * (index - 1)
    return child_rng(seed, base), child_rng(seed, base + 1)
