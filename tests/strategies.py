"""Shared hypothesis strategies: valid queue parameters, loads and distributions."""

from hypothesis import strategies as st


def per_node_loads(low=1e-3, high=0.99):
    """Stable per-node loads ``q = r*rho/n`` in ``[low, high]``."""
    return st.floats(low, high, allow_nan=False, allow_infinity=False)


@st.composite
def replicas_and_quorum(draw, max_replicas=9):
    """``(r, k)`` with ``1 <= k <= r <= max_replicas``."""
    r = draw(st.integers(1, max_replicas))
    return r, draw(st.integers(1, r))


@st.composite
def stable_queues(draw, max_nodes=12, loads=per_node_loads()):
    """``(n, r, k, rho)`` with ``1 <= k <= r <= n <= max_nodes`` and ``r*rho/n < 1``."""
    n = draw(st.integers(1, max_nodes))
    r, k = draw(replicas_and_quorum(max_replicas=n))
    return n, r, k, draw(loads) * n / r


@st.composite
def latency_samples(draw, max_size=60):
    """Measured latencies as a 1-D float array: finite, >= 0, at least one > 0.

    Mixes ties and exact zeros (quantised timers) with values spread over six
    orders of magnitude.
    """
    import numpy as np
    from hypothesis.extra.numpy import arrays

    values = st.one_of(st.just(0.0), st.sampled_from([1.0, 2.5, 10.0]),
                       st.floats(1e-3, 1e3, allow_nan=False, allow_infinity=False))
    data = draw(arrays(np.float64, st.integers(1, max_size), elements=values))
    if not np.any(data > 0):
        data[draw(st.integers(0, data.size - 1))] = draw(st.floats(1e-3, 1e3))
    return data


def service_distributions():
    """Service-time models of different shapes: light and heavy tails, bounded,
    and an empirical one (resampled from fixed Weibull draws)."""
    from scipy import stats

    from forkjoin_sim.laws.empirical import Empirical

    return st.sampled_from([
        stats.expon(), stats.lognorm(1.0), stats.uniform(0.5, 1.0), stats.gamma(0.5),
        Empirical.from_samples(stats.weibull_min(0.7).rvs(500, random_state=1))])


@st.composite
def fork_join_models(draw, max_nodes=7):
    """A stable ``ForkJoinModel``: any (n, r, k), service shape and placement."""
    from forkjoin_sim.model import ForkJoinModel

    n, r, k, rho = draw(stable_queues(max_nodes=max_nodes, loads=per_node_loads(0.05, 0.95)))
    return ForkJoinModel(n, r, k, load=rho, service=draw(service_distributions()),
                         placement=draw(st.sampled_from(["random", "ring"])))


@st.composite
def closed_loop_models(draw, max_nodes=6):
    """A closed-loop ``ForkJoinModel``: any (n, r, k), clients, think time (0 too),
    service shape, placement and node speeds."""
    from forkjoin_sim.model import ForkJoinModel

    n = draw(st.integers(1, max_nodes))
    r, k = draw(replicas_and_quorum(max_replicas=n))
    speeds = draw(st.one_of(st.none(), st.lists(st.sampled_from([0.5, 1.0, 2.0]),
                                                min_size=n, max_size=n)))
    return ForkJoinModel(n, r, k, service=draw(service_distributions()),
                         placement=draw(st.sampled_from(["random", "ring"])),
                         clients=draw(st.integers(1, 30)),
                         think=draw(st.sampled_from([0.0, 0.5, 3.0])), speeds=speeds)


@st.composite
def latency_mixtures(draw, max_components=3):
    """A ``Mixture`` of 1..max_components laws from ``service_distributions`` (point
    masses too), with random weights normalised to sum to 1."""
    from forkjoin_sim.laws.mixture import Mixture
    from forkjoin_sim.laws.service import Deterministic

    laws = st.one_of(service_distributions(),
                     st.floats(0.1, 5.0).map(Deterministic))
    count = draw(st.integers(1, max_components))
    components = [draw(laws) for _ in range(count)]
    raw = [draw(st.floats(0.05, 1.0)) for _ in range(count)]
    return Mixture(components, [x / sum(raw) for x in raw])
