"""Approximate mean-value analysis of Cassandra's read and write path as a closed network.

A closed loop of ``threads`` clients, each thinking ``think_ms`` between a reply and its
next request, sends requests along the path of `forkjoin_sim.steps.builders`: client
work, a hop, coordinator work, a fork to the replicas (a remote replica behind a message
on each side and a hop each way), a join at the ``quorum``-th reply, a hop, client work.

Stations and approximations (all stated here, tested against the steps engine in
tests/test_closed_network.py):

- **Nodes are symmetric** (in one data centre; with a `sizing.geography.Geography`,
  `_row_geo` places nodes and client and picks the coordinator by its rule): the
  coordinator is a uniformly random node and replica sets uniform, so every node
  carries ``1/nodes`` of a request's node work. A node is one
  FCFS station of ``cores`` servers (the ``shared`` layout).
- **Multi-server stations by Seidmann's approximation**: ``c`` servers with demand
  ``D`` are one server of demand ``D/c`` plus a delay of ``D (c-1)/c``; the single
  server's queue follows Schweitzer's arrival approximation (an arrival sees the
  queue of ``threads - 1`` clients, ``(T-1)/T`` of the mean queue). Given throughput
  ``X`` the queue is then closed form, ``X D/c / (1 - (T-1)/T X D/c)``, and the mean
  residence of every visit is its work times one stretch factor per station.
- **The k-of-r join** is the expected ``quorum``-th order statistic of independent
  branch times, each a constant (its hops; folded into the random part in the
  random-hops structures) plus a random part whose mean is the branch's residence at
  the nodes, shaped by ``branch_cv`` (1: an exponential, as an M/M/1 sojourn is, a sum
  of them approximated by one exponential of the summed mean; below 1 a mixed Erlang,
  above a hyperexponential). Branches that are not awaited
  still load the nodes (Cassandra does not cancel them).
- Throughput solves ``X (think + R(X)) = threads`` (a bracketed search on ``log X``).

Structures (what queues): ``replica-queues`` (only replica work queues on the node
cores; coordinator, message and client work are constant delays, like the model of
`sizing.calibration`), ``shared`` (coordinator, messages and replica work queue on the
node's shared cores; reads ask every replica, as the steps builders do),
``shared-digest`` (as ``shared``, but a read asks only ``quorum`` replicas: one data
read, the others digests, as Cassandra does) and ``shared-digest-client`` (plus the
client machine as a station of ``client_cores`` servers) and ``client-bound`` (as
``shared-digest-client``, and the client machine also does ``client_outside`` work per
request outside the measured latency, e.g. a benchmark tool's own bookkeeping, queued on
the same cores), ``random-hops`` (as ``client-bound``, and the coordinator-replica hops
are random: folded into each remote branch's random part instead of its constant shift;
the client hop stays constant) and ``digest-random-hops`` (as ``shared-digest`` with the
hops random in the same way), ``lanes`` (as ``digest-random-hops``, but a node is
``lanes`` separate single-server lanes (a fitted demand, not its cores), not a shared
pool: a request's work at a node waits in one lane at random, as work bound to a
connection's event loop, a thread-per-core shard or a fixed thread does; the same
capacity, reached more softly: with ``K`` lanes in all and one visit of service ``S``
each, a closed loop's latency is about ``S + (threads - 1) S / K``), and three variants
of ``lanes`` that the held-out comparison sets beside it: ``lanes-client`` (plus the
client machine as a station of ``client_cores`` servers that also does
``client_outside`` work, as in ``random-hops``), ``lanes-replicas`` (only replica work
waits in the lanes; coordinator and message work are constant delays, as in
``replica-queues``) and ``lanes-fixed-hops`` (the coordinator-replica hops are the
constant shifts of ``shared-digest``, not folded into the branches' random parts).
Only ``client-bound``, ``random-hops`` and ``lanes-client`` use ``client_outside``.
Every structure shapes a branch's random part by ``branch_cv``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from forkjoin_sim.errors import ConfigError


@dataclass(frozen=True)
class Structure:
    """What queues where in one model structure: ``queue_coordinator`` (coordinator and
    message work queue at the nodes; else constant delays), ``digest_reads`` (a read
    asks ``quorum`` replicas, one data read and digests; else every replica for data),
    ``client_station`` (the client machine is a station of ``client_cores`` servers),
    ``outside_queued`` (the client also works outside the measured latency, on those
    cores), ``random_hops`` (coordinator-replica hops folded into each branch's random
    part), ``lanes`` (a node is separate single-server lanes, not a shared pool)."""

    queue_coordinator: bool = True
    digest_reads: bool = True
    client_station: bool = False
    outside_queued: bool = False
    random_hops: bool = False
    lanes: bool = False


#: Model structures by name, in the order of the report (the module docstring says
#: what each is).
LAYOUTS = {
    "replica-queues": Structure(queue_coordinator=False, digest_reads=False),
    "shared": Structure(digest_reads=False),
    "shared-digest": Structure(),
    "shared-digest-client": Structure(client_station=True),
    "client-bound": Structure(client_station=True, outside_queued=True),
    "random-hops": Structure(client_station=True, outside_queued=True, random_hops=True),
    "digest-random-hops": Structure(random_hops=True),
    "lanes": Structure(random_hops=True, lanes=True),
    "lanes-client": Structure(random_hops=True, lanes=True, client_station=True,
                              outside_queued=True),
    "lanes-replicas": Structure(queue_coordinator=False, random_hops=True, lanes=True),
    "lanes-fixed-hops": Structure(lanes=True),
}
STRUCTURES = tuple(LAYOUTS)


def structure_of(name: str) -> Structure:
    """The `Structure` called ``name``; a `ConfigError` naming the choices if none."""
    if name not in LAYOUTS:
        raise ConfigError(f"structure {name!r}; use one of {', '.join(STRUCTURES)}")
    return LAYOUTS[name]


#: Per-visit demands (ms), the fitted parameters.
DEMANDS = ("client", "hop_client", "hop_replica", "coordinate", "message", "work",
           "digest_ratio", "client_outside", "branch_cv", "link_window", "mutation_ratio",
           "lanes", "hop_spread")

#: Gauss-Legendre points per smooth piece of the order-statistic integral.
_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(20)


@dataclass(frozen=True)
class Demands:
    """Per-request demands in ms: ``client`` (client-machine work, half before and half
    after), ``hop_client`` (one way, client-coordinator), ``hop_replica`` (one way,
    coordinator-replica), ``coordinate`` (coordinator work, half before the fork and
    half at the join), ``message`` (per message send or receive), ``work`` (a data read
    at a replica), ``digest_ratio`` (digest read / data read),
    ``client_outside`` (client-machine work outside the measured latency),
    ``branch_cv`` (coefficient of variation of a branch's random part: 1 exponential,
    below 1 a mixed Erlang (a sum of exponential phases, as a branch is a sum of
    stages), above 1 a balanced two-phase hyperexponential), ``link_window`` (messages
    in flight per direction of a link between two data centres; used only with a
    `sizing.geography.Geography`),
    ``mutation_ratio`` (a mutation at a replica / a data read), ``lanes`` (separate
    single-server lanes per node, in the ``lanes`` structure, which uses them instead
    of the node's cores), ``hop_spread`` (with a geography whose coordinating node's
    hops to the others are fitted: the farthest one over the nearest, those between
    spread evenly in log; see `sizing.geography.Geography.arrays`)."""

    client: float = 0.0
    hop_client: float = 0.0
    hop_replica: float = 0.0
    coordinate: float = 0.0
    message: float = 0.0
    work: float = 1.0
    digest_ratio: float = 1.0
    client_outside: float = 0.0
    branch_cv: float = 1.0
    link_window: float = float("inf")
    mutation_ratio: float = 1.0
    lanes: float = 32.0
    hop_spread: float = 1.0

    def vector(self) -> np.ndarray:
        """The demands in the order of `DEMANDS`."""
        return np.array([getattr(self, name) for name in DEMANDS], float)


@numba.njit(cache=True)
def _phases(cv):
    """Balanced-means two-phase hyperexponential of coefficient of variation ``cv``
    (> 1): probability of the fast phase, and each phase's mean in units of the mean."""
    c2 = cv * cv
    fast = 0.5 * (1.0 + np.sqrt((c2 - 1.0) / (c2 + 1.0)))
    return fast, 1.0 / (2.0 * fast), 1.0 / (2.0 * (1.0 - fast))


