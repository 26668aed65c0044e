"""Level 2: the configuration of Cassandra's staged (SEDA) write path.

The path itself is a graph of steps run by the steps engine (`.graphs`); this module
holds its thread pools and stage times (`StagedConfig`, from a TOML file with
`load_staged_config`) and the stability check of its stages.

A write enters its coordinator's request stage (Native-Transport-Requests, a pool of
``request_threads``), is sent over the network to each replica (a delay, no
queueing), runs in the replica's mutation stage (a FCFS pool of
``mutation_threads``: commit-log append and memtable write), and its acknowledgement
travels back and is processed by the coordinator's response stage (RequestResponse,
``response_threads``). The client is answered at the k-th acknowledgement; the other
acknowledgements are still processed (non-purging). The coordinator's own replica
(a local write) skips both network hops and the response stage: Cassandra applies
it in-process and counts it by callback.

Threads are modelled as independent servers (no CPU contention between threads of
a node); the paper's future work (b) names limited processor sharing as the finer
model. Time unit: whatever the service specs use; the defaults are milliseconds.

Default configuration and where its numbers come from:

- ``request.threads = 128``: ``native_transport_max_threads``,
  ``mutation.threads = 32``: ``concurrent_writes`` (Cassandra 3.11 cassandra.yaml
  defaults).
- ``response.threads = 12``: Cassandra 3.11 sizes the RequestResponse stage to the
  number of available processors; the paper's nodes are dual Xeon E5-2603 v3,
  2 x 6 cores.
- ``network.mean = 0.2`` ms one way (gamma, shape 4): a same-rack 10 GbE round trip
  is about 0.1-0.5 ms. An assumption, not a measurement.
- ``request.mean = 0.05`` ms and ``response.mean = 0.02`` ms (exponential): CPU time
  to parse/route a request and to count one acknowledgement. Assumptions, not
  measurements; replace them with your own through a TOML file.

- ``[datacentres]``: ``nodes = [0, 0, 0, 1, 1, 1]`` puts each node in a data centre;
  a coordinator-to-replica hop between two data centres takes ``mean`` ms more
  (gamma, shape 4) on top of the ``[network]`` delay, each way. Off by default. Or,
  instead of ``delay`` and ``mean``, ``[datacentres.hops]`` gives each pair of data
  centres its own one-way law (as for the queued-work runs, `.datacentres`): a hop
  between them takes that law instead of ``[network]``'s; a pair within one data
  centre that it leaves out keeps ``[network]``.
- ``client.mean = 0`` ms: the client-to-coordinator hop (each way; gamma, shape 4 when
  set). Off by default so that the paper's model (which starts at the coordinator)
  is unchanged; a benchmark measured at the client includes it.

A mean of 0 removes a stage's time (and its queueing) altogether.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from forkjoin_sim.errors import ConfigError
from forkjoin_sim.laws.service import parse_service

#: The level-2 defaults (see the module docstring for their sources).
DEFAULT_STAGED_CONFIG: dict[str, Any] = {
    "time_unit": "ms",
    "request": {"threads": 128, "service": "exp", "mean": 0.05},
    "mutation": {"threads": 32},
    "response": {"threads": 12, "service": "exp", "mean": 0.02},
    "network": {"delay": "gamma:4", "mean": 0.2},
    "client": {"delay": "gamma:4", "mean": 0.0},
    "datacentres": {"nodes": [], "delay": "gamma:4", "mean": 0.0},
}

_KEYS = {"request": {"threads", "service", "mean"}, "mutation": {"threads"},
         "response": {"threads", "service", "mean"}, "network": {"delay", "mean"},
         "client": {"delay", "mean"}, "datacentres": {"nodes", "delay", "mean", "hops"}}


@dataclass(frozen=True)
class StagedConfig:
    """Thread-pool sizes and stage-time distributions of the staged write path.

    ``None`` for a time distribution means that stage takes no time.
    """

    request_threads: int = 128
    mutation_threads: int = 32
    response_threads: int = 12
    request_time: Any = None
    response_time: Any = None
    network_delay: Any = None
    client_delay: Any = None
    datacentre: tuple = ()
    cross_delay: Any = None
    hops: tuple = ()

    def __post_init__(self) -> None:
        for name in ("request_threads", "mutation_threads", "response_threads"):
            value = getattr(self, name)
            if not _is_threads(value):
                raise ConfigError(f"{name} must be a whole number >= 1, got {value!r}")
        if not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0
                   for d in self.datacentre):
            raise ConfigError("[datacentres] nodes must list a whole data-centre number "
                              ">= 0 per node, e.g. nodes = [0, 0, 0, 1, 1, 1]")

    def data_centre(self, node: int) -> int:
        """The data centre of ``node`` (0 for nodes the config does not list)."""
        return self.datacentre[node] if node < len(self.datacentre) else 0

    @classmethod
    def from_mapping(cls, mapping: dict | None = None) -> "StagedConfig":
        """The defaults overridden by ``mapping`` (same layout as the TOML file)."""
        from forkjoin_sim.files.io import toml_text

        merged = copy.deepcopy(DEFAULT_STAGED_CONFIG)
        for section, values in (mapping or {}).items():
            if section == "time_unit":
                if values != "ms":
                    raise ConfigError(f"staged config time_unit = {toml_text(values)} is "
                                      "not supported; give every time in ms and write "
                                      'time_unit = "ms" (or leave it out)')
                merged["time_unit"] = values
                continue
            if section not in _KEYS:
                raise ConfigError(f"staged config section [{section}] is unknown; use "
                                  f"{', '.join(f'[{s}]' for s in _KEYS)} and time_unit")
            if not isinstance(values, dict):
                raise ConfigError(f"staged config {section} = {toml_text(values)} must be "
                                  f"a table: write [{section}] and its keys below it")
            unknown = set(values) - _KEYS[section]
            if unknown:
                raise ConfigError(f"staged config [{section}] has unknown key(s) "
                                  f"{', '.join(sorted(unknown))}; allowed: "
                                  f"{', '.join(sorted(_KEYS[section]))}")
            merged[section].update(values)
        for section in ("request", "mutation", "response"):
            threads = merged[section]["threads"]
            if not _is_threads(threads):
                raise ConfigError(f"staged config [{section}] threads = "
                                  f"{toml_text(threads)} must be a whole number >= 1, "
                                  f"e.g. threads = {DEFAULT_STAGED_CONFIG[section]['threads']}")
        return cls(request_threads=merged["request"]["threads"],
                   mutation_threads=merged["mutation"]["threads"],
                   response_threads=merged["response"]["threads"],
                   request_time=_stage_time(merged["request"], "service", "request"),
                   response_time=_stage_time(merged["response"], "service", "response"),
                   network_delay=_stage_time(merged["network"], "delay", "network"),
                   client_delay=_stage_time(merged["client"], "delay", "client"),
                   datacentre=tuple(merged["datacentres"]["nodes"]),
                   cross_delay=_stage_time(merged["datacentres"], "delay",
                                           "datacentres"),
                   hops=_pair_hops(merged["datacentres"]))


def _is_threads(value) -> bool:
    """Whether ``value`` is a stage's thread count, a whole number >= 1."""
    return (not isinstance(value, bool) and isinstance(value, (int, np.integer))
            and value >= 1)


