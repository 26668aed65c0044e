"""Registers this package's sub-commands with the ``forkjoin-sim`` CLI."""

from __future__ import annotations

from analytic.errors import ConfigError as AnalyticConfigError

from . import tails_cli


def register(subparsers) -> tuple[type[BaseException], ...]:
    """Add the sizing sub-commands; return the exceptions that mean bad input."""
    tails_cli.register(subparsers)
    return (AnalyticConfigError,)