#: Smallest coefficient of variation of a branch's random part: a mixed Erlang of at
#: most 25 phases (a smaller ``branch_cv`` acts as this one).
SMALLEST_CV = 0.2


@numba.njit(cache=True)
def mixed_erlang(cv):
    """Mixed Erlang of coefficient of variation ``cv`` (< 1; Tijms' two-moment fit):
    ``phases`` - 1 phases with probability ``fewer``, else ``phases``, each phase at
    ``rate`` per unit of the mean."""
    c2 = max(cv, SMALLEST_CV) ** 2
    phases = max(int(np.ceil(1.0 / c2 - 1e-9)), 2)
    root = np.sqrt(phases * (1.0 + c2) - phases * phases * c2)
    fewer = (phases * c2 - root) / (1.0 + c2)
    return phases, fewer, phases - fewer


@numba.njit(cache=True)
def _survival(t, shift, scale, count, quorum, prob, cv, phases, fewer, rate):
    """P(fewer than ``quorum`` of the branches are done by ``t``) (Poisson-binomial);
    a branch is ``shift`` plus a random part of mean ``scale``: exponential at ``cv``
    1, a balanced two-phase hyperexponential above, below the mixed Erlang of
    ``phases``, ``fewer`` and ``rate`` (`mixed_erlang` of ``cv``, found once per
    integral by the caller)."""
    prob[:] = 0.0
    prob[0] = 1.0
    fast, first, second = _phases(max(cv, 1.0 + 1e-9))
    for i in range(count):
        p = 0.0
        if t > shift[i]:
            u = (t - shift[i]) / max(scale[i], 1e-12)
            if cv > 1.0:
                p = 1.0 - fast * np.exp(-u / first) - (1.0 - fast) * np.exp(-u / second)
            elif cv < 1.0:
                x = rate * u
                # (far past the mean x**j/j! would overflow where exp(-x) is 0)
                p = 1.0
                if x < 700.0:
                    term, below = 1.0, 0.0
                    for j in range(phases - 1):
                        below += term
                        term *= x / (j + 1)
                    p -= np.exp(-x) * (fewer * below + (1.0 - fewer) * (below + term))
            else:
                p = 1.0 - np.exp(-u)
        for j in range(i + 1, 0, -1):
            prob[j] = prob[j] * (1.0 - p) + prob[j - 1] * p
        prob[0] *= 1.0 - p
    survive = 0.0
    for j in range(quorum):
        survive += prob[j]
    return survive


