"""Calibrating a Cassandra cluster's closed-network model from benchmark rows, and
predicting query rows with it: the work behind ``cassandra calibrate`` and ``cassandra
predict --model`` (`forkjoin_cli._network_calibration` adds the output files, the
progress bar and the printing), for a notebook as for the command line::

    from sizing.cluster_calibration import calibrate_cluster, predict_table

    fitted = calibrate_cluster("bench.csv", nodes=3, replicas=3)  # or a DataFrame
    fitted.warnings            # what the rows could not tell, suspect rows, ...
    fitted.report()            # parameters with 95% intervals, each row's miss
    fitted.figure("fit.png")   # measured rows, model curves and 95% bands
    fitted.predict("query.csv")    # predicted_* columns, 95% intervals (a DataFrame)
    fitted.save("model.toml")      # predict_table("model.toml", query) reads it back

The model: `sizing.closed_network` (what queues), fitted by `sizing.network_fit` with
a prior for what the rows cannot determine, anchored on the measured rows by
`sizing.network_model`.
"""

from __future__ import annotations

import math
import os
import re
import tempfile
import time
import warnings
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from forkjoin_sim.errors import ConfigError, counted
from sizing.calibrated_model import file_sha256
from sizing.calibration_notes import fit_notes, measured_against_predicted, \
    merged_levels, pause_carried, pause_elsewhere, prediction_notes, unpaired_rows, \
    wide_area_note, wide_intervals
from sizing.calibration_report import COORDINATE_LABELS, report_dict
from sizing.columns import stripped_cell
from sizing.geography import Geography, checked_against, placement
from sizing.measurements import COLUMNS, PERCENTILE_COLUMNS, level_asked, \
    read_measurements
from sizing.network_fit import Prior, default_prior, prior_from_model
from sizing.network_model import NetworkModel, calibrated, rows_of_table, \
    throughput_interval
from sizing.network_model_file import is_network_model, read_network_model
from sizing.structure_choice import AUTO


def table_of(rows, nodes: int, replicas: int) -> pd.DataFrame:
    """Measurement rows as the table the fit, report and figure use. A row of a mixed
    run (``read_fraction``) is paired with the run's row of the other operation (same
    load and mix, and run name where the row has one (``run``); if several, the one of
    the same throughput, then of the same consistency): that row's quorum is the other
    operation's (``other_quorum``; without
    one partner, the row's own, and ``paired`` False) and the run's mean latency (``run_mean_ms``, for
    Little's law) weighs both (NaN without a partner's latency: unknown). A row's
    stated pause (``think_ms``, NaN where not given) is kept for the model's think
    time (`sizing.network_model.rows_of_table`)."""
    from forkjoin_sim.cassandra.model import consistency_quorum

    quorum = [consistency_quorum(r.consistency, replicas) for r in rows]
    other, run = list(quorum), [r.mean_ms for r in rows]
    paired = [True] * len(rows)
    for i, row in enumerate(rows):
        if row.reads in (0.0, 1.0):
            continue
        # one run: one load, mix, stated pause and name (or none)
        partners = [j for j, p in enumerate(rows) if p.operation != row.operation
                    and (p.threads, p.rate, p.reads, p.think_ms, p.run)
                    == (row.threads, row.rate, row.reads, row.think_ms, row.run)]
        # several runs of this load and mix: the one of the same measured throughput
        # (one run, one throughput), then, among those, the one at the same consistency
        for same in (lambda j: row.throughput is not None
                     and rows[j].throughput == row.throughput,
                     lambda j: rows[j].consistency == row.consistency):
            narrower = [j for j in partners if same(j)]
            if len(partners) > 1 and narrower:
                partners = narrower
        # the run's mean is unknown without its other operation's latency: the
        # throughput then cannot split the cycle into latency and time outside it
        run[i] = None
        paired[i] = len(partners) == 1
        if len(partners) == 1:
            j = partners[0]
            other[i] = quorum[j]
            if row.mean_ms is not None and rows[j].mean_ms is not None:
                mine = row.reads if row.operation == "read" else 1.0 - row.reads
                run[i] = mine * row.mean_ms + (1.0 - mine) * rows[j].mean_ms

    def number(value):
        return float(value) if value is not None else math.nan

    return pd.DataFrame({
        "operation": [r.operation for r in rows],
        "consistency": [r.consistency for r in rows],
        "quorum": quorum, "other_quorum": other,
        "threads": [number(r.threads) for r in rows],
        "rate": [number(r.rate) for r in rows],
        "reads": [r.reads for r in rows],
        "nodes": nodes, "replicas": replicas,
        "mean_ms": [number(r.mean_ms) for r in rows],
        "run_mean_ms": [number(v) for v in run],
        "throughput": [number(r.throughput) for r in rows],
        "think_ms": [number(r.think_ms) for r in rows],
        "paired": paired, "label": [r.label() for r in rows]})


