"""Theorem 4: the expected write latency of a Cassandra cluster.

    T(n,r,k; rho, l) = l * LT(n,r,k; rho) + (1 - l) * RT(n,r,k; rho)
    RT = sum_{i=k..r} W(r,k,i) * RT(i,i,i)
    LT = LT(1,1,1)                                  k = 1
    LT = sum_{i=k-1..r-1} W(r-1,k-1,i) * RT(i,i,i)  k >= 2

A local write (the coordinator is a replica) acknowledges itself at once, so it
waits for k-1 of the r-1 remote replicas; basic latencies are taken at the per-node
load r*rho/n.
"""

import math
import numbers

from analytic.coefficients import expand_basic
from analytic.errors import ConfigError
from analytic.parameters import check_integer, check_replicas_quorum

#: Cassandra consistency levels understood by :func:`consistency_level_to_k`.
CONSISTENCY_LEVELS = ("ONE", "TWO", "THREE", "QUORUM", "ALL")


def consistency_level_to_k(level, r):
    """The quorum ``k`` of a Cassandra consistency level for replication factor ``r``.

    ONE=1, TWO=2, THREE=3, QUORUM=floor(r/2)+1, ALL=r; ``level`` is case-insensitive.
    """
    check_integer(r, "replicas r")
    if r < 1:
        raise ConfigError(f"replicas r={r} must be at least 1; use r >= 1")
    if isinstance(level, str) and level != level.strip():
        raise ConfigError(f"consistency level {level!r} has blanks around it; write "
                          f"{level.strip()!r} (any case)")
    name = level.upper() if isinstance(level, str) else None
    fixed = {"ONE": 1, "TWO": 2, "THREE": 3, "QUORUM": r // 2 + 1, "ALL": r}
    if name not in fixed:
        raise ConfigError(
            f"unknown consistency level {level!r}; use one of {', '.join(CONSISTENCY_LEVELS)}")
    k = fixed[name]
    if k > r:
        raise ConfigError(
            f"consistency level {name} needs {k} replicas but replication factor r={r}; "
            f"use r >= {k} or a level such as QUORUM or ALL")
    return k


def _require(remote_basic, needed, r, k):
    missing = [i for i in needed if i not in remote_basic]
    if missing:
        raise ConfigError(
            f"the remote basic latencies lack RT(i,i,i) for i = "
            f"{', '.join(map(str, missing))}; Theorem 4 with r={r}, k={k} needs them for "
            f"i = {needed.start}..{needed.stop - 1}")
    for i in needed:
        _latency(remote_basic[i], f"RT({i},{i},{i})")


def _latency(value, name: str) -> None:
    """Refuse a basic latency that is not a finite number >= 0 (a mean latency: a
    negative one gave a negative write latency, silently; 0 stays, the lower end of
    a value rounded to 0)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) \
            or not math.isfinite(value) or value < 0:
        raise ConfigError(f"{name}={value!r} must be a finite number >= 0 (a mean "
                          "latency)")


def cassandra_write_latency(r, k, local_fraction, local_basic, remote_basic):
    """Theorem 4: expected write latency with replication ``r`` and consistency ``k``.

    Parameters
    ----------
    r, k : int
        Replication factor and consistency level (``1 <= k <= r``).
    local_fraction : float
        ``l``, the fraction of writes whose coordinator is a replica.
    local_basic : float or None
        ``LT(1,1,1)``, mean latency of a local write with n=r=k=1. Needed only when
        ``k = 1`` and ``l > 0``.
    remote_basic : mapping
        ``i -> RT(i,i,i)``, mean latency of a remote write to i replicas with
        consistency ALL: ``i = k..r`` always, also ``i = k-1`` when ``k >= 2`` and ``l > 0``.

    Exact (``Fraction``) when every input is exact; parts weighted by zero are not
    needed and not evaluated.
    """
    check_replicas_quorum(r, k)
    l = local_fraction
    if isinstance(l, bool) or not isinstance(l, numbers.Real) or not 0 <= l <= 1:
        raise ConfigError(f"local_fraction l={l!r} must satisfy 0 <= l <= 1")
    total = 0
    if l < 1:
        _require(remote_basic, range(k, r + 1), r, k)
        total += (1 - l) * expand_basic(r, k, remote_basic)
    if l > 0:
        if k == 1:
            if isinstance(local_basic, bool) or not isinstance(local_basic, numbers.Real):
                raise ConfigError(
                    f"local_basic LT(1,1,1)={local_basic!r} must be a number when k=1 "
                    f"and local_fraction > 0")
            _latency(local_basic, "local_basic LT(1,1,1)")
            local = local_basic
        else:
            _require(remote_basic, range(k - 1, r), r, k)
            local = expand_basic(r - 1, k - 1, remote_basic)
        total += l * local
    return total