@numba.njit(cache=True)
def _kth_mean(shift, scale, count, quorum, nodes, weights, cv):
    """Mean of the ``quorum``-th smallest of ``count`` independent branches, each
    ``shift`` plus a random part of mean ``scale`` shaped by ``cv`` (`_survival`): the
    integral of its survival function, exact below the smallest shift, Gauss-Legendre
    between breakpoints, where it is smooth (the shifts, and below ``cv`` 1 each
    branch's mean -+ 4 sd: a narrow mixed Erlang would slip between the points), and
    on 40 scales past the last."""
    spread = 4.0 * max(cv, SMALLEST_CV)
    marks = 3 * count if cv < 1.0 else count
    ends = np.empty(marks)
    for i in range(count):
        ends[i] = shift[i]
        if cv < 1.0:
            ends[count + i] = shift[i] + scale[i] * max(1.0 - spread, 0.0)
            ends[2 * count + i] = shift[i] + scale[i] * (1.0 + spread)
    ends = np.sort(ends)
    longest = 1e-12
    slow = _phases(cv)[2] if cv > 1.0 else 1.0
    for i in range(count):
        longest = max(longest, scale[i] * slow)
    phases, fewer, rate = mixed_erlang(min(cv, 1.0 - 1e-9))
    prob = np.zeros(count + 1)
    total = ends[0]
    for piece in range(marks):
        a = ends[piece]
        last = piece + 1 == marks
        b = a + 40.0 * longest if last else ends[piece + 1]
        if b <= a:
            continue
        half = 0.5 * (b - a)
        for g in range(len(nodes)):
            if not last:
                total += half * weights[g] * _survival(
                    a + half * (nodes[g] + 1.0), shift, scale, count, quorum, prob, cv,
                    phases, fewer, rate)
            else:
                # the tail decays exponentially: integrate in u = 1 - exp(-(t-a)/L)
                u = 0.5 * (nodes[g] + 1.0) * (1.0 - np.exp(-40.0))
                t = a - longest * np.log1p(-u)
                total += 0.5 * (1.0 - np.exp(-40.0)) * weights[g] * longest / (1.0 - u) \
                    * _survival(t, shift, scale, count, quorum, prob, cv, phases, fewer,
                                rate)
    return total


