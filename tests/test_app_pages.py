"""AppTest on the real entrypoint: every page renders, the sidebar switches show the matching stored
run's numbers, bad URLs get a note, uncached configs get the train offer, and none of it imports TensorFlow.

The store is `page_store` (tests/conftest.py): a copy of the committed runs the pages draw from by default
and the configs these tests select, so a page run costs what the page costs, not a recomputation of the
whole committed store's analyses. A few renders of the whole committed store (every page; the main effects
on its full factorial) are in the slow tier.

Note (Streamlit 1.67 AppTest): with file-based st.Page pages, the entrypoint's sidebar elements are
missing from the element tree after the second run (the app itself is fine), so each scenario
starts a fresh AppTest and sets at most one widget before its second run.
"""

import json
import re
import sys
from pathlib import Path

import pytest
from fakes import write_run
from streamlit.testing.v1 import AppTest

from vitcore.app import fmt, state
from vitcore.app.selection import BASELINE, SIDEBAR_KEYS, store_choices
from vitcore.app.sidebar import PAINTED
from vitcore.app.training import slot as slot_module
from vitcore.config.run import RunConfig
from vitcore.config.switches import REGISTRY
from vitcore.stats import compare, seconds
from vitcore.stats import summaries as stats
from vitcore.stats.estimates import NOT_COMPARABLE
from vitcore.store.runs import RunStore
from vitcore.study import Study

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
PAGES = ["views/ablations.py", "views/claims.py", "views/plans.py", "views/noise.py", "views/runs.py",
         "views/patching.py",
         "views/anatomy.py", "views/token_cost.py", "views/attention.py", "views/vit_vs_convnet.py"]
# One flip per sidebar switch, each a config the committed sweep holds at 3 seeds (and page_store too).
FLIPS = [("model", "convnet"), ("pos_embedding", "none"), ("norm_placement", "post"), ("norm", "batch"),
         ("patch_size", 4), ("train_rows", 1_000), ("warmup_epochs", 2)]


pytestmark = pytest.mark.usefixtures("on_page_store")  # tests/conftest.py: the app reads page_store


@pytest.fixture(scope="module")
def table(page_store):
    return page_store.table()


@pytest.fixture
def committed(monkeypatch, committed_table):
    """The whole committed store instead (the slow tier's full-store renders): its table."""
    monkeypatch.setattr(state, "STORE_PATH", str(ROOT / "cached_runs"))
    return committed_table


def shown_values(table, cfg: RunConfig) -> list[str]:
    """The metric cards' values for cfg as the page prints them: the means over the random seeds paired
    with its default baseline (vitcore.stats.compare), or over all its seeds when cfg is that baseline (seconds:
    over its reference timing group, vitcore.stats.seconds)."""
    runs = stats.runs_of(table, cfg)
    assert len(runs), f"{cfg.label()} at {cfg.train_rows} rows is not in {state.STORE_PATH}"
    own_seconds = seconds.seconds_summary(runs)["mean"]  # one timing group's, never pooled across groups
    if cfg == compare.default_baseline(cfg):
        means = [own_seconds if m == "seconds" else runs[m].mean() for m in stats.METRICS]
    else:  # seconds not timed as a design (no verdict, vitcore.stats.seconds): the card shows the config's own time
        rows = compare.compare(table, cfg).metrics
        means = [own_seconds if m == "seconds" and verdict == NOT_COMPARABLE else mean
                 for m, mean, verdict in zip(stats.METRICS, rows["selection_mean"], rows["verdict"])]
    return [fmt.number(mean, fmt.digits(m)) for m, mean in zip(stats.METRICS, means)]  # the one rounding


def uncached(table) -> dict:
    """A sidebar selection with no stored runs (the background sweep fills the store as tests run)."""
    for query in ({"patch_size": 2, "norm": "batch"}, {"patch_size": 2, "pos_embedding": "none"},
                  {"warmup_epochs": 5, "patch_size": 14}):
        if stats.runs_of(table, BASELINE.replace(**query)).empty:
            return query
    pytest.skip("every candidate selection has runs now")


