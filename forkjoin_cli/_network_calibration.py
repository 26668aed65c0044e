"""``cassandra calibrate`` and ``predict --model`` with a closed-network structure (the
default): `sizing.cluster_calibration` fits and predicts; here the output places are
checked before any work, and the progress bar, the files and what is printed."""

from __future__ import annotations

import math
import warnings

from forkjoin_sim.errors import ConfigError, counted
from forkjoin_sim.files.io import atomic_write, json_text
from forkjoin_sim.sweep.runner import default_workers

from sizing.calibration_report import report_markdown
from sizing.cluster_calibration import PREDICTED, calibrate_cluster, predicted_rows, \
    prediction_figure, query_grid
from sizing.network_model_file import read_network_model

from forkjoin_cli.calibration_output import REPORT_SUFFIXES, check_writable, emit_rows, \
    to_stderr


def calibrate(args, structure: str) -> int:
    """Fit, write model (and report, figure), print the report."""
    # (an output over an input file main refuses for every command)
    check_writable(args.out, "--out", (".toml",))
    if args.report:
        check_writable(args.report, "--report", REPORT_SUFFIXES)
    if args.figure:
        check_writable(args.figure, "--figure", (".png",))
    from tqdm.auto import tqdm

    from forkjoin_sim.run import PROGRESS_DELAY, bar_shown

    with tqdm(total=1, unit="eval", desc="calibrate", delay=PROGRESS_DELAY,
              leave=False, disable=not bar_shown()) as bar:
        def advance(done, budget):
            bar.total = budget
            bar.update(done - bar.n)

        def announce(count):
            to_stderr(f"calibrate: {counted(count, 'row')} from {args.measurements}, "
                    f"structure {structure}")

        def phase(name):
            bar.set_description("calibrate" if name == "fitting" else
                                f"calibrate: {name}")
            if name == "fitting":
                bar.reset()

        fitted = calibrate_cluster(
            args.measurements, args.nodes, args.replicas, structure, args.prior,
            args.cores, args.client_cores, getattr(args, "datacentres", None),
            workers=args.workers or default_workers(), progress=advance,
            announce=announce, phase=phase)
    report = fitted.report()  # calibrate_cluster warned its doubts (fitted.warnings)
    # the model last: a figure or report that cannot be written (its place taken
    # since the check before the fit) leaves the old model file in place
    if args.figure:
        fitted.figure(args.figure, title=f"calibrate {args.measurements}",
                      seed=args.seed)
    if args.report:
        with atomic_write(args.report) as handle:
            as_json = args.report.lower().endswith(".json")  # as the suffix check reads it
            handle.write(json_text(report, indent=1) if as_json
                         else report_markdown(report))
    fitted.save(args.out)
    print(json_text(report) if args.json else report_markdown(report))
    to_stderr(f"calibrate: wrote {args.out}" + "".join(
        f" and {p}" for p in (args.report, args.figure) if p))
    return 0


def predict(args) -> int:
    """``predict --model`` with a closed-network model: each query row predicted (the
    output places are checked by the caller, `forkjoin_cli._calibration`)."""
    model = read_network_model(args.model)
    query = args.measurements
    if query is None:
        try:
            query = query_grid(model, args.threads, args.consistency, args.operation,
                               getattr(args, "think_ms", None))
        except ConfigError as exc:
            raise ConfigError(f"--consistency: {exc}") from None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        names, out, table, notes = predicted_rows(model, query, args.seed,
                                                  getattr(args, "nodes", None))
    # what reading the query found (failed operations, a level filled in) is said
    # with the prediction's own notes, before the rows are written, not after
    read = [str(item.message) for item in caught if item.category is UserWarning]
    for item in caught:
        if item.category is not UserWarning:
            warnings.warn_explicit(item.message, item.category, item.filename, item.lineno)
    for note in dict.fromkeys(read + notes):
        to_stderr(f"predict: warning: {note}")
    if args.figure:
        prediction_figure(args.figure, model, table,
                          title=f"predict {args.measurements or 'a grid'}", seed=args.seed)
    # a cell the model gives no value (NaN) is empty, null in JSON
    emit_rows(args, names + list(PREDICTED), [
        {k: None if isinstance(v, float) and not math.isfinite(v) else v
         for k, v in entry.items()} for entry in out])
    return 0