#: Most evaluations of a closed loop's throughput search (the Illinois method needs about
#: ten; bisection over the bracket's 35 e-folds would need 56).
SEARCH_STEPS = 80
#: The search stops when Little's law holds to this relative error, or the bracket on
#: the log throughput is this narrow.
SEARCH_TOLERANCE = 1e-13


@numba.njit(cache=True)
def _toward(state, u, miss):
    """One step of the search for a closed loop's throughput: ``u`` the log throughput
    just tried, ``miss`` there the log of (throughput x cycle time / threads), which
    grows with ``u``. ``state`` (changed in place) holds the bracket: low end, its
    miss, high end, its miss (NaN until tried) and which end moved last. The high end
    is tried first (a miss <= 0 there: the loop runs at that throughput), then the
    low end, then the Illinois point of the two (regula falsi that halves the miss
    of an end kept twice, which makes it converge superlinearly). Returns the next
    log throughput to try and whether ``u`` is the answer."""
    if np.isnan(state[3]):
        state[3] = miss
        return state[0], miss <= 0.0
    if np.isnan(state[1]):
        state[1] = miss
        done = miss >= 0.0
    else:
        done = abs(miss) < SEARCH_TOLERANCE
        if miss > 0.0:
            state[2], state[3] = u, miss
            if state[4] > 0.0:
                state[1] *= 0.5
            state[4] = 1.0
        else:
            state[0], state[1] = u, miss
            if state[4] < 0.0:
                state[3] *= 0.5
            state[4] = -1.0
        done = done or state[2] - state[0] < SEARCH_TOLERANCE
    lo, miss_lo, hi, miss_hi = state[0], state[1], state[2], state[3]
    return (lo * miss_hi - hi * miss_lo) / (miss_hi - miss_lo), done


@numba.njit(cache=True)
def _finish(threads, think, response, away, own, rate, x):
    """(mean latency of the row's own class, throughput). Closed loop: at the
    throughput ``x`` found, where near saturation R(X) is steep, so Little's law gives
    the mixed response, shared by the classes as the model's responses are. Open loop
    (``rate`` > 0, evaluated at ``x``): the model's response; an offered rate past the
    busiest station's capacity (``x`` < ``rate``) grows it with the square of the
    overload (a finite run's latency keeps growing with the backlog; the square keeps
    a fit's way back to a stable load)."""
    if rate > 0.0:
        return own * (rate / x) ** 2, x
    if response <= 0.0:
        return 0.0, x
    return (threads / x - think) * response / (response + away) * own / response, x


@numba.njit(cache=True)
def _join(shift, scale, asked, need, cv):
    """Mean time to the ``need``-th of ``asked`` branches (`_kth_mean` on this module's
    quadrature points)."""
    return _kth_mean(shift, scale, asked, need, _NODES, _WEIGHTS, cv)


@numba.njit(cache=True)
def _stretch(u, a, servers, lanes=False):
    """Mean residence per unit of demand at a station of ``servers`` servers whose
    single-server part (Seidmann) is at utilisation ``u``, an arrival seeing ``a`` of
    the mean queue (Schweitzer; 1 in an open loop). ``lanes``: the servers are not
    shared but separate single-server lanes, a visit waiting in one at random (each at
    utilisation ``u``): it waits behind its own lane's queue, whole."""
    q = u / (1.0 - a * u) if a * u < 1.0 else 1e12
    if lanes:
        return 1.0 + a * q
    return (1.0 + a * q) / servers + (servers - 1.0) / servers


@numba.njit(cache=True)
def _asked(write, quorum, replicas, digest_reads):
    """(replicas asked, replies awaited) of one request: a write, or a read without
    digests, asks every replica and waits for ``quorum``; a digest read asks
    ``quorum`` and waits for all of them."""
    if write or not digest_reads:
        return replicas, quorum
    return quorum, quorum


@numba.njit(cache=True)
def _node_load(write, quorum, nodes, replicas, work, digest, coord, msg,
               queue_coordinator, digest_reads):
    """Work one request of a class queues at each node (symmetric nodes); ``work`` is
    the class's own replica work (a mutation for a write)."""
    asked = _asked(write, quorum, replicas, digest_reads)[0]
    if write or not digest_reads:
        queued = asked * work
    else:
        queued = work + (asked - 1) * work * digest
    if queue_coordinator:
        queued += coord + 4.0 * msg * (asked - replicas / nodes)
    return queued / nodes


