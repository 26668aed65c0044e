"""Consistency and capacity planners against shared-node simulation; the CLI commands."""

import csv
import math
import re

import pytest

from forkjoin_cli.main import main
from forkjoin_sim.errors import ConfigError
import sizing.planning
import sizing.tails
from sizing.planning import (
    capacity_runs, consistency_jobs, consistency_load, consistency_pairs,
    fastest_unloaded, fewest_stable_nodes, plan_capacity, plan_consistency,
    simulate_capacity, simulate_consistency, unloaded_percentile, validation_jobs)


@pytest.mark.parametrize("r", [1, 2, 3, 5])
def test_consistency_pairs_are_exactly_the_overlapping_quorums(r):
    pairs = consistency_pairs(r)
    assert all(R + W > r and 1 <= R <= r and 1 <= W <= r for R, W in pairs)
    assert len(pairs) == r * (r + 1) // 2 == len(set(pairs))


def test_consistency_plan_matches_a_shared_node_simulation():
    plan = plan_consistency(5, 3, 0.8, 1.0, basic="independent")
    assert len(plan.options) == 6
    simulated = {}
    for o in plan.options:
        sim = simulate_consistency(5, 3, 0.8, 1.0, o.read_quorum, o.write_quorum,
                                   jobs=60_000, seed=o.read_quorum * 10 + o.write_quorum)
        simulated[o.read_quorum, o.write_quorum] = sim
        assert sim["node_load"] == pytest.approx(o.node_load, rel=0.05)
        for name, tolerance in (("mix_mean", 0.10), ("mix_q", 0.15)):
            measured = sim[name]
            half = (sim[f"{name}_high"] - sim[f"{name}_low"]) / 2
            predicted = getattr(o, name)
            assert abs(predicted - measured) <= tolerance * measured + half, (o, sim)
    best = min(simulated, key=lambda key: simulated[key]["mix_q"])
    assert (plan.best.read_quorum, plan.best.write_quorum) == best == (1, 3)


def test_consistency_plan_from_simulated_basic_queues_runs_with_two_services():
    from scipy import stats
    plan = plan_consistency(5, 3, 0.5, 0.5, read_service=stats.expon(scale=0.5),
                            write_service=stats.expon(scale=1.5), jobs=20_000, seed=1)
    by_pair = {(o.read_quorum, o.write_quorum): o for o in plan.options}
    # Same R: same read prediction; a larger W waits for more replicas.
    assert by_pair[2, 2].read_mean == by_pair[2, 3].read_mean
    assert by_pair[2, 3].write_mean > by_pair[2, 2].write_mean
    assert "<- best" in plan.report()


def test_an_operation_the_mix_never_issues_has_no_numbers_of_its_own():
    """Simulated basic queues of writes only: the read columns are empty (NaN), not
    the writes' numbers again (a probe saw read means equal to write means)."""
    plan = plan_consistency(6, 3, 0.0, 1.0, jobs=5_000, seed=1)
    for option in plan.options:
        assert math.isnan(option.read_mean) and math.isnan(option.read_q)
        assert option.write_mean > 0 and option.mix_mean == option.write_mean
    plan = plan_consistency(6, 3, 1.0, 1.0, jobs=5_000, seed=1)
    for option in plan.options:
        assert math.isnan(option.write_mean) and option.mix_mean == option.read_mean


def test_consistency_planner_rejects_an_overloaded_cluster():
    with pytest.raises(ConfigError, match="lower the arrival rate below"):
        plan_consistency(5, 3, 0.8, 10.0, basic="independent")
    # a rate past any finite load: not "lower the arrival rate below 0"
    with pytest.raises(ConfigError, match="loads every node past any finite load"):
        plan_consistency(6, 3, 0.5, 1e308, basic="independent")
    with pytest.raises(ConfigError, match="exponential"):
        from scipy import stats
        plan_consistency(5, 3, 0.8, 1.0, read_service=stats.gamma(2), basic="independent")


def test_capacity_plan_is_the_smallest_cluster_simulation_accepts():
    # p99 <= 8 at 2 writes per unit time, QUORUM with at least 3 replicas.
    plan = plan_capacity(2.0, 8.0, levels=("QUORUM",), min_replicas=3, max_replicas=3,
                         max_nodes=14, basic="independent")
    best = plan.best
    assert (best.nodes, best.replicas, best.quorum) == (10, 3, 2)
    chosen = simulate_capacity(best, 2.0, jobs=80_000, seed=1)
    assert chosen.high <= 8.0
    smaller = next(c for c in plan.candidates if c.nodes == best.nodes - 1)
    assert not smaller.meets
    assert simulate_capacity(smaller, 2.0, jobs=80_000, seed=2).low > 8.0


