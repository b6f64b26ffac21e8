"""Altair charts for the walkthrough pages (patching, token cost, attention, ViT vs convnet).

Pure functions from arrays/frames to charts: no Streamlit, no TensorFlow. Pixel images are drawn
as rect grids (28 x 28 = 784 marks), small enough for Vega-Lite and they keep the exact values in
the tooltip. Colours follow vitcore.views: selection blue, baseline grey.
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from vitcore.views import BASELINE, SELECTION

PIXEL = 9  # screen pixels per image pixel


def _pixels(image: np.ndarray) -> pd.DataFrame:
    rows, cols = np.indices(np.asarray(image).shape)
    return pd.DataFrame({"y": rows.ravel(), "x": cols.ravel(), "value": np.asarray(image, dtype=float).ravel()})


def _grey(frame: pd.DataFrame, size: int, title: str = "", x: str = "x", y: str = "y") -> alt.Chart:
    return alt.Chart(frame, title=title).mark_rect().encode(
        x=alt.X(f"{x}:O", axis=None), y=alt.Y(f"{y}:O", axis=None),
        color=alt.Color("value:Q", scale=alt.Scale(scheme="greys", domain=[0, 1]), legend=None),
        tooltip=[alt.Tooltip(f"{y}:O", title="row"), alt.Tooltip(f"{x}:O", title="column"),
                 alt.Tooltip("value:Q", format=".3f")],
    ).properties(width=size, height=size)


def image_with_grid(image: np.ndarray, patch: int, title: str = "Pixels, with the patch grid") -> alt.Chart:
    """The 28x28 image with lines on the patch boundaries and each patch's token number."""
    side = image.shape[0]
    picture = _grey(_pixels(image), side * PIXEL, title)
    cuts = np.arange(patch, side, patch) - 0.5
    lines = pd.DataFrame({"at": cuts})
    vertical = alt.Chart(lines).mark_rule(color="#e8590c", strokeWidth=1.5).encode(
        x=alt.X("at:Q", scale=alt.Scale(domain=[-0.5, side - 0.5]), axis=None))
    horizontal = alt.Chart(lines).mark_rule(color="#e8590c", strokeWidth=1.5).encode(
        y=alt.Y("at:Q", scale=alt.Scale(domain=[side - 0.5, -0.5]), axis=None))
    grid = side // patch
    row, col = np.divmod(np.arange(grid * grid), grid)
    numbers = pd.DataFrame({"x": col * patch + (patch - 1) / 2, "y": row * patch + (patch - 1) / 2,
                            "token": np.arange(grid * grid)})
    labels = alt.Chart(numbers).mark_text(color="#e8590c", fontSize=11 if patch >= 4 else 7, fontWeight="bold").encode(
        x=alt.X("x:Q", scale=alt.Scale(domain=[-0.5, side - 0.5]), axis=None),
        y=alt.Y("y:Q", scale=alt.Scale(domain=[side - 0.5, -0.5]), axis=None), text="token:Q")
    overlay = (vertical + horizontal + (labels if grid <= 7 else alt.Chart(numbers).mark_point(opacity=0))
               ).properties(width=side * PIXEL, height=side * PIXEL)
    return alt.layer(picture, overlay).resolve_scale(x="independent", y="independent")


def patch_tiles(tokens: np.ndarray, patch: int, title: str = "The patches, as separate tiles") -> alt.Chart:
    """Each token reshaped back to a patch x patch tile, laid out with gaps (one facet per token)."""
    count = tokens.shape[0]
    grid = int(round(np.sqrt(count)))
    tile, cell = np.divmod(np.arange(tokens.size), patch * patch)
    frame = pd.DataFrame({"token": tile, "y": cell // patch, "x": cell % patch, "value": tokens.ravel()})
    size = max(14, (28 * PIXEL - 6 * grid) // grid)
    return _grey(frame, size).facet(facet=alt.Facet("token:O", title=title), columns=grid, spacing=4)


def token_matrix(tokens: np.ndarray, title: str = "What the transformer receives") -> alt.Chart:
    """The (tokens, values) matrix as an image: no spatial structure left."""
    count, values = tokens.shape
    token, value = np.indices(tokens.shape)
    frame = pd.DataFrame({"token": token.ravel(), "value_index": value.ravel(), "value": tokens.ravel()})
    return alt.Chart(frame, title=title).mark_rect().encode(
        x=alt.X("value_index:O", title=f"{values} values per token", axis=alt.Axis(labels=False, ticks=False)),
        y=alt.Y("token:O", title=f"{count} tokens", axis=alt.Axis(labels=count <= 49)),
        color=alt.Color("value:Q", scale=alt.Scale(scheme="greys", domain=[0, 1]), legend=None),
        tooltip=["token:O", alt.Tooltip("value_index:O", title="value"), alt.Tooltip("value:Q", format=".3f")],
    ).properties(width=min(28 * PIXEL, max(120, 3 * values)), height=min(28 * PIXEL, max(80, 6 * count)))


def attention_over_image(image: np.ndarray, weights: np.ndarray, title: str, vmax: float,
                         query: int | None = None) -> alt.Chart:
    """The image in grey with a head's per-patch weights over it in red (weights: (grid, grid))."""
    side, grid = image.shape[0], weights.shape[0]
    patch = side // grid
    picture = _grey(_pixels(image), 150, title)
    row, col = np.indices(weights.shape)
    frame = pd.DataFrame({"x": col.ravel() * patch, "x2": (col.ravel() + 1) * patch,
                          "y": row.ravel() * patch, "y2": (row.ravel() + 1) * patch,
                          "patch": np.arange(weights.size), "weight": weights.ravel(),
                          "query": np.arange(weights.size) == query})
    scale_x = alt.Scale(domain=[0, side])
    scale_y = alt.Scale(domain=[side, 0])
    heat = alt.Chart(frame).mark_rect(opacity=0.6).encode(
        x=alt.X("x:Q", scale=scale_x, axis=None), x2="x2:Q", y=alt.Y("y:Q", scale=scale_y, axis=None), y2="y2:Q",
        color=alt.Color("weight:Q", scale=alt.Scale(scheme="reds", domain=[0, vmax]), title="weight"),
        stroke=alt.condition(alt.datum.query, alt.value(SELECTION), alt.value(None)),
        strokeWidth=alt.condition(alt.datum.query, alt.value(3), alt.value(0)),
        tooltip=["patch:Q", alt.Tooltip("weight:Q", format=".4f")]).properties(width=150, height=150)
    return alt.layer(picture, heat).resolve_scale(x="independent", y="independent", color="independent")


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
