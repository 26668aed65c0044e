"""Benchmark output (YCSB, cassandra-stress) read into measurement rows.

The expected values are the numbers written in the sample files under ``tests/data``
(converted by hand: microseconds / 1000), not the parser's own output.
"""

import json
import warnings
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forkjoin_sim.errors import ConfigError
from sizing.benchmark_formats import (CASSANDRA_STRESS, YCSB, benchmark_rows,
                                      detect_format, parse_cassandra_stress,
                                      parse_ycsb, read_benchmark_output,
                                      read_side_table, write_measurement_file)
from sizing.measurements import read_measurements

DATA = Path(__file__).parent / "data"
YCSB_C = DATA / "ycsb_workloadc_quorum_100threads.txt"
YCSB_A = DATA / "ycsb_workloada_run.txt"
STRESS_AUTO = DATA / "cassandra_stress_read_auto.txt"
STRESS_MIXED = DATA / "cassandra_stress_mixed_local_quorum.txt"
SIDE_TABLE = DATA / "benchmark_side_table.csv"

# YCSB 0.1.4 printed percentiles in ms and return codes as numbers.
OLD_YCSB = """\
[OVERALL], RunTime(ms), 60212.0
[OVERALL], Throughput(ops/sec), 1660.79
[UPDATE], Operations, 100000
[UPDATE], AverageLatency(us), 11807.42
[UPDATE], MinLatency(us), 1024
[UPDATE], MaxLatency(us), 893441
[UPDATE], 95thPercentileLatency(ms), 24
[UPDATE], 99thPercentileLatency(ms), 61
[UPDATE], Return=0, 99988
[UPDATE], Return=-1, 12
"""
# The summary of cassandra-stress 2.1 (no units, no thousands separators).
OLD_STRESS = """\
Running WRITE with 200 threads for 1000000 iteration
type       total ops,    op/s,    pk/s,   row/s,    mean,     med,     .95,     .99,    .999,     max,   time,   stderr, errors,  gc: #,  max ms,  sum ms,  sdv ms,      mb
total,         43148,   42991,   42991,   42991,     4.6,     1.5,    10.9,   106.1,   239.3,   255.4,    1.0,  0.00000,      0,      1,      49,      49,       0,     612

Results:
op rate                   : 46751 [WRITE:46751]
partition rate            : 46751 [WRITE:46751]
row rate                  : 46751 [WRITE:46751]
latency mean              : 4.3 [WRITE:4.3]
latency median            : 1.3 [WRITE:1.3]
latency 95th percentile   : 7.2 [WRITE:7.2]
latency 99th percentile   : 60.5 [WRITE:60.5]
latency 99.9th percentile : 223.2 [WRITE:223.2]
latency max               : 503.1 [WRITE:503.1]
Total partitions          : 1000000 [WRITE:1000000]
Total errors              : 0 [WRITE:0]
Total operation time      : 00:00:21

END
"""


def _one_line_error(call, *words):
    with pytest.raises(ConfigError) as info:
        call()
    message = str(info.value)
    assert "\n" not in message
    for word in words:
        assert word in message
    return message


@pytest.mark.parametrize("path, expected", [
    (YCSB_C, YCSB), (YCSB_A, YCSB), (STRESS_AUTO, CASSANDRA_STRESS),
    (STRESS_MIXED, CASSANDRA_STRESS)])
def test_format_detected_by_content(path, expected):
    assert detect_format(path.read_text()) == expected


def test_text_of_neither_tool_is_refused():
    _one_line_error(lambda: detect_format("operation,consistency,threads\nread,ONE,4\n"),
                    "neither YCSB nor cassandra-stress")


def test_ycsb_read_run_takes_threads_and_level_from_its_command_line():
    (row,) = read_benchmark_output(YCSB_C)
    assert row["operation"] == "read" and row["consistency"] == "QUORUM"
    assert row["threads"] == "100"
    assert float(row["throughput"]) == pytest.approx(11020.013444415058, rel=1e-12)
    assert float(row["mean_ms"]) == pytest.approx(8.534117, rel=1e-12)
    assert float(row["p95_ms"]) == pytest.approx(17.263, rel=1e-12)
    assert float(row["p99_ms"]) == pytest.approx(29.647, rel=1e-12)
    assert "read_fraction" not in row and "p50_ms" not in row


def test_ycsb_mixed_run_with_a_side_table():
    rows = read_benchmark_output(YCSB_A, side_table=read_side_table(SIDE_TABLE))
    read, write = rows
    assert (read["operation"], write["operation"]) == ("read", "write")
    for row in rows:
        assert row["threads"] == "64" and row["consistency"] == "ONE"
        assert float(row["throughput"]) == pytest.approx(30478.51264858275, rel=1e-12)
        assert float(row["read_fraction"]) == pytest.approx(250112 / 500000, rel=1e-12)
    assert float(read["mean_ms"]) == pytest.approx(1.9124376, rel=1e-12)
    assert float(write["mean_ms"]) == pytest.approx(1.6119022, rel=1e-12)
    assert float(write["p99_ms"]) == pytest.approx(6.331, rel=1e-12)


def test_ycsb_caller_values_must_agree_with_the_command_line():
    text = YCSB_C.read_text()
    _one_line_error(lambda: parse_ycsb(text, threads=50), "threads 50", "100")
    _one_line_error(lambda: parse_ycsb(text, consistency="ALL"), "ALL", "QUORUM")
    (row,) = parse_ycsb(text, threads=100, consistency="quorum")
    assert row["threads"] == "100" and row["consistency"] == "QUORUM"


def test_ycsb_without_operation_lines_is_refused():
    text = "[OVERALL], RunTime(ms), 90744\n[OVERALL], Throughput(ops/sec), 11020.0\n"
    _one_line_error(lambda: parse_ycsb(text, threads=100, consistency="ONE"),
                    "[READ]", "[UPDATE]")


def test_ycsb_without_overall_throughput_is_refused():
    text = "[READ], Operations, 10\n[READ], AverageLatency(us), 812.5\n"
    assert detect_format(text) == YCSB
    _one_line_error(lambda: parse_ycsb(text, threads=4, consistency="ONE"),
                    "Throughput(ops/sec)")


def test_ycsb_missing_threads_or_level_is_refused():
    text = YCSB_A.read_text()
    _one_line_error(lambda: parse_ycsb(text, consistency="ONE"), "threads",
                    "side table")
    _one_line_error(lambda: parse_ycsb(text, threads=64), "consistency")
    _one_line_error(lambda: read_benchmark_output(YCSB_C, side_table={}),
                    "not in the side table", YCSB_C.name)


def test_ycsb_old_units_and_failed_operations():
    with pytest.warns(UserWarning, match="12 operations failed"):
        (row,) = parse_ycsb(OLD_YCSB, threads=20, consistency="ALL")
    assert row["operation"] == "write" and row["consistency"] == "ALL"
    assert float(row["mean_ms"]) == pytest.approx(11.80742, rel=1e-12)
    assert float(row["p95_ms"]) == 24.0 and float(row["p99_ms"]) == 61.0


def test_ycsb_updates_and_inserts_merge_into_one_write_row():
    text = ("[OVERALL], Throughput(ops/sec), 5000\n"
            "[READ], Operations, 600\n[READ], AverageLatency(us), 3000\n"
            "[UPDATE], Operations, 300\n[UPDATE], AverageLatency(us), 2000\n"
            "[UPDATE], 95thPercentileLatency(us), 4000\n"
            "[INSERT], Operations, 100\n[INSERT], AverageLatency(us), 1000\n")
    read, write = parse_ycsb(text, threads=16, consistency="ONE")
    assert float(write["mean_ms"]) == pytest.approx((300 * 2.0 + 100 * 1.0) / 400)
    assert "p95_ms" not in write
    assert float(read["read_fraction"]) == pytest.approx(0.6)


def test_ycsb_scans_are_refused():
    text = ("[OVERALL], Throughput(ops/sec), 900\n"
            "[SCAN], Operations, 950\n[SCAN], AverageLatency(us), 20000\n"
            "[INSERT], Operations, 50\n[INSERT], AverageLatency(us), 1500\n")
    _one_line_error(lambda: parse_ycsb(text, threads=16, consistency="ONE"), "SCAN")


def test_cassandra_stress_auto_run_gives_one_row_per_thread_count():
    rows = read_benchmark_output(STRESS_AUTO)
    assert [r["threads"] for r in rows] == ["4", "8", "16"]
    assert {r["operation"] for r in rows} == {"read"}
    assert {r["consistency"] for r in rows} == {"QUORUM"}
    assert [float(r["throughput"]) for r in rows] == [3912, 7310, 12250]
    assert [float(r["mean_ms"]) for r in rows] == [1.0, 1.1, 1.3]
    assert [float(r["p50_ms"]) for r in rows] == [0.9, 1.0, 1.1]
    assert [float(r["p99_ms"]) for r in rows] == [2.3, 2.7, 3.8]


def test_cassandra_stress_mixed_run_per_operation():
    read, write = read_benchmark_output(STRESS_MIXED)
    for row in (read, write):
        assert row["threads"] == "32" and row["consistency"] == "LOCAL_QUORUM"
        assert float(row["throughput"]) == 17100
        assert float(row["read_fraction"]) == pytest.approx(12830 / 17100, rel=1e-12)
    assert (float(read["mean_ms"]), float(read["p95_ms"])) == (1.9, 3.8)
    assert (float(write["mean_ms"]), float(write["p95_ms"])) == (1.2, 2.6)


def test_cassandra_stress_2_1_summary():
    with pytest.raises(ConfigError, match="consistency"):
        parse_cassandra_stress(OLD_STRESS)
    (row,) = parse_cassandra_stress(OLD_STRESS, consistency="ONE")
    assert (row["operation"], row["threads"]) == ("write", "200")
    assert float(row["throughput"]) == 46751
    assert (float(row["mean_ms"]), float(row["p50_ms"]), float(row["p95_ms"]),
            float(row["p99_ms"])) == (4.3, 1.3, 7.2, 60.5)


def test_cassandra_stress_bad_input_is_refused():
    no_threads = "\n".join(line for line in OLD_STRESS.splitlines()
                           if not line.startswith("Running"))
    _one_line_error(lambda: parse_cassandra_stress(no_threads, consistency="ONE"),
                    "threads")
    (row,) = parse_cassandra_stress(no_threads, consistency="ONE", threads=200)
    assert row["threads"] == "200"
    user_op = OLD_STRESS.replace("WRITE:", "simple1:").replace("Running WRITE",
                                                               "Running USER")
    _one_line_error(lambda: parse_cassandra_stress(user_op, consistency="ONE"),
                    "simple1", "operations=")
    (row,) = parse_cassandra_stress(user_op, consistency="ONE",
                                    operations={"simple1": "read"})
    assert row["operation"] == "read"
    no_mean = "\n".join(line for line in OLD_STRESS.splitlines()
                        if not line.startswith("latency mean"))
    _one_line_error(lambda: parse_cassandra_stress(no_mean, consistency="ONE"),
                    "Latency mean")
    _one_line_error(lambda: parse_cassandra_stress("Running with 4 threadCount\n",
                                                   consistency="ONE"), "Results:")
    _one_line_error(lambda: parse_cassandra_stress(OLD_STRESS, consistency="MOST"),
                    "MOST")


