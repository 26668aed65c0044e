"""Held-out errors of the closed-network model structures on the published data sets.

For every data set (Karpenko et al. 2021 clusters C and D, reads and writes; three of
the saulolks2022 JMeter files; george0st's cassandra-stress writes on Cassandra 5 and 4,
two levels) and every structure of `sizing.closed_network`, the four
protocols of issue 27: (a) fit ONE, predict QUORUM and ALL; (b) fit two levels, predict
the third (three cases, pooled; data sets with three levels); (c) fit the smaller half of the thread counts, predict
the larger; (d) fit reads, predict writes (Karpenko only). Every fit is built as
`cassandra calibrate` builds it (anchors; time outside the latency from throughputs)
with, by default, vague parameters and the level prior of the *other* data sets. Beside
each: the naive guess of the same protocol (same as ONE; line in replicas asked; line in
threads; writes = reads), computed here with the definitions of
docs/data/karpenko2021/README.md. Also the share of held-out rows inside their 95%
prediction interval (Laplace posterior, prior spread included). Cluster D's client
placement, which the paper does not state, is by default the one all of D's rows fit
best (`placements`): a setup fact read off rows that protocol (a) then predicts;
``--placement fitted-rows`` lets each fit choose from its own rows instead, and
``--placement none`` fits D as one data centre (what `cassandra calibrate` does
without ``--datacentres``).

Usage::

    .venv/bin/python benchmarks/cassandra_heldout.py --out docs/cassandra/heldout.md \
        [--write-prior sizing/default_prior.toml] [--workers 2] [--prior vague] \
        [--structures lanes,...] [--placement all-rows|fitted-rows|none] \
        [--rows docs/cassandra/heldout_rows.csv]
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd

from dataclasses import replace

from sizing.closed_network import STRUCTURES
from sizing.geography import Geography, placement
from sizing.network_fit import COORDINATES, Prior, demands_of, fit, lone_levels, step_rows
from sizing.network_model import calibrated
from sizing.structure_choice import CANDIDATES, choose

LEVELS = {"ONE": 1, "QUORUM": 2, "ALL": 3}
SAULOLKS = ("rows1000_think100", "rows1000_think1000", "rows5000_think100")
#: george0st's cassandra-stress write runs (docs/data/george0st_cassandra_stress): file
#: -> cluster (the two Cassandra 5 files are one cluster under two compaction settings).
GEORGE0ST = {"cassandra5_stcs": "george0st-v5", "cassandra5_ucs4": "george0st-v5",
             "cassandra4_stcs": "george0st-v4"}


#: Cluster D's four possible placements (`--datacentres` files). The paper does not
#: say which region held the client: a fact of the setup, like its cores, which a user
#: knows. By default the held-out fits take the placement whose fit of *all* the data
#: set's rows is best (chosen once per data set and structure, before any split);
#: ``--placement fitted-rows`` lets each fit choose by its fitted rows alone (ONE rows
#: cannot tell placements whose nearest replica is as far apart).
PLACEMENTS = tuple(f"docs/data/karpenko2021/cluster_d_client_{region}.toml" for region in
                   ("us-west-2", "eu-west-2", "sa-east-1", "ap-south-1"))


def data_sets():
    """name -> (cluster, table with the columns the model needs, cores, client cores,
    candidate geographies (None: one data centre))."""
    sets = {}
    for cluster in ("c", "d"):
        table = pd.read_csv(f"docs/data/karpenko2021/cluster_{cluster}.csv")
        table["think_ms"] = 0.0
        places = (None,) if cluster == "c" else tuple(Geography.read(p)
                                                       for p in PLACEMENTS)
        for op in ("read", "write"):
            # t2.xlarge: 4 vCPU per node and on the client machine
            sets[f"Karpenko {cluster.upper()} {op}s"] = (
                cluster, table[table.operation == op].reset_index(drop=True), 4, 4,
                places)
    for name in SAULOLKS:
        table = pd.read_csv(f"docs/data/measurements/saulolks2022_{name}_run1.csv")
        table["think_ms"] = float(name.split("think")[1])
        # undocumented cluster: 3 nodes, RF 3, 2 cores (the later Docker setup) assumed
        sets[f"saulolks {name}"] = ("saulolks", table, 2, 4, (None,))
    for name, cluster in GEORGE0ST.items():
        table = pd.read_csv(f"docs/data/george0st_cassandra_stress/{name}.csv")
        # LOCAL_ONE and LOCAL_QUORUM of the three local replicas
        table["consistency"] = table.consistency.str.removeprefix("LOCAL_")
        table["think_ms"] = 0.0
        # hardware not stated: the command's defaults (4 cores per node and client)
        sets[f"george0st {name}"] = (cluster, table.drop(columns=["rate"]), 4, 4,
                                     (None,))
    return sets


#: Data sets whose level costs carry over as the level prior (`Prior.level_step_mean`,
#: `Prior.level_shape_sd`): single-region runs below saturation. Left out: Karpenko D
#: (replicas in four regions: its level cost is the inter-region round trips, an input
#: of its own) and the saulolks JMeter runs (past saturation: at ALL the latency grows
#: 13x from 10 to 50 users while throughput stays at ~55 ops/s, so its levels measure
#: a saturated queue, not what a level costs). As a ratio the level cost differs by a
#: factor 2.5-4.5 between these clusters (log ALL/ONE 0.20-0.34 on C, 0.79-0.93 implied
#: by george0st's QUORUM, whose writes take 0.7 ms against C's 4.4); as a lone
#: request's extra time it differs less among them, but not on slower clusters
#: (`STEP_SCALE`).
LEVEL_SOURCES = ("Karpenko C reads", "Karpenko C writes",
                 *(f"george0st {name}" for name in GEORGE0ST))
#: Smallest spread of the middle levels around the line from ONE to ALL (log units).
SHAPE_SD_FLOOR = 0.02


def level_shape(table) -> np.ndarray:
    """Per operation and thread count: log(QUORUM / ONE) - 0.5 log(ALL / ONE), how far
    the middle level sits from the line in (k-1)/(replicas-1) (replicas = 3)."""
    wide = table.pivot_table(index=["operation", "threads"], columns="consistency",
                             values="mean_ms")
    if not {"ONE", "QUORUM", "ALL"} <= set(wide.columns):
        return np.array([])
    return (np.log(wide.QUORUM / wide.ONE) - 0.5 * np.log(wide.ALL / wide.ONE)).to_numpy()


def _twins(sets, name):
    """The data sets measuring what ``name`` measures: the same operations on the same
    cluster (george0st's Cassandra 5 writes under two compaction settings)."""
    cluster, table = sets[name][0], sets[name][1]
    return {n for n, data in sets.items() if data[0] == cluster
            and set(data[1].operation) == set(table.operation)}


#: Smallest spread of the level-step prior (log units): a few clusters say little.
STEP_SD_FLOOR = 0.5
#: How the level step carried over grows with a cluster's own latency
#: (`Prior.level_step_scale`): midway in log between "the same time" (0) and "the same
#: ratio to ONE" (1). Across the eight single-region data sets' full fits a lone
#: request's step is 1.2-63 ms where its ONE takes 0.6-66 ms: in time the step carries
#: over from the other clusters' level sources with a log error of rms 0.49 among them
#: (C reads e^0.87) but misses the slower saulolks cluster by e^2-e^3.6; as a ratio it
#: misses george0st's by e^0.5-0.7 and C's writes by e^1.1 (benchmarks/level_steps.py;
#: docs/cassandra/calibration.md, "The level step across clusters").
STEP_SCALE = 0.5


def unloaded_step(data, point, structure) -> tuple[np.ndarray, np.ndarray]:
    """log(latency at ALL - latency at ONE) and log(latency at ONE) of one client
    thread (ms) per operation of a data set (``data`` as `data_sets` gives it), by its
    full fit ``point``: what the highest level costs a lone request there
    (`Prior.level_step_mean`), and where."""
    _, table, cores, client_cores, _ = data
    return lone_levels(demands_of(point), step_rows(rows_of(table)), structure, cores,
                       client_cores)


def level_miss_of(job) -> float:
    """How far the anchors of a data set's full calibrated model miss each level they
    are told to leave out (`sizing.network_model.Anchors.level_miss`; ``job``: data as
    `data_sets` gives it, structure)."""
    (_, table, cores, client_cores, places), structure = job
    return _model(table, structure, Prior.vague(), cores, client_cores,
                  places).anchors.level_miss()


def _floored_sd(values, floor: float) -> float:
    """Sample standard deviation of ``values``, at least ``floor`` (a single value: the
    floor)."""
    return max(float(np.std(values, ddof=1)) if len(values) > 1 else 0.0, floor)


def level_prior(sets, steps, misses, leave_out=None, base=None, source="",
                scale=STEP_SCALE):
    """``base`` (default vague) with the level prior of `LEVEL_SOURCES` except
    ``leave_out`` and its twins (`_twins`): the unloaded level step of their full fits
    (``steps``: data set -> `unloaded_step`) less ``scale`` times their log ONE,
    pooled and per operation, the middle levels' shape, and the rms of how far their
    anchors miss a level left out (``misses``: data set -> `level_miss_of`)."""
    base = base or Prior.vague()
    out = _twins(sets, leave_out) if leave_out is not None else set()
    sources = [n for n in LEVEL_SOURCES if n not in out]
    if not sources:
        return base

    def carried(names):
        step = np.concatenate([steps[n][0] for n in names])
        one = np.concatenate([steps[n][1] for n in names])
        values = step - scale * one
        return float(np.mean(values)), _floored_sd(values, STEP_SD_FLOOR)
    pooled = carried(sources)
    # each operation's own, from the sources that measured it (one operation each)
    by_operation = []
    for operation in ("read", "write"):
        own = [n for n in sources if set(sets[n][1].operation) == {operation}]
        if own:
            by_operation.append((operation, *carried(own)))
    shapes = np.concatenate([level_shape(sets[n][1]) for n in sources])
    shape_sd = max(float(np.sqrt(np.nanmean(shapes ** 2))), SHAPE_SD_FLOOR)
    return replace(base, source=f"{source}level prior of {', '.join(sources)}",
                   level_shape_sd=shape_sd, level_step_mean=pooled[0],
                   level_step_sd=pooled[1],
                   level_miss=float(np.sqrt(np.mean([misses[n] ** 2 for n in sources]))),
                   level_step_by_operation=tuple(by_operation),
                   level_step_scale=scale,
                   # every data set here is fitted as 3 nodes of 3 replicas (rows_of)
                   level_step_replicas=3)


#: Smallest spread (log units) of the window prior: one geo-distributed cluster says
#: little about another's.
WINDOW_SD_FLOOR = 1.0


def _carried(prior, name, values, floor, source):
    """``prior`` with coordinate ``name`` at the mean of the fitted ``values`` (log),
    their spread at least ``floor`` (unchanged without values)."""
    if not values:
        return prior
    i = COORDINATES.index(name)
    mean, sd = prior.mean.copy(), prior.sd.copy()
    mean[i] = float(np.mean(values))
    sd[i] = _floored_sd(values, floor)
    return replace(prior, mean=mean, sd=sd, source=f"{prior.source}; {source}")


def with_window(prior, sets, points, leave_out_cluster=None):
    """``prior`` with the ``link_window`` of the full fits (``points``, by data set
    name) of the geo-distributed data sets outside ``leave_out_cluster`` (unchanged if
    there are none)."""
    i = COORDINATES.index("link_window")
    names = [n for n, data in sets.items()
             if data[4] != (None,) and data[0] != leave_out_cluster]
    return _carried(prior, "link_window", [points[n][i] for n in names],
                    WINDOW_SD_FLOOR, "link window of the full fits of the "
                    f"geo-distributed {', '.join(names)}")


#: Smallest spread (log units) of the mutation-ratio prior: one or two clusters say
#: little about another's storage engine settings.
MUTATION_SD_FLOOR = 0.5
#: Smallest spread (log units) of the coordinator-share prior: a factor e either way,
#: as wide as the window's, since one or two clusters say little about how another
#: splits a request's work between its coordinator and its replicas.
COORDINATOR_SD_FLOOR = 1.0


def joint_fit(job):
    """Fit of one cluster's reads and writes together (vague prior): its point, from
    which the mutation ratio and the coordinator share carry over."""
    cluster, structure, (table, cores, client_cores, places) = job
    base = _base(structure)
    return cluster, structure, _fit(table, base, Prior.vague(), cores, client_cores,
                                    places).point


def clusters_with_both(sets):
    """cluster -> (reads and writes in one table, cores, client cores, placements), for
    the clusters in one data centre measured with both operations. A mutation's cost
    against a data read carries over, like the level prior, from clusters whose
    latency is node work: across data centres (Karpenko D) it is round trips and link
    windows, and node work adds a few ms that the fit splits by the prior."""
    out = {}
    for name, (cluster, table, cores, client_cores, places) in sets.items():
        if places != (None,):
            continue
        if name.endswith("reads") and name.replace("reads", "writes") in sets:
            writes = sets[name.replace("reads", "writes")][1]
            out[cluster] = (pd.concat([table, writes], ignore_index=True), cores,
                            client_cores, places)
    return out


def with_mutation(prior, joints, leave_out_cluster=None):
    """``prior`` with the ``mutation_ratio`` and the ``coordinate_share`` of the joint
    read-and-write fits (``joints``, by cluster) outside ``leave_out_cluster``
    (unchanged if none). Rows of one operation cannot split a request's work between
    its coordinator (the same for reads and writes) and its replicas (a data read or
    a mutation); the joint fits can, and the split sets what an operation never
    measured costs (protocol (d))."""
    clusters = [cluster for cluster in joints if cluster != leave_out_cluster]
    which = ", ".join(c.upper() for c in clusters)
    for name, floor, what in (("mutation_ratio", MUTATION_SD_FLOOR, "mutation ratio"),
                              ("coordinate_share", COORDINATOR_SD_FLOOR,
                               "coordinator share")):
        i = COORDINATES.index(name)
        prior = _carried(prior, name, [joints[c][i] for c in clusters], floor,
                         f"{what} of the joint read and write fits of cluster(s) "
                         f"{which}")
    return prior


def rows_of(table):
    """Rows in the form `sizing.closed_network.predict` takes."""
    n = len(table)
    return dict(threads=table.threads.to_numpy(float), think_ms=table.think_ms.to_numpy(float),
                nodes=np.full(n, 3), replicas=np.full(n, 3),
                quorum=table.consistency.map(LEVELS).to_numpy(),
                write=(table.operation == "write").to_numpy())


def _line(x_fit, y_fit, x):
    slope, intercept = np.polyfit(x_fit, y_fit, 1)
    return slope * x + intercept


def naive(table, protocol, fitted, held):
    """The naive guess of ``protocol`` for the held-out rows."""
    def at(level, threads):
        # repeated runs of one point: their mean
        s = table[table.consistency == level].groupby("threads").mean_ms.mean()
        return s.reindex(threads).to_numpy()
    if protocol == "a":
        return at("ONE", held.threads.to_numpy())
    if protocol == "b":
        out = np.empty(len(held))
        for i, (_, row) in enumerate(held.iterrows()):
            known = [lv for lv in LEVELS if lv != row.consistency]
            y = [at(lv, [row.threads])[0] for lv in known]
            out[i] = _line([LEVELS[k] for k in known], y, LEVELS[row.consistency])
        return out
    if protocol == "c":
        out = np.empty(len(held))
        for i, (_, row) in enumerate(held.iterrows()):
            s = fitted[fitted.consistency == row.consistency]
            out[i] = _line(s.threads, s.mean_ms, row.threads)
        return out
    if protocol == "d":
        # writes = reads at the same level and threads (``table``: the reads)
        return table.groupby(["consistency", "threads"]).mean_ms.mean().reindex(
            pd.MultiIndex.from_frame(held[["consistency", "threads"]])).to_numpy()
    raise ValueError(protocol)


def splits(table):
    """protocol -> list of (fitted rows, held-out rows)."""
    small = table.threads <= np.median(np.unique(table.threads))
    out = {"a": [(table[table.consistency == "ONE"], table[table.consistency != "ONE"])],
           "b": [(table[table.consistency != lv], table[table.consistency == lv])
                 for lv in LEVELS],
           "c": [(table[small], table[~small])]}
    if table.consistency.nunique() < len(LEVELS):
        del out["b"]  # two levels: (a) already fits one and predicts the other
    return out


def _base(structure):
    """The structure fitted for ``structure``: "auto" starts from the first candidate."""
    return CANDIDATES[0] if structure == "auto" else structure


def _fit(table, structure, prior, cores, client_cores, places=(None,)):
    """The fit of ``table`` (vague prior, no anchors) in the candidate placement whose
    fit is best."""
    x = table.throughput.to_numpy(float) if "throughput" in table else None
    return min((fit(rows_of(table), table.mean_ms.to_numpy(float), structure, prior,
                    cores, client_cores, throughput=x, geography=g) for g in places),
               key=lambda f: f.cost)




def _model(table, structure, prior, cores, client_cores, places=(None,)):
    """The calibrated model of ``table`` as `cassandra calibrate` builds it
    (`sizing.network_model.calibrated`: the clients' time outside the latency read off
    the throughputs where the rows have them, replacing the think time the file name
    states), in the candidate placement whose fit is best; structure "auto": the
    candidate of `CANDIDATES` that predicts the fitted rows' own held-out parts
    best (`sizing.structure_choice`)."""
    table = table.assign(quorum=table.consistency.map(LEVELS), nodes=3, replicas=3)
    if places == (None,):
        # as calibrate without --datacentres: rows with the wide-area signature
        # are fitted across data centres of their own
        places = (placement(table, 3, 3)[0],)
    base = _base(structure)
    model = min((calibrated(table, base, prior, cores, client_cores, g)
                 for g in places), key=lambda m: m.fit.cost)
    if structure != "auto":
        return model
    geography = model.fit.geography
    chosen = choose(table, CANDIDATES, base, prior, cores, client_cores,
                    geography)[0]
    return model if chosen == base else calibrated(table, chosen, prior, cores,
                                                   client_cores, geography)


def _scored(model, held, protocol, guess, name, structure):
    rows = rows_of(held)
    m = held.mean_ms.to_numpy()
    # the bands from as many posterior draws as `cassandra predict` takes (the default)
    low, high = model.interval(rows)
    low0, high0 = model.interval(rows, extrapolation=False)
    return dict(data=name, structure=structure, protocol=protocol, measured=m,
                operation=held.operation.to_numpy(), consistency=held.consistency.to_numpy(),
                threads=held.threads.to_numpy(), low=low, high=high,
                predicted=model.predict(rows)[0], width=high / low,
                plain=model.predict(rows, anchored=False)[0], naive=guess,
                inside=(m >= low) & (m <= high),
                inside_posterior=(m >= low0) & (m <= high0), chosen=model.fit.structure,
                prior_only=",".join(model.fit.resting_on_prior(replicas=model.replicas)))


def full_fit(job):
    """Fits of all rows of one data set with the vague prior (for the priors), one per
    candidate placement: their points and costs."""
    name, structure, (cluster, table, cores, client_cores, places) = job
    base = _base(structure)
    fits = [_fit(table, base, Prior.vague(), cores, client_cores, (g,)) for g in places]
    return name, structure, [f.point for f in fits], [f.cost for f in fits]


def _region(index):
    """The client's region in placement ``index`` of `PLACEMENTS`."""
    return PLACEMENTS[index].split("client_")[1].removesuffix(".toml")


def placements(sets, costs):
    """Per (cluster, structure), the index of the placement whose full fits of all the
    cluster's data sets (``costs``: (data set, structure) -> cost per placement) cost
    least together: one client location per cluster."""
    out = {}
    for (name, structure), cost in costs.items():
        key = (sets[name][0], structure)
        out[key] = out.get(key, 0.0) + np.asarray(cost)
    return {key: int(np.argmin(total)) for key, total in out.items()}


def heldout(job):
    """Held-out rows of every protocol for one data set and structure."""
    name, structure, (cluster, table, cores, client_cores, places), prior, writes = job
    out = []
    for protocol, cases in splits(table).items():
        for fitted, held in cases:
            model = _model(fitted, structure, prior, cores, client_cores, places)
            out.append(_scored(model, held, protocol,
                               naive(table, protocol, fitted, held), name, structure))
    if writes is not None:
        model = _model(table, structure, prior, cores, client_cores, places)
        out.append(_scored(model, writes, "d", naive(table, "d", table, writes), name,
                           structure))
    return out


def publish(text: str, path: str | None) -> None:
    """Print a benchmark's markdown, and write it to ``path`` where one is given."""
    print(text)
    if path:
        Path(path).write_text(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="write the markdown tables here")
    parser.add_argument("--write-prior", help="write the default prior (all data sets, "
                        "best structure) to this TOML")
    parser.add_argument("--rows", help="write every held-out row (measured, predicted, "
                        "naive guess, 95%% band, errors) to this CSV")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--structures", default=",".join(STRUCTURES))
    parser.add_argument("--placement", choices=("all-rows", "fitted-rows", "none"),
                        default="all-rows",
                        help="where the geo-distributed data sets' client stood: the "
                        "placement the full rows fit best (default), each fit's "
                        "own choice from its fitted rows, or none: fitted as one data "
                        "centre, as calibrate does without --datacentres")
    parser.add_argument("--step-scale", type=float, default=STEP_SCALE,
                        help="how the level-step prior grows with a cluster's latency: "
                        "0 in time, 1 as a ratio to ONE (default %(default)s)")
    parser.add_argument("--prior", choices=("levels", "others", "vague"),
                        default="levels",
                        help="priors of the held-out fits: vague parameters with the "
                        "level prior of the other data sets (default), full fits of the "
                        "other clusters, or the vague prior (for comparison)")
    args = parser.parse_args()
    structures = args.structures.split(",")
    sets = data_sets()
    started = time.time()
    both = clusters_with_both(sets)
    with ProcessPoolExecutor(args.workers) as pool:
        fulls = list(pool.map(full_fit, [(n, s, sets[n]) for n in sets
                                         for s in structures]))
        costs = {(n, s): c for n, s, _, c in fulls}
        chosen = placements(sets, costs)
        placed = {(n, s): chosen[(sets[n][0], s)] for n, s in costs}
        points = {(n, s): p[placed[(n, s)]] for n, s, p, _ in fulls}
        joints = {(c, s): p for c, s, p in pool.map(
            joint_fit, [(c, s, both[c]) for c in both for s in structures])}
        # what the top level costs a lone request in each level source's full fit
        steps = {s: {n: unloaded_step(sets[n], points[(n, s)], _base(s))
                     for n in LEVEL_SOURCES} for s in structures}
        pairs = [(n, s) for s in structures for n in LEVEL_SOURCES]
        found = pool.map(level_miss_of, [(sets[n], _base(s)) for n, s in pairs])
        misses = {s: {} for s in structures}
        for (n, s), miss in zip(pairs, found):
            misses[s][n] = miss
        jobs = []
        for name, data in sets.items():
            for s in structures:
                others = np.array([points[(n, s)] for n in sets if sets[n][0] != data[0]])
                prior = Prior.from_fits(others, f"full fits of the clusters other than "
                                                f"{data[0]}, structure {s}")
                if args.prior == "vague":
                    prior = Prior.vague()
                if args.prior == "levels":
                    prior = with_window(level_prior(sets, steps[s], misses[s],
                                                    leave_out=name,
                                                    scale=args.step_scale), sets,
                                        {n: points[(n, s)] for n in sets}, data[0])
                    prior = with_mutation(prior, {c: joints[(c, s)] for c in both},
                                          data[0])
                writes = None
                if name.endswith("reads"):
                    writes = sets[name.replace("reads", "writes")][1]
                placed_data = data if args.placement == "fitted-rows" else \
                    (*data[:4], (None,) if args.placement == "none" else
                     (data[4][placed[(name, s)]],))
                jobs.append((name, s, placed_data, prior, writes))
        # the geo-distributed fits (four placements each) are the longest: first
        order = sorted(range(len(jobs)), key=lambda i: jobs[i][2][4] == (None,))
        done = dict(zip(order, pool.map(heldout, [jobs[i] for i in order])))
        results = [r for i in range(len(jobs)) for r in done[i]]
    elapsed = time.time() - started
    table = summarise(results, structures)
    text = render(table, structures, elapsed, args.step_scale)
    geo = sorted({sets[n][0] for n in sets if sets[n][4] != (None,)})
    text += ("\nClient placement of each geo-distributed cluster: the one whose full fits "
             "of all its rows (reads and writes) cost least together (costs for "
             + ", ".join(map(_region, range(len(PLACEMENTS)))) + "): " + "; ".join(
                 f"cluster {c.upper()} {s}: {_region(chosen[(c, s)])} (" + ", ".join(
                     f"{v:.1f}" for v in sum(np.asarray(costs[(n, s)]) for n in sets
                                             if sets[n][0] == c)) + ")"
                 for c in geo for s in structures)
             + {"all-rows": ". The held-out fits use it.\n",
                "fitted-rows": ". The held-out fits choose their own from their fitted "
                               "rows.\n",
                "none": ". The held-out fits place no data centres (one data centre, "
                        "as calibrate without --datacentres).\n"}[args.placement])
    publish(text, args.out)
    if args.rows:
        row_table(results).to_csv(args.rows, index=False, float_format="%.6g")
    if args.write_prior:
        best = winner(table, structures)
        prior = Prior.from_fits(np.array([points[(n, best)] for n in sets]),
                                f"full fits of {', '.join(sets)}, structure {best} "
                                "(benchmarks/cassandra_heldout.py)")
        if args.prior == "levels":
            prior = with_window(level_prior(sets, steps[best], misses[best],
                                            source="vague parameters; ",
                                            scale=args.step_scale), sets,
                                {n: points[(n, best)] for n in sets})
            prior = with_mutation(prior, {c: joints[(c, best)] for c in both})
        with open(args.write_prior, "w") as handle:
            handle.write(f"# default prior of sizing.network_fit, written by\n"
                         f"# .venv/bin/python benchmarks/cassandra_heldout.py "
                         f"--write-prior {args.write_prior}\nstructure = \"{best}\"\n\n"
                         + prior.to_toml())


def row_table(results) -> pd.DataFrame:
    """One line per held-out row of every case: where it is, what was measured, the
    model's prediction with its 95% band and the naive guess, and their errors (%)."""
    frames = []
    for r in results:
        frame = pd.DataFrame({key: r[key] for key in (
            "operation", "consistency", "threads", "measured", "predicted", "low", "high",
            "naive")})
        frame.insert(0, "protocol", r["protocol"])
        frame.insert(0, "structure", r["structure"])
        frame.insert(0, "data", r["data"])
        frame["error_pct"] = (frame.predicted / frame.measured - 1) * 100
        frame["naive_error_pct"] = (frame.naive / frame.measured - 1) * 100
        frame["inside"] = r["inside"]
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def summarise(results, structures):
    """One row per data set, protocol and structure: MAPE, max, naive MAPE, coverage."""
    records = []
    for r in results:
        err = np.abs(r["predicted"] / r["measured"] - 1) * 100
        naive_err = np.abs(r["naive"] / r["measured"] - 1) * 100
        plain = np.abs(r["plain"] / r["measured"] - 1) * 100
        records.append(dict(data=r["data"], protocol=r["protocol"],
                            structure=r["structure"], err=err, naive=naive_err, plain=plain,
                            inside=r["inside"], inside_posterior=r["inside_posterior"],
                            width=r["width"], chosen=r["chosen"], prior_only=r["prior_only"]))
    frame = pd.DataFrame(records)
    grouped = frame.groupby(["data", "protocol", "structure"], sort=False).agg(
        err=("err", lambda v: np.concatenate(list(v))),
        plain=("plain", lambda v: np.concatenate(list(v))),
        naive=("naive", lambda v: np.concatenate(list(v))),
        inside=("inside", lambda v: np.concatenate(list(v))),
        inside_posterior=("inside_posterior", lambda v: np.concatenate(list(v))),
        width=("width", lambda v: np.concatenate(list(v))),
        chosen=("chosen", lambda v: ",".join(v)),
        prior_only=("prior_only", lambda v: ";".join(sorted(set(v)))))
    return grouped.reset_index()


#: Protocols with a target in issue 27; (d), fit reads and predict writes, is reported
#: without one and does not choose the structure.
SCORED = ("a", "b", "c")


def scores(table, structures, column="err"):
    """Per structure the mean over data sets and scored protocols of the MAPE."""
    scored = table[table.protocol.isin(SCORED)]
    return {s: float(np.mean([e.mean() for e in scored[scored.structure == s][column]]))
            for s in structures}


#: Issue 27's targets: per protocol the largest MAPE (%), which must also beat the naive
#: guess; per data set the least share of its held-out rows of (a)-(c) inside their 95%
#: bands.
TARGET_MAPE = {"a": 10.0, "b": 5.0, "c": 5.0}
TARGET_INSIDE = 0.9


def targets_met(table, structure) -> tuple[int, int]:
    """(targets of issue 27 that ``structure`` meets, targets in all): every data set
    and `SCORED` protocol within `TARGET_MAPE` and better than its naive guess, and
    every data set with at least `TARGET_INSIDE` of its held-out rows inside."""
    mine = table[(table.structure == structure) & table.protocol.isin(SCORED)]
    cases = [r.err.mean() <= TARGET_MAPE[r.protocol] and r.err.mean() < r.naive.mean()
             for _, r in mine.iterrows()]
    inside = [np.concatenate(list(g.inside)).mean() >= TARGET_INSIDE
              for _, g in mine.groupby("data")]
    return int(sum(cases) + sum(inside)), len(cases) + len(inside)


def winner(table, structures):
    """The fixed structure with the smallest mean MAPE over data sets and `SCORED`
    protocols: ``auto`` is a procedure (a calibration per split and candidate, over the
    fit-time target), not a default. (`targets_met` is reported beside it, not used:
    the rule was set before the structures it would now pick between.)"""
    score = scores(table, [s for s in structures if s != "auto"] or structures)
    return min(score, key=score.get)


def render(table, structures, elapsed, scale=STEP_SCALE):
    lines = ["| data set | protocol | naive guess | " + " | ".join(structures) + " |",
             "|---|---|---|" + "---|" * len(structures)]
    for (data, protocol), group in table.groupby(["data", "protocol"], sort=False):
        cells = []
        naive_mape = group.naive.iloc[0].mean()
        for s in structures:
            row = group[group.structure == s].iloc[0]
            mark = "**" if row.err.mean() < naive_mape else ""
            cells.append(f"{mark}{row.err.mean():.1f} / {row.err.max():.1f}{mark} "
                         f"({100 * row.inside.mean():.0f}%)")
        lines.append(f"| {data} | {protocol} | {naive_mape:.1f} / "
                     f"{group.naive.iloc[0].max():.1f} | " + " | ".join(cells) + " |")
    score = scores(table, structures)
    plain = scores(table, structures, "plain")
    lines.append("")
    lines.append(f"Level-step prior: log(ALL - ONE) - {scale:g} log(ONE) of a lone request "
                 "(`--step-scale`; 0: the step carries over in ms, 1: as a ratio).")
    lines.append("Without anchors (the model's own curve), mean MAPE over (a)-(c): " + ", ".join(
        f"{s} {v:.1f}%" for s, v in plain.items()) + ".")
    scored = table[table.protocol.isin(SCORED)]
    naive_mean = np.mean([g.naive.iloc[0].mean()
                          for _, g in scored.groupby(["data", "protocol"])])
    lines.append("Mean over data sets and protocols (a)-(c) of the MAPE (anchored): "
                 + ", ".join(f"{s} {v:.1f}%" for s, v in score.items())
                 + f"; naive guesses {naive_mean:.1f}%.")
    beats = {s: int(sum(r.err.mean() < r.naive.mean() for _, r in
                        table[table.structure == s].iterrows())) for s in structures}
    total = len(table[table.structure == structures[0]])
    lines.append("Cases (data set x protocol) where the structure beats the naive guess: "
                 + ", ".join(f"{s} {beats[s]}/{total}" for s in structures) + ".")
    for column, what in (("inside", "with the anchors' extrapolation error"),
                         ("inside_posterior", "posterior and anchor spread only")):
        coverage = []
        for s in structures:
            mine = scored[scored.structure == s]
            per_set = [np.concatenate(list(g[column])).mean()
                       for _, g in mine.groupby("data")]
            everything = np.concatenate(list(mine[column])).mean()
            coverage.append(f"{s} {100 * everything:.0f}% (lowest data set "
                            f"{100 * min(per_set):.0f}%)")
        lines.append(f"Held-out rows of (a)-(c) inside their 95% prediction interval "
                     f"({what}): " + ", ".join(coverage) + ".")
    widths = {s: np.concatenate(list(scored[scored.structure == s].width))
              for s in structures}
    lines.append("Width of those intervals (upper end over lower end), median (90th "
                 "percentile) over the held-out rows: " + ", ".join(
                     f"{s} {np.median(w):.2f} ({np.quantile(w, 0.9):.2f})"
                     for s, w in widths.items()) + ".")
    met = {s: targets_met(table, s) for s in structures}
    lines.append(f"Targets of issue 27 met ((a) within {TARGET_MAPE['a']:g}%, (b) and (c) "
                 f"within {TARGET_MAPE['b']:g}%, each better than its naive guess; "
                 f"{100 * TARGET_INSIDE:g}% of each data set's rows inside): "
                 + ", ".join(f"{s} {m} of {n}" for s, (m, n) in met.items()) + ".")
    if "auto" in structures:
        lines.append("")
        lines.append("Structures auto chose (per fit, by the fitted rows' own held-out "
                     "error):")
        lines.append("")
        for _, r in table[table.structure == "auto"].iterrows():
            lines.append(f"- {r.data} ({r.protocol}): {r.chosen}")
    lines.append("Winner by mean MAPE among the fixed structures: "
                 f"{winner(table, structures)}. Run time {elapsed:.0f} s.")
    lines.append("")
    lines.append("Coordinates resting on the prior (posterior sd > half the prior's), per "
                 "data set and protocol, structure " + winner(table, structures) + ":")
    lines.append("")
    best = table[table.structure == winner(table, structures)]
    for _, r in best.iterrows():
        lines.append(f"- {r.data} ({r.protocol}): {r.prior_only or 'none'}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
