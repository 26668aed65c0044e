"""Staleness of partial quorums without queues: the WARS Monte Carlo of PBS and its
published production latency profiles.

=========================  =================================================
``MessageLaws``            the four WARS one-way delay laws (+ WAN layout)
``simulate_wars``          Monte Carlo trials -> ``WarsResult``
``WarsResult``             t-visibility with intervals, latency percentiles
``PROFILES``, ``profile``  PBS's fits: LNKD-SSD, LNKD-DISK, YMMR, WAN
``exponential_profile``    PBS's synthetic exponential sweep
=========================  =================================================
"""

from .profiles import PROFILES, exponential_profile, profile
from .wars import MessageLaws, WarsResult, simulate_wars

__all__ = ["MessageLaws", "PROFILES", "WarsResult", "exponential_profile", "profile",
           "simulate_wars"]
