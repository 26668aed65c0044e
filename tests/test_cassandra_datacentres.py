"""The [datacentres] table: data centres of the nodes, a hop law per pair, refusals."""

import pytest
from scipy import stats

from forkjoin_sim.cassandra.datacentres import DataCentres, load_datacentres
from forkjoin_sim.errors import ConfigError


def test_a_table_gives_each_unordered_pair_its_law(tmp_path):
    path = tmp_path / "dc.toml"
    path.write_text('[datacentres]\nnodes = [0, 0, 1]\n[datacentres.hops]\n'
                    '"1-0" = 40\n"1-1" = "exp:0.3"\n'
                    '"0-0" = {delay = "gamma:4", mean = 0.2}\n')
    centres = load_datacentres(path)
    assert centres.nodes == (0, 0, 1)
    assert centres.hops[(0, 1)] == 40.0
    assert centres.hops[(1, 1)].mean() == pytest.approx(0.3)
    assert centres.hops[(0, 0)].mean() == pytest.approx(0.2)
    assert centres.hops[(0, 0)].var() == pytest.approx(stats.gamma(4, scale=0.05).var())
    centres.check_nodes(3)
    with pytest.raises(ConfigError, match="nodes lists 3 nodes but the cluster has 4"):
        centres.check_nodes(4)


@pytest.mark.parametrize("table, message", [
    ({"nodes": [0, 1], "hops": {}}, 'no law for "0-1"'),
    ({"nodes": [0, 1], "hops": {"0-2": 1.0, "0-1": 1.0}}, "no node is in"),
    ({"nodes": [0, 1], "hops": {"0_1": 1.0}}, 'as "A-B"'),
    ({"nodes": [0, 1], "hops": {"0-1": 1.0, "1-0": 2.0}}, "twice"),
    ({"nodes": [0, 1], "hops": {"0-1": "gamma:4"}}, "shape without a mean"),
    ({"nodes": [0, 1], "hops": {"0-1": "-1"}}, "time >= 0"),  # a quoted number
    ({"nodes": [0, 1], "hops": {"0-1": -1.0}}, "time >= 0"),
    ({"nodes": [0, 1], "hops": {"0-1": {"delay": "exp"}}}, "mean > 0"),
    ({"nodes": [0, -1], "hops": {}}, "whole data-centre number"),
    ({"hops": {}}, "needs nodes"),
    ({"nodes": [0], "mean": 1.0}, "unknown key"),
])
def test_bad_tables_are_refused_saying_how_to_fix_them(table, message):
    with pytest.raises(ConfigError, match=message):
        DataCentres.from_mapping(table)


def test_a_config_with_other_tables_is_refused(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('[mutation]\nthreads = 4\n')
    with pytest.raises(ConfigError, match=r"holds a \[datacentres\] table only"):
        load_datacentres(path)


def test_a_number_in_quotes_is_read_as_the_number():
    quoted = DataCentres.from_mapping({"nodes": [0, 1], "hops": {"0-1": "56.52"}})
    assert quoted.hops[(0, 1)] == 56.52