def load_prior(path: str | Prior | None) -> Prior:
    """The prior of a fit: a `Prior`, a prior file or another cluster's model file
    (``--prior``), or None: the built-in default."""
    if isinstance(path, Prior):
        return path
    if path is None:
        return default_prior()[0]
    if is_network_model(path):
        return prior_from_model(read_network_model(path, "--prior"), path)
    return Prior.read(path)


#: The columns `predict_table` adds to the query rows.
PREDICTED = ("predicted_mean_ms", "predicted_ci_low_ms", "predicted_ci_high_ms",
             "predicted_throughput", "predicted_throughput_ci_low",
             "predicted_throughput_ci_high")


@dataclass(frozen=True)
class ClusterFit:
    """A calibrated cluster: the ``model`` (`sizing.network_model.NetworkModel`, its
    ``meta`` naming the measurements, the prior, every warning and, with
    ``structure="auto"``, the structures' held-out errors) and the fitted rows as a
    ``table`` (one row per measurement, the columns the fit and figure use)."""

    model: NetworkModel
    table: pd.DataFrame

    @property
    def warnings(self) -> list[str]:
        """What the fit says of the rows and the parameters besides the numbers."""
        return list(self.model.meta.get("warnings", []))

    def report(self) -> dict:
        """The fit report (`report_dict`): parameters, intervals, each row's miss."""
        return report_dict(self.model, self.table)

    def predict(self, query=None, seed: int = 0, nodes: int | None = None,
                figure: str | None = None, *, threads=None, consistency=None,
                operation=None, think_ms: float | None = None) -> pd.DataFrame:
        """`predict_table` of this fit's model: ``query`` (a file or a DataFrame), or
        without one the grid of ``threads`` (a list) by ``consistency`` levels (default
        ONE, QUORUM, ALL) and ``operation``s (default those fitted; `query_grid`), its
        clients pausing ``think_ms`` between requests (default the fitted rows'), with
        the predicted mean latency, its 95% interval and the throughput, for the fitted
        cluster or one of ``nodes`` nodes; with ``figure``, the PNG of them written
        there as ``cassandra predict --figure`` draws it."""
        if (query is None) == (threads is None):
            raise ConfigError("give either a query (a file or a DataFrame) or "
                              "threads=[...] for a grid of thread counts")
        if query is None:
            def listed(value, name):
                if value is None:
                    return None
                values = [value] if np.ndim(value) == 0 else list(value)
                if not values:
                    raise ConfigError(f"{name}= is empty; give one value or more")
                return values
            if think_ms is not None and (isinstance(think_ms, (bool, str))
                                         or np.ndim(think_ms) != 0
                                         or not 0 <= float(think_ms) < math.inf):
                raise ConfigError(f"think_ms={think_ms!r}; give one finite pause >= 0 "
                                  "(ms)")
            query = query_grid(self.model, listed(threads, "threads"),
                               listed(consistency, "consistency"),
                               listed(operation, "operation"), think_ms)
            return _predict_table(self.model, query, seed, nodes, figure,
                                  title="predict a grid")
        if consistency is not None or operation is not None or think_ms is not None:
            raise ConfigError("consistency=, operation= and think_ms= shape a grid of "
                              "threads=; a query names its own rows (a think_ms column "
                              "for their pauses)")
        return _predict_table(self.model, query, seed, nodes, figure)

    def save(self, path: str) -> None:
        """Write the model file (TOML, as ``cassandra calibrate --out`` does; read it
        back with `sizing.network_model_file.read_network_model`), whole or not at all."""
        from forkjoin_sim.checks import check_output_file
        from forkjoin_sim.files.io import atomic_write

        check_output_file(str(path), "model file", (".toml",))
        with atomic_write(str(path)) as handle:
            handle.write(self.model.to_toml())

    def figure(self, path: str, title: str = "", seed: int = 0) -> None:
        """Write the PNG of the fitted rows, the model's curves and their 95% bands
        (`sizing.calibration_figure.draw`; ``seed``: of the bands' posterior draws) to
        ``path`` (a ``.png``, checked first)."""
        from forkjoin_sim.checks import check_output_file
        from sizing.calibration_figure import draw

        check_output_file(str(path), "figure", (".png",))
        from forkjoin_sim.randomness.streams import as_seed_sequence

        as_seed_sequence(seed)
        draw(path, self.model, self.table, title=title, seed=seed)


