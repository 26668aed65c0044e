"""MAP fit of the closed-network model: recovers what generated the rows, keeps what the
rows cannot tell at the prior, and reads back the prior it writes."""

from dataclasses import replace

import numpy as np
import pytest

from sizing.network_fit import COORDINATES, Prior, demands_of, fit

THREADS = np.array([1, 5, 20, 60, 150])


def _rows(levels, write=False):
    threads = np.tile(THREADS, len(levels))
    n = len(threads)
    return dict(threads=threads, think_ms=np.zeros(n), nodes=np.full(n, 3),
                replicas=np.full(n, 3), quorum=np.repeat(levels, len(THREADS)),
                write=np.full(n, write))


TRUE = np.log([0.3, 0.5, 0.1, 0.4, 0.5, 0.5, 1.0, 0.2, 1.0, 1000.0, 1.0, 32.0, 1.0])


def test_fit_reproduces_rows_of_the_model_itself():
    rows = _rows([1, 2, 3])
    from sizing.closed_network import predict
    latency, _ = predict(demands_of(TRUE), rows, "shared-digest")
    result = fit(rows, latency, "shared-digest", max_evaluations=200)
    predicted, _ = result.predict(rows)
    assert np.max(np.abs(predicted / latency - 1)) < 0.01


def test_one_only_rows_leave_the_digest_ratio_at_the_prior():
    rows = _rows([1])
    from sizing.closed_network import predict
    latency, _ = predict(demands_of(TRUE), rows, "shared-digest")
    prior = Prior.vague()
    result = fit(rows, latency, "shared-digest", prior)
    i = COORDINATES.index("digest_ratio")
    # ONE reads ask one replica: no digest is read, the rows say nothing about it
    assert result.point[i] == pytest.approx(prior.mean[i], abs=1e-3)
    assert "digest_ratio" in result.resting_on_prior()
    # only the client-bound structure uses client work outside the latency
    assert "outside_share" not in result.resting_on_prior()
    low, high = result.interval(_rows([3]), samples=40, seed=1)
    assert np.all(high > low)


def test_prior_round_trips_through_toml(tmp_path):
    points = np.array([TRUE, TRUE + 0.2, TRUE - 0.1])
    prior = Prior.from_fits(points, "three fits")
    path = tmp_path / "prior.toml"
    path.write_text(prior.to_toml())
    back = Prior.read(str(path))
    assert np.allclose(back.mean, prior.mean, atol=1e-4)
    assert np.allclose(back.sd, prior.sd, atol=1e-4)
    i = COORDINATES.index("message_share")
    assert back.mean[i] == pytest.approx(TRUE[i] + 0.1 / 3, abs=1e-4)
    assert back.sd[i] == 0.5  # the floor: three close fits do not make a narrow prior


def test_prior_file_without_a_prior_table_says_what_to_give(tmp_path):
    path = tmp_path / "model.toml"
    path.write_text("[model]\nx = 1\n")
    from forkjoin_sim.errors import ConfigError
    with pytest.raises(ConfigError, match="no \\[prior\\] table; give a MODEL.toml "
                       "written by forkjoin-sim cassandra calibrate or a prior"):
        Prior.read(str(path))


def test_a_broken_model_given_as_prior_is_named_as_the_prior(tmp_path):
    """A truncated model file given to --prior: its message named --model (a probe)."""
    from forkjoin_sim.errors import ConfigError
    from sizing.cluster_calibration import load_prior

    path = tmp_path / "cut.toml"
    path.write_text('[model]\nkind = "closed-network"\n')
    with pytest.raises(ConfigError, match=f"^--prior {path} lacks 'posterior'"):
        load_prior(str(path))


@pytest.mark.parametrize("entry", ["{ mean = 0.0, sd = 0.0 }", "{ mean = 0.0, sd = -1.0 }",
                                   '{ mean = "x", sd = 1.0 }', "{ mean = 0.0 }", "2.0",
                                   "{ mean = nan, sd = 1.0 }", "{ mean = 0.0, sd = true }",
                                   "{ mean = 800.0, sd = 1.0 }"])
