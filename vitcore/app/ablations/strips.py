"""The per-cell strips beside the main effects: each effect in every cell of the other switches.

Charts and sentences from vitcore.stats.percell: one dot per cell (coloured by whether that cell's
effect is resolved after Holm within the effect's cells), a black tick at the averaged effect, and the
notes a reader needs — where cells disagree in sign beyond noise, and which verdicts change when the
effect is computed over the LayerNorm cells or the cells without collapsed runs. Cells are coloured by
the one rule of the verdict charts (vitcore.app.charts.COLOUR_RULE). No Streamlit here.
"""

from __future__ import annotations

import altair as alt
import pandas as pd

from vitcore.app import fmt, tables
from vitcore.app.charts import EFFECT_ROW, effect_rows, panel_order, panel_title, verdict_scale
from vitcore.app.fmt import axis_format
from vitcore.stats import percell
from vitcore.stats.estimates import ALPHA, INCONCLUSIVE, direction


def strip_frame(cells: pd.DataFrame, effects: pd.DataFrame, interaction: bool = False) -> pd.DataFrame:
    """Cells with the chart's `effect` and `rows` labels (as tables.effect_frame names the effects),
    `resolved` and `average` (the averaged effect, for the tick)."""
    labelled = tables.effect_frame(cells, interaction)
    key = [c for c in percell.EFFECT_KEY if c in effects.columns]
    averages = {tuple(map(str, k)): m for *k, m in effects[[*key, "mean_delta"]].itertuples(index=False)}
    labelled["average"] = [averages.get(tuple(map(str, k))) for k in cells[key].itertuples(index=False)]
    resolved = labelled["p_holm"] < ALPHA  # the cell's own verdict word, coloured by the one rule (charts)
    labelled["resolved"] = [direction(metric, m > 0, False) if r else INCONCLUSIVE
                            for r, m, metric in zip(resolved, labelled["mean_delta"], labelled["metric"])]
    labelled["collapse"] = labelled["collapsed"].map({True: "holds a collapsed run", False: ""})
    return labelled


def strip(frame: pd.DataFrame, metric: str, title: str) -> list[alt.Chart]:
    """One dot per cell and effect (x: that cell's paired Δ), a black tick at the averaged effect, one
    panel (chart) per training size with its own x-scale, at its container's width."""
    places = axis_format(metric)
    colour = alt.Color("resolved:N", title="The cell's verdict (Holm)",  # short: a legend cuts a long title
                       scale=verdict_scale(metric, frame["resolved"]))
    y, names = effect_rows(alt.Chart())
    base = alt.Chart().encode(y=y)
    dots = base.mark_circle(size=45, opacity=0.8, yOffset=8).encode(
        x=alt.X("mean_delta:Q", title="Δ in each cell of the other switches",
                axis=alt.Axis(format=places, tickCount=5, labelOverlap="greedy")),
        color=colour,
        tooltip=["effect:N", "rows:N", "cell:N", alt.Tooltip("mean_delta:Q", format=places.replace("3", "4")),
                 alt.Tooltip("ci_low:Q", format=places), alt.Tooltip("ci_high:Q", format=places), "n_pairs:Q",
                 alt.Tooltip("p_holm:Q", format=".3f", title="p (Holm, cells)"), "collapse:N"])
    tick = base.mark_tick(color="black", thickness=2, size=14, yOffset=8).encode(x="average:Q")
    zero = alt.Chart().mark_rule(color="#adb5bd", strokeDash=[3, 3]).encode(x=alt.datum(0))
    return [alt.layer(zero, dots, tick, names, data=frame[frame["rows"] == rows]).properties(
        height=alt.Step(EFFECT_ROW), title=panel_title(title, rows)).configure_legend(orient="bottom")
        for rows in panel_order(frame)]


def disagreement_note(cells: pd.DataFrame, interaction: bool = False) -> str | None:
    """Which effects have cells resolved in opposite directions, or None."""
    spread = percell.spread(cells)
    flagged = spread[spread["signs_disagree"].astype(bool)]
    if flagged.empty:
        return None
    labels = tables.effect_frame(flagged, interaction)
    items = [f"{effect} at {fmt.rows(rows)} rows ({higher} cells resolved higher, {lower} lower; cells range "
             f"{low:+.4f} to {high:+.4f})" for effect, rows, higher, lower, low, high in
             labels[["effect", "train_rows", "cells_higher", "cells_lower", "cell_min",
                     "cell_max"]].itertuples(index=False)]
    return ("**Cells disagree in sign beyond noise** (each cell's paired Δ, Holm-adjusted within the effect's cells): "
            + "; ".join(items) + ". The average over cells hides effects of opposite sign: read the strip below.")


def control_notes(everything: pd.DataFrame, subsets: dict[str, pd.DataFrame]) -> list[str]:
    """One sentence per control (LayerNorm cells only, cells without collapsed runs) whose effects
    change a verdict of the all-cells effects."""
    notes = []
    for name, frame in subsets.items():
        sentence = percell.changed_sentence(percell.changed_verdicts(everything, frame), name, tables.SWITCH_NAMES)
        if sentence:
            notes.append(sentence)
    return notes
