"""The Python face of calibration: a notebook fits and predicts as the command line
does, from a file or a DataFrame, and gets tables, warnings and figures back."""

import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from forkjoin_sim.errors import ConfigError
from sizing.calibration_notes import wide_intervals
from sizing.cluster_calibration import PREDICTED, ClusterFit, calibrate_cluster, \
    predict_table, predicted_rows, query_grid, table_of
from sizing.measurements import read_measurements
from sizing.network_model import rows_of_table
from sizing.network_model_file import read_network_model

# calibrate_cluster warns its doubts (tested where they matter); here they are noise
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

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
    # inside the fitted threads: what rests on the prior, (no throughput in the
    # fitted rows) what the predicted throughput is, and that QUORUM was not fitted
    said = [str(w.message) for w in caught]
    assert len(said) == 3 and "rest on the prior" in said[0]
    assert said[1].startswith("no fitted closed-loop row had a throughput, so a closed "
                              "loop's predicted throughput is threads / predicted "
                              "latency")
    assert said[2].startswith("row 1: reads at a level the model was not fitted at "
                              "(waiting for 2 replicas; fitted at 1 and 3 replicas)")
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


def test_a_files_cells_come_back_as_read_without_their_blanks(from_file, tmp_path):
    # a spreadsheet's " 300 " is read as 300: the output says what was read, as
    # numbers where they are numbers, so that it joins on the query's values
    fitted, _ = from_file
    query = tmp_path / "query.csv"
    query.write_text("operation,consistency,threads\n read , ALL ,  300 \nread,ONE,300\n")
    frame = predict_table(fitted, str(query))
    assert frame.operation.tolist() == ["read", "read"]
    assert frame.consistency.tolist() == ["ALL", "ONE"]
    assert frame.threads.tolist() == [300, 300] and frame.threads.dtype.kind in "iu"
    assert frame.predicted_mean_ms.iloc[0] > frame.predicted_mean_ms.iloc[1]


