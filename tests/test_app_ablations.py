"""AppTest of the Ablations page on a small synthetic store whose runs keep predictions.npy: the landing
forest plot and its one-click variants, coverage captions, the URL-bound metric / margin / view, the
verdict words in the cards, the unpaired note, the flipped images and flips.csv, and a quiet Reset.

The store: the article's ViT and its post-norm variant at 4,000 rows (random seeds 0-2, predictions
kept, post-norm clearly worse), a no-position variant whose effect is small, and the ViT at 1,000 rows
(for an unpaired comparison). Predictions follow each run's confusion matrix; post-norm misses the
first 30 test images of every class that the article's ViT gets right, in every pair.
"""

import json
import logging
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from fakes import confusion, history, metrics, write_run
from streamlit.testing.v1 import AppTest

from vitcore.analysis import flips
from vitcore.app import fmt, state
from vitcore.app.ablations import panels
from vitcore.app.selection import BASELINE, CHOICES, cell_name
from vitcore.app.sidebar import PAINTED
from vitcore.config.metrics import COMPARED
from vitcore.data.fashion import official_test_labels
from vitcore.data.samples import local_data_available
from vitcore.stats import summaries as stats
from vitcore.stats import testset
from vitcore.stats.estimates import INCONCLUSIVE
from vitcore.store.runs import RunStore

APP = str(Path(__file__).resolve().parents[1] / "app.py")
POST = BASELINE.replace(norm_placement="post")
NONE = BASELINE.replace(pos_embedding="none")
SMALL = BASELINE.replace(train_rows=1_000)
ACCURACY = {BASELINE: (0.80, 0.81, 0.79), POST: (0.78, 0.785, 0.772), NONE: (0.804, 0.805, 0.795),
            SMALL: (0.70, 0.71, 0.72)}
OFFSET = {BASELINE: 0, POST: 30}  # which images of each class a run gets right (see predictions_for)

pytestmark = pytest.mark.skipif(not local_data_available(), reason="needs the official test labels")


def predictions_for(labels: np.ndarray, accuracy: float, offset: int) -> np.ndarray:
    """Predictions whose confusion matrix is fakes.confusion(accuracy): of each class's images (in test
    order, rolled by `offset`), the first ones are right, the rest take the matrix's wrong classes."""
    counts = confusion(accuracy)
    predicted = np.empty_like(labels)
    for true in range(10):
        images = np.roll(np.flatnonzero(labels == true), -offset)
        right = counts[true, true]
        predicted[images[:right]] = true
        others = [c for c in range(10) if c != true]
        predicted[images[right:]] = np.repeat(others, counts[true, others])
    return predicted


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> RunStore:
    store = RunStore(tmp_path_factory.mktemp("ablations_store"))
    labels = official_test_labels()
    for cfg, accuracies in ACCURACY.items():
        for seed, accuracy in enumerate(accuracies):
            run = cfg.replace(seed=seed)
            if cfg in OFFSET:
                summary = metrics(run, accuracy)
                store.save(run, history(run, summary), confusion(accuracy), summary,
                           predictions=predictions_for(labels, accuracy, OFFSET[cfg]))
            else:
                write_run(store, run, accuracy)
    return store


@pytest.fixture
def app(store, monkeypatch):
    monkeypatch.setattr(state, "STORE_PATH", str(store.root))

    def run(query: dict | None = None, painted: bool = True) -> AppTest:
        at = AppTest.from_file(APP, default_timeout=120)
        at.query_params.update({key: str(value) for key, value in (query or {}).items()})
        at.session_state[PAINTED] = painted  # AppTest fires no fragment timers: say where the session is
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        return at
    return run


@pytest.fixture(scope="module")
def landing(store) -> AppTest:
    """The landing at its defaults, rendered once for the tests that only read it (a test that clicks renders its
    own with `app`)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(state, "STORE_PATH", str(store.root))
        at = AppTest.from_file(APP, default_timeout=120)
        at.session_state[PAINTED] = True
        at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def titles(at: AppTest) -> list[str]:
    """Every chart's title (each chart of the page has one)."""
    found = [json.loads(chart.proto.spec)["title"] for chart in at.get("vega_lite_chart")]
    return [" ".join(title["text"]) if isinstance(title, dict) else title for title in found]  # wrapped: lines


