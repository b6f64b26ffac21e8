"""The Runs page's filtered downloads, cached until the store changes: the CLI's CSVs restricted to the shown
runs (vitcore.app.runs.runs_view.filtered_csv)."""

from __future__ import annotations

import streamlit as st

from vitcore.app import state
from vitcore.app.runs.runs_view import filtered_csv
from vitcore.stats.estimates import MARGIN


@st.cache_data(show_spinner="Preparing the download…", max_entries=16)
def _filtered_csv(name: str, run_ids: tuple[str, ...], margin: float, path: str, mtime: str) -> bytes:
    study = state.study()
    runs = study.runs
    frames = {} if name == "effects.csv" else study.export_frames()
    return filtered_csv(name, frames, runs[runs["run_id"].isin(set(run_ids))], study.test_set, margin)


def filtered_export_csv(name: str, run_ids, margin: float = MARGIN) -> bytes:
    """One of the Runs page's downloads restricted to these runs (vitcore.app.runs.runs_view.filtered_csv);
    effects.csv judged at `margin` (the sidebar's)."""
    if name not in state.EXPORTS:
        raise ValueError(f"unknown export {name!r}; exports: {', '.join(state.EXPORTS)}")
    margin = margin if name == "effects.csv" else MARGIN  # one cached file per margin only where it matters
    return _filtered_csv(name, tuple(sorted(run_ids)), margin, state.STORE_PATH, state.store_mtime())