def app(query: dict | None = None, page: str | None = None) -> AppTest:
    """A fresh session of the frame, opened on `page` (default: the Ablations page) with `query` in its URL."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({key: str(value) for key, value in (query or {}).items()})
    at.session_state[PAINTED] = True  # as after the first paint's second run (AppTest fires no timers)
    if page is not None:
        at.switch_page(page)  # before the first run: the session opens on it
    return at.run()


def test_default_view_is_the_article_vit_against_itself(table):
    at = app()
    assert not at.exception
    assert [metric.value for metric in at.metric] == shown_values(table, BASELINE)
    base = stats.runs_of(table, BASELINE)["test_accuracy"]
    assert at.metric[0].value == fmt.number(base.mean())  # 0.79185 reads 0.7919 here and on every variant's card
    under_first_card = [md.value for md in at.markdown if "this is the baseline" in md.value][0]
    assert under_first_card.startswith(f"± {fmt.number(base.std())} sd over {len(base)} random seeds")


@pytest.mark.slow  # over 1 s a case: the slow tier, so the fast tier stays under a minute (docs/contributing.md)
@pytest.mark.parametrize("key, value", FLIPS)
def test_each_sidebar_switch_shows_the_matching_cached_run(table, key, value):
    at = app()
    at.radio(key=key).set_value(value).run()
    assert not at.exception
    expected = shown_values(table, BASELINE.replace(**{key: value}))
    assert [metric.value for metric in at.metric] == expected
    assert expected != shown_values(table, BASELINE)


def test_a_copied_link_reproduces_the_view(table):
    cfg = RunConfig(norm="batch", patch_size=4, train_rows=1_000)
    at = app({"norm": "batch", "patch_size": 4, "train_rows": 1_000})
    assert [metric.value for metric in at.metric] == shown_values(table, cfg)
    assert not at.warning  # valid values: no note


def test_convnet_disables_the_vit_switches_without_hiding_them(table):
    at = app({"model": "convnet"})
    disabled = {radio.key: radio.disabled for radio in at.radio if radio.key in SIDEBAR_KEYS}
    shown = store_choices(Study(table))  # a free field (width, epochs, ...) only where the store varies it
    assert disabled == {"model": False, "train_rows": False,
                        **{s.name: not s.applies("convnet") for s in REGISTRY if s.name in shown}}
    assert disabled["pos_embedding"] and disabled["patch_size"] and not disabled["warmup_epochs"]


@pytest.mark.parametrize("query, key", [({"patch_size": "5"}, "patch_size"),
                                        ({"norm": "<script>alert(1)</script>"}, "norm")])
def test_invalid_query_value_falls_back_with_a_visible_note(table, query, key):
    at = app(query)
    assert not at.exception
    notes = [warning.value for warning in at.warning if warning.value.startswith(f"`{key}=")]
    assert len(notes) == 1 and "default" in notes[0]
    assert [metric.value for metric in at.metric] == shown_values(table, BASELINE)


def test_uncached_config_offers_training_with_an_estimate(table, monkeypatch):
    monkeypatch.delenv("VITCORE_ALLOW_TRAINING", raising=False)
    # the offer itself, not the per-click budget (a day: the most allowed)
    monkeypatch.setenv("VITCORE_MAX_TRAIN_MINUTES", "1440")
    at = app(uncached(table))
    assert not at.exception and not at.metric
    assert any("no stored runs yet" in warning.value for warning in at.warning)
    assert any("Estimated training time" in caption.value for caption in at.caption)
    assert "Train now" in [button.label for button in at.button]


def test_training_switched_off_removes_the_button(table, monkeypatch):
    monkeypatch.setenv("VITCORE_ALLOW_TRAINING", "0")
    at = app(uncached(table))
    assert "Train now" not in [button.label for button in at.button]
    assert any("VITCORE_ALLOW_TRAINING=0" in info.value for info in at.info)


def test_a_view_only_install_shows_the_install_line_instead_of_the_button(table, monkeypatch):
    monkeypatch.delenv("VITCORE_ALLOW_TRAINING", raising=False)
    monkeypatch.setenv("VITCORE_MAX_TRAIN_MINUTES", "100000")
    monkeypatch.setitem(sys.modules, "tensorflow", None)  # what `import tensorflow` finds without it installed
    at = app(uncached(table))
    assert not at.exception and "Train now" not in [button.label for button in at.button]
    assert any("pip install -r requirements-train.txt" in info.value for info in at.info)


def test_other_sessions_see_the_server_busy(table, monkeypatch):
    import threading

    release = threading.Event()
    slot = slot_module.SERVER_SLOT
    assert slot.start(RunConfig(train_rows=8_000), lambda cfg, progress: release.wait(30))
    try:
        at = app(uncached(table))
        assert "Train now" not in [button.label for button in at.button]
        assert any("started by another session" in info.value for info in at.info)
    finally:
        release.set()
        slot.join(10)


@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders(page):
    at = app(page=page)
    assert not at.exception, [exception.value for exception in at.exception]


@pytest.mark.slow  # 9 renders of the whole committed store, each page's analyses computed cold (many seconds)
@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders_on_the_committed_store(committed, page):
    at = app(page=page)
    assert not at.exception, [exception.value for exception in at.exception]


FRESH_PROCESS = """
import json
import sys
from streamlit.testing.v1 import AppTest
from vitcore.app.ablations.panels import warm_caches
steps = warm_caches()  # what streamlit_app.py's start-up hook runs
assert list(steps) == ["imports", "runs table and metric cards", "curves and confusions",
                       "flip and main effects"], steps