def _pair_hops(section: dict) -> tuple:
    """``[datacentres.hops]`` as sorted ``((a, b), law)`` pairs (none: ``()``)."""
    if "hops" not in section:
        return ()
    from forkjoin_sim.cassandra.datacentres import DataCentres

    if section["mean"] != 0:
        raise ConfigError("[datacentres] gives both hops per pair and a cross-data-centre "
                          "mean; give one: hops (each pair's whole hop) or delay and "
                          "mean (added to [network] between data centres)")
    centres = DataCentres.from_mapping({"nodes": section["nodes"],
                                        "hops": section["hops"]})
    return tuple(sorted(centres.hops.items()))


def _stage_time(section: dict, key: str, name: str) -> Any:
    from forkjoin_sim.files.io import toml_text

    mean = section["mean"]
    if isinstance(mean, bool) or not isinstance(mean, (int, float)) or mean < 0:
        raise ConfigError(f"staged config [{name}] mean = {toml_text(mean)} must be a "
                          "number >= 0 (0 removes the stage's time)")
    if mean == 0:
        return None
    try:
        return parse_service(str(section[key]), mean=float(mean))
    except ConfigError as exc:
        raise ConfigError(f"staged config [{name}] {key}: {exc}") from None


def load_staged_config(path: str | Path | None = None) -> StagedConfig:
    """The defaults, overridden by the TOML file at ``path`` if given."""
    if path is None:
        return StagedConfig.from_mapping()
    from forkjoin_sim.files.io import read_toml

    mapping = read_toml(path, "staged config file",
                        "give an existing TOML file or leave --config out")
    try:
        return StagedConfig.from_mapping(mapping)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None


def _mean(dist: Any) -> float:
    return 0.0 if dist is None else float(dist.mean())


def stage_utilisation(config: StagedConfig, writes_per_coordinator: float,
                      remote_acks_per_coordinator: float,
                      mutation_work_per_node: float) -> dict[str, float]:
    """Busy fraction of one thread of each stage at the busiest node.

    Arguments are per unit time: writes a coordinator receives, remote
    acknowledgements it processes, and mutation service time a node must do.
    """
    return {"request": writes_per_coordinator * _mean(config.request_time)
            / config.request_threads,
            "mutation": mutation_work_per_node / config.mutation_threads,
            "response": remote_acks_per_coordinator * _mean(config.response_time)
            / config.response_threads}


def check_stable(utilisation: dict[str, float]) -> None:
    """Raise ConfigError if any stage is loaded at or above capacity."""
    for stage, value in utilisation.items():
        if value >= 1:
            raise ConfigError(f"unstable {stage} stage: each thread is busy a fraction "
                              f"{value:.4g} >= 1; lower the write rate or raise "
                              f"[{stage}] threads")