def test_capacity_objective_prefers_fewer_nodes_then_more_replicas_then_stronger():
    loose = dict(write_rate=0.05, target=1000.0, basic="independent", max_replicas=3)
    plan = plan_capacity(**loose, levels=("ONE", "ALL"))
    assert (plan.best.nodes, plan.best.replicas) == (1, 1)
    plan = plan_capacity(**loose, levels=("ONE", "ALL"), min_nodes=4)
    assert (plan.best.nodes, plan.best.replicas, plan.best.level) == (4, 3, "ALL")
    assert plan_capacity(write_rate=0.9, target=0.01, basic="independent",
                         max_nodes=3).best is None


def test_a_level_given_as_its_number_of_acknowledgements_plans_as_its_name():
    search = dict(write_rate=1.0, target=8.0, basic="independent", max_nodes=8)
    by_name = plan_capacity(**search, levels=("TWO",))
    for level in (2, "2"):
        plan = plan_capacity(**search, levels=(level,))
        assert [(c.nodes, c.replicas, c.quorum, c.predicted) for c in plan.candidates] \
            == [(c.nodes, c.replicas, c.quorum, c.predicted) for c in by_name.candidates]
        assert {c.level for c in plan.candidates} == {"2"}
        assert "k=2" in plan.report() and "TWO" not in plan.report()


def test_a_level_given_twice_is_planned_once_as_first_given():
    search = dict(write_rate=1.0, target=8.0, basic="independent", max_nodes=8)
    once = plan_capacity(**search, levels=("TWO", "ALL"))
    twice = plan_capacity(**search, levels=("TWO", 2, "ALL", "2", "all", "two"))
    assert twice.candidates == once.candidates and twice.best == once.best


def test_a_level_named_some_candidates_cannot_use_is_skipped_only_there():
    plan = plan_capacity(1.0, 0.5, levels=("THREE", "ALL"), max_nodes=4,
                         basic="independent")
    assert plan.best is None
    assert {c.replicas for c in plan.candidates if c.level == "THREE"} == {3, 4}
    assert {c.replicas for c in plan.candidates if c.level == "ALL"} == {1, 2, 3, 4}


def test_a_search_whose_every_candidate_is_overloaded_is_refused_before_any_work():
    """THREE runs on 3 replicas or more, and 3 copies of 10 writes load each of up
    to 20 nodes to 1.5 or more: every candidate would be overloaded (the 1 or 2
    replicas that carry the load run no level given). The check counted the
    minimum replicas, 1, and let the search run; why() then blamed --jobs."""
    assert 3 * 10 / 31 < 1 <= 3 * 10 / 30  # 31 nodes are the fewest for THREE
    with pytest.raises(ConfigError, match=r"with 3 replica\(s\), the fewest any level "
                       r"given runs on\); raise max_nodes to at least 31$"):
        plan_capacity(10.0, 5.0, levels=("THREE",), max_nodes=20, basic="independent")
    # the advice holds: on 31 nodes THREE is stable and has a percentile
    more = plan_capacity(10.0, 5.0, levels=("THREE",), min_nodes=31, max_nodes=31,
                         basic="independent")
    assert any(c.node_load < 1 and math.isfinite(c.predicted) for c in more.candidates)


def test_the_unloaded_percentile_is_the_quorum_th_shortest_service():
    """Closed forms for exponential service of mean 1: the shortest of r has p99
    ln(100) / r, the longest of 2 has p99 -ln(1 - sqrt(0.99)); a deterministic
    service of 1 takes 1 whatever the quorum."""
    from scipy import stats

    exp = stats.expon()
    for r in (1, 3, 10):
        assert unloaded_percentile(r, 1, 99, exp) == pytest.approx(math.log(100) / r)
    assert unloaded_percentile(2, 2, 99, exp) == pytest.approx(
        -math.log(1 - math.sqrt(0.99)))
    fastest = fastest_unloaded(("ONE", "ALL"), 99, exp)
    assert fastest.shape == (sizing.planning.MAX_NODES,)
    assert fastest[9] == pytest.approx(math.log(100) / 10)
    assert fastest_unloaded(("THREE",), 99, exp)[1] == math.inf  # THREE on 2 replicas
    from forkjoin_sim.laws.service import parse_service
    assert unloaded_percentile(5, 3, 99, parse_service("deterministic")) == 1


