"""Tests of forkjoin_sim.measure.statistics: warm-up, batch means, summaries, Little's law."""

import math
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import signal, stats

from forkjoin_sim.errors import ConfigError
from forkjoin_sim.measure.statistics import (
    SojournRecorder,
    Summary,
    apply_warmup,
    batch_lag1,
    batch_means_ci,
    littles_law,
    mser5_truncation,
    node_utilisation,
    percentiles,
    summarize,
    warmup_count,
)


def ar1(rng, phi, shape):
    """Stationary Gaussian AR(1) paths, x_t = phi x_{t-1} + e_t, along the last axis."""
    noise = rng.standard_normal(shape)
    start = rng.standard_normal(shape[:-1]) / math.sqrt(1 - phi**2)
    return signal.lfilter([1], [1, -phi], noise, axis=-1,
                          zi=(phi * start)[..., None])[0]


def mm1_path(rng, arrival_rate, service_rate, jobs):
    """Arrival and departure times of an M/M/1 FCFS queue, starting empty."""
    gaps = rng.exponential(1 / arrival_rate, jobs)
    service = rng.exponential(1 / service_rate, jobs)
    arrivals = np.cumsum(gaps)
    wait = np.zeros(jobs)
    for i in range(1, jobs):  # Lindley recursion
        wait[i] = max(0.0, wait[i - 1] + service[i - 1] - gaps[i])
    return arrivals, arrivals + wait + service


# --- MSER-5 -----------------------------------------------------------------

def mser5_by_definition(x):
    """MSER-5 straight from its definition, O(n^2)."""
    m = len(x) // 5
    z = np.asarray(x[: 5 * m]).reshape(m, 5).mean(axis=1)
    limit = min(m // 2, m - 2)
    if limit <= 0:
        return 0
    scores = [np.var(z[d:]) / (m - d) for d in range(limit + 1)]
    return 5 * int(np.argmin(scores))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 400),
       trend=st.floats(0, 5))
def test_mser5_matches_its_definition(seed, n, trend):
    rng = np.random.default_rng(seed)
    x = rng.exponential(size=n) + trend * np.exp(-np.arange(n) / 40)
    assert mser5_truncation(x) == mser5_by_definition(x)


@pytest.mark.parametrize("seed", range(10))
def test_mser5_finds_an_initial_transient(seed):
    x = ar1(np.random.default_rng(seed), 0.9, (20_000,))
    x[:1000] += 10
    assert 1000 <= mser5_truncation(x) <= 1500


def test_mser5_drops_almost_nothing_from_iid_data():
    drops = [mser5_truncation(np.random.default_rng(seed).standard_normal(10_000))
             for seed in range(50)]
    assert max(drops) <= 200          # 2% of the run
    assert np.median(drops) <= 10


def test_mser5_leaves_constant_and_short_series_alone():
    assert mser5_truncation(np.full(1000, 3.0)) == 0
    assert mser5_truncation([5.0, 1, 1, 1, 1, 1, 1, 1, 1, 1]) == 0  # two batches


def test_mser5_handles_ten_million_observations_at_any_offset():
    x = np.random.default_rng(0).exponential(size=10_000_000)
    x[:50_000] += 1
    drop = mser5_truncation(x)
    assert 49_000 <= drop <= 60_000
    # Sums of squares over 2e6 batch means would cancel without centring.
    assert mser5_truncation(x + 1e4) == drop


# --- warm-up ------------------------------------------------------------------

def test_warmup_fraction_drops_the_floor_of_its_share():
    assert warmup_count(1000, 0.1) == 100
    assert warmup_count(999, 0.5) == 499
    assert warmup_count(10, 0) == 0
    kept, dropped = apply_warmup(np.arange(20.0), 0.25)
    assert dropped == 5 and kept.tolist() == list(range(5, 20))


def test_auto_warmup_applies_mser5():
    x = ar1(np.random.default_rng(1), 0.5, (5000,))
    x[:300] += 8
    kept, dropped = apply_warmup(x, "auto")
    assert dropped == mser5_truncation(x)
    assert 300 <= dropped <= 400
    np.testing.assert_array_equal(kept, x[dropped:])


@pytest.mark.parametrize("warmup, match", [
    (1.0, r"outside \[0, 1\)"), (-0.1, r"outside \[0, 1\)"), ("mser", "'auto'"),
    (True, "fraction"), (None, "fraction")])
def test_bad_warmup_says_what_to_use(warmup, match):
    with pytest.raises(ConfigError, match=match):
        apply_warmup(np.ones(10), warmup)


def test_warmup_count_points_auto_to_apply_warmup():
    with pytest.raises(ConfigError, match="apply_warmup"):
        warmup_count(100, "auto")


# --- batch means ------------------------------------------------------------------

