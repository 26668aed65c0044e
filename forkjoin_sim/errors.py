"""The one exception family of the simulation package."""


class ConfigError(ValueError):
    """An invalid model, run or input file.

    The message says what is wrong *and* how to fix it, e.g.
    ``"quorum k=4 exceeds replicas r=3; use 1 <= k <= r"``. The CLI prints it as one
    line and exits with status 2.
    """
