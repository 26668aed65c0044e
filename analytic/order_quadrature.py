"""Quadrature for the mean of a non-negative random variable from its survival function.

``E[S] = int_0^inf P(S > x) dx`` with the substitution ``x = -log(Phi(-t))``: then
``P(Exp(1) <= x) = Phi(t)``, so exponential and Gaussian-copula quantities are
smooth, fast-decaying functions of ``t`` and the trapezoid rule on a fixed grid of
401 points in ``t in [-9, 9]`` converges spectrally: the mean of the largest of 15
unit exponentials, H_15, is reproduced to 1e-15.
"""

import numpy as np
import scipy.special
import scipy.stats

#: Gaussian-scale nodes ``t`` and the matching times ``x = -log(Phi(-t))``.
GAUSSIAN_NODES = np.linspace(-9.0, 9.0, 401)
TIMES = -scipy.special.log_ndtr(-GAUSSIAN_NODES)
#: ``P(Exp(1) <= x)`` at :data:`TIMES`, i.e. ``Phi(t)``.
EXPONENTIAL_CDF = scipy.special.ndtr(GAUSSIAN_NODES)
_DX_DT = np.exp(scipy.stats.norm.logpdf(GAUSSIAN_NODES)
                - scipy.special.log_ndtr(-GAUSSIAN_NODES))


def mean_from_survival(survival):
    """``int_0^inf P(S > x) dx`` from ``survival = P(S > x)`` at :data:`TIMES`."""
    return float(np.trapezoid(_DX_DT * np.asarray(survival), GAUSSIAN_NODES))