def test_a_prior_coordinate_needs_a_number_mean_and_a_positive_sd(tmp_path, entry):
    """A prior entry the fit cannot divide by or add (sd 0 made every residual
    infinite, a string a traceback, a mean of 800 overflowed the report) is refused
    in one line naming it."""
    from forkjoin_sim.errors import ConfigError

    text = Prior.vague().to_toml().replace(
        "hop_ratio = { mean = 0.0000, sd = 3.0000 }", f"hop_ratio = {entry}")
    assert f"hop_ratio = {entry}" in text
    path = tmp_path / "prior.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match="prior hop_ratio = .*give a number mean"):
        Prior.read(str(path))


def test_a_level_prior_sets_what_one_only_rows_cannot():
    """ONE-only rows say nothing about ALL: with a level prior of log ratio 0.3 (sd
    0.05) for ALL against ONE, the fitted model's ALL/ONE ratio at the fitted thread
    counts is about e^0.3."""
    from sizing.closed_network import predict
    rows = _rows([1])
    latency, _ = predict(demands_of(TRUE), rows, "shared-digest")
    vague = Prior.vague()
    prior = Prior(vague.mean, vague.sd, "test", level_mean=0.3, level_sd=0.05)
    result = fit(rows, latency, "shared-digest", prior, max_evaluations=200)
    one = result.predict(_rows([1]))[0]
    ratio = np.log(result.predict(_rows([3]))[0] / one)
    # the prior is on each thread count's ratio; they need not all reach it
    assert np.mean(ratio) == pytest.approx(0.3, abs=0.05)


@pytest.mark.parametrize("step_ms", [0.2, 2.0])
def test_a_level_step_prior_sets_what_a_lone_request_pays_for_the_top_level(step_ms):
    """ONE-only rows say nothing about ALL: with a tight prior on log(ALL - ONE) of
    one client thread, the fitted model's lone request pays about that step (in ms,
    whatever its own latency), and its loaded ALL rows sit above ONE."""
    from sizing.closed_network import predict
    from sizing.network_fit import level_step, step_rows
    rows = _rows([1])
    latency, _ = predict(demands_of(TRUE), rows, "lanes")
    vague = Prior.vague()
    prior = Prior(vague.mean, vague.sd, "test", level_step_mean=np.log(step_ms),
                  level_step_sd=0.02)
    result = fit(rows, latency, "lanes", prior, max_evaluations=200)
    step = level_step(demands_of(result.point), step_rows(rows), "lanes", 4, 4)
    assert np.exp(step) == pytest.approx([step_ms], rel=0.05)
    assert np.all(result.predict(_rows([3]))[0] > result.predict(rows)[0])
    # the ONE rows themselves are still fitted
    assert np.max(np.abs(result.predict(rows)[0] / latency - 1)) < 0.02


@pytest.mark.parametrize("replicas", [2, 5])
def test_the_level_step_prior_speaks_of_all_of_its_sources_replicas(replicas):
    """The level sources ran 3 replicas: their step is what ALL of 3 costs a lone
    request. ONE rows of a cluster of 2 or 5 replicas, fitted with a tight prior on
    that step, put it at ALL of 3 replicas in their own model (on 5 nodes), and
    their own ALL (2 of 2 or 5 of 5) costs what the model's structure says, not the
    prior's step (before, ALL of 2 replicas took the full step, about twice the
    3-replica one of the same rows, in a probe's synthetic cluster)."""
    from sizing.closed_network import predict
    from sizing.network_fit import level_step, step_rows
    rows = dict(_rows([1]), nodes=np.full(len(THREADS), 5),
                replicas=np.full(len(THREADS), replicas))
    latency, _ = predict(demands_of(TRUE), rows, "lanes")
    vague = Prior.vague()
    prior = Prior(vague.mean, vague.sd, "test", level_step_mean=np.log(2.0),
                  level_step_sd=0.02)
    assert prior.level_step_replicas == 3
    result = fit(rows, latency, "lanes", prior, max_evaluations=200)
    demands = demands_of(result.point)
    at_three = level_step(demands, step_rows(rows, 3), "lanes", 4, 4)
    assert np.exp(at_three) == pytest.approx([2.0], rel=0.05)
    own = np.exp(level_step(demands, step_rows(rows), "lanes", 4, 4))[0]
    # fewer replicas to wait for cost less, more cost more
    assert (own < 2.0 * 0.95) if replicas == 2 else (own > 2.0 * 1.05)


