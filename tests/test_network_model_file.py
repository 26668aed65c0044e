"""The model file of a calibrated closed-network model read back
(`sizing.network_model_file`): a round trip, files of older releases, and hand-edited
or damaged files refused in one line."""

import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from forkjoin_sim.errors import ConfigError
from sizing.network_fit import COORDINATES, LEGACY_VALUES, Fit, Prior, fit, prior_from_model
from sizing.network_model import Anchors, NetworkModel
from sizing.network_model_file import is_network_model, read_network_model

from network_cases import LEVELS, THREADS, rows as _rows, truth as _truth

# calibrate_cluster warns its doubts (tested where they matter); here they are noise
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def test_model_file_round_trip(tmp_path):
    fitted = [(level, t) for level in ("ONE", "ALL") for t in THREADS]
    f = fit(_rows(fitted), _truth(fitted), "shared-digest", Prior.vague(), 4, 2,
            max_evaluations=30)
    model = NetworkModel(f, Anchors.of(f, _rows(fitted), 1.05 * _truth(fitted)), 3, 3,
                         {"measurements": "x.csv", "resting_on_prior": ["hop_ratio"]})
    path = tmp_path / "m.toml"
    path.write_text(model.to_toml())
    assert is_network_model(str(path))
    back = read_network_model(str(path))
    rows = _rows([("QUORUM", 8), ("ONE", 100)])
    assert back.predict(rows)[0] == pytest.approx(model.predict(rows)[0], rel=1e-9)
    assert back.meta["resting_on_prior"] == ["hop_ratio"]
    assert (back.fit.cores, back.fit.client_cores) == (4, 2)
    # a model as another cluster's prior: its ratios carry over, its scale does not
    prior = prior_from_model(back, "m.toml")
    assert prior.mean[3] == pytest.approx(f.point[3])
    assert prior.sd[3] >= 0.5 and prior.sd[0] == Prior.vague().sd[0]


@pytest.mark.parametrize("text, message", [
    ("[model]\nkind = \"closed-network\"\n", "lacks 'posterior'"),
    ("not toml [", "is not valid TOML"),
])
def test_a_bad_model_file_is_one_error(tmp_path, text, message):
    path = tmp_path / "m.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        read_network_model(str(path))


@pytest.mark.parametrize("later", [("link_window", "mutation_ratio", "lanes", "hop_spread"),
                                   ("mutation_ratio", "lanes", "hop_spread"),
                                   ("lanes", "hop_spread"), ("hop_spread",)])
def test_a_model_file_from_before_a_coordinate_still_reads(tmp_path, later):
    """Files of earlier releases (before the window, the mutation ratio, the lanes,
    the hop spread):
    the missing coordinates sit at the vague prior, the covariance is padded."""
    fitted = [(level, t) for level in ("ONE", "ALL") for t in THREADS]
    f = fit(_rows(fitted), _truth(fitted), "shared-digest", Prior.vague(), 4, 4,
            max_evaluations=20)
    # those releases wrote no profile of the posterior
    f = replace(f, alternatives=())
    model = NetworkModel(f, Anchors.of(f, _rows(fitted), _truth(fitted)), 3, 3)
    # the file as that release wrote it: no such coordinate anywhere, and a
    # covariance without its rows and columns (the later coordinates come last)
    import tomllib

    cut = len(later)
    old = np.array(tomllib.loads(model.to_toml())["posterior"]["covariance"])[:-cut, :-cut]
    lines = [line for line in model.to_toml().splitlines()
             if not line.startswith(later)]
    lines = [("covariance = " + str(old.tolist())) if line.startswith("covariance")
             else line for line in lines]
    assert sum(line.startswith("covariance") for line in lines) == 1
    path = tmp_path / "old.toml"
    path.write_text("\n".join(lines) + "\n")
    back = read_network_model(str(path))
    # reads only: the mutation ratio (at its prior mean) does not enter
    rows = _rows([("QUORUM", 8)])
    at_prior = model.fit.point.copy()
    for name in later:
        i = COORDINATES.index(name)
        at_prior[i] = LEGACY_VALUES.get(name, Prior.vague().mean[i])
    assert back.fit.point == pytest.approx(at_prior)
    assert back.predict(rows)[0] == pytest.approx(model.predict(rows)[0], rel=1e-6)
    np.testing.assert_allclose(back.fit.covariance[:-cut, :-cut], old)
    for i in range(1, cut + 1):
        held = COORDINATES[-i] in LEGACY_VALUES
        assert back.fit.covariance[-i, -i] == pytest.approx(
            0.0 if held else Prior.vague().sd[-i] ** 2)


