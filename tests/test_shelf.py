"""vitcore.study.shelf: results kept under the store for the next start are the computed ones, and a kept file
of another state, edited, forged or a link is never used."""

from __future__ import annotations

import json
import os

import pandas as pd
import pytest
import streamlit as st
from stores import copy_store, page_runs

from vitcore.config.run import RunConfig
from vitcore.study import shelf

KEY = "a" * 64


@pytest.fixture
def app_store(tmp_path, committed_table, monkeypatch):
    """The app reads a small copy of the committed store (the landing's runs), its caches empty."""
    from vitcore.app import state
    from vitcore.store import index

    root = copy_store(tmp_path / "store", keep=page_runs(committed_table))
    monkeypatch.setattr(index, "RACY_NS", 0)  # the copies are new: stamp them now, not "look again"
    monkeypatch.setattr(state, "STORE_PATH", str(root))
    monkeypatch.setattr(state, "STORE_KEY_SECONDS", 0.0)
    st.cache_resource.clear()
    yield root
    st.cache_resource.clear()


def kept_files(root) -> list[str]:
    return sorted(name for name in os.listdir(root) if name.startswith(shelf.PREFIX))


@pytest.mark.slow  # over 1 s a case: the slow tier, so the fast tier stays under a minute (docs/contributing.md)
def test_a_restart_reads_the_warm_up_results_it_kept_and_they_are_the_computed_ones(app_store, monkeypatch):
    from vitcore.app import state
    from vitcore.study import Study

    flips, main = state.flip_effects(RunConfig()), state.main_effects("test_accuracy")
    assert len(flips) and len(main) and len(kept_files(app_store)) == 2
    st.cache_resource.clear()  # a restarted server: a new Study, nothing computed in memory

    def computed(*args, **kwargs):
        raise AssertionError("computed again though the shelf kept it")
    monkeypatch.setattr(Study, "flip_effects", computed)
    monkeypatch.setattr(Study, "main_effects", computed)
    pd.testing.assert_frame_equal(state.flip_effects(RunConfig()), flips)
    pd.testing.assert_frame_equal(state.main_effects("test_accuracy"), main)
    with pytest.raises(AssertionError, match="computed again"):  # another margin: not kept, so computed
        state.flip_effects(RunConfig(), 0.02)


@pytest.mark.slow  # over 1 s of its own: the slow tier (docs/contributing.md)
def test_a_run_added_or_a_plan_registered_is_another_state_and_its_files_replace_the_old(app_store, monkeypatch):
    from vitcore.app import state

    state.main_effects("test_accuracy")
    before, key = kept_files(app_store), shelf.state_key(app_store, state.store_mtime())
    (app_store / "plans").mkdir(exist_ok=True)
    (app_store / "plans" / "SHA256SUMS").write_text("")  # the registered plans are part of the state
    assert shelf.state_key(app_store, state.store_mtime()) != key
    removed = sorted(name for name in os.listdir(app_store) if len(name) == 12)[0]
    os.rename(app_store / removed, app_store.parent / removed)
    st.cache_resource.clear()
    state.main_effects("test_accuracy")
    after = kept_files(app_store)
    assert len(after) == 1 and after != before  # the old state's file went, this state's is kept


@pytest.mark.parametrize("damage", ["edited", "forged", "other key", "other name", "link", "not json"])
def test_a_kept_file_that_is_not_this_states_own_is_ignored(tmp_path, damage):
    frame = pd.DataFrame({"switch": ["norm"], "to": [4], "mean_delta": [0.5], "ok": [True]})
    shelf.put(tmp_path, KEY, "flips", frame)
    (path,) = [tmp_path / name for name in kept_files(tmp_path)]
    pd.testing.assert_frame_equal(shelf.get(tmp_path, KEY, "flips"), frame)
    header, _, body = path.read_bytes().partition(b"\n")
    if damage == "edited":  # the body changed, the checksum kept
        path.write_bytes(header + b"\n" + body.replace(b"0.5", b"0.9"))
    elif damage == "forged":  # the body changed and a plain checksum recomputed: the key is not in the store
        import hashlib

        meta = json.loads(header)
        body = body.replace(b"0.5", b"0.9")
        meta["hmac"] = hashlib.sha256(body).hexdigest()
        path.write_bytes(json.dumps(meta).encode() + b"\n" + body)
    elif damage == "link":
        target = tmp_path / "elsewhere.json"
        os.rename(path, target)
        os.symlink(target, path)
    elif damage == "not json":
        path.write_bytes(b"\x00" * 100)
    key, name = ((KEY.replace("a", "b"), "flips") if damage == "other key" else
                 (KEY, "other" if damage == "other name" else "flips"))
    assert shelf.get(tmp_path, key, name) is None
    assert shelf.kept(tmp_path, key, name, lambda: frame.assign(mean_delta=0.1))["mean_delta"].tolist() == [0.1]


def test_a_read_only_store_keeps_nothing_and_still_answers(tmp_path, monkeypatch):
    def read_only(*args, **kwargs):  # what creating a file in a read-only store raises (root may write anyway)
        raise PermissionError(13, "Read-only file system")
    monkeypatch.setattr(shelf.tempfile, "mkstemp", read_only)
    frame = pd.DataFrame({"a": [1.0]})
    assert shelf.kept(tmp_path, KEY, "x", lambda: frame).equals(frame) and kept_files(tmp_path) == []


def test_the_key_follows_the_code(monkeypatch):
    before = shelf.state_key("/nonexistent", "store state")
    shelf.code.cache_clear()
    monkeypatch.setattr(shelf, "PACKAGE", shelf.PACKAGE / "study")  # another set of source files
    try:
        assert shelf.state_key("/nonexistent", "store state") != before
    finally:
        shelf.code.cache_clear()
