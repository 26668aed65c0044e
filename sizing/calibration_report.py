"""The report of a calibrated closed-network model (`cassandra calibrate --report`,
`sizing.cluster_calibration.ClusterFit.report`): the structure and prior, every fitted
parameter with its 95% interval and what it means, the demands, the warnings, and the
model's own curve against each measured row."""

from __future__ import annotations

import math

import pandas as pd

from forkjoin_sim.errors import counted
from sizing.closed_network import DEMANDS, structure_of
from sizing.network_fit import COORDINATES, demands_of, unused_coordinates
from sizing.network_model import NetworkModel, rows_of_table

#: What each fitted coordinate means, as the report and the warnings say it.
COORDINATE_LABELS = {
    "work": "data read at a replica (ms)",
    "coordinate_share": "coordinator work / replica work",
    "message_share": "per-message work / replica work",
    "digest_ratio": "digest read / data read",
    "client_share": "client-machine work / replica work",
    "hop_client": "client-coordinator hop / replica work",
    "hop_ratio": "coordinator-replica hop / client-coordinator hop",
    "outside_share": "client work outside the latency / replica work",
    "branch_cv": "coefficient of variation of a fork branch's random time",
    "link_window": "messages in flight per direction of a link between data centres",
    "mutation_ratio": "mutation at a replica / data read",
    "lanes": "separate queues per node (structure lanes)",
    "hop_spread": "farthest / nearest fitted hop from the coordinating node"}

#: The demand (`sizing.closed_network.DEMANDS`) a coordinate sets, where the names
#: differ.
_DEMAND_OF = {"outside_share": "client_outside"}

#: Coordinates the model uses no lower than a floor (a lane per node; the farthest hop
#: at least the nearest): the report's intervals stop there.
USED_FROM = {"lanes": 1.0, "hop_spread": 1.0}


def report_dict(model: NetworkModel, table: pd.DataFrame) -> dict:
    """The fit report: structure, prior, parameters with intervals, rows."""
    f = model.fit
    rows = model.with_outside(rows_of_table(table))
    plain = f.predict(rows)[0]
    z = 1.959963984540054
    parameters = {}
    # parameters the structure has no use for (no wide-area link in one data centre,
    # the node's cores rather than lanes, no client work outside the latency, ...): the
    # fit leaves them at their prior, so they are not reported, nor their demands
    hidden = unused_coordinates(f.structure, f.geography, model.replicas)
    hidden_demands = {_DEMAND_OF.get(name, name) for name in hidden}
    for i, name in enumerate(COORDINATES):
        if name in hidden:
            continue
        value = math.exp(f.point[i])
        # below its floor the model uses the floor (`sizing.network_fit.demands_of`)
        floor = USED_FROM.get(name, 0.0)
        parameters[name] = {
            "meaning": COORDINATE_LABELS[name], "value": value,
            "interval_95": [max(math.exp(f.point[i] - z * f.posterior_sd[i]), floor),
                            max(math.exp(f.point[i] + z * f.posterior_sd[i]), floor)],
            "prior_median": math.exp(f.prior.mean[i]),
            "rests_on_prior": name in model.meta.get("resting_on_prior", [])}
    return {"measurements": model.meta.get("measurements"),
            "sha256": model.meta.get("measurements_sha256"),
            "structure": f.structure, "structure_choice": model.meta.get("structure_choice"),
            "nodes": model.nodes, "replicas": model.replicas,
            "cores": f.cores, "client_cores": f.client_cores,
            "client_station": structure_of(f.structure).client_station,
            **prior_used(model.meta.get("prior_source"), f.prior, f.geography),
            "parameters": parameters,
            "demands_ms": {k: float(v) for k, v in zip(DEMANDS, demands_of(f.point))
                           if k not in hidden_demands},
            "datacentres": None if f.geography is None else {
                "file": model.meta.get("datacentres"), "source": f.geography.source,
                "coordinator": f.geography.coordinator, "fitted": f.geography.fitted},
            "anchor_rms": model.anchors.spread,
            "warnings": list(model.meta.get("warnings", [])),
            "rows": [{"row": label, "measured_mean_ms": m, "model_mean_ms": float(p),
                      "residual_mean": float(p / m - 1), "outside_ms": float(z)}
                     for label, m, p, z in zip(table.label, table.mean_ms, plain,
                                               rows["think_ms"])],
            "seconds": model.meta.get("seconds")}


