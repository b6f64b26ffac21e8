"""How the app prints numbers, in one place: every page, chart and table imports it. The rule itself
(decimals per metric, separators, signs) is vitcore.config.numbers, shared with the CLI and the reports.

A seed mean is '0.7915 ± 0.0040' everywhere, a Δ is '+0.0123', an interval '[-0.0100, +0.0200]',
a row count '4,000'. Metric titles and decimals live here too, as do the colours (selection blue,
baseline grey, orange guides). Plain strings, no Streamlit: tests/test_app_fmt.py checks them.
"""

from __future__ import annotations

from dataclasses import dataclass

from vitcore.config.metrics import REGISTRY
from vitcore.config.metrics import metric as metric_entry
from vitcore.config.numbers import (  # noqa: F401
    DIGITS,
    MISSING,
    SIGNED,
    ci,
    delta,
    digits,
    metric,
    missing,
    number,
    p_value,
    percent,
    rounded,
)
from vitcore.study import words as w

TITLES = {m.name: m.title for m in REGISTRY}  # the metric registry's (vitcore.config.metrics)
SELECTION, BASELINE = "#3b5bdb", "#868e96"  # every chart: the selection blue, the baseline grey
GUIDE = "#e8590c"  # orange: reference lines (uniform 1/N) and the patch grid


def title(name: str) -> str:
    """A metric's title: 'Test accuracy' (ValueError for a name the metric registry does not know)."""
    return metric_entry(name).title


def mean_sd(mean: float, std: float, places: int = 4) -> str:
    """A seed mean: '0.7915 ± 0.0040' ('0.7915' when the std is missing: one random seed)."""
    if missing(std):
        return number(mean, places)
    return f"{number(mean, places)} ± {number(std, places)}"


def seeds_cell(mean: float, std: float, n: int, places: int = 4, signed: bool = False) -> str:
    """A table cell over n random seeds: 'not run', '0.7160 (1 seed)', '71,946' (no spread) or
    '0.7970 ± 0.0040'."""
    if n == 0 or missing(mean):
        return "not run"
    text = number(mean, places, signed)
    if n == 1:
        return text + " (1 seed)"
    return text if missing(std) or std == 0 else f"{text} ± {std:,.{places}f}"


def spread(std: float, n: int, places: int = 4) -> str:
    """Under a metric card: '± 0.0040 sd over 3 seeds', or 'one seed'."""
    return "one seed" if n < 2 or missing(std) else f"± {number(std, places)} sd over {n} seeds"


def rows(count: int) -> str:
    """Thousands separators: 4000 -> '4,000'."""
    return f"{int(count):,}"


def minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f} min"


def duration(seconds: float) -> str:
    """A wall time as a person says it: '40 s' under 90 s, else '2.5 min'."""
    return f"{number(seconds, 0)} s" if seconds < 90 else f"{number(seconds / 60, 1)} min"


def times(ratio: float, places: int = 1) -> str:
    """A ratio: '4.0×'."""
    return f"{ratio:,.{places}f}×"


def printf(name: str, signed: bool | None = None) -> str:
    """The same format for st.column_config.NumberColumn: '%.4f', '%+.4f', '%.1f' or 'localized'."""
    places = digits(name)
    if places == 0:
        return "localized"
    sign = "+" if (metric_entry(name).signed if signed is None else signed) else ""
    return f"%{sign}.{places}f"


def demote_headings(markdown: str, levels: int = 1) -> str:
    """Markdown from the library (a report) shown inside a page: '# x' -> '## x', below the page title."""
    return "\n".join("#" * levels + line if line.startswith("#") else line for line in markdown.splitlines())


# -- Δ colours: on every Δ chart blue = more, red = less (of the metric or the rate) ----------
MORE, LESS, ZERO = "#2166ac", "#b2182b", "#f7f7f7"
NO_EFFECT, PALE = "#495057", "#adb5bd"  # equivalent (resolved: no effect) / inconclusive and the rest
GOOD, GOOD_PALE, BAD, BAD_PALE = "#1a9850", "#91cf60", "#d73027", "#fc8d59"  # better / worse (pale: "slightly")


@dataclass(frozen=True)
class Colour:
    """One verdict's colour, in the two forms the app draws it: `chart` on every Δ chart (charts.verdict_scale) and
    `badge`, the named colour of a card's Streamlit badge (badges take only names: the nearest one)."""
    chart: str
    badge: str


# The one map of verdict colours (the colour rule, charts.COLOUR_RULE): green better, red worse (lighter: slightly),
# neutral blue / violet for higher / lower where no direction is better, grey for equivalent and the unresolved (a
# card's inconclusive badge orange: it still needs random seeds).
VERDICT_COLOURS = {
    w.BETTER: Colour(GOOD, "green"), w.SLIGHTLY_BETTER: Colour(GOOD_PALE, "green"),
    w.WORSE: Colour(BAD, "red"), w.SLIGHTLY_WORSE: Colour(BAD_PALE, "red"),
    w.HIGHER: Colour(MORE, "blue"), w.SLIGHTLY_HIGHER: Colour(MORE, "blue"),
    w.LOWER: Colour("#7b3294", "violet"), w.SLIGHTLY_LOWER: Colour("#7b3294", "violet"),
    w.EQUIVALENT: Colour(NO_EFFECT, "gray"), w.INCONCLUSIVE: Colour(PALE, "orange"),
    w.TOO_FEW: Colour(PALE, "gray"), w.NOT_COMPARABLE: Colour(PALE, "gray")}
# One fixed, symmetric colour scale per Δ heatmap, the same in every view (values beyond are clipped
# to the end colour; the cell text still prints them).
DELTA_LIMITS = {"confusion rate": 0.2}


def axis_format(name: str, signed: bool = True) -> str:
    """A d3 format for a chart axis or tooltip of this metric: '+.3f' (Δ of accuracy), '+.1f' (seconds)."""
    return f"{'+' if signed else ''}.{min(digits(name), 3)}f"


MARKDOWN = str.maketrans({c: "\\" + c for c in "\\`*_[]#!|<>~$:"})  # links, images, code, emphasis, HTML, math


def plain(text: str) -> str:
    """Text from the disk (a file's name, a plan's problem) as Streamlit markdown shows it literally: control characters
    as their escapes, the characters that draw links, images, code, emphasis, HTML, math or emoji escaped."""
    shown = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in str(text))
    return shown.translate(MARKDOWN)
