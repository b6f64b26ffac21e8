"""Cached model probes for the Attention page: forward passes of a stored run's weights.

The model is the NumPy ViT (vitcore.model.numpy_vit, reading the run's `.weights.h5` with h5py), so no
page imports TensorFlow. Models are cached as resources (one per config and weights file); the
attention maps in one SizedLRU of MAPS_MB shared by every session (vitcore.app.memory), one block's
maps per entry (the page shows one block at a time: keeping every block cost depth times the bytes);
the small outputs (the scan's probabilities, the permutation test) as data.

One forward pass runs at a time in the server (PASS): each holds its chunk's temporaries (~16 MB,
numpy_vit.CHUNK), so six visitors opening six attention views cost one pass's memory, not six.
"""

from __future__ import annotations

import functools
import os
import threading
from dataclasses import dataclass

import numpy as np
import streamlit as st

from vitcore.analysis import attention as A  # the probes: readings of one model's attention, not the store's numbers
from vitcore.app import layout
from vitcore.app.charts import weight_bars
from vitcore.app.memory import SizedLRU
from vitcore.app.selection import forget_forged
from vitcore.app.state import load_gallery, load_runs, store
from vitcore.app.walkthrough.pictures import attention_picture
from vitcore.config.run import RunConfig
from vitcore.data.patches import SIDE
from vitcore.data.samples import SEED_ROWS, Gallery
from vitcore.store.runs import BadRun

CONTROL_SEED = 0  # the random-init control's NumPy seed
ROWS_KEY, MAX_ROWS = "attention_rows", 8  # the page's "Test rows" multiselect

SCAN_ROWS = 1_000      # test rows scanned for the most confident right and wrong predictions
PERMUTED_ROWS = 200    # images fed shuffled in the permutation test
MAPS_MB = 24           # attention maps kept: 4 blocks' maps of 8 rows at patch 2 (5 MB each), hundreds at patch 7

MAPS = SizedLRU(MAPS_MB)  # module state: a client's "clear cache" message cannot multiply it
PASS = threading.Lock()   # one NumPy forward pass at a time in this server


def pick_rows(column, scan: tuple[int, ...], defaults: list[int]) -> list[int]:
    """The page's "Test rows" multiselect (at most MAX_ROWS of the scanned rows); a forged value (past the
    limit, or rows not offered) is dropped first, as a forged query string is (selection.forget_forged)."""
    forget_forged(st.session_state, ROWS_KEY, scan, MAX_ROWS)
    return column.multiselect("Test rows", scan, default=defaults, max_selections=MAX_ROWS, key=ROWS_KEY,
                              help="Defaults: the article's rows 0, 1, 11, 12. Confidently right/wrong rows are below.")


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


def _dropped(call):
    """A page's model call; a run whose weights vanished or changed since the store was read (a backfill's
    replace, a hand edit) is dropped for this render with one note, never a traceback."""
    @functools.wraps(call)
    def guarded(*args, **kwargs):
        try:
            return call(*args, **kwargs)
        except (BadRun, OSError):
            st.info("This run's weights changed or vanished while the page was drawn, so this view leaves it out "
                    "(`python -m vitcore check` says why).")
            st.stop()
    return guarded


def _stamp(weights: str | None) -> tuple[int, int] | None:
    """(size, mtime) of a weights file: a file replaced in place is another key."""
    if weights is None:
        return None
    info = os.stat(weights)
    return info.st_size, info.st_mtime_ns


@dataclass(frozen=True)
class BlockMaps:
    """What the page shows of a forward pass: the rows' probabilities and one block's attention scores."""
    probs: np.ndarray   # (rows, 10)
    scores: np.ndarray  # (rows, heads, queries, keys) of that block

    @property
    def predicted(self) -> np.ndarray:
        return self.probs.argmax(axis=1)


@_dropped
def forward(cfg: RunConfig, weights: str | None, rows: tuple[int, ...], block: int) -> BlockMaps:
    """Probabilities and block `block`'s attention scores of these test rows (weights None: random
    init), read-only arrays shared by every session (MAPS)."""
    def compute() -> BlockMaps:
        with st.spinner("Running the model…"), PASS:
            out = A.forward(attention_model(cfg, weights), cfg, load_gallery().images_of(rows))
        return BlockMaps(out.probs, out.scores[block])

    return MAPS.get((cfg, weights, _stamp(weights), rows, block), compute)


@_dropped
@st.cache_data(show_spinner="Scanning test rows…", max_entries=16)
def predictions(cfg: RunConfig, weights: str, rows: tuple[int, ...]) -> A.Forward:
    """Probabilities only (no attention scores kept) of many test rows: the page's scan."""
    with PASS:
        return A.forward(attention_model(cfg, weights), cfg, load_gallery().images_of(rows), keep_scores=False)


@_dropped
@st.cache_data(show_spinner="Shuffling patches…", max_entries=16)
def permutation(cfg: RunConfig, weights: str, rows: int) -> A.PermutationResult:
    """attention.permutation_test on the first `rows` test images, one fixed shuffle."""
    with PASS:
        return A.permutation_test(attention_model(cfg, weights), cfg, load_gallery().head(rows), seed=1)


# The attention page's closing section: the source article's interactive sketch, softmax over the
# content similarity of one image's patches with a temperature. NumPy only, no model.
#
# Its own module because the page draws it on every path (no model, the convnet, a trained ViT).

PULLOVER = SEED_ROWS[1]  # the article's sketch image: test row 1


def render_sketch(images: Gallery, cfg: RunConfig) -> None:
    st.subheader("The sketch: softmax over content similarity, with a temperature")
    st.caption("No model here: the source article's interactive sketch, computed in NumPy.")
    image = images.image(PULLOVER) if PULLOVER in images.indices else images.head(1)[0]
    grid = SIDE // cfg.patch_size
    left, right = st.columns([1, 2])
    query = left.number_input("Query patch", 0, grid * grid - 1, value=min(5, grid * grid - 1), key="sketch_query")
    temperature = left.slider("Temperature", 0.05, 5.0, 1.0, 0.05, key="sketch_temperature")
    weights = A.sketch_weights(image, int(query), temperature, cfg.patch_size)
    uniform = 1 / len(weights)
    left.image(attention_picture(image, weights.reshape(grid, grid), float(weights.max()), int(query)),
               caption="query patch outlined in blue; red = weight", clamp=True)
    with right:
        layout.chart(weight_bars(weights, uniform, f"patch {query}'s weights, temperature {temperature:.2f}",
                                 int(query)))
    st.markdown(f"Top weight **{weights.max():.4f}** against the uniform **{uniform:.4f}** (1/{len(weights)}). "
                "Weights are softmax(cosine similarity / T) between the mean-centred patches of the article's "
                "pullover: heat it up and every patch gets 1/N; cool it down and one patch takes almost everything.")
