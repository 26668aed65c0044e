"""Closed forms for non-purging (n,r,k) fork-join queues (Wang, Li & Shen, 2019).

Pure functions of numbers: no randomness, no I/O. Symbols follow the paper
(n nodes, r replicas, k quorum, rho = lambda/mu job load, mu service rate).

Parameters
    validate_queue, per_node_load               1 <= k <= r <= n, r*rho/n < 1
Harmonic numbers
    harmonic (H_m), harmonic_shifted (H_{m(m-x)})
Theorem 1 (exact linear transformation)
    w_coefficients, w_coefficients_by_sum, a_coefficient,
    expand_basic, cancellation_error
Nelson–Tantawi basic queue
    nelson_basic                                N(i; q)
Theorem 2 (lower bounds from order statistics)
    lower_bound_pk, lower_bound_general
    order_statistic_moments, exponential_order_statistic_moments
Theorem 3 (exponential service)
    nelson_estimate, upper_estimate, lower_bound, theorem3_estimate, estimates
Estimators beyond Theorem 3 (exponential service; see docs/estimators.md)
    ESTIMATORS, RECOMMENDED, all_estimates, varma_makowski_basic, light_traffic_slope
Theorem 4 (Cassandra write latency)
    cassandra_write_latency, consistency_level_to_k, CONSISTENCY_LEVELS
Errors
    ConfigError (a ValueError), CancellationWarning (a RuntimeWarning)
"""

from analytic.errors import CancellationWarning, ConfigError
from analytic.parameters import per_node_load, validate_queue
from analytic.harmonic import harmonic, harmonic_shifted
from analytic.coefficients import (
    a_coefficient, cancellation_error, expand_basic, w_coefficients, w_coefficients_by_sum)
from analytic.nelson import nelson_basic
from analytic.order_statistics import (
    exponential_order_statistic_moments, order_statistic_moments)
from analytic.bounds import lower_bound_general, lower_bound_pk
from analytic.theorem3 import (
    estimates, lower_bound, nelson_estimate, theorem3_estimate, upper_estimate)
from analytic.varma_makowski import varma_makowski_basic
from analytic.light_traffic import light_traffic_slope
from analytic.estimators import ESTIMATORS, RECOMMENDED, all_estimates
from analytic.cassandra import (
    CONSISTENCY_LEVELS, cassandra_write_latency, consistency_level_to_k)

__all__ = [
    "validate_queue", "per_node_load",
    "harmonic", "harmonic_shifted",
    "w_coefficients", "w_coefficients_by_sum", "a_coefficient",
    "expand_basic", "cancellation_error",
    "nelson_basic",
    "lower_bound_pk", "lower_bound_general",
    "order_statistic_moments", "exponential_order_statistic_moments",
    "nelson_estimate", "upper_estimate", "lower_bound", "theorem3_estimate", "estimates",
    "ESTIMATORS", "RECOMMENDED", "all_estimates", "varma_makowski_basic",
    "light_traffic_slope",
    "cassandra_write_latency", "consistency_level_to_k", "CONSISTENCY_LEVELS",
    "ConfigError", "CancellationWarning",
]
