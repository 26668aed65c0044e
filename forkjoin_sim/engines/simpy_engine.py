"""The SimPy engine: an event-level reference model of the fork-join queue.

Each node is a ``simpy.Resource`` of capacity one (FCFS); each task is a process that
queues for its node and holds it for its service time. It is slow and meant to be
read; it is also the only engine that models purging, where the k-th completion
cancels the job's other tasks, queued or in service. Under a closed loop each client
is a process that sends a job, waits for its quorum, thinks, and sends the next.
"""

from __future__ import annotations

import numpy as np
import simpy

from forkjoin_sim.randomness.samplepath import SamplePath


class SimPyEngine:
    """Event-level engine for one whole sample path (it cannot be fed in blocks:
    work still queued at the end of a block would run ahead of the next block's
    arrivals)."""

    name = "simpy"
    blockwise = False

    def __init__(self, node_count: int, purging: bool = False,
                 initial_release: np.ndarray | None = None, node=None):
        from forkjoin_sim.nodes import SharedQueue

        node = node if node is not None else SharedQueue()
        self.env = simpy.Environment()
        # One FCFS resource per (node, stage), with the stage's threads as capacity.
        self.servers = [[simpy.Resource(self.env, capacity=int(c))
                         for c in node.stage_threads] for _ in range(node_count)]
        self.stage_of = node.stage_of
        self.purging = purging
        self.initial_release = initial_release

    def _task(self, node, stage, service_time, completions, t, job):
        try:
            with self.servers[node][stage].request() as request:
                yield request
                yield self.env.timeout(service_time)
        except simpy.Interrupt:
            return  # purged: leaving the ``with`` frees the node or the queue slot
        completions[t] = self.env.now
        job["finished"] += 1
        if job["finished"] == job["quorum"]:
            job["done"].succeed()
            if self.purging:
                for other in job["tasks"]:
                    if other.is_alive and other is not self.env.active_process:
                        other.interrupt("purged")

    def _send(self, path: SamplePath, j: int, completions):
        job = {"finished": 0, "quorum": int(path.quorum[j]), "tasks": [],
               "done": self.env.event()}
        for t, node in enumerate(path.nodes[j]):
            if node >= 0:
                kind = 0 if path.kinds is None else int(path.kinds[j, t])
                job["tasks"].append(self.env.process(self._task(
                    int(node), int(self.stage_of[kind]), float(path.service[j, t]),
                    completions[j], t, job)))
        return job["done"]

    def _source(self, path: SamplePath, completions):
        env = self.env
        for j in range(path.jobs):
            yield env.timeout(path.arrivals[j] - env.now)
            self._send(path, j, completions)

    def _client(self, path: SamplePath, completions, first: float, counter: list):
        env = self.env
        yield env.timeout(first)
        while counter[0] < path.jobs:
            j = counter[0]
            counter[0] += 1
            path.arrivals[j] = env.now
            yield self._send(path, j, completions)
            if path.overhead is not None:
                yield env.timeout(path.overhead[j])
            yield env.timeout(path.think[j])

    #: Events between two calls of ``on_progress``.
    PROGRESS_EVENTS = 50_000

    def _run(self, path: SamplePath, issued) -> None:
        """Run the events to the end; every `PROGRESS_EVENTS` events, pass the jobs
        sent since the last call to ``on_progress`` (if set), which then holds the
        total it was given in ``reported`` (a progress bar's update)."""
        report = getattr(self, "on_progress", None)
        self.reported = 0
        if report is None:
            self.env.run()
            return
        env, steps = self.env, 0
        while True:
            try:
                env.step()
            except simpy.core.EmptySchedule:
                return
            steps += 1
            if steps % self.PROGRESS_EVENTS == 0:
                sent = (issued[0] if issued is not None else
                        int(np.searchsorted(path.arrivals, env.now, side="right")))
                sent = min(sent, path.jobs)
                if sent > self.reported:
                    report(sent - self.reported)
                    self.reported = sent

    def run(self, path: SamplePath) -> tuple[np.ndarray, np.ndarray]:
        """Per-task completion times (NaN where no task or purged) and sojourn times.

        Runs until every task of the path has finished (or been purged). Under a
        closed loop the path's arrival times are filled in.
        """
        if self.env.now > 0:
            raise RuntimeError("a SimPyEngine runs one sample path; make a new one")
        completions = np.full(path.nodes.shape, np.nan)
        if path.closed:
            counter = [0]
            for first in self.initial_release:
                self.env.process(self._client(path, completions, float(first), counter))
        else:
            self.env.process(self._source(path, completions))
        self._run(path, counter if path.closed else None)
        kth = np.sort(completions, axis=1)[np.arange(path.jobs), path.quorum - 1]
        sojourns = kth - path.arrivals
        if path.overhead is not None:
            sojourns = sojourns + path.overhead
        return completions, sojourns
