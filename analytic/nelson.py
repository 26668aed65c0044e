"""The Nelson–Tantawi (1988) estimate ``N(i; q)`` of the basic (i,i,i) fork-join queue."""

import numbers
from fractions import Fraction

from analytic.errors import ConfigError
from analytic.harmonic import harmonic
from analytic.parameters import check_integer, check_positive


def nelson_basic(i, load, mu=1.0):
    """Nelson–Tantawi mean sojourn time ``N(i; q)`` of an (i,i,i) queue at node load q.

    ``N(1; q) = 1/(mu*(1-q))`` (M/M/1, exact) and, for ``i >= 2``,
    ``N(i; q) = [H_i/H_2 + (4/11)*(1 - H_i/H_2)*q] * (12 - q)/(8*mu*(1 - q))``,
    exponential service of rate ``mu``. Exact (``Fraction``) when ``load`` is exact
    (int or ``Fraction``; ``mu`` is then taken at its exact value, so the default 1.0
    is fine), float otherwise.
    """
    check_integer(i, "basic queue size i")
    if i < 1:
        raise ConfigError(f"basic queue size i={i} must be at least 1")
    if (isinstance(load, bool) or not isinstance(load, numbers.Real)
            or not 0 <= load < 1):
        raise ConfigError(f"per-node load q={load!r} must satisfy 0 <= q < 1 (stable)")
    check_positive(mu, "service rate mu")
    exact = isinstance(load, numbers.Rational)
    if exact:
        load = Fraction(load)
        mu = Fraction(mu) if isinstance(mu, numbers.Rational) else Fraction(float(mu))
    if i == 1:
        return 1 / (mu * (1 - load))
    h = harmonic(i, exact) / harmonic(2, exact)
    four_elevenths = Fraction(4, 11) if exact else 4 / 11
    return (h + four_elevenths * (1 - h) * load) * (12 - load) / (8 * mu * (1 - load))
