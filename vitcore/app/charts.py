"""Every Altair chart of the app: pure functions from library frames to charts (no Streamlit, no TF).

Colours (vitcore.app.fmt): the selection is always blue and the baseline grey, on every chart, so a
reader never has to re-learn the legend between sections; on every Δ chart with verdicts the colour is
the verdict for the user (COLOUR_RULE: green better, red worse, neutral for higher/lower, grey
unresolved), and every chart has a title. The confusion Δ heatmap shows rates, not verdicts (blue = more).
"""

from __future__ import annotations

import textwrap

import altair as alt
import numpy as np
import pandas as pd

from vitcore.app.fmt import (  # noqa: F401 (GOOD, BAD: the verdict colours, said in fmt)
    BAD,
    BASELINE,
    DELTA_LIMITS,
    GOOD,
    GUIDE,
    LESS,
    MORE,
    NO_EFFECT,
    SELECTION,
    VERDICT_COLOURS,
    ZERO,
    axis_format,
)
from vitcore.app.layout import EFFECT_ROW, PANEL_TITLE, effect_rows, panel_order, panel_title  # noqa: F401
from vitcore.app.tables import READING_FIELDS, SIZE_FILL, with_readings
from vitcore.data.fashion import CLASS_NAMES
from vitcore.study import intervals
from vitcore.study import words as w

# The one colour rule of every Δ chart (fmt.VERDICT_COLOURS, which the cards' badges read too): colour says what
# the verdict means for the user — green better, red worse (lighter for "slightly"), whatever the sign of the Δ (for
# gap and seconds a negative Δ is better); neutral blue / violet for higher / lower (final train accuracy has no good
# direction); dark grey for equivalent, pale grey for the rest.
COLOUR_RULE = ("Colour = the verdict for you: green better, red worse (lighter: slightly, inside ±margin), "
               "blue/violet higher/lower where no direction is better, dark grey equivalent, pale grey unresolved. "
               f"Fill = its size: {SIZE_FILL}.")


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
    """Mean train (dashed) and validation (solid) accuracy per epoch, with the seeds' min-max band.
    Both legends draw line samples: they come from the line layer alone (a point overlay or a legend
    shared with the pale band would replace them with faint swatches, checked by rendering)."""
    scale = alt.Scale(domain=order, range=[SELECTION, BASELINE][:len(order)])
    lines_legend = dict(orient="bottom", symbolType="stroke", symbolStrokeWidth=3, symbolSize=500, columns=1)
    base = alt.Chart(frame).encode(x=alt.X("epoch:Q", title="Epoch", axis=alt.Axis(tickMinStep=1)))
    band = base.mark_area(opacity=0.15).encode(
        y=alt.Y("low:Q", title="Accuracy", scale=alt.Scale(zero=False)), y2="high:Q", detail="split:N",
        fill=alt.Fill("role:N", scale=scale, legend=None))
    lines = base.mark_line(strokeWidth=2).encode(
        y=alt.Y("mean:Q", title="Accuracy"),
        color=alt.Color("role:N", title=None, scale=scale, legend=alt.Legend(labelLimit=300, **lines_legend)),
        strokeDash=alt.StrokeDash("split:N", title=None, scale=alt.Scale(domain=["validation", "train"],
                                                                          range=[[1, 0], [6, 3]]),
                                  legend=alt.Legend(symbolStrokeColor="#495057", **{**lines_legend, "orient": "top"})),
        tooltip=["role:N", "split:N", "epoch:Q", alt.Tooltip("mean:Q", format=".4f"),
                 alt.Tooltip("low:Q", format=".4f", title="min over seeds"),
                 alt.Tooltip("high:Q", format=".4f", title="max over seeds"), "seeds:Q"])
    return (band + lines).resolve_scale(fill="independent").properties(
        height=320, title=panel_title("Learning curves: accuracy per epoch, mean over random seeds (band: min–max)"))


def matrix_frame(matrix: np.ndarray) -> pd.DataFrame:
    """A (classes, classes) rate matrix (row = true class) as long rows for a heatmap."""
    true, predicted = np.divmod(np.arange(len(CLASS_NAMES) ** 2), len(CLASS_NAMES))
    return pd.DataFrame({"true": np.array(CLASS_NAMES)[true], "predicted": np.array(CLASS_NAMES)[predicted],
                         "value": np.asarray(matrix, dtype=float).ravel()})


