"""``forkjoin-sim mix`` with queued work (steps engine) against a hand-written MVA.

The network: 3 nodes, 3 replicas (every coordinator is a replica, so a read's first
replica is the coordinator's own), 4 shared cores per node, 100 closed-loop clients
with no think time, every step exponential. Per read, the work on the nodes is

- ONE: coordinator work twice (before the fork, after the join) + one data read;
- ALL: the same + two digest reads on the other nodes + 8 messages (the coordinator
  sends 2 requests and receives 2 replies, each remote replica receives 1 and sends 1).

Coordinators are uniform, so each node gets a third of that work: the MVA below is a
closed network of three identical 4-server stations with that demand (load-dependent
exact MVA, service rate min(j, 4)/demand with j jobs present).
"""

import json

import numpy as np
import pytest

from analytic.mva import mean_value_analysis
from forkjoin_cli import main as cli

NODES, CORES, CLIENTS, DATA, DIGEST = 3, 4, 100, 1.0, 1.0


def mva_throughput(demand: float, servers: int, stations: int, clients: int,
                   think: float = 0.0) -> float:
    """Exact MVA of ``stations`` identical load-dependent stations (``servers``
    exponential servers, ``demand`` of work per job each) with ``clients`` jobs."""
    marginals = [np.r_[1.0, np.zeros(clients)] for _ in range(stations)]
    throughput = 0.0
    for n in range(1, clients + 1):
        present = np.arange(1, n + 1)
        rates = np.minimum(present, servers) / demand
        residence = sum(np.sum(present / rates * p[:n]) for p in marginals)
        throughput = n / (think + residence)
        for i, p in enumerate(marginals):
            nxt = np.zeros(clients + 1)
            nxt[1:n + 1] = throughput / rates * p[:n]
            nxt[0] = 1.0 - nxt[1:].sum()
            marginals[i] = nxt
    return throughput


def demand_per_node(level: str, coordinator: float, message: float) -> float:
    one = 2 * coordinator + DATA
    return (one if level == "ONE" else one + 2 * DIGEST + 8 * message) / NODES


def simulated(capsys, level, coordinator, message, jobs=60_000, seed=3):
    status = cli.main(["mix", "--nodes", "3", "--replicas", "3", "--reads", "C",
                       "--read-consistency", level, "--clients", str(CLIENTS),
                       "--coordinator-work", f"exp:{coordinator}",
                       "--message-work", f"exp:{message}", "--cores", str(CORES),
                       "--jobs", str(jobs), "--seed", str(seed), "--json"])
    out = capsys.readouterr()
    assert status == 0, out.err
    return json.loads(out.out)


def test_hand_mva_with_one_server_is_the_library_mva():
    for demand, clients in ((0.3, 1), (0.3, 7), (1.1, 40)):
        assert mva_throughput(demand, 1, 3, clients, think=0.5) == pytest.approx(
            mean_value_analysis([demand] * 3, clients, think=0.5).throughput, rel=1e-9)


def test_issue_command_runs_on_the_steps_engine(capsys):
    result = simulated(capsys, "ALL", 0.05, 0.01, jobs=20_000)
    assert result["engine"] == "steps" and result["cores"] == 4
    for key in ("mean", "ci_low", "ci_high", "p50", "p99", "throughput",
                "throughput_ci_low", "throughput_ci_high", "utilisation_mean"):
        assert np.isfinite(result[key])
    assert result["ci_low"] <= result["mean"] <= result["ci_high"]
    # Little's law on the closed loop (no think time): clients = throughput x latency
    assert CLIENTS == pytest.approx(result["throughput"] * result["mean"], rel=0.02)