@numba.njit(cache=True)
def _branches(write, quorum, nodes, replicas, work, digest, hop_r, msg, f_node, f_coord,
              digest_reads, random_hops, cv, shift, scale):
    """Mean time from the fork to the join of one request of a class (symmetric
    nodes; the coordinator holds a replica with probability replicas / nodes);
    ``work`` as in `_node_load`."""
    local_p = replicas / nodes
    asked, need = _asked(write, quorum, replicas, digest_reads)
    join = 0.0
    for case in range(2):
        weight = local_p if case == 0 else 1.0 - local_p
        if weight <= 0.0:
            continue
        for i in range(asked):
            # branch 0 is the data read (the local replica when there is one)
            w = work if (write or not digest_reads or i == 0) else work * digest
            if case == 0 and i == 0:
                shift[i] = 0.0
                scale[i] = w * f_node
            elif random_hops:
                shift[i] = 0.0
                scale[i] = 2.0 * hop_r + w * f_node + 4.0 * msg * f_coord
            else:
                shift[i] = 2.0 * hop_r
                scale[i] = w * f_node + 4.0 * msg * f_coord
        join += weight * _join(shift, scale, asked, need, cv)
    return join


@numba.njit(cache=True)
def _row(d, threads, think, rate, reads, other_quorum, nodes, replicas, quorum, write,
         cores, client_cores, queue_coordinator, digest_reads, client_station,
         outside_queued, random_hops=False, lanes=False):
    """(mean latency of the row's class, throughput) of one row; ``d`` in the order of
    `DEMANDS`. ``rate`` > 0: an open loop offering that many requests per ms (else a
    closed loop of ``threads``); ``reads``: the run's share of reads, the other class
    at ``other_quorum``."""
    client, hop_c, hop_r, coord, msg, work, digest = d[0], d[1], d[2], d[3], d[4], \
        d[5], d[6]
    outside = d[7] if outside_queued else 0.0
    cv = d[8]
    if lanes:
        cores = d[11]
    # each class's own replica work: a data read, or a mutation
    mine, theirs = (work * d[10], work) if write else (work, work * d[10])
    share = 1.0 - reads if write else reads
    per_node = share * _node_load(write, quorum, nodes, replicas, mine, digest, coord,
                                  msg, queue_coordinator, digest_reads)
    if share < 1.0:
        per_node += (1.0 - share) * _node_load(not write, other_quorum, nodes, replicas,
                                               theirs, digest, coord, msg,
                                               queue_coordinator, digest_reads)
    client_queued = client + outside if client_station else 0.0
    is_open = rate > 0.0
    a = 1.0 if is_open else (threads - 1.0) / threads
    # the throughput is at most the busiest station's capacity (utilisation 1)
    x_max = 1e300
    if per_node > 0:
        x_max = min(x_max, cores / per_node if a > 0 else 1e300)
    if client_queued > 0:
        x_max = min(x_max, client_cores / client_queued if a > 0 else 1e300)
    shift = np.zeros(replicas)
    scale = np.zeros(replicas)
    if is_open:
        u = np.log(min(rate, x_max * (1.0 - 1e-3)))
    else:
        hi = min(x_max, threads / max(think + outside + client + 2 * hop_c + coord,
                                      1e-12))
        u = np.log(hi * (1.0 - 1e-12))
    response = own = away = x = 0.0
    # the throughput: searched from the bracket's top down 35 e-folds (`_toward`)
    state = np.array([u - 35.0, np.nan, u, np.nan, 0.0])
    for _ in range(1 if is_open else SEARCH_STEPS):
        x = np.exp(u)
        # Seidmann + Schweitzer stretch per station
        f_node = _stretch(x * per_node / cores, a, cores, lanes)
        f_client = _stretch(x * client_queued / client_cores, a, client_cores)
        f_coord = f_node if queue_coordinator else 1.0
        f_cl = f_client if client_station else 1.0
        fixed = client * f_cl + 2.0 * hop_c + coord * f_coord
        own = fixed + _branches(write, quorum, nodes, replicas, mine, digest, hop_r, msg,
                                f_node, f_coord, digest_reads, random_hops, cv, shift,
                                scale)
        response = share * own
        if share < 1.0:
            response += (1.0 - share) * (fixed + _branches(
                not write, other_quorum, nodes, replicas, theirs, digest, hop_r, msg,
                f_node, f_coord, digest_reads, random_hops, cv, shift, scale))
        away = outside * f_cl
        if not is_open:
            u, done = _toward(state, u, np.log(x * (think + away + response) / threads))
            if done:
                break
    return _finish(threads, think, response, away, own, rate, x)


