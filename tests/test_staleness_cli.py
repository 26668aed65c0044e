"""Tests for forkjoin_cli.staleness: ``forkjoin-sim staleness``."""

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from forkjoin_cli.main import _Parser
from forkjoin_sim.nodes import SharedQueue
from forkjoin_sim.staleness.queueing import ReplicatedKey, simulate_staleness
from forkjoin_cli.staleness import (JSON_KEYS, LOAD_SESSION_KEYS, NO_LOAD_KEYS,
                                    SESSION_KEYS, register)


def run(argv):
    """``forkjoin-sim`` with only this command, as ``cli.main`` runs plugins."""
    parser = _Parser(prog="forkjoin-sim")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    errors = register(sub)
    args = parser.parse_args(argv)
    try:
        return args.handler(args)
    except errors as exc:
        print(f"forkjoin-sim {args.command}: error: {exc}")
        return 2


BASE = ["staleness", "--replicas", "3", "--rate", "1", "--jobs", "20000", "--seed", "3"]


def test_json_equals_the_api_and_documents_its_keys(capsys):
    assert run(BASE + ["--read-quorum", "1", "--write-quorum", "2", "--structure",
                       "shared", "--read-service", "exp:0.6", "--write-service",
                       "exp:0.6", "--json"]) == 0
    (summary,) = json.loads(capsys.readouterr().out)
    key = ReplicatedKey(3, 1.0, 0.5, node=SharedQueue(), read_service=stats.expon(scale=0.6),
                        write_service=stats.expon(scale=0.6))
    api = simulate_staleness(key, 1, 2, 20_000, seed=3)
    assert summary["stale"] == pytest.approx(api.stale()[0])
    assert summary["reads"] == api.reads
    assert summary["utilisation"] == pytest.approx(0.6, abs=0.03)
    documented = {name.strip() for key in JSON_KEYS for name in key.split(",")}
    assert set(summary) == documented


def test_keys_and_popularity_reach_the_model(capsys):
    assert run(BASE + ["--read-quorum", "1", "--write-quorum", "1", "--keys", "20",
                       "--zipf", "0.99", "--read-service", "exp:0.6",
                       "--write-service", "exp:0.6", "--json"]) == 0
    (summary,) = json.loads(capsys.readouterr().out)
    key = ReplicatedKey(3, 1.0, 0.5, read_service=stats.expon(scale=0.6),
                        write_service=stats.expon(scale=0.6), keys=20, zipf=0.99)
    api = simulate_staleness(key, 1, 1, 20_000, seed=3)
    assert (summary["keys"], summary["zipf"]) == (20, 0.99)
    assert summary["stale"] == pytest.approx(api.stale()[0])
    one = simulate_staleness(ReplicatedKey(3, 1.0, 0.5, read_service=stats.expon(scale=0.6),
                                           write_service=stats.expon(scale=0.6)),
                             1, 1, 20_000, seed=3)
    assert summary["stale_high"] < one.stale()[1]


def test_csv_has_a_row_per_rate_and_pair_and_a_figure(tmp_path, capsys):
    out, figure = tmp_path / "s.csv", tmp_path / "s.png"
    assert run(BASE[:4] + ["0.3,0.8"] + BASE[5:] + ["--all-pairs", "--out", str(out),
                                                    "--figure", str(figure)]) == 0
    table = pd.read_csv(out)
    assert len(table) == 2 * 9
    strict = table.read_quorum + table.write_quorum > 3
    assert np.all(table.stale[strict] == 0)
    assert np.all(table.stale[~strict] > 0)
    assert {"visible_0", "visible_0_low", "k_2", "read_p99", "write_p99_high"} <= set(table)
    assert figure.stat().st_size > 10_000
    assert "P(stale)" in capsys.readouterr().out


def _no_work(monkeypatch):
    """Any simulation fails while the test runs. The planner is imported first: a
    first import under the patch would bind None for the rest of the session (a
    test that ran the planner after this one then failed, by the order of tests)."""
    import forkjoin_sim.staleness.queueing as queueing
    import sizing.staleness_planning as planning

    for module in (queueing, planning):
        monkeypatch.setattr(module, "simulate_queues", None)


