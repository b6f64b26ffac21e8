"""vitcore.app.walkthrough.pictures and vitcore.app.charts: the pictures keep every pixel and draw the grid where
the patches meet; every chart builds a valid Vega-Lite spec."""

import numpy as np
import pandas as pd
import pytest

from vitcore.app import charts, fmt, tables
from vitcore.app.walkthrough import pictures, walk_charts
from vitcore.data.patches import patchify
from vitcore.stats import estimates
from vitcore.stats.estimates import BETTER, INCONCLUSIVE, WORSE
from vitcore.stats.replication import NOT_CONFIRMED


@pytest.mark.parametrize("patch", [2, 4, 7, 14])
def test_grid_picture_lines_on_patch_boundaries(patch):
    image = np.zeros((28, 28))
    rgb = pictures.grid_picture(image, patch, scale=3)
    assert rgb.shape == (84, 84, 3) and rgb.min() >= 0 and rgb.max() <= 1
    orange = np.all(np.isclose(rgb, pictures.GRID_RGB), axis=2)
    assert orange[:, patch * 3 - 1].all() and not orange[1, 1]
    assert orange.all(axis=0).sum() == orange.all(axis=1).sum() == 2 * (28 // patch - 1)


@pytest.mark.parametrize("patch", [2, 7, 14])
def test_every_patch_shows_its_token_number_and_the_picture_its_frame(patch):
    rgb = pictures.grid_picture(np.zeros((28, 28)), patch)
    numbered = pictures.token_numbers(rgb, patch)
    size, grid = patch * pictures.PIXEL, 28 // patch
    inked = [not np.allclose(numbered[r * size:(r + 1) * size, c * size:(c + 1) * size],
                             rgb[r * size:(r + 1) * size, c * size:(c + 1) * size])
             for r in range(grid) for c in range(grid)]
    assert all(inked)  # a number drawn in each of the grid² patches
    frame = pictures.framed(numbered)
    assert frame.shape == (rgb.shape[0] + 4, rgb.shape[1] + 4, 3)
    assert np.allclose(frame[0, 5], pictures.FRAME_RGB) and np.allclose(frame[2:-2, 2:-2], numbered)


def test_the_colour_key_runs_from_white_to_the_heat_colour_with_the_uniform_tick():
    key = pictures.colour_key(0.5, 0.0625, width=101)
    assert np.allclose(key[0, 0], 1.0) and np.allclose(key[0, -1], 0.25 + 0.75 * pictures.HEAT_RGB)
    assert np.allclose(key[:, round(0.0625 / 0.5 * 100)], 0.0)  # the black 1/N tick


def test_tiles_and_matrix_keep_values():
    image = np.random.default_rng(0).random((28, 28))
    tokens = patchify(image[None], 7)[0]
    tiles = pictures.tiles_picture(tokens, 7, scale=2)
    assert tiles[0, 0, 0] == pytest.approx(1 - image[0, 0])  # ink on white: 1 - value
    matrix = pictures.matrix_picture(tokens, width=98)
    assert matrix.shape[1] == 98 and matrix[0, 2, 0] == pytest.approx(1 - tokens[0, 1])


def test_attention_picture_reddens_the_attended_patch_and_outlines_the_query():
    weights = np.zeros((4, 4))
    weights[1, 2] = 0.5
    rgb = pictures.attention_picture(np.zeros((28, 28)), weights, vmax=0.5, query=0, scale=1)
    assert rgb[10, 17, 0] > rgb[10, 17, 1] + 0.5  # patch (1, 2) is red
    assert np.allclose(rgb[0, 0], pictures.QUERY_RGB) and np.allclose(rgb[20, 20], 1.0)


def test_charts_build():
    charts.weight_bars(np.full(16, 1 / 16), 1 / 16, "t", query=3).to_dict()
    frame = pd.DataFrame({"label": ["a"] * 2, "head": ["head 0"] * 2, "model": ["trained", "random init"],
                          "spread": [0.3, 0.2]})
    [panel] = walk_charts.spread_bars(frame, 0.0625)  # one panel per row
    assert "width" not in panel.to_dict()  # at its container's width
    charts.heatmap(np.eye(10) - 0.1, "Δ", delta=True).to_dict()
    curve = pd.DataFrame({"tokens": [4, 16, 4, 16], "ms": [1.0, 2.0, 1.1, 1.9],
                          "series": ["measured median"] * 2 + ["fit a + b·N²"] * 2})
    charts.cost_chart(curve).to_dict()


def test_verdict_colours_mean_better_or_worse_for_the_user_and_list_only_the_verdicts_present():
    test = charts.verdict_scale("test_accuracy", [WORSE, INCONCLUSIVE, WORSE]).to_dict()
    assert test["domain"] == [WORSE, INCONCLUSIVE] and test["range"] == [charts.BAD, fmt.PALE]
    gap = charts.verdict_scale("gap", [BETTER, WORSE]).to_dict()  # a smaller gap is better: green, as everywhere
    assert gap["range"] == [charts.GOOD, charts.BAD]
    neutral = charts.verdict_scale("final_train_accuracy", ["higher", "lower"]).to_dict()
    assert not {charts.GOOD, charts.BAD} & set(neutral["range"])  # no good direction: neutral colours


def test_delta_heatmap_has_one_fixed_symmetric_scale_whatever_the_values():
    for size in (0.01, 0.5):
        spec = charts.heatmap(np.full((10, 10), size), "Δ", delta=True).to_dict()
        colour = spec["layer"][0]["encoding"]["color"]
        assert colour["scale"]["domain"] == [-0.2, 0, 0.2] and colour["scale"]["clamp"]
        assert "±0.20" in colour["title"]


def judged(deltas_per_row, **columns) -> pd.DataFrame:
    """Rows judged by the library (both tests, verdict) from per-seed deltas, plus the given columns."""
    rows = [{"mean_delta": float(np.mean(d)), "n_pairs": len(d),
             **estimates.judge("test_accuracy", estimates.paired_estimate(d), family="f", size=len(deltas_per_row))}
            for d in deltas_per_row]
    return pd.DataFrame(rows).assign(**columns)


def effects(cells):
    deltas = [[0.05, -0.02, 0.03], [-0.2, -0.21, -0.19], [0.02, 0.021, 0.019], [0.01, -0.03, 0.0]]
    return judged(deltas, factor=["patch_size", "norm"] * 2, level=[2, "batch"] * 2, reference=[7, "layer"] * 2,
                  train_rows=[1000, 1000, 4000, 4000], metric="test_accuracy", cells=cells)


def test_main_effect_panels_have_their_own_x_scales_and_mark_single_cell_effects():
    frame = effects([1, 12, 1, 12])
    panels = [p.to_dict() for p in charts.effect_intervals(tables.effect_frame(frame), "test_accuracy", "Main")]
    assert [p["title"]["subtitle"] for p in panels] == ["1,000 rows", "4,000 rows"]  # a chart each: own x-scale
    assert all(p["title"]["text"] == ["Main"] and "width" not in p for p in panels)  # at the container's width
    dots = panels[0]["layer"][3]["encoding"]  # zero rule, 95% and 90% intervals, dots
    key = panels[0]["layer"][-1]["encoding"]  # the shape key's layer (it draws no mark)
    assert dots["shape"]["scale"]["range"] == key["shape"]["scale"]["range"] == ["circle", "diamond"]
    assert key["shape"]["legend"] is not None
    assert sorted(dots["color"]["scale"]["domain"]) == sorted(set(frame["verdict"][:2]))  # this panel's verdicts
    plain = charts.effect_intervals(tables.effect_frame(effects([12] * 4)), "test_accuracy", "Main")[0].to_dict()
    assert len(plain["layer"]) == 5  # nothing to tell apart: no shape key


def test_forest_and_class_bars_have_titles_and_the_verdict_in_words():
    flips = judged([[-0.02, -0.03, -0.025, -0.022]], switch="norm", **{"from": "layer"}, to="batch",
                   metric="test_accuracy")
    spec = charts.forest(tables.flip_frame(flips, "test_accuracy"), "test_accuracy", "What flipping does").to_dict()
    assert spec["title"]["text"] == ["What flipping does"]
    texts = {layer["encoding"]["text"]["field"]: layer["mark"]
             for layer in spec["layer"] if "text" in layer["encoding"]}
    assert set(texts) == {"label", "verdict_short", "source"}  # the change, its verdict, where it comes from
    assert all(mark["limit"] == {"expr": "width"} for mark in texts.values())  # cut to the chart, never off screen
    assert "width" not in spec and spec["height"] == {"step": charts.FOREST_ROW}  # the container's width
    rows = [rows for rows in spec["datasets"].values() if "verdict_text" in rows[0]]
    assert rows[0][0]["verdict_text"] == WORSE and rows[0][0]["source"] == "fixed sample"
    tips = [layer["encoding"]["tooltip"] for layer in spec["layer"] if "tooltip" in layer.get("encoding", {})]
    assert tips and all({"source", "verdict_from"} <= {t["field"] for t in tip} for tip in tips)  # and every tooltip


@pytest.mark.parametrize("verdict_from, replication, said", [
    ("plan confirm, blind, look 1 of 4", "replicated", "blind · replicated"),
    ("plan confirm, blind (order not proven: the Plans page says why), look 2 of 4", NOT_CONFIRMED,
     "blind (order not proven) · not confirmed"),
    ("plan builtin, seen, look 2 of 4", "", "seen"),
    ("fixed sample (not in a plan)", "", "fixed sample")])
def test_each_forest_row_says_where_its_verdict_comes_from(verdict_from, replication, said):
    """A row's third line and its tooltip: blind / seen / fixed sample, and a confirmed question's outcome
    (depth 2 → 1 read "better — size undetermined" with nothing saying it was not confirmed)."""
    flips = judged([[0.02, 0.03, 0.025]], switch="depth", **{"from": 2}, to=1, metric="test_accuracy",
                   verdict_from=verdict_from, replication=replication, discovery="")
    spec = charts.forest(tables.flip_frame(flips, "test_accuracy"), "test_accuracy", "What flipping does").to_dict()
    rows = [rows for rows in spec["datasets"].values() if "source" in rows[0]][0]
    assert rows[0]["source"] == said and rows[0]["verdict_from"] == verdict_from
    long = charts.forest(tables.flip_frame(flips, "test_accuracy"), "test_accuracy", "word " * 40).to_dict()
    assert max(len(line) for line in long["title"]["text"]) <= charts.FOREST_TITLE  # wrapped for a phone
    classes = judged([[0.1, 0.0, 0.2]], **{"class": "Shirt"})
    bars = charts.class_delta_bars(classes).to_dict()
    assert " ".join(bars["title"]["text"]).startswith("Per-class test accuracy")  # wrapped for a phone
    low, high = bars["layer"][0]["encoding"]["x"]["scale"]["domain"]  # symmetric, the first step that holds
    assert low == -high and high >= max(abs(classes["ci_adj_low"].iloc[0]), abs(classes["ci_adj_high"].iloc[0]))
