"""The fast engine: exact FCFS fork-join departures without an event list.

A node serves its tasks in arrival order, so each task's completion follows the
Lindley recursion ``done = max(arrival, node_free) + service``. Jobs arrive in order,
so one pass over the jobs, carrying each node's "free at" time, is exact for any
service distribution. It does not model purging (cancellation changes the work a
node does); use the SimPy engine for that.

Closed loop: the next job is sent by the client with the earliest release time
(a binary heap of clients). Because nodes are FCFS, a job's completion is known the
moment it is sent, so its client's next release (completion + think time) is known
too, and send times come out non-decreasing: the same single pass stays exact.
"""

from __future__ import annotations

import numba
import numpy as np

from forkjoin_sim.errors import ConfigError
from forkjoin_sim.randomness.samplepath import SamplePath
from forkjoin_sim.engines.select import SMALL, kth_smallest


@numba.njit(cache=True, inline="always")
def _insert(done, m, d):
    """Put ``d`` into the sorted ``done[:m]`` (insertion sort: a job has few tasks,
    and this keeps the k-th smallest completion exact)."""
    i = m
    while i > 0 and done[i - 1] > d:
        done[i] = done[i - 1]
        i -= 1
    done[i] = d


@numba.njit(cache=True, inline="always")
def _serve_job(j, a, nodes, service, quorum, free, completions, done):
    """Queue job ``j``'s tasks (arriving at ``a``) and return its quorum completion."""
    width = nodes.shape[1]
    m = 0
    for t in range(width):
        node = nodes[j, t]
        if node < 0:
            completions[j, t] = np.nan
            continue
        start = free[node] if free[node] > a else a
        d = start + service[j, t]
        free[node] = d
        completions[j, t] = d
        if width <= SMALL:
            _insert(done, m, d)
        else:
            done[m] = d
        m += 1
    return done[quorum[j] - 1] if width <= SMALL else kth_smallest(done, m, quorum[j])


@numba.njit(cache=True, inline="always")
def _serve_job_staged(j, a, nodes, service, quorum, kinds, stage_of, threads, free,
                      completions, done):
    """`_serve_job` for nodes of several FCFS stages with several threads each: a task
    of kind ``kinds[j, t]`` joins stage ``stage_of[kind]`` of its node and takes the
    thread that frees first (Kiefer-Wolfowitz: exact for FCFS multi-server queues
    fed in arrival order)."""
    width = nodes.shape[1]
    m = 0
    for t in range(width):
        node = nodes[j, t]
        if node < 0:
            completions[j, t] = np.nan
            continue
        stage = stage_of[kinds[j, t]]
        best = 0
        for c in range(1, threads[stage]):
            if free[node, stage, c] < free[node, stage, best]:
                best = c
        start = free[node, stage, best] if free[node, stage, best] > a else a
        d = start + service[j, t]
        free[node, stage, best] = d
        completions[j, t] = d
        if width <= SMALL:
            _insert(done, m, d)
        else:
            done[m] = d
        m += 1
    return done[quorum[j] - 1] if width <= SMALL else kth_smallest(done, m, quorum[j])


@numba.njit(cache=True)
def _lindley_fork_join(arrivals, nodes, service, quorum, free, completions, sojourns):
    done = np.empty(nodes.shape[1])
    for j in range(nodes.shape[0]):
        a = arrivals[j]
        sojourns[j] = _serve_job(j, a, nodes, service, quorum, free, completions,
                                 done) - a


@numba.njit(cache=True)
def _lindley_staged(arrivals, nodes, service, quorum, kinds, stage_of, threads, free,
                    overhead, completions, sojourns):
    done = np.empty(nodes.shape[1])
    extra = overhead.size > 0
    for j in range(nodes.shape[0]):
        a = arrivals[j]
        sojourns[j] = _serve_job_staged(j, a, nodes, service, quorum, kinds, stage_of,
                                        threads, free, completions, done) - a
        if extra:
            sojourns[j] += overhead[j]


@numba.njit(cache=True)
def _lindley_closed(when, key, think, nodes, service, quorum, free, arrivals,
                    completions, sojourns, staged, kinds, stage_of, threads, free_stages,
                    overhead):
    """Each job to the client released first (earliest time, then lowest client
    number): ``when`` / ``key``, a binary heap of the clients' release times and
    numbers, the times stored in it (no look-up through the client's number: half
    the cost of a closed-loop job went there)."""
    done = np.empty(nodes.shape[1])
    extra = overhead.size > 0
    size = key.size
    for j in range(nodes.shape[0]):
        client = key[0]
        a = when[0]
        arrivals[j] = a
        if staged:
            finish = _serve_job_staged(j, a, nodes, service, quorum, kinds, stage_of,
                                       threads, free_stages, completions, done)
        else:
            finish = _serve_job(j, a, nodes, service, quorum, free, completions, done)
        if extra:
            # Client hops and coordinator time: a delay outside the node queues,
            # seen by the client and added to its cycle.
            finish += overhead[j]
        sojourns[j] = finish - a
        _replace_root(when, key, size, finish + think[j], client)