def test_the_level_steps_replicas_round_trip_and_are_checked(tmp_path):
    """A prior file keeps the replicas its level step was measured on (3 where it
    does not say, as every file written before it); a count below 2 is refused."""
    from forkjoin_sim.errors import ConfigError
    vague = Prior.vague()
    prior = Prior(vague.mean, vague.sd, "test", level_step_mean=0.4, level_step_sd=0.5,
                  level_step_replicas=5)
    path = tmp_path / "prior.toml"
    path.write_text(prior.to_toml())
    assert Prior.read(str(path)).level_step_replicas == 5
    path.write_text(prior.to_toml().replace("level_step_replicas = 5\n", ""))
    assert Prior.read(str(path)).level_step_replicas == 3
    path.write_text(prior.to_toml().replace("level_step_replicas = 5",
                                            "level_step_replicas = 1"))
    with pytest.raises(ConfigError, match="level_step_replicas = 1; give the whole"):
        Prior.read(str(path))


@pytest.mark.parametrize("scale", [0.0, 0.5, 1.0])
def test_a_scaled_level_step_prior_grows_with_the_clusters_own_latency(scale):
    """With ``level_step_scale`` s, the prior is on log(ALL - ONE) - s log(ONE) of a
    lone request: fitted on ONE rows of a cluster and of one ten times slower, the
    slower one's step is 10^s times the faster one's (in ms): with s = 0, a prior in
    time, both the same step."""
    from sizing.closed_network import predict
    from sizing.network_fit import level_step, step_rows
    rows = _rows([1])
    vague = Prior.vague()
    prior = Prior(vague.mean, vague.sd, "test", level_step_mean=np.log(0.5),
                  level_step_sd=0.02, level_step_scale=scale)
    steps, ones = [], []
    for slower in (1.0, 10.0):
        truth = TRUE.copy()
        truth[0] += np.log(slower)  # every time of the cluster, ten times longer
        latency, _ = predict(demands_of(truth), rows, "lanes")
        result = fit(rows, latency, "lanes", prior, max_evaluations=200)
        pairs = step_rows(rows)
        alone = predict(demands_of(result.point), pairs, "lanes")[0]
        steps.append(alone[1] - alone[0])
        ones.append(alone[0])
        assert level_step(demands_of(result.point), pairs, "lanes", 4, 4, scale) == \
            pytest.approx([np.log(0.5)], abs=0.05)
    assert ones[1] / ones[0] == pytest.approx(10.0, rel=0.1)
    assert steps[1] / steps[0] == pytest.approx((ones[1] / ones[0]) ** scale, rel=0.1)


def test_reads_and_writes_each_take_their_own_level_step_prior():
    """With a step of 3 ms for reads and 0.5 ms for writes (and a pooled one of 1 ms
    that neither uses), a fit of ONE-only reads and writes gives each operation's lone
    request its own step at ALL."""
    from sizing.closed_network import predict
    from sizing.network_fit import level_step, step_rows
    rows = {key: np.concatenate([a, b]) for (key, a), b in
            zip(_rows([1]).items(), _rows([1], write=True).values())}
    latency, _ = predict(demands_of(TRUE), rows, "lanes")
    vague = Prior.vague()
    prior = Prior(vague.mean, vague.sd, "test", level_step_mean=0.0, level_step_sd=0.02,
                  level_step_by_operation=(("read", np.log(3.0), 0.02),
                                           ("write", np.log(0.5), 0.02)))
    assert prior.level_step(False) == (np.log(3.0), 0.02)
    result = fit(rows, latency, "lanes", prior, max_evaluations=200)
    pairs = step_rows(rows)
    step = level_step(demands_of(result.point), pairs, "lanes", 4, 4)
    assert list(pairs["write"][0::2]) == [False, True]
    assert np.exp(step) == pytest.approx([3.0, 0.5], rel=0.05)


