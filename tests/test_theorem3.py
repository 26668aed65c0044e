"""Theorem 3: NelsonT, UpT, LowT and the clamped estimate (exponential service)."""

import json
from fractions import Fraction

import pytest
from hypothesis import given, strategies as st

from analytic import (
    ConfigError, estimates, harmonic, lower_bound, lower_bound_pk, nelson_basic,
    nelson_estimate, theorem3_estimate, upper_estimate, w_coefficients)
from strategies import stable_queues

H = lambda m: harmonic(m, exact=True)  # noqa: E731


def paper_nelson(n, r, k, rho, mu=1):
    """NelsonT as written out in the paper (docs/model.md section 4), in exact arithmetic."""
    rho, mu = Fraction(rho), Fraction(mu)
    w = w_coefficients(r, k)
    factor = (12 * n - r * rho) / (88 * mu * (n - r * rho))
    total = factor * sum(w[i] * (11 * n * H(i) + 4 * r * rho * (H(2) - H(i))) / (n * H(2))
                         for i in range(max(k, 2), r + 1))
    if k == 1:
        total += n * r / (mu * (n - r * rho))
    return total


def test_hand_values_3_3_1():
    # q = 3 * 1/2 / 3 = 1/2; W(3,1,.) = 3, -3, 1; common factor (12 - q)/(8 (1 - q)) = 23/8.
    q = Fraction(1, 2)
    n1 = 1 / (1 - q)                                          # N(1) = 2
    n2 = Fraction(23, 8)                                      # H2/H2 = 1
    n3 = (Fraction(11, 9) + Fraction(4, 11) * (1 - Fraction(11, 9)) * q) * Fraction(23, 8)
    nelson = 3 * n1 - 3 * n2 + n3
    assert nelson == Fraction(17, 22)
    upper = Fraction(3) / (3 - 3 * q)                         # n/(mu(n - r rho)) = 2
    # LowT = H3 - H2 + r rho (H_{3(3-q)} - H_{2(2-q)})/n; the shifted sums differ by 1/(3(3-q))
    lower = Fraction(1, 3) + Fraction(3, 2) * (1 / (3 * (3 - q))) / 3
    assert lower == Fraction(2, 5)
    assert nelson_estimate(3, 3, 1, 0.5) == pytest.approx(float(nelson), rel=1e-15)
    assert upper_estimate(3, 3, 1, 0.5) == pytest.approx(float(upper), rel=1e-15)
    assert lower_bound(3, 3, 1, 0.5) == pytest.approx(float(lower), rel=1e-14)
    assert theorem3_estimate(3, 3, 1, 0.5) == pytest.approx(float(nelson), rel=1e-15)


def test_hand_values_9_3_2():
    # q = 3 * 0.9 / 9 = 3/10; W(3,2,.) = {2: 3, 3: -2}; factor (12 - q)/(8 (1 - q)) = 117/56.
    q, factor = Fraction(3, 10), Fraction(117, 56)
    n2 = factor
    n3 = (Fraction(11, 9) + Fraction(4, 11) * (1 - Fraction(11, 9)) * q) * factor
    nelson = 3 * n2 - 2 * n3
    # UpT, k = 2: (12n - r rho)/(8 mu (n - r rho)) [H2/H2 + ...] = 105.3/50.4
    upper = Fraction(1053, 10) / Fraction(504, 10)
    # LowT = (H3 - H1) + r rho (H_{3(3-q)} - H_{1(1-q)})/n = 5/6 + q (1/(2(2-q)) + 1/(3(3-q)))
    lower = Fraction(5, 6) + q * (1 / (2 * (2 - q)) + 1 / (3 * (3 - q)))
    assert float(lower) < float(nelson) < float(upper)
    assert nelson_estimate(9, 3, 2, 0.9) == pytest.approx(float(nelson), rel=1e-14)
    assert upper_estimate(9, 3, 2, 0.9) == pytest.approx(float(upper), rel=1e-14)
    assert lower_bound(9, 3, 2, 0.9) == pytest.approx(float(lower), rel=1e-14)
    assert theorem3_estimate(9, 3, 2, 0.9) == pytest.approx(float(nelson), rel=1e-14)


def test_lower_clamp_is_active_for_7_7_1():
    # LowT for k = 1 is 1/(mu (r - q)); at (7,7,1) rho = 1/2: 1/(7 - 1/2) = 2/13.
    assert lower_bound(7, 7, 1, 0.5) == pytest.approx(2 / 13, rel=1e-14)
    assert nelson_estimate(7, 7, 1, 0.5) < 2 / 13
    assert theorem3_estimate(7, 7, 1, 0.5) == pytest.approx(2 / 13, rel=1e-14)


