"""The Python face of calibration: a notebook fits and predicts as the command line
does, from a file or a DataFrame, and gets tables, warnings and figures back."""

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from forkjoin_sim.errors import ConfigError
from sizing.cluster_calibration import PREDICTED, ClusterFit, calibrate_cluster, \
    predict_table
from sizing.network_model import read_network_model, rows_of_table

KARPENKO_C = Path(__file__).resolve().parent.parent / "docs/data/karpenko2021/cluster_c.csv"


@pytest.fixture(scope="module")
def reads():
    """Karpenko C's reads at ONE and ALL, 100-1000 threads (20 rows)."""
    table = pd.read_csv(KARPENKO_C)
    return table[(table.operation == "read") & (table.consistency != "QUORUM")]


@pytest.fixture(scope="module")
def from_file(reads, tmp_path_factory):
    path = tmp_path_factory.mktemp("fit") / "reads.csv"
    reads.to_csv(path, index=False)
    return calibrate_cluster(str(path), nodes=3, replicas=3), path


def test_a_dataframe_fits_as_its_file_does(reads, from_file):
    fitted, path = from_file
    again = calibrate_cluster(reads, nodes=3, replicas=3)
    assert isinstance(again, ClusterFit)
    np.testing.assert_allclose(again.model.fit.point, fitted.model.fit.point, rtol=1e-12)
    assert fitted.model.meta["measurements"] == str(path)
    assert again.model.meta["measurements"] == "the DataFrame"
    assert again.model.meta["measurements_sha256"] == fitted.model.meta[
        "measurements_sha256"]
    assert len(again.table) == len(reads) == 20


def test_predictions_come_back_as_a_table_with_intervals(from_file):
    fitted, _ = from_file
    query = pd.DataFrame({"operation": "read", "consistency": ["ONE", "QUORUM", "ALL"],
                          "threads": [250, 250, 250]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frame = predict_table(fitted, query)
    # inside the fitted threads: the one warning is what rests on the prior
    said = [str(w.message) for w in caught]
    assert len(said) == 1 and "rest on the prior" in said[0]
    assert list(frame.columns) == ["operation", "consistency", "threads", *PREDICTED]
    assert frame.threads.dtype.kind in "iu"  # the query's numbers stay numbers
    mean, throughput = fitted.model.predict(rows_of_table(fitted.table))
    assert len(mean) == len(throughput) == 20
    assert np.all(frame.predicted_ci_low_ms < frame.predicted_mean_ms)
    assert np.all(frame.predicted_mean_ms < frame.predicted_ci_high_ms)
    # waiting for more replicas is never faster; QUORUM between the measured levels
    assert frame.predicted_mean_ms.is_monotonic_increasing
    # 250 threads lies between the measured 200 and 300: so does the prediction
    measured = fitted.table.set_index(["consistency", "threads"]).mean_ms
    for level in ("ONE", "ALL"):
        got = frame[frame.consistency == level].predicted_mean_ms.iloc[0]
        assert measured[(level, 200.0)] < got < measured[(level, 300.0)]


def test_a_model_file_predicts_as_the_fit_did(from_file, tmp_path):
    fitted, _ = from_file
    path = tmp_path / "model.toml"
    path.write_text(fitted.model.to_toml())
    query = pd.DataFrame({"operation": "read", "consistency": "QUORUM",
                          "threads": [150, 650]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # what rests on the prior: said above
        direct = predict_table(fitted.model, query)
        again = predict_table(str(path), query)
    np.testing.assert_allclose(again[list(PREDICTED)], direct[list(PREDICTED)],
                               rtol=1e-6)
    assert read_network_model(str(path)).meta["measurements"] == \
        fitted.model.meta["measurements"]


def test_past_the_fitted_threads_the_prediction_warns(from_file):
    fitted, _ = from_file
    query = pd.DataFrame({"operation": "read", "consistency": ["ALL"],
                          "threads": [2000]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        predict_table(fitted, query)
    assert any("extrapolated" in str(w.message) for w in caught)


def test_bad_rows_of_a_dataframe_are_named_without_a_temporary_path(reads):
    bad = reads.assign(mean_ms=reads.mean_ms.where(reads.threads != 300, -1.0))
    with pytest.raises(ConfigError, match="the DataFrame line") as caught:
        calibrate_cluster(bad, nodes=3, replicas=3)
    assert "/tmp" not in str(caught.value) and "measurements.csv" not in str(caught.value)


def test_a_model_that_is_not_a_closed_network_file_is_refused(tmp_path):
    path = tmp_path / "prior.toml"
    path.write_text((Path(__file__).resolve().parent.parent / "sizing"
                     / "default_prior.toml").read_text())
    with pytest.raises(ConfigError, match="not a closed-network model file"):
        predict_table(str(path), pd.DataFrame({"operation": ["read"],
                                               "consistency": ["ONE"],
                                               "threads": [10]}))


def test_the_report_and_figure_of_a_fit(from_file, tmp_path):
    fitted, _ = from_file
    report = fitted.report()
    assert report["structure"] == fitted.model.fit.structure
    assert len(report["rows"]) == 20
    # reads only: what a write costs rests on the prior, and the fit says so
    assert any("mutation_ratio" in note for note in fitted.warnings)
    fitted.figure(str(tmp_path / "fit.png"), title="Karpenko C reads")
    assert (tmp_path / "fit.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
