"""The compiled event engine: jobs of steps through FCFS multi-server stations.

One heap of events (a step's end, or a job's arrival) ordered by ``(time, job, step)``
with a job's arrival before its steps; per station a FIFO waiting line.

Tie rule: simultaneous events are handled in job order, then step order, and each one
settles all its consequences before the next: the finished task's server takes the
head of its line; the successors whose ``need`` is now met start in increasing step
order (a purging join first cancels what it post-dominates, freeing servers to their
lines' heads, then starts itself); a closed-loop client whose job finished picks its
next job. A zero duration is an event at the same time, placed by the same rule. The
SimPy reference (`reference`) follows this rule too.

The engine is exact for FCFS ``c``-server stations: a task starts at the later of its
readiness and a free server, in order of readiness (ties as above).

Ordered hops (station ``-2 - channel``): a delay that ends at the later of its start
plus its duration and the end of the previous hop started on its channel (in the order
above), so every connection delivers in order.

Closed loop: ``clients`` threads; client ``c`` thinks ``think[c]`` and issues job ``c``;
whenever a job finishes, its client takes the next job index (so job index = the order
in which clients decide to issue, ties by job order of the finishing jobs) and issues
it ``think[index]`` later.

One-step models (`builders.one_step_arrays`: the paper's fork-join job) go to the fast
Lindley engine instead (`engines.fast.serve_in_order`, `serve_closed_loop`), fed in
this order and numbering, open and closed, so the numbers are the same to the bit. A
closed loop where two jobs are answered at the same instant (whole-number or zero
times) stays here: which client takes the next job then depends on the order of the
events within that instant.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence, Union

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from forkjoin_sim.engines.fast import serve_closed_loop, serve_in_order
from forkjoin_sim.errors import ConfigError
from forkjoin_sim.steps.builders import one_step_arrays
from forkjoin_sim.steps.graph import Compiled, Layout, Template, compile_templates, \
    stations_of

IDLE, WAITING, RUNNING, DONE, CANCELLED = 0, 1, 2, 3, 4


@dataclass(frozen=True)
class Open:
    """Open loop or trace: job ``j`` arrives at ``times[j]``."""

    times: np.ndarray


@dataclass(frozen=True)
class Closed:
    """Closed loop: ``clients`` threads, think time ``think[j]`` before job ``j``."""

    clients: int
    think: np.ndarray


@dataclass(frozen=True)
class Outcome:
    """Per job its arrival (``start``) and answer (``finish``) times; per step its end
    (``steps``, NaN if cancelled or never run; only when asked); per job its client
    (closed loop, else -1)."""

    start: np.ndarray
    finish: np.ndarray
    steps: Optional[np.ndarray] = None
    client: Optional[np.ndarray] = None

    @property
    def sojourn(self) -> np.ndarray:
        """Answer minus arrival, per job."""
        return self.finish - self.start


# The event heap is 4-ary (shallower than binary: +10% once the rest was lean), its
# smallest child chosen without data-dependent branches, and keeps +inf in every slot
# past its end, so all four children can always be read. Closed-loop issues wait in a
# heap of their own (in the event heap they would make every event's sift deeper: -9%
# at 100 clients), kept in the same arrays before the event heap (``ht[:E]``), so that
# one sift-down and one sift-up serve both. `_events` spells out its heap and line
# operations instead of calling helpers: a call passing arrays costs atomic reference
# counts, which took a third of the time.
_NO_KEY = np.iinfo(np.int64).max


@njit(cache=True)
def _grow_lines(q, qh, ql):
    cap = q.shape[1]
    nq = np.empty((q.shape[0], 2 * cap), np.int64)
    for s in range(q.shape[0]):
        for i in range(ql[s]):
            nq[s, i] = q[s, (qh[s] + i) & (cap - 1)]
        qh[s] = 0
    return nq


@njit(cache=True)
def _grow_heap(ht, hk, n):
    nt = np.full(2 * ht.shape[0], np.inf)
    nk = np.full(2 * ht.shape[0], _NO_KEY)
    nt[:n] = ht[:n]
    nk[:n] = hk[:n]
    return nt, nk


@intrinsic
def _prefetch(typingctx, array, index):
    """Ask the processor to bring ``array[index]`` into cache (``llvm.prefetch``)."""
    def codegen(context, builder, signature, args):
        kind = signature.args[0]
        data = context.make_array(kind)(context, builder, args[0])
        pointer = cgutils.get_item_pointer(context, builder, kind, data, [args[1]],
                                           wraparound=False)
        byte = ir.IntType(8).as_pointer()
        function = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [byte] + [ir.IntType(32)] * 3),
            "llvm.prefetch")
        # read, keep in all cache levels, data cache
        builder.call(function, [builder.bitcast(pointer, byte), ir.Constant(ir.IntType(32), 0),
                                ir.Constant(ir.IntType(32), 3), ir.Constant(ir.IntType(32), 1)])
        return context.get_dummy_value()
    return types.void(array, index), codegen


@njit(cache=True)
def _fetch_job(station, dur, prog, base, M):
    """Prefetch a job's rows, some jobs before it needs them: its first touch of
    each row otherwise waits for memory."""
    for x in range(0, M, 8):
        _prefetch(dur, base + x)
    for x in range(0, M, 32):
        _prefetch(station, base + x)
        _prefetch(prog, base + x)


# registers of the event loop kept between calls of `_events`
_ISSUED, _NEXT_ARRIVAL, _LONGEST, _SH, _HEAP, _ISSUES, _BASE = 0, 1, 2, 3, 4, 5, 6
_DONE, _GROW_HEAP, _GROW_LINES = 0, 1, 2
#: open loop: prefetch the job this many arrivals ahead
_AHEAD = 8


@njit(cache=True)
def _events(steps, need8, succ_ptr, succ, purge_ptr, purge, roots_ptr, roots,
            job_class, station, dur, servers, order, arrival, clients, think,
            record, op_done, start, finish, client_of,
            prog, busy, q, qh, ql, ht, hk, ready, freed, pt, pk, regs, chan):
    """Handle events until none is left or the heap or a line may overflow (returns
    which). ``prog`` holds per job and step its state (low 3 bits) and how many of
    its predecessors are done (the rest). ``ht``/``hk`` hold the issues' heap
    (``an`` entries from 0) and the events' heap (``hn`` entries from ``E``)."""
    J = start.shape[0]
    M = need8.shape[1]
    SH = regs[_SH]
    LOW = (1 << SH) - 1
    issued = regs[_ISSUED]
    ap = regs[_NEXT_ARRIVAL]
    longest = regs[_LONGEST]
    hn = regs[_HEAP]
    an = regs[_ISSUES]
    E = np.uint64(regs[_BASE])
    closed = clients > 0
    mask = q.shape[1] - 1
    hcap = ht.shape[0] - regs[_BASE] - 2 * M - 12
    code = _DONE
    while True:
        # an event pushes at most 2M + 2 entries and queues at most M per line
        if hn > hcap:
            code = _GROW_HEAP
            break
        if longest + M > mask:
            code = _GROW_LINES
            break
        arrive = False
        spent = False       # the events' root is this event, to be replaced or removed
        issue = False       # the issues' root is this event, to be removed
        decided = False     # this event lets a client issue the next job
        j = 0
        o = 0
        t = 0.0
        if not closed and ap < J:
            ja = order[ap]
            ta = arrival[ja]
            if hn == 0 or ta < ht[E] or (ta == ht[E] and (ja << SH) < hk[E]):
                ap += 1
                arrive = True
                j = ja
                t = ta
                if ap + _AHEAD < J:
                    _fetch_job(station, dur, prog, order[ap + _AHEAD] * M, M)
        elif an > 0:
            # closed loop: the next issue from the issues' heap
            ta = ht[0]
            ka = hk[0]
            if hn == 0 or ta < ht[E] or (ta == ht[E] and ka < hk[E]):
                arrive = True
                issue = True
                j = ka >> SH
                t = ta
        if not arrive:
            if hn == 0:
                break
            t = ht[E]
            key = hk[E]
            spent = True
            j = key >> SH
            o = (key & LOW) - 1
            if o < 0:
                arrive = True
        c = np.uint64(job_class[np.uint64(j)])
        # unsigned positions (u...): indexing with them needs no negative-index fix-up
        ub = np.uint64(j * M)
        nready = 0
        nfreed = 0
        npush = 0
        if arrive:
            start[np.uint64(j)] = t
            for i in range(roots_ptr[c, np.uint64(0)], roots_ptr[c, np.uint64(1)]):
                ready[np.uint64(nready)] = roots[c, np.uint64(i)]
                nready += 1
        elif prog[ub + np.uint64(o)] & 7 == RUNNING:
            ui = ub + np.uint64(o)
            prog[ui] += DONE - RUNNING
            if record:
                op_done[j, o] = t
            st = station[ui]
            if st >= 0:
                busy[np.uint64(st)] -= 1
                freed[np.uint64(nfreed)] = st
                nfreed += 1
            for i in range(succ_ptr[c, np.uint64(o)], succ_ptr[c, np.uint64(o + 1)]):
                s = succ[c, np.uint64(i)]
                # one more predecessor done; equal to need << 3 iff the count
                # reaches need and the step is still idle
                ux = ub + np.uint64(s)
                v = prog[ux] + 8
                prog[ux] = v
                if v == need8[c, np.uint64(s)]:
                    ready[np.uint64(nready)] = s
                    nready += 1
            if o == steps[c] - 1:
                finish[np.uint64(j)] = t
                if closed and issued < J:
                    _fetch_job(station, dur, prog, issued * M, M)
                    client_of[np.uint64(issued)] = client_of[np.uint64(j)]
                    decided = True
        # r = -1 serves the lines freed by the finished task; r >= 0 starts ready[r]
        # after the lines its purging (if any) freed have taken their servers
        for r in range(-1, nready):
            s = 0
            ux = ub
            if r >= 0:
                s = ready[np.uint64(r)]
                ux = ub + np.uint64(s)
                if prog[ux] & 7 != IDLE:
                    continue  # cancelled by a join readied in this same event
                for i in range(purge_ptr[c, np.uint64(s)], purge_ptr[c, np.uint64(s + 1)]):
                    up = ub + np.uint64(purge[c, np.uint64(i)])
                    sp = prog[up] & 7
                    if sp == RUNNING:
                        prog[up] += CANCELLED - sp
                        st = station[up]
                        if st >= 0:
                            busy[np.uint64(st)] -= 1
                            freed[np.uint64(nfreed)] = st
                            nfreed += 1
                    elif sp == IDLE or sp == WAITING:
                        prog[up] += CANCELLED - sp
            for f in range(nfreed):
                us = np.uint64(freed[np.uint64(f)])
                while ql[us] > 0 and busy[us] < servers[us]:
                    wkey = q[us, np.uint64(qh[us])]
                    qh[us] = (qh[us] + 1) & mask
                    ql[us] -= 1
                    uw = np.uint64((wkey >> SH) * M + (wkey & LOW) - 1)
                    if prog[uw] & 7 != WAITING:
                        continue  # cancelled while waiting
                    prog[uw] += RUNNING - WAITING
                    busy[us] += 1
                    pt[np.uint64(npush)] = t + dur[uw]
                    pk[np.uint64(npush)] = wkey
                    npush += 1
            nfreed = 0
            if r < 0:
                continue
            st = station[ux]
            if st < 0:
                prog[ux] += RUNNING - IDLE
                end = t + dur[ux]
                if st < -1:
                    # an ordered hop: not before the previous message on its channel
                    uc = np.uint64(-2 - st)
                    end = max(end, chan[uc])
                    chan[uc] = end
                pt[np.uint64(npush)] = end
                pk[np.uint64(npush)] = (j << SH) | (s + 1)
                npush += 1
                continue
            us = np.uint64(st)
            if busy[us] < servers[us]:
                busy[us] += 1
                prog[ux] += RUNNING - IDLE
                pt[np.uint64(npush)] = t + dur[ux]
                pk[np.uint64(npush)] = (j << SH) | (s + 1)
                npush += 1
            else:
                prog[ux] += WAITING - IDLE
                q[us, np.uint64((qh[us] + ql[us]) & mask)] = (j << SH) | (s + 1)
                ql[us] += 1
                if ql[us] > longest:
                    longest = ql[us]
        # the root this event came from leaves its heap: the events' root gives its
        # place to the first push, else (and the issues' root) to its heap's last entry
        first = 0
        if spent or issue:
            base = E if spent else np.uint64(0)
            if spent and npush > 0:
                tx = pt[0]
                kx = pk[0]
                first = 1
                un = np.uint64(hn)
            else:
                if spent:
                    hn -= 1
                    un = np.uint64(hn)
                else:
                    an -= 1
                    un = np.uint64(an)
                tx = ht[base + un]
                kx = hk[base + un]
                ht[base + un] = np.inf
                hk[base + un] = _NO_KEY
            if un > np.uint64(0):
                # absolute positions, unsigned (indexing needs no negative-index
                # fix-up): position p's children start at 4p + 1 - 3 base (wrapping)
                p = base
                end = base + un
                off = np.uint64(1) - np.uint64(3) * base
                one = np.uint64(1)
                while True:
                    ua = p * np.uint64(4) + off
                    if ua >= end:
                        break
                    # the smallest of four children by a tournament of two pairs,
                    # without data-dependent branches (equal times are rare)
                    ub2 = ua + np.uint64(2)
                    t0 = ht[ua]
                    t1 = ht[ua + one]
                    if t1 == t0:
                        ua = ua + np.uint64(hk[ua + one] < hk[ua])
                    else:
                        ua = ua + np.uint64(t1 < t0)
                    ta = min(t0, t1)
                    t2 = ht[ub2]
                    t3 = ht[ub2 + one]
                    if t3 == t2:
                        ub2 = ub2 + np.uint64(hk[ub2 + one] < hk[ub2])
                    else:
                        ub2 = ub2 + np.uint64(t3 < t2)
                    tb = min(t2, t3)
                    if tb == ta:
                        um = ub2 if hk[ub2] < hk[ua] else ua
                    else:
                        um = ua + (ub2 - ua) * np.uint64(tb < ta)
                    tm = min(ta, tb)
                    if tm < tx or (tm == tx and hk[um] < kx):
                        ht[p] = tm
                        hk[p] = hk[um]
                        p = um
                    else:
                        break
                ht[p] = tx
                hk[p] = kx
        # the other pushes sift up; a client's next issue last, into the issues' heap
        for e in range(first, npush + decided):
            if e < npush:
                tx = pt[e]
                kx = pk[e]
                base = E
                u = np.uint64(hn)
                hn += 1
            else:
                tx = t + think[np.uint64(issued)]
                kx = issued << SH
                issued += 1
                base = np.uint64(0)
                u = np.uint64(an)
                an += 1
            while u > np.uint64(0):
                up = (u - np.uint64(1)) >> np.uint64(2)
                tp = ht[base + up]
                if tp < tx or (tp == tx and hk[base + up] < kx):
                    break
                ht[base + u] = tp
                hk[base + u] = hk[base + up]
                u = up
            ht[base + u] = tx
            hk[base + u] = kx
    regs[_ISSUED] = issued
    regs[_NEXT_ARRIVAL] = ap
    regs[_LONGEST] = longest
    regs[_HEAP] = hn
    regs[_ISSUES] = an
    return code