def delta_matrix(confusion: pd.DataFrame) -> np.ndarray:
    """compare.Comparison.confusion (long: true, predicted, mean_delta) as a (classes, classes) matrix."""
    matrix = np.full((len(CLASS_NAMES), len(CLASS_NAMES)), np.nan)
    matrix[confusion["true"].astype(int), confusion["predicted"].astype(int)] = confusion["mean_delta"]
    return matrix


def heatmap(matrix: np.ndarray, title: str, delta: bool = False, limit: float = DELTA_LIMITS["confusion rate"]
            ) -> alt.Chart:
    """Confusion rates (row-normalised, seed-averaged); delta=True: the fixed symmetric Δ scale
    (±limit, the same in every view, clipped beyond), red = less, blue = more."""
    frame = matrix_frame(matrix)
    names = list(CLASS_NAMES)
    if delta:
        scale = alt.Scale(domain=[-limit, 0, limit], range=[LESS, ZERO, MORE], clamp=True)
        text_format, label = "+.2f", f"Δ rate (fixed ±{limit:.2f})"
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
    # a cell's number only where it fits (about 30 px a cell: the plot at least 300 px wide); on a phone the
    # colours and the tooltip carry it
    text = base.transform_filter(alt.datum.value * alt.datum.value >= 0.005 ** 2).mark_text(
        fontSize=9, opacity=alt.ExprRef(expr="width >= 300 ? 1 : 0")).encode(
        text=alt.Text("value:Q", format=text_format),
        color=alt.condition(alt.datum.value * alt.datum.value > dark, alt.value("white"), alt.value("#1f2430")))
    return (cells + text).properties(title=panel_title(title), height=330)


def verdict_scale(metric: str, present) -> alt.Scale:
    """Verdict colours (fmt.VERDICT_COLOURS, the one rule), listing only the verdicts present. `metric` is
    kept for the callers: the verdict word already says whether a Δ is better for this metric."""
    domain = [verdict for verdict in w.VERDICTS if verdict in set(present)]
    return alt.Scale(domain=domain, range=[VERDICT_COLOURS[verdict].chart for verdict in domain])


def _symmetric(frame: pd.DataFrame, steps=(0.02, 0.05, 0.1, 0.2, 0.5, 1.0)) -> alt.Scale:
    """A symmetric x-scale (0 in the middle) at the first step that holds every Δ and its chosen interval."""
    columns = [c for c in ("mean_delta", intervals.LOW, intervals.HIGH) if c in frame.columns]
    reach = np.nanmax(np.abs(frame[columns].to_numpy(float)), initial=0.0)
    limit = next((step for step in steps if reach <= step), float(reach))
    return alt.Scale(domain=[-limit, limit], clamp=True)


def class_delta_bars(classes: pd.DataFrame) -> alt.Chart:
    """Per-class test accuracy Δ, paired, with whiskers of the 95% interval simultaneous over the ten
    classes (Bonferroni: the family the verdicts are judged in), coloured by verdict (frame: compare's
    `classes`)."""
    classes = intervals.with_chosen(classes)  # the interval each class's verdict goes with
    colour = alt.Color("verdict:N", scale=verdict_scale("test_accuracy", classes["verdict"]),
                       legend=alt.Legend(title="Verdict", orient="bottom"))
    x = alt.X("mean_delta:Q", title="Δ per-class test accuracy (selection − baseline)", scale=_symmetric(classes),
              axis=alt.Axis(format="+.2f"))
    base = alt.Chart(classes).encode(y=alt.Y("class:N", sort=list(CLASS_NAMES), title=None,
                                             axis=alt.Axis(labelOverlap=False)))
    bars = base.mark_bar(opacity=0.85).encode(
        x=x, color=colour, tooltip=["class:N", alt.Tooltip("mean_delta:Q", format="+.4f", title="Δ"),
                                    alt.Tooltip(f"{intervals.LOW}:Q", format="+.4f", title="95% low (×10)"),
                                    alt.Tooltip(f"{intervals.HIGH}:Q", format="+.4f", title="95% high (×10)"),
                                    "n_pairs:Q", alt.Tooltip("p_adj:Q", format=".3g"),
                                    alt.Tooltip("p_tost_adj:Q", format=".3g"), "verdict:N"])
    whiskers = base.mark_rule(color="#1f2430", strokeWidth=1.5).encode(x=f"{intervals.LOW}:Q",
                                                                       x2=f"{intervals.HIGH}:Q")
    return alt.layer(bars, whiskers).properties(
        height=340, title=panel_title("Per-class test accuracy: Δ paired by random seed, 95% intervals simultaneous "
                                      "over the 10 classes"))


