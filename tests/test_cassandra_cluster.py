"""The Cassandra read path and read/write mixes (`CassandraCluster`, ``mix``)."""

import json

import pytest
from scipy import stats

from forkjoin_sim import simulate

from forkjoin_cli import main as cli
from forkjoin_sim.cassandra import CassandraCluster
from forkjoin_sim.errors import ConfigError
from forkjoin_sim.nodes import SharedQueue, Stages


def cluster(read_level="ONE", **kw):
    base = dict(data_read=stats.expon(scale=1.0), digest_read=stats.expon(scale=0.4),
                write=stats.expon(scale=0.5))
    base.update(kw)
    return CassandraCluster(3, 3, kw.pop("read_fraction", 1.0), read_level, "ONE",
                            **{k: v for k, v in base.items() if k != "read_fraction"})


def test_a_read_at_one_on_an_idle_cluster_costs_one_data_read():
    # Light load: a read at ONE is one data request, so its latency is the data-read
    # time plus the overhead outside the queues.
    c = cluster(rate=0.01, coordinator=stats.uniform(0.2, 0.0001))
    result = simulate(c, jobs=40_000, seed=1)
    assert result.summary.ci_low <= 1.2 + 0.00005 + 0.0101 * 1.5
    assert result.summary.ci_high >= 1.2


def test_levels_differ_in_a_closed_loop():
    # Reads at QUORUM and ALL ask 2 and 3 replicas: slower than ONE, and the
    # closed loop's throughput falls with the work per read.
    results = {level: simulate(cluster(level, clients=30), jobs=60_000, seed=2)
               for level in ("ONE", "QUORUM", "ALL")}
    means = [results[level].mean for level in ("ONE", "QUORUM", "ALL")]
    rates = [results[level].throughput.mean for level in ("ONE", "QUORUM", "ALL")]
    assert means[0] < means[1] < means[2]
    assert rates[0] > rates[1] > rates[2]


def test_read_stage_capacity_bounds_closed_loop_throughput():
    # Reads at ONE only: each read brings E[data] = 1 of work to one of 3 nodes, one
    # read thread each, so X <= 3 reads per unit time.
    x = simulate(cluster("ONE", clients=200), jobs=100_000, seed=3).throughput
    assert x.low <= 3.0 and x.mean > 0.95 * 3.0


def test_reads_overtake_writes_only_with_stages():
    kw = dict(read_fraction=0.5, rate=1.2, write=stats.expon(scale=1.0))
    staged = simulate(cluster(node=Stages(), **kw), jobs=150_000, seed=4)
    shared = simulate(cluster(node=SharedQueue(), **kw), jobs=150_000, seed=4)
    assert staged.classes["read"].ci_high < shared.classes["read"].ci_low


def test_bad_clusters_say_how_to_fix():
    with pytest.raises(ConfigError, match="exactly one of rate"):
        cluster()
    with pytest.raises(ConfigError, match="read_fraction"):
        CassandraCluster(3, 3, 1.5, rate=1.0)
    with pytest.raises(ConfigError, match="replicas"):
        CassandraCluster(3, 4, rate=1.0)
    with pytest.raises(ConfigError, match="unstable"):
        cluster(rate=10.0)
    # a level is checked whether or not its operation has a share of the mix
    with pytest.raises(ConfigError, match="'EACH_QUORUM' is unknown"):
        CassandraCluster(3, 3, 1.0, "ONE", "EACH_QUORUM", rate=0.5)
    with pytest.raises(ConfigError, match="k=5 must satisfy"):
        CassandraCluster(3, 3, 0.0, 5, "ONE", rate=0.5)


def test_mix_options_set_the_laws_they_name():
    from forkjoin_cli.main import build_parser
    from forkjoin_cli.mix import cluster_from_args

    def laws(*argv):
        args = build_parser("mix").parse_args(["mix", "--nodes", "5", "--replicas", "3",
                                              "--rate", "0.5", *argv])
        cluster = cluster_from_args(args)
        return (cluster.data_read.mean(), cluster.digest_read.mean(),
                cluster.write.mean())

    assert laws() == pytest.approx((1, 1, 1))
    # --digest-mean alone gives digests the data read's shape at that mean
    assert laws("--data-read", "erlang:2", "--digest-mean", "0.3", "--read-consistency",
                "QUORUM") == pytest.approx((1, 0.3, 1))
    assert laws("--data-mean", "2", "--write-mean", "0.5",
                "--reads", "A") == pytest.approx((2, 2, 0.5))


def test_mix_command_json_and_errors(capsys):
    assert cli.main(["mix", "--nodes", "3", "--replicas", "3", "--reads", "B",
                     "--read-consistency", "QUORUM", "--clients", "20", "--jobs",
                     "20000", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["classes"]) == {"read", "write"}
    assert out["throughput_ci_low"] <= out["throughput"] <= out["throughput_ci_high"]
    for argv, message in ((["--rate", "1", "--clients", "3"], "not both"),
                          (["--reads", "D", "--rate", "1"], "YCSB"),
                          (["--read-consistency", "FIVE", "--rate", "1"], "unknown"),
                          # writes' level checked in a reads-only mix too
                          (["--write-consistency", "EACH_QUORUM", "--rate", "1"],
                           "'EACH_QUORUM' is unknown"),
                          # a time without its mean (it silently took mean 1)
                          # an option the mix never uses
                          (["--reads", "0", "--read-consistency", "ALL", "--rate", "1"],
                           "--read-consistency does nothing here: the mix has no "
                           "reads (--reads 0)"),
                          (["--write", "exp:2", "--rate", "1"],
                           "--write does nothing here: the mix has no writes"),
                          # the level left at its default is named as ONE (a review)
                          (["--reads", "B", "--digest-read", "exp", "--rate", "1"],
                           "--digest-read does nothing here: a read at ONE asks one "
                           "replica"),
                          (["--coordinator", "exp", "--rate", "1"],
                           "--coordinator 'exp' gives a shape without a mean"),
                          (["--client-hop", "gamma:2", "--rate", "1"],
                           "--client-hop 'gamma:2' gives a shape without a mean")):
        code = cli.main(["mix", "--nodes", "3", "--replicas", "3", "--jobs", "100",
                         *argv])
        err = capsys.readouterr().err
        assert code == 2 and message in err and err.count("\n") == 1
