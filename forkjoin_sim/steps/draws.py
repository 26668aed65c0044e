"""Random numbers by purpose: each value is a function of (seed, purpose, job index).

Every purpose has its own child streams of the run's ``SeedSequence``: the jobs are cut
into chunks of `CHUNK` consecutive indices, and chunk ``b`` of purpose ``p`` is drawn
from ``SeedSequence(seed, spawn_key=(*PURPOSES[p], b))``, one row per job. A block of
jobs ``[first, first + count)`` is the rows of the chunks it covers, so the values do
not depend on how the jobs are split into blocks, nor on which engine asks, nor on the
other purposes (common random numbers across engines and across model variants).

A *law* is a frozen ``scipy.stats`` distribution (anything with
``rvs(size=, random_state=)``), a number (a constant), or a function
``law(generator, shape) -> array``.
"""

from __future__ import annotations

import zlib

import numpy as np

from forkjoin_sim.errors import ConfigError
from forkjoin_sim.randomness.streams import STEP_BASE, STEP_PURPOSES

#: Jobs per child stream. Changing it changes every drawn value.
CHUNK = 4096

#: Purpose -> spawn-key prefix. Step durations use ``("step", kind)``, whose prefix is
#: ``(10, crc32(kind))`` so that any kind name has a stable stream of its own.
PURPOSES = STEP_PURPOSES  # the table of purposes is in randomness.streams
_STEP = STEP_BASE


def _key(purpose) -> tuple:
    if isinstance(purpose, tuple) and len(purpose) == 2 and purpose[0] == "step":
        return (_STEP, zlib.crc32(str(purpose[1]).encode()))
    try:
        return PURPOSES[purpose]
    except (KeyError, TypeError):
        raise ConfigError(f"unknown purpose {purpose!r}; use one of {sorted(PURPOSES)} "
                          "or ('step', kind)") from None


def stream(seed: int, purpose, chunk: int) -> np.random.Generator:
    """The generator of ``purpose`` for jobs ``chunk*CHUNK .. (chunk+1)*CHUNK - 1``."""
    sequence = np.random.SeedSequence(seed, spawn_key=(*_key(purpose), chunk))
    return np.random.Generator(np.random.PCG64(sequence))


def sample(law, generator: np.random.Generator, shape) -> np.ndarray:
    """``shape`` values of ``law`` drawn from ``generator``."""
    if isinstance(law, (int, float, np.number)) and not isinstance(law, bool):
        return np.full(shape, float(law))
    if hasattr(law, "rvs"):
        return np.reshape(law.rvs(size=shape, random_state=generator), shape)
    if callable(law):
        return np.reshape(law(generator, shape), shape)
    raise ConfigError(f"law {law!r} is not a number, a scipy.stats distribution or a "
                      "function (generator, shape) -> array; give one of those")


def draw(seed: int, purpose, law, first: int, count: int, width: int = 1) -> np.ndarray:
    """Rows ``first .. first+count-1`` of ``purpose``: an array ``(count, width)``."""
    if first < 0 or count < 0:
        raise ConfigError(f"jobs {first}..{first + count}: use first >= 0, count >= 0")
    out = np.empty((count, width))
    lo, hi = first // CHUNK, (first + count - 1) // CHUNK
    for chunk in range(lo, hi + 1) if count else ():
        values = sample(law, stream(seed, purpose, chunk), (CHUNK, width))
        a = max(first, chunk * CHUNK)
        b = min(first + count, (chunk + 1) * CHUNK)
        out[a - first:b - first] = values[a - chunk * CHUNK:b - chunk * CHUNK]
    return out


