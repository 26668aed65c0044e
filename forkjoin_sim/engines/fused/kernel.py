"""The fused kernel: draw, queue and measure every job in one compiled loop, with
constant memory, on every core.

One pass over the jobs in issue order, a block of jobs at a time. For a block the
loop draws the jobs' classes, the nodes of their tasks, their service times and the
gaps between issues (or think times), each from its own xoshiro256** stream
(`forkjoin_sim.engines.fused.rng`: one stream per purpose, each consumed in job order,
so the numbers do not depend on the block size); then queues every task FCFS on its
node by the Lindley recursion ``done = max(issue, node_free) + service / speed``
(exact because jobs reach the nodes in issue order, and nothing is purged), takes
the quorum-th completion as the job's completion, and adds the sojourns of measured
jobs to the statistics. Nothing per job outlives its block: memory is the block's
draws, the histogram and the batch accumulators, whatever the number of jobs.

Arrivals: open (gaps i.i.d. from any law: Poisson, or a renewal process) or a closed
loop of ``clients`` that each think, request, wait for the completion and think
again. Client ``c`` first requests at its initial think time; the next job is always
issued by the client with the earliest release time (ties: lower client index), kept
in a binary heap. Since nodes are FCFS, a job's completion is known when it is
issued, so its client's next release (completion + think) is too, and issue times
come out non-decreasing: the same single pass stays exact.

Measurement (the same rule as `forkjoin_sim.measure.statistics`): job ``j`` is measured iff
``j >= first_measured`` and ``(j - first_measured) % sample_every == 0``; the m-th
measured job (of ``measured`` in all) belongs to batch ``m * batches // measured``
and mini-batch ``m * mini_batches // measured``.

Replications: ``replications`` independent runs (replication ``i`` uses child ``i`` of
the seed's SeedSequence, with its own warm-up) on ``workers`` threads; the numba loop
releases the GIL. Each replication's numbers depend only on the seed and ``i``, and
they are merged in replication order, so results are identical for any worker count
and any chunk size. The mean's interval treats the batch means of all replications
(``replications * batches`` of them) as i.i.d. and uses Student's t.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass

import numba
import numpy as np

from forkjoin_sim.engines.fused.rng import (ARRIVAL, CLASS, PLACEMENT, SERVICE, below,
                                            below_step, load, seed_states, store,
                                            uniform, uniform_step)
from forkjoin_sim.errors import ConfigError
from forkjoin_sim.engines.select import SMALL, kth_smallest
from forkjoin_sim.engines.fused.laws import (EXPONENTIAL, Law, draw, draw_step, exponential,
                                             fill_exponential, law_mean, law_of, pack,
                                             scaled)
from forkjoin_sim.measure.sketch import BINS, batch_interval, bucket, quantiles

#: Placement codes.
RANDOM, RING = 0, 1
PLACEMENTS = {"random": RANDOM, "ring": RING}
SUMMARY_QUANTILES = (0.5, 0.9, 0.95, 0.99, 0.999)


# ---------------------------------------------------------------------------
# The model as the kernel sees it
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class JobClass:
    """A class of jobs: each forks ``replicas`` tasks onto distinct nodes and completes
    at its ``quorum``-th task completion.

    ``service`` is a law (anything `forkjoin_sim.engines.fused.laws.law_of` takes) for every
    task, or a tuple of one law per task position (position 0 may differ, e.g. a
    read's data request against its digests). ``probability`` is the class's share of
    jobs (normalised over the classes). ``placement`` is ``"random"`` (a uniform
    ``replicas``-subset of nodes) or ``"ring"`` (``replicas`` consecutive nodes mod
    ``nodes`` from a uniform start).
    """

    replicas: int
    quorum: int
    service: object
    probability: float = 1.0
    placement: str = "random"


@dataclass(frozen=True)
class KernelModel:
    """Nodes with speed factors, job classes and an arrival process.

    A task's service time on node ``i`` is its drawn time divided by ``speeds[i]``.
    Open arrivals: ``arrival`` is the law of the gaps between issue times (use
    `poisson` or `renewal`). Closed loop: ``clients > 0`` and ``think`` the law of
    think times (None: no thinking).
    """

    speeds: tuple
    classes: tuple
    arrival: object = None
    clients: int = 0
    think: object = None

    @property
    def nodes(self) -> int:
        return len(self.speeds)

    @property
    def closed(self) -> bool:
        return self.clients > 0

    @property
    def width(self) -> int:
        return max(c.replicas for c in self.classes)


def poisson(rate: float) -> Law:
    """Gap law of Poisson arrivals of ``rate`` jobs per unit time."""
    if not rate > 0:
        raise ConfigError(f"arrival rate {rate} must be > 0")
    return exponential(1.0 / rate)


def renewal(dist, rate: float) -> Law:
    """Gap law of a renewal process of ``rate`` jobs per unit time whose gaps follow
    ``dist`` rescaled to mean ``1 / rate``."""
    law = law_of(dist, what="arrival gap")
    mean = law_mean(law)
    if not (rate > 0 and 0 < mean < math.inf):
        raise ConfigError(f"a renewal process needs rate > 0 and a gap law of finite "
                          f"positive mean; got rate {rate}, mean {mean}")
    return scaled(law, 1.0 / (rate * mean))


@dataclass(frozen=True)
class _Arrays:
    speeds: np.ndarray
    cdf: np.ndarray
    replicas: np.ndarray
    quorum: np.ndarray
    placement: np.ndarray
    law_index: np.ndarray
    codes: np.ndarray
    params: np.ndarray
    offsets: np.ndarray
    lengths: np.ndarray
    data: np.ndarray
    arrival_law: int
    think_law: int
    clients: int


def _compile(model: KernelModel) -> _Arrays:
    speeds = np.asarray(model.speeds, dtype=float)
    if speeds.ndim != 1 or speeds.size == 0 or not np.all(speeds > 0):
        raise ConfigError(f"speeds {model.speeds!r} must be one positive factor per "
                          "node, e.g. (1, 1, 0.5)")
    classes = tuple(model.classes)
    if not classes:
        raise ConfigError("a model needs at least one job class")
    nodes = speeds.size
    laws: list[Law] = []

    def index_of(dist, what):
        law = law_of(dist, what=what)
        laws.append(law)
        return len(laws) - 1

    width = max(c.replicas for c in classes)
    law_index = np.zeros((len(classes), width), dtype=np.int64)
    for i, c in enumerate(classes):
        if not 1 <= c.replicas <= nodes:
            raise ConfigError(f"class {i}: replicas={c.replicas} must be in 1..{nodes} "
                              "(the number of nodes)")
        if not 1 <= c.quorum <= c.replicas:
            raise ConfigError(f"class {i}: quorum k={c.quorum} must satisfy 1 <= k <= "
                              f"r={c.replicas}")
        if c.placement not in PLACEMENTS:
            raise ConfigError(f"class {i}: placement {c.placement!r} is unknown; use "
                              f"{' or '.join(PLACEMENTS)}")
        if not c.probability > 0:
            raise ConfigError(f"class {i}: probability {c.probability} must be > 0")
        services = c.service if isinstance(c.service, tuple) else (c.service,)
        if len(services) not in (1, c.replicas):
            raise ConfigError(f"class {i}: give one service law or one per task "
                              f"position ({c.replicas}), not {len(services)}")
        slots = [index_of(s, f"class {i} service") for s in services]
        for t in range(c.replicas):
            law_index[i, t] = slots[t if len(slots) > 1 else 0]
    if model.closed:
        if model.arrival is not None:
            raise ConfigError("a closed loop has no arrival law; give clients and think, "
                              "or arrival alone for open arrivals")
        arrival_law = -1
        think_law = index_of(model.think if model.think is not None else Law(
            1, [0.0, 0.0, 0.0, 0.0]), "think")
    else:
        if model.arrival is None:
            raise ConfigError("open arrivals need an arrival gap law (poisson(rate) or "
                              "renewal(dist, rate)); or give clients > 0 for a closed loop")
        arrival_law = index_of(model.arrival, "arrival gap")
        think_law = -1
    probabilities = np.array([c.probability for c in classes], dtype=float)
    cdf = np.cumsum(probabilities / probabilities.sum())
    codes, params, offsets, lengths, data = pack(laws)
    return _Arrays(speeds, cdf, np.array([c.replicas for c in classes], dtype=np.int64),
                   np.array([c.quorum for c in classes], dtype=np.int64),
                   np.array([PLACEMENTS[c.placement] for c in classes], dtype=np.int64),
                   law_index, codes, params, offsets, lengths, data, arrival_law,
                   think_law, int(model.clients))


# ---------------------------------------------------------------------------
# Compiled pieces
# ---------------------------------------------------------------------------

@numba.njit(cache=True, inline="always")
def _draw_job(states, speeds, cdf, replicas, placement, law_index, codes, params,
              offsets, lengths, data, perm, swaps, chosen, service):
    """The next job's class; its task nodes and service times (divided by the node's
    speed) go to ``chosen[:r]`` and ``service[:r]``."""
    classes = cdf.size
    c = 0
    if classes > 1:
        u = uniform(states, CLASS)
        while c < classes - 1 and u >= cdf[c]:
            c += 1
    r = replicas[c]
    n = speeds.size
    if placement[c] == 1:
        start = below(states, PLACEMENT, n)
        for t in range(r):
            node = start + t
            chosen[t] = node - n if node >= n else node
    else:
        # Partial Fisher-Yates, undone afterwards so that a job's nodes depend on its
        # own numbers only.
        for t in range(r):
            s = t + below(states, PLACEMENT, n - t)
            swaps[t] = s
            perm[t], perm[s] = perm[s], perm[t]
            chosen[t] = perm[t]
        for t in range(r - 1, -1, -1):
            s = swaps[t]
            perm[t], perm[s] = perm[s], perm[t]
    for t in range(r):
        service[t] = draw(law_index[c, t], codes, params, offsets, lengths, data,
                          states, SERVICE) / speeds[chosen[t]]
    return c


@numba.njit(cache=True, inline="always")
def _kth_smallest(values, count, k):
    """The k-th smallest of ``values[:count]`` (reorders them). Min, max, or an
    odd-even transposition sort with min/max: no data-dependent branches, where an
    insertion sort mispredicts about every other comparison (measured: 17% of the
    whole loop on (9,3,2))."""
    best = values[0]
    if k == 1:
        for t in range(1, count):
            best = min(best, values[t])
        return best
    if k == count:
        for t in range(1, count):
            best = max(best, values[t])
        return best
    if count > SMALL:
        return kth_smallest(values, count, k)
    for p in range(count):
        for i in range(p & 1, count - 1, 2):
            x = values[i]
            y = values[i + 1]
            values[i] = min(x, y)
            values[i + 1] = max(x, y)
    return values[k - 1]


@numba.njit(cache=True, inline="always")
def _sift_down(times, clients, i):
    """Restore the heap order (earliest time first, ties by lower client) below
    position ``i`` of the heap held position by position in ``times`` and
    ``clients``: the entry at ``i`` moves down into the hole its smaller child leaves."""
    size = times.size
    time = times[i]
    client = clients[i]
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        right = child + 1
        if right < size and (times[right] < times[child] or (
                times[right] == times[child] and clients[right] < clients[child])):
            child = right
        if times[child] > time or (times[child] == time and clients[child] > client):
            break
        times[i] = times[child]
        clients[i] = clients[child]
        i = child
    times[i] = time
    clients[i] = client


@numba.njit(cache=True)
def _first_thinks(states, think_law, codes, params, offsets, lengths, data, times,
                  clients):
    """The closed loop's heap of clients: client ``c`` first requests at its initial
    think time (drawn in client order); ``times`` and ``clients`` hold the heap."""
    for c in range(times.size):
        times[c] = draw(think_law, codes, params, offsets, lengths, data, states,
                        ARRIVAL)
        clients[c] = c
    for i in range(times.size // 2 - 1, -1, -1):
        _sift_down(times, clients, i)


# Blocks: each purpose is drawn in a loop of its own over one stream, whose state
# then stays in registers (drawing job by job, from rows of the state array, kept
# it in memory: 1.7 times slower on (9,3,2), measured). Separate loops for drawing,
# queueing and measuring also keep each loop's live values within the registers.
#: Tasks per block: the block's draws (16 bytes a task) stay in the L1 cache.
BLOCK_TASKS = 1024
#: Clients up to which a closed loop finds the next client by scanning their release
#: times rather than through a heap (its data-dependent branches take half the loop
#: at 27 clients; the scan is 15% faster there, 10% at 3 or 8, even at 64).
SCAN_CLIENTS = 32
#: Replicas up to which placements trace the swaps back rather than permute an array
#: (quadratic in the replicas, but no stores and loads in a chain).
_TRACED = 8


@numba.njit(cache=True, nogil=True, _nrt=False, error_model="numpy")
def _draw_classes(states, cdf, count, labels):
    """Classes of the next ``count`` jobs into ``labels``."""
    classes = cdf.size
    state = load(states, CLASS)
    for i in range(count):
        u, state = uniform_step(state)
        c = 0
        while c < classes - 1 and u >= cdf[c]:
            c += 1
        labels[i] = c
    store(states, CLASS, state)


@numba.njit(cache=True, nogil=True, _nrt=False, error_model="numpy")
def _draw_nodes(states, n, width, replicas, placement, labels, count, perm, swaps,
                nodes):
    """Task nodes of the next ``count`` jobs: job ``i``'s at ``nodes[i * width:]``."""
    state = load(states, PLACEMENT)
    for i in range(count):
        c = labels[i]
        r = replicas[c]
        base = i * width
        if placement[c] == RING:
            start, state = below_step(state, n)
            for t in range(r):
                node = start + t
                nodes[base + t] = node - n if node >= n else node
        elif r <= 3:
            # Up to three tasks, the tracing below unrolled (8% of the whole loop):
            # swap t exchanged positions t and s_t, and s_t >= t.
            s0, state = below_step(state, n)
            nodes[base] = s0
            if r > 1:
                s1, state = below_step(state, n - 1)
                s1 += 1
                nodes[base + 1] = 0 if s1 == s0 else s1
                if r > 2:
                    s2, state = below_step(state, n - 2)
                    s2 += 2
                    s2 = 1 if s2 == s1 else s2
                    nodes[base + 2] = 0 if s2 == s0 else s2
        elif r <= _TRACED:
            # The same partial Fisher-Yates without the permutation: the node at
            # position s after swaps 0 .. t-1 is s traced back through them.
            for t in range(r):
                s, state = below_step(state, n - t)
                s += t
                swaps[t] = s
                for back in range(t - 1, -1, -1):
                    other = swaps[back]
                    if s == other:
                        s = back
                    elif s == back:
                        s = other
                nodes[base + t] = s
        else:
            # Partial Fisher-Yates, undone afterwards so that a job's nodes depend
            # on its own numbers only.
            for t in range(r):
                s, state = below_step(state, n - t)
                s += t
                swaps[t] = s
                perm[t], perm[s] = perm[s], perm[t]
                nodes[base + t] = perm[t]
            for t in range(r - 1, -1, -1):
                s = swaps[t]
                perm[t], perm[s] = perm[s], perm[t]
    store(states, PLACEMENT, state)


