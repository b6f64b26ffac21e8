"""vitcore.app's plain modules (selection: query checks and baselines; training: estimates and the
slot; tables: the flip table; the metric cards are in test_app_cards) and the CSV downloads, on synthetic stores: fast,
no Streamlit script runs, no TensorFlow."""

import io
import threading

import numpy as np
import pandas as pd
import pytest
from fakes import write_centre_factorial, write_run

from vitcore import cli
from vitcore.app import fmt, selection, state, tables
from vitcore.app.selection import BASELINE, SAME_ROWS, baseline_cells, cell_name, query_notes, resolve_baseline
from vitcore.app.training.slot import TrainingSlot, estimate_seconds, training_allowed
from vitcore.config.run import RunConfig
from vitcore.stats import summaries as stats
from vitcore.stats.estimates import INCONCLUSIVE
from vitcore.stats.readings import SIZE_BEYOND
from vitcore.store.runs import RunStore
from vitcore.study import Study

POST = RunConfig(norm_placement="post")


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """Seed ViT and post-norm at 4,000 rows (3 seeds), convnet at 1,000 rows (2 seeds)."""
    store = RunStore(tmp_path_factory.mktemp("store"))
    for seed, (base, post) in enumerate([(0.80, 0.78), (0.81, 0.785), (0.79, 0.772)]):
        write_run(store, BASELINE.replace(seed=seed), base, seconds=40 + seed)
        write_run(store, POST.replace(seed=seed), post, seconds=50)
    for seed in (0, 1):
        write_run(store, RunConfig(model="convnet", train_rows=1_000, seed=seed), 0.70, seconds=10)
    return store


@pytest.mark.parametrize("params", [{}, {"patch_size": "4"}, {"model": "convnet", "train_rows": "1000"},
                                    {"warmup_epochs": "2", "unrelated": "x"}, {"norm": ["layer", "batch"]}])
def test_valid_or_foreign_query_values_give_no_note(params):
    assert query_notes(params) == []


@pytest.mark.parametrize("key, value", [("patch_size", "5"), ("norm", "<script>alert(1)</script>"),
                                        ("model", "VIT"), ("train_rows", "4,000"), ("warmup_epochs", "")])
def test_invalid_query_value_is_named_with_allowed_values_and_default(key, value):
    (note,) = query_notes({key: value})
    assert note.startswith(f"`{key}=") and "allowed" in note
    assert f"showing `{selection.DEFAULTS[key]}` (the default) instead" in note


def test_query_note_cannot_break_out_of_its_code_span():
    (note,) = query_notes({"norm": "`**bold**` " + "x" * 100})
    assert note.count("`") == 4 and "..." in note  # the value's backticks are replaced; long values cut


def test_unknown_baseline_is_noted_only_when_baselines_are_given():
    assert query_notes({"baseline": "nope"}) == []
    (note,) = query_notes({"baseline": "nope"}, [SAME_ROWS, "a"])
    assert SAME_ROWS in note


def test_the_sidebar_of_your_own_base_study_is_built_from_its_configs(tmp_path):
    """A `sweep --vary depth=1 --rows 300 --base epochs=2` store (no article's ViT) offers its own rows and
    models, a control for depth and for epochs (held off the article's 15), its base as the default selection and
    baseline; a URL value it lacks gets a note, its own values none."""
    own, base = RunStore(tmp_path / "own"), RunConfig(train_rows=300, epochs=2)
    for seed in (0, 1):
        write_run(own, base.replace(seed=seed), 0.42)
        write_run(own, base.replace(depth=1, seed=seed), 0.44)
    offer = selection.store_offer(Study(own.table()))
    assert offer.centre == base and offer.fallback == base
    assert selection.config_from_state(offer.defaults) == base  # the default selection
    assert offer.allowed["train_rows"] == (300,) and offer.allowed["model"] == ("vit",) and "model" not in offer.choices
    assert 1 in offer.choices["depth"] and 2 in offer.choices["epochs"] and offer.defaults["epochs"] == 2
    first = next(iter(offer.cells))
    assert first == f"{base.label()} at the selected rows" and cell_name(BASELINE) not in offer.cells
    assert resolve_baseline(first, offer.cells, base.replace(depth=1), offer.centre) == base
    assert query_notes({"epochs": "2", "train_rows": "300", "depth": "1"}, list(offer.cells), offer.allowed,
                       offer.defaults) == []
    rows, epochs = query_notes({"train_rows": "4000", "epochs": "7"}, list(offer.cells), offer.allowed, offer.defaults)
    assert "`train_rows=4000` is not a valid value (allowed: 300); showing `300`" in rows
    assert "`epochs=7`" in epochs and "showing `2` (the default)" in epochs


