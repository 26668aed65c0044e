"""Where a measured cluster's nodes and its client machine stand: data centres and the
round trips between them, the input of a geo-distributed closed-network model
(`sizing.closed_network`, issue 27 item 6).

A ``--datacentres`` file of ``cassandra calibrate``::

    [datacentres]
    nodes = [0, 1, 2]          # the data centre of each node
    client = 3                 # the data centre of the client machine
    coordinator = "nearest"    # the node nearest the client coordinates (a driver's
                               # local data centre); or "random" (any node, uniformly)
                               # or "one" (the first node, always)
    times = "given"            # or "fitted": pairs left out are fitted (optional)
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

``times = "fitted"`` lets every pair left out be fitted instead: the client's pairs
take the fitted client-coordinator hop, the nodes' pairs the fitted
coordinator-replica hop. With coordinator ``"one"`` the first node's fitted pairs with
other data centres are not all alike: in the order the nodes are listed they run from
the nearest (the fitted hop) to the farthest (``hop_spread`` times it), those between
evenly spaced in log, so that QUORUM waits for a nearer replica than ALL (the other
pairs carry no request a model waits for). Nearest and farthest are among the pairs
left to the fit: a given pair may be nearer.
`Geography.wide_area` is such a table with every node and the
client machine in a data centre of its own and one coordinator (coordinator
``"one"``: the first node coordinates every request, as a driver does whose local
data centre holds one node): what `cassandra calibrate` fits when the rows show the
levels' wide-area cost (`wide_area_signature`, `placement`) and no ``--datacentres``
is given.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from forkjoin_sim.cassandra.datacentres import DataCentres
from forkjoin_sim.errors import ConfigError, counted

#: How the coordinator of a request is chosen.
COORDINATOR_RULES = ("nearest", "random", "one")
#: A time (ms) that no round trip within one data centre explains (those take well
#: under 2 ms; Karpenko D's, across regions, 113-193 ms).
WIDE_AREA_MS = 20.0


#: Longest one-way time (ms) a hop between data centres may have: a minute, far past
#: any network on Earth (a value past it is a unit slip, and overflows the model).
MOST_ONE_WAY_MS = 60_000.0
#: A measured mean may lie below the round trips it must wait for, by the file's
#: times, down to 1 / (1 + this) of them (20% under): published round trips between
#: two regions differ by up to 30 ms (docs/data/aws_rtt), and Karpenko D's QUORUM
#: reads at 200 threads (232 ms) come in 6% under their round trips by cloudping.co's
#: medians (246 ms). A time given twice over (a round trip as one-way) is 100% over.
ROUND_TRIP_SLACK = 0.25
#: A one-way time (ms) under which no pair of data centres of a file lies when its
#: rows look wide-area: the file is then likely in seconds.
LOCAL_ONE_WAY_MS = 1.0


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
    #: Pairs left out are fitted (``times = "fitted"``), not refused.
    fitted: bool = False

    def __post_init__(self):
        if self.coordinator not in COORDINATOR_RULES:
            raise ConfigError(f"[datacentres] coordinator = {self.coordinator!r}; use "
                              f"one of {', '.join(COORDINATOR_RULES)}")
        _check_client(self.client)
        if self.fitted:
            self._check_fitted()
            return
        needed = sorted(set(self.centre))
        missing = [f'"{min(self.client, c)}-{max(self.client, c)}"' for c in needed
                   if c != self.client and (min(self.client, c), max(self.client, c))
                   not in self.one_way]
        if missing:
            raise ConfigError(f"[datacentres.hops] has no time for {', '.join(missing)}; "
                              "give the one-way time between the client's data centre "
                              "and every data centre with a node")

    def _check_fitted(self) -> None:
        """A fitted pair must be a single kind of hop: the client's pairs take the
        fitted client hop, the nodes' the fitted replica hop, each of which cannot be
        both a wide-area and a local one; and the nearest node must be known."""
        centres = sorted(set(self.centre))
        left = [(a, b) for a in centres for b in centres
                if a < b and (a, b) not in self.one_way]
        if left and len(centres) < len(self.centre):
            raise ConfigError(
                f'[datacentres.hops] leaves "{left[0][0]}-{left[0][1]}" to the fit while '
                "nodes share a data centre: one fitted hop between nodes cannot be both "
                "a local and a wide-area one; give the time between every two data "
                "centres with nodes")
        near = [c for c in centres if c != self.client
                and (min(c, self.client), max(c, self.client)) not in self.one_way]
        if near and self.client in centres:
            raise ConfigError(
                f'[datacentres.hops] leaves "{min(near[0], self.client)}-'
                f'{max(near[0], self.client)}" to the fit while a node shares the '
                "client's data centre: one fitted client hop cannot be both a local and "
                "a wide-area one; give the client's time to every other data centre")
        if near and self.coordinator == "nearest":
            raise ConfigError(
                "[datacentres] coordinator = \"nearest\" needs the client's time to "
                "every data centre with a node, and times = \"fitted\" leaves some "
                "out; give them, or use coordinator = \"one\" (the first node) or "
                "\"random\"")

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
                                                            "source", "times")}
        unknown = set(rest) - {"nodes", "hops"}
        if unknown:
            raise ConfigError(f"[datacentres] has unknown key(s) "
                              f"{', '.join(sorted(unknown))}; the keys are nodes, client, "
                              "coordinator, times, source and the hops table")
        times = table.get("times", "given")
        if times not in ("given", "fitted"):
            raise ConfigError(f"[datacentres] times = {times!r}; use \"given\" (every "
                              "pair of data centres has its time) or \"fitted\" (pairs "
                              "left out are fitted)")
        if not isinstance(rest.get("nodes"), list):
            raise ConfigError("[datacentres] needs nodes = [...], the data centre of "
                              "each node")
        # the client machine placed like one more node: every pair of two different
        # data centres, the client's included, then needs a time
        try:
            placed = DataCentres.from_mapping(
                dict(rest, nodes=rest["nodes"] + [client]), partial=times == "fitted")
        except ConfigError as error:
            if "no node is in" in str(error):
                # the client was placed as one more node: name it apart
                raise ConfigError(
                    f"{str(error).split(' no node is in')[0]} neither a node nor the "
                    f"client is in; the nodes are in {sorted(set(rest['nodes']))}, the "
                    f"client in {client}") from None
            if "has no law for" not in str(error):
                raise
            raise ConfigError(f"{error} (or set times = \"fitted\" to fit the pairs left "
                              "out)") from None
        one_way = {pair: _mean_time(law) for pair, law in placed.hops.items()}
        slow = [(pair, t) for pair, t in one_way.items() if not t <= MOST_ONE_WAY_MS]
        if slow:
            (a, b), time = slow[0]
            raise ConfigError(f'[datacentres.hops] "{a}-{b}" = {time:.6g} ms is '
                              f"not a time between data centres (at most "
                              f"{MOST_ONE_WAY_MS:,.0f} ms one way); give the mean one-way "
                              "time in milliseconds")
        coordinator = table.get("coordinator", "nearest")
        source = table.get("source", "")
        if not isinstance(coordinator, str) or not isinstance(source, str):
            raise ConfigError("[datacentres] coordinator and source are strings, e.g. "
                              'coordinator = "nearest"')
        return cls(placed.nodes[:-1], client, one_way, coordinator, source,
                   times == "fitted")

    @classmethod
    def wide_area(cls, nodes: int) -> "Geography":
        """Every node and the client machine in a data centre of its own, every time
        fitted, the first node coordinating."""
        return cls(tuple(range(nodes)), nodes, {}, "one",
                   "fitted to the rows' wide-area signature, each node and the client "
                   "machine in a data centre of its own", True)

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
            raise ConfigError(f"[datacentres] nodes lists "
                              f"{counted(len(self.centre), 'node')} but "
                              f"the cluster has {nodes}; give one data centre per node")
        if replicas != nodes:
            raise ConfigError(f"--datacentres models clusters whose every node holds "
                              f"every key (replicas = nodes), not {replicas} of {nodes}; "
                              "leave out --datacentres for this cluster")

    def arrays(self):
        """Per node the probability that it coordinates, the client's round trip to
        it (ms), and per pair of nodes their round trip (ms; NaN within a data centre
        the file leaves out, and for any pair left out with ``times = "fitted"``),
        whether the pair is two data centres (a wide-area link with a window), and
        where a fitted pair's hop lies between the nearest (0: the fitted replica hop)
        and the farthest (1: ``hop_spread`` times it), evenly in log between: with
        coordinator ``"one"`` and ``times = "fitted"``, the first node's pairs with
        other data centres left to the fit, in the order listed, else 0."""
        centre = np.asarray(self.centre)
        n = len(centre)

        def rtt(a, b):
            pair = (min(a, b), max(a, b))
            if pair not in self.one_way and (a == b or self.fitted):
                return np.nan
            return 2.0 * self.one_way[pair]

        client = np.array([rtt(self.client, c) for c in centre])
        pairs = np.array([[rtt(a, b) for b in centre] for a in centre])
        cross = centre[:, None] != centre[None, :]
        rank = np.zeros((n, n))
        if self.coordinator == "one" and self.fitted:
            # the first node's wide-area pairs left to the fit (not those within its
            # own data centre, which take the fitted hop as they are)
            ranked = [j for j in range(1, n)
                      if centre[j] != centre[0] and np.isnan(pairs[0, j])]
            for place, j in enumerate(ranked):
                rank[0, j] = rank[j, 0] = place / max(len(ranked) - 1, 1)
        if self.coordinator == "random":
            weight = np.full(n, 1.0 / n)
        elif self.coordinator == "one":
            weight = np.eye(n)[0]
        else:
            # the nearest node (within the client's data centre: all of them there)
            reach = np.where(np.isnan(client), 0.0, client)
            weight = (reach == reach.min()).astype(float)
            weight /= weight.sum()
        return weight, client, pairs, cross, rank

    def least_ms(self, quorum) -> np.ndarray:
        """Per level in ``quorum`` (replicas waited for), the least mean latency a
        request can have here: the client's round trip to its coordinator and the
        coordinator's to the nearest replicas it waits for (itself the nearest, every
        node holding every key), each coordinator by how often it coordinates; times
        the file leaves to the fit count 0."""
        weight, client, pairs = self.arrays()[:3]
        client = np.where(np.isnan(client), 0.0, client)
        # per coordinator, its round trips to the others, nearest first (itself: 0)
        reach = np.sort(np.where(np.isnan(pairs), 0.0, pairs), axis=1)
        k = np.clip(np.asarray(quorum, int), 1, len(self.centre))
        return np.array([float(weight @ (client + reach[:, q - 1])) for q in k])

    def floor_ms(self, quorum) -> np.ndarray:
        """Per level in ``quorum``, the least mean latency a measured row may have
        here: `least_ms` less `ROUND_TRIP_SLACK` (published round trips against a
        benchmark's)."""
        return self.least_ms(quorum) / (1 + ROUND_TRIP_SLACK)

    def spreads(self) -> bool:
        """Whether fitted hops from the coordinating node differ (``hop_spread`` is
        used)."""
        return bool(np.any(self.arrays()[4] > 0))

    def to_toml(self) -> str:
        """The ``[datacentres]`` table (as a model file keeps it)."""
        lines = ["[datacentres]", f"nodes = {[int(c) for c in self.centre]}",
                 f"client = {int(self.client)}", f'coordinator = "{self.coordinator}"']
        if self.fitted:
            lines.append('times = "fitted"')
        if self.source:
            # a JSON string is a TOML basic string (its escapes are TOML's)
            lines.append(f"source = {json.dumps(self.source, ensure_ascii=False)}")
        lines.append("[datacentres.hops]")
        lines += [f'"{a}-{b}" = {t!r}' for (a, b), t in sorted(self.one_way.items())]
        return "\n".join(lines) + "\n"


def wide_area_signature(table) -> tuple[str, float] | None:
    """Whether measurement rows look like replicas or a client machine in other data
    centres. ``table``: rows with ``operation``, ``quorum``, ``threads``, ``mean_ms``,
    and optionally ``rate`` (NaN: closed loop) and ``reads`` (the run's share of
    reads; absent: closed loops of one operation). The
    signature: an operation's ONE latency stays within 10% over at least a 4x range
    of threads (nothing it waits for queues) while its highest level measured costs
    at least `WIDE_AREA_MS` more at the fewest threads both were measured at
    (``("step", largest such step in ms)``), or, measured at ONE only, stays at
    `WIDE_AREA_MS` or more (``("flat", its lowest latency in ms)``); measured without
    ONE, its lowest and highest levels are both fixed delays at light load and
    `WIDE_AREA_MS` or more apart (`_step_without_one`: ``"step"``); else None.
    (The saturated JMeter runs of docs/data/measurements have level steps of
    13-580 ms, but their ONE latency grows 1.15-16x with the users; where it stays
    flat, it is 13-15 ms.)"""
    keep = np.ones(len(table), bool)
    if "rate" in table:
        keep &= table.rate.isna().to_numpy()
    if "reads" in table:
        keep &= table.reads.isin((0.0, 1.0)).to_numpy()
    closed = table[keep]
    steps, flat = [], []
    for _, mine in closed.groupby("operation"):
        one = mine[mine.quorum == 1].groupby("threads").mean_ms.mean()
        if not len(one):
            step = _step_without_one(mine)
            if step is not None:
                steps.append(step)
            continue
        if one.index.max() < 4 * one.index.min() or one.max() > 1.1 * one.min():
            continue
        top = mine.quorum.max()
        high = mine[mine.quorum == top].groupby("threads").mean_ms.mean()
        shared = one.index.intersection(high.index)
        if top > 1 and len(shared):
            step = float(high[shared.min()] - one[shared.min()])
            if step >= WIDE_AREA_MS:
                steps.append(step)
        elif top == 1 and one.min() >= WIDE_AREA_MS:
            flat.append(float(one.min()))
    if steps:
        return "step", max(steps)
    if flat:
        return "flat", min(flat)
    return None


#: How far a settled level's latency may rise (`settled`).
SETTLED_RISE = 0.10


def settled(latency) -> bool:
    """Whether a level's mean latency (by threads) stays within `SETTLED_RISE` from
    its fewest threads to at least twice as many: a fixed delay, not a queue filling
    up."""
    light = latency[latency.index <= 2 * latency.index.min()]
    return light.index.max() >= 2 * light.index.min() \
        and light.max() <= (1 + SETTLED_RISE) * light.min()


def _step_without_one(rows) -> float | None:
    """The wide-area step of one operation's rows measured without ONE: the lowest and
    the highest level both settled at light load (`settled`) and the highest at least
    `WIDE_AREA_MS` above the lowest at the fewest threads both were measured at (its
    size in ms); else None. Karpenko D's QUORUM and ALL reads: 243 and 306 ms, each
    within 5% from 100 to 200 threads. Without their ONE rows, none of the other 22
    published files has both levels settled but one JMeter run, whose levels are 5 ms
    apart."""
    levels = rows.groupby(["quorum", "threads"]).mean_ms.mean()
    low, top = rows.quorum.min(), rows.quorum.max()
    if top == low:
        return None
    lowest, highest = levels[low], levels[top]
    if not (settled(lowest) and settled(highest)):
        return None
    shared = lowest.index.intersection(highest.index)
    if not len(shared):
        return None
    step = float(highest[shared.min()] - lowest[shared.min()])
    return step if step >= WIDE_AREA_MS else None


def checked_against(given: Geography, table, row_name=None) -> str | None:
    """Refuse a ``--datacentres`` file the measured rows (``table``: ``quorum``,
    ``mean_ms`` and ``label`` per row; ``row_name(i)`` names the i-th where its file
    has it) cannot have come from: a row faster than the round trips its level waits
    for (`Geography.floor_ms`): times given as round trips,
    the client in the wrong data centre, or rows in another unit; the doubt about a
    file all of whose times are local while the rows look wide-area
    (`wide_area_signature`): seconds, not milliseconds. Before any fit."""
    mean = table.mean_ms.to_numpy(float)
    quorum = table.quorum.to_numpy()
    least = given.least_ms(quorum)
    short = np.flatnonzero(mean < given.floor_ms(quorum))
    if len(short):
        i = int(short[np.argmax(least[short] / mean[short])])
        label = table.label.iloc[i]
        where = f"{row_name(i)} ({label})" if row_name is not None else f"the row {label}"
        unit = (" or mean_ms is not in milliseconds (seconds? then x 1000)"
                if least[i] > 10 * mean[i] else "")
        raise ConfigError(
            f"{where} took {mean[i]:.4g} ms, less than the round "
            f"trips its level waits for by --datacentres, {least[i]:.4g} ms (the "
            "client's to its coordinator and the coordinator's to the replicas): no "
            "request returns before its round trips; the hops are one-way times in "
            "milliseconds (half a ping's round trip): check they are not round trips "
            f"and that the client's data centre is right{unit}")
    signature = wide_area_signature(table)
    apart = [t for (a, b), t in given.one_way.items() if a != b]
    if signature is not None and apart and max(apart) < LOCAL_ONE_WAY_MS:
        return (f"the rows look wide-area ({_signature_text(signature)}) but the "
                f"longest one-way time in --datacentres is {max(apart):.3g} ms: the hops "
                "are in milliseconds (seconds x 1000); with these the fit lays the "
                "wide-area time on the client machine or the nodes")
    return None


def wide_local_hops(given: Geography, demands: dict) -> str | None:
    """The doubt about a fit (its ``demands``, by `sizing.closed_network.DEMANDS`
    name) whose hops within one data centre (the pairs ``given`` leaves to the fit)
    came out as long as a wide-area round trip: the file likely puts the client, or
    two nodes, in one data centre where they stand in two."""
    weight, client, pairs = given.arrays()[:3]
    centre = np.asarray(given.centre)
    found = []
    # pairs within one data centre the file leaves to the fit (with times = "fitted"
    # a pair of two data centres may be left to it too, and be long)
    if np.any(np.isnan(client) & (weight > 0) & (centre == given.client)) \
            and 2 * demands["hop_client"] > WIDE_AREA_MS:
        found.append(f"the client's round trip to a coordinator in its own data centre "
                     f"{2 * demands['hop_client']:.3g} ms")
    same = (centre[:, None] == centre[None, :]) & ~np.eye(len(centre), dtype=bool)
    if np.any(np.isnan(pairs) & same) and 2 * demands["hop_replica"] > WIDE_AREA_MS:
        found.append(f"a round trip between two nodes of one data centre "
                     f"{2 * demands['hop_replica']:.3g} ms")
    if not found:
        return None
    return (f"the fit makes {' and '.join(found)}, a wide-area time (a round trip "
            f"within one data centre takes well under {WIDE_AREA_MS:g} ms): check that "
            "--datacentres puts the client and the nodes in the data centres they stood "
            "in")


def _signature_text(signature) -> str:
    kind, ms = signature
    return (f"a level costs {ms:.3g} ms more at the fewest threads" if kind == "step"
            else f"ONE stays at {ms:.3g} ms or more whatever the threads")


def placement(table, nodes: int, replicas: int, given=None):
    """(geography, signature) a calibration of ``table`` uses: ``given`` (from
    ``--datacentres``) if any; else `Geography.wide_area` when the rows show the
    levels' wide-area cost (`wide_area_signature` ``"step"``) and every node holds
    every key (what the data-centre model covers); else None (one data centre). The
    signature is returned either way.

    A flat, slow ONE alone (``"flat"``) puts the client machine far from the
    coordinator but cannot tell whether the replicas are far from each other too
    (Karpenko D, where QUORUM adds 117 ms) or close (a remote client: QUORUM adds a
    local round trip). Fitted across data centres, the second would come out a round
    trip too slow; in one data centre, the first comes out as slow as ONE, no worse
    than the guess "same as ONE". So those rows stay in one data centre (with a
    warning)."""
    if given is not None:
        return given, None
    signature = wide_area_signature(table)
    if signature is not None and signature[0] == "step" and replicas == nodes:
        return Geography.wide_area(nodes), signature
    return None, signature
