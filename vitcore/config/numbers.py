"""How every number is printed, in one place: the app (vitcore.app.fmt builds on it), the reports
(vitcore.article.report) and the command line.

The rule: accuracies, gaps, losses and their Δs with 4 decimals; seconds to 0.1 s; parameter counts whole;
thousands separators always ('4,000', '1,234.5 s'); a Δ and an interval signed ('+0.0123',
'[-8.5, +0.6]'); a gap always signed (it is a difference); '—' for a number that does not exist; a
p-value to three significant digits, '< 0.0001' below that. Rounded once, half away from zero on the
decimal digits (`rounded`), so one number reads the same on every view.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal

import pandas as pd

from vitcore.config.metrics import REGISTRY
from vitcore.config.metrics import metric as _entry

DIGITS = {m.name: m.digits for m in REGISTRY}  # decimals shown (the metric registry's): seconds 1, counts 0, else 4
SIGNED = {m.name for m in REGISTRY if m.signed}  # a gap is a difference: always printed with its sign
MISSING = "—"


def digits(metric: str) -> int:
    """Decimals shown for a metric (the registry's: 1 for seconds, 0 for parameter counts, 4 otherwise);
    ValueError for a name the registry does not know."""
    return _entry(metric).digits


def missing(value) -> bool:
    """None or NaN (a std over one seed, a CI over one pair, a number the source article does not give)."""
    if value is None:
        return True
    try:
        return math.isnan(value)
    except TypeError:
        return False


def rounded(value, places: int = 4) -> Decimal:
    """The value rounded once, half away from zero, on its decimal digits rather than its binary expansion:
    a mean of 0.79185 reads 0.7919 whichever float sum produced it (0.7918499999… or 0.7918500…01), so
    two views of one number never differ in the last digit. Float noise below 1e-12 is dropped first."""
    exact = Decimal(repr(round(float(value), 12)))
    out = exact.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    return out if out != 0 else abs(out)  # no '-0.0000'


def number(value, places: int = 4, signed: bool = False) -> str:
    """'0.7915', '+0.0123' (signed), '71,946' (0 places), '1,234.5'; '—' when missing."""
    if missing(value):
        return MISSING
    return f"{rounded(value, places):{'+' if signed else ''},.{places}f}"


def percent(share) -> str:
    """A share as a whole percentage, '24%', rounded as `rounded` rounds (a share that rounds to zero is '0%', never
    '-0%'); '—' when missing."""
    return MISSING if missing(share) else f"{rounded(100 * share, 0)}%"


P_FLOOR = 1e-4  # a p-value below it reads '< 0.0001', never '0'


def p_value(p) -> str:
    """A p-value: three significant digits ('0.0312', '0.000522'), '< 0.0001' below P_FLOOR, '—' when missing."""
    if missing(p):
        return MISSING
    return f"< {P_FLOOR:.4f}" if p < P_FLOOR else f"{p:.3g}"


def metric(value, name: str, signed: bool | None = None) -> str:
    """A metric's value with its own decimals (and sign, for a gap)."""
    return number(value, digits(name), _entry(name).signed if signed is None else signed)


def delta(value, places: int = 4) -> str:
    """A difference: always signed, '+0.0123'."""
    return number(value, places, signed=True)


def ci(low: float, high: float, places: int = 4, none: str = "no CI") -> str:
    """A 95% interval as '[-0.0100, +0.0200]'; `none` when there is none (a single pair)."""
    if missing(low) or missing(high):
        return none
    return f"[{number(low, places, True)}, {number(high, places, True)}]"


# Columns that count (pairs, random seeds, looks, cells, questions) or name a row count: whole numbers in a CSV
# ('1000', never '1000.0'), whichever float a NaN elsewhere in the column made of them.
COUNT_COLUMNS = frozenset({
    "train_rows", "n_pairs", "n_pairs_with_test", "family_size", "seeds_needed", "seeds_more", "look",
    "looks_planned", "discovery_look", "questions", "decided", "at_cap", "replicated", "contradicted",
    "not_confirmed", "cells_measured", "cells_higher", "cells_lower", "n_seeds", "seed", "data_seed", "init_seed",
    "order_seed", "epochs", "width", "depth", "heads", "mlp_dim", "batch_size", "warmup_epochs", "patch_size"})


def whole_counts(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of `frame` (a pandas DataFrame about to become a CSV) whose COUNT_COLUMNS holding whole numbers as floats
    are pandas' nullable integers: `1000` and an empty cell for a missing one, not `1000.0` and `nan` (an infinite
    count, seeds_needed's "never", stays `inf`). A column with a fraction in it is left as it is, never rounded."""
    out = frame.copy()
    for name in COUNT_COLUMNS.intersection(out.columns):
        column = out[name]
        if pd.api.types.is_float_dtype(column.dtype):
            values = column.dropna()
            finite = values[values.abs() != math.inf]
            if not (finite == finite.round()).all():
                continue
            out[name] = (column.astype("Int64") if len(finite) == len(values) else  # inf ("never") stays 'inf'
                         pd.Series([None if missing(x) else x if math.isinf(x) else int(x) for x in column],
                                   index=column.index, dtype=object))
    return out
