"""PBS's published numbers (docs/data/pbs_published.csv) reproduced by our WARS
Monte Carlo with the paper's own latency fits: P(consistent) within 1 percentage
point (plus the half unit the paper rounded to: "41%" stands for 40.5..41.5%),
99.9th percentile latencies within 5%.

Fixed seeds. Trial counts keep the binomial half-width below 0.31 pp (100,000
trials) and the 99.9th percentiles' sampling error near 2% even for the
alpha = 1.51 Pareto tails of LNKD-DISK and WAN and YMMR's slow exponential read
tail (1,000,000 trials). docs/staleness/pbs_reproduction.md has the full table,
with the numbers we do not test and why.
"""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from forkjoin_cli import main as cli
from forkjoin_sim.staleness import quorum_latencies
from validation.pbs_reproduction import (LATENCY_TOLERANCE, PROBABILITY_TOLERANCE,
                                         laws_of, markdown, published, reproduce, seed_of,
                                         short_of_trials, trials_for_interval)

PUBLISHED = published()
#: Latency trials per profile: the alpha = 1.51 Pareto write tails need more.
LATENCY_TRIALS = {"LNKD-SSD": 300_000, "YMMR": 1_000_000, "LNKD-DISK": 1_000_000,
                  "WAN": 1_000_000}


def test_the_transcription_covers_what_the_paper_reports():
    table4 = PUBLISHED[PUBLISHED.source == "Table 4"]
    assert len(table4) == 4 * 6 * 3  # profiles x (R, W) rows x (Lr, Lw, t)
    at_commit = PUBLISHED.query("metric == 'p_consistent' and t_ms == 0")
    assert set(at_commit.profile) == {"LNKD-SSD", "LNKD-DISK", "YMMR", "WAN",
                                      "EXP-W4", "EXP-W0.1"}
    assert set(at_commit.query("profile == 'LNKD-DISK'").replicas) == {2, 3, 10}


def test_probability_of_consistency_within_one_point():
    rows = PUBLISHED.query("metric == 'p_consistent' and relation == '='")
    result = reproduce(rows, trials=100_000)
    assert (result.ours_high - result.ours_low).max() < 0.007
    report = result[["profile", "replicas", "t_ms", "value", "ours", "difference"]]
    allowed = PROBABILITY_TOLERANCE + result.uncertainty
    assert (result.difference.abs() <= allowed).all(), report.to_string()


def test_published_lower_bound_at_five_ms():
    # LNKD-SSD: 'over a 99.999% probability of consistent reads after five ms'.
    rows = PUBLISHED.query("metric == 'p_consistent' and relation == '>'")
    result = reproduce(rows, trials=100_000)
    assert (result.ours_high > result.value).all()


@pytest.mark.parametrize("name", ["LNKD-SSD", "LNKD-DISK", "YMMR", "WAN"])
def test_latency_percentiles_within_five_percent(name):
    table = quorum_latencies(laws_of(name), 3, trials=LATENCY_TRIALS[name],
                             seed=seed_of(name, 3, 0, 0, 2012), percentiles=[50, 99.9])
    rows = PUBLISHED[(PUBLISHED.profile == name)
                     & PUBLISHED.metric.str.contains("latency")]
    # The text's LNKD-DISK write 99.9th percentile (10.47 ms) contradicts Table 4's
    # 10.99 ms for the same configuration; we test the table (see the docs).
    rows = rows[~((rows.profile == "LNKD-DISK") & (rows.source != "Table 4")
                  & (rows.metric == "write_latency_p99.9_ms"))]
    failures = []
    for _, row in rows.iterrows():
        kind = "read" if row.metric.startswith("read") else "write"
        quorum = row.read_quorum if kind == "read" else row.write_quorum
        percentile = 99.9 if "p99.9" in row.metric else 50.0
        ours = table.query("quorum == @quorum and percentile == @percentile")[kind].item()
        if abs(ours / row.value - 1) > LATENCY_TOLERANCE:
            failures.append((row.read_quorum, row.write_quorum, row.metric, row.value,
                             round(ours, 4)))
    assert len(rows) >= 12 and not failures, pd.DataFrame(failures).to_string()


@pytest.mark.parametrize("quantile", [0.5, 0.9, 0.999])
def test_trials_for_interval_is_where_scipy_defines_both_bounds(quantile):
    need = trials_for_interval(quantile)
    sample = np.random.default_rng(1).random(need)
    ci = stats.quantile_test(sample, p=quantile).confidence_interval(0.95)
    assert np.isfinite([ci.low, ci.high]).all()
    ci = stats.quantile_test(sample[:-1], p=quantile).confidence_interval(0.95)
    assert not np.isfinite([ci.low, ci.high]).all()


def test_too_few_trials_leave_the_verdict_undetermined():
    """500 trials printed '[0.5781, nan]' beside a yes/no verdict."""
    rows = PUBLISHED[PUBLISHED.profile == "LNKD-SSD"]
    table = reproduce(rows, trials=500)
    undefined = table.ours_low.isna() | table.ours_high.isna()
    assert undefined.any() and table.within[undefined].isna().all()
    assert (table.metric[undefined] != "p_consistent").all()
    assert undefined.sum() == short_of_trials(rows, 500)[0]
    lines = markdown(table).splitlines()[2:]
    for line, bad in zip(lines, undefined):
        assert ("undefined]" in line) == bad and "nan" not in line
        if bad and "t_visibility" not in line:
            assert line.endswith("| undetermined |")
    assert short_of_trials(rows, trials_for_interval(0.999)) == (0, 3688)


def test_cli_warns_first_and_writes_into_a_new_folder(capsys, tmp_path, monkeypatch):
    import validation.pbs_reproduction as experiment

    few = PUBLISHED[PUBLISHED.profile == "EXP-W4"]
    monkeypatch.setattr(experiment, "published", lambda: few)
    out = tmp_path / "new" / "x.csv"
    status = cli.main(["experiment", "pbs-reproduction", "--trials", "500", "--out",
                       str(out)])
    captured = capsys.readouterr()
    short, enough = short_of_trials(few, 500)
    assert status == 0 and short > 0
    assert captured.err.startswith(f"warning: --trials 500 is too few for the 95% "
                                   f"intervals of {short} of {len(few)} rows")
    assert f"--trials {enough:,} or more" in captured.err
    assert len(pd.read_csv(out)) == len(few)
    assert list(tmp_path.joinpath("new").iterdir()) == [out]  # no temporary file left
