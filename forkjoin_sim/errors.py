"""The one exception family of the simulation package."""


class ConfigError(ValueError):
    """An invalid model, run or input file.

    The message says what is wrong *and* how to fix it, e.g.
    ``"quorum k=4 exceeds replicas r=3; use 1 <= k <= r"``. The CLI prints it as one
    line and exits with status 2.
    """


def numbers_in_range(cls):
    """Class decorator: an ``OverflowError`` while checking a new instance (a Python
    int such as ``10**400`` met ``float()``) becomes a `ConfigError` that says so."""
    check = cls.__post_init__

    def __post_init__(self) -> None:
        try:
            check(self)
        except OverflowError:
            raise ConfigError(f"{cls.__name__}: a number is too large to use (beyond "
                              "1e308 as a float); give values in a sensible unit") from None

    __post_init__.__doc__ = check.__doc__
    cls.__post_init__ = __post_init__
    return cls
