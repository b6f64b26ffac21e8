"""Cached library results for the ViT vs convnet, Claims and Runs pages: the headline and the
data-size curve (vitcore.article.report, vitcore.analysis.scaling) and the claims ledger (vitcore.article.claims),
from the store's one Study (vitcore.app.state.study).

Each is cached per margin (and per run list) and keyed on the store's path and mtime, like every
read in vitcore.app.state, so a new run shows on the next rerun. No TensorFlow.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from vitcore.app import state
from vitcore.stats.estimates import MARGIN


@st.cache_data(show_spinner=False, max_entries=16)
def _headline(margin: float, path: str, mtime: float) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    from vitcore.article import report

    study = state.study()
    return (report.headline(study.runs), study.headline_deltas(margin),
            report.headline_sentences(study.runs, margin, compare=study.compare))


def headline(margin: float = MARGIN) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """(report.headline, report.headline_deltas, report.headline_sentences) of the store at this margin."""
    return _headline(margin, state.STORE_PATH, state.store_mtime())


@st.cache_data(show_spinner=False, max_entries=16)
def _scaling(margin: float, path: str, mtime: float) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    from vitcore.analysis import scaling

    study = state.study()
    runs = study.runs
    deltas = scaling.deltas(runs, margin, compare=study.compare)
    estimate = scaling.crossover_sentence(scaling.crossover_estimate(runs))
    return scaling.curve(runs), deltas, f"{estimate} {scaling.crossover(deltas)}"


def data_size(margin: float = MARGIN) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    """The data-size curve: (scaling.curve, scaling.deltas, the crossover estimate's sentence and
    scaling.crossover's) of the store."""
    return _scaling(margin, state.STORE_PATH, state.store_mtime())


@st.cache_data(show_spinner="Resampling random seeds…", max_entries=4)
def _crossover_shift(path: str, mtime: float) -> str:
    from vitcore.analysis import scaling

    return scaling.variant_sentence(state.load_runs())


def crossover_shift() -> str:
    """Does the papers' small-data variant move the crossover with the convnet? (scaling.variant_sentence)"""
    return _crossover_shift(state.STORE_PATH, state.store_mtime())


def claims(margin: float = MARGIN) -> pd.DataFrame:
    """vitcore.article.claims.claims_table of the store at this margin (what `python -m vitcore claims` writes)."""
    return state.study().claims(margin)


def claims_tally() -> pd.DataFrame:
    """vitcore.article.claims.tally of the store at the margins 0.005, 0.01 and 0.02 (what `claims` prints)."""
    return state.study().tally()
