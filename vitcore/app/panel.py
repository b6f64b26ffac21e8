"""A figure's panels on any screen: each panel its own chart at its container's width
(vitcore.app.layout draws them side by side, or stacked on a phone), its title wrapped, rows named by
text above them rather than by axis labels that would take half of a 400-px screen. No Streamlit."""

from __future__ import annotations

import textwrap

import altair as alt
import pandas as pd

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