@dataclass(frozen=True)
class _Source:
    """Measurement rows as read: the rows, the column names, the name of where they
    came from (a file's path, or "the DataFrame"), its sha256, what reading them
    found, and how a message names the i-th row (a file's line; a DataFrame's index
    label)."""

    rows: list
    names: list
    name: str
    sha256: str
    doubts: list
    labels: list | None = None

    def row_name(self, i: int, by_place: bool = True) -> str:
        """The i-th row (from 0) in a message: where a file has it (``line 14``,
        ``result 3`` of benchmark output; ``row i + 1`` with ``by_place=False``),
        or the DataFrame's index label."""
        if self.labels is not None:
            return f"row {self.labels[i]!r}"
        return self.rows[i].place if by_place and self.rows[i].place else \
            f"row {i + 1}"


def _local_level(level, geography, where: str, fix: str) -> str | None:
    """Why a LOCAL_ONE or LOCAL_QUORUM ``level`` cannot be asked of a model placing
    its nodes in data centres (``geography`` not None; ``where``: which input placed
    them; ``fix``: what to do): their replicas are the coordinator's data centre's,
    while the model's levels count every replica, wherever it is (in one data centre
    they are ONE and QUORUM); None when it can."""
    level = str(level or "").strip().upper()
    if geography is None or not level.startswith("LOCAL_"):
        return None
    return (f"{level} asks the replicas of the coordinator's own data centre, which "
            f"{where} does not describe (its levels count every replica, wherever it "
            f"stands); {fix}")


def _no_local_levels(source: "_Source", geography, where: str, fix: str) -> None:
    """Refuse the first row of ``source`` at a level `_local_level` refuses."""
    for i, row in enumerate(source.rows):
        why = _local_level(row.raw.get("consistency"), geography, where, fix)
        if why is not None:
            raise ConfigError(f"{source.name} {source.row_name(i)}: {why}")


#: Where a calibrated model's data centres come from, and what to give instead of a
#: LOCAL_* level there (`_local_level`'s ``where`` and ``fix``).
_PLACED_MODEL = ("the model's placement in data centres",
                 "give ONE, QUORUM or ALL, the levels of the model's placement")


def _spread_unused(names) -> list[str]:
    """The note that a file's spread columns (std_ms, p50_ms, p95_ms, p99_ms) are read
    but neither fitted nor predicted by a closed-network model, if it has any."""
    spread = [c for c in ("std_ms", *PERCENTILE_COLUMNS) if c in names]
    if not spread:
        return []
    return [f"column(s) {', '.join(spread)} are read but not used: the closed-network "
            "structures fit and predict mean latency only (--structure simulated "
            "predicts the file's percentiles, under its exponential services, without "
            "fitting them)"]


def _measurement_rows(measurements, replicas: int, need_mean: bool = True) -> _Source:
    """The rows of a measurement file, or of a DataFrame of the same columns (read
    through a CSV, so that it is checked as a file is; messages name its index
    labels), with a note on spread columns the model does not use."""
    source = _read_rows(measurements, replicas, need_mean)
    if any(row.place.startswith("result") for row in source.rows):
        return source  # benchmark output: its percentiles are not the user's columns
    return replace(source, doubts=source.doubts + _spread_unused(source.names))