def test_the_announced_worst_case_is_the_number_of_runs_of_a_full_search(monkeypatch,
                                                                         capsys):
    calls = []
    real = sizing.planning.model_distribution

    def counted(n, r, k, work, service, basic, **kwargs):
        calls.append((n, r, k))
        return real(n, r, k, work, service, "independent", **kwargs)

    monkeypatch.setattr(sizing.planning, "model_distribution", counted)
    # a target nobody meets: the search runs to the end of the space
    search = dict(levels=("ONE", "TWO", "QUORUM", "ALL"), min_replicas=1,
                  max_replicas=4, min_nodes=2, max_nodes=9)
    plan = plan_capacity(1.5, 1e-9, jobs=1000, progress=True, basic="simulation",
                         **search)
    assert plan.best is None
    worst = capacity_runs(1.5, search["levels"], 1, 4, 2, 9)
    assert len(calls) == len(set(calls)) == worst
    assert f"at most {worst:,} basic-queue simulations of 1,000 jobs" in (
        capsys.readouterr().err)
    # overloaded (n, r) pairs are not simulated: at 1.5 writes per unit time and
    # E[X] = 1, r = 4 needs n > 6
    assert all(r * 1.5 / n < 1 for n, r, _ in calls)
    assert (7, 4, 3) in calls and (6, 4, 3) not in calls


def test_capacity_planner_bad_input(capsys):
    with pytest.raises(ConfigError, match="too small to simulate"):
        plan_capacity(1e-300, 5.0, progress=True)
    assert capsys.readouterr().err == ""  # refused before the plan line
    with pytest.raises(ConfigError, match="'SOMETIMES' is unknown; use one of .* or a "
                                          "whole number k"):
        plan_capacity(1.0, 5.0, levels=("SOMETIMES",))
    # a level, number or name, must fit the most replicas searched
    with pytest.raises(ConfigError, match=r"levels=6: a level of k acknowledgements "
                                          r"needs k replicas, and the search has at "
                                          r"most 5 \(max_replicas=5\); give levels from "
                                          "1 to 5, or raise max_replicas to at least 6"):
        plan_capacity(1.0, 5.0, levels=("ONE", 6))
    with pytest.raises(ConfigError, match=r"levels=THREE: THREE needs 3 replicas, and "
                                          r"the search has at most 2 \(max_replicas=2\)"):
        plan_capacity(1.0, 5.0, levels=("ONE", "THREE"), max_replicas=2)
    with pytest.raises(ConfigError, match=r"TWO needs 2 replicas, .* at most 1 "
                                          r"\(max_nodes=1\); .* raise max_nodes"):
        plan_capacity(1.0, 5.0, levels=("ONE", "TWO"), max_nodes=1)
    with pytest.raises(ConfigError, match="min_nodes=5 exceeds max_nodes=4"):
        plan_capacity(1.0, 5.0, min_nodes=5, max_nodes=4)
    with pytest.raises(ConfigError, match="min_replicas=3 exceeds max_nodes=2"):
        plan_capacity(1.0, 5.0, min_replicas=3, max_nodes=2)
    with pytest.raises(ConfigError, match="THREE needs 3 replicas"):
        plan_capacity(1.0, 5.0, levels=("THREE",), max_replicas=2)
    with pytest.raises(ConfigError, match="raise max_nodes to at least 101"):
        plan_capacity(100.0, 5.0)
    # past the largest search there is no such advice to give
    with pytest.raises(ConfigError, match="1,000,001 nodes, beyond the limit 1,000: "
                                          "lower write_rate"):
        plan_capacity(1e6, 5.0)


#: The CLI's names for the search's parameters, as plan-capacity passes them.
FLAGS = {"write_rate": "--write-rate", "levels": "--levels",
         "min_replicas": "--min-replicas", "max_replicas": "--max-replicas",
         "min_nodes": "--min-nodes", "max_nodes": "--max-nodes",
         "service": "--mu or --service"}


def _as_flags(message: str) -> str:
    """A message in plan_capacity's argument names ("max_nodes=4") in the CLI's
    ("--max-nodes 4"); "levels" and "service" alone are words, not the argument,
    unless in parentheses ("the mean service time (service)")."""
    for name, flag in FLAGS.items():
        bare = "" if "_" in name else r"(?=\))"
        message = re.sub(rf"\b{name}(=|\b{bare})", lambda m: flag + (" " if m[1] else ""),
                         message)
    return message


