"""Service-time models: spec strings such as "erlang:3" turned into distributions.

A service model is any frozen scipy.stats continuous distribution, an
``Empirical`` (measured latencies) or a ``Deterministic`` point mass; all of them
answer ``rvs(size, random_state)``, ``mean()``, ``moment(m)``, ``cdf`` and ``ppf``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import stats

from .empirical import Empirical
from .errors import ConfigError

#: The spec forms ``parse_service`` accepts, for help texts and error messages.
SPEC_FORMS = ("exp", "exp:MEAN", "erlang:K", "lognormal:SIGMA", "weibull:SHAPE",
              "gamma:SHAPE", "pareto:ALPHA", "deterministic", "empirical:PATH",
              "NAME:SHAPES or scipy:NAME:SHAPES (any scipy.stats continuous "
              "distribution, e.g. lognorm:0.5)")


class Deterministic:
    """A point mass: every service time equals ``value``.

    scipy.stats has no frozen degenerate continuous distribution, so this supplies
    the same interface. ``rvs`` draws no random numbers from ``random_state``.
    """

    def __init__(self, value: float) -> None:
        _check_mean(value, "deterministic service time")
        self.value = float(value)

    def rvs(self, size: int | tuple[int, ...] | None = None,
            random_state: Any = None) -> Any:
        """``size`` copies of ``value`` (a float when ``size`` is None)."""
        return self.value if size is None else np.full(size, self.value)

    def mean(self) -> float:
        """The value."""
        return self.value

    def moment(self, order: int) -> float:
        """``value ** order``."""
        return self.value ** order

    def var(self) -> float:
        """0."""
        return 0.0

    def std(self) -> float:
        """0."""
        return 0.0

    def cdf(self, x: Any) -> Any:
        """1 where ``x >= value``, else 0."""
        result = np.where(np.asarray(x, dtype=float) >= self.value, 1.0, 0.0)
        return result[()] if result.ndim == 0 else result

    def ppf(self, q: Any) -> Any:
        """``value`` for q in [0, 1], nan outside."""
        q = np.asarray(q, dtype=float)
        result = np.where((q >= 0) & (q <= 1), self.value, np.nan)
        return result[()] if result.ndim == 0 else result

    def scaled(self, factor: float) -> Deterministic:
        """The point mass at ``factor * value``."""
        return Deterministic(self.value * factor)

    def __repr__(self) -> str:
        return f"Deterministic({self.value:g})"


def parse_service(spec: str, mean: float = 1.0) -> Any:
    """The service distribution named by ``spec``, with mean ``mean``.

    Forms (see ``SPEC_FORMS``): "exp" (or "exp:MEAN", whose explicit MEAN wins over
    ``mean``), "erlang:K" (whole K >= 1), "lognormal:SIGMA", "weibull:SHAPE",
    "gamma:SHAPE", "pareto:ALPHA" (Pareto type I; ALPHA > 2 so the variance is
    finite), "deterministic", and any scipy.stats continuous distribution by name
    with its shape parameters, "NAME:a,b" or "scipy:NAME:a,b" (e.g. "lognorm:0.5").
    All of these are rescaled to ``mean``.

    "empirical:PATH" reads a latency file (``Empirical.from_file``) and is *not*
    rescaled: measured latencies keep their own mean, whatever ``mean`` says.
    """
    _check_mean(mean, "mean")
    if not isinstance(spec, str):
        raise ConfigError(f"service spec must be a string, got {spec!r}; use one of "
                          f"{', '.join(SPEC_FORMS)}")
    name, _, argument = spec.strip().partition(":")
    name = name.strip().lower()
    if name == "empirical":
        if not argument.strip():
            raise ConfigError("service 'empirical:' needs a file; write empirical:PATH")
        return Empirical.from_file(argument.strip())
    argument = argument.strip()
    if name == "exp":
        if argument:
            return stats.expon(scale=_positive(argument, spec, "MEAN"))
        return stats.expon(scale=mean)
    if name == "deterministic":
        if argument:
            raise ConfigError(f"service {spec!r}: deterministic takes no parameter; "
                              "its value is the requested mean")
        return Deterministic(mean)
    if name in _SHORTHANDS:
        return rescale(_SHORTHANDS[name](argument, spec), mean)
    if name == "scipy":
        name, _, argument = argument.partition(":")
        name = name.strip().lower()
    return rescale(_scipy_distribution(name, argument.strip(), spec), mean)


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
    family = getattr(dist, "dist", None)
    if isinstance(family, stats.rv_continuous):
        names = [s.strip() for s in family.shapes.split(",")] if family.shapes else []
        values = list(dist.args[:len(names)]) + [dist.kwds[n] for n in names
                                                 if n in dist.kwds]
        parts = [f"{n}={v:.4g}" for n, v in zip(names, values)]
        return f"{family.name}({', '.join(parts + [f'mean={dist.mean():.4g}'])})"
    return f"{type(dist).__name__}(mean={float(dist.mean()):.4g})"


# --- helpers ----------------------------------------------------------------------

def _check_mean(value: Any, what: str) -> None:
    if not (isinstance(value, (int, float, np.integer, np.floating))
            and not isinstance(value, bool) and math.isfinite(value) and value > 0):
        raise ConfigError(f"{what} must be a positive finite number, got {value!r}")


def _number(text: str, spec: str, what: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ConfigError(f"service {spec!r}: {what} {text!r} is not a number") from None


def _positive(text: str, spec: str, what: str) -> float:
    if not text:
        raise ConfigError(f"service {spec!r} needs {what}; write {spec.split(':')[0]}:{what}")
    value = _number(text, spec, what)
    if not (math.isfinite(value) and value > 0):
        raise ConfigError(f"service {spec!r}: {what} must be a positive finite number, "
                          f"got {value:g}")
    return value


def _erlang(text: str, spec: str) -> Any:
    phases = _positive(text, spec, "K")
    if not phases.is_integer():
        raise ConfigError(f"service {spec!r}: K is the number of exponential phases, a "
                          f"whole number >= 1, got {phases:g}; for a real shape use "
                          "gamma:SHAPE")
    return stats.erlang(int(phases))


def _pareto(text: str, spec: str) -> Any:
    alpha = _positive(text, spec, "ALPHA")
    if alpha <= 2:
        raise ConfigError(f"service {spec!r}: Pareto ALPHA={alpha:g} gives an infinite "
                          "variance (and waiting times of infinite mean); use ALPHA > 2")
    return stats.pareto(alpha)


_SHORTHANDS = {
    "erlang": _erlang,
    "lognormal": lambda text, spec: stats.lognorm(_positive(text, spec, "SIGMA")),
    "weibull": lambda text, spec: stats.weibull_min(_positive(text, spec, "SHAPE")),
    "gamma": lambda text, spec: stats.gamma(_positive(text, spec, "SHAPE")),
    "pareto": _pareto,
}


def _scipy_distribution(name: str, argument: str, spec: str) -> Any:
    family = getattr(stats, name, None) if name.isidentifier() else None
    if isinstance(family, stats.rv_discrete):
        raise ConfigError(f"service {spec!r}: scipy.stats.{name} is discrete; service "
                          "times need a continuous distribution (e.g. gamma:SHAPE)")
    if not isinstance(family, stats.rv_continuous):
        raise ConfigError(f"service {spec!r} is unknown; use one of "
                          f"{', '.join(SPEC_FORMS)}")
    shapes = [_number(part.strip(), spec, "shape parameter")
              for part in argument.split(",")] if argument else []
    if len(shapes) != family.numargs:
        wanted = family.shapes or "no shape parameters"
        raise ConfigError(f"service {spec!r}: scipy.stats.{name} takes {family.numargs} "
                          f"shape parameter(s) ({wanted}), got {len(shapes)}; write "
                          f"{name}" + (f":{family.shapes.replace(' ', '')}"
                                       if family.shapes else ""))
    dist = family(*shapes)
    lowest = float(dist.support()[0])
    if math.isnan(lowest):
        raise ConfigError(f"service {spec!r}: {shapes} are not valid shape parameters "
                          f"({family.shapes}) of scipy.stats.{name}; see its documentation "
                          "for their valid range")
    if lowest < 0:
        raise ConfigError(f"service {spec!r}: scipy.stats.{name} takes values down to "
                          f"{lowest:g}, but service times must be >= 0; choose a "
                          "distribution on [0, inf)")
    mean, variance = (float(v) for v in dist.stats(moments="mv"))
    if not (math.isfinite(mean) and math.isfinite(variance)):
        raise ConfigError(f"service {spec!r}: mean {mean:g} and variance {variance:g}; "
                          "a service time needs a finite mean and variance (waiting "
                          "times have infinite mean otherwise); choose other shapes")
    return dist
