"""The compiled event engine: jobs of steps through FCFS multi-server stations.

One heap of events (a step's end, or a job's arrival) ordered by ``(time, job, step)``
with a job's arrival before its steps; per station a FIFO waiting line. Simultaneous
events are therefore handled in job order, then step order. Within one event, effects
happen in this order: the finished task's server takes the head of its line; the
successors whose ``need`` is now met start in increasing step order (a purging join
first cancels what it post-dominates, freeing servers to their lines' heads, then
starts itself); a closed-loop client whose job finished picks its next job.

The engine is exact for FCFS ``c``-server stations: a task starts at the later of its
readiness and a free server, in order of readiness (ties as above).

Closed loop: ``clients`` threads; client ``c`` thinks ``think[c]`` and issues job ``c``;
whenever a job finishes, its client takes the next job index (so job index = the order
in which clients decide to issue, ties by job order of the finishing jobs) and issues
it ``think[index]`` later.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence, Union

import numpy as np
from numba import njit

from forkjoin_sim.errors import ConfigError
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


@njit(cache=True)
def _sift_up(ht, hk, i):
    t = ht[i]
    k = hk[i]
    while i > 0:
        p = (i - 1) >> 1
        pt = ht[p]
        if pt < t or (pt == t and hk[p] < k):
            break
        ht[i] = pt
        hk[i] = hk[p]
        i = p
    ht[i] = t
    hk[i] = k


@njit(cache=True)
def _sift_down(ht, hk, n):
    i = 0
    t = ht[0]
    k = hk[0]
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n:
            t1 = ht[c + 1]
            t0 = ht[c]
            if t1 < t0 or (t1 == t0 and hk[c + 1] < hk[c]):
                c += 1
        tc = ht[c]
        if tc < t or (tc == t and hk[c] < k):
            ht[i] = tc
            hk[i] = hk[c]
            i = c
        else:
            break
    ht[i] = t
    hk[i] = k


@njit(cache=True)
def _push(ht, hk, hn, t, k):
    if hn == ht.shape[0]:
        nt = np.empty(2 * hn, np.float64)
        nk = np.empty(2 * hn, np.int64)
        nt[:hn] = ht
        nk[:hn] = hk
        ht = nt
        hk = nk
    ht[hn] = t
    hk[hn] = k
    _sift_up(ht, hk, hn)
    return ht, hk


@njit(cache=True)
def _enqueue(q, qh, ql, st, item):
    cap = q.shape[1]
    if ql[st] == cap:
        nq = np.empty((q.shape[0], 2 * cap), np.int64)
        for s in range(q.shape[0]):
            for i in range(ql[s]):
                nq[s, i] = q[s, (qh[s] + i) % cap]
            qh[s] = 0
        q = nq
        cap = 2 * cap
    q[st, (qh[st] + ql[st]) % cap] = item
    ql[st] += 1
    return q


@njit(cache=True)
def _serve_line(st, t, q, qh, ql, busy, servers, state, dur, M, W, ht, hk, hn):
    """Free servers of ``st`` take the live heads of its line; returns the heap."""
    cap = q.shape[1]
    while ql[st] > 0 and busy[st] < servers[st]:
        item = q[st, qh[st]]
        qh[st] = (qh[st] + 1) % cap
        ql[st] -= 1
        if state[item] != WAITING:
            continue  # cancelled while waiting
        state[item] = RUNNING
        busy[st] += 1
        j = item // M
        ht, hk = _push(ht, hk, hn, t + dur[item], j * W + (item - j * M) + 1)
        hn += 1
    return ht, hk, hn


@njit(cache=True)
def _run(steps, need, succ_ptr, succ, purge_ptr, purge, roots_ptr, roots,
         job_class, station, dur, servers, order, arrival, clients, think,
         record, op_done, start, finish, client_of):
    J = start.shape[0]
    M = need.shape[1]
    W = M + 1
    S = servers.shape[0]
    state = np.zeros(J * M, np.int8)
    count = np.zeros(J * M, np.int32)
    busy = np.zeros(S, np.int64)
    q = np.empty((S, 64), np.int64)
    qh = np.zeros(S, np.int64)
    ql = np.zeros(S, np.int64)
    ht = np.empty(1024, np.float64)
    hk = np.empty(1024, np.int64)
    hn = 0
    ready = np.empty(M, np.int64)
    closed = clients > 0
    issued = 0
    if closed:
        issued = min(clients, J)
        for c in range(issued):
            client_of[c] = c
            ht, hk = _push(ht, hk, hn, think[c], c * W)
            hn += 1
    ap = 0
    while True:
        arrive = False
        if not closed and ap < J:
            ja = order[ap]
            ta = arrival[ja]
            if hn == 0 or ta < ht[0] or (ta == ht[0] and ja * W < hk[0]):
                ap += 1
                arrive = True
                j = ja
                t = ta
        if not arrive:
            if hn == 0:
                break
            t = ht[0]
            key = hk[0]
            hn -= 1
            if hn > 0:
                ht[0] = ht[hn]
                hk[0] = hk[hn]
                _sift_down(ht, hk, hn)
            j = key // W
            o = key - j * W - 1
            if o < 0:
                arrive = True
        c = job_class[j]
        base = j * M
        nready = 0
        if arrive:
            start[j] = t
            for i in range(roots_ptr[c, 0], roots_ptr[c, 1]):
                ready[nready] = roots[c, i]
                nready += 1
        else:
            idx = base + o
            if state[idx] != RUNNING:
                continue  # cancelled by a purging join
            state[idx] = DONE
            if record:
                op_done[j, o] = t
            st = station[j, o]
            if st >= 0:
                busy[st] -= 1
                ht, hk, hn = _serve_line(st, t, q, qh, ql, busy, servers, state, dur,
                                         M, W, ht, hk, hn)
            for i in range(succ_ptr[c, o], succ_ptr[c, o + 1]):
                s = succ[c, i]
                count[base + s] += 1
                if count[base + s] == need[c, s] and state[base + s] == IDLE:
                    ready[nready] = s
                    nready += 1
            if o == steps[c] - 1:
                finish[j] = t
                if closed and issued < J:
                    nxt = issued
                    issued += 1
                    client_of[nxt] = client_of[j]
                    ht, hk = _push(ht, hk, hn, t + think[nxt], nxt * W)
                    hn += 1
        for r in range(nready):
            s = ready[r]
            idx = base + s
            if state[idx] != IDLE:
                continue  # cancelled by a join readied in this same event
            for i in range(purge_ptr[c, s], purge_ptr[c, s + 1]):
                p = purge[c, i]
                ip = base + p
                sp = state[ip]
                if sp == RUNNING:
                    state[ip] = CANCELLED
                    st = station[j, p]
                    if st >= 0:
                        busy[st] -= 1
                        ht, hk, hn = _serve_line(st, t, q, qh, ql, busy, servers, state,
                                                 dur, M, W, ht, hk, hn)
                elif sp == IDLE or sp == WAITING:
                    state[ip] = CANCELLED
            st = station[j, s]
            if st < 0 or busy[st] < servers[st]:
                if st >= 0:
                    busy[st] += 1
                state[idx] = RUNNING
                ht, hk = _push(ht, hk, hn, t + dur[idx], j * W + s + 1)
                hn += 1
            else:
                state[idx] = WAITING
                q = _enqueue(q, qh, ql, st, idx)


def simulate(templates: Union[Template, Sequence[Template]], layout: Layout, parties,
             durations, arrivals: Union[Open, Closed], classes=None,
             record_steps: bool = False) -> Outcome:
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
    station = np.full((jobs, compiled.width), -1, np.int32)
    for c, template in enumerate(templates):
        rows = np.flatnonzero(classes == c)
        station[rows, :len(template.ops)] = stations_of(
            template, layout, parties[rows, :template.parties])
    durations = np.ascontiguousarray(durations, np.float64)
    if durations.shape != station.shape:
        raise ConfigError(f"durations has shape {durations.shape}; give one time per "
                          f"job and step, shape {station.shape}")
    if not np.all(np.isfinite(durations) & (durations >= 0)):
        raise ConfigError("durations must be finite and >= 0; check the laws drawn from")
    return run_arrays(compiled, classes, station, durations,
                      np.asarray(layout.servers, np.int64), arrivals, record_steps)


def run_arrays(compiled: Compiled, classes, station, durations, servers,
               arrivals: Union[Open, Closed], record_steps: bool = False) -> Outcome:
    """`simulate` on resolved arrays (per job and step: station, duration)."""
    jobs = station.shape[0]
    start = np.full(jobs, np.nan)
    finish = np.full(jobs, np.nan)
    client = np.full(jobs, -1, np.int64)
    op_done = (np.full(station.shape, np.nan) if record_steps
               else np.empty((1, 1)))
    if isinstance(arrivals, Open):
        times = np.asarray(arrivals.times, np.float64)
        if times.shape != (jobs,) or not np.all(np.isfinite(times)):
            raise ConfigError(f"open arrivals need {jobs} finite times, one per job")
        order = np.lexsort((np.arange(jobs), times))
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
    _run(compiled.steps, compiled.need, compiled.succ_ptr, compiled.succ,
         compiled.purge_ptr, compiled.purge, compiled.roots_ptr, compiled.roots,
         np.asarray(classes, np.int64), np.ascontiguousarray(station, np.int32),
         np.ascontiguousarray(durations, np.float64).ravel(),
         np.asarray(servers, np.int64), order, times, clients, think,
         record_steps, op_done, start, finish, client)
    return Outcome(start, finish, op_done if record_steps else None,
                   client if clients else None)
