"""The Ablations page's evidence behind an effect, cached until the store changes: the per-cell effects
(vitcore.stats.percell) and the flipped images against random-seed noise (vitcore.analysis.flips)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from vitcore.app import state
from vitcore.config.run import RunConfig


@st.cache_data(show_spinner=False, max_entries=64)
def _cells(metric: str, interactions: bool, cells: str, path: str, mtime: float) -> pd.DataFrame:
    from vitcore.stats import percell

    return percell.cell_effects(percell.restrict(state._table(path, mtime), cells or percell.ALL), (metric,), interactions)


def cell_effects(metric: str, interactions: bool = False, cells: str = "") -> pd.DataFrame:
    """vitcore.stats.percell.cell_effects of one metric: each effect in each cell of the other switches."""
    return _cells(metric, interactions, cells, state.STORE_PATH, state.store_mtime())


@st.cache_data(show_spinner="Comparing the runs' per-image predictions…", max_entries=8)  # ~0.9 MB each
def _flipped(cfg: RunConfig, base: RunConfig, path: str, mtime: float):
    from vitcore.analysis import flips
    from vitcore.stats import summaries as stats

    tests = state.test_set()
    if tests is None:
        return None
    runs = state._table(path, mtime)
    kept = runs[runs["has_predictions"]] if "has_predictions" in runs.columns else runs
    paired = flips.paired_predictions(tests.predictions, stats.runs_of(kept, cfg), stats.runs_of(kept, base))
    return flips.flip_report(paired, tests.labels)


def flipped_images(cfg: RunConfig, base: RunConfig):
    """vitcore.analysis.flips.flip_report of the pairs that kept predictions (a FlipReport), or None when
    the package's copy of the test labels is damaged."""
    return _flipped(cfg, base, state.STORE_PATH, state.store_mtime())