@numba.njit(cache=True)
def _geo_load(write, quorum, share, n, order, weight, work, digest, coord, msg, trip,
              cross, queue_coordinator, digest_reads, node_demand, link_demand):
    """Adds ``share`` of one request of a class to each node's and each directed
    link's demand (in place); ``work`` is the class's own replica work."""
    asked = _asked(write, quorum, n, digest_reads)[0]
    remote_work = work if (write or not digest_reads) else work * digest
    for c in range(n):
        w = weight[c] * share
        if w == 0.0:
            continue
        node_demand[c] += w * work
        if queue_coordinator:
            node_demand[c] += w * (coord + 2.0 * msg * (asked - 1))
        for j in range(asked - 1):
            r = order[c, j]
            node_demand[r] += w * (remote_work + (2.0 * msg if queue_coordinator else 0.0))
        for j in range(quorum - 1):
            r = order[c, j]
            if cross[c, r]:
                link_demand[c, r] += w * trip[c, r]


@numba.njit(cache=True)
def _geo_response(write, quorum, n, order, weight, work, digest, coord, msg, client,
                  trip, to_client, cross, window, link_demand, f, f_cl, x, a,
                  queue_coordinator, digest_reads, random_hops, cv, shift, scale):
    """Mean response of one request of a class, averaged over its coordinator
    (``work`` as in `_geo_load`)."""
    asked, need = _asked(write, quorum, n, digest_reads)
    remote_work = work if (write or not digest_reads) else work * digest
    response = 0.0
    for c in range(n):
        w = weight[c]
        if w == 0.0:
            continue
        f_c = f[c] if queue_coordinator else 1.0
        fixed = client * f_cl + to_client[c] + coord * f_c
        shift[0] = 0.0
        scale[0] = work * f[c]
        for j in range(asked - 1):
            r = order[c, j]
            hop = trip[c, r]
            if cross[c, r] and np.isfinite(window) and link_demand[c, r] > 0:
                hop *= _stretch(x * link_demand[c, r] / window, a, window)
            f_r = f[r] if queue_coordinator else 1.0
            body = remote_work * f[r] + 2.0 * msg * (f_c + f_r)
            if random_hops and not cross[c, r]:
                shift[j + 1] = 0.0
                scale[j + 1] = hop + body
            else:
                shift[j + 1] = hop
                scale[j + 1] = body
        response += w * (fixed + _join(shift, scale, asked, need, cv))
    return response