@njit(cache=True)
def _run(steps, need, succ_ptr, succ, purge_ptr, purge, roots_ptr, roots,
         job_class, station, dur, servers, order, arrival, clients, think,
         record, op_done, start, finish, client_of, channels):
    J = start.shape[0]
    M = need.shape[1]
    S = servers.shape[0]
    regs = np.zeros(7, np.int64)
    # event key = job << SH | (step + 1), step -1 = the job's arrival (shifts, not
    # divisions, in the hot loop)
    SH = 1
    while (1 << SH) < M + 1:
        SH += 1
    regs[_SH] = SH
    prog = np.empty(J * M, np.int16)
    prog[:] = 0     # touched now, so that prefetches find mapped pages
    need8 = need << 3
    busy = np.zeros(S, np.int64)
    cap = 64
    while cap < 2 * M + 2:
        cap *= 2
    q = np.empty((S, cap), np.int64)
    qh = np.zeros(S, np.int64)
    ql = np.zeros(S, np.int64)
    # the issues' heap first (3 more slots: a 4-ary sift reads past the end), then
    # the events'
    E = clients + 3 if clients > 0 else 0
    regs[_BASE] = E
    ht = np.full(E + max(1024, 8 * M + 16), np.inf)
    hk = np.full(ht.shape[0], _NO_KEY)
    chan = np.full(max(channels, 1), -np.inf)
    ready = np.empty(M, np.int64)
    freed = np.empty(M + 1, np.int64)
    pt = np.empty(2 * M + 4, np.float64)
    pk = np.empty(2 * M + 4, np.int64)
    if clients > 0:
        # the first issues sorted by (time, job): a sorted array is a heap
        first = min(clients, J)
        regs[_ISSUED] = first
        regs[_ISSUES] = first
        for i, c in enumerate(np.argsort(think[:first], kind="mergesort")):
            client_of[c] = c
            ht[i] = think[c]
            hk[i] = c << SH
    while True:
        code = _events(steps, need8, succ_ptr, succ, purge_ptr, purge, roots_ptr, roots,
                       job_class, station, dur, servers, order, arrival, clients, think,
                       record, op_done, start, finish, client_of,
                       prog, busy, q, qh, ql, ht, hk, ready, freed, pt, pk, regs,
                       chan)
        if code == _GROW_HEAP:
            ht, hk = _grow_heap(ht, hk, E + regs[_HEAP])
        elif code == _GROW_LINES:
            q = _grow_lines(q, qh, ql)
            longest = 0
            for i in range(S):
                longest = max(longest, ql[i])
            regs[_LONGEST] = longest
        else:
            break


