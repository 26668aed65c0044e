"""The protocol every service and delay law follows: scipy.stats' frozen interface."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Law(Protocol):
    """A law of non-negative times, as a frozen ``scipy.stats`` distribution is one.

    Engines draw with ``rvs``; closed forms and planners use the moments and, where
    they need the whole law, ``cdf`` and ``ppf``. Frozen scipy.stats distributions,
    `Exponential`, `Empirical`, `Mixture` and `Deterministic` all satisfy it.
    """

    def rvs(self, size: Any = None, random_state: Any = None) -> Any: ...

    def mean(self) -> float: ...

    def moment(self, order: int) -> float: ...