@numba.njit(cache=True, nogil=True, _nrt=False, error_model="numpy")
def _draw_services(states, speeds, width, replicas, law_index, codes, params, offsets,
                   lengths, data, labels, nodes, count, service, single):
    """Service times (over their node's speed) of the next ``count`` jobs' tasks;
    ``single`` is the law of every task when there is one class and it draws every
    task from one law, else -1."""
    unit = True  # x / 1.0 is x: no division (the slowest instruction here)
    for speed in speeds:
        unit = unit and speed == 1.0
    if single >= 0 and codes[single] == EXPONENTIAL:
        fill_exponential(states, SERVICE, params[single, 0], params[single, 1], service,
                         count * width)
        if not unit:
            for i in range(count * width):
                service[i] /= speeds[nodes[i]]
        return
    state = load(states, SERVICE)
    if single >= 0:
        # One law for every task: one flat loop, its dispatch out of the loop.
        for i in range(count * width):
            x, state = draw_step(single, codes, params, offsets, lengths, data, state,
                                 states, SERVICE)
            service[i] = x if unit else x / speeds[nodes[i]]
        store(states, SERVICE, state)
        return
    for i in range(count):
        c = labels[i]
        base = i * width
        for t in range(replicas[c]):
            x, state = draw_step(law_index[c, t], codes, params, offsets, lengths, data,
                                 state, states, SERVICE)
            service[base + t] = x if unit else x / speeds[nodes[base + t]]
    store(states, SERVICE, state)