def card_text(at: AppTest) -> str:
    return "\n".join(md.value for md in at.markdown)


def test_landing_leads_with_the_forest_plot_of_every_single_switch_effect(landing):
    at = landing
    assert "What flipping one switch of ViT p7 pre-LN pos · 4,000 rows" in titles(at)[0]
    pills = at.button_group(key="variant_pick")
    assert sorted(option.content for option in pills.proto.options) == [
        "norm placement pre → post", "position embedding learned → none"]
    assert [metric.value for metric in at.metric][0] == f"{np.mean(ACCURACY[BASELINE]):.4f}"
    assert "this is the baseline" in card_text(at)


def test_one_click_selects_a_variant_and_the_cards_lead_with_verdicts(app):
    at = app()
    at.button_group(key="variant_pick").set_value("norm placement pre → post").run()
    assert not at.exception and at.session_state["norm_placement"] == "post"
    text = card_text(at)
    assert ":red-badge[worse]" in text and "over random seeds 0, 1, 2 (3 pairs)" in text
    delta = np.mean(ACCURACY[POST]) - np.mean(ACCURACY[BASELINE])
    assert at.metric[0].value == f"{np.mean(ACCURACY[POST]):.4f}" and at.metric[0].delta == f"{delta:+.4f}"
    assert not any("What flipping one switch" in spec for spec in titles(at))  # the cards lead now
    # every pair kept its predictions: test accuracy's interval counts the test images too, the seed-only one beside it
    row = state.comparison(POST, BASELINE).metrics.set_index("metric").loc["test_accuracy"]
    assert row["n_pairs_with_test"] == 3 and row["interval"] in (testset.WITH_TEST, testset.SEEDS_ONLY)
    seeds = f"[{row['ci_low_seeds']:+.4f}, {row['ci_high_seeds']:+.4f}]"
    assert (f"as wide as {seeds} over random seeds alone" if row["interval"] == testset.WITH_TEST
            else f"over random seeds alone {seeds}") in text


def test_sidebar_options_say_what_is_stored(landing):
    at = landing
    assert list(at.radio(key="patch_size").proto.captions) == ["not trained", "not trained", "3 seeds", "not trained"]
    # … 16,000
    assert list(at.radio(key="train_rows").proto.captions) == ["3 seeds", "not trained", "3 seeds", "not trained",
                                                               "not trained"]
    assert list(at.radio(key="model").proto.captions) == ["3 seeds", "not trained"]


def test_metric_margin_and_view_come_from_the_url(app):
    at = app({"pos_embedding": "none", "metric": "gap", "margin": "0.05", "view": "Flip one switch"})
    assert at.button_group(key="metric").value == "gap" and at.button_group(key="margin").value == 0.05
    assert ":gray-badge[equivalent] within ±0.050" in card_text(at)
    (table,) = [frame.value for frame in at.dataframe]
    assert list(table["Change"]) == ["position embedding none → learned"]  # the one stored flip
    expected = stats.flip_effects(RunStore(state.STORE_PATH).table(), NONE, margin=0.05)
    assert table["Δ"].iloc[0] == pytest.approx(expected.loc[expected["metric"] == "gap", "mean_delta"].iloc[0])


def test_inconclusive_cards_say_how_many_more_random_seeds(app):
    at = app({"pos_embedding": "none"})
    assert f":orange-badge[{INCONCLUSIVE}] needs" in card_text(at)
    assert "paired random seeds for 80% assurance (" in card_text(at)


def test_a_baseline_at_other_rows_is_unpaired_and_says_so(app):
    at = app({"train_rows": 1000, "baseline": cell_name(BASELINE)})
    assert "**unpaired**" in card_text(at) and "(its own runs)" in card_text(at)


