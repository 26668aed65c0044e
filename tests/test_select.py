"""The quickselect the engines use for jobs of many tasks."""

import numpy as np
from hypothesis import given, settings, strategies as st

from forkjoin_sim.engines.fast import FastEngine
from forkjoin_sim.engines.select import SMALL, kth_smallest
from forkjoin_sim.engines.simpy_engine import SimPyEngine
from forkjoin_sim.model import ForkJoinModel
from forkjoin_sim.randomness.samplepath import draw_sample_path


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(0, 1e6) | st.sampled_from([0.0, 1.0, 2.0]), min_size=1,
                max_size=300), st.data())
def test_kth_smallest_is_the_sorted_value(values, data):
    # ties (the sampled constants), sorted and reversed runs, every k
    k = data.draw(st.integers(1, len(values)))
    order = data.draw(st.sampled_from(["as drawn", "sorted", "reversed"]))
    array = np.array(sorted(values, reverse=order == "reversed")
                     if order != "as drawn" else values)
    expected = np.sort(array)[k - 1]
    assert kth_smallest(array.copy(), array.size, k) == expected


def test_wide_jobs_give_the_same_departures_in_fast_and_simpy():
    # more than SMALL tasks per job: the fast engine selects instead of sorting
    model = ForkJoinModel(120, 3 * SMALL, SMALL + 5, load=0.6)
    path = draw_sample_path(model, 300, seed=4)
    fast_done, fast_sojourn = FastEngine(model.nodes).run(path)
    simpy_done, simpy_sojourn = SimPyEngine(model.nodes).run(path)
    np.testing.assert_allclose(fast_done, simpy_done, rtol=1e-12)
    np.testing.assert_allclose(fast_sojourn, simpy_sojourn, rtol=1e-12)
