"""Notes of `sizing.calibration_notes` that a calibration gives besides its numbers."""

import re
from pathlib import Path

import pytest

from sizing.calibration_notes import REPEAT_SPREAD, repeated_runs
from sizing.cluster_calibration import table_of
from sizing.measurements import read_measurements

HEADER = "operation,consistency,threads,throughput,mean_ms\n"
DATA = Path(__file__).resolve().parent.parent / "docs" / "data"
PUBLISHED = sorted([*DATA.glob("karpenko2021/cluster_*.csv"),
                    *DATA.glob("george0st_cassandra_stress/cassandra*.csv"),
                    *DATA.glob("measurements/saulolks2022_*.csv")])


def _table(tmp_path, body: str):
    path = tmp_path / "rows.csv"
    path.write_text(HEADER + body)
    rows, _ = read_measurements(str(path), 3)
    return table_of(rows, 3, 3)


def test_rows_of_other_stated_pauses_are_other_runs_not_repeats(tmp_path):
    """Ferreira's Table 3: the same users and level at think times of 500-2000 ms,
    means 66% apart, are runs of other settings, not repeats to average."""
    path = tmp_path / "rows.csv"
    path.write_text("operation,consistency,threads,mean_ms,think_ms\n"
                    "read,ONE,50,900,500\nread,ONE,50,600,1000\nread,ONE,50,541,2000\n")
    rows, _ = read_measurements(str(path), 3)
    assert repeated_runs(table_of(rows, 3, 3)) is None
    path.write_text("operation,consistency,threads,mean_ms,think_ms\n"
                    "read,ONE,50,900,500\nread,ONE,50,600,500\n")
    rows, _ = read_measurements(str(path), 3)
    assert "the same run measured more than once" in repeated_runs(table_of(rows, 3, 3))


def test_repeats_of_one_run_far_apart_are_named_by_line(tmp_path):
    """Two 10-thread ONE reads of 5.4 and 9.9 ms (a probe's file): the note names both
    lines, the larger spread first, and says how far apart they are."""
    table = _table(tmp_path, "read,ONE,10,,5.4\nread,ONE,10,,9.9\nread,ONE,20,,7\n"
                             "read,QUORUM,20,,8\nread,QUORUM,20,,9\n")
    note = repeated_runs(table, lambda i: f"line {i + 2}")
    assert note.startswith("read ONE 10 threads: line 3 (9.9 ms) and line 2 (5.4 ms)")
    assert "read QUORUM 20 threads: line 6 (9 ms) and line 5 (8 ms)" in note
    assert note.index("ONE 10") < note.index("QUORUM 20")
    assert "up to 83% apart" in note


@pytest.mark.parametrize("second", [5.4 * (1 + REPEAT_SPREAD) * 0.99, 5.4])
def test_repeats_that_agree_and_distinct_runs_get_no_note(tmp_path, second):
    """Repeats within `REPEAT_SPREAD` of each other, and rows that differ in level or
    threads, are not repeats worth a note."""
    table = _table(tmp_path, f"read,ONE,10,,5.4\nread,ONE,10,,{second:.6g}\n"
                             "read,QUORUM,10,,9.9\nread,ONE,20,,12\n")
    assert repeated_runs(table) is None


def test_two_names_of_one_quorum_are_not_repeats(tmp_path):
    """TWO and QUORUM of 3 replicas wait for as many replies, but they are two runs
    (`merged_levels` notes them), not one run measured twice."""
    assert repeated_runs(_table(tmp_path, "read,QUORUM,10,,5\nread,TWO,10,,7\n")) is None


def test_the_published_files_are_found():
    assert len(PUBLISHED) >= 20


@pytest.mark.parametrize("path", PUBLISHED, ids=lambda p: p.name)
def test_the_published_files_repeat_no_run(path):
    """The published data sets give each run once: none gets the note."""
    rows, _ = read_measurements(str(path), 3)
    assert repeated_runs(table_of(rows, 3, 3)) is None


