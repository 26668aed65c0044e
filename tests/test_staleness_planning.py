"""Tests for sizing.staleness_planning: fastest (R, W) under a staleness constraint."""

import math
import re

import numpy as np
import pytest
from scipy import stats

from forkjoin_sim.errors import ConfigError
from sizing.staleness_planning import (StalenessConstraint, key_for, parse_constraint,
                                       plan_staleness)


def busy(structure):
    """The issue's example at 0.9 work per replica (1 op/ms, half writes)."""
    law = stats.expon(scale=0.9)
    return key_for(3, 1.0, 0.5, structure, read_service=law, write_service=law)


def assert_warnings_name_faster_undecided_pairs(plan, column):
    table = plan.options.set_index(["read_quorum", "write_quorum"])
    faster = table[(table.verdict == "undecided")
                   & (table[column] < table.loc[plan.best, column])]
    listed = ", ".join(f"({r}, {w})" for r, w in faster.index)
    named = [note for note in plan.warnings
             if note.startswith(f"undecided and faster than the pick {plan.best}: "
                                f"(R, W) = {listed};")]
    assert len(named) == bool(len(faster))
    return len(faster)


def fastest_meeting(plan, column):
    meeting = plan.options[plan.options.verdict == "meets"]
    return meeting[column].min()


@pytest.mark.parametrize("structure", ["shared", "stages"])
def test_the_plan_is_the_fastest_pair_that_meets_the_constraint(structure):
    plan = plan_staleness(busy(structure), parse_constraint("t=0:0.99"),
                          operations=60_000, seed=2)
    table = plan.options.set_index(["read_quorum", "write_quorum"])
    assert len(table) == 9
    assert_warnings_name_faster_undecided_pairs(plan, "mix_percentile")
    assert table.loc[plan.best, "verdict"] == "meets"
    assert table.loc[plan.best, "mix_percentile"] == fastest_meeting(plan, "mix_percentile")
    # strict pairs meet exactly: every read was consistent
    strict = table[table.strict]
    assert np.all(strict.probability == 1)
    # a pair meets only if its whole interval clears the target
    partial_meeting = table[~table.strict & (table.verdict == "meets")]
    assert np.all(partial_meeting.low >= 0.99)
    if structure == "shared":
        # FIFO replicas at high load: reads in the first ms are consistent >= 99%
        # (the issue: 0.1% stale overall), so ONE/ONE, the fastest, is chosen
        assert plan.best == (1, 1)
    else:
        # separate stages: about 0.77 in the first ms, so ONE/ONE fails
        assert table.loc[(1, 1), "verdict"] == "fails"
        assert plan.best != (1, 1)


def test_the_structure_changes_the_answer():
    shared = plan_staleness(busy("shared"), parse_constraint("t=0:0.99"), operations=60_000,
                            seed=2)
    stages = plan_staleness(busy("stages"), parse_constraint("t=0:0.99"), operations=60_000,
                            seed=2)
    assert shared.best != stages.best


def test_a_loose_constraint_takes_the_fastest_pair_and_a_tight_one_a_strict_pair():
    key = key_for(3, 1.0, 0.5, "stages", read_service=stats.expon(scale=0.5),
                  write_service=stats.expon(scale=0.5))
    loose = plan_staleness(key, parse_constraint("behind=0:0.5"), operations=30_000,
                           seed=1)
    assert loose.best == (1, 1)
    assert loose.options.verdict.eq("meets").all()
    # 1 - 1e-6 cannot be shown from 30 000 operations: only strict pairs qualify
    tight = plan_staleness(key, StalenessConstraint(1 - 1e-6, versions_behind=0),
                           operations=30_000, seed=1, objective="mean")
    table = tight.options.set_index(["read_quorum", "write_quorum"])
    assert table.loc[tight.best, "strict"]
    assert set(table[~table.strict].verdict) <= {"undecided", "fails"}
    assert table.loc[tight.best, "mix_mean"] == table[table.strict].mix_mean.min()
    assert_warnings_name_faster_undecided_pairs(tight, "mix_mean")


def test_more_versions_allowed_is_easier():
    plan0 = plan_staleness(busy("stages"), parse_constraint("behind=0:0.9"), operations=30_000,
                           seed=3)
    plan1 = plan_staleness(busy("stages"), parse_constraint("behind=1:0.9"), operations=30_000,
                           seed=3)
    assert np.all(plan1.options.probability >= plan0.options.probability)
    assert (plan1.options.probability > plan0.options.probability).any()


