"""Tests for forkjoin_cli.plan_capacity: ``forkjoin-sim plan-capacity``."""

import csv
import io
import math
import re

import pytest

from forkjoin_cli.main import main

#: At most 4 nodes, exponential service of mean 1: even unloaded, the fastest write
#: (ONE on r <= 4 replicas) has p99 ln(100) / r >= 1.15, so no configuration meets
#: a p99 of 0.5. The analytic basic queues keep the search instant.
NOTHING_MEETS = ["plan-capacity", "--write-rate", "1", "--target", "0.5",
                 "--max-nodes", "4", "--basic", "independent"]
#: Candidates of that search: (n, r) for n in 1..4, r in 1..n, each at ONE, QUORUM
#: and ALL (the default levels).
CANDIDATES = sum(range(1, 5)) * 3


def _run(argv) -> int:
    try:
        return main(argv)
    except SystemExit as stop:  # refused while parsing
        return stop.code


def test_no_configuration_meeting_the_target_exits_1_and_still_writes_its_file(
        tmp_path, capsys):
    assert math.log(100) / 4 > 0.5
    out = tmp_path / "plan.csv"
    assert _run([*NOTHING_MEETS, "--out", str(out)]) == 1
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == CANDIDATES and all(row["best"] == "False" for row in rows)
    assert all(float(row["predicted"]) > 0.5 for row in rows)
    last = capsys.readouterr().err.strip().splitlines()[-1]
    # one line that stands alone: what is missed, by how much, and what to change
    assert last.startswith("no configuration in the search space meets p99 <= 0.5: "
                           "the fastest candidate, n=4")
    assert "raise --max-" in last and last.endswith("or relax --target")



def test_the_plan_goes_to_json_by_the_out_suffix_with_the_csvs_rows(tmp_path):
    """--out took .csv only; a .json name now gets the same rows as a list of objects
    (numbers as numbers, every digit)."""
    json_out, csv_out = tmp_path / "plan.json", tmp_path / "plan.csv"
    assert _run([*NOTHING_MEETS, "--out", str(json_out)]) == 1
    assert _run([*NOTHING_MEETS, "--out", str(csv_out)]) == 1
    import json

    got, rows = json.loads(json_out.read_text()), list(csv.DictReader(csv_out.open()))
    assert len(got) == len(rows) == CANDIDATES
    assert list(got[0]) == list(rows[0])
    for mine, theirs in zip(got, rows):
        assert mine["best"] is False and theirs["best"] == "False"
        if math.isinf(float(theirs["predicted"])):  # an unstable candidate
            assert mine["predicted"] is None  # JSON has no infinity
        else:
            assert mine["predicted"] == pytest.approx(float(theirs["predicted"]),
                                                      rel=1e-12)
    assert any(mine["predicted"] is not None for mine in got)

def test_no_configuration_meeting_the_target_prints_its_rows_then_says_so(capsys):
    assert _run(NOTHING_MEETS) == 1
    captured = capsys.readouterr()
    rows = list(csv.DictReader(io.StringIO(captured.out)))
    assert len(rows) == CANDIDATES and not any(row["best"] == "True" for row in rows)
    assert captured.err.strip().splitlines()[-1].startswith(
        "no configuration in the search space meets p99 <= 0.5")


def test_a_target_met_exits_0_and_bad_input_2(capsys):
    # the same search at a target of 8: one replica on 4 nodes is an M/M/1 queue at
    # load 1/4, whose p99 ln(100) / (1 - 1/4) = 6.1 meets it
    argv = list(NOTHING_MEETS)
    argv[argv.index("--target") + 1] = "8"
    assert math.log(100) / (1 - 1 / 4) < 8
    assert _run(argv) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert sum(row["best"] == "True" for row in rows) == 1
    assert _run([*NOTHING_MEETS, "--min-nodes", "5"]) == 2
    assert capsys.readouterr().out == ""


def test_the_help_documents_the_exit_status(capsys):
    assert _run(["plan-capacity", "--help"]) == 0
    help_text = capsys.readouterr().out
    epilog = help_text[help_text.index("exit status:"):]
    for status, says in (("0", "meets the target"), ("1", "none in the search space"),
                         ("2", "bad input")):
        assert f"\n  {status}  " in epilog and says in epilog


