"""Every legend says what its chart draws: one test per Altair chart of the app, built by the
app's own chart function from the committed store's analysis (or the page's own frame), read from its
Vega-Lite spec (tests/legends.py): entries exactly the values drawn, one colour per entry, markers where a
legend claims shapes, no legend merged away by a hidden twin."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from legends import check, conflicts, legends

from vitcore.app import charts, fmt, tables
from vitcore.app.ablations import panels
from vitcore.app.walkthrough import walk, walk_charts
from vitcore.config.run import RunConfig
from vitcore.stats import estimates as v

pytestmark = pytest.mark.xdist_group("committed_study")  # on the worker that computes the committed store's analyses


@pytest.fixture(scope="module")
def study(committed_study):
    return committed_study  # tests/conftest.py: one Study of cached_runs/ per worker


def verdict_colours(domain) -> list[str]:
    return [charts.VERDICT_COLOURS[verdict].chart for verdict in domain]


@pytest.mark.slow  # over 1 s a case: the slow tier, so the fast tier stays under a minute (docs/contributing.md)
def test_forest_legend_lists_the_verdicts_drawn_in_their_colours(study):
    frame = tables.flip_frame(study.flip_effects(RunConfig(), v.MARGIN, ("test_accuracy",)), "test_accuracy")
    (key,) = [key for key in check(charts.forest(frame, "test_accuracy", "title")) if key.channel == "color"][:1]
    assert set(key.domain) == set(frame["verdict"]) and key.range == verdict_colours(key.domain)


@pytest.mark.slow  # over 1 s of its own: the slow tier (docs/contributing.md)
def test_main_effects_legend_shows_verdict_colours_and_marker_shapes(study):
    frame = tables.effect_frame(study.main_effects(("test_accuracy",)))
    assert {"averaged over the grid's cells", "one cell only"} <= set(frame["basis"])  # both shapes occur
    panels = charts.effect_intervals(frame, "test_accuracy", "title")
    for panel, rows in zip(panels, fmt_rows(frame)):
        part = frame[frame["rows"] == rows]
        shown = check(panel)
        colours = [key for key in shown if key.channel == "color"]
        assert colours and all(key.range == verdict_colours(key.domain) for key in colours)
        assert {tuple(key.domain) for key in colours} == {tuple(d for d in v.VERDICTS if d in set(part["verdict"]))}
        shapes = [key for key in shown if key.channel == "shape"]
        if set(part["basis"]) == {"averaged over the grid's cells", "one cell only"}:
            assert [key.mark["color"] for key in shapes] == [charts.SHAPE_KEY]  # drawn dark grey, hollow


def fmt_rows(frame):
    from vitcore.app.layout import panel_order

    return panel_order(frame)


@pytest.mark.slow  # over ~1 s on the idle box: the slow tier, so the fast tier stays under a minute
def test_the_old_main_effects_fill_hid_the_verdict_legend(study):
    """The defect the check finds: a fill on `verdict` with legend=None beside the colour's legend."""
    import altair as alt

    frame = tables.effect_frame(study.main_effects(("test_accuracy",))).assign(filled=lambda f: f["verdict"])
    scale = charts.verdict_scale("test_accuracy", frame["verdict"])
    old = alt.Chart(frame).mark_point().encode(x="mean_delta:Q", color=alt.Color("verdict:N", scale=scale),
                                               fill=alt.Fill("verdict:N", scale=scale, legend=None))
    assert conflicts(old) == ["verdict (fill has no legend, another channel has one)"]


@pytest.mark.slow  # over ~1 s on the idle box: the slow tier, so the fast tier stays under a minute
def test_cell_strip_legend(study):
    effects = study.main_effects(("test_accuracy",))
    frame = panels.strip_frame(study.cell_effects(("test_accuracy",)), effects)
    for panel in panels.strip(frame, "test_accuracy", "title"):
        (key,) = check(panel)
        assert key.range == verdict_colours(key.domain)


@pytest.mark.slow  # over 1 s of its own: the slow tier (docs/contributing.md)
def test_class_bars_and_heatmaps(study):
    batch = RunConfig(norm="batch")
    comparison = study.compare(batch, RunConfig(), v.MARGIN, confusions=study.confusions((batch, RunConfig())))
    (key,) = check(charts.class_delta_bars(comparison.classes))
    assert key.range == verdict_colours(key.domain) and set(key.domain) == set(comparison.classes["verdict"])
    for delta in (False, True):  # a continuous key: its domain is the fixed scale, never the data's
        matrix = charts.delta_matrix(comparison.confusion) if delta else np.eye(10)
        (key,) = check(charts.heatmap(matrix, "title", delta=delta))
        assert key.domain == ([-fmt.DELTA_LIMITS["confusion rate"], 0, fmt.DELTA_LIMITS["confusion rate"]]
                              if delta else [0, 1])