INTERVAL_COLUMNS = intervals.COLUMNS  # the chosen interval's 95% and 90% ends and its name (vitcore.study.intervals)


def _interval_layers(base: alt.Chart, x: alt.X, colour: alt.Color, tooltip: list, offset: int = 0) -> list:
    """The two intervals a verdict is read from (words.chosen: simultaneous over its family, a plan's repeated CIs
    at its look): thin = 95% (excludes 0 exactly when resolved), thick = 90% (inside ±margin exactly when the
    equivalence test resolves); `offset` px below the row's middle."""
    wide = base.mark_rule(strokeWidth=1.5, yOffset=offset).encode(x=x, x2=f"{intervals.HIGH}:Q", color=colour,
                                                                  tooltip=tooltip)
    narrow = base.mark_rule(strokeWidth=6, opacity=0.8, yOffset=offset).encode(
        x=f"{intervals.LOW90}:Q", x2=f"{intervals.HIGH90}:Q", color=colour, tooltip=tooltip)
    return [wide, narrow]


def _tooltip(label: str, places: str) -> list:
    return [f"{label}:N", alt.Tooltip("mean_delta:Q", format=places.replace("3", "4"), title="Δ"),
            alt.Tooltip(f"{intervals.LOW}:Q", format=places, title="95% low"),
            alt.Tooltip(f"{intervals.HIGH}:Q", format=places, title="95% high"),
            alt.Tooltip(f"{intervals.LOW90}:Q", format=places, title="90% low"),
            alt.Tooltip(f"{intervals.HIGH90}:Q", format=places, title="90% high"),
            alt.Tooltip(f"{intervals.KIND}:N", title="interval"), "n_pairs:Q",
            alt.Tooltip("p_adj:Q", format=".3g", title="p_adj"), alt.Tooltip("p_tost_adj:Q", format=".3g",
                                                                                title="p_tost_adj"),
            "family_size:Q", "verdict:N", alt.Tooltip("size:N", title="size vs ±margin"),
            alt.Tooltip("delta_in_run_sd:Q", format="+.2f", title="Δ / run sd"),
            alt.Tooltip("wins_text:N", title="wins"),
            alt.Tooltip("flips:N", title="borderline: what would flip it"),
            alt.Tooltip("source:N", title="source"), alt.Tooltip("verdict_from:N", title="verdict from"),
            alt.Tooltip("discovery:N", title="beside it")]


