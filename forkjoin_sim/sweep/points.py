"""The points of a sweep: a spec (dict or TOML) expanded into simulation points.

A sweep spec is a dict (or TOML file) whose keys are the ``forkjoin-sim simulate``
option names with underscores. A list is a grid axis, a scalar is fixed; ``jobs``,
``replications`` and ``seed`` are fixed keys. An optional ``points`` list holds
explicit entries (tables in TOML), each expanded like a spec of its own on top of
the shared keys. Each point's seed is derived from the base seed and the point's
canonical description (``run_seed``, the whole number ``simulate --seed`` takes), so
the numbers of a point never depend on the backend, the number of workers or the
order in which points finish, and ``simulate`` with the point's options and that
seed (its row's ``replay`` command) gives them alone.

A point that sets no engine has engine ``"auto"``: it runs on the engine
``simulate`` would choose for it (`forkjoin_sim.simulation.choose_engine`), and its
row names the engine that ran. ``"auto"`` stays in the point's identity, so a
point's seed does not depend on which engine the rule picks.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from forkjoin_sim.errors import ConfigError, counted
from forkjoin_sim.files.io import toml_text
from forkjoin_sim.run import MIN_JOBS

POINT_DEFAULTS: dict[str, Any] = {
    "nodes": None, "replicas": None, "quorum": None, "rho": None, "arrival_rate": None,
    "mu": 1.0, "service": "exp", "placement": "random", "purging": False,
    "engine": "auto", "warmup": 0.1, "sample_every": 1,
    "clients": None, "think": None, "speeds": None,
}
#: Keys added after the first sweeps: left out of a point's identity while unset, so
#: the seeds (and numbers) of earlier sweeps do not change.
OPTIONAL_KEYS = ("clients", "think", "speeds")
FIXED_KEYS = ("jobs", "replications", "seed")
RUN_DEFAULTS = {"jobs": 100_000, "replications": 1, "seed": 0}
# Zero replications would be a sweep with nothing to run; a run needs MIN_JOBS jobs
# (check_run_settings checks them against the other run settings too).
RUN_MINIMUM = {"jobs": MIN_JOBS, "replications": 1, "seed": 0}
#: The columns that identify a point (its ``point_key``), first in every results file.
KEY_COLUMNS = (*POINT_DEFAULTS, "jobs", "replication", "seed")
#: The columns after them that replay the point alone: its `run_seed` and the
#: ``simulate`` command (`replay_command`).
REPLAY_COLUMNS = ("run_seed", "replay")
#: Most points one sweep may have (each is a row of the results file).
MAX_POINTS = 1_000_000
#: Parameters that are real numbers, however the spec spells them.
REAL_KEYS = ("rho", "arrival_rate", "mu", "warmup", "think")
#: Parameters that are whole numbers.
WHOLE_KEYS = ("nodes", "replicas", "quorum", "sample_every", "clients")
#: Parameters that are names.
TEXT_KEYS = ("service", "placement", "engine")
#: The engines a sweep point takes: "auto" (the default) or one named engine.
SWEEP_ENGINES = ("auto", "fast", "simpy")
#: The engine of points that set none in sweeps written before the default was "auto".
LEGACY_ENGINE = "fast"



# ---------------------------------------------------------------------------
# Specs and points
# ---------------------------------------------------------------------------

def load_spec(source) -> dict:
    """A sweep spec: ``source`` itself if it is a dict, else the TOML file it names."""
    if isinstance(source, dict):
        return source
    if not isinstance(source, (str, os.PathLike)):
        raise ConfigError(f"a sweep spec is a dict or the path of a TOML file, got "
                          f"{type(source).__name__}")
    from forkjoin_sim.files.io import read_toml

    return read_toml(Path(source), "sweep spec",
                     "give the path of a TOML file such as sweep.toml")


def _plain(value):
    """numpy scalars as Python ones, so a point's key and seed do not depend on them."""
    return value.item() if isinstance(value, np.generic) else value


def _axis(value) -> list:
    if isinstance(value, np.ndarray):
        value = value.tolist()
    return [_plain(v) for v in value] if isinstance(value, (list, tuple)) else [_plain(value)]


