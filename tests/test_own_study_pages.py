"""Your own study at docs/own-ablation.md's size: a store holding only a 300-row depth study renders every page,
offers 300 rows in the sidebar, and the server's warm-up does not raise on it."""

import pytest
from fakes import write_centre_factorial, write_run
from streamlit.testing.v1 import AppTest
from test_app_pages import APP, PAGES

from vitcore.app import state
from vitcore.app.sidebar import PAINTED
from vitcore.config.run import RunConfig
from vitcore.store.runs import RunStore


@pytest.fixture
def own_study(tmp_path, monkeypatch) -> RunStore:
    store = RunStore(tmp_path / "own")
    for seed in range(4):
        for depth in (2, 1, 4):
            write_run(store, RunConfig(train_rows=300, seed=seed, depth=depth), 0.70 - 0.01 * depth + 0.002 * seed)
    monkeypatch.setattr(state, "STORE_PATH", str(store.root))
    return store


@pytest.mark.slow
def test_every_page_renders_a_300_row_own_study(own_study):
    for page in PAGES:
        at = AppTest.from_file(APP, default_timeout=120)
        at.switch_page(page)
        at.query_params.update({"train_rows": "300", "depth": "1"})
        at.session_state[PAINTED] = True
        at.run()
        assert not at.exception, (page, [e.value for e in at.exception])
        rows = next(radio for radio in at.radio if radio.label == "Training rows")
        assert "300" in rows.options and rows.value == 300, page  # selectable (shown as "300"), the URL's 300 taken


@pytest.mark.slow
def test_the_warm_up_does_not_raise_on_an_own_study(own_study):
    from vitcore.app.ablations.panels import warm_caches

    assert "flip and main effects" in warm_caches()  # the article's ViT at 4,000 rows has no run here


@pytest.fixture
def own_centre(tmp_path, monkeypatch) -> RunStore:
    """Your own factorial at 5 epochs (norm and position embedding crossed, 300 rows, 4 random seeds): no run at
    the article's 15 epochs."""
    store = write_centre_factorial(RunStore(tmp_path / "centre"), RunConfig(train_rows=300, epochs=5), seeds=4)
    monkeypatch.setattr(state, "STORE_PATH", str(store.root))
    return store


@pytest.mark.slow  # two page runs, over 1 s: the slow tier (docs/contributing.md)
def test_main_effects_centre_on_your_own_study_chosen_as_the_baseline(own_centre):
    """The Main effects view around the sidebar's baseline when that is your own study's centre (as `effects --base
    epochs=5`), its families named by it; that centre is also the default baseline of a store without the article's
    ViT."""
    from vitcore.app.selection import cell_name
    from vitcore.study import Study

    def captions(baseline: str | None, page: str = "views/ablations.py") -> str:
        at = AppTest.from_file(APP, default_timeout=120)
        at.switch_page(page)
        at.query_params.update({"train_rows": "300", "view": "Main effects", **({"baseline": baseline} if baseline
                                                                                 else {})})
        at.session_state[PAINTED] = True
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        return " ".join(c.value for c in at.caption)

    centre = RunConfig(train_rows=300, epochs=5)
    shown = captions(cell_name(centre))
    assert captions(None) == shown  # no article's ViT stored: the store's centre is the default baseline
    expected = Study.open(own_centre.root, warn=False).effects(base=centre)
    family = expected.set_index(["factor", "metric"]).loc[("norm", "test_accuracy"), "family"]
    assert family == f"main effects around {centre.label()} at 300 rows" and family in shown
    assert "`python -m vitcore effects --margin 0.01 --base epochs=5`" in captions(cell_name(centre), "views/runs.py")


@pytest.fixture
def base_study(tmp_path, monkeypatch) -> RunStore:
    """`sweep --vary depth=1 --seeds 0-1 --rows 300 --base epochs=2`, without training."""
    store = RunStore(tmp_path / "base")
    for seed in range(2):
        write_run(store, RunConfig(train_rows=300, epochs=2, seed=seed), 0.42 + 0.01 * seed)
        write_run(store, RunConfig(train_rows=300, epochs=2, depth=1, seed=seed), 0.44 + 0.01 * seed)
    monkeypatch.setattr(state, "STORE_PATH", str(store.root))
    return store


