"""Tests for analytic.staleness: PBS k-staleness of independent random quorums."""

import itertools
from fractions import Fraction

import pytest
from hypothesis import given, strategies as st

from analytic.errors import ConfigError
from analytic.staleness import k_staleness, p_consistent, p_miss, p_stale


def brute_force_fresh(n, r, w, k):
    """P(a random r-subset meets at least one of k independent random w-subsets),
    by enumerating every read set and every k-tuple of write sets."""
    reads = list(itertools.combinations(range(n), r))
    writes = list(itertools.combinations(range(n), w))
    fresh = total = 0
    for read in reads:
        read = set(read)
        for quorums in itertools.product(writes, repeat=k):
            total += 1
            fresh += any(read & set(q) for q in quorums)
    return Fraction(fresh, total)


@pytest.mark.parametrize("n", range(1, 6))
@pytest.mark.parametrize("k", [1, 2, 3])
def test_closed_form_equals_enumeration_over_all_subsets(n, k):
    for r in range(1, n + 1):
        for w in range(1, n + 1):
            assert k_staleness(n, r, w, k) == pytest.approx(
                float(brute_force_fresh(n, r, w, k)), abs=1e-15), (n, r, w, k)


def test_papers_worked_examples():
    # Section 3: N=3, R=W=1 gives p_s = 2/3; N=100, R=W=30 gives 1.88e-6.
    assert p_miss(3, 1, 1) == Fraction(2, 3)
    assert p_stale(100, 30, 30) == pytest.approx(1.88e-6, rel=5e-3)
    # Section 3.2: within 2 versions 0.(5), within 3 versions 0.(703).
    assert k_staleness(3, 1, 1, 2) == pytest.approx(5 / 9)
    assert k_staleness(3, 1, 1, 3) == pytest.approx(19 / 27)
    assert k_staleness(3, 1, 1, 5) > 0.868
    assert k_staleness(3, 1, 1, 10) > 0.98


@given(st.integers(1, 40).flatmap(lambda n: st.tuples(
    st.just(n), st.integers(1, n), st.integers(1, n), st.integers(1, 20))))
def test_strict_quorums_are_always_fresh_and_k_only_helps(case):
    n, r, w, k = case
    if r + w > n:
        assert p_consistent(n, r, w) == 1.0 and k_staleness(n, r, w, k) == 1.0
    else:
        assert 0 < p_consistent(n, r, w) < 1
    assert k_staleness(n, r, w, k + 1) >= k_staleness(n, r, w, k)
    assert p_stale(n, r, w, k) == pytest.approx(1 - k_staleness(n, r, w, k), abs=1e-15)


@pytest.mark.parametrize("args, message", [
    ((3, 4, 1), "read quorum R=4 is outside 1..N=3; use 1 <= R <= N"),
    ((3, 1, 0), "write quorum W=0 is outside 1..N=3; use 1 <= W <= N"),
    ((0, 1, 1), "replicas N=0; use N >= 1"),
    ((3, 1.0, 1), "read quorum R must be a whole number"),
    ((3, 1, 1, 0), "versions k=0"),
])
def test_invalid_arguments_say_how_to_fix(args, message):
    with pytest.raises(ConfigError, match="^" + message.replace("(", r"\(")
                       .replace(")", r"\)").replace(".", r"\.")):
        k_staleness(*args)
