"""vitcore.app.pictures and vitcore.app.charts: the pictures keep every pixel and draw the grid where
the patches meet; every chart builds a valid Vega-Lite spec."""

import numpy as np
import pandas as pd
import pytest

from vitcore.app import charts, pictures
from vitcore.patches import patchify


@pytest.mark.parametrize("patch", [2, 4, 7, 14])
def test_grid_picture_lines_on_patch_boundaries(patch):
    image = np.zeros((28, 28))
    rgb = pictures.grid_picture(image, patch, scale=3)
    assert rgb.shape == (84, 84, 3) and rgb.min() >= 0 and rgb.max() <= 1
    orange = np.all(np.isclose(rgb, pictures.GRID_RGB), axis=2)
    assert orange[:, patch * 3 - 1].all() and not orange[1, 1]
    assert orange.all(axis=0).sum() == orange.all(axis=1).sum() == 2 * (28 // patch - 1)


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
    charts.spread_bars(frame, 0.0625).to_dict()
    gaps = pd.DataFrame({"model": ["vit"], "rows": ["4,000"], "source": ["ours"], "mean": [0.1], "low": [0.05],
                         "high": [0.15]})
    charts.gap_chart(gaps).to_dict()
    charts.heatmap(np.eye(10) - 0.1, "Δ", delta=True).to_dict()
    curve = pd.DataFrame({"tokens": [4, 16, 4, 16], "ms": [1.0, 2.0, 1.1, 1.9],
                          "series": ["measured median"] * 2 + ["fit a + b·N²"] * 2})
    charts.cost_chart(curve).to_dict()