def test_cassandra_stress_errors_warn():
    failing = OLD_STRESS.replace("Total errors              : 0 [WRITE:0]",
                                 "Total errors              : 31 [WRITE:31]")
    with pytest.warns(UserWarning, match="31 operations failed"):
        parse_cassandra_stress(failing, consistency="ONE")


def test_side_table_is_checked(tmp_path):
    twice = tmp_path / "twice.csv"
    twice.write_text("file,threads,consistency\na.txt,4,ONE\na.txt,8,ONE\n")
    _one_line_error(lambda: read_side_table(twice), "listed twice")
    wrong = tmp_path / "wrong.csv"
    wrong.write_text("name,threads\na.txt,4\n")
    _one_line_error(lambda: read_side_table(wrong), "file,threads,consistency")
    zero = tmp_path / "zero.csv"
    zero.write_text("file,threads,consistency\na.txt,0,ONE\n")
    _one_line_error(lambda: read_side_table(zero), "threads")


@pytest.mark.parametrize("path", [YCSB_C, YCSB_A, STRESS_AUTO, STRESS_MIXED])
def test_rows_pass_the_measurement_reader(path, tmp_path):
    rows = read_benchmark_output(path, side_table=read_side_table(SIDE_TABLE)
                                 if path == YCSB_A else None)
    out = tmp_path / "rows.csv"
    write_measurement_file(rows, out)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no row may even look suspect
        measured, _ = read_measurements(str(out), replicas=3)
    assert len(measured) == len(rows)
    for row, m in zip(rows, measured):
        assert m.operation == row["operation"]
        assert m.threads == int(row["threads"])
        assert m.mean_ms == pytest.approx(float(row["mean_ms"]), rel=1e-14)
        assert m.throughput == pytest.approx(float(row["throughput"]), rel=1e-14)
        assert m.extra.get("p95_ms") == (float(row["p95_ms"]) if "p95_ms" in row
                                         else None)
        if "read_fraction" in row:
            assert m.reads == pytest.approx(float(row["read_fraction"]), rel=1e-14)


@st.composite
def ycsb_runs(draw):
    """(threads, mean us, p95 us, p99 us, throughput) of a possible closed-loop run."""
    threads = draw(st.integers(1, 2000))
    mean = draw(st.floats(1.0, 5e6, allow_nan=False))
    p95 = draw(st.floats(1.0, 5e6))
    p99 = draw(st.floats(p95, 1e7))
    in_flight = draw(st.floats(0.02, 1.0))  # share of threads waiting for a reply
    return threads, mean, p95, p99, in_flight * threads / (mean * 1e-6)


# drawn means from 1 microsecond up: those under 0.05 ms are warned about, rightly
@pytest.mark.filterwarnings("ignore:.*every mean_ms is under")
@given(run=ycsb_runs(), level=st.sampled_from(["ONE", "QUORUM", "ALL"]))
def test_ycsb_summary_round_trips_through_the_reader(run, level, tmp_path_factory):
    threads, mean, p95, p99, throughput = run
    text = (f"Command line: -db site.ycsb.db.CassandraCQLClient -threads {threads} "
            f"-p cassandra.readconsistencylevel={level}\n"
            f"[OVERALL], Throughput(ops/sec), {throughput!r}\n"
            f"[READ], Operations, 1000\n[READ], AverageLatency(us), {mean!r}\n"
            f"[READ], 95thPercentileLatency(us), {p95!r}\n"
            f"[READ], 99thPercentileLatency(us), {p99!r}\n")
    (row,) = parse_ycsb(text)
    out = tmp_path_factory.mktemp("ycsb") / "rows.csv"
    write_measurement_file([row], out)
    (m,), _ = read_measurements(str(out), replicas=3)
    assert (m.operation, m.consistency, m.threads) == ("read", level, threads)
    assert m.mean_ms == pytest.approx(mean / 1000, rel=1e-13)
    assert m.extra["p99_ms"] == pytest.approx(p99 / 1000, rel=1e-13)
    assert m.throughput == pytest.approx(throughput, rel=1e-13)


def test_mixed_run_with_a_slow_operation_passes_the_reader(tmp_path):
    # 64 threads, no client time, 50/50: reads 4 ms, updates 1 ms, so the run's mean is
    # 2.5 ms and 64 / 2.5 ms = 25,600 ops/s -- exactly 64 requests in flight.
    text = ("[OVERALL], Throughput(ops/sec), 25600\n"
            "[READ], Operations, 500\n[READ], AverageLatency(us), 4000\n"
            "[UPDATE], Operations, 500\n[UPDATE], AverageLatency(us), 1000\n")
    out = tmp_path / "rows.csv"
    write_measurement_file(parse_ycsb(text, threads=64, consistency="ONE"), out)
    measured, _ = read_measurements(str(out), replicas=3)
    assert [m.operation for m in measured] == ["read", "write"]


def test_the_measurement_reader_takes_benchmark_output_as_it_comes(tmp_path):
    """``calibrate --measurements`` reads YCSB output directly, and a side table of
    outputs, giving the same rows as the CSV written from them."""
    from sizing.measurements import read_measurements

    ycsb = DATA / "ycsb_workloadc_quorum_100threads.txt"
    direct, _ = read_measurements(str(ycsb), replicas=3)
    out = tmp_path / "rows.csv"
    write_measurement_file(read_benchmark_output(ycsb), out)
    via_csv, _ = read_measurements(str(out), replicas=3)
    assert direct == via_csv and len(direct) >= 1
    (tmp_path / "run.txt").write_text(ycsb.read_text())
    table = tmp_path / "runs.csv"
    table.write_text("file,threads,consistency\nrun.txt,100,QUORUM\n")
    listed, _ = read_measurements(str(table), replicas=3)
    assert listed == direct


def test_a_side_table_naming_a_missing_output_is_one_error(tmp_path):
    from sizing.measurements import read_measurements

    table = tmp_path / "runs.csv"
    table.write_text("file,threads,consistency\nnope.txt,100,QUORUM\n")
    with pytest.raises(ConfigError, match="nope.txt"):
        read_measurements(str(table), replicas=3)


# A YCSB 0.17 read run's summary without its 'Command line:' (threads and level
# unknown), as the tool prints it.
BARE_YCSB = """\
[OVERALL], RunTime(ms), 6000
[OVERALL], Throughput(ops/sec), 16666.7
[READ], Operations, 100000
[READ], AverageLatency(us), 5950
[READ], 95thPercentileLatency(us), 11000
[READ], 99thPercentileLatency(us), 20000
[READ], Return=OK, 100000
"""
# A cassandra-stress user-profile run: 'insert' writes, 'simple1' a query of the
# profile, which may read or write.
USER_STRESS = """\
Running with 16 threadCount
Running [insert, simple1] with 16 threads for 100000 iteration
Results:
Op rate                   : 12,000 op/s  [insert: 2,000 op/s, simple1: 10,000 op/s]
Latency mean              :    1.2 ms [insert: 1.0 ms, simple1: 1.24 ms]
Latency median            :    1.0 ms [insert: 0.9 ms, simple1: 1.0 ms]
Total errors              :          0 [insert: 0, simple1: 0]
END
"""


def _line_of(text, start):
    """The 1-based number of the line of ``text`` that starts with ``start``."""
    return next(i for i, line in enumerate(text.splitlines(), start=1)
                if line.startswith(start))


def test_missing_threads_and_level_advice_works_from_the_command_line(tmp_path):
    """The advice names a side table row for this very file (what a command-line user
    can write), not only Python keywords; in a side table, the cell to fill in."""
    run = tmp_path / "run.txt"
    run.write_text(BARE_YCSB)
    message = _one_line_error(lambda: read_benchmark_output(run), "side table",
                              "file,threads,consistency", "run.txt,<threads>,<level>",
                              "-threads")
    assert "pass threads" not in message
    table = tmp_path / "runs.csv"
    table.write_text("file,threads,consistency\nrun.txt,,ONE\n")
    _one_line_error(lambda: read_measurements(str(table), replicas=3),
                    "fill in threads", f"side table {table} line 2")
    stress = tmp_path / "stress.txt"
    stress.write_text(OLD_STRESS)
    message = _one_line_error(lambda: read_benchmark_output(stress),
                              "stress.txt,,<level>", "Consistency Level")
    assert "pass consistency" not in message


def test_user_profile_operations_named_in_a_side_table(tmp_path):
    (tmp_path / "user.txt").write_text(USER_STRESS)
    message = _one_line_error(lambda: read_benchmark_output(tmp_path / "user.txt",
                                                            consistency="ONE"),
                              "simple1", "operations", "user.txt,,,simple1=read")
    assert "insert" not in message.split("simple1")[0]  # insert is known: a write
    table = tmp_path / "runs.csv"
    table.write_text("file,threads,consistency,operations\n"
                     "user.txt,,QUORUM,simple1=read\n")
    measured, _ = read_measurements(str(table), replicas=3)
    read, write = measured
    assert (read.operation, write.operation) == ("read", "write")
    assert (read.mean_ms, write.mean_ms) == (1.24, 1.0)
    assert read.threads == 16 and read.consistency == "QUORUM"
    assert read.throughput == 12000
    assert read.reads == pytest.approx(10000 / 12000, rel=1e-12)
    bad = tmp_path / "bad.csv"
    bad.write_text("file,threads,consistency,operations\nuser.txt,,ONE,simple1:read\n")
    _one_line_error(lambda: read_side_table(bad), "line 2", "simple1=read")
    # a row read through a side table is named with its output and table line
    (tmp_path / "each.txt").write_text(USER_STRESS)
    table.write_text("file,threads,consistency,operations\n"
                     "user.txt,,QUORUM,simple1=read\neach.txt,,EACH_QUORUM,simple1=read\n")
    _one_line_error(lambda: read_measurements(str(table), replicas=3),
                    "result 3 (each.txt, side table line 3): EACH_QUORUM")
    # a YCSB output names its own operations: a cell there would be ignored
    (tmp_path / "y.txt").write_text(YCSB_C.read_text())
    table.write_text("file,threads,consistency,operations\ny.txt,,,read=write\n")
    _one_line_error(lambda: read_measurements(str(table), replicas=3), "line 2",
                    "operations is for cassandra-stress user profiles")


@pytest.mark.parametrize("line, value, words", [
    ("[READ], AverageLatency(us)", "NaN", ["[READ], AverageLatency(us)", "NaN"]),
    ("[READ], AverageLatency(us)", "-5950", ["[READ], AverageLatency(us)", "-5950"]),
    ("[READ], AverageLatency(us)", "0", ["[READ], AverageLatency(us)", "is 0"]),
    ("[OVERALL], Throughput(ops/sec)", "0.0",
     ["[OVERALL], Throughput(ops/sec)", "is 0"])])
def test_bad_ycsb_values_are_named_as_written_in_the_file(tmp_path, line, value, words):
    text = "Command line: -db x -threads 100 -p cassandra.readconsistencylevel=ONE\n"
    text += "\n".join(f"{line}, {value}" if row.startswith(line) else row
                      for row in BARE_YCSB.splitlines()) + "\n"
    run = tmp_path / "run.txt"
    run.write_text(text)
    message = _one_line_error(lambda: read_measurements(str(run), replicas=3),
                              f"{run} line {_line_of(text, line)}:", *words)
    assert "leave it empty" not in message and "mean_ms" not in message


