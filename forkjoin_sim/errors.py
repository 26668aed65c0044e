"""The one exception family of the simulation package."""

import re

#: Longest run of non-blank characters a message repeats whole; longer ones (a pasted
#: 10 MB spec, a 5,000-digit number) are cut in the middle so the line stays readable.
LONGEST_WORD = 200
_WORD = re.compile(r"\S{%d,}" % (LONGEST_WORD + 1))


def shorten(message: str) -> str:
    """``message`` with every run of more than `LONGEST_WORD` non-blank characters cut
    to its start and end, saying how many characters were left out."""
    def cut(match):
        word = match.group()
        return f"{word[:80]}...({len(word) - 120:,} characters)...{word[-40:]}"
    return _WORD.sub(cut, message)


def percentile_label(percentile) -> str:
    """A percentile's name with the digits it was given ("p99", "p99.99999"; ":g"
    rounds the latter to "p100")."""
    return f"p{percentile:.10g}"


def number_text(number, digits: int = 6) -> str:
    """``number`` to ``digits`` significant digits, or in full where those would round
    it to another whole number (a load of 0.9999999999 is not shown as 1, the
    stability limit it is below)."""
    written = f"{number:.{digits}g}"
    if "e" not in written and float(written) != number and float(written).is_integer():
        return repr(float(number))
    return written


def counted(number, noun: str, digits: int = 6) -> str:
    """``number`` (as `number_text` writes it) and ``noun`` for a message, plural
    unless the number is written 1 ("1 replica", "3 replicas"; 0.9999999999 is not
    written "1 thread")."""
    written = number_text(number, digits)
    return f"{written} {noun}{'' if written == '1' else 's'}"


class ConfigError(ValueError):
    """An invalid model, run or input file.

    The message says what is wrong *and* how to fix it, e.g.
    ``"quorum k=4 exceeds replicas r=3; use 1 <= k <= r"``. The CLI prints it as one
    line and exits with status 2. Very long words in it (a value echoed back) are cut
    (`shorten`).
    """

    def __init__(self, message="", *args):
        super().__init__(shorten(str(message)), *args)


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
