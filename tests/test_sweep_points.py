"""Sweep points: a value no point can take is a spec error, a combination is a skip."""

import pytest

from forkjoin_cli import main as cli
from forkjoin_sim.errors import ConfigError
from forkjoin_sim.sweep import points as sweep_points

BASE = {"nodes": 5, "replicas": 3, "quorum": 1, "rho": 0.3, "jobs": 200}


@pytest.mark.parametrize("key, values, message", [
    ("service", ["exp", "empirical:no-such-latencies.txt"],
     "sweep key 'service': no-such-latencies.txt: no such file"),
    ("placement", ["random", "rnig"], "sweep key 'placement': placement 'rnig' is "
                                      "unknown; use one of random, ring"),
    ("engine", ["fast", "fsat"], "sweep key 'engine': engine 'fsat' is unknown; use "
                                 "one of auto, fast, simpy"),
    ("engine", ["fast", "fused"], "sweep key 'engine': engine 'fused' is not a sweep "
                                  "engine; use engine = 'auto'"),
    ("speeds", ["1,1,1,1,1", "bogus"], "sweep key 'speeds': speeds 'bogus' is not "
                                       "understood"),
    ("speeds", ["1,1,1,1,1", "1,1,0,1,1"], "sweep key 'speeds': speeds '1,1,0,1,1'"),
    ("speeds", ["slow:x:0.5"], "sweep key 'speeds': speeds 'slow:x:0.5' is not "
                               "understood"),
    ("speeds", ["stragglers:0.2:-1"], "sweep key 'speeds': straggler speed -1.0"),
    # a TOML list of factors is an axis of numbers, not one point's speeds (it crashed
    # on .strip() of an int, a review found)
    ("speeds", [1, 1, 0.5, 1, 1], "sweep key 'speeds' takes one text of a factor per "
                                  "node, e.g. \"1,1,0.5\""),
    ("mu", [1, -1], r"sweep key 'mu': mu=-1 must be a positive number"),
    ("rho", [0.3, 0], "sweep key 'rho': rho=0 must be a positive finite number"),
    ("nodes", [5, 0], "sweep key 'nodes': nodes=0 must be at least 1"),
    ("quorum", [1, 0], "sweep key 'quorum': quorum=0 must be at least 1"),
])
def test_a_value_no_point_can_take_is_refused_naming_key_and_value(key, values,
                                                                   message):
    """Each of these was skipped with a note and the sweep exited 0 with fewer rows."""
    with pytest.raises(ConfigError, match=message):
        sweep_points.expand({**BASE, key: values})


@pytest.mark.parametrize("closed, message", [
    ({"clients": [2, 0]}, "sweep key 'clients': clients must be a whole number >= 1, "
                          "got 0"),
    ({"clients": 2, "think": [1.0, -1.0]}, "sweep key 'think': think time must be a "
                                           "finite number >= 0, got -1.0"),
])
def test_closed_loop_values_are_checked_alone(closed, message):
    spec = {k: v for k, v in BASE.items() if k != "rho"}
    with pytest.raises(ConfigError, match=message):
        sweep_points.expand({**spec, **closed})


def test_a_bad_value_inside_an_explicit_point_names_the_point():
    spec = {**BASE, "points": [{"quorum": 2}, {"placement": ["random", "rnig"]}]}
    with pytest.raises(ConfigError, match=r"sweep key 'placement' in points\[1\]"):
        sweep_points.expand(spec)


def test_an_explicit_point_impossible_as_written_is_refused():
    """quorum = 4 beside replicas = 3 can never run: it was a note and a missing row."""
    spec = {**BASE, "points": [{"quorum": 2}, {"quorum": 4}]}
    with pytest.raises(ConfigError, match=r"points\[1\] \(.*quorum=4.*\) cannot run: "
                                          r"quorum k=4 must satisfy 1 <= k <= replicas "
                                          r"r=3; use 1 <= k <= 3"):
        sweep_points.expand(spec)


def test_an_explicit_grid_with_some_runnable_combinations_skips_the_rest():
    spec = {**BASE, "points": [{"quorum": 2}, {"replicas": [3, 5], "quorum": 4}]}
    points, notes = sweep_points.expand(spec)
    assert [(p["replicas"], p["quorum"]) for p in points] == [(3, 2), (5, 4)]
    assert len(notes) == 1 and "skipped" in notes[0] and "quorum k=4" in notes[0]


