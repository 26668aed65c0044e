"""The fused engine: draw, queue and measure in one compiled loop, on every core.

The fast engine draws each block's sample path into arrays, runs the Lindley pass,
and keeps every measured sojourn. This engine does all three per job inside one
numba loop, drawing its random numbers inline from xoshiro256** streams
(`forkjoin_sim.xoshiro`, one per purpose, seeded from the run's SeedSequence), and
keeps only what the statistics need (batch sums, a log-linear histogram for
percentiles, per-class sums, busy time): memory does not grow with the run, and each
replication runs in a thread that releases the GIL. Its streams are not numpy's, so
its numbers differ from the fast engine's (same laws); `record_path` draws the very
numbers it uses into a `SamplePath`, so the fast and SimPy engines can be run on them
and compared exactly (common random numbers).

Several replications (independent seeds, each with its own warm-up) spread over
worker threads; the pooled result depends on the number of replications, never on
the number of workers.

Supported: open Poisson or periodic arrivals, closed-loop clients with exponential
(or no) think time, one or several job classes, random or ring placement, uneven
node speeds, shared-queue or staged nodes with threads, and service laws that are
exponential, deterministic or empirical (unsmoothed). Anything else is refused with
a message that names the fast engine.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numba
import numpy as np

from ..errors import ConfigError
from ..histogram import BINS, RELATIVE_ERROR, bin_of_bits
from ..xoshiro import below, exponential, seed_states, uniform
from .fast import _heapify, _sift_down

EXPONENTIAL, DETERMINISTIC, EMPIRICAL = 0, 1, 2
#: xoshiro streams: 0 arrivals or think times, 1 class labels, then placement and
#: service of each class.
ARRIVALS, LABELS, CLASS_BASE = 0, 1, 2


@numba.njit(cache=True, inline="always")
def _draw_service(states, stream, code, scale, loc, samples, c, count):
    if code == EXPONENTIAL:
        return exponential(states, stream) * scale + loc
    if code == DETERMINISTIC:
        return scale
    return samples[c, below(states, stream, count)]


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _fused(jobs, arrival_kind, rate, think, clients, states,
           cdf, replicas, quorum, ring, law, scale, loc, samples, sample_count,
           kinds, stage_of, threads, speeds,
           start, every, measured, batches,
           out_sum, out_count, batch_sum, batch_count, gap_batch, hist, busy,
           record, rec_arrivals, rec_nodes, rec_service, rec_quorum, rec_labels,
           rec_think, rec_first):
    """One replication. Accumulates into the ``out_*``, ``batch_*``, ``hist`` and
    ``busy`` arrays; returns the time of the last arrival. With ``record`` it also
    writes the numbers it draws into the ``rec_*`` arrays (a sample path)."""
    nodes = speeds.size
    classes = replicas.size
    width = replicas.max()
    uneven = False
    for i in range(nodes):
        if speeds[i] != 1.0:
            uneven = True
    one_thread = threads.max() == 1
    free = np.zeros((nodes, threads.size, threads.max()))
    done = np.empty(width)
    perm = np.arange(nodes)
    chosen = np.empty(width, dtype=np.int64)
    swaps = np.empty(width, dtype=np.int64)
    cell = np.empty(1)
    cell_bits = cell.view(np.int64)
    # Closed loop: clients' release times in a heap, first thinks drawn first.
    release = np.zeros(max(clients, 1))
    heap = np.arange(max(clients, 1))
    if clients > 0:
        for c in range(clients):
            release[c] = exponential(states, ARRIVALS) * think if think > 0 else 0.0
            if record:
                rec_first[c] = release[c]
        _heapify(heap, release)
    # Batches of the measured jobs as in statistics._batch_means: the leftover
    # observations are dropped from the start; the same for the gaps between
    # successive measured arrivals (throughput).
    used = max(2, min(batches, measured // 2))
    size = measured // used
    leftover = measured - used * size
    gaps = measured - 1
    gap_used = max(2, min(batches, gaps // 2))
    gap_size = max(gaps // gap_used, 1)
    gap_leftover = gaps - gap_used * gap_size
    next_measured = start
    m = 0
    batch, in_batch = 0, -leftover
    gap_b, in_gap = 0, -gap_leftover - 1
    last_measured = 0.0
    a = 0.0
    client = 0
    for j in range(jobs):
        # --- arrival: the next open arrival, or the client released first
        if clients > 0:
            client = heap[0]
            a = release[client]
        elif arrival_kind == 0:
            a += exponential(states, ARRIVALS) / rate
        else:
            a += 1.0 / rate
        # --- class and placement
        c = 0
        if classes > 1:
            u = uniform(states, LABELS)
            while c < classes - 1 and cdf[c] < u:
                c += 1
        r = replicas[c]
        stream = CLASS_BASE + 2 * c
        if ring[c]:
            node = below(states, stream, nodes)
            for t in range(r):
                chosen[t] = node
                node += 1
                if node == nodes:
                    node = 0
        elif r == nodes:
            for t in range(r):
                chosen[t] = t
        else:
            # Partial Fisher-Yates, as placement.random_subset does it.
            for t in range(r):
                k = t + below(states, stream, nodes - t)
                swaps[t] = k
                perm[t], perm[k] = perm[k], perm[t]
                chosen[t] = perm[t]
            for t in range(r - 1, -1, -1):
                k = swaps[t]
                perm[t], perm[k] = perm[k], perm[t]
        # --- service and FCFS stages (Kiefer-Wolfowitz for several threads)
        k_done = 0
        for t in range(r):
            node = chosen[t]
            x = _draw_service(states, stream + 1, law[c], scale[c], loc[c], samples, c,
                              sample_count[c])
            if uneven:
                x /= speeds[node]
            stage = stage_of[kinds[c, t]]
            best = 0
            if not one_thread:
                for th in range(1, threads[stage]):
                    if free[node, stage, th] < free[node, stage, best]:
                        best = th
            begin = free[node, stage, best]
            if begin < a:
                begin = a
            d = begin + x
            free[node, stage, best] = d
            busy[node, stage] += x
            if record:
                rec_nodes[j, t] = node
                rec_service[j, t] = x
            i = k_done
            while i > 0 and done[i - 1] > d:
                done[i] = done[i - 1]
                i -= 1
            done[i] = d
            k_done += 1
        finish = done[quorum[c] - 1]
        sojourn = finish - a
        if clients > 0:
            pause = exponential(states, ARRIVALS) * think if think > 0 else 0.0
            release[client] = finish + pause
            _sift_down(heap, release, 0)
            if record:
                rec_think[j] = pause
        if record:
            rec_arrivals[j] = a
            rec_quorum[j] = quorum[c]
            rec_labels[j] = c
        # --- measurement: job j counts iff j >= start and (j - start) % every == 0
        if j == next_measured:
            next_measured += every
            out_sum[c] += sojourn
            out_count[c] += 1
            cell[0] = sojourn
            h = bin_of_bits(cell_bits[0])
            hist[c, h] += 1
            if classes > 1:
                out_sum[classes] += sojourn
                out_count[classes] += 1
                hist[classes, h] += 1
            if in_batch >= 0:
                batch_sum[c, batch] += sojourn
                batch_count[c, batch] += 1
                if classes > 1:
                    batch_sum[classes, batch] += sojourn
                    batch_count[classes, batch] += 1
            in_batch += 1
            if in_batch == size:
                in_batch = 0
                batch += 1
            if in_gap >= 0:
                gap_batch[gap_b] += a - last_measured
            in_gap += 1
            if in_gap == gap_size and gap_b < gap_used - 1:
                in_gap = 0
                gap_b += 1
            last_measured = a
            m += 1
    if classes == 1:
        out_sum[1] = out_sum[0]
        out_count[1] = out_count[0]
        batch_sum[1] = batch_sum[0]
        batch_count[1] = batch_count[0]
        hist[1] = hist[0]
    return a


@dataclass
class _Plan:
    """The arrays that describe a model to the kernel."""

    arrival_kind: int
    rate: float
    think: float
    clients: int
    cdf: np.ndarray
    replicas: np.ndarray
    quorum: np.ndarray
    ring: np.ndarray
    law: np.ndarray
    scale: np.ndarray
    loc: np.ndarray
    samples: np.ndarray
    sample_count: np.ndarray
    kinds: np.ndarray
    stage_of: np.ndarray
    threads: np.ndarray


def _law(dist, where: str):
    """(code, scale, loc, sorted sample) of a service law, or ConfigError."""
    from ..empirical import Empirical
    from ..service import Deterministic

    if isinstance(dist, Deterministic):
        return DETERMINISTIC, dist.value, 0.0, np.zeros(1)
    if isinstance(dist, Empirical):
        if dist.bandwidth > 0:
            raise ConfigError(f"{where}: the fused engine resamples measured latencies "
                              "without smoothing; use engine fast for a smoothed one")
        return EMPIRICAL, 0.0, 0.0, np.asarray(dist.samples, dtype=float)
    if getattr(getattr(dist, "dist", None), "name", None) == "expon":
        scale = float(dist.std())
        return EXPONENTIAL, scale, float(dist.mean()) - scale, np.zeros(1)
    raise ConfigError(f"{where}: the fused engine draws exponential, deterministic and "
                      "empirical service times; use engine fast for other laws")


def plan(system, arrivals) -> _Plan:
    """The kernel's description of a system and arrival process, or ConfigError."""
    from ..arrivals import ClosedLoop, Periodic, Poisson
    from ..nodes import KINDS
    from ..placement import RandomPlacement, RingPlacement, get_placement

    if system.purging:
        raise ConfigError("purging is modelled by the SimPy engine only; use engine simpy")
    if isinstance(arrivals, ClosedLoop):
        if arrivals.think_law is not None and arrivals.think > 0:
            raise ConfigError("the fused engine draws exponential think times; use "
                              "engine fast for another think-time law")
        kind, rate, think, clients = 0, 0.0, arrivals.think, arrivals.clients
    elif type(arrivals) in (Poisson, Periodic):
        kind = 0 if type(arrivals) is Poisson else 1
        rate, think, clients = arrivals.rate, 0.0, 0
    else:
        raise ConfigError(f"the fused engine takes Poisson, periodic or closed-loop "
                          f"arrivals, not {type(arrivals).__name__}; use engine fast")
    classes = system.classes
    laws, ring = [], []
    for c in classes:
        if c.overhead is not None:
            raise ConfigError(f"class {c.name!r}: time outside the queues (overhead) is "
                              "not in the fused engine yet; use engine fast")
        if isinstance(c.service, tuple) and len(set(map(id, c.service))) > 1:
            raise ConfigError(f"class {c.name!r}: one service law per task position is "
                              "not in the fused engine yet; use engine fast")
        placement = get_placement(c.placement if c.placement is not None
                                  else system.placement)
        if not isinstance(placement, (RandomPlacement, RingPlacement)):
            raise ConfigError(f"class {c.name!r}: placement {placement.name!r} is not in "
                              "the fused engine; use engine fast")
        ring.append(isinstance(placement, RingPlacement))
        laws.append(_law(c.task_services[0], f"class {c.name!r} service"))
    longest = max(law[3].size for law in laws)
    samples = np.zeros((len(classes), longest))
    for i, law in enumerate(laws):
        samples[i, :law[3].size] = np.sort(law[3])
    width = system.width
    kinds = np.zeros((len(classes), width), dtype=np.int64)
    for i, c in enumerate(classes):
        if c.kinds is not None:
            kinds[i, :c.replicas] = [KINDS[k] for k in c.kinds]
    fractions = np.array([c.fraction for c in classes])
    cdf = np.cumsum(fractions)
    cdf /= cdf[-1]
    node = system.node_model
    return _Plan(kind, rate, think, clients, cdf,
                 np.array([c.replicas for c in classes], dtype=np.int64),
                 np.array([c.quorum for c in classes], dtype=np.int64),
                 np.array(ring, dtype=np.bool_),
                 np.array([law[0] for law in laws], dtype=np.int64),
                 np.array([law[1] for law in laws]), np.array([law[2] for law in laws]),
                 samples, np.array([law[3].size for law in laws], dtype=np.int64),
                 kinds, np.asarray(node.stage_of, dtype=np.int64),
                 np.asarray(node.stage_threads, dtype=np.int64))


