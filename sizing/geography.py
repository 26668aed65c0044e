"""Where a measured cluster's nodes and its client machine stand: data centres and the
round trips between them, the input of a geo-distributed closed-network model
(`sizing.closed_network`, issue 27 item 6).

A ``--datacentres`` file of ``cassandra calibrate``::

    [datacentres]
    nodes = [0, 1, 2]          # the data centre of each node
    client = 3                 # the data centre of the client machine
    coordinator = "nearest"    # the node nearest the client coordinates (a driver's
                               # local data centre); or "random" (any node, uniformly)
    source = "cloudping.co medians, 2021"   # where the times come from (optional)
    [datacentres.hops]         # mean one-way time (ms) between two data centres
    "0-1" = 65.0
    ...

The pairs are read as in `forkjoin_sim.cassandra.datacentres` (a number, or a law
whose mean is taken); every pair of two different data centres named by ``nodes`` and
``client`` must be given, a pair within one data centre may be left out (the model's
own fitted hops then apply). Between two data centres a hop is a constant time (a
wide-area round trip barely varies next to its size), and each direction of such a
link carries a limited number of messages in flight (the fitted ``link_window``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from forkjoin_sim.cassandra.datacentres import DataCentres
from forkjoin_sim.errors import ConfigError

#: How the coordinator of a request is chosen.
COORDINATOR_RULES = ("nearest", "random")


def _mean_time(law) -> float:
    return float(law) if isinstance(law, (int, float)) else float(law.mean())


def _check_client(client) -> None:
    if isinstance(client, bool) or not isinstance(client, (int, np.integer)) or client < 0:
        raise ConfigError("[datacentres] client must be the client machine's data "
                          "centre, a whole number >= 0, e.g. client = 3")


@dataclass(frozen=True)
class Geography:
    """``centre``: the data centre of each node; ``client``: the client machine's;
    ``one_way``: mean one-way time (ms) per unordered pair of data centres;
    ``coordinator``: one of `COORDINATOR_RULES`; ``source``: provenance."""

    centre: tuple
    client: int
    one_way: dict = field(default_factory=dict)
    coordinator: str = "nearest"
    source: str = ""

    def __post_init__(self):
        if self.coordinator not in COORDINATOR_RULES:
            raise ConfigError(f"[datacentres] coordinator = {self.coordinator!r}; use "
                              f"one of {', '.join(COORDINATOR_RULES)}")
        _check_client(self.client)
        needed = sorted(set(self.centre))
        missing = [f'"{min(self.client, c)}-{max(self.client, c)}"' for c in needed
                   if c != self.client and (min(self.client, c), max(self.client, c))
                   not in self.one_way]
        if missing:
            raise ConfigError(f"[datacentres.hops] has no time for {', '.join(missing)}; "
                              "give the one-way time between the client's data centre "
                              "and every data centre with a node")

    @classmethod
    def from_mapping(cls, table) -> "Geography":
        """From a ``[datacentres]`` table (the module docstring)."""
        if not isinstance(table, dict):
            raise ConfigError("datacentres must be a table: write [datacentres] and its "
                              "keys below it")
        if "client" not in table:
            raise ConfigError("[datacentres] needs client = N, the data centre of the "
                              "client machine (the load generator)")
        client = table["client"]
        _check_client(client)  # before DataCentres, whose answer would name the nodes
        rest = {k: v for k, v in table.items() if k not in ("client", "coordinator",
                                                            "source")}
        if not isinstance(rest.get("nodes"), list):
            raise ConfigError("[datacentres] needs nodes = [...], the data centre of "
                              "each node")
        # the client machine placed like one more node: every pair of two different
        # data centres, the client's included, then needs a time
        placed = DataCentres.from_mapping(dict(rest, nodes=rest["nodes"] + [client]))
        one_way = {pair: _mean_time(law) for pair, law in placed.hops.items()}
        coordinator = table.get("coordinator", "nearest")
        source = table.get("source", "")
        if not isinstance(coordinator, str) or not isinstance(source, str):
            raise ConfigError("[datacentres] coordinator and source are strings, e.g. "
                              'coordinator = "nearest"')
        return cls(placed.nodes[:-1], client, one_way, coordinator, source)

    @classmethod
    def read(cls, path: str) -> "Geography":
        """The ``[datacentres]`` table of the TOML file at ``path``."""
        from forkjoin_sim.files.io import read_toml

        data = read_toml(path, "--datacentres", "give a TOML file with a [datacentres] "
                                                "table (nodes, client, hops)")
        if set(data) != {"datacentres"}:
            raise ConfigError(f"--datacentres {path}: holds "
                              f"{', '.join(sorted(data)) or 'no tables'}; give one "
                              "[datacentres] table (nodes, client, hops)")
        return cls.from_mapping(data["datacentres"])

    def check_cluster(self, nodes: int, replicas: int) -> None:
        """Refuse a geography that does not fit the cluster (before any work)."""
        if len(self.centre) != nodes:
            raise ConfigError(f"[datacentres] nodes lists {len(self.centre)} nodes but "
                              f"the cluster has {nodes}; give one data centre per node")
        if replicas != nodes:
            raise ConfigError(f"--datacentres models clusters whose every node holds "
                              f"every key (replicas = nodes), not {replicas} of {nodes}; "
                              "leave out --datacentres for this cluster")

    def arrays(self):
        """Per node the probability that it coordinates, the client's round trip to
        it (ms), and per pair of nodes their round trip (ms; NaN within a data centre
        the file leaves out) and whether the pair is two data centres (a wide-area
        link with a window)."""
        centre = np.asarray(self.centre)
        n = len(centre)

        def rtt(a, b):
            if a == b and (a, b) not in self.one_way:
                return np.nan
            return 2.0 * self.one_way[(min(a, b), max(a, b))]

        client = np.array([rtt(self.client, c) for c in centre])
        pairs = np.array([[rtt(a, b) for b in centre] for a in centre])
        cross = centre[:, None] != centre[None, :]
        if self.coordinator == "random":
            weight = np.full(n, 1.0 / n)
        else:
            # the nearest node (within the client's data centre: all of them there)
            reach = np.where(np.isnan(client), 0.0, client)
            weight = (reach == reach.min()).astype(float)
            weight /= weight.sum()
        return weight, client, pairs, cross

    def to_toml(self) -> str:
        """The ``[datacentres]`` table (as a model file keeps it)."""
        lines = ["[datacentres]", f"nodes = {[int(c) for c in self.centre]}",
                 f"client = {int(self.client)}", f'coordinator = "{self.coordinator}"']
        if self.source:
            lines.append('source = "' + self.source.replace("\\", "\\\\")
                         .replace('"', '\\"') + '"')
        lines.append("[datacentres.hops]")
        lines += [f'"{a}-{b}" = {t!r}' for (a, b), t in sorted(self.one_way.items())]
        return "\n".join(lines) + "\n"