# Tolerances: the MVA is not exact here, for two reasons it cannot see: a read at ALL
# is at three stations at once (a fork, not three visits in turn), and a FCFS station
# serves steps of different means (coordinator work, reads, messages), which is not
# product form. Measured, they move throughput by under 1%; the batch-means interval
# of a 60,000-read run is about +-0.6%. So throughput within 2.5% and the loss (1 -
# X_ALL / X_ONE, a difference of two such ratios) within 0.025 of the MVA.
@pytest.mark.parametrize("sweep, values", [
    ("coordinator", (0.05, 0.5, 1.5)),
    ("message", (0.01, 0.1, 0.3)),
])
def test_all_versus_one_loss_follows_mva(capsys, sweep, values):
    losses, predicted = [], []
    for value in values:
        coordinator, message = (value, 0.01) if sweep == "coordinator" else (0.05, value)
        x = {}
        for level in ("ONE", "ALL"):
            result = simulated(capsys, level, coordinator, message)
            expected = mva_throughput(demand_per_node(level, coordinator, message),
                                      CORES, NODES, CLIENTS)
            assert result["throughput"] == pytest.approx(expected, rel=0.025), \
                (level, value)
            x[level] = (result["throughput"], expected)
        losses.append(1 - x["ALL"][0] / x["ONE"][0])
        predicted.append(1 - x["ALL"][1] / x["ONE"][1])
    assert np.allclose(losses, predicted, atol=0.025), (losses, predicted)
    # the direction MVA gives: a fixed cost per request (coordinator work) dilutes the
    # extra replica work of ALL; a cost per remote replica (messages) adds to it
    trend = np.sign(np.diff(predicted))
    assert np.all(trend == (-1 if sweep == "coordinator" else 1))
    assert np.all(np.sign(np.diff(losses)) == trend)


@pytest.mark.parametrize("extra, says", [
    (["--cores", "0"], "--cores"),
    (["--client-work", "exp:0.1"], "--client-cores"),
    (["--hop", "exp"], "mean"),
    (["--cores", "4", "--coordinator", "exp:0.1"], "--coordinator-work"),
    (["--cores", "4", "--jobs", "auto"], "number"),
    # accepted before and ignored: the run went to the steps engine, or the stage
    (["--hop", "exp:0.1", "--engine", "fused"], "--engine fused does not run queued"),
    (["--cores", "2", "--engine", "fast"], "--engine fast does not run queued"),
    (["--structure", "shared", "--write-threads", "5"],
     "--write-threads sets the mutation stage, which --structure shared does not have"),
    (["--reads", "1.5"], "--reads '1.5': give a fraction in [0, 1]"),
])
def test_bad_queued_work_is_one_line_and_status_2(capsys, extra, says):
    status = cli.main(["mix", "--nodes", "3", "--replicas", "3", "--clients", "10",
                       *extra])
    err = capsys.readouterr().err
    assert status == 2 and says in err and len(err.strip().splitlines()) == 1, err


def test_without_queued_work_mix_keeps_its_engine(capsys):
    status = cli.main(["mix", "--nodes", "3", "--replicas", "3", "--clients", "10",
                       "--jobs", "2000", "--json"])
    assert status == 0 and json.loads(capsys.readouterr().out)["engine"] != "steps"


def _json(capsys, argv):
    status = cli.main(argv)
    out = capsys.readouterr()
    assert status == 0, out.err
    return json.loads(out.out)


def _agree(a, b):
    """Means within the sum of their interval half-widths (two independent runs)."""
    half = (a["ci_high"] - a["ci_low"] + b["ci_high"] - b["ci_low"]) / 2
    return abs(a["mean"] - b["mean"]) <= half


def test_cores_alone_is_the_shared_queue_of_mix(capsys):
    # --cores 4 and no work elsewhere: each node one FCFS queue of 4 servers, as
    # --structure shared --read-threads 4 on the fast engine (other random numbers)
    common = ["mix", "--nodes", "5", "--replicas", "3", "--read-consistency", "QUORUM",
              "--clients", "30", "--think", "1", "--jobs", "60000", "--json"]
    steps = _json(capsys, common + ["--cores", "4"])
    fast = _json(capsys, common + ["--structure", "shared", "--read-threads", "4"])
    assert steps["engine"] == "steps" and fast["engine"] != "steps"
    assert _agree(steps, fast), (steps["mean"], fast["mean"])


def test_cores_alone_is_cassandra_level_one(capsys):
    common = ["cassandra", "simulate", "--nodes", "5", "--replicas", "3",
              "--consistency", "QUORUM", "--policy", "round-robin", "--clients", "20",
              "--local-service", "exp", "--remote-service", "exp", "--remote-mean", "2",
              "--jobs", "60000", "--json"]
    steps = _json(capsys, common + ["--cores", "1"])
    fast = _json(capsys, common)
    assert steps["engine"] == "steps" and fast["engine"] != "steps"
    assert _agree(steps, fast), (steps["mean"], fast["mean"])
    assert steps["local_fraction"] == fast["local_fraction"] == 0.6