def _read_rows(measurements, replicas: int, need_mean: bool = True) -> _Source:
    """`_measurement_rows` before its note on spread columns."""
    if isinstance(measurements, (str, os.PathLike)):
        path = os.fspath(measurements)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            rows, names = read_measurements(path, replicas, need_mean)
        return _Source(rows, names, path, file_sha256(path),
                       [str(item.message) for item in caught])
    if not isinstance(measurements, pd.DataFrame):
        raise ConfigError(f"measurements are a file path or a pandas DataFrame, not a "
                          f"{type(measurements).__name__}; give one of those")
    name, labels = "the DataFrame", list(measurements.index)
    # a cell is empty as NaN/None or as blank text; a row of them the reader skips
    empty = (measurements.isna() | (measurements.astype(str).apply(
        lambda column: column.str.strip()) == "")).all(axis=1)
    if empty.any():
        raise ConfigError(f"row {labels[int(np.flatnonzero(empty)[0])]!r} of the "
                          "DataFrame has no value in any column; drop it (e.g. "
                          "frame.dropna(how=\"all\"))")
    with tempfile.TemporaryDirectory() as folder:
        path = str(Path(folder) / "measurements.csv")
        measurements.to_csv(path, index=False)

        def said(text: str) -> str:
            # the CSV's line numbers are the DataFrame's rows from line 2 on
            text = text.replace(path, name)
            text = re.sub(r"\blines (\d+) and (\d+)", lambda m: "rows " + " and ".join(
                repr(labels[int(n) - 2]) for n in m.groups()), text)
            return re.sub(r"\bline (\d+)", lambda m: f"row {labels[int(m[1]) - 2]!r}",
                          text)
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                rows, names = read_measurements(path, replicas, need_mean)
        except ConfigError as exc:
            hint = [n for n in measurements.index.names if n in COLUMNS]
            raise ConfigError(said(str(exc)) + (
                f" (the DataFrame's index holds {', '.join(hint)}: reset_index() makes "
                "it a column)" if hint and "missing column" in str(exc) else "")) from None
        digest = file_sha256(path)
    return _Source(rows, names, name, digest, [said(str(item.message)) for item in caught],
                   labels)


