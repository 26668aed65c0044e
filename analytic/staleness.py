"""k-staleness of independent (non-queueing) partial quorums, in closed form.

Bailis et al., "Probabilistically Bounded Staleness for Practical Partial
Quorums", VLDB 2012, Section 3: with N replicas and read and write quorums of
sizes R and W drawn independently and uniformly at random, a read misses one
write's quorum with probability

    p_s = C(N - W, R) / C(N, R)                        (equation 1)

and misses each of the last k (independent) writes' quorums with probability

    p_sk = p_s ** k                                    (equation 2, k-staleness)

so it returns a value at most k versions old with probability 1 - p_sk. For
R + W > N every read quorum meets every write quorum: C(N - W, R) = 0.
"""

from __future__ import annotations

from fractions import Fraction
from math import comb
from numbers import Integral

from analytic.errors import ConfigError


def p_miss(n: int, r: int, w: int) -> Fraction:
    """p_s = C(n-w, r) / C(n, r): a random r-subset misses a random w-subset
    (equation 1), exactly."""
    n, r, w = _check(n, r, w)
    return Fraction(comb(n - w, r), comb(n, r))


def p_stale(n: int, r: int, w: int, k: int = 1) -> float:
    """p_sk = p_s ** k: the read is more than k versions old (equation 2)."""
    return float(p_miss(n, r, w) ** _check_versions(k))


def k_staleness(n: int, r: int, w: int, k: int = 1) -> float:
    """1 - p_sk: P(a read returns a value at most k versions old) (equation 2)."""
    return float(1 - p_miss(n, r, w) ** _check_versions(k))


def p_consistent(n: int, r: int, w: int) -> float:
    """1 - p_s: P(a read returns the latest version), the k = 1 case; 1 when
    r + w > n."""
    return k_staleness(n, r, w, 1)


def _whole(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise ConfigError(f"{name} must be a whole number, got {value!r}")
    return int(value)


def _check(n, r, w) -> tuple[int, int, int]:
    n, r, w = _whole(n, "replicas N"), _whole(r, "read quorum R"), _whole(w, "write quorum W")
    if n < 1:
        raise ConfigError(f"replicas N={n}; use N >= 1")
    if not 1 <= r <= n:
        raise ConfigError(f"read quorum R={r} is outside 1..N={n}; use 1 <= R <= N")
    if not 1 <= w <= n:
        raise ConfigError(f"write quorum W={w} is outside 1..N={n}; use 1 <= W <= N")
    return n, r, w


def _check_versions(k) -> int:
    k = _whole(k, "versions k")
    if k < 1:
        raise ConfigError(f"versions k={k}; k counts versions, use k >= 1 (k = 1 is "
                          "'the latest version')")
    return k