def simulate(templates: Union[Template, Sequence[Template]], layout: Layout, parties,
             durations, arrivals: Union[Open, Closed], classes=None,
             record_steps: bool = False, accelerate: bool = True) -> Outcome:
    """Run jobs through the stations of ``layout``; per job its start and finish times.

    Parameters
    ----------
    templates : one `Template`, or one per job class.
    layout : the stations.
    parties : int array ``(jobs, parties)``: each job's nodes (see `stations_of`); with
        several classes, padded to the widest, unused columns any valid node.
    durations : float array ``(jobs, steps)``: service or delay time of each step.
    arrivals : `Open` or `Closed`.
    classes : per job its template index (default all 0).
    record_steps : also return every step's end time.
    accelerate : run a one-step model (`builders.one_step_arrays`: tasks at
        single-server stations joined at the k-th by a zero delay, the paper's
        (n,r,k) job) on the fast Lindley engine instead, which gives the same
        numbers bit for bit (open and closed loop; a closed loop with two jobs
        answered at the same instant falls back); False forces the event engine.
    """
    if isinstance(templates, Template):
        templates = [templates]
    templates = list(templates)
    parties = np.asarray(parties, np.int64)
    jobs = parties.shape[0]
    classes = (np.zeros(jobs, np.int64) if classes is None
               else np.asarray(classes, np.int64))
    if classes.shape != (jobs,) or (jobs and not 0 <= classes.min() <= classes.max()
                                    < len(templates)):
        raise ConfigError(f"classes must be {jobs} indices into the {len(templates)} "
                          "templates; give one per job")
    compiled = compile_templates(templates)
    if len(templates) == 1:
        station = stations_of(templates[0], layout, parties[:, :templates[0].parties])
    else:
        station = np.full((jobs, compiled.width), -1, np.int32)
        for c, template in enumerate(templates):
            rows = np.flatnonzero(classes == c)
            station[rows, :len(template.ops)] = stations_of(
                template, layout, parties[rows, :template.parties])
    channels = layout.channels if any(t.ordered for t in templates) else 0
    return run_arrays(compiled, classes, station, durations,
                      np.asarray(layout.servers, np.int64), arrivals, record_steps,
                      channels, accelerate)


