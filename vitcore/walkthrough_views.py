"""Altair charts for the walkthrough pages (patching, token cost, attention, ViT vs convnet).

Pure functions, no Streamlit, no TensorFlow: pictures are RGB arrays in [0, 1] for st.image
(integer upscaling, so every image pixel stays a crisp block at any layout width); charts are
Altair. Colours follow vitcore.views: selection blue, baseline grey.
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from vitcore.views import BASELINE, SELECTION

PIXEL = 9  # screen pixels per image pixel


GRID_RGB = np.array([232, 89, 12]) / 255   # patch boundaries, orange
QUERY_RGB = np.array([59, 91, 219]) / 255  # the query patch outline, selection blue


def _grey_rgb(image: np.ndarray, scale: int) -> np.ndarray:
    """(h, w) in [0, 1] -> (h*scale, w*scale, 3), dark ink on white like the seed's figures."""
    big = np.kron(1.0 - np.clip(np.asarray(image, dtype=float), 0, 1), np.ones((scale, scale)))
    return np.repeat(big[..., None], 3, axis=2)


def grid_picture(image: np.ndarray, patch: int, scale: int = PIXEL) -> np.ndarray:
    """The 28x28 image as an RGB array with the patch boundaries drawn in orange (for st.image)."""
    rgb = _grey_rgb(image, scale)
    for cut in range(patch, image.shape[0], patch):
        at = cut * scale
        rgb[at - 1:at + 1, :] = GRID_RGB
        rgb[:, at - 1:at + 1] = GRID_RGB
    return rgb


def tiles_picture(tokens: np.ndarray, patch: int, scale: int = PIXEL) -> np.ndarray:
    """Each token reshaped back to a patch x patch tile, tiles laid out row-major with white gaps."""
    grid = int(round(np.sqrt(tokens.shape[0])))
    gap = max(2, scale)
    side = grid * patch * scale + (grid - 1) * gap
    canvas = np.ones((side, side, 3))
    for index, token in enumerate(tokens):
        row, col = divmod(index, grid)
        y, x = row * (patch * scale + gap), col * (patch * scale + gap)
        canvas[y:y + patch * scale, x:x + patch * scale] = _grey_rgb(token.reshape(patch, patch), scale)
    return canvas


def matrix_picture(tokens: np.ndarray, width: int = 28 * PIXEL) -> np.ndarray:
    """The (tokens, values) matrix as an RGB picture, each cell an integer block, ~`width` wide."""
    count, values = tokens.shape
    across = max(1, width // values)
    down = max(1, min(width // count, 3 * across))
    return np.kron(_grey_rgb(tokens, 1), np.ones((down, across, 1)))


def attention_picture(image: np.ndarray, weights: np.ndarray, vmax: float, query: int | None = None,
                      scale: int = 6) -> np.ndarray:
    """The image with a head's per-patch weights (grid, grid) blended over it in red (weight / vmax),
    the query patch outlined in blue."""
    side, grid = image.shape[0], weights.shape[0]
    patch = side // grid
    rgb = _grey_rgb(image, scale)
    alpha = np.kron(np.clip(np.asarray(weights) / max(vmax, 1e-12), 0, 1), np.ones((patch * scale,) * 2))[..., None]
    rgb = (1 - 0.75 * alpha) * rgb + 0.75 * alpha * np.array([0.86, 0.1, 0.1])
    if query is not None:
        row, col = divmod(int(query), grid)
        y0, x0, size = row * patch * scale, col * patch * scale, patch * scale
        for edge in (slice(y0, y0 + 2), slice(y0 + size - 2, y0 + size)):
            rgb[edge, x0:x0 + size] = QUERY_RGB
        for edge in (slice(x0, x0 + 2), slice(x0 + size - 2, x0 + size)):
            rgb[y0:y0 + size, edge] = QUERY_RGB
    return np.clip(rgb, 0, 1)


def weight_bars(weights: np.ndarray, uniform: float, title: str, query: int | None = None) -> alt.Chart:
    """One query's weights per key patch as bars, with the uniform 1/N rule."""
    frame = pd.DataFrame({"patch": np.arange(len(weights)), "weight": weights,
                          "role": np.where(np.arange(len(weights)) == query, "query patch", "other patch")})
    bars = alt.Chart(frame, title=title).mark_bar().encode(
        x=alt.X("patch:O", title="key patch"), y=alt.Y("weight:Q", title="attention weight"),
        color=alt.Color("role:N", scale=alt.Scale(domain=["query patch", "other patch"], range=[SELECTION, BASELINE]),
                        legend=alt.Legend(orient="top", title=None)),
        tooltip=["patch:O", alt.Tooltip("weight:Q", format=".4f")])
    rule = alt.Chart(pd.DataFrame({"uniform": [uniform]})).mark_rule(color="#e8590c", strokeDash=[5, 3]).encode(
        y="uniform:Q", tooltip=[alt.Tooltip("uniform:Q", format=".4f", title="uniform 1/N")])
    return (bars + rule).properties(height=260)


def spread_bars(table: pd.DataFrame, uniform: float) -> alt.Chart:
    """Head spreads per row (long: label, head, spread, model) with the uniform 1/N line for scale."""
    base = alt.Chart(table.assign(uniform=uniform))
    bars = base.mark_bar().encode(
        x=alt.X("head:N", title=None), xOffset="model:N",
        y=alt.Y("spread:Q", title="spread (max − min of a query's weights)"),
        color=alt.Color("model:N", scale=alt.Scale(domain=["trained", "random init"], range=[SELECTION, BASELINE]),
                        legend=alt.Legend(orient="top", title=None)),
        tooltip=["label:N", "head:N", "model:N", alt.Tooltip("spread:Q", format=".4f")])
    rule = base.mark_rule(color="#e8590c", strokeDash=[5, 3]).encode(y="mean(uniform):Q")
    return alt.layer(bars, rule).properties(width=150, height=200).facet(
        facet=alt.Facet("label:N", title=None), columns=4)


def cost_chart(curve: pd.DataFrame) -> alt.Chart:
    """Measured median forward time vs tokens (points) and the fitted a + b·N² curve (line)."""
    measured = curve[curve["series"] == "measured median"]
    fitted = curve[curve["series"] != "measured median"]
    x = alt.X("tokens:Q", title="tokens N")
    points = alt.Chart(measured).mark_circle(size=80, color=SELECTION).encode(
        x=x, y=alt.Y("ms:Q", title="forward time of one attention layer (ms)"),
        tooltip=["tokens:Q", alt.Tooltip("ms:Q", format=".3f")])
    line = alt.Chart(fitted).mark_line(color=BASELINE, strokeDash=[5, 3]).encode(x=x, y="ms:Q")
    return (line + points).properties(height=320)


def gap_chart(frame: pd.DataFrame) -> alt.Chart:
    """Train − val gap per model and training size, mean with ±std whiskers (frame: model, rows,
    mean, low, high, source)."""
    base = alt.Chart(frame).encode(x=alt.X("model:N", title=None), xOffset="source:N",
                                   color=alt.Color("source:N", scale=alt.Scale(range=[SELECTION, BASELINE]),
                                                   legend=alt.Legend(orient="top", title=None)))
    bars = base.mark_bar().encode(y=alt.Y("mean:Q", title="final train − final val accuracy"),
                                  tooltip=["model:N", "source:N", alt.Tooltip("mean:Q", format="+.4f")])
    whiskers = base.mark_rule(color="black").encode(y="low:Q", y2="high:Q")
    return alt.layer(bars, whiskers).properties(width=220, height=260).facet(
        facet=alt.Facet("rows:N", title="training rows"))
