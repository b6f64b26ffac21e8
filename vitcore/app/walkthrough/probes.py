"""Cached model probes for the Attention page: forward passes of a stored run's weights.

The model is the NumPy ViT (vitcore.model.numpy_vit, reading the run's `.weights.h5` with h5py), so no
page imports TensorFlow. Models are cached as resources (one per config and weights file), their
outputs as data.
"""

from __future__ import annotations

import streamlit as st

from vitcore.analysis import attention as A
from vitcore.app.state import load_gallery, load_runs, store
from vitcore.config.run import RunConfig
from vitcore.store.runs import BadRun

CONTROL_SEED = 0  # the random-init control's NumPy seed

SCAN_ROWS = 1_000      # test rows scanned for the most confident right and wrong predictions
PERMUTED_ROWS = 200    # images fed shuffled in the permutation test


def stored_weights(cfg: RunConfig) -> tuple[RunConfig, str] | None:
    """(the stored run's config, its weights path) for the sidebar's cfg (attention.find_weighted_run),
    or None when no stored seed-0 run of it kept weights."""
    run_id = A.find_weighted_run(load_runs(), cfg)
    try:
        run = store().load(run_id) if run_id else None
    except BadRun:
        return None
    return (run.config, str(run.weights_path)) if run and run.weights_path else None


@st.cache_resource(show_spinner="Loading the weights…", max_entries=6)
def attention_model(cfg: RunConfig, weights: str | None, init_seed: int = CONTROL_SEED):
    """The NumPy ViT of cfg (outputs: probs, then every block's scores); weights None: a random-init
    control drawn as Keras initialises the model."""
    return A.numpy_model(cfg, weights, init_seed)


@st.cache_data(show_spinner="Running the model…", max_entries=32)
def forward(cfg: RunConfig, weights: str | None, rows: tuple[int, ...]) -> A.Forward:
    """Probabilities and per-block attention scores of these test rows (weights None: random init)."""
    return A.forward(attention_model(cfg, weights), cfg, load_gallery().images_of(rows))


@st.cache_data(show_spinner="Scanning test rows…", max_entries=16)
def predictions(cfg: RunConfig, weights: str, rows: tuple[int, ...]) -> A.Forward:
    """Probabilities only (no attention scores kept) of many test rows: the page's scan."""
    return A.forward(attention_model(cfg, weights), cfg, load_gallery().images_of(rows), keep_scores=False)


@st.cache_data(show_spinner="Shuffling patches…", max_entries=16)
def permutation(cfg: RunConfig, weights: str, rows: int) -> A.PermutationResult:
    """attention.permutation_test on the first `rows` test images, one fixed shuffle."""
    return A.permutation_test(attention_model(cfg, weights), cfg, load_gallery().images[:rows], seed=1)