@numba.njit(cache=True)
def _row_geo(d, threads, think, rate, reads, other_quorum, quorum, write, cores,
             client_cores, queue_coordinator, digest_reads, client_station,
             outside_queued, random_hops, weight, client_rtt, rtt, cross, rank,
             lanes=False):
    """(mean latency of the row's class, throughput) of one row of a cluster placed in
    data centres (`sizing.geography.Geography.arrays`: ``weight`` per node of
    coordinating, ``client_rtt``, ``rtt`` per pair of nodes, NaN for the fitted hops,
    ``cross``: a link between two data centres, ``rank``: a fitted hop's place from
    the nearest (0) to the farthest (1)); ``rate``, ``reads`` and
    ``other_quorum`` as in `_row`. Every node holds every key. A digest read asks the
    coordinator (data) and the ``quorum - 1`` nearest others; a write asks all and
    waits for ``quorum``. Each direction of a link between data centres is a station
    of ``link_window`` servers whose service is the round trip, loaded by the
    branches a request waits for (a message nobody waits for is dropped and hinted
    past its timeout rather than queued)."""
    n = len(weight)
    client, hop_c, hop_r, coord, msg, work, digest = d[0], d[1], d[2], d[3], d[4], \
        d[5], d[6]
    outside = d[7] if outside_queued else 0.0
    cv = d[8]
    window = d[9]
    if lanes:
        cores = d[11]
    mine, theirs = (work * d[10], work) if write else (work, work * d[10])
    trip = rtt.copy()
    for i in range(n):
        for j in range(n):
            if np.isnan(trip[i, j]):
                trip[i, j] = 2.0 * hop_r * d[12] ** rank[i, j]
    to_client = np.where(np.isnan(client_rtt), 2.0 * hop_c, client_rtt)
    # per coordinator, the other nodes from the nearest; equally near ones in turn
    # from the coordinator's right (c+1, c+2, ...), which spreads the load evenly
    order = np.empty((n, n - 1), np.int64)
    for c in range(n):
        key = np.empty(n)
        for r in range(n):
            key[r] = -1.0 if r == c else (r - c) % n
        order[c] = np.argsort(key, kind="mergesort")[1:]
        near = np.argsort(trip[c][order[c]], kind="mergesort")
        order[c] = order[c][near]
    share = 1.0 - reads if write else reads
    node_demand = np.zeros(n)
    link_demand = np.zeros((n, n))
    _geo_load(write, quorum, share, n, order, weight, mine, digest, coord, msg, trip,
              cross, queue_coordinator, digest_reads, node_demand, link_demand)
    if share < 1.0:
        _geo_load(not write, other_quorum, 1.0 - share, n, order, weight, theirs, digest,
                  coord, msg, trip, cross, queue_coordinator, digest_reads, node_demand,
                  link_demand)
    client_queued = client + outside if client_station else 0.0
    is_open = rate > 0.0
    a = 1.0 if is_open else (threads - 1.0) / threads
    x_max = 1e300
    if a > 0:
        for i in range(n):
            if node_demand[i] > 0:
                x_max = min(x_max, cores / node_demand[i])
        if client_queued > 0:
            x_max = min(x_max, client_cores / client_queued)
        if np.isfinite(window):
            for i in range(n):
                for j in range(n):
                    if link_demand[i, j] > 0:
                        x_max = min(x_max, window / link_demand[i, j])
    if is_open:
        u = np.log(min(rate, x_max * (1.0 - 1e-3)))
    else:
        least = 0.0
        for c in range(n):
            least += weight[c] * to_client[c]
        hi = min(x_max, threads / max(think + outside + client + least + coord, 1e-12))
        u = np.log(hi * (1.0 - 1e-12))
    shift = np.zeros(n)
    scale = np.zeros(n)
    f = np.ones(n)
    response = own = away = x = 0.0
    # the throughput: searched from the bracket's top down 35 e-folds (`_toward`)
    state = np.array([u - 35.0, np.nan, u, np.nan, 0.0])
    for _ in range(1 if is_open else SEARCH_STEPS):
        x = np.exp(u)
        for i in range(n):
            f[i] = _stretch(x * node_demand[i] / cores, a, cores, lanes)
        f_client = _stretch(x * client_queued / client_cores, a, client_cores)
        f_cl = f_client if client_station else 1.0
        own = _geo_response(write, quorum, n, order, weight, mine, digest, coord, msg,
                            client, trip, to_client, cross, window, link_demand, f, f_cl,
                            x, a, queue_coordinator, digest_reads, random_hops, cv,
                            shift, scale)
        response = share * own
        if share < 1.0:
            response += (1.0 - share) * _geo_response(
                not write, other_quorum, n, order, weight, theirs, digest, coord, msg,
                client, trip, to_client, cross, window, link_demand, f, f_cl, x, a,
                queue_coordinator, digest_reads, random_hops, cv, shift, scale)
        away = outside * f_cl
        if not is_open:
            u, done = _toward(state, u, np.log(x * (think + away + response) / threads))
            if done:
                break
    return _finish(threads, think, response, away, own, rate, x)


def reads_of(rows) -> np.ndarray:
    """Per row of `predict`, its run's share of reads (absent: the row's own operation
    only)."""
    write = np.asarray(rows["write"], bool)
    return np.asarray(rows.get("reads", np.where(write, 0.0, 1.0)), float)


def one_operation(rows) -> np.ndarray:
    """Per row of `predict`, whether its run did its own operation only (no class of
    the other operation shares its queues)."""
    write = np.asarray(rows["write"], bool)
    return reads_of(rows) == np.where(write, 0.0, 1.0)


