"""sizing: features performance engineers run on their own systems.

They need both the closed forms (``analytic``) and the simulator (``forkjoin_sim``),
which never import each other, so they live here:

==========================  ==================================================
``cluster_calibration``     calibrate a Cassandra cluster from benchmark rows and
                            predict query rows (``calibrate_cluster``,
                            ``predict_table``): the default, a closed network
``closed_network``          the closed network: what queues on a request's path
``network_fit``             its fit, and the priors for what rows cannot tell
``network_model``           the fitted model, its anchors and its TOML text
``network_model_file``      a model file read back, checked
``structure_choice``        a structure chosen by the rows' own held-out error
``geography``               nodes and client in data centres, and their hops
``mixes``                   read/write mixes and strong (R, W) pairs of a model
``calibration_notes``       what a fit or a prediction says besides its numbers
``calibration_figure``      the figure of a calibrated model beside its rows
``calibration_report``      its report: parameters, intervals, each row's miss
``measurements``            benchmark summaries (CSV) read and checked
``benchmark_formats``       YCSB and cassandra-stress output as it comes
``calibration``             the previous, simulated replica-stage fit
                            (``--structure simulated``), ``calibrated_model``
                            its file
``tails``, ``planning``     latency percentiles, timeouts and the (R, W) and
                            capacity planners, from Theorem 1
``staleness_planning``      the fastest (R, W) meeting a staleness bound
``sweep_columns``           closed forms beside a simulated sweep's rows
==========================  ==================================================

Their commands (``cassandra calibrate`` / ``predict --model``, ``plan-consistency``,
``plan-capacity``, ``timeouts``) live in ``forkjoin_cli``, which imports them; no
module here imports the command line.
"""

#: The functions a notebook reaches for, as ``sizing.NAME``: each module is imported
#: only when its name is first used (pandas and scipy.optimize load slowly).
API = {
    "calibrate_cluster": "cluster_calibration", "predict_table": "cluster_calibration",
    "read_network_model": "network_model_file", "predict_mix": "mixes",
    "plan_strong_pairs": "mixes", "plan_consistency": "planning",
    "plan_capacity": "planning", "timeout_table": "tails",
}
__all__ = sorted(API)


def __getattr__(name: str):
    if name in API:
        import importlib

        return getattr(importlib.import_module(f"sizing.{API[name]}"), name)
    raise AttributeError(f"module 'sizing' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(API))