def test_the_level_prior_is_written_and_read_back(tmp_path):
    vague = Prior.vague()
    prior = Prior(vague.mean, vague.sd, "test", level_mean=0.27, level_sd=0.1,
                  level_shape_sd=0.03)
    path = tmp_path / "p.toml"
    path.write_text(prior.to_toml())
    back = Prior.read(str(path))
    assert (back.level_mean, back.level_sd, back.level_shape_sd) == (
        pytest.approx(0.27), pytest.approx(0.1), pytest.approx(0.03))
    assert back.level_step_mean is None
    step = Prior(vague.mean, vague.sd, "test", level_shape_sd=0.03,
                 level_step_mean=0.4, level_step_sd=0.5)
    path.write_text(step.to_toml())
    back = Prior.read(str(path))
    assert back.level_mean is None
    assert (back.level_step_mean, back.level_step_sd, back.level_shape_sd) == (
        pytest.approx(0.4), pytest.approx(0.5), pytest.approx(0.03))
    assert back.level_step(True) == (pytest.approx(0.4), pytest.approx(0.5))
    own = replace(step, level_step_by_operation=(("write", -0.2, 0.6),))
    path.write_text(own.to_toml())
    back = Prior.read(str(path))
    assert back.level_step_by_operation == (("write", pytest.approx(-0.2),
                                             pytest.approx(0.6)),)
    assert back.level_step(True) == (pytest.approx(-0.2), pytest.approx(0.6))
    assert back.level_step(False) == (pytest.approx(0.4), pytest.approx(0.5))
    # files without a scale: the step in ms, as before
    text = own.to_toml()
    path.write_text("\n".join(x for x in text.splitlines()
                              if not x.startswith("level_step_scale")) + "\n")
    assert "level_step_scale" not in path.read_text()
    assert Prior.read(str(path)).level_step_scale == 0.0
    # a prior with per-operation steps only keeps its scale through a file
    alone = replace(own, level_step_mean=None, level_step_sd=None, level_step_scale=0.5)
    path.write_text(alone.to_toml())
    assert Prior.read(str(path)).level_step_scale == pytest.approx(0.5)
    path.write_text(replace(own, level_step_scale=0.5).to_toml())
    assert Prior.read(str(path)).level_step_scale == pytest.approx(0.5)
    from forkjoin_sim.errors import ConfigError
    for bad in ("1.5", "-0.1", '"half"', "{ mean = 0.5, sd = 0.5 }"):
        path.write_text(replace(own, level_step_scale=0.5).to_toml().replace(
            "level_step_scale = 0.5000", f"level_step_scale = {bad}"))
        with pytest.raises(ConfigError, match="level_step_scale"):
            Prior.read(str(path))
    path.write_text(own.to_toml().replace("sd = 0.6000 }", "sd = 0 }"))
    with pytest.raises(ConfigError, match="level_step_log_ms_write needs a mean"):
        Prior.read(str(path))
    text = step.to_toml()
    line = next(x for x in text.splitlines() if x.startswith("level_step_log_ms ="))
    path.write_text(text.replace(line, line.replace("sd = 0.5000 }", "sd = 0 }")))
    with pytest.raises(ConfigError, match="level_step_log_ms needs a mean and an sd > 0"):
        Prior.read(str(path))
    # a string or a boolean where a number goes: one line, not a bare ValueError
    for key, entry in (("level_miss", '{ sd = "x" }'), ("level_shape", "{ sd = true }"),
                       ("level_step_log_ms", '{ mean = "a", sd = 0.5 }')):
        lines = [x for x in text.splitlines() if not x.startswith(key + " =")]
        path.write_text("\n".join(lines + [f"{key} = {entry}"]) + "\n")
        with pytest.raises(ConfigError, match=f"{key} needs"):
            Prior.read(str(path))


