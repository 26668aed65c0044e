"""Analytic columns beside a simulated sweep row: the closed forms that apply to it.

Pass ``annotate=(annotate,)`` to ``forkjoin_sim.sweep`` (the ``sweep`` command does)
to add them to every row. Theorem 3 (``nelson``, ``lower``, ``lower_pk``, ``upper``,
``approx``, ``error``) holds only for the paper's queue: exponential service, random
placement, non-purging. Theorem 2's general lower bound (``lower_general``) is stated
for any service distribution but is not a bound for services less variable than the
exponential: simulated means fall below it for deterministic service ((6,3,1) at
rho = 1.5: 1.535 [1.523, 1.547] against 2.5) and for gamma of shape 25
(docs/theorem2_low_variance.md), as the k-th of r sojourns may beat one node's mean
sojourn; the column is left empty (NaN) for a service whose squared coefficient of
variation is below 1.
"""

from __future__ import annotations

import math

from scipy import stats

import analytic
from forkjoin_sim.laws.service import parse_service

_EXPON = type(stats.expon)


def _service(point: dict):
    """The point's service distribution, with mean 1/mu as the simulator builds it."""
    return parse_service(str(point.get("service", "exp")), mean=1.0 / point.get("mu", 1.0))


def _is_exponential(dist) -> bool:
    """True for an exponential distribution starting at 0 (the paper's service)."""
    return isinstance(getattr(dist, "dist", None), _EXPON) and float(dist.support()[0]) == 0


#: Least squared coefficient of variation of a service for which ``lower_general`` is
#: given: the exponential's. Below it the general form fails (deterministic service,
#: gamma of shape 25); between 0.25 and 1 it held at the points checked, which is no
#: proof (docs/theorem2_low_variance.md).
LOWER_GENERAL_MIN_SCV = 1.0


def _squared_cv(dist) -> float:
    """Var/mean^2 of a service distribution (NaN if it has no variance)."""
    try:
        return float(dist.var()) / float(dist.mean()) ** 2
    except (AttributeError, TypeError, ValueError, ZeroDivisionError):
        return math.nan


def _job_load(point: dict, service_mean: float) -> float:
    """rho = lambda * E[X], from whichever of load and arrival rate the point gives."""
    if point.get("rho") is not None:
        return float(point["rho"])
    return float(point["arrival_rate"]) * service_mean


def annotate(point: dict, row: dict) -> dict:
    """Analytic columns for one sweep ``point`` whose simulated statistics are ``row``.

    Returns ``{}`` when no closed form applies (purging, ring placement, closed-loop
    clients or uneven node speeds: the theorems assume Poisson arrivals on identical
    nodes); otherwise
    ``lower_general`` (Theorem 2's general form; NaN for a service less variable
    than the exponential, where it is no bound) and, for exponential service, the
    Theorem 3 columns of :func:`analytic.estimates` plus ``error = approx/mean - 1``.
    """
    if (point.get("purging") or point.get("placement", "random") != "random"
            or point.get("clients") is not None or point.get("speeds") is not None):
        return {}
    nodes, replicas, quorum = (int(point[key]) for key in ("nodes", "replicas", "quorum"))
    dist = _service(point)
    mean_service = float(dist.mean())
    load = _job_load(point, mean_service)
    # an infinite variance (a heavy tail) is variable enough; NaN is not known to be
    scv = _squared_cv(dist)
    out = {"lower_general": analytic.lower_bound_general(dist, nodes, replicas, quorum,
                                                         load)
           if scv >= LOWER_GENERAL_MIN_SCV * (1 - 1e-9) else math.nan}
    if _is_exponential(dist):
        out.update(analytic.estimates(nodes, replicas, quorum, load, mu=1.0 / mean_service))
        if out["lower_pk"] is None:
            out["lower_pk"] = math.nan
        simulated = row.get("mean")
        out["error"] = (out["approx"] / simulated - 1
                        if isinstance(simulated, (int, float)) and simulated > 0
                        else math.nan)
    return out
