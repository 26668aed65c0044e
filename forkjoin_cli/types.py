"""argparse ``type=`` converters: each parses one option's text with the library's
checks (`forkjoin_sim.checks`) and raises ``argparse.ArgumentTypeError``, which the
parser prints as one line naming the option."""

from __future__ import annotations

import argparse

from forkjoin_sim.checks import (MAX_WORKERS, SEED_LIMIT, check_input_file,
                                 is_plain_whole, parse_real, parse_whole)
from forkjoin_sim.errors import ConfigError

# ---------------------------------------------------------------------------
# argparse converters
# ---------------------------------------------------------------------------

def whole(low: int | None = None, high: int | None = None, what: str = "value"):
    """An argparse ``type=``: a whole number in ``[low, high]`` (see :func:`parse_whole`)."""
    def convert(text: str) -> int:
        return parse_whole(text, what, low, high, error=argparse.ArgumentTypeError)
    convert.__name__ = "whole number"
    return convert


def real(low: float | None = None, high: float | None = None, low_open: bool = False,
         high_open: bool = False, what: str = "value"):
    """An argparse ``type=``: a finite real number in the given range."""
    def convert(text: str) -> float:
        return parse_real(text, what, low, high, low_open, high_open,
                          error=argparse.ArgumentTypeError)
    convert.__name__ = "number"
    return convert


#: Seeds: 0 <= seed < 2**63.
seed = whole(0, SEED_LIMIT - 1, "seed")
#: Positive real numbers (rates, means, targets).
positive_real = real(0.0, low_open=True)
#: Non-negative real numbers (think times).
non_negative_real = real(0.0)
#: Fractions in [0, 1].
fraction = real(0.0, 1.0)
def _percent(value: float, what: str) -> float:
    """Refuse a percentile written as a fraction (0.99 for p99), as the library does
    (`forkjoin_sim.checks.fraction_note`)."""
    from forkjoin_sim.checks import fraction_note

    if (note := fraction_note(value, f"{what} {value:g}")) is not None:
        raise argparse.ArgumentTypeError(note)
    return value


def percentile_of(what: str = "--percentile", high_open: bool = True):
    """An argparse ``type=``: a percentile in [1, 100) (100 included unless
    ``high_open``), refusing fractions such as 0.99."""
    check = real(0.0, 100.0, low_open=True, high_open=high_open, what=what)

    def convert(text: str) -> float:
        return _percent(check(text), what)
    convert.__name__ = "percentile"
    return convert


def percentile_list(what: str = "--percentiles"):
    """An argparse ``type=``: comma-separated percentiles in [1, 100], no repeats."""
    check = real_list(0.0, 100.0, low_open=True, what=what)

    def convert(text: str) -> list[float]:
        return [_percent(v, what) for v in check(text)]
    convert.__name__ = "list of percentiles"
    return convert


#: Percentiles, from 1 to below 100.
percentile = percentile_of()
#: Worker processes or threads.
workers = whole(1, MAX_WORKERS, "workers")


def count(high: int, what: str = "value", low: int = 1):
    """An argparse ``type=``: a whole number of things, from ``low`` to ``high``."""
    return whole(low, high, what)


def real_list(low: float | None = None, high: float | None = None, low_open: bool = False,
              what: str = "list", high_open: bool = False):
    """An argparse ``type=``: comma-separated finite numbers (at least one, no repeats:
    every list option is a set of values to try or report) in the range ``low`` ..
    ``high`` (each end open or closed)."""
    def convert(text: str) -> list[float]:
        parts = [p for p in text.split(",")]
        if not text.strip() or any(not p.strip() for p in parts):
            raise argparse.ArgumentTypeError(
                f"{what} {text!r} must be comma-separated numbers with no empty item, "
                "e.g. 0.5,0.8")
        return _distinct([parse_real(p, what, low, high, low_open, high_open,
                                     error=argparse.ArgumentTypeError) for p in parts],
                         what, text)
    convert.__name__ = "list of numbers"
    return convert


def whole_list(low: int | None = None, high: int | None = None, what: str = "list"):
    """An argparse ``type=``: comma-separated whole numbers (at least one)."""
    def convert(text: str) -> list[int]:
        parts = text.split(",")
        if not text.strip() or any(not p.strip() for p in parts):
            raise argparse.ArgumentTypeError(
                f"{what} {text!r} must be comma-separated whole numbers with no empty "
                "item, e.g. 1,2,3")
        return _distinct([parse_whole(p, what, low, high,
                                      error=argparse.ArgumentTypeError) for p in parts],
                         what, text)
    convert.__name__ = "list of whole numbers"
    return convert