def test_constraint_specs():
    c = parse_constraint("t=10:0.999")
    assert (c.t, c.window, c.probability, c.versions_behind) == (10, 1, 0.999, None)
    c = parse_constraint(" t = 2 , window = 0.5 : 0.9 ")
    assert (c.t, c.window) == (2, 0.5)
    c = parse_constraint("behind=1:0.9999")
    assert (c.versions_behind, c.probability, c.t) == (1, 0.9999, None)


@pytest.mark.parametrize("text, message", [
    ("p>=0.9", "write t=T:P"), ("t=1:1.5", "strictly between 0 and 1"),
    ("behind=1.5:0.9", "whole M"), ("t=-1:0.9", "t >= 0"), ("t=x:0.9", "numbers"),
    # named as the user wrote it (was the library's "versions_behind=-1")
    ("behind=-1:0.9", "'behind=-1:0.9': behind=M takes a whole M >= 0"),
])
def test_bad_constraints_say_how_to_fix_them(text, message):
    with pytest.raises(ConfigError, match=message):
        parse_constraint(text)


def test_bad_planner_arguments():
    with pytest.raises(ConfigError, match="exactly one"):
        StalenessConstraint(0.9)
    with pytest.raises(ConfigError, match="structure"):
        key_for(3, 1.0, 0.5, "fifo")
    with pytest.raises(ConfigError, match="objective"):
        plan_staleness(busy("shared"), parse_constraint("t=0:0.9"), objective="p99")


def test_command_line_glue():
    import argparse

    from forkjoin_cli._tails import add_staleness_arguments
    from sizing.staleness_planning import plan_from_args

    parser = argparse.ArgumentParser()
    for name, kind in (("--nodes", int), ("--replicas", int), ("--rate", float),
                       ("--read-fraction", float), ("--percentile", float),
                       ("--jobs", int), ("--seed", int)):
        parser.add_argument(name, type=kind)
    parser.add_argument("--objective", default="percentile")
    add_staleness_arguments(parser)
    args = parser.parse_args("--nodes 6 --replicas 3 --rate 2 --read-fraction 0.5 "
                             "--percentile 99 --jobs 20000 --seed 4 --structure shared "
                             "--staleness t=0:0.9".split())
    law = stats.expon(scale=0.9)
    plan = plan_from_args(args, law, None)
    # 2 ops per unit time on 6 nodes with 3 replicas each: 1 op per unit per node
    direct = plan_staleness(busy("shared"), parse_constraint("t=0:0.9"),
                            operations=20_000, seed=4)
    assert plan.best == direct.best
    rows = plan.rows()
    assert sum(row["best"] for row in rows) == 1 and len(rows) == 9
    np.testing.assert_allclose(plan.options.mix_percentile, direct.options.mix_percentile)


def test_the_warnings_name_faster_pairs_left_undecided():
    # 0.833 work per replica with one FIFO queue: ONE/ONE sits near 0.99 in the
    # first ms, too close to decide from 50 000 operations
    law = stats.expon(scale=1 / 1.2)
    key = key_for(3, 1.0, 0.5, "shared", read_service=law, write_service=law)
    plan = plan_staleness(key, parse_constraint("t=0:0.99"), operations=50_000, seed=0)
    assert assert_warnings_name_faster_undecided_pairs(plan, "mix_percentile") >= 1


PLAN_CONSISTENCY = ["plan-consistency", "--nodes", "6", "--replicas", "3", "--rate", "1"]


@pytest.mark.parametrize("extra, missing", [
    (["--read-fraction", "1", "--staleness", "t=10:0.999"], "no writes"),
    (["--read-fraction", "0", "--staleness", "t=10:0.999"], "no reads"),
    (["--read-fraction", "1", "--staleness", "behind=1:0.9"], "no writes"),
])
def test_a_mix_without_reads_or_writes_is_refused_before_the_run(extra, missing, capsys,
                                                                 monkeypatch):
    import sizing.staleness_planning as planning
    from forkjoin_cli.main import main

    monkeypatch.setattr(planning, "simulate_queues", None)  # any run would fail
    assert main(PLAN_CONSISTENCY + extra) == 2
    err = capsys.readouterr().err.strip()
    assert "needs both reads and writes" in err and missing in err
    assert "strictly between 0 and 1" in err and "\n" not in err


