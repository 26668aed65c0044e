"""Theorem 4's validation: runs too short for their intervals are said to be."""

from scipy import stats

from validation import cassandra as experiment

LOCAL, REMOTE = stats.expon(scale=0.2), stats.expon(scale=1.0)


def test_runs_too_short_for_their_intervals_are_warned_about(tmp_path, capsys):
    """--jobs 10 measured 9 writes per configuration, errors up to 634%, and the
    summary still said '44 agree within the combined 95% intervals', unwarned."""
    table, basics = experiment.run_validation(1, LOCAL, REMOTE, jobs=10, loads=(0.5,),
                                              replicas=(1, 2), seed=3)
    assert (table.notes.str.contains("only 9 jobs measured")).all()
    assert (table.jobs_needed > 10).all()
    experiment.write_outputs({1: (table, basics)}, tmp_path, "test")
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith(f"warning: level 1: {len(table)} of {len(table)} "
                             "configurations ran too short for their 95% intervals")
    assert f"up to about {table.jobs_needed.max():,} jobs (--jobs)" in err[0]
    summary = (tmp_path / "cassandra_summary.md").read_text()
    assert f"**Warning**: {err[0].removeprefix('warning: ')}" in summary
    assert summary.index("**Warning**") < summary.index("agree with the simulation")


def test_runs_without_doubts_are_not_warned_about():
    table, _ = experiment.run_validation(1, LOCAL, REMOTE, jobs=10, loads=(0.5,),
                                         replicas=(1,), seed=3)
    assert experiment.rough_intervals(table)
    calm = table.assign(notes="", jobs_needed=0)
    assert experiment.rough_intervals(calm) == []
    assert "Warning" not in experiment.summary_text(calm)
    # One doubted row of three is counted as one, and without a job count asked
    # for when the run was long enough but its batches were correlated.
    one = calm.copy()
    one.loc[one.index[1], "notes"] = "batch means lag-1 autocorrelation 0.53 > 0.39"
    [warning] = experiment.rough_intervals(one)
    assert f"1 of {len(one)} configurations" in warning and "run more jobs" in warning