def test_a_wide_area_model_file_from_before_the_hop_spread_predicts_as_it_did(tmp_path):
    """A file written before `hop_spread` computed with every fitted hop between nodes
    alike: read back, it predicts exactly that (not the prior's spread of sqrt 2),
    with no spread in its intervals either."""
    from sizing.geography import Geography

    placed = Geography.wide_area(3)
    pairs = [(level, t) for level in ("ONE", "QUORUM", "ALL") for t in THREADS]
    rows = _rows(pairs)
    truth = np.array([100.0 + 60.0 * (LEVELS[lv] > 1) + 30.0 * (LEVELS[lv] > 2) + t / 8
                      for lv, t in pairs])
    f = fit(rows, truth, "lanes", Prior.vague(), 4, 4, max_evaluations=20,
            geography=placed)
    # that release wrote no profile of the posterior
    f = replace(f, alternatives=())
    model = NetworkModel(f, Anchors.of(f, rows, truth), 3, 3)
    i = COORDINATES.index("hop_spread")
    assert np.exp(f.point[i]) > 1.05  # the fit spreads the hops
    lines = [line for line in model.to_toml().splitlines()
             if not line.startswith("hop_spread")]
    import tomllib

    cut = np.array(tomllib.loads(model.to_toml())["posterior"]["covariance"])[:-1, :-1]
    lines = [("covariance = " + str(cut.tolist())) if line.startswith("covariance")
             else line for line in lines]
    path = tmp_path / "old.toml"
    path.write_text("\n".join(lines) + "\n")
    back = read_network_model(str(path))
    alike = f.point.copy()
    alike[i] = 0.0
    assert back.fit.point[i] == 0.0 and back.fit.posterior_sd[i] == 0.0
    assert back.fit.predict(rows)[0] == pytest.approx(f.predict(rows, alike)[0], rel=1e-12)
    assert not np.allclose(back.fit.predict(rows)[0], f.predict(rows)[0], rtol=1e-3)


def test_a_model_file_that_lost_a_line_or_holds_an_absurd_value_is_refused(tmp_path):
    """A current file without its mutation ratio (a coordinate older releases lacked
    only with the ones after it), or without its hop spread while its covariance has
    that row, is not a file of an older release: read as one it predicted writes twice
    as slow. A mean of 800 (log) overflowed predict."""
    fitted = [(level, t) for level in ("ONE", "ALL") for t in THREADS]
    f = fit(_rows(fitted), _truth(fitted), "shared-digest", Prior.vague(), 4, 4,
            max_evaluations=20)
    text = NetworkModel(f, Anchors.of(f, _rows(fitted), _truth(fitted)), 3, 3).to_toml()
    path = tmp_path / "m.toml"
    for name, words in (("mutation_ratio", "but has coordinates that came after it"),
                        ("hop_spread", "though its covariance has a row for every")):
        prior_line = next(line for line in text.split("[prior]")[1].splitlines()
                          if line.startswith(f"{name} = {{"))
        lost = [line for line in text.splitlines()
                if not line.startswith(f"{name} = {{") or line == prior_line]
        assert len(lost) == len(text.splitlines()) - 1  # the posterior's line only
        path.write_text("\n".join(lost) + "\n")
        with pytest.raises(ConfigError, match=f"lacks {name} {words}"):
            read_network_model(str(path))
    start = text.index("[posterior]\nwork = { mean = ") + len("[posterior]\nwork = { mean = ")
    end = text.index(",", start)
    path.write_text(text[:start] + "800.0" + text[end:])
    with pytest.raises(ConfigError, match="needs finite means within \\+-30"):
        read_network_model(str(path))


