"""The Seed noise page's pieces: the decomposition of the stored crossed runs (vitcore.analysis.noise),
cached per margin and store state like every read in vitcore.app.state; its shares as a chart; its
tables as shown. No TensorFlow."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from vitcore.app import fmt, state
from vitcore.study.words import NOISE_INTERACTIONS

SHOWN = ("data", "init", "order", NOISE_INTERACTIONS)  # the chart's bars: each source alone, then all interactions
NAMES = {"data": "data sample", "init": "initialisation", "order": "batch order", NOISE_INTERACTIONS: "interactions"}
COLOURS = (fmt.SELECTION, "#2f9e44", fmt.GUIDE, fmt.BASELINE)


def tables(margin: float) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """(noise.csv's table, pairing.csv's table, the advice sentences) of the store at this margin (the Study's)."""
    with st.spinner("Splitting the seed noise…"):
        return state.study().noise(margin)


def pairing_survey() -> tuple[pd.DataFrame, str]:
    """(every committed paired comparison with what pairing removes, the advice over all of them): the Study's."""
    return state.study().pairing_survey()


def survey_display(table: pd.DataFrame) -> pd.DataFrame:
    """pairing.survey as shown: sds to 4 decimals, the share removed in %."""
    return pd.DataFrame({"Δ": table["comparison"], "Rows": table["train_rows"].map(fmt.rows),
                         "Pairs": table["n_pairs"], "sd of the paired Δ": table["sd_delta"].map(fmt.number),
                         "sd unpaired": table["sd_unpaired"].map(fmt.number),
                         "Pairing removes": table["removed"].map(fmt.percent)})


def shares_chart(components: pd.DataFrame) -> list[alt.Chart]:
    """One chart per cell (a model at a row count, or a paired Δ), stacked, each at its container's width:
    each source's share of the variance as a bar, its 95% interval as a line."""
    part = components[components["component"].isin(SHOWN)].assign(
        source=lambda f: f["component"].map(NAMES),
        where=lambda f: f["cell"] + " · " + f["train_rows"].map(fmt.rows) + " rows")
    order = [NAMES[name] for name in SHOWN]
    cells = list(dict.fromkeys(part["where"]))
    panels = []
    for number, where in enumerate(cells):
        base = alt.Chart(part[part["where"] == where]).encode(y=alt.Y("source:N", sort=order, title=None))
        last = number == len(cells) - 1  # one x-axis title, under the last cell
        bars = base.mark_bar().encode(
            x=alt.X("share:Q", title="share of the variance (95% intervals)" if last else None,
                    scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%")),
            color=alt.Color("source:N", sort=order, scale=alt.Scale(domain=order, range=list(COLOURS)), legend=None),
            tooltip=[alt.Tooltip("where:N", title="cell"), alt.Tooltip("source:N"),
                     alt.Tooltip("share:Q", format=".0%"), alt.Tooltip("share_low:Q", format=".0%", title="95% low"),
                     alt.Tooltip("share_high:Q", format=".0%", title="95% high"), alt.Tooltip("design:N")])
        rules = base.mark_rule(color="black").encode(x="share_low:Q", x2="share_high:Q")
        panels.append(alt.layer(bars, rules).properties(height=90, title=alt.Title(where, anchor="start", fontSize=13)))
    return panels


def display(components: pd.DataFrame) -> pd.DataFrame:
    """noise.csv's table as shown: shares in %, sd instead of variance."""
    return pd.DataFrame({
        "Cell": components["cell"], "Rows": components["train_rows"].map(fmt.rows), "Design": components["design"],
        "Source": components["component"], "Share": components["share"].map(fmt.percent),
        "95% interval": [f"[{fmt.percent(low)}, {fmt.percent(high)}]" for low, high in zip(
            components["share_low"], components["share_high"], strict=True)],
        "sd": components["variance"].pow(0.5).map(fmt.number)})


def pairing_display(pairing: pd.DataFrame, margin: float) -> pd.DataFrame:
    """pairing.csv's table as shown: what pairing by each source removes, in %, with its interval."""
    return pd.DataFrame({
        "Δ": pairing["cell"], "Rows": pairing["train_rows"].map(fmt.rows), "Paired by": pairing["paired_by"],
        "sd of the Δ": pairing["variance"].clip(lower=0).pow(0.5).map(fmt.number),
        "Removes": pairing["removed"].map(fmt.percent),
        "95% interval": [f"[{fmt.percent(low)}, {fmt.percent(high)}]" for low, high in zip(
            pairing["removed_low"], pairing["removed_high"], strict=True)],
        f"Random seeds for ±{margin:g}": pairing["seeds_for_margin"].map(
            lambda n: "—" if fmt.missing(n) else f"{n:,.0f}")})
