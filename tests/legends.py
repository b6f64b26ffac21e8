"""Read an Altair chart's legends from its Vega-Lite spec (chart.to_dict()), with the values each view draws.

`legends(chart)` returns one Key per legend-carrying channel of every view: the field, the scale's domain and
range as the spec fixes them, the legend's properties and the values of that field in the view's data (after
a constant `calculate`), so a test can say "the legend lists exactly what is drawn, one colour per entry".
`conflicts(chart)` names the fields that one channel shows in a legend while another channel of the same view
hides it with legend=None on a shared scale: Vega-Lite merges the two legends and, with "Conflicting legend
property disable", may draw neither.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

LEGEND_CHANNELS = ("color", "fill", "stroke", "shape", "strokeDash", "opacity", "size")
COLOUR_CHANNELS = ("color", "fill", "stroke")


@dataclass
class Key:
    channel: str
    field: str
    domain: list | None
    range: list | None
    legend: dict | None  # None: legend=None (no legend)
    drawn: set = field(default_factory=set)
    mark: dict = field(default_factory=dict)
    encoding: dict = field(default_factory=dict)  # every channel of its view


def _mark(view: dict) -> dict:
    mark = view.get("mark", {})
    return {"type": mark} if isinstance(mark, str) else mark


def _values(spec: dict, data: dict | None, transforms: list, name: str) -> set:
    """The values of `name` in a view's data: its dataset's column, or a constant calculate's result."""
    for transform in transforms:
        if transform.get("as") == name and "calculate" in transform:
            constant = re.fullmatch(r"'(.*)'", transform["calculate"])
            return {constant.group(1)} if constant else set()
    if not data:
        return set()
    rows = spec.get("datasets", {}).get(data.get("name"), data.get("values", []))
    return {row.get(name) for row in rows if name in row}


def _walk(spec: dict, view: dict, data, transforms, keys: list, views: list) -> None:
    data = view.get("data", data)
    transforms = [*transforms, *view.get("transform", [])]
    for part in ("layer", "hconcat", "vconcat", "concat"):
        for child in view.get(part, []):
            _walk(spec, child, data, transforms, keys, views)
    if "mark" not in view:
        return
    found = []
    for channel, encoding in view.get("encoding", {}).items():
        if channel not in LEGEND_CHANNELS:
            continue
        encoding = encoding.get("condition", encoding) if "field" not in encoding else encoding
        if not isinstance(encoding, dict) or "field" not in encoding:
            continue
        scale = encoding.get("scale", {})
        found.append(Key(channel, encoding["field"], scale.get("domain"), scale.get("range"),
                         None if "legend" in encoding and encoding["legend"] is None else encoding.get("legend", {}),
                         _values(spec, data, transforms, encoding["field"]), _mark(view),
                         view.get("encoding", {})))
    keys += found
    views.append(found)


def legends(chart) -> list[Key]:
    """Every legend-carrying channel of every view of `chart` (an Altair chart or a list of them)."""
    keys: list[Key] = []
    for one in chart if isinstance(chart, list) else [chart]:
        spec = one.to_dict()
        _walk(spec, spec, None, [], keys, [])
    return keys


def conflicts(chart) -> list[str]:
    """Fields shown in a legend by one channel and hidden (legend=None) by another on a shared scale."""
    found = []
    for one in chart if isinstance(chart, list) else [chart]:
        spec = one.to_dict()
        scales = spec.get("resolve", {}).get("scale", {})
        independent = {channel for channel, how in scales.items() if how == "independent"}
        keys: list[Key] = []
        _walk(spec, spec, None, [], keys, [])
        for key in keys:
            if key.legend is None and key.channel not in independent and any(
                    other.field == key.field and other.legend is not None and other.channel != key.channel
                    for other in keys):
                found.append(f"{key.field} ({key.channel} has no legend, another channel has one)")
    return found


def check(chart, expected: dict[str, list] | None = None) -> list[Key]:
    """Assert every legend of `chart` is true: each shown legend's domain is exactly the values its view draws,
    one distinct colour per entry (domain and range of equal length), a shape legend draws visible markers, no
    legend is merged away; `expected` {field: entries}: the legend of that field lists exactly these, in order.
    Returns the shown legends' keys."""
    assert not conflicts(chart), conflicts(chart)
    shown, drawn = [], {}
    for one in chart if isinstance(chart, list) else [chart]:  # a layered chart's views share their scales
        keys = legends(one)
        for key in keys:
            drawn.setdefault((id(one), key.field), set()).update(key.drawn)
        shown += [(one, key) for key in keys if key.legend is not None]
    for one, key in shown:
        key.drawn = drawn[(id(one), key.field)]
        if key.domain is not None and all(isinstance(value, str) for value in key.domain):
            assert set(key.domain) == key.drawn, (key.channel, key.field, key.domain, key.drawn)
            if key.channel in COLOUR_CHANNELS and key.range is not None:
                assert len(key.range) == len(key.domain), (key.field, key.domain, key.range)
                assert len(set(map(str, key.range))) == len(key.range), (key.field, key.range)
        if key.channel == "shape":  # what Vega-Lite draws a shape key's symbols with (checked in Chromium)
            assert "condition" not in key.encoding.get("fill", {}), \
                f"{key.field}: beside a conditional fill, Vega-Lite strokes the shape key's symbols transparent"
            coloured = (key.mark.get("filled") or key.mark.get("color") or key.mark.get("stroke")
                        or "color" in key.encoding)
            assert coloured or key.legend.get("symbolStrokeColor"), f"{key.field}: hollow key symbols with no colour"
    shown = [key for _, key in shown]
    for name, entries in (expected or {}).items():  # no explicit domain: the values drawn are the entries
        domains = {tuple(key.domain) if key.domain is not None else tuple(sorted(key.drawn)) for key in shown
                   if key.field == name}
        assert domains == {tuple(entries)}, (name, domains, entries)
    return shown