def test_combinations_of_valid_values_are_still_skipped_with_a_note():
    """k > r from different lists, speeds for another node count, an unstable load for
    one node count: each value runs somewhere in the grid, so the rest is a note."""
    points, notes = sweep_points.expand({
        "nodes": [3, 5], "replicas": [2, 3], "quorum": [1, 3], "arrival_rate": 1.2,
        "speeds": ["1,1,1", "1,1,1,1,1"], "jobs": 200})
    kept = {(p["nodes"], p["replicas"], p["quorum"], p["speeds"]) for p in points}
    assert kept == {(3, 2, 1, "1,1,1"), (5, 2, 1, "1,1,1,1,1"),
                    (5, 3, 1, "1,1,1,1,1"), (5, 3, 3, "1,1,1,1,1")}
    assert len(notes) == 16 - 4
    assert any("quorum k=3" in n for n in notes)
    assert any("gives 3 factor(s) for 5 nodes" in n for n in notes)
    assert any("unstable load" in n for n in notes)


def test_a_readable_latency_file_in_a_list_is_taken(tmp_path):
    latencies = tmp_path / "latencies.txt"
    latencies.write_text("\n".join(str(0.5 + i / 100) for i in range(100)) + "\n")
    points, notes = sweep_points.expand(
        {**BASE, "service": ["exp", f"empirical:{latencies}"]})
    assert [p["service"] for p in points] == ["exp", f"empirical:{latencies}"]
    assert notes == []


@pytest.mark.parametrize("line", [
    'service = ["exp", "empirical:typo.txt"]',
    'placement = ["random", "rnig"]',
    'mu = [1, -1]',
    '[[points]]\nquorum = 2\n[[points]]\nquorum = 4',
])
def test_the_command_refuses_before_any_work_and_keeps_the_results_file(
        tmp_path, capsys, monkeypatch, line):
    monkeypatch.chdir(tmp_path)
    spec = tmp_path / "s.toml"
    spec.write_text("nodes = 5\nreplicas = 3\nquorum = 1\nrho = 0.3\njobs = 200\n"
                    + line + "\n")
    out = tmp_path / "k.csv"
    out.write_text("an earlier sweep's rows\n")
    code = cli.main(["sweep", str(spec), "--out", str(out), "--workers", "1", "--quiet"])
    captured = capsys.readouterr()
    assert code == cli.EXIT_BAD_INPUT
    errors = [text for text in captured.err.splitlines() if text.strip()]
    assert len(errors) == 1 and "error:" in errors[0] and "note:" not in captured.err
    assert out.read_text() == "an earlier sweep's rows\n"
    assert not (tmp_path / "k.csv.partial.csv").exists()


def test_an_explicit_grid_none_of_whose_combinations_can_run_is_refused():
    spec = {**BASE, "rho": [0.3, 0.6], "points": [{"quorum": 2}, {"quorum": 4}]}
    with pytest.raises(ConfigError, match=r"points\[1\] .* cannot run: quorum k=4 .*"
                                          r"\(nor can its 1 other combination\)"):
        sweep_points.expand(spec)


def test_an_empty_list_is_refused_naming_the_key():
    with pytest.raises(ConfigError, match=r"sweep key 'quorum' in points\[0\] is an "
                                          "empty list"):
        sweep_points.expand({**BASE, "points": [{"quorum": []}]})


#: Points of every kind a row can replay: named engines, a rescaled law, an arrival
#: rate (simulate takes the load it makes), closed-loop clients, uneven nodes, ring
#: placement, purging, warm-up and thinning off their defaults, two replications.
REPLAYED = {"nodes": 5, "replicas": 3, "quorum": 2, "jobs": 3000, "replications": 2,
            "seed": 11, "points": [
                {"rho": 0.6},
                {"arrival_rate": 1.7, "mu": 3.0, "service": "lognormal:0.8",
                 "engine": "fast", "sample_every": 2},
                {"clients": 4, "think": 0.5, "placement": "ring", "warmup": 0.25},
                {"rho": 0.5, "speeds": "1,1,0.5,1,1", "engine": "simpy",
                 "purging": True}]}


@pytest.fixture(scope="module")
def replayed_rows():
    from forkjoin_sim.sweep.runner import sweep

    frame = sweep(REPLAYED, backend="serial", progress=False, annotate=False)
    assert (frame["status"] == "ok").all() and len(frame) == 8
    return frame