def _check_keys(keys, where: str) -> None:
    unknown = set(keys) - set(POINT_DEFAULTS) - set(FIXED_KEYS)
    if unknown:
        raise ConfigError(f"unknown sweep key(s) {', '.join(sorted(unknown))}{where}; "
                          f"valid keys: {', '.join([*POINT_DEFAULTS, *FIXED_KEYS])} "
                          "(and 'points', a list of tables)")


def _check_speeds(text: str) -> None:
    """Refuse node speeds no node count can take (text not understood, a factor that
    is not positive); speeds for another node count are a combination to skip."""
    from forkjoin_sim.checks import is_plain_whole
    from forkjoin_sim.system import Stragglers, check_speed_factors, parse_speeds

    name, _, rest = text.strip().partition(":")
    count = rest.partition(":")[0]
    # the node count the text describes: one factor per node, or its slow nodes
    nodes = ((int(count) if is_plain_whole(count) else 0) if name == "slow"
             else len(text.split(",")))
    speeds = parse_speeds(text, max(nodes, 1))
    if not isinstance(speeds, Stragglers):
        try:
            check_speed_factors(speeds)
        except ConfigError as exc:
            raise ConfigError(f"speeds {text!r}: {exc}") from None


def _check_positive(name: str, value) -> None:
    if not (math.isfinite(value) and value > 0):
        raise ConfigError(f"{name}={value!r} must be a positive finite number")


def _check_engine(engine: str) -> None:
    """Raise ConfigError for an engine name the sweep does not run."""
    if engine == "fused":
        # simulate's "fused" alone means one replication; "auto" runs the kernel with
        # simulate's fixed replications, the numbers `simulate` gives without --engine
        raise ConfigError("engine 'fused' is not a sweep engine; use engine = 'auto' "
                          "(the default), which runs the fused kernel where the model "
                          "allows it")
    if engine not in SWEEP_ENGINES:
        raise ConfigError(f"engine {engine!r} is unknown; use one of "
                          f"{', '.join(SWEEP_ENGINES)}")


def _check_alone(name: str, value) -> None:
    """Refuse a value no point can take whatever the other keys are (an unknown
    name, a missing latency file, a count below 1, a rate that is not positive): a
    typo in the spec, not a combination to skip."""
    from forkjoin_sim.arrivals import ClosedLoop
    from forkjoin_sim.laws.service import parse_service
    from forkjoin_sim.placement import get_placement

    if name in ("nodes", "replicas", "quorum") and value < 1:
        raise ConfigError(f"{name}={value!r} must be at least 1")
    if name in ("rho", "arrival_rate"):
        _check_positive(name, value)
    elif name == "mu":
        if not (math.isfinite(value) and value > 0):
            raise ConfigError(f"mu={value!r} must be a positive number (the service "
                              "rate; 1 gives mean service time 1)")
    elif name == "clients":
        ClosedLoop(value)
    elif name == "think":
        ClosedLoop(1, value)
    elif name == "service":
        # a latency file is read here too: a missing one is a typo, not a skip
        parse_service(value)
    elif name == "placement":
        get_placement(value)
    elif name == "engine":
        _check_engine(value)
    elif name == "speeds":
        _check_speeds(value)


def _check_mu_applies(services) -> None:
    """Refuse a spec that gives ``mu`` beside a service fixing its own scale (exp:2,
    a latency file), as ``simulate --mu`` is refused: the rows would say mu = 2 of
    times of mean 2."""
    from forkjoin_sim.laws.service import check_mean_applies, fixes_own_scale

    for service in services:
        if isinstance(service, str) and fixes_own_scale(service):
            try:
                check_mean_applies(service, "service", "mu")
            except ConfigError as exc:
                raise ConfigError(f"sweep keys 'mu' and 'service': {exc}") from None


