"""Service-time models: spec strings such as "erlang:3" turned into distributions.

A service model is any frozen scipy.stats continuous distribution, an
``Exponential`` (scipy.stats.expon's numbers without importing scipy.stats), an
``Empirical`` (measured latencies) or a ``Deterministic`` point mass; all of them
answer ``rvs(size, random_state)``, ``mean()``, ``moment(m)``, ``cdf`` and ``ppf``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from forkjoin_sim.laws.empirical import Empirical
from forkjoin_sim.errors import ConfigError
from forkjoin_sim.laws.describe import describe_service, rescale  # noqa: F401 (public here)
from forkjoin_sim.laws.deterministic import Deterministic, _check_mean
from forkjoin_sim.laws.exponential import Exponential
from forkjoin_sim.checks import is_plain_whole, plain_float

#: The spec forms ``parse_service`` accepts, for help texts and error messages.
SPEC_FORMS = ("exp", "exp:MEAN", "erlang:K", "lognormal:SIGMA", "weibull:SHAPE",
              "gamma:SHAPE", "pareto:ALPHA", "deterministic",
              "empirical:PATH[,column=NAME][,operation=READ][,unit=us,to=ms]",
              "NAME:SHAPES or scipy:NAME:SHAPES (any scipy.stats continuous "
              "distribution, e.g. lognorm:0.5)", "exp:rate=RATE",
              "any of these but exp, deterministic and empirical with ,loc=L,scale=S "
              "(fixed, not rescaled; e.g. pareto:10,scale=0.235)",
              "mix:W1*SPEC1;W2*SPEC2;... (weights summing to 1, e.g. "
              "mix:0.9122*pareto:10,scale=0.235;0.0878*exp:rate=1.66)",
              "netem:MEAN:JITTER[:normal] (a delay as tc netem injects it: uniform "
              "on MEAN +- JITTER, or normal with sd JITTER truncated at 0)")





def parse_service(spec: str, mean: float = 1.0, *, delay: bool = False) -> Any:
    """The service distribution named by ``spec``, with mean ``mean``.

    ``delay``: the law of a delay that never queues (a message's), which needs a
    finite mean only: "pareto:ALPHA" then takes ALPHA > 1 (PBS's LNKD-DISK write
    delay has ALPHA 1.51), and a scipy law an infinite variance. A service time
    needs a finite variance too, or the waits behind it have an infinite mean.

    Forms (see ``SPEC_FORMS``): "exp" (or "exp:MEAN", whose explicit MEAN wins over
    ``mean``), "erlang:K" (whole K >= 1), "lognormal:SIGMA", "weibull:SHAPE",
    "gamma:SHAPE", "pareto:ALPHA" (Pareto type I; ALPHA > 2 so the variance is
    finite), "deterministic", and any scipy.stats continuous distribution by name
    with its shape parameters, "NAME:a,b" or "scipy:NAME:a,b" (e.g. "lognorm:0.5").
    All of these are rescaled to ``mean``, unless they fix their own scale:
    "exp:rate=RATE" (exponential of rate RATE, mean 1/RATE) and any parametric
    form followed by scipy's ``loc`` and ``scale`` keywords, ",loc=L,scale=S"
    (either may be left out; loc defaults to 0, scale to 1), are taken exactly
    as written, e.g. "pareto:10,scale=0.235" is the Pareto law with x_m = 0.235
    and alpha = 10, "scipy:lognorm:0.5,scale=2" the log-normal with median 2.

    "mix:W1*SPEC1;W2*SPEC2;..." is the ``Mixture`` taking SPECj with probability
    Wj (weights >= 0 summing to 1 within 1e-9). Each SPECj is read exactly as
    ``parse_service(SPECj, mean)`` would read it alone: a scale-free component
    ("pareto:3", "exp") gets the requested ``mean``, one that fixes its own scale
    ("exp:5", "exp:rate=1.66", "pareto:10,scale=0.235", "empirical:PATH") keeps
    it; the mixture itself is not rescaled. So a mixture of scale-free components
    has mean ``mean``, and a published fit written with explicit parameters keeps
    its published values. Mixtures do not nest in a spec (build nested ones with
    ``Mixture`` in Python). On a shell command line, quote the spec (";" and "*").

    "empirical:PATH" reads a latency file (``Empirical.from_file``) and is *not*
    rescaled: measured latencies keep their own mean, whatever ``mean`` says.

    "netem:MEAN:JITTER" (uniform on [MEAN - JITTER, MEAN + JITTER]) and
    "netem:MEAN:JITTER:normal" are ``forkjoin_sim.laws.netem.netem``'s delay laws,
    in the time unit of MEAN, not rescaled.
    """
    _check_mean(mean, "mean")
    if not isinstance(spec, str):
        raise ConfigError(f"service spec must be a string, got {spec!r}; use one of "
                          f"{', '.join(SPEC_FORMS)}")
    name, colon, argument = spec.strip().partition(":")
    name = name.strip().lower()
    if not name:
        raise ConfigError(f"service {spec!r} names no law; write one, e.g. exp, "
                          "gamma:2 or lognormal:0.5 (every form in the command's --help)")
    if colon and not argument.strip() and name not in ("empirical", "mix"):
        raise ConfigError(f"service {spec!r} ends with ':' but gives no parameter; write "
                          f"{name} alone or {name}:VALUE")
    if name == "empirical":
        if not argument.strip():
            raise ConfigError("service 'empirical:' needs a file; write empirical:PATH")
        return _empirical(argument.strip(), spec)
    argument = argument.strip()
    if name == "mix":
        return _mixture(argument, spec, mean, delay)
    if name == "netem":
        return _netem(argument, spec)
    if name == "exp":
        if argument.replace(" ", "").lower().startswith("rate="):
            return Exponential(1.0 / _positive(argument.split("=", 1)[1].strip(),
                                               spec, "RATE"))
        if argument:
            return Exponential(_positive(argument, spec, "MEAN"))
        return Exponential(mean)
    if name == "deterministic":
        if argument:
            raise ConfigError(f"service {spec!r}: deterministic takes no parameter; "
                              "its value is the requested mean")
        return Deterministic(mean)
    explicit_scipy = name == "scipy"
    if explicit_scipy:
        name, _, argument = argument.partition(":")
        name = name.strip().lower()
        argument = argument.strip()
    argument, placement = _placement(argument, spec)
    if name == "pareto" and not explicit_scipy:
        dist = _pareto(argument, spec, delay)
    elif name in _SHORTHANDS and not explicit_scipy:
        dist = _SHORTHANDS[name](argument, spec)
    else:
        dist = _scipy_distribution(name, argument, spec, delay)
    law = _placed(dist, placement, spec) if placement else _finite_mean(dist, spec)
    _check_spread(law, spec)
    return law if placement else rescale(law, mean)


def as_service(value: Any, what: str = "service") -> Any:
    """A Python-API service law given as a distribution (frozen scipy.stats,
    `Empirical`: anything with ``rvs`` and ``mean``), a spec as ``--service`` takes it
    (`parse_service`: "lognormal:1" with mean 1) or None (exponential, mean 1)."""
    from scipy import stats

    from forkjoin_sim.system import law_mean

    if value is None:
        return stats.expon()
    if isinstance(value, str):
        try:
            return parse_service(value)
        except ConfigError as exc:
            raise ConfigError(f"{what}: {exc}") from None
    law_mean(value, what)  # refuses what is no law, with the fix
    return value


def spec_files(spec) -> list[str]:
    """The files a service spec reads: the PATH of "empirical:PATH", also inside a
    mixture's components (none for any other form, or for what is not a string)."""
    if not isinstance(spec, str):
        return []
    name, _, argument = spec.strip().partition(":")
    name, argument = name.strip().lower(), argument.strip()
    if name == "empirical":
        # PATH[,column=...]: the file is what comes before the options (`_empirical`)
        path = argument.split(",")[0].strip()
        return [path] if path else []
    if name == "mix":
        return [path for term in argument.split(";")
                for path in spec_files(term.partition("*")[2])]
    return []


def fixes_own_scale(spec: str) -> bool:
    """Whether ``parse_service(spec, mean)`` is the same law whatever ``mean`` is.

    True for "empirical:PATH", "exp:MEAN", "exp:rate=R", any form with ``loc=`` or
    ``scale=``, and mixtures all of whose components are such forms; a command
    option giving the mean would then do nothing.
    """
    name, _, argument = str(spec).strip().partition(":")
    name, argument = name.strip().lower(), argument.strip()
    if name in ("empirical", "netem"):
        return True
    if name == "exp":
        return bool(argument)
    if name == "mix":
        components = [term.partition("*")[2].strip() for term in argument.split(";")]
        return all(fixes_own_scale(c) for c in components)
    if name == "scipy":
        argument = argument.partition(":")[2]
    return any(part.partition("=")[0].strip().lower() in ("loc", "scale")
               for part in argument.split(",") if "=" in part)


def check_mean_applies(spec: str, spec_flag: str, mean_flag: str) -> None:
    """Refuse an option ``mean_flag`` that sets the mean of ``spec`` when the spec
    fixes its own scale (the option would do nothing)."""
    if fixes_own_scale(spec):
        raise ConfigError(f"{mean_flag} does nothing here: {spec_flag} {spec!r} fixes "
                          "its own scale (a latency file, exp:MEAN, exp:rate=R, loc= or "
                          f"scale=); leave out {mean_flag}, or give a shape without "
                          "a scale, e.g. exp or lognormal:1")


#: Largest coefficient of variation (std / mean) a parametric law may have: beyond it
#: the mean rests on draws rarer than about 1 in 10^8, which no run samples.
MAX_VARIATION = 1e4


def _finite_mean(dist: Any, spec: str) -> Any:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = float(dist.mean())
    if not (math.isfinite(mean) and mean > 0):
        raise ConfigError(f"service {spec!r}: this shape gives a mean of {mean:g}, not a "
                          "finite positive number; choose a shape with a finite mean")
    return dist


def _check_spread(law: Any, spec: str) -> None:
    """Refuse shapes whose draws cannot represent their mean (e.g. gamma:1e-300,
    almost every draw of which is 0)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean, variance = float(law.mean()), float(law.var())
    if math.isnan(variance):
        # the second moment overflowed (weibull:0.01's is Gamma(201), about 1e375): a
        # spread far past MAX_VARIATION, not a heavy tail with an infinite variance
        raise ConfigError(f"service {spec!r}: its variance overflows a float, a "
                          f"coefficient of variation far above {MAX_VARIATION:g}; its "
                          "mean rests on draws too rare to simulate: choose a less "
                          "extreme shape")
    if math.isfinite(variance) and math.sqrt(variance) > MAX_VARIATION * mean:
        raise ConfigError(f"service {spec!r}: coefficient of variation "
                          f"{math.sqrt(variance) / mean:.3g} is above {MAX_VARIATION:g}; "
                          "its mean rests on draws too rare to simulate: choose a less "
                          "extreme shape")


#: Options of ``empirical:PATH,KEY=VALUE,...`` (passed to ``Empirical.from_file``).
EMPIRICAL_OPTIONS = ("column", "operation", "unit", "to", "format", "smoothing")


def _empirical(argument: str, spec: str) -> Any:
    """``PATH[,column=NAME|INDEX][,operation=OP][,unit=U,to=U][,format=F]
    [,smoothing=kde]``: a latency file and how to read it."""
    path, *options = argument.split(",")
    kwargs: dict[str, Any] = {}
    for option in options:
        key, equals, value = option.partition("=")
        key, value = key.strip(), value.strip()
        if not equals or key not in EMPIRICAL_OPTIONS or not value:
            raise ConfigError(f"service {spec!r}: {option!r} is not an option of "
                              f"empirical:PATH; use KEY=VALUE with KEY one of "
                              f"{', '.join(EMPIRICAL_OPTIONS)}")
        kwargs[key] = int(value) if key == "column" and is_plain_whole(value) else value
    law = Empirical.from_file(path.strip(), **kwargs)
    if law.samples.size == 1 or np.ptp(law.samples) == 0:
        held = ("one sample" if law.samples.size == 1
                else f"{law.samples.size:,} samples, all equal")
        raise ConfigError(f"{path.strip()!r} holds {held} ({law.samples[0]:g}): that "
                          "is a constant; write deterministic (its value is the mean, "
                          "--mu 1/VALUE) for a fixed service time, or give more measured "
                          "samples")
    return law


# --- helpers ----------------------------------------------------------------------

def _netem(argument: str, spec: str) -> Any:
    """``MEAN[:JITTER[:uniform|normal]]`` as ``netem(MEAN, JITTER, distribution)``."""
    from forkjoin_sim.laws.netem import DISTRIBUTIONS, netem

    parts = [part.strip() for part in argument.split(":")]
    if not 1 <= len(parts) <= 3:
        raise ConfigError(f"service {spec!r}: write netem:MEAN:JITTER or "
                          "netem:MEAN:JITTER:normal, e.g. netem:10:2")
    mean = _number(parts[0], spec, "MEAN")
    jitter = _number(parts[1], spec, "JITTER") if len(parts) > 1 else 0.0
    distribution = parts[2].lower() if len(parts) == 3 else "uniform"
    if distribution not in DISTRIBUTIONS:
        raise ConfigError(f"service {spec!r}: netem distribution {parts[2]!r} is not "
                          f"supported; use {' or '.join(DISTRIBUTIONS)}")
    if distribution == "uniform" and 0 <= mean < jitter:
        raise ConfigError(f"service {spec!r}: jitter {jitter:g} exceeds mean {mean:g}, "
                          "so the uniform law would give negative delays; use JITTER "
                          f"<= MEAN, or netem:{mean:g}:{jitter:g}:normal (normal law "
                          "truncated at 0)")
    try:
        return netem(mean, jitter, distribution)
    except ConfigError as exc:
        raise ConfigError(f"service {spec!r}: {exc}") from None


def _number(text: str, spec: str, what: str) -> float:
    try:
        return plain_float(text)
    except ValueError:
        raise ConfigError(f"service {spec!r}: {what} {text!r} is not a number") from None


def _positive(text: str, spec: str, what: str) -> float:
    if not text:
        raise ConfigError(f"service {spec!r} needs {what}; write {spec.split(':')[0]}:{what}")
    value = _number(text, spec, what)
    if not (math.isfinite(value) and value > 0):
        raise ConfigError(f"service {spec!r}: {what} must be a positive finite number, "
                          f"got {value:g}")
    return value


def _placement(argument: str, spec: str) -> tuple[str, dict[str, float]]:
    """``argument`` without its trailing ``loc=``/``scale=`` keywords, and those."""
    shapes, placement = [], {}
    for part in (p.strip() for p in argument.split(",")) if argument else ():
        key, equals, value = part.partition("=")
        if not equals:
            if placement:
                raise ConfigError(f"service {spec!r}: shape parameters come before "
                                  "loc= and scale=; write NAME:SHAPES,loc=L,scale=S")
            shapes.append(part)
            continue
        key = key.strip().lower()
        if key not in ("loc", "scale") or key in placement:
            raise ConfigError(f"service {spec!r}: {key}= is not a keyword here (or is "
                              "given twice); use loc= and scale= once each, e.g. "
                              "pareto:10,scale=0.235")
        placement[key] = _number(value.strip(), spec, key)
    return ",".join(shapes), placement


def _placed(dist: Any, placement: dict[str, float], spec: str) -> Any:
    """The frozen ``dist`` rebuilt with the given loc and scale (not rescaled)."""
    scale = placement.get("scale", 1.0)
    loc = placement.get("loc", 0.0)
    if not (math.isfinite(scale) and scale > 0):
        raise ConfigError(f"service {spec!r}: scale must be a positive finite number, "
                          f"got {scale:g}")
    family = dist.dist
    placed = family(*dist.args[:family.numargs], loc=loc, scale=scale)
    lowest = float(placed.support()[0])
    if not (math.isfinite(loc) and lowest >= 0):
        raise ConfigError(f"service {spec!r}: with loc={loc:g} the law takes values "
                          f"down to {lowest:g}, but times must be >= 0; use a loc that "
                          "keeps the support in [0, inf)")
    return placed


def _mixture(argument: str, spec: str, mean: float, delay: bool = False) -> Any:
    from forkjoin_sim.laws.mixture import Mixture

    if not argument:
        raise ConfigError(f"service {spec!r}: a mixture needs components; write "
                          "mix:W1*SPEC1;W2*SPEC2, e.g. mix:0.9*exp;0.1*exp:20")
    weights, components = [], []
    for term in (t.strip() for t in argument.split(";")):
        weight, star, component = term.partition("*")
        if not star or not component.strip():
            raise ConfigError(f"service {spec!r}: mixture term {term!r} is not "
                              "WEIGHT*SPEC; write e.g. 0.9*pareto:3")
        if component.strip().lower().startswith("mix:"):
            raise ConfigError(f"service {spec!r}: mixtures do not nest in a spec; "
                              "multiply the weights out into one mix:..., or build "
                              "nested ones with forkjoin_sim.laws.mixture.Mixture")
        weights.append(_number(weight.strip(), spec, "mixture weight"))
        components.append(parse_service(component.strip(), mean, delay=delay))
    try:
        return Mixture(components, weights)
    except ConfigError as exc:
        raise ConfigError(f"service {spec!r}: {exc}") from None


def _erlang(text: str, spec: str) -> Any:
    phases = _positive(text, spec, "K")
    if not phases.is_integer():
        raise ConfigError(f"service {spec!r}: K is the number of exponential phases, a "
                          f"whole number >= 1, got {phases:g}; for a real shape use "
                          "gamma:SHAPE")
    if phases > MAX_ERLANG_PHASES:
        raise ConfigError(f"service {spec!r}: K={phases:g} phases is more than "
                          f"{MAX_ERLANG_PHASES:,}; such a law is a point mass to 3 digits: "
                          "use deterministic")
    from scipy import stats

    return stats.erlang(int(phases))


#: Most phases an ``erlang:K`` spec may have (its coefficient of variation is then
#: 1/sqrt(K) = 0.001).
MAX_ERLANG_PHASES = 1_000_000


def _pareto(text: str, spec: str, delay: bool = False) -> Any:
    alpha = _positive(text, spec, "ALPHA")
    if delay and alpha <= 1:
        raise ConfigError(f"delay {spec!r}: Pareto ALPHA={alpha:g} gives an infinite "
                          "mean; use ALPHA > 1")
    if not delay and alpha <= 1:
        raise ConfigError(f"service {spec!r}: Pareto ALPHA={alpha:g} gives an infinite "
                          "mean; use ALPHA > 2 (a finite variance; a message delay, "
                          "which never queues, takes ALPHA > 1)")
    if not delay and alpha <= 2:
        raise ConfigError(f"service {spec!r}: Pareto ALPHA={alpha:g} gives an infinite "
                          "variance (and waiting times of infinite mean); use ALPHA > 2 "
                          "(a message delay, which never queues, takes ALPHA > 1)")
    from scipy import stats

    return stats.pareto(alpha)


_SHORTHANDS = {
    "erlang": _erlang,
    "lognormal": lambda text, spec: _scipy_stats().lognorm(_positive(text, spec, "SIGMA")),
    "weibull": lambda text, spec: _scipy_stats().weibull_min(_positive(text, spec,
                                                                       "SHAPE")),
    "gamma": lambda text, spec: _scipy_stats().gamma(_positive(text, spec, "SHAPE")),
    "pareto": _pareto,
}


def _scipy_stats() -> Any:
    """scipy.stats, imported on first use (it takes most of a second)."""
    from scipy import stats

    return stats


def _scipy_distribution(name: str, argument: str, spec: str,
                        delay: bool = False) -> Any:
    stats = _scipy_stats()
    family = getattr(stats, name, None) if name.isidentifier() else None
    if isinstance(family, stats.rv_discrete):
        raise ConfigError(f"service {spec!r}: scipy.stats.{name} is discrete; service "
                          "times need a continuous distribution (e.g. gamma:SHAPE)")
    if not isinstance(family, stats.rv_continuous):
        raise ConfigError(f"service {spec!r} is unknown; use one of "
                          f"{', '.join(SPEC_FORMS)}")
    shapes = [_number(part.strip(), spec, "shape parameter")
              for part in argument.split(",")] if argument else []
    if len(shapes) != family.numargs:
        if not family.shapes and float(family.a) < 0:
            # its support is the reason, whatever was written after it: 'write norm'
            # would only lead to the next refusal (a fuzz)
            raise ConfigError(f"service {spec!r}: scipy.stats.{name} takes values down "
                              f"to {float(family.a):g}, but service times must be >= 0; "
                              "choose a distribution on [0, inf)")
        wanted = family.shapes or "no shape parameters"
        # a law that by default reaches below 0 (here one with shapes: one without
        # was refused above) is refused next unless its shapes move it (truncnorm's
        # do, t's do not): say so now (a review)
        negative = (f", with shapes that keep its values >= 0 (service times are; by "
                    f"default it takes values down to {float(family.a):g})"
                    if float(family.a) < 0 else "")
        raise ConfigError(f"service {spec!r}: scipy.stats.{name} takes {family.numargs} "
                          f"shape parameter(s) ({wanted}), got {len(shapes)}; write "
                          f"{name}" + (f":{family.shapes.replace(' ', '')}"
                                       if family.shapes else "") + negative)
    dist = family(*shapes)
    lowest = float(dist.support()[0])
    if math.isnan(lowest):
        raise ConfigError(f"service {spec!r}: {shapes} are not valid shape parameters "
                          f"({family.shapes}) of scipy.stats.{name}; see its documentation "
                          "for their valid range")
    if lowest < 0:
        raise ConfigError(f"service {spec!r}: scipy.stats.{name} takes values down to "
                          f"{lowest:g}, but service times must be >= 0; choose a "
                          "distribution on [0, inf)")
    mean, variance = (float(v) for v in dist.stats(moments="mv"))
    if delay and not math.isfinite(mean):
        raise ConfigError(f"delay {spec!r}: mean {mean:g}; a delay needs a finite mean; "
                          "choose other shapes")
    if not delay and not (math.isfinite(mean) and math.isfinite(variance)):
        raise ConfigError(f"service {spec!r}: mean {mean:g} and variance {variance:g}; "
                          "a service time needs a finite mean and variance (waiting "
                          "times have infinite mean otherwise); choose other shapes")
    return dist
