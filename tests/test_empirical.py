"""Tests for forkjoin_sim.laws.empirical: the distribution of measured latencies."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from scipy import integrate, stats

from forkjoin_sim.laws.empirical import Empirical
from forkjoin_sim.errors import ConfigError
from strategies import latency_samples


def sample_z_bound(draws, mean, std):
    """|sample mean - mean| in standard errors."""
    return abs(np.mean(draws) - mean) / (std / math.sqrt(draws.size))


# --- moments, ppf and cdf as properties of the data -------------------------------

@settings(max_examples=150, deadline=None)
@given(latency_samples())
def test_moments_are_the_sample_moments(data):
    dist = Empirical.from_samples(data)
    assert dist.mean() == pytest.approx(np.mean(data), rel=1e-12)
    assert dist.moment(2) == pytest.approx(np.mean(data ** 2), rel=1e-12)
    assert dist.moment(0) == 1.0
    assert dist.var() == pytest.approx(np.var(data), rel=1e-9, abs=1e-9 * dist.moment(2))
    assert dist.std() == pytest.approx(math.sqrt(dist.var()))


@settings(max_examples=150, deadline=None)
@given(latency_samples())
def test_ppf_is_the_step_inverse_of_the_ecdf(data):
    dist = Empirical.from_samples(data)
    ordered = np.sort(data)
    n = data.size
    # ppf is constant x_(i) on ((i-1)/n, i/n]: check near both ends and the middle.
    # (Not at the ends themselves: i/n is rounded, and a q one ulp above the true
    # i/n rightly gives x_(i+1).)
    i = np.arange(1, n + 1)
    np.testing.assert_array_equal(dist.ppf(i / n - 1e-9), ordered)
    np.testing.assert_array_equal(dist.ppf((i - 0.5) / n), ordered)
    np.testing.assert_array_equal(dist.ppf((i - 1) / n + 1e-9), ordered)
    assert dist.ppf(1.0) == ordered[-1] and dist.ppf(0.0) == ordered[0]
    # So the integral of ppf(u)**m over (0, 1), a sum over the n steps, is the
    # m-th sample moment.
    for order in (1, 2, 3):
        step_integral = np.sum(dist.ppf((i - 0.5) / n) ** order) / n
        assert step_integral == pytest.approx(np.mean(data ** order), rel=1e-12)
    # ppf(q) = min{x : cdf(x) >= q}.
    q = np.linspace(0.001, 1, 97)
    x = dist.ppf(q)
    assert np.all(dist.cdf(x) >= q - 1e-12)
    below = np.nextafter(x, -np.inf)
    assert np.all(dist.cdf(below) < q)


@settings(max_examples=100, deadline=None)
@given(latency_samples())
def test_cdf_is_the_fraction_at_or_below(data):
    dist = Empirical.from_samples(data)
    for x in np.concatenate([data[:5], [-1.0, 0.0, data.max() * 2]]):
        assert dist.cdf(x) == np.mean(data <= x)


def test_ppf_integrates_to_the_moments_by_quadrature():
    data = np.array([0.2, 0.5, 0.5, 1.0, 3.0, 7.5, 0.0, 2.0])
    dist = Empirical.from_samples(data)
    steps = np.arange(1, data.size) / data.size
    for order in (1, 2):
        value, _ = integrate.quad(lambda u: dist.ppf(u) ** order, 0, 1, points=steps)
        assert value == pytest.approx(np.mean(data ** order), rel=1e-9)


def test_ppf_outside_unit_interval_is_nan_and_scalars_stay_scalars():
    dist = Empirical.from_samples([1.0, 2.0, 3.0])
    assert np.isnan(dist.ppf(-0.1)) and np.isnan(dist.ppf(1.5))
    assert dist.ppf(0) == 1.0 and dist.ppf(1) == 3.0
    assert isinstance(dist.cdf(2.0), float)
    assert dist.cdf([[0.5, 2.0]]).shape == (1, 2)


# --- sampling ---------------------------------------------------------------------

def test_rvs_is_reproducible_and_draws_only_data_values():
    data = np.array([0.3, 1.0, 4.0, 9.0])
    dist = Empirical.from_samples(data)
    first = dist.rvs(size=(1000, 3), random_state=np.random.default_rng(7))
    again = dist.rvs(size=(1000, 3), random_state=np.random.default_rng(7))
    other = dist.rvs(size=(1000, 3), random_state=np.random.default_rng(8))
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)
    assert first.shape == (1000, 3)
    assert set(np.unique(first)) == set(data)
    assert np.ndim(dist.rvs(random_state=np.random.default_rng(1))) == 0
    assert dist.rvs(5, random_state=np.random.RandomState(1)).shape == (5,)


def test_rvs_resamples_uniformly():
    data = np.random.default_rng(3).lognormal(0, 1, size=500)
    dist = Empirical.from_samples(data)
    draws = dist.rvs(200_000, random_state=np.random.default_rng(11))
    assert sample_z_bound(draws, dist.mean(), dist.std()) < 4
    # Every data point equally likely: chi-square on counts of the 500 values.
    counts = np.bincount(np.searchsorted(dist.samples, draws), minlength=500)
    assert stats.chisquare(counts).pvalue > 1e-4


# --- smoothing --------------------------------------------------------------------

def test_silverman_bandwidth_for_normal_data():
    # For a normal sample, std and IQR/1.349 both estimate sigma, so the rule gives
    # about 0.9 * sigma * n**(-1/5).
    n, sigma = 20_000, 2.0
    data = 50 + sigma * np.random.default_rng(5).standard_normal(n)
    dist = Empirical.from_samples(data, smoothing="kde")
    assert dist.bandwidth == pytest.approx(0.9 * sigma * n ** -0.2, rel=0.03)
    assert Empirical.from_samples(data).bandwidth == 0.0


def test_smoothed_draws_stay_non_negative_near_zero():
    data = np.random.default_rng(2).exponential(1.0, size=300)
    dist = Empirical.from_samples(data, smoothing="kde")
    draws = dist.rvs(100_000, random_state=np.random.default_rng(4))
    assert draws.min() >= 0
    assert len(np.unique(draws)) > 90_000  # continuous, not resampled values


def test_smoothed_moments_match_quadrature_of_the_reflected_mixture():
    data = np.array([0.02, 0.1, 0.3, 1.0, 1.1, 2.5])
    dist = Empirical.from_samples(data, smoothing="kde")
    h = dist.bandwidth
    assert h > 0.1  # wide enough that reflection at 0 matters for these data

    def density(v):
        return np.mean(stats.norm.pdf(v, data, h) + stats.norm.pdf(-v, data, h))

    upper = data.max() + 12 * h
    for order in (1, 2, 3, 4, 5):
        value, _ = integrate.quad(lambda v: v ** order * density(v), 0, upper,
                                  epsabs=0, epsrel=1e-11, limit=200)
        assert dist.moment(order) == pytest.approx(value, rel=1e-8)
    # Reflection does not change squares: the kernel adds exactly h**2.
    assert dist.moment(2) == pytest.approx(np.mean(data ** 2) + h ** 2, rel=1e-12)
    # ... but it does push mass away from 0, raising the mean.
    assert dist.mean() > np.mean(data)
    for x in (0.05, 0.4, 2.0):
        value, _ = integrate.quad(density, 0, x, epsabs=0, epsrel=1e-11)
        assert dist.cdf(x) == pytest.approx(value, rel=1e-8)


def test_smoothed_moments_match_draws():
    data = np.random.default_rng(9).gamma(0.7, 1.0, size=400)
    dist = Empirical.from_samples(data, smoothing="kde")
    draws = dist.rvs(400_000, random_state=np.random.default_rng(10))
    assert sample_z_bound(draws, dist.mean(), dist.std()) < 4
    square_std = math.sqrt(dist.moment(4) - dist.moment(2) ** 2)
    assert sample_z_bound(draws ** 2, dist.moment(2), square_std) < 4
    q = np.array([0.05, 0.5, 0.95])
    assert np.abs(dist.cdf(np.quantile(draws, q)) - q).max() < 4e-3


def test_smoothed_ppf_inverts_cdf():
    dist = Empirical.from_samples([0.1, 0.4, 0.4, 2.0, 5.0], smoothing="kde")
    q = np.array([0.0, 1e-6, 0.1, 0.5, 0.9, 0.999999])
    x = dist.ppf(q)
    np.testing.assert_allclose(dist.cdf(x), q, atol=1e-12)
    assert dist.ppf(1.0) == np.inf and np.isnan(dist.ppf(1.2))


def test_smoothing_constant_data_has_zero_bandwidth():
    dist = Empirical.from_samples([2.0, 2.0, 2.0], smoothing="kde")
    assert dist.bandwidth == 0.0
    assert np.all(dist.rvs(10, random_state=np.random.default_rng(0)) == 2.0)


# --- construction, scaling, repr --------------------------------------------------

def test_scaled_multiplies_samples_and_moments():
    data = np.array([0.0, 1.0, 2.0, 7.0])
    for smoothing in (None, "kde"):
        dist = Empirical.from_samples(data, smoothing=smoothing)
        scaled = dist.scaled(2.5)
        np.testing.assert_allclose(scaled.samples, dist.samples * 2.5)
        assert scaled.mean() == pytest.approx(2.5 * dist.mean(), rel=1e-12)
        assert scaled.moment(3) == pytest.approx(2.5 ** 3 * dist.moment(3), rel=1e-12)
        assert scaled.smoothing == smoothing
    with pytest.raises(ConfigError, match="positive finite"):
        dist.scaled(0)


def test_samples_are_sorted_and_read_only():
    dist = Empirical.from_samples([3.0, 1.0, 2.0])
    np.testing.assert_array_equal(dist.samples, [1.0, 2.0, 3.0])
    with pytest.raises(ValueError):
        dist.samples[0] = 5.0


def test_repr_is_short():
    text = repr(Empirical.from_samples(np.arange(1.0, 10_001.0)))
    assert text == "Empirical(n=10000, mean=5000)"


@pytest.mark.parametrize("samples, fragment", [
    ([], "pass at least one measured latency"),
    ([1.0, np.nan], "drop NaN and infinite values"),
    ([1.0, np.inf], "drop NaN and infinite values"),
    ([1.0, -0.5], "must be >= 0"),
    ([0.0, 0.0], "at least one positive latency"),
    ([[1.0, 2.0]], "1-D array"),
    (["a", 1.0], "must be numbers"),
])
def test_invalid_samples_say_how_to_fix(samples, fragment):
    with pytest.raises(ConfigError, match=fragment):
        Empirical.from_samples(samples)


def test_unknown_smoothing_is_rejected():
    with pytest.raises(ConfigError, match="'kde'"):
        Empirical.from_samples([1.0], smoothing="gaussian")


# --- latency files: formats -------------------------------------------------------

def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_one_number_per_line_skips_blanks_and_comments(tmp_path):
    path = write(tmp_path, "lat.txt", "# measured\n1.5\n\n  2.5  \n# end\n3e-1\n")
    dist = Empirical.from_file(path)
    np.testing.assert_array_equal(dist.samples, [0.3, 1.5, 2.5])
    assert dist.source == "lat.txt"


def test_csv_column_by_name_and_by_index(tmp_path):
    path = write(tmp_path, "lat.csv",
                 "id,host,latency_ms\n1,a,2.0\n2,\"b,c\",4.0\n\n3,d,9.0\n")
    by_name = Empirical.from_file(path, column="latency_ms")
    by_index = Empirical.from_file(path, column=2)
    np.testing.assert_array_equal(by_name.samples, [2.0, 4.0, 9.0])
    np.testing.assert_array_equal(by_index.samples, by_name.samples)
    assert by_name.samples.size == 3  # the header row is not a sample


def test_csv_without_header_uses_0_based_index(tmp_path):
    path = write(tmp_path, "plain.csv", "1,10.0\n2,20.0\n3,30.0\n")
    np.testing.assert_array_equal(Empirical.from_file(path, column=1).samples,
                                  [10.0, 20.0, 30.0])
    np.testing.assert_array_equal(Empirical.from_file(path, column=0).samples,
                                  [1.0, 2.0, 3.0])


def test_single_column_csv_with_header_needs_no_column(tmp_path):
    path = write(tmp_path, "one.csv", "latency\n4\n5\n")
    np.testing.assert_array_equal(Empirical.from_file(path).samples, [4.0, 5.0])


YCSB = """\
READ latency raw data: op, timestamp(ms), latency(us)
READ,1539325438000,120
READ,1539325438001,180
INSERT,1539325438000,1234
INSERT,1539325438002,1000
[OVERALL], RunTime(ms), 5000
[INSERT], AverageLatency(us), 1117
UPDATE,1539325438003,700
"""


def test_ycsb_raw_lines_filtered_by_operation(tmp_path):
    path = write(tmp_path, "ycsb.txt", YCSB)
    np.testing.assert_array_equal(
        Empirical.from_file(path, operation="INSERT").samples, [1000.0, 1234.0])
    np.testing.assert_array_equal(
        Empirical.from_file(path, operation="read").samples, [120.0, 180.0])
    np.testing.assert_array_equal(
        Empirical.from_file(path, format="ycsb", operation="UPDATE").samples, [700.0])


def test_ycsb_is_detected_without_its_header(tmp_path):
    path = write(tmp_path, "raw.txt", "INSERT,1539325438000,1234\nINSERT,1539325438001,10\n")
    np.testing.assert_array_equal(Empirical.from_file(path).samples, [10.0, 1234.0])


def test_ycsb_operation_errors_list_what_exists(tmp_path):
    path = write(tmp_path, "ycsb.txt", YCSB)
    with pytest.raises(ConfigError) as info:
        Empirical.from_file(path, operation="SCAN")
    assert str(info.value) == f"{path}: has no 'SCAN' measurements; it holds READ, INSERT, UPDATE"
    with pytest.raises(ConfigError, match="several operations .*READ, INSERT, UPDATE.*operation="):
        Empirical.from_file(path)


def test_an_operation_of_a_file_that_is_not_ycsb_output_is_refused(tmp_path):
    """operation= on a CSV (column= makes it one) was ignored: every row was read."""
    path = write(tmp_path, "e.csv", "latency,op\n1.0,READ\n2.0,READ\n1.5,UPDATE\n")
    with pytest.raises(ConfigError, match="operation=SCAN picks an operation of YCSB "
                       "raw output, but the file is read as csv"):
        Empirical.from_file(path, column="latency", operation="SCAN")


def test_units_convert_from_file_unit_to_target(tmp_path):
    path = write(tmp_path, "ycsb.txt", YCSB)
    in_ms = Empirical.from_file(path, operation="INSERT", unit="us", to="ms")
    np.testing.assert_allclose(in_ms.samples, [1.0, 1.234], rtol=1e-15)
    seconds = write(tmp_path, "s.txt", "0.5\n2\n")
    np.testing.assert_allclose(Empirical.from_file(seconds, unit="s", to="us").samples,
                               [5e5, 2e6])
    # unit= alone converts nothing: refused as an option that does nothing (it was
    # taken silently, while to= alone was refused: a fuzz)
    with pytest.raises(ConfigError, match=r"unit='s' alone converts nothing; add to="):
        Empirical.from_file(seconds, unit="s")
    with pytest.raises(ConfigError, match="needs unit="):
        Empirical.from_file(seconds, to="ms")
    with pytest.raises(ConfigError, match="not a time unit; use one of s, ms, us, ns"):
        Empirical.from_file(seconds, unit="sec")


def test_forced_format_and_unknown_format(tmp_path):
    path = write(tmp_path, "x.txt", "5\n6\n")
    np.testing.assert_array_equal(Empirical.from_file(path, format="csv").samples, [5.0, 6.0])
    with pytest.raises(ConfigError, match="format 'json' is unknown; use one of lines, csv, ycsb"):
        Empirical.from_file(path, format="json")


def test_smoothing_from_file(tmp_path):
    path = write(tmp_path, "x.txt", "1\n2\n3\n10\n")
    assert Empirical.from_file(path, smoothing="kde").bandwidth > 0


# --- latency files: errors name the file and the line -----------------------------

SEVENTEEN = "# header comment\n" + "1.0\n" * 12 + "\n# note\n2.0\n"  # 16 lines


@pytest.mark.parametrize("bad, problem", [
    ("abc", "'abc' is not a number; the file must hold one latency per line"),
    ("nan", "'nan' is NaN; remove it or fix the measurement"),
    ("inf", "'inf' is infinite; remove it or fix the measurement"),
    ("-3.5", "'-3.5' is negative; latencies must be >= 0"),
    ("1,2", "'1,2' is not a number; the file must hold one latency per line"),
    # float() and numpy read these as 10 and 1; a file of latencies should not.
    ("1_0", "'1_0' is not a number; the file must hold one latency per line"),
    ("\uff11", "'\uff11' is not a number; the file must hold one latency per line"),
])
def test_bad_value_names_file_and_line(tmp_path, bad, problem):
    path = write(tmp_path, "latencies.txt", SEVENTEEN + bad + "\n3.0\n")
    with pytest.raises(ConfigError) as info:
        Empirical.from_file(path, format="lines")
    assert str(info.value) == f"{path} line 17: {problem}"


def test_csv_bad_cell_names_line_and_column(tmp_path):
    path = write(tmp_path, "lat.csv", "id,latency_ms\n1,2.0\n2,\n3,4.0\n")
    with pytest.raises(ConfigError) as info:
        Empirical.from_file(path, column="latency_ms")
    assert str(info.value) == (f"{path} line 3: '' is not a number; "
                               "column 'latency_ms' must hold one latency per row")


def test_csv_short_row_names_line(tmp_path):
    path = write(tmp_path, "lat.csv", "a,b,c\n1,2,3\n4,5\n")
    with pytest.raises(ConfigError, match=r"lat.csv line 3: has 2 fields, so no column 'c'"):
        Empirical.from_file(path, column="c")


def test_csv_missing_column_lists_the_header(tmp_path):
    path = write(tmp_path, "lat.csv", "# exported\nid,host,latency_ms\n1,a,2.0\n")
    with pytest.raises(ConfigError) as info:
        Empirical.from_file(path, column="latency")
    assert str(info.value) == (f"{path} line 2: no column 'latency' in the header; "
                               "its columns are id, host, latency_ms")
    with pytest.raises(ConfigError, match="column 3 does not exist; it has 3 columns, use column=0..2"):
        Empirical.from_file(path, column=3)
    with pytest.raises(ConfigError, match=r"has 3 columns \(id, host, latency_ms\); choose"):
        Empirical.from_file(path, format="csv")


def test_csv_name_without_header(tmp_path):
    path = write(tmp_path, "plain.csv", "1,2\n3,4\n")
    with pytest.raises(ConfigError, match="no header row .* use column=INDEX"):
        Empirical.from_file(path, column="latency")


def test_ycsb_malformed_line_names_line(tmp_path):
    path = write(tmp_path, "ycsb.txt", "INSERT,1,10\nINSERT,2\n")
    with pytest.raises(ConfigError) as info:
        Empirical.from_file(path, format="ycsb")
    assert str(info.value) == (f"{path} line 2: 'INSERT,2' is not a YCSB raw measurement;"
                               " YCSB raw measurement lines look like "
                               "OPERATION,timestamp,latency")
    bad_latency = write(tmp_path, "ycsb2.txt", "[READ], Operations, 2\nREAD,1,x\n")
    with pytest.raises(ConfigError, match=r"ycsb2.txt line 2: 'x' is not a number"):
        Empirical.from_file(bad_latency, operation="READ")


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n\n"])
def test_empty_file(tmp_path, text):
    path = write(tmp_path, "empty.txt", text)
    with pytest.raises(ConfigError) as info:
        Empirical.from_file(path)
    assert str(info.value).startswith(f"{path}: holds no latencies")


def test_ycsb_summary_only(tmp_path):
    path = write(tmp_path, "summary.txt", "[OVERALL], RunTime(ms), 10\n")
    with pytest.raises(ConfigError, match="holds no YCSB raw measurement lines.*measurementtype=raw"):
        Empirical.from_file(path)


def test_all_zero_file(tmp_path):
    path = write(tmp_path, "zeros.txt", "0\n0.0\n")
    with pytest.raises(ConfigError, match=r"zeros.txt: all 2 latencies are 0"):
        Empirical.from_file(path)


def test_missing_file_and_directory(tmp_path):
    missing = tmp_path / "nope.txt"
    with pytest.raises(ConfigError) as info:
        Empirical.from_file(missing)
    assert str(info.value).startswith(f"{missing}: no such file; give the path")
    with pytest.raises(ConfigError, match="not a regular file"):
        Empirical.from_file(tmp_path)


def test_binary_file(tmp_path):
    path = tmp_path / "blob.bin"
    # (not starting with ff fe: that is UTF-16's byte-order mark, read as UTF-16)
    path.write_bytes(b"\x81\xff\xfe\x00")
    with pytest.raises(ConfigError, match="not a UTF-8 text file"):
        Empirical.from_file(path)


def test_devices_and_pipes_are_refused_before_reading(tmp_path):
    # /dev/zero and a FIFO without a writer would be read (or waited on) for ever
    import os

    from forkjoin_sim.checks import check_input_file

    fifo = tmp_path / "latencies.fifo"
    os.mkfifo(fifo)
    for path in ("/dev/zero", fifo):
        with pytest.raises(ConfigError, match="not a regular file"):
            Empirical.from_file(path)
        with pytest.raises(ConfigError, match="not a regular file"):
            check_input_file(path, "--basic-csv")


def test_a_latency_a_billion_times_the_median_names_its_line(tmp_path):
    """One line of 1e308 among 200 latencies near 1 made the run refuse its arrival
    rate; the line is named instead."""
    path = write(tmp_path, "l.txt", "\n".join(["1.5"] * 200 + ["1e308"]) + "\n")
    with pytest.raises(ConfigError, match="l.txt line 201: '1e308' is 6.67e.307 times "
                       "the median latency"):
        Empirical.from_file(path)
