"""The parameters of an (n,r,k) fork-join queue: validation and per-node load.

Every closed form validates its arguments here, so all of them fail the same way:
with a :class:`~analytic.errors.ConfigError` whose message says how to fix the input.
"""

import math
import numbers

from analytic.errors import ConfigError


#: Service rates the closed forms accept: 1/mu**2 must stay a normal float.
MU_RANGE = (1e-100, 1e100)
#: Largest cluster the closed forms accept (r*rho/n must be a float computation).
MAX_NODES = 10**12


def check_integer(value, what):
    """Raise ConfigError unless ``value`` is an integer (bool is not one).

    ``what`` names the argument in the message, e.g. ``"replicas r"``.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        hint = ""
        if isinstance(value, numbers.Real) and float(value).is_integer():
            hint = f"; use {what.split()[-1]}={int(value)}"
        raise ConfigError(f"{what}={value!r} must be an integer{hint}")


def check_positive(value, what):
    """Raise ConfigError unless ``value`` is a finite real number > 0."""
    if (isinstance(value, bool) or not isinstance(value, numbers.Real)
            or not math.isfinite(value) or value <= 0):
        raise ConfigError(f"{what}={value!r} must be a finite number > 0")


def check_replicas_quorum(r, k):
    """Validate replicas ``r`` and quorum ``k``: integers with 1 <= k <= r."""
    check_integer(r, "replicas r")
    check_integer(k, "quorum k")
    if r < 1:
        raise ConfigError(f"replicas r={r} must be at least 1; use r >= 1")
    if k < 1:
        raise ConfigError(f"quorum k={k} must be at least 1; use 1 <= k <= r")
    if k > r:
        raise ConfigError(f"quorum k={k} exceeds replicas r={r}; use 1 <= k <= r")


def per_node_load(n, r, rho):
    """The load ``q = r*rho/n`` that each node sees (its utilisation, exponential service).

    Each of the ``n`` nodes receives sub-tasks at rate ``r*lambda/n``. Exact
    (``Fraction``) when ``rho`` is exact. Stability (``q < 1``) is not checked here;
    see :func:`validate_queue`.
    """
    check_integer(n, "nodes n")
    check_integer(r, "replicas r")
    if n < 1:
        raise ConfigError(f"nodes n={n} must be at least 1; use n >= 1")
    if n > MAX_NODES:
        raise ConfigError(f"nodes n ({len(str(n))} digits) is beyond any cluster (at "
                          f"most {MAX_NODES:.0e}); use a smaller n")
    if not 1 <= r <= n:
        raise ConfigError(f"replicas r={r} must satisfy 1 <= r <= n={n}; use r <= n")
    check_positive(rho, "load rho")
    return r * rho / n


def validate_queue(n, r, k, rho, mu=1.0):
    """Validate a stable (n,r,k) queue at job load ``rho`` and service rate ``mu``.

    Checks integer ``1 <= k <= r <= n``, ``rho > 0``, ``mu > 0`` and stability of
    every node, ``r*rho/n < 1``. Returns the per-node load ``r*rho/n``.
    """
    check_replicas_quorum(r, k)
    q = per_node_load(n, r, rho)
    check_positive(mu, "service rate mu")
    if not MU_RANGE[0] <= mu <= MU_RANGE[1]:
        # The closed forms use second moments, 1/mu**2, which leave the float range.
        raise ConfigError(f"service rate mu={float(mu):g} is outside "
                          f"[{MU_RANGE[0]:g}, {MU_RANGE[1]:g}]; rescale the time unit "
                          "(results scale as 1/mu)")
    if q >= 1:
        raise ConfigError(
            f"unstable load: per-node load r*rho/n = {r}*{rho:g}/{n} = {float(q):.4g} "
            f"must be < 1; use rho < {n / r:g}")
    return q