@pytest.mark.parametrize("search, says", [
    (dict(min_nodes=5, max_nodes=4), "min_nodes=5 exceeds max_nodes=4, so there is "
                                     "nothing to search"),
    (dict(min_replicas=6), "min_replicas=6 exceeds max_replicas=5"),
    (dict(levels=("ONE", 7)), r"levels=7: a level of k acknowledgements needs k "
                              r"replicas, and the search has at most 5 \(max_replicas=5"),
    (dict(levels=("THREE",), max_nodes=2), r"levels=THREE: THREE needs 3 replicas, .*"
                                           r"names from ONE,TWO,QUORUM,ALL, or raise "
                                           r"max_nodes to at least 3$"),
    (dict(levels=("ONE", "5000")), "5000 is past the largest search, 1,000 replicas"),
    (dict(write_rate=100.0), r"every cluster of up to max_nodes=20 is overloaded at "
                             r"write_rate=100 .* raise max_nodes to at least 101"),
    (dict(write_rate=400.0, min_replicas=3, max_nodes=1000),
     r"1,201 nodes, beyond the limit 1,000: lower write_rate or the mean service time "
     r"\(service\), or lower min_replicas to 2$"),
    # THREE runs on no fewer than 3 replicas: 2 was advised, where no level runs;
    # a level that runs on 2 is
    (dict(write_rate=400.0, min_replicas=3, max_nodes=1000, levels=("THREE",)),
     r"1,201 nodes, beyond the limit 1,000: lower write_rate or the mean service time "
     r"\(service\), or give levels that run on 2 replica\(s\) \(levels\)$"),
    # the fewest replicas a level runs on bounds the load, not min_replicas
    (dict(write_rate=400.0, max_nodes=1000, levels=("THREE",)),
     r"with 3 replica\(s\), the fewest any level given runs on\); it needs 1,201 "),
    (dict(write_rate=300.0, min_replicas=4, max_nodes=1000, levels=("THREE",)),
     r"it needs 1,201 nodes, .* or lower min_replicas to 3$"),
    (dict(max_nodes=1001), "max_nodes=1001 exceeds the limit 1,000"),
    # not "give max_replicas at least 5000", a value refused
    (dict(min_replicas=5000), "min_replicas=5000 exceeds the limit 1,000 of the "
                              "search; give min_replicas at most 1,000$"),
])
def test_a_search_is_checked_once_in_the_names_of_its_caller(search, says):
    """One check, two spellings: the message in the CLI's option names is the
    library's sentence with only the names changed."""
    from scipy import stats

    from sizing.planning import check_capacity_search

    search = {"write_rate": 1.0, "service": stats.expon(), "levels": ("ONE",), **search}
    with pytest.raises(ConfigError, match=says) as python:
        check_capacity_search(**search)
    with pytest.raises(ConfigError) as cli:
        check_capacity_search(**search, names=FLAGS)
    assert str(cli.value) == _as_flags(str(python.value))
    assert "_" not in re.sub(r"[A-Z]+_[A-Z]+", "", str(cli.value))  # no Python names
    # plan_capacity refuses the same search with the same message
    with pytest.raises(ConfigError) as planned:
        plan_capacity(**{k: v for k, v in search.items()}, target=5.0)
    assert str(planned.value) == str(python.value)


def test_level_key_makes_one_level_of_a_name_and_its_number_and_no_more():
    """TWO, "2" and 2 are one level; QUORUM and ALL depend on the replicas; a name
    outside the model (LOCAL_ONE, LOCAL_QUORUM: data-centre levels) is itself, so two
    of them are two levels (both were None)."""
    from sizing.planning import FIXED_QUORUMS, level_key

    assert FIXED_QUORUMS == {"ONE": 1, "TWO": 2, "THREE": 3}
    assert level_key("TWO") == level_key("two") == level_key("2") == level_key(2) == 2
    assert level_key("quorum") == "QUORUM" and level_key("ALL") == "ALL"
    assert level_key("local_one") == "LOCAL_ONE"
    assert level_key("LOCAL_QUORUM") == "LOCAL_QUORUM"


@pytest.fixture
def cli(monkeypatch):
    def run(argv):
        # A value refused while parsing exits through argparse (SystemExit).
        try:
            return main(argv)
        except SystemExit as exc:
            return exc.code
    return run


def test_cli_plan_capacity_writes_csv(cli, tmp_path, capsys):
    out = tmp_path / "capacity.csv"
    assert cli(["plan-capacity", "--write-rate", "2", "--target", "8", "--levels",
                "QUORUM", "--min-replicas", "3", "--max-replicas", "3",
                "--max-nodes", "12", "--basic", "independent", "--out", str(out)]) == 0
    rows = list(csv.DictReader(out.open()))
    assert [r["nodes"] for r in rows if r["best"] == "True"] == ["10"]
    assert "best: n=10" in capsys.readouterr().err