def test_a_shape_prior_puts_the_middle_level_on_the_line_between_one_and_all():
    """Rows of ONE and ALL only: a tight shape prior moves the fitted model's QUORUM,
    in log latency, to within a third of where it sits without one from halfway
    between ONE and ALL (mean over threads)."""
    from sizing.closed_network import predict
    rows = _rows([1, 3])
    latency, _ = predict(demands_of(TRUE), rows, "shared-digest")
    vague = Prior.vague()

    def off_line(shape_sd):
        prior = Prior(vague.mean, vague.sd, "test", level_mean=0.3, level_sd=1.0,
                      level_shape_sd=shape_sd)
        result = fit(rows, latency, "shared-digest", prior, max_evaluations=200)
        one, middle, top = (np.log(result.predict(_rows([k]))[0]) for k in (1, 2, 3))
        return abs(np.mean(middle - one - 0.5 * (top - one)))

    free = off_line(None)
    assert free > 0.02  # the model's own QUORUM is off the line
    assert off_line(0.005) < free / 3


def test_reads_and_writes_together_tell_the_mutation_from_the_data_read():
    """Rows of reads and writes made with mutations at 1.2 data reads: the fit finds
    that ratio (far from the prior's 1/3), and a reads-only fit leaves it at the
    prior and says so."""
    from sizing.closed_network import predict

    truth = TRUE.copy()
    i = COORDINATES.index("mutation_ratio")
    truth[i] = np.log(1.2)
    reads, writes = _rows([1, 3]), _rows([1, 3], write=True)
    rows = {k: np.concatenate([reads[k], writes[k]]) for k in reads}
    latency, _ = predict(demands_of(truth), rows, "shared-digest")
    both = fit(rows, latency, "shared-digest", max_evaluations=200)
    # coordinator and message work trade a little against the mutation, and the prior
    # pulls towards 1/3: the truth lies within the posterior's spread, far from 1/3
    assert abs(both.point[i] - truth[i]) < 2.5 * both.posterior_sd[i]
    assert np.exp(both.point[i]) > 0.8
    assert "mutation_ratio" not in both.resting_on_prior()
    alone = fit(reads, latency[:len(reads["threads"])], "shared-digest",
                max_evaluations=200)
    assert alone.point[i] == pytest.approx(Prior.vague().mean[i], abs=1e-3)
    assert "mutation_ratio" in alone.resting_on_prior()


def test_reads_alone_predict_writes_about_as_slow_as_reads():
    """Where no write was measured, the vague prior makes a write to three replicas
    cost what a data read does (the guess "writes take as long as reads"), not three
    times as much: fitted on ONE reads, ONE writes come out within 40% of the reads
    from one thread to saturation (0.71-0.87 times; with a mutation as dear as a
    data read, 0.82-1.64 times, the most at saturation)."""
    from sizing.closed_network import predict

    reads = _rows([1])
    latency, _ = predict(demands_of(TRUE), reads, "lanes")
    fitted = fit(reads, latency, "lanes", max_evaluations=200)
    writes = dict(reads, write=np.ones(len(THREADS), bool))
    ratio = fitted.predict(writes)[0] / fitted.predict(reads)[0]
    assert np.all((ratio > 0.6) & (ratio < 1.4)), ratio


def test_a_node_has_at_least_one_lane():
    """Lanes below one per node would be a queue whose visits wait as if each took
    longer than it does: the fit stops at one, a posterior draw below it counts as
    one, and a prior centred below it still fits (its start moves to the bound)."""
    from sizing.closed_network import DEMANDS, predict

    i = COORDINATES.index("lanes")
    point = TRUE.copy()
    point[i] = np.log(0.2)
    assert demands_of(point)[DEMANDS.index("lanes")] == 1.0
    rows = _rows([1, 3])
    latency, _ = predict(demands_of(TRUE), rows, "lanes")
    prior = Prior.vague()
    mean = prior.mean.copy()
    mean[i] = np.log(0.5)
    result = fit(rows, latency, "lanes", Prior(mean, prior.sd), max_evaluations=40)
    assert result.point[i] >= 0.0