for page, query in (("views/ablations.py", {}), ("views/ablations.py", {"patch_size": "2", "train_rows": "8000"}),
                    *((f"views/{name}.py", {}) for name in ("runs", "claims", "plans", "noise", "patching", "anatomy",
                                                             "token_cost", "attention", "vit_vs_convnet"))):
    at = AppTest.from_file(%r, default_timeout=120)
    at.query_params.update(query)
    at.run()
    at.switch_page(page).run()
    assert not at.exception, page
print("tensorflow" in sys.modules, "keras" in sys.modules)
"""


@pytest.mark.slow
def test_no_page_imports_tensorflow_or_keras(page_store):
    """In a fresh interpreter (pytest's own process has TensorFlow from other test modules): the
    server's cache warm-up, the ablations page, its uncached path, and every other page run without
    importing TensorFlow or Keras (the view-only install, requirements.txt, has neither): Anatomy counts from
    formulas, Attention runs the stored weights in NumPy. On the page store, the runs every page draws
    from (the whole committed store's renders: test_every_page_renders_on_the_committed_store)."""
    import os
    import subprocess

    done = subprocess.run([sys.executable, "-c", FRESH_PROCESS % APP], capture_output=True, text=True, timeout=300,
                          cwd=Path(APP).parent, env={**os.environ, "VITCORE_STORE": str(page_store.root)})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "False False"


def test_runs_page_follows_the_sidebar_and_offers_each_download_shown_and_full(table):
    at = app(page="views/runs.py")
    shown = at.dataframe[0].value
    assert set(shown["config_id"]) == {BASELINE.config_id}  # the sidebar's selection: the article's ViT
    assert len(shown) == len(stats.runs_of(table, BASELINE))
    assert list(shown["seed"]) == sorted(shown["seed"])  # random seeds in order
    buttons = [button.proto for button in at.get("download_button")]  # per file: shown, then all
    assert [button.label for button in buttons] == [f"{kind} ({n:,} runs)" for _ in state.EXPORTS
                                                    for kind, n in (("shown", len(shown)), ("all", len(table)))]
    files = [markdown.value.strip("`") for markdown in at.markdown if markdown.value.strip("`") in state.EXPORTS]
    assert files == list(state.EXPORTS)
    # one config shown: its effects.csv would be a header alone, so that button is off and says why
    assert [button.disabled for button in buttons] == [name == "effects.csv" and kind == "shown"
                                                       for name in state.EXPORTS for kind in ("shown", "all")]
    assert any(caption.value.startswith("effects.csv, shown: off") for caption in at.caption)


def test_metric_choice_redraws_the_flip_table(table):
    at = app({"norm": "batch", "view": "Flip one switch"})
    expected = stats.flip_effects(table, BASELINE.replace(norm="batch"))
    flips = at.dataframe[0].value
    assert list(flips["Δ"]) == pytest.approx(list(expected[expected["metric"] == "test_accuracy"]["mean_delta"]))
    at.button_group(key="metric").set_value("gap").run()
    assert not at.exception
    assert list(at.dataframe[0].value["Δ"]) == pytest.approx(list(expected[expected["metric"] == "gap"]["mean_delta"]))


@pytest.mark.slow  # the factorial is the committed store's (page_store has no grid); the synthetic grid of
def test_interactions_toggle_adds_its_chart(committed):  # tests/test_app_ablations.py is in the fast tier
    at = app({"view": "Main effects"})
    charts = len(at.get("vega_lite_chart"))
    at.toggle(key="interactions").set_value(True).run()
    assert not at.exception
    assert len(at.get("vega_lite_chart")) == charts + 4  # the interactions and their per-cell strip, 2 panels each


@pytest.mark.slow  # a property of the committed runs' full factorial: a full-store render
def test_main_effects_say_where_the_layernorm_cells_change_a_verdict(committed):
    """Post-norm at 1,000 rows: the average over all cells is pulled by the BatchNorm cells; the page says
    so (a warning naming both verdicts), flags the cells' sign disagreement and draws the per-cell strip."""
    from vitcore.stats import percell

    at = app({"view": "Main effects"})
    assert not at.exception
    everything = stats.main_effects(committed, ("test_accuracy",))
    layer = stats.main_effects(percell.restrict(committed, percell.LAYER_NORM), ("test_accuracy",))
    both = everything.merge(layer, on=["factor", "level", "train_rows"], suffixes=("_all", "_layer"))
    post = both[(both["factor"] == "norm_placement") & (both["train_rows"] == 1000)].iloc[0]
    assert post["verdict_all"] != post["verdict_layer"]
    warnings = [w.value for w in at.warning if "LayerNorm cells only" in w.value]
    assert len(warnings) == 1 and "norm placement post (vs pre) at 1,000 rows" in warnings[0]
    assert f"{post['verdict_all']} ({post['mean_delta_all']:+.4f}" in warnings[0]
    assert f"{post['verdict_layer']} ({post['mean_delta_layer']:+.4f}" in warnings[0]
    assert any("Cells disagree in sign beyond noise" in md.value and "norm placement post (vs pre) at 1,000 rows"
               in md.value for md in at.markdown)
    assert any("in every cell of the other switches" in chart_title(c) for c in at.get("vega_lite_chart"))
    at.button_group(key="cells").set_value(percell.LAYER_NORM).run()
    assert not at.exception
    assert any("(LayerNorm cells only)" in chart_title(c) for c in at.get("vega_lite_chart"))


def chart_title(chart) -> str:
    """A chart's title as one line (a long title is wrapped into lines for a phone)."""
    title = json.loads(chart.proto.spec).get("title", "")
    return " ".join(title["text"]) if isinstance(title, dict) else str(title)


def test_reset_returns_every_switch_to_the_article_vit(table):
    at = app({"norm": "batch", "patch_size": 4, "model": "convnet"})
    at.button(key="reset_switches").click().run()
    assert not at.exception
    assert [metric.value for metric in at.metric] == shown_values(table, BASELINE)
    assert not {"norm", "patch_size", "model"} & set(at.query_params)  # defaults leave the URL clean


def test_the_sidebar_names_pooling_as_the_forest_plot_and_plans_do(table):
    """The sidebar said "gap / cls", the forest plot "pooling token mean → class token": one name per level (the
    registry's words), while the URL keeps the level itself (`?pooling=cls`)."""
    at = app({"pooling": "cls"})
    assert not at.exception
    radio = at.radio(key="pooling")
    assert radio.options == ["token mean", "class token"] and radio.value == "cls"
    assert at.query_params["pooling"] in ("cls", ["cls"])
    radio.set_value("gap").run()
    assert "pooling" not in at.query_params  # the default leaves the URL clean


def sentences(text: str) -> list[str]:
    """A caption's sentences: split after '.', '?' or '!' where the next word starts a sentence."""
    return [part for part in re.split(r"(?<=[.?!])\s+(?=[A-Z0-9*`\"†(])", text.strip()) if part]


@pytest.mark.parametrize("page", [None, "views/plans.py", "views/noise.py"])
def test_no_caption_is_over_two_sentences(table, page):
    """The landing's forest-plot caption, Plans and Seed noise were paragraphs a newcomer skips: at most two
    sentences each, the details behind a help icon."""
    at = app(page=page)
    assert not at.exception
    long = [caption.value for caption in at.caption if len(sentences(caption.value)) > 2]
    assert not long, long
    if page == "views/plans.py":  # each plan's summary too: two sentences, its hash and the rest under "Details"
        summaries = [md.value for md in at.markdown if md.value.startswith("Registered ")]
        assert summaries and all(len(sentences(text)) <= 2 and "sha256" not in text for text in summaries), summaries
        details = [md.value for expander in at.expander if expander.label == "Details" for md in expander.markdown]
        assert len(details) == len(summaries) and all("- sha256 `" in text for text in details)
    if page is None:  # the forest plot's caption is among them; the Seconds card in plain words, details in its help
        assert any(caption.value.startswith("Dot: mean paired Δ") for caption in at.caption)
        timed = [md.value for md in at.markdown if "timed" in md.value]
        assert timed and not [text for text in timed if "XLA" in text or "intra-op" in text], timed


def test_the_plans_tables_lead_with_the_verdict_and_name_levels_as_the_forest_plot(table):
    """At 400 px the Plans table showed its question, rows and look, the Replication column off screen: the key
    columns come first; a question reads 'pooling class token', not `pooling=cls`."""
    at = app(page="views/plans.py")
    assert not at.exception
    frames = [frame.value for frame in at.dataframe]
    assert frames and all(list(frame.columns[:2]) == ["Question", "Verdict"] for frame in frames)
    assert any(list(frame.columns[:3]) == ["Question", "Verdict", "Replication"] for frame in frames)
    questions = {q for frame in frames for q in frame["Question"]}
    assert "pooling class token" in questions and not [q for q in questions if "=" in q]


# The papers' levels: each from the URL, as a copied link would give it, on every page.
PAPER_LEVELS = [("pos_embedding", "sincos"), ("pooling", "cls"), ("tokenizer", "shifted"), ("self_attention", "lsa")]


@pytest.mark.slow  # 8 full-store page renders per level (seconds each): the slow tier, still in CI
@pytest.mark.parametrize("key, value", PAPER_LEVELS)
def test_every_page_renders_for_each_papers_level(key, value):
    for page in PAGES:
        at = app({key: value, "train_rows": 4_000}, page=page)
        assert not at.exception, (page, [exception.value for exception in at.exception])
        assert not [w.value for w in at.warning if "falls back" in w.value or "not one of" in w.value], page
    at = app({key: value})
    assert at.radio(key=key).value == value  # the sidebar offers the level and shows it selected


def test_train_now_trains_stores_and_shows_the_run(tmp_path, monkeypatch):
    """The whole train-on-demand path with a fake trainer (no TensorFlow) on a scratch store. (Last in the file: its
    store's key changes at every page run, and each new key pushes page_store's Study out of the app's cache.)"""
    from vitcore.app.training import train_panel

    store = RunStore(tmp_path)
    for seed in range(3):
        write_run(store, BASELINE.replace(seed=seed), 0.80 + seed / 100)
    target = BASELINE.replace(train_rows=2_000)

    def fake_train(cfg, progress, seeds=1):
        for epoch in range(1, cfg.epochs + 1):
            progress(epoch, cfg.epochs, {"accuracy": 0.5, "val_accuracy": 0.4})
        write_run(store, cfg, 0.7777)

    monkeypatch.setattr(state, "STORE_PATH", str(tmp_path))
    monkeypatch.setattr(state, "STORE_KEY_SECONDS", 0.0)  # the store key is re-taken at most once a second
    monkeypatch.setattr(train_panel, "_train_seeds", fake_train)
    at = app({"train_rows": 2_000})
    at.button(key="train_now").click().run()
    slot_module.SERVER_SLOT.join(10)
    assert store.get(target) is not None
    at.run()
    assert not at.exception
    assert at.metric[0].value == "0.7777"