def single_closed(rows) -> np.ndarray:
    """Per row of `predict`, whether it is a closed loop of one operation: its clients'
    cycle holds its own latency only."""
    write = np.asarray(rows["write"], bool)
    rate = np.asarray(rows.get("rate", np.full(len(write), np.nan)), float)
    return ~np.isfinite(rate) & one_operation(rows)


def predict(demands, rows, structure: str = "shared-digest", cores: int = 4,
            client_cores: int = 4, geography=None):
    """Mean latency (ms) and throughput (ops/ms) per row.

    ``demands``: a `Demands` or an array in the order of `DEMANDS`. ``rows``: a mapping
    of equal-length arrays ``threads``, ``think_ms``, ``nodes``, ``replicas``,
    ``quorum``, ``write`` (bool: the row measures writes), and optionally ``rate``
    (ops/s offered by an open loop; NaN or absent: a closed loop of ``threads``),
    ``reads`` (the run's share of reads; absent: 0 for a write row, 1 for a read row)
    and ``other_quorum`` (the quorum of the run's other operation; absent: the row's
    own). ``geography``: a `sizing.geography.Geography` placing the nodes and the
    client in data centres (every row then has its nodes and replicas = nodes).
    """
    layout = structure_of(structure)
    d = demands.vector() if isinstance(demands, Demands) else np.asarray(demands, float)
    if d.shape != (len(DEMANDS),) or np.any(d < 0):
        raise ConfigError(f"demands {d}; give {len(DEMANDS)} values >= 0 in the order "
                          f"{', '.join(DEMANDS)}")
    if d[DEMANDS.index("hop_spread")] < 1:
        raise ConfigError(f"hop_spread {d[DEMANDS.index('hop_spread')]}; give the "
                          "farthest fitted hop over the nearest, >= 1")
    threads = np.asarray(rows["threads"], float)
    count = len(threads)
    rate = np.asarray(rows.get("rate", np.full(count, np.nan)), float)
    is_open = np.isfinite(rate)
    if np.any(is_open & ~(rate > 0)):
        raise ConfigError("a row offers a rate <= 0; give an open loop's rate in "
                          "operations per second (> 0)")
    if np.any(~is_open & ~(threads >= 1)):
        raise ConfigError("threads < 1 in a row; give at least one client thread")
    replicas = np.asarray(rows["replicas"], np.int64)
    quorum = np.asarray(rows["quorum"], np.int64)
    other = np.asarray(rows.get("other_quorum", quorum), np.int64)
    nodes = np.asarray(rows["nodes"], np.int64)
    if np.any((np.minimum(quorum, other) < 1) | (np.maximum(quorum, other) > replicas)
              | (replicas > nodes)):
        raise ConfigError("a row has quorum > replicas or replicas > nodes; use "
                          "1 <= quorum <= replicas <= nodes")
    think = np.asarray(rows.get("think_ms", np.zeros(count)), float)
    write = np.asarray(rows["write"], bool)
    reads = reads_of(rows)
    if np.any(~((reads >= 0) & (reads <= 1))):
        raise ConfigError("a row's share of reads is outside [0, 1]")
    per_ms = np.where(is_open, rate / 1000.0, 0.0)
    queue_coordinator, digest_reads = layout.queue_coordinator, layout.digest_reads
    client_station, outside_queued = layout.client_station, layout.outside_queued
    random_hops, lanes = layout.random_hops, layout.lanes
    latency = np.empty(count)
    throughput = np.empty(count)
    if geography is not None:
        for size, rf in {(int(a), int(b)) for a, b in zip(nodes, replicas)}:
            geography.check_cluster(size, rf)
        weight, to_client, trip, cross, rank = geography.arrays()
        for i in range(count):
            latency[i], throughput[i] = _row_geo(
                d, threads[i], think[i], per_ms[i], reads[i], other[i], quorum[i],
                write[i], cores, client_cores, queue_coordinator, digest_reads,
                client_station, outside_queued, random_hops, weight, to_client, trip,
                cross, rank, lanes)
        return latency, throughput
    for i in range(count):
        latency[i], throughput[i] = _row(d, threads[i], think[i], per_ms[i], reads[i],
                                         other[i], nodes[i], replicas[i], quorum[i],
                                         write[i], cores, client_cores,
                                         queue_coordinator, digest_reads,
                                         client_station, outside_queued, random_hops,
                                         lanes)
    return latency, throughput