def test_a_rows_replay_command_gives_its_numbers_alone(replayed_rows, capsys):
    """A row's seed column was the sweep's seed, which simulate --seed does not
    replay (the point drew from a SeedSequence no whole number gives); each row now
    names its run_seed and the simulate command that gives exactly its numbers."""
    import json
    import shlex

    for _, row in replayed_rows.iterrows():
        words = shlex.split(row["replay"])
        assert words[:2] == ["forkjoin-sim", "simulate"]
        assert words[-2:] == ["--seed", str(row["run_seed"])]
        assert cli.main([*words[1:], "--json"]) == 0
        alone = json.loads(capsys.readouterr().out)
        assert alone["engine"] == row["engine_ran"]
        # every statistic of the run (not its seconds, nor the point's own columns)
        compared = [c for c, v in alone.items() if c in row.index and c not in (
            *sweep_points.KEY_COLUMNS, "seconds") and isinstance(v, (int, float))
            and not isinstance(v, bool)]
        assert {"mean", "ci_low", "ci_high", "p50", "p99", "jobs_measured"} <= set(compared)
        for column in compared:
            assert alone[column] == row[column], (row["replay"], column)


def test_run_seeds_are_whole_numbers_simulate_takes_and_differ_by_point():
    from forkjoin_sim.checks import SEED_LIMIT

    points, _ = sweep_points.expand(REPLAYED)
    seeds = [sweep_points.run_seed(p) for p in points]
    assert all(isinstance(s, int) and 0 <= s < SEED_LIMIT for s in seeds)
    assert len(set(seeds)) == len(points)  # replications too are runs of their own
    again, _ = sweep_points.expand({**REPLAYED, "seed": 12})
    assert not set(seeds) & {sweep_points.run_seed(p) for p in again}
    # the point's SeedSequence is the one simulate makes of that whole number
    assert all(sweep_points.point_seed(p).entropy == s for p, s in zip(points, seeds))


def test_the_sweep_command_writes_the_replay_columns_after_the_points_identity(
        tmp_path, capsys):
    import csv

    spec = tmp_path / "spec.toml"
    spec.write_text('nodes = 5\nreplicas = 3\nquorum = [1, 2]\nrho = 0.4\njobs = 500\n'
                    'seed = 3\n')
    out = tmp_path / "out.csv"
    assert cli.main(["sweep", str(spec), "--out", str(out), "--workers", "1",
                     "--no-analytic", "--quiet"]) == 0
    with out.open(encoding="utf-8") as handle:
        header, *rows = list(csv.reader(handle))
    at = header.index("seed")
    assert header[at + 1:at + 3] == ["run_seed", "replay"]
    assert {row[at] for row in rows} == {"3"}
    assert all(row[at + 2].endswith(f"--seed {row[at + 1]}") for row in rows)


@pytest.mark.parametrize("jobs", [2000.5, 1, 0, -3])
def test_jobs_below_the_least_a_run_takes_are_refused_with_that_least(jobs):
    """`jobs = 2000.5` was told "must be one whole number >= 0", and then 0 and 1
    "jobs=1 must be a whole number >= 2": one message, with the real least (2)."""
    with pytest.raises(ConfigError) as info:
        sweep_points.expand({**BASE, "jobs": jobs})
    assert str(info.value) == (f"sweep key 'jobs' must be one whole number >= 2, got "
                               f"{jobs!r}")
    assert sweep_points.expand({**BASE, "jobs": 2})[0][0]["jobs"] == 2


@pytest.mark.parametrize("key, value, shown", [("quorum", True, "true"),
                                               ("quorum", "2", '"2"'),
                                               ("jobs", False, "false")])
def test_a_wrong_value_is_shown_as_the_toml_file_spells_it(key, value, shown):
    """`quorum = true` was told "True is not one" (Python's spelling)."""
    with pytest.raises(ConfigError) as info:
        sweep_points.expand({**BASE, key: value})
    assert f" {shown} is not one" in str(info.value) or \
        str(info.value).endswith(f"got {shown}")
    assert "True" not in str(info.value) and "False" not in str(info.value)


def test_a_grid_parses_each_service_once(monkeypatch):
    """A grid of 155,000 combinations spent 46 s parsing one service law per point
    before any ran (a fuzz); the laws are parsed once per (service, mean)."""
    import forkjoin_sim.laws.service as service_module
    from forkjoin_sim.sweep.points import expand

    calls = []
    real = service_module.parse_service

    def counting(spec, *args, **kwargs):
        calls.append(spec)
        return real(spec, *args, **kwargs)

    monkeypatch.setattr(service_module, "parse_service", counting)
    points, notes = expand({"nodes": [3, 4, 5], "replicas": [1, 2, 3],
                            "quorum": [1, 2, 3], "rho": [0.1, 0.2],
                            "service": ["exp", "lognormal:1"], "jobs": 1000})
    assert len(points) == 3 * 6 * 2 * 2 and len(notes) == 3 * 3 * 2 * 2
    # once when its axis is checked, once for the grid's points (36 each before)
    assert sorted(calls) == ["exp", "exp", "lognormal:1", "lognormal:1"]
