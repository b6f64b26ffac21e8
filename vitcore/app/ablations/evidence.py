"""The Ablations page's evidence behind an effect, cached until the store changes: the per-cell effects
(vitcore.stats.percell) and the flipped images against random-seed noise (vitcore.analysis.flips)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from vitcore.app import state
from vitcore.config.run import RunConfig


def cell_effects(metric: str, interactions: bool = False, cells: str = "", base: RunConfig | None = None
                 ) -> pd.DataFrame:
    """vitcore.stats.percell.cell_effects of one metric: each effect in each cell of the other switches (around
    `base`, state.effects_centre, when given)."""
    return state.study().cell_effects((metric,), interactions, cells, base)


def flipped_images(cfg: RunConfig, base: RunConfig):
    """vitcore.analysis.flips.flip_report of the pairs that kept predictions (a FlipReport), or None when
    the package's copy of the test labels is damaged."""
    with st.spinner("Comparing the runs' per-image predictions…"):
        return state.study().flip_report(cfg, base)