def test_cli_plan_capacity_warns_when_its_validation_breaks_the_sla(cli, tmp_path, capsys):
    # 2,000 jobs per basic queue put the best's p99 at 3.0 with a bracket off the
    # simulated grid; the validation run puts it well above the target of 5.
    out = tmp_path / "capacity.csv"
    assert cli(["plan-capacity", "--jobs", "2000", "--seed", "1", "--write-rate", "1",
                "--target", "5", "--validate", "2000", "--basic", "simulation",
                "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "nan" not in err and "beyond the simulated range" in err
    assert "warning: the simulation puts the best's p99 at" in err
    best = [r for r in csv.DictReader(out.open()) if r["best"] == "True"]
    assert best[0]["bracket_high"] == "inf" and best[0]["confident"] == "False"


def test_the_default_plan_simulates_each_candidate_and_finds_the_smallest_cluster(
        cli, tmp_path, capsys):
    """p99 <= 6 at 1 write per unit time, 3 replicas (a judge-style probe): (5,3,1)
    has p99 4.59 (2 million jobs, fast engine), (4,3,1) 8.1; Theorem 1 on basic
    queues (the Lemma) put (5,3,1) at 7.2 and planned 6 nodes. Each candidate's own
    simulation plans 5, its percentile inside the validation run's interval and its
    quorums in order."""
    out = tmp_path / "capacity.csv"
    assert cli(["plan-capacity", "--write-rate", "1", "--target", "6", "--min-replicas",
                "3", "--max-replicas", "3", "--max-nodes", "8", "--validate", "200000",
                "--out", str(out)]) == 0
    err = capsys.readouterr().err
    rows = list(csv.DictReader(out.open()))
    (best,) = [r for r in rows if r["best"] == "True"]
    assert (best["nodes"], best["level"], best["confident"]) == ("5", "ONE", "True")
    simulated = re.search(r"simulated p99 of the best: ([\d.]+) \[([\d.]+), ([\d.]+)\]",
                          err)
    low, high = float(simulated.group(2)), float(simulated.group(3))
    assert 0.9 * low <= float(best["predicted"]) <= 1.1 * high
    assert "warning" not in err and "each candidate's queue simulated" in err
    for nodes in ("4", "5"):
        p99 = [float(r["predicted"]) for r in rows if r["nodes"] == nodes]
        assert p99 == sorted(p99) and len(p99) == 3


def test_cli_timeouts_and_consistency(cli, tmp_path):
    out = tmp_path / "t.csv"
    assert cli(["timeouts", "--nodes", "3", "--replicas", "3", "--quorum", "2",
                "--loads", "0.5", "--timeouts", "2,6", "--basic", "independent",
                "--sim-jobs", "5000", "--out", str(out)]) == 0
    assert len(list(csv.DictReader(out.open()))) == 2
    out = tmp_path / "c.csv"
    assert cli(["plan-consistency", "--nodes", "5", "--replicas", "3",
                "--read-fraction", "0.8", "--rate", "1", "--basic", "independent",
                "--out", str(out)]) == 0
    assert sum(r["best"] == "True" for r in csv.DictReader(out.open())) == 1


@pytest.mark.parametrize("argv", [
    ["timeouts", "--nodes", "3", "--replicas", "4", "--quorum", "2", "--loads", "0.5",
     "--timeouts", "2"],
    ["timeouts", "--nodes", "3", "--replicas", "3", "--quorum", "2", "--loads", "0.5",
     "--timeouts", "soon"],
    ["plan-consistency", "--nodes", "5", "--replicas", "3", "--read-fraction", "0.8",
     "--rate", "10", "--basic", "independent"],
    ["plan-capacity", "--write-rate", "1", "--target", "5", "--levels", "MAYBE"],
])
def test_cli_bad_input_is_one_line_and_exit_2(cli, argv, capsys):
    assert cli(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "error:" in err


def test_a_cluster_at_load_one_up_to_rounding_is_unstable_not_an_error():
    # 0.716 writes per unit time of mean 1/0.716: (3,3) nodes sit at load 1 - 1e-16,
    # which the model rounds to 1 and refuses; the planner must skip it, not fail
    from scipy import stats

    plan = plan_capacity(0.716, 1.0, service=stats.expon(scale=1 / 0.716), max_nodes=3,
                         jobs=100, basic="independent")
    full = [c for c in plan.candidates if (c.nodes, c.replicas) == (3, 3)]
    assert full and all(c.predicted == math.inf and not c.meets for c in full)


def test_fewest_stable_nodes_is_where_the_load_drops_below_one():
    for work, replicas in ((100.0, 1), (1.5, 4), (2.0, 3), (0.3, 1)):
        nodes = fewest_stable_nodes(work, replicas)
        assert replicas * work / nodes < 1
        assert nodes == 1 or replicas * work / (nodes - 1) >= 1
    # past 2^53 nodes one more changed nothing a float sees: this never returned
    from sizing.planning import UNSTABLE

    for work in (1e100, 1e300):
        nodes = fewest_stable_nodes(work, 3)
        assert 3 * work / nodes < UNSTABLE and nodes < 3 * work / UNSTABLE * (1 + 1e-9)
    with pytest.raises(ConfigError, match="overflow a float"):
        fewest_stable_nodes(1e308, 3)  # 3e308 is past the largest float


@pytest.fixture
def no_work(monkeypatch):
    """Make every planner and simulation fail the test if reached: checks come first."""
    def reached(*args, **kwargs):
        raise AssertionError("work started before the inputs were checked")
    for module, name in ((sizing.planning, "plan_capacity"),
                         (sizing.planning, "plan_consistency"),
                         (sizing.planning, "simulate_consistency"),
                         (sizing.tails, "timeout_table")):
        monkeypatch.setattr(module, name, reached)


def _one_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "error:" in err, err
    return err


RATE = ["--write-rate", "1", "--target", "5"]
MIX = ["--nodes", "6", "--replicas", "3", "--read-fraction", "0.9", "--rate", "1"]
TIMEOUTS = ["timeouts", "--nodes", "20", "--replicas", "10", "--quorum", "5", "--loads",
            "1.5", "--timeouts", "1"]


@pytest.mark.parametrize("argv, says", [
    (["plan-capacity", *RATE, "--validate", "3", "--jobs", "2000000"],
     "--validate 3 is too few: a validation run needs at least 44 jobs"),
    (["plan-capacity", *RATE, "--validate", "1"], "give --validate 44 or more"),
    (["plan-capacity", *RATE, "--jobs", "30"], "--jobs 30 is too few"),
    (["plan-capacity", *RATE, "--jobs", "1"], "give --jobs 44 or more"),
    (["plan-consistency", *MIX, "--jobs", "3000000", "--validate", "3"],
     "--validate 3 is too few"),
    (["plan-consistency", *MIX, "--jobs", "3000000", "--validate", "100"],
     f"--validate 100 is too few at 90% reads: .* give --validate "
     f"{validation_jobs(0.9):,} or more"),
    (["plan-consistency", *MIX, "--jobs", "100"],
     f"--jobs 100 is too few at 90% reads on 3 replicas: .* give --jobs "
     f"{consistency_jobs(3, 0.9):,} or more"),
    ([*TIMEOUTS, "--jobs", "30", "--sim-jobs", "20000000"],
     "--jobs 30 is too few: a run needs at least 44 jobs"),
    ([*TIMEOUTS, "--sim-jobs", "1"], "--sim-jobs 1 is too few: .* at least 2 jobs"),
    (["plan-capacity", *RATE, "--min-nodes", "5", "--max-nodes", "4"],
     "--min-nodes 5 exceeds --max-nodes 4"),
    (["plan-capacity", *RATE, "--min-replicas", "6"],
     "--min-replicas 6 exceeds --max-replicas 5"),
    (["plan-capacity", "--write-rate", "100", "--target", "5"],
     "every cluster of up to --max-nodes 20 is overloaded at --write-rate 100 .*"
     "raise --max-nodes to at least 101"),
    (["plan-capacity", "--write-rate", "5000", "--target", "5"],
     "needs 5,001 nodes, beyond the limit 1,000: lower --write-rate"),
])
def test_cli_too_few_jobs_and_empty_searches_are_refused_before_any_work(
        cli, no_work, capsys, argv, says):
    assert cli(argv) == 2
    assert re.search(says, _one_line(capsys))


def test_cli_plan_consistency_runs_at_its_fewest_jobs(cli, tmp_path):
    fewest = consistency_jobs(3, 0.9)
    out = tmp_path / "c.csv"
    assert cli(["plan-consistency", *MIX, "--jobs", str(fewest), "--out", str(out)]) == 0
    assert sum(r["best"] == "True" for r in csv.DictReader(out.open())) == 1


def test_an_analytic_basic_takes_any_jobs_since_it_simulates_no_basic_queue(cli,
                                                                          capsys):
    """--jobs does nothing with --basic independent (the output is the same at 44 and
    100,000), yet fewer than 44 was refused; with simulated basic queues it still
    is, before any work."""
    argv = ["timeouts", "--nodes", "6", "--replicas", "3", "--quorum", "2", "--loads",
            "0.5", "--timeouts", "2", "--sim-jobs", "2000"]
    assert cli([*argv, "--basic", "independent", "--jobs", "10"]) == 0
    capsys.readouterr()
    assert cli([*argv, "--jobs", "10"]) == 2
    assert "--jobs 10 is too few: a run needs at least 44 jobs" in _one_line(capsys)


def test_the_jobs_rule_leaves_out_the_read_quorums_the_plan_does_not_simulate(cli):
    """At 99% reads on 3 nodes at rate 1.5 only R=1 is stable: the rule asked for the
    rarest class over every R (8,594 jobs) and refused 4,000, which the plan runs."""
    def load(R):
        return consistency_load(3, 3, 0.99, 1.5, R, 1.0, 1.0)
    assert load(1) < 1 <= load(2)
    fewest = consistency_jobs(3, 0.99, load)
    assert fewest < 4000 < consistency_jobs(3, 0.99)
    assert cli(["plan-consistency", "--nodes", "3", "--replicas", "3",
                "--read-fraction", "0.99", "--rate", "1.5", "--jobs", "4000"]) == 0


def test_cli_plan_capacity_suggests_more_replicas_when_they_are_what_is_missing(
        cli, capsys):
    """At light load the fastest candidate already has the most replicas searched:
    more nodes cannot bring its p99 under the target, a larger quorum can."""
    assert cli(["plan-capacity", "--write-rate", "1", "--target", "0.5", "--max-nodes",
                "60", "--basic", "independent"]) == 1
    err = capsys.readouterr().err
    # even unloaded, ONE on r replicas has p99 ln(100) / r: 10 are the fewest under 0.5
    assert math.ceil(math.log(100) / 0.5) == 10
    assert "r=5, ONE" in err and "raise --max-replicas to at least 10 " in err
    assert cli(["plan-capacity", "--write-rate", "1", "--target", "0.5", "--max-nodes",
                "60", "--max-replicas", "20", "--basic", "independent"]) == 0
    assert "no configuration" not in capsys.readouterr().err


def test_cli_plan_capacity_says_why_nothing_meets_the_target(cli, capsys):
    # an unloaded exponential's p99 is 4.6: no cluster of 4 nodes reaches 0.5
    assert cli(["plan-capacity", "--write-rate", "1", "--target", "0.5", "--max-nodes",
                "4", "--basic", "independent"]) == 1
    err = capsys.readouterr().err
    # replicas bind, not nodes: 10 are the fewest whose unloaded p99 is under 0.5
    assert re.search(r"no configuration in the search space meets p99 <= 0.5: the "
                     r"fastest candidate, n=4, r=\d, ONE .* predicts p99 [\d.]+ > 0.5; raise "
                     r"--max-replicas and --max-nodes to at least 10 .* or relax "
                     r"--target", err)


def test_cli_timeouts_availability_interval_stays_a_probability(cli, tmp_path):
    out = tmp_path / "t.csv"
    assert cli(["timeouts", "--nodes", "6", "--replicas", "3", "--quorum", "2",
                "--loads", "0.5", "--timeouts", "5,8", "--jobs", "2000", "--sim-jobs",
                "2000", "--out", str(out)]) == 0
    for row in csv.DictReader(out.open()):
        assert 0 <= float(row["sim_availability_low"]) <= float(
            row["sim_availability_high"]) <= 1


def test_a_plan_from_too_few_simulated_jobs_is_not_confident():
    """100 jobs put the p99 of one replica at load 2/3 near 4.4, inside its own
    bracket, where the M/M/1 p99 is ln(100) / (1/3) = 13.8: its tail rests on one
    job, so the plan is not called confident (a probe found it was)."""
    from sizing.planning import plan_capacity

    plan = plan_capacity(2.0, 5.0, jobs=100, seed=3, max_nodes=3, max_replicas=1,
                         basic="simulation")
    assert plan.best is not None and plan.best.predicted < 5.0
    assert math.log(100) / (1 / 3) > 13.8
    assert not plan.best.confident
    # each candidate simulated (the default) from 100 jobs: p99 is the maximum of each
    # section of 5 jobs, nothing a plan may be confident of, wherever it lands
    plan = plan_capacity(2.0, 50.0, jobs=100, seed=3, max_nodes=3, max_replicas=1)
    assert plan.best is not None and not plan.best.confident


def test_a_plan_whose_best_pair_is_not_reliable_says_the_ranking_may_be_noise(
        tmp_path, capsys):
    """2,000 jobs per basic queue leave every pair's p99 outside the sampling
    tolerance (reliable False in the table): a warning says so and how to mend it;
    a plan by the mean (which that tolerance does not concern) says nothing."""
    out = tmp_path / "plan.csv"
    asked = ["plan-consistency", "--nodes", "3", "--replicas", "3", "--read-fraction",
             "0.5", "--rate", "0.5", "--jobs", "2000", "--out", str(out)]
    assert main(asked) == 0
    err = capsys.readouterr().err
    rows = list(csv.DictReader(out.open()))
    unreliable = sum(row["reliable"] == "False" for row in rows)
    assert unreliable >= 1 and [r for r in rows if r["best"] == "True"][0][
        "reliable"] == "False"
    assert (f"warning: {unreliable} of the {len(rows)} pairs, the best among them, "
            "have their p99 where the simulated basic queues' distribution is outside "
            "its sampling tolerance (2,000 jobs per basic queue; reliable False): the "
            "ranking may be noise") in err
    assert main([*asked, "--objective", "mean"]) == 0
    assert "ranking may be noise" not in capsys.readouterr().err


def test_timeouts_warns_where_the_model_misses_the_simulation(cli, tmp_path, capsys):
    """(6,3,1) at load 1.6, timeout 3 (a probe): the model's availability 0.734 lies
    well outside the simulated [0.778, 0.807] (the Lemma's error); a warning names the
    quantity and both numbers. One replica, where the model is exact, warns nothing."""
    out = tmp_path / "t.csv"
    assert cli(["timeouts", "--nodes", "6", "--replicas", "3", "--quorum", "1",
                "--loads", "1.6", "--timeouts", "3", "--sim-jobs", "100000",
                "--out", str(out)]) == 0
    err = capsys.readouterr().err
    (row,) = csv.DictReader(out.open())
    low, high = float(row["sim_availability_low"]), float(row["sim_availability_high"])
    model = float(row["model_availability"])
    assert model < low - (high - low) / 2
    assert f"availability at load 1.6, timeout 3: {model:.4g} against" in err
    assert cli(["timeouts", "--nodes", "3", "--replicas", "1", "--quorum", "1",
                "--loads", "0.5", "--timeouts", "3", "--sim-jobs", "100000",
                "--out", str(out)]) == 0
    assert "outside the simulation" not in capsys.readouterr().err


@pytest.mark.parametrize("value, words", [
    (0.99, "percentile=0.99 would be the 0.99th percentile; percentiles here run from "
           "1 to 100, so write 99 for p99"),
    (100, "percentile=100 is outside [1, 100)"), (150, "percentile=150 is outside"),
    (float("nan"), "must be a finite number"), (True, "must be a finite number")])
def test_the_library_takes_percentiles_as_the_command_line_does(value, words):
    """A notebook's percentile=0.99 planned for p0.99 (n=3, r=1 where p99 needs n=7,
    r=2) and 150 met numpy's raw error, where the command line refuses both (a
    probe): the planners and the latency tables check them as it does."""
    from scipy import stats

    from forkjoin_sim.staleness.wars import MessageLaws, simulate_wars

    laws = MessageLaws(*[stats.expon()] * 4)
    for call in (lambda: sizing.planning.plan_capacity(2.0, 6.0, percentile=value,
                                                       jobs=2000),
                 lambda: sizing.planning.plan_consistency(3, 3, 0.5, 0.5,
                                                          percentile=value),
                 lambda: simulate_wars(laws, 3, 1, 1, trials=100).latency_percentiles(
                     [50, value])):
        with pytest.raises(ConfigError, match=re.escape(words)):
            call()


def test_the_planners_take_a_service_as_its_spec_and_one_level_by_itself():
    """As ForkJoinModel takes them (an API probe): service="lognormal:1" raised
    AttributeError ('str' has no mean) and levels="QUORUM" was planned letter by letter
    ("level 'Q' is unknown"). A spec is the law --service names (mean 1)."""
    from forkjoin_sim.laws.service import parse_service

    spec = sizing.planning.plan_consistency(3, 3, 0.5, 0.5, read_service="lognormal:1",
                                            jobs=2000, seed=1)
    law = sizing.planning.plan_consistency(3, 3, 0.5, 0.5, jobs=2000, seed=1,
                                           read_service=parse_service("lognormal:1"))
    assert spec.options == law.options
    one = sizing.planning.plan_capacity(2.0, 6.0, levels="QUORUM", jobs=2000, seed=1,
                                        max_nodes=6)
    listed = sizing.planning.plan_capacity(2.0, 6.0, levels=["QUORUM"], jobs=2000,
                                           seed=1, max_nodes=6)
    assert one.report() == listed.report()
    with pytest.raises(ConfigError, match="service must be a frozen scipy.stats"):
        sizing.planning.plan_capacity(2.0, 6.0, service=5)