def test_a_store_with_the_article_vit_notes_a_free_value_it_lacks(store):
    """The committed store's way: the article's ViT is the default; `?epochs=5` (no run, no control) is noted, not
    applied behind the sidebar's back."""
    offer = selection.store_offer(Study(store.table()))
    assert offer.centre is None and offer.defaults == selection.DEFAULTS and next(iter(offer.cells)) == SAME_ROWS
    assert offer.allowed["epochs"] == (15,) and "epochs" not in offer.choices
    (note,) = query_notes({"epochs": "5"}, None, offer.allowed, offer.defaults)
    assert "`epochs=5` is not a valid value (allowed: 15)" in note
    assert selection.current_choices({}, {"epochs": "5"}, offer.allowed, offer.defaults)["epochs"] == 15


def test_baseline_cells_list_every_cached_config_once_and_resolve(store):
    cells = baseline_cells(Study(store.table()))
    assert list(cells)[:2] == [SAME_ROWS, cell_name(BASELINE)]
    assert set(cells) == {SAME_ROWS, cell_name(BASELINE), cell_name(POST), "convnet · 1,000 rows"}
    small = RunConfig(train_rows=1_000, patch_size=4)
    assert resolve_baseline(SAME_ROWS, cells, small) == RunConfig(train_rows=1_000)
    assert resolve_baseline("gone", cells, small) == RunConfig(train_rows=1_000)
    assert resolve_baseline(cell_name(POST), cells, small) == POST


def test_cell_names_tell_apart_configs_that_differ_outside_the_sidebar():
    assert cell_name(RunConfig(epochs=5)) != cell_name(RunConfig())
    assert cell_name(RunConfig(model="convnet", width=32)) == cell_name(RunConfig(model="convnet"))


def test_estimate_scales_similar_runs_by_rows_and_epochs(store):
    seconds, basis = estimate_seconds(store.table(), RunConfig(train_rows=8_000))
    # every patch-7 ViT run (40, 41, 42 and 3 x 50 s at 4,000 rows): median 46 s, doubled for 8,000 rows
    assert seconds == pytest.approx(2 * 46.0) and "patch 7" in basis
    seconds, basis = estimate_seconds(store.table(), RunConfig(patch_size=2))  # no patch-2 runs: any ViT
    assert seconds == pytest.approx(np.median([40, 41, 42, 50, 50, 50])) and "ViT" in basis
    assert estimate_seconds(store.table().iloc[:0], RunConfig()) is None


def test_estimate_leaves_out_each_cells_first_run_which_compiles(store):
    """A study of 4-10 s runs was estimated at "30.3 min per random seed": its first runs, mostly compiling, scaled
    up. With reused runs in the store only they count (and the text says so); with none, every run counts."""
    table = store.table().copy()
    first = table["seed"] == 0
    table["timing_group"] = np.where(first, "v5/threads1/workers2/fresh", "v5/threads1/workers2/reused/busy")
    table["seconds"] = np.where(first, 600.0, table["seconds"])  # compiling: ten minutes
    seconds, basis = estimate_seconds(table, RunConfig(train_rows=8_000))
    assert seconds == pytest.approx(2 * np.median([41, 42, 50, 50])) and "reused" in basis
    assert "first run, which compiles, left out" in basis
    table["timing_group"] = "v5/threads1/workers2/fresh"
    seconds, basis = estimate_seconds(table, RunConfig(train_rows=8_000))
    assert seconds == pytest.approx(2 * np.median([600, 600, 41, 42, 50, 50])) and "left out" not in basis


