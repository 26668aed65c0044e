"""``forkjoin-sim cassandra calibrate`` and ``cassandra predict --model``: the work
behind the two commands (their options live in ``forkjoin_cli/cassandra.py``)."""

from __future__ import annotations

import contextlib
import math
import warnings

from forkjoin_sim.errors import ConfigError, counted
from forkjoin_sim.files.io import atomic_write, json_text
from forkjoin_sim.files.tables import check_table_out

from sizing.calibrated_model import PARAMETERS, file_sha256, read_model, write_model
from sizing.calibration import LABELS, calibrate, predict
from sizing.columns import stripped_cell
from sizing.measurements import PERCENTILE_COLUMNS, read_measurements

from forkjoin_cli.calibration_output import REPORT_SUFFIXES, check_writable, emit_rows, \
    to_stderr

#: Most effective threads per stage a candidate may have (Cassandra's default
#: read and mutation stages have 32).
MAX_STAGE_THREADS = 4096


def parse_threads(text: str) -> tuple[int, ...]:
    """``"1,2,4"`` as ``(1, 2, 4)``: candidate effective threads per stage."""
    parts = [p.strip() for p in text.split(",")]
    if not all(p.isascii() and p.isdigit() and 1 <= int(p) <= MAX_STAGE_THREADS
               for p in parts):
        raise ConfigError(f"--threads {text!r}: give whole numbers in "
                          f"1..{MAX_STAGE_THREADS} separated by commas, e.g. "
                          "--threads 1,2,4,8")
    values = [int(p) for p in parts]
    if len(set(values)) < len(values):
        raise ConfigError(f"--threads {text!r} gives a candidate more than once; list "
                          "each once")
    return tuple(sorted(values))