def calibrate_cluster(measurements, nodes: int, replicas: int,
                      structure: str | None = None, prior=None, cores: int = 4,
                      client_cores: int = 4, datacentres=None, workers: int = 1,
                      progress=None, announce=None, phase=None) -> ClusterFit:
    """The calibrated closed-network model of a cluster of ``nodes`` nodes keeping
    ``replicas`` copies of each key, fitted to ``measurements`` (a measurement file:
    CSV, YCSB or cassandra-stress output, see `sizing.measurements`; or a DataFrame
    of the CSV's columns).

    ``structure``: one of `sizing.closed_network.STRUCTURES`, ``"auto"`` (the one
    that predicts the rows' own held-out parts best, on ``workers`` processes), or
    None: the default prior's. ``prior``: a `Prior`, a prior file, another
    cluster's model file, or None: the built-in default. ``cores`` per node and
    ``client_cores`` on the client machine. ``datacentres``: a
    `sizing.geography.Geography` or its file, or None (rows with a wide-area
    signature are then placed in data centres of their own). ``progress``: called
    with (evaluations done, budget); ``announce``: with the number of rows read,
    before the fit; ``phase``: with "choosing the structure" and "fitting" as each
    begins (``structure="auto"``). Raises `ConfigError` on bad input, before any
    work. What the fit doubts (``ClusterFit.warnings``) also comes as `UserWarning`s,
    as `predict_table`'s do."""
    from forkjoin_sim.model import check_cluster

    check_cluster(nodes, replicas)
    for option, value in (("cores", cores), ("client_cores", client_cores)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) \
                or value < 1:
            raise ConfigError(f"{option} = {value!r}; give a whole number of cores >= 1")
    if structure is None:
        structure = default_prior()[1]
    given = datacentres
    if datacentres is not None and not isinstance(datacentres, Geography):
        given = Geography.read(str(datacentres))
    if given is not None:
        given.check_cluster(nodes, replicas)
    prior = load_prior(prior)
    source = _measurement_rows(measurements, replicas)
    rows, doubts = source.rows, list(source.doubts)
    table = table_of(rows, nodes, replicas)
    merged = merged_levels(table)
    if merged is not None:
        doubts.append(merged)
    geography, signature = placement(table, nodes, replicas, given)
    _no_local_levels(source, geography, "--datacentres" if given is not None else
                     "the wide-area placement these rows call for",
                     "give ONE, QUORUM or ALL, or, for a cluster in one data centre, "
                     + ("leave out --datacentres" if given is not None else
                        "check the rows"))
    if given is not None:
        doubt = checked_against(given, table,
                                lambda i: f"{source.name} {source.row_name(i)}")
        if doubt is not None:
            doubts.append(doubt)
    if signature is not None:
        doubts.append(wide_area_note(signature, geography is not None))
    if announce is not None:
        announce(len(rows))
    started = time.perf_counter()
    choice = None
    if structure == AUTO:
        from sizing.structure_choice import CANDIDATES, choose

        if phase is not None:
            phase("choosing the structure")
        structure, scores = choose(table, CANDIDATES, CANDIDATES[0], prior, cores,
                                   client_cores, geography, progress=progress,
                                   workers=workers)
        choice = {"chosen": structure, "held_out_error": scores}
        if phase is not None:
            phase("fitting")
    model = calibrated(table, structure, prior, cores, client_cores, geography,
                       progress=progress)
    seconds = time.perf_counter() - started
    resting = model.fit.resting_on_prior(replicas=model.replicas)
    notes = doubts + fit_notes(model, table, source)
    if resting:
        notes.insert(len(doubts), "resting on the prior (the rows barely determine "
                     "them): " + "; ".join(f"{n} ({COORDINATE_LABELS[n]})"
                                           for n in resting))
    meta = dict(measurements=source.name, measurements_sha256=source.sha256,
                prior_source=prior.source, resting_on_prior=resting, warnings=notes,
                **({} if datacentres is None else {"datacentres": str(datacentres)
                    if not isinstance(datacentres, Geography)
                    else "a Geography given in Python"}),
                **({} if choice is None else {"structure_choice": _choice_text(choice)}),
                **({} if signature is None or geography is not None else
                   {WIDE_AREA_META[signature[0]]: round(signature[1], 3)}),
                seconds=round(seconds, 3))
    # as predict_table's: a notebook sees them (the list stays in .warnings)
    for note in notes:
        warnings.warn(note, UserWarning, stacklevel=2)
    return ClusterFit(replace(model, meta=meta), table)


#: The meta key that keeps a wide-area signature fitted in one data centre, by kind,
#: for `sizing.calibration_notes.prediction_notes`.
WIDE_AREA_META = {"flat": "flat_one_ms", "step": "wide_step_ms"}