def _check_type(name: str, value) -> None:
    """Refuse a value of the wrong kind (a spec error, not a combination to skip)."""
    if value is None:
        return
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if name in WHOLE_KEYS:
        wrong = not (number and isinstance(value, int))
        kind = "whole numbers, e.g. 3"
    elif name in REAL_KEYS:
        wrong = not (number or (name == "warmup" and value == "auto"))
        kind = "numbers, e.g. 0.5" + (" (or 'auto')" if name == "warmup" else "")
    elif name in TEXT_KEYS:
        wrong, kind = not isinstance(value, str), "text in quotes, e.g. \"exp\""
    elif name == "speeds":
        # a list of numbers is read as an axis of speeds; one point's are one text
        wrong, kind = not isinstance(value, str), ("one text of a factor per node, e.g. "
                                                   "\"1,1,0.5\" (a list of such texts "
                                                   "sweeps them)")
    elif name == "purging":
        wrong, kind = not isinstance(value, bool), "true or false"
    else:
        return
    if wrong:
        hint = (" (in TOML: no quotes around numbers, no decimal point in whole numbers)"
                if name in WHOLE_KEYS or name in REAL_KEYS else "")
        raise ConfigError(f"sweep key {name!r} takes {kind}; {toml_text(value)} is not "
                          f"one{hint}")


def _check_run_point(params: dict) -> None:
    """Raise ConfigError for an engine choice the simulator would refuse."""
    _check_engine(params["engine"])
    if params["purging"] and params["engine"] not in ("simpy", "auto"):
        raise ConfigError("purging is modelled by the SimPy engine only; "
                          "use engine = 'simpy' (or leave engine unset)")


def _grid(spec: dict, run: dict, notes: list[str], where: str = "") -> list[dict]:
    """The valid points of one grid (no ``points`` key), with notes for the rest.

    A value no point can take (`_check_alone`) is refused; ``where`` names the
    explicit point the grid comes from (" in points[2]") in that message.
    """
    for need in ("nodes", "replicas", "quorum"):
        if need not in spec:
            raise ConfigError(f"sweep spec needs {need!r} (a number or a list)")
    if (("rho" in spec) + ("arrival_rate" in spec) + ("clients" in spec)) != 1:
        raise ConfigError("sweep spec needs exactly one of 'rho', 'arrival_rate' "
                          "(open arrivals) and 'clients' (closed loop)")
    names = list(POINT_DEFAULTS)
    axes = [_axis(spec.get(name, POINT_DEFAULTS[name])) for name in names]
    for name, axis in zip(names, axes):
        if not axis:
            raise ConfigError(f"sweep key {name!r}{where} is an empty list; give at "
                              "least one value")
        for value in axis:
            _check_type(name, value)
            if value is None:
                continue
            try:
                _check_alone(name, value)
            except ConfigError as exc:
                raise ConfigError(f"sweep key {name!r}{where}: {exc}") from None
    if "mu" in spec:
        _check_mu_applies(axes[names.index("service")])
    size = math.prod(len(axis) for axis in axes) * run["replications"]
    if size > MAX_POINTS:
        raise ConfigError(f"the sweep has {size:,} points (grid x replications), more "
                          f"than {MAX_POINTS:,}; split it into several sweeps or use "
                          "fewer values per axis")
    points, skipped, laws = [], [], {}
    for values in itertools.product(*axes):
        params = dict(zip(names, values))
        for name in REAL_KEYS:
            # rho = 1 and rho = 1.0 are one point, with one key and one seed.
            if isinstance(params[name], int) and not isinstance(params[name], bool):
                params[name] = float(params[name])
        try:
            from forkjoin_sim.simulation import check_clock_of, check_jobs_per_client

            model = build_model(params, laws)
            check_clock_of(model, run["jobs"])
            check_jobs_per_client(model, run["jobs"])
            _check_run_point(params)
        except ConfigError as exc:
            shown = {k: v for k, v in params.items() if v is not None and k in spec}
            skipped.append((shown, exc))
            continue
        for replication in range(run["replications"]):
            points.append({**params, "jobs": run["jobs"], "replication": replication,
                           "seed": run["seed"]})
    if where and not points:
        # an explicit point none of whose combinations can run is wrong as written
        shown, exc = skipped[0]
        written = ", ".join(f"{k}={v!r}" for k, v in shown.items())
        more = (f" (nor can its {counted(len(skipped) - 1, 'other combination')})"
                if len(skipped) > 1 else "")
        raise ConfigError(f"sweep {where.removeprefix(' in ')} ({written}) cannot "
                          f"run: {exc}{more}")
    notes.extend(f"skipped {shown}: {exc}" for shown, exc in skipped)
    return points


