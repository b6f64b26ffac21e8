"""Cached store reads for the Streamlit pages (one place, so every page shares one cache).

No TensorFlow here. `store_mtime` is part of every cache key, so a run trained from the app
(or a new sweep result) is picked up on the next rerun without clearing caches by hand.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import pandas as pd
import streamlit as st

from vitcore.config import RunConfig
from vitcore.store import RunStore

STORE_PATH = os.environ.get("VITCORE_STORE", str(Path(__file__).resolve().parents[1] / "cached_runs"))
# Sidebar widget keys (set in streamlit_app.py) -> RunConfig fields.
SIDEBAR_KEYS = ("model", "pos_embedding", "norm_placement", "norm", "patch_size", "train_rows", "warmup_epochs")


def store() -> RunStore:
    return RunStore(STORE_PATH)


def store_mtime() -> float:
    """Changes whenever a run folder is added or removed (renames touch the store folder)."""
    try:
        return os.stat(STORE_PATH).st_mtime_ns
    except FileNotFoundError:
        return 0


@st.cache_data(show_spinner=False)
def runs_table(path: str = STORE_PATH, mtime: float | None = None) -> pd.DataFrame:
    return RunStore(path).table()


@st.cache_data(show_spinner=False)
def histories(path: str = STORE_PATH, mtime: float | None = None) -> pd.DataFrame:
    return RunStore(path).histories()


@st.cache_data(show_spinner=False)
def confusions(path: str = STORE_PATH, mtime: float | None = None) -> pd.DataFrame:
    return RunStore(path).confusions()


def load_runs() -> pd.DataFrame:
    return runs_table(STORE_PATH, store_mtime())


def load_histories() -> pd.DataFrame:
    return histories(STORE_PATH, store_mtime())


def load_confusions() -> pd.DataFrame:
    return confusions(STORE_PATH, store_mtime())


def config_from_state(state: Mapping, seed: int = 0) -> RunConfig:
    """The RunConfig the sidebar selects (other fields at the seed's defaults)."""
    values = {key: state[key] for key in SIDEBAR_KEYS if key in state and state[key] is not None}
    return RunConfig(seed=seed, **values)