@pytest.mark.parametrize("value, allowed",
                         [(None, True), ("1", True), ("0", False), ("off", False), (" False ", False)])
def test_training_switch(value, allowed):
    assert training_allowed({} if value is None else {"VITCORE_ALLOW_TRAINING": value}) is allowed


def test_training_is_off_by_default_on_community_cloud():
    cloud = "/mount/src/vitcore/vitcore/app/training.py"
    assert training_allowed({}, app_path=cloud) is False
    assert training_allowed({"VITCORE_ALLOW_TRAINING": "1"}, app_path=cloud) is True


def test_flip_table_is_one_metric_readable(store):
    flips = stats.flip_effects(store.table(), BASELINE)
    table = tables.flip_table(flips, "best_val_accuracy")  # fixed sample: judged on the pairs there are
    assert list(table["Change"]) == ["norm placement pre → post"] and table.loc[0, "Verdict"] == stats.WORSE
    assert table.loc[0, "Size"] == SIZE_BEYOND and table.loc[0, "Verdict in full"].endswith("beyond ±0.010")
    assert table.loc[0, "Interval"].startswith("[-") and table.loc[0, "Interval is"] == "95% CI"
    assert table.loc[0, "p_adj"] == fmt.p_value(flips.loc[flips["metric"] == "best_val_accuracy", "p_adj"].iloc[0])
    assert list(table.columns[:3]) == ["Change", "Verdict", "Interval"]  # read first: inside a 400-px screen
    assert table.loc[0, "Source"] == "fixed sample"  # where the verdict comes from (words.source_text)
    planned = tables.flip_table(flips, "test_accuracy")  # planned (vitcore.stats.plan): waits for its first look
    assert planned.loc[0, "Verdict in full"].startswith(INCONCLUSIVE)
    assert "first look at 10" in planned.loc[0, "Verdict in full"]


def test_a_pooling_change_does_not_read_as_the_gap_metric(tmp_path):
    """Under the gap metric's forest plot the pooling flip read "pooling gap → cls", as if about the gap: the
    registry's words for pooling's levels name what they are."""
    store = RunStore(tmp_path)
    for seed in range(3):
        write_run(store, BASELINE.replace(seed=seed), 0.80 + seed / 100)
        write_run(store, BASELINE.replace(seed=seed, pooling="cls"), 0.79 + seed / 100)
    frame = tables.flip_frame(stats.flip_effects(store.table(), BASELINE), "gap")
    assert list(frame["label"]) == list(frame["option"]) == ["pooling token mean → class token"]
    assert list(tables.flip_table(stats.flip_effects(store.table(), BASELINE), "gap")["Change"]) == \
        ["pooling token mean → class token"]


def test_slot_is_single_flight_and_reports_progress():
    slot, release = TrainingSlot(), threading.Event()

    def trainer(cfg, progress):
        progress(1, 2, {"accuracy": 0.5, "val_accuracy": 0.4})
        release.wait(5)
        progress(2, 2, {"accuracy": 0.6, "val_accuracy": 0.5})

    assert slot.start(BASELINE, trainer)
    assert slot.busy and not slot.start(POST, trainer)  # the second session is refused while busy
    assert slot.status.cfg == BASELINE
    release.set()
    slot.join(5)
    assert not slot.busy and slot.status.done and slot.status.error is None
    assert slot.status.epoch == 2 and [row["accuracy"] for row in slot.status.history] == [0.5, 0.6]
    assert slot.start(POST, lambda cfg, progress: None)  # free again
    slot.join(5)