def expand(spec: dict) -> tuple[list[dict], list[str]]:
    """The points of a sweep spec, and a note for each combination that is skipped.

    Returns ``(points, notes)``. A point is a dict of every parameter in
    ``POINT_DEFAULTS`` plus ``jobs``, ``replication`` and ``seed``; combinations
    of valid values that cannot run together (k > r from two lists, a load unstable
    for one node count ...) are skipped with a note, not fatal. A value no point can
    take (an unknown name, a missing latency file, mu <= 0 ...) and an explicit
    entry none of whose combinations can run raise ConfigError: typos, not skips.
    With a ``points`` list, each entry is a grid of its own over the shared keys
    (an entry's keys win), in the order listed; a point listed twice runs once.
    """
    spec = load_spec(spec)
    entries = spec.get("points")
    shared = {k: v for k, v in spec.items() if k != "points"}
    _check_keys(shared, "")
    run = {key: spec.get(key, default) for key, default in RUN_DEFAULTS.items()}
    for key, value in run.items():
        value = _plain(value)
        least = RUN_MINIMUM[key]
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise ConfigError(f"sweep key {key!r} must be one whole number >= {least}, "
                              f"got {toml_text(value)}")
        run[key] = value
    if entries is None:
        grids = [shared]
    else:
        if not isinstance(entries, (list, tuple)) or not entries or not all(
                isinstance(e, dict) for e in entries):
            raise ConfigError("sweep key 'points' must be a non-empty list of tables "
                              "(dicts), e.g. [[points]] nodes = 6 ... in TOML")
        grids = []
        for i, entry in enumerate(entries):
            _check_keys(entry, f" in points[{i}]")
            fixed = set(entry) & set(FIXED_KEYS)
            if fixed:
                raise ConfigError(f"points[{i}] sets {', '.join(sorted(fixed))}; jobs, "
                                  "replications and seed apply to the whole sweep: "
                                  "set them at the top level")
            grid = {**shared, **entry}
            given = [k for k in ("rho", "arrival_rate", "clients") if k in entry]
            if given:
                for other in {"rho", "arrival_rate", "clients"} - set(given):
                    grid.pop(other, None)
            grids.append(grid)
    points, notes, seen = [], [], set()
    for i, grid in enumerate(grids):
        where = "" if entries is None else f" in points[{i}]"
        for point in _grid(grid, run, notes, where):
            key = point_key(point)
            if key in seen:
                notes.append(f"point {key} is listed twice; it runs once")
                continue
            seen.add(key)
            points.append(point)
    return points, notes


def point_key(point: dict) -> str:
    """Canonical text of a point (sorted JSON): its identity for seeds and resume."""
    return json.dumps({k: point[k] for k in sorted(point)
                       if not (k in OPTIONAL_KEYS and point[k] is None)},
                      sort_keys=True, separators=(",", ":"), default=str)


def _service_identity(service):
    """``empirical:PATH`` as the SHA-256 of the file's bytes: a point's numbers then
    depend on the measured data, not on where the file lies or how its path is
    spelled. Other services (and unreadable files, whose point fails when it builds
    its model) are left as they are."""
    if isinstance(service, str) and service.startswith("empirical:"):
        try:
            data = Path(service[len("empirical:"):]).read_bytes()
        except OSError:
            return service
        return "empirical-sha256:" + hashlib.sha256(data).hexdigest()
    return service


def run_seed(point: dict) -> int:
    """The seed of the point's run: the whole number ``simulate --seed`` takes to give
    the point's numbers alone (its row's ``run_seed``; ``replay`` is the command).

    Drawn from the child of the sweep's seed whose key is a hash of the point's
    canonical description (an empirical service described by its data), so it is a
    function of the sweep's seed and the point only, never of the backend, the
    workers or the order of completion.
    """
    from forkjoin_sim.checks import SEED_LIMIT
    from forkjoin_sim.randomness.streams import child_seed

    described = {**point, "service": _service_identity(point.get("service"))}
    digest = hashlib.sha256(point_key(described).encode()).digest()
    words = np.frombuffer(digest, dtype=np.uint32)
    child = child_seed(int(point["seed"]), *map(int, words))
    return int(child.generate_state(1, np.uint64)[0]) % SEED_LIMIT


