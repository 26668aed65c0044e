"""Tests for forkjoin_cli.types: the argparse converters (here `level_list`)."""

import argparse
import itertools
import re

import pytest
from hypothesis import given, strategies as st

from forkjoin_cli.cassandra import GRID_LEVELS
from forkjoin_cli.types import level_list

#: Cassandra's levels whose number of acknowledgements does not depend on the
#: replicas (written out here, not taken from the code under test).
ACKNOWLEDGEMENTS = {"ONE": "1", "TWO": "2", "THREE": "3"}


def test_the_data_centre_levels_are_two_levels_and_not_their_plain_names():
    """cassandra predict takes LOCAL_ONE and LOCAL_QUORUM (read as ONE and QUORUM
    of one data centre) beside the plain names; none of them is another's number."""
    convert = level_list(GRID_LEVELS)
    assert convert("local_one,LOCAL_QUORUM") == ["LOCAL_ONE", "LOCAL_QUORUM"]
    assert convert("LOCAL_ONE,ONE,LOCAL_QUORUM,QUORUM") == [
        "LOCAL_ONE", "ONE", "LOCAL_QUORUM", "QUORUM"]
    assert convert("LOCAL_ONE,2") == ["LOCAL_ONE", "2"]


@pytest.mark.parametrize("text, says", [
    ("TWO,2", "TWO and 2 are one level (2 acknowledgements)"),
    ("1,LOCAL_ONE,one", "1 and ONE are one level (1 acknowledgement)"),
    ("LOCAL_ONE,local_one", "names an item twice"),
    ("3,3", "names a level twice"),
    ("0", "needs at least 1 acknowledgement"),
    ("ONE,,ALL", "no empty item"),
    ("EACH_QUORUM", "unknown 'EACH_QUORUM'"),
    # as a measurement file's refusal says why (the grid's said only "unknown")
    ("ONE,each_quorum", "(EACH_QUORUM waits for a quorum in every data centre, which "
                        "the model does not describe; in one data centre it is QUORUM)"),
])
def test_a_level_list_refuses_a_level_twice_or_not_a_level(text, says):
    with pytest.raises(argparse.ArgumentTypeError, match=re.escape(says)):
        level_list(GRID_LEVELS)(text)


@given(st.lists(st.sampled_from([*GRID_LEVELS, *(n.lower() for n in GRID_LEVELS),
                                 "1", "2", "3", "4", "17"]),
                min_size=1, max_size=5))
def test_a_level_list_is_refused_exactly_when_two_items_are_one_level(items):
    """Two items are one level when their names match in any case or one is a name
    whose count is fixed and the other that number."""
    def level(item: str) -> str:
        return ACKNOWLEDGEMENTS.get(item.upper(), item.upper())

    twice = any(level(a) == level(b) for a, b in itertools.combinations(items, 2))
    convert = level_list(GRID_LEVELS)
    if twice:
        with pytest.raises(argparse.ArgumentTypeError):
            convert(",".join(items))
    else:
        assert convert(",".join(items)) == [item.upper() for item in items]