def test_flipped_images_against_seed_noise_and_flips_csv(app):
    at = app({"norm_placement": "post", "view": "Flipped images"})
    text = card_text(at)
    assert "3 pairs with predictions" in text and "expected if the switch picked no direction" in text
    assert [button.proto.label for button in at.get("download_button")] == ["flips.csv"]
    store = RunStore(state.STORE_PATH)
    table = store.table()
    paired = flips.paired_predictions(lambda run_id: store.load(run_id).predictions(), stats.runs_of(table, POST),
                                      stats.runs_of(table, BASELINE))
    expected = flips.flip_report(paired, official_test_labels())
    broken = expected.images[expected.images["direction"] == flips.BROKEN]
    assert expected.observed[flips.BROKEN] == 300 and (broken["newly_wrong"] == 3).sum() == 300  # 30 per class
    shown = panels.flip_evidence(POST, BASELINE)  # what the page draws and offers as flips.csv
    assert shown.n_pairs == 3
    pd.testing.assert_frame_equal(shown.images, expected.images)
    assert list(at.dataframe[0].value["Newly wrong"]) == [f"{n:,}" for n in expected.pairs["newly_wrong"]]  # '3,272'
    # three pairs cannot tell a switch from random-seed noise: no image is ranked
    assert "cannot separate the switch from random-seed noise" in at.warning[0].value
    assert not at.get("image") and expected.listed.empty


def test_reset_returns_everything_to_the_defaults_without_a_warning(app, caplog):
    from streamlit.elements.lib import policies

    query = {"norm_placement": "post", "margin": "0.05", "metric": "gap", "baseline": cell_name(BASELINE),
             "view": "Main effects"}
    at = app(query)
    policies._shown_default_value_warning = False  # Streamlit logs it once per process: make this run count
    records = []
    handler = logging.Handler()
    handler.emit = records.append
    logging.getLogger("streamlit.elements.lib.policies").addHandler(handler)
    try:
        at.button(key="reset_switches").click().run()
    finally:
        logging.getLogger("streamlit.elements.lib.policies").removeHandler(handler)
    assert not at.exception
    assert not [r for r in records if "Session State API" in r.getMessage()]
    assert at.session_state["norm_placement"] == "pre" and at.session_state["margin"] == 0.01
    assert at.session_state["metric"] == "test accuracy" and at.session_state["view"] == "Learning curves"
    assert at.session_state["baseline"] == "the article's ViT at the selected rows"
    assert not set(query) & set(at.query_params)  # defaults leave the URL clean


def test_main_effects_view_and_interactions_toggle(app):
    at = app({"view": "Main effects", "interactions": "true"})
    assert any("Main effects on test accuracy" in spec for spec in titles(at))
    assert at.toggle(key="interactions").value


def test_a_first_visit_paints_the_cards_before_the_sidebar_and_any_chart(app):
    at = app({"norm_placement": "post"}, painted=False)
    assert len(at.metric) == len(COMPARED) and not at.get("vega_lite_chart") and not at.tabs and not at.radio
    assert at.metric[0].value == f"{np.mean(ACCURACY[POST]):.4f}"  # the URL's selection, before the sidebar
    at.session_state[PAINTED] = True  # what the sidebar fragment's timed rerun does
    at.run()
    assert at.get("vega_lite_chart") and [tab.label for tab in at.tabs][0] == "Learning curves"


def test_a_first_visit_to_the_landing_paints_its_forest_plot_first(app):
    at = app(painted=False)
    assert [title.startswith("What flipping one switch") for title in titles(at)] == [True]
    assert not at.metric and not at.radio  # the cards and the sidebar follow on the next run
    at.session_state[PAINTED] = True
    at.run()
    assert len(at.metric) == len(COMPARED)


def test_a_repeated_first_paint_builds_neither_the_baseline_list_nor_the_forest_table(app, store, monkeypatch):
    """Before: every page run built the baseline choices twice (the sidebar and state.baseline(): a RunConfig per
    stored config: tens of ms on the committed store) and the forest plot's table even when its spec was
    cached, all before the first paint's chart."""
    from stores import settled

    from vitcore.app import tables

    settled(store.root)  # else each look at a store this new takes a new state key and builds everything again
    built = {"cells": 0, "frame": 0}

    def counted(name, function):
        def wrapper(*args, **kwargs):
            built[name] += 1
            return function(*args, **kwargs)
        return wrapper

    monkeypatch.setattr(state, "baseline_cells", counted("cells", state.baseline_cells))
    monkeypatch.setattr(tables, "flip_frame", counted("frame", tables.flip_frame))
    state._baseline_choices.clear()
    first = titles(app(painted=False))
    assert built["cells"] <= 1 and built["frame"] <= 1  # at most once, for a store state not seen before
    built.update(cells=0, frame=0)
    assert titles(app(painted=False)) == first and built == {"cells": 0, "frame": 0}  # a second visitor



