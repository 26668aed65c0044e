"""Weighted mixtures of latency laws (e.g. PBS's Pareto body plus exponential tail).

``Mixture`` answers like a frozen scipy.stats distribution (``rvs``, ``mean``,
``moment``, ``var``, ``std``, ``cdf``, ``sf``, ``pdf``, ``ppf``, ``isf``,
``support``), so a model takes it wherever it takes scipy, ``Empirical`` or
``Deterministic``.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from forkjoin_sim.errors import ConfigError

#: How far the weights may sum from 1.
WEIGHT_TOLERANCE = 1e-9


class Mixture:
    """The law of X_J, where J = j with probability ``weights[j]`` and X_j has law
    ``components[j]``.

    Components are any laws the project accepts (frozen scipy.stats continuous
    distributions, ``Empirical``, ``Deterministic``, other ``Mixture`` objects), all
    on [0, inf). Moments, ``cdf``, ``sf`` and ``pdf`` are the weighted sums of the
    components'; ``ppf`` inverts ``cdf`` by bisection between the smallest and the
    largest component quantile (the mixture's quantile lies between them).

    Parameters
    ----------
    components : sequence of laws
    weights : sequence of float
        Non-negative, summing to 1 (within 1e-9).
    """

    def __init__(self, components: Sequence[Any], weights: Sequence[float]) -> None:
        components = list(components)
        if not components:
            raise ConfigError("a mixture needs at least one component; pass e.g. "
                              "Mixture([stats.expon(), stats.pareto(3)], [0.9, 0.1])")
        for index, law in enumerate(components):
            missing = [name for name in ("rvs", "mean", "moment", "cdf", "ppf")
                       if not callable(getattr(law, name, None))]
            if missing:
                raise ConfigError(f"mixture component {index} ({law!r}) lacks "
                                  f"{', '.join(missing)}; use a frozen scipy.stats "
                                  "distribution, an Empirical, a Deterministic or a "
                                  "Mixture")
        weights = _checked_weights(weights, len(components))
        for index, law in enumerate(components):
            lowest = float(_support(law)[0])
            if not lowest >= 0:
                raise ConfigError(f"mixture component {index} ({law!r}) takes values "
                                  f"down to {lowest:g}, but latencies are >= 0; choose "
                                  "a law on [0, inf) (e.g. shift it with loc >= 0)")
        self.components = tuple(components)
        # Dividing by the sum makes the weights sum to 1 to the last bit, which
        # Generator.choice demands.
        self.weights = weights / weights.sum()
        self.weights.flags.writeable = False

    def rvs(self, size: int | tuple[int, ...] | None = None,
            random_state: Any = None) -> Any:
        """Draw ``size`` values (a float when ``size`` is None).

        Draws the component labels first, then each component's values in
        component order, all from ``random_state`` (a ``numpy.random.Generator``,
        a seed for one, or a legacy ``RandomState``).
        """
        rng = random_state
        if not isinstance(rng, (np.random.Generator, np.random.RandomState)):
            rng = np.random.default_rng(rng)
        shape = () if size is None else (size,) if np.isscalar(size) else tuple(size)
        count = math.prod(shape)
        labels = rng.choice(len(self.components), size=count, p=self.weights)
        values = np.empty(count)
        for index, law in enumerate(self.components):
            chosen = labels == index
            drawn = int(chosen.sum())
            if drawn:
                values[chosen] = np.asarray(law.rvs(size=drawn, random_state=rng),
                                            dtype=float)
        return float(values[0]) if size is None else values.reshape(shape)

    def mean(self) -> float:
        """E[X], the weighted mean of the components' means."""
        return self.moment(1)

    def moment(self, order: int) -> float:
        """E[X**order], the weighted sum of the components' moments (inf if any
        component with positive weight has an infinite one)."""
        if not isinstance(order, (int, np.integer)) or isinstance(order, bool) or order < 0:
            raise ConfigError(f"moment order must be a whole number >= 0, got {order!r}")
        total = 0.0
        for weight, law in zip(self.weights, self.components):
            if weight > 0:
                value = float(law.moment(int(order)))
                # A moment of a law on [0, inf) is >= 0; scipy answers nan, or for
                # the Pareto a negative number (alpha / (alpha - order)), when the
                # integral diverges.
                total += weight * (value if value >= 0 else math.inf)
        return total

    def var(self) -> float:
        """Variance, ``moment(2) - mean()**2``."""
        second, first = self.moment(2), self.mean()
        return math.inf if math.isinf(second) else max(second - first ** 2, 0.0)

    def std(self) -> float:
        """Standard deviation."""
        return math.sqrt(self.var())

    def cdf(self, x: Any) -> Any:
        """P(X <= x)."""
        return _weighted(self, x, lambda law, y: law.cdf(y))

    def sf(self, x: Any) -> Any:
        """P(X > x), summed from the components' survival functions (accurate in
        the far tail, where ``1 - cdf`` rounds to 0)."""
        return _weighted(self, x, lambda law, y: law.sf(y) if hasattr(law, "sf")
                         else 1.0 - np.asarray(law.cdf(y), dtype=float))

    def pdf(self, x: Any) -> Any:
        """The density, where every component has one."""
        lacking = [law for law in self.components if not callable(getattr(law, "pdf", None))]
        if lacking:
            raise ConfigError(f"this mixture has no density: {lacking[0]!r} is a point "
                              "mass or resampled data; use cdf (or smooth an Empirical "
                              "with smoothing='kde' and use its cdf)")
        return _weighted(self, x, lambda law, y: law.pdf(y))

    def ppf(self, q: Any) -> Any:
        """The quantile function ``inf{x : cdf(x) >= q}``; nan outside [0, 1]."""
        return self._invert(q, lambda law, p: law.ppf(p),
                            lambda x, p: np.asarray(self.cdf(x), dtype=float) >= p)

    def isf(self, q: Any) -> Any:
        """The inverse survival function ``inf{x : sf(x) <= q}``; nan outside
        [0, 1]. Found from ``sf``, so it stays accurate for tiny q (far tail)."""
        return self._invert(q, _isf,
                            lambda x, p: np.asarray(self.sf(x), dtype=float) <= p)

    def _invert(self, q: Any, component_inverse, reached) -> Any:
        """The smallest x where ``reached(x, q)``, by bisection between the
        smallest and the largest component inverse at q (the mixture's lies
        between them, as the mixture's cdf is a weighted mean of theirs)."""
        q = np.asarray(q, dtype=float)
        valid = (q >= 0) & (q <= 1)
        inside = np.where(valid, q, 0.5)
        live = [law for weight, law in zip(self.weights, self.components) if weight > 0]
        bounds = np.array([np.broadcast_to(np.asarray(component_inverse(law, inside),
                                                      dtype=float), inside.shape)
                           for law in live])
        low, high = bounds.min(axis=0), bounds.max(axis=0)
        # `reached` holds at high; where it holds at low already, low is the answer.
        high = np.where(reached(low, inside), low, high)
        low = np.where(np.isfinite(high), low, high)
        for _ in range(200):
            middle = 0.5 * (low + high)
            if not np.any((middle > low) & (middle < high)):
                break
            done = reached(middle, inside)
            high = np.where(done, middle, high)
            low = np.where(done, low, middle)
        result = np.where(valid, high, np.nan)
        return result[()] if result.ndim == 0 else result

    def support(self) -> tuple[float, float]:
        """(lowest, highest) value of the components with positive weight."""
        bounds = [_support(law) for weight, law in zip(self.weights, self.components)
                  if weight > 0]
        return (min(float(b[0]) for b in bounds), max(float(b[1]) for b in bounds))

    def scaled(self, factor: float) -> Mixture:
        """The mixture with every component scaled by ``factor`` (so X -> factor X)."""
        from forkjoin_sim.laws.describe import rescale

        if not (isinstance(factor, (int, float, np.integer, np.floating))
                and math.isfinite(factor) and factor > 0):
            raise ConfigError(f"scale factor must be a positive finite number, "
                              f"got {factor!r}")
        return Mixture([rescale(law, float(law.mean()) * factor)
                        for law in self.components], self.weights)

    def __repr__(self) -> str:
        from forkjoin_sim.laws.describe import describe_service

        terms = ", ".join(f"{w:.4g}*{describe_service(law)}"
                          for w, law in zip(self.weights, self.components))
        return f"Mixture({terms})"


# --- helpers ----------------------------------------------------------------------

def _checked_weights(weights: Sequence[float], count: int) -> np.ndarray:
    try:
        values = np.array(weights, dtype=float)
    except (TypeError, ValueError):
        raise ConfigError(f"mixture weights must be numbers, got {weights!r}") from None
    if values.ndim != 1:
        raise ConfigError(f"mixture weights must be a list of {count} numbers, got "
                          f"{weights!r}")
    if values.size != count:
        raise ConfigError(f"a mixture of {count} components needs {count} weights, got "
                          f"{values.size}; give one weight per component")
    if not np.all(np.isfinite(values)):
        raise ConfigError(f"mixture weights must be finite, got {values.tolist()}")
    if np.any(values < 0):
        bad = int(np.flatnonzero(values < 0)[0])
        raise ConfigError(f"mixture weight {bad} is {values[bad]:g}; weights are "
                          "probabilities, use values >= 0 that sum to 1")
    total = float(values.sum())
    if abs(total - 1.0) > WEIGHT_TOLERANCE:
        raise ConfigError(f"mixture weights sum to {total:.12g}, not 1; make them sum "
                          f"to 1 (within {WEIGHT_TOLERANCE:g}), e.g. divide each by "
                          f"{total:.12g}")
    return values


def _support(law: Any) -> tuple[float, float]:
    """(lowest, highest) value of ``law``: its ``support()``, else ppf(0), ppf(1)."""
    if callable(getattr(law, "support", None)):
        low, high = law.support()
    else:
        low, high = law.ppf(0.0), law.ppf(1.0)
    return float(low), float(high)


def _isf(law: Any, q: np.ndarray) -> Any:
    """``law.isf(q)``, or ``law.ppf(1 - q)`` for laws without one."""
    if callable(getattr(law, "isf", None)):
        return law.isf(q)
    return law.ppf(1.0 - q)


def _weighted(mixture: Mixture, x: Any, value) -> Any:
    x = np.asarray(x, dtype=float)
    total = np.zeros(x.shape)
    for weight, law in zip(mixture.weights, mixture.components):
        if weight > 0:
            total = total + weight * np.asarray(value(law, x), dtype=float)
    return total[()] if total.ndim == 0 else total