def test_batch_means_ci_covers_ar1_mean_where_the_iid_interval_does_not():
    reps, jobs = 400, 10_000
    paths = ar1(np.random.default_rng(2024), 0.9, (reps, jobs))
    batch_cover = iid_cover = 0
    for path in paths:
        _, low, high = batch_means_ci(path, 0.95)
        batch_cover += low <= 0 <= high
        low, high = stats.t.interval(0.95, jobs - 1, loc=path.mean(),
                                     scale=stats.sem(path))
        iid_cover += low <= 0 <= high
    # Consistent with 95% coverage (binomial test), while the iid interval, about
    # sqrt((1+phi)/(1-phi)) = 4.4 times too narrow, covers ~35% of the time.
    assert stats.binomtest(batch_cover, reps, 0.95).pvalue > 0.001
    assert iid_cover / reps < 0.6


def test_batch_means_ci_is_centred_on_the_sample_mean():
    x = np.random.default_rng(5).exponential(size=3001)
    mean, low, high = batch_means_ci(x, 0.9)
    assert mean == pytest.approx(x.mean(), rel=1e-12)
    assert high - mean == pytest.approx(mean - low, rel=1e-9)
    # Wider at higher confidence, by the ratio of t quantiles with 29 d.o.f.
    _, low99, high99 = batch_means_ci(x, 0.99)
    ratio = stats.t.ppf(0.995, 29) / stats.t.ppf(0.95, 29)
    assert (high99 - low99) / (high - low) == pytest.approx(ratio, rel=1e-9)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6), min_size=2, max_size=100))
def test_batch_means_ci_is_finite_for_any_two_or_more_values(values):
    mean, low, high = batch_means_ci(values)
    assert all(map(math.isfinite, (mean, low, high)))
    assert low <= mean <= high


def test_batch_means_ci_needs_two_values():
    with pytest.raises(ConfigError, match="at least 2"):
        batch_means_ci([1.0])


def test_batches_leave_out_leftover_values_at_the_start():
    # 31 values make 15 batches of 2; the odd one out is the first.
    assert tuple(batch_means_ci([1000.0] + [0.0] * 30)) == (1000 / 31,) * 3


def test_constant_data_gives_a_zero_width_interval():
    assert tuple(batch_means_ci(np.full(100, 2.5))) == (2.5, 2.5, 2.5)


def test_batch_lag1_separates_correlated_from_independent_batches():
    rng = np.random.default_rng(11)
    assert batch_lag1(ar1(rng, 0.999, (3000,))) > 0.5
    assert abs(batch_lag1(rng.standard_normal(3000))) < 0.4


# --- percentiles and summaries ------------------------------------------------

def test_percentiles_equal_numpy():
    x = np.random.default_rng(3).lognormal(size=777)
    got = percentiles(x)
    assert list(got) == [50, 90, 95, 99, 99.9]
    assert list(got.values()) == np.percentile(x, [50, 90, 95, 99, 99.9]).tolist()
    assert percentiles(x, (10,)) == {10: np.percentile(x, 10)}


def test_summarize_drops_warmup_then_samples_every_sth_job():
    x = np.arange(1000.0)
    s = summarize(x, warmup=0.105, sample_every=10)
    # Jobs 105, 115, ..., 995: the cutoff is not a multiple of 10, so sampling
    # before the warm-up would give other jobs.
    kept = np.arange(105.0, 1000.0, 10)
    assert (s.warmup_dropped, s.jobs_measured, s.sample_every) == (105, 90, 10)
    assert s.mean == pytest.approx(550.0, rel=1e-12)
    assert [s.p50, s.p90, s.p95, s.p99, s.p999] == \
        np.percentile(kept, [50, 90, 95, 99, 99.9]).tolist()


def test_summarize_auto_truncates_the_sampled_series():
    x = ar1(np.random.default_rng(8), 0.5, (20_000,)) + 5
    x[:2000] += 10
    s = summarize(x, warmup="auto", sample_every=4)
    assert s.warmup_dropped % 4 == 0
    assert 2000 <= s.warmup_dropped <= 2600
    assert s.jobs_measured == len(x[s.warmup_dropped::4])
    assert s.ci_low < 5 < s.ci_high


def test_summary_to_dict_has_the_cli_keys():
    s = summarize(np.random.default_rng(4).exponential(size=500))
    d = s.to_dict()
    assert {"mean", "ci_low", "ci_high", "p50", "p95", "p99", "jobs_measured"} <= set(d)
    assert d["jobs_measured"] == 450 and d["warmup_dropped"] == 50
    assert isinstance(d["warnings"], list)
    with pytest.raises(AttributeError):
        s.mean = 0.0


def test_summary_warns_about_short_runs_and_short_batches():
    rng = np.random.default_rng(6)
    assert summarize(rng.standard_normal(20_000)).warnings == ()
    short = summarize(rng.standard_normal(40), warmup=0)
    assert short.batches == 20 and any("20 batches" in w for w in short.warnings)
    sticky = summarize(ar1(rng, 0.999, (3000,)), warmup=0)
    assert any("lag-1" in w for w in sticky.warnings)
    trend = summarize(np.arange(1000.0), warmup="auto")
    assert any("MSER-5" in w for w in trend.warnings)


@pytest.mark.parametrize("kwargs, match", [
    ({"sample_every": 0}, "sample_every"), ({"sample_every": 1.5}, "sample_every"),
    ({"confidence": 1.0}, "confidence"), ({"warmup": 0.99}, "at least 2")])