def test_nelson_is_negative_for_9_9_1_heavy_load():
    # Literal formula: W(r,1,1) N(1;q) uses the exact M/M/1 value, the other terms the
    # i >= 2 formula; the mismatch grows like r and makes NelsonT negative. Theorem 3
    # then falls back to LowT.
    assert paper_nelson(9, 9, 1, Fraction(9, 10)) < 0
    assert nelson_estimate(9, 9, 1, 0.9) < 0
    assert theorem3_estimate(9, 9, 1, 0.9) == lower_bound(9, 9, 1, 0.9) > 0


@given(stable_queues(max_nodes=14), st.sampled_from([0.5, 1.0, 3.0]))
def test_paper_written_out_form_equals_w_sum(queue, mu):
    n, r, k, rho = queue
    assert nelson_estimate(n, r, k, rho, mu) == float(paper_nelson(n, r, k, rho, mu))


@given(stable_queues(max_nodes=40))
def test_nelson_closed_form(queue):
    # Sum W = 1 and sum W H_i = H_r - H_{r-k} turn the W-sum into one N-like term.
    n, r, k, rho = queue
    q = Fraction(rho) * r / n
    factor = (12 - q) / (8 * (1 - q))
    def nelson_with(h, ones):
        return factor * (h / H(2) + Fraction(4, 11) * q * (ones - h / H(2)))

    if k >= 2:
        expected = nelson_with(H(r) - H(r - k), 1)
    else:  # W(r,1,1) = r times the M/M/1 term, the rest sums to 1 - r and 1/r - r
        expected = r / (1 - q) + nelson_with(Fraction(1, r) - r, 1 - r)
    assert nelson_estimate(n, r, k, rho) == float(expected)


@given(stable_queues(max_nodes=30))
def test_upper_is_nelson_of_k_k_k(queue):
    n, r, k, rho = queue
    assert upper_estimate(n, r, k, rho) == pytest.approx(nelson_basic(k, r * rho / n), rel=1e-12)


@given(stable_queues(max_nodes=30), st.sampled_from([0.5, 1.0, 3.0]))
def test_lower_is_joshi_sum(queue, mu):
    n, r, k, rho = queue
    q = r * rho / n
    joshi = sum(1 / (mu * (i - q)) for i in range(r - k + 1, r + 1))
    assert lower_bound(n, r, k, rho, mu) == pytest.approx(joshi, rel=1e-12)


@given(stable_queues(max_nodes=20))
def test_clamp_order(queue):
    n, r, k, rho = queue
    nelson, low, up = (f(n, r, k, rho) for f in (nelson_estimate, lower_bound, upper_estimate))
    estimate = theorem3_estimate(n, r, k, rho)
    assert estimate == min(max(nelson, low), up)
    assert estimate <= up
    # Observed (and proved for NelsonT in the report): neither NelsonT nor LowT
    # exceeds UpT beyond rounding, so the estimate lies between LowT and UpT.
    assert nelson <= up * (1 + 1e-12) and low <= up * (1 + 1e-12)
    assert low * (1 - 1e-12) <= estimate


@given(stable_queues(max_nodes=12), st.floats(0.1, 10))
def test_time_scales_with_one_over_mu(queue, mu):
    n, r, k, rho = queue
    for f in (nelson_estimate, lower_bound, upper_estimate, theorem3_estimate):
        assert f(n, r, k, rho, mu) == pytest.approx(f(n, r, k, rho) / mu, rel=1e-12)


def test_estimates_dict():
    result = estimates(9, 3, 2, 0.9)
    assert list(result) == ["per_node_load", "nelson", "lower", "lower_pk", "upper", "approx"]
    assert result["per_node_load"] == pytest.approx(0.3)
    assert result["nelson"] == nelson_estimate(9, 3, 2, 0.9)
    assert result["lower"] == lower_bound(9, 3, 2, 0.9)
    assert result["lower_pk"] == lower_bound_pk(9, 3, 2, 0.9)
    assert result["upper"] == upper_estimate(9, 3, 2, 0.9)
    assert result["approx"] == theorem3_estimate(9, 3, 2, 0.9)


def test_estimates_undefined_pk_bound_is_none_and_json_safe():
    result = estimates(9, 9, 7, 0.9)
    assert result["lower_pk"] is None
    assert json.loads(json.dumps(result, allow_nan=False)) == result


@pytest.mark.parametrize("f", [nelson_estimate, upper_estimate, lower_bound,
                               theorem3_estimate, estimates])
@pytest.mark.parametrize("args", [(3, 3, 4, 0.5), (3, 4, 1, 0.5), (9, 3, 1, 3.0),
                                  (3, 3, 1, -0.1), (3, 3, 1, 0.5, 0.0), (3, 3.5, 1, 0.5)])
def test_invalid_inputs_raise(f, args):
    with pytest.raises(ConfigError):
        f(*args)
