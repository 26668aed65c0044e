"""Registers the sub-commands that need both layers with the ``forkjoin-sim`` CLI."""

from __future__ import annotations

import importlib

from analytic.errors import ConfigError as AnalyticConfigError

# Each module defines ``register(subparsers)``.
_COMMAND_MODULES = ("approx_cli", "fig2", "report", "cassandra_cli",
                    "estimators_cli")


def register(subparsers) -> tuple[type[BaseException], ...]:
    """Add this package's sub-commands; return the exceptions that mean bad input."""
    for name in _COMMAND_MODULES:
        importlib.import_module(f"validation.{name}").register(subparsers)
    return (AnalyticConfigError,)
