"""How a chart fills its place: the container's width, its own height; a figure of several panels side by
side on a wide screen, one under the other on a phone.

Each panel is its own chart at its container's width (a faceted Vega-Lite chart has a fixed width and
runs off a 400-px screen); Streamlit stacks columns below 640 px, so the panels stack there. "fit-x"
autosizing fits the width only: with Vega's "fit" a key above or below a chart would take its height
from the plot, which on a phone left a line of dots.

`cached_chart` / `cached_spec`: a page's chart built once per store state (Altair's validation is not redone
at every rerun)."""

from __future__ import annotations

import textwrap

import altair as alt
import pandas as pd
import streamlit as st

from vitcore.app import state

FIT_WIDTH = {"type": "fit-x", "contains": "padding"}


def fit_width(spec: dict) -> dict:
    """A Vega-Lite spec that takes its container's width and keeps the height it asks for."""
    return {**spec, "autosize": spec.get("autosize", FIT_WIDTH)}


def chart(spec_or_chart) -> None:
    """One Altair chart or Vega-Lite spec at its container's width (its own height)."""
    spec = spec_or_chart if isinstance(spec_or_chart, dict) else spec_or_chart.to_dict()
    st.vega_lite_chart(spec=fit_width(spec), width="stretch")


def side_by_side(charts: list, stacked: bool = False) -> None:
    """Altair charts or Vega-Lite specs, one per column (stacked=True, or a phone: one under the other)."""
    places = [st.container() for _ in charts] if stacked else st.columns(len(charts)) if charts else []
    for place, one in zip(places, charts):
        with place:
            chart(one)


@st.cache_data(show_spinner=False, max_entries=256)
def _spec(key: tuple, _build) -> dict | list[dict]:
    built = _build()
    return [panel.to_dict() for panel in built] if isinstance(built, list) else built.to_dict()


def cached_spec(key: tuple, build) -> dict | list[dict]:
    """The Vega-Lite spec of build() (an Altair chart from vitcore.app.charts, or a list of panels), cached under `key`
    + the store's state: Altair's schema validation costs a tenth of a second or more per chart on every rerun,
    and the first paint must not wait for it. build() runs only when the spec is not cached: what only the chart
    needs (its table, its title) belongs inside it."""
    return _spec((*key, state.STORE_PATH, state.store_mtime()), build)


def cached_chart(key: tuple, build, width: str = "stretch") -> None:
    """One chart (cached_spec), or a figure's panels side by side (stacked on a phone: side_by_side)."""
    built = cached_spec(key, build)
    if isinstance(built, list):
        side_by_side(built)
    elif width == "stretch":
        chart(built)
    else:
        st.vega_lite_chart(spec=built, width=width)


# A figure's panels on any screen: each panel its own chart at its container's width
# (vitcore.app.layout draws them side by side, or stacked on a phone), its title wrapped, rows named by
# text above them rather than by axis labels that would take half of a 400-px screen. No Streamlit.

PANEL_TITLE = 40  # a title's characters per line: a 400-px screen holds ~45 of its bold 13 px
EFFECT_ROW = 40  # px per effect: its name on a line of its own, then the dot and intervals under it


def panel_title(title: str, panel: str | None = None) -> alt.Title:
    """A panel's heading, wrapped for a 400-px screen (a chart never wraps its own title): the figure's
    title, then the panel's name ('1,000 rows') as its subtitle."""
    return alt.Title(textwrap.wrap(title, PANEL_TITLE), anchor="start", **({"subtitle": panel} if panel else {}))


def panel_order(frame: pd.DataFrame, column: str = "rows") -> list[str]:
    """The panels of a chart split by training size ('1,000 rows', ...), smallest first."""
    return sorted(frame[column].unique(), key=lambda s: int(str(s).split()[0].replace(",", "")))


def effect_rows(base: alt.Chart, field: str = "effect") -> tuple[alt.Y, alt.Chart]:
    """Rows named by a line of text above each row's marks (cut to the chart's width), not by axis labels
    that would take half of a 400-px screen: (the y encoding, the text layer). Marks go at yOffset 8."""
    y = alt.Y(f"{field}:N", title=None, sort=None, axis=None, scale=alt.Scale(paddingInner=0, paddingOuter=0))
    names = base.mark_text(align="left", baseline="middle", fontSize=12, dy=-10, color="#1f2430",
                           limit=alt.ExprRef(expr="width")).encode(x=alt.value(0), y=y, text=f"{field}:N")
    return y, names