@pytest.mark.parametrize("extra, message", [
    (["--read-quorum", "4", "--write-quorum", "1"], "--read-quorum 4 is outside 1..N=3"),
    (["--read-quorum", "1", "--write-quorum", "0"], "--write-quorum 0 is outside"),
    (["--read-quorum", "1"], "give --read-quorum R and --write-quorum W"),
    (["--all-pairs", "--read-service", "exp:2.5"], "unstable"),
    (["--all-pairs", "--delay-w", "mix:0.5*exp;0.6*exp"], "sum"),
    (["--all-pairs", "--out", "results.txt"], "must end in .csv or .json"),
    (["--all-pairs", "RATE", "1e-300"], "too coarse"),
])
def test_bad_input_is_one_line_before_any_work(extra, message, capsys, tmp_path,
                                               monkeypatch):
    monkeypatch.chdir(tmp_path)
    _no_work(monkeypatch)
    argv = BASE + extra
    if "RATE" in extra:  # this case replaces the rate of BASE
        argv = BASE[:4] + [extra[2]] + BASE[5:] + extra[:1]
    assert run(argv) == 2
    out = capsys.readouterr().out.strip()
    assert message in out and "\n" not in out


def test_unwritable_output_is_refused_before_any_work(tmp_path, capsys, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    _no_work(monkeypatch)
    assert run(BASE + ["--all-pairs", "--out", str(blocker / "s.csv")]) == 2
    assert "not a directory" in capsys.readouterr().out


def test_usage_errors_exit_2():
    with pytest.raises(SystemExit) as exc:
        run(BASE + ["--all-pairs", "--t-grid", "2,1"])
    assert exc.value.code == 2


def test_closed_loop_clients(capsys):
    argv = ["staleness", "--replicas", "3", "--read-quorum", "2", "--write-quorum", "2",
            "--clients", "4", "--think", "exp:2", "--jobs", "3000", "--json"]
    assert run(argv) == 0
    (summary,) = json.loads(capsys.readouterr().out)
    assert summary["rate"] is None and summary["throughput"] > 0
    assert summary["stale"] == 0
    assert run(argv[:-1] + ["--rate", "1"]) == 2
    assert "not both" in capsys.readouterr().out


def test_a_bare_think_mean_is_an_exponential_think_time(capsys):
    """``--think 2`` means what it means in simulate (mean 2, exponential): the same
    numbers as ``--think exp:2``; a negative mean is one line, exit 2."""
    argv = ["staleness", "--replicas", "3", "--read-quorum", "1", "--write-quorum", "1",
            "--clients", "4", "--jobs", "3000", "--json", "--think"]
    assert run(argv + ["exp:2"]) == 0
    spec = json.loads(capsys.readouterr().out)
    assert run(argv + ["2"]) == 0
    assert json.loads(capsys.readouterr().out) == spec
    assert run(argv + ["-2"]) == 2
    out = capsys.readouterr().out.strip()
    assert len(out.splitlines()) == 1 and "--think -2" in out
    # a fixed think time, as the help's example writes it (once refused): clients
    # cycle more regularly, at about the throughput of the same mean (4 / (2 + R))
    assert run(argv + ["deterministic:2"]) == 0
    fixed = json.loads(capsys.readouterr().out)[0]
    assert run(argv + ["det:2"]) == 0
    assert json.loads(capsys.readouterr().out)[0] == fixed
    exponential = spec[0]
    assert fixed["throughput"] == pytest.approx(exponential["throughput"], rel=0.1)
    assert fixed != exponential


def test_more_clients_than_the_run_can_serve_is_refused_before_any_work(capsys,
                                                                      monkeypatch):
    import forkjoin_sim.staleness.queueing as queueing

    monkeypatch.setattr(queueing, "simulate_closed", None)  # any work would fail
    assert run(["staleness", "--replicas", "3", "--all-pairs", "--clients", "100000",
                "--jobs", "2000"]) == 2
    out = capsys.readouterr().out.strip()
    assert "--jobs >= 1,000,000 or fewer clients" in out and "\n" not in out


def test_versions_as_a_user_types_them(capsys):
    assert run(BASE + ["--read-quorum", "1", "--write-quorum", "1", "--versions",
                       "1,2,5", "--json"]) == 0
    (summary,) = json.loads(capsys.readouterr().out)
    rows = summary["k_staleness"]
    assert [row["k"] for row in rows] == [1, 2, 5]
    assert rows[0]["probability"] <= rows[1]["probability"] <= rows[2]["probability"]


NO_LOAD = ["staleness", "--replicas", "3", "--read-quorum", "1", "--write-quorum", "1",
           "--profile", "LNKD-SSD", "--t-grid", "0,5", "--json"]


def test_fifo_through_one_coordinator_never_reads_stale_and_independent_is_pbs(capsys):
    """Done-when of issue 28: N=3, R=W=1, no load. Through one coordinator on FIFO
    channels every read request follows the write's, so no read started after the
    commit is stale; with independent channels the run is PBS's WARS: the trials of
    ``simulate_wars`` (same seed), and PBS's published 97.4% consistent at commit
    (LNKD-SSD, Section 5.6; the published value is rounded to 0.0005)."""
    from forkjoin_sim.staleness.profiles import profile
    from forkjoin_sim.staleness.wars import simulate_wars

    assert run(NO_LOAD + ["--channels", "fifo", "--coordinators", "one"]) == 0
    (fifo,) = json.loads(capsys.readouterr().out)
    assert (fifo["channels"], fifo["coordinators"], fifo["nodes"]) == ("fifo", "one", 4)
    assert fifo["stale"] == 0 and all(row["stale"] == 0 for row in fifo["visibility"])
    assert fifo["trials"] == 200_000

    assert run(NO_LOAD + ["--channels", "independent", "--coordinators", "one"]) == 0
    (wars,) = json.loads(capsys.readouterr().out)
    pbs = simulate_wars(profile("LNKD-SSD"), 3, 1, 1, trials=200_000, seed=0)
    consistent = pbs.consistency([0.0, 5.0])
    assert [1 - row["stale"] for row in wars["visibility"]] == pytest.approx(
        list(consistent.probability), abs=1e-12)
    half_width = (wars["stale_high"] - wars["stale_low"]) / 2
    assert abs(1 - wars["stale"] - 0.974) <= half_width + 5e-4
    # "over 99.999% consistent after five milliseconds": P(stale) at 5 ms <= 1e-5
    assert wars["visibility"][1]["low"] <= 1e-5 < wars["visibility"][0]["low"]
    assert (wars["read_level"], wars["write_level"]) == ("ONE", "ONE")
    documented = {name.strip() for key in NO_LOAD_KEYS for name in key.split(",")}
    assert set(wars) == documented


def test_default_channels_and_coordinators_are_independent_and_one(capsys):
    assert run(NO_LOAD) == 0
    (default,) = json.loads(capsys.readouterr().out)
    assert run(NO_LOAD + ["--channels", "independent", "--coordinators", "one"]) == 0
    assert json.loads(capsys.readouterr().out) == [default]


def test_sessions_per_pair_with_levels_a_figure_and_a_csv(capsys, tmp_path):
    """Through another coordinator a session can miss its own write; the figure and
    the CSV are written."""
    figure, out = tmp_path / "ryw.png", tmp_path / "ryw.csv"
    argv = ["staleness", "--replicas", "3", "--all-pairs", "--session",
            "read-your-writes", "--coordinators", "random", "--session-gap", "exp:1",
            "--jobs", "20000", "--figure", str(figure), "--out", str(out), "--json"]
    assert run(argv) == 0
    summaries = json.loads(capsys.readouterr().out)
    assert len(summaries) == 9
    documented = {name.strip() for key in SESSION_KEYS for name in key.split(",")}
    for s in summaries:
        assert set(s) == documented
        assert s["sessions"] == 20_000 == sum(row["sessions"] for row in s["by_gap"])
        if s["read_quorum"] + s["write_quorum"] > 3:  # strict quorums always overlap
            assert s["violations"] == 0
        else:
            assert s["low"] > 0
    two = next(s for s in summaries if s["read_quorum"] == 2)
    assert two["read_level"] == "TWO/QUORUM"
    assert figure.stat().st_size > 10_000
    assert len(pd.read_csv(out)) == 9

    assert run(["staleness", "--replicas", "3", "--all-pairs", "--session",
                "read-your-writes", "--channels", "fifo", "--coordinators", "one",
                "--session-gap", "exp:1", "--jobs", "20000", "--json"]) == 0
    assert all(s["violations"] == 0 for s in json.loads(capsys.readouterr().out))


@pytest.mark.parametrize("extra, message", [
    (["--clients", "2", "--session", "monotonic-reads", "--session-gap", "1"],
     "under load the pause of --session monotonic-reads is --session-think"),
    (["--rate", "1", "--session-think", "1"], "add --session read-your-writes"),
    (["--rate", "1", "--nodes", "2"], "use --nodes >= 3"),
    (["--session-gap", "1"], "add --session read-your-writes|monotonic-reads"),
    (["--session", "read-your-writes", "--session-gap", "-1"], "must be a time >= 0"),
    (["--keys", "5"], "--keys describes the run under load"),
    (["--session", "read-your-writes", "--session-think", "1"],
     "--session-think is the pause between the two reads"),
    (["--session", "monotonic-reads", "--session-think", "-2"], "must be a time >= 0"),
    (["--nodes", "2"], "use --nodes >= 3"),
    (["--rate", "0.5", "--session", "read-your-writes", "--write-share", "0"],
     "--write-share 0 has no writes, and staleness needs both"),
    (["--clients", "3", "--session", "monotonic-reads", "--write-share", "1"],
     "--write-share 1 has no reads, and staleness needs both"),
    # mixes that measure nothing: refused, not reported as n/a after the run
    (["--rate", "0.5", "--write-share", "0"], "--write-share 0 has no writes"),
    (["--clients", "2", "--write-share", "1"], "--write-share 1 has no reads"),
    # options that would do nothing
    (["--profile", "LNKD-SSD", "--delay-w", "exp:50"],
     "--profile LNKD-SSD sets all four message delays, so --delay-w would do nothing"),
    (["--rate", "0.5", "--profile", "YMMR", "--delay-a", "exp:1", "--delay-s", "exp:1"],
     "so --delay-a, --delay-s would do nothing; leave them out"),
    (["--rate", "0.5", "--structure", "shared", "--write-threads", "7"],
     "--structure shared does not have (one queue served by --read-threads threads)"),
    (["--rate", "0.5", "--zipf", "5"], "with --keys 1 there is one key"),
    (["--rate", "0.5", "--session", "read-your-writes", "--versions", "2"],
     "so --versions would do nothing"),
    (["--session", "monotonic-reads", "--percentiles", "50"],
     "so --percentiles would do nothing"),
    (["--delay-w", "netem:1:2"], "jitter 2 exceeds mean 1"),
])
def test_bad_combinations_are_one_line(extra, message, capsys, monkeypatch):
    import forkjoin_sim.staleness.channels as channels
    import forkjoin_sim.staleness.queueing as queueing

    monkeypatch.setattr(channels, "simulate_wars_ordered", None)  # any work would fail
    monkeypatch.setattr(queueing, "_run", None)
    assert run(["staleness", "--replicas", "3", "--read-quorum", "1", "--write-quorum",
                "1", "--jobs", "1000"] + extra) == 2
    out = capsys.readouterr().out.strip()
    assert message in out and "\n" not in out


def test_netem_delays_reach_the_no_load_run(capsys):
    """Constant delays through one coordinator that holds no replica: the write
    commits at 1 + 1, a read started at commit reaches every replica after the
    write did, so it is never stale; read latency is exactly 2."""
    assert run(["staleness", "--replicas", "3", "--read-quorum", "1", "--write-quorum",
                "1", "--jobs", "1000", "--t-grid", "0", "--json"]
               + [item for role in "wars" for item in (f"--delay-{role}", "netem:1")]) == 0
    (summary,) = json.loads(capsys.readouterr().out)
    assert summary["stale"] == 0
    assert {row["read"] for row in summary["latency"]} == {2.0}
    assert {row["write"] for row in summary["latency"]} == {2.0}


def test_more_nodes_make_a_random_coordinator_a_replica_less_often(capsys):
    """R = W = 1, every delay 1, a read at the commit, random coordinators (each of
    the operation's two coordinators uniform over the nodes; replicas 0, 1, 2).

    A writer that is a replica commits at 0 (its own ack), the other replicas get
    the write at 1; a read through another replica answers at once from itself, old:
    violated. Any other case is new: a reader that is the writer answers from
    itself; a non-replica reader's requests arrive at 1, with the write; a writer
    that is not a replica commits at 2, after every replica has the write.
    So P(violated) = P(writer a replica) * P(reader another replica):
    3 nodes: 1 * 2/3; 30 nodes: 3/30 * 2/30 = 1/150.
    """
    base = ["staleness", "--replicas", "3", "--read-quorum", "1", "--write-quorum",
            "1", "--session", "read-your-writes", "--coordinators", "random",
            "--jobs", "40000", "--json"] + [item for role in "wars" for item in
                                            (f"--delay-{role}", "netem:1")]
    for nodes, expected in ((3, 2 / 3), (30, 1 / 150)):
        assert run(base + ["--nodes", str(nodes)]) == 0
        (summary,) = json.loads(capsys.readouterr().out)
        assert summary["nodes"] == nodes
        assert summary["low"] <= expected <= summary["high"]


def test_session_think_reaches_monotonic_reads(capsys):
    """The exact case of tests/test_staleness_sessions.py through the command:
    N = 2, R = W = 1, token-aware, write delay 2, others 1, first read 0.5 after
    the write's start; the second read is old iff through the other replica and
    0.5 + think < 2, so P(violated) = 1/4 for think 1 and 0 for think 1.5."""
    base = ["staleness", "--replicas", "2", "--read-quorum", "1", "--write-quorum",
            "1", "--session", "monotonic-reads", "--coordinators", "token-aware",
            "--session-gap", "0.5", "--delay-w", "netem:2", "--delay-a", "netem:1",
            "--delay-r", "netem:1", "--delay-s", "netem:1", "--jobs", "40000", "--json"]
    assert run(base + ["--session-think", "1"]) == 0
    (summary,) = json.loads(capsys.readouterr().out)
    assert summary["low"] <= 0.25 <= summary["high"]
    assert run(base + ["--session-think", "1.5"]) == 0
    (summary,) = json.loads(capsys.readouterr().out)
    assert summary["violations"] == 0


LOADED = ["staleness", "--replicas", "3", "--read-quorum", "1", "--write-quorum", "1",
          "--rate", "0.8", "--read-service", "exp:0.5", "--write-service", "exp:0.5",
          "--jobs", "20000", "--seed", "2", "--json"]


def test_channels_and_coordinators_under_load(capsys):
    """Under load too: FIFO through one coordinator with one shared FIFO queue never
    reads stale; independent channels do; the options reach the JSON."""
    shared = LOADED + ["--structure", "shared"]
    assert run(shared + ["--channels", "fifo"]) == 0
    (fifo,) = json.loads(capsys.readouterr().out)
    assert (fifo["channels"], fifo["coordinators"], fifo["nodes"]) == ("fifo", "one", 4)
    assert fifo["stale"] == 0 and fifo["reads"] > 8000
    assert run(shared) == 0
    (independent,) = json.loads(capsys.readouterr().out)
    assert independent["stale_low"] > 0
    assert run(LOADED + ["--coordinators", "token-aware"]) == 0
    (token,) = json.loads(capsys.readouterr().out)
    assert (token["coordinators"], token["nodes"]) == ("token-aware", 3)
    # a local replica answers without a hop: faster reads than through a fourth node
    assert run(LOADED) == 0
    (one,) = json.loads(capsys.readouterr().out)
    assert token["latency"][0]["read_high"] < one["latency"][0]["read_low"]


def test_sessions_under_load_per_pair(capsys):
    argv = ["staleness", "--replicas", "3", "--all-pairs", "--clients", "8", "--think",
            "exp:1", "--session", "read-your-writes", "--session-gap", "exp:0.5",
            "--read-service", "exp:0.3", "--write-service", "exp:0.3", "--jobs", "8000",
            "--json"]
    assert run(argv) == 0
    summaries = json.loads(capsys.readouterr().out)
    assert len(summaries) == 9
    documented = {name.strip() for key in LOAD_SESSION_KEYS for name in key.split(",")}
    for s in summaries:
        assert set(s) == documented
        assert s["rate"] is None and s["throughput"] > 0
        assert s["sessions"] == sum(row["sessions"] for row in s["by_gap"]) > 3000
        if s["read_quorum"] + s["write_quorum"] > 3:
            assert s["violations"] == 0
    one = next(s for s in summaries if s["read_quorum"] == s["write_quorum"] == 1)
    assert one["low"] > 0
    assert run(argv[:-1]) == 0
    assert "P(read-your-writes violated)" in capsys.readouterr().out


def test_sessions_under_load_write_a_figure_and_a_csv(capsys, tmp_path):
    figure, out = tmp_path / "mr.png", tmp_path / "mr.csv"
    assert run(["staleness", "--replicas", "3", "--read-quorum", "1", "--write-quorum",
                "1", "--rate", "0.5,1", "--session", "monotonic-reads",
                "--session-think", "exp:1", "--read-service", "exp:0.3",
                "--write-service", "exp:0.3", "--jobs", "5000", "--figure", str(figure),
                "--out", str(out)]) == 0
    table = pd.read_csv(out)
    assert list(table.rate) == [0.5, 1.0] and set(table.session) == {"monotonic-reads"}
    assert figure.stat().st_size > 10_000


@pytest.mark.parametrize("load", [[], ["--rate", "0.5"]])
def test_percentile_100_is_refused_at_parse_time_in_both_modes(load, capsys,
                                                               monkeypatch):
    import forkjoin_sim.staleness.channels as channels
    import forkjoin_sim.staleness.queueing as queueing

    monkeypatch.setattr(channels, "simulate_wars_ordered", None)  # any work would fail
    monkeypatch.setattr(queueing, "_run", None)
    with pytest.raises(SystemExit) as exc:
        run(["staleness", "--replicas", "3", "--read-quorum", "1", "--write-quorum", "1",
             "--percentiles", "50,100"] + load)
    assert exc.value.code == 2
    assert "give percentiles below 100" in capsys.readouterr().err


def test_keys_and_zipf_together_still_run(capsys):
    assert run(BASE + ["--read-quorum", "1", "--write-quorum", "1", "--keys", "5",
                       "--zipf", "2", "--structure", "shared", "--read-threads", "2",
                       "--json"]) == 0
    (summary,) = json.loads(capsys.readouterr().out)
    assert (summary["keys"], summary["zipf"], summary["structure"]) == (5, 2.0, "shared")


def summaries_and_warnings(argv, capsys):
    from forkjoin_sim.checks import warnings_after_success

    with warnings_after_success():  # as forkjoin_cli.main runs a command
        assert run(argv) == 0
    captured = capsys.readouterr()
    return json.loads(captured.out), [line for line in captured.err.splitlines()
                                      if line.startswith("warning:")]


def test_a_nearly_saturated_short_run_warns_and_says_how_long_it_should_be(capsys):
    # utilisation 0.995 of the mutation stage: the latency batch means are strongly
    # autocorrelated, so simulate's convergence check fires and asks for more jobs
    argv = ["staleness", "--replicas", "3", "--read-quorum", "1", "--write-quorum", "1",
            "--rate", "1.99", "--jobs", "2000", "--seed", "1", "--json"]
    (summary,), lines = summaries_and_warnings(argv, capsys)
    assert summary["utilisation"] > 0.95
    assert any("lag-1 autocorrelation" in note for note in summary["warnings"])
    (line,) = lines
    need = int(line.split("about --jobs ")[1].split()[0].replace(",", ""))
    assert need > 100 * 2000 and "intervals printed are too narrow" in line
    # and near saturation is said, once (a review: 50 closed-loop clients at 99.5%
    # gave P(stale) 0.455 and 0.471 at 200,000 and 800,000 operations, unwarned)
    assert any(note.startswith("the busiest stage is busy 98") for note in
               summary["warnings"])
    assert line.count("the busiest stage is busy") == 1


def test_a_saturated_closed_loop_is_named(capsys):
    argv = ["staleness", "--replicas", "3", "--read-quorum", "1", "--write-quorum", "1",
            "--clients", "50", "--jobs", "20000", "--seed", "1", "--json"]
    (summary,), lines = summaries_and_warnings(argv, capsys)
    assert summary["utilisation"] > 0.95
    (line,) = lines
    assert "so near saturation the queues drift" in line


def test_a_light_long_run_has_no_warnings(capsys):
    argv = ["staleness", "--replicas", "3", "--all-pairs", "--rate", "0.5", "--jobs",
            "20000", "--seed", "2", "--json"]
    summaries, lines = summaries_and_warnings(argv, capsys)
    assert len(summaries) == 9 and lines == []
    assert all(s["warnings"] == [] for s in summaries)


def test_a_heavy_tailed_service_law_is_named_in_the_warnings(capsys):
    """--read-service pareto:2.5 has an infinite third moment: the warnings say so,
    naming the law, as simulate's do (forkjoin_sim.system.heavy_tail_note); the
    exponential write service says nothing."""
    argv = ["staleness", "--replicas", "3", "--read-quorum", "1", "--write-quorum", "1",
            "--rate", "0.5", "--read-service", "pareto:2.5", "--jobs", "2000", "--seed",
            "1", "--json"]
    (summary,), lines = summaries_and_warnings(argv, capsys)
    (note,) = [n for n in summary["warnings"] if "third moment" in n]
    assert note.startswith("the read service law, pareto(b=2.5, mean=1), has an "
                           "infinite third moment (a heavy tail)")
    assert len(lines) == 1 and note in lines[0]


def test_a_run_too_short_for_its_load_says_so_as_simulate_does(capsys):
    """Rate 1.8, half writes: each replica's read and mutation stages are M/M/1
    queues at load 0.9 (relaxation time 1/(1 - sqrt(0.9))^2, about 380 services).
    5,000 operations give each stage about 2,500 services, fewer than simulate's 10
    relaxation times: the run says its latencies and staleness are biased low and
    asks for 7,595 operations, the very check simulate makes of a node at load 0.9
    given 2,500 tasks. 20,000 operations (10,000 a stage) pass that check."""
    from forkjoin_sim.model import ForkJoinModel
    from forkjoin_sim.simulation import simulate

    argv = ["staleness", "--replicas", "3", "--read-quorum", "1", "--write-quorum", "1",
            "--rate", "1.8", "--seed", "1", "--json", "--jobs"]
    (summary,), lines = summaries_and_warnings(argv + ["5000"], capsys)
    (note,) = [n for n in summary["warnings"] if "relaxation time" in n]
    assert note.startswith("the busiest stage is loaded 0.9: a queue this loaded "
                           "forgets its start over about 380 services")
    assert "each stage about 2,500: its latencies and staleness are biased low" in note
    assert note.endswith("run at least 7,595 operations (--jobs)")
    assert len(lines) == 1 and note in lines[0]
    (simulated,) = [w for w in simulate(ForkJoinModel(1, 1, 1, load=0.9), jobs=2500,
                                        seed=1).warnings if "relaxation time" in w]
    assert simulated.split(", and this run")[0] == note.split(", and this run")[0] \
        .replace("stage", "node")
    (summary,), _ = summaries_and_warnings(argv + ["20000"], capsys)
    assert not any("relaxation time" in n for n in summary["warnings"])


def test_warnings_reach_session_runs_and_csv(tmp_path, capsys):
    out = tmp_path / "s.csv"
    argv = ["staleness", "--replicas", "3", "--read-quorum", "1", "--write-quorum", "1",
            "--rate", "0.98", "--session", "read-your-writes", "--jobs", "2000",
            "--seed", "3", "--json", "--out", str(out)]
    # every write is followed by a read: the read stage is busy 0.98 of the time
    (summary,), lines = summaries_and_warnings(argv, capsys)
    assert summary["utilisation"] > 0.95 and len(lines) == 1
    assert any(note.startswith("read latency: batch means lag-1")
               for note in summary["warnings"])
    assert pd.read_csv(out).warnings[0] == "; ".join(summary["warnings"])


@pytest.mark.parametrize("load", [[], ["--rate", "0.5"]])
def test_a_progress_bar_counts_the_pairs(load, capsys, monkeypatch):
    import forkjoin_sim.run

    monkeypatch.setattr(forkjoin_sim.run, "PROGRESS_DELAY", 0.0)  # the bar draws at once
    monkeypatch.setenv(forkjoin_sim.run.PROGRESS_ENV, "1")  # captured stderr: no terminal
    assert run(["staleness", "--replicas", "2", "--all-pairs", "--jobs", "500",
                "--t-grid", "0"] + load) == 0
    err = capsys.readouterr().err
    assert "/4" in err and "pair" in err


@pytest.mark.parametrize("spaced, joined", [
    (["--t-grid", "-1,2"], ["--t-grid=-1,2"]),
    (["--t-grid", "-.5"], ["--t-grid=-.5"]),
    (["--rate", "-1,2"], ["--rate=-1,2"])])
def test_a_negative_list_after_a_space_is_refused_as_after_an_equals_sign(
        spaced, joined, capsys):
    """argparse took "-1,2" for an unknown option ("expected one argument")."""
    from forkjoin_cli.main import main

    errors = []
    for values in (spaced, joined):
        assert main(["staleness", "--replicas", "3", "--all-pairs", *values]) == 2
        errors.append(capsys.readouterr().err)
    assert errors[0] == errors[1]
    (line,) = errors[0].strip().splitlines()
    option = spaced[0]
    assert f"argument {option}: {option} -" in line and "must be >" in line


def test_a_share_too_small_for_the_run_is_refused_before_it(capsys):
    """--write-share 1e-17 ran and warned that 0 reads were measured; the run is now
    refused, saying how many operations would do."""
    argv = ["staleness", "--replicas", "3", "--read-quorum", "1", "--write-quorum", "1",
            "--rate", "0.5"]
    assert run(argv + ["--write-share", "0.001", "--jobs", "5000"]) == 2
    out = capsys.readouterr().out.strip()
    assert len(out.splitlines()) == 1 and "about 5 writes" in out
    assert "give --jobs 10,000 or more" in out
    assert run(argv + ["--write-share", "1e-17"]) == 2
    assert "further from 0 and 1" in capsys.readouterr().out


def test_a_heavy_tailed_message_delay_is_taken(capsys):
    """PBS's LNKD-DISK write delay (a Pareto of ALPHA 1.51 in a mixture) as --delay-w:
    refused before as a service time would be; a delay only needs a finite mean."""
    assert run(["staleness", "--replicas", "3", "--read-quorum", "1", "--write-quorum",
                "1", "--jobs", "2000", "--delay-w",
                "mix:0.38*pareto:1.51,scale=1.05;0.62*exp:rate=0.183"]) == 0
    assert run(["staleness", "--replicas", "3", "--read-quorum", "1", "--write-quorum",
                "1", "--rate", "0.5", "--read-service", "pareto:1.51"]) == 2
    assert "use ALPHA > 2" in capsys.readouterr().out


def test_the_reports_name_the_coordinator_rule(capsys):
    """The footers of the no-load and session tables name the coordinator rule
    ("coordinators random"), not a count ("random coordinator(s)")."""
    common = ["staleness", "--replicas", "3", "--read-quorum", "1", "--write-quorum",
              "1", "--jobs", "2000", "--coordinators", "random"]
    assert run([*common, "--t-grid", "0,1"]) == 0
    footer = capsys.readouterr().out.strip().splitlines()[-1]
    assert footer == "(P(stale) of a read started t after commit; independent " \
        "channels, coordinators random, 2,000 trials)"
    assert run([*common, "--session", "read-your-writes"]) == 0
    footer = capsys.readouterr().out.strip().splitlines()[-1]
    assert footer == "(independent channels, coordinators random, 2,000 sessions)"


def test_the_text_table_shows_the_highest_percentile_asked(capsys):
    """With --percentiles 50,90 the table's latency columns were p99 and 'n/a'; they
    are the highest asked (p99 when asked, as by default)."""
    argv = ["staleness", "--replicas", "3", "--read-quorum", "1", "--write-quorum", "1",
            "--rate", "1", "--jobs", "3000"]
    assert run(argv + ["--percentiles", "50,90"]) == 0
    head, row = capsys.readouterr().out.splitlines()[:2]
    assert head.split()[-4:] == ["read", "p90", "write", "p90"]
    assert "n/a" not in row
    assert run(argv) == 0
    assert capsys.readouterr().out.splitlines()[0].split()[-4:] == ["read", "p99",
                                                                    "write", "p99"]

