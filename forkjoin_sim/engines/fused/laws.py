"""Distributions as the fused kernel draws them: a law descriptor and its sampler.

A `Law` is ``(code, params, data)``: an integer naming the sampler, four float
parameters and a float array (sorted measurements, or a quantile table). `law_of`
turns what the rest of the package uses as a distribution (a frozen scipy.stats
distribution, `forkjoin_sim.laws.empirical.Empirical`, `forkjoin_sim.laws.service.Deterministic`)
into one. Every draw is an inverse-transform (or exact rejection) sample of uniforms
from one `forkjoin_sim.engines.fused.rng` stream.

Exact samplers (``params = (loc, scale, shape, derived)``, scipy's parametrisation):

=============  ====================================================  =============
code           draw                                                  scipy name
=============  ====================================================  =============
EXPONENTIAL    ``loc + scale * e``, e by a 256-layer ziggurat         ``expon``
DETERMINISTIC  ``loc``                                               (Deterministic)
UNIFORM        ``loc + scale * u``                                   ``uniform``
WEIBULL        ``loc + scale * (-log u) ** (1/c)``                   ``weibull_min``
LOGNORMAL      ``loc + scale * exp(s * z)``, z by Box-Muller          ``lognorm``
PARETO         ``loc + scale * u ** (-1/b)``                         ``pareto``
GAMMA          Marsaglia & Tsang (2000) rejection, ``u**(1/a)`` boost  ``gamma``, ``erlang``
EMPIRICAL      ``sorted[floor(u * len)]`` (+ ``|. + h z|`` if smoothed) (Empirical)
TABLE          tabulated inverse distribution function (below)         any other
=============  ====================================================  =============

TABLE is approximate: it interpolates linearly between ``ppf(i / M)`` for ``M =
2**16`` equal probability cells, and in the upper tail between ``isf(2**-j)`` for
``j = 16 .. 54``. Every draw falls between the true quantiles of its cell, so the
drawn distribution function is within ``1 / M`` (1.5e-5) of the true one everywhere
(Kolmogorov distance); moments differ by the interpolation inside cells.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numba
import numpy as np

from forkjoin_sim.engines.fused.rng import load, next_u64, step, store, uniform, uniform_step
from forkjoin_sim.errors import ConfigError

EXPONENTIAL, DETERMINISTIC, UNIFORM, WEIBULL, LOGNORMAL, PARETO, GAMMA, EMPIRICAL, \
    TABLE = range(9)
#: log2 of the number of equal-probability cells of a TABLE law.
TABLE_BITS = 16
#: Bound on the Kolmogorov distance between a TABLE law and the distribution it
#: tabulates.
TABLE_ERROR = 2.0 ** -TABLE_BITS
_TAIL_END = 54  # uniforms are >= 2**-54 away from 1


@dataclass(frozen=True, eq=False)
class Law:
    """A distribution the fused kernel can draw: sampler ``code``, ``params`` (loc,
    scale, shape, a value derived from the shape) and ``data`` (sorted measurements
    or a quantile table; empty for parametric laws)."""

    code: int
    params: np.ndarray
    data: np.ndarray = field(default_factory=lambda: np.zeros(0))
    name: str = ""

    def __post_init__(self):
        object.__setattr__(self, "params", np.asarray(self.params, dtype=float))
        object.__setattr__(self, "data", np.asarray(self.data, dtype=float))


def exponential(mean: float) -> Law:
    """Exponential law of the given mean."""
    return Law(EXPONENTIAL, [0.0, float(mean), 0.0, 0.0], name="expon")


def deterministic(value: float) -> Law:
    """Point mass at ``value`` (draws no random number)."""
    return Law(DETERMINISTIC, [float(value), 0.0, 0.0, 0.0], name="deterministic")


def _scipy_law(dist) -> Law | None:
    name = dist.dist.name
    shapes, loc, scale = dist.dist._parse_args(*dist.args, **dist.kwds)
    if name == "expon":
        return Law(EXPONENTIAL, [loc, scale, 0.0, 0.0], name=name)
    if name == "uniform":
        return Law(UNIFORM, [loc, scale, 0.0, 0.0], name=name)
    if name == "weibull_min":
        return Law(WEIBULL, [loc, scale, shapes[0], 1.0 / shapes[0]], name=name)
    if name == "lognorm":
        return Law(LOGNORMAL, [loc, scale, shapes[0], 0.0], name=name)
    if name == "pareto":
        return Law(PARETO, [loc, scale, shapes[0], -1.0 / shapes[0]], name=name)
    if name in ("gamma", "erlang"):
        return Law(GAMMA, [loc, scale, shapes[0], 0.0], name=name)
    return None


def tabulated(dist, bits: int = TABLE_BITS) -> Law:
    """The TABLE law of anything with ``ppf`` and ``isf`` (see the module docstring
    for its error)."""
    cells = 2 ** bits
    body = np.asarray(dist.ppf(np.arange(cells) / cells), dtype=float)
    tail = np.asarray(dist.isf(2.0 ** -np.arange(bits, _TAIL_END + 2)), dtype=float)
    table = np.concatenate([body, tail])
    if not np.all(np.isfinite(table)) or body[0] < 0:
        raise ConfigError(f"cannot tabulate {_describe(dist)}: its quantiles must be "
                          "finite and >= 0 up to 1 - 2**-55; use a law with a finite "
                          "non-negative quantile function")
    table = np.maximum.accumulate(table)  # isf and ppf may disagree in the last bit
    return Law(TABLE, [0.0, 0.0, float(cells), float(bits)], table,
               name=f"table({_describe(dist)})")


def _describe(dist) -> str:
    inner = getattr(dist, "dist", None)
    return getattr(inner, "name", type(dist).__name__)


def law_of(dist, *, what: str = "service") -> Law:
    """The kernel's `Law` of ``dist``: a `Law` (returned as is), a
    `forkjoin_sim.laws.service.Deterministic`, a `forkjoin_sim.laws.empirical.Empirical`
    (resampled; smoothed ``|x + h Z|`` if it was built with smoothing), or a frozen
    scipy.stats distribution, drawn exactly where the table of the module docstring
    has a sampler and through a tabulated inverse distribution function otherwise
    (with a warning: that one is approximate, Kolmogorov distance <= 2**-16)."""
    if isinstance(dist, Law):
        return dist
    from forkjoin_sim.laws.empirical import Empirical
    from forkjoin_sim.laws.exponential import Exponential
    from forkjoin_sim.laws.service import Deterministic

    if isinstance(dist, Deterministic):
        return deterministic(dist.value)
    if isinstance(dist, Empirical):
        return Law(EMPIRICAL, [0.0, 0.0, float(dist.bandwidth), 0.0],
                   np.array(dist.samples, dtype=float), name="empirical")
    # an Exponential is tested first: asking it for .dist would import scipy.stats
    exponential_law = isinstance(dist, Exponential)
    scipy_law = (not exponential_law and hasattr(dist, "dist")
                 and hasattr(dist.dist, "_parse_args"))
    if exponential_law or scipy_law:
        if dist.support()[0] < 0:
            raise ConfigError(f"{what} law {_describe(dist)} can be negative (support "
                              f"starts at {dist.support()[0]}); times must be >= 0: "
                              "shift it with loc= or use a law on [0, inf)")
    if exponential_law:
        return Law(EXPONENTIAL, [dist.loc, dist.scale, 0.0, 0.0], name="expon")
    if scipy_law:
        law = _scipy_law(dist)
        if law is not None:
            return law
    if hasattr(dist, "ppf") and hasattr(dist, "isf"):
        warnings.warn(f"{what} law {_describe(dist)} has no exact sampler in the fused "
                      f"kernel; it is drawn from a quantile table (distribution "
                      f"function within {TABLE_ERROR:.1e})", stacklevel=2)
        return tabulated(dist)
    raise ConfigError(f"{what} law {dist!r} is not one the fused kernel can draw; use "
                      "a frozen scipy.stats distribution, Empirical or Deterministic")


def law_mean(law: Law) -> float:
    """The mean of the distribution ``law`` draws: exact, except for TABLE (the
    mean of the cells' midpoints, weighted by their probabilities)."""
    loc, scale, shape, _ = law.params
    if law.code == EXPONENTIAL:
        return loc + scale
    if law.code == DETERMINISTIC:
        return loc
    if law.code == UNIFORM:
        return loc + scale / 2
    if law.code == WEIBULL:
        return loc + scale * math.gamma(1 + 1 / shape)
    if law.code == LOGNORMAL:
        return loc + scale * math.exp(shape * shape / 2)
    if law.code == PARETO:
        return loc + scale * shape / (shape - 1) if shape > 1 else math.inf
    if law.code == GAMMA:
        return loc + scale * shape
    if law.code == EMPIRICAL:
        from scipy import stats

        h = shape
        if h == 0:
            return float(law.data.mean())
        # E|x + hZ| = x (1 - 2 Phi(-x/h)) + 2 h phi(x/h)
        x = law.data
        return float(np.mean(x * (1 - 2 * stats.norm.cdf(-x / h))
                             + 2 * h * stats.norm.pdf(x / h)))
    cells = int(law.params[2])
    body = law.data[:cells]
    tail = law.data[cells:]
    body_mean = np.sum((body[:-1] + body[1:]) / 2) / cells
    masses = 2.0 ** -np.arange(TABLE_BITS, _TAIL_END + 1) / 2
    return float(body_mean + np.sum(masses * (tail[:-1] + tail[1:]) / 2))


def scaled(law: Law, factor: float) -> Law:
    """``law`` with every value multiplied by ``factor`` > 0."""
    loc, scale, shape, derived = law.params
    if law.code == EMPIRICAL:
        params = [0.0, 0.0, shape * factor, 0.0]
    elif law.code == TABLE:
        params = law.params
    else:
        params = [loc * factor, scale * factor, shape, derived]
    data = law.data * factor if law.code in (EMPIRICAL, TABLE) else law.data
    return Law(law.code, params, data, name=law.name)


def pack(laws) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The kernel's arrays for a list of laws: codes (L,), params (L, 4), data
    offsets (L,), data lengths (L,) and all data concatenated."""
    codes = np.array([law.code for law in laws], dtype=np.int64)
    params = np.array([law.params for law in laws], dtype=float).reshape(len(laws), 4)
    lengths = np.array([law.data.size for law in laws], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    data = (np.concatenate([law.data for law in laws]) if lengths.sum()
            else np.zeros(1))
    return codes, params, offsets, lengths, data


def _ziggurat_tables(layers: int = 256, bits: int = 53):
    """Marsaglia & Tsang's (2000) ziggurat for the standard exponential with
    ``layers`` layers, for ``bits``-bit integers: (thresholds, widths, densities)."""
    r, area = 7.69711747013104972, 3.949659822581572e-3
    scale = 2.0 ** bits
    k = np.zeros(layers, dtype=np.uint64)
    w = np.zeros(layers)
    f = np.zeros(layers)
    d = r
    q = area / math.exp(-d)
    k[0] = int(d / q * scale)
    w[0] = q / scale
    w[-1] = d / scale
    f[0] = 1.0
    f[-1] = math.exp(-d)
    top = d
    for i in range(layers - 2, 0, -1):
        d = -math.log(area / d + math.exp(-d))
        k[i + 1] = int(d / top * scale)
        top = d
        f[i] = math.exp(-d)
        w[i] = d / scale
    return k, w, f, r


_ZIG_K, _ZIG_W, _ZIG_F, _ZIG_R = _ziggurat_tables()


@numba.njit(cache=True)
def _exponential_tail(states, stream, layer, x):
    """The ziggurat's slow path: the base layer's tail, or the wedge test."""
    if layer == 0:
        return _ZIG_R - math.log(uniform(states, stream))
    if (_ZIG_F[layer - 1] - _ZIG_F[layer]) * uniform(states, stream) + _ZIG_F[layer] \
            < math.exp(-x):
        return x
    return -1.0


@numba.njit(cache=True, inline="always")
def standard_exponential(states, stream):
    """A standard exponential variate by the ziggurat (exact; about 1% of draws take
    the slow path, which may use further uniforms)."""
    while True:
        bits = next_u64(states, stream) >> np.uint64(3)
        layer = np.int64(bits & np.uint64(0xFF))
        bits >>= np.uint64(8)
        x = np.float64(bits) * _ZIG_W[layer]
        if bits < _ZIG_K[layer]:
            return x
        x = _exponential_tail(states, stream, layer, x)
        if x >= 0.0:
            return x


@numba.njit(cache=True, inline="always")
def _normal(u, v):
    return math.sqrt(-2.0 * math.log(u)) * math.cos(2.0 * math.pi * v)


@numba.njit(cache=True)
def _gamma(shape, states, stream):
    """A standard gamma(shape) variate (Marsaglia & Tsang 2000, "A simple method for
    generating gamma variables"); shape < 1 through ``gamma(shape + 1) * u**(1/shape)``."""
    boost = 1.0
    if shape < 1.0:
        boost = uniform(states, stream) ** (1.0 / shape)
        shape += 1.0
    d = shape - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        z = _normal(uniform(states, stream), uniform(states, stream))
        w = 1.0 + c * z
        if w > 0.0:
            w = w * w * w
            bound = 0.5 * z * z + d - d * w + d * math.log(w)
            if math.log(uniform(states, stream)) < bound:
                return d * w * boost


@numba.njit(cache=True)
def _draw_other(law, codes, params, offsets, lengths, data, states, stream):
    """`draw` for every law: called out of line for the laws that `draw` does not
    inline."""
    code = codes[law]
    if code == DETERMINISTIC:
        return params[law, 0]
    loc = params[law, 0]
    scale = params[law, 1]
    if code == EXPONENTIAL:
        return loc + scale * standard_exponential(states, stream)
    u = uniform(states, stream)
    if code == EMPIRICAL:
        length = lengths[law]
        i = int(u * length)
        if i >= length:
            i = length - 1
        x = data[offsets[law] + i]
        h = params[law, 2]
        if h > 0.0:
            x = abs(x + h * _normal(uniform(states, stream), uniform(states, stream)))
        return x
    if code == UNIFORM:
        return loc + scale * u
    if code == WEIBULL:
        return loc + scale * (-math.log(u)) ** params[law, 3]
    if code == LOGNORMAL:
        return loc + scale * math.exp(params[law, 2] * _normal(u, uniform(states, stream)))
    if code == PARETO:
        return loc + scale * u ** params[law, 3]
    if code == GAMMA:
        return loc + scale * _gamma(params[law, 2], states, stream)
    # TABLE
    cells = params[law, 2]
    offset = offsets[law]
    if u < 1.0 - 1.0 / cells:
        x = u * cells
        i = int(x)
        lo = data[offset + i]
        return lo + (x - i) * (data[offset + i + 1] - lo)
    depth = -math.log2(1.0 - u) - params[law, 3]
    j = int(depth)
    if j >= lengths[law] - int(cells) - 1:
        return data[offset + lengths[law] - 1]
    base = offset + int(cells) + j
    lo = data[base]
    return lo + (depth - j) * (data[base + 1] - lo)


@numba.njit(cache=True, inline="always")
def draw(law, codes, params, offsets, lengths, data, states, stream):
    """One draw of law number ``law`` of the packed arrays (see `pack`) from stream
    ``stream``: one 64-bit output, except two for LOGNORMAL, three for smoothed
    EMPIRICAL and a varying number for GAMMA (and for EXPONENTIAL's slow path)."""
    # The common laws inline, the others in a call: a small inlined body keeps the
    # simulation loop's registers and branches for itself.
    code = codes[law]
    if code == EXPONENTIAL:
        return params[law, 0] + params[law, 1] * standard_exponential(states, stream)
    if code == DETERMINISTIC:
        return params[law, 0]
    if code == EMPIRICAL and params[law, 2] == 0.0:
        length = lengths[law]
        i = int(uniform(states, stream) * length)
        return data[offsets[law] + (i if i < length else length - 1)]
    return _draw_other(law, codes, params, offsets, lengths, data, states, stream)



@numba.njit(cache=True, inline="always")
def exponential_step(state, states, stream):
    """``(x, next state)``: `standard_exponential` on a state tuple of stream
    ``stream`` (the slow path goes through row ``stream`` of ``states``)."""
    while True:
        bits, state = step(state)
        bits >>= np.uint64(3)
        layer = np.int64(bits & np.uint64(0xFF))
        bits >>= np.uint64(8)
        x = np.float64(bits) * _ZIG_W[layer]
        if bits < _ZIG_K[layer]:
            return x, state
        store(states, stream, state)
        x = _exponential_tail(states, stream, layer, x)
        state = load(states, stream)
        if x >= 0.0:
            return x, state


@numba.njit(cache=True, inline="always")
def fill_exponential(states, stream, loc, scale, out, count):
    """``out[:count]``: ``count`` draws of ``loc + scale * e``, e standard exponential,
    from stream ``stream``: the numbers `draw` gives one at a time. The ziggurat's
    fast path runs in a loop with no call in it (the slow path, about 1% of draws,
    leaves it), so that the loop's values stay in registers."""
    state = load(states, stream)
    i = 0
    while i < count:
        layer = 0
        x = 0.0
        while i < count:
            bits, state = step(state)
            bits >>= np.uint64(3)
            layer = np.int64(bits & np.uint64(0xFF))
            bits >>= np.uint64(8)
            x = np.float64(bits) * _ZIG_W[layer]
            if bits >= _ZIG_K[layer]:
                break
            out[i] = loc + scale * x
            i += 1
        if i < count:
            store(states, stream, state)
            x = _exponential_tail(states, stream, layer, x)
            if x < 0.0:  # the wedge rejected it: draw afresh, as the ziggurat does
                x = standard_exponential(states, stream)
            out[i] = loc + scale * x
            i += 1
            state = load(states, stream)
    store(states, stream, state)


@numba.njit(cache=True, inline="always")
def draw_step(law, codes, params, offsets, lengths, data, state, states, stream):
    """``(x, next state)``: `draw` on a state tuple of stream ``stream``; the laws
    that `draw` calls out of line go through row ``stream`` of ``states``."""
    code = codes[law]
    if code == EXPONENTIAL:
        x, state = exponential_step(state, states, stream)
        return params[law, 0] + params[law, 1] * x, state
    if code == DETERMINISTIC:
        return params[law, 0], state
    if code == EMPIRICAL and params[law, 2] == 0.0:
        length = lengths[law]
        u, state = uniform_step(state)
        i = int(u * length)
        return data[offsets[law] + (i if i < length else length - 1)], state
    store(states, stream, state)
    x = _draw_other(law, codes, params, offsets, lengths, data, states, stream)
    return x, load(states, stream)

__all__ = ["DETERMINISTIC", "EMPIRICAL", "EXPONENTIAL", "GAMMA", "LOGNORMAL", "Law",
           "PARETO", "TABLE", "TABLE_ERROR", "UNIFORM", "WEIBULL", "deterministic",
           "draw", "draw_step", "exponential", "exponential_step", "fill_exponential",
           "law_mean", "law_of", "pack", "scaled", "standard_exponential", "tabulated"]
