"""``forkjoin-sim timeouts``: availability and waiting time under client timeouts (shared code in ``_tails``)."""

from forkjoin_cli._tails import register_timeouts as register  # noqa: F401
