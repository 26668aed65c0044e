"""Validation of (n, r, k, rho, mu) and the per-node load."""

import re
from fractions import Fraction

import numpy as np
import pytest

from analytic import ConfigError, per_node_load, validate_queue


def test_per_node_load():
    assert per_node_load(9, 3, 0.9) == pytest.approx(0.3)
    assert per_node_load(9, 9, Fraction(9, 10)) == Fraction(9, 10)
    assert validate_queue(9, 3, 2, 0.9) == pytest.approx(0.3)
    numpy_args = (np.int64(9), np.int64(3), np.int64(2), np.float64(0.9))
    assert validate_queue(*numpy_args) == pytest.approx(0.3)


def test_unstable_message_says_how_to_fix():
    with pytest.raises(ConfigError) as info:
        validate_queue(9, 3, 1, 3.5)
    assert str(info.value) == (
        "unstable load: per-node load r*rho/n = 3*3.5/9 = 1.167 must be < 1; use rho < 3")


@pytest.mark.parametrize("args, message", [
    ((3, 3, 4, 0.5), "quorum k=4 exceeds replicas r=3; use 1 <= k <= r"),
    ((3, 3, 0, 0.5), "quorum k=0 must be at least 1"),
    ((3, 5, 1, 0.1), "replicas r=5 must satisfy 1 <= r <= n=3"),
    ((3, 3.0, 1, 0.5), "replicas r=3.0 must be an integer; use r=3"),
    ((3, 3, True, 0.5), "quorum k=True must be an integer"),
    ((3, 3, 1, 0), "load rho=0 must be a finite number > 0"),
    ((3, 3, 1, float("nan")), "load rho=nan"),
    ((3, 3, 1, 3), "unstable load"),
    ((0, 1, 1, 0.5), "nodes n=0 must be at least 1; use n >= 1"),
])
def test_invalid(args, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        validate_queue(*args)


@pytest.mark.parametrize("mu", [0, -1.0, float("inf")])
def test_invalid_mu(mu):
    with pytest.raises(ConfigError, match="service rate mu"):
        validate_queue(3, 3, 1, 0.5, mu)


def test_config_error_is_value_error():
    assert issubclass(ConfigError, ValueError)
