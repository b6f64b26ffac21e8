"""The shared sidebar: one widget per ablation switch plus the baseline, all bound to the URL.

Rendered by app.py (the frame) on every page, so the selection persists across pages; pages read it
with `vitcore.app.state.selection()` / `vitcore.app.state.baseline()`.
The widget keys are the RunConfig field names, and the URL values are str(value): `?patch_size=4`.
"""

from __future__ import annotations

import streamlit as st

from vitcore.app import state
from vitcore.app.selection import BASELINE_KEY, CHOICES, DEFAULTS, baseline_cells, query_notes

NOTES_KEY = "_vitcore_query_notes"
HELP = {
    "model": "The article's ViT (patch → Dense 64 → 2 transformer blocks) or its 60,554-parameter convnet.",
    "pos_embedding": "`learned`: a trainable 16×64 (for patch 7) table added to the tokens. "
                     "`none`: the model sees an unordered bag of patches.",
    "norm_placement": "`pre`: norm → sublayer → add (residual path stays clean). "
                      "`post`: sublayer → add → norm, the original Transformer.",
    "norm": "`layer`: LayerNormalization per token. `batch`: BatchNormalization over the batch.",
    "patch_size": "Side of a square patch: 2/4/7/14 → 196/49/16/4 tokens. Attention cost grows with tokens².",
    "train_rows": "Stratified training rows (validation is a fixed 5,000; test is the official 10,000).",
    "warmup_epochs": "Linear learning-rate warm-up over this many epochs (0: none).",
    BASELINE_KEY: "What every Δ is measured against, seed by seed. Default: the article's ViT at the selected rows.",
}
LABELS = {"model": "Model", "pos_embedding": "Position embedding", "norm_placement": "Norm placement",
          "norm": "Norm", "patch_size": "Patch size", "train_rows": "Training rows",
          "warmup_epochs": "Warm-up epochs", BASELINE_KEY: "Baseline"}
_RADIOS = ("model", "pos_embedding", "norm_placement", "norm", "patch_size")
_VIT_ONLY = ("pos_embedding", "norm_placement", "norm", "patch_size")


def _reset() -> None:
    for key, value in DEFAULTS.items():
        st.session_state[key] = value


def render_sidebar() -> None:
    """Draw the switches; on a session's first run, note any query value that was not allowed."""
    cells = baseline_cells(state.load_runs())
    if NOTES_KEY not in st.session_state:  # Streamlit drops invalid bound values; say so, once per session
        st.session_state[NOTES_KEY] = query_notes(st.query_params.to_dict(), list(cells))

    for note in st.session_state[NOTES_KEY]:  # in the main area, above the page: a phone hides the sidebar
        st.warning(note, icon=":material/link_off:")
    with st.sidebar:
        st.header("Configuration")
        model = None
        for key in CHOICES:
            options = CHOICES[key]
            common = dict(label=LABELS[key], options=options, index=options.index(DEFAULTS[key]), key=key,
                          help=HELP[key], bind="query-params",
                          disabled=key in _VIT_ONLY and model == "convnet")
            value = st.radio(horizontal=True, **common) if key in _RADIOS else st.selectbox(**common)
            if key == "model":
                model = value
                if model == "convnet":
                    st.caption("The ViT switches below do not apply to the convnet.")
        st.selectbox(LABELS[BASELINE_KEY], list(cells), index=0, key=BASELINE_KEY, help=HELP[BASELINE_KEY],
                     bind="query-params")
        st.button("Reset to the article's ViT", on_click=_reset, icon=":material/restart_alt:", key="reset_switches")
        st.caption("The URL holds this selection: copy it to share exactly this view.")