def test_posterior_draws_have_the_fits_mean_and_covariance():
    """256 scrambled Sobol' draws of a correlated posterior: their mean within 0.05 sd
    of the fitted point and their covariance within 10% of the Laplace one (a
    singular direction stays singular)."""
    from sizing.network_fit import Fit
    rng = np.random.default_rng(3)
    loading = rng.standard_normal((len(COORDINATES), len(COORDINATES) - 1))
    covariance = loading @ loading.T / len(COORDINATES)  # rank one short of full
    sd = np.sqrt(np.diag(covariance))
    fitted = Fit(TRUE, sd, Prior.vague(), "lanes", 4, 4, 0.0, covariance)
    draws = fitted.draws(256, np.random.default_rng(0))
    assert draws.shape == (256, len(COORDINATES))
    assert np.all(np.abs(draws.mean(axis=0) - TRUE) < 0.05 * sd)
    np.testing.assert_allclose(np.cov(draws.T), covariance, atol=0.1 * sd.max() ** 2)
    direction = np.linalg.eigh(covariance)[1][:, 0]  # the null direction
    assert np.all(np.abs((draws - TRUE) @ direction) < 1e-9)


def test_one_only_rows_across_data_centres_bound_quorum_by_the_priors_window():
    """ONE waits for no other data centre, so its rows cannot see the wide-area window
    (generated here at 1000); the fit keeps the prior's 128 awaited requests per link
    (a coordinator's native transport threads) and predicts QUORUM reads past
    saturation at 128 / the coordinator's round trip to its nearest replica."""
    from sizing.closed_network import predict
    from sizing.geography import Geography
    placed = Geography((0, 1, 2), 3, {(0, 1): 50.0, (0, 2): 90.0, (1, 2): 150.0,
                                      (0, 3): 60.0, (1, 3): 90.0, (2, 3): 110.0})
    rows = _rows([1])
    latency, _ = predict(demands_of(TRUE), rows, "lanes", geography=placed)
    result = fit(rows, latency, "lanes", Prior.vague(), geography=placed)
    i = COORDINATES.index("link_window")
    assert np.exp(result.point[i]) == pytest.approx(128.0, rel=1e-3)
    assert "link_window" in result.resting_on_prior()
    crowd = dict(_rows([2]), threads=np.array([20_000]))
    _, per_second = result.predict(crowd)
    # the coordinator (node 0, nearest the client) and node 1: 2 x 50 ms round trip
    assert per_second[0] == pytest.approx(128.0 / 0.1, rel=0.02)


def test_fitted_wide_area_hops_tell_the_nearest_replica_from_the_farthest():
    """Rows of ONE, QUORUM and ALL made across data centres of their own (the first
    node coordinating) with the far replica 1.6 times as far as the near one: the
    fit finds that spread, and QUORUM and ALL saturate at their own links' window
    over round trip (with one fitted hop for both they would come out alike)."""
    from sizing.closed_network import predict
    from sizing.geography import Geography

    placed = Geography.wide_area(3)
    truth = TRUE.copy()
    truth[COORDINATES.index("hop_client")] = np.log(150.0)  # x work 0.3: 45 ms
    truth[COORDINATES.index("link_window")] = np.log(130.0)
    truth[COORDINATES.index("hop_spread")] = np.log(1.6)
    rows = _rows([1, 2, 3])
    rows = dict(rows, threads=np.tile([1, 50, 200, 600, 1200], 3))
    latency, _ = predict(demands_of(truth), rows, "lanes", geography=placed)
    result = fit(rows, latency, "lanes", Prior.vague(), geography=placed)
    i = COORDINATES.index("hop_spread")
    assert np.exp(result.point[i]) == pytest.approx(1.6, rel=0.05)
    assert "hop_spread" not in result.resting_on_prior()
    crowd = {key: value[::len(THREADS)] for key, value in _rows([2, 3]).items()}
    _, per_second = result.predict(dict(crowd, threads=np.full(2, 20_000)))
    near = 2 * 45.0 * np.exp(TRUE[COORDINATES.index("hop_ratio")])  # ms
    assert per_second == pytest.approx([130.0 / (near / 1000), 130.0 / (1.6 * near / 1000)],
                                       rel=0.05)