def test_bad_stress_values_are_named_as_written_in_the_file(tmp_path):
    text = OLD_STRESS.replace("latency mean              : 4.3 [WRITE:4.3]",
                              "latency mean              : NaN [WRITE:NaN]")
    run = tmp_path / "stress.txt"
    run.write_text(text)
    _one_line_error(lambda: read_benchmark_output(run, consistency="ONE"),
                    f"{run} line {_line_of(text, 'latency mean')}:", "'Latency mean'",
                    "NaN")


def test_side_table_paths_are_relative_to_the_table(tmp_path):
    (tmp_path / "y").mkdir()
    (tmp_path / "y" / "c.txt").write_text(YCSB_C.read_text())
    (tmp_path / "a.txt").write_text(YCSB_A.read_text())
    table = tmp_path / "runs.csv"
    table.write_text("file,threads,consistency\ny/c.txt,,\n"
                     f"{tmp_path / 'a.txt'},64,ONE\n")
    measured, _ = read_measurements(str(table), replicas=3)
    assert [(m.operation, m.threads) for m in measured] == [
        ("read", 100), ("read", 64), ("write", 64)]
    entries = read_side_table(table)
    (row,) = read_benchmark_output(tmp_path / "y" / "c.txt", side_table=entries)
    assert row["threads"] == "100"
    # a copy elsewhere is found by its bare name, the only row with that name
    (tmp_path / "copy").mkdir()
    copy = tmp_path / "copy" / "c.txt"
    copy.write_text(YCSB_C.read_text())
    assert read_benchmark_output(copy, side_table=entries) == [row]
    (tmp_path / "z").mkdir()
    (tmp_path / "z" / "c.txt").write_text(YCSB_C.read_text())
    two = tmp_path / "two.csv"
    two.write_text("file,threads,consistency\ny/c.txt,,\nz/c.txt,,\n")
    both = read_side_table(two)
    _one_line_error(lambda: read_benchmark_output(copy, side_table=both),
                    "several side table rows", "c.txt")
    missing = tmp_path / "missing.csv"
    missing.write_text("file,threads,consistency\nw/c.txt,100,ONE\n")
    _one_line_error(lambda: read_measurements(str(missing), replicas=3),
                    f"side table {missing} line 2", "w/c.txt", "relative to the side "
                    "table's folder")
    twice = tmp_path / "twice.csv"
    twice.write_text("file,threads,consistency\ny/c.txt,,\n./y/../y/c.txt,,\n")
    _one_line_error(lambda: read_side_table(twice), "line 3", "listed twice")


def test_byte_order_marks_are_read_past(tmp_path):
    # the 'Command line:' (threads, level) is the first line, right after the mark
    text = "Command line: -db x -threads 100 -p cassandra.readconsistencylevel=ONE\n"
    run = tmp_path / "run.txt"
    run.write_bytes(b"\xef\xbb\xbf" + (text + BARE_YCSB).encode())
    (row,) = read_benchmark_output(run)
    assert (row["threads"], row["consistency"]) == ("100", "ONE")
    (tmp_path / "a.txt").write_text(YCSB_A.read_text())
    table = tmp_path / "runs.csv"
    table.write_bytes(b"\xef\xbb\xbffile,threads,consistency\na.txt,64,ONE\n")
    measured, _ = read_measurements(str(table), replicas=3)
    assert [(m.operation, m.threads) for m in measured] == [("read", 64), ("write", 64)]


def test_ycsb_failures_recorded_twice_are_counted_once():
    run = ("Command line: -db x -threads 100 -p cassandra.readconsistencylevel=ONE\n"
           + BARE_YCSB)
    both = run + ("[READ], Return=ERROR, 500\n[READ-FAILED], Operations, 500\n"
                  "[READ-FAILED], AverageLatency(us), 1000\n")
    with pytest.warns(UserWarning, match=r": 500 operations failed"):
        parse_ycsb(both)
    only_section = run + "[READ-FAILED], Operations, 300\n"
    with pytest.warns(UserWarning, match=r": 300 operations failed"):
        parse_ycsb(only_section)


def test_side_table_threads_written_as_a_float(tmp_path):
    (tmp_path / "a.txt").write_text(YCSB_A.read_text())
    table = tmp_path / "runs.csv"
    table.write_text("file,threads,consistency\na.txt,64.0,ONE\n")
    assert read_side_table(table)["a.txt"]["threads"] == 64
    table.write_text("file,threads,consistency\na.txt,64.5,ONE\n")
    _one_line_error(lambda: read_side_table(table), "line 2", "64.5", "whole number")


def test_side_table_header_is_told_from_a_measurement_file(tmp_path):
    extra = tmp_path / "extra.csv"
    extra.write_text("file,threads,consistency,notes\na.txt,64,ONE,x\n")
    _one_line_error(lambda: read_measurements(str(extra), replicas=3),
                    "side table", "notes")
    # a measurement file may note where each row came from in a 'file' column
    rows = tmp_path / "rows.csv"
    rows.write_text("file,operation,consistency,threads,mean_ms\nrun1,read,ONE,4,2.5\n")
    assert benchmark_rows(rows) is None


def test_a_side_table_contradicting_the_output_names_its_row(tmp_path):
    (tmp_path / "c.txt").write_text(YCSB_C.read_text())  # -threads 100 on its line
    table = tmp_path / "runs.csv"
    table.write_text("file,threads,consistency\nc.txt,200,\n")
    _one_line_error(lambda: read_measurements(str(table), replicas=3),
                    "threads 200", f"side table {table} line 2", "says 100",
                    "cell empty")


def test_a_ycsb_summary_cut_short_or_doubled_is_refused():
    """A file cut after its [READ] section carried the whole run's throughput on its
    read rows, silently, then with a warning only (read as a pure-read run); now
    refused as truncated. Two runs' summaries in one file were read as one (now
    refused)."""
    text = (Path(__file__).parent / "data" / "ycsb_workloada_run.txt").read_text()
    cut = text[:text.index("[UPDATE]")]
    _one_line_error(lambda: parse_ycsb(cut, threads=64, consistency="ONE"),
                    "count 250,112 operations where [OVERALL] gives 500,000 (run time x "
                    "throughput), 50% fewer", "truncated", "give the complete output")
    _one_line_error(lambda: parse_ycsb(text + text, threads=64, consistency="ONE"),
                    "a second '[OVERALL], RunTime(ms)' line")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert parse_ycsb(text, threads=64, consistency="ONE")  # whole, once: no doubt


def _summary(runtime_ms, throughput, **sections) -> str:
    """A YCSB summary: [OVERALL] run time and throughput, and per section (a keyword,
    READ_MODIFY_WRITE for READ-MODIFY-WRITE) its (operations, average latency in us)."""
    lines = [f"[OVERALL], RunTime(ms), {runtime_ms}",
             f"[OVERALL], Throughput(ops/sec), {throughput!r}"]
    for name, (operations, average) in sections.items():
        name = name.replace("_", "-")
        lines += [f"[{name}], Operations, {operations}",
                  f"[{name}], AverageLatency(us), {average}"]
    return "\n".join(lines) + "\n"


def test_a_wrapped_ycsb_operation_counter_is_read_as_the_run_went():
    """benchANT's Cassandra run of 2.8e9 operations at 100 threads: YCSB's 32-bit
    counter wrapped once, so it printed a throughput of -50,522.56 ops/s, which was
    refused as a number no run prints. Its sections count 2.8e9 operations over
    29,590.094 s: 94,626.26 ops/s, as the transcription in docs/data has it."""
    text = _summary(29590094, -50522.55988101964, READ=(1400030228, 1309.27),
                    UPDATE=(1399969772, 800.098))
    with pytest.warns(UserWarning, match="32-bit operation counter wrapped 1 time"):
        rows = parse_ycsb(text, threads=100, consistency="QUORUM")
    assert float(rows[0]["throughput"]) == pytest.approx(2.8e9 / 29590.094, rel=1e-9)
    assert float(rows[0]["throughput"]) == pytest.approx(94626.262, rel=1e-7)
    # a negative throughput that no wrap explains is still refused
    unexplained = text.replace("1399969772", "9").replace("1400030228", "9")
    _one_line_error(lambda: parse_ycsb(unexplained, threads=100, consistency="QUORUM"),
                    "below 0")


def test_wraps_are_read_off_a_read_modify_write_run_and_a_run_counted_short():
    """A read-modify-write is in [READ] and [UPDATE] too (its own count comes off),
    and a long run's sections may fall a few per cent short: the wraps are still read
    off, where a 2% tolerance left both printed throughputs, 4x too low, silently."""
    rmw = _summary(60000000, 28417.2117333, READ=(6000000000, 1000),
                   UPDATE=(3000000000, 800), READ_MODIFY_WRITE=(3000000000, 1900))
    with pytest.warns(UserWarning, match="wrapped 1 time"):
        rows = parse_ycsb(rmw, threads=100, consistency="ONE")
    # 6e9 transactions, each a read and an update: 9e9 database operations
    assert float(rows[0]["throughput"]) == pytest.approx(9e9 / 60000, rel=1e-9)
    total, seconds = 5.8e9, 50000.0
    short = _summary(int(seconds * 1000), (total - 2 ** 32) / seconds,
                     READ=(int(total * 0.95 / 2), 9), INSERT=(int(total * 0.95 / 2), 8))
    with pytest.warns(UserWarning) as caught:
        rows = parse_ycsb(short, threads=100, consistency="ONE")
    assert float(rows[0]["throughput"]) == pytest.approx(total / seconds, rel=1e-9)
    messages = " ".join(str(w.message) for w in caught)
    assert "wrapped 1 time" in messages and "5% fewer" in messages