def predicted_rows(model: NetworkModel, query, seed: int = 0, nodes: int | None = None,
                   _stacklevel: int = 2):
    """(the query's column names, one dict per query row: its cells as given (without
    blanks around them) and the
    `PREDICTED` columns, the query's table, what the prediction says besides the
    numbers: rows past capacity, parameters resting on the prior, extrapolation,
    levels the model merges) of ``query`` (a file or a DataFrame of a measurement
    file's columns; ``mean_ms`` may be absent), and bands wider than a factor
    `WIDE_INTERVAL`. What reading the query found
    (`sizing.measurements.read_measurements`) goes to `warnings.warn`.

    ``nodes``: the cluster the rows ask about (default: the fitted one's size), with
    the fitted replicas; another size keeps each node's work, lanes and cores and reads
    the anchors at the same load per node (`NetworkModel.as_fitted`), and says so."""
    nodes = model.size_asked(nodes)
    source = _measurement_rows(query, model.replicas, need_mean=False)
    _no_local_levels(source, model.fit.geography, *_PLACED_MODEL)
    rows, names = source.rows, source.names
    for doubt in source.doubts:
        warnings.warn(doubt, UserWarning, stacklevel=_stacklevel)
    table = table_of(rows, nodes, model.replicas)
    mrows = rows_of_table(table)
    mean, throughput = model.predict(mrows)
    low, high = model.interval(mrows, seed=seed)
    # the throughput's interval that holds the latency's (NaN where the model gives
    # none: a closed-loop mixed run, an open loop past its capacity), as --figure
    # draws it
    few, many = throughput_interval(model.with_outside(mrows), mean, throughput, low,
                                    high)
    out = []
    for i, row in enumerate(rows):
        entry = {c: stripped_cell(row.raw.get(c, "")) for c in names}
        entry.update(zip(PREDICTED, (float(v[i]) for v in (mean, low, high, throughput,
                                                           few, many))))
        out.append(entry)
    # which rows gave their run's share of reads (a read_fraction cell)
    given = [bool(str(row.raw.get("read_fraction") or "").strip()) for row in rows]
    notes = prediction_notes(model, mrows, throughput,
                             lambda i: source.row_name(i, by_place=False), given)
    if nodes != model.nodes:
        notes.insert(0, model.resized_note(nodes) + " (a query's measured mean_ms, if "
                     "any, is taken as this size's)")
    wide = wide_intervals(low, high, lambda i: source.row_name(i, by_place=False))
    if wide is not None:
        notes.append(wide)
    for note in (pause_carried(model, mrows, lambda i: source.row_name(i, by_place=False)),
                 pause_elsewhere(model, mrows,
                                 lambda i: source.row_name(i, by_place=False))):
        if note is not None:
            notes.append(note)
    merged = merged_levels(table, fitted=False)
    if merged is not None:
        notes.append(merged)
    unpaired = unpaired_rows(table, lambda i: source.row_name(i, by_place=False))
    if unpaired is not None:
        notes.append(unpaired)
    checked = measured_against_predicted(
        [np.nan if row.mean_ms is None else row.mean_ms for row in rows], mean, low,
        high, lambda i: source.row_name(i, by_place=False))
    if checked is not None:
        notes.append(checked)
    return list(names), out, table, notes


def predict_table(model: NetworkModel | ClusterFit | str, query,
                  seed: int = 0, nodes: int | None = None,
                  figure: str | None = None) -> pd.DataFrame:
    """The query rows (a file or a DataFrame) with the `PREDICTED` columns: mean
    latency (ms), its 95% prediction interval, the throughput (ops/s) and the
    throughput's interval that holds the latency's (NaN where the model gives none: a
    closed-loop mixed run, an open loop past its capacity), from
    ``model`` (a `NetworkModel`, a `ClusterFit` or a model file), for the fitted
    cluster or one of ``nodes`` nodes (`predicted_rows`). A DataFrame comes back whole
    (its index, its columns, the predictions added); a file's columns come back as
    numbers where they are numbers. What the prediction says besides the numbers goes
    to `warnings.warn`. With ``figure`` (a ``.png``, checked before any work), the
    query rows' predictions and bands, with their measured values where given, are
    drawn there (`prediction_figure`)."""
    return _predict_table(model, query, seed, nodes, figure)


def prediction_figure(path: str, model: NetworkModel, table: pd.DataFrame,
                      title: str = "", seed: int = 0) -> None:
    """Write the PNG of ``model``'s curves through the query rows ``table`` (as
    `predicted_rows` returns it) with their 95% bands and measured values
    (`sizing.calibration_figure.draw`) to ``path``; the title says the cluster size
    when it is not the fitted one."""
    from sizing.calibration_figure import draw

    size = int(table.nodes.max()) if len(table) else model.nodes
    draw(path, model, table, title=title + (f" for {size} nodes (fitted on {model.nodes})"
                                             if size != model.nodes
                                             else ""), seed=seed)


def _predict_table(model, query, seed, nodes, figure=None,
                   title: str | None = None) -> pd.DataFrame:
    """`predict_table`, called by it or by `ClusterFit.predict`: its warnings point at
    the line that called either (three frames up), not at the library's."""
    from forkjoin_sim.randomness.streams import as_seed_sequence

    as_seed_sequence(seed)  # a bad seed said as simulate says it, before any work
    if figure is not None:
        from forkjoin_sim.checks import check_output_file

        check_output_file(str(figure), "figure", (".png",))
    model = as_network_model(model)
    names, entries, table, notes = predicted_rows(model, query, seed, nodes,
                                                  _stacklevel=4)
    for note in notes:
        warnings.warn(note, UserWarning, stacklevel=3)
    if figure is not None:
        if title is None:
            title = "predict " + (os.fspath(query) if isinstance(query, (str, os.PathLike))
                                  else "a table")
        prediction_figure(figure, model, table, title=title, seed=seed)
    if isinstance(query, pd.DataFrame):
        frame = query.copy()
        for column in PREDICTED:
            frame[column] = [entry[column] for entry in entries]
        return frame
    frame = pd.DataFrame(entries, columns=names + list(PREDICTED))
    for name in names:
        converted = pd.to_numeric(frame[name].replace("", np.nan), errors="coerce")
        if converted.notna().sum() == (frame[name] != "").sum():
            frame[name] = converted
    return frame