@numba.njit(cache=True, nogil=True, _nrt=False, error_model="numpy")
def _draw_gaps(states, law, codes, params, offsets, lengths, data, count, gaps):
    """The next ``count`` draws of law ``law`` from the arrival stream (gaps between
    issues, or think times)."""
    if codes[law] == EXPONENTIAL:
        fill_exponential(states, ARRIVAL, params[law, 0], params[law, 1], gaps, count)
        return
    state = load(states, ARRIVAL)
    for i in range(count):
        gaps[i], state = draw_step(law, codes, params, offsets, lengths, data, state,
                                   states, ARRIVAL)
    store(states, ARRIVAL, state)


@numba.njit(cache=True, inline="always")
def _finish(a, r, k, base, nodes, service, free, done):
    """Queue the ``r`` tasks of a job issued at ``a`` (nodes and service times at
    ``base`` in ``nodes`` and ``service``) FCFS on their nodes; the ``k``-th
    completion. Up to three tasks the completions stay in registers and the order
    statistic is taken by min and max (the exact value a sort would give); beyond,
    they go through ``done``."""
    if r > 3:
        for t in range(r):
            node = nodes[base + t]
            begin = free[node] if free[node] > a else a
            d = begin + service[base + t]
            free[node] = d
            done[t] = d
        return _kth_smallest(done, r, k)
    node = nodes[base]
    begin = free[node] if free[node] > a else a
    d0 = begin + service[base]
    free[node] = d0
    if r == 1:
        return d0
    node = nodes[base + 1]
    begin = free[node] if free[node] > a else a
    d1 = begin + service[base + 1]
    free[node] = d1
    low = min(d0, d1)
    high = max(d0, d1)
    if r == 2:
        return low if k == 1 else high
    node = nodes[base + 2]
    begin = free[node] if free[node] > a else a
    d2 = begin + service[base + 2]
    free[node] = d2
    if k == 1:
        return min(low, d2)
    if k == 3:
        return max(high, d2)
    return max(low, min(high, d2))


