"""What every law can be asked beside drawing: a label for reports, and the same
shape at another mean."""

from __future__ import annotations

import math
from typing import Any


from forkjoin_sim.errors import ConfigError
from forkjoin_sim.laws.deterministic import Deterministic, _check_mean
from forkjoin_sim.laws.empirical import Empirical
from forkjoin_sim.laws.exponential import Exponential


def rescale(dist: Any, mean: float) -> Any:
    """A distribution of the same shape as ``dist``, scaled to mean ``mean``.

    Frozen scipy.stats distributions are rebuilt with ``loc`` and ``scale``
    multiplied by ``mean / dist.mean()``; anything with a ``scaled(factor)`` method
    (``Empirical``, ``Deterministic``) is scaled by it.
    """
    _check_mean(mean, "mean")
    current = float(dist.mean()) if hasattr(dist, "mean") else math.nan
    if not (math.isfinite(current) and current > 0):
        raise ConfigError(f"cannot rescale {dist!r}: its mean is {current}, not a "
                          "finite positive number; give a distribution of positive times")
    factor = mean / current
    if hasattr(dist, "scaled"):
        return dist.scaled(factor)
    from scipy import stats

    family = getattr(dist, "dist", None)
    if isinstance(family, stats.rv_continuous):
        shapes = list(dist.args[:family.numargs])
        extra = list(dist.args[family.numargs:])
        keywords = dict(dist.kwds)
        loc = extra[0] if len(extra) > 0 else keywords.pop("loc", 0.0)
        scale = extra[1] if len(extra) > 1 else keywords.pop("scale", 1.0)
        keywords.pop("loc", None)
        keywords.pop("scale", None)
        return family(*shapes, loc=loc * factor, scale=scale * factor, **keywords)
    raise ConfigError(f"cannot rescale {type(dist).__name__}: use a frozen scipy.stats "
                      "continuous distribution, an Empirical or a Deterministic")


def describe_service(dist: Any) -> str:
    """A short label for reports, e.g. ``"gamma(a=2, mean=1)"``."""
    if isinstance(dist, Empirical):
        origin = dist.source or "samples"
        smoothing = f", {dist.smoothing}" if dist.smoothing else ""
        return (f"empirical({origin}, n={dist.samples.size}{smoothing}, "
                f"mean={dist.mean():.4g})")
    if isinstance(dist, Deterministic):
        return f"deterministic({dist.value:.4g})"
    if isinstance(dist, Exponential):
        return f"expon(mean={dist.mean():.4g})"
    from scipy import stats

    family = getattr(dist, "dist", None)
    if isinstance(family, stats.rv_continuous):
        names = [s.strip() for s in family.shapes.split(",")] if family.shapes else []
        values = list(dist.args[:len(names)]) + [dist.kwds[n] for n in names
                                                 if n in dist.kwds]
        parts = [f"{n}={v:.4g}" for n, v in zip(names, values)]
        return f"{family.name}({', '.join(parts + [f'mean={dist.mean():.4g}'])})"
    return f"{type(dist).__name__}(mean={float(dist.mean()):.4g})"
