"""Altair charts of the ViT vs convnet page: the data-size curve, its paired Δ, and the gap bars, each a
list of panels (one chart each, at its container's width: vitcore.app.layout.side_by_side).

Pure functions from vitcore.app.walkthrough.walk frames to charts (no Streamlit). Colours follow vitcore.app.fmt:
the ViT in the selection blue, the convnet (the comparison's baseline) in the baseline grey;
reference lines orange; verdicts as on every Δ chart (vitcore.app.charts.verdict_scale). Whiskers are layered after the
bars, so they are drawn in front of them.
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from vitcore.app.charts import verdict_scale
from vitcore.app.fmt import BASELINE, GUIDE, SELECTION
from vitcore.study import intervals
from vitcore.study.words import VARIANT

MODELS = alt.Scale(domain=["ViT", "convnet", VARIANT], range=[SELECTION, BASELINE, GUIDE])  # the variant: orange


# One legend for both layers (a legend=None on one layer drops it for the shared scale): full-colour strokes,
# so the bands' 0.18 opacity does not make the key pale.
LEGEND = alt.Legend(symbolType="stroke", symbolStrokeWidth=3, symbolSize=300, labelFontSize=13, symbolOpacity=1,
                    labelLimit=400)


def _log_rows(frame: pd.DataFrame, title: str = "Training rows (log scale)") -> alt.X:
    ticks = sorted(int(r) for r in frame["train_rows"].unique())
    return alt.X("train_rows:Q", title=title, scale=alt.Scale(type="log", nice=False, padding=24),
                 axis=alt.Axis(values=ticks, format=",d", labelOverlap=False, grid=False))


def _panels(frame: pd.DataFrame) -> list[str]:
    """The panels of a metric-split chart, test accuracy first."""
    order = ["Test accuracy", "Final val accuracy"]
    return sorted(frame["panel"].unique(), key=lambda name: order.index(name) if name in order else len(order))


def _shared(frame: pd.DataFrame, low: str, high: str, pad: float = 0.1) -> alt.Scale:
    """One y-scale for every panel of a figure (split into charts, each would pick its own)."""
    lo, hi = float(frame[low].min()), float(frame[high].max())
    if not np.isfinite([lo, hi]).all():  # no interval anywhere (one pair per row count): each panel its own
        return alt.Scale(zero=True)
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    span = (hi - lo) or 1.0
    return alt.Scale(domain=[lo - pad * span, hi + pad * span], nice=False)


def data_size_curve(frame: pd.DataFrame) -> list[alt.Chart]:
    """Accuracy vs training rows per model (walk.curve_frame): the random-seed mean as a line and
    mean ± sd over random seeds as a band, one panel per metric (test, final val)."""
    present = [model for model in MODELS.domain if model in set(frame["model"])]  # the key lists only what is drawn
    models = alt.Scale(domain=present, range=[MODELS.range[MODELS.domain.index(model)] for model in present])
    base = alt.Chart().encode(x=_log_rows(frame))
    band = base.mark_area(opacity=0.18).encode(y=alt.Y("low:Q", title="Accuracy", scale=alt.Scale(zero=False)),
                                               y2="high:Q",
                                               color=alt.Color("model:N", scale=models, title=None, legend=LEGEND))
    line = base.mark_line(point=alt.OverlayMarkDef(size=40)).encode(
        y="mean:Q", color=alt.Color("model:N", scale=models, title=None, legend=LEGEND),
        tooltip=["model:N", alt.Tooltip("train_rows:Q", format=",d", title="rows"), "panel:N",
                 alt.Tooltip("mean:Q", format=".4f"), alt.Tooltip("sd:Q", format=".4f", title="sd over random seeds"),
                 alt.Tooltip("n:Q", title="random seeds")])
    return [alt.layer(band, line, data=frame[frame["panel"] == panel]).properties(height=260, title=panel)
            .configure_legend(orient="top", columns=2) for panel in _panels(frame)]


def paired_delta(frame: pd.DataFrame) -> list[alt.Chart]:
    """Paired ViT − convnet Δ per row count (walk.delta_frame) with its 95% CI, coloured by verdict as on
    every Δ chart of the app (charts.verdict_scale, COLOUR_RULE: green = better for the ViT, red = worse,
    dark grey = equivalent, pale = unresolved), one panel per metric; the dashed line is no difference."""
    return [_delta_panel(frame, frame[frame["panel"] == panel]).properties(height=220, title=panel)
            .configure_legend(orient="top", columns=2) for panel in _panels(frame)]


def _delta_panel(frame: pd.DataFrame, part: pd.DataFrame) -> alt.LayerChart:
    """One panel of paired_delta: its key lists the verdicts it draws (the axes are the figure's)."""
    colour = alt.Color("verdict:N", title="Verdict", scale=verdict_scale("test_accuracy", part["verdict"]))
    base = alt.Chart().encode(x=_log_rows(frame))
    zero = base.mark_rule(color=GUIDE, strokeDash=[5, 3]).encode(y=alt.datum(0))
    whiskers = base.mark_rule(strokeWidth=2).encode(  # the interval its verdict goes with (walk.delta_frame)
        y=alt.Y(f"{intervals.LOW}:Q", title="Δ accuracy, ViT − convnet",
                scale=_shared(frame, intervals.LOW, intervals.HIGH)), y2=f"{intervals.HIGH}:Q", color=colour)
    dots = base.mark_circle(size=80, opacity=1).encode(
        y="mean_delta:Q", color=colour,
        tooltip=[alt.Tooltip("train_rows:Q", format=",d", title="rows"), "panel:N",
                 alt.Tooltip("delta_text:N", title="Δ"), alt.Tooltip("ci_text:N", title="95% CI"),
                 alt.Tooltip("n_pairs:Q", title="pairs"), "verdict:N"])
    return alt.layer(zero, whiskers, dots, data=part)


SOURCES = {"ours": SELECTION, "the source article": BASELINE}  # gap_bars: a source's colour by its name's start


def gap_bars(frame: pd.DataFrame) -> list[alt.Chart]:
    """Train − val gap per model and row count (walk.gap_frame), one panel per row count: bars, then black ±sd
    whiskers with caps drawn on top of them (the whiskers carry no colour encoding, so they never take the bar's
    colour). One colour per source (ours blue, the source article's grey), each panel's key listing the sources
    it draws; its subtitle says how many random seeds our bars average."""
    scale = _shared(frame, "low", "high", 0.05)
    return [_gap_panel(frame[frame["rows"] == rows], rows, scale)
            for rows in sorted(frame["rows"].unique(), key=lambda r: int(r.replace(",", "")))]


def _gap_panel(part: pd.DataFrame, rows: str, scale: alt.Scale) -> alt.LayerChart:
    sources = list(dict.fromkeys(part["source"]))
    colours = [next(colour for start, colour in SOURCES.items() if source.startswith(start)) for source in sources]
    x = alt.X("model:N", title=None, axis=alt.Axis(labelAngle=0))
    bars = alt.Chart().mark_bar().encode(
        x=x, xOffset=alt.XOffset("source:N", sort=sources),
        y=alt.Y("mean:Q", title="final train − final val accuracy", scale=scale),
        color=alt.Color("source:N", sort=sources, scale=alt.Scale(domain=sources, range=colours),
                        legend=alt.Legend(orient="top", title=None, labelLimit=300, columns=1)),
        tooltip=["model:N", "source:N", alt.Tooltip("seeds:Q", title="random seeds"),
                 alt.Tooltip("mean:Q", format="+.4f"), alt.Tooltip("low:Q", format="+.4f"),
                 alt.Tooltip("high:Q", format="+.4f")])
    spread = alt.Chart().transform_filter(alt.datum.high > alt.datum.low).encode(
        x=x, xOffset=alt.XOffset("source:N", sort=sources))
    whiskers = spread.mark_rule(color="black", strokeWidth=2).encode(y="low:Q", y2="high:Q")
    caps = [spread.mark_tick(color="black", thickness=2, size=10).encode(y=f"{end}:Q") for end in ("low", "high")]
    ours = part[part["source"].str.startswith("ours")]
    seeds = ", ".join(f"{model} {n}" for model, n in zip(ours["model"], ours["seeds"]))
    title = alt.Title(f"{rows} training rows", subtitle=f"ours: random seeds per model: {seeds}" if seeds else "")
    return alt.layer(bars, whiskers, *caps, data=part).properties(height=260, title=title)


def spread_bars(table: pd.DataFrame, uniform: float) -> list[alt.Chart]:
    """Head spreads per row (long: label, head, spread, model) with the uniform 1/N line for scale: one
    panel (chart) per row, one y-scale for all, each at its container's width (stacked on a phone)."""
    top = max(float(table["spread"].max()) if len(table) else 0.0, uniform) * 1.05
    y = alt.Y("spread:Q", title=["spread (max − min", "of a query's weights)"], scale=alt.Scale(domain=[0, top]))
    panels = []
    for label in dict.fromkeys(table["label"]):
        base = alt.Chart(table[table["label"] == label].assign(uniform=uniform))
        bars = base.mark_bar().encode(
            x=alt.X("head:N", title=None, axis=alt.Axis(labelAngle=0)), xOffset="model:N", y=y,
            color=alt.Color("model:N", scale=alt.Scale(domain=["trained", "random init"], range=[SELECTION, BASELINE]),
                            legend=alt.Legend(orient="top", title=None)),
            tooltip=["label:N", "head:N", "model:N", alt.Tooltip("spread:Q", format=".4f")])
        rule = base.mark_rule(color=GUIDE).encode(  # a one-entry legend says what the dashed line is
            y="mean(uniform):Q", strokeDash=alt.StrokeDash("line:N", scale=alt.Scale(range=[[5, 3]]), legend=alt.Legend(
                orient="bottom", title=None, labelLimit=300)))
        line = rule.transform_calculate(line=f"'1/N = {uniform:.4f}'")  # short: at 1,400 px a panel is ~240 px wide
        panels.append(alt.layer(bars, line).properties(height=200, title=label).configure_legend(columns=1))
    return panels
