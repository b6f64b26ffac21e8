"""The Runs page's filtered downloads, cached until the store changes: the CLI's CSVs restricted to the shown
runs (vitcore.app.runs.runs_view.filtered_csv)."""

from __future__ import annotations

import streamlit as st

from vitcore.app import state
from vitcore.app.runs.runs_view import filtered_csv
from vitcore.config.run import RunConfig
from vitcore.stats.estimates import MARGIN


@st.cache_data(show_spinner="Preparing the download…", max_entries=16)
def _filtered_csv(name: str, run_ids: tuple[str, ...], margin: float, base: RunConfig | None, path: str,
                  mtime: str) -> bytes:
    study = state.study()
    runs = study.runs
    frames = {} if name == "effects.csv" else study.export_frames()
    return filtered_csv(name, frames, runs[runs["run_id"].isin(set(run_ids))], study, margin, base)


def filtered_export_csv(name: str, run_ids, margin: float = MARGIN, base: RunConfig | None = None) -> bytes:
    """One of the Runs page's downloads restricted to these runs (vitcore.app.runs.runs_view.filtered_csv);
    effects.csv judged at `margin` (the sidebar's), around `base` (state.effects_centre) when given."""
    if name not in state.EXPORTS:
        raise ValueError(f"unknown export {name!r}; exports: {', '.join(state.EXPORTS)}")
    effects = name == "effects.csv"  # one cached file per margin and centre only where they matter
    return _filtered_csv(name, tuple(sorted(run_ids)), margin if effects else MARGIN, base if effects else None,
                         state.STORE_PATH, state.store_mtime())