def test_only_a_lone_coordinators_fitted_hops_are_ranked():
    """With coordinator "one" the first node's fitted pairs with other data centres
    run from the nearest (0) to the farthest (1) in the order the nodes are listed;
    with another rule, given times, or pairs within one data centre, every pair is
    alike (0) and the spread is not used."""
    from sizing.geography import Geography

    rank = Geography.wide_area(4).arrays()[4]
    assert rank[0].tolist() == [0.0, 0.0, 0.5, 1.0]
    assert rank[:, 0].tolist() == [0.0, 0.0, 0.5, 1.0]
    assert np.all(rank[1:, 1:] == 0.0)
    assert Geography.wide_area(3).spreads()
    nearest = Geography((0, 1, 2), 3, {(0, 3): 10.0, (1, 3): 20.0, (2, 3): 30.0},
                        "nearest", "", True)
    assert not nearest.spreads()
    given = Geography((0, 1, 2), 3, {(0, 1): 50.0, (0, 2): 90.0, (1, 2): 150.0,
                                     (0, 3): 60.0, (1, 3): 90.0, (2, 3): 110.0}, "one")
    assert not given.spreads()
    # pairs within the first node's own data centre take the fitted hop as they are,
    # under given and fitted times alike
    assert not Geography((0, 0, 0), 1, {(0, 1): 50.0}, "one").spreads()
    shared = Geography((0, 0, 0, 1), 2, {(0, 1): 50.0, (0, 2): 20.0, (1, 2): 40.0}, "one",
                       "", True)
    assert not shared.spreads()
    # a given pair is left out of the ranking: the fitted ones run nearest to farthest
    partly = Geography((0, 1, 2, 3), 4, {(0, 1): 20.0, (0, 4): 5.0, (1, 4): 5.0,
                                         (2, 4): 5.0, (3, 4): 5.0}, "one", "", True)
    assert partly.arrays()[4][0].tolist() == [0.0, 0.0, 0.0, 1.0]


def test_coordinates_no_prediction_uses_stay_exactly_at_the_prior():
    """One data centre, structure lanes: the window, the hop spread and the outside
    work change no prediction, so the fit leaves them at the prior (not fitted, no
    Jacobian column), uncorrelated with the rest, and says nothing of them."""
    from sizing.closed_network import predict
    from sizing.network_fit import unused_coordinates

    rows = _rows([1, 3])
    latency, _ = predict(demands_of(TRUE), rows, "lanes")
    prior = Prior.vague()
    result = fit(rows, latency, "lanes", prior, max_evaluations=50)
    unused = unused_coordinates("lanes")
    assert unused == {"link_window", "hop_spread", "outside_share"}
    for name in unused:
        i = COORDINATES.index(name)
        assert result.point[i] == prior.mean[i] and result.posterior_sd[i] == prior.sd[i]
        others = np.delete(result.covariance[i], i)
        assert np.all(others == 0.0)
        assert name not in result.resting_on_prior()