def _page(query: dict, page: str = "views/ablations.py") -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.switch_page(page)
    at.query_params.update(query)
    at.session_state[PAINTED] = True
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.slow  # three page runs: over 1 s
def test_a_base_study_lands_on_its_own_runs(base_study):
    """The landing of a `--base epochs=2` store shows its base's runs (no "no stored runs yet"), with a control for
    depth, for epochs (at 2) and the 300 rows; `?epochs=2` is its default and `?epochs=7` is noted."""
    at = _page({})
    assert not [w.value for w in at.warning], [w.value for w in at.warning]
    assert "**ViT p7 pre-LN pos epochs 2 · 300 rows** is the baseline" in at.markdown[0].value
    radios = {radio.label: radio for radio in at.radio}
    assert radios["Epochs"].value == 2 and radios["Depth"].value == 2 and radios["Training rows"].options == ["300"]
    assert "Model" not in radios and len(at.metric) == 5
    assert at.metric[0].value == f"{0.425:.4f}"  # the base's two random seeds
    flipped = _page({"depth": "1", "epochs": "2"})
    assert not flipped.warning and "against the baseline **ViT p7 pre-LN pos epochs 2 · 300 rows**" in \
        flipped.markdown[0].value
    (note,) = [w.value for w in _page({"epochs": "7"}).warning]
    assert note.startswith("`epochs=7` is not a valid value") and "showing `2`" in note


@pytest.mark.slow  # one page run
def test_main_effects_of_a_base_study_carry_its_rows(base_study):
    """The Main effects of a 300-row study are titled with 300 rows, around its base."""
    from test_app_ablations import titles

    from vitcore.app.selection import cell_name

    chosen = {"view": "Main effects", "baseline": cell_name(RunConfig(train_rows=300, epochs=2))}  # as by default
    main = [title for title in titles(_page(chosen)) if title.startswith("Main effects on test")]
    assert main == ["Main effects on test accuracy at 300 rows: a level minus ViT p7 pre-LN pos epochs 2, averaged "
                    "over the other switches (all cells)"]


def test_a_base_studys_sidebar_shows_what_it_varies_and_folds_the_rest(base_study):
    """The sidebar of a `--vary depth=1 --base epochs=2` store: Depth (its own two values, no untrained 4) and the
    rows on top; every switch its runs hold at one value (Epochs 2, the ablation switches) folded under one line."""
    at = _page({})
    (folded,) = [e for e in at.sidebar.expander if "at one value in this store" in e.label]
    inside = {radio.label for radio in folded.radio}
    assert {"Epochs", "Position embedding", "Norm", "Pooling"} <= inside and "Depth" not in inside
    radios = {radio.label: radio for radio in at.sidebar.radio}
    assert radios["Depth"].options == ["1", "2"] and radios["Epochs"].options == ["2"]
    assert radios["Pooling"].options == ["token mean", "class token"]  # the forest plot's words


def test_a_base_studys_plans_page_lists_no_built_in_plan_as_its_own(base_study):
    """The built-in plans judge nothing in your own store: folded under one line, never listed as its plans."""
    at = _page({}, "views/plans.py")
    top = [s.value for s in at.main.subheader if s.value.startswith("Plan ")]
    (folded,) = [e for e in at.main.expander if "judge" in e.label and "nothing in this store" in e.label]
    assert "builtin" in folded.label and not [t for t in top if t not in [s.value for s in folded.subheader]]
    assert any("No plan judges a run of this store yet" in i.value for i in at.info)


def test_a_base_studys_seconds_card_reads_in_plain_words(base_study):
    at = _page({})
    (card,) = [md.value for md in at.markdown if "timed" in md.value and "sd over" in md.value]  # the Seconds card
    assert "timed one run after another" in card and "XLA" not in card and "training code" not in card, card