def test_slot_frees_itself_after_a_failed_training():
    slot = TrainingSlot()

    def broken(cfg, progress):
        raise RuntimeError("out of memory")

    assert slot.start(BASELINE, broken)
    slot.join(5)
    assert not slot.busy and slot.status.error == "RuntimeError: out of memory"


def test_race_for_the_slot_has_exactly_one_winner():
    slot, release = TrainingSlot(), threading.Event()
    results = []
    threads = [threading.Thread(target=lambda: results.append(slot.start(BASELINE, lambda c, p: release.wait(5))))
               for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    release.set()
    slot.join(5)
    assert sorted(results) == [False] * 7 + [True]


@pytest.mark.slow  # over ~1 s on the idle box: the slow tier, so the fast tier stays under a minute
def test_downloads_are_the_cli_bytes(store, tmp_path, monkeypatch):
    monkeypatch.setattr(state, "STORE_PATH", str(store.root))
    assert cli.main(["export", "--store", str(store.root), "--out", str(tmp_path)]) == 0
    assert cli.main(["effects", "--store", str(store.root), "--out", str(tmp_path / "effects.csv")]) == 0
    for name in state.EXPORTS:
        assert state.export_csv(name) == (tmp_path / name).read_bytes(), name
    assert len(pd.read_csv(tmp_path / "effects.csv")) > 0
    with pytest.raises(ValueError):
        state.export_csv("../secrets.csv")


@pytest.mark.slow  # over ~1 s on the idle box: the slow tier, so the fast tier stays under a minute
def test_effects_downloads_follow_the_sidebars_margin(store, tmp_path, monkeypatch):
    """Before: the Runs page wrote effects.csv (full and shown) at ±0.01 whatever margin the sidebar said."""
    from vitcore.app import runs_view

    monkeypatch.setattr(state, "STORE_PATH", str(store.root))
    out = tmp_path / "effects.csv"
    assert cli.main(["effects", "--margin", "0.02", "--store", str(store.root), "--out", str(out)]) == 0
    assert state.export_csv("effects.csv", 0.02) == out.read_bytes() != state.export_csv("effects.csv")
    every = state.study().runs["run_id"]
    shown = pd.read_csv(io.BytesIO(runs_view.filtered_export_csv("effects.csv", every, 0.02)))
    assert set(shown["margin"]) >= {0.02} and shown.equals(pd.read_csv(out))


@pytest.mark.slow  # over 1 s: the slow tier (docs/contributing.md)
def test_effects_downloads_follow_your_own_centre(tmp_path, monkeypatch):
    """With your own study's centre as the sidebar's baseline (state.effects_centre), both effects.csv downloads are
    `effects --base epochs=5`'s bytes and the page names that command; around the article's ViT they stay empty."""
    from vitcore.app import runs_view

    centre = RunConfig(train_rows=1000, epochs=5)
    store = write_centre_factorial(RunStore(tmp_path / "own"), centre, seeds=3)
    monkeypatch.setattr(state, "STORE_PATH", str(store.root))
    out = tmp_path / "effects.csv"
    assert cli.main(["effects", "--base", "epochs=5", "--store", str(store.root), "--out", str(out)]) == 0
    base = state.effects_centre(centre)
    assert base == RunConfig(epochs=5) and state.effects_centre(RunConfig(train_rows=1000)) is None
    assert state.export_csv("effects.csv", base=base) == out.read_bytes()
    every = state.study().runs["run_id"]
    assert pd.read_csv(io.BytesIO(runs_view.filtered_export_csv("effects.csv", every, base=base))).equals(
        pd.read_csv(out))
    assert len(pd.read_csv(io.BytesIO(state.export_csv("effects.csv")))) == 0  # nothing around the article's ViT
    assert runs_view.effects_command(0.02, base) == "python -m vitcore effects --margin 0.02 --base epochs=5"
    assert runs_view.effects_command(0.01, None) == "python -m vitcore effects --margin 0.01"