def test_time_outside_the_latency_in_a_few_rows_is_not_called_a_median_of_zero(
        tmp_path, capsys):
    """A probe's noisy rows without think time: threads / throughput exceeds the
    latency in two of five rows only. The note said "0 ms (median; up to ...)"; it
    now says in how many rows the clients spend time outside the latency."""
    import json

    from forkjoin_cli.main import main

    rows = "".join(f"read,ONE,{t},{1000.0 * t / (m * f):.6g},{m}\n" for t, m, f in
                   ((4, 1.0, 1.0), (8, 1.1, 1.0), (16, 1.3, 1.2), (32, 2.0, 1.0),
                    (64, 3.8, 1.1)))
    path = tmp_path / "rows.csv"
    path.write_text(HEADER + rows)
    assert main(["cassandra", "calibrate", "--nodes", "3", "--replicas", "3",
                 "--measurements", str(path), "--out", str(tmp_path / "m.toml"),
                 "--json"]) == 0
    notes = json.loads(capsys.readouterr().out)["warnings"]
    spent = [n for n in notes if n.startswith("the clients spend")]
    assert len(spent) == 1 and "(in 2 of 5 rows, none in the others)" in spent[0]
    assert "median" not in spent[0]


def test_a_flat_level_above_its_given_round_trips_is_named_with_what_the_fit_made_of_it(
        tmp_path):
    """Karpenko D's ONE reads stay at 126-127 ms from 100 to 500 threads, 13 ms above
    the 113 ms round trip the ap-south-1 file gives: the note says so and that the fit
    queued the time (the model's ONE rises past the fitted threads, which the measured
    rows up to 1,000 threads do not). With the client's round trip written as 126 ms
    the rows sit on it, and there is no note."""
    import warnings

    import pandas as pd

    from sizing.calibration_notes import QUEUED_RISE
    from sizing.cluster_calibration import calibrate_cluster

    table = pd.read_csv(DATA / "karpenko2021/cluster_d.csv")
    rows = table[(table.operation == "read") & (table.threads <= 500)]
    given = DATA / "karpenko2021/cluster_d_client_ap-south-1.toml"
    longer = tmp_path / "longer.toml"
    longer.write_text(given.read_text().replace('"1-3" = 56.52', '"1-3" = 63.0'))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fits = [calibrate_cluster(rows, nodes=3, replicas=3, datacentres=str(path))
                for path in (given, longer)]
    note = [n for n in fits[0].warnings if "more than the round trips" in n]
    assert len(note) == 1
    assert note[0].startswith("the reads at ONE take 126.4 ms at 100 threads, 13.4 ms "
                              "more than the round trips --datacentres gives them "
                              "(113 ms), and stay within 10% of it up to 500 threads")
    assert "the fit puts most of it in work at the nodes" in note[0]
    # the rise it names is the model's own, where the measured ONE stays flat
    found = re.search(r"ONE goes from ([\d.]+) ms at 500 threads to ([\d.]+) ms at "
                      r"1,000", note[0])
    now, twice = float(found.group(1)), float(found.group(2))
    one = table[(table.operation == "read") & (table.consistency == "ONE")]
    measured = one.set_index("threads").mean_ms
    assert twice > (1 + QUEUED_RISE) * now and measured[1000] < 1.02 * measured[500]
    assert not [n for n in fits[1].warnings if "more than the round trips" in n]
    # `predict` repeats it for rows past the fitted threads, where it decides
    from sizing.cluster_calibration import predict_table

    for threads, repeated in ((1000, True), (300, False)):
        query = pd.DataFrame({"operation": ["read"], "consistency": ["ONE"],
                              "threads": [threads]})
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            predict_table(fits[0], query)
        said = [str(w.message) for w in caught]
        assert any(note[0] in s for s in said) == repeated
