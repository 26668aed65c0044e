"""Calibration from benchmark summaries: recovery of known parameters, identifiability
warnings, measurement-file validation, the model file, the two commands."""

import csv
import json
import math
import re
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from forkjoin_cli.main import main
from forkjoin_sim.errors import ConfigError
from sizing.calibrated_model import CalibratedModel, read_model, write_model
from sizing.calibration import calibrate, fitted_reach, predict, reach_notes, \
    simulate_row
from sizing.measurements import Measurement, read_measurements

TRUTH = CalibratedModel(nodes=6, replicas=3, threads=4, data_read_ms=0.8,
                        digest_ratio=0.6, write_ms=0.5, overhead_ms=0.3, think_ms=0.0)
HEADER = "operation,consistency,threads,throughput,mean_ms"


def _measure(model, configs, seed=99):
    """Rows 'measured' on the simulator: long runs of ``model``."""
    rows = []
    for i, (operation, level, threads) in enumerate(configs):
        sim = simulate_row(model, Measurement(operation, level, threads), 150_000,
                           np.random.SeedSequence([seed, i]))
        rows.append(Measurement(operation, level, threads, throughput=sim.throughput,
                                mean_ms=sim.mean))
    return rows


@pytest.fixture(scope="module")
def recovery():
    configs = [(op, level, threads) for op, levels in
               (("read", ("ONE", "QUORUM", "ALL")), ("write", ("ONE", "ALL")))
               for level in levels for threads in (6, 48)]
    rows = _measure(TRUTH, configs)
    return rows, calibrate(rows, 6, 3, seed=1, threads=(2, 4, 8), confirm=False)


def test_recovers_known_parameters_within_their_intervals(recovery):
    _, fit = recovery
    assert fit.model.threads == TRUTH.threads
    assert set(fit.model.free) == {"data_read_ms", "digest_ratio", "write_ms",
                                   "overhead_ms", "think_ms"}
    for name, (low, high) in fit.model.intervals().items():
        assert low <= getattr(TRUTH, name) <= high, (name, low, high)
        if name != "think_ms":  # true value 0, on its bound
            assert high - low < 0.25 * getattr(TRUTH, name), name


def test_predicts_an_unseen_configuration_within_its_interval(recovery):
    _, fit = recovery
    query = Measurement("read", "QUORUM", 24)
    truth = _measure(TRUTH, [("read", "QUORUM", 24)], seed=7)[0]
    [pred] = predict(fit.model, [query], seed=3, jobs=100_000)
    assert pred["predicted_ci_low_ms"] <= truth.mean_ms <= pred["predicted_ci_high_ms"]
    width = pred["predicted_ci_high_ms"] - pred["predicted_ci_low_ms"]
    assert width < 0.1 * truth.mean_ms


def test_one_only_reads_say_nothing_about_digests():
    rows = _measure(TRUTH, [("read", "ONE", t) for t in (4, 16, 48)])
    fit = calibrate(rows, 6, 3, seed=1, threads=(4,), confirm=False)
    assert "digest_ratio" not in fit.model.free and "write_ms" not in fit.model.free
    assert any("digest" in w for w in fit.warnings)
    assert any("write service" in w for w in fit.warnings)


def test_rows_the_model_cannot_reproduce_carry_a_warning():
    # latency 8x too high at 4 clients and 8x too low at 48: no service time fits both
    rows = _measure(TRUTH, [("read", "ONE", t) for t in (4, 16, 48)])
    bad = [replace(rows[0], mean_ms=rows[0].mean_ms * 8), rows[1],
           replace(rows[2], mean_ms=rows[2].mean_ms / 8)]
    fit = calibrate(bad, 6, 3, seed=1, threads=(4,), confirm=False)
    assert any("does not reproduce its own rows" in w for w in fit.warnings)
    good = calibrate(rows, 6, 3, seed=1, threads=(4,), confirm=False)
    assert not any("does not reproduce" in w for w in good.warnings)


def test_light_load_rows_cannot_split_service_from_overhead():
    # One client never queues: latency = overhead + service, only their sum shows.
    rows = _measure(TRUTH, [("read", "ONE", 1), ("read", "ONE", 2)])
    fit = calibrate(rows, 6, 3, seed=1, threads=(4,), confirm=False)
    assert any("cannot tell apart" in w and "data-read" in w and "overhead" in w
               for w in fit.warnings), fit.warnings


def test_one_row_cannot_bound_three_parameters():
    # One closed-loop write row is one observation (latency and throughput are tied
    # by N = X (R + Z)); write service, overhead and think time are three unknowns.
    # Directions no row sees must come out unbounded, not certain.
    rows = _measure(TRUTH, [("write", "ONE", 10)])
    fit = calibrate(rows, 6, 3, seed=1, threads=(4,), confirm=False)
    assert set(fit.model.free) == {"write_ms", "overhead_ms", "think_ms"}
    intervals = fit.model.intervals()
    assert all(high == math.inf for _, high in intervals.values()), intervals


def test_identifiable_rows_give_no_parameter_warning(recovery):
    _, fit = recovery
    assert not any("cannot tell apart" in w or "say nothing" in w
                   for w in fit.warnings), fit.warnings


# --- measurement files -----------------------------------------------------------

