"""What a calibration or a prediction of the closed-network Cassandra model says
besides its numbers (`sizing.cluster_calibration` warns them; `sizing.mixes` asks them
of a plan's rows): the clients' time outside the latency, what one measured level
leaves to the prior, repeats of a run that disagree, a row the fit misses far more
than the others, levels the model
merges, wide-area rows fitted in one data centre, rows past the fitted loads or past
the busiest fitted row, bands wider than an order of magnitude.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from forkjoin_sim.errors import counted, number_text
from sizing.closed_network import DEMANDS
from sizing.geography import SETTLED_RISE, settled, wide_local_hops
from sizing.network_fit import demands_of, lone_levels, step_rows
from sizing.network_model import NetworkModel, given_pauses, reads_of, rows_of_table, \
    stated_pauses


#: A row the fit misses far more than the others (`lone_misses`): the model's own
#: curve misses it by more than a factor `LONE_MISS_RATIO` either way, and by more than
#: `LONE_MISS_FACTOR` times the median miss of the other rows (both in log), in a file
#: of at least `LONE_MISS_ROWS` rows. A mean in the wrong unit (x10, x1000) stays past
#: both after the fit has leaned towards it. No published file at its default options
#: has such a row; the nearest, saulolks rows10000_think500_run1's read ALL 10 threads
#: (a factor 3.6, 4.7 times the median), rows1000_think500_run2's read ALL 50 threads
#: (a factor 3.5, 10 times).
LONE_MISS_RATIO = 4.0
LONE_MISS_FACTOR = 4.0
#: Of the rows so missed, those whose log miss is at least this share of the largest
#: are named: one row in seconds among rows in ms (missed by a factor 150) pulled the
#: fit so that two right rows beside it were missed by a factor 4.2 and named too.
LONE_MISS_SHARE = 0.5
LONE_MISS_ROWS = 6
#: How the note of `lone_misses` starts (`predict` repeats it).
LONE_MISS_START = "the fit misses "


def fit_notes(model: NetworkModel, table: pd.DataFrame, source) -> list[str]:
    """What `calibrate_cluster` says of a fit besides the parameters resting on the
    prior: the clients' time outside the latency, what one measured level leaves to
    the prior, a row missed far more than the others, a model that misses its rows."""
    fitted, anchors, outside = model.fit, model.anchors, model.outside
    prior, nodes, geography = fitted.prior, model.nodes, fitted.geography
    notes = []
    for note in (levels_out_of_order(table), repeated_runs(table, source.row_name)):
        if note is not None:
            notes.append(note)
    if outside is not None and np.max(outside.residual) > 0.05 * np.min(
            table.mean_ms.to_numpy()):
        times = outside.residual
        some = int(np.count_nonzero(times > 0))
        # a median of 0 (most rows none: noise in a few throughputs) says nothing
        spent = (f"{np.median(times):.4g} ms (median; up to {np.max(times):.4g})"
                 if np.median(times) > 0 else
                 f"up to {np.max(times):.4g} ms (in {some} of {len(times)} rows, none "
                 "in the others)")
        stated = (table.think_ms.to_numpy(float) if "think_ms" in table
                  else np.full(len(table), np.nan))
        how = ("threads / throughput - latency - the stated pause, beside it"
               if np.isfinite(stated).any() else "threads / throughput - latency")
        notes.append(f"the clients spend {spent} per request outside the measured "
                     f"latency ({how}): the model keeps that time between requests, "
                     "interpolated in threads")
    lone = table[np.isfinite(table.throughput) & ~np.isfinite(table.run_mean_ms)
                 & np.isnan(table.rate)] if "run_mean_ms" in table else table.iloc[:0]
    if len(lone):
        notes.append(f"{_listed(list(lone.label), str)}: a mixed run's throughput without "
                     "its other operation's latency (no one row of it at the same "
                     "load and mix, or one without a mean) does not tell the clients' "
                     "time outside the latency, so it is not used; give both "
                     "operations' rows of each mixed run, one per run")
    local = None if geography is None else wide_local_hops(
        geography, dict(zip(DEMANDS, demands_of(fitted.point))))
    if local is not None:
        notes.append(local)
    notes.extend(beyond_round_trips(model, table))
    for operation in sorted(set(table.operation)) if geography is None else ():
        mine = table[table.operation == operation]
        step = prior.level_step(operation == "write")
        if step is not None and mine.quorum.nunique() == 1 \
                and int(mine.replicas.max()) > 1:
            # the prior's step at the fitted lone request's ONE
            pairs = step_rows(dict(write=np.array([operation == "write"]),
                                   nodes=np.array([nodes]),
                                   replicas=np.array([int(mine.replicas.max())])))
            own_step, own_one = lone_levels(demands_of(fitted.point), pairs,
                                            fitted.structure, fitted.cores,
                                            fitted.client_cores)
            one, own = math.exp(own_one[0]), math.exp(own_step[0])
            extra = math.exp(step[0]) * one ** prior.level_step_scale
            power = prior.level_step_scale
            grows = "" if power == 0 else (
                ": the prior's step grows with a cluster's own ONE latency, "
                + ("in proportion" if power == 1 else "as its square root"
                   if power == 0.5 else f"as its power {power:g}"))
            measured = " and ".join(sorted({str(level) for level in mine.consistency}))
            replicas = int(mine.replicas.max())
            # the prior speaks of ALL of its sources' replicas (`step_rows`)
            sources = "" if replicas == prior.level_step_replicas else \
                f" at ALL of {prior.level_step_replicas} replicas, as its sources ran"
            others = table[(table.operation != operation)
                           & ~table.quorum.isin(set(mine.quorum))]
            shared = "" if others.empty else (
                f"; under load the {others.operation.iloc[0]}s, measured at "
                + " and ".join(sorted({str(level) for level in others.consistency}))
                + ", set it too (the replicas' work is shared): calibrate the "
                f"{operation} rows alone to predict their levels from the prior "
                "only")
            notes.append(
                f"the {operation}s were measured at one level, {measured}: what the "
                f"others cost rests on the prior and the model's structure (a lone "
                f"{operation}, {one:.3g} ms at ONE (1 replica) in the model, pays "
                f"{own:.3g} ms more at ALL (all {replicas} replicas) there; the prior "
                f"alone says about {extra:.3g} ms{sources}, within a factor "
                f"{math.exp(1.96 * step[1]):.2g} either way at 95% for a lone request on "
                f"the clusters it was fitted on{grows}; a cluster that collapses under "
                f"load can pay far more, which one level's rows cannot show){shared}")
    lone = lone_misses(source.name, table,
                       model.predict(rows_of_table(table), anchored=False)[0],
                       source.row_name)
    if lone is not None:
        notes.append(lone)
    if anchors.spread > 0.10:
        notes.append(f"the model misses its own rows by {100 * anchors.spread:.0f}% rms; "
                     "predictions lean on the anchors (measured rows nearby)")
    return notes


#: A fitted level settled at light load (`sizing.geography.settled`) whose lightest
#: row takes more than this share above the round trips ``--datacentres`` gives for
#: it (`beyond_round_trips`): more than published round trips of one pair differ
#: between sources (112.5-117.4 ms for eu-west-2 and ap-south-1, 2018-2025).
BEYOND_ROUND_TRIPS = 0.05
#: What every note of `beyond_round_trips` says (`predict` repeats it for rows past
#: the fitted threads).
BEYOND_MARK = "more than the round trips --datacentres gives"
#: The model's own rise of that level from the most fitted threads to twice as many
#: past which `beyond_round_trips` says the fit queued the time.
QUEUED_RISE = 0.05


def beyond_round_trips(model: NetworkModel, table: pd.DataFrame) -> list[str]:
    """Per operation, the doubt about a fit across given data centres whose lowest
    measured level stays flat well above its round trips: the rows cannot tell
    whether that time is work at the nodes (which queues, so the level slows past the
    fitted threads) or the client's, or a longer path than the file gives (which does
    not). Karpenko D's ONE: 126 ms flat against a 113 ms round trip; its fits put
    the 13 ms in the coordinating node's work, and ONE rises 21-25% at 1,000 threads
    fitted on 100-500 (measured: 1%)."""
    geography = model.fit.geography
    if geography is None or geography.fitted:
        return []
    closed = np.isnan(table.rate.to_numpy(float)) if "rate" in table \
        else np.ones(len(table), bool)
    single = (table.reads.isin([0.0, 1.0]).to_numpy() if "reads" in table
              else np.ones(len(table), bool))
    notes = []
    for operation in sorted(set(table.operation)):
        mine = table[(table.operation == operation) & closed & single]
        if mine.empty:
            continue
        low = mine.quorum.min()
        level = mine[mine.quorum == low]
        latency = level.groupby("threads").mean_ms.mean()
        if len(latency) < 2 or not settled(latency):
            continue
        least = float(geography.least_ms([low])[0])
        lightest = float(latency.iloc[0])
        if lightest <= (1 + BEYOND_ROUND_TRIPS) * least:
            continue
        flat = latency.index[np.cumprod(latency.to_numpy()
                                        <= (1 + SETTLED_RISE) * lightest) > 0]
        most = latency.index.max()
        probe = level[level.threads == most].iloc[:1]
        rows = rows_of_table(pd.concat([probe, probe.assign(threads=2 * most)]))
        now, twice = model.predict(rows, anchored=False)[0]
        name = str(level.consistency.iloc[0])
        where = (f"the fit puts most of it in work at the nodes: in the model {name} "
                 f"goes from {now:.4g} ms at {most:,.6g} threads to {twice:.4g} ms at "
                 f"{2 * most:,.6g}" if twice > (1 + QUEUED_RISE) * now else
                 f"the fit keeps it off the queues ({name} {now:.4g} ms at "
                 f"{most:,.6g} threads, {twice:.4g} ms at {2 * most:,.6g} in the model)")
        notes.append(
            f"the {operation}s at {name} take {lightest:.4g} ms at "
            f"{latency.index[0]:,.6g} threads, {lightest - least:.3g} ms {BEYOND_MARK} "
            f"them ({least:.4g} ms), and stay within "
            f"{100 * SETTLED_RISE:.0f}% of it up to {flat.max():,.6g} threads: the rows "
            "cannot tell whether that time is work at the nodes, which queues, or the "
            "client's, or a longer path than the file "
            f"says, which does not; {where}. If the client's round trip to its "
            "coordinator is longer than the file says, measure it there (ping) and "
            "give it")
    return notes


def prediction_notes(model: NetworkModel, mrows, throughput,
                     row_name=lambda i: f"row {i + 1}", mix_given=None) -> list[str]:
    """What a prediction says of its query rows (``mrows``, predicted ``throughput``;
    ``row_name(i)`` names the i-th in a message) besides the numbers: rows past the
    model's capacity, parameters resting on the prior, a fit that misses its own
    rows, and where the rows reach past what the model was fitted on.

    ``mix_given``: per row, whether it gave its run's share of reads (a
    ``read_fraction`` cell); None (a grid, or not known) counts as not given. Rows of
    one operation asked of a model fitted on mixed runs are told how to ask for the
    fitted mix (`MIX_HINT`) only where they did not give one."""
    notes = []
    rate = mrows["rate"]
    for i in np.flatnonzero(np.isfinite(rate) & (throughput < (1 - 1e-6) * rate)):
        notes.append(f"{row_name(i)} offers {rate[i]:.6g} ops/s, past the model's "
                     f"capacity ({throughput[i]:.6g} ops/s there): its latency is that "
                     "of a backlog growing through a finite run, not a steady state")
    resting = model.meta.get("resting_on_prior", [])
    if resting:
        notes.append(f"{', '.join(resting)} rest on the prior; the intervals carry the "
                     "prior's spread")
    for note in model.meta.get("warnings", []):
        if note.startswith(("the model misses its own rows", LONE_MISS_START)):
            notes.append(note)
    fitted = model.anchors
    for write, operation in ((True, "writes"), (False, "reads")):
        if np.any(mrows["write"] == write) and not np.any(fitted.write == write):
            notes.append(f"the model was fitted without {operation}; their cost against "
                         "the other operation's rests on the prior's mutation ratio "
                         "and coordinator share and on the model's structure, as no "
                         f"measured row corrects them: their intervals hold what the "
                         "fitted rows allow, not how far the structure may miss an "
                         "operation it never saw (held out on published clusters, a "
                         "mean miss of 4-36% per data set: "
                         "docs/cassandra/calibration.md)")
    mixed_note = _runs_unlike_the_fitted(fitted, mrows, row_name, mix_given)
    if mixed_note is not None:
        notes.append(mixed_note)
    closed = np.isnan(rate)
    fitted_open = fitted.is_open()
    for asked, had, kind, other in ((closed, ~fitted_open, "closed-loop rows (threads)",
                                     "open-loop rows (rate)"),
                                    (~closed, fitted_open, "open-loop rows (rate)",
                                     "closed-loop rows (threads)")):
        if np.any(asked) and not np.any(had):
            notes.append(f"the model was fitted on {other} only: its {kind} rest on the "
                         "model's own curve, without measured rows of their kind to "
                         "anchor them; their intervals hold what the fitted rows "
                         "allow, not how far the structure may miss them")
    think = np.asarray(mrows.get("think_ms", np.zeros(len(rate))), float)
    # a stated pause, or the fitted rows' carried to a row stating none, is time
    # between requests
    paused = np.nan_to_num(given_pauses(mrows)) > 0
    if model.outside is None and model.pause is None and np.any(
            closed & (think == 0) & ~paused):
        notes.append("no fitted closed-loop row had a throughput, so a closed loop's "
                     "predicted throughput is threads / predicted latency: the clients "
                     "are taken to spend no time between requests (a benchmark tool's "
                     "own work per request lowers the real one; fit the measured "
                     "throughputs to count it)")
    unmeasured = _past_the_busiest_row(model, mrows, throughput, closed, fitted_open,
                                       row_name)
    if unmeasured is not None:
        notes.append(unmeasured)
    known = fitted.threads[~fitted_open]
    # a cluster of another size compared at the fitted one's load per node
    threads = np.asarray(model.as_fitted(mrows)["threads"], float)
    sizes = np.unique(np.asarray(mrows.get("nodes", model.nodes)))

    def bound(count, which):
        return (f"{counted(count, 'thread')}, the {which} the model was fitted at"
                if np.all(sizes == model.nodes) else
                f"{count * sizes[0] / model.nodes:,.6g} threads at {sizes[0]:,} nodes, "
                f"the same load per node as the {which} the model was fitted at "
                f"({count:,.6g} threads on {model.nodes})")

    # rows at other pauses are other runs: each row against its own pauses' rows
    mask = fitted.pause_mask(mrows)[:, ~fitted_open] if len(known) else None
    most = np.array([known[m].max() if m.any() else known.max() for m in mask]) \
        if mask is not None else None
    if np.any(closed) and len(known) and np.any(threads[closed] > most[closed]):
        top = float(np.min(most[closed & (threads > most)]))
        notes.append(f"rows past {bound(top, 'most')}, are extrapolated (there "
                     "the model's own curve says how the latency grows, from where the "
                     "last measured rows put it)")
        # there what the fit made of a level's time beyond its round trips decides
        notes.extend(note for note in model.meta.get("warnings", [])
                     if BEYOND_MARK in note)
    if np.any(closed) and len(known) and np.any(threads[closed] < known.min()):
        notes.append(f"rows below {bound(known.min(), 'fewest')}, are extrapolated "
                     "(there the model's own curve says how the latency falls toward a "
                     "lone request's, from where the first measured rows put it)")
    for write, operation in ((False, "reads"), (True, "writes")):
        levels = sorted(set(fitted.quorum[fitted.write == write].tolist()))
        other = [i for i, (w, k) in enumerate(zip(np.asarray(mrows["write"], bool),
                                                  np.asarray(mrows["quorum"])))
                 if w == write and levels and k not in levels]
        if other:
            waits = sorted({int(mrows["quorum"][i]) for i in other})
            notes.append(f"{_listed(other, row_name)}: {operation} at a level the model "
                         f"was not fitted at (waiting for {_replicas(waits)}; fitted at "
                         f"{_replicas(levels)}): the model's structure says what it costs "
                         "over the fitted levels, from the nearest one's measured rows "
                         "(the band adds the levels' own miss)")
    step = model.meta.get("wide_step_ms")
    if step is not None:
        fitted_pairs = set(zip(fitted.write.tolist(), fitted.quorum.tolist()))
        other = [i for i, pair in enumerate(zip(np.asarray(mrows["write"], bool).tolist(),
                                                np.asarray(mrows["quorum"]).tolist()))
                 if pair not in fitted_pairs]
        if other:
            notes.append(f"{_listed(other, row_name)}: the model was fitted on rows whose "
                         f"highest level costs {step:.3g} ms more (a wide-area round "
                         "trip) in one data centre (more nodes than replicas), so "
                         f"{ONE_CENTRE_WIDE_STEP}")
    flat = model.meta.get("flat_one_ms")
    if flat is not None and np.any(mrows["quorum"] > 1):
        notes.append(f"the model was fitted on ONE rows at {flat:.3g} ms or more however "
                     "many threads (a client or replicas in other data centres); its "
                     "levels above ONE place the replicas in one data centre, so if "
                     "they stand in others those rows come out far too fast (calibrate "
                     "with --datacentres DC.toml)")
    return notes


def _replicas(counts) -> str:
    """'2 replicas', '1 and 3 replicas'."""
    counts = [int(k) for k in counts]
    if len(counts) == 1:
        return counted(counts[0], "replica")
    return ", ".join(map(str, counts[:-1])) + f" and {counts[-1]} replicas"


def unpaired_rows(table: pd.DataFrame, row_name) -> str | None:
    """A note naming the rows of mixed runs that found no one row of the other
    operation (`sizing.cluster_calibration.table_of`'s ``paired``), or None."""
    lone = np.flatnonzero(~table.paired.to_numpy(bool))
    if not len(lone):
        return None
    return (f"{_listed(lone, row_name)}: a row of a mixed run without one row of the "
            "other operation at the same load and mix (none, or several that nothing "
            "tells apart): predicted as if the other operation ran at the row's own "
            "level; give each mixed run's read and write rows, one of each, and where "
            "two runs share a load and mix, name each run in a run column")


#: What the note on rows of one operation asked of a model fitted on mixed runs adds
#: where those rows gave no share of reads (a --threads grid, a query file without a
#: read_fraction column): how to ask for the fitted mix.
MIX_HINT = " (a query file with a read_fraction column asks for the fitted mix)"


def _runs_unlike_the_fitted(fitted, mrows, row_name, mix_given=None) -> str | None:
    """A note when every fitted row was of a mixed run and some asked rows are of runs
    of one operation (a --threads grid's), or the other way round: their interference
    comes from the model alone. ``mix_given``: see `prediction_notes`."""
    theirs = fitted.read_shares()
    mine = reads_of(mrows)
    fitted_mixed = (theirs > 0) & (theirs < 1)
    asked_mixed = (mine > 0) & (mine < 1)
    given = (np.zeros(len(mine), bool) if mix_given is None
             else np.asarray(mix_given, bool))
    for had, asked, kind, other in ((fitted_mixed, ~asked_mixed, "runs of one operation",
                                     "mixed runs"),
                                    (~fitted_mixed, asked_mixed, "mixed runs",
                                     "runs of one operation")):
        if had.all() and asked.any():
            shares = ", ".join(f"{100 * r:g}%" for r in sorted(set(theirs.tolist())))
            # rows that gave their share of reads chose one operation: no hint then
            hint = (MIX_HINT if kind == "runs of one operation"
                    and not given[asked].all() else "")
            return (f"{_listed(np.flatnonzero(asked), row_name)}: {kind}, while every "
                    f"fitted row was of {other} ({shares} reads): how the operations "
                    f"interfere there rests on the model alone{hint}")
    return None


#: How much faster than a lower level of the same run a higher level may be measured
#: before a fit says the rows are out of order (none of the published data sets is).
OUT_OF_ORDER = 0.10


#: What makes a run besides its operation and level: its load, its mix, its clients'
#: stated pause and, in a mixed run, the other operation's level (`_runs`'
#: ``partner``).
RUN_KEYS = ["threads", "rate", "reads", "think_ms", "partner"]


def _runs(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with each row's ``partner``: the other operation's quorum in a mixed
    run, -1 in a run of one operation (which keeps its own level as the other's: not
    a key then), and its ``place`` in ``table``."""
    mixed = (table.reads > 0) & (table.reads < 1)
    think = table.think_ms if "think_ms" in table else np.nan
    return table.assign(partner=np.where(mixed, table.other_quorum, -1),
                        place=np.arange(len(table)), think_ms=think)


def levels_out_of_order(table: pd.DataFrame) -> str | None:
    """A note naming rows measured more than `OUT_OF_ORDER` faster than the same run
    (operation, load, mix) at a lower level, or None: waiting for more replicas is
    never faster, so the model, which keeps the levels in order, cannot follow them."""
    found = []
    for _, run in _runs(table).groupby(["operation", *RUN_KEYS], dropna=False,
                                       sort=False):
        for _, row in run.sort_values("quorum").iterrows():
            below = run[run.quorum < row.quorum]
            if len(below) and row.mean_ms < (1 - OUT_OF_ORDER) * below.mean_ms.max():
                lower = below.loc[below.mean_ms.idxmax()]
                found.append(f"{row.label} ({row.mean_ms:.4g} ms) under {lower.label} "
                             f"({lower.mean_ms:.4g} ms)")
    if not found:
        return None
    return (f"{_listed(found, str)}: measured more than {OUT_OF_ORDER:.0%} faster than "
            "the same run at a lower level, while waiting for more replicas is never "
            "faster; the model keeps the levels in order and misses these rows (check "
            "the rows' consistency labels, or give several runs' mean)")


#: Repeats of one run (operation, level name, replicas, load, mix) that differ by
#: more than this share of the faster one are named (`repeated_runs`): a run's repeats usually agree
#: within a few percent; more is noise no fit can be closer than.
REPEAT_SPREAD = 0.10


def repeated_runs(table: pd.DataFrame,
                  row_name=lambda i: f"row {i + 1}") -> str | None:
    """A note naming runs measured more than once whose repeats differ by more than
    `REPEAT_SPREAD` (``row_name(i)`` names the i-th row of ``table``), or None: the fit
    takes every repeat as it is, so neither its own rows nor a prediction there can be
    closer than the repeats are to each other."""
    found = []
    # by the level's name: two names of one quorum (TWO and QUORUM of 3 replicas) are
    # two runs, which `merged_levels` notes
    for _, run in _runs(table).groupby(["operation", "consistency", "replicas",
                                        *RUN_KEYS], dropna=False, sort=False):
        if len(run) > 1 and run.mean_ms.max() > (1 + REPEAT_SPREAD) * run.mean_ms.min():
            slow, fast = run.loc[run.mean_ms.idxmax()], run.loc[run.mean_ms.idxmin()]
            found.append((run.mean_ms.max() / run.mean_ms.min() - 1,
                          f"{slow.label}: {row_name(int(slow.place))} "
                          f"({slow.mean_ms:.4g} ms) and {row_name(int(fast.place))} "
                          f"({fast.mean_ms:.4g} ms)"))
    if not found:
        return None
    found.sort(key=lambda pair: -pair[0])
    return (f"{_listed([text for _, text in found], str)}: the same run measured more "
            f"than once, up to {found[0][0]:.0%} apart; the fit takes each repeat as it "
            "is, so no prediction of that run is closer than its repeats are to each "
            "other (give each run once, as the mean of its repeats, if they measure "
            "one setting)")


#: Most rows a note names one by one; the rest it counts.
NAMED_ROWS = 5


def _listed(rows, name, separator: str = ", ") -> str:
    """The first `NAMED_ROWS` of ``rows`` (indices) as ``name(i)`` gives them, joined by
    ``separator``, and how many more there are."""
    listed = separator.join(name(i) for i in rows[:NAMED_ROWS])
    rest = len(rows) - NAMED_ROWS
    return listed + (f" and {rest} more" if rest > 0 else "")


#: A query row's 95% interval is named as too wide to act on when its upper end is more
#: than this many times its lower end (an order of magnitude).
WIDE_INTERVAL = 10.0


def wide_intervals(low, high, row_name=lambda i: f"row {i + 1}") -> str | None:
    """The note naming the query rows whose 95% interval (``low``, ``high``, ms) spans
    more than a factor `WIDE_INTERVAL`: there the fitted rows do not pin the latency
    down (a level or an operation not measured, resting on parameters the rows leave
    to the prior, or a load far past the fitted ones), so the predicted mean is a
    guess; or None."""
    low, high = np.asarray(low, float), np.asarray(high, float)
    # compared without dividing: a lower end of 0 is named, a NaN never
    wide = np.flatnonzero(high > WIDE_INTERVAL * low)
    if not len(wide):
        return None
    with np.errstate(divide="ignore"):
        widest = np.max(high[wide] / low[wide])
    named = _listed(wide, row_name)
    what = "intervals" if len(wide) > 1 else "interval"
    verb = "span" if len(wide) > 1 else "spans"
    return (f"the 95% {what} of {named} {verb} more than a factor "
            f"{WIDE_INTERVAL:g} (up to a factor {widest:,.3g}): the fitted "
            "rows do not pin that latency down, so take the predicted mean there as a "
            "guess; a measured row nearer it (its level, operation or load), calibrated "
            "again, narrows it")


#: A query row's measured mean this many times from its prediction, either way, is
#: named as a possible unit slip (ms written as us or s).
UNIT_SLIP = 3.0


def measured_against_predicted(measured, mean, low, high,
                               row_name=lambda i: f"row {i + 1}") -> str | None:
    """The note on a query's measured means (``measured``, ms; NaN where a row has
    none) against their predictions (``mean``) and 95% bands (``low``, ``high``): the
    mean absolute error, how many fall inside their bands, and the rows a factor
    `UNIT_SLIP` or more away (a unit slip?); None without a measured mean."""
    measured = np.asarray(measured, float)
    given = np.flatnonzero(np.isfinite(measured))
    if not len(given):
        return None
    m, p = measured[given], np.asarray(mean, float)[given]
    error = np.abs(p / m - 1.0)
    inside = (m >= np.asarray(low, float)[given]) & (m <= np.asarray(high, float)[given])
    worst = given[int(np.argmax(error))]
    note = (f"the query's {counted(len(given), 'measured mean')}: the predictions miss "
            f"them by {100 * error.mean():.3g}% on average (most {100 * error.max():.3g}%, "
            f"{row_name(worst)}); {int(inside.sum())} of {len(given)} inside their 95% "
            "intervals")
    far = given[np.maximum(p / m, m / p) >= UNIT_SLIP]
    if len(far):
        note += (f"; {_listed(far, row_name)} {'are' if len(far) > 1 else 'is'} a "
                 f"factor {UNIT_SLIP:g} or more from its prediction: is its mean_ms in "
                 "ms (not us or s)?")
    return note


#: A closed query row is said to queue past what the fitted rows measured when it is
#: predicted at more than this many times the busiest fitted row's throughput ...
PAST_BUSIEST = 1.1
#: ... while the model's own curve there is more than this many times a lone
#: request's latency (its queues, not its fixed delays, set the row).
QUEUED = 1.5
#: Past this many times the busiest fitted row of its operation's throughput a row is
#: named whatever the model's curve does there: a curve that does not queue yet may
#: hold a capacity that no row measured.
FAR_PAST_BUSIEST = 2.0


def _past_the_busiest_row(model: NetworkModel, mrows, throughput, closed, fitted_open,
                          row_name) -> str | None:
    """The note naming closed query rows predicted at a throughput that no fitted row of
    their operation reached (a closed row by its threads over its latency and time
    outside, an open row by its offered rate), where the model's own curve queues:
    what the cluster carries there, the rows do not measure (a level that shares the
    fitted levels' nodes but not their wide-area links, say), or None."""
    if not np.any(closed):
        return None
    fitted = model.anchors
    carried = np.where(fitted_open, fitted.threads,
                       model.predict(model.anchor_rows())[1])

    def busiest(write: bool) -> float:
        same = fitted.write == write
        return float(np.max(carried[same] if np.any(same) else carried))

    reached = np.where(np.asarray(mrows["write"], bool), busiest(True), busiest(False))
    # a cluster of another size carries more or less in proportion to its nodes
    reached = reached * np.asarray(mrows.get("nodes", model.nodes), float) / model.nodes
    timed = model.with_outside(mrows)
    own = model.fit.predict(timed)[0]
    lone = model.fit.predict(dict(timed, threads=np.ones(len(own))))[0]
    queued = own > QUEUED * lone
    # far past: only against rows of the same operation (a read may well carry twice
    # what a write does; a fit without reads says so in a note of its own)
    write = np.asarray(mrows["write"], bool)
    own_operation = np.where(write, np.any(fitted.write), np.any(~fitted.write))
    past = np.flatnonzero(closed & (throughput > PAST_BUSIEST * reached)
                          & (queued | (own_operation
                                       & (throughput > FAR_PAST_BUSIEST * reached))))
    if not len(past):
        return None
    named = _listed(past, row_name)
    verb = "are" if len(past) > 1 else "is"
    # one number per figure printed (a mixed run's read and write rows carry one),
    # each named by its operation where they differ, so none is read as another row's
    figures = {}
    for i in past:
        figures.setdefault(f"{reached[i]:,.0f}", set()).add(
            "writes" if write[i] else "reads")
    most = " and ".join(f"{value} ops/s" if len(figures) == 1 else
                        f"{value} ops/s ({' and '.join(sorted(ops))})"
                        for value, ops in figures.items())
    resized = np.any(np.asarray(mrows.get("nodes", model.nodes)) != model.nodes)
    where = (f"where the model's own curve queues (up to "
             f"{np.max(own[past] / lone[past]):.2g} times a lone request's latency)"
             if np.all(queued[past]) else
             f"up to {np.max(throughput[past] / reached[past]):.2g} times as much, where "
             "the model's own curve does not yet queue as it would near a capacity")
    of = ("their operation" if np.all(own_operation[past]) else
          "any operation (none of theirs was fitted)" if not np.any(own_operation[past])
          else "their operation (or of any, where theirs was not fitted)")
    return (f"{named} {verb} predicted at up to {np.max(throughput[past]):,.0f} "
            f"ops/s, past the {most} it gives the busiest fitted row of {of}"
            f"{' (scaled to the cluster size asked)' if resized else ''} (the "
            "model's throughputs, not measured ones), "
            f"{where}: how much more the cluster carries, no fitted row measures, so "
            "there the latency rests on the model's structure")


def lone_misses(path: str, table: pd.DataFrame, model_ms,
                row_name=lambda i: f"row {i + 1}") -> str | None:
    """The note naming the rows of ``table`` (read from ``path``; ``row_name(i)`` names
    the i-th, by default its place among the rows) that the model's own curve
    ``model_ms`` misses far more than the others (rule: `LONE_MISS_RATIO`,
    `LONE_MISS_FACTOR`), or None: a mean in the wrong unit, a row of another run."""
    miss = np.abs(np.log(table.mean_ms.to_numpy(float) / np.asarray(model_ms, float)))
    if len(miss) < LONE_MISS_ROWS or not np.all(np.isfinite(miss)):
        return None
    others = np.array([np.median(np.delete(miss, i)) for i in range(len(miss))])
    lone = np.flatnonzero((miss > math.log(LONE_MISS_RATIO))
                          & (miss > LONE_MISS_FACTOR * others))
    if not len(lone):
        return None
    # a row far off pulls the fit, so that its neighbours look missed too: name the
    # rows of the largest misses only (in log, at least half the largest)
    lone = lone[miss[lone] >= LONE_MISS_SHARE * miss[lone].max()]
    named = _listed(lone, lambda i: f"{row_name(i)} ({table.label.iloc[i]}: measured "
                    f"{table.mean_ms.iloc[i]:.6g} ms, fitted {model_ms[i]:.4g} ms)", "; ")
    several = len(lone) > 1
    return (f"{LONE_MISS_START}{counted(len(lone), 'row')} of {path} far "
            f"more than the others: {named}, missed by more than a factor "
            f"{LONE_MISS_RATIO:g} and, in log, {LONE_MISS_FACTOR:g} times the other rows' "
            f"median miss (a factor {math.exp(np.median(np.delete(miss, lone))):.3g}); "
            f"check {'their' if several else 'its'} unit (a mean in microseconds or "
            f"seconds?) or drop {'them' if several else 'it'}: the fit and the anchors "
            "take every row as measured")


def merged_levels(table: pd.DataFrame, fitted: bool = True) -> str | None:
    """The note naming the consistency levels of ``table`` that wait for as many
    replicas at its replication factor (QUORUM and ALL at 2 replicas, every level at
    1), which the model cannot tell apart (``fitted``: rows to fit, else to predict);
    or None."""
    replicas = int(table.replicas.iloc[0])
    merged = [(int(k), list(pd.unique(group.consistency)))
              for k, group in table.groupby("quorum")]
    merged = [(k, levels) for k, levels in merged if len(levels) > 1]
    if not merged:
        return None
    said = "; ".join(
        f"{', '.join(levels[:-1])} and {levels[-1]} {'both' if len(levels) == 2 else 'all'} "
        f"wait for {counted(k, 'replica')}" for k, levels in merged)
    copies = counted(replicas, "replica")
    if not fitted:
        return (f"at the model's {copies}, {said}: they are predicted alike (the model "
                f"was calibrated with --replicas {replicas})")
    return (f"at {copies} (--replicas), {said}: the model gives them one latency, and "
            "their rows are fitted as one level; if the cluster keeps more copies of "
            "each key, give that replication factor")


def wide_area_note(signature, fitted: bool) -> str:
    """What `calibrate` says of rows with `sizing.geography.wide_area_signature`:
    ``fitted``: it fits `sizing.geography.Geography.wide_area` to them."""
    kind, ms = signature
    seen = (f"the lowest level measured stays flat at light load while the highest "
            f"costs {ms:.3g} ms more at the lightest load" if kind == "step" else
            f"ONE stays at {ms:.3g} ms or more however many threads")
    seen += ", more than a round trip within one data centre takes"
    advice = ("--datacentres DC.toml with the one-way times between the data centres "
              "(docs/cassandra/calibration.md, geo-distributed clusters)")
    if fitted:
        return (f"{seen}: fitted as a cluster across data centres (each node and the "
                "client machine in one of its own, one coordinator, the round trips "
                f"fitted, a window per wide-area link); if you know where they stand, "
                f"give {advice}")
    if kind == "flat":
        return (f"{seen}: the client machine looks far from the coordinator, but ONE "
                "rows cannot tell whether the replicas are far from each other too; "
                "fitted in one data centre, the other levels' cost rests on the prior "
                "of single-data-centre clusters; if replicas sit in other data centres, "
                f"give {advice}")
    return (f"{seen}: fitted as one data centre, as the model across data centres "
            "(--datacentres) covers clusters whose every node holds every key "
            f"(replicas = nodes) only; {ONE_CENTRE_WIDE_STEP}")


#: What a one-data-centre fit of rows with the wide-area level step cannot predict
#: (a judge-style probe: Karpenko D's rows on 4 nodes, fit ONE and QUORUM writes,
#: predict ALL: 125% against the line's 15.6%; reads to writes 43% against 3.8%).
ONE_CENTRE_WIDE_STEP = ("its levels and operations other than the fitted ones are "
                        "unreliable: the fit explains the wide-area step by work at "
                        "the nodes (Karpenko D's rows on 4 nodes: ALL writes from ONE "
                        "and QUORUM off by 125%, against 16% for a line through the "
                        "levels); predict only the levels and operation you fitted")


def carried_pauses(model: NetworkModel, mrows) -> tuple[np.ndarray, str] | None:
    """The closed rows of ``mrows`` that state no pause where fitted rows did, and
    the pauses they take from the fitted rows (`sizing.network_model.stated_pauses`)
    as text ("100" or "550 to 1000", ms); None where there are none."""
    if model.pause is None:
        return None
    carried = np.flatnonzero(np.isnan(given_pauses(mrows)) & ~np.isfinite(mrows["rate"]))
    if not len(carried):
        return None
    return carried, _span(stated_pauses(model.as_fitted(mrows), model.pause)[carried])


def _span(values) -> str:
    """The range of ``values`` as a message writes it: "100", or "550 to 1000"."""
    return " to ".join(dict.fromkeys(number_text(v) for v in (np.min(values),
                                                              np.max(values))))


def pause_carried(model: NetworkModel, mrows, name) -> str | None:
    """The note naming closed query rows that state no pause where fitted rows did:
    they take the fitted rows' pauses (`carried_pauses`); ``name``: a row's name by
    its index."""
    found = carried_pauses(model, mrows)
    if found is None:
        return None
    carried, took = found
    rows = name(carried[0]) + (f" and {counted(len(carried) - 1, 'more row')}"
                               if len(carried) > 1 else "")
    return (f"{rows}: no think_ms given, so the clients pause as the fitted rows' did "
            f"({took} ms between a reply and the next request); give think_ms (a "
            "--threads grid: --think-ms) to ask another pause")


def pause_elsewhere(model: NetworkModel, mrows, name) -> str | None:
    """The note naming closed query rows that state a pause no fitted row stated
    (none at all, or another than the fitted rows' pauses): the model's own curve says
    what the other pause changes, from the fitted pauses' anchors, which no row at
    that pause measured; ``name``: a row's name by its index."""
    asked = given_pauses(mrows)
    closed = np.isfinite(asked) & ~np.isfinite(mrows["rate"])
    fitted = model.anchors.pauses()
    if not len(fitted):
        other = np.flatnonzero(closed & (asked > 0))
        what = "no fitted row stated a pause"
    else:
        other = np.flatnonzero(closed & ~np.isclose(asked[:, None], fitted[None, :],
                                                    rtol=1e-9, atol=0.0).any(axis=1))
        what = f"the fitted rows paused {_span(fitted)} ms"
    if not len(other):
        return None
    beside = ("; the clients' time outside the latency that the fitted throughputs "
              "showed is kept beside it" if model.outside is not None else "")
    return (f"{_listed(other, name)}: a pause of {_span(asked[other])} ms between a "
            "reply and the next request, while "
            f"{what}: the model's own curve says what the other pause changes, carried "
            f"from the fitted rows' misses, which no row at that pause measured{beside}")