def test_a_stated_pause_is_each_rows_clients_cycle_and_a_query_can_ask_another(
        tmp_path):
    """JMeter runs without throughputs whose constant timer differs between runs at
    the same users and level (as Ferreira's Table 3): each row keeps its own pause
    between requests, through the fit, the anchors and the model file, and a query
    asks the pause it states, or, stating none, the fitted rows'."""
    rows = [("ONE", 10, 20.0, 1000.0), ("ONE", 40, 30.0, 1000.0),
            ("ONE", 40, 60.0, 100.0), ("ALL", 10, 40.0, 1000.0),
            ("ALL", 40, 60.0, 1000.0)]
    path = tmp_path / "jmeter.csv"
    path.write_text("operation,consistency,threads,mean_ms,think_ms\n" + "".join(
        f"read,{level},{users},{mean},{pause}\n" for level, users, mean, pause in rows))
    fitted = calibrate_cluster(str(path), nodes=3, replicas=3)
    assert fitted.model.outside is None  # no throughput: no time beside the pauses
    saved = tmp_path / "m.toml"
    fitted.save(str(saved))
    query = pd.DataFrame({"operation": "read", "consistency": "ONE",
                          "threads": [40, 40, 40, 10], "think_ms": [1000.0, 100.0,
                                                                    np.nan, np.nan]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frame = predict_table(fitted, query)
    again = predict_table(str(saved), query)
    np.testing.assert_allclose(again.predicted_mean_ms, frame.predicted_mean_ms,
                               rtol=1e-12)
    # a fitted row of its own configuration comes back as measured (10 threads,
    # pausing as it did), and so do the two runs at 40 threads: each pause's rows
    # anchor its own predictions (they were once averaged, which put both between)
    assert frame.predicted_mean_ms.iloc[3] == pytest.approx(20.0, rel=1e-9)
    assert frame.predicted_mean_ms.iloc[0] == pytest.approx(30.0, rel=1e-9)
    assert frame.predicted_mean_ms.iloc[1] == pytest.approx(60.0, rel=1e-9)
    # each row's cycle is its latency and its own pause; a row without one takes the
    # fitted rows' (40 threads: 1000 and 100 ms carried as their mean, 550 ms)
    pause = np.array([1000.0, 100.0, 550.0, 1000.0])
    np.testing.assert_allclose(frame.predicted_throughput,
                               1000.0 * query.threads / (frame.predicted_mean_ms + pause),
                               rtol=1e-9)
    # the throughput's interval holds its prediction
    assert np.all(frame.predicted_throughput_ci_low <= frame.predicted_throughput)
    assert np.all(frame.predicted_throughput <= frame.predicted_throughput_ci_high)
    said = [str(w.message) for w in caught if "think_ms" in str(w.message)]
    assert len(said) == 1 and said[0].startswith(
        "row 2 and 1 more row: no think_ms given, so the clients pause as the fitted "
        "rows' did (550 to 1000 ms")
    # every pause asked was fitted: nothing said of another pause; one between is
    assert not any("no row at that pause" in str(w.message) for w in caught)
    between = pd.DataFrame({"operation": "read", "consistency": "ONE", "threads": [40],
                            "think_ms": [550.0]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        predict_table(fitted, between)
    said = [str(w.message) for w in caught if "no row at that pause" in str(w.message)]
    assert said == ["row 0: a pause of 550 ms between a reply and the next request, "
                    "while the fitted rows paused 100 to 1000 ms: the model's own curve "
                    "says what the other pause changes, carried from the fitted rows' "
                    "misses, which no row at that pause measured"]
    # the posterior's re-anchoring reproduces the measured means at the fitted rows
    np.testing.assert_allclose(np.exp(fitted.model.measured_log_ms),
                               [mean for _, _, mean, _ in rows], rtol=1e-9)


def _paused_fit(tmp_path, rows, name="paused.csv", header="mean_ms,think_ms"):
    """calibrate_cluster of reads or writes ``rows`` (operation, level, threads, and
    the ``header``'s cells), its warnings held back."""
    path = tmp_path / name
    path.write_text(f"operation,consistency,threads,{header}\n" + "".join(
        ",".join(str(cell) for cell in row) + "\n" for row in rows))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return calibrate_cluster(str(path), nodes=3, replicas=3)


def test_an_operation_fitted_at_one_pause_carries_its_anchors_to_every_pause(tmp_path):
    """Writes fitted at 500 ms only, reads at 100 and 500: a write at 100 ms takes the
    writes' one pause's anchors, as one fitted level carries its anchor (a review saw
    it take none, at 100 ms, and its band reach 1,010 ms about 54)."""
    fitted = _paused_fit(tmp_path, [
        ("read", "ONE", 10, 20.0, 100), ("read", "ONE", 40, 30.0, 100),
        ("read", "ONE", 10, 15.0, 500), ("read", "ONE", 40, 18.0, 500),
        ("write", "ONE", 10, 40.0, 500), ("write", "ONE", 40, 60.0, 500)])
    anchors = fitted.model.anchors
    query = dict(threads=np.array([10.0, 10.0]), pause_ms=np.array([100.0, 500.0]),
                 write=np.array([True, True]), quorum=np.array([1, 1]))
    assert anchors.pause_brackets(query) == [[(500.0, 1.0)], [(500.0, 1.0)]]
    correction = anchors.correction(query)
    assert correction[0] == pytest.approx(correction[1], rel=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frame = predict_table(fitted, pd.DataFrame(
            {"operation": "write", "consistency": "ONE", "threads": [10, 10],
             "think_ms": [100.0, 500.0]}))
    assert frame.predicted_mean_ms.iloc[1] == pytest.approx(40.0, rel=1e-9)
    # a shorter pause loads the nodes more; the band stays of the fitted rows' width
    assert frame.predicted_mean_ms.iloc[0] >= frame.predicted_mean_ms.iloc[1]
    assert frame.predicted_ci_high_ms.iloc[0] < 3 * frame.predicted_mean_ms.iloc[0]


def test_rows_past_their_own_pauses_fitted_threads_are_extrapolations(tmp_path):
    """Reads at a 1000 ms pause fitted at 10-40 threads, and at 10 ms at 100-400: a
    1000 ms read at 400 threads is 10 times past its own pause's rows, and its band
    and notes say so (a review saw a band of 5.9-8.1 ms and no note, the other
    pause's rows reaching 400)."""
    slow = [("read", "ONE", t, m, 1000.0) for t, m in ((10, 5.0), (20, 5.5), (40, 6.5))]
    fast = [("read", "ONE", t, m, 10.0) for t, m in ((100, 20.0), (200, 45.0),
                                                      (400, 95.0))]
    fitted = _paused_fit(tmp_path, slow + fast)
    query = pd.DataFrame({"operation": "read", "consistency": "ONE", "threads": [40, 400],
                          "think_ms": 1000.0})
    asked = dict(threads=np.array([40.0, 400.0]), pause_ms=np.array([1000.0, 1000.0]),
                 write=np.array([False, False]), quorum=np.array([1, 1]),
                 nodes=np.array([3, 3]), replicas=np.array([3, 3]))
    assert fitted.model.fitted_top(asked).tolist() == [40.0, 40.0]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frame = predict_table(fitted, query)
    said = [str(w.message) for w in caught]
    assert any(note.startswith("rows past 40 threads, the most the model was fitted at")
               for note in said)
    low, high = frame.predicted_ci_low_ms.iloc[1], frame.predicted_ci_high_ms.iloc[1]
    assert high / low > 10
    # at its own pause's largest threads, no extrapolation
    assert frame.predicted_mean_ms.iloc[0] == pytest.approx(6.5, rel=1e-9)


def test_rows_stating_no_pause_bound_the_level_below_at_every_pause(tmp_path):
    """A run stating no pause (ONE and ALL) beside ONE runs at 100 and 500 ms: its ALL
    rows bound a ONE row of any pause, and a row stating none, as they anchor them
    (a review saw every bound dropped once two pauses were fitted)."""
    fitted = _paused_fit(tmp_path, [
        ("read", "ONE", 10, 20.0, ""), ("read", "ONE", 40, 30.0, ""),
        ("read", "ALL", 10, 25.0, ""), ("read", "ALL", 40, 32.0, ""),
        ("read", "ONE", 10, 22.0, 100), ("read", "ONE", 40, 36.0, 100),
        ("read", "ONE", 10, 18.0, 500), ("read", "ONE", 40, 25.0, 500)])
    rows = dict(threads=np.full(4, 40.0), pause_ms=np.array([np.nan, 100.0, 500.0, 300.0]),
                write=np.zeros(4, bool), quorum=np.array([1, 1, 1, 2]),
                nodes=np.full(4, 3), replicas=np.full(4, 3))
    np.testing.assert_allclose(fitted.model.measured_above(rows), [32.0] * 4)


def test_a_pause_asked_of_rows_that_stated_none_says_what_is_kept_beside_it(tmp_path):
    """Throughputs that show 100 ms per request outside the latency, no stated pause:
    a query stating one is told that the time the throughputs showed is kept beside
    it; rows without throughputs but with a stated pause are not told that their
    clients spend no time between requests (a review saw both)."""
    timed = _paused_fit(tmp_path, [
        ("read", level, t, m, round(1000 * t / (m + 100), 1))
        for level, t, m in (("ONE", 10, 5.0), ("ONE", 40, 6.0), ("ALL", 10, 8.0),
                            ("ALL", 40, 10.0))], header="mean_ms,throughput")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        predict_table(timed, pd.DataFrame({"operation": "read", "consistency": "ONE",
                                           "threads": [40], "think_ms": [100.0]}))
    said = [str(w.message) for w in caught if "no row at that pause" in str(w.message)]
    assert len(said) == 1 and said[0].endswith(
        "no row at that pause measured; the clients' time outside the latency that the "
        "fitted throughputs showed is kept beside it")
    plain = _paused_fit(tmp_path, [("read", level, t, m) for level, t, m in (
        ("ONE", 10, 5.0), ("ONE", 40, 6.0), ("ALL", 10, 8.0), ("ALL", 40, 10.0))],
        name="plain.csv", header="mean_ms")
    for pause, told in ((250.0, False), (np.nan, True)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            plain.predict(threads=[10], consistency="ONE",
                          think_ms=None if np.isnan(pause) else pause)
        assert any("spend no time between requests" in str(w.message)
                   for w in caught) == told


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


def test_spread_columns_are_said_to_be_unused(from_file):
    """A query (or a fitted file) with percentile columns used to get no percentile
    predictions and no word why; other files get no such note."""
    fitted, _ = from_file
    assert not any("p95_ms" in note for note in fitted.warnings)
    query = pd.DataFrame({"operation": "read", "consistency": ["ALL"],
                          "threads": [500], "p95_ms": [None], "p99_ms": [None]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = predict_table(fitted, query)
    said = [str(w.message) for w in caught if "p95_ms, p99_ms are read but not used"
            in str(w.message)]
    assert len(said) == 1 and "--structure simulated" in said[0]
    assert "predicted_p95_ms" not in table


def test_benchmark_outputs_percentiles_are_not_said_to_be_unused():
    """YCSB's output holds percentiles the user did not write as columns: no note
    that the user could act on."""
    ycsb = Path(__file__).resolve().parent / "data/ycsb_workloadc_quorum_100threads.txt"
    assert "p95_ms" in read_measurements(str(ycsb), replicas=3)[1]
    fitted = calibrate_cluster(str(ycsb), nodes=3, replicas=3)
    assert not any("are read but not used" in note for note in fitted.warnings)


def test_notes_name_a_files_own_lines_past_skipped_rows(tmp_path):
    """Rows of only commas and blank lines are skipped; a note about a row then named
    the line its position gave (12), not the file's (14)."""
    lines = KARPENKO_C.read_text().splitlines()
    lines = [lines[0], ",,,,", ""] + [line for line in lines[1:] if ",ALL," not in line]
    slip = lines.index("read,QUORUM,100,,6.972")
    lines[slip] = "read,QUORUM,100,,69.72"  # a factor 10 off
    path = tmp_path / "c.csv"
    path.write_text("\n".join(lines) + "\n")
    fitted = calibrate_cluster(str(path), nodes=3, replicas=3)
    said = [note for note in fitted.warnings if "far more than the others" in note]
    assert len(said) == 1 and f"line {slip + 1} (read QUORUM 100 threads" in said[0]


def test_a_dataframe_row_with_no_value_is_refused(from_file):
    """An all-empty row is skipped in a file; in a DataFrame it would break the one
    row per index label that the answer and the notes rely on."""
    fitted, _ = from_file
    query = pd.DataFrame({"operation": ["read", " "], "consistency": ["ALL", None],
                          "threads": [500, None]}, index=["ok", "blank"])
    with pytest.raises(ConfigError, match="row 'blank' of the DataFrame has no value"):
        predict_table(fitted, query)


def test_bad_rows_of_a_dataframe_are_named_without_a_temporary_path(reads):
    bad = reads.assign(mean_ms=reads.mean_ms.where(reads.threads != 300, -1.0))
    with pytest.raises(ConfigError, match="the DataFrame row") as caught:
        calibrate_cluster(bad, nodes=3, replicas=3)
    assert "/tmp" not in str(caught.value) and "measurements.csv" not in str(caught.value)


def test_a_model_that_is_not_a_closed_network_file_is_refused(tmp_path):
    path = tmp_path / "prior.toml"
    path.write_text((Path(__file__).resolve().parent.parent / "sizing"
                     / "default_prior.toml").read_text())
    with pytest.raises(ConfigError, match="not a calibrated model file"):
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
    # a lanes model has no client work outside the latency, no wide-area links and
    # no fitted hop spread: those parameters and their demands are not reported
    assert fitted.model.fit.structure == "lanes"
    for unused in ("outside_share", "link_window", "hop_spread"):
        assert unused not in report["parameters"]
    assert "client_outside" not in report["demands_ms"]
    assert {"work", "lanes", "digest_ratio"} <= set(report["parameters"])
    assert not report["client_station"]
    fitted.figure(str(tmp_path / "fit.png"), title="Karpenko C reads")
    assert (tmp_path / "fit.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_prediction_figure_from_python_is_the_commands(from_file, tmp_path,
                                                         monkeypatch):
    """`predict_table(..., figure=)` (and `ClusterFit.predict`) draw what `cassandra
    predict --figure` draws: the same query rows, model, title and draws' seed; a name
    that is not a PNG is refused before anything is predicted."""
    import sizing.calibration_figure
    from forkjoin_cli.main import main

    fitted, _ = from_file
    drawn = []
    monkeypatch.setattr(sizing.calibration_figure, "draw",
                        lambda path, model, table, title="", seed=0:
                        drawn.append((path, model, table, title, seed)))
    model_path, query_path = tmp_path / "m.toml", tmp_path / "q.csv"
    fitted.save(str(model_path))
    pd.DataFrame({"operation": "read", "consistency": ["QUORUM", "QUORUM"],
                  "threads": [150, 650], "mean_ms": [7.5, 17.5]}).to_csv(query_path,
                                                                        index=False)
    frame = predict_table(str(model_path), str(query_path), seed=3,
                          figure=str(tmp_path / "api.png"))
    assert main(["cassandra", "predict", "--model", str(model_path), "--measurements",
                 str(query_path), "--figure", str(tmp_path / "cli.png"), "--seed", "3",
                 "--out", str(tmp_path / "p.csv")]) == 0
    assert len(drawn) == 2
    api, cli = drawn
    assert api[0].endswith("api.png") and cli[0].endswith("cli.png")
    assert api[3] == cli[3] == f"predict {query_path}" and api[4] == cli[4] == 3
    pd.testing.assert_frame_equal(api[2], cli[2])
    assert list(api[2].mean_ms) == [7.5, 17.5]  # the measured values are drawn
    assert len(frame) == 2
    fitted.predict(query_path, figure=str(tmp_path / "fit.png"))  # a Path
    assert len(drawn) == 3 and drawn[2][2].equals(api[2])
    assert drawn[2][3] == f"predict {query_path}"
    fitted.predict(threads=[150], figure=str(tmp_path / "grid.png"))
    assert drawn[3][3] == "predict a grid"  # as `cassandra predict --threads` titles it
    # refused before any prediction
    monkeypatch.setattr("sizing.cluster_calibration.predicted_rows",
                        lambda *a, **k: pytest.fail("predicted before the check"))
    with pytest.raises(ConfigError, match="must end in .png"):
        predict_table(fitted, str(query_path), figure=str(tmp_path / "p.pdf"))


def test_a_grid_is_asked_by_keywords_as_the_command_asks_it(from_file):
    """`fitted.predict(threads=..., consistency=...)` is `cassandra predict --threads
    --consistency`: the grid of `query_grid`, predicted; a query or a grid, not both
    or neither."""
    fitted, _ = from_file
    grid = fitted.predict(threads=[150, 650], consistency="QUORUM")
    query = query_grid(fitted, [150, 650], ["QUORUM"])
    pd.testing.assert_frame_equal(grid, predict_table(fitted, query))
    assert list(grid.consistency) == ["QUORUM", "QUORUM"] and len(
        fitted.predict(threads=300)) == 3  # ONE, QUORUM, ALL of the fitted reads
    assert len(fitted.predict(threads=np.int64(300), consistency="ALL")) == 1
    paused = fitted.predict(threads=[150], consistency="ALL", think_ms=100.0)
    pd.testing.assert_frame_equal(paused, predict_table(
        fitted, query_grid(fitted, [150], ["ALL"], think_ms=100.0)))
    assert paused.think_ms.tolist() == [100.0]
    for wrong, words in (({}, "give either a query"),
                         ({"query": query, "threads": [1]}, "give either a query"),
                         ({"query": query, "consistency": "ONE"}, "shape a grid"),
                         ({"query": query, "think_ms": 100.0}, "shape a grid"),
                         ({"threads": [100], "think_ms": -1.0}, "give one finite pause"),
                         ({"threads": [100], "think_ms": np.inf}, "give one finite pause"),
                         ({"threads": [100], "think_ms": True}, "give one finite pause"),
                         ({"threads": []}, "threads= is empty"),
                         ({"threads": [100], "consistency": []}, "consistency= is empty")):
        with pytest.raises(ConfigError, match=words):
            fitted.predict(**wrong)


def test_a_dataframe_query_comes_back_whole(from_file):
    fitted, _ = from_file
    query = pd.DataFrame({"operation": "read", "consistency": ["ONE", "ALL"],
                          "threads": [250, 350], "run": ["a", "b"]}, index=[7, 3])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frame = predict_table(fitted, query)
    # the index and the user's own columns stay, so the answer joins back on them
    assert list(frame.index) == [7, 3] and list(frame.run) == ["a", "b"]
    assert list(frame.columns) == [*query.columns, *PREDICTED]
    joined = query.join(frame[["predicted_mean_ms"]])
    assert joined.predicted_mean_ms.notna().all()


def test_messages_about_a_dataframe_name_its_index_labels(reads):
    bad = reads.set_axis(range(100, 100 + len(reads)))
    bad.loc[105, "mean_ms"] = np.nan
    with pytest.raises(ConfigError, match="the DataFrame row 105: mean_ms is missing"):
        calibrate_cluster(bad, nodes=3, replicas=3)
    with pytest.raises(ConfigError, match="reset_index"):
        calibrate_cluster(reads.set_index("threads"), nodes=3, replicas=3)
    with pytest.raises(ConfigError, match="not a list"):
        calibrate_cluster([1, 2], nodes=3, replicas=3)


@pytest.mark.parametrize("option", [{"cores": 0}, {"client_cores": 2.5},
                                    {"cores": True}])
def test_cores_are_checked_before_any_work(reads, option):
    with pytest.raises(ConfigError, match="whole number of cores"):
        calibrate_cluster(reads, nodes=3, replicas=3, **option)


def test_a_figure_that_is_not_a_png_is_refused_before_drawing(from_file, tmp_path):
    fitted, _ = from_file
    for name in ("fit", "fit.pdf"):
        with pytest.raises(ConfigError, match="must end in .png"):
            fitted.figure(str(tmp_path / name))
    assert list(tmp_path.iterdir()) == []


def test_closed_rows_from_an_open_loop_model_say_they_are_unanchored():
    rates = pd.DataFrame({"operation": "read", "consistency": "ONE",
                          "rate": [1000.0, 5000.0, 9000.0, 20000.0, 25000.0, 30000.0],
                          "mean_ms": [2.0, 2.2, 2.5, 3.5, 4.5, 6.0]})
    fitted = calibrate_cluster(rates, nodes=3, replicas=3)
    query = pd.DataFrame({"operation": "read", "consistency": "ONE", "threads": [50]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        predict_table(fitted, query)
    assert any("open-loop rows (rate) only" in str(w.message) for w in caught)


def test_a_fit_predicts_and_saves_as_the_functions_do(from_file, tmp_path):
    fitted, _ = from_file
    query = pd.DataFrame({"operation": "read", "consistency": ["QUORUM"],
                          "threads": [450]})
    path = tmp_path / "model.toml"
    fitted.save(path)  # a pathlib.Path, as a str
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        by_method = fitted.predict(query)
        by_file = predict_table(path, query)
    np.testing.assert_allclose(by_method[list(PREDICTED)], by_file[list(PREDICTED)],
                               rtol=1e-6)
    with pytest.raises(ConfigError, match=r"must end in \.toml"):
        fitted.save(str(tmp_path / "model.txt"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.toml"]


def test_rows_past_the_busiest_fitted_row_say_no_row_measures_them():
    """Fitted on ONE and ALL reads up to 300 threads (at most 34,930 ops/s), ONE at
    1,000 threads comes out faster than any fitted row and queued: the note says so
    and names that row alone; a row inside what was fitted gets no such note."""
    table = pd.read_csv(KARPENKO_C)
    fitted = calibrate_cluster(table[(table.operation == "read")
                                     & (table.consistency != "QUORUM")
                                     & (table.threads <= 300)].reset_index(drop=True),
                               nodes=3, replicas=3)
    query = pd.DataFrame({"operation": "read", "consistency": ["ONE", "ONE", "ALL"],
                          "threads": [200, 1000, 1000]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        predicted = predict_table(fitted, query)
    notes = [str(w.message) for w in caught if "busiest fitted row" in str(w.message)]
    assert len(notes) == 1 and notes[0].startswith("row 1 is predicted")
    busiest = 300 / table[(table.operation == "read") & (table.consistency == "ONE")
                          & (table.threads == 300)].mean_ms.iloc[0] * 1000
    assert f"past the {busiest:,.0f} ops/s" in notes[0]
    assert predicted.predicted_throughput.iloc[1] > 1.1 * busiest


DATA = Path(__file__).resolve().parent.parent / "docs/data"


def _busiest_notes(fitted, query) -> tuple[pd.DataFrame, list[str]]:
    """The predicted ``query`` and its notes on rows past the busiest fitted row."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = predict_table(fitted, pd.DataFrame(query))
    return table, [str(w.message) for w in caught
                   if "busiest fitted row" in str(w.message)]


def test_a_fast_row_that_barely_queues_is_not_named():
    """Fitted on george0st's Cassandra 5 writes (at most 42,800 ops/s), a read at ONE
    with 81 threads comes out at over twice that, but a lone read's latency barely
    grows there: no queue decides it, so no note (the rows fitted on C's reads to
    300 threads, above, are named past theirs where they queue)."""
    stress = DATA / "george0st_cassandra_stress/cassandra5_stcs.csv"
    fitted = calibrate_cluster(str(stress), nodes=3, replicas=3)
    predicted, notes = _busiest_notes(fitted, {"operation": ["read"],
                                               "consistency": ["ONE"], "threads": [81]})
    assert predicted.predicted_throughput.iloc[0] > 2 * 42_800
    assert notes == []


def test_fitted_open_rows_count_as_what_the_cluster_carried():
    """sitano's ScyllaDB rows run closed at 84 threads (at most about 127,400 ops/s)
    and open up to a 200,000 ops/s offer: 500 closed threads predicted near 200,000
    ops/s are within what the open rows carried, so no note names them."""
    fitted = calibrate_cluster(str(DATA / "sitano_scylla_ycsb/runs.csv"), nodes=3,
                               replicas=3)
    predicted, notes = _busiest_notes(fitted, {"operation": ["read"],
                                               "consistency": ["ONE"], "threads": [500],
                                               "read_fraction": [1.0]})
    assert 1.1 * 127_400 < predicted.predicted_throughput.iloc[0] < 1.1 * 200_000
    assert notes == []


HUSKICAJLA = DATA / "huskicajla_cassandra_scylla"


@pytest.fixture(scope="module")
def one_level_reads():
    """huskicajla's Cassandra reads of 10M rows, one level (LOCAL_QUORUM), 1-128
    threads, calibrated at the defaults."""
    return calibrate_cluster(str(HUSKICAJLA / "cassandra_a_h1_h2_n3_rf3_read_10m.csv"),
                             nodes=3, replicas=3)


def _every_draw(monkeypatch):
    """Bands from every posterior draw, also for an operation no fitted row measured
    (as before `NetworkModel._ruled_out`): a model of reads of one level then has
    writes' bands of a factor 10 and more, the wide bands the notes below are about."""
    from sizing.network_model import NetworkModel

    monkeypatch.setattr(NetworkModel, "_unanchored",
                        lambda self, rows: np.zeros(len(rows["write"]), bool))


def test_a_band_wider_than_a_factor_ten_is_named_as_a_guess(one_level_reads,
                                                            monkeypatch):
    """Fitted on reads of one level, its writes rest on the prior: with every draw
    their 95% bands span more than a factor 10, and one note names those rows (by the
    DataFrame's labels) and the widest factor; the fitted reads themselves, asked
    again, get no such note."""
    _every_draw(monkeypatch)
    fitted = one_level_reads
    for name, named in (("write", True), ("read", False)):
        query = pd.read_csv(HUSKICAJLA / f"cassandra_a_h1_h2_n3_rf3_{name}_10m.csv")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            table = predict_table(fitted, query)
        notes = [str(w.message) for w in caught if "more than a factor 10" in
                 str(w.message)]
        ratio = table.predicted_ci_high_ms / table.predicted_ci_low_ms
        assert len(notes) == int(named)
        assert (ratio > 10).all() == named and (ratio > 10).any() == named
        if named:
            assert notes[0].startswith("the 95% intervals of row 0, row 1, row 2, row 3 "
                                       "span more than a factor 10")
            assert f"up to a factor {ratio.max():,.3g}" in notes[0]


def test_the_wide_band_note_names_five_rows_and_counts_the_rest():
    low, high = np.ones(8), np.array([2.0, 11, 12, 13, 14, 15, 16, 10.0])
    assert wide_intervals(low, high) == (
        "the 95% intervals of row 2, row 3, row 4, row 5, row 6 and 1 more span more than "
        "a factor 10 (up to a factor 16): the fitted rows do not pin that latency down, "
        "so take the predicted mean there as a guess; a measured row nearer it (its "
        "level, operation or load), calibrated again, narrows it")
    assert wide_intervals(low, 10 * low) is None
    assert wide_intervals(low[:1], 11 * low[:1]).startswith(
        "the 95% interval of row 1 spans")
    # a lower end of 0 is named (no division by it), a NaN band is not
    assert "of row 1 spans" in wide_intervals(np.array([0.0, np.nan]), np.array([1.0, 5.0]))
    assert wide_intervals(np.array([np.nan]), np.array([5.0])) is None


def test_a_grids_rows_are_named_by_what_they_ask(one_level_reads, monkeypatch):
    """A grid of queries (``predict --threads``) has no file lines: its rows carry
    what they ask as their labels, and a note names them so (a model of one level's
    reads, asked for ALL, bands past a factor 10 with every draw)."""
    _every_draw(monkeypatch)
    fitted = one_level_reads
    grid = query_grid(fitted.model, [1, 8], levels=["ALL"], operations=["read", "write"])
    assert list(grid.index) == ["read ALL, 1 thread", "read ALL, 8 threads",
                                "write ALL, 1 thread", "write ALL, 8 threads"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        predict_table(fitted, grid)
    notes = [str(w.message) for w in caught if "more than a factor 10" in str(w.message)]
    assert len(notes) == 1
    assert notes[0].startswith("the 95% intervals of row 'write ALL, 1 thread', "
                               "row 'write ALL, 8 threads' span")


def _lanes_rows(nodes: int, threads) -> pd.DataFrame:
    """Reads at ONE, QUORUM and ALL of a `lanes` cluster of ``nodes`` nodes (3 replicas,
    known demands) at ``threads``: the measurements a cluster of that size would give."""
    from sizing.closed_network import Demands, predict

    truth = Demands(client=0.3, hop_client=0.2, hop_replica=0.2, coordinate=0.3,
                    message=0.02, work=1.0, digest_ratio=0.4, mutation_ratio=0.4,
                    lanes=8.0)
    count = len(threads)
    parts = []
    for name, quorum in (("ONE", 1), ("QUORUM", 2), ("ALL", 3)):
        rows = dict(threads=np.asarray(threads, float), think_ms=np.zeros(count),
                    nodes=np.full(count, nodes), replicas=np.full(count, 3),
                    quorum=np.full(count, quorum), write=np.zeros(count, bool))
        latency, per_ms = predict(truth, rows, "lanes")
        parts.append(pd.DataFrame(dict(operation="read", consistency=name,
                                       threads=threads, throughput=1000 * per_ms,
                                       mean_ms=latency)))
    return pd.concat(parts, ignore_index=True)


@pytest.fixture(scope="module")
def three_nodes():
    """A calibration on rows of a known 3-node `lanes` cluster, 10-400 threads."""
    return calibrate_cluster(_lanes_rows(3, [10, 50, 100, 200, 400]), 3, 3)


@pytest.mark.filterwarnings("ignore:.*(rest on the prior|are extrapolated)")
@pytest.mark.parametrize("nodes", [6, 9])
def test_a_larger_cluster_is_predicted_from_a_smaller_ones_fit(three_nodes, nodes):
    # the cluster's own curve at that size, which the fit never saw: within 15% (the
    # 3-node rows cannot split a lone request between its hops and its work, and the
    # split moves with the chance that the coordinator holds a replica), inside the
    # 95% bands, and twice the nodes carry more at 800 threads
    truth = _lanes_rows(nodes, [10, 100, 400, 800])
    with pytest.warns(UserWarning, match=f"predicted for {nodes} nodes from a model "
                                         "fitted on 3"):
        got = three_nodes.predict(truth[["operation", "consistency", "threads"]],
                                  nodes=nodes)
    error = got.predicted_mean_ms / truth.mean_ms - 1
    assert np.max(np.abs(error)) < 0.15, error
    assert np.all((truth.mean_ms >= got.predicted_ci_low_ms)
                  & (truth.mean_ms <= got.predicted_ci_high_ms))
    same = three_nodes.predict(truth[["operation", "consistency", "threads"]])
    assert np.all(got.predicted_throughput[truth.threads == 800].to_numpy()
                  > 1.3 * same.predicted_throughput[truth.threads == 800].to_numpy())


def test_the_fitted_size_asked_by_name_predicts_as_without_it(three_nodes):
    query = _lanes_rows(3, [20, 300, 900])[["operation", "consistency", "threads"]]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pd.testing.assert_frame_equal(three_nodes.predict(query, nodes=3),
                                      three_nodes.predict(query))
    # and says nothing of another size
    assert caught and not any("predicted for" in str(w.message) for w in caught)


def test_a_cluster_too_small_for_the_replicas_is_refused(three_nodes):
    with pytest.raises(ConfigError, match="replicas"):
        three_nodes.predict(_lanes_rows(3, [10]), nodes=2)


def test_a_model_placed_in_data_centres_predicts_its_own_size_only():
    from sizing.geography import Geography

    rows = _lanes_rows(3, [10, 50, 100, 200])
    # data centres close enough for the rows' 2.3 ms and up (a client round trip
    # longer than the fastest row is refused)
    fit = calibrate_cluster(rows, 3, 3, datacentres=Geography(
        (0, 1, 2), 3, {(0, 1): 0.3, (0, 2): 0.4, (1, 2): 0.35, (0, 3): 0.2,
                       (1, 3): 0.45, (2, 3): 0.5}, "nearest"))
    with pytest.raises(ConfigError, match="places its 3 nodes in data centres"):
        fit.predict(rows, nodes=6)


def test_past_the_fitted_threads_another_size_counts_at_the_same_load_per_node(
        three_nodes):
    """The band past the largest fitted thread count reads the interval at that count,
    which at another size came back a rounding error past it and asked again, for
    ever (9 nodes at 1,600 threads: a RecursionError); and the note on rows past it
    named the fitted count, not the asked size's."""
    query = _lanes_rows(9, [1200, 1600])[["operation", "consistency", "threads"]]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = three_nodes.predict(query, nodes=9)
    assert np.all(np.isfinite(got[list(PREDICTED)].to_numpy()))
    assert np.all((got.predicted_ci_low_ms <= got.predicted_mean_ms)
                  & (got.predicted_mean_ms <= got.predicted_ci_high_ms))
    notes = [str(w.message) for w in caught]
    assert any(note.startswith("rows past 1,200 threads at 9 nodes, the same load per "
                               "node as the most the model was fitted at (400 threads "
                               "on 3)") for note in notes), notes
    # 1,200 threads on 9 nodes is the fitted 400 on 3: nothing past it to name
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        three_nodes.predict(query[query.threads == 1200], nodes=9)
    assert not any("are extrapolated" in str(w.message) for w in caught)


def test_prediction_warnings_point_at_the_users_line(from_file):
    """`ClusterFit.predict` and `predict_table` warn from the caller's line (a query
    past the fitted threads is extrapolated), not from inside the library."""
    fitted, _ = from_file
    query = pd.DataFrame({"operation": ["read"], "consistency": ["ALL"],
                          "threads": [2000]})
    for call in (lambda: fitted.predict(query), lambda: predict_table(fitted, query)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            call()
        assert caught and {Path(w.filename).name for w in caught} == {Path(__file__).name}


def test_a_throughput_far_past_every_fitted_row_is_named_even_without_queues():
    """One row per level at 4 threads on 5 nodes, a lone request's latency: ONE at 16
    threads comes out at about 3.8 times the one ONE row's throughput on a curve that
    does not queue yet; the prediction says that no fitted row measures such a
    throughput. At 5 threads (1.25 times, not queued) it says nothing of the kind.
    (The rows were at 200 threads, 6-13 ms, until the level prior spoke of ALL of its
    sources' 3 replicas: that fit of them queues at 200 threads, the note then says
    so, and no fit of one load can tell which is right.)"""
    latency = [1.2, 1.5, 1.8, 2.4]
    rows = pd.DataFrame({"operation": "read", "consistency": ["ONE", "TWO", "THREE", "ALL"],
                         "threads": 4, "throughput": [4000.0 / m for m in latency],
                         "mean_ms": latency})
    fitted = calibrate_cluster(rows, nodes=5, replicas=5)
    for threads, named in ((16, True), (5, False)):
        query = pd.DataFrame({"operation": ["read"], "consistency": ["ONE"],
                              "threads": [threads]})
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            frame = fitted.predict(query)
        notes = [str(w.message) for w in caught if "busiest fitted row" in str(w.message)]
        assert bool(notes) == named, notes
        if named:
            assert frame.predicted_throughput.iloc[0] > 2.0 * 4000.0 / 1.2
            assert "does not yet queue" in notes[0]


def test_a_mixed_runs_busiest_row_is_named_once_as_the_models_throughput():
    """Found on benchANT's runs: a mixed run's read and write rows share one run's
    throughput, and the note printed it twice ("past the 152,439 and 152,439 ops/s"),
    a number in neither input file without saying it is the model's."""
    fitted = calibrate_cluster(str(DATA / "benchant_cassandra5/runs.csv"), nodes=6,
                               replicas=3)
    _, notes = _busiest_notes(fitted, {"operation": ["read", "write"],
                                       "consistency": "QUORUM", "threads": [1600, 1600],
                                       "read_fraction": [0.5, 0.5]})
    (note,) = notes
    figure = note.split("past the ")[1].split(" ops/s")[0]
    assert " and " not in figure and float(figure.replace(",", "")) > 0
    assert "the model's throughputs, not measured ones" in note


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_a_mixed_runs_throughput_is_threads_over_its_anchored_cycle():
    """A mixed run's read and write rows share one cycle: each operation's share of
    (time outside the latency + anchored latency). Predicted at the fitted rows of
    benchANT's mixed runs, the throughput is the measured one (the model's own, 127.7k
    against 124.9k ops/s at 200 threads, was drawn beside latencies through the rows);
    asked for the reads alone, the run's writes still count in the cycle."""
    runs = pd.read_csv(DATA / "benchant_cassandra5/runs.csv")
    fitted = calibrate_cluster(runs, nodes=6, replicas=3)
    predicted = predict_table(fitted, runs[["operation", "consistency", "threads",
                                            "read_fraction"]])
    np.testing.assert_allclose(predicted.predicted_throughput, runs.throughput,
                               rtol=1e-6)
    reads = runs[runs.operation == "read"].reset_index(drop=True)
    alone = predict_table(fitted, reads[["operation", "consistency", "threads",
                                         "read_fraction"]])
    np.testing.assert_allclose(alone.predicted_throughput, reads.throughput, rtol=1e-6)


def test_calibrate_clusters_doubts_come_as_python_warnings_too():
    """A notebook user saw predict_table's doubts as warnings but calibrate_cluster's
    only in a list: each note of ``.warnings`` is now also a UserWarning."""
    table = pd.read_csv(KARPENKO_C)
    ones = table[(table.operation == "read") & (table.consistency == "ONE")]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fitted = calibrate_cluster(ones.reset_index(drop=True), nodes=3, replicas=3)
    said = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    assert fitted.warnings and all(note in said for note in fitted.warnings)


def test_local_levels_are_refused_where_the_model_places_data_centres(tmp_path):
    """LOCAL_ONE/LOCAL_QUORUM count the coordinator's own data centre's replicas; a
    model with data centres counts every replica. Refused in the fitted rows (before
    the fit), in a query file and in a grid; a grid is built from a `ClusterFit` as
    from its model."""
    table = pd.read_csv(Path(__file__).resolve().parent.parent
                        / "docs/data/karpenko2021/cluster_d.csv")
    one = table[(table.operation == "read") & (table.consistency == "ONE")]
    places = str(Path(__file__).resolve().parent.parent
                 / "docs/data/karpenko2021/cluster_d_client_ap-south-1.toml")
    with pytest.raises(ConfigError, match=r"the DataFrame row \d+: LOCAL_ONE asks the "
                       "replicas of the coordinator's own data centre, which "
                       "--datacentres does not describe"):
        calibrate_cluster(one.assign(consistency="LOCAL_ONE"), nodes=3, replicas=3,
                          datacentres=places)
    fitted = calibrate_cluster(one, nodes=3, replicas=3, datacentres=places)
    query = pd.DataFrame({"operation": ["read"], "consistency": ["LOCAL_QUORUM"],
                          "threads": [100]})
    with pytest.raises(ConfigError, match="row 0: LOCAL_QUORUM asks the replicas"):
        predict_table(fitted, query)
    with pytest.raises(ConfigError, match="give ONE, QUORUM or ALL, the levels of the "
                       "model's placement"):
        query_grid(fitted, [100], ["LOCAL_QUORUM"])
    grid = query_grid(fitted, [100, 200], ["QUORUM"])
    assert grid.equals(query_grid(fitted.model, [100, 200], ["QUORUM"]))
    assert len(predict_table(fitted, grid)) == 2


def test_an_operation_never_measured_gets_a_band_the_fitted_rows_allow(from_file,
                                                                        monkeypatch):
    """Fitted on Karpenko C's reads, its writes rest on the model alone (no anchor
    corrects them). Posterior draws the reads rule out (a hop or share drawn at its
    prior's spread can make the reads thousands of times slower) are left out there:
    the writes' bands spanned a factor 10-19 with every draw (a Monte Carlo width:
    12-15 with another numpy's draws) and hold most of the measured writes within a
    factor 3 now, several times narrower at every row; the reads' bands, anchored,
    are the same either way."""
    from sizing.network_model import NetworkModel

    fitted, _ = from_file
    table = pd.read_csv(KARPENKO_C)
    writes, reads = (table[table.operation == op].drop(columns="mean_ms")
                     for op in ("write", "read"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ruled = predict_table(fitted, writes), predict_table(fitted, reads)
        monkeypatch.setattr(NetworkModel, "_unanchored",
                            lambda self, rows: np.zeros(len(rows["write"]), bool))
        every = predict_table(fitted, writes), predict_table(fitted, reads)
    width = [np.asarray(f.predicted_ci_high_ms / f.predicted_ci_low_ms)
             for f, _ in (ruled, every)]
    # (each end as far as the draws reach on its side: up to 3.1 at 100 threads;
    # every draw: at least 5.7 times as wide at every row)
    assert np.all(width[0] < 4.0) and np.all(width[1] > 3.0 * width[0])
    measured = table[table.operation == "write"].mean_ms.to_numpy()
    inside = ((ruled[0].predicted_ci_low_ms.to_numpy() <= measured)
              & (measured <= ruled[0].predicted_ci_high_ms.to_numpy()))
    assert inside.mean() >= 0.9
    pd.testing.assert_frame_equal(ruled[1], every[1])


def test_the_rows_no_anchor_reaches_are_the_unmeasured_operation_and_loop(from_file):
    """Fitted on closed-loop reads: writes and open-loop reads are the model's own
    (their bands leave out the draws the reads rule out); closed reads, and reads of
    a mixed run, are anchored by the reads."""
    model = from_file[0].model
    rows = dict(write=np.array([False, True, False, False]),
                threads=np.array([100.0, 100.0, np.nan, 100.0]),
                rate=np.array([np.nan, np.nan, 2000.0, np.nan]),
                reads=np.array([1.0, 0.0, 1.0, 0.5]))
    assert list(model._unanchored(rows)) == [False, True, True, False]


def test_a_band_never_starts_below_a_lone_request_nor_within_the_rows_noise():
    """sitano's ScyllaDB runs (50% reads, open and closed), fitted, asked for a 95%
    read mix at higher offered rates: a read's lower end fell to 0.18 ms, below a
    lone read's band (a probe). And fitted on three cassandra-stress rows printed
    as '1.0 ms', the band at a fitted load was +-1%, inside the print's rounding."""
    runs = pd.read_csv(Path(__file__).resolve().parent.parent
                       / "docs/data/sitano_scylla_ycsb/runs.csv")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = calibrate_cluster(runs.iloc[:10], nodes=3, replicas=3)
        query = runs.iloc[10:20].drop(columns="mean_ms")
        asked = predict_table(fitted, query)
        lone = predict_table(fitted, pd.DataFrame(dict(
            operation=["read", "write"], consistency="ONE", threads=1)))
    floor = dict(zip(lone.operation, lone.predicted_ci_low_ms))
    assert np.all(asked.predicted_ci_low_ms.to_numpy()
                  >= asked.operation.map(floor).to_numpy() * (1 - 1e-9))
    from sizing.network_fit import ROW_NOISE
    from scipy import stats

    model = fitted.model
    rows = rows_of_table(fitted.table)
    low, high = model.interval(rows)
    centre = model.predict(rows)[0]
    z = stats.norm.ppf(0.975)
    assert np.all(np.log(high / centre) >= z * ROW_NOISE * (1 - 1e-9))
    assert np.all(np.log(centre / low) >= z * ROW_NOISE * (1 - 1e-9))


KARPENKO_D = KARPENKO_C.parent / "cluster_d.csv"


@pytest.fixture(scope="module")
def geo_writes():
    """Karpenko D's writes (client and nodes in four regions) fitted at QUORUM and ALL
    only, without --datacentres, and its measured ONE writes (flat at 127 ms: ONE
    waits for no other region, so its nodes are far from busy)."""
    table = pd.read_csv(KARPENKO_D)
    writes = table[table.operation == "write"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = calibrate_cluster(writes[writes.consistency != "ONE"], 3, 3)
    return fitted, writes[writes.consistency == "ONE"]


def test_rows_that_cannot_tell_busy_nodes_from_full_links_keep_both(geo_writes):
    """QUORUM and ALL saturate alike whether the nodes' lanes or the wide-area links'
    windows bind; ONE tells them apart (a window binds ONE not at all). The fitted
    point takes the nodes, and so predicted ONE saturating (700 ms at 1,000 threads)
    inside a band of [551, 895] that held 0 of the 10 measured ONE rows. The scale's
    profile finds the other explanation at a cost near the point's, its draws share
    the band, and the band holds every measured row."""
    fitted, one = geo_writes
    fit = fitted.model.fit
    assert fit.alternatives
    weights = np.array([w for w, _, _ in fit.alternatives])
    assert np.all((weights > np.exp(-4.0)) & (weights <= 1.0 + 1e-9))
    query = one[["operation", "consistency", "threads"]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        predicted = fitted.predict(query)
    measured = one.mean_ms.to_numpy()
    # the point still takes the nodes: this is a band, not a point, that changes
    assert predicted.predicted_mean_ms.iloc[-1] > 3 * measured[-1]
    assert np.all((predicted.predicted_ci_low_ms.to_numpy() <= measured)
                  & (measured <= predicted.predicted_ci_high_ms.to_numpy()))
    # some point of the profile leaves ONE unqueued: within 30% of 127 ms throughout
    rows = fitted.model.with_outside(rows_of_table(
        predicted_rows(fitted.model, query)[2]))
    flat = [np.all(np.abs(fit.predict(rows, point)[0] / measured - 1) < 0.3)
            for _, point, _ in fit.alternatives]
    assert any(flat)


def test_the_profile_is_written_and_read_back(geo_writes, tmp_path):
    """The model file keeps the profile's points: read back, the bands are the same."""
    fitted, one = geo_writes
    path = tmp_path / "d.toml"
    fitted.save(str(path))
    back = read_network_model(str(path))
    assert len(back.fit.alternatives) == len(fitted.model.fit.alternatives)
    for (w, p, c), (w2, p2, c2) in zip(back.fit.alternatives,
                                       fitted.model.fit.alternatives):
        assert w == w2 and np.array_equal(p, p2) and np.array_equal(c, c2)
    query = one[["operation", "consistency", "threads"]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pd.testing.assert_frame_equal(predict_table(back, query),
                                      fitted.predict(query))


@pytest.mark.parametrize("edit, say", [
    ("weight = -1.0", "positive weight"),
    ("point = [1.0, 2.0]", "13 finite coordinates"),
    ("wait = 1.0", "needs weight, point and covariance"),
])
def test_a_broken_profile_entry_is_refused(geo_writes, tmp_path, edit, say):
    fitted, _ = geo_writes
    path = tmp_path / "d.toml"
    fitted.save(str(path))
    text = path.read_text()
    key = edit.split(" = ")[0]
    lines = text.splitlines()
    first = next(i for i, line in enumerate(lines) if line == "[[posterior.profile]]")
    at = next(i for i in range(first, len(lines))
              if lines[i].startswith(("weight = " if key == "wait" else key + " = ")))
    lines[at] = edit
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ConfigError, match=say):
        read_network_model(str(path))


def test_the_fit_is_the_lowest_point_its_profile_found():
    """Karpenko C's QUORUM and ALL writes: a profile point (the work held a factor e
    from the fitted point) cost 0.17 less than the point the starts reached (weight
    1.19). Freed from there, the better point is the fit, and no profile point weighs
    more than it."""
    table = pd.read_csv(KARPENKO_C)
    writes = table[(table.operation == "write") & (table.consistency != "ONE")]
    fit = calibrate_cluster(writes, 3, 3).model.fit
    assert fit.alternatives
    assert max(w for w, _, _ in fit.alternatives) <= 1.0 + 1e-9
    # the profile is taken about the fit: its points hold the work at the offsets
    # from it (it was left about the point the starts had reached)
    from sizing.network_fit import PROFILE_OFFSETS
    offsets = np.array([p[0] - fit.point[0] for _, p, _ in fit.alternatives])
    gaps = np.abs(offsets[:, None] - np.array(PROFILE_OFFSETS)[None, :]).min(axis=1)
    assert np.all(gaps < 1e-4)


@pytest.mark.parametrize("other_run, paired", [("ALL", False), ("QUORUM", True)])
def test_a_mixed_row_pairs_with_its_throughputs_run_at_its_level_or_stays_unpaired(
        tmp_path, other_run, paired):
    """Partners are narrowed by throughput, then among those by level. A read at
    QUORUM and 10,000 ops/s with writes at ONE and ALL of 10,000 ops/s and at QUORUM
    of 9,000 has two runs of its throughput and neither at its level: it stays
    unpaired (the QUORUM write of another throughput is not its run; it was taken).
    With the second write at QUORUM, that one is its run."""
    path = tmp_path / "mixed.csv"
    path.write_text("operation,consistency,threads,throughput,mean_ms,read_fraction\n"
                    "read,QUORUM,100,10000,3.0,0.5\nwrite,ONE,100,10000,2.0,0.5\n"
                    f"write,{other_run},100,10000,2.5,0.5\n"
                    "write,QUORUM,100,9000,2.2,0.5\n")
    rows, _ = read_measurements(str(path), 3)
    read = table_of(rows, 3, 3).iloc[0]
    assert read.paired == paired
    if paired:
        assert read.run_mean_ms == pytest.approx(0.5 * 3.0 + 0.5 * 2.5)
    else:
        assert np.isnan(read.run_mean_ms) and read.other_quorum == read.quorum


def test_a_run_column_pairs_the_rows_of_runs_that_share_a_load_and_mix(tmp_path):
    """benchANT-like: two 50% runs at 16 threads, reads at ONE in one and at QUORUM in
    the other, writes at ONE in both. Without run names the two write rows cannot be
    told apart (a query has no throughput to tell them by); named, each write row
    pairs with its own run's reads."""
    text = ("operation,consistency,threads,mean_ms,read_fraction{}\n"
            "read,ONE,16,1.0,0.5{}\nwrite,ONE,16,1.2,0.5{}\n"
            "read,QUORUM,16,1.5,0.5{}\nwrite,ONE,16,1.4,0.5{}\n")
    path = tmp_path / "runs.csv"
    path.write_text(text.format("", "", "", "", ""))
    rows, _ = read_measurements(str(path), 3)
    table = table_of(rows, 3, 3)
    # unnamed, the reads stay unpaired and both writes take the ONE reads' run
    assert table.paired.tolist() == [False, True, False, True]
    assert table.other_quorum.tolist() == [1, 1, 2, 1]
    path.write_text(text.format(",run", ",a", ",a", ",b", ",b"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rows, _ = read_measurements(str(path), 3)
    table = table_of(rows, 3, 3)
    assert table.paired.all()
    # each write waits beside its own run's reads: ONE in run a, QUORUM in run b
    assert table.other_quorum.tolist() == [1, 1, 1, 2]
    assert table.run_mean_ms.tolist() == pytest.approx([1.1, 1.1, 1.45, 1.45])
    # a name on one row of a run and not the other: the named row finds no partner
    # of its name, and the unnamed write is not taken as run a's (one rule both ways)
    path.write_text(text.format(",run", ",a", ",", ",", ","))
    rows, _ = read_measurements(str(path), 3)
    table = table_of(rows, 3, 3)
    assert not table.paired[0] and table.other_quorum[1] == 2
    # runs told apart by their stated pauses pair within each pause
    path.write_text("operation,consistency,threads,mean_ms,read_fraction,think_ms\n"
                    "read,ONE,16,1.0,0.5,100\nwrite,ONE,16,1.2,0.5,100\n"
                    "read,QUORUM,16,1.5,0.5,500\nwrite,ONE,16,1.4,0.5,500\n")
    rows, _ = read_measurements(str(path), 3)
    table = table_of(rows, 3, 3)
    assert table.paired.all() and table.other_quorum.tolist() == [1, 1, 1, 2]


RAHUL = DATA / "rahulraghavendhra_cassandra_ycsb"


def test_a_ycsb_clients_growing_queue_stays_off_the_latency_past_the_fitted_threads():
    """rahulraghavendhra's YCSB A runs (`rows.csv`, which `make_rows.py` writes from
    the source as transcribed): fitted on 5-200 threads, whose throughputs say the
    clients spend 0.1 ms outside the latency at 5-50 threads and 1.2 ms at 200, the
    250-500-thread rows are predicted with a mean error of 5.8% (a line in threads:
    5.1%); holding that time at its 200-thread value laid the clients' growing queue
    on the latency (15.1%)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_rows", RAHUL / "make_rows.py")
    make_rows = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_rows)
    rows = pd.read_csv(RAHUL / "rows.csv")
    pd.testing.assert_frame_equal(make_rows.rows().reset_index(drop=True), rows,
                                  check_exact=False, rtol=1e-12)
    small = rows.threads <= 200
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = calibrate_cluster(rows[small], nodes=3, replicas=3)
        held = rows[~small]
        table = predict_table(fitted, held.drop(columns="mean_ms"))
    error = np.abs(table.predicted_mean_ms.to_numpy() / held.mean_ms.to_numpy() - 1)
    assert error.mean() < 0.151 / 2  # under half the miss of the failure it guards
    inside = ((table.predicted_ci_low_ms.to_numpy() <= held.mean_ms.to_numpy())
              & (held.mean_ms.to_numpy() <= table.predicted_ci_high_ms.to_numpy()))
    assert inside.all()


def test_reads_of_mixed_runs_without_their_writes_leave_the_throughput_unfitted():
    """rahulraghavendhra's reads of 50% read runs, each with its run's throughput but
    without the writes' latency: the clients' time outside the latency is unknown, so
    the throughput cannot fix the model's cycle. Fitted to it with no such time, the
    writes took the clients' time (16.8 ms at 500 threads, 9.3 measured; 71% off, no
    row inside its band); left out, the writes rest on the model and its prior (58%
    off, every row inside its band; 36% off, 11 of 12 rows inside, since the
    coordinator's share of the work has a prior from the joint read-and-write fits)."""
    rows = pd.read_csv(RAHUL / "rows.csv")
    reads, writes = rows[rows.operation == "read"], rows[rows.operation == "write"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = calibrate_cluster(reads, nodes=3, replicas=3)
        table = predict_table(fitted, writes.drop(columns="mean_ms"))
    measured = writes.mean_ms.to_numpy()
    error = np.abs(table.predicted_mean_ms.to_numpy() / measured - 1)
    # closer than the failure this guards against (71% off, the clients' time taken
    # as the writes'); the model's own miss here is a known limit (36%, writes too
    # fast: calibration.md, protocol (d))
    assert error.mean() < 0.71
    inside = ((table.predicted_ci_low_ms.to_numpy() <= measured)
              & (measured <= table.predicted_ci_high_ms.to_numpy()))
    # 95% bands that hold hold at least this many of 12 rows but 2.5% of the time
    assert inside.sum() >= stats.binom.ppf(0.025, len(measured), 0.95) == 10


def test_measured_means_of_a_query_are_scored_against_the_predictions():
    """A query's mean_ms was echoed and never compared, a 1000x unit slip too (a
    probe): the note gives the mean error, the rows inside their bands, and names a
    row a factor 3 or more away."""
    from sizing.calibration_notes import measured_against_predicted

    measured = np.array([2.2, np.nan, 5425.0, 3.0])
    mean, low, high = np.array([2.0, 3.0, 5.4, 3.3]), np.array([1.8, 2.0, 4.0, 3.1]), \
        np.array([2.4, 4.0, 7.0, 3.5])
    note = measured_against_predicted(measured, mean, low, high)
    errors = np.abs(mean[[0, 2, 3]] / measured[[0, 2, 3]] - 1)
    assert note.startswith(f"the query's 3 measured means: the predictions miss them by "
                           f"{100 * errors.mean():.3g}% on average (most "
                           f"{100 * errors.max():.3g}%, row 3); 1 of 3 inside")
    assert note.endswith("row 3 is a factor 3 or more from its prediction: is its "
                         "mean_ms in ms (not us or s)?")
    assert measured_against_predicted(np.full(2, np.nan), mean[:2], low[:2],
                                      high[:2]) is None


@pytest.mark.parametrize("seed, words", [(-1, "seed must be a whole number >= 0, got -1"),
                                         (1.5, "got 1.5")])
def test_a_bad_seed_of_a_prediction_is_said_as_simulate_says_it(from_file, reads, seed,
                                                                words):
    """numpy's 'expected non-negative integer' and a SeedSequence TypeError came
    through (an API probe)."""
    fitted, _ = from_file
    with pytest.raises(ConfigError, match=re.escape(words)):
        predict_table(fitted, reads.drop(columns="mean_ms"), seed=seed)
    with pytest.raises(ConfigError, match=re.escape(words)):
        fitted.predict(reads.drop(columns="mean_ms"), seed=seed)