def point_seed(point: dict) -> np.random.SeedSequence:
    """The point's SeedSequence: that of its `run_seed`, as ``simulate`` makes it."""
    return np.random.SeedSequence(run_seed(point))


#: The simulate options a point's keys set, where they are not ``--`` and the key
#: with dashes (the arrival rate is given to simulate as the load it makes).
_OPTION_OF = {"arrival_rate": "--rho"}
#: Keys that are the same for a sweep and ``simulate`` left unsaid at these values.
_REPLAY_DEFAULTS = {"mu": 1.0, "service": "exp", "placement": "random",
                    "purging": False, "engine": "auto", "warmup": 0.1,
                    "sample_every": 1}


def _replay_load(point: dict, model=None) -> float | None:
    """The ``--rho`` that makes exactly the point's arrival rate (the model's rate is
    load / mean service, which rounds: the nearest floats are tried), None if none
    does or the point has no model. ``model`` is the point's, if already built."""
    from forkjoin_sim.system import law_mean

    if model is None:
        try:
            model = build_model(point)
        except ConfigError:
            return None
    mean, load = law_mean(model.service, "service"), model.load
    for _ in range(8):
        rate = load / mean
        if rate == model.arrival_rate:
            return load
        load = float(np.nextafter(load, np.inf if rate < model.arrival_rate else -np.inf))
    return None


def replay_command(point: dict, *, model=None, seed: int | None = None) -> str:
    """The ``forkjoin-sim simulate`` command that runs ``point`` alone, with its
    `run_seed`: the same numbers as its row ("" for an arrival rate no load
    reproduces exactly).

    ``model`` and ``seed`` are the point's model (`build_model`) and `run_seed` where
    the caller has them already; they are not made again.
    """
    import shlex

    words = ["forkjoin-sim", "simulate"]
    for key in (*POINT_DEFAULTS, "jobs"):
        value = point.get(key)
        if value is None or (key in _REPLAY_DEFAULTS and value == _REPLAY_DEFAULTS[key]
                             and type(value) is type(_REPLAY_DEFAULTS[key])):
            continue
        if key == "arrival_rate":
            value = _replay_load(point, model)
            if value is None:
                return ""
        option = _OPTION_OF.get(key, "--" + key.replace("_", "-"))
        if value is True:
            words.append(option)
        else:
            words += [option, repr(value) if isinstance(value, float) else str(value)]
    words += ["--seed", str(run_seed(point) if seed is None else seed)]
    return shlex.join(words)


def build_model(params: dict, laws: dict | None = None):
    """The :class:`ForkJoinModel` of a point (raises ConfigError if invalid);
    ``laws``, if given, keeps each (service, mean) parsed once (a grid's points share
    a few: parsing each point's took minutes on a grid of 100,000)."""
    from forkjoin_sim.model import ForkJoinModel
    from forkjoin_sim.laws.service import parse_service

    mu = params.get("mu", 1.0)
    if isinstance(mu, bool) or not isinstance(mu, (int, float)) or not mu > 0:
        raise ConfigError(f"mu={mu!r} must be a positive number")
    from forkjoin_sim.system import parse_speeds

    key = (params.get("service", "exp"), 1.0 / mu)
    if laws is not None and key in laws:
        service = laws[key]
    else:
        service = parse_service(key[0], mean=key[1])
        if laws is not None:
            laws[key] = service
    closed = {}
    if params.get("clients") is not None:
        closed = {"clients": params["clients"], "think": params.get("think") or 0.0}
    elif params.get("think") is not None:
        raise ConfigError("sweep key 'think' describes closed-loop clients; add 'clients'")
    speeds = params.get("speeds")
    if isinstance(speeds, str):
        speeds = parse_speeds(speeds, params["nodes"])
    # No int() here: the model itself refuses 3.5 nodes rather than truncating them.
    return ForkJoinModel(params["nodes"], params["replicas"], params["quorum"],
                         load=params.get("rho"), arrival_rate=params.get("arrival_rate"),
                         service=service, placement=params.get("placement", "random"),
                         purging=params.get("purging", False), speeds=speeds, **closed)
