"""Every Altair chart of the app: pure functions from library frames to charts (no Streamlit, no TF).

Colours (vitcore.app.fmt): the selection is always blue and the baseline grey, on every chart, so a
reader never has to re-learn the legend between sections.
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from vitcore.app.fmt import BASELINE, GUIDE, SELECTION
from vitcore.data import CLASS_NAMES


def curve_frame(histories: pd.DataFrame, roles: dict[str, str]) -> pd.DataFrame:
    """Per (role, split, epoch): mean, min and max accuracy over seeds.

    histories: the store's long format; roles: run_id -> 'selection' / 'baseline' name shown.
    """
    part = histories[histories["run_id"].isin(roles)].assign(role=lambda f: f["run_id"].map(roles))
    long = part.melt(id_vars=["role", "run_id", "epoch"], value_vars=["accuracy", "val_accuracy"],
                     var_name="split", value_name="value")
    long["split"] = long["split"].map({"accuracy": "train", "val_accuracy": "validation"})
    return (long.groupby(["role", "split", "epoch"], as_index=False)["value"]
            .agg(mean="mean", low="min", high="max", seeds="count"))


def learning_curves(frame: pd.DataFrame, order: list[str]) -> alt.Chart:
    """Mean train (dashed) and validation (solid) accuracy per epoch, with the seeds' min-max band."""
    scale = alt.Scale(domain=order, range=[SELECTION, BASELINE][:len(order)])
    colour = alt.Color("role:N", title=None, scale=scale, legend=alt.Legend(orient="top", labelLimit=360,
                                                                             symbolType="stroke"))
    base = alt.Chart(frame).encode(x=alt.X("epoch:Q", title="Epoch", axis=alt.Axis(tickMinStep=1)))
    band = base.mark_area(opacity=0.15).encode(y=alt.Y("low:Q", title="Accuracy", scale=alt.Scale(zero=False)),
                                               y2="high:Q", detail="split:N", color=colour)
    lines = base.mark_line(point=alt.OverlayMarkDef(size=18)).encode(
        y="mean:Q", color=colour,
        strokeDash=alt.StrokeDash("split:N", title=None, scale=alt.Scale(domain=["validation", "train"],
                                                                          range=[[1, 0], [5, 3]]),
                                  legend=alt.Legend(orient="top", symbolType="stroke", symbolStrokeColor="#495057")),
        tooltip=["role:N", "split:N", "epoch:Q", alt.Tooltip("mean:Q", format=".4f"),
                 alt.Tooltip("low:Q", format=".4f", title="min over seeds"),
                 alt.Tooltip("high:Q", format=".4f", title="max over seeds"), "seeds:Q"])
    return (band + lines).properties(height=320)


def matrix_frame(matrix: np.ndarray) -> pd.DataFrame:
    """A (classes, classes) rate matrix (row = true class) as long rows for a heatmap."""
    true, predicted = np.divmod(np.arange(len(CLASS_NAMES) ** 2), len(CLASS_NAMES))
    return pd.DataFrame({"true": np.array(CLASS_NAMES)[true], "predicted": np.array(CLASS_NAMES)[predicted],
                         "value": np.asarray(matrix, dtype=float).ravel()})


def heatmap(matrix: np.ndarray, title: str, delta: bool = False) -> alt.Chart:
    """Confusion rates (row-normalised, seed-averaged); delta=True: a diverging scale centred at 0."""
    frame = matrix_frame(matrix)
    names = list(CLASS_NAMES)
    if delta:
        limit = max(float(np.nanmax(np.abs(frame["value"]))), 1e-3)
        scale = alt.Scale(scheme="redblue", domain=[-limit, limit], reverse=False)
        text_format, label = "+.2f", "Δ rate"
    else:
        scale = alt.Scale(scheme="blues", domain=[0, 1])
        text_format, label = ".2f", "rate"
    base = alt.Chart(frame).encode(
        x=alt.X("predicted:N", sort=names, title="Predicted", axis=alt.Axis(labelAngle=-40, labelOverlap=False)),
        y=alt.Y("true:N", sort=names, title="True", axis=alt.Axis(labelOverlap=False)))
    cells = base.mark_rect().encode(
        color=alt.Color("value:Q", scale=scale, title=label, legend=alt.Legend(format=text_format)),
        tooltip=["true:N", "predicted:N", alt.Tooltip("value:Q", format=text_format.replace(".2", ".4"))])
    dark = (0.6 * limit) ** 2 if delta else 0.5 ** 2  # white text on the darkest cells
    text = base.transform_filter(alt.datum.value * alt.datum.value >= 0.005 ** 2).mark_text(fontSize=9).encode(
        text=alt.Text("value:Q", format=text_format),
        color=alt.condition(alt.datum.value * alt.datum.value > dark, alt.value("white"), alt.value("#1f2430")))
    return (cells + text).properties(title=title, height=330)