def _rows(argv, capsys) -> list[dict]:
    assert _run(argv) == 0
    return list(csv.DictReader(io.StringIO(capsys.readouterr().out)))


def test_a_level_may_be_a_number_of_acknowledgements_as_elsewhere(capsys):
    """--levels 2 plans what --levels TWO plans (the level column keeps what was
    given), and numbers mix with names, as cassandra predict --consistency takes
    them."""
    search = ["plan-capacity", "--write-rate", "1", "--target", "8", "--basic",
              "independent", "--max-nodes", "8"]
    by_name = _rows([*search, "--levels", "TWO"], capsys)
    by_number = _rows([*search, "--levels", "2"], capsys)
    assert {row["level"] for row in by_number} == {"2"}
    same = ("nodes", "replicas", "quorum", "predicted", "best")
    assert [[row[k] for k in same] for row in by_number] == [
        [row[k] for k in same] for row in by_name]
    mixed = _rows([*search, "--levels", "ONE,3"], capsys)
    assert {(row["level"], row["quorum"]) for row in mixed} == {("ONE", "1"), ("3", "3")}
    assert _run([*search, "--levels", "2"]) == 0
    assert "r=3, k=2, node load" in capsys.readouterr().err


@pytest.fixture
def no_work(monkeypatch):
    """Fail the test if the planner is reached: bad input is refused before."""
    import sizing.planning

    def reached(*args, **kwargs):
        raise AssertionError("the plan ran before its levels were checked")
    monkeypatch.setattr(sizing.planning, "plan_capacity", reached)


@pytest.mark.parametrize("extra, says", [
    (["--levels", "7"], r"--levels 7: a level of k acknowledgements needs k replicas, "
                        r"and the search has at most 5 \(--max-replicas 5\); give "
                        r"levels from 1 to 5, or raise --max-replicas to at least 7"),
    (["--levels", "ONE,5", "--max-nodes", "4"],
     r"--levels 5: .* at most 4 \(--max-nodes 4\); give levels from 1 to 4, or raise "
     r"--max-nodes to at least 5"),
    (["--levels", "0"], "--levels '0': a level given as a number needs at least 1"),
    (["--levels", "7,TWO", "--max-replicas", "3"],
     "raise --max-replicas to at least 7"),
])
def test_a_number_of_acknowledgements_outside_the_search_is_one_line_exit_2(
        no_work, capsys, extra, says):
    assert _run(["plan-capacity", "--write-rate", "1", "--target", "5", *extra]) == 2
    captured = capsys.readouterr()
    (line,) = captured.err.strip().splitlines()
    assert "error:" in line and re.search(says, line), line
    assert captured.out == ""


@pytest.mark.parametrize("extra, says", [
    # a name no candidate can use is refused as its number is
    (["--levels", "ONE,THREE", "--max-replicas", "2"],
     r"--levels THREE: THREE needs 3 replicas, and the search has at most 2 "
     r"\(--max-replicas 2\); give levels from 1 to 2 or names from ONE,TWO,QUORUM,ALL, "
     r"or raise --max-replicas to at least 3"),
    (["--levels", "TWO", "--max-nodes", "1"],
     r"--levels TWO: TWO needs 2 replicas, .* at most 1 \(--max-nodes 1\); .* raise "
     r"--max-nodes to at least 2"),
    (["--levels", "THREE,7", "--max-replicas", "2"],
     r"--levels THREE,7: THREE needs 3 replicas, a level of k acknowledgements needs k "
     r"replicas, .* raise --max-replicas to at least 7"),
])
def test_a_name_no_candidate_can_use_is_one_line_exit_2(no_work, capsys, extra, says):
    # half a write per unit time: one node is not overloaded
    assert _run(["plan-capacity", "--write-rate", "0.5", "--target", "5", *extra]) == 2
    captured = capsys.readouterr()
    (line,) = captured.err.strip().splitlines()
    assert "error:" in line and re.search(says, line), line
    assert captured.out == ""


