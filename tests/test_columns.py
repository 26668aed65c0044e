"""The measurement columns' shared checks (`sizing.columns`)."""

import pytest

from forkjoin_sim.errors import ConfigError
from sizing.columns import separator_hint, whole_threads


@pytest.mark.parametrize("text, fix", [
    ("1,000", "write 1000 without the thousands separator (or 1 if the comma is a "
              "decimal comma)"),
    ("10,500", "write 10500 without the thousands separator"),
    ("1,000,000", "write 1000000 without the thousands separator")])
def test_threads_with_a_thousands_separator_say_how_to_write_them(text, fix):
    """'1,000' copied from a table was refused as any malformed count; the message now
    reads it both ways a comma can mean, and only where that reading is a count."""
    with pytest.raises(ConfigError) as info:
        whole_threads(text, "f.csv line 11")
    message = str(info.value)
    assert message.startswith(f"f.csv line 11: threads={text!r} must be a whole number")
    assert message.endswith(fix)
    if text != "1,000":
        assert "decimal comma" not in message


@pytest.mark.parametrize("value, count", [("50", 50), ("50.0", 50), (" 7 ", 7), (8, 8)])
def test_whole_counts_pass(value, count):
    assert whole_threads(value, "here") == count


@pytest.mark.parametrize("text", ["0", "2.5", "abc", "1000001"])
def test_other_bad_counts_get_no_separator_hint(text):
    with pytest.raises(ConfigError, match=r"\(client threads of one benchmark run\)$"):
        whole_threads(text, "here")


def test_a_count_past_the_simulated_structures_cap_is_read():
    """10,000 was every structure's cap; the closed-network ones take any count."""
    assert whole_threads("50000", "here") == 50_000


@pytest.mark.parametrize("text, whole, hint", [
    ("7,453.231", False, "; write 7453.231 without the thousands separator"),
    ("1,000", False, "; write 1000 without the thousands separator (or 1.000 if the "
                     "comma is a decimal comma)"),
    ("12,500", True, "; write 12500 without the thousands separator"),
    ("1,5", False, ""), ("7.453,231", False, ""), ("abc", False, "")])
def test_a_separator_hint_reads_a_lone_comma_both_ways(text, whole, hint):
    assert separator_hint(text, whole) == hint


def test_a_throughput_with_thousands_separators_says_how_to_write_it(tmp_path):
    """A quoted '7,453.231' ops/s (a table's number copied as it is printed) got the
    generic 'write e.g. throughput=12.5'; the message now gives the number to write."""
    from sizing.measurements import read_measurements

    path = tmp_path / "rows.csv"
    path.write_text('operation,consistency,threads,throughput,mean_ms\n'
                    'read,ONE,5,"7,453.231",0.65\n')
    with pytest.raises(ConfigError) as info:
        read_measurements(str(path), replicas=3)
    assert str(info.value).endswith("line 2: throughput='7,453.231' is not a number; "
                                    "write 7453.231 without the thousands separator")