def class_delta_bars(frame: pd.DataFrame) -> alt.Chart:
    """Per-class test accuracy Δ (selection − baseline), seed-averaged; frame from stats.class_accuracy_delta."""
    return alt.Chart(frame).mark_bar().encode(
        x=alt.X("delta:Q", title="Δ per-class test accuracy (selection − baseline)", axis=alt.Axis(format="+.3f")),
        y=alt.Y("name:N", sort=list(CLASS_NAMES), title=None),
        color=alt.condition(alt.datum.delta >= 0, alt.value(SELECTION), alt.value("#e03131")),
        tooltip=["name:N", alt.Tooltip("baseline:Q", format=".4f"), alt.Tooltip("variant:Q", format=".4f", title="selection"),
                 alt.Tooltip("delta:Q", format="+.4f")],
    ).properties(height=300)


def effect_intervals(frame: pd.DataFrame, y: str, title: str) -> alt.Chart:
    """Dots at mean_delta with 95% CI whiskers per row label `y`, one column per train_rows; a rule at 0."""
    frame = frame[[y, "train_rows", "mean_delta", "ci_low", "ci_high", "n_pairs", "verdict"]]
    frame = frame.assign(rows=frame["train_rows"].map(lambda r: f"{int(r):,} rows"))
    base = alt.Chart().encode(y=alt.Y(f"{y}:N", title=None, sort=None, axis=alt.Axis(labelLimit=320)))
    whiskers = base.mark_rule(strokeWidth=2).encode(x=alt.X("ci_low:Q", title=title), x2="ci_high:Q",
                                                    color=alt.Color("verdict:N", title="Verdict", scale=_VERDICT))
    dots = base.mark_circle(size=70, opacity=1).encode(
        x="mean_delta:Q", color=alt.Color("verdict:N", scale=_VERDICT),
        tooltip=[f"{y}:N", "rows:N", alt.Tooltip("mean_delta:Q", format="+.4f"), alt.Tooltip("ci_low:Q", format="+.4f"),
                 alt.Tooltip("ci_high:Q", format="+.4f"), "n_pairs:Q", "verdict:N"])
    zero = alt.Chart().mark_rule(color="#adb5bd", strokeDash=[3, 3]).encode(x=alt.datum(0))
    return alt.layer(zero, whiskers, dots, data=frame).properties(width=260).facet(
        column=alt.Column("rows:N", title=None, sort=sorted(frame["rows"].unique(), key=lambda s: int(s.split()[0].replace(",", ""))))
    ).resolve_scale(x="shared").configure_legend(orient="bottom")


_VERDICT = alt.Scale(domain=["better", "worse", "higher", "lower", "within seed noise", "too few seeds", "no paired runs"],
                     range=["#2f9e44", "#e03131", "#1c7ed6", "#7048e8", "#868e96", "#adb5bd", "#ced4da"])


# -- the walkthrough pages ------------------------------------------------------------------------
def weight_bars(weights: np.ndarray, uniform: float, title: str, query: int | None = None) -> alt.Chart:
    """One query's weights per key patch as bars, with the uniform 1/N rule."""
    frame = pd.DataFrame({"patch": np.arange(len(weights)), "weight": weights,
                          "role": np.where(np.arange(len(weights)) == query, "query patch", "other patch")})
    bars = alt.Chart(frame, title=title).mark_bar().encode(
        x=alt.X("patch:O", title="key patch"), y=alt.Y("weight:Q", title="attention weight"),
        color=alt.Color("role:N", scale=alt.Scale(domain=["query patch", "other patch"], range=[SELECTION, BASELINE]),
                        legend=alt.Legend(orient="top", title=None)),
        tooltip=["patch:O", alt.Tooltip("weight:Q", format=".4f")])
    rule = alt.Chart(pd.DataFrame({"uniform": [uniform]})).mark_rule(color=GUIDE, strokeDash=[5, 3]).encode(
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
    rule = base.mark_rule(color=GUIDE, strokeDash=[5, 3]).encode(y="mean(uniform):Q")
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