def test_a_name_some_candidates_can_use_is_skipped_only_where_it_does_not_fit(capsys):
    """THREE fits r >= 3 of r = 1..4, ALL fits every r: neither is refused, THREE
    has no row where r < 3."""
    argv = [*NOTHING_MEETS, "--levels", "ONE,THREE,ALL"]
    assert _run(argv) == 1
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    by_level = {level: {int(row["replicas"]) for row in rows if row["level"] == level}
                for level in ("ONE", "THREE", "ALL")}
    assert by_level == {"ONE": {1, 2, 3, 4}, "THREE": {3, 4}, "ALL": {1, 2, 3, 4}}
    assert _run([*NOTHING_MEETS, "--levels", "ALL", "--max-replicas", "1"]) == 1


@pytest.mark.parametrize("levels, says", [
    ("TWO,2", "--levels TWO,2: TWO and 2 are one level (2 acknowledgements); list each "
              "level once"),
    ("ONE,QUORUM,1", "--levels ONE,QUORUM,1: ONE and 1 are one level (1 "
                     "acknowledgement); list each level once"),
    ("3,three", "3 and THREE are one level"),
])
def test_a_level_given_twice_by_name_and_number_is_one_line_exit_2(no_work, capsys,
                                                                   levels, says):
    """As every list option of the project (ONE,ONE and 2,2 are refused while
    parsing): a level listed twice is refused, not planned twice."""
    assert _run(["plan-capacity", "--write-rate", "1", "--target", "5", "--levels",
                 levels]) == 2
    captured = capsys.readouterr()
    (line,) = captured.err.strip().splitlines()
    assert "error:" in line and says in line, line
    assert captured.out == ""


def _advice(argv, capsys) -> str:
    assert _run(argv) == 1
    return capsys.readouterr().err.strip().splitlines()[-1]


#: Exponential service of mean 1: even unloaded, ONE on r replicas has p99
#: ln(100) / r, ALL on r replicas at least ln(100) (ALL on 1), ALL on 2 the longest
#: of two, -ln(1 - sqrt(0.99)) = 5.3.
FASTEST_ONE = math.log(100)


def test_the_advice_names_the_nodes_when_lighter_loads_would_meet_the_target(capsys):
    # unloaded, 3 replicas reach p99 1.5 <= 3: only the load (3 nodes) is missing
    assert FASTEST_ONE / 3 < 3
    argv = ["plan-capacity", "--write-rate", "1", "--target", "3", "--basic",
            "independent", "--max-nodes", "3"]
    last = _advice(argv, capsys)
    assert "raise --max-nodes above 3 (lighter node loads" in last
    assert "--max-replicas" not in last and last.endswith(" or relax --target")
    # the advice holds: more nodes, nothing else changed, meet it
    argv[argv.index("--max-nodes") + 1] = "20"
    assert _run(argv) == 0


def test_the_advice_names_the_replicas_when_no_cluster_of_them_meets_it(capsys):
    """4 nodes, p99 <= 0.5 (NOTHING_MEETS): no load on 4 replicas or fewer gets under
    ln(100) / 4 = 1.15, so more nodes alone never help (the advice said they did)."""
    assert math.ceil(FASTEST_ONE / 0.5) == 10
    last = _advice(NOTHING_MEETS, capsys)
    assert "raise --max-replicas and --max-nodes to at least 10 " in last
    assert "raise --max-nodes above" not in last and last.endswith(" or relax --target")


def test_the_advice_names_the_levels_when_only_one_would_meet_it(capsys):
    # ALL on r replicas is the longest of r: even unloaded its p99 is >= ln(100)
    assert FASTEST_ONE > 0.5
    last = _advice([*NOTHING_MEETS, "--levels", "ALL,QUORUM"], capsys)
    assert "add ONE to --levels" in last and "ONE on 10 does" in last
    assert "--max-" not in last and last.endswith(" or relax --target")


def test_the_advice_names_min_replicas_when_fewer_replicas_would_meet_it(capsys):
    # ALL on 1 replica: p99 4.6 <= 5; on 2 the longest of two, 5.3 > 5
    assert FASTEST_ONE < 5 < -math.log(1 - math.sqrt(0.99))
    last = _advice(["plan-capacity", "--write-rate", "1", "--target", "5", "--basic",
                    "independent", "--max-nodes", "4", "--levels", "ALL",
                    "--min-replicas", "2"], capsys)
    assert "lower --min-replicas to 1 " in last and "--max-" not in last
    assert last.endswith(" or relax --target")