def run_arrays(compiled: Compiled, classes, station, durations, servers,
               arrivals: Union[Open, Closed], record_steps: bool = False,
               channels: int = 0, accelerate: bool = True) -> Outcome:
    """`simulate` on resolved arrays: per job its class, per job and step its station
    (-1 for a delay, ``-2 - c`` for an ordered hop on channel ``c < channels``) and
    duration; per station its servers."""
    station = np.asarray(station)
    jobs = station.shape[0] if station.ndim == 2 else -1
    durations = np.ascontiguousarray(durations, np.float64)
    classes = np.asarray(classes, np.int64)
    servers = np.asarray(servers, np.int64)
    if station.shape != (jobs, compiled.width):
        raise ConfigError(f"stations have shape {station.shape}; give one per job and "
                          f"step, shape (jobs, {compiled.width})")
    if durations.shape != station.shape:
        raise ConfigError(f"durations has shape {durations.shape}; give one time per "
                          f"job and step, shape {station.shape}")
    if classes.shape != (jobs,) or (jobs and not 0 <= classes.min() <= classes.max()
                                    < len(compiled.steps)):
        raise ConfigError(f"classes must be {jobs} indices into the "
                          f"{len(compiled.steps)} templates; give one per job")
    channels = int(channels)
    if station.size and not -1 - channels <= station.min() <= station.max() < len(servers):
        raise ConfigError(f"stations {station.min()}..{station.max()} for "
                          f"{len(servers)} stations and {channels} channels; use -1 (a "
                          f"delay), 0..{len(servers) - 1}, or -2 - c for an ordered hop "
                          f"on channel c < {channels}")
    if not np.all(servers >= 1):
        raise ConfigError("every station needs servers >= 1")
    if not np.all(np.isfinite(durations) & (durations >= 0)):
        raise ConfigError("durations must be finite and >= 0; check the laws drawn from")
    start = np.full(jobs, np.nan)
    finish = np.full(jobs, np.nan)
    client = np.full(jobs, -1, np.int64)
    op_done = (np.full(station.shape, np.nan) if record_steps
               else np.empty((1, 1)))
    if isinstance(arrivals, Open):
        times = np.asarray(arrivals.times, np.float64)
        if times.shape != (jobs,) or not np.all(np.isfinite(times)):
            raise ConfigError(f"open arrivals need {jobs} finite times, one per job")
        # ties in arrival go in job order; sorted times (the usual case) need no sort
        order = (np.arange(jobs) if np.all(times[1:] >= times[:-1])
                 else np.lexsort((np.arange(jobs), times)))
        clients, think = 0, np.zeros(1)
    elif isinstance(arrivals, Closed):
        think = np.asarray(arrivals.think, np.float64)
        clients = int(arrivals.clients)
        if clients < 1:
            raise ConfigError(f"clients={clients}; a closed loop needs >= 1 client")
        if think.shape != (jobs,) or not np.all(np.isfinite(think) & (think >= 0)):
            raise ConfigError(f"closed loop needs {jobs} think times >= 0, one per job")
        order, times = np.zeros(1, np.int64), np.zeros(1)
    else:
        raise ConfigError(f"arrivals is {type(arrivals).__name__}; use Open or Closed")
    fast = (one_step_arrays(compiled, classes, station, durations, servers)
            if accelerate else None)
    if fast is not None:
        out = _one_step(fast, len(servers), compiled, classes, order, times, clients,
                        think, record_steps)
        if out is not None:
            return out
    # narrow station numbers when they fit: less memory to stream through
    index = np.int16 if max(len(servers), channels + 2) < 2**15 else np.int32
    _run(compiled.steps, compiled.need, compiled.succ_ptr, compiled.succ,
         compiled.purge_ptr, compiled.purge, compiled.roots_ptr, compiled.roots,
         classes, np.ascontiguousarray(station, index).ravel(), durations.ravel(),
         servers, order, times, clients, think,
         record_steps, op_done, start, finish, client, channels)
    return Outcome(start, finish, op_done if record_steps else None,
                   client if clients else None)


def _one_step(path, node_count, compiled, classes, order, times, clients, think,
              record_steps) -> Outcome:
    """A one-step model on the fast Lindley engine, in this engine's order of
    arrivals (open loop) or numbering of issues (closed loop); None where that
    numbering needs the events (two jobs answered at the same instant)."""
    nodes, service, quorum = path
    if clients:
        run = serve_closed_loop(clients, think, nodes, service, quorum, node_count)
        if run is None:
            return None     # simultaneous answers: their order needs the events
        start, finish, client, done = run
    else:
        done, finish = serve_in_order(order, times, nodes, service, quorum, node_count)
        start, client = times.copy(), None
    steps = None
    if record_steps:
        # every task ran (nothing is cancelled); the joins end at the finish
        steps = done
        steps[np.arange(len(finish)), compiled.steps[classes] - 1] = finish
    return Outcome(start, finish, steps, client)
