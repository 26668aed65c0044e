"""The naive guesses the hold-out compares the calibrated model with."""

import math

import pytest

from sizing.measurements import Measurement
from validation.calibration_holdout import SCENARIOS, _naive, mape

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