class FastEngine:
    """Exact non-purging FCFS engine (numba-compiled Lindley recursion).

    The engine keeps each node's "free at" time (and, under a closed loop, each
    client's release time) between calls, so a long run can be fed block by block
    in bounded memory with the same numbers as one block.

    Parameters
    ----------
    node_count : int
    initial_release : (clients,) array, optional
        Closed loop: when each client sends its first job.
    """

    name = "fast"
    blockwise = True

    def __init__(self, node_count: int, initial_release: np.ndarray | None = None,
                 node=None):
        from forkjoin_sim.nodes import is_plain

        if isinstance(node_count, bool) or not isinstance(node_count, (int, np.integer)) \
                or node_count < 1:
            raise ConfigError(f"node_count={node_count!r} must be a whole number >= 1")
        self.free = np.zeros(node_count)
        self.staged = not is_plain(node)
        if self.staged:
            self.stage_of = node.stage_of
            self.threads = node.stage_threads
            self.free_stages = np.zeros((node_count, self.threads.size,
                                         int(self.threads.max())))
        else:
            # The paper's node is the one-stage, one-thread case: a view of the same
            # "free at" times, so either kernel may run any block.
            self.stage_of = np.zeros(4, dtype=np.int64)
            self.threads = np.ones(1, dtype=np.int64)
            self.free_stages = self.free.reshape(node_count, 1, 1)
        self.when = None
        if initial_release is not None:
            # sorted by time, then client number: a binary heap in that order
            release = np.array(initial_release, dtype=float)
            self.key = np.argsort(release, kind="stable").astype(np.int64)
            self.when = release[self.key]

    def run(self, path: SamplePath) -> tuple[np.ndarray, np.ndarray]:
        """Per-task completion times (NaN where no task) and per-job sojourn times.

        Under a closed loop the path's arrival times are filled in. A block that
        carries more than the path (a Cassandra write path) is run on its ``path``.
        """
        path = getattr(path, "path", path)
        if not isinstance(path, SamplePath):
            raise ConfigError(f"run() takes a SamplePath (draw_sample_path(model, jobs)), "
                              f"got {type(path).__name__}")
        # the compiled loops index per-node state by the path's node numbers unchecked
        # (a negative number marks a task slot that is not used)
        if path.nodes.size and path.nodes.max() >= self.free.size:
            raise ConfigError(f"the path uses nodes up to {int(path.nodes.max())} but "
                              f"this engine has {self.free.size}; build "
                              "FastEngine(node_count) with the model's node count")
        completions = np.empty(path.nodes.shape)
        sojourns = np.empty(path.jobs)
        overhead = path.overhead if path.overhead is not None else np.empty(0)
        staged = self.staged or path.kinds is not None or overhead.size > 0
        kinds = (path.kinds if path.kinds is not None
                 else np.zeros(path.nodes.shape, dtype=np.int8))
        if path.closed:
            if self.when is None:
                raise ValueError("a closed-loop path needs FastEngine(initial_release=)")
            _lindley_closed(self.when, self.key, path.think, path.nodes,
                            path.service, path.quorum, self.free, path.arrivals,
                            completions, sojourns, self.staged, kinds, self.stage_of,
                            self.threads, self.free_stages, overhead)
        elif staged:
            _lindley_staged(path.arrivals, path.nodes, path.service, path.quorum, kinds,
                            self.stage_of, self.threads, self.free_stages, overhead,
                            completions, sojourns)
        else:
            _lindley_fork_join(path.arrivals, path.nodes, path.service, path.quorum,
                               self.free, completions, sojourns)
        return completions, sojourns


# The steps engine's numbering (forkjoin_sim.steps.engine): the same Lindley recursion,
# fed in the order that engine handles arrivals, so one-step models computed either way
# agree to the last bit.


@numba.njit(cache=True)
def _lindley_in_order(order, arrivals, nodes, service, quorum, free, completions,
                      finish):
    done = np.empty(nodes.shape[1])
    for i in range(order.shape[0]):
        j = order[i]
        finish[j] = _serve_job(j, arrivals[j], nodes, service, quorum, free,
                               completions, done)