def test_training_rows_read_by_the_number_rule_and_keep_their_url_values(app, landing):
    """The sidebar says '1,000' as every page does, while the URL keeps `?train_rows=1000`
    (Streamlit would bind the label '1,000'): old links restore the state, the widget's value goes back
    into the URL as the plain number, a value that is not an option is named and dropped. (AppTest reruns
    only the page after the first run, so clicks and page switches are checked in tests/test_browser.py.)"""
    at = app({"train_rows": 1000})
    rows = at.radio(key="train_rows")
    assert list(rows.proto.options) == [fmt.rows(option) for option in CHOICES["train_rows"]]
    assert "1,000" in rows.proto.options and rows.value == 1000 and at.query_params["train_rows"] == "1000"
    assert at.metric[0].value == f"{np.mean(ACCURACY[SMALL]):.4f}"  # the page at 1,000 rows
    assert "train_rows" not in landing.query_params  # the default leaves the URL clean
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state[PAINTED], at.session_state["train_rows"] = True, 1000  # the widget moved, no URL value
    at.run()
    assert at.query_params["train_rows"] == "1000" and at.metric[0].value == f"{np.mean(ACCURACY[SMALL]):.4f}"
    at = app({"train_rows": "1,000"})  # the label is not a URL value
    assert "train_rows" not in at.query_params and at.radio(key="train_rows").value == 4000
    assert any("`train_rows=1,000`" in warning.value for warning in at.warning)


def test_the_forest_caption_never_counts_an_unproven_order_as_blind():
    """On a shallow clone git proves no plan's order: its verdicts read 'blind (order not proven)' and the caption
    counts them apart, not among the blind ones."""
    proven = "plan confirm, blind, look 1 of 4"
    shallow = "plan confirm, blind (order not proven: the Plans page says why), look 1 of 4"
    frame = pd.DataFrame({"verdict_from": [proven, shallow, shallow, "fixed sample (not in a plan)"],
                          "seen_before_plan": [False] * 4, "replication": ["replicated", "", "", ""]})
    text = panels.plan_caption(frame)
    assert "1 of these verdicts come from a blind plan" in text and "2 from a blind plan whose order git does not " \
        "prove (order not proven" in text
    assert "come from a blind plan" not in panels.plan_caption(frame.assign(verdict_from=shallow))


def test_the_test_accuracy_cards_verdict_line_sits_at_the_same_place_whatever_the_rows(tmp_path, monkeypatch):
    """Issue 58: at rows whose pairs kept their predictions the test-set line (~230 characters, eight lines of a
    fifth of 1,400 px) came before the verdict, so the verdict sank below the fold when the sidebar's rows changed.
    Post-norm against the article's ViT at 4,000 rows (predictions kept: the test-set line shown) and at 1,000 rows
    (none kept): the Test accuracy card's verdict badge is its first line both times."""
    store = RunStore(tmp_path / "store")
    labels = official_test_labels()
    for cfg in (BASELINE, POST):
        for seed, accuracy in enumerate(ACCURACY[cfg]):
            run = cfg.replace(seed=seed)
            summary = metrics(run, accuracy)
            store.save(run, history(run, summary), confusion(accuracy), summary,
                       predictions=predictions_for(labels, accuracy, OFFSET[cfg]))
            write_run(store, run.replace(train_rows=1_000), accuracy - 0.1)  # no predictions kept
    monkeypatch.setattr(state, "STORE_PATH", str(store.root))
    places = {}
    for rows in (4_000, 1_000):
        at = AppTest.from_file(APP, default_timeout=120)
        at.query_params.update({"norm_placement": "post", "train_rows": str(rows)})
        at.session_state[PAINTED] = True
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        card = next(md.value for md in at.markdown if "(same random seeds)" in md.value)  # the first card's text
        lines = card.split("  \n")
        assert ("over random seeds alone" in card) == (rows == 4_000)  # the test-set line only where kept
        places[rows] = [k for k, line in enumerate(lines) if "-badge[" in line]
    assert places == {4_000: [0], 1_000: [0]}, places