def query_grid(model: "NetworkModel | ClusterFit", threads, levels=None,
               operations=None, think_ms: float | None = None) -> pd.DataFrame:
    """Query rows for every operation (default: those ``model`` (or a `ClusterFit`'s)
    was fitted on), level (default ONE, QUORUM, ALL) and thread count, for
    `predict_table`, each labelled by what it asks ("read ONE, 8 threads": the name a
    note gives it); a level the model's replicas cannot wait for is a `ConfigError`.
    ``think_ms``: the clients' pause between requests in every row (a ``think_ms``
    column); None: none stated (the fitted rows' carried)."""
    from forkjoin_sim.cassandra.model import consistency_quorum

    if isinstance(model, ClusterFit):
        model = model.model
    if operations is None:
        operations = [op for op, write in (("read", False), ("write", True))
                      if np.any(model.anchors.write == write)]
    levels = levels or ["ONE", "QUORUM", "ALL"]
    for level in levels:
        why = _local_level(level, model.fit.geography, *_PLACED_MODEL)
        if why is not None:
            raise ConfigError(why)
        try:
            consistency_quorum(level_asked(level), model.replicas)
        except ConfigError as exc:
            raise ConfigError(f"{exc} (the model keeps "
                              f"{counted(model.replicas, 'replica')})") from None
    asked = [(op, level, n) for op in operations for level in levels for n in threads]
    paused = {} if think_ms is None else {"think_ms": think_ms}
    return pd.DataFrame([dict(operation=op, consistency=level, threads=n, **paused)
                         for op, level, n in asked],
                        index=[f"{op} {level}, {counted(n, 'thread')}"
                               for op, level, n in asked])


def as_network_model(model) -> NetworkModel:
    """The `NetworkModel` of ``model``: a `NetworkModel` itself, a `ClusterFit`'s, or
    a model file's (its path)."""
    if isinstance(model, ClusterFit):
        return model.model
    return model if isinstance(model, NetworkModel) else _model_file(model)


def _model_file(path) -> NetworkModel:
    """The closed-network model in file ``path``, or a `ConfigError` saying what the
    file is instead."""
    from forkjoin_sim.checks import check_input_file
    from sizing.calibrated_model import read_model

    if not isinstance(path, (str, os.PathLike)):
        raise ConfigError(f"model is a NetworkModel, a ClusterFit or a model file's path, "
                          f"not a {type(path).__name__}")
    path = os.fspath(path)
    check_input_file(path, "model file")
    if is_network_model(path):
        return read_network_model(path)
    read_model(path)  # a simulated model's file, or its own message of what is wrong
    raise ConfigError(f"{path} was calibrated with --structure simulated; predict it with "
                      "forkjoin-sim cassandra predict --model (predict_table takes a "
                      "closed-network model)")


def _choice_text(choice: dict) -> str:
    """What `calibrate_cluster` records of ``structure="auto"``: the structure chosen
    and each candidate's held-out error."""
    scores = ", ".join(f"{name} {100 * value:.1f}%" if np.isfinite(value) else
                       f"{name} n/a" for name, value in choice["held_out_error"].items())
    best = min(((v, n) for n, v in choice["held_out_error"].items() if np.isfinite(v)),
               default=(np.nan, choice["chosen"]))
    kept = ("" if best[1] == choice["chosen"] else
            f" ({best[1]}'s lead is within one standard error of the paired "
            "differences: the default is kept)")
    return (f"auto chose {choice['chosen']}: mean error on the rows' own held-out "
            f"levels and larger thread counts {scores}{kept}")
