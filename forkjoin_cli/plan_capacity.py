"""``forkjoin-sim plan-capacity``: the smallest cluster meeting a write-latency SLA (shared code in ``_tails``)."""

from forkjoin_cli._tails import register_plan_capacity as register  # noqa: F401