def test_learning_curves_legends(study):
    runs = study.runs
    base = runs[(runs["config_id"] == RunConfig().config_id)]["run_id"].head(3).tolist()
    sel = runs[(runs["config_id"] == RunConfig(norm="batch").config_id)]["run_id"].head(3).tolist()
    histories, _ = study.run_frames(base + sel)
    roles = {**dict.fromkeys(sel, "selection"), **dict.fromkeys(base, "baseline")}
    shown = check(charts.learning_curves(charts.curve_frame(histories, roles), ["selection", "baseline"]),
                  {"role": ["selection", "baseline"], "split": ["validation", "train"]})
    assert [key.range for key in shown if key.field == "role"] == [[fmt.SELECTION, fmt.BASELINE]]


@pytest.mark.slow  # over ~1 s on the idle box: the slow tier, so the fast tier stays under a minute
def test_gap_bars_one_entry_and_one_colour_per_source(study):
    """Before: 'ours (…, 50 random seeds)' and 'ours (…, 10 random seeds)' were two entries, and the colour range,
    sliced to the number of sources, drew our convnet grey like the source article's bars."""
    headline, _, _ = study.headline(v.MARGIN)
    frame = walk.gap_frame(headline)
    assert frame["seeds"].nunique() > 1  # the committed store's ViT and convnet have different counts
    for panel in walk_charts.gap_bars(frame):
        (key,) = check(panel)
        colours = dict(zip(key.domain, key.range))
        assert colours.get(walk.OURS) == fmt.SELECTION and colours.get(walk.ARTICLE, fmt.BASELINE) == fmt.BASELINE


@pytest.mark.slow  # over ~1 s on the idle box: the slow tier, so the fast tier stays under a minute
def test_data_size_and_paired_delta(study):
    curve, deltas, _ = study.data_size(v.MARGIN)
    curve = walk.curve_frame(curve)
    for panel in walk_charts.data_size_curve(curve):
        for key in check(panel):
            assert key.domain == [model for model in walk_charts.MODELS.domain if model in set(curve["model"])]
    for panel in walk_charts.paired_delta(walk.delta_frame(deltas)):
        for key in check(panel):
            assert key.range == verdict_colours(key.domain)


def test_attention_spread_bars_and_sketch_weights():
    frame = pd.DataFrame({"label": ["row 0"] * 8, "head": ["head 0", "head 1"] * 4,
                          "model": ["trained"] * 4 + ["random init"] * 4, "spread": np.linspace(0.1, 0.9, 8)})
    for panel in walk_charts.spread_bars(frame, 1 / 16):
        shown = check(panel, {"model": ["trained", "random init"], "line": ["1/N = 0.0625"]})
        assert len({key.field for key in shown}) == 2
    check(charts.weight_bars(np.full(16, 1 / 16), 1 / 16, "title", 5), {"role": ["query patch", "other patch"]})


def test_token_cost_chart():
    from vitcore.analysis import cost

    bench = pd.DataFrame({"tokens": [4, 16, 49, 196], "median_ms": [0.1, 0.2, 0.9, 9.0]})
    curve = cost.with_n2_curve(bench)
    chart = charts.cost_chart(curve)
    shown = check(list(chart.layer))  # independent colour scales: each layer's key lists what that layer draws
    assert [len(key.domain) for key in shown] == [1, 1]  # the fitted curve, the measured points
    line, points = (key.legend for key in shown)  # the fit's key a dashed stroke, the points' a dot
    assert (line["symbolType"], line["symbolDash"], points["symbolType"]) == ("stroke", [5, 3], "circle")
    assert chart.to_dict()["resolve"]["scale"]["color"] == "independent"


@pytest.mark.slow  # over ~1 s on the idle box: the slow tier, so the fast tier stays under a minute
def test_seed_noise_shares_draw_no_key_and_one_colour_per_source(study):
    """The Seed noise page's bars name their source on the axis (no key); each source keeps one colour."""
    from vitcore.app import noise_view

    components, _, _ = study.noise(v.MARGIN)
    panels = noise_view.shares_chart(components)
    assert panels
    for panel in panels:
        assert check(panel) == []  # no legend to be wrong
        (key,) = [key for key in legends(panel) if key.field == "source"]
        assert key.domain == [noise_view.NAMES[name] for name in noise_view.SHOWN]
        assert len(set(key.range)) == len(key.range)
        assert key.drawn <= set(key.domain)
