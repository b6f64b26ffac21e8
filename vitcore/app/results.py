"""Library results for the ViT vs convnet and Claims pages: the headline and the data-size curve
(vitcore.article.report, vitcore.analysis.scaling) and the claims ledger (vitcore.article.claims), from the
store's one Study (vitcore.app.state.study), which computes each once per store state and margin, so a new
run shows on the next rerun. No TensorFlow.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from vitcore.app import state
from vitcore.stats.estimates import MARGIN


def headline(margin: float = MARGIN) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """(report.headline, report.headline_deltas, report.headline_sentences) of the store at this margin."""
    return state.study().headline(margin)


def data_size(margin: float = MARGIN) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    """The data-size curve: (scaling.curve, scaling.deltas, the crossover estimate's sentence and
    scaling.crossover's) of the store."""
    return state.study().data_size(margin)


def crossover_shift() -> str:
    """Does the papers' small-data variant move the crossover with the convnet? (scaling.variant_sentence)"""
    with st.spinner("Resampling random seeds…"):
        return state.study().crossover_shift()


def claims(margin: float = MARGIN) -> pd.DataFrame:
    """vitcore.article.claims.claims_table of the store at this margin (what `python -m vitcore claims` writes)."""
    return state.study().claims(margin)


def claims_tally() -> pd.DataFrame:
    """vitcore.article.claims.tally of the store at the margins 0.005, 0.01 and 0.02 (what `claims` prints)."""
    return state.study().tally()