@numba.njit(cache=True, inline="always")
def _replace_root(when, key, size, t, k):
    """Put (t, k) at the root of the binary heap ``when[:size]`` / ``key[:size]``
    (ordered by time, then key) and sift it down."""
    u = 0
    while True:
        c = 2 * u + 1
        if c >= size:
            break
        if c + 1 < size and (when[c + 1] < when[c]
                             or (when[c + 1] == when[c] and key[c + 1] < key[c])):
            c += 1
        if when[c] < t or (when[c] == t and key[c] < k):
            when[u] = when[c]
            key[u] = key[c]
            u = c
        else:
            break
    when[u] = t
    key[u] = k


@numba.njit(cache=True)
def _lindley_closed_in_issue_order(clients, think, nodes, service, quorum, free, start,
                                   finish, client_of, completions):
    jobs = nodes.shape[0]
    done = np.empty(nodes.shape[1])
    size = min(clients, jobs)
    # per client its next event: job key >> 1 issued (key even) or answered (odd) at
    # `when`; handled in (time, job, issue before answer) order, as the steps engine
    # handles them. Think times are >= 0, so the first issues are a heap once sorted.
    when = np.empty(max(size, 1))
    key = np.empty(max(size, 1), np.int64)
    first = np.argsort(think[:size], kind="mergesort")
    for i in range(size):
        when[i] = think[first[i]]
        key[i] = 2 * first[i]
        client_of[first[i]] = first[i]
    issued = size
    answered = -np.inf
    while size > 0:
        t = when[0]
        k = key[0]
        j = k >> 1
        if k & 1 == 0:
            start[j] = t
            f = _serve_job(j, t, nodes, service, quorum, free, completions, done)
            finish[j] = f
            _replace_root(when, key, size, f, k + 1)
        elif issued < jobs:
            # answered: its client takes the next job index and thinks that job's time
            if t == answered:
                return False
            answered = t
            client_of[issued] = client_of[j]
            _replace_root(when, key, size, t + think[issued], 2 * issued)
            issued += 1
        else:
            size -= 1
            _replace_root(when, key, size, when[size], key[size])
    return True


def _check_nodes(nodes, node_count):
    if nodes.size and nodes.max() >= node_count:
        raise ConfigError(f"tasks use nodes up to {int(nodes.max())} of {node_count}; "
                          "give node_count above every node number")


def serve_in_order(order, arrivals, nodes, service, quorum, node_count: int):
    """Open loop in a given order: jobs ``order[0], order[1], ...`` join their nodes'
    FCFS queues at ``arrivals[j]`` (non-decreasing along ``order``; ties keep that
    order). Returns per task its completion (NaN where no task) and per job its
    finish: the quorum-th completion itself, not arrival plus sojourn, so the numbers
    equal the steps engine's bit for bit on one-step jobs."""
    _check_nodes(nodes, node_count)
    completions = np.empty(nodes.shape)
    finish = np.empty(nodes.shape[0])
    _lindley_in_order(np.asarray(order, np.int64), arrivals, nodes, service, quorum,
                      np.zeros(node_count), completions, finish)
    return completions, finish


def serve_closed_loop(clients: int, think, nodes, service, quorum, node_count: int):
    """Closed loop numbered as the steps engine numbers it: client ``c`` thinks
    ``think[c]`` and issues job ``c``; each answer lets its client take the next job
    index ``i`` (answers in (time, job) order) and issue it ``think[i]`` later.

    Returns ``(start, finish, client, completions)`` per job (per task for the
    last), or None if two jobs are answered at the same instant before the last job
    is issued: the steps engine then takes the answers in the order its events
    happen within that instant (a zero-time task started by one answer's event can
    end before another), which a pass over whole jobs cannot see, so this function
    leaves such runs to it. `FastEngine`'s closed loop instead numbers jobs in the
    order they are sent and takes the think time of the job just answered; the two
    agree when every think time is the same (and no two clients send at the same
    instant after the first requests).
    """
    _check_nodes(nodes, node_count)
    jobs = nodes.shape[0]
    start = np.empty(jobs)
    finish = np.empty(jobs)
    client = np.empty(jobs, np.int64)
    completions = np.empty(nodes.shape)
    if not _lindley_closed_in_issue_order(int(clients), np.asarray(think, np.float64),
                                          nodes, service, quorum, np.zeros(node_count),
                                          start, finish, client, completions):
        return None
    return start, finish, client, completions
