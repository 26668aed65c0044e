"""Sample paths: placements are uniform and distinct, streams are reproducible."""

import numpy as np
from hypothesis import given, settings, strategies as st
from scipy import stats

from forkjoin_sim.model import ForkJoinModel
from forkjoin_sim.randomness.samplepath import PathSampler, draw_placement, draw_sample_path


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 12).flatmap(lambda n: st.tuples(st.just(n), st.integers(1, n))),
       st.sampled_from(["random", "ring"]), st.integers(0, 2**32 - 1))
def test_placements_are_distinct_nodes(nr, placement, seed):
    n, r = nr
    nodes = draw_placement(placement, n, r, 200, np.random.default_rng(seed))
    assert nodes.shape == (200, r)
    assert nodes.min() >= 0 and nodes.max() < n
    assert all(len(set(row)) == r for row in nodes.tolist())


def test_random_placement_is_uniform_over_subsets():
    # (5 choose 2) = 10 subsets, 50,000 draws: chi-square goodness of fit.
    nodes = draw_placement("random", 5, 2, 50_000, np.random.default_rng(7))
    keys = np.sort(nodes, axis=1) @ np.array([5, 1])
    counts = np.unique(keys, return_counts=True)[1]
    assert len(counts) == 10
    assert stats.chisquare(counts).pvalue > 0.001


def test_ring_placement_is_consecutive():
    nodes = draw_placement("ring", 6, 3, 1000, np.random.default_rng(3))
    assert np.all((nodes[:, 1] - nodes[:, 0]) % 6 == 1)
    assert np.all((nodes[:, 2] - nodes[:, 1]) % 6 == 1)


def test_same_seed_same_path_and_blocks_do_not_change_it():
    model = ForkJoinModel(7, 3, 2, load=1.5, service=stats.lognorm(0.8))
    one = draw_sample_path(model, 1000, 42)
    sampler = PathSampler(model.system, model.arrival_process, 42)
    blocks = [sampler.draw(300), sampler.draw(700)]
    np.testing.assert_array_equal(np.concatenate([b.nodes for b in blocks]), one.nodes)
    np.testing.assert_array_equal(np.concatenate([b.service for b in blocks]), one.service)
    np.testing.assert_allclose(np.concatenate([b.arrivals for b in blocks]), one.arrivals,
                               rtol=1e-12)
    other = draw_sample_path(model, 1000, 43)
    assert not np.array_equal(other.service, one.service)


def test_arrival_rate_matches_the_model():
    for arrivals in ["poisson", "deterministic", stats.gamma(2.0)]:
        model = ForkJoinModel(4, 2, 1, load=1.2, arrivals=arrivals)
        path = draw_sample_path(model, 200_000, 5)
        rate = len(path) / path.arrivals[-1]
        assert abs(rate / model.arrival_rate - 1) < 0.01
