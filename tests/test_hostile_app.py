"""Hostile clients and races in the app: strict environment words, runs that
vanish or change mid-read, forged widget values, bounded caches, an empty store variable. Each case
raised, showed a traceback, grew without bound or said nothing before.
"""

import os
from pathlib import Path

import fakes
import numpy as np
import pytest
from conftest import ROOT

from vitcore.config import environment
from vitcore.config.run import RunConfig
from vitcore.store.runs import RunStore


@pytest.mark.parametrize("value, allowed", [("flase", None), ("disabled", None), ("2", None), ("", None),
                                            ("off", False), ("No", False), ("0", False), ("on", True),
                                            ("TRUE", True), ("yes", True)])
def test_allow_training_is_parsed_strictly(value, allowed):
    """Before: VITCORE_ALLOW_TRAINING=flase or disabled silently meant "on"."""
    from vitcore.app.training.slot import training_allowed

    environ = {"VITCORE_ALLOW_TRAINING": value}
    problems = environment.problems(environ, data=False)
    assert training_allowed(environ) is bool(allowed)
    assert any("VITCORE_ALLOW_TRAINING" in p for p in problems) is (allowed is None)


def test_a_run_gone_mid_render_is_left_out_of_the_test_set(tmp_path):
    """Before: testset.from_store's predictions caught OSError and ValueError, not the store's BadRun:
    41 exception boxes in 55 visits while runs were renamed away and back."""
    from vitcore.data.fashion import shipped_test_labels
    from vitcore.stats import testset

    store = RunStore(tmp_path / "store")
    labels = shipped_test_labels()
    run = fakes.write_predicted_run(store, RunConfig(), labels, labels)
    tests = testset.from_store(store)
    assert tests.predictions(run.run_id) is not None
    os.rename(run.path, tmp_path / "away")  # as a backfill's replace does for an instant
    assert tests.predictions(run.run_id) is None


def test_a_run_damaged_between_listing_and_reading_is_left_out_of_the_exports(tmp_path, monkeypatch):
    from vitcore.store import runs as store_runs

    store = RunStore(tmp_path / "store")
    first, second = fakes.write_run(store, RunConfig()), fakes.write_run(store, RunConfig(seed=1))
    history = store_runs.Run.history

    def racing(run):  # the file changes after load() validated it
        if run.run_id == first.run_id:
            raise store_runs.BadRun("history.csv changed")
        return history(run)
    monkeypatch.setattr(store_runs.Run, "history", racing)
    with pytest.warns(store_runs.StoreWarning, match="history.csv changed"):
        assert set(store.histories()["run_id"]) == {second.run_id}


@pytest.mark.parametrize("forged", [list(range(12)), [10 ** 6], "0,1"])
def test_a_forged_test_rows_value_is_ignored(on_page_store, forged):
    """Before: a multiselect value past its max_selections (a forged widget message) showed the visitor a
    StreamlitSelectionCountExceedsMaxError traceback."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "views" / "attention.py"), default_timeout=120).run()
    default = at.multiselect(key="attention_rows").value
    at.session_state["attention_rows"] = forged
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    assert at.multiselect(key="attention_rows").value == default


@pytest.mark.parametrize("change", ["gone", "NaN weights"])
def test_weights_that_change_while_the_attention_page_renders_are_dropped_with_a_note(tmp_path, monkeypatch, change):
    """Before: weights gone or damaged after the store was read reached the visitor as a traceback."""
    import shutil

    from hostile_weights import poisoned
    from streamlit.testing.v1 import AppTest

    from vitcore.app.walkthrough import probes

    found = probes.stored_weights

    def racing(cfg):  # the store said the run is valid; its weights change right after
        result = found(cfg)
        if result is None:
            return None
        run_cfg, weights = result
        copy = tmp_path / "run"
        shutil.copytree(Path(weights).parent, copy)
        if change == "gone":
            shutil.rmtree(copy)
        else:
            poisoned("classifier", 0, np.nan)(copy)
        return run_cfg, str(copy / "model.weights.h5")
    monkeypatch.setattr(probes, "stored_weights", racing)
    at = AppTest.from_file(str(ROOT / "views" / "attention.py"), default_timeout=120).run()
    assert not at.exception, [e.message for e in at.exception]
    assert any("changed or vanished while the page was drawn" in i.value for i in at.info)


def test_every_app_cache_is_bounded():
    """Before: _scan, _export_csv, _effects and _bn had no bound and a key that changes with every store
    change: +0.4 MB per change, never released (264 -> 288 MB after 60 changes)."""
    import ast

    unbounded = []
    for path in sorted([*(ROOT / "vitcore" / "app").rglob("*.py"), *(ROOT / "views").glob("*.py"), ROOT / "app.py"]):
        for item in ast.walk(ast.parse(path.read_text())):
            for decorator in getattr(item, "decorator_list", []):
                target = decorator.func if isinstance(decorator, ast.Call) else decorator
                if ast.unparse(target) in ("st.cache_data", "st.cache_resource") and not (
                        isinstance(decorator, ast.Call)
                        and {k.arg for k in decorator.keywords} & {"max_entries", "ttl"}):
                    unbounded.append(f"{path.relative_to(ROOT)}:{item.name}")
    assert unbounded == []


def test_the_app_with_an_empty_store_variable_says_so(monkeypatch):
    """Before: VITCORE_STORE="" read the server's current folder as the store: an empty dashboard, no note."""
    from streamlit.testing.v1 import AppTest

    from vitcore.app import state

    monkeypatch.setenv("VITCORE_STORE", "")
    monkeypatch.setattr(state, "STORE_PATH", str(environment.store_path()))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    assert not at.exception, [e.message for e in at.exception]
    assert any("VITCORE_STORE is empty" in w.value for w in at.warning)


def test_a_plan_added_changed_or_removed_shows_at_the_next_page_load(tmp_path, monkeypatch):
    """Issue 57: the app's caches keyed on run folders only, so a plan added, damaged or removed was shown stale (and a
    crashing one kept crashing) until some run changed. The store's key holds the plans folder's stamp now."""
    import shutil

    from test_plan_store import HOSTILE, REGISTER, hostile_store

    from vitcore.app import state
    from vitcore.cli import main
    from vitcore.stats import plans
    from vitcore.store import index

    store, _ = hostile_store(tmp_path / "runs", "a duplicate key")
    folder = store.root / "plans"
    shutil.rmtree(folder)
    monkeypatch.setattr(state, "STORE_PATH", str(store.root))
    monkeypatch.setattr(state, "STORE_KEY_SECONDS", 0.0, raising=False)
    monkeypatch.setattr(index, "RACY_NS", 0)  # the plan files are new: stamp them now, not "look again"

    def shown():
        checked = state.study().plans_checked()
        return [p.name for p in checked.plans], " ".join(checked.problems)

    assert shown() == (["builtin"], "")
    assert main([*REGISTER, "--store", str(store.root)]) == 0  # added
    assert shown() == (["builtin", "p1"], "")
    text = HOSTILE["a field no switch has"][0]((folder / "p1.json").read_text())
    (folder / "p1.json").write_text(text)  # changed, with its hash line
    (folder / plans.SUMS).write_text(f"{plans.sha256(text)}  p1.json\n")
    names, problems = shown()
    assert names == ["builtin"] and "plan p1.json: a question's field is a switch of the ViT" in problems
    (folder / "p1.json").unlink()  # removed
    assert shown() == (["builtin"], f"plan p1.json: registered in {plans.SUMS} but its file is missing")
