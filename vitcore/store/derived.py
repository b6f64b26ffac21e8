"""Derived metrics (vitcore.config.metrics: a function of a run file, e.g. macro-F1 of confusion.csv), computed
once per run and cached in the store's index beside the run's stamp, so a warm `RunStore.table()` reads no
file more than it reads without them.

A valid run's verdict in the index (vitcore.store.index) is `[stamp, None, {key: value}]` while the registry
has derived metrics: each value keyed by `key(name)`, the name and a digest of its function's code, so a
changed formula is computed again rather than read back stale. A value that is not a finite number (a
function's NaN) is cached as None and read back as NaN.
"""

from __future__ import annotations

import hashlib
import math
from functools import cache
from pathlib import Path

import pandas as pd

from vitcore.config.metrics import DERIVED, METRIC
from vitcore.config.run import RunConfig
from vitcore.store import files, validate


@cache
def key(name: str) -> str:
    """'macro_f1@3f2a…': the metric's name and a digest of its function's code (bytecode, constants, names)."""
    code = METRIC[name].derive.__code__
    digest = hashlib.sha256(repr((code.co_code, code.co_consts, code.co_names)).encode()).hexdigest()[:12]
    return f"{name}@{digest}"


def parse(source: str, folder: Path, config: RunConfig):
    """A run file as a derived metric's function receives it: confusion.csv as (10, 10) int64 counts (row =
    true class), history.csv as a DataFrame of HISTORY_COLUMNS (one row per epoch)."""
    text = files.text(folder, source)
    if source == "confusion.csv":
        return validate.parse_confusion(text)
    return pd.DataFrame(validate.parse_history(text, config), columns=validate.HISTORY_COLUMNS)


def compute(name: str, parsed) -> float:
    """One derived metric's value from its parsed source file."""
    return float(METRIC[name].derive(parsed))


def values(folder: Path, config: RunConfig, cached: dict | None = None, confusion=None) -> dict[str, float]:
    """{name: value} of every derived metric of the run in `folder`: read from `cached` (the index's {key:
    value}) where it holds the metric's key, else computed from the run's file (`confusion`: already parsed)."""
    out, parsed = {}, {} if confusion is None else {"confusion.csv": confusion}
    for name in DERIVED:
        if cached is not None and key(name) in cached:
            value = cached[key(name)]
            out[name] = math.nan if value is None else float(value)
            continue
        source = METRIC[name].source
        if source not in parsed:
            parsed[source] = parse(source, folder, config)
        out[name] = compute(name, parsed[source])
    return out


def cached(found: dict[str, float]) -> dict[str, float | None]:
    """The index's form of `values`: {key: value}, None for a value that is not finite (JSON has no NaN)."""
    return {key(name): value if math.isfinite(value) else None for name, value in found.items()}


def well_formed(entry) -> bool:
    """A derived-values entry as `cached` writes it: {str: number or None}."""
    return isinstance(entry, dict) and all(
        isinstance(k, str) and (v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)))
        for k, v in entry.items())