@pytest.mark.parametrize("share", [0, 1])
def test_the_planner_refuses_a_key_without_reads_or_writes(share, monkeypatch):
    import sizing.staleness_planning as planning

    monkeypatch.setattr(planning, "simulate_queues", None)
    with pytest.raises(ConfigError, match="needs both reads and writes"):
        plan_staleness(key_for(3, 0.5, share), parse_constraint("t=1:0.9"))


def test_a_run_too_short_to_measure_reads_names_a_sufficient_length():
    key = key_for(3, 1.0, 0.1)
    with pytest.raises(ConfigError, match="measured no") as caught:
        plan_staleness(key, parse_constraint("t=1:0.9"), operations=3, seed=0)
    need = int(re.search(r"at least ([\d,]+) operations", str(caught.value))
               .group(1).replace(",", ""))
    # by hand: 0.99 ** n <= 0.025 from n = 368 measured writes (0.99 ** 367 = 0.02500
    # 4 > 0.025), and writes are 0.1 of the operations, 0.9 of them after the warm-up
    assert 0.99 ** 368 <= 0.025 < 0.99 ** 367
    assert need == math.ceil(368 / (0.1 * 0.9)) == 4089
    plan = plan_staleness(key, parse_constraint("t=1:0.9"), operations=need, seed=0)
    assert (plan.options.reads > 0).all()
    assert np.isfinite(plan.options[["read_percentile", "write_percentile"]]).all().all()


def test_too_few_jobs_is_one_line_naming_jobs(capsys):
    from forkjoin_cli.main import main

    assert main(PLAN_CONSISTENCY + ["--read-fraction", "0.999", "--jobs", "500",
                                    "--staleness", "t=1:0.9"]) == 2
    err = capsys.readouterr().err.strip()
    assert "measured no" in err and "(--jobs)" in err and "\n" not in err


@pytest.mark.parametrize("command", [
    ["plan-consistency", "--nodes", "6", "--replicas", "3", "--read-fraction", "0.9",
     "--rate", "1", "--staleness", "t=1:0.9"],
    ["staleness", "--replicas", "3", "--read-quorum", "1", "--write-quorum", "1",
     "--rate", "0.5"],
    ["mix", "--nodes", "3", "--replicas", "3", "--rate", "0.5"]])
