"""The exponential law, without importing scipy.stats.

`Exponential(scale, loc)` gives the same numbers as ``scipy.stats.expon(loc, scale)``:
the same draws from the same generator, and the same mean, variance, standard
deviation, moments and support, computed in the same order. It exists because
importing scipy.stats takes most of a second, more than a whole 10^5-job run; the
default service law of every model is exponential, so a plain ``forkjoin-sim
simulate`` need not pay it. Anything else (``dist``, ``cdf``, ``ppf``, ``interval``,
``expect``, ...) is answered by the scipy.stats law, built on first use, so code
written for frozen scipy.stats laws (``law.dist.name == "expon"``) keeps working.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from forkjoin_sim.errors import ConfigError


#: The attributes of a frozen scipy.stats law that `Exponential` hands on to one.
_FROZEN_ATTRIBUTES = frozenset({
    "a", "args", "b", "cdf", "dist", "entropy", "expect", "interval", "isf", "kwds",
    "logcdf", "logpdf", "logsf", "median", "pdf", "ppf", "random_state", "sf", "stats",
})


class Exponential:
    """Exponential law of mean ``loc + scale``: ``loc`` plus an exponential of mean
    ``scale`` (scipy.stats.expon's parameters)."""

    __slots__ = ("scale", "loc", "_frozen")

    def __init__(self, scale: float = 1.0, loc: float = 0.0) -> None:
        if isinstance(scale, bool) or not (isinstance(scale, (int, float, np.integer,
                                                               np.floating))
                                           and math.isfinite(scale) and scale > 0):
            raise ConfigError(f"exponential scale must be a positive finite number, got "
                              f"{scale!r}; the scale is the mean")
        if isinstance(loc, bool) or not (isinstance(loc, (int, float, np.integer,
                                                           np.floating))
                                         and math.isfinite(loc)):
            raise ConfigError(f"exponential loc must be a finite number, got {loc!r}")
        self.scale = float(scale)
        self.loc = float(loc)
        self._frozen = None

    # -- what every run needs, without scipy.stats --------------------------------
    def mean(self) -> np.float64:
        """``loc + scale``."""
        return np.float64(1.0 * self.scale + self.loc)

    def var(self) -> np.float64:
        """``scale ** 2``."""
        return np.float64(1.0 * self.scale * self.scale)

    def std(self) -> np.float64:
        """``scale``, as the square root of the variance."""
        return np.sqrt(self.var())

    def moment(self, order: int) -> np.float64:
        """``E[X**order]`` (scipy.stats' binomial expansion when ``loc != 0``)."""
        if self.loc == 0:
            return np.float64(self.scale ** order * float(math.factorial(order)))
        return np.float64(self._scipy().moment(order))

    def support(self) -> tuple[np.float64, np.float64]:
        """``(loc, inf)``."""
        return np.float64(self.loc), np.float64(np.inf)

    def rvs(self, size: Any = None, random_state: Any = None) -> Any:
        """Draws, the very numbers scipy.stats.expon draws from ``random_state``
        (a numpy Generator or RandomState; anything else goes to scipy.stats)."""
        if not isinstance(random_state, (np.random.Generator, np.random.RandomState)):
            return self._scipy().rvs(size=size, random_state=random_state)
        values = random_state.standard_exponential(() if size is None else size)
        values = values * self.scale + self.loc
        return values[()] if np.ndim(values) == 0 else values

    def scaled(self, factor: float) -> Exponential:
        """The same law with ``loc`` and ``scale`` multiplied by ``factor``."""
        return Exponential(self.scale * factor, self.loc * factor)

    # -- everything else: the scipy.stats law ---------------------------------------
    def _scipy(self) -> Any:
        if self._frozen is None:
            from scipy import stats

            self._frozen = stats.expon(loc=self.loc, scale=self.scale)
        return self._frozen

    def __getattr__(self, name: str) -> Any:
        # Only what a frozen scipy.stats law has: asking for anything else (e.g.
        # ``samples``, which marks measured laws) must not import scipy.stats.
        if name not in _FROZEN_ATTRIBUTES:
            raise AttributeError(f"'Exponential' object has no attribute {name!r}")
        return getattr(self._scipy(), name)

    def __reduce__(self) -> tuple:
        return Exponential, (self.scale, self.loc)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Exponential):
            return NotImplemented
        return (self.scale, self.loc) == (other.scale, other.loc)

    def __hash__(self) -> int:
        return hash((Exponential, self.scale, self.loc))

    def __repr__(self) -> str:
        shift = f", loc={self.loc:g}" if self.loc else ""
        return f"Exponential(scale={self.scale:g}{shift})"