def test_the_advice_is_the_target_alone_when_no_cluster_can_reach_it(capsys):
    """A deterministic service of 1 takes 1 on any replicas at any quorum, so a p99
    of 0.9 is out of reach of every cluster: neither nodes nor replicas help."""
    last = _advice(["plan-capacity", "--write-rate", "1", "--target", "0.9",
                    "--service", "deterministic", "--max-nodes", "3", "--jobs", "2000"],
                   capsys)
    assert last.endswith("even unloaded, no cluster of up to 1,000 replicas has p99 "
                         "below 1: relax --target")
    assert "raise" not in last


def _only_accepted_values(line: str) -> None:
    """Every limit the line advises is one plan-capacity takes: "raise --max-nodes
    above N" leaves room up to MAX_NODES, "to at least N" names at most MAX_NODES."""
    from sizing.planning import MAX_NODES

    for above in re.findall(r"above ([\d,]+)", line):
        assert int(above.replace(",", "")) < MAX_NODES, line
    for least in re.findall(r"to at least ([\d,]+)", line):
        assert int(least.replace(",", "")) <= MAX_NODES, line


def test_the_advice_at_the_largest_search_names_the_load_not_more_nodes(capsys):
    """At --max-nodes 1,000, the most it takes, the advice was "raise --max-nodes
    above 1000", a value refused. 900 writes on 1,000 nodes: one replica is an M/M/1
    queue at load 0.9, p99 ln(100) / 0.1 = 46 > 10, and more replicas overload every
    node; at 500 writes (load 0.5) its p99 ln(100) / 0.5 = 9.2 meets 10."""
    from sizing.planning import MAX_NODES

    assert math.log(100) / (1 - 0.9) > 10 > math.log(100) / (1 - 0.5)
    argv = ["plan-capacity", "--write-rate", "900", "--target", "10", "--basic",
            "independent", "--min-nodes", str(MAX_NODES), "--max-nodes", str(MAX_NODES)]
    last = _advice(argv, capsys)
    _only_accepted_values(last)
    assert "raise --max-nodes" not in last and f"{MAX_NODES:,}" in last
    assert "lower --write-rate" in last and last.endswith(" or relax --target")
    assert _run([*argv, "--max-nodes", str(MAX_NODES + 1)]) == 2  # why never advised
    capsys.readouterr()
    # the advice holds: a lower rate, nothing else changed, meets it
    argv[argv.index("--write-rate") + 1] = "500"
    assert _run(argv) == 0


