"""Job templates and layouts: validation, successors, what a purging join cancels."""

import numpy as np
import pytest

from forkjoin_sim.errors import ConfigError
from forkjoin_sim.steps import Layout, Op, Template, compile_templates, stations_of


def test_cancelled_by_is_what_the_join_post_dominates():
    # 0 -> {1, 2 -> 3}; 4 joins 1 and 3 at the first; 2 also feeds 5, so it is kept
    ops = (Op("a"), Op("b", (0,)), Op("c", (0,)), Op("d", (2,)),
           Op("j", (1, 3), need=1, purging=True), Op("e", (2, 4)))
    template = Template(ops, parties=1)
    assert template.cancelled_by(4) == [1, 3]
    compiled = compile_templates([template])
    lo, hi = compiled.purge_ptr[0, 4], compiled.purge_ptr[0, 5]
    assert list(compiled.purge[0, lo:hi]) == [1, 3]


def test_a_fork_join_chain_cancels_whole_branches_but_not_the_fork():
    # 0 -> 1 -> 2 -> 3 forks to 4 -> 5 and 6 -> 7, joined at the first by 8
    ops = (Op("a"), Op("b", (0,)), Op("c", (1,)), Op("fork", (2,)), Op("x", (3,)),
           Op("y", (4,)), Op("x", (3,)), Op("y", (6,)),
           Op("join", (5, 7), need=1, purging=True))
    assert Template(ops, parties=1).cancelled_by(8) == [4, 5, 6, 7]


def test_compiled_arrays_pad_shorter_classes():
    short = Template((Op("a", party=0, stage="s"),), parties=1)
    long = Template((Op("a", party=0, stage="s"), Op("b", (0,))), parties=1)
    compiled = compile_templates([short, long])
    assert compiled.width == 2
    np.testing.assert_array_equal(compiled.steps, [1, 2])
    np.testing.assert_array_equal(compiled.need, [[0, 0], [0, 1]])
    assert list(compiled.succ[1, compiled.succ_ptr[1, 0]:compiled.succ_ptr[1, 1]]) == [1]


@pytest.mark.parametrize("ops, message", [
    ((), "no steps"),
    ((Op("a", (1,)), Op("b")), "topological order"),
    ((Op("a"), Op("b", (0, 0))), "predecessor twice"),
    ((Op("a"), Op("b"), Op("c", (0, 1), need=3)), "1 <= need <= 2"),
    ((Op("a", need=1),), "a first step needs 0"),
    ((Op("a"), Op("b"), Op("c", (0, 1), purging=True)), "purging needs need"),
    ((Op("a", party=2, stage="s"),), "party 0..0"),
    ((Op("a", party=0),), "no stage"),
    ((Op(""),), "empty kind"),
    ((Op("a"), Op("b"), Op("c", (1,))), "steps \\[0\\] lead nowhere"),
    (tuple(Op("a") for _ in range(4096)) + (Op("j", tuple(range(4096)), need=1),),
     "intermediate steps"),
])
def test_bad_templates_say_how_to_fix_them(ops, message):
    with pytest.raises(ConfigError, match=message):
        Template(ops, parties=1)


@pytest.mark.parametrize("kwargs, message", [
    (dict(servers=(0,)), "servers=0"),
    (dict(servers=(1, 2)), "one count per station"),
    (dict(table=[[3]]), "use -1"),
    (dict(table=[[0, 0]]), "one per stage"),
])
def test_bad_layouts_say_how_to_fix_them(kwargs, message):
    layout = dict(names=("s",), servers=(1,), stages=("cores",), table=[[0]])
    layout.update(kwargs)
    with pytest.raises(ConfigError, match=message):
        Layout(**layout)


def test_stations_of_maps_parties_and_stages():
    layout = Layout(("n0.cpu", "n1.cpu", "n1.disk"), (4, 4, 1), ("cpu", "disk"),
                    [[0, -1], [1, 2]])
    template = Template((Op("w", party=0, stage="cpu"), Op("hop", (0,)),
                         Op("io", (1,), party=1, stage="disk")), parties=2)
    np.testing.assert_array_equal(stations_of(template, layout, [[0, 1], [1, 1]]),
                                  [[0, -1, 2], [1, -1, 2]])
    with pytest.raises(ConfigError, match="no such station"):
        stations_of(template, layout, [[0, 0]])
    with pytest.raises(ConfigError, match="needs \\(jobs, 2\\)"):
        stations_of(template, layout, [[0]])
    with pytest.raises(ConfigError, match="unknown|not in the layout"):
        stations_of(Template((Op("w", party=0, stage="gpu"),), parties=1), layout, [[0]])