@numba.njit(cache=True, nogil=True, _nrt=False, error_model="numpy")
def _queue_open(a, r, k, width, size, gaps, nodes, service, free, done, issued,
                sojourns):
    """Issue times and sojourns of a block of open arrivals of one class (``r``
    tasks, quorum ``k``) from the last issue time ``a``; returns the block's last.
    The closed loop's and several classes' branches out of the way of the common
    case (measured: 20% of the loop)."""
    for i in range(size):
        a += gaps[i]
        finish = _finish(a, r, k, i * width, nodes, service, free, done)
        issued[i] = a
        sojourns[i] = finish - a
    return a


@numba.njit(cache=True, inline="always")
def _earliest(release):
    """``(client, time)`` of the earliest of ``release`` (ties: the lower client),
    by four interleaved running minima (one would wait for each comparison)."""
    size = release.size
    t0 = release[0]
    c0 = 0
    t1 = t2 = t3 = np.inf
    c1 = c2 = c3 = size
    stop = size - (size - 1) % 4
    for i in range(1, stop, 4):
        x = release[i]
        c0 = i if x < t0 else c0
        t0 = x if x < t0 else t0
        x = release[i + 1]
        c1 = i + 1 if x < t1 else c1
        t1 = x if x < t1 else t1
        x = release[i + 2]
        c2 = i + 2 if x < t2 else c2
        t2 = x if x < t2 else t2
        x = release[i + 3]
        c3 = i + 3 if x < t3 else c3
        t3 = x if x < t3 else t3
    for i in range(stop, size):
        x = release[i]
        c0 = i if x < t0 or (x == t0 and i < c0) else c0
        t0 = x if x < t0 else t0
    # each running minimum keeps its lowest client among ties; merge the same way
    if t1 < t0 or (t1 == t0 and c1 < c0):
        t0, c0 = t1, c1
    if t3 < t2 or (t3 == t2 and c3 < c2):
        t2, c2 = t3, c3
    if t2 < t0 or (t2 == t0 and c2 < c0):
        t0, c0 = t2, c2
    return c0, t0