def with_source(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with `source` (where each verdict comes from and, for a confirmed question, its replication outcome:
    words.source_text) and `verdict_from` / `discovery` in full (blank where a caller's frame has none)."""
    out = frame.assign(**{c: frame[c].fillna("") if c in frame.columns else "" for c in ("verdict_from", "discovery")})
    return out.assign(source=[w.source_text(row) for row in out.to_dict("records")])


def _fill(scale: alt.Scale):
    """The dot's fill (tables.SIZE_FILL): the verdict's colour when its interval lies beyond ±margin, else hollow.
    From its own column (`filled`, a copy of the verdict): a fill on `verdict` itself with no legend made Vega-Lite
    merge it with the colour's legend and drop both ("Conflicting legend property disable"): no verdict key."""
    return alt.condition(alt.FieldEqualPredicate(field="size", equal=w.SIZE_BEYOND),
                         alt.Fill("filled:N", scale=scale, legend=None), alt.value("white"))


SHAPE_KEY = "#1f2430"  # the shape key's symbols: a shape says where an effect comes from, not its verdict
FOREST_ROW, FOREST_TITLE = 66, 48  # px per row (three lines of text, then the intervals); title characters per line


def forest(frame: pd.DataFrame, metric: str, title: str) -> alt.Chart:
    """One row per switch level (frame: tables.flip_frame): its change, its verdict in words and where that verdict
    comes from (blind / seen / fixed sample, and a confirmed question's replication outcome) as three lines of text,
    then Δ with the two intervals its verdict is read from (simultaneous over its family), on the ±margin band,
    colour by the verdict (COLOUR_RULE); a dashed rule at 0. One layered view that takes its container's width
    (the text is cut to it with an ellipsis, the verdict word and the source first), so nothing leaves the
    screen at 400 px."""
    frame = with_source(with_readings(intervals.with_chosen(frame)))[[
        "label", "mean_delta", *INTERVAL_COLUMNS, "n_pairs", "p_adj", "p_tost_adj", "family_size", "margin", "verdict",
        "verdict_text", "verdict_short", *READING_FIELDS, "source", "verdict_from", "discovery"]]
    frame = frame.assign(filled=frame["verdict"])  # the dots' fill (_fill)
    places = axis_format(metric)
    # a row (FOREST_ROW px): the change at -22, the verdict at -8, the source at +6, the intervals at +20 from the
    # band's middle
    y = alt.Y("label:N", sort=None, title=None, axis=None, scale=alt.Scale(paddingInner=0, paddingOuter=0))
    colour = alt.Color("verdict:N", scale=verdict_scale(metric, frame["verdict"]),
                       legend=alt.Legend(title="Verdict", orient="bottom", columns=2))
    tooltip = _tooltip("label", places)
    base = alt.Chart(frame).encode(y=y)
    x = alt.X(f"{intervals.LOW}:Q", title=["Δ = variant − this config", "(95% and 90% intervals of each verdict)"],
              axis=alt.Axis(format=places, tickCount=5, labelOverlap="greedy"))
    margin = float(frame["margin"].max()) if len(frame) else 0.0
    band = alt.Chart(pd.DataFrame({"lo": [-margin], "hi": [margin]})).mark_rect(color=NO_EFFECT, opacity=0.08).encode(
        x="lo:Q", x2="hi:Q")
    zero = base.mark_rule(color=BASELINE, strokeDash=[4, 3]).encode(x=alt.datum(0), y=alt.value(0),
                                                                     y2=alt.value("height"))
    dots = base.mark_point(size=90, opacity=1, yOffset=20, strokeWidth=2, shape="circle").encode(
        x="mean_delta:Q", color=colour, fill=_fill(verdict_scale(metric, frame["verdict"])), tooltip=tooltip)
    text = {"align": "left", "baseline": "middle", "fontSize": 12, "limit": alt.ExprRef(expr="width")}
    change = base.mark_text(dy=-22, fontWeight="bold", color="#1f2430", **text).encode(x=alt.value(0), text="label:N",
                                                                                         tooltip=tooltip)
    words = base.mark_text(dy=-8, **text).encode(
        x=alt.value(0), text="verdict_short:N", tooltip=tooltip,  # the full words are in the tooltip and on the card
        color=alt.condition(alt.FieldOneOfPredicate("verdict", list(w.RESOLVED)), colour, alt.value(NO_EFFECT)))
    source = base.mark_text(dy=6, color="#495057", **{**text, "fontSize": 11}).encode(
        x=alt.value(0), text="source:N", tooltip=tooltip)  # blind / seen / fixed sample · a confirmation's outcome
    heading = alt.Title(textwrap.wrap(title, FOREST_TITLE), anchor="start")  # a 400-px screen wraps nothing itself
    return alt.layer(band, zero, *_interval_layers(base, x, colour, tooltip, 20), dots, change, words,
                     source).properties(height=alt.Step(FOREST_ROW), title=heading).configure_view(stroke=None)


def effect_intervals(frame: pd.DataFrame, metric: str, title: str) -> list[alt.Chart]:
    """Dots at mean_delta with the two intervals of its verdict (simultaneous over its family) per
    `effect` (frame: tables.effect_frame), one panel (chart) per training size, each with its own x-scale
    and its container's width (side by side on a wide screen, stacked on a phone); colour by the verdict
    (COLOUR_RULE), diamonds for single-cell effects; a dashed rule at 0. Each panel's keys list what it draws."""
    frame = with_source(with_readings(intervals.with_chosen(frame)))[[
        "effect", "rows", "train_rows", "basis", "mean_delta", *INTERVAL_COLUMNS, "n_pairs", "p_adj", "p_tost_adj",
        "family_size", "verdict", *READING_FIELDS, "source", "verdict_from", "discovery"]]
    frame = frame.assign(filled=frame["verdict"], shape_of=frame["basis"])  # the dots' fill (_fill) and shape
    return [_effect_panel(frame[frame["rows"] == rows], metric, panel_title(title, rows))
            for rows in panel_order(frame)]


def _effect_panel(part: pd.DataFrame, metric: str, title: alt.Title) -> alt.Chart:
    places, scale = axis_format(metric), verdict_scale(metric, part["verdict"])
    colour = alt.Color("verdict:N", title="Verdict", scale=scale)
    bases = alt.Scale(domain=["averaged over the grid's cells", "one cell only"], range=["circle", "diamond"])
    y, names = effect_rows(alt.Chart())
    base = alt.Chart().encode(y=y)
    x = alt.X(f"{intervals.LOW}:Q", title="Δ (95% and 90% intervals of each verdict)",
              axis=alt.Axis(format=places, tickCount=5, labelOverlap="greedy"))
    tooltip = [*_tooltip("effect", places), "rows:N", "basis:N"]
    dots = base.mark_point(size=80, opacity=1, strokeWidth=2, yOffset=8).encode(
        x="mean_delta:Q", color=colour, shape=alt.Shape("shape_of:N", scale=bases, legend=None), fill=_fill(scale),
        tooltip=tooltip)
    zero = alt.Chart().mark_rule(color="#adb5bd", strokeDash=[3, 3]).encode(x=alt.datum(0))
    layers = [zero, *_interval_layers(base, x, colour, tooltip, 8), dots, names]
    if set(bases.domain) <= set(part["basis"]):  # the shape key: only when both occur, a layer that draws nothing
        layers.append(alt.Chart().transform_filter("false").mark_point(  # but the key (the dots' conditional fill
            size=80, strokeWidth=2, color=SHAPE_KEY, fill="white", filled=False).encode(  # drew its symbols blank)
            shape=alt.Shape("basis:N", title=None, scale=bases, legend=alt.Legend(labelLimit=300, orient="top",
                                                                                  columns=1))))
    return alt.layer(*layers, data=part).resolve_scale(shape="independent").properties(
        height=alt.Step(EFFECT_ROW), title=title).configure_legend(orient="bottom", columns=2)


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


def cost_chart(curve: pd.DataFrame) -> alt.Chart:
    """Measured median forward time vs tokens (points) and the fitted a + b·N² curve (dashed line), both
    axes logarithmic: the 4-64-token points the page talks about are spread out, not squashed at 0."""
    measured = curve[curve["series"] == "measured median"]
    fitted = curve[(curve["series"] != "measured median") & (curve["ms"] > 0)]

    def colour(frame: pd.DataFrame, hue: str, **symbol) -> alt.Color:  # each layer its own key: a dot, a dashed line
        return alt.Color("series:N", title=None, scale=alt.Scale(domain=[*dict.fromkeys(frame["series"])], range=[hue]),
                         legend=alt.Legend(orient="top", symbolStrokeWidth=2, labelLimit=300, columns=1, **symbol))
    ticks = sorted(int(t) for t in measured["tokens"])
    x = alt.X("tokens:Q", title="tokens N (log scale)", scale=alt.Scale(type="log", nice=False, padding=12),
              axis=alt.Axis(values=ticks, format=",d", labelOverlap=False, grid=False))
    decades = [v * 10 ** k for k in range(-1, 5) for v in (1, 3)]  # 0.1, 0.3, 1, 3, ... : readable log ticks
    y = alt.Y("ms:Q", title=["forward time of one attention", "layer (ms, log scale)"], scale=alt.Scale(type="log"),
              axis=alt.Axis(values=decades, format=",~g"))
    points = alt.Chart(measured).mark_circle(size=80, opacity=1).encode(
        x=x, y=y, color=colour(measured, SELECTION, symbolType="circle"),
        tooltip=[alt.Tooltip("tokens:Q", format=",d"), alt.Tooltip("ms:Q", format=",.3f", title="median ms")])
    line = alt.Chart(fitted).mark_line(strokeDash=[5, 3]).encode(
        x=x, y=y, color=colour(fitted, BASELINE, symbolType="stroke", symbolDash=[5, 3]))
    return (line + points).resolve_scale(color="independent").properties(height=320)
