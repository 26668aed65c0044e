"""Which moments of a law are finite: how heavy its tail is for a run to rely on."""

from __future__ import annotations

import math
import warnings
from typing import Any

from forkjoin_sim.laws.deterministic import Deterministic
from forkjoin_sim.laws.empirical import Empirical
from forkjoin_sim.laws.exponential import Exponential
from forkjoin_sim.laws.mixture import Mixture
from forkjoin_sim.laws.sumlaw import SumOf


def finite_third_moment(law: Any) -> bool:
    """Whether E[X**3] of ``law`` is finite (True when it cannot be told).

    A mixture's is finite when every component's with positive weight is, a sum's
    when every part's is; a measured law (`Empirical`), a point mass and an
    exponential law have finite moments of every order. Other laws answer by scipy.stats' skewness, NaN or
    infinite where the third moment diverges (pareto with shape <= 3, lomax, fisk,
    invgamma, burr, genpareto ...), checked against Lyapunov's inequality
    E[X**3] >= E[X**2]**1.5 for a law on [0, inf): some families' formulas give a
    finite, even negative, third moment where it diverges (invweibull with shape
    <= 3).
    """
    if isinstance(law, Mixture):
        return all(finite_third_moment(component) for weight, component
                   in zip(law.weights, law.components) if weight > 0)
    if isinstance(law, SumOf):
        return all(finite_third_moment(part) for part in law.parts)
    if isinstance(law, (Empirical, Deterministic, Exponential)):
        # an exponential law is light-tailed, and asked here without scipy.stats
        # (its import costs a plain run most of a second)
        return True
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy integrates divergent moments noisily
        try:
            if float(law.var()) == 0:
                # a point mass of scipy's (netem with no jitter): its skewness is 0/0
                return True
            stats_of = getattr(law, "stats", None)
            if callable(stats_of) and not math.isfinite(float(stats_of(moments="s"))):
                return False
            second, third = float(law.moment(2)), float(law.moment(3))
        except Exception:  # a law without these moments: nothing to say
            return True
    return math.isfinite(third) and third >= second ** 1.5 * (1 - 1e-9)
