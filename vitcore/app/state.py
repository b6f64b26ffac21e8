"""The app's state: the sidebar's selection, and the store's one Study (vitcore.study.Study: every page's
analysis, computed once per store state and shared by every session).

No TensorFlow here. `store_mtime` (a key from every run folder's stamp, the plans folder's and the git commit) keys
the Study, so a run trained from the app, a new sweep result, a run damaged in place, or a plan added, changed,
removed or committed is picked up on the next rerun without clearing caches by hand. The store is found as the
CLI finds it (--store aside): $VITCORE_STORE, else the repository's cached_runs/
(vitcore.config.environment.store_path).
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Mapping
from types import MappingProxyType

import pandas as pd
import streamlit as st

from vitcore.app import fmt
from vitcore.app.selection import (  # noqa: F401
    BASELINE_KEY,
    MARGIN_KEY,
    MARGINS,
    SIDEBAR_KEYS,
    Offer,
    baseline_cells,
    bound,
    config_from_state,
    current_choices,
    resolve_baseline,
    selection_or_default,
    store_offer,
)
from vitcore.config.environment import REPOSITORY_STORE, store_path, timing_path
from vitcore.config.numbers import whole_counts
from vitcore.config.run import RunConfig
from vitcore.data.samples import gallery
from vitcore.store.index import stamp
from vitcore.store.runs import RunStore
from vitcore.study import Study, committed
from vitcore.study.shelf import plans_key
from vitcore.study.words import MARGIN
from vitcore.study.words import effects_centre as centre_of

STORE_PATH = str(store_path())  # $VITCORE_STORE (empty: no store, and a note), else the repository's cached_runs/
EXPORTS = ("runs.csv", "histories.csv", "confusions.csv", "effects.csv")
log = logging.getLogger(__name__)


def store() -> RunStore:
    return RunStore(STORE_PATH)


def store_name() -> str:
    """The store as a visitor may read it: the variable that names it, or the checkout's folder by
    its relative name (never a server path)."""
    return "cached_runs/" if STORE_PATH == str(REPOSITORY_STORE) else "$VITCORE_STORE"


def store_mtime() -> str:
    """The store's state as a cache key: the stamp of every run folder (name, size and ctime of each
    of its files: vitcore.store.index.stamp), so a run added, removed or damaged in place while the
    server runs is seen at the next page run (the store folder's mtime misses a file edited in
    place); the same for the runs of its timing set (`timing_runs/` beside it). A listing and a stat
    per file, about 0.1 s for 600 runs: taken at most every
    STORE_KEY_SECONDS, since every cached read of a page asks for it."""
    global _store_key
    now = time.monotonic()
    taken, path, key = _store_key
    if path == STORE_PATH and now - taken < STORE_KEY_SECONDS:
        return key
    digest = hashlib.sha256()
    timing = timing_path(STORE_PATH)  # its dedicated timing set too: one trained while the server runs is seen
    for root in (STORE_PATH, *([str(timing)] if timing is not None else [])):
        digest.update(f"{root}\n".encode())
        for run_id, is_dir in sorted(RunStore(root)._entries().items()):
            folder = stamp(os.path.join(root, run_id), is_dir)  # None: changed a moment ago, look again
            digest.update(f"{run_id}={folder if folder is not None else time.time_ns()}\n".encode())
    digest.update(plans_key(STORE_PATH).encode())  # a plan added, changed, removed or committed: a new key
    _store_key = (now, STORE_PATH, digest.hexdigest())
    return _store_key[2]


STORE_KEY_SECONDS = 1.0
_store_key: tuple[float, str | None, str] = (0.0, None, "")


# -- the sidebar's selection --------------------------------------------------------------------
def _params() -> dict:
    return st.query_params.to_dict()


def _selected(state: Mapping, params: Mapping) -> tuple[RunConfig, str | None]:
    found = offer()
    return selection_or_default(current_choices(state, params, found.allowed, found.defaults), found.fallback)


def selection() -> tuple[RunConfig, str | None]:
    """(the sidebar's config, None), or (the store's centre, a note to show) if the state is not valid.
    Before the sidebar is drawn (a session's first paint) its values come from the URL."""
    return _selected(st.session_state, _params())


def default_selection() -> RunConfig:
    """What the sidebar selects with no URL and no session: the article's ViT, or your own study's centre."""
    return _selected({}, {})[0]


def baseline(state=None) -> RunConfig:
    """The RunConfig of the sidebar's baseline cell (the article's ViT, or your own study's centre, at the selected
    rows unless another is chosen)."""
    state, params = (st.session_state, _params()) if state is None else (state, {})
    cfg, _ = _selected(state, params)
    return resolve_baseline(bound(state, params, BASELINE_KEY), baseline_choices(), cfg, offer().centre)


def baseline_choices() -> Mapping[str, RunConfig | None]:
    """selection.baseline_cells of the store in its current state, read-only: built once per state (a RunConfig per
    stored config, ~14 ms on the committed store), not twice in every page run (the sidebar and baseline())."""
    return offer().cells


def offer() -> Offer:
    """selection.store_offer of the store in its current state: the sidebar's keys, their options and defaults, the
    default baseline (your own study's centre when the store lacks the article's ViT) and the baseline cells."""
    return _offer(STORE_PATH, store_mtime())


# -- the store's one Study ------------------------------------------------------------------------
@st.cache_resource(show_spinner=False, max_entries=2)
def _study(path: str, mtime: str) -> Study:
    """The Study of the store in this state, shared by every session (cache_resource: one object, its own
    caches filled as pages ask); a new key when a run is added, removed or damaged."""
    found = Study.open(path, warn=False)
    for run_id, reason in found.skipped.items():  # why goes to the server log, not to a page
        log.warning("skipping run %s in %s: %s", run_id, path, reason)
    return found


@st.cache_resource(show_spinner=False, max_entries=2)
def _offer(path: str, mtime: str) -> Offer:
    shared = _study(path, mtime)
    found = store_offer(shared, cells={})
    return Offer(MappingProxyType(dict(found.allowed)), MappingProxyType(dict(found.choices)),
                 MappingProxyType(dict(found.defaults)), found.centre,
                 MappingProxyType(baseline_cells(shared, found.centre)), found.folded)


_baseline_choices = _offer  # what tests clear between stores (one cache: the offer holds the baseline cells)


def study() -> Study:
    """vitcore.study.Study of the store: every page's analysis (comparisons, effects, claims, the headline)."""
    return _study(STORE_PATH, store_mtime())


def _scan(path: str, mtime: str) -> tuple[pd.DataFrame, dict[str, str]]:
    """(the valid runs' table, {skipped run id: why}) of the store at `path`."""
    found = _study(path, mtime)
    return found.runs, found.skipped


def load_runs() -> pd.DataFrame:
    """The store's valid runs (RunStore.table), a copy a page may change, until the store changes."""
    return study().runs.copy()


def skipped_note() -> None:
    """One line saying how many damaged runs the pages skip, if any (the reasons are in the server
    log and in `python -m vitcore check`)."""
    count, refused = len(study().skipped), study().plans_checked().problems  # a plan file that judges nothing too
    if count:
        st.caption(f"{count} damaged run{'s' if count != 1 else ''} skipped — run `python -m vitcore check`")
    for problem in refused:
        st.warning(f"{fmt.plain(problem[:300])}: it judges nothing (the Plans page, `python -m vitcore plans`)")


def run_frames(run_ids) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(histories, confusions) in the store's long formats, for just these runs (copies)."""
    histories, confusions = study().run_frames(run_ids)
    return histories.copy(), confusions.copy()


@st.cache_data(show_spinner=False, max_entries=len(EXPORTS))
def _export_csv(name: str, margin: float, base: RunConfig | None, path: str, mtime: str) -> bytes:
    found = _study(path, mtime)
    if name == "effects.csv":  # as `python -m vitcore effects --margin M [--base ...]`: with the per-cell spread
        return whole_counts(found.effects(margin, base)).to_csv(index=False).encode()
    return found.export_frames()[name].to_csv(index=False).encode()


def export_csv(name: str, margin: float = MARGIN, base: RunConfig | None = None) -> bytes:
    """One of the Runs page's downloads, byte for byte the file the CLI `export` / `effects --margin [--base]`
    writes (`margin`: effects.csv's, the sidebar's; `base`: its centre, effects_centre)."""
    if name not in EXPORTS:
        raise ValueError(f"unknown export {name!r}; exports: {', '.join(EXPORTS)}")
    effects = name == "effects.csv"
    return _export_csv(name, margin if effects else MARGIN, base if effects else None, STORE_PATH, store_mtime())


def _kept(name: str, compute) -> pd.DataFrame:
    """compute(study) once per store state, kept under the store (vitcore.study.shelf), so a restarted server
    reads what the last one computed (the warm-up's flip and main effects: 4-6 CPU seconds on the committed
    store) instead of computing it again; a copy a page may change."""
    mtime = store_mtime()
    return _study(STORE_PATH, mtime).shelved(name, compute, mtime)


def main_effects(metric: str, margin: float = MARGIN, cells: str = "", base: RunConfig | None = None) -> pd.DataFrame:
    """stats.main_effects of one metric over the stored factorial grid (the Study's, once per margin), around the
    article's ViT or `base` (effects_centre); kept under the store."""
    return _kept(f"main {metric} {margin!r} {cells}{_around(base)}",
                 lambda found: found.main_effects((metric,), margin, cells, base))


def interactions(metric: str, margin: float = MARGIN, cells: str = "", base: RunConfig | None = None) -> pd.DataFrame:
    """stats.interactions of one metric (the slow one: computed only when asked for), around `base` when given."""
    return _kept(f"interactions {metric} {margin!r} {cells}{_around(base)}",
                 lambda found: found.interactions((metric,), margin, cells, base))


def effects_centre(baseline: RunConfig) -> RunConfig | None:
    """What the Main effects view centres on: None (the article's ViT) unless the sidebar's baseline is a ViT with
    other fields or switches (your own study's centre, e.g. 5 epochs), whatever its training rows."""
    return centre_of(baseline) if baseline.model == "vit" else None


def _around(base: RunConfig | None) -> str:
    return "" if base is None else f" around {base.config_id}"


def flip_effects(cfg: RunConfig, margin: float = MARGIN) -> pd.DataFrame:
    """stats.flip_effects of cfg over the store (the Study's measurements, judged at this margin)."""
    return _kept(f"flip {cfg.config_id} {margin!r}", lambda found: found.flip_effects(cfg, margin))


# -- other committed files ----------------------------------------------------------------------
@st.cache_resource(show_spinner="Loading test images…", max_entries=1)
def load_gallery():
    """vitcore.data.samples.gallery(): the test split if it is on disk, else the shipped sample. One shared,
    read-only copy (cache_resource): as cache_data, every call unpickled another copy (server RSS after the
    Patching page alone: 382 MB as cache_data, 328 MB shared). It keeps uint8 pixels (7.8 MB, not 31 MB of
    float32); a page converts the rows it shows."""
    shared = gallery()
    for array in (shared.pixels, shared.labels, shared.indices):
        array.setflags(write=False)
    return shared


# -- the Ablations page's comparison and its flipped images ----------------------------------------
def margin(state=None) -> float:
    """The sidebar's equivalence margin (verdicts.MARGIN unless one of MARGINS is chosen)."""
    state, params = (st.session_state, _params()) if state is None else (state, {})
    value = bound(state, params, MARGIN_KEY)
    return next((m for m in MARGINS if str(m) == str(value)), MARGIN)


def test_set():
    """The store's vitcore.stats.testset.TestSet (its runs' predictions, the shipped test labels), shared by
    every session until the store changes: every view passes it, so test accuracy's verdicts include the
    test set's sampling wherever the runs kept predictions, the same on every page and in the CLI."""
    return study().test_set


def comparison(cfg: RunConfig, base: RunConfig, margin: float = MARGIN):
    """vitcore.stats.compare.compare(cfg, base) over the store, with the per-class and confusion Δs."""
    found = study()
    return found.compare(cfg, base, margin, confusions=found.confusions((cfg, base)),
                         missing_ok=True)  # a selection not trained yet: its Δs read "too few seeds"


def bn_diagnosis() -> pd.DataFrame | None:
    """The committed BatchNorm diagnosis (vitcore.study.committed: vitcore/analysis/bn.csv), or None."""
    return committed.bn_diagnosis()