@dataclass
class ReplicationTotals:
    """What one replication accumulated."""

    sums: np.ndarray        # (classes + 1,) sum of measured sojourns, last = all
    counts: np.ndarray      # (classes + 1,)
    batch_sums: np.ndarray  # (classes + 1, batches)
    batch_counts: np.ndarray
    gap_batches: np.ndarray  # (batches,) sum of gaps between measured arrivals
    gap_batch_size: int
    hist: np.ndarray        # (classes + 1, BINS) histogram counts (last = all)
    busy: np.ndarray        # (nodes, stages)
    horizon: float


def run_replication(system, arrivals, jobs: int, seed, start: int, every: int,
                    measured: int, batches: int, record: bool = False):
    """Run one replication of ``jobs`` jobs with the streams of ``seed``; with
    ``record``, also return the sample path it drew (and the closed-loop clients'
    first send times)."""
    p = plan(system, arrivals)
    classes = p.replicas.size
    rows = classes + 1
    sums, counts = np.zeros(rows), np.zeros(rows, dtype=np.int64)
    batch_sums = np.zeros((rows, batches))
    batch_counts = np.zeros((rows, batches), dtype=np.int64)
    gap_batches = np.zeros(batches)
    hist = np.zeros((rows, BINS), dtype=np.int64)
    busy = np.zeros((system.nodes, p.threads.size))
    states = seed_states(seed, CLASS_BASE + 2 * classes)
    size = jobs if record else 0
    width = int(p.replicas.max())
    rec = (np.zeros(size), np.full((size, width), -1, dtype=np.int32),
           np.zeros((size, width)), np.zeros(size, dtype=np.int32),
           np.zeros(size, dtype=np.int16), np.zeros(size),
           np.zeros(max(p.clients, 1) if record else 0))
    horizon = _fused(jobs, p.arrival_kind, p.rate, p.think, p.clients, states,
                     p.cdf, p.replicas, p.quorum, p.ring, p.law, p.scale, p.loc,
                     p.samples, p.sample_count, p.kinds, p.stage_of, p.threads,
                     np.asarray(system.node_speeds(seed), dtype=float), start, every,
                     measured, batches, sums, counts, batch_sums, batch_counts,
                     gap_batches, hist, busy, record, *rec)
    gaps = measured - 1
    used = max(2, min(batches, gaps // 2))
    totals = ReplicationTotals(sums, counts, batch_sums, batch_counts, gap_batches,
                               max(gaps // used, 1), hist, busy, float(horizon))
    if not record:
        return totals
    from ..samplepath import SamplePath

    arrivals_, nodes, service, quorum, labels, think, first = rec
    kinds = None
    if p.kinds.any():
        kinds = np.where(nodes >= 0, p.kinds[labels][:, :width], 0).astype(np.int8)
    path = SamplePath(arrivals_ if p.clients == 0 else np.full(jobs, np.nan), nodes,
                      service, quorum, labels if classes > 1 else None,
                      think if p.clients > 0 else None, kinds)
    return totals, path, (first if p.clients > 0 else None)


def default_workers() -> int:
    """Cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def run_replications(system, arrivals, jobs: int, seed, start: int, every: int,
                     measured: int, batches: int, replications: int,
                     workers: int | None = None) -> list[ReplicationTotals]:
    """``replications`` independent replications of ``jobs`` jobs each, on ``workers``
    threads. With one replication it uses the seed itself; otherwise replication
    ``i`` uses child ``i`` of the seed."""
    if replications == 1:
        seeds = [seed]
    else:
        from ..streams import as_seed_sequence

        seeds = as_seed_sequence(seed).spawn(replications)
    workers = max(1, min(workers or default_workers(), replications))
    plan(system, arrivals)  # refuse unsupported models before starting threads

    def one(s):
        return run_replication(system, arrivals, jobs, s, start, every, measured,
                               batches)

    if workers == 1:
        return [one(s) for s in seeds]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(one, seeds))


__all__ = ["RELATIVE_ERROR", "ReplicationTotals", "default_workers", "plan",
           "run_replication", "run_replications"]
