"""Train-on-demand without Streamlit: whether this deployment may train, how long it would take,
and the one-training-per-server slot (a background thread that survives reruns and page switches).

The slot is a module-level object (SERVER_SLOT), not a Streamlit cache: a client's "clear cache"
message empties st.cache_* but cannot give a second session a fresh slot. Only the session that
started a training may cancel it. No Streamlit and no TensorFlow (the trainer passed in runs it in a
child process, vitcore.app.training.child), so it is unit-tested directly.
"""

from __future__ import annotations

import functools
import os
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import SimpleNamespace

import pandas as pd
import streamlit as st

from vitcore.app import state
from vitcore.config import environment as checks
from vitcore.config.environment import (  # noqa: F401 (re-exported)
    DEFAULT_BUDGET_MINUTES,
    allow_training,
    budget_minutes,
)
from vitcore.config.run import RunConfig
from vitcore.data.fashion import data_dir_problem
from vitcore.store.timing import COMPILE_MODES

COMMUNITY_CLOUD_ROOT = "/mount/src/"  # where Streamlit Community Cloud checks out an app's repository


class Cancelled(Exception):
    """Raised between epochs when a training is cancelled or runs past its budget: nothing is stored."""


def over_budget(estimate: float | None, seeds: int, budget: float) -> str | None:
    """Why a click may not start this training (estimate in seconds per random seed), or None."""
    if estimate is None:
        return None  # no similar runs to estimate from: allowed, and still stopped at the budget
    total = estimate * seeds / 60
    if total > budget:
        return (f"about {total:.0f} minutes for {seeds} random seed{'s' if seeds > 1 else ''}, over this server's "
                f"budget of {budget:g} minutes per click (VITCORE_MAX_TRAIN_MINUTES)")
    return None


def training_allowed(environ: Mapping[str, str] = os.environ, app_path: str = __file__) -> bool:
    """Train-on-demand: VITCORE_ALLOW_TRAINING=0/false/no/off turns it off, 1/true/yes/on turns it on,
    anything else keeps it off (vitcore.config.environment.allow_training: a note says so);
    unset, it is on except on Streamlit Community Cloud (a public deploy: the app runs from /mount/src)."""
    try:
        allowed = allow_training(environ)
    except ValueError:  # any other spelling: off, and the environment note says why
        return False
    return not app_path.startswith(COMMUNITY_CLOUD_ROOT) if allowed is None else allowed


REUSED = "reused"  # vitcore.store.timing.COMPILE_MODES: a run of a cell after its first, on the compiled graph
FIRST_RUNS_LEFT_OUT = "a cell's first run, which compiles, left out"


def compile_mode(group) -> str:
    """A timing group's compile mode ('v2/threads1/workers2/reused/busy' -> 'reused'); '' when it has none."""
    parts = group.split("/") if isinstance(group, str) else []
    return parts[3] if len(parts) > 3 and parts[3] in COMPILE_MODES else ""


def estimate_seconds(table: pd.DataFrame, cfg: RunConfig) -> tuple[float, str] | None:
    """Training time for cfg from similar stored runs, scaled by train rows x epochs: from the reused runs only
    (timing group '…/reused': a cell's first run spends most of a small run compiling, and scaled up it said
    "30 min" for a study of 4-10 s runs), else, when the store has none that fit, from every run.

    Similar = same model (and, for the ViT, same patch size: the token count drives the cost), at the same
    train rows when there are any (then scaled by epochs alone); falls back to any run of the same model.
    Returns (seconds, what it was based on) or None.
    """
    if "timing_group" in table.columns:
        reused = _estimate(table[table["timing_group"].map(compile_mode) == REUSED], cfg, "reused")
        if reused is not None:
            return reused[0], f"{reused[1]} ({FIRST_RUNS_LEFT_OUT})"
    return _estimate(table, cfg, "stored")


def _estimate(table: pd.DataFrame, cfg: RunConfig, kind: str) -> tuple[float, str] | None:
    if table.empty:
        return None
    same_model = table[table["model"] == cfg.model]
    similar = same_model
    basis = "ViT runs" if cfg.model == "vit" else "convnet runs"
    if cfg.model == "vit":
        patch = same_model[same_model["patch_size"] == cfg.patch_size]
        if len(patch):
            similar, basis = patch, f"ViT runs at patch {cfg.patch_size}"
    if similar.empty:
        return None
    rows = similar[similar["train_rows"] == cfg.train_rows]
    if len(rows):  # the same rows: scaled by epochs only (an epoch's validation and test passes do not shrink
        per_epoch = (rows["seconds"] / rows["epochs"]).median()  # with the rows, so rows scale badly)
        return float(per_epoch * cfg.epochs), f"median of {len(rows)} {kind} {basis} at these rows, scaled by epochs"
    per_unit = (similar["seconds"] / (similar["train_rows"] * similar["epochs"])).median()
    basis = f"median of {len(similar)} {kind} {basis}, scaled by rows × epochs"
    return float(per_unit * cfg.train_rows * cfg.epochs), basis


# -- one training per server --------------------------------------------------------------------
Trainer = Callable[[RunConfig, Callable[[int, int, dict], None]], object]