def test_summarize_rejects_bad_arguments(kwargs, match):
    with pytest.raises(ConfigError, match=match):
        summarize(np.ones(100), **kwargs)


def test_non_finite_sojourns_are_reported_by_index():
    x = np.ones(10)
    x[7] = np.nan
    with pytest.raises(ConfigError, match="index 7"):
        summarize(x)


# --- streaming recorder -----------------------------------------------------------

def record(x, cuts, **kwargs):
    recorder = SojournRecorder(len(x), **kwargs)
    for chunk in np.split(x, cuts):
        recorder.add(chunk)
    return recorder


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 600),
       cut_fractions=st.lists(st.floats(0, 1), max_size=8),
       warmup=st.one_of(st.just("auto"), st.floats(0, 0.9)),
       every=st.integers(1, 7))
def test_chunked_recording_equals_one_shot_summarize(seed, n, cut_fractions, warmup,
                                                      every):
    rng = np.random.default_rng(seed)
    x = rng.exponential(size=n) + 4 * np.exp(-np.arange(n) / 30)
    cuts = sorted(int(f * n) for f in cut_fractions)

    kept, dropped = record(x, cuts, warmup=warmup, sample_every=every).finish()
    np.testing.assert_array_equal(kept, x[dropped::every])
    if warmup != "auto":
        assert dropped == warmup_count(n, warmup)

    try:
        expected = summarize(x, warmup=warmup, sample_every=every)
    except ConfigError:
        with pytest.raises(ConfigError):
            record(x, cuts, warmup=warmup, sample_every=every).summary()
        return
    got = record(x, cuts, warmup=warmup, sample_every=every).summary()
    assert got == expected
    assert isinstance(got, Summary)


def test_recorder_memory_is_the_measured_jobs_only():
    tracemalloc.start()
    try:
        SojournRecorder(100_000_000, warmup=0.5, sample_every=10)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert 5_000_000 * 8 <= peak < 5_000_000 * 8 + 100_000


def test_recorder_keeps_every_sth_job_after_the_cutoff():
    recorder = SojournRecorder(1_000_000, warmup=0.5, sample_every=10)
    for chunk in np.array_split(np.arange(1_000_000.0), 7):
        recorder.add(chunk)
    kept, dropped = recorder.finish()
    assert dropped == 500_000
    assert kept[0] == 500_000 and kept[-1] == 999_990 and kept.size == 50_000


def test_recorder_rejects_misuse():
    recorder = SojournRecorder(10)
    with pytest.raises(ConfigError, match="total_jobs=10"):
        recorder.add(np.ones(11))
    recorder.add(np.ones(4))
    with pytest.raises(ConfigError, match="4 of total_jobs=10"):
        recorder.finish()
    recorder.add(np.ones(6))
    recorder.finish()
    with pytest.raises(ConfigError, match="after finish"):
        recorder.add(np.ones(1))


# --- Little's law and utilisation ---------------------------------------------

def integral_of_jobs_in_system(arrivals, departures):
    """Integral of N(t) from the step function over sorted arrival/departure events."""
    times = np.concatenate([arrivals, departures])
    steps = np.concatenate([np.ones(arrivals.size), -np.ones(departures.size)])
    order = np.argsort(times, kind="stable")
    in_system = np.cumsum(steps[order])
    return float(np.sum(in_system[:-1] * np.diff(times[order])))


def test_littles_law_holds_on_an_mm1_path():
    arrival_rate, service_rate = 0.5, 1.0
    arrivals, departures = mm1_path(np.random.default_rng(42), arrival_rate,
                                    service_rate, 10_000)

    whole = littles_law(arrivals, departures)
    horizon = departures.max() - arrivals.min()
    assert whole.in_system * horizon == pytest.approx(
        integral_of_jobs_in_system(arrivals, departures), rel=1e-9)
    # Every job lies in the window: the sample-path identity is exact.
    assert whole.in_system == pytest.approx(whole.rate_times_sojourn, rel=1e-9)

    # An interior window cuts jobs at both edges; the law holds up to edge effects.
    inner = littles_law(arrivals, departures, window=(arrivals[1000], arrivals[-1000]))
    assert inner.in_system == pytest.approx(inner.rate_times_sojourn, rel=0.02)
    # And both sides match the M/M/1 value rho / (1 - rho) = 1.
    load = arrival_rate / service_rate
    assert inner.in_system == pytest.approx(load / (1 - load), rel=0.1)


def test_littles_law_rejects_departures_before_arrivals():
    with pytest.raises(ConfigError, match="job 1 departs"):
        littles_law([0.0, 1.0], [0.5, 0.9])
    with pytest.raises(ConfigError, match="window"):
        littles_law([0.0], [1.0], window=(2.0, 2.0))


def test_node_utilisation_is_busy_time_over_horizon():
    np.testing.assert_allclose(node_utilisation([0.0, 5.0, 10.0], 10.0), [0, 0.5, 1])
    with pytest.raises(ConfigError, match="busy times"):
        node_utilisation([11.0], 10.0)
