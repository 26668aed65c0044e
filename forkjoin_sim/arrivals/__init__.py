"""Arrival processes: when jobs enter the system.

Open processes (`Poisson`, `Periodic`, `Renewal`, `Trace`) fix each job's arrival
time in advance: they answer ``arrival_times(clock, first, jobs, rng)``, the absolute
times of jobs ``first .. first + jobs - 1`` given the last arrival ``clock``.
`ClosedLoop` is the other kind: a fixed population of clients, each sending its
next request a think time after its previous one completed, so arrival times are
an *output* of the engine. A new process is one class in one module here.
"""

from __future__ import annotations

from forkjoin_sim.arrivals.closed_loop import ClosedLoop
from forkjoin_sim.arrivals.poisson import Periodic, Poisson
from forkjoin_sim.arrivals.renewal import Renewal
from forkjoin_sim.arrivals.trace import Trace

__all__ = ["ClosedLoop", "Periodic", "Poisson", "Renewal", "Trace", "is_closed"]


def is_closed(process) -> bool:
    """True for a closed-loop process (arrivals made by the engine)."""
    return bool(getattr(process, "closed", False))
