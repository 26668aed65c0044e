"""The naive guesses the hold-out compares the calibrated model with."""

import math

import pytest

from forkjoin_sim.errors import ConfigError
from sizing.measurements import Measurement
from validation.calibration_holdout import SCENARIOS, _naive, mape, split

FITTED = [Measurement("read", level, threads, mean_ms=mean) for level, threads, mean in
          [("ONE", 10, 10.0), ("ONE", 20, 14.0), ("ALL", 10, 30.0), ("ALL", 20, 50.0)]]


def test_same_as_one_midpoint_and_line():
    quorum = Measurement("read", "QUORUM", 20)
    assert _naive("a", quorum, FITTED) == 14.0
    assert _naive("b", quorum, FITTED) == 32.0
    # Line through (10, 30) and (20, 50), at 40 threads.
    assert _naive("c", Measurement("read", "ALL", 40), FITTED) == 90.0
    assert _naive("a", Measurement("read", "ALL", 30), FITTED) is None


def test_scenarios_split_rows_as_described():
    rows = FITTED + [Measurement("read", "QUORUM", 10, mean_ms=1.0),
                     Measurement("read", "ONE", 40, mean_ms=1.0)]
    assert SCENARIOS["a"][2](rows) == [True, True, False, False, False, True]
    assert SCENARIOS["b"][2](rows) == [True, True, True, True, False, True]
    assert SCENARIOS["c"][2](rows) == [True, True, True, True, True, False]


def test_mape_counts_only_rows_with_a_guess():
    table = [{"measured": 10.0, "model": 11.0, "naive": 8.0},
             {"measured": 20.0, "model": 18.0, "naive": None}]
    model, naive, rows, guessed = mape(table)
    assert model == pytest.approx(10.0) and naive == pytest.approx(20.0)
    assert (rows, guessed) == (2, 1)
    assert math.isnan(mape([{"measured": 1.0, "model": 1.0, "naive": None}])[1])


def _grid(threads=(4, 16, 32, 64, 128)):
    """Reads and writes at every level and thread count, as write_synthetic lays out
    its file: the write takes a third of the read's time."""
    return [Measurement(op, level, t, mean_ms=(1.0 if op == "read" else 1 / 3) * t
                        * (1 + i))
            for op in ("read", "write") for i, level in enumerate(("ONE", "QUORUM", "ALL"))
            for t in threads]


def test_naive_guesses_never_mix_reads_and_writes():
    """Reads and writes at one thread count made the line's two points share x
    (ZeroDivisionError on the synthetic file), and a/b took the write's ONE."""
    rows = _grid()
    fitted, held = split(rows, "c")
    for row in held:
        # Every level's latency is linear in threads here, so the line is exact.
        assert _naive("c", row, fitted) == pytest.approx(row.mean_ms)
    quorum_read = Measurement("read", "QUORUM", 16)
    assert _naive("a", quorum_read, rows) == pytest.approx(16.0)
    assert _naive("b", quorum_read, rows) == pytest.approx((16.0 + 48.0) / 2)


def test_line_averages_repeated_runs_at_one_thread_count():
    fitted = [Measurement("read", "ALL", 10, mean_ms=28.0),
              Measurement("read", "ALL", 10, mean_ms=32.0),
              Measurement("read", "ALL", 20, mean_ms=50.0)]
    assert _naive("c", Measurement("read", "ALL", 40), fitted) == pytest.approx(90.0)
    assert _naive("c", Measurement("read", "ALL", 40), fitted[:2]) is None


@pytest.mark.parametrize("rows, scenario, words", [
    (_grid((4, 16)), "c", "3 or more thread counts"),
    ([r for r in _grid() if r.consistency != "QUORUM"], "b", "no rows to predict"),
    ([r for r in _grid() if r.consistency != "ONE"], "a", "no rows to fit"),
    ([Measurement("read", "ONE", rate=100.0, mean_ms=1.0)] + _grid(), "c",
     "fixed rate")])
def test_a_scenario_a_file_cannot_form_is_refused(rows, scenario, words):
    with pytest.raises(ConfigError, match=words) as error:
        split(rows, scenario, "m.csv")
    assert f"drop {scenario} from --scenarios" in str(error.value)