def _distinct(values: list, what: str, text: str) -> list:
    repeated = sorted({v for v in values if values.count(v) > 1})
    if repeated:
        raise argparse.ArgumentTypeError(
            f"{what} {text!r} gives {', '.join(f'{v:g}' for v in repeated)} more than "
            "once; list each value once")
    return values


def choice_list(choices, what: str = "list"):
    """An argparse ``type=``: comma-separated names from ``choices`` (case-insensitive,
    at least one, no repeats)."""
    canonical = {c.upper(): c for c in choices}

    def convert(text: str) -> list[str]:
        raw = text.split(",")
        parts = [p.strip() for p in raw]
        # one rule for names everywhere (as for level names): any case, no blanks
        blank = [p for p in raw if p != p.strip() and p.strip()]
        if blank:
            raise argparse.ArgumentTypeError(
                f"{what} {text!r}: {blank[0]!r} has blanks around it; write "
                f"{','.join(parts)!r} (names separated by commas only)")
        if not text.strip() or any(not p for p in parts):
            raise argparse.ArgumentTypeError(
                f"{what} {text!r} must be comma-separated names from "
                f"{','.join(choices)} with no empty item")
        unknown = [p for p in parts if p.upper() not in canonical]
        if unknown:
            raise argparse.ArgumentTypeError(
                f"{what}: unknown {', '.join(map(repr, unknown))}; use names from "
                f"{','.join(choices)}")
        names = [canonical[p.upper()] for p in parts]
        if len(set(names)) != len(names):
            raise argparse.ArgumentTypeError(f"{what} {text!r} names an item twice")
        return names
    convert.__name__ = "list of names"
    return convert


def level_list(names, what: str = "--consistency"):
    """An argparse ``type=``: comma-separated consistency levels, each a name from
    ``names`` (as `choice_list`) or a whole number k >= 1 of acknowledgements, as a
    measurement file's ``consistency`` column takes them."""
    by_name = choice_list(names, what)
    choices = f"names from {','.join(names)} or a number of acknowledgements"

    def convert(text: str) -> list[str]:
        parts = text.split(",")
        if not text.strip() or any(not p.strip() for p in parts):
            raise argparse.ArgumentTypeError(f"{what} {text!r} must be comma-separated "
                                             f"{choices}, with no empty item")
        numbers = {i for i, p in enumerate(parts)
                   if is_plain_whole(p) and p == p.strip()}
        if any(int(parts[i]) < 1 for i in numbers):
            raise argparse.ArgumentTypeError(f"{what} {text!r}: a level given as a "
                                             "number needs at least 1 acknowledgement")
        named = [p for i, p in enumerate(parts) if i not in numbers]
        try:
            found = iter(by_name(",".join(named)) if named else [])
        except argparse.ArgumentTypeError as exc:
            why = (" (EACH_QUORUM waits for a quorum in every data centre, which the "
                   "model does not describe; in one data centre it is QUORUM)"
                   if "EACH_QUORUM" in (p.strip().upper() for p in named) else "")
            raise argparse.ArgumentTypeError(
                str(exc).replace(f"names from {','.join(names)}", choices) + why) \
                from None
        out = [str(int(p)) if i in numbers else next(found) for i, p in enumerate(parts)]
        if len(set(out)) != len(out):
            raise argparse.ArgumentTypeError(f"{what} {text!r} names a level twice")
        # a name whose count is fixed (ONE, TWO, THREE) is the same level as its number
        from sizing.planning import level_key

        same: dict = {}
        for level in out:
            same.setdefault(level_key(level), []).append(level)
        twice = {k: v for k, v in same.items() if len(v) > 1}
        if twice:
            raise argparse.ArgumentTypeError(
                f"{what} {text}: " + "; ".join(
                    f"{' and '.join(v)} are one level ({k} acknowledgement"
                    + "s" * (k != 1) + ")" for k, v in twice.items())
                + "; list each level once")
        return out
    convert.__name__ = "list of levels"
    return convert


# ---------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------

def input_file(text: str) -> str:
    """An argparse ``type=``: an existing, readable UTF-8 file."""
    try:
        check_input_file(text)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text
