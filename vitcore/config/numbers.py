"""How every number is printed, in one place: the app (vitcore.app.fmt builds on it), the reports
(vitcore.article.report) and the command line.

The rule: accuracies, gaps, losses and their Δs with 4 decimals; seconds to 0.1 s; parameter counts whole;
thousands separators always ('4,000', '1,234.5 s'); a Δ and an interval signed ('+0.0123',
'[-8.5, +0.6]'); a gap always signed (it is a difference); '—' for a number that does not exist.
"""

from __future__ import annotations

import math

DIGITS = {"seconds": 1, "params": 0, "macs_per_image": 0}  # decimals shown; accuracies, gaps, losses and their Δs get 4
SIGNED = {"gap"}                      # a gap is a difference: always printed with its sign
MISSING = "—"


def digits(metric: str) -> int:
    """Decimals shown for a metric: 1 for seconds, 0 for parameter counts, 4 otherwise."""
    return DIGITS.get(metric, 4)


def missing(value) -> bool:
    """None or NaN (a std over one seed, a CI over one pair, a number the source article does not give)."""
    if value is None:
        return True
    try:
        return math.isnan(value)
    except TypeError:
        return False


def number(value, places: int = 4, signed: bool = False) -> str:
    """'0.7915', '+0.0123' (signed), '71,946' (0 places), '1,234.5'; '—' when missing."""
    if missing(value):
        return MISSING
    return f"{value:{'+' if signed else ''},.{places}f}"


def metric(value, name: str, signed: bool | None = None) -> str:
    """A metric's value with its own decimals (and sign, for a gap)."""
    return number(value, digits(name), name in SIGNED if signed is None else signed)


def delta(value, places: int = 4) -> str:
    """A difference: always signed, '+0.0123'."""
    return number(value, places, signed=True)


def ci(low: float, high: float, places: int = 4, none: str = "no CI") -> str:
    """A 95% interval as '[-0.0100, +0.0200]'; `none` when there is none (a single pair)."""
    if missing(low) or missing(high):
        return none
    return f"[{number(low, places, True)}, {number(high, places, True)}]"
