"""The compiled steps engine against the SimPy reference, job by job, on random graphs.

Both engines get the same stations, durations and arrivals; every job's finish time
and every step's end (NaN when cancelled) must be identical, also when many events are
simultaneous (whole-number times), where both follow the (time, job, step) rule.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forkjoin_sim.errors import ConfigError
from forkjoin_sim.steps import Closed, Layout, Op, Open, Template, run_reference, simulate
from forkjoin_sim.steps.builders import one_step_path
from forkjoin_sim.steps.engine import run_arrays
from forkjoin_sim.steps.graph import compile_templates, stations_of


@st.composite
def templates(draw, parties):
    """A random job graph: tasks at random parties, delays or ordered hops between two
    parties, random predecessors (each step but the last feeds a later one), random
    quorums, purging or not."""
    size = draw(st.integers(1, 8))
    afters = []
    for i in range(size):
        afters.append(sorted(draw(st.sets(st.integers(0, i - 1), max_size=3)))
                      if i else [])
    used = {a for after in afters for a in after}
    afters[-1] = sorted(set(afters[-1]) | {i for i in range(size - 1) if i not in used})
    ops = []
    for i, after in enumerate(afters):
        need = draw(st.integers(1, len(after))) if after else None
        purging = need is not None and need < len(after) and draw(st.booleans())
        party = draw(st.one_of(st.none(), st.integers(0, parties - 1)))
        link = None
        if party is None and draw(st.booleans()):
            link = (draw(st.integers(0, parties - 1)), draw(st.integers(0, parties - 1)))
        ops.append(Op(f"kind{i % 3}", tuple(after), party=party,
                      stage="s" if party is not None else "", need=need,
                      purging=purging, link=link))
    return Template(tuple(ops), parties=parties)


@st.composite
def systems(draw):
    """Stations, job classes, per-job parties and durations, and an arrival process."""
    stations = draw(st.integers(1, 4))
    servers = draw(st.lists(st.integers(1, 3), min_size=stations, max_size=stations))
    layout = Layout(tuple(f"s{i}" for i in range(stations)), tuple(servers), ("s",),
                    [[i] for i in range(stations)])
    parties = draw(st.integers(1, 3))
    classes = draw(st.lists(templates(parties), min_size=1, max_size=2))
    jobs = draw(st.integers(1, 40))
    rng = np.random.default_rng(draw(st.integers(0, 2**32)))
    which = rng.integers(0, len(classes), jobs)
    compiled = compile_templates(classes)
    station = np.full((jobs, compiled.width), -1, np.int32)
    nodes = rng.integers(0, stations, (jobs, parties))
    for c, t in enumerate(classes):
        station[which == c, :len(t.ops)] = stations_of(t, layout, nodes[which == c])
    durations, arrivals = timing(draw, rng, station.shape)
    return compiled, which, station, durations, np.array(servers), arrivals, layout.channels


def timing(draw, rng, shape):
    """Durations of shape (jobs, steps) and open or closed arrivals: whole numbers
    (zeros included) make simultaneous events, where the engines must follow the same
    tie rule; continuous times make long busy periods."""
    jobs = shape[0]
    ties = draw(st.booleans())
    scale = draw(st.sampled_from([0.3, 1.0, 3.0]))
    durations = (rng.integers(0, 3, shape).astype(float) if ties
                 else rng.exponential(scale, shape))
    if draw(st.booleans()):
        times = rng.uniform(0, jobs * draw(st.sampled_from([0.2, 1.0])), jobs)
        arrivals = Open(np.floor(times) if ties else times)
    else:
        think = rng.exponential(0.5, jobs)
        arrivals = Closed(draw(st.integers(1, 5)), np.floor(2 * think) if ties else think)
    return durations, arrivals


@settings(max_examples=300)
@given(systems())
def test_engine_equals_simpy_reference_per_job_and_step(system):
    *system, channels = system
    fast = run_arrays(*system, record_steps=True, channels=channels)
    ref = run_reference(*system, record_steps=True, channels=channels)
    np.testing.assert_array_equal(fast.start, ref.start)
    np.testing.assert_array_equal(fast.finish, ref.finish)
    np.testing.assert_array_equal(fast.steps, ref.steps)
    if ref.client is not None:
        np.testing.assert_array_equal(fast.client, ref.client)
    assert np.all(fast.finish >= fast.start)


def single_station(servers):
    return Layout(("s",), (servers,), ("s",), [[0]])


def test_fifo_single_server_is_lindley_recursion():
    rng = np.random.default_rng(3)
    jobs = 500
    arrivals = np.cumsum(rng.exponential(1.0, jobs))
    service = rng.exponential(0.8, (jobs, 1))
    out = simulate(Template((Op("x", party=0, stage="s"),), parties=1),
                   single_station(1), np.zeros((jobs, 1), int), service, Open(arrivals))
    expected = np.empty(jobs)
    free = 0.0
    for j in range(jobs):
        free = max(free, arrivals[j]) + service[j, 0]
        expected[j] = free
    np.testing.assert_allclose(out.finish, expected, rtol=1e-12)


def test_purging_join_frees_the_server_at_the_join_time():
    # job 0 forks to stations 0 and 1 and purges at the first answer; job 1 waits at 1
    template = Template((Op("a", party=0, stage="s"), Op("b", party=1, stage="s"),
                         Op("j", (0, 1), need=1, purging=True)), parties=2)
    layout = Layout(("s0", "s1"), (1, 1), ("s",), [[0], [1]])
    parties = np.array([[0, 1], [0, 1]])
    durations = np.array([[1.0, 10.0, 0.0], [5.0, 2.0, 0.0]])
    out = simulate(template, layout, parties, durations, Open(np.array([0.0, 0.5])),
                   record_steps=True)
    # job 0 answers at 1 and frees s1 then; job 1's second task runs 1..3, first 1..6
    assert out.finish[0] == 1.0 and np.isnan(out.steps[0, 1])
    assert out.steps[1, 1] == 3.0 and out.finish[1] == 3.0
    non_purging = simulate(Template(template.ops[:2] + (Op("j", (0, 1), need=1),),
                                    parties=2), layout, parties, durations,
                           Open(np.array([0.0, 0.5])), record_steps=True)
    assert non_purging.steps[0, 1] == 10.0 and non_purging.steps[1, 1] == 12.0


def test_closed_loop_issues_in_order_of_decision():
    template = Template((Op("x", party=0, stage="s"),), parties=1)
    durations = np.array([[3.0], [1.0], [1.0], [1.0]])
    think = np.array([0.0, 0.5, 0.25, 0.0])
    out = simulate(template, single_station(2), np.zeros((4, 1), int), durations,
                   Closed(2, think))
    # client 1 finishes job 1 at 1.5 (before job 0 at 3), so it takes job 2, issued
    # at 1.75 after job 2's think time; job 2 ends at 2.75, still before job 0
    np.testing.assert_array_equal(out.client, [0, 1, 1, 1])
    np.testing.assert_array_equal(out.start, [0.0, 0.5, 1.75, 2.75])


@pytest.mark.parametrize("bad, message", [
    (dict(durations=-np.ones((2, 1))), "finite and >= 0"),
    (dict(durations=np.ones((2, 3))), "shape"),
    (dict(parties=np.full((2, 1), 5)), "nodes 0..0"),
    (dict(arrivals=Closed(0, np.zeros(2))), "clients=0"),
])
def test_bad_runs_say_how_to_fix_them(bad, message):
    run = dict(parties=np.zeros((2, 1), int), durations=np.ones((2, 1)),
               arrivals=Open(np.zeros(2)))
    run.update(bad)
    with pytest.raises(ConfigError, match=message):
        simulate(Template((Op("x", party=0, stage="s"),), parties=1), single_station(1),
                 **run)


def test_simultaneous_events_go_in_job_order():
    # both jobs leave station A at time 2 for the one server of B: job 0 goes first,
    # whichever of the two steps was scheduled first (in `swapped`, job 1's)
    template = Template((Op("a", party=0, stage="s"), Op("b", (0,), party=1, stage="s")),
                        parties=2)
    layout = Layout(("A", "B"), (2, 1), ("s",), [[0], [1]])
    durations = np.array([[2.0, 1.0], [1.0, 1.0]])
    args = (template, layout, np.array([[0, 1], [0, 1]]), durations)
    out = simulate(*args, Open(np.array([0.0, 1.0])))
    np.testing.assert_array_equal(out.finish, [3.0, 4.0])
    swapped = simulate(template, layout, np.array([[0, 1], [0, 1]]), durations[::-1],
                       Open(np.array([1.0, 0.0])))
    np.testing.assert_array_equal(swapped.finish, [3.0, 4.0])


def test_resolved_arrays_are_checked_before_the_kernel_reads_them():
    template = Template((Op("x", party=0, stage="s"),), parties=1)
    compiled = compile_templates([template])
    good = dict(compiled=compiled, classes=np.zeros(2, int), station=np.zeros((2, 1), int),
                durations=np.ones((2, 1)), servers=np.array([1]),
                arrivals=Open(np.zeros(2)))
    for bad, message in [(dict(station=np.full((2, 1), 1)), "use -1 \\(a delay\\), 0..0"),
                         (dict(classes=np.ones(2, int)), "indices into the 1"),
                         (dict(station=np.zeros((2, 2), int)), "shape \\(jobs, 1\\)"),
                         (dict(servers=np.array([0])), "servers >= 1")]:
        with pytest.raises(ConfigError, match=message):
            run_arrays(**{**good, **bad})
    assert run_arrays(**good).finish.tolist() == [1.0, 2.0]


def test_more_clients_than_the_first_heap_holds():
    template = Template((Op("x", party=0, stage="s"), Op("hop", (0,))), parties=1)
    jobs = 5000
    rng = np.random.default_rng(8)
    durations = rng.exponential(1.0, (jobs, 2))
    arrivals = Closed(3000, rng.exponential(1.0, jobs))
    args = (compile_templates([template]), np.zeros(jobs, int), np.tile([0, -1], (jobs, 1)),
            durations, np.array([3]), arrivals)
    np.testing.assert_array_equal(run_arrays(*args).finish, run_reference(*args).finish)


def test_many_delays_in_flight_grow_the_heap():
    # 20,000 hops under way at once (more than the first heap holds), then one server
    template = Template((Op("hop"), Op("x", (0,), party=0, stage="s")), parties=1)
    jobs = 20_000
    rng = np.random.default_rng(2)
    durations = np.column_stack([rng.uniform(100, 200, jobs), rng.exponential(1e-3, jobs)])
    arrivals = rng.uniform(0, 1, jobs)
    out = simulate(template, single_station(1), np.zeros((jobs, 1), int), durations,
                   Open(arrivals), record_steps=True)
    np.testing.assert_array_equal(out.steps[:, 0], arrivals + durations[:, 0])
    # the server then works FIFO in order of the hops' ends (Lindley)
    order = np.argsort(out.steps[:, 0], kind="stable")
    free, expected = 0.0, np.empty(jobs)
    for j in order:
        free = max(free, out.steps[j, 0]) + durations[j, 1]
        expected[j] = free
    np.testing.assert_array_equal(out.finish, expected)


def hop_template():
    """One message from party 0 to party 1 on their ordered connection."""
    return Template((Op("hop", link=(0, 1)),), parties=2)


def test_an_ordered_hop_never_overtakes_the_one_sent_before_it():
    layout = Layout(("a", "b"), (1, 1), ("s",), [[0], [1]])
    sent = np.array([0.0, 1.0, 2.0, 3.0])
    delay = np.array([[5.0], [1.0], [4.0], [0.5]])
    # jobs 0, 1, 3 go from node 0 to node 1; job 2 the other way (its own connection)
    parties = np.array([[0, 1], [0, 1], [1, 0], [0, 1]])
    out = simulate(hop_template(), layout, parties, delay, Open(sent))
    np.testing.assert_array_equal(out.finish, [5.0, 5.0, 6.0, 5.0])
    plain = simulate(Template((Op("hop"),), parties=2), layout, parties, delay, Open(sent))
    np.testing.assert_array_equal(plain.finish, [5.0, 2.0, 6.0, 3.5])


def test_ordered_hops_keep_each_connection_in_order_on_long_runs():
    rng = np.random.default_rng(5)
    jobs, nodes = 3000, 3
    layout = Layout(("x",), (1,), ("s",), [[0]] * nodes)
    parties = rng.integers(0, nodes, (jobs, 2))
    sent = np.cumsum(rng.exponential(0.1, jobs))
    delay = rng.exponential(1.0, (jobs, 1))
    out = simulate(hop_template(), layout, parties, delay, Open(sent))
    assert np.all(out.finish >= sent + delay[:, 0])
    connection = parties[:, 0] * nodes + parties[:, 1]
    for c in np.unique(connection):
        mine = connection == c
        assert np.all(np.diff(out.finish[mine]) >= 0)   # sent in job order
    assert np.any(out.finish > sent + delay[:, 0])      # some waited for an earlier one


def test_a_link_needs_a_delay_and_known_parties():
    with pytest.raises(ConfigError, match="only a delay"):
        Template((Op("hop", party=0, stage="s", link=(0, 1)),), parties=2)
    with pytest.raises(ConfigError, match="from_party, to_party"):
        Template((Op("hop", link=(0, 2)),), parties=2)
    compiled = compile_templates([hop_template()])
    with pytest.raises(ConfigError, match="ordered hop on channel c < 0"):
        run_arrays(compiled, np.zeros(1, int), np.full((1, 1), -2), np.ones((1, 1)),
                   np.array([1]), Open(np.zeros(1)))


@st.composite
def one_step_systems(draw):
    """One-step models (tasks at single-server stations, a zero join at the k-th; one
    or two classes, tasks of a job possibly at the same station) with `timing`'s
    durations and arrivals."""
    stations = draw(st.integers(1, 5))
    layout = Layout(tuple(f"s{i}" for i in range(stations)), (1,) * stations, ("s",),
                    [[i] for i in range(stations)])
    classes = []
    for _ in range(draw(st.integers(1, 2))):
        tasks = draw(st.integers(1, 4))
        ops = [Op("service", party=i, stage="s") for i in range(tasks)]
        ops.append(Op("join", tuple(range(tasks)), need=draw(st.integers(1, tasks))))
        classes.append(Template(tuple(ops), parties=tasks))
    jobs = draw(st.integers(1, 60))
    rng = np.random.default_rng(draw(st.integers(0, 2**32)))
    which = rng.integers(0, len(classes), jobs)
    width = max(len(t.ops) for t in classes)
    parties = rng.integers(0, stations, (jobs, width))
    durations, arrivals = timing(draw, rng, (jobs, width))
    for c, t in enumerate(classes):
        durations[which == c, len(t.ops) - 1:] = 0.0      # the joins take no time
    return classes, layout, parties, durations, arrivals, which


@settings(max_examples=300)
@given(one_step_systems(), st.booleans())
def test_one_step_models_take_the_fast_path_with_the_same_outcome(system, record):
    classes, layout, parties, durations, arrivals, which = system
    assert one_step_path(classes, layout, parties, durations, which) is not None
    fast = simulate(classes, layout, parties, durations, arrivals, classes=which,
                    record_steps=record)
    events = simulate(classes, layout, parties, durations, arrivals, classes=which,
                      record_steps=record, accelerate=False)
    np.testing.assert_array_equal(fast.start, events.start)
    np.testing.assert_array_equal(fast.finish, events.finish)
    np.testing.assert_array_equal(fast.client, events.client)
    np.testing.assert_array_equal(fast.steps, events.steps)


def test_one_step_models_skip_the_event_engine_and_others_do_not(monkeypatch):
    from forkjoin_sim.steps import engine
    from forkjoin_sim.steps.builders import fork_join

    def refuse(*args):
        raise AssertionError("the event engine ran")

    monkeypatch.setattr(engine, "_run", refuse)
    template, layout = fork_join(5, 3, 2)
    rng = np.random.default_rng(5)
    parties = np.argsort(rng.random((100, 5)), axis=1)[:, :3]
    durations = np.column_stack([rng.exponential(1.0, (100, 3)), np.zeros(100)])
    arrivals = Open(np.cumsum(rng.exponential(1.0, 100)))
    simulate(template, layout, parties, durations, arrivals)
    simulate(template, layout, parties, durations, Closed(4, np.ones(100)))
    # a join that takes time, or two servers, needs the event engine
    late = durations + np.array([0, 0, 0, 0.1])
    with pytest.raises(AssertionError, match="event engine ran"):
        simulate(template, layout, parties, late, arrivals)
    wide = Layout(layout.names, (2,) * 5, layout.stages, layout.table)
    with pytest.raises(AssertionError, match="event engine ran"):
        simulate(template, wide, parties, durations, arrivals)


def test_simultaneous_answers_in_a_closed_loop_go_to_the_event_engine():
    # jobs 0 and 1 end at 1 on two stations: which client takes job 2 depends on the
    # order of events within that instant, which only the event engine sees
    from forkjoin_sim.engines.fast import serve_closed_loop
    from forkjoin_sim.steps.builders import fork_join

    template, layout = fork_join(2, 1, 1)
    parties = np.array([[0], [1], [1], [0]])
    durations = np.array([[1.0, 0.0], [1.0, 0.0], [0.5, 0.0], [0.25, 0.0]])
    think = np.zeros(4)
    assert serve_closed_loop(2, think, parties, durations[:, :1], np.ones(4, np.int32),
                             2) is None
    out = simulate(template, layout, parties, durations, Closed(2, think))
    ref = simulate(template, layout, parties, durations, Closed(2, think),
                   accelerate=False)
    np.testing.assert_array_equal(out.client, ref.client)
    np.testing.assert_array_equal(out.finish, ref.finish)
    # distinct answer times: the fast engine's numbering is the event engine's
    durations[1, 0] = 1.5
    fast = serve_closed_loop(2, think, parties, durations[:, :1], np.ones(4, np.int32), 2)
    ref = simulate(template, layout, parties, durations, Closed(2, think),
                   accelerate=False)
    np.testing.assert_array_equal(fast[1], ref.finish)
    np.testing.assert_array_equal(fast[2], ref.client)