def test_a_lone_replica_has_no_digest_read_to_rest_on_the_prior():
    """At one replica a read asks its replica for the data alone: the digest ratio
    changes no prediction (checked), so it is not named as resting on the prior,
    while at three replicas, fitted on ONE rows, it is."""
    from sizing.closed_network import predict
    from sizing.network_fit import unused_coordinates

    lone = dict(_rows([1]), replicas=np.full(len(THREADS), 1))
    digest = COORDINATES.index("digest_ratio")
    other = TRUE.copy()
    other[digest] += 2.0
    for structure in ("lanes", "shared-digest"):
        np.testing.assert_array_equal(predict(demands_of(TRUE), lone, structure)[0],
                                      predict(demands_of(other), lone, structure)[0])
    assert "digest_ratio" in unused_coordinates("lanes", replicas=1)
    assert "digest_ratio" not in unused_coordinates("lanes", replicas=3)
    latency, _ = predict(demands_of(TRUE), lone, "lanes")
    result = fit(lone, latency, "lanes", Prior.vague(), max_evaluations=50)
    assert "digest_ratio" not in result.resting_on_prior(replicas=1)
    three = _rows([1])
    latency, _ = predict(demands_of(TRUE), three, "lanes")
    result = fit(three, latency, "lanes", Prior.vague(), max_evaluations=50)
    assert "digest_ratio" in result.resting_on_prior(replicas=3)


def test_draws_share_the_samples_among_the_profile_by_weight():
    """The fitted point and two profile points weighted 0.5 each: half the draws
    about the point, a quarter at each profile point (their covariance zero here, so
    each of their draws is the point itself); the count is the one asked."""
    from sizing.network_fit import Fit
    sd = np.full(len(COORDINATES), 0.1)
    others = [(0.5, TRUE + 1.0, np.zeros((len(COORDINATES),) * 2)),
              (0.5, TRUE - 2.0, np.zeros((len(COORDINATES),) * 2))]
    fitted = Fit(TRUE, sd, Prior.vague(), "lanes", 4, 4, 0.0, np.diag(sd ** 2),
                 alternatives=tuple(others))
    draws = fitted.draws(256, np.random.default_rng(0))
    assert draws.shape == (256, len(COORDINATES))
    at = [np.all(draws == point, axis=1).sum() for _, point, _ in others]
    assert at == [64, 64]
    near = np.all(np.abs(draws - TRUE) < 0.6, axis=1)
    assert near.sum() == 128
    # an odd count: the remainder goes to the fitted point
    assert len(fitted.draws(7, np.random.default_rng(0))) == 7
    # none asked, none drawn (a band then lies about the point alone)
    assert fitted.draws(0, np.random.default_rng(0)).shape == (0, len(COORDINATES))


def test_a_bare_fits_band_reaches_as_far_as_the_draws_on_each_side():
    """Half the draws at the fitted point, half at a profile point with twice the
    work (no spread about either): the 95% band runs from the point's prediction (no
    draw lies below it) up to the profile point's, not a band centred on the point."""
    from sizing.network_fit import Fit
    zero = np.zeros((len(COORDINATES),) * 2)
    slower = TRUE.copy()
    slower[COORDINATES.index("work")] += np.log(2.0)
    fitted = Fit(TRUE, np.zeros(len(COORDINATES)), Prior.vague(), "lanes", 4, 4, 0.0,
                 zero, alternatives=((1.0, slower, zero),))
    rows = _rows([1, 3])
    low, high = fitted.interval(rows, samples=64)
    np.testing.assert_allclose(low, fitted.predict(rows)[0], rtol=1e-12)
    np.testing.assert_allclose(high, fitted.predict(rows, slower)[0], rtol=1e-12)
    assert np.all(high > 1.2 * low)


def test_a_prior_narrower_than_four_decimals_keeps_its_spread_in_toml(tmp_path):
    """A user's prior may hold a ratio all but fixed (sd 3e-5 in log): written with
    four decimals it came back as sd 0, which the reader refuses, so calibrate wrote
    a model that predict would not read. Every value keeps its own digits where four
    decimals would round it to zero."""
    i = COORDINATES.index("coordinate_share")
    vague = Prior.vague()
    sd = vague.sd.copy()
    sd[i] = 3e-5
    tight = replace(vague, sd=sd)
    path = tmp_path / "prior.toml"
    path.write_text(tight.to_toml())
    back = Prior.read(str(path))
    assert back.sd[i] == pytest.approx(3e-5, rel=1e-9)
    assert "coordinate_share = { mean = -1.0000, sd = 3e-05 }" in tight.to_toml()
    assert "work = { mean = 0.0000, sd = 10.0000 }" in tight.to_toml()  # as before