def step_values(laws: dict, widths: dict, seed: int, first: int,
                count: int) -> tuple:
    """Rows of ``('step', kind)`` side by side: ``(values, offsets)`` with the
    ``widths[kind]`` values of kind ``kind`` at columns ``offsets[kind]...``."""
    missing = [kind for kind in widths if kind not in laws]
    if missing:
        raise ConfigError(f"no law for step kinds {missing}; give laws for all of "
                          f"{list(widths)}")
    offsets = dict(zip(widths, np.cumsum([0] + list(widths.values()))))
    values = np.empty((count, sum(widths.values())))
    for kind, width in widths.items():
        values[:, offsets[kind]:offsets[kind] + width] = draw(
            seed, ("step", kind), laws[kind], first, count, width)
    if not np.all(np.isfinite(values) & (values >= 0)):
        bad = [kind for kind, width in widths.items()
               if not np.all(np.isfinite(v := values[:, offsets[kind]:offsets[kind]
                                                     + width]) & (v >= 0))]
        raise ConfigError(f"the laws of {bad} gave negative or non-finite durations; "
                          "use laws on [0, inf)")
    return values, offsets


def columns(template, offsets: dict) -> np.ndarray:
    """Per step of ``template``, its column in `step_values`: the steps of one kind
    take that kind's values in order."""
    seen = dict.fromkeys(offsets, 0)
    out = []
    for op in template.ops:
        out.append(offsets[op.kind] + seen[op.kind])
        seen[op.kind] += 1
    return np.array(out, np.int64)


def durations(template, laws: dict, seed: int, first: int, count: int,
              widths: dict | None = None) -> np.ndarray:
    """Per job and step its duration, ``(count, steps)``: step kind ``x`` from
    ``laws[x]``, the steps of one kind taking a job's row of ``('step', x)`` in order.

    ``widths[x]`` (default: the template's count of kind ``x``) is the row length drawn;
    give the largest count over several templates so that they share their values.
    """
    widths = {kind: max(template.width(kind), (widths or {}).get(kind, 0))
              for kind in template.kinds}
    values, offsets = step_values(laws, widths, seed, first, count)
    return np.take(values, columns(template, offsets), axis=1)


def poisson_arrivals(seed: int, rate: float, first: int, count: int,
                     previous: float = 0.0) -> np.ndarray:
    """Arrival times of jobs ``first..first+count-1`` of a Poisson process of ``rate``;
    ``previous`` is job ``first-1``'s time (0 for the first block), so blocks chain to
    the same sums as one long run."""
    if not rate > 0:
        raise ConfigError(f"arrival rate {rate}; use a rate > 0")
    gaps = draw(seed, "arrival", lambda g, shape: g.exponential(1 / rate, shape),
                first, count)[:, 0]
    return np.cumsum(np.concatenate(([previous], gaps)))[1:]


def think_times(seed: int, law, first: int, count: int) -> np.ndarray:
    """Think time before each of jobs ``first..first+count-1``."""
    return draw(seed, "think", law, first, count)[:, 0]


def coordinators(seed: int, nodes: int, first: int, count: int) -> np.ndarray:
    """A uniformly random node per job (round-robin-like load balancing)."""
    return draw(seed, "coordinator", lambda g, shape: g.integers(0, nodes, shape),
                first, count)[:, 0].astype(np.int64)


def replica_sets(seed: int, nodes: int, replicas: int, first: int, count: int,
                 ring: bool = False) -> np.ndarray:
    """Per job its ``replicas`` distinct nodes, ``(count, replicas)``: a uniformly random
    subset in random order, or (``ring``) consecutive nodes from a uniform start."""
    if not 1 <= replicas <= nodes:
        raise ConfigError(f"replicas={replicas} with nodes={nodes}; use "
                          "1 <= replicas <= nodes")
    if ring:
        start = draw(seed, "placement", lambda g, shape: g.integers(0, nodes, shape),
                     first, count)[:, :1].astype(np.int64)
        return (start + np.arange(replicas)) % nodes
    keys = draw(seed, "placement", lambda g, shape: g.random(shape), first, count, nodes)
    return np.argsort(keys, axis=1, kind="stable")[:, :replicas].astype(np.int64)