#: How a prior's source names its parts (`benchmarks/cassandra_heldout.py` writes
#: them, "; " between): the part on the levels' ratios and steps, and the part on the
#: window of a wide-area link.
LEVEL_PART, WINDOW_PART = "level prior", "link window"


def prior_used(source: str | None, prior, geography) -> dict:
    """What a fit took from its ``prior`` (its description ``source``): ``prior``, the
    parts of ``source`` the fit used, and ``prior_left_out``, the parts it did not use
    and why (None if it used them all). With data centres (``geography``) the level
    prior is left out (`sizing.network_fit.fit`: the round trips between them set
    what a level costs); in one data centre, the window of a wide-area link."""
    parts = [part for part in (source or "").split("; ") if part]
    if geography is not None:
        unused, why = LEVEL_PART, ("with data centres the round trips between them "
                                   "set what a level costs")
        has = (prior.level_mean is not None or prior.level_shape_sd is not None
               or prior.level_step_mean is not None or bool(prior.level_step_by_operation))
    else:
        unused, why = WINDOW_PART, "one data centre has no wide-area link"
        has = False  # a coordinate: the report hides it, the source may still name it
    left = [part for part in parts if part.startswith(unused)]
    if has and not left:
        left = [f"its {unused}"]
    if not left:
        return {"prior": source, "prior_left_out": None}
    used = [part for part in parts if not part.startswith(unused)]
    return {"prior": "; ".join(used) or "its parameters' prior only",
            "prior_left_out": f"{'; '.join(left)} ({why})"}


def _places(report: dict) -> str:
    """The report's sentence on data centres: the file and coordinator rule, or where
    the fitted ones came from; empty in one data centre."""
    places = report.get("datacentres")
    if not places:
        return ""
    rule = f'coordinator rule "{places["coordinator"]}"'
    if not places["file"]:
        return f" Data centres: none given; {places['source']} ({rule})."
    return (f" Data centres: {places['file']} ({rule}"
            + ("; times left out of the file fitted" if places.get("fitted") else "")
            + (f"; times from {places['source']}" if places["source"] else "") + ").")


def report_markdown(report: dict) -> str:
    """The report of `report_dict` as markdown: the setting, the parameters with
    their 95% intervals and prior medians, the demands, the warnings, and the model's
    own curve against each row."""
    lines = [f"# Calibration of {report['measurements']}", "",
             f"Structure `{report['structure']}`; {counted(report['nodes'], 'node')}, "
             f"{counted(report['replicas'], 'replica')}, "
             + (f"{counted(report['parameters']['lanes']['value'], 'lane', 3)} per node "
                "(fitted), "
                if "lanes" in report["parameters"]
                else f"{counted(report['cores'], 'core')} per node, ")
             + (f"{counted(report['client_cores'], 'client core')}. "
                if report.get("client_station") else "client machine not queued. ")
             + f"Prior: {report['prior']}"
             + (f"; not used in the fit: {report['prior_left_out']}"
                if report.get("prior_left_out") else "") + ". "
             f"Fitted in {report['seconds']:.1f} s." + _places(report)
             + (f" Structure: {report['structure_choice']}."
                if report.get("structure_choice") else ""), "",
             "| parameter | value | 95% interval | prior median | rests on prior |",
             "|---|---|---|---|---|"]
    for name, p in report["parameters"].items():
        low, high = p["interval_95"]
        lines.append(f"| {p['meaning']} (`{name}`) | {p['value']:.4g} | "
                     f"[{low:.3g}, {high:.3g}] | {p['prior_median']:.3g} | "
                     f"{'yes' if p['rests_on_prior'] else ''} |")
    lines += ["", "Demands (ms): " + ", ".join(
        f"{k} {v:.4g}" for k, v in report["demands_ms"].items()), "",
        "## Warnings", ""]
    lines += [f"- {w}" for w in report["warnings"]] or ["- none"]
    lines += ["", f"## The model's own curve against each row (anchors: "
                  f"{100 * report['anchor_rms']:.1f}% rms)", "",
              "| row | measured ms | model ms | error | outside ms |",
              "|---|---|---|---|---|"]
    for r in report["rows"]:
        lines.append(f"| {r['row']} | {r['measured_mean_ms']:.4g} | "
                     f"{r['model_mean_ms']:.4g} | {100 * r['residual_mean']:+.1f}% | "
                     f"{r['outside_ms']:.3g} |")
    return "\n".join(lines) + "\n"