# Without the reference-counting runtime: the loop allocates nothing (its scratch
# arrays come from the caller), and numba's incref/decref of the arrays that the
# inlined samplers take cost more than the draws themselves (measured: 30 against
# 13 ns for one exponential draw). error_model="numpy": no zero-divisor checks
# (speeds are > 0, checked in _compile). Numba's cache keys on this file only:
# after editing laws, rng or measure/sketch, delete this module's cached kernels
# (__pycache__/kernel.*) or they keep the old inlined code.
@numba.njit(cache=True, nogil=True, _nrt=False, error_model="numpy")
def _kernel(j0, j1, states, speeds, cdf, replicas, quorum, placement, law_index, codes,
            params, offsets, lengths, data, arrival_law, think_law, closed, scan,
            first, every, measured, batches, minis,
            free, perm, release, heap, clock, labels, nodes, swaps, service, gaps, done,
            issued, sojourns,
            count, total, squares, batch_count, batch_sum, batch_first, batch_last,
            mini_sum, mini_count, hist, busy, think_sum):
    """Jobs ``j0 .. j1 - 1`` of one replication; state (``free``, ``release``,
    ``heap``, ``clock``) and statistics carry over between calls; ``labels``,
    ``nodes``, ``service`` and ``gaps`` hold a block's draws (``labels.size`` jobs),
    ``swaps`` and ``done`` are scratch arrays of the widest class; ``release`` and
    ``heap`` hold the closed loop's heap of (release time, client), or with ``scan``
    ``release`` holds each client's release time (``release[client]``)."""
    classes = cdf.size
    whole = classes  # the statistics row of all classes together
    width = law_index.shape[1]
    n = speeds.size
    block = labels.size
    if j0 <= first:
        next_measured = first
    else:
        next_measured = first + ((j0 - first + every - 1) // every) * every
    # Batch and mini-batch of the next measured job, and the measured index where
    # each next one starts: divisions only here and at boundaries.
    m = (next_measured - first) // every
    b = m * batches // measured
    b_end = ((b + 1) * measured + batches - 1) // batches
    mb = m * minis // measured
    mb_end = ((mb + 1) * measured + minis - 1) // minis
    # The all-classes accumulators of the current batch and mini-batch live in
    # registers and go back to memory at boundaries and at the end; the additions
    # are the same, in the same order, as on the arrays.
    jobs_measured = count[whole]
    sum_all = total[whole]
    squares_all = squares[whole]
    b_count = batch_count[whole, b] if b < batches else 0
    b_sum = batch_sum[whole, b] if b < batches else 0.0
    b_last = batch_last[b] if b < batches else 0.0
    mb_count = mini_count[mb] if mb < minis else 0
    mb_sum = mini_sum[mb] if mb < minis else 0.0
    thinks = think_sum[0]
    a = clock[0]
    r_only = replicas[0]
    k_only = quorum[0]
    single = -1
    if classes == 1:
        for i in range(block):
            labels[i] = 0
        single = law_index[0, 0]
        for t in range(width):
            if law_index[0, t] != single:
                single = -1
    for start in range(j0, j1, block):
        size = min(block, j1 - start)
        if classes > 1:
            _draw_classes(states, cdf, size, labels)
        _draw_nodes(states, n, width, replicas, placement, labels, size, perm, swaps,
                    nodes)
        _draw_services(states, speeds, width, replicas, law_index, codes, params,
                       offsets, lengths, data, labels, nodes, size, service, single)
        _draw_gaps(states, think_law if closed else arrival_law, codes, params, offsets,
                   lengths, data, size, gaps)
        # Queue the block, then measure it: separate loops, each with few enough
        # live values to stay in registers.
        if not closed and classes == 1:
            a = _queue_open(a, r_only, k_only, width, size, gaps, nodes, service, free,
                            done, issued, sojourns)
        else:
            client = 0
            for i in range(size):
                if scan:
                    client, a = _earliest(release)
                elif closed:
                    a = release[0]
                else:
                    a += gaps[i]
                c = labels[i]
                finish = _finish(a, replicas[c], quorum[c], i * width, nodes, service,
                                 free, done)
                issued[i] = a
                sojourns[i] = finish - a
                if scan:
                    release[client] = finish + gaps[i]
                elif closed:
                    release[0] = finish + gaps[i]
                    _sift_down(release, heap, 0)
        # A node's busy time: each warm task's time added in job and task order, as
        # when it is queued, in a loop of its own (flat for one class: 5% faster).
        if classes == 1 and r_only == width:
            for q in range(max(0, first - start) * width, size * width):
                busy[nodes[q]] += service[q]
        else:
            for i in range(max(0, first - start), size):
                base = i * width
                for t in range(replicas[labels[i]]):
                    busy[nodes[base + t]] += service[base + t]
        if next_measured >= start + size:
            continue
        for i in range(next_measured - start, size, every):
            while m >= b_end:
                batch_count[whole, b] = b_count
                batch_sum[whole, b] = b_sum
                if b_count > 0:
                    batch_last[b] = b_last
                b += 1
                b_end = ((b + 1) * measured + batches - 1) // batches
                b_count = batch_count[whole, b]
                b_sum = batch_sum[whole, b]
            while m >= mb_end:
                mini_count[mb] = mb_count
                mini_sum[mb] = mb_sum
                mb += 1
                mb_end = ((mb + 1) * measured + minis - 1) // minis
                mb_count = mini_count[mb]
                mb_sum = mini_sum[mb]
            sojourn = sojourns[i]
            h = bucket(sojourn)
            jobs_measured += 1
            sum_all += sojourn
            squares_all += sojourn * sojourn
            b_count += 1
            b_sum += sojourn
            hist[whole, h] += 1
            if classes > 1:
                c = labels[i]
                count[c] += 1
                total[c] += sojourn
                squares[c] += sojourn * sojourn
                batch_count[c, b] += 1
                batch_sum[c, b] += sojourn
                hist[c, h] += 1
            if b_count == 1:
                batch_first[b] = issued[i]
            b_last = issued[i]
            mb_sum += sojourn
            mb_count += 1
            if closed:
                thinks += gaps[i]
            m += 1
            next_measured += every
    count[whole] = jobs_measured
    total[whole] = sum_all
    squares[whole] = squares_all
    if b < batches:
        batch_count[whole, b] = b_count
        batch_sum[whole, b] = b_sum
        if b_count > 0:
            batch_last[b] = b_last
    if mb < minis:
        mini_count[mb] = mb_count
        mini_sum[mb] = mb_sum
    think_sum[0] = thinks
    clock[0] = a


@numba.njit(cache=True, nogil=True)
def _draw_path(j0, j1, states, speeds, cdf, replicas, quorum, placement, law_index, codes,
               params, offsets, lengths, data, arrival_law, think_law, closed, clock,
               arrivals, think, nodes, service, quorum_out, labels):
    """The twin of `_kernel`: jobs ``j0 .. j1 - 1``'s numbers into arrays (row
    ``j - j0``)."""
    width = law_index.shape[1]
    n = speeds.size
    perm = np.arange(n)
    swaps = np.empty(width, dtype=np.int64)
    chosen = np.empty(width, dtype=np.int64)
    task = np.empty(width)
    a = clock[0]
    for j in range(j0, j1):
        row = j - j0
        if closed:
            arrivals[row] = np.nan
            think[row] = draw(think_law, codes, params, offsets, lengths, data, states,
                              ARRIVAL)
        else:
            a += draw(arrival_law, codes, params, offsets, lengths, data, states,
                      ARRIVAL)
            arrivals[row] = a
        c = _draw_job(states, speeds, cdf, replicas, placement, law_index, codes,
                      params, offsets, lengths, data, perm, swaps, chosen, task)
        labels[row] = c
        quorum_out[row] = quorum[c]
        for t in range(width):
            if t < replicas[c]:
                nodes[row, t] = chosen[t]
                service[row, t] = task[t]
            else:
                nodes[row, t] = -1
                service[row, t] = 0.0
    clock[0] = a


# ---------------------------------------------------------------------------
# Running replications
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class FusedResult:
    """What the kernel measured, per replication (leading axis) and per class.

    Rows of the per-class arrays: classes ``0 .. C-1``, then row ``C`` for all
    classes together. Sojourn times are in the service time's unit.

    Attributes
    ----------
    counts, sums, squares : (R, C+1)
        Measured jobs, sum and sum of squares of their sojourn times.
    batch_counts, batch_sums : (R, C+1, batches)
    batch_first, batch_last : (R, batches)
        Issue time of the first and last measured job of each batch.
    mini_counts, mini_sums : (R, mini_batches)
        All classes, for a warm-up heuristic (MSER) on mini-batch means.
    histogram : (C+1, BINS)
        Log-linear histogram (`forkjoin_sim.measure.sketch`) of all replications' sojourns.
    busy : (R, nodes)
        Service time of the tasks of jobs ``j >= first_measured``, per node.
    think_sums : (R,)
        Closed loop: sum of the think times that follow measured jobs.
    last_issue : (R,)
        Issue time of each replication's last job.
    """

    counts: np.ndarray
    sums: np.ndarray
    squares: np.ndarray
    batch_counts: np.ndarray
    batch_sums: np.ndarray
    batch_first: np.ndarray
    batch_last: np.ndarray
    mini_counts: np.ndarray
    mini_sums: np.ndarray
    histogram: np.ndarray
    busy: np.ndarray
    think_sums: np.ndarray
    last_issue: np.ndarray
    total_jobs: int
    first_measured: int
    sample_every: int
    seconds: float

    @property
    def classes(self) -> int:
        return self.counts.shape[1] - 1

    def _row(self, job_class: int | None) -> int:
        if job_class is None:
            return self.classes
        if not 0 <= job_class < self.classes:
            raise ConfigError(f"class {job_class} does not exist; use 0..{self.classes - 1}"
                              " or None for all classes")
        return job_class

    def jobs_measured(self, job_class: int | None = None) -> int:
        return int(self.counts[:, self._row(job_class)].sum())

    def mean(self, job_class: int | None = None) -> float:
        """Mean sojourn time of the measured jobs of all replications."""
        row = self._row(job_class)
        return float(self.sums[:, row].sum() / self.counts[:, row].sum())

    def interval(self, job_class: int | None = None, confidence: float = 0.95
                 ) -> tuple[float, float, float]:
        """``(mean, low, high)``: the mean with the Student-t interval of the batch means
        of all replications."""
        row = self._row(job_class)
        return batch_interval(self.batch_sums[:, row], self.batch_counts[:, row],
                              confidence)

    def quantiles(self, qs, job_class: int | None = None) -> np.ndarray:
        """Sojourn-time quantiles (``qs`` in [0, 1]) from the histogram, within
        `forkjoin_sim.measure.sketch.RELATIVE_ERROR` of the exact order statistics."""
        return quantiles(self.histogram[self._row(job_class)], qs)

    def percentiles(self, job_class: int | None = None) -> dict:
        """``{"p50": .., "p90": .., "p95": .., "p99": .., "p999": ..}``."""
        values = self.quantiles(SUMMARY_QUANTILES, job_class)
        return dict(zip(("p50", "p90", "p95", "p99", "p999"), map(float, values)))

    def throughput(self, confidence: float = 0.95) -> tuple[float, float, float]:
        """``(jobs per unit time, low, high)`` over the measured window.

        Batch b issues ``(count_b - 1) * sample_every`` jobs between its first and
        last measured issue; the point estimate is the ratio of the totals. The
        interval is the batch-means interval of the mean time between issues,
        inverted (as `forkjoin_sim.measure.statistics.SojournRecorder.throughput`): a
        batch's own rate, the reciprocal of a sum of a few gaps, has no finite
        variance when batches hold one or two gaps (many replications of few
        jobs), and Student's t over such rates went below zero. ``low`` is 0 and
        ``high`` inf when the interval of the gap reaches 0; both are nan with
        fewer than 2 batches of 2 jobs.
        """
        counts = self.batch_counts[:, -1].astype(float)
        spans = self.batch_last - self.batch_first
        used = (counts > 1) & (spans > 0)
        jobs = (counts[used] - 1) * self.sample_every
        if not used.any():
            return math.nan, math.nan, math.nan
        gap, low, high = batch_interval(spans[used], jobs, confidence)
        if math.isnan(low):
            return 1.0 / gap, math.nan, math.nan
        return (1.0 / gap, 1.0 / high if high > 0 else 0.0,
                1.0 / low if low > 0 else math.inf)

    def utilisation(self) -> np.ndarray:
        """Busy fraction of each node over the measured window, pooled over
        replications (tasks issued in the window; edge effects O(1/window))."""
        window = (self.last_issue - self.batch_first[:, 0]).sum()
        return self.busy.sum(axis=0) / window

    def batch_lag1(self, job_class: int | None = None) -> float | None:
        """Lag-1 autocorrelation of consecutive batch means within replications,
        pooled (centred on the overall batch mean): clearly positive values mean the
        batches are too short for the interval. None if undefined."""
        row = self._row(job_class)
        counts = self.batch_counts[:, row]
        if np.any(counts == 0) or counts.shape[1] < 3:
            return None
        means = self.batch_sums[:, row] / counts
        centred = means - means.mean()
        denominator = float(np.sum(centred * centred))
        if denominator == 0:
            return None
        return float(np.sum(centred[:, :-1] * centred[:, 1:])) / denominator

    def summary(self, confidence: float = 0.95, job_class: int | None = None) -> dict:
        """Mean with interval, percentiles and the measurement counts, as a dict
        (the fields of `forkjoin_sim.measure.statistics.Summary`)."""
        mean, low, high = self.interval(job_class, confidence)
        return dict(mean=mean, ci_low=low, ci_high=high, **self.percentiles(job_class),
                    jobs_measured=self.jobs_measured(job_class),
                    warmup_dropped=self.first_measured, sample_every=self.sample_every,
                    confidence=confidence,
                    batches=int(np.count_nonzero(self.batch_counts[:, -1])),
                    batch_lag1=self.batch_lag1(job_class))

    def mini_batch_means(self) -> np.ndarray:
        """(R, mini_batches) means of consecutive mini-batches of measured jobs."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.mini_sums / self.mini_counts


#: Tasks per compiled call of a replication, by default: about a second of work, so a
#: progress bar moves and memory stays flat whatever the job width.
CHUNK_TASKS = 1 << 24


def measured_count(total_jobs: int, first_measured: int, sample_every: int) -> int:
    """Number of jobs the measurement rule keeps."""
    return max(0, (total_jobs - first_measured + sample_every - 1) // sample_every)


def _check_rule(total_jobs, first_measured, sample_every, batches):
    for name, value in (("total_jobs", total_jobs), ("sample_every", sample_every),
                        ("batches", batches)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) \
                or value < 1:
            raise ConfigError(f"{name} must be a whole number >= 1, got {value!r}")
    if not 0 <= first_measured < total_jobs:
        raise ConfigError(f"first_measured={first_measured} must be in 0..{total_jobs - 1}"
                          " (the warm-up cutoff, a job index)")
    measured = measured_count(total_jobs, first_measured, sample_every)
    if measured < 2 * batches:
        raise ConfigError(f"only {measured} jobs measured for {batches} batches; run more "
                          "jobs, or lower sample_every or batches (2 jobs per batch at "
                          "least)")
    return measured


def _replication(arrays: _Arrays, states, total_jobs, first, every, measured, batches,
                 minis, chunk_jobs, on_chunk=None, stop=None):
    classes = arrays.cdf.size
    rows = classes + 1
    nodes = arrays.speeds.size
    closed = arrays.clients > 0
    scan = closed and arrays.clients <= SCAN_CLIENTS
    out = dict(count=np.zeros(rows, dtype=np.int64), total=np.zeros(rows),
               squares=np.zeros(rows),
               batch_count=np.zeros((rows, batches), dtype=np.int64),
               batch_sum=np.zeros((rows, batches)), batch_first=np.zeros(batches),
               batch_last=np.zeros(batches), mini_sum=np.zeros(minis),
               mini_count=np.zeros(minis, dtype=np.int64),
               hist=np.zeros((rows, BINS), dtype=np.int64), busy=np.zeros(nodes),
               think_sum=np.zeros(1))
    free = np.zeros(nodes)
    perm = np.arange(nodes, dtype=np.int64)
    release = np.zeros(max(arrays.clients, 1))
    heap = np.zeros(release.size, dtype=np.int64)
    clock = np.zeros(1)
    width = arrays.law_index.shape[1]
    block = max(1, BLOCK_TASKS // width)
    scratch = (np.zeros(block, dtype=np.int64), np.zeros(block * width, dtype=np.int64),
               np.zeros(width, dtype=np.int64), np.zeros(block * width), np.zeros(block),
               np.zeros(width), np.zeros(block), np.zeros(block))
    if closed:
        _first_thinks(states, arrays.think_law, arrays.codes, arrays.params,
                      arrays.offsets, arrays.lengths, arrays.data, release, heap)
        if scan:  # release times by client rather than in heap order
            release[heap] = release.copy()
    for j0 in range(0, total_jobs, chunk_jobs):
        if stop is not None and stop.is_set():
            break  # the run was interrupted: its numbers are thrown away
        _kernel(j0, min(total_jobs, j0 + chunk_jobs), states, arrays.speeds, arrays.cdf,
                arrays.replicas, arrays.quorum, arrays.placement, arrays.law_index,
                arrays.codes, arrays.params, arrays.offsets, arrays.lengths,
                arrays.data, arrays.arrival_law, arrays.think_law, closed, scan, first,
                every, measured, batches, minis, free, perm, release, heap, clock,
                *scratch,
                out["count"], out["total"], out["squares"], out["batch_count"],
                out["batch_sum"], out["batch_first"], out["batch_last"],
                out["mini_sum"], out["mini_count"], out["hist"], out["busy"],
                out["think_sum"])
        if on_chunk is not None:
            on_chunk(min(total_jobs, j0 + chunk_jobs) - j0)
    if classes == 1:
        for name in ("count", "total", "squares", "batch_count", "batch_sum", "hist"):
            out[name][0] = out[name][1]
    out["last_issue"] = clock[0]
    return out


def run_fused(model: KernelModel, *, total_jobs: int, first_measured: int | None = None,
              sample_every: int = 1, batches: int = 30, mini_batches: int = 2000,
              seed=0, replications: int = 1, workers: int = 1,
              chunk_jobs: int | None = None, on_chunk=None) -> FusedResult:
    """Simulate ``replications`` independent replications of ``total_jobs`` jobs each.

    Parameters
    ----------
    model : KernelModel
    total_jobs : int
        Jobs per replication (issue order ``0 .. total_jobs - 1``).
    first_measured : int, optional
        Warm-up cutoff: the first job index measured (default ``total_jobs // 10``).
    sample_every : int
        Measure every ``sample_every``-th job from ``first_measured`` on.
    batches : int
        Batches per replication for the batch-means interval.
    mini_batches : int
        Mini-batches per replication kept for a warm-up heuristic (at most the number
        of measured jobs).
    seed : int or numpy.random.SeedSequence
    replications : int
        Independent replications (part of the configuration: changing it changes the
        result; ``workers`` never does).
    workers : int
        Threads that run replications side by side.
    chunk_jobs : int, optional
        Jobs per compiled call (the results do not depend on it); default about
        `CHUNK_TASKS` tasks, a second or so of work.
    on_chunk : callable, optional
        Called with the number of jobs done after each compiled call (from the
        worker threads), e.g. a progress bar's ``update``.
    """
    if chunk_jobs is None:
        chunk_jobs = max(1, min(1 << 22, CHUNK_TASKS // model.width))
    if first_measured is None:
        first_measured = total_jobs // 10
    measured = _check_rule(total_jobs, first_measured, sample_every, batches)
    if isinstance(replications, bool) or not isinstance(replications, (int, np.integer)) \
            or replications < 1:
        raise ConfigError(f"replications must be a whole number >= 1, got {replications!r}")
    if not isinstance(workers, (int, np.integer)) or workers < 1:
        raise ConfigError(f"workers must be a whole number >= 1, got {workers!r}")
    if not isinstance(chunk_jobs, (int, np.integer)) or chunk_jobs < 1:
        raise ConfigError(f"chunk_jobs must be a whole number >= 1, got {chunk_jobs!r}")
    arrays = _compile(model)
    minis = max(1, min(mini_batches, measured))
    seeds = [seed_states(seed, i) for i in range(replications)]

    # set when the waiting thread is interrupted (Ctrl-C, SIGTERM): each worker stops
    # at its next chunk, so the run ends within a chunk instead of a replication
    stop = threading.Event()

    def one(states):
        return _replication(arrays, states, total_jobs, first_measured, sample_every,
                            measured, batches, minis, chunk_jobs, on_chunk, stop)

    start = time.perf_counter()
    if workers == 1 or replications == 1:
        parts = [one(s) for s in seeds]
    else:
        from concurrent.futures import ThreadPoolExecutor

        pool = ThreadPoolExecutor(max_workers=min(workers, replications))
        try:
            parts = list(pool.map(one, seeds))
        except BaseException:
            stop.set()
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        pool.shutdown()
    seconds = time.perf_counter() - start

    def stack(name):
        return np.stack([p[name] for p in parts])

    return FusedResult(counts=stack("count"), sums=stack("total"),
                       squares=stack("squares"), batch_counts=stack("batch_count"),
                       batch_sums=stack("batch_sum"), batch_first=stack("batch_first"),
                       batch_last=stack("batch_last"), mini_counts=stack("mini_count"),
                       mini_sums=stack("mini_sum"),
                       histogram=stack("hist").sum(axis=0), busy=stack("busy"),
                       think_sums=stack("think_sum")[:, 0],
                       last_issue=np.array([p["last_issue"] for p in parts]),
                       total_jobs=int(total_jobs), first_measured=int(first_measured),
                       sample_every=int(sample_every), seconds=seconds)


# ---------------------------------------------------------------------------
# The twin: the same numbers as arrays
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class TwinPath:
    """The numbers the kernel draws for jobs ``0 .. jobs-1`` of one replication, as
    arrays (common random numbers for other engines and for tests).

    Attributes
    ----------
    arrivals : (jobs,) float64
        Open: issue times. Closed loop: NaN (they follow from the queueing).
    think : (jobs,) float64 or None
        Closed loop: the think time the client of job j takes after it completes.
    initial_release : (clients,) float64 or None
        Closed loop: each client's first request time.
    nodes : (jobs, width) int32
        Task nodes, ``-1`` where a job of a narrower class has no task.
    service : (jobs, width) float64
        Task service times already divided by the speed of their node (0 where no
        task).
    quorum : (jobs,) int32
    labels : (jobs,) int16
        Class of each job.
    """

    arrivals: np.ndarray
    think: np.ndarray | None
    initial_release: np.ndarray | None
    nodes: np.ndarray
    service: np.ndarray
    quorum: np.ndarray
    labels: np.ndarray


def draw_twin_path(model: KernelModel, jobs: int, seed=0, replication: int = 0
                   ) -> TwinPath:
    """The first ``jobs`` jobs' numbers of replication ``replication`` of ``seed``,
    exactly as `run_fused` draws them."""
    arrays = _compile(model)
    states = seed_states(seed, replication)
    width = arrays.law_index.shape[1]
    closed = arrays.clients > 0
    arrivals = np.empty(jobs)
    think = np.empty(jobs)
    nodes = np.empty((jobs, width), dtype=np.int32)
    service = np.empty((jobs, width))
    quorum = np.empty(jobs, dtype=np.int32)
    labels = np.empty(jobs, dtype=np.int16)
    initial = None
    if closed:
        initial = np.zeros(arrays.clients)
        _first_thinks(states, arrays.think_law, arrays.codes, arrays.params,
                      arrays.offsets, arrays.lengths, arrays.data, initial,
                      np.zeros(arrays.clients, dtype=np.int64))
    _draw_path(0, jobs, states, arrays.speeds, arrays.cdf, arrays.replicas, arrays.quorum,
               arrays.placement, arrays.law_index, arrays.codes, arrays.params,
               arrays.offsets, arrays.lengths, arrays.data, arrays.arrival_law,
               arrays.think_law, closed, np.zeros(1), arrivals, think, nodes, service,
               quorum, labels)
    return TwinPath(arrivals, think if closed else None, initial, nodes, service,
                    quorum, labels)


__all__ = ["FusedResult", "JobClass", "KernelModel", "TwinPath", "draw_twin_path",
           "measured_count", "poisson", "renewal", "run_fused"]
