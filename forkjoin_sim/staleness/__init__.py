"""Staleness of partial quorums without queues: the WARS Monte Carlo of PBS and its
published production latency profiles.

=========================  ======================================================
``MessageLaws``            the four WARS one-way delay laws (+ WAN layout)
``simulate_wars``          Monte Carlo trials -> ``WarsResult``
``WarsResult``             t-visibility with intervals, latency percentiles
``quorum_latencies``       read/write latency percentiles of every quorum size
``PROFILES``, ``profile``  PBS's fits: LNKD-SSD, LNKD-DISK, YMMR, WAN
``exponential_profile``    PBS's synthetic exponential sweep
``simulate_wars_ordered``  WARS with ordered (FIFO) connections and coordinators
``netem``                  a constant plus jitter, as ``tc netem`` injects delays
``simulate_session``       read-your-writes / monotonic-reads sessions -> ``SessionResult``
``ReplicatedKey``          under load: replicas' queues, channels, coordinators
``simulate_queues``        an open loop on the steps engine -> ``LoadRun`` (any R, W)
``simulate_staleness``     ``simulate_queues(...).outcome(R, W)`` -> ``StalenessResult``
``simulate_closed``        closed-loop clients (``ClosedLoop``) -> ``StalenessResult``
``simulate_sessions``      sessions under load (``Session``) -> ``LoadRun``
``run_notes``              doubts a run's set-up tells: too short for its load, heavy tails
``intervals``              shares of correlated operations (``share``, ``inflation``)
=========================  ======================================================
"""

from forkjoin_sim.staleness.channels import OrderedResult, simulate_wars_ordered
from forkjoin_sim.laws.netem import netem
from forkjoin_sim.staleness.sessions import SessionResult, simulate_session
from forkjoin_sim.staleness.profiles import PROFILES, exponential_profile, profile
from forkjoin_sim.staleness.wars import MessageLaws, WarsResult, quorum_latencies, simulate_wars

__all__ = ["MessageLaws", "OrderedResult", "PROFILES", "SessionResult", "WarsResult",
           "exponential_profile", "netem", "profile", "quorum_latencies",
           "simulate_session", "simulate_wars", "simulate_wars_ordered"]

# Under load (queues at the replicas, on the steps engine): staleness.queueing.
from forkjoin_sim.staleness.queueing import (ClosedLoop, LoadRun, ReplicatedKey,  # noqa: E402
                                             Session, StalenessResult, run_notes,
                                             simulate_closed, simulate_queues,
                                             simulate_sessions, simulate_staleness)

__all__ += ["ClosedLoop", "LoadRun", "ReplicatedKey", "Session", "StalenessResult",
            "run_notes", "simulate_closed", "simulate_queues", "simulate_sessions",
            "simulate_staleness"]
