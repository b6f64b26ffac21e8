"""Derived metrics (vitcore.config.metrics: a function of a run file, e.g. macro-F1 of predictions.npy), computed
once per run and cached in the store's index beside the run's stamp, so a warm `RunStore.table()` reads no
file more than it reads without them.

PARSERS is the one table of what a derived metric may read: {run file: its parser}, each parser a function of
the file's bytes (read bounded, never through a link: vitcore.store.files) and the run's config, raising
BadRun for a file that is not what a valid run holds. The store reads a run's files through it, and so do the
test fakes (tests/fakes.py), so a new source is one entry here (and its name in RUN_FILES, which the registry
checks its entries against). A run that keeps no such file (predictions.npy of a run trained before
predictions were kept) gets NaN for the metrics of it. A metric of predictions.npy receives `Predictions`:
the predicted classes and the official test labels beside them (the shipped copy, the verdicts' labels), so a
metric that needs the labels (macro-F1, a per-class recall) imports nothing from vitcore.data: the store, a
layer above the data, hands them in.

A valid run's verdict in the index (vitcore.store.index) is `[stamp, None, {key: value}]` while the registry
has derived metrics: each value keyed by `key(name)`, the name and a digest of its function's code, so a
changed formula is computed again rather than read back stale. A value that is not a finite number (a
function's NaN, or a run without the file) is cached as None and read back as NaN.
"""

from __future__ import annotations

import hashlib
import math
import os
from functools import cache
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from vitcore.config import metrics
from vitcore.config.metrics import RUN_FILES
from vitcore.config.run import RunConfig
from vitcore.data.fashion import NUM_CLASSES, DataError, shipped_test_labels
from vitcore.store import files, validate
from vitcore.store.files import PREDICTIONS, BadRun


def confusion(data: bytes, config: RunConfig) -> np.ndarray:
    """confusion.csv as (10, 10) int64 counts, row = true class."""
    return validate.parse_confusion(files.decoded(data, "confusion.csv"))


def history(data: bytes, config: RunConfig) -> pd.DataFrame:
    """history.csv as a DataFrame of HISTORY_COLUMNS, one row per epoch of the config."""
    rows = validate.parse_history(files.decoded(data, "history.csv"), config)
    return pd.DataFrame(rows, columns=validate.HISTORY_COLUMNS)


class Predictions(NamedTuple):
    """What a metric of predictions.npy receives: `f1_score(run.labels, run.predicted, average="macro")`."""
    predicted: np.ndarray  # (10,000,) uint8: the run's predicted class of each official test image, in their order
    labels: np.ndarray     # (10,000,) uint8: the official test labels, same order (the shipped copy, read-only)


def with_labels(predicted: np.ndarray | None) -> Predictions | None:
    """A run's predicted classes with the official test labels beside them, as a metric of predictions.npy
    receives them; None (its metrics NaN) for a run without predictions, or an install whose shipped labels
    are damaged (the index's data stamp names that file, so its values are computed again once it is mended)."""
    if predicted is None:
        return None
    try:
        return Predictions(predicted, shipped_test_labels())
    except DataError:
        return None


def predictions(data: bytes, config: RunConfig) -> Predictions | None:
    """predictions.npy as Predictions: the (10,000,) uint8 predicted classes of the official test images and
    their labels (the header checked before any array is made: a file claiming 10^12 rows is BadRun, not an
    allocation)."""
    values = files.predictions_array(data)
    if values.max() >= NUM_CLASSES:
        raise BadRun(f"{PREDICTIONS}: class {values.max()} outside 0-{NUM_CLASSES - 1}")
    return with_labels(values)


PARSERS = {"confusion.csv": confusion, "history.csv": history, PREDICTIONS: predictions}
if set(PARSERS) != set(RUN_FILES):
    raise ValueError(f"vitcore.store.derived.PARSERS reads {', '.join(PARSERS)}; the metric registry's RUN_FILES "
                     f"are {', '.join(RUN_FILES)}: one parser for each")


@cache
def key(name: str) -> str:
    """'macro_f1@3f2a…': the metric's name and a digest of its function's code (bytecode, constants, names)."""
    code = metrics.METRIC[name].derive.__code__
    digest = hashlib.sha256(repr((code.co_code, code.co_consts, code.co_names)).encode()).hexdigest()[:12]
    return f"{name}@{digest}"


def parse(source: str, folder: Path, config: RunConfig):
    """A run file as a derived metric's function receives it (PARSERS), or None when the run keeps no such
    file; BadRun naming the file when it cannot be read or is not what a valid run holds."""
    if not os.path.lexists(os.path.join(folder, source)):
        return None
    return PARSERS[source](files.read(folder, source), config)


def compute(name: str, parsed) -> float:
    """One derived metric's value from its parsed source file (NaN when the run keeps no such file)."""
    return math.nan if parsed is None else float(metrics.METRIC[name].derive(parsed))


def values(folder: Path, config: RunConfig, cached: dict | None = None, parsed: dict | None = None) -> dict[str, float]:
    """{name: value} of every derived metric of the run in `folder`: read from `cached` (the index's {key:
    value}) where it holds the metric's key, else computed from the run's file (`parsed`: {source: what its
    parser gave} for the files the validation already read, None for one the run does not keep)."""
    out, parsed = {}, dict(parsed or {})
    for name in metrics.DERIVED:
        if cached is not None and key(name) in cached:
            value = cached[key(name)]
            out[name] = math.nan if value is None else float(value)
            continue
        source = metrics.METRIC[name].source
        if source not in parsed:
            parsed[source] = parse(source, folder, config)
        out[name] = compute(name, parsed[source])
    return out


def from_bytes(run_files: dict[str, bytes], config: RunConfig) -> dict[str, float]:
    """{name: value} of every derived metric of a run whose files are `run_files` ({name: bytes}, as
    vitcore.store.writer.render gives them): what the store would compute once they were stored."""
    parsed = {}
    for source in {metrics.METRIC[name].source for name in metrics.DERIVED}:
        parsed[source] = PARSERS[source](run_files[source], config) if source in run_files else None
    return {name: compute(name, parsed[metrics.METRIC[name].source]) for name in metrics.DERIVED}


def cached(found: dict[str, float]) -> dict[str, float | None]:
    """The index's form of `values`: {key: value}, None for a value that is not finite (JSON has no NaN)."""
    return {key(name): value if math.isfinite(value) else None for name, value in found.items()}


def well_formed(entry) -> bool:
    """A derived-values entry as `cached` writes it: {str: number or None}."""
    return isinstance(entry, dict) and all(
        isinstance(k, str) and (v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)))
        for k, v in entry.items())
