"""Fitting a Cassandra model to benchmark summaries, and predicting other configurations.

The method, in four steps:

1. **Search by short simulations with common random numbers.** The objective is the
   vector of relative errors of the simulated mean latency (and throughput, where
   measured under a closed loop) against every row. Each row is simulated with the
   same seed at every trial point, so the objective is a smooth-enough function of
   the parameters for `scipy.optimize.least_squares` (trust region, bounds, finite
   differences) -- the simulator runs about a million jobs a second, which makes
   the simulation itself the fast approximation.
2. **Effective threads** are a whole number: every candidate gets a coarse fit and
   the best one a fine fit. Candidates whose cost is not significantly worse
   (likelihood ratio, 1 degree of freedom, 95%) are reported as equally good.
3. **Identifiability** is read off the Jacobian: a parameter whose column is zero
   at the start (e.g. digest cost with ONE-only reads) is fixed and reported; after
   the fit, an eigenvector of the parameters' covariance (relative changes) whose
   standard error exceeds `WEAK_DIRECTION` is reported as "the rows cannot tell
   these apart" (or "hardly determine" one parameter).
4. **Intervals** come from the least-squares Jacobian: ``cov = (J'J)^-1 J' V J
   (J'J)^-1`` with V the per-row variance: the residual variance s^2 (sum of squares
   over rows minus parameters, at least `NOISE_FLOOR` squared) plus each row's own
   simulation variance; a closed row's latency and throughput errors count as one
   correlated pair. Student t 95% intervals with rows - parameters degrees of freedom.

The fitted model is then confirmed with long simulations (`predict`), each row
carrying its simulation interval, its convergence warnings and the jobs it would
need for a +-1% interval (`forkjoin_sim.measure.convergence`); a run too short for that is
rerun once with up to `LONGEST_RUN` times its jobs.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace

import numpy as np
from scipy import optimize, stats

from forkjoin_sim.measure.convergence import convergence_notes, needed_jobs
from forkjoin_sim.errors import ConfigError
from forkjoin_sim.simulation import simulate

from sizing.calibrated_model import PARAMETERS, CalibratedModel
from sizing.columns import SIMULATED_MAX_THREADS
from sizing.measurements import Measurement

THREAD_CANDIDATES = (1, 2, 4, 8, 16, 32)
COARSE_JOBS, SEARCH_JOBS, CONFIRM_JOBS = 6_000, 25_000, 200_000
# Jobs per client at least, so every client sends many requests after warm-up.
JOBS_PER_CLIENT = {COARSE_JOBS: 60, SEARCH_JOBS: 200, CONFIRM_JOBS: 1000}
#: Relative standard error above which a parameter direction counts as undetermined.
WEAK_DIRECTION = 0.3
# Relative finite-difference step: large enough to step over the small jumps that
# reordered events cause under common random numbers, small against the parameters.
DIFF_STEP = 0.03
UNSTABLE_RESIDUAL = 10.0
#: Rms of the fitted rows' relative residuals (latency and throughput) above which
#: the fit is reported as not reproducing its own rows.
POOR_FIT = 0.25
# Singular values of the Jacobian below this fraction of the largest count as zero:
# the rows do not constrain that direction at all.
UNCONSTRAINED = 1e-9
#: A confirmation run too short for a +-1% interval is rerun with up to this many times
#: its jobs (the note then says how many a +-1% interval would still need).
LONGEST_RUN = 5
#: Smallest relative error assumed for a measured mean: repeated benchmark runs rarely
#: agree better than 1%, and with as many rows as parameters the residuals say nothing.
NOISE_FLOOR = 0.01
LABELS = {"data_read_ms": "data-read service", "digest_ratio": "digest/data ratio",
          "write_ms": "write service", "overhead_ms": "coordinator + hop overhead",
          "think_ms": "client think time"}


@dataclass(frozen=True)
class RowResult:
    """A simulated row: mean latency (ms) with interval, throughput (per second),
    percentiles, warnings."""

    mean: float
    ci_low: float
    ci_high: float
    throughput: float
    percentiles: dict
    std: float
    notes: tuple[str, ...]
    jobs: int = 0
    needed: int = 0


def _jobs(row: Measurement, base: int) -> int:
    clients = row.threads or 0
    return max(base, JOBS_PER_CLIENT.get(base, 200) * clients)


def simulate_row(model: CalibratedModel, row: Measurement, jobs: int, seed,
                 details: bool = False) -> RowResult:
    """Simulate the configuration of ``row`` under ``model``."""
    cluster = model.cluster(row)
    jobs = _jobs(row, jobs)
    result = simulate(cluster, jobs=jobs, seed=seed, progress=False, engine="fast")
    summary = result.classes.get(row.operation, result.summary)
    if row.closed and result.throughput is not None:
        throughput = result.throughput.mean * 1000.0
    else:
        throughput = row.rate
    percentiles, std, notes, need = {}, math.nan, (), 0
    if details:
        need = needed_jobs(summary, jobs)
        percentiles = {"p50_ms": summary.p50, "p95_ms": summary.p95,
                       "p99_ms": summary.p99}
        std = float(np.std(result.class_sojourns(row.operation)))
        notes = convergence_notes(summary, jobs, what=f"{row.label()} mean") + \
            tuple(result.notes)
    return RowResult(summary.mean, summary.ci_low, summary.ci_high, throughput,
                     percentiles, std, notes, jobs, need)


def _row_seed(seed: int, index: int) -> np.random.SeedSequence:
    return np.random.SeedSequence([int(seed), index])


class _Objective:
    """Relative errors of the simulated rows, as a function of the free parameters
    scaled by their starting values (so every coordinate is of order 1)."""

    def __init__(self, base: CalibratedModel, rows, free, scale, jobs, seed):
        self.base, self.rows, self.free = base, rows, list(free)
        self.scale, self.jobs, self.seed = np.asarray(scale), jobs, seed
        self.index = [PARAMETERS.index(name) for name in free]
        self.evaluations = 0

    def model(self, x) -> CalibratedModel:
        vector = self.base.vector.copy()
        vector[self.index] = np.asarray(x) * self.scale
        model = self.base.with_vector(vector)
        if "write_ms" not in self.free:  # no write rows: writes cost what reads do
            model = replace(model, write_ms=model.data_read_ms)
        return model

    def __call__(self, x) -> np.ndarray:
        self.evaluations += 1
        model = self.model(x)
        out = []
        for i, row in enumerate(self.rows):
            try:
                sim = simulate_row(model, row, self.jobs, _row_seed(self.seed, i))
            except ConfigError:  # an open-loop row made unstable by this trial point
                out.append(UNSTABLE_RESIDUAL)
                if row.closed and row.throughput:
                    out.append(UNSTABLE_RESIDUAL)
                continue
            out.append(sim.mean / row.mean_ms - 1)
            if row.closed and row.throughput:
                out.append(sim.throughput / row.throughput - 1)
        return np.asarray(out)


def _start(rows, nodes, replicas) -> CalibratedModel:
    """A starting point from the lightest-loaded row: half of its latency in service,
    the rest outside the queues; think time from the response time law."""
    fastest = min(row.mean_ms for row in rows)
    thinks = [row.threads / (row.throughput / 1000.0) - row.mean_ms for row in rows
              if row.closed and row.throughput]
    think = max(float(np.median(thinks)), 0.0) if thinks else 0.0
    return CalibratedModel(nodes, replicas, 1, 0.5 * fastest, 1.0, 0.5 * fastest,
                           0.4 * fastest, think)


def _scale(start: CalibratedModel) -> np.ndarray:
    typical = start.data_read_ms
    return np.array([start.data_read_ms, 1.0, start.write_ms, typical,
                     max(start.think_ms, typical)])


_LOWER = {"data_read_ms": 1e-3, "digest_ratio": 0.05, "write_ms": 1e-3,
          "overhead_ms": 0.0, "think_ms": 0.0}
_UPPER = {"digest_ratio": 3.0}


def _bounds(free, scale):
    lower = [_LOWER[n] / s for n, s in zip(free, scale)]
    upper = [_UPPER.get(n, math.inf) / s for n, s in zip(free, scale)]
    return lower, upper


def _fit(objective: _Objective, x0, max_nfev: int):
    lower, upper = _bounds(objective.free, objective.scale)
    x0 = np.clip(x0, lower, upper)
    return optimize.least_squares(objective, x0, bounds=(lower, upper), method="trf",
                                  diff_step=DIFF_STEP, x_scale=1.0, ftol=1e-4,
                                  xtol=1e-4, gtol=1e-6, max_nfev=max_nfev)


@dataclass(frozen=True)
class Calibration:
    """A fitted model, its per-row confirmation and what the rows could not tell."""

    model: CalibratedModel
    rows: list
    confirmed: list
    warnings: tuple[str, ...]
    threads_cost: dict
    seconds: float
    evaluations: int


def structural_zeros(objective: _Objective, x0) -> list[str]:
    """The free parameters the rows do not depend on at all (a zero Jacobian column
    at the starting point: e.g. the digest cost when every read is at ONE)."""
    base = objective(x0)
    zero = []
    for j, name in enumerate(objective.free):
        x = np.array(x0, dtype=float)
        x[j] = x[j] * (1 + 10 * DIFF_STEP) + (10 * DIFF_STEP if x[j] == 0 else 0)
        if np.max(np.abs(objective(x) - base)) < 1e-9:
            zero.append(name)
    return zero


def _covariance(jac: np.ndarray, residuals: np.ndarray, sim_var: np.ndarray,
                groups: list, links: list):
    """Sandwich covariance of the scaled parameters, the residual variance per row and
    the degrees of freedom (rows minus parameters).

    A closed-loop row's latency and throughput errors are one error seen twice
    (``X = N / (R + Z)``): within a row they are correlated by ``links[i]`` =
    ``-R / (R + Z)``, so a row counts as one observation, not two. ``(J'J)^-1 J'``
    is taken through the SVD of J, so a direction the rows do not constrain gets a
    huge variance rather than the zero a pseudo-inverse would give it.
    """
    params = jac.shape[1]
    dof = len(groups) - params
    per_row = [float(np.mean(residuals[g] ** 2)) for g in groups]
    s2 = max(sum(per_row) / dof if dof > 0 else 0.0, NOISE_FLOOR ** 2)
    u, singular, wt = np.linalg.svd(jac, full_matrices=False)
    floor = max(float(singular.max()), 1e-300) * UNCONSTRAINED
    solve = wt.T / np.maximum(singular, floor)  # (J'J)^-1 J' = W S^-1 U'
    # in the SVD basis: as many directions as singular values (fewer than the
    # parameters when there are fewer observations than parameters)
    meat = np.zeros((singular.size, singular.size))
    for g, link in zip(groups, links):
        block = np.array([[1.0, link], [link, 1.0]])[:len(g), :len(g)]
        variance = s2 + float(np.mean(sim_var[g]))
        meat += variance * u[g].T @ block @ u[g]
    covariance = solve @ meat @ solve.T
    if singular.size < params:
        # fewer observations than parameters: the directions no row sees at all are
        # as unconstrained as a floored singular value, not certain (zero variance)
        null = np.linalg.svd(jac, full_matrices=True)[2][singular.size:].T
        spread = s2 + float(np.mean(sim_var))
        covariance += spread / floor ** 2 * (null @ null.T)
    return covariance, s2, dof


def _weak_directions(covariance, free, values, scale) -> list[str]:
    """Plain warnings for parameter directions whose relative standard error exceeds
    `WEAK_DIRECTION` (eigenvectors of the covariance of relative changes)."""
    # Relative to each parameter's value (or its scale when the value is near 0), so
    # directions of parameters in different units compare alike.
    to_relative = scale / np.maximum(values, scale)
    relative = covariance * np.outer(to_relative, to_relative)
    variances, vectors = np.linalg.eigh(relative)
    notes = []
    for variance, direction in zip(variances[::-1], vectors.T[::-1]):
        error = math.sqrt(max(variance, 0.0))
        if error <= WEAK_DIRECTION:
            continue
        weights = sorted(zip(np.abs(direction), direction, free), reverse=True)
        named = [(w, name) for a, w, name in weights if a > 0.3]
        spread = ("unbounded" if error > 1 / UNCONSTRAINED ** 0.5
                  else f"relative standard error {error:.0%}")
        if len(named) == 1:
            notes.append(f"the rows hardly determine the {LABELS[named[0][1]]} "
                         f"({spread}); add rows that exercise it")
        else:
            combo = " and ".join(f"{LABELS[n]}" for _, n in named)
            signs = "together" if np.all(np.sign([w for w, _ in named]) ==
                                         np.sign(named[0][0])) else "against each other"
            notes.append(f"the rows cannot tell apart the {combo}: moving them "
                         f"{signs} changes the fit by less than the noise ({spread} "
                         "along that direction)")
    return notes


def _check_rows(rows: list[Measurement]) -> None:
    """Refuse rows this model cannot take (`_check_threads`, `_no_pause`)."""
    _check_threads(rows)
    _no_pause(rows)


def _check_threads(rows: list[Measurement]) -> None:
    """Refuse rows of more threads than the simulation takes, naming the first."""
    if many := next((row for row in rows if (row.threads or 0) > SIMULATED_MAX_THREADS),
                    None):
        raise ConfigError(f"{many.place or 'a row'}: {many.threads:,} threads; "
                          "--structure simulated runs each as a client of its own and "
                          f"takes at most {SIMULATED_MAX_THREADS:,}: use the default "
                          "structure, which takes any count")


def calibrate(rows: list[Measurement], nodes: int, replicas: int, seed: int = 0,
              threads: tuple[int, ...] = THREAD_CANDIDATES, progress=None,
              confirm: bool = True) -> Calibration:
    """Fit a `CalibratedModel` to measured ``rows`` (see the module docstring)."""
    started = time.perf_counter()
    say = progress or (lambda message: None)
    _check_rows(rows)
    if not rows or any(row.mean_ms is None for row in rows):
        raise ConfigError("every row to fit needs its measured mean_ms")
    start = _start(rows, nodes, replicas)
    scale = _scale(start)
    notes = []
    probe = _Objective(replace(start, threads=threads[len(threads) // 2]), rows,
                       PARAMETERS, scale, COARSE_JOBS, seed)
    fixed = structural_zeros(probe, start.vector / scale)
    free = [name for name in PARAMETERS if name not in fixed]
    for name in fixed:
        value = {"digest_ratio": "1 (digest = data read)", "write_ms": "the data-read "
                 "service", "think_ms": f"{start.think_ms:.3g} ms",
                 "overhead_ms": f"{start.overhead_ms:.3g} ms",
                 "data_read_ms": f"{start.data_read_ms:.3g} ms"}[name]
        notes.append(f"the rows say nothing about the {LABELS[name]} (the fit does not "
                     f"move when it changes): kept at {value}; predictions that need "
                     "it rest on that assumption")
    if not free:
        raise ConfigError("the rows determine no parameter; give rows with mean_ms")
    index = [PARAMETERS.index(n) for n in free]
    scale_free = scale[index]
    x0 = start.vector[index] / scale_free
    evaluations = probe.evaluations
    coarse = {}
    for count in threads:
        objective = _Objective(replace(start, threads=count), rows, free, scale_free,
                               COARSE_JOBS, seed)
        fit = _fit(objective, x0, max_nfev=12 * len(free))
        evaluations += objective.evaluations
        coarse[count] = (float(fit.cost), fit.x)
        say(f"calibrate: {count} thread(s) per stage: coarse cost {fit.cost:.4g} "
            f"({objective.evaluations} evaluations)")
    best = min(coarse, key=lambda c: coarse[c][0])
    objective = _Objective(replace(start, threads=best), rows, free, scale_free,
                           SEARCH_JOBS, seed)
    fit = _fit(objective, coarse[best][1], max_nfev=15 * len(free))
    evaluations += objective.evaluations
    say(f"calibrate: {best} thread(s): fine cost {fit.cost:.4g} "
        f"({objective.evaluations} evaluations)")
    model = objective.model(fit.x)
    sim_var, groups, links = _simulation_variance(model, rows, seed)
    cov_scaled, s2, dof = _covariance(fit.jac, fit.fun, sim_var, groups, links)
    covariance = cov_scaled * np.outer(scale_free, scale_free)
    values = model.vector[index]
    notes += _weak_directions(cov_scaled, free, values, scale_free)
    # Equally good thread counts: cost difference below the chi-square(1) 95% point
    # in units of the residual variance (2 residuals per closed row with throughput).
    per_row = max(s2, float(np.mean(sim_var))) * len(fit.fun) / len(rows)
    tied = [c for c in coarse if c != best and
            2 * (coarse[c][0] - coarse[best][0]) / per_row < stats.chi2.ppf(0.95, 1)]
    misfit = float(np.sqrt(np.mean(np.square(fit.fun))))
    if misfit > POOR_FIT:
        notes.append(f"the fit does not reproduce its own rows: their relative "
                     f"residuals have an rms of {misfit:.0%} (above {POOR_FIT:.0%}); "
                     "check the rows for unit errors or workloads the model does not "
                     "describe, and do not trust its predictions")
    if tied:
        notes.append(f"effective threads per stage: {best} fits best, but "
                     f"{', '.join(map(str, tied))} fit(s) about as well; the rows do "
                     "not pin the thread count (predictions beyond the measured load "
                     "depend on it)")
    model = replace(model, free=tuple(free),
                    covariance=tuple(map(tuple, covariance.tolist())),
                    fit={"rows": len(rows), "seed": seed, "threads_tried":
                         list(threads), "threads_cost": [coarse[c][0] for c in threads],
                         "fixed": fixed, "residual_rms": math.sqrt(s2),
                         "degrees_of_freedom": dof,
                         "evaluations": evaluations, "warnings": notes,
                         **fitted_reach(rows)})
    confirmed = predict(model, rows, seed=seed, progress=say) if confirm else []
    return Calibration(model, rows, confirmed, tuple(notes),
                       {c: coarse[c][0] for c in threads},
                       time.perf_counter() - started, evaluations)


def _no_pause(rows: list[Measurement]) -> None:
    """Refuse rows that state their clients' pause (``think_ms``): this model fits
    one think time for every row, and would drop each row's own."""
    stated = next((row for row in rows if row.think_ms is not None), None)
    if stated is not None:
        raise ConfigError(f"{stated.place or stated.label()} states a pause between "
                          "requests (think_ms, think_us or think_s), which --structure "
                          "simulated does not read (it fits one think time for every "
                          "row): leave the column out, or calibrate at the default "
                          "structure, which reads it")


def fitted_reach(rows: list[Measurement]) -> dict:
    """What the fitted ``rows`` measured, as the model file keeps it: their operations,
    the most client threads of a closed row and the highest rate of an open one
    (absent where no row is of that kind)."""
    reach = {"fitted_operations": sorted({row.operation for row in rows})}
    threads = [row.threads for row in rows if row.closed]
    rates = [row.rate for row in rows if not row.closed]
    if threads:
        reach["fitted_threads_max"] = max(threads)
    if rates:
        reach["fitted_rate_max"] = max(rates)
    return reach


def reach_notes(model: CalibratedModel, row: Measurement) -> list[str]:
    """What ``row`` asks beyond the fitted rows (`fitted_reach`, kept in the model
    file; a file written before it was kept says nothing): an operation no fitted row
    measured, more client threads or a higher rate than any fitted row ran."""
    fit, notes = model.fit or {}, []
    operations = fit.get("fitted_operations")
    if operations and row.operation not in operations:
        notes.append(f"no fitted row measured {row.operation} (fitted: "
                     f"{', '.join(operations)}): its prediction rests on the model alone")
    most = fit.get("fitted_threads_max") if row.closed else fit.get("fitted_rate_max")
    load = row.threads if row.closed else row.rate
    other = fit.get("fitted_rate_max") if row.closed else fit.get("fitted_threads_max")
    if most is None and other is not None:
        kind, fitted = (("a closed loop (threads)", "open loops (rate)") if row.closed
                        else ("an open loop (rate)", "closed loops (threads)"))
        notes.append(f"{kind}, while every fitted row was of {fitted}: its prediction "
                     "rests on the model alone")
    if most is not None and load > most:
        what = (f"{row.threads} client threads, past the {most} the model was fitted "
                "at" if row.closed else
                f"a rate of {row.rate:g}/s, past the {most:g}/s the model was fitted at")
        # worded as the closed-network model's note on rows past its fitted loads
        notes.append(f"{what}: extrapolated (there the model's own curve says how the "
                     "latency grows; no fitted row measures it)")
    return notes


def _simulation_variance(model, rows, seed):
    """Per-residual variance of the search runs' own noise (relative, squared), the
    residual indices of each row, and the latency/throughput correlation per row."""
    out, groups, links = [], [], []
    for i, row in enumerate(rows):
        sim = simulate_row(model, row, SEARCH_JOBS, _row_seed(seed, i))
        half = (sim.ci_high - sim.ci_low) / 2 / stats.norm.ppf(0.975)
        first = len(out)
        out.append((half / sim.mean) ** 2)
        if row.closed and row.throughput:
            out.append((half / sim.mean) ** 2)  # X = N/(R+Z): same relative noise
        groups.append(list(range(first, len(out))))
        links.append(-sim.mean / (sim.mean + model.think_ms))
    return np.asarray(out), groups, links


def predict(model: CalibratedModel, rows: list[Measurement], seed: int = 0,
            jobs: int = CONFIRM_JOBS, progress=None) -> list[dict]:
    """Predict every row: long simulation plus parameter uncertainty (delta method).

    The interval combines the simulation's batch-means variance with
    ``g' cov g``, ``g`` the gradient of the row's mean in the free parameters
    (common-random-number differences of short runs), as a relative sd taken on the
    log scale: mean x exp(+-1.96 sd / mean), never inside the simulation's own
    interval.
    """
    say = progress or (lambda message: None)
    _check_rows(rows)
    z = stats.norm.ppf(0.975)
    cov = np.asarray(model.covariance) if model.covariance else None
    out = []
    for i, row in enumerate(rows):
        seed_i = _row_seed(seed + 1, i)
        try:
            sim = simulate_row(model, row, jobs, seed_i, details=True)
            if sim.needed > sim.jobs:  # near saturation: lengthen, within a budget
                sim = simulate_row(model, row, min(sim.needed, LONGEST_RUN * sim.jobs),
                                   seed_i, details=True)
        except ConfigError as exc:  # an open-loop rate beyond the model's capacity
            out.append(_unstable(row, exc))
            say(f"predict: {row.label()}: {exc}")
            continue
        sim_se = (sim.ci_high - sim.ci_low) / 2 / z
        var_mean = sim_se ** 2
        var_x = 0.0
        if cov is not None and cov.size:
            grad_mean, grad_x = _gradient(model, row, seed_i)
            # a covariance positive semidefinite only to rounding can give -1e-20
            var_mean += max(float(grad_mean @ cov @ grad_mean), 0.0)
            var_x = max(float(grad_x @ cov @ grad_x), 0.0)
        # on the log scale: a latency's errors are factors, and a band as wide as the
        # mean once reached down to 0 ms; never narrower than the simulation's own
        spread = min(z * math.sqrt(var_mean) / sim.mean, 700.0)
        entry = {"predicted_mean_ms": sim.mean,
                 "predicted_ci_low_ms": min(sim.mean * math.exp(-spread), sim.ci_low),
                 "predicted_ci_high_ms": max(sim.mean * math.exp(spread), sim.ci_high),
                 "simulation_ci_low_ms": sim.ci_low, "simulation_ci_high_ms": sim.ci_high,
                 "predicted_throughput": sim.throughput,
                 "predicted_throughput_sd": math.sqrt(var_x),
                 "predicted_std_ms": sim.std,
                 "notes": reach_notes(model, row) + list(sim.notes)}
        entry.update({f"predicted_{k}": v for k, v in sim.percentiles.items()})
        out.append(entry)
        say(f"predict: {row.label()}: {sim.mean:.4g} ms "
            f"[{entry['predicted_ci_low_ms']:.4g}, {entry['predicted_ci_high_ms']:.4g}]")
    return out


def _unstable(row, exc) -> dict:
    keys = ("predicted_mean_ms", "predicted_ci_low_ms", "predicted_ci_high_ms",
            "simulation_ci_low_ms", "simulation_ci_high_ms", "predicted_throughput",
            "predicted_throughput_sd", "predicted_std_ms", "predicted_p50_ms",
            "predicted_p95_ms", "predicted_p99_ms")
    entry = dict.fromkeys(keys, math.nan)
    entry["notes"] = [f"no steady state: {exc}"]
    return entry


def _gradient(model: CalibratedModel, row, seed) -> tuple[np.ndarray, np.ndarray]:
    """d(mean ms)/d(parameter) and d(throughput)/d(parameter) for the free parameters
    (forward differences under common random numbers)."""
    base = simulate_row(model, row, SEARCH_JOBS, seed)
    grad_mean, grad_x = [], []
    for name in model.free:
        value = getattr(model, name)
        step = DIFF_STEP * (value if value > 0 else model.data_read_ms)
        change = {name: value + step}
        if name == "data_read_ms" and "write_ms" not in model.free:
            change["write_ms"] = value + step  # tied: writes cost what reads do
        moved = simulate_row(replace(model, **change), row, SEARCH_JOBS, seed)
        grad_mean.append((moved.mean - base.mean) / step)
        grad_x.append((moved.throughput - base.throughput) / step)
    return np.asarray(grad_mean), np.asarray(grad_x)