def test_a_summary_without_operation_counts_is_not_doubted():
    text = ("[OVERALL], RunTime(ms), 1000\n[OVERALL], Throughput(ops/sec), 100000\n"
            "[READ], AverageLatency(us), 1000\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rows = parse_ycsb(text, threads=100, consistency="ONE")
    assert float(rows[0]["throughput"]) == 100000


def test_a_stress_run_of_several_operations_states_its_threads():
    """cassandra-stress 3.0-3.9 writes a mixed run's operations as a list: "Running
    [READ, WRITE] with 50 threads"; the threads were not found."""
    text = OLD_STRESS.replace("Running WRITE with 200 threads",
                              "Running [READ, WRITE] with 50 threads")
    (row,) = parse_cassandra_stress(text, consistency="ONE")
    assert row["threads"] == "50"


def test_ycsb_as_benchants_scylladb_runs_print_it():
    """Found in benchANT's ScyllaDB runs: the ScyllaDB binding names its levels
    scylla.*consistencylevel, per operation; reads that found no row
    (Return=NOT_FOUND, also in [READ-FAILED]) completed, so they count in the share
    of reads and are no failure; -target N held the run to a rate, so its rows are an
    open loop at that rate."""
    text = ("Command line: -db site.ycsb.db.scylla.ScyllaCQLClient -p "
            "scylla.writeconsistencylevel=QUORUM -p scylla.readconsistencylevel=ONE "
            "-threads 100 -target 3000 -t\n"
            + _summary(10000, 2990.0, READ=(2400, 3000), INSERT=(27000, 2500))
            + "[READ], Return=OK, 2400\n[READ], Return=NOT_FOUND, 600\n"
              "[READ-FAILED], Operations, 600\n[READ-FAILED], AverageLatency(us), 900\n")
    with pytest.warns(UserWarning) as caught:
        rows = parse_ycsb(text)
    messages = " ".join(str(w.message) for w in caught)
    assert "held to -target 3000 ops/s" in messages and "failed" not in messages
    read, write = rows
    assert (read["consistency"], write["consistency"]) == ("ONE", "QUORUM")
    assert float(read["read_fraction"]) == pytest.approx(3000 / 30000)
    assert (read["threads"], float(read["rate"])) == ("", 2990.0)
    # the same run unpaced (its throughput well below the target): 100 threads
    unpaced = text.replace("-target 3000", "-target 9000")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read, _ = parse_ycsb(unpaced)
    assert read["threads"] == "100" and "rate" not in read
    # the target as the property that -target sets (-p target=N): read as closed
    # 100 threads before, silently
    with pytest.warns(UserWarning, match=r"held to -p target=3000 ops/s"):
        read, _ = parse_ycsb(text.replace("-target 3000", "-p target=3000"))
    assert (read["threads"], float(read["rate"])) == ("", 2990.0)
    # a target of 0, YCSB's default, holds the run to no rate (it was refused)
    for zero in ("-target 0", "-p target=0"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            read, _ = parse_ycsb(text.replace("-target 3000", zero))
        assert read["threads"] == "100" and "rate" not in read


def test_a_side_table_gives_reads_and_writes_levels_of_their_own(tmp_path):
    """A read ONE / write QUORUM run whose output states no level could only be given
    one level, and a write row came out at ONE; read_consistency and
    write_consistency name each, and a consistency cell that disagrees is refused."""
    (tmp_path / "run.txt").write_text(
        _summary(10000, 3000.0, READ=(15000, 2400), UPDATE=(15000, 1800)))
    table = tmp_path / "runs.csv"
    table.write_text("file,threads,read_consistency,write_consistency\n"
                     "run.txt,400,ONE,QUORUM\n")
    measured, _ = read_measurements(str(table), replicas=3)
    assert {(m.operation, m.consistency) for m in measured} == {("read", "ONE"),
                                                                ("write", "QUORUM")}
    table.write_text("file,threads,consistency,read_consistency\nrun.txt,400,QUORUM,ONE\n")
    _one_line_error(lambda: read_measurements(str(table), replicas=3),
                    "consistency QUORUM was given (in its consistency cell) but its "
                    "read_consistency cell says ONE")
    (tmp_path / "stress.txt").write_text(OLD_STRESS)
    table.write_text("file,threads,read_consistency,write_consistency\n"
                     "stress.txt,200,ONE,QUORUM\n")
    _one_line_error(lambda: read_measurements(str(table), replicas=3),
                    "a cassandra-stress run has one consistency level")


def test_one_level_for_a_run_of_two_levels_points_to_the_two_columns(tmp_path):
    """Found on benchANT's ScyllaDB runs: a side table's consistency ONE for a run
    whose command line sets reads at ONE and writes at QUORUM was refused as "the
    output's command line says QUORUM", half of what it says, without naming the
    read_consistency and write_consistency columns that take such a run."""
    (tmp_path / "run.txt").write_text(
        "Command line: -db site.ycsb.db.scylla.ScyllaCQLClient -p "
        "scylla.readconsistencylevel=ONE -p scylla.writeconsistencylevel=QUORUM "
        "-threads 400 -t\n"
        + _summary(10000, 3000.0, READ=(15000, 2400), UPDATE=(15000, 1800)))
    table = tmp_path / "runs.csv"
    table.write_text("file,threads,consistency\nrun.txt,400,ONE\n")
    _one_line_error(lambda: read_measurements(str(table), replicas=3),
                    "consistency ONE was given", "sets reads at ONE and writes at QUORUM",
                    "read_consistency and write_consistency")
    # the two columns, or no level at all, read it
    for header, cells in (("read_consistency,write_consistency", "ONE,QUORUM"),
                          ("consistency", "")):
        table.write_text(f"file,threads,{header}\nrun.txt,400,{cells}\n")
        measured, _ = read_measurements(str(table), replicas=3)
        assert {(m.operation, m.consistency) for m in measured} == {
            ("read", "ONE"), ("write", "QUORUM")}
    # from Python, one level for both is refused the same way
    text = (tmp_path / "run.txt").read_text()
    _one_line_error(lambda: parse_ycsb(text, consistency="QUORUM"),
                    "sets reads at ONE and writes at QUORUM", "consistency={'read'")


def test_a_stress_output_lacking_its_operation_and_level_is_refused_once():
    """An output that names neither its operation nor its level was refused for the
    operation, and, once mended, again for the level: one refusal names both."""
    import re
    text = re.sub(r" \[WRITE:[\d.]+\]", "", OLD_STRESS)
    text = text.replace("Running WRITE with 200 threads", "Running with 200 threads")
    message = _one_line_error(lambda: parse_cassandra_stress(text),
                              "do not say which operation ran", "consistency level")
    # with the level given, only the operation is named
    message = _one_line_error(lambda: parse_cassandra_stress(text, consistency="ONE"),
                              "do not say which operation ran")
    assert "consistency level" not in message


def test_ycsb_cql_binding_without_a_level_reads_at_its_default_one_with_a_warning():
    """YCSB's own Cassandra CQL binding reads and writes at ONE unless told otherwise
    (its README); a run whose command line names it and sets no level is read at ONE,
    with a warning. Another binding's default is not assumed: refused as before."""
    text = YCSB_C.read_text().replace(" -p cassandra.readconsistencylevel=QUORUM", "")
    assert "consistencylevel" not in text
    with pytest.warns(UserWarning, match="sets no read consistency level; taken as ONE, "
                                         "the default of site.ycsb.db.CassandraCQLClient"):
        (row,) = parse_ycsb(text)
    assert row["consistency"] == "ONE" and row["threads"] == "100"
    other = text.replace("site.ycsb.db.CassandraCQLClient", "site.ycsb.db.ScyllaCQLClient")
    _one_line_error(lambda: parse_ycsb(other), "consistency")


def _head(path, lines: int) -> str:
    """The first ``lines`` lines of a sample output, as ``head -n`` cuts them."""
    return "".join(path.read_text().splitlines(keepends=True)[:lines])


@pytest.mark.parametrize("path, lines, tool, missing", [
    # YCSB cut before its [OVERALL] summary: at its java command line, after
    # 'Command line:', 'Loading workload...', 'Starting test.', in the status lines
    (YCSB_C, 1, "YCSB", "[OVERALL]/[READ] summary lines"),
    (YCSB_C, 2, "YCSB", "[OVERALL]/[READ] summary lines"),
    (YCSB_C, 5, "YCSB", "[OVERALL]/[READ] summary lines"),
    (YCSB_C, 11, "YCSB", "[OVERALL]/[READ] summary lines"),
    # ... and inside it
    (YCSB_C, 12, "YCSB", "'[OVERALL], Throughput(ops/sec)' line"),
    (YCSB_C, 13, "YCSB", "[READ], [UPDATE] or [INSERT] summary lines"),
    # cassandra-stress cut in its settings, at connecting, at warming up
    (STRESS_AUTO, 1, "cassandra-stress", "'Results:' block"),
    (STRESS_AUTO, 20, "cassandra-stress", "'Results:' block"),
    (STRESS_AUTO, 32, "cassandra-stress", "'Results:' block"),
    (STRESS_AUTO, 37, "cassandra-stress", "'Results:' block"),
    # ... and inside its only run
    (STRESS_AUTO, 40, "cassandra-stress", "run at 4 threads"),
    (STRESS_MIXED, 22, "cassandra-stress", "run at 32 threads"),
    (STRESS_MIXED, 30, "cassandra-stress", "run at 32 threads")])
def test_an_output_cut_before_its_summary_is_refused_as_truncated(tmp_path, path,
                                                                  lines, tool, missing):
    """A YCSB output cut before its [OVERALL] lines was read as a measurement CSV
    with the java command line for a header; a cassandra-stress output cut in its
    settings named the banner an unknown column. Now: truncated output of that tool,
    saying what is missing, whether given directly or behind a side table."""
    cut = tmp_path / "cut.txt"
    cut.write_text(_head(path, lines))
    words = ["cut.txt", f"truncated (incomplete) {tool} output", missing,
             "give the complete text the benchmark printed at the end of the run"]
    _one_line_error(lambda: read_measurements(str(cut), replicas=3), *words)
    _one_line_error(lambda: benchmark_rows(cut), *words)
    table = tmp_path / "runs.csv"
    table.write_text("file,threads,consistency\ncut.txt,4,QUORUM\n")
    _one_line_error(lambda: read_measurements(str(table), replicas=3), *words)


def test_a_truncated_output_fails_the_command_in_one_line(tmp_path, capsys):
    from forkjoin_cli import main as cli

    cut = tmp_path / "y.txt"
    cut.write_text(_head(YCSB_C, 11))
    status = cli.main(["cassandra", "calibrate", "--nodes", "3", "--replicas", "3",
                       "--measurements", str(cut), "--out", str(tmp_path / "m.toml")])
    err = capsys.readouterr().err
    assert status == 2 and "Traceback" not in err
    (line,) = [line for line in err.splitlines() if line.strip()]
    assert "truncated (incomplete) YCSB output" in line and "java" in line
    assert not (tmp_path / "m.toml").exists()


@pytest.mark.parametrize("comment", [
    "", "# measured with: java -cp ycsb.jar site.ycsb.Client -t -db "
        "site.ycsb.db.CassandraCQLClient -P workloads/workloadc\n",
    "# Running with 16 threadCount\n"])
def test_a_measurement_csv_is_not_taken_for_truncated_output(tmp_path, comment):
    """The signs of a cut output are lines no measurement file has, outside comments
    (a file noting the YCSB command it ran was refused as truncated YCSB output: a
    review)."""
    rows = tmp_path / "rows.csv"
    rows.write_text(comment + "operation,consistency,threads,throughput,mean_ms\n"
                    "read,QUORUM,16,12000,1.3\n")
    assert benchmark_rows(rows) is None
    (row,), _ = read_measurements(str(rows), replicas=3)
    assert (row.operation, row.threads, row.mean_ms) == ("read", 16, 1.3)


def test_a_results_block_ending_in_its_operation_time_is_whole():
    """cassandra-stress 3.0 prints no 'Total errors': its block ends with 'Total
    operation time'. A text ending there was refused as cut short (a review)."""
    block = ("Running WRITE with 4 threads 60 seconds\nResults:\n"
             "op rate                   : 3954\nlatency mean              : 1.0\n"
             "latency median            : 0.8\nlatency 95th percentile   : 1.5\n"
             "latency 99th percentile   : 1.8\n"
             "Total operation time      : 00:00:59\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (row,) = parse_cassandra_stress(block, consistency="ONE")
    assert (row["operation"], row["threads"], row["mean_ms"]) == ("write", "4", "1")


@pytest.mark.parametrize("lines", [
    95,    # 'Running READ with 16 threads': the run begun, nothing measured
    100,   # its progress lines printed, its results not (as `head -100`)
    104,   # cut inside its 'Results:' block, before its percentiles and errors
    111])  # ... before 'Total errors'
def test_an_interrupted_auto_run_keeps_its_finished_thread_counts(tmp_path, lines):
    """An auto run stopped in its 16-thread run gave the 4- and 8-thread rows and
    dropped the begun run without a word; now a warning names it."""
    cut = tmp_path / "cs.txt"
    cut.write_text(_head(STRESS_AUTO, lines))
    with pytest.warns(UserWarning) as caught:
        rows = read_benchmark_output(cut)
    (warning,) = [w for w in caught if "ends inside" in str(w.message)]
    message = str(warning.message)
    assert str(cut) in message and "the run at 16 threads" in message
    assert "line 94" in message and "interrupted?" in message
    assert "left out" in message
    # the finished runs as the file prints them
    assert [r["threads"] for r in rows] == ["4", "8"]
    assert [float(r["throughput"]) for r in rows] == [3912, 7310]
    assert [float(r["mean_ms"]) for r in rows] == [1.0, 1.1]
    assert [float(r["p99_ms"]) for r in rows] == [2.3, 2.7]


def test_a_whole_stress_run_gives_no_warning_and_an_auto_run_cut_between_counts_one(
        tmp_path):
    """A whole run reads quietly. Cut after the 8-thread results (before 16 threads
    began) no run shows begun, but an auto run ends with its summary and END: without
    them the file reads as two runs, with a warning that more may be missing (it read
    quietly)."""
    cut = tmp_path / "cs.txt"
    cut.write_text(_head(STRESS_AUTO, 93))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert [r["threads"] for r in read_benchmark_output(STRESS_AUTO)] == \
            ["4", "8", "16"]
        assert [r["threads"] for r in read_benchmark_output(STRESS_MIXED)] == \
            ["32", "32"]
    with pytest.warns(UserWarning, match="an auto run without its closing summary and "
                      "END .* the runs at 4, 8 threads are read"):
        assert [r["threads"] for r in read_benchmark_output(cut)] == ["4", "8"]


def test_a_stress_block_cut_short_is_told_from_one_printed_without_a_line():
    """A 'Results:' block missing its mean is refused as before when lines follow it;
    cut by the end of the text it is a run left unfinished."""
    no_mean = "\n".join(line for line in OLD_STRESS.splitlines()
                        if not line.startswith("latency mean"))
    _one_line_error(lambda: parse_cassandra_stress(no_mean, consistency="ONE"),
                    "without 'Latency mean'")
    cut = OLD_STRESS[:OLD_STRESS.index("latency mean")]
    _one_line_error(lambda: parse_cassandra_stress(cut, consistency="ONE"),
                    "truncated (incomplete) cassandra-stress output",
                    "run at 200 threads")


# Three runs of cassandra-stress as a blog copied them (cut from the original's
# s02_prose_threads_collapsed_spaces.txt): each 'Results:' block under prose naming its
# thread count, no 'Running with N threadCount' line.
PROSE_STRESS = """\
4 threads

Results:
Op rate : 15,064 op/s [READ: 15,064 op/s]
Latency mean : 0.3 ms [READ: 0.3 ms]
Total errors : 0 [READ: 0]

104 threads

Results:
Op rate : 53,470 op/s [READ: 53,470 op/s]
Latency mean : 1.9 ms [READ: 1.9 ms]
Total errors : 0 [READ: 0]

304

Results:
Op rate                   :   61,507 op/s  [READ: 61,507 op/s]
Latency mean              :    4.8 ms [READ: 4.8 ms]
Total errors              :          0 [READ: 0]
"""


@pytest.mark.parametrize("threads", [304, 4])
def test_one_threads_value_for_several_stress_runs_is_refused(tmp_path, threads,
                                                               capsys):
    """A side table's threads 304 for a file of three runs (4, 104 and 304 threads,
    named only in prose) gave three rows 'read ONE 304 threads' of different means;
    threads 4 was refused by Little's law with 'check the units (mean in
    microseconds?)'. Both are now refused for what is wrong: one value for three
    runs."""
    (tmp_path / "s02.txt").write_text(PROSE_STRESS)
    table = tmp_path / "runs.csv"
    table.write_text(f"file,threads,consistency\ns02.txt,{threads},ONE\n")
    message = _one_line_error(
        lambda: read_measurements(str(table), replicas=3), "s02.txt",
        "3 'Results:' blocks", "'Running with N threadCount'",
        f"one threads value ({threads}", "cannot apply to all of them",
        "split the file, one run per file, or give the thread counts in it")
    assert "check the units" not in message
    _one_line_error(lambda: parse_cassandra_stress(PROSE_STRESS, consistency="ONE",
                                                   threads=threads),
                    "3 'Results:' blocks", "cannot apply to all of them")
    from forkjoin_cli import main as cli

    status = cli.main(["cassandra", "calibrate", "--nodes", "3", "--replicas", "3",
                       "--measurements", str(table), "--out", str(tmp_path / "m.toml")])
    err = capsys.readouterr().err
    assert status == 2 and "Traceback" not in err
    (line,) = [line for line in err.splitlines() if line.strip()]
    assert "cannot apply to all of them" in line
    # one run per file, or each run's own thread count in the file, reads
    (row,) = parse_cassandra_stress(PROSE_STRESS[:PROSE_STRESS.index("104 threads")],
                                    consistency="ONE", threads=4)
    assert (row["threads"], float(row["mean_ms"])) == ("4", 0.3)
    import re
    stated = re.sub(r"^(\d+)( threads)?$", r"Running with \1 threadCount", PROSE_STRESS,
                    flags=re.M)
    rows = parse_cassandra_stress(stated + "END\n", consistency="ONE")
    assert [(r["threads"], float(r["mean_ms"])) for r in rows] == [
        ("4", 0.3), ("104", 1.9), ("304", 4.8)]


@pytest.mark.parametrize("threads", [None, 4])
def test_a_later_stress_block_without_its_thread_count_is_refused(tmp_path, threads,
                                                                   capsys):
    """Only the first of three runs states its threads ('Running with 4 threadCount'):
    the two later blocks were read as 4 threads too (three rows 'read ONE 4 threads'
    with means 0.3, 1.9 and 4.8 ms). Now refused, naming the block and the count it
    would have taken; the same file with each block's line reads."""
    first = PROSE_STRESS.replace("4 threads\n", "Running with 4 threadCount\n", 1)
    message = _one_line_error(
        lambda: parse_cassandra_stress(first, consistency="ONE", threads=threads),
        "block at line 10", "states no thread count", "4 threads",
        "'Running with N threadCount'", "split the file")
    assert "check the units" not in message
    (tmp_path / "s.txt").write_text(first)
    table = tmp_path / "runs.csv"
    table.write_text("file,consistency\ns.txt,ONE\n")
    from forkjoin_cli import main as cli

    status = cli.main(["cassandra", "calibrate", "--nodes", "3", "--replicas", "3",
                       "--measurements", str(table), "--out", str(tmp_path / "m.toml")])
    err = capsys.readouterr().err
    assert status == 2 and "Traceback" not in err
    assert not (tmp_path / "m.toml").exists()
    (line,) = [line for line in err.splitlines() if line.strip()]
    assert "states no thread count" in line
    import re
    each = re.sub(r"^(\d+)( threads)?$", r"Running with \1 threadCount", first, flags=re.M)
    rows = parse_cassandra_stress(each + "END\n", consistency="ONE")
    assert [(r["threads"], float(r["mean_ms"])) for r in rows] == [
        ("4", 0.3), ("104", 1.9), ("304", 4.8)]



def test_a_2_1_multi_thread_run_without_its_end_is_warned_as_cut():
    """cassandra-stress prints END after every finished run; 2.1 prints no 'Auto:
    true' setting, so a 2.1 auto run cut after its 54-thread block (a lab report's,
    docs/data/dse_lab_stress_reads) was read without a word. 'Running with N
    threadCount' (printed only by runs over several thread counts) now tells it."""
    cut = USER_STRESS.replace("END\n", "")
    with pytest.warns(UserWarning, match="an auto run without its closing summary and "
                                         "END .*the runs at 16 threads are read"):
        (row,) = parse_cassandra_stress(cut, consistency="ONE",
                                        operations={"simple1": "read"})[:1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert parse_cassandra_stress(USER_STRESS, consistency="ONE",
                                      operations={"simple1": "read"})[0] == row

def test_a_ycsb_summary_cut_inside_is_refused_and_a_few_per_cent_short_warned():
    """d1_trunc_mid_summary.txt, YCSB cut inside its summary (its [UPDATE] section
    gone), was read as a pure-read run, with a warning that its sections count 50%
    fewer operations than [OVERALL]. Cut output is refused (the module docstring
    promises it); a whole run's sections a few per cent short still read, warned."""
    d1 = ("[OVERALL], RunTime(ms), 426187.0\n"
          "[OVERALL], Throughput(ops/sec), 23463.878532193616\n"
          "[READ], Operations, 4998463.0\n"
          "[READ], AverageLatency(us), 299.4424374052584\n"
          "[READ], Return=OK, 4998463\n"
          "[CLEANUP], Operations, 8.0\n")
    _one_line_error(lambda: parse_ycsb(d1, threads=8, consistency="ONE"),
                    "4,998,463 operations where [OVERALL] gives 10,000,000",
                    "50% fewer", "truncated", "give the complete output")
    # 8% short (4,998,463 reads and 4,201,537 updates of 10,000,000): a warning only
    short = d1 + "[UPDATE], Operations, 4201537\n[UPDATE], AverageLatency(us), 330\n"
    with pytest.warns(UserWarning, match="8% fewer"):
        read, write = parse_ycsb(short, threads=8, consistency="ONE")
    assert float(read["read_fraction"]) == pytest.approx(4998463 / 9200000)


def test_a_stress_block_whose_every_operation_failed_is_refused(tmp_path):
    """d5_stress_errors.txt: 'Total errors : 1,000,000' in a block of 6,778 op/s over
    00:02:27 (about 996,000 operations) was fitted as a 0.6 ms write, with a warning
    that 1e+06 operations failed. Such a block measured no latency: refused, also when
    other blocks of the file are usable (a run whose every operation failed says the
    setup was broken)."""
    failed = OLD_STRESS.replace("Total errors              : 0 [WRITE:0]",
                                "Total errors              : 1,000,000 [WRITE:1,000,000]")
    # 46,751 op/s over 00:00:21: about 981,771 operations, all failed
    _one_line_error(lambda: parse_cassandra_stress(failed, consistency="ONE"),
                    f"line {_line_of(failed, 'Results:')}", "every operation",
                    "failed", "Total errors 1,000,000", "46,751 op/s over 00:00:21",
                    "measured no latency", "rerun")
    # ... and the same in a file whose other block is whole
    good = OLD_STRESS.replace("Running WRITE with 200 threads",
                              "Running WRITE with 100 threads")
    _one_line_error(lambda: parse_cassandra_stress(good + failed, consistency="ONE"),
                    "every operation", "failed")
    # a mixed block whose reads all failed names the reads
    mixed = ("Running [READ, WRITE] with 8 threads\nResults:\n"
             "Op rate : 2,000 op/s [READ: 1,000 op/s, WRITE: 1,000 op/s]\n"
             "Latency mean : 1.0 ms [READ: 1.2 ms, WRITE: 0.8 ms]\n"
             "Total errors : 10,000 [READ: 10,000, WRITE: 0]\n"
             "Total operation time : 00:00:10\n")
    _one_line_error(lambda: parse_cassandra_stress(mixed, consistency="ONE"),
                    "every READ operation", "READ: 10,000 errors against about "
                    "10,000 operations: 1,000 op/s over 00:00:10")
    # a run under a second (printed 00:00:00) or a kind under 0.5 op/s is too short to
    # tell: read
    for short in (mixed.replace("00:00:10", "00:00:00").replace("10,000 [READ: 10,000",
                                                                 "1 [READ: 1"),
                  mixed.replace("READ: 1,000 op/s", "READ: 0.4 op/s").replace(
                      "10,000 [READ: 10,000", "1 [READ: 1")):
        with pytest.warns(UserWarning, match="1 operations? failed"):
            assert len(parse_cassandra_stress(short, consistency="ONE")) == 2
    # some failed: read, with a warning
    some = mixed.replace("10,000 [READ: 10,000", "31 [READ: 31")
    with pytest.warns(UserWarning, match="31 operations failed"):
        read, write = parse_cassandra_stress(some, consistency="ONE")
    assert (float(read["mean_ms"]), float(write["mean_ms"])) == (1.2, 0.8)


def test_units_printed_on_stress_latency_lines_are_read():
    """d6_stress_us.txt: 'Latency mean : 600.0 us [WRITE: 600.0 us]' was read as
    600 ms (refused by Little's law as 4,067 requests in flight from 4 threads). A
    stated unit is converted to ms; one the reader does not know is refused, named."""
    block = ("Running WRITE with 4 threads for 1000000 iteration\nResults:\n"
             "Op rate                   :    6,778 op/s  [WRITE: 6,778 op/s]\n"
             "Latency mean              :  600.0 us [WRITE: 600.0 us]\n"
             "Latency median            :    0.5 ms [WRITE: 0.5 ms]\n"
             "Latency 95th percentile   :  0.0008 s [WRITE: 0.0008 s]\n"
             "Latency 99th percentile   :    1.2 ms [WRITE: 1200 us]\n"
             "Total errors              :          0 [WRITE: 0]\n")
    (row,) = parse_cassandra_stress(block, consistency="ONE")
    assert float(row["throughput"]) == 6778
    assert float(row["mean_ms"]) == pytest.approx(0.6, rel=1e-15)
    assert float(row["p50_ms"]) == 0.5
    assert float(row["p95_ms"]) == pytest.approx(0.8, rel=1e-15)
    assert float(row["p99_ms"]) == pytest.approx(1.2, rel=1e-15)
    odd = block.replace("600.0 us [WRITE: 600.0 us]", "0.6 ms [WRITE: 600 ticks]")
    _one_line_error(lambda: parse_cassandra_stress(odd, consistency="ONE"),
                    f"line {_line_of(odd, 'Latency mean')}", "'ticks'",
                    "'Latency mean' of WRITE", "us, ms or s")


def test_units_of_each_operation_of_a_mixed_stress_block_are_read_apart():
    """In a mixed block each operation's row takes its own bracketed value, each in
    its own unit, not the block's total."""
    block = ("Running MIXED with 8 threads for 1000000 iteration\nResults:\n"
             "Op rate                   :   10,000 op/s  [READ: 5,000 op/s, "
             "WRITE: 5,000 op/s]\n"
             "Latency mean              :    0.8 ms [READ: 1100 us, WRITE: 0.0005 s]\n"
             "Latency 99th percentile   :    4.0 ms [READ: 5.5 ms, WRITE: 2500 us]\n"
             "Total errors              :          0 [READ: 0, WRITE: 0]\n")
    rows = {row["operation"]: row for row in
            parse_cassandra_stress(block, consistency="ONE")}
    assert float(rows["read"]["mean_ms"]) == pytest.approx(1.1, rel=1e-12)
    assert float(rows["write"]["mean_ms"]) == pytest.approx(0.5, rel=1e-12)
    assert float(rows["read"]["p99_ms"]) == pytest.approx(5.5, rel=1e-12)
    assert float(rows["write"]["p99_ms"]) == pytest.approx(2.5, rel=1e-12)


@pytest.mark.parametrize("text, errors", [
    # d3_zero_ops.txt: a read run
    ("[OVERALL], RunTime(ms), 1002\n[OVERALL], Throughput(ops/sec), 0.0\n"
     "[READ], Operations, 0\n[READ], AverageLatency(us), NaN\n"
     "[READ], Return=ERROR, 1000\n[READ-FAILED], Operations, 1000\n"
     "[READ-FAILED], AverageLatency(us), 2001.5\n", "1,000"),
    # y03_rise_load_allfailed.txt: a load phase, counts written as floats
    ("[OVERALL], RunTime(ms), 543.0\n[OVERALL], Throughput(ops/sec), 0.0\n"
     "[CLEANUP], Operations, 7.0\n[CLEANUP], AverageLatency(us), 3.857142857142857\n"
     "[INSERT], Operations, 0.0\n[INSERT], AverageLatency(us), NaN\n"
     "[INSERT], Return=ERROR, 7\n[INSERT-FAILED], Operations, 7.0\n"
     "[INSERT-FAILED], AverageLatency(us), 21861.714285714286\n", "7")])
def test_a_ycsb_run_whose_every_operation_failed_says_so(text, errors):
    """Refused as 'no [READ], [UPDATE] or [INSERT] summary lines with operations'
    though the lines are there, with Operations 0 and Return=ERROR."""
    message = _one_line_error(lambda: parse_ycsb(text, threads=1, consistency="ONE"),
                              "every operation failed", f"({errors} errors, 0 "
                              "completed)", "measured no latency", "rerun")
    assert "no [READ], [UPDATE] or [INSERT] summary lines" not in message


# y04_rise_wlF_notfound.txt (YCSB workload F): reads that found no row listed under
# [READ-FAILED], with their mean.
NOT_FOUND_YCSB = """\
[OVERALL], RunTime(ms), 8862.0
[OVERALL], Throughput(ops/sec), 11284.134506883322
[READ], Operations, 34885.0
[READ], AverageLatency(us), 302.29677511824565
[READ], 95thPercentileLatency(us), 537.0
[READ], 99thPercentileLatency(us), 916.0
[READ], Return=OK, 34885
[READ], Return=NOT_FOUND, 45220
[READ-MODIFY-WRITE], Operations, 40268.0
[READ-MODIFY-WRITE], AverageLatency(us), 651.916335551803
[READ-FAILED], Operations, 45220.0
[READ-FAILED], AverageLatency(us), 330.9077620521893
[UPDATE], Operations, 60163.0
[UPDATE], AverageLatency(us), 329.45192227781195
[UPDATE], Return=OK, 60163
"""


def test_reads_that_found_no_row_are_in_the_read_mean():
    """y04: 34,885 reads at 302.3 us and 45,220 NOT_FOUND at 330.9 us were all in the
    share of reads, but the read mean was of the first alone (0.3023 ms). It is now
    the count-weighted mean of both (0.3184 ms); percentiles of the completed reads
    alone are not the mixture's, so they are dropped, as for merged write kinds."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # NOT_FOUND is no failure
        read, write = parse_ycsb(NOT_FOUND_YCSB, threads=8, consistency="ONE")
    mean = (34885 * 302.29677511824565 + 45220 * 330.9077620521893) / 80105 / 1000
    assert float(read["mean_ms"]) == pytest.approx(mean, rel=1e-12)
    assert float(read["mean_ms"]) == pytest.approx(0.3184, abs=5e-5)
    assert "p95_ms" not in read and "p99_ms" not in read
    assert float(read["read_fraction"]) == pytest.approx(80105 / (80105 + 60163))
    assert float(write["mean_ms"]) == pytest.approx(0.32945192227781195, rel=1e-12)
    # [READ-FAILED] holding errors too: its mean is not the NOT_FOUND reads' alone, so
    # the read mean stays that of the completed reads
    mixed = NOT_FOUND_YCSB.replace("[READ-FAILED], Operations, 45220.0",
                                   "[READ-FAILED], Operations, 45320.0") \
        + "[READ], Return=ERROR, 100\n"
    with pytest.warns(UserWarning, match="100 operations failed"):
        read, _ = parse_ycsb(mixed, threads=8, consistency="ONE")
    assert float(read["mean_ms"]) == pytest.approx(0.30229677511824565, rel=1e-12)
    assert float(read["p95_ms"]) == 0.537


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be-with-mark"])
def test_output_saved_as_utf16_reads_as_the_same_rows(tmp_path, encoding):
    """Windows PowerShell's ``>`` saves a benchmark's output as UTF-16 with a
    byte-order mark: the output, a side table naming it and a measurement CSV read
    as their UTF-8 copies do (before, each was refused as "not UTF-8 text")."""
    def save(path, text):
        data = (b"\xfe\xff" + text.encode("utf-16-be") if encoding.endswith("mark")
                else text.encode("utf-16"))
        path.write_bytes(data)
        return str(path)

    direct, _ = read_measurements(str(YCSB_C), replicas=3)
    assert read_measurements(save(tmp_path / "run.txt", YCSB_C.read_text()),
                             replicas=3)[0] == direct
    table = save(tmp_path / "runs.csv", "file,threads,consistency\nrun.txt,100,QUORUM\n")
    assert read_measurements(table, replicas=3)[0] == direct
    rows = "operation,consistency,threads,mean_ms\nread,ONE,16,2.5\nread,ALL,16,4.0\n"
    (tmp_path / "rows8.csv").write_text(rows)
    assert (read_measurements(save(tmp_path / "rows16.csv", rows), replicas=3)
            == read_measurements(str(tmp_path / "rows8.csv"), replicas=3))


def test_a_utf16_file_cut_inside_a_character_is_one_clear_error(tmp_path):
    path = tmp_path / "cut.csv"
    path.write_bytes("operation,".encode("utf-16") + b"o")
    with pytest.raises(ConfigError, match="ends inside a UTF-16 character; save it as"):
        read_measurements(str(path), replicas=3)


def _stress_run(rate: str, latency: str, pace: str = "0", brackets: bool = True) -> str:
    """A cassandra-stress write run at QUORUM, 16 threads, its numbers as given."""
    def line(label, value, unit):
        extra = f" [WRITE: {value}{unit}]" if brackets else ""
        return f"{label:<26}: {value:>10}{unit}{extra}\n"
    return ("******************** Stress Settings ********************\nCommand:\n"
            "  Type: write\n  Consistency Level: QUORUM\nRate:\n  Auto: false\n"
            f"  Thread Count: 16\n  OpsPer Sec: {pace}\n"
            "Running WRITE with 16 threads 1 minutes\n\n\nResults:\n"
            + line("Op rate", rate, " op/s") + line("Latency mean", latency, " ms")
            + line("Latency 95th percentile", latency.replace("1", "3"), " ms")
            + line("Total errors", "0", "")
            + "Total operation time      : 00:01:00\n\nEND\n")


@pytest.mark.parametrize("rate, latency", [
    ("10.120", "1,5"),            # German, Croatian: a point groups, a comma decimals
    ("10\u202f120", "1,5"),      # French: a narrow no-break space groups
    ("10 120", "1,5"),
    ("9.010", "1,5"),             # not 9.01 op/s
    ("10,120", "1.5")])          # English, as before
def test_stress_output_of_a_decimal_comma_locale_reads_its_numbers(tmp_path, rate,
                                                                   latency):
    """Java prints by the machine's locale; before, ``1,5`` ms was read as 15 ms and
    ``10.120`` op/s as 10.12 with exit 0 (a judge-style probe)."""
    path = tmp_path / "run.txt"
    path.write_text(_stress_run(rate, latency))
    (row,), _ = read_measurements(str(path), replicas=3)
    assert row.mean_ms == 1.5 and row.extra["p95_ms"] == 3.5
    assert row.throughput == float(rate.replace(".", "").replace(",", "")
                                   .replace(" ", "").replace("\u202f", ""))


def test_a_stress_run_held_to_a_rate_it_reached_is_an_open_loop(tmp_path):
    """``-rate threads=50 fixed=2000/s``: its settings print ``OpsPer Sec: 2000``;
    read as YCSB's ``-target``, an open loop at that rate (was: 16 closed-loop
    threads, with a warning that the clients spend most of their time outside)."""
    path = tmp_path / "fixed.txt"
    path.write_text(_stress_run("2,000", "1.1", pace="2000"))
    with pytest.warns(UserWarning, match="held to 2,000 ops/s .* open loop"):
        (row,), _ = read_measurements(str(path), replicas=3)
    assert (row.threads, row.rate, row.throughput) == (None, 2000.0, 2000.0)
    # a rate it could not reach leaves the threads in charge: a closed loop
    path.write_text(_stress_run("1,500", "1.1", pace="2000"))
    (row,), _ = read_measurements(str(path), replicas=3)
    assert (row.threads, row.rate) == (16, None)


def test_an_old_ycsb_section_whose_every_operation_failed_is_refused(tmp_path):
    """YCSB before 0.9 counted failures in the section's own Operations and mean:
    every read failing still printed a mean (PerfKitBenchmarker's sample runs)."""
    path = tmp_path / "failed.txt"
    path.write_text("Command line: -db com.yahoo.ycsb.db.CassandraCQLClient -threads 16 "
                    "-p cassandra.readconsistencylevel=ALL -t\n"
                    "[OVERALL], RunTime(ms), 60012.0\n"
                    "[OVERALL], Throughput(ops/sec), 1666.3334\n"
                    "[READ], Operations, 100000\n[READ], AverageLatency(us), 9601.2\n"
                    "[READ], Return=-1, 100000\n")
    with pytest.raises(ConfigError, match=r"every \[READ\] operation failed \(100,000 "
                                          r"error returns, 100,000 operations, none OK"):
        read_measurements(str(path), replicas=3)


@pytest.mark.parametrize("table", [
    "file;threads;consistency\nrun.txt;100;QUORUM\n",     # a European spreadsheet
    "# runs of 2024-03-11\nfile,threads,consistency\nrun.txt,100,QUORUM\n",
    "file\tthreads\tconsistency\n# the first run\nrun.txt\t100\tQUORUM\n"])
def test_a_side_table_may_use_semicolons_tabs_and_comments(tmp_path, table):
    """As a measurement file may; before, such a table was read as a measurement
    file missing its columns."""
    (tmp_path / "run.txt").write_text(YCSB_C.read_text())
    (tmp_path / "runs.csv").write_text(table)
    direct, _ = read_measurements(str(YCSB_C), replicas=3)
    assert read_measurements(str(tmp_path / "runs.csv"), replicas=3)[0] == direct


@pytest.mark.parametrize("text, says", [
    ("-- Timers ----\ncql-keyvalue.main.cycles.servicetime\n     mean = 1.01 ms\n",
     "is neither a measurement CSV (its first line, '-- Timers ----', is not "
     "comma-, semicolon- or tab-separated column names) nor YCSB or "
     "cassandra-stress output"),
    ("<!DOCTYPE html>\n<html>\n", "is neither a measurement CSV"),
    ("             id, type                      total ops,    op/s,    pk/s,   row/s,"
     "    mean,     med\n  4 threadCount, READ,           234720,    3912,    3912,"
     "    3912,     1.0,     0.9\n",
     "is the summary table a cassandra-stress auto run prints at its end, which does "
     "not state the consistency level")])
def test_text_no_reader_takes_says_what_to_give(tmp_path, text, says):
    """Before: a measurement CSV's missing-column message, naming '-- Timers ----'
    as a misspelt column."""
    path = tmp_path / "out.txt"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        read_measurements(str(path), replicas=3)
    assert says in str(info.value) and "\n" not in str(info.value)


def test_a_run_at_each_quorum_may_be_given_as_quorum_in_a_side_table(tmp_path):
    """The refusal of EACH_QUORUM says to write QUORUM for a cluster in one data
    centre; a side table saying so was refused as contradicting the output."""
    (tmp_path / "run.txt").write_text(_stress_run("10,120", "1.5").replace(
        "Consistency Level: QUORUM", "Consistency Level: EACH_QUORUM"))
    with pytest.raises(ConfigError, match="write QUORUM \\(for benchmark output, in a "
                                          "side table's consistency cell\\)"):
        read_measurements(str(tmp_path / "run.txt"), replicas=3)
    (tmp_path / "runs.csv").write_text("file,consistency\nrun.txt,QUORUM\n")
    (row,), _ = read_measurements(str(tmp_path / "runs.csv"), replicas=3)
    assert (row.consistency, row.threads, row.mean_ms) == ("QUORUM", 16, 1.5)
    (tmp_path / "runs.csv").write_text("file,consistency\nrun.txt,ONE\n")
    with pytest.raises(ConfigError, match="consistency ONE was given"):
        read_measurements(str(tmp_path / "runs.csv"), replicas=3)


def test_a_mixed_run_with_one_latency_for_the_mix_is_refused_saying_why(tmp_path):
    """cassandra-stress 2.1's mixed run prints no per-operation values; the advice was
    to name MIXED a read in a side table, which would read the mix as reads."""
    path = tmp_path / "mixed.txt"
    path.write_text("Running MIXED with 32 threads for 1000000 iteration\ncl=QUORUM\n\n"
                    "Results:\nop rate                   : 17100\n"
                    "latency mean              : 1.7\n"
                    "Total operation time      : 00:00:58\nEND\n")
    with pytest.raises(ConfigError, match="one latency for all its operations together"):
        read_measurements(str(path), replicas=3)
    # naming MIXED a read in a side table would read the mix as reads: refused too
    (tmp_path / "runs.csv").write_text("file,operations\nmixed.txt,MIXED=read\n")
    with pytest.raises(ConfigError, match="a mixed run whose results give one latency"):
        read_measurements(str(tmp_path / "runs.csv"), replicas=3)
    # ScyllaDB's cql-stress names a user profile's run only in Type: user
    path.write_text(path.read_text().replace("Running MIXED with 32 threads for 1000000 "
                                             "iteration", "Type: user\nThread count: 32"))
    with pytest.raises(ConfigError, match="a user run whose results give one latency"):
        read_measurements(str(path), replicas=3)


def test_sections_per_return_code_read_as_the_failed_section():
    """With ``-p reportlatencyforeacherror=true`` YCSB 0.17 measures reads that found
    no row in ``[READ-NOT_FOUND]``, not ``[READ-FAILED]``: they were left out of the
    share of reads and the mean, with a warning blaming a missing section."""
    per_code = NOT_FOUND_YCSB.replace("[READ-FAILED]", "[READ-NOT_FOUND]")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert parse_ycsb(per_code, threads=8, consistency="ONE") == parse_ycsb(
            NOT_FOUND_YCSB, threads=8, consistency="ONE")
    # errors in sections of their own codes: one failed section, counts summed
    errors = per_code + ("[READ], Return=ERROR, 100\n[READ-ERROR], Operations, 100\n"
                         "[READ-ERROR], AverageLatency(us), 5000\n")
    with pytest.warns(UserWarning, match="100 operations failed"):
        read, _ = parse_ycsb(errors, threads=8, consistency="ONE")
    # the not-found reads keep their own section's mean, beside the errors' (merged
    # into one failed section, they would leave the mean: 0.3023 ms)
    mean = (34885 * 302.29677511824565 + 45220 * 330.9077620521893) / 80105 / 1000
    assert float(read["mean_ms"]) == pytest.approx(mean, rel=1e-12)
    assert float(read["read_fraction"]) == pytest.approx(80205 / (80205 + 60163))
    # an error section without its Operations line is named
    with pytest.raises(ConfigError, match=r"\[READ-ERROR\] has no Operations line"):
        parse_ycsb(errors.replace("[READ-ERROR], Operations, 100\n", ""), threads=8,
                   consistency="ONE")


@pytest.mark.parametrize("layout", ["objects", "array", "pretty"])
def test_ycsb_json_exported_measurements_read_as_its_summary(tmp_path, layout):
    """``-p exporter=...JSONMeasurementsExporter`` (one object after another) and
    ``JSONArrayMeasurementsExporter`` (a list) write the summary as JSON; with the
    command line echoed before them they were taken for truncated output."""
    lines = YCSB_C.read_text().splitlines()
    head = [line for line in lines if not line.startswith("[")]
    objects = []
    for line in lines:
        if line.startswith("["):
            metric, measurement, value = (part.strip() for part in line.split(","))
            objects.append({"metric": metric.strip("[]"), "measurement": measurement,
                            "value": float(value) if "." in value else int(value)})
    if layout == "array":
        body = json.dumps(objects)
    elif layout == "pretty":
        body = "".join(json.dumps(o, indent=2) for o in objects)
    else:
        body = "\n".join(json.dumps(o) for o in objects)
    path = tmp_path / "run.json"
    path.write_text("\n".join(head) + "\n" + body + "\n")
    assert read_measurements(str(path), replicas=3)[0] == read_measurements(
        str(YCSB_C), replicas=3)[0]


def test_scylla_cql_stress_output_reads_its_command_and_thread_count(tmp_path):
    """ScyllaDB's cql-stress (a rewrite of cassandra-stress) prints ``Thread count``
    and names the operation only in its settings' ``Type:``; it was refused, asking
    for the output unedited."""
    path = tmp_path / "cql_stress.txt"
    path.write_text("******************** Stress Settings ********************\n"
                    "Command:\n  Type: write\n  Count: 1000000\n"
                    "  Consistency Level: QUORUM\nRate:\n  Thread count: 16\n"
                    "  Coordinated-Omission-Fixed latencies: false\n\nResults:\n"
                    "Op rate                   :    53012 op/s\n"
                    "Latency mean              :    0.3 ms\n"
                    "Latency 95th percentile   :    0.5 ms\n"
                    "Total errors              :          0\n"
                    "Total operation time      : 00:00:18\n")
    (row,), _ = read_measurements(str(path), replicas=3)
    assert (row.operation, row.consistency, row.threads, row.throughput,
            row.mean_ms) == ("write", "QUORUM", 16, 53012.0, 0.3)


def test_clients_of_one_run_named_in_a_side_table_are_added_up(tmp_path):
    """A run driven from two YCSB client machines is two outputs of 64 threads each;
    the cluster saw 128 threads and both throughputs. Without a run name they are two
    rows each (repeats?), with a warning; with one, one row per operation."""
    text = YCSB_A.read_text()
    (tmp_path / "a.txt").write_text(text)
    # the second client: half the throughput (and run time twice), reads slower
    (tmp_path / "b.txt").write_text(
        text.replace("[OVERALL], RunTime(ms), 16405", "[OVERALL], RunTime(ms), 32810")
        .replace("Throughput(ops/sec), 30478.51264858275",
                 "Throughput(ops/sec), 15239.256324291375")
        .replace("[READ], AverageLatency(us), 1912.4376",
                 "[READ], AverageLatency(us), 2912.4376"))
    table = tmp_path / "runs.csv"
    table.write_text("file,threads,consistency\na.txt,64,ONE\nb.txt,64,ONE\n")
    with pytest.warns(UserWarning, match="a.txt and b.txt measured the same operation, "
                                         "level, load and mix: repeats, or the clients"):
        apart, _ = read_measurements(str(table), replicas=3)
    assert len(apart) == 4
    table.write_text("file,threads,consistency,run\na.txt,64,ONE,r\nb.txt,64,ONE,r\n")
    read, write = read_measurements(str(table), replicas=3)[0]
    assert (read.threads, read.throughput) == (128, pytest.approx(45717.768972874125))
    # each client's reads weighted by how many it did (its Operations line: as many
    # from b, which ran twice as long at half the throughput)
    share = apart[0].read_fraction
    assert read.mean_ms == pytest.approx((1.9124376 + 2.9124376) / 2, rel=1e-12)
    assert write.mean_ms == pytest.approx(1.6119022, rel=1e-12)
    assert read.read_fraction == pytest.approx(share, rel=1e-12)
    # clients that disagree on the level are no one run
    table.write_text("file,threads,consistency,run\na.txt,64,ONE,r\nb.txt,64,ALL,r\n")
    with pytest.raises(ConfigError, match="run 'r': its outputs .* differ in "
                                          "consistency"):
        read_measurements(str(table), replicas=3)


def test_ycsb_raw_measurements_summary_reads_as_the_histograms_does(tmp_path):
    """``-p measurementtype=raw`` names a section's metrics ``Total Operations``,
    ``Average``, ``p95`` (after one latency line per operation); it was refused for
    lacking an AverageLatency line."""
    raw = []
    for line in YCSB_A.read_text().splitlines():
        for old, new in ((", Operations,", ", Total Operations,"),
                         (", AverageLatency(us),", ", Average,"),
                         (", 95thPercentileLatency(us),", ", p95,"),
                         (", 99thPercentileLatency(us),", ", p99,")):
            line = line.replace(old, new)
        raw.append(line)
        if ", Total Operations," in line:
            section = line.split(",")[0]
            raw.append(f"{section}, Below is a summary of latency in microseconds:, -1")
    path = tmp_path / "raw.txt"
    path.write_text("READ latency raw data: op, timestamp(ms), latency(us)\n"
                    "READ,1710148321000,1532\n" + "\n".join(raw) + "\n")
    table = tmp_path / "runs.csv"
    table.write_text("file,threads,consistency\nraw.txt,64,ONE\n")
    (tmp_path / "hist.txt").write_text(YCSB_A.read_text())
    (tmp_path / "hist.csv").write_text("file,threads,consistency\nhist.txt,64,ONE\n")
    assert read_measurements(str(table), replicas=3)[0] == read_measurements(
        str(tmp_path / "hist.csv"), replicas=3)[0]


def test_clients_are_told_apart_by_their_file_not_their_message(tmp_path):
    """A file name with a comma (``c,1.txt``) cut the clients' names at the comma:
    both were ``c``, one client, and stayed two runs (a review)."""
    for name in ("c,1.txt", "c,2.txt"):
        (tmp_path / name).write_text(YCSB_A.read_text())
    table = tmp_path / "runs.csv"
    table.write_text('file,threads,consistency,run\n"c,1.txt",64,ONE,r\n'
                     '"c,2.txt",64,ONE,r\n')
    rows, _ = read_measurements(str(table), replicas=3)
    assert [(r.operation, r.threads) for r in rows] == [("read", 128), ("write", 128)]


def test_outputs_of_other_mixes_or_rates_are_no_look_alikes(tmp_path):
    """The warning about repeats or clients fired on two workloads at the same threads
    and on every paced rate sweep (whose rows have no threads; a review)."""
    text = YCSB_A.read_text()
    (tmp_path / "a.txt").write_text(text)
    # a 95% read mix (workload B's share) at the same threads and level
    (tmp_path / "b.txt").write_text(
        text.replace("[UPDATE], Operations, 249888", "[UPDATE], Operations, 13164")
        .replace("[OVERALL], RunTime(ms), 16405", "[OVERALL], RunTime(ms), 8638"))
    table = tmp_path / "runs.csv"
    table.write_text("file,threads,consistency\na.txt,64,ONE\nb.txt,64,ONE\n")
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*repeats, or the clients")
        rows, _ = read_measurements(str(table), replicas=3)
    assert len(rows) == 4


def test_a_one_column_csv_is_told_its_missing_columns(tmp_path):
    """A header of one known name is a measurement CSV short of columns, not text no
    reader takes (a review)."""
    path = tmp_path / "one.csv"
    path.write_text("mean_ms\n2.5\n")
    with pytest.raises(ConfigError, match="missing column\\(s\\) operation, consistency"):
        read_measurements(str(path), replicas=3)


@pytest.mark.parametrize("rate, latency, throughput, mean", [
    ("12", "1,234.5", 12.0, 1234.5),        # English, a latency past a second
    ("10'120", "1.5", 10120.0, 1.5),        # Swiss: an apostrophe groups
    ("12", "1.234,5", 12.0, 1234.5)])       # German, past a second
def test_stress_numbers_read_in_every_locale_shape(tmp_path, rate, latency, throughput,
                                                   mean):
    path = tmp_path / "run.txt"
    path.write_text(_stress_run(rate, latency))
    (row,), _ = read_measurements(str(path), replicas=3)
    assert (row.throughput, row.mean_ms) == (throughput, mean)


@pytest.mark.parametrize("data", [b"\xff\xfe\x00\x00o\x00\x00\x00",   # UTF-32
                                  b"\xff\xfe\x01\x00\x02\x00"])       # binary
def test_a_utf16_mark_before_what_is_no_text_is_refused_in_one_line(tmp_path, data):
    path = tmp_path / "odd.csv"
    path.write_bytes(data)
    with pytest.raises(ConfigError, match="is not UTF-16 text \\(control character "
                                          "0x0[012]\\); save it as UTF-8"):
        read_measurements(str(path), replicas=3)


def test_a_bad_value_in_a_json_export_is_named_at_its_own_line(tmp_path):
    lines = ['{"metric": "OVERALL", "measurement": "RunTime(ms)", "value": 1000}',
             '{"metric": "OVERALL", "measurement": "Throughput(ops/sec)", "value": 100}',
             '{\n  "metric" : "READ",\n  "measurement" : "Operations",\n'
             '  "value" : 100\n}',
             '{"metric": "READ", "measurement": "AverageLatency(us)", "value": -5}']
    path = tmp_path / "export.json"
    path.write_text("\n".join(lines) + "\n")
    table = tmp_path / "runs.csv"
    table.write_text("file,threads,consistency\nexport.json,4,ONE\n")
    with pytest.raises(ConfigError, match="export.json line 8: \\[READ\\], "
                                          "AverageLatency\\(us\\) is -5"):
        read_measurements(str(table), replicas=3)


def test_a_later_run_without_its_own_settings_takes_no_other_runs_level(tmp_path):
    """Two runs pasted together, the second without its settings banner, read the
    second at the first's level (a probe); as for a thread count, it is refused. An
    auto run's later thread counts keep the level of its one banner."""
    first = _stress_run("10,120", "1.5")
    second = ("Running WRITE with 32 threads 1 minutes\n\nResults:\n"
              "Op rate                   :   12,000 op/s  [WRITE: 12,000 op/s]\n"
              "Latency mean              :    2.5 ms [WRITE: 2.5 ms]\n"
              "Total errors              :          0 [WRITE: 0]\n"
              "Total operation time      : 00:01:00\n\nEND\n")
    path = tmp_path / "two.txt"
    path.write_text(first + second)
    with pytest.raises(ConfigError, match="states no consistency level of its own \\(the "
                                          "run before it ran at QUORUM\\)"):
        read_measurements(str(path), replicas=3)
    path.write_text(first + "  Consistency Level: ONE\n" + second)
    rows, _ = read_measurements(str(path), replicas=3)
    assert [(r.consistency, r.threads) for r in rows] == [("QUORUM", 16), ("ONE", 32)]
    assert {r.consistency for r in read_measurements(str(STRESS_AUTO),
                                                     replicas=3)[0]} == {"QUORUM"}


def test_ycsb_output_cut_inside_an_operations_last_line_is_refused():
    """A fuzz cut a run's output just after '[UPDATE], AverageLatency(us), 191' (it
    was 1911.04): the write row was fitted at 0.191 ms, silently. A file ending
    without its newline on an operation's count or latency is refused; one ending on
    a Return= line (the last YCSB prints of a section) without its newline is read."""
    complete = (_summary(10000, 100.0, READ=(500, 1500), UPDATE=(500, 1911.04))
                + "[UPDATE], Return=OK, 500\n")
    cut = complete[:complete.index("1911.04") + 3]
    with pytest.raises(ConfigError, match=r"line 6, its last, ends without a newline "
                       r"on '\[UPDATE\], AverageLatency\(us\), 191'.*but has no "
                       r"Return= line of \[UPDATE\]"):
        parse_ycsb(cut, threads=10, consistency="ONE")
    read, write = parse_ycsb(complete.rstrip("\n"), threads=10, consistency="ONE")
    assert float(write["mean_ms"]) == pytest.approx(1.91104)
    # measurementtype=histogram prints its buckets after the Return= lines: complete
    # output ending on one without its newline is read (a review)
    buckets = complete + "[UPDATE], 0, 400\n[UPDATE], >1000, 0"
    assert parse_ycsb(buckets, threads=10, consistency="ONE")[1] == write


def test_ycsb_measuring_each_operation_two_ways_is_read_from_its_hdrhistogram():
    """-p measurementtype=hdrhistogram+histogram prints [HdrREAD] (with the Return=
    lines) and [BucketREAD]; such complete output was refused as truncated (a fuzz).
    The HdrHistogram section is read; the bucket one, whose p95 differs, is not."""
    text = ("[OVERALL], RunTime(ms), 10000\n[OVERALL], Throughput(ops/sec), 1000.0\n"
            "[HdrREAD], Operations, 10000\n[HdrREAD], AverageLatency(us), 1200.0\n"
            "[HdrREAD], 95thPercentileLatency(us), 2500\n[HdrREAD], Return=OK, 10000\n"
            "[BucketREAD], Operations, 10000\n[BucketREAD], AverageLatency(us), 1200.0\n"
            "[BucketREAD], 95thPercentileLatency(us), 2000\n[BucketREAD], 0, 1000\n")
    (row,) = parse_ycsb(text, threads=16, consistency="ONE")
    assert (row["operation"], float(row["mean_ms"]), float(row["p95_ms"])) == \
        ("read", 1.2, 2.5)
    with pytest.raises(ConfigError, match=r"sections \[HdrREAD\] and \[READ\] both"):
        parse_ycsb(text + "[READ], Operations, 5\n[READ], AverageLatency(us), 9\n",
                   threads=16, consistency="ONE")


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_utf16_without_its_mark_is_named_as_such(tmp_path, encoding):
    """Saved as UTF-16 without a byte-order mark, a file was refused with its header
    quoted full of \\x00 (a fuzz); a lone NUL in a UTF-8 file is still quoted where
    it is (tests/test_cli_fuzz.py)."""
    path = tmp_path / "u16.csv"
    path.write_bytes("operation,consistency,threads,mean_ms\nread,ONE,10,2\n"
                     .encode(encoding))
    with pytest.raises(ConfigError, match="u16.csv looks like UTF-16 text without a "
                       r"byte-order mark \(every other byte 0\); save it as UTF-8"):
        read_measurements(str(path), replicas=3)