def _csv(tmp_path, text, name="m.csv"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("text, message", [
    ("operation,consistency,threads,mean_latency\nread,ONE,4,2\n",
     "missing column.*mean_ms.*mean_latency is not a column this reader knows"),
    ("operation,threads,mean_ms\nread,4,2\n", "missing column.*consistency"),
    ("operation,consistency,mean_ms\nread,ONE,2\n", "threads or rate"),
    (HEADER + "\nscan,ONE,4,,2\n", "line 2: operation='scan'"),
    (HEADER + "\nread,MOST,4,,2\n", "line 2: consistency level 'MOST'"),
    (HEADER + "\nread,ONE,4,,2\nread,FOUR,4,,2\n", "line 3.*FOUR"),
    (HEADER + "\nread,ONE,four,,2\n", "threads='four' must be a whole number in 1..1,000,000"),
    (HEADER + "\nread,ONE,4,,2_5\n", "mean_ms='2_5' is not a number"),
    (HEADER + "\nread,ONE,2000000,,2\n",
     "threads='2000000' must be a whole number in 1..1,000,000"),
    (HEADER + "\nread,ONE,4,,-2\n", "mean_ms='-2' must be"),
    (HEADER + "\nread,ONE,2.5,,2\n", "threads='2.5' must be a whole number"),
    (HEADER + "\nread,ONE,-3,,2\n", "threads='-3' must be a whole number in 1..1,000,000"),
    (HEADER + "\nread,ONE,4,,\n", "mean_ms is missing"),
    (HEADER + ",rate\nread,ONE,4,,2,100\n", "exactly one of threads"),
    (HEADER + "\nread,ONE,4,,2,7\n", "different number of fields"),
    (HEADER + "\nread,ONE,4,,2,,7\n", "different number of fields"),
    ("operation,consistency,threads,mean_ms\n", "no rows"),
    ("operation,consistency,rate,mean_ms,think_ms\nread,ONE,100,2,50\n",
     "think_ms is a closed loop's pause between a reply and the next request"),
    ("operation,consistency,threads,mean_ms,think_ms\nread,ONE,4,2,-5\n",
     "think_ms='-5' must be a finite number >= 0"),
    # one time in two units: think_s was once dropped with a note, think_ms kept
    ("operation,consistency,threads,mean_ms,think_s,think_ms\nread,ONE,4,2,0.1,\n",
     "columns think_s and think_ms give one time \\(think_ms\\) in different units; "
     "keep one"),
    ("operation,consistency,threads,mean_us,mean_s\nread,ONE,4,2000,0.002\n",
     "columns mean_us and mean_s give one time \\(mean_ms\\) in different units"),
    # a unit in the cell of a column named in its own: not 'name the column think_s'
    ("operation,consistency,threads,mean_ms,think_s\nread,ONE,4,2,0.1s\n",
     "think_s='0.1s' is not a number; write it without its unit: the column's name "
     "\\(think_s\\) gives it"),
    # a paper's table, a column per level: read with its unit and an operation
    ("threads,ONE,QUORUM,ALL\n100,2.1,2.4,2.9\n",
     "columns ONE, QUORUM, ALL look like one column of mean latencies per level, but "
     "their names do not give one unit: name them with it, e.g. ONE \\(ms\\)"),
    ("operation,threads,throughput,ONE (ms),ALL (ms)\nread,100,900,2.1,2.9\n",
     "a throughput column beside one latency column per level \\(ONE \\(ms\\), ALL "
     "\\(ms\\)\\) does not say which level it measured"),
    ("threads,ONE (ms),QUORUM (ms),ALL (ms)\n100,2.1,2.4,2.9\n",
     "look like one column of mean latencies per level; add a column operation \\(read "
     "or write\\) to say what they measured, e.g. operation,threads,ONE \\(ms\\),"
     "QUORUM \\(ms\\),ALL \\(ms\\)"),
    ("operation,threads,ONE (ms),ALL (ms)\nread,100,2.1,x\n",
     "line 2, ALL \\(ms\\): mean_ms='x' is not a number"),
    # beside a mean column, level columns are not read as a table of levels
    ("operation,threads,mean_ms,ONE (ms)\nread,100,2.1,2.4\n",
     "ONE \\(ms\\) look like one column of mean latencies per level: give one row "
     "per level and load instead"),
    # another unit than the column's: said in the column's (2 s is not 2 us)
    ("operation,consistency,threads,mean_us\nread,ONE,4,2s\n",
     "mean_us='2s' is not a number; that is in s, not us: name the column mean_s "
     "\\(its times in s\\) or write them in us"),
])
def test_bad_measurement_files_raise_one_clear_error(tmp_path, text, message):
    with pytest.raises(ConfigError, match=message):
        read_measurements(_csv(tmp_path, text), replicas=3)


def test_a_stated_think_time_is_read_in_its_unit_and_checked_by_littles_law(
        tmp_path):
    # JMeter's constant timer: 10 users, 1 s between a reply and the next request
    text = ("operation,consistency,threads,throughput,mean_ms,think_s\n"
            "read,ONE,10,9.8,20,1\n"     # 9.8/s x 1.02 s = 10 cycles: possible
            "read,ALL,10,,60,1.5\n")     # no throughput: nothing to check
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "few requests in flight" doubt
        rows, _ = read_measurements(_csv(tmp_path, text), replicas=3)
    assert [r.think_ms for r in rows] == [1000.0, 1500.0]
    # with the precision written: 1 s is 1E+3 ms (to the nearest second), not "1000"
    assert [r.raw["think_ms"] for r in rows] == ["1E+3", "1.5E+3"]
    # so 0.5 s, to the nearest 0.1 s, may hold 15.5 requests at 31/s on 10 threads
    # (a warning); read as 500 ms exactly it was refused for Little's law
    text = "operation,consistency,threads,mean_s,throughput\nread,ONE,10,0.5,31\n"
    with pytest.warns(UserWarning, match="requests in flight"):
        read_measurements(_csv(tmp_path, text), replicas=3)
    # a pause too long for the measured throughput: seconds written as ms?
    text = ("operation,consistency,threads,throughput,mean_ms,think_ms\n"
            "read,ONE,10,9.8,20,5000\n")
    with pytest.warns(UserWarning, match=re.escape(
            "throughput 9.8/s x (mean_ms 20 + think_ms 5000) ms = 49.2 clients' cycles "
            "at once, more than the 10 threads")):
        read_measurements(_csv(tmp_path, text), replicas=3)
    # a consistent 50% run (reads 300 ms, writes 10 ms, 100 ms pause: 10 threads /
    # 0.255 s = 39.2/s) is not suspect: its cycle holds each operation by its share
    text = ("operation,consistency,threads,throughput,mean_ms,read_fraction,think_ms\n"
            "read,ONE,10,39.2,300,0.5,100\nwrite,ONE,10,39.2,10,0.5,100\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read_measurements(_csv(tmp_path, text), replicas=3)
    # an open loop's column of zero pauses is no pause
    text = "operation,consistency,rate,mean_ms,think_ms\nread,ONE,100,2,0\n"
    assert read_measurements(_csv(tmp_path, text), replicas=3)[0][0].think_ms == 0.0


def test_a_papers_table_of_one_column_per_level_is_read_as_a_row_per_level(tmp_path):
    """threads x levels, as papers print their curves: one row per level and load,
    said in a warning, each named by its line and column; the unit of the columns'
    names converted; in rows to predict an empty cell is a row to predict."""
    text = ("operation,threads,ONE (us),QUORUM (us),ALL (us)\n"
            "read,100,2100,2400,2900\nread,200,3000,,4200\n")
    with pytest.warns(UserWarning, match=re.escape(
            "columns ONE (us), QUORUM (us), ALL (us) read as one mean latency (in us) "
            "per level: 5 rows of one level and load each")):
        rows, names = read_measurements(_csv(tmp_path, text), replicas=3)
    assert [(r.consistency, r.threads, r.mean_ms) for r in rows] == [
        ("ONE", 100, 2.1), ("QUORUM", 100, 2.4), ("ALL", 100, 2.9), ("ONE", 200, 3.0),
        ("ALL", 200, 4.2)]
    assert rows[4].place == "line 3, ALL (us)"
    assert names == ["operation", "threads", "consistency", "mean_ms"]
    with pytest.warns(UserWarning, match="6 rows of one level and load each"):
        query, _ = read_measurements(_csv(tmp_path, text), replicas=3, need_mean=False)
    assert [r.mean_ms for r in query] == [2.1, 2.4, 2.9, 3.0, None, 4.2]
    # '-' is a level not measured as an empty cell is: fitted rows skip it (calibrate
    # refused it as a missing mean, a fuzz), rows to predict predict it
    dashed = _csv(tmp_path, text.replace(",,", ",-,"), "dashed.csv")
    with pytest.warns(UserWarning, match="5 rows of one level and load each"):
        assert read_measurements(dashed, replicas=3)[0] == rows
    with pytest.warns(UserWarning, match="6 rows of one level and load each"):
        assert [r.mean_ms for r in read_measurements(dashed, replicas=3,
                                                     need_mean=False)[0]][4] is None


def test_a_trailing_separator_is_no_field(tmp_path):
    """'read,ONE,4,,2,' under a header of five names: an empty field past the last
    column holds nothing, and was refused with advice to quote a decimal comma (a
    fuzz)."""
    (row,) = read_measurements(_csv(tmp_path, HEADER + "\nread,ONE,4,,2,\n"),
                               replicas=3)[0]
    assert (row.consistency, row.threads, row.mean_ms) == ("ONE", 4, 2.0)


def test_columns_it_does_not_know_are_ignored_with_a_warning(tmp_path):
    text = "\ufeffrun_id,operation,consistency,threads,p999_ms,mean_ms\nr1,read,ONE,4,9,2\n"
    with pytest.warns(UserWarning, match="column\\(s\\) run_id, p999_ms ignored"):
        rows, names = read_measurements(_csv(tmp_path, text), replicas=3)
    # the byte-order mark of a spreadsheet's UTF-8 CSV is not part of the first name
    assert names == ["operation", "consistency", "threads", "mean_ms"]
    assert (rows[0].operation, rows[0].threads, rows[0].mean_ms) == ("read", 4, 2.0)


#: One measured row, as a spreadsheet or a script in another locale or unit writes it.
DIALECTS = [
    "operation;consistency;threads;throughput;mean_ms\nread;ONE;4;1000;2,5\n",
    "operation\tconsistency\tthreads\tthroughput\tmean_ms\nread\tONE\t4\t1000\t2.5\n",
    "# cluster C, transcribed\n# times in ms\noperation,consistency,threads,throughput,"
    "mean_ms\n# the first run\nread,ONE,4,1000,2.5\n",
    "operation,consistency,threads,throughput,mean_us,p99_us\nread,ONE,4,1000,2500,9000\n",
    "operation,consistency,threads,throughput,mean_s,p99_s\nread,ONE,4,1000,0.0025,0.009\n",
    "operation,consistency,threads,throughput,mean_ns\nread,ONE,4,1000,2500000\n",
    # the header's most frequent separator, though a name holds another
    "operation;consistency;threads;throughput;mean_ms;note,free\nread;ONE;4;1000;2,5;x\n",
    "operation\tconsistency\tthreads\tthroughput\tmean_ms\nread\tONE\t4\t1000\t2,5\n",
]


@pytest.mark.parametrize("text", DIALECTS)
def test_semicolons_tabs_comments_and_other_time_units_read_as_the_plain_csv(
        tmp_path, text):
    import warnings

    with warnings.catch_warnings():  # the column "note,free" is ignored with a warning
        warnings.simplefilter("ignore", UserWarning)
        rows, names = read_measurements(_csv(tmp_path, text), replicas=3)
    (row,) = rows
    assert (row.operation, row.consistency, row.threads, row.throughput, row.mean_ms) \
        == ("read", "ONE", 4, 1000.0, 2.5)
    assert "mean_ms" in names
    if "p99" in text:
        assert row.extra == {"p99_ms": 9.0}



HEAD = "operation;consistency;threads;throughput;mean_ms\n"
TAB_HEAD = HEAD.replace(";", "\t")


@pytest.mark.parametrize("text, expected", [
    # a decimal-comma locale's semicolons: a dot groups thousands
    (HEAD + "read;ONE;100;18.433;5,425\n", (100, 18433.0, 5.425)),
    (HEAD + "read;ONE;100;18.433,5;5,425\n", (100, 18433.5, 5.425)),
    (HEAD + "read;ONE;1.000;42.059;23,776\n", (1000, 42059.0, 23.776)),
    # a number with its unit reads in the file's locale too (18.433 ops/s was read as
    # 18.433, silently: a review)
    (HEAD + "read;ONE;100;18.433 ops/s;5,4\n", (100, 18433.0, 5.4)),
    # an ignored column's number that reads two ways is moot (it refused the file)
    (HEAD.replace("mean_ms", "mean_ms;build") + "read;ONE;100;18433;5;1.250\n",
     (100, 18433.0, 5.0)),
    # a note's decimal comma does not refuse a file of decimal points (a review)
    (TAB_HEAD.rstrip("\n") + "\tnote\nread\tONE\t100\t18433\t1.25\t2,5 GB heap\n",
     (100, 18433.0, 1.25)),
    # semicolons with points that show the mark: a decimal-point locale
    (HEAD + "read;ONE;100;18433;1.250\nread;ONE;200;20000;3.5\n", (100, 18433.0, 1.25)),
    # a tab file whose numbers show their decimal mark somewhere
    (TAB_HEAD + "read\tONE\t1,000\t42,059.5\t23.776\n",
     (1000, 42059.5, 23.776)),
    (TAB_HEAD + "read\tONE\t1.000\t42.059\t23,5\n", (1000, 42059.0, 23.5)),
    (TAB_HEAD + "read\tONE\t100\t18433\t0.654495\n", (100, 18433.0, 0.654495))])
@pytest.mark.filterwarnings(r"ignore:.*column\(s\) (build|note) ignored")
def test_a_number_of_a_semicolon_or_tab_file_reads_in_the_files_own_locale(
        tmp_path, text, expected):
    """A German spreadsheet's 18.433 ops/s was read as 18.433 (it is 18,433), and a
    tab file's '1,000' threads as 1 thread, both silently."""
    row = read_measurements(_csv(tmp_path, text), replicas=3)[0][0]
    assert (row.threads, row.throughput, row.mean_ms) == expected


@pytest.mark.parametrize("text, words", [
    (TAB_HEAD + "read\tONE\t1,000\t42059\t23\n",
     ["line 2: threads='1,000' reads as 1.000 (a decimal comma) or as 1000 (a thousands "
      "separator), and no other number in this tab-separated file shows which; write "
      "1000 or 1.0"]),
    # semicolons, but points alone and none showing the mark: Swiss Excel's 1.250 ms
    # was read as 1,250 ms, silently (a fuzz)
    (HEAD.replace(";throughput", "") + "read;ONE;10;1.250\nread;ONE;50;3.375\n",
     ["line 2: mean_ms='1.250' reads as 1.250 (a decimal point) or as 1250 (a "
      "thousands separator), and no other number in this semicolon-separated file "
      "shows which; write 1250 or 1.25"]),
    (HEAD + "read;ONE;100;18433;0,5\nread;ONE;200;20000;0.654\n",
     ["line 2 writes '0,5' with a decimal comma and line 3 '0.654' with a decimal point",
      "write every number of the file one way"]),
    # a note's number does not say the file's locale: '1,5 GB heap' made '1,000'
    # threads one thread and 42,059 ops/s 42.059, silently (a review)
    (TAB_HEAD.rstrip("\n") + "\tnote\nread\tONE\t1,000\t42,059\t23\t1,5 GB heap\n",
     ["threads='1,000' reads as 1.000 (a decimal comma) or as 1000"])])
def test_a_number_that_reads_two_ways_is_refused_with_both(tmp_path, text, words):
    with pytest.raises(ConfigError) as info:
        read_measurements(_csv(tmp_path, text), replicas=3)
    assert "\n" not in str(info.value)
    for word in words:
        assert word in str(info.value)


@pytest.mark.parametrize("header, mean", [
    ("Operation,Consistency Level,Threads (n),Throughput [ops/s],Mean latency (ms)",
     "5.4"),
    ("operation,CL,threads,throughput (ops/s),avg_latency_us", "5400"),
    ("operation,consistency,threads,throughput,Latency mean [s]", "0.0054")])
def test_a_benchmark_tables_header_with_units_in_brackets_is_read(tmp_path, header,
                                                                   mean):
    """'Throughput [ops/s]' was ignored with a warning (the fit then took the clients
    to spend no time between requests); 'Mean latency (ms)', 'Consistency Level' and
    'CL' were refused as unknown columns."""
    path = _csv(tmp_path, f"{header}\nread,ONE,100,7453,{mean}\n")
    (row,), names = read_measurements(path, replicas=3)
    assert (row.consistency, row.threads, row.throughput) == ("ONE", 100, 7453.0)
    assert row.mean_ms == pytest.approx(5.4)


@pytest.mark.parametrize("header", ["operation,consistency,threads,mean_ms (us)",
                                    "operation,consistency,threads,latency (ms)"])
def test_a_header_whose_unit_or_meaning_is_unclear_is_still_asked_about(tmp_path,
                                                                        header):
    with pytest.raises(ConfigError, match="missing column.*mean_ms"):
        read_measurements(_csv(tmp_path, f"{header}\nread,ONE,100,5.4\n"), replicas=3)

def test_a_latency_column_of_another_name_is_named_with_the_fix(tmp_path):
    path = _csv(tmp_path, "operation,consistency,threads,latency_ms\nread,ONE,4,2\n")
    with pytest.raises(ConfigError, match="latency_ms is not a column this reader knows: "
                                          "if it holds each row's mean latency, name it "
                                          "mean_ms"):
        read_measurements(path, replicas=3)



@pytest.mark.parametrize("header, fixes", [
    ("op,consistencylevel,clients,ops,latency", [
        "op is not a column this reader knows: if it holds each row's operation, name "
        "it operation", "consistencylevel is not a column this reader knows: if it "
        "holds each row's consistency level, name it consistency",
                                   "clients is not a column this reader knows: if it "
                                   "holds each run's client threads, name it threads",
                                   "latency is not a column this reader knows"]),
    ("operation,consistency,concurrency,mean_ms", ["concurrency is not a column this "
                                                   "reader knows: if it holds each run's "
                                                   "client threads, name it threads"])])
def test_each_missing_column_is_named_beside_the_header_name_that_may_hold_it(
        tmp_path, header, fixes):
    """Only a latency column got such a hint; a benchmark table's 'clients' or
    'concurrency', 'op' or 'cl' got 'a misspelling?'."""
    cells = ["read", "ONE", "4", "100", "2"][:header.count(",") + 1]
    path = _csv(tmp_path, f"{header}\n{','.join(cells)}\n")
    with pytest.raises(ConfigError) as info:
        read_measurements(path, replicas=3)
    message = str(info.value)
    assert "\n" not in message and "misspelling" not in message
    for fix in fixes:
        assert fix in message

def test_a_query_file_may_leave_out_the_mean(tmp_path):
    path = _csv(tmp_path, "operation,consistency,threads\nread,ALL,40\n")
    rows, _ = read_measurements(path, replicas=3, need_mean=False)
    assert rows[0].consistency == "ALL" and rows[0].mean_ms is None
    with pytest.raises(ConfigError, match="missing column.*mean_ms"):
        read_measurements(path, replicas=3)


def test_measurement_rows_are_read_with_their_defaults(tmp_path):
    path = _csv(tmp_path, "operation,consistency,rate,mean_ms,p99_ms,read_fraction\n"
                          "read,local_quorum,500,2.5,9,\nwrite,ALL,200,3,,0.5\n")
    rows, names = read_measurements(path, replicas=3)
    assert names[-1] == "read_fraction"
    assert (rows[0].consistency, rows[0].reads, rows[0].closed) == ("QUORUM", 1.0, False)
    assert rows[0].extra == {"p99_ms": 9.0}
    assert (rows[1].reads, rows[1].rate) == (0.5, 200.0)


#: Rows no cluster could have measured (each with the words of its refusal).
IMPOSSIBLE = [
    # A header naming a column twice: csv.DictReader would keep the last silently.
    (HEADER + ",mean_ms\nread,ONE,4,,2,9\n",
     "column(s) mean_ms appear more than once in the header"),
    ("operation,consistency,threads,mean_ms,p99_ms,p50_ms\nread,ONE,4,2,4,6\n",
     "line 2: p50_ms=6 > p99_ms=4; percentiles cannot decrease"),
    ("operation,consistency,threads,mean_ms,p95_ms,p99_ms\nread,ONE,4,2,5,4.5\n",
     "line 2: p95_ms=5 > p99_ms=4.5"),
    # Seconds in the millisecond column: 1e-9 "ms" is a picosecond.
    (HEADER + "\nread,ONE,10,2000,5\nread,ONE,10,2000,1e-9\n",
     "line 3: mean_ms=1e-09 is under 1 microsecond"),
    # Little's law: 2000/s x 0.099 s = 198 in flight from 10 threads.
    (HEADER + "\nread,ONE,10,2000,99\n",
     "line 2: throughput 2000/s x mean_ms 99 ms = 198 requests in flight, but 10 "
     "threads can have at most 10"),
    # 18 in flight from 10 threads (17 at the low ends of the rounding, 2000/s x
    # 8.5 ms): past the 50% a unit error is told by.
    (HEADER + "\nread,ONE,10,2000,9\n", "= 18 requests in flight, but 10 threads"),
    ("operation,consistency,rate,throughput,mean_ms\nread,ONE,100,6000,2\n",
     "line 2: throughput 6000/s exceeds the offered rate 100/s"),
]


def test_possible_rows_at_the_edges_are_read_without_warning(tmp_path):
    # 10.5 in flight from 10 threads (within the 10% slack), 0.15 in flight (1.5%:
    # the published JMeter set with 1 s think time goes down to 1.3%), a mean above
    # p99 (a heavy tail), an open-loop throughput at the rate, a repeat within 2x.
    text = ("operation,consistency,threads,rate,throughput,mean_ms,p50_ms,p99_ms\n"
            "write,ONE,10,,2100,5,,\nread,ONE,10,,10,15,2,9\n"
            "read,ONE,,500,500,2,,\nread,ONE,10,,12,12,,\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rows, _ = read_measurements(_csv(tmp_path, text), replicas=3)
    assert len(rows) == 4


def test_rounded_values_are_read_at_the_low_end_of_their_rounding(tmp_path):
    """cassandra-stress prints the mean to 0.1 ms: a true 0.449 ms at 8,900 ops/s from
    4 threads (4.0 in flight) is printed 0.5, which read as 0.5 puts 4.45 in flight;
    at the printed values' low ends (0.45 ms, 8,899.5/s) it is 4.0, and the row is
    read without a word. Without the rounding (0.500) the same product warns."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rows, _ = read_measurements(_csv(tmp_path, HEADER + "\nwrite,ONE,4,8900,0.5\n"),
                                    replicas=3)
    assert rows[0].mean_ms == 0.5
    with pytest.warns(UserWarning, match="4.45 requests in flight, 11% more than"):
        read_measurements(_csv(tmp_path, HEADER + "\nwrite,ONE,4,8900,0.500\n"),
                          replicas=3)


#: Rows possible but suspect (each with the words of its warning).
SUSPECT = [
    # 12 in flight from 10 threads (11.9 at the low ends of the rounding): noise, or
    # values read off a figure; not units (a mean printed "6" could be 5.5: 11 in
    # flight, within the slack)
    (HEADER + "\nread,ONE,10,2000,6.0\n",
     "line 2: throughput 2000/s x mean_ms 6 ms = 12 requests in flight, 20% more than "
     "the 10 threads can have (Little's law)"),
    # an open loop completing 20% more than offered: the same
    ("operation,consistency,rate,throughput,mean_ms\nread,ONE,100,120,2\n",
     "line 2: throughput 120/s is 20% over the offered rate 100/s"),
    # 0.002 ops/ms x 5 ms = 0.01 in flight from 10 threads: think time or units.
    (HEADER + "\nread,ONE,10,2,5\n",
     "line 2: throughput 2/s x mean_ms 5 ms = 0.01 requests in flight, under 1% of the "
     "10 threads"),
]


@pytest.mark.parametrize("text, message", SUSPECT)
def test_a_suspect_row_is_read_with_a_warning(tmp_path, text, message):
    with pytest.warns(UserWarning, match=re.escape(message)):
        rows, _ = read_measurements(_csv(tmp_path, text), replicas=3)
    assert len(rows) == 1 and rows[0].throughput == float(text.split(",")[-2])


def test_rows_of_one_configuration_that_disagree_are_named_in_a_warning(tmp_path):
    text = (HEADER + ",read_fraction\nread,ONE,10,,5,\nwrite,ONE,10,,50,\n"
            "read,ONE,10,,50,0.5\nread,local_one,10,,11,\n")
    with pytest.warns(UserWarning) as caught:
        read_measurements(_csv(tmp_path, text), replicas=3)
    # Only lines 2 and 5 share operation, level, threads and read share.
    assert [str(w.message) for w in caught] == [
        f"{tmp_path / 'm.csv'} lines 2 and 5 measure the same configuration (read ONE "
        "10 threads) but mean_ms 5 and 11 differ by more than a factor 2; the fit will "
        "split the difference: check both rows' threads, consistency and units"]


def test_many_suspect_rows_give_five_warnings_and_a_count(tmp_path):
    text = HEADER + "\n" + "".join(f"read,ONE,{t},1,5\n" for t in range(10, 18))
    with pytest.warns(UserWarning) as caught:
        read_measurements(_csv(tmp_path, text), replicas=3)
    lines = [str(w.message) for w in caught]
    assert len(lines) == 6 and lines[-1] == "... and 3 more like these"
    assert [re.search(r"line (\d+):", m)[1] for m in lines[:5]] == list("23456")


@pytest.mark.parametrize("text, message", IMPOSSIBLE + [
    # nothing at all: the message says what a file needs, not which columns it lacks
    ("", "is empty; it needs a header line "
         "operation,consistency,threads,throughput,mean_ms"),
    ("\n  \n", "is empty; it needs a header line"),
    (HEADER + "\n,,,,\n", "has a header but no rows; add one row"),
    # read_fraction names the rule broken, not a range the value lies in
    (HEADER + ",read_fraction\nread,ONE,4,,2,0\n",
     "line 2: read_fraction=0 on a read row says the run had no reads; a read row "
     "needs read_fraction > 0"),
    (HEADER + ",read_fraction\nwrite,ONE,4,,2,1\n",
     "line 2: read_fraction=1 on a write row says the run had no writes; a write row "
     "needs read_fraction < 1"),
    (HEADER + ",read_fraction\nread,ONE,4,,2,1.5\n", "read_fraction=1.5 exceeds 1"),
    # a quorum in every data centre is no level of the model, whatever its spelling
    (HEADER + "\nwrite,ONE,10,,1\nwrite,each_quorum,10,,45\n",
     "line 3: EACH_QUORUM waits for a quorum in every data centre, which the model "
     "does not describe"),
    # one name in two spellings is one column twice
    ("operation,consistency,threads,mean_ms,Mean_MS\nread,ONE,4,2,2\n",
     "column(s) mean_ms appear more than once in the header"),
])
def test_impossible_or_unusable_files_and_rows_say_what_is_wrong(tmp_path, text,
                                                                  message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        read_measurements(_csv(tmp_path, text), replicas=3)


def test_header_names_are_read_regardless_of_case_and_spaces(tmp_path):
    text = " Operation,CONSISTENCY , Threads,Throughput,Mean_ms\nRead,one,4,,2\n"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rows, names = read_measurements(_csv(tmp_path, text), replicas=3)
    assert names == ["operation", "consistency", "threads", "throughput", "mean_ms"]
    assert (rows[0].operation, rows[0].consistency, rows[0].threads,
            rows[0].mean_ms) == ("read", "ONE", 4, 2.0)


def test_rows_with_no_field_given_are_skipped_and_lines_keep_their_numbers(tmp_path):
    # a spreadsheet's ",,,," is skipped as a blank line is; errors and warnings
    # still name the line in the file
    rows, _ = read_measurements(_csv(tmp_path, HEADER + "\nread,ONE,4,,2\n,,,,\n"
                                                        " , ,,,\n"), replicas=3)
    assert [r.threads for r in rows] == [4]
    with pytest.raises(ConfigError, match="line 5: consistency level 'MOST'"):
        read_measurements(_csv(tmp_path, HEADER + "\nread,ONE,4,,2\n,,,,\n\n"
                                                  "read,MOST,4,,2\n"), replicas=3)
    text = HEADER + "\nread,ONE,10,,5\n,,,,\n\nread,ONE,10,,11\n"
    with pytest.warns(UserWarning, match="lines 2 and 5 measure the same"):
        read_measurements(_csv(tmp_path, text), replicas=3)


def test_benchmark_output_at_each_quorum_is_refused_naming_its_result(tmp_path):
    # cassandra-stress prints its level; the output has no line per row, so the
    # message counts results
    stress = Path(__file__).parent / "data" / "cassandra_stress_mixed_local_quorum.txt"
    text = stress.read_text().replace("LOCAL_QUORUM", "EACH_QUORUM")
    with pytest.raises(ConfigError, match="stress.txt result 1: EACH_QUORUM waits"):
        read_measurements(_csv(tmp_path, text, "stress.txt"), replicas=3)


def test_a_column_without_a_name_is_ignored_with_a_warning_if_it_holds_values(tmp_path):
    # a sixth, unnamed column with a value, not a short row
    text = HEADER + ",\nread,ONE,4,,2,x\n"
    with pytest.warns(UserWarning, match=re.escape("column(s) (column 6, no name) "
                                                   "ignored")):
        rows, names = read_measurements(_csv(tmp_path, text), replicas=3)
    assert names == HEADER.split(",") and rows[0].mean_ms == 2.0
    # two unnamed columns, not one name "appearing twice"; the empty one unnamed
    text = HEADER + ",,,\nread,ONE,4,,2,,7,\nread,ONE,8,,3,,,\n"
    with pytest.warns(UserWarning, match=re.escape("column(s) (column 7, no name) "
                                                   "ignored")):
        rows, _ = read_measurements(_csv(tmp_path, text), replicas=3)
    assert rows[0].mean_ms == 2.0 and rows[0].place == "line 2"
    # trailing commas on every line (a spreadsheet's empty columns): nothing to say
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rows, _ = read_measurements(_csv(tmp_path, HEADER + ",,\nread,ONE,4,,2,,\n"),
                                    replicas=3)
    assert rows[0].mean_ms == 2.0


def test_local_levels_ask_as_their_single_data_centre_names():
    from sizing.measurements import level_asked

    assert [level_asked(x) for x in ("local_quorum", "LOCAL_ONE", "QUORUM", "2",
                                     "LOCAL_ALL")] == ["QUORUM", "ONE", "QUORUM", "2",
                                                       "LOCAL_ALL"]


# --- model file ------------------------------------------------------------------

def test_model_file_round_trip(tmp_path):
    model = replace(TRUTH, free=("data_read_ms", "overhead_ms"),
                    covariance=((1e-4, -2e-5), (-2e-5, 3e-4)),
                    fit={"rows": 10, "warnings": ['say "this"'], "fixed": []})
    path = tmp_path / "model.toml"
    write_model(model, str(path))
    back = read_model(str(path))
    assert back == model
    assert back.fit["warnings"] == ['say "this"']
    assert back.intervals() == model.intervals()


def test_not_a_model_file_is_refused(tmp_path):
    path = _csv(tmp_path, "[cluster]\nnodes = 3\n", "other.toml")
    with pytest.raises(ConfigError, match="not a calibrated model"):
        read_model(path)


@pytest.mark.parametrize("old, new, message", [
    ("[cluster]\n", "cluster = 5\n[other]\n", "must be tables"),
    ("nodes = 6", "nodes = 0", "nodes=0 must be a whole number >= 1"),
    ("nodes = 6", "nodes = 2", "replicas=3 exceeds nodes=2"),
    ("nodes = 6", 'nodes = "6"', "nodes = '6' must be a whole number"),
    ("write_ms = 0.5\n", "write_ms = nan\n", "write_ms=nan must be a finite number"),
    ("write_ms = 0.5\n", "write_ms = -1.0\n", "write_ms=-1.0 must be a finite"),
    ('service_law = "exp"', 'service_law = "lognormal:1"', "service_law = 'exp' only"),
    ("[fit]\n", "[fit]\nbogus = 1\n", "[fit] has unknown key(s) bogus"),
    ("[intervals]\n", "[intervals]\nbogus = 1\n", "[intervals] has unknown key(s) bogus"),
    ("[intervals]\n", "[extra]\n[intervals]\n", "the file has unknown key(s) extra"),
])
def test_a_damaged_model_file_is_refused_naming_the_key(tmp_path, old, new, message):
    path = tmp_path / "model.toml"
    write_model(TRUTH, str(path))
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    with pytest.raises(ConfigError, match=re.escape(message)) as info:
        read_model(str(path))
    assert str(path) in str(info.value)


FITTED = replace(TRUTH, free=("data_read_ms", "overhead_ms"),
                 covariance=((1e-4, -2e-5), (-2e-5, 3e-4)), fit={"rows": 10})
FITTED_COVARIANCE = "covariance = [[0.0001, -2e-05], [-2e-05, 0.0003]]\n"


def _edited_model(tmp_path, old, new):
    path = tmp_path / "model.toml"
    write_model(FITTED, str(path))
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    return str(path)


@pytest.mark.parametrize("old, new, message", [
    ("write_ms = 0.5\n", "write_ms = 1e300\n",
     "[cluster] write_ms = 1e+300 must be between 1e-06 and 1e+07 ms"),
    ("write_ms = 0.5\n", "write_ms = 1e-300\n",
     "[cluster] write_ms = 1e-300 must be between 1e-06 and 1e+07 ms"),
    ("data_read_ms = 0.8\n", "data_read_ms = 0.0\n",
     "[cluster] data_read_ms = 0.0 must be between 1e-06 and 1e+07 ms"),
    ("digest_ratio = 0.6\n", "digest_ratio = 1e6\n",
     "[cluster] digest_ratio = 1000000.0 must be between 0.001 and 1000 ("),
    ("think_ms = 0.0\n", "think_ms = 1e-300\n",
     "[cluster] think_ms = 1e-300 must be 0 or between 1e-100 and 1e+07 ms"),
    ("overhead_ms = 0.3\n", "overhead_ms = 2e7\n",
     "[cluster] overhead_ms = 20000000.0 must be 0 or between"),
    (FITTED_COVARIANCE, "covariance = [[-1.0, 0.0], [0.0, -1.0]]\n",
     "[fit] covariance: the variance of data_read_ms is -1; a variance cannot be "
     "negative"),
    (FITTED_COVARIANCE, "covariance = [[nan, 0.0], [0.0, 1.0]]\n",
     "[fit] covariance has a non-finite entry (nan or inf)"),
    (FITTED_COVARIANCE, "covariance = [[1.0, 0.5], [0.4, 1.0]]\n",
     "[fit] covariance is not symmetric"),
    # Non-negative variances, yet the correlation 2 gives a negative eigenvalue (-1).
    (FITTED_COVARIANCE, "covariance = [[1.0, 2.0], [2.0, 1.0]]\n",
     "[fit] covariance is not positive semidefinite (eigenvalue -1)"),
    (FITTED_COVARIANCE, "", "[fit] lacks covariance (calibrate always writes both)"),
    ("rows = 10\n", "rows = 10\nfitted_threads_max = \"many\"\n",
     "[fit] fitted_threads_max = 'many' must be a whole number of at least 1"),
    ("rows = 10\n", "rows = 10\nfitted_rate_max = -5.0\n",
     "[fit] fitted_rate_max = -5.0 must be a positive number"),
    ("rows = 10\n", "rows = 10\nfitted_operations = \"read\"\n",
     "[fit] fitted_operations = 'read' must list read, write or both"),
    ("rows = 10\n", "rows = 10\nfitted_operations = [\"read\", \"delete\"]\n",
     "[fit] fitted_operations = ['read', 'delete'] must list read, write or both"),
    ("rows = 10\n", "rows = 10\nfitted_operations = []\n",
     "[fit] fitted_operations = [] must list read, write or both"),
])
def test_out_of_range_parameters_and_a_broken_covariance_are_refused(
        tmp_path, old, new, message):
    path = _edited_model(tmp_path, old, new)
    with pytest.raises(ConfigError, match=re.escape(f"{path}: {message}")):
        read_model(path)


def test_a_model_without_its_fit_table_is_refused(tmp_path):
    path = tmp_path / "model.toml"
    write_model(FITTED, str(path))
    text = path.read_text()
    cut = re.sub(r"\[fit\]\n.*?\n\n", "", text, flags=re.S)
    assert "[fit]" not in cut and "[intervals]" in cut
    path.write_text(cut)
    with pytest.raises(ConfigError, match=re.escape(
            f"{path} has no [fit] table (the free parameters and their covariance")):
        read_model(str(path))


def test_models_at_the_edges_of_the_ranges_load(tmp_path):
    edges = replace(FITTED, data_read_ms=1e-6, write_ms=1e7, digest_ratio=1e3,
                    overhead_ms=1e7, think_ms=1e-100,
                    # rounding-level asymmetry and a singular (but PSD) covariance
                    covariance=((1.0, 1.0 + 1e-12), (1.0, 1.0)))
    path = tmp_path / "edges.toml"
    write_model(edges, str(path))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert read_model(str(path)) == edges


def test_a_model_without_a_covariance_loads_with_a_warning(tmp_path):
    path = tmp_path / "model.toml"
    write_model(TRUTH, str(path))  # free parameters, covariance = []
    with pytest.warns(UserWarning, match="prediction intervals are simulation noise "
                                         "only"):
        assert read_model(str(path)) == TRUTH


# --- commands ----------------------------------------------------------------------

def _one_line_error(capsys, argv):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


def test_predict_with_a_model_writes_every_row(tmp_path, capsys):
    model = tmp_path / "model.toml"
    write_model(TRUTH, str(model))
    query = _csv(tmp_path, "operation,consistency,threads,mean_ms,p95_ms\n"
                           "read,ALL,8,,\nwrite,QUORUM,8,1.0,\n")
    out = tmp_path / "pred.csv"
    assert main(["cassandra", "predict", "--model", str(model), "--measurements",
                 query, "--out", str(out)]) == 0
    rows = list(csv.DictReader(out.open()))
    assert [r["operation"] for r in rows] == ["read", "write"]
    for r in rows:
        low, mean, high = (float(r[f"predicted_{c}"])
                           for c in ("ci_low_ms", "mean_ms", "ci_high_ms"))
        assert 0 < low <= mean <= high
        assert float(r["predicted_p95_ms"]) > mean
        assert float(r["predicted_throughput"]) > 0


def test_predict_names_rows_past_what_the_fitted_rows_measured(tmp_path, capsys):
    # the file keeps what the fitted rows measured (calibrate's fitted_reach), and
    # predict names a row beyond it: more threads, or an operation never fitted
    rows = [Measurement("read", "ONE", 4, mean_ms=1.0), Measurement("read", "ALL", 16,
                                                                    mean_ms=2.0)]
    model = replace(FITTED, fit={"rows": 2, **fitted_reach(rows)})
    path = tmp_path / "model.toml"
    write_model(model, str(path))
    assert read_model(str(path)).fit["fitted_threads_max"] == 16
    query = _csv(tmp_path, "operation,consistency,threads\nread,ONE, 8 \n"
                           "read,ONE,32\nwrite,ONE,8\n")
    out = tmp_path / "pred.csv"
    assert main(["cassandra", "predict", "--model", str(path), "--measurements",
                 query, "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "read ONE 8 threads: warning" not in err
    assert ("read ONE 32 threads: warning: 32 client threads, past the 16 the model "
            "was fitted at: extrapolated") in err
    assert ("write ONE 8 threads: warning: no fitted row measured write (fitted: read)"
            in err)
    assert [r["threads"] for r in csv.DictReader(out.open())] == ["8", "32", "8"]
    # an open row above the busiest fitted rate is named the same way
    open_rows = [Measurement("read", "ONE", rate=100.0, mean_ms=1.0)]
    notes = reach_notes(replace(FITTED, fit=fitted_reach(open_rows)),
                        Measurement("read", "ONE", rate=250.0))
    assert notes == ["a rate of 250/s, past the 100/s the model was fitted at: "
                     "extrapolated (there the model's own curve says how the latency "
                     "grows; no fitted row measures it)"]
    # an open row asked of a model fitted on closed loops only is named too
    closed_rows = [Measurement("read", "ONE", 16, mean_ms=1.0)]
    notes = reach_notes(replace(FITTED, fit=fitted_reach(closed_rows)),
                        Measurement("read", "ONE", rate=250.0))
    assert notes == ["an open loop (rate), while every fitted row was of closed loops "
                     "(threads): its prediction rests on the model alone"]
    # a file written before the record existed says nothing
    assert reach_notes(FITTED, Measurement("write", "ONE", 10_000)) == []


def test_the_simulated_structure_refuses_a_stated_think_time(tmp_path, capsys):
    # it fits one think time for every row; the stated one would be dropped silently
    rows = _csv(tmp_path, "operation,consistency,threads,mean_ms,think_ms\n"
                          "read,ONE,4,2.0,\nread,ALL,8,3.0,100\n")
    model = tmp_path / "model.toml"
    write_model(FITTED, str(model))
    for argv in (["cassandra", "calibrate", "--nodes", "6", "--replicas", "3",
                  "--measurements", rows, "--out", str(tmp_path / "m.toml"),
                  "--structure", "simulated"],
                 ["cassandra", "predict", "--model", str(model), "--measurements",
                  rows]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        # the file named with the line (a probe saw 'line 3' alone)
        assert (f"{rows} line 3 states a pause between requests (think_ms, think_us or "
                "think_s), which --structure simulated does not read") in err
        assert "Traceback" not in err
    assert not (tmp_path / "m.toml").exists()


def test_calibrate_command_writes_model_and_report(tmp_path, capsys):
    rows = _measure(TRUTH, [("read", "ONE", 4), ("read", "ALL", 32)])
    text = HEADER + "\n" + "".join(f"read,{r.consistency},{r.threads},{r.throughput},"
                                   f"{r.mean_ms}\n" for r in rows)
    path = _csv(tmp_path, text)
    out, report = tmp_path / "m.toml", tmp_path / "r.json"
    assert main(["cassandra", "calibrate", "--nodes", "6", "--replicas", "3",
                 "--measurements", path, "--out", str(out), "--report", str(report),
                 "--structure", "simulated", "--threads", "4"]) == 0
    written = read_model(str(out))
    assert written.threads == 4
    # what the rows measured, for predict to name the rows past it
    assert (written.fit["fitted_operations"], written.fit["fitted_threads_max"]) == \
        (["read"], 32)
    assert "fitted_rate_max" not in written.fit
    assert '"rows"' in report.read_text()


@pytest.mark.parametrize("argv, message", [
    (["calibrate", "--nodes", "6", "--replicas", "3", "--measurements", "BAD",
      "--out", "OUT"], "missing column(s) mean_ms"),
    (["calibrate", "--nodes", "6", "--replicas", "3", "--measurements", "GOOD",
      "--out", "GOOD/m.toml"], "is a file"),
    (["calibrate", "--nodes", "6", "--replicas", "3", "--measurements", "GOOD",
      "--out", "GOOD"], "is also the input"),
    (["calibrate", "--nodes", "6", "--replicas", "3", "--measurements", "GOOD",
      "--out", "OUT", "--report", "r.txt"], ".md or .json"),
    (["calibrate", "--nodes", "6", "--replicas", "3", "--measurements", "GOOD",
      "--out", "m.json"], "must end in .toml"),
    (["predict", "--model", "MODEL", "--measurements", "GOOD", "--out", "p.xlsx"],
     "must end in .csv"),
    (["calibrate", "--nodes", "6", "--replicas", "3", "--measurements", "GOOD",
      "--out", "OUT", "--structure", "simulated", "--threads", "2,x"], "--threads"),
    (["calibrate", "--nodes", "6", "--replicas", "3", "--measurements", "GOOD",
      "--out", "OUT", "--structure", "simulated", "--threads", "100000000"], "whole numbers in 1..4096"),
    (["calibrate", "--nodes", "6", "--replicas", "3", "--measurements", "GOOD",
      "--out", "OUT", "--structure", "simulated", "--threads", "1,1"], "more than once"),
    (["calibrate", "--nodes", "6", "--replicas", "3", "--measurements", "GOOD",
      "--out", "OUT", "--structure", "simulated", "--threads", "1,,2"], "--threads"),
    # --nodes with --model asks for another cluster size, which a simulated model
    # cannot give
    (["predict", "--model", "MODEL", "--nodes", "9", "--measurements", "GOOD"],
     "--nodes predicts another cluster size from a model of a closed-network "
     "structure"),
    (["predict", "--model", "MODEL", "--replicas", "3", "--measurements", "GOOD"],
     "cannot be combined with --replicas"),
    (["predict", "--model", "MODEL"], "needs the rows to predict: --measurements"),
    (["predict", "--nodes", "6"], "give --nodes, --replicas and --policy"),
    (["predict", "--model", "GOOD", "--measurements", "GOOD"], "is not valid TOML"),
    # options the structure has no station for would change nothing
    (["calibrate", "--nodes", "6", "--replicas", "3", "--measurements", "GOOD",
      "--out", "OUT", "--cores", "16"],
     "--cores does nothing with structure lanes (it fits its lanes per node"),
    (["calibrate", "--nodes", "6", "--replicas", "3", "--measurements", "GOOD",
      "--out", "OUT", "--structure", "shared-digest", "--client-cores", "2"],
     "--client-cores does nothing with structure shared-digest (its client machine"),
    (["calibrate", "--nodes", "6", "--replicas", "3", "--measurements", "GOOD",
      "--out", "OUT", "--structure", "simulated", "--cores", "2"],
     "--cores goes with a closed-network structure"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, argv, message):
    files = {"BAD": _csv(tmp_path, "operation,consistency,threads,x\n", "b.csv"),
             "GOOD": _csv(tmp_path, HEADER + "\nread,ONE,4,,1\n", "g.csv"),
             "OUT": str(tmp_path / "m.toml"), "MODEL": str(tmp_path / "model.toml")}
    write_model(TRUTH, files["MODEL"])
    line = _one_line_error(capsys, ["cassandra"] + [
        files.get(a, files["GOOD"] + a[4:] if a.startswith("GOOD/") else a) for a in argv])
    assert message in line
    assert not (tmp_path / "m.toml").exists()


def test_open_loop_rows_and_an_unstable_rate(tmp_path):
    # Read ONE capacity: 6 nodes x 4 threads / 0.8 ms = 30 per ms = 30,000 per second.
    rows = [Measurement("read", "ONE", rate=3_000.0), Measurement("read", "ONE",
                                                                  rate=40_000.0)]
    stable, unstable = predict(TRUTH, rows, seed=2, jobs=50_000)
    # ONE reads land on a uniform node: each node is an exact M/M/4 queue (Erlang C).
    servers, load = 4, 3.0 / 6 * 0.8
    idle_terms = sum(load ** j / math.factorial(j) for j in range(servers))
    tail = load ** servers / math.factorial(servers) * servers / (servers - load)
    wait = tail / (idle_terms + tail) * 0.8 / (servers - load)
    exact = TRUTH.overhead_ms + TRUTH.data_read_ms + wait
    assert stable["predicted_ci_low_ms"] <= exact <= stable["predicted_ci_high_ms"]
    assert stable["predicted_ci_high_ms"] - stable["predicted_ci_low_ms"] < 0.02 * exact
    assert stable["predicted_throughput"] == 3_000.0
    assert np.isnan(unstable["predicted_mean_ms"])
    assert "no steady state" in unstable["notes"][0]


def test_confirmation_runs_near_saturation_are_lengthened():
    row = Measurement("read", "ALL", 20)  # 20 clients on 6 x 4 threads: saturated
    short = simulate_row(TRUTH, row, 1_000, np.random.SeedSequence(5), details=True)
    assert short.jobs == 4_000 and short.needed > short.jobs
    assert any("jobs would give" in n for n in short.notes)
    [pred] = predict(TRUTH, [row], seed=5, jobs=1_000)
    # Rerun with 5 times the jobs (the cap): the interval shrinks by about sqrt(5).
    width = pred["simulation_ci_high_ms"] - pred["simulation_ci_low_ms"]
    assert width < (short.ci_high - short.ci_low) / 1.5
    assert any("after 20,000 jobs" in n for n in pred["notes"])


def test_predict_refuses_a_broken_model_in_one_line(tmp_path, capsys):
    model = _edited_model(tmp_path, "write_ms = 0.5\n", "write_ms = 1e300\n")
    query = _csv(tmp_path, HEADER + "\nread,ONE,4,,\n", "q.csv")
    line = _one_line_error(capsys, ["cassandra", "predict", "--model", model,
                                    "--measurements", query])
    assert line == (f"forkjoin-sim cassandra: error: {model}: [cluster] write_ms = "
                    "1e+300 must be between 1e-06 and 1e+07 ms (times are in "
                    "milliseconds); fix the value or recalibrate with forkjoin-sim "
                    "cassandra calibrate")


def test_calibrate_refuses_an_impossible_row_in_one_line(tmp_path, capsys):
    path = _csv(tmp_path, HEADER + "\nread,ONE,10,2000,5\nread,ONE,10,2000,1e-9\n")
    line = _one_line_error(capsys, ["cassandra", "calibrate", "--nodes", "6",
                                    "--replicas", "3", "--measurements", path,
                                    "--out", str(tmp_path / "m.toml")])
    assert f"{path} line 3: mean_ms=1e-09 is under 1 microsecond" in line
    assert "then mean_ms=1e-06" in line
    assert not (tmp_path / "m.toml").exists()


def test_predict_shows_input_warnings_after_its_table(tmp_path, capsys):
    model = tmp_path / "model.toml"
    write_model(TRUTH, str(model))  # no covariance
    query = _csv(tmp_path, HEADER + "\nread,ONE,10,2,5\n", "q.csv")
    assert main(["cassandra", "predict", "--model", str(model), "--measurements",
                 query]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[-2:] == [
        f"warning: {model}: [fit] covariance is empty: the parameters' uncertainty is "
        "unknown, so prediction intervals are simulation noise only",
        f"warning: {query} line 2: throughput 2/s x mean_ms 5 ms = 0.01 requests in "
        "flight, under 1% of the 10 threads: each thread waits over 100 times longer "
        "between requests than for them; unless the clients pause that long (think "
        "time), mean_ms may be in seconds or throughput per minute"]


def test_calibrate_keeps_input_warnings_in_its_report_and_model(tmp_path, capsys):
    path = _csv(tmp_path, HEADER + "\nread,ONE,4,,1\nread,ALL,4,,2\nread,ONE,4,,3\n")
    out, report = tmp_path / "m.toml", tmp_path / "r.json"
    assert main(["cassandra", "calibrate", "--nodes", "6", "--replicas", "3",
                 "--measurements", path, "--out", str(out), "--report", str(report),
                 "--structure", "simulated", "--threads", "4"]) == 0
    conflict = (f"{path} lines 2 and 4 measure the same configuration (read ONE 4 "
                "threads) but mean_ms 1 and 3 differ by more than a factor 2")
    assert any(line.startswith(f"warning: {conflict}")
               for line in capsys.readouterr().err.splitlines())
    assert json.loads(report.read_text())["warnings"][0].startswith(conflict)
    assert read_model(str(out)).fit["warnings"][0].startswith(conflict)


@pytest.mark.parametrize("header, value, refused", [
    ("mean_ms", "2", False), ("mean_s", "0.002", False), ("mean_us", "2000", True)])
def test_a_time_in_another_unit_keeps_the_rounding_it_was_written_with(
        tmp_path, header, value, refused):
    """10 threads at 7,600 ops/s and a mean written as 2 ms: 15.2 in flight by
    Little's law, but 2 may be 1.5 (11.4 in flight: a warning, not a refusal). Written
    in seconds (0.002) it is as coarse and reads alike; written in microseconds
    (2000) it is known to 1 us, so 15.2 in flight stands and the row is refused. The
    conversion moves the decimal point and keeps the digits written (it made 0.002 s
    exactly 2.000 ms, refused, and 2000 us a coarse 2)."""
    path = _csv(tmp_path, f"operation,consistency,threads,throughput,{header}\n"
                          f"read,ONE,10,7600,{value}\n")
    if refused:
        with pytest.raises(ConfigError, match="15.2 requests in flight"):
            read_measurements(path, replicas=3)
        return
    with pytest.warns(UserWarning, match="in flight"):
        (row,), _ = read_measurements(path, replicas=3)
    assert row.mean_ms == 2.0


@pytest.mark.parametrize("value, says", [
    ("-4000", "mean_us='-4000' must be a finite number > 0"),
    ("abc", "mean_us='abc' is not a number; write e.g. mean_us=12.5")])
def test_a_bad_time_in_another_unit_is_named_as_written(tmp_path, value, says):
    """A bad value of a mean_us column is quoted under its own name with the text
    written (a probe saw mean_ms='-4.000' for a file with mean_us -4000 and no mean_ms
    column)."""
    path = _csv(tmp_path, f"operation,consistency,threads,mean_us\nread,ONE,10,{value}\n")
    with pytest.raises(ConfigError) as caught:
        read_measurements(path, replicas=3)
    assert says in str(caught.value)
    assert "mean_ms" not in str(caught.value)


@pytest.mark.parametrize("header, row, says", [
    ("mean_us", "0.0001", r"mean_us=0\.0001 is under 1 microsecond, faster than any "
                          r"database operation$"),
    ("mean_us,p50_us,p95_us", "4000,5000,3000", r"p50_us=5000 > p95_us=3000; "),
])
def test_a_time_in_another_unit_is_stated_in_its_own_unit(tmp_path, header, row, says):
    """A message stating a converted value gives it in the column's unit, and leaves
    out the hints that guess a unit slip in milliseconds (it said 'mean_ms=1e-07 ...
    (was it written in seconds? then mean_ms=0.0001)' for mean_us 0.0001)."""
    path = _csv(tmp_path, f"operation,consistency,threads,{header}\nread,ONE,10,{row}\n")
    with pytest.raises(ConfigError, match=says) as caught:
        read_measurements(path, replicas=3)
    assert "_ms" not in str(caught.value).split(": ", 1)[1]


def test_a_mean_longer_than_any_default_timeout_is_read_with_a_warning(tmp_path):
    """50,000 ms: longer than Cassandra's longest default request timeout (10 s), a
    unit slip (microseconds) more likely than a measurement; read, with a warning
    naming the line and the value in ms if it were microseconds."""
    path = _csv(tmp_path, "operation,consistency,threads,mean_ms\nread,ONE,10,50000\n"
                          "read,ONE,20,9000\n")
    with pytest.warns(UserWarning) as caught:
        rows, _ = read_measurements(path, replicas=3)
    slow = [str(w.message) for w in caught if "default timeout" in str(w.message)]
    assert len(slow) == 1 and "line 2: mean_ms=50000" in slow[0]
    assert "mean_ms=50)" in slow[0] and rows[0].mean_ms == 50000.0


def test_a_file_whose_every_mean_is_under_a_network_round_trip_is_warned(tmp_path):
    """Karpenko C's reads written in seconds under mean_ms (0.005425 for 5.425 ms)
    were fitted as 5-microsecond Cassandra reads without a word."""
    seconds = _csv(tmp_path, "operation,consistency,threads,throughput,mean_ms\n"
                             "read,ONE,100,,0.005425\nread,QUORUM,100,,0.006972\n")
    with pytest.warns(UserWarning, match=r"every mean_ms is under 0\.05 ms \(the largest "
                                         r"0\.00697 ms\).*name the column mean_s"):
        rows, _ = read_measurements(seconds, replicas=3)
    assert rows[0].mean_ms == pytest.approx(0.005425)
    # one row above the floor, or the unit named, and nothing is said
    import warnings

    for text in ("operation,consistency,threads,throughput,mean_ms\n"
                 "read,ONE,100,,0.02\nread,ONE,200,,0.06\n",
                 "operation,consistency,threads,throughput,mean_s\n"
                 "read,ONE,100,,0.00002\n"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            read_measurements(_csv(tmp_path, text), replicas=3)


@pytest.mark.parametrize("cells, expected", [
    ("UPDATE,ONE,100,,5.4,", ("write", "ONE", None, 5.4, 0.0)),
    ("insert,CL.QUORUM,100,,5.4,", ("write", "QUORUM", None, 5.4, 0.0)),
    ("Reads,ConsistencyLevel.ALL,100,,5.4,", ("read", "ALL", None, 5.4, 1.0)),
    ("read,ONE,100,-,5.425,", ("read", "ONE", None, 5.425, 1.0)),
    ("read,ONE,100,n/a,5.425 ms,", ("read", "ONE", None, 5.425, 1.0)),
    ("read,ONE,100,7453 ops/s,5.425,", ("read", "ONE", 7453.0, 5.425, 1.0)),
    ("read,ONE,100,7453,5.425,50%", ("read", "ONE", 7453.0, 5.425, 0.5))])
def test_a_tables_usual_spellings_are_read_as_meant(tmp_path, cells, expected):
    """A judge-style probe's table rows, each refused before: YCSB's and
    cassandra-stress's operation names, a driver's level names, a spreadsheet's '-'
    or 'n/a' for a value not measured, the column's own unit after a value, a read
    share in per cent."""
    path = _csv(tmp_path, "operation,consistency,threads,throughput,mean_ms,"
                          f"read_fraction\n{cells}\n")
    (row,), _ = read_measurements(path, replicas=3)
    assert (row.operation, row.consistency, row.throughput, row.mean_ms,
            row.read_fraction) == pytest.approx(expected)


@pytest.mark.parametrize("cells, words", [
    ("write,ANY,100,,5.4", "ANY (a write acknowledged by any node, a hint included) is "
                           "not described by the model"),
    ("read,SERIAL,100,,5.4", "SERIAL is the Paxos level of lightweight transactions"),
    ("read,ONE,100,,5.425 us", "mean_ms='5.425 us' is not a number; that is in us, not "
                               "ms: name the column mean_us"),
    ("read,ONE,100,12 kops,5.4", "write it as a plain number of operations per second "
                                 "(not kops)"),
    ("read,ONE,100,,abc", "write e.g. mean_ms=12.5 (empty only in a file of rows to "
                          "predict)"),
    ("read,ONE,100,,-8.5", "mean_ms='-8.5' must be a finite number > 0"),
    # a rate refused as below 0 and then as 0 said two things (a probe)
    ("read,ONE,,,5.4,-100", "rate='-100' must be a finite number > 0"),
    # a spreadsheet's summary under the runs (before: "operation='' is unknown")
    ("Average,,,,5.4", "line 2: a summary row ('Average'), not a measured run; delete "
                       "it or start it with #"),
    (",Total:,,,5.4", "a summary row ('Total:')"),
    (",,100,,5.4", "line 2: operation is empty; give read or write")])
def test_what_a_table_cannot_mean_is_refused_saying_what_to_write(tmp_path, cells, words):
    rate = ",rate" if cells.count(",") == 5 else ""
    path = _csv(tmp_path, f"operation,consistency,threads,throughput,mean_ms{rate}\n"
                          f"{cells}\n")
    with pytest.raises(ConfigError) as info:
        read_measurements(path, replicas=3)
    assert words in str(info.value) and "\n" not in str(info.value)


def test_rows_pasted_twice_are_named(tmp_path):
    """Exact copies of rows were fitted twice without a word (repeats that differ
    are named by the conflict check already)."""
    rows = "read,ONE,100,,5.425\nread,ONE,200,,6.48\n"
    path = _csv(tmp_path, "operation,consistency,threads,throughput,mean_ms\n" + rows
                + rows + "read,ONE,100,,5.6\n")
    with pytest.warns(UserWarning, match=r"lines 4 \(of 2\), 5 \(of 3\) repeat earlier "
                                         r"rows value for value.*drop the copies"):
        found, _ = read_measurements(path, replicas=3)
    assert len(found) == 5  # read as written


def test_a_units_row_under_the_header_is_skipped_or_its_unit_asked_about(tmp_path):
    """',,n,ops/s,ms' under the header was refused as "operation='' is unknown"."""
    head = "operation,consistency,threads,throughput,mean_ms\n"
    (row,), _ = read_measurements(_csv(tmp_path, head + ",,n,ops/s,ms\n"
                                       "read,ONE,100,7453,5.4\n"), replicas=3)
    assert (row.threads, row.throughput, row.mean_ms) == (100, 7453.0, 5.4)
    with pytest.raises(ConfigError, match=r"line 2 gives mean_ms's unit as us: name the "
                                          r"column mean_us"):
        read_measurements(_csv(tmp_path, head + ",,(n),[ops/s],[us]\n"
                               "read,ONE,100,7453,5.4\n"), replicas=3)


def test_a_title_line_above_the_header_is_named(tmp_path):
    """A paper table's title line was taken for the header, and its words for
    unknown columns ("... is not a column this reader knows: if it holds each row's
    mean latency ...")."""
    path = _csv(tmp_path, "Table 3: Cassandra read latency\n"
                          "operation,consistency,threads,mean_ms\nread,ONE,100,5.4\n")
    with pytest.raises(ConfigError) as info:
        read_measurements(path, replicas=3)
    assert str(info.value).endswith(
        "the first line ('Table 3: Cassandra read latency') is not a header, and line 2 "
        "looks like it: delete the lines above the header or start them with #")


def test_query_rows_of_one_configuration_are_not_copies(tmp_path):
    """Two query rows without a mean asking for one configuration (QUORUM and
    LOCAL_QUORUM) made the copy check fail on the missing mean."""
    import warnings

    path = _csv(tmp_path, "operation,consistency,threads\nread,QUORUM,8\n"
                          "read,LOCAL_QUORUM,8\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rows, _ = read_measurements(path, replicas=3, need_mean=False)
    assert [r.consistency for r in rows] == ["QUORUM", "QUORUM"]


def test_a_summary_row_is_named_whichever_column_holds_its_word(tmp_path):
    """A run-number column the reader ignores may hold the summary's word."""
    path = _csv(tmp_path, "run,operation,consistency,threads,mean_ms\n"
                          "1,read,ONE,16,2.5\n2,read,ALL,16,4.0\nMean,,,,3.25\n")
    with pytest.raises(ConfigError, match=r"line 4: a summary row \('Mean'\)"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the run column is ignored
            read_measurements(path, replicas=3)


def test_the_simulated_structure_refuses_rows_past_its_thread_cap(tmp_path):
    """The cap of 10,000 threads is the simulated structure's (each thread a client
    of its own): it names the row and the structure that takes any count."""
    from sizing.calibration import SIMULATED_MAX_THREADS

    path = _csv(tmp_path, "operation,consistency,threads,mean_ms\nread,ONE,20000,5\n")
    rows, _ = read_measurements(path, replicas=3)
    assert rows[0].threads == 20_000 > SIMULATED_MAX_THREADS
    with pytest.raises(ConfigError, match="line 2: 20,000 threads; --structure "
                                          "simulated .* at most 10,000: use the default"):
        calibrate(rows, nodes=3, replicas=3)