@pytest.mark.parametrize("levels, extra, fixable", [
    ("5000", [], None),
    ("5000", ["--max-replicas", "1000", "--max-nodes", "1000"], None),
    # 7 is in reach of a larger search, 5000 of none
    ("7,5000", ["--max-replicas", "3"], "raise --max-replicas to at least 7"),
])
def test_a_level_past_the_largest_search_is_not_advised_a_refused_limit(
        no_work, capsys, levels, extra, fixable):
    """--levels 5000 was told to raise --max-replicas to at least 5000, past the
    1,000 that option takes: such a level is to be left out."""
    assert _run(["plan-capacity", "--write-rate", "1", "--target", "5", "--levels",
                 levels, *extra]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    _only_accepted_values(line)
    assert "5000 is past the largest search, 1,000 replicas" in line, line
    assert (fixable is None and "raise" not in line) or fixable in line, line


def test_an_overload_past_the_largest_search_names_the_other_levers(no_work, capsys):
    """3 replicas of 400 writes load 1,000 nodes to 1.2: no --max-nodes carries them,
    so the advice names the rate and the service, and 2 replicas, on which 801
    nodes do (the library's check passes there)."""
    from scipy import stats

    from sizing.planning import check_capacity_search, fewest_stable_nodes

    assert fewest_stable_nodes(400, 3) > 1000 >= fewest_stable_nodes(400, 2) == 801
    assert _run(["plan-capacity", "--write-rate", "400", "--target", "5",
                 "--min-replicas", "3", "--max-nodes", "1000"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    _only_accepted_values(line)
    assert ("it needs 1,201 nodes, beyond the limit 1,000: lower --write-rate or the "
            "mean service time (--mu or --service), or lower --min-replicas to 2") \
        in line, line
    check_capacity_search(400, stats.expon(), ("ONE",), min_replicas=2, max_nodes=1000)
    # with a smaller search, the nodes the fewer replicas need are named too
    assert _run(["plan-capacity", "--write-rate", "400", "--target", "5",
                 "--min-replicas", "3"]) == 2
    assert ("lower --min-replicas to 2 and raise --max-nodes to at least 801"
            in capsys.readouterr().err)


@pytest.mark.parametrize("levels, fewer", [("THREE", None), ("TWO,THREE", 2)])
def test_an_overload_is_never_advised_fewer_replicas_than_its_levels_run_on(
        capsys, levels, fewer):
    """--levels THREE at --min-replicas 3 was told to lower it to 2, where THREE
    does not run: every candidate of that search would have had no level."""
    from scipy import stats

    from sizing.planning import check_capacity_search

    assert _run(["plan-capacity", "--write-rate", "400", "--target", "5",
                 "--max-nodes", "1000", "--min-replicas", "3", "--levels", levels]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    _only_accepted_values(line)
    if fewer is None:
        assert "--min-replicas" not in line.split(";", 1)[1], line
        assert line.endswith("lower --write-rate or the mean service time (--mu or "
                             "--service), or give levels that run on 2 replica(s) (--levels)"), line
        return
    assert line.endswith(f"or lower --min-replicas to {fewer}"), line
    # the advice holds: the search passes, and TWO runs on its 2 replicas
    check_capacity_search(400, stats.expon(), levels.split(","), min_replicas=fewer,
                          max_nodes=1000)
    assert _run(["plan-capacity", "--write-rate", "400", "--target", "5",
                 "--max-nodes", "1000", "--min-replicas", str(fewer), "--levels",
                 levels, "--basic", "independent",
                 "--min-nodes", "1000"]) in (0, 1)
    assert "1000,2,TWO,2," in capsys.readouterr().out


def test_every_candidate_overloaded_past_the_largest_search_is_refused_first(capsys):
    """One replica of 400 writes fits 1,000 nodes, but THREE runs on 3 replicas,
    which no 1,000 nodes carry: the check let the search run (exit 1, "raise
    --jobs"); it now refuses before any work, naming the load and levels on fewer
    replicas, never a limit past the largest search."""
    from sizing.planning import fewest_stable_nodes

    assert fewest_stable_nodes(400, 3) > 1000 >= fewest_stable_nodes(400, 2)
    assert _run(["plan-capacity", "--write-rate", "400", "--target", "5",
                 "--max-nodes", "1000", "--levels", "THREE", "--basic",
                 "independent"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and len(captured.err.strip().splitlines()) == 1
    line = captured.err.strip()
    _only_accepted_values(line)
    assert "3 replica(s), the fewest any level given runs on" in line, line
    assert "lower --write-rate or the mean service time (--mu or --service)" in line
    assert line.endswith("or give levels that run on 2 replica(s) (--levels)"), line


@pytest.mark.parametrize("rate, target, offered", [
    # 2 replicas of 990 writes load 1,000 nodes to 1.98: more replicas never help
    ("990", "5", False),
    # 2 replicas of 100 load them to 0.2: ONE is the shorter of two M/M/1 sojourns
    # of rate 0.8, p99 ln(100) / 1.6 = 2.9 <= 5, where 1 replica (load 0.1) has
    # ln(100) / 0.9 = 5.1 > 5, though unloaded ln(100) = 4.6 <= 5
    ("100", "5", True),
])
def test_more_replicas_at_the_largest_search_are_advised_only_if_they_could_help(
        capsys, rate, target, offered):
    """At 1,000 nodes, the largest search, one replica more was advised even where it
    overloads every node (990 writes)."""
    assert math.log(100) / 1.6 < math.log(100) < 5 < math.log(100) / 0.9
    argv = ["plan-capacity", "--write-rate", rate, "--target", target, "--min-nodes",
            "1000", "--max-nodes", "1000", "--max-replicas", "1", "--levels", "ONE",
            "--basic", "independent"]
    last = _advice(argv, capsys)
    _only_accepted_values(last)
    assert ("raise --max-replicas above 1" in last) == offered, last
    assert "lower --write-rate or the mean service time (--mu or --service)" in last
    if offered:  # the advice holds
        argv[argv.index("--max-replicas") + 1] = "2"
        assert _run(argv) == 0
