"""Theorem 1: the coefficients ``W(r,k,i)`` and the expansion into basic queues.

``T(r,r,k) = sum_{i=k..r} W(r,k,i) * T(i,i,i)`` holds for any exchangeable sojourn
times (means or whole CDFs). The coefficients alternate in sign and grow like
``C(r, r/2)``, so with floating-point inputs the sum can cancel catastrophically;
:func:`expand_basic` is exact for exact inputs and warns otherwise.
"""

import math
import numbers
import sys
import warnings
from fractions import Fraction

from analytic.errors import CancellationWarning, ConfigError
from analytic.parameters import check_replicas_quorum

#: Relative error (estimated) above which :func:`expand_basic` warns.
WARN_RELATIVE_ERROR = 1e-6
#: Largest r the coefficients are computed for: their work grows as r**2 digits
#: (r = 3000 takes about 1.6 s, 10^4 about 24 s), and in floating point the
#: alternating sum has lost every digit long before (about r = 60).
MAX_ORDER = 3000


def check_order(r, k):
    """Validate ``1 <= k <= r <= MAX_ORDER`` for a Theorem 1 expansion."""
    check_replicas_quorum(r, k)
    if r > MAX_ORDER:
        raise ConfigError(f"replicas r={r}: Theorem 1's coefficients are computed up to "
                          f"r={MAX_ORDER} (their size grows as C(r, r/2), and a float "
                          "sum of them cancels completely beyond r of about 60); use "
                          "a smaller r or another estimator")


def w_coefficients(r, k):
    """The integers ``W(r,k,i) = (-1)^(i-k) * C(i-1,k-1) * C(r,i)`` for ``i = k..r``.

    Closed form of the paper's ``sum_{j=k..i} C(r,j) * A(r,j,i)``
    (see :func:`w_coefficients_by_sum`).
    """
    check_order(r, k)
    return {i: (-1) ** (i - k) * math.comb(i - 1, k - 1) * math.comb(r, i)
            for i in range(k, r + 1)}


def a_coefficient(r, j, i):
    """The paper's ``A(r,j,i) = (-1)^(i-j) * C(r-j, i-j)`` (inclusion-exclusion)."""
    return (-1) ** (i - j) * math.comb(r - j, i - j)


def w_coefficients_by_sum(r, k):
    """``W(r,k,i)`` by the paper's sum ``sum_{j=k..i} C(r,j) * A(r,j,i)``, i = k..r."""
    check_replicas_quorum(r, k)
    return {i: sum(math.comb(r, j) * a_coefficient(r, j, i) for j in range(k, i + 1))
            for i in range(k, r + 1)}


def _is_exact(value):
    return isinstance(value, numbers.Rational) and not isinstance(value, bool)


def _basic_values(r, k, basic):
    """The values ``basic[i]`` for i = k..r, checked to exist and be real numbers."""
    needed = range(k, r + 1)
    missing = [i for i in needed if i not in basic]
    if missing:
        raise ConfigError(
            f"basic values missing for i = {', '.join(map(str, missing))}; Theorem 1 "
            f"with r={r}, k={k} needs T(i,i,i) for every i in {k}..{r}")
    values = {i: basic[i] for i in needed}
    for i, v in values.items():
        if (isinstance(v, bool) or not isinstance(v, numbers.Real)
                or not math.isfinite(v)):
            raise ConfigError(
                f"basic value T({i},{i},{i})={v!r} must be a finite real number")
    return values


def _terms(r, k, basic):
    """The exact terms ``W(r,k,i) * basic[i]`` (floats are exact binary rationals)."""
    values = _basic_values(r, k, basic)
    w = w_coefficients(r, k)
    exact = all(_is_exact(v) for v in values.values())
    terms = [w[i] * Fraction(v if exact else float(v)) for i, v in values.items()]
    return terms, exact


def _relative_error(terms, relative_precision=None):
    precision = (sys.float_info.epsilon if relative_precision is None
                 else relative_precision)
    total = sum(terms, Fraction(0))
    size = sum(abs(t) for t in terms)
    if size == 0 or precision == 0:
        return 0.0
    if total == 0:
        return math.inf
    return precision * float(size / abs(total))


def _check_precision(relative_precision):
    if relative_precision is None:
        return
    if (isinstance(relative_precision, bool)
            or not isinstance(relative_precision, numbers.Real)
            or not 0 <= relative_precision < 1):
        raise ConfigError(f"relative_precision={relative_precision!r} must be a number "
                          "in [0, 1), e.g. 5e-4 for inputs known to 3 significant digits")


def cancellation_error(r, k, basic, relative_precision=None):
    """Estimated relative error of :func:`expand_basic` for these inputs.

    ``relative_precision * sum|W_i*b_i| / |sum W_i*b_i|``: each input is known to a
    relative ``relative_precision`` and the alternating sum amplifies that by the
    ratio of the size of its terms to the size of the result. By default the inputs
    are taken as exact when they are ints or Fractions (error 0) and as known to the
    float rounding ``eps`` otherwise; pass the precision of measured inputs (e.g.
    ``5e-4`` for 3 significant digits) to see what their rounding does to the result.
    """
    _check_precision(relative_precision)
    terms, exact = _terms(r, k, basic)
    if exact and relative_precision is None:
        return 0.0
    return _relative_error(terms, relative_precision)


def expand_basic(r, k, basic, *, warn_above=WARN_RELATIVE_ERROR, relative_precision=None):
    """Theorem 1: ``sum_{i=k..r} W(r,k,i) * basic[i]``.

    Parameters
    ----------
    r, k : int
        Replicas and quorum, ``1 <= k <= r``.
    basic : mapping
        ``i -> T(i,i,i)`` for every ``i`` in ``k..r``: mean sojourn times of the basic
        queues, or their CDFs at one point.
    warn_above : float
        Emit :class:`CancellationWarning` when the estimated relative error
        (:func:`cancellation_error`) exceeds this.
    relative_precision : float, optional
        How precisely the inputs are known, relative to their size (see
        :func:`cancellation_error`; default: exact for ints and Fractions, float
        rounding otherwise). Measured inputs with few digits can make the result
        meaningless, even negative, long before float rounding does.

    Returns
    -------
    Fraction or float
        A ``Fraction`` (exact) when every value is an int or ``Fraction``; otherwise
        the exactly summed float inputs, rounded once to a float.
    """
    _check_precision(relative_precision)
    terms, exact = _terms(r, k, basic)
    total = sum(terms, Fraction(0))
    if exact and relative_precision is None:
        return total
    error = _relative_error(terms, relative_precision)
    if error > warn_above:
        largest = max(abs(float(t)) for t in terms)
        if relative_precision is None:
            lost = ("all" if error >= 1
                    else f"about {math.log10(error / sys.float_info.epsilon):.0f}")
            detail = f"{lost} of 16 significant digits lost"
            fix = "pass exact inputs (fractions.Fraction) or use a smaller r"
        else:
            detail = f"inputs known to a relative {relative_precision:.1e}"
            fix = "measure the basic queues more precisely or use a smaller r"
        warnings.warn(
            f"Theorem 1 expansion for r={r}, k={k} cancels: terms up to {largest:.3g} "
            f"sum to {float(total):.3g}, estimated relative error {error:.1e} "
            f"({detail}); {fix}", CancellationWarning, stacklevel=2)
    return total if exact else float(total)
