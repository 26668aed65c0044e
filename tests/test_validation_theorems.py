"""Theorem 1, the Lemma and Theorem 2 checked by simulation (validation.theorems)."""

import math

import pytest

from validation import theorems

SERVICES = {"exponential": "exp", "lognormal": "lognormal:1"}


@pytest.fixture(scope="module")
def basic_runs():
    entries = theorems.theorem1_entries(SERVICES, loads=(0.7,), replicas=(3,))
    return theorems.simulate_entries(entries, jobs=400_000, seed=11, workers=1,
                                     progress=False)


def test_theorem1_holds_in_the_3_3_k_queue_within_the_combined_ci(basic_runs):
    table = theorems.theorem1_table(basic_runs, SERVICES, loads=(0.7,), replicas=(3,))
    assert len(table) == 4  # two services, k = 1, 2
    assert table["agrees"].all(), table.to_string()
    assert (table["abs_w_sum"] == [7, 5, 7, 5]).all()


@pytest.mark.parametrize("wrong", [
    {1: 3, 2: -3, 3: 2},    # last coefficient off by one
    {2: 3, 3: -1},          # C(i-1, k-1) factor dropped for k = 2
])
def test_the_check_rejects_wrong_coefficients(basic_runs, wrong):
    k = min(wrong)
    direct, direct_hw = basic_runs.mean_hw(3, 3, k, 0.7)
    basic = {i: basic_runs.mean_hw(i, i, i, 0.7) for i in wrong}
    expansion = sum(w * basic[i][0] for i, w in wrong.items())
    hw = theorems.combined_half_width(wrong, {i: h for i, (_, h) in basic.items()},
                                      direct_hw)
    assert abs(expansion - direct) > 3 * hw


def test_combined_half_width_adds_independent_variances():
    assert theorems.combined_half_width({1: 3, 2: -4}, {1: 1.0, 2: 1.0}, 0.0) == 5.0
    assert theorems.combined_half_width({1: 1}, {1: 3.0}, 4.0) == 5.0


@pytest.fixture(scope="module")
def lemma_runs():
    entries = theorems.lemma_entries((5,), (3,), (0.5, 1.5))
    # The reduced queue at the *unscaled* load, as a wrong scaling would pick it.
    entries.append({"nodes": 3, "replicas": 3, "quorum": [1, 2, 3], "rho": 0.5})
    return theorems.simulate_entries(entries, jobs=300_000, seed=12, workers=1,
                                     progress=False)


def test_lemma_gap_is_small_at_the_scaled_load_and_large_without_scaling(lemma_runs):
    table = theorems.lemma_table(lemma_runs, (5,), (3,), (0.5, 1.5))
    assert len(table) == 12 and set(table["placement"]) == {"random", "ring"}
    assert table["per_node_load"].tolist() == pytest.approx(0.6 * table["rho"])
    # An approximation (about -20% for k = 1 at per-node load 0.9) ...
    assert table["gap"].abs().max() < 0.3
    # ... unlike the same comparison at rho instead of r*rho/n.
    for row in table[(table["rho"] == 0.5) & (table["placement"] == "random")].itertuples():
        wrong, wrong_hw = lemma_runs.mean_hw(3, 3, row.k, 0.5)
        assert abs(row.full - wrong) > 3 * math.hypot(row.full_hw, wrong_hw)
        assert abs(row.full - wrong) > 2 * abs(row.full - row.reduced)


@pytest.fixture(scope="module")
def bound_runs():
    entries = theorems.theorem2_entries((3, 5), (3,), (0.5,), "exp")
    return theorems.simulate_entries(entries, jobs=300_000, seed=13, workers=1,
                                     progress=False)


def test_theorem2_lower_bounds_hold_and_the_exponential_form_fails_at_k_equal_r(bound_runs):
    table = theorems.theorem2_table(bound_runs, (3, 5), (3,), (0.5,), "exp")
    assert len(table) == 6
    assert not table["lower_general_violated"].any()
    assert not table["lower_violated"].any()
    # The "tighter" exponential form is 16 at (3,3,3) rho=0.5 while the queue's
    # mean is about 3.4: a finding, not noise.
    row = table[(table["n"] == 3) & (table["k"] == 3)].iloc[0]
    assert row["lower_pk"] == pytest.approx(16.0)
    assert row["lower_pk_violated"] and row["sim_ci_high"] < 4
    # r = n: T(k,k,k) bounds T(r,r,k) exactly (the k-th of r <= the max of k).
    same = table[table["n"] == 3]
    assert not same["upper_sim_violated"].any()
    assert (same["sim_mean"] <= same["upper_sim"] + same["upper_sim_hw"]).all()