def _edited(text: str, table: str, key: str, new: str) -> str:
    """``text`` with the value of ``key`` in ``[table]`` (the first line that starts
    with ``key = `` after the table's header) replaced by ``new``."""
    head = text.index(f"[{table}]\n")
    start = text.index(f"\n{key} = ", head) + len(f"\n{key} = ")
    return text[:start] + new + text[text.index("\n", start):]


@pytest.mark.parametrize("table, key, new, words", [
    ("anchors", "residual", "[nan, 0.0, 0.0, 0.0, 0.0, 0.0]",
     "[anchors] residual must be finite"),
    ("anchors", "threads", "[-100.0, 8.0, 32.0, 1.0, 8.0, 32.0]",
     "[anchors] threads must lie in 1..1,000,000"),
    ("anchors", "threads", "[1e300, 8.0, 32.0, 1.0, 8.0, 32.0]",
     "[anchors] threads must lie in 1..1,000,000"),
    ("anchors", "residual", "[1e308, 0.0, 0.0, 0.0, 0.0, 0.0]",
     "[anchors] residual (a log correction) must lie within +-30"),
    ("anchors", "write", '["no", false, false, false, false, false]',
     "write must be a list of true and false"),
    ("posterior", "work", "{ mean = 0.0, sd = 1e300 }", "sds in 0..30"),
    ("posterior", "work", "2.4", "[posterior] work = 2.4; give a table { mean"),
    ("anchors", "quorum", "[1, 1, 1, 4, 3, 3]",
     "[anchors] quorum and other_quorum must lie in 1..3"),
    ("model", "nodes", "true", "[model] nodes = True; give a whole number"),
    ("model", "nodes", "3.7", "[model] nodes = 3.7; give a whole number"),
    ("model", "cores", "0", "cores and client_cores must be at least 1"),
    ("demands_ms", "work", "0.8", "[demands_ms] work = 0.8 is not what [posterior] "
     "gives"),
    ("demands_ms", "work", '"fast"', "[demands_ms] work = 'fast' is not what"),
    ("demands_ms", "work", "%WORK%\nwrok = 5.0", "[demands_ms] has unknown key(s) wrok"),
    # the fitted rows' stated pauses (nan: a row that stated none)
    ("anchors", "residual", "[0.0, 0.0, 0.0, 0.0, 0.0, 0.0]\n"
     "pause_ms = [-5.0, nan, nan, nan, nan, nan]", "[anchors] pause_ms must be pauses >= 0"),
    ("anchors", "residual", "[0.0, 0.0, 0.0, 0.0, 0.0, 0.0]\npause_ms = [100.0]",
     "the [anchors] lists differ in length"),
    # a list edited into one value (a traceback once: len() of unsized object)
    ("anchors", "residual", "[0.0, 0.0, 0.0, 0.0, 0.0, 0.0]\npause_ms = 100",
     "pause_ms must be a list, one value per fitted row"),
    ("anchors", "threads", "8.0", "threads must be a list, one value per fitted row"),
    # true read as a pause of 1 ms once
    ("anchors", "residual", "[0.0, 0.0, 0.0, 0.0, 0.0, 0.0]\n"
     "pause_ms = [true, nan, nan, nan, nan, nan]", "pause_ms must be a list of numbers"),
    ("anchors", "quorum", '[1, 1, 1, "3", 3, 3]', "quorum must be a list of numbers"),
    # rows of different lengths: said so, not in numpy's words
    ("posterior", "covariance", "[[1.0, 0.0], [0.0]]",
     "[posterior] covariance must be 13 x 13 finite numbers"),
])
def test_a_hand_edited_model_file_is_refused_not_misread(tmp_path, table, key, new,
                                                          words):
    """Values no calibration writes (a NaN anchor, a negative load, a quorum past the
    replicas, a count that is not whole) were read as given or truncated and came out
    as NaN predictions or a message about the query; an edited [demands_ms], which
    the model does not read, was silently ignored."""
    fitted = [(level, t) for level in ("ONE", "ALL") for t in THREADS]
    f = fit(_rows(fitted), _truth(fitted), "shared-digest", Prior.vague(), 4, 4,
            max_evaluations=20)
    text = NetworkModel(f, Anchors.of(f, _rows(fitted), _truth(fitted)), 3, 3).to_toml()
    path = tmp_path / "m.toml"
    path.write_text(text)
    read_network_model(str(path))  # as written: read
    work = re.search(r"\nwork = (.*)\n", text.split("[demands_ms]")[1])[1]
    edited = _edited(text, table, key, new.replace("%WORK%", work))
    if table == "posterior":  # [demands_ms] would be stale: the edit shows without it
        edited = re.sub(r"\[demands_ms\]\n(.+\n)+", "", edited)
    path.write_text(edited)
    with pytest.raises(ConfigError, match=re.escape(words)):
        read_network_model(str(path))
    path.write_text(text.replace("[demands_ms]", "[demand_ms]"))
    with pytest.raises(ConfigError, match="unknown table\\(s\\) demand_ms"):
        read_network_model(str(path))