def test_queued_coordinator_work_slows_cassandra_writes(capsys):
    common = ["cassandra", "simulate", "--nodes", "5", "--replicas", "3",
              "--consistency", "ONE", "--policy", "token-aware", "--rate", "0.5",
              "--local-service", "exp", "--remote-service", "exp", "--jobs", "40000",
              "--cores", "2", "--json"]
    plain = _json(capsys, common)
    loaded = _json(capsys, common + ["--coordinator-work", "exp:0.5",
                                     "--message-work", "exp:0.05", "--hop", "exp:0.1"])
    # every write's path holds two coordinator steps (1.0 on average, the mean of
    # 36,000 measured writes within about 0.01 of it) besides any waiting they add
    assert loaded["ci_low"] > plain["ci_high"] + 1.0 - 0.05


def test_engine_simpy_runs_the_steps_reference_on_the_same_numbers(capsys):
    common = ["mix", "--nodes", "4", "--replicas", "3", "--reads", "A",
              "--read-consistency", "QUORUM", "--write-consistency", "ONE",
              "--clients", "12", "--think", "0.5", "--cores", "2", "--hop", "exp:0.1",
              "--coordinator-work", "exp:0.05", "--message-work", "exp:0.02",
              "--client-cores", "2", "--client-work", "exp:0.01", "--jobs", "3000",
              "--json"]
    compiled = _json(capsys, common)
    reference = _json(capsys, common + ["--engine", "simpy"])
    assert (compiled["engine"], reference["engine"]) == ("steps", "steps-simpy")
    for key in ("mean", "p50", "p99", "throughput"):
        assert compiled[key] == pytest.approx(reference[key], rel=1e-9), key


def test_datacentres_config_sets_the_hop_of_each_pair(capsys, tmp_path):
    # two nodes in two data centres, every read local at ALL: the read waits for the
    # other data centre's replica, 2 x 10 away; constant laws and no load, so every
    # read takes hop + coordinator + (4 messages + 2 hops + read) + reply work + hop
    config = tmp_path / "dc.toml"
    config.write_text('[datacentres]\nnodes = [0, 1]\n[datacentres.hops]\n"1-0" = 10.0\n')
    base = ["mix", "--nodes", "2", "--replicas", "2", "--reads", "C",
            "--read-consistency", "ALL", "--rate", "0.01", "--data-read",
            "deterministic", "--data-mean", "4", "--coordinator-work", "netem:0.25:0",
            "--message-work", "netem:0.125:0", "--cores", "100", "--jobs", "2000",
            "--json"]
    assert cli.main(base + ["--hop", "netem:1:0", "--config", str(config)]) == 0
    out = json.loads(capsys.readouterr().out)
    expected = 1 + 0.25 + (4 * 0.125 + 2 * 10 + 4) + 0.25 + 1
    assert out["p50"] == pytest.approx(expected, rel=1e-12)
    assert out["mean"] == pytest.approx(expected, rel=1e-12)
    assert out["config"] == str(config)
    assert cli.main(base + ["--hop", "netem:1:0"]) == 0   # one data centre: hop 1
    alone = json.loads(capsys.readouterr().out)
    assert alone["mean"] == pytest.approx(expected - 2 * 9, rel=1e-12)
    assert cli.main(["mix", "--nodes", "3", "--replicas", "2", "--rate", "1",
                     "--hop", "exp:0.1", "--config", str(config)]) == 2
    assert "nodes lists 2 nodes but the cluster has 3" in capsys.readouterr().err
    assert cli.main(["mix", "--nodes", "2", "--replicas", "2", "--rate", "1",
                     "--config", str(config)]) == 2
    assert "add --hop SPEC" in capsys.readouterr().err
    # a file that is no [datacentres] config is named as such first, with or without
    # --hop (a probe: any file was told to add --hop)
    broken = tmp_path / "broken.toml"
    broken.write_text("[datacentres\n")
    for extra in ([], ["--hop", "exp:0.1"]):
        assert cli.main(["mix", "--nodes", "2", "--replicas", "2", "--rate", "1",
                         "--config", str(broken), *extra]) == 2
        err = capsys.readouterr().err
        assert "is not valid TOML" in err and "--hop" not in err