@dataclass
class TrainingStatus:
    cfg: RunConfig
    started: float = field(default_factory=time.monotonic)
    epoch: int = 0
    total: int = 0
    history: list[dict] = field(default_factory=list)
    done: bool = False
    error: str | None = None
    budget_seconds: float | None = None   # stop past this (None: no limit)
    cancel_requested: bool = False
    cancelled: str | None = None          # why it stopped early, if it did
    owner: str | None = None              # the session that started it: the only one that may cancel

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def stop_reason(self) -> str | None:
        """Why the training must stop now (cancelled, or past its budget), or None."""
        if self.cancel_requested:
            return "cancelled"
        if self.budget_seconds is not None and self.elapsed > self.budget_seconds:
            return f"stopped at the budget of {self.budget_seconds / 60:g} minutes"
        return None


class Progress:
    """What a trainer calls after each epoch (raises Cancelled when it must stop); a trainer that
    can stop sooner (a child process it can kill) polls `stop_reason()` while it waits."""

    def __init__(self, status: TrainingStatus):
        self.status = status

    def __call__(self, epoch: int, total: int, row: dict) -> None:
        status = self.status
        status.epoch, status.total = epoch, total
        status.history.append(dict(row))
        why = status.stop_reason()
        if why is not None and (why == "cancelled" or epoch < total):
            raise Cancelled(why)

    def stop_reason(self) -> str | None:
        return self.status.stop_reason()


class TrainingSlot:
    """Single flight: at most one training per server process, run in a background thread so it
    survives the page being left or rerun. Every session sees the same status (SERVER_SLOT, below).
    `start` is atomic: of two sessions racing, exactly one wins."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.status: TrainingStatus | None = None  # the current or last training
        self._thread: threading.Thread | None = None

    @property
    def busy(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self, cfg: RunConfig, trainer: Trainer, budget_seconds: float | None = None,
              owner: str | None = None) -> bool:
        """Begin training cfg unless a training is already running; False if busy. The training
        stops once it has run `budget_seconds` (a trainer that polls Progress.stop_reason: at once;
        others between epochs), or when its owner calls cancel()."""
        with self._lock:
            if self.busy:
                return False
            status = TrainingStatus(cfg, total=cfg.epochs, budget_seconds=budget_seconds, owner=owner)
            self.status = status
            self._thread = threading.Thread(target=self._run, args=(status, trainer), daemon=True,
                                            name=f"vitcore-train-{cfg.run_id}")
            self._thread.start()
            return True

    def _run(self, status: TrainingStatus, trainer: Trainer) -> None:
        try:
            trainer(status.cfg, Progress(status))
        except Cancelled as why:  # between epochs: the unfinished run is not stored
            status.cancelled = str(why)
        except Exception as error:  # shown to the user; the slot must free itself whatever happens
            status.error = f"{type(error).__name__}: {error}"
            traceback.print_exc()
        finally:
            status.done = True

    def cancel(self, owner: str | None = None) -> bool:
        """Ask the running training to stop; False if none is running or `owner` did not start it."""
        status = self.status
        if not self.busy or status is None or status.owner != owner:
            return False
        status.cancel_requested = True
        return True

    def owned_by(self, owner: str | None) -> bool:
        """True while a training `owner` started is running."""
        status = self.status
        return self.busy and status is not None and status.owner == owner

    def join(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)


SERVER_SLOT = TrainingSlot()  # the one slot of this server process (module state: no client can clear it)


# What this server may do, checked once: its environment values (vitcore.config.environment) and
# whether it can write its store. A wrong value is a visible note on every page and turns training off;
# the notes name the variable, never a server path.

ENVIRONMENT = ("VITCORE_THREADS", "VITCORE_MAX_TRAIN_MINUTES", "VITCORE_DATA_DIR", "VITCORE_STORE",
               "VITCORE_ALLOW_TRAINING")


@functools.lru_cache(maxsize=8)
def _environment(values: tuple, store_path: str) -> tuple[float, tuple[str, ...]]:
    environ = {name: value for name, value in values if value is not None}
    try:
        budget = checks.budget_minutes(environ)
    except ValueError:
        budget = checks.DEFAULT_BUDGET_MINUTES  # unused: training is off while there is a problem
    return budget, tuple(checks.problems(environ, store_path,
                                         data=False) + list(filter(None, [data_dir_problem(environ)])))


def environment() -> SimpleNamespace:
    """budget_minutes and problems (one line each) of this server's environment, checked once per
    distinct setting."""
    values = tuple((name, os.environ.get(name)) for name in ENVIRONMENT)
    budget, problems = _environment(values, state.STORE_PATH)
    return SimpleNamespace(budget_minutes=budget, problems=problems)


def environment_note() -> None:
    """A visible note (never an exception box) for each environment value that is wrong."""
    for problem in environment().problems:
        st.warning(f"This server is misconfigured: {problem}. Training is off until it is fixed.",
                   icon=":material/settings_alert:")


def training_refused() -> str | None:
    """Why this server may not train now (a wrong environment value, a store it cannot write), or None.
    The store is probed with a real file: permission bits say nothing for root or a read-only mount."""
    problems = environment().problems
    if problems:
        return problems[0]
    try:
        os.makedirs(state.STORE_PATH, exist_ok=True)
        with tempfile.TemporaryFile(dir=state.STORE_PATH):
            pass
    except OSError as error:
        return f"it cannot write its store ({error.strerror or 'not writable'}), so a run could not be kept"
    return None
