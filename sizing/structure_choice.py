"""Choosing a closed-network structure by the held-out error of the measured rows.

The rows of one benchmark file are split the way issue 27 judges a model: each level of
an operation (when the file has two or more) is held out and predicted from the others,
and the larger half of the loads (thread counts, or an open loop's rates; when there
are four or more) from the smaller half. Every candidate structure (`CANDIDATES`, a few of `sizing.closed_network.STRUCTURES`) is
calibrated on each fitted part as `sizing.network_model.calibrated` does and scored by
the mean absolute relative error of its anchored predictions of the held-out part; the
structure with the smallest score predicts the file's own unseen rows best, which is
what a prediction from it is asked to do.
"""

from __future__ import annotations

import numpy as np

from sizing.network_model import calibrated, rows_of_table

#: Fewest rows a fitted part keeps (fewer say nothing about a structure).
MIN_FITTED = 3

#: The structure name that asks for the choice, and the structures it chooses among:
#: the default and two of another make (a shared pool of cores; a client machine that
#: saturates) that each win some data set there (docs/cassandra/calibration.md),
#: default first. The variants of the default added since (lanes-client,
#: lanes-replicas, lanes-fixed-hops) change one thing each and are not candidates.
AUTO = "auto"
CANDIDATES = ("lanes", "digest-random-hops", "client-bound")


def held_out_cases(table) -> list:
    """(name, fitted mask, held-out mask) of every split of ``table`` (columns
    operation, quorum, threads, ...)."""
    cases = []
    for operation in sorted(set(table.operation)):
        mine = (table.operation == operation).to_numpy()
        levels = sorted(set(table.quorum[mine]))
        if len(levels) >= 2:
            for level in levels:
                held = mine & (table.quorum == level).to_numpy()
                cases.append((f"{operation} quorum {level}", ~held, held))
    # the load: client threads of a closed loop, the offered rate of an open one
    load = table.threads.to_numpy(float)
    closed = np.isfinite(load)
    if "rate" in table:
        load = np.where(closed, load, table.rate.to_numpy(float))
    loads = np.unique(load)
    if len(loads) >= 4:
        small = load <= np.median(loads)
        cases.append(("larger thread counts" if closed.all() else "larger loads", small,
                      ~small))
    return [c for c in cases if c[1].sum() >= MIN_FITTED and c[2].any()]


def _held_out_errors(job) -> np.ndarray:
    """Absolute relative errors of one structure's anchored predictions of one
    split's held-out rows (a job of `cross_validate`)."""
    table, fitted, held, structure, prior, cores, client_cores, geography = job
    model = calibrated(table[fitted], structure, prior, cores, client_cores, geography)
    part = table[held]
    predicted = model.predict(rows_of_table(part))[0]
    return np.abs(predicted / part.mean_ms.to_numpy(float) - 1)


def held_out_errors(table, candidates, prior, cores: int, client_cores: int,
                    geography=None, progress=None, workers: int = 1) -> dict:
    """Per candidate structure, the absolute relative error of its anchored
    prediction of each held-out row of every `held_out_cases` split, in one order
    for all candidates (empty without cases). ``workers`` > 1: the calibrations run
    in that many processes (the same numbers: each is a deterministic fit)."""
    cases = held_out_cases(table)
    jobs = [(table, fitted, held, structure, prior, cores, client_cores, geography)
            for structure in candidates for _, fitted, held in cases]
    if workers > 1 and len(jobs) > 1:
        from concurrent.futures import as_completed

        from forkjoin_sim.sweep.runner import process_pool

        with process_pool(min(workers, len(jobs))) as pool:
            futures = [pool.submit(_held_out_errors, job) for job in jobs]
            for done, _ in enumerate(as_completed(futures), 1):
                if progress is not None:
                    progress(done, len(jobs))
            errors = [future.result() for future in futures]
    else:
        errors = []
        for done, job in enumerate(jobs, 1):
            errors.append(_held_out_errors(job))
            if progress is not None:
                progress(done, len(jobs))
    per = len(cases)
    return {structure: (np.concatenate(errors[i * per:(i + 1) * per]) if per
                        else np.array([])) for i, structure in enumerate(candidates)}


def choose(table, candidates, default: str, prior, cores: int, client_cores: int,
           geography=None, progress=None, workers: int = 1) -> tuple[str, dict]:
    """The candidate with the smallest mean held-out error, if it beats ``default``
    by more than one standard error of their paired differences over the held-out
    rows (else, and when the rows allow no split, ``default``: the structure chosen
    across all published data sets is not set aside for a difference the rows
    cannot tell from chance), and the mean errors."""
    errors = held_out_errors(table, candidates, prior, cores, client_cores, geography,
                             progress, workers)
    scores = {s: float(np.mean(e)) if len(e) else np.nan for s, e in errors.items()}
    known = {s: v for s, v in scores.items() if np.isfinite(v)}
    if not known:
        return default, scores
    best = min(known, key=lambda s: (known[s], s != default))
    if best != default and default in known:
        gain = errors[default] - errors[best]
        spread = (float(np.std(gain, ddof=1) / np.sqrt(len(gain))) if len(gain) > 1
                  else np.inf)
        if float(np.mean(gain)) <= spread:
            return default, scores
    return best, scores
