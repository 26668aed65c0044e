"""One-way delay laws as Linux ``tc qdisc ... netem delay <mean> <jitter>`` sets them.

``netem delay 10ms 2ms`` adds 10 ms +- 2 ms (uniform by default; ``distribution
normal`` for a normal law with standard deviation 2 ms). The laws here are frozen
scipy.stats distributions, so they fit wherever a delay law does (``MessageLaws``,
``simulate_wars_ordered``).
"""

from __future__ import annotations

import math

from scipy import stats

from forkjoin_sim.errors import ConfigError

DISTRIBUTIONS = ("uniform", "normal")


def netem(mean: float, jitter: float = 0.0, distribution: str = "uniform"):
    """The delay law of netem's ``delay <mean> <jitter> [distribution ...]``.

    ``"uniform"``: uniform on [mean - jitter, mean + jitter]; needs jitter <= mean.
    ``"normal"``: normal with mean ``mean`` and standard deviation ``jitter``,
    truncated at 0, i.e. conditioned on being >= 0 (``scipy.stats.truncnorm``), so
    its mean exceeds ``mean`` when ``jitter`` is not small against it (Linux netem
    instead sends a packet with a negative draw at once). With jitter 0 both are the
    constant ``mean``. A frozen scipy.stats distribution in the unit of ``mean``.
    """
    for name, value in (("mean", mean), ("jitter", jitter)):
        if (isinstance(value, bool) or not isinstance(value, (int, float))
                or not math.isfinite(value) or value < 0):
            raise ConfigError(f"netem {name} must be a finite number >= 0, got "
                              f"{value!r}; e.g. netem(10.0, 2.0) for 10 +- 2 ms")
    if distribution not in DISTRIBUTIONS:
        raise ConfigError(f"netem distribution {distribution!r} is not supported; "
                          f"use one of {', '.join(DISTRIBUTIONS)}")
    if jitter == 0:
        return stats.rv_discrete(values=([0], [1]))(loc=float(mean))
    if distribution == "uniform":
        if jitter > mean:
            raise ConfigError(
                f"netem jitter {jitter!r} exceeds mean {mean!r}: the uniform law on "
                f"[mean - jitter, mean + jitter] would give negative delays; use "
                f"jitter <= mean, or distribution='normal' (truncated at 0)")
        return stats.uniform(loc=float(mean - jitter), scale=float(2 * jitter))
    return stats.truncnorm(-mean / jitter, math.inf, loc=float(mean),
                           scale=float(jitter))