def test_write_threads_with_one_queue_is_refused_alike_by_every_command(capsys,
                                                                        command):
    """One check (forkjoin_cli.arguments.refuse_unused_write_threads), one message,
    in the three commands that take both options."""
    from forkjoin_cli.main import main

    assert main([*command, "--structure", "shared", "--write-threads", "3"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and ("--write-threads sets the mutation stage, which "
                              "--structure shared does not have") in err[0]


#: The one wording of a mix without reads or without writes
#: (sizing.staleness_planning.needs_reads_and_writes), whoever refuses it.
NEEDS_BOTH = re.compile(
    r"(?P<name>\S+) (?P<value>[01]) has no (?P<none>reads|writes), and staleness needs "
    r"both reads and writes \(a read is stale only against a write\); give (?P=name) "
    r"strictly between 0 and 1 \(e\.g\. 0\.[19]\)")


@pytest.mark.parametrize("command, name, none", [
    (PLAN_CONSISTENCY + ["--read-fraction", "1", "--staleness", "t=1:0.9"],
     "--read-fraction", "writes"),
    (["staleness", "--replicas", "3", "--all-pairs", "--rate", "1", "--write-share",
      "0"], "--write-share", "writes"),
    (["staleness", "--replicas", "3", "--all-pairs", "--rate", "1", "--write-share",
      "1"], "--write-share", "reads"),
])
def test_a_mix_without_reads_or_writes_is_refused_in_one_wording_everywhere(
        command, name, none, capsys, monkeypatch):
    import forkjoin_sim.staleness.queueing as queueing
    from forkjoin_cli.main import main

    monkeypatch.setattr(queueing, "_run", None)  # any run would fail
    assert main(command) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    found = NEEDS_BOTH.search(line)
    assert found and (found["name"], found["none"]) == (name, none)
    with pytest.raises(ConfigError) as library:
        plan_staleness(key_for(3, 0.5, 0 if none == "writes" else 1),
                       parse_constraint("t=1:0.9"))
    # the library names its own argument, in the same words
    same = NEEDS_BOTH.fullmatch(str(library.value))
    assert same and (same["name"], same["none"]) == ("write_share", none)


def test_progress_counts_the_pairs_from_before_the_run(monkeypatch):
    import sizing.staleness_planning as planning

    calls = []
    simulate = planning.simulate_queues

    def run(*args, **kwargs):
        calls.append("run")
        return simulate(*args, **kwargs)

    monkeypatch.setattr(planning, "simulate_queues", run)
    plan_staleness(key_for(2, 0.5, 0.5), parse_constraint("t=1:0.9"), operations=2_000,
                   seed=0, progress=lambda done, total: calls.append((done, total)))
    assert calls == [(0, 4), "run", (1, 4), (2, 4), (3, 4), (4, 4)]


def plan_warnings(argv, capsys):
    """The CSV rows and "warning:" lines of ``plan-consistency --staleness``."""
    import io

    import pandas as pd

    from forkjoin_cli.main import main

    assert main(PLAN_CONSISTENCY + ["--read-fraction", "0.5", "--seed", "1"] + argv) == 0
    captured = capsys.readouterr()
    rows = pd.read_csv(io.StringIO(captured.out), keep_default_na=False)
    return rows, [line for line in captured.err.splitlines()
                  if line.startswith("warning:")]


def test_a_short_run_warns_of_undecided_faster_pairs_and_of_its_length(capsys):
    rows, lines = plan_warnings(["--staleness", "t=0:0.99", "--jobs", "100"], capsys)
    assert len(lines) == 2
    undecided, short = lines
    best = rows[rows.best.astype(str) == "True"].iloc[0]
    faster = rows[(rows.verdict == "undecided")
                  & (rows.mix_percentile < best.mix_percentile)]
    listed = ", ".join(f"({r}, {w})" for r, w in zip(faster.read_quorum,
                                                  faster.write_quorum))
    assert len(faster) and undecided.startswith(
        f"warning: undecided and faster than the pick ({best.read_quorum}, "
        f"{best.write_quorum}): (R, W) = {listed};")
    need = int(re.search(r"about ([\d,]+) operations \(--jobs\) would decide",
                         undecided).group(1).replace(",", ""))
    assert need > 100
    # the run's own doubt: as many pairs as the CSV's warnings column says
    doubtful = int(re.search(r"(\d+) of 9 \(R, W\) pair\(s\) doubt the run of 100 "
                             "operations", short).group(1))
    assert doubtful == (rows.warnings != "").sum() >= 1
    assert "too narrow" in short


def test_a_long_light_run_with_a_loose_constraint_has_no_warnings(capsys):
    rows, lines = plan_warnings(["--staleness", "behind=0:0.5", "--jobs", "20000",
                                 "--structure", "shared"], capsys)
    assert lines == [] and len(rows) == 9
    assert (rows.warnings == "").all() and (rows.verdict == "meets").all()


@pytest.mark.parametrize("successes, reads, probability", [
    (27, 28, 0.99), (28, 28, 0.999), (7, 10, 0.75), (19, 20, 0.9)])
def test_the_reads_to_decide_are_where_the_interval_leaves_the_target(
        successes, reads, probability):
    from sizing.staleness_planning import _reads_to_decide

    def holds(times):
        """Whether scipy's Wilson interval holds the target with ``times`` the reads
        at the same proportion."""
        ci = stats.binomtest(successes * times, reads * times).proportion_ci(
            0.95, method="wilson")
        return ci.low <= probability <= ci.high

    need = _reads_to_decide(successes, reads, probability)
    assert need > reads and holds(1)  # undecided now
    for times in range(1, need // reads + 3):
        assert holds(times) == (reads * times < need)


def test_an_estimate_on_the_target_or_without_reads_is_never_decided():
    from sizing.staleness_planning import _reads_to_decide

    assert _reads_to_decide(9, 10, 0.9) is None
    assert _reads_to_decide(0, 0, 0.9) is None


def test_a_constraint_is_described_with_the_digits_it_was_given():
    """0.9999999 was shown as 'P(consistent 0-1 after commit) >= 1' (a probe)."""
    assert parse_constraint("t=0:0.9999999").describe().endswith(">= 0.9999999")
    assert parse_constraint("t=2.5:0.99").describe() == \
        "P(consistent 2.5-3.5 after commit) >= 0.99"
