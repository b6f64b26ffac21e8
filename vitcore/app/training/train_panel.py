"""The "not cached yet" panel: say so, estimate the time from similar runs, offer "Train now".

Training runs in the server's single TrainingSlot (a background thread relaying a child process,
vitcore.app.training.child), so it survives reruns and page switches, every other session sees that
the server is busy, and only the session that started it sees Cancel. TensorFlow is only ever
imported by that child, never by the slot.
"""

from __future__ import annotations

import secrets

import pandas as pd
import streamlit as st

from vitcore.app import fmt, state
from vitcore.app.selection import cell_name
from vitcore.app.training.child import train_in_child
from vitcore.app.training.slot import (
    SERVER_SLOT,
    TrainingStatus,
    environment,
    estimate_seconds,
    over_budget,
    training_allowed,
    training_refused,
)
from vitcore.config.run import RunConfig
from vitcore.run import TRAIN_INSTALL, training_installed
from vitcore.study.words import train_command

OWNER_KEY = "_vitcore_training_owner"


def _train_seeds(cfg: RunConfig, progress, seeds: int = 1) -> None:
    """Train random seeds 0..seeds-1 of cfg into the app's store (in a child process); progress counts
    epochs over all seeds."""
    train_in_child(cfg, progress, state.STORE_PATH, seeds)


def _session() -> str:
    """This browser session's secret: the owner of a training it starts. A random token in its
    session state (no widget has this key, so no client message can set it)."""
    return st.session_state.setdefault(OWNER_KEY, secrets.token_hex(16))


def render_train_offer(cfg: RunConfig, runs: pd.DataFrame) -> None:
    """Everything the page shows for a selection with no stored runs."""
    slot = SERVER_SLOT
    status = slot.status
    if slot.busy and status is not None:
        _progress(cfg)
        return
    st.warning(f"**{cell_name(cfg)}** has no stored runs yet.", icon=":material/hourglass_empty:")
    if status is not None and status.cfg.config_id == cfg.config_id and status.error:
        st.error(f"The last training of this config failed: {status.error}")
    if status is not None and status.cfg.config_id == cfg.config_id and status.cancelled:
        st.info(f"The last training of this config was {status.cancelled} after epoch {status.epoch}; "
                "nothing was stored.")
    estimate = estimate_seconds(runs, cfg)
    if estimate is None:
        st.caption("No similar runs are stored, so there is no time estimate.")
    else:
        seconds, basis = estimate
        st.caption(f"Estimated training time: about **{fmt.duration(seconds)} per random seed** "
                   f"({cfg.epochs} epochs on {fmt.rows(cfg.train_rows)} rows; {basis}, "
                   "timed on the machine that ran the sweep).")
    if not training_allowed():
        st.info("Training is switched off on this deployment (`VITCORE_ALLOW_TRAINING=0`). "
                f"To train it locally: `{train_command(cfg)}`")
        return
    if not training_installed():  # the view-only install (requirements.txt)
        st.info(f"Training needs TensorFlow, which this install leaves out: `{TRAIN_INSTALL}`, then restart "
                f"the app (or train from a terminal: `{train_command(cfg)}`).", icon=":material/download:")
        return
    refused = training_refused()
    if refused:
        st.info(f"Training is off on this server: {refused}. To train it locally: `{train_command(cfg)}`")
        return
    seeds = st.radio("Random seeds to train", (1, 3), horizontal=True, key="train_seeds",
                     help="One random seed shows the numbers; three give the seed-paired 95% intervals.")
    budget = environment().budget_minutes
    refused = over_budget(None if estimate is None else estimate[0], seeds, budget)
    if refused:
        st.info(f"Not from this page: {refused}. To train it on your own machine: `{train_command(cfg)}`")
        return
    st.caption(f"One click may start at most {budget:g} minutes of training on this server; a training "
               "that runs longer is stopped and stores nothing, and Cancel stops it the same way.")
    if st.button("Train now", type="primary", icon=":material/play_arrow:", key="train_now"):
        if slot.start(cfg, lambda c, progress: _train_seeds(c, progress, seeds), budget_seconds=budget * 60,
                      owner=_session()):
            st.rerun()
        st.warning("Another session started a training a moment ago; this one will wait its turn.")


@st.fragment(run_every=1.0)
def _progress(cfg: RunConfig) -> None:
    """Live progress of the server's training: per-epoch bar and the curve growing."""
    slot = SERVER_SLOT
    status: TrainingStatus | None = slot.status
    if status is None:
        return
    mine = status.cfg.config_id == cfg.config_id
    if status.done:
        if mine or not slot.busy:
            st.rerun(scope="app")  # the run is stored (or failed): redraw the page from the store
        return
    owner = slot.owned_by(_session())
    who = "this config" if mine else f"**{cell_name(status.cfg)}**"
    who += "" if owner else " (started by another session)"
    st.info(f"Training {who}: epoch {status.epoch} of {status.total}, {status.elapsed:.0f} s so far. "
            + ("" if owner else "One training runs at a time on this server; yours can start when it finishes."),
            icon=":material/model_training:")
    st.progress(status.epoch / max(status.total, 1))
    if status.cancel_requested:
        st.caption("Cancelling: the training stops now and stores nothing.")
    elif owner and st.button("Cancel", icon=":material/stop:", key="train_cancel",
                                                 help="Stops the training; the unfinished run is not stored."):
        slot.cancel(_session())
    if status.history:
        history = pd.DataFrame(status.history)
        history["step"] = range(1, len(history) + 1)
        st.line_chart(history.set_index("step")[["accuracy", "val_accuracy"]], height=220,
                      x_label="epoch (all random seeds in turn)", y_label="accuracy")
