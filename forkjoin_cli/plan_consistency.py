"""``forkjoin-sim plan-consistency``: the fastest read/write quorums (R, W) for a mix (shared code in ``_tails``)."""

from forkjoin_cli._tails import register_plan_consistency as register  # noqa: F401
from forkjoin_cli._tails import staleness_plan  # noqa: F401
