"""Several data centres: which node is in which, and the one-way hop law of each pair.

A config's ``[datacentres]`` table::

    [datacentres]
    nodes = [0, 0, 0, 1, 1, 1]        # the data centre of each node
    [datacentres.hops]                # one-way time between two nodes, per pair
    "0-1" = "netem:40:5"              # a spec that carries its scale,
    "1-1" = 0.3                       # a number (a constant time),
    # "0-0" = {delay = "gamma:4", mean = 0.2}   # or a law and its mean

A pair is unordered ("1-0" is "0-1"). A pair of one data centre that the table leaves
out keeps the run's own hop law (``--hop``); a pair of two data centres must be given.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from forkjoin_sim.errors import ConfigError

def _hop_law(value, pair: str):
    from forkjoin_sim.laws.service import fixes_own_scale, parse_service

    where = f"[datacentres.hops] {pair!r}"
    if isinstance(value, bool):
        raise ConfigError(f"{where} = {value!r}; give a time, a spec or a table")
    if isinstance(value, (int, float)):
        if not value >= 0 or not np.isfinite(value):
            raise ConfigError(f"{where} = {value!r}; give a time >= 0")
        return float(value)
    if isinstance(value, str):
        try:
            number = float(value)  # a number written in quotes
        except ValueError:
            number = None
        if number is not None:
            return _hop_law(number, pair)
        if not fixes_own_scale(value):
            raise ConfigError(f"{where} = {value!r} gives a shape without a mean; give "
                              'a spec with its scale (e.g. "exp:0.2") or a table '
                              '{delay = "gamma:4", mean = 0.2}')
        return parse_service(value)
    if isinstance(value, dict):
        unknown = set(value) - {"delay", "mean"}
        mean = value.get("mean")
        if unknown or isinstance(mean, bool) or not isinstance(mean, (int, float)) \
                or not mean > 0:
            raise ConfigError(f"{where}: a table needs delay (a spec) and mean > 0, "
                              'e.g. {delay = "gamma:4", mean = 0.2}')
        return parse_service(str(value.get("delay", "exp")), mean=float(mean))
    raise ConfigError(f"{where} = {value!r}; give a time, a spec or a table")


def _pair(key) -> tuple:
    a, sep, b = str(key).partition("-")
    if not (sep and a.strip().isdigit() and b.strip().isdigit()):
        raise ConfigError(f"[datacentres.hops] key {key!r}; name a pair of data "
                          'centres as "A-B", e.g. "0-1"')
    a, b = int(a), int(b)
    return (min(a, b), max(a, b))


@dataclass(frozen=True)
class DataCentres:
    """Per node its data centre, and per unordered pair of data centres a hop law
    (a number is a constant time). ``partial``: pairs may be left out (their times
    are fitted by the caller, `sizing.geography`)."""

    nodes: tuple
    hops: dict = field(default_factory=dict)
    partial: bool = False

    def __post_init__(self):
        object.__setattr__(self, "nodes", tuple(self.nodes))
        if not self.nodes or not all(isinstance(d, (int, np.integer))
                                     and not isinstance(d, bool) and d >= 0
                                     for d in self.nodes):
            raise ConfigError("[datacentres] nodes must list a whole data-centre number "
                              ">= 0 per node, e.g. nodes = [0, 0, 0, 1, 1, 1]")
        known = set(self.nodes)
        for a, b in self.hops:
            if a not in known or b not in known:
                raise ConfigError(f'[datacentres.hops] "{a}-{b}" names a data centre '
                                  f"no node is in; nodes are in {sorted(known)}")
        missing = [f'"{a}-{b}"' for a in sorted(known) for b in sorted(known)
                   if a < b and (a, b) not in self.hops]
        if missing and not self.partial:
            raise ConfigError(f"[datacentres.hops] has no law for {', '.join(missing)}; "
                              "give the one-way time between every two data centres")

    @classmethod
    def from_mapping(cls, table: dict, partial: bool = False) -> "DataCentres":
        """From a ``[datacentres]`` table with ``nodes`` and ``hops`` (``partial``:
        as the field)."""
        if not isinstance(table, dict):
            raise ConfigError("datacentres must be a table: write [datacentres] and its "
                              "keys below it")
        unknown = set(table) - {"nodes", "hops"}
        if unknown:
            raise ConfigError(f"[datacentres] has unknown key(s) "
                              f"{', '.join(sorted(unknown))} here; give nodes and hops")
        if "nodes" not in table:
            raise ConfigError("[datacentres] needs nodes = [...], the data centre of "
                              "each node")
        hops = table.get("hops", {})
        if not isinstance(hops, dict):
            raise ConfigError("[datacentres] hops must be a table: write "
                              "[datacentres.hops] and one line per pair")
        laws = {}
        for key, value in hops.items():
            pair = _pair(key)
            if pair in laws:
                raise ConfigError(f"[datacentres.hops] gives {pair[0]}-{pair[1]} twice; "
                                  "give each pair once")
            laws[pair] = _hop_law(value, key)
        return cls(tuple(table["nodes"]), laws, partial)

    def check_nodes(self, nodes: int) -> None:
        """Refuse a table that does not place exactly ``nodes`` nodes."""
        if len(self.nodes) != nodes:
            raise ConfigError(f"[datacentres] nodes lists {len(self.nodes)} nodes but "
                              f"the cluster has {nodes}; give one per node")


def load_datacentres(path: str | Path) -> DataCentres:
    """The ``[datacentres]`` table of the TOML file at ``path`` (its only table)."""
    from forkjoin_sim.files.io import read_toml

    data = read_toml(path, "config file", "give an existing TOML file with a "
                                          "[datacentres] table")
    extra = set(data) - {"datacentres"}
    if extra or "datacentres" not in data:
        raise ConfigError(f"config {path} has {', '.join(sorted(extra)) or 'no tables'}; "
                          "with the queued-work options it holds a [datacentres] table "
                          "only (nodes and hops)")
    return DataCentres.from_mapping(data["datacentres"])