def _fmt(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def report_dict(calibration, measurements: str) -> dict:
    """The fit report: parameters with intervals, warnings, residual per row."""
    model = calibration.model
    intervals = model.intervals()
    rows = []
    for row, pred in zip(calibration.rows, calibration.confirmed):
        entry = {"row": row.label(), "measured_mean_ms": row.mean_ms,
                 "predicted_mean_ms": pred["predicted_mean_ms"],
                 "simulation_ci_low_ms": pred["simulation_ci_low_ms"],
                 "simulation_ci_high_ms": pred["simulation_ci_high_ms"],
                 "residual_mean": pred["predicted_mean_ms"] / row.mean_ms - 1,
                 "measured_throughput": row.throughput,
                 "predicted_throughput": pred["predicted_throughput"],
                 "residual_throughput": (pred["predicted_throughput"] / row.throughput - 1
                                         if row.throughput else None),
                 "notes": pred["notes"]}
        rows.append(entry)
    return {"measurements": measurements, "sha256": file_sha256(measurements),
            "nodes": model.nodes, "replicas": model.replicas,
            "threads_per_stage": model.threads,
            "threads_cost": {str(k): v for k, v in calibration.threads_cost.items()},
            "parameters": {name: {"value": getattr(model, name),
                                  "interval_95": list(intervals.get(name, ())),
                                  "fitted": name in model.free}
                           for name in PARAMETERS},
            "warnings": list(calibration.warnings), "rows": rows,
            "seconds": calibration.seconds, "evaluations": calibration.evaluations}


def report_markdown(report: dict) -> str:
    lines = [f"# Calibration of {report['measurements']}", "",
             f"{counted(report['nodes'], 'node')}, "
             f"{counted(report['replicas'], 'replica')}; "
             "effective "
             f"threads per stage {report['threads_per_stage']} (cost per candidate: "
             + ", ".join(f"{k}: {v:.3g}" for k, v in report["threads_cost"].items())
             + f"); {report['evaluations']} objective evaluations, "
               f"{report['seconds']:.0f} s.", "",
             "| parameter | value | 95% interval |", "|---|---|---|"]
    for name, p in report["parameters"].items():
        interval = (f"[{p['interval_95'][0]:.4g}, {p['interval_95'][1]:.4g}]"
                    if p["interval_95"] else "not fitted")
        lines.append(f"| {LABELS[name]} (`{name}`) | {p['value']:.4g} | {interval} |")
    lines += ["", "## Warnings", ""]
    lines += [f"- {w}" for w in report["warnings"]] or ["- none"]
    lines += ["", "## Residual per row (confirmed by long simulations)", "",
              "| row | measured ms | model ms | simulation 95% CI | error | measured "
              "ops/s | model ops/s | error |", "|---|---|---|---|---|---|---|---|"]
    for r in report["rows"]:
        x_err = ("" if r["residual_throughput"] is None
                 else f"{100 * r['residual_throughput']:+.1f}%")
        lines.append(f"| {r['row']} | {r['measured_mean_ms']:.4g} | "
                     f"{r['predicted_mean_ms']:.4g} | [{r['simulation_ci_low_ms']:.4g}, "
                     f"{r['simulation_ci_high_ms']:.4g}] | "
                     f"{100 * r['residual_mean']:+.1f}% | "
                     f"{_fmt(r['measured_throughput'])} | "
                     f"{r['predicted_throughput']:.4g} | {x_err} |")
    notes = [f"- {r['row']}: {n}" for r in report["rows"] for n in r["notes"]]
    if notes:
        lines += ["", "## Convergence", ""] + notes
    return "\n".join(lines) + "\n"


def cmd_calibrate(args) -> int:
    """``cassandra calibrate``: a closed-network structure (the default, see
    `forkjoin_cli._network_calibration`) or ``--structure simulated`` (below)."""
    from sizing.closed_network import STRUCTURES
    from sizing.network_fit import default_prior
    from sizing.structure_choice import AUTO

    structure = args.structure if args.structure is not None else default_prior()[1]
    if structure != "simulated":
        if structure not in STRUCTURES + (AUTO,):
            raise ConfigError(f"--structure {structure!r}; use one of "
                              f"{', '.join(STRUCTURES)}, {AUTO} or simulated")
        if args.nodes is None or args.replicas is None:
            raise ConfigError("calibrate needs --nodes N and --replicas R of the "
                              "measured cluster")
        if args.threads is not None:
            raise ConfigError("--threads (effective threads per stage) goes with "
                              "--structure simulated; drop it, or add --structure "
                              "simulated")
        _check_cores(args, structure)
        from forkjoin_cli import _network_calibration

        return _network_calibration.calibrate(args, structure)
    for option in ("prior", "figure", "datacentres", "cores", "client_cores"):
        if getattr(args, option, None) is not None:
            option = option.replace("_", "-")
            raise ConfigError(f"--{option} goes with a closed-network structure, not "
                              f"--structure simulated; drop --{option}")
    return _calibrate_simulated(args)


#: Cores of a node and of the client machine when not given.
DEFAULT_CORES = 4


def _check_cores(args, structure: str) -> None:
    """Refuse ``--cores`` or ``--client-cores`` where ``structure`` queues on no such
    station (they would change nothing); fill in `DEFAULT_CORES` where not given.
    ``auto`` takes them: its candidates may queue there."""
    from sizing.closed_network import structure_of
    from sizing.structure_choice import AUTO

    if structure != AUTO:
        layout = structure_of(structure)
        for option, used, why in (
                ("cores", not layout.lanes,
                 "it fits its lanes per node instead of queueing on cores"),
                ("client_cores", layout.client_station,
                 "its client machine is not a queue")):
            if getattr(args, option) is not None and not used:
                flag = "--" + option.replace("_", "-")
                raise ConfigError(f"{flag} does nothing with structure {structure} "
                                  f"({why}); drop {flag}, or choose a structure that "
                                  "uses it (--structure shared-digest-client queues on "
                                  "both)")
    args.cores = DEFAULT_CORES if args.cores is None else args.cores
    args.client_cores = DEFAULT_CORES if args.client_cores is None else args.client_cores


@contextlib.contextmanager
def _in_file(path: str):
    """A refusal that names a row by its place alone ('line 2 states ...') names its
    file too."""
    try:
        yield
    except ConfigError as exc:
        if str(exc).startswith(("line ", "result ")):
            raise ConfigError(f"{path} {exc}") from None
        raise


def _calibrate_simulated(args) -> int:
    """``--structure simulated``: fit, write the model (and report), print a summary."""
    check_writable(args.out, "--out", (".toml",))
    if args.report:
        check_writable(args.report, "--report", REPORT_SUFFIXES)
    if args.nodes is None or args.replicas is None:
        raise ConfigError("calibrate needs --nodes N and --replicas R of the measured "
                          "cluster")
    from forkjoin_sim.model import check_cluster

    check_cluster(args.nodes, args.replicas)
    threads = parse_threads(args.threads or "1,2,4,8,16,32")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rows, _ = read_measurements(args.measurements, args.replicas)
    doubts = [str(item.message) for item in caught]
    for doubt in doubts:  # shown when the command ends, and kept in model and report
        warnings.warn(doubt, UserWarning, stacklevel=1)
    to_stderr(f"calibrate: {counted(len(rows), 'row')} from {args.measurements}")
    with _in_file(args.measurements):
        calibration = calibrate(rows, args.nodes, args.replicas, seed=args.seed,
                                threads=threads, progress=to_stderr)
    model = calibration.model
    fit = dict(model.fit, measurements=args.measurements,
               measurements_sha256=file_sha256(args.measurements),
               warnings=doubts + list(model.fit.get("warnings", [])))
    from dataclasses import replace

    report = report_dict(calibration, args.measurements)
    report["warnings"] = doubts + report["warnings"]
    # the model last: a report that cannot be written leaves the old model in place
    if args.report:
        with atomic_write(args.report) as handle:
            if args.report.lower().endswith(".json"):
                handle.write(json_text(report, indent=1))
            else:
                handle.write(report_markdown(report))
    write_model(replace(model, fit=fit), args.out)
    print(report_markdown(report) if not args.json else json_text(report))
    to_stderr(f"calibrate: wrote {args.out}" + (f" and {args.report}" if args.report
                                                 else ""))
    return 0


PREDICTED = ("predicted_mean_ms", "predicted_ci_low_ms", "predicted_ci_high_ms",
             "predicted_throughput")


def cmd_predict_model(args) -> int:
    """``cassandra predict --model``: every query row with its predicted columns."""
    from sizing.network_model_file import is_network_model

    figure = getattr(args, "figure", None)
    grid = getattr(args, "threads", None) is not None
    if args.out is not None:
        check_table_out(args.out, "--out")
    if figure is not None:
        check_writable(figure, "--figure", (".png",))
    if args.measurements and grid:
        raise ConfigError("give the rows to predict once: --measurements QUERY.csv or "
                          "a grid (--threads), not both")
    if not grid and (getattr(args, "consistency", None) or getattr(args, "operation",
                                                                  None)
                     or getattr(args, "think_ms", None) is not None):
        raise ConfigError("--consistency, --operation and --think-ms shape a --threads "
                          "grid; add --threads N[,N...] (or give --measurements "
                          "QUERY.csv alone, with a think_ms column for the pauses)")
    if not args.measurements and not grid:
        raise ConfigError("--model needs the rows to predict: --measurements QUERY.csv, "
                          "or a grid --threads N[,N...] [--consistency ...] "
                          "[--operation ...]")
    if is_network_model(args.model):
        from forkjoin_cli import _network_calibration

        return _network_calibration.predict(args)
    model = read_model(args.model)  # a simulated model's, or what is wrong with the file
    if getattr(args, "nodes", None) not in (None, model.nodes):
        raise ConfigError("--nodes predicts another cluster size from a model of a "
                          f"closed-network structure; {args.model} was calibrated with "
                          "--structure simulated: calibrate again at the default "
                          "structure, or drop --nodes")
    if grid:
        raise ConfigError("a --threads grid needs a model of a closed-network structure; "
                          f"{args.model} was calibrated with --structure simulated: give "
                          "--measurements QUERY.csv")
    if figure is not None:
        raise ConfigError("--figure needs a model of a closed-network structure; "
                          f"{args.model} was calibrated with --structure simulated")
    rows, names = read_measurements(args.measurements, model.replicas, need_mean=False)
    wanted = [c for c in PERCENTILE_COLUMNS if c in names]
    with _in_file(args.measurements):
        predictions = predict(model, rows, seed=args.seed, progress=to_stderr)
    columns = list(names) + list(PREDICTED) + [f"predicted_{c}" for c in wanted]
    table = []
    for row, pred in zip(rows, predictions):
        entry = {c: stripped_cell(row.raw.get(c, "")) for c in names}
        entry.update({c: pred[c] for c in columns if c.startswith("predicted_")})
        table.append(entry)
        for note in pred["notes"]:
            to_stderr(f"predict: {row.label()}: warning: {note}")
    emit_rows(args, columns, table)
    return 0
