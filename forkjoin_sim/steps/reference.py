"""The same jobs of steps on SimPy: the plain reference for the compiled engine.

One ``simpy.Resource`` (FIFO, ``servers`` capacity) per station and one process per
step of each job. A step waits for ``need`` of its predecessors, then for a server of
its station (or nothing, for a delay), then for its duration. An ordered hop (station ``-2 - channel``) waits until the later of its
duration's end and the end of the previous hop on its channel. A purging join interrupts
the steps it post-dominates: a waiting one withdraws its request, one in service
releases its server. Takes the same arrays as `engine.run_arrays`, so both engines see
the same numbers; slow, for tests and speed comparisons only.

Simultaneous events follow the engine's rule: a step's end and a job's arrival are
scheduled with a priority below SimPy's own events and ordered by (job, step), so all
consequences of one (a server handed on, successors started, a client's next job) are
settled before the next one at the same time, and those come in (job, step) order.
"""

from __future__ import annotations

import heapq

import numpy as np
import simpy

from forkjoin_sim.steps.engine import Closed, Open, Outcome
from forkjoin_sim.steps.graph import Compiled


class _Ordered(simpy.Event):
    """A timeout that comes after SimPy's ordinary events of the same time, and after
    every ``_Ordered`` of the same time and smaller ``rank`` (built as
    ``simpy.Timeout`` builds itself, with a priority of its own). With ``at`` it
    fires at that time exactly: now + (at - now) may round off it."""

    def __init__(self, env, delay, rank, at=None):
        super().__init__(env)
        self._ok = True
        self._value = None
        if at is None:
            env.schedule(self, simpy.events.NORMAL + 1 + rank, delay)
        else:
            env.schedule_at(self, simpy.events.NORMAL + 1 + rank, at)


class _Environment(simpy.Environment):
    """SimPy's environment that can also schedule an event at an absolute time."""

    def schedule_at(self, event, priority, at):
        heapq.heappush(self._queue, (at, priority, next(self._eid), event))


class _Job:
    """One job's steps as SimPy processes."""

    def __init__(self, sim, j):
        self.sim = sim
        self.j = j
        c = sim.classes[j]
        self.c = c
        steps = int(sim.compiled.steps[c])
        self.count = [0] * steps
        self.ready = [sim.env.event() for _ in range(steps)]
        self.request = [None] * steps
        self.procs = [None] * steps
        self.over = [False] * steps     # done or cancelled
        self.done = sim.env.event()
        for o in range(steps):
            self.procs[o] = sim.env.process(self.step(o))

    def step(self, o):
        sim, comp, c = self.sim, self.sim.compiled, self.c
        try:
            if comp.need[c, o] > 0:
                yield self.ready[o]
            for i in range(comp.purge_ptr[c, o], comp.purge_ptr[c, o + 1]):
                p = int(comp.purge[c, i])
                if not self.over[p]:
                    self.over[p] = True
                    self.procs[p].interrupt()
            st = sim.station[self.j, o]
            if st >= 0:
                self.request[o] = sim.resources[st].request()
                yield self.request[o]
            delay = sim.durations[self.j, o]
            end = sim.ordered_hop(-2 - st, delay) if st < -1 else None
            yield _Ordered(sim.env, delay, sim.rank(self.j, o), end)
            if st >= 0:
                sim.resources[st].release(self.request[o])
        except simpy.Interrupt:
            request = self.request[o]
            if request is not None:
                if request.triggered:
                    sim.resources[sim.station[self.j, o]].release(request)
                else:
                    request.cancel()
            return
        self.over[o] = True
        if sim.steps is not None:
            sim.steps[self.j, o] = sim.env.now
        for i in range(comp.succ_ptr[c, o], comp.succ_ptr[c, o + 1]):
            s = int(comp.succ[c, i])
            self.count[s] += 1
            if self.count[s] == comp.need[c, s] and not self.over[s]:
                self.ready[s].succeed()
        if o == comp.steps[c] - 1:
            sim.finish[self.j] = sim.env.now
            self.done.succeed()


class _Simulation:
    def __init__(self, compiled, classes, station, durations, servers, record):
        self.env = _Environment()
        self.compiled = compiled
        self.classes = np.asarray(classes)
        self.station = np.asarray(station)
        self.durations = np.asarray(durations, float)
        self.resources = [simpy.Resource(self.env, int(c)) for c in servers]
        jobs = self.station.shape[0]
        self.start = np.full(jobs, np.nan)
        self.finish = np.full(jobs, np.nan)
        self.steps = np.full(self.station.shape, np.nan) if record else None
        self.channel_end = {}

    def ordered_hop(self, channel, delay):
        """The end of a hop starting now on ``channel``: the later of now + ``delay``
        and the previous hop's end there, as the engine computes it."""
        end = max(self.env.now + delay, self.channel_end.get(channel, -np.inf))
        self.channel_end[channel] = end
        return end

    def rank(self, j, o):
        """The engine's order of job ``j``'s step ``o`` (-1: its arrival)."""
        return j * (self.station.shape[1] + 1) + o + 1

    def issue(self, j):
        self.start[j] = self.env.now
        return _Job(self, j)

    def arrive(self, j, time):
        yield _Ordered(self.env, time, self.rank(j, -1))   # from 0: exactly ``time``
        self.issue(j)

    def client(self, c, think, state, client_of):
        j = c
        while True:
            client_of[j] = c
            yield _Ordered(self.env, think[j], self.rank(j, -1))
            yield self.issue(j).done
            if state["issued"] >= len(think):
                return
            j = state["issued"]
            state["issued"] += 1


def run_reference(compiled: Compiled, classes, station, durations, servers,
                  arrivals, record_steps: bool = False, channels: int = 0) -> Outcome:
    """`engine.run_arrays` on SimPy: the same inputs, the same outcome."""
    sim = _Simulation(compiled, classes, station, durations, servers, record_steps)
    jobs = sim.station.shape[0]
    client_of = None
    if isinstance(arrivals, Open):
        times = np.asarray(arrivals.times, float)
        for j in np.lexsort((np.arange(jobs), times)):
            sim.env.process(sim.arrive(j, times[j]))
    elif isinstance(arrivals, Closed):
        client_of = np.full(jobs, -1, np.int64)
        state = {"issued": min(arrivals.clients, jobs)}
        for c in range(state["issued"]):
            sim.env.process(sim.client(c, np.asarray(arrivals.think, float), state,
                                       client_of))
    sim.env.run()
    return Outcome(sim.start, sim.finish, sim.steps, client_of)