def test_a_model_without_anchors_is_refused_in_its_own_words(tmp_path):
    """Every [anchors] list emptied was refused as 'measurement file the DataFrame is
    empty'."""
    fitted = [(level, t) for level in ("ONE", "ALL") for t in THREADS]
    f = fit(_rows(fitted), _truth(fitted), "shared-digest", Prior.vague(), 4, 4,
            max_evaluations=20)
    text = NetworkModel(f, Anchors.of(f, _rows(fitted), _truth(fitted)), 3, 3).to_toml()
    head, rest = text.split("[anchors]\n", 1)
    table, tail = rest.split("\n\n", 1) if "\n\n" in rest else (rest, "")
    emptied = "\n".join(line.split(" = ")[0] + " = []" for line in table.splitlines())
    path = tmp_path / "m.toml"
    path.write_text(head + "[anchors]\n" + emptied + "\n\n" + tail)
    with pytest.raises(ConfigError, match=re.escape("the [anchors] lists are empty")):
        read_network_model(str(path))


def test_an_edit_each_within_bounds_that_breaks_the_arithmetic_is_refused(tmp_path):
    """A branch's coefficient of variation of e^20 (its log within +-30) made every
    prediction divide by zero; the file is refused when read."""
    from sizing.cluster_calibration import calibrate_cluster

    karpenko = Path(__file__).resolve().parent.parent / "docs/data/karpenko2021"
    text = calibrate_cluster(str(karpenko / "cluster_c.csv"), 3, 3).model.to_toml()
    text = re.sub(r"\[demands_ms\]\n(.+\n)+", "", text)
    path = tmp_path / "m.toml"
    path.write_text(_edited(text, "posterior", "branch_cv", "{ mean = 20.0, sd = 1.0 }"))
    with pytest.raises(ConfigError, match="give no finite latency for its own fitted"):
        read_network_model(str(path))


def test_a_model_file_that_wrote_its_lanes_below_one_still_reads(tmp_path):
    """Releases before the lower bound of one lane wrote [demands_ms] lanes as fitted
    (0.43 on a saulolks fit); the model computes with at least one lane, and such an
    unedited file reads as it did, while any other value there is refused."""
    fitted = [(level, t) for level in ("ONE", "ALL") for t in THREADS]
    f = fit(_rows(fitted), _truth(fitted), "lanes", Prior.vague(), 4, 4,
            max_evaluations=20)
    point = f.point.copy()
    point[COORDINATES.index("lanes")] = np.log(0.43)
    f = Fit(point, f.posterior_sd, f.prior, "lanes", 4, 4, f.cost, f.covariance)
    text = NetworkModel(f, Anchors.of(f, _rows(fitted), _truth(fitted)), 3, 3).to_toml()
    assert "\nlanes = 1.0\n" in text
    path = tmp_path / "m.toml"
    path.write_text(text.replace("\nlanes = 1.0\n", f"\nlanes = {0.43!r}\n", 1))
    back = read_network_model(str(path))
    rows = _rows([("QUORUM", 16)])
    assert back.predict(rows)[0] == pytest.approx(
        NetworkModel(f, back.anchors, 3, 3).predict(rows)[0], rel=1e-12)
    path.write_text(text.replace("\nlanes = 1.0\n", "\nlanes = 0.5\n", 1))
    with pytest.raises(ConfigError, match="lanes = 0.5 is not what"):
        read_network_model(str(path))
