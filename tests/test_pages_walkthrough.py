"""AppTest walkthrough of the pages that retell the source article (and the Runs and Claims pages): each
renders without an exception and shows the numbers it exists to show; none of them imports TensorFlow."""

import re
from pathlib import Path

import pandas as pd
import pytest
from conftest import TINY
from fakes import write_run
from streamlit.testing.v1 import AppTest

from vitcore.app import fmt, state
from vitcore.article import report
from vitcore.config.run import RunConfig
from vitcore.store.runs import RunStore

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 120


def page(name: str, **state) -> AppTest:
    at = AppTest.from_file(str(ROOT / "views" / f"{name}.py"), default_timeout=TIMEOUT)
    for key, value in state.items():
        at.session_state[key] = value
    return at.run()


def text(at: AppTest) -> str:
    parts = [e.value for kind in ("markdown", "caption", "info", "warning", "subheader", "title")
             for e in getattr(at, kind)]
    parts += [f"{m.label}: {m.value}" for m in at.metric]
    return "\n".join(map(str, parts))


@pytest.fixture
def empty_store(tmp_path, monkeypatch):
    monkeypatch.setattr(state, "STORE_PATH", str(tmp_path / "store"))
    return tmp_path / "store"


def test_patching_round_trip_follows_the_sidebar_patch_size(empty_store):
    at = page("patching")
    assert not at.exception
    shown = text(at)
    assert "max |rebuilt − original|: 0.00e+00" in shown and "Tokens × values: 16 × 49" in shown
    assert not at.radio  # one patch-size control: the sidebar's
    assert "The code (vitcore/data/patches.py)" in [e.label for e in at.expander]  # the file it shows
    at = page("patching", patch_size=4)
    assert not at.exception and "Tokens × values: 49 × 16" in text(at)
    at.selectbox(key="patching_class").set_value(2).run()
    assert not at.exception and "Pullover" in text(at)


def test_anatomy_numbers_match_the_article_exactly(empty_store):
    at = page("anatomy")
    assert not at.exception
    shown = text(at)
    for metric in ("ViT total: 71,946", "without position embedding: 70,922", "convnet (the article's): 60,554"):
        assert metric in shown
    counted = dict(zip(at.dataframe[0].value["component"], at.dataframe[0].value["parameters"]))
    assert [counted[name] for name in ("patch projection", "position embedding", "one attention block",
                                       "one MLP block")] == [3_200, 1_024, 16_640, 16_576]
    assert not any(name.startswith("Conv2D") for name in counted)  # not a part of the ViT's total
    assert "Not in the ViT, for scale" in shown and "3×3×1×64 + 64 = **640** parameters" in shown
    assert "Conv2D(64, 3) on the same one-channel image" in shown  # not cut: "Conv2D(64 on the same"
    assert "3,200 + 1,024 + 2 × 33,472 + 778" in at.dataframe[0].value.set_index("component").loc["total", "formula"]
    effects = at.dataframe[1].value.set_index(["switch", "to"])  # switches by their sidebar labels
    assert effects.loc[("Position embedding", "none"), "Δ parameters"] == "-1,024"  # separators
    assert effects.loc[("Patch size", "14"), "Δ parameters"] == "+8,640"
    assert effects.loc[("Norm placement", "post"), "Δ parameters"] == "0"


def test_anatomy_follows_the_sidebar(empty_store):
    at = page("anatomy", pos_embedding="none", patch_size=4)
    assert not at.exception and "ViT total: 70,922" not in text(at)
    assert "nothing for position" in text(at)
    assert page("anatomy", model="convnet").info  # says the ViT is shown instead


def test_token_cost_table_and_measurements(empty_store):
    at = page("token_cost")
    assert not at.exception
    table = at.dataframe[0].value
    assert table["Attention entries"].tolist() == ["256", "2,401", "4,096", "38,416", "614,656"]
    assert table["Relative to 16 tokens"].tolist()[-2:] == ["150.1×", "2,401.0×"]
    shown = text(at)
    assert re.search(r"log-log slope over N ≥ 100 is \*\*\d\.\d\d\*\*", shown)
    assert "sweep tokens" in shown  # empty store: says how to get the training times
    at.number_input[1].set_value(5).run()  # 224 / 5 does not tile
    assert not at.exception and any("tile" in i.value for i in at.info)


def test_token_cost_training_seconds_from_store(empty_store):
    store = RunStore(empty_store)
    for patch, seconds in ((7, 20.0), (2, 80.0)):
        write_run(store, RunConfig(patch_size=patch, train_rows=1000), 0.7, seconds=seconds)
    at = page("token_cost")
    assert not at.exception and "patch 2 (196 tokens) 4.0×" in text(at)


def test_vit_vs_convnet_empty_store_says_how(empty_store):
    at = page("vit_vs_convnet")
    assert not at.exception and "sweep default" in at.info[0].value
    assert "0.7160 / 0.7970" in text(at)  # the article's claim, written from vitcore.article.sources
    assert "sweep scaling" in at.info[1].value  # no data-size curve yet either


def test_vit_vs_convnet_headline_is_paired_and_places_the_single_seed(empty_store):
    store = RunStore(empty_store)
    for seed, noise in enumerate((0.0, 0.004, -0.003)):
        for rows in (1_000, 4_000):
            write_run(store, RunConfig(train_rows=rows, seed=seed), 0.79 + noise, val=0.80 + noise, train=0.95,
                      seconds=50.0)
            write_run(store, RunConfig(model="convnet", train_rows=rows, seed=seed), 0.74 + noise / 2,
                      val=0.75 + noise / 2, train=0.76, seconds=60.0)
    at = page("vit_vs_convnet")
    assert not at.exception and not at.info
    runs = RunStore(empty_store).table()
    shown = text(at)
    for sentence in report.headline_sentences(runs):  # the report's conclusions, as written
        assert sentence in shown
    sizes, headline, single = (frame.value for frame in at.dataframe)  # the data-size section leads
    assert "Pairs" in sizes.columns
    assert headline["Metric"].iloc[0] == "Test accuracy"  # the headline table leads with test accuracy
    optimistic = headline[headline["Metric"].str.startswith("Best val accuracy")]["Metric"]
    assert (optimistic == "Best val accuracy — selected on the validation split (optimistic)").all()
    assert "ViT 0.7903" in shown  # the ViT's mean test accuracy over the paired random seeds
    # single: the article's one-seed Δ against the 95% prediction interval
    deltas = report.headline_deltas(runs).set_index(["train_rows", "metric"])
    row = deltas.loc[(1_000, "best_val_accuracy")]
    assert single.iloc[0]["95% prediction interval (1 random seed)"] == fmt.ci(row["pi_low"], row["pi_high"])
    assert single.iloc[0]["Source article Δ (1 random seed)"] == "+0.0370"
    assert "prediction interval of one paired difference" in shown
    assert len(at.get("vega_lite_chart")) == 6  # data-size curve, its paired Δ, the gap bars: two panels each


def test_gap_whiskers_are_drawn_in_front_of_the_bars():
    from vitcore.app.walkthrough.walk_charts import gap_bars

    frame = pd.DataFrame({"model": ["vit", "convnet"], "rows": ["4,000"] * 2, "source": ["ours"] * 2,
                          "seeds": [3, 3], "mean": [0.12, 0.01], "low": [0.11, 0.005], "high": [0.13, 0.015]})
    spec = gap_bars(frame)[0].to_dict()["layer"]
    marks = [layer["mark"]["type"] if isinstance(layer["mark"], dict) else layer["mark"] for layer in spec]
    assert marks[0] == "bar" and "rule" in marks[1:]  # layered after the bars: on top
    rule = spec[marks.index("rule")]
    assert rule["mark"]["color"] == "black" and "color" not in rule.get("encoding", {})


def test_attention_no_weights_says_which_command(empty_store):
    at = page("attention", train_rows=1000, pos_embedding="none")
    assert not at.exception
    assert "python -m vitcore run --pos-embedding none --train-rows 1000" in at.info[0].value
    assert "Top weight" in text(at)  # the sketch still works without a model
    assert not page("attention", model="convnet").exception


@pytest.mark.slow
def test_attention_on_real_weights(tiny_store, monkeypatch):
    monkeypatch.setattr(state, "STORE_PATH", str(tiny_store.root))
    at = page("attention", train_rows=TINY.train_rows)
    assert not at.exception, at.exception
    shown = text(at)
    assert "(rows, heads, queries, keys) = (4, 4, 16, 16)" in shown
    assert "trained vs random init" in shown and "0.0625" in shown
    none = re.search(r"pos_embedding='none'.*changed the prediction of (\d+) of \d+ images; max \|Δprob\| = (\S+) ",
                     shown)
    learned = re.search(r"pos_embedding='learned'.*max \|Δprob\| = (\S+) ", shown)
    assert none and learned, shown
    assert none.group(1) == "0" and float(none.group(2)) < 1e-5 < float(learned.group(1))
    at.slider(key="sketch_temperature").set_value(0.1).run()
    assert not at.exception


def test_token_cost_compares_seconds_within_one_timing_group(empty_store):
    from fakes import confusion, history, metrics

    store = RunStore(empty_store)
    reused = {"code": 2, "threads": 1, "workers": 2, "compile": "reused"}  # timing_group v2/threads1/workers2/reused
    for seed, timing, seconds in ((0, None, (20.0, 80.0)), (1, None, (20.0, 80.0)), (2, reused, (10.0, 30.0))):
        for patch, secs in zip((7, 2), seconds):
            cfg = RunConfig(patch_size=patch, train_rows=1000, seed=seed)
            summary = metrics(cfg, 0.7, seconds=secs) | ({"timing": timing} if timing else {})
            store.save(cfg, history(cfg, summary), confusion(0.7), summary)
    at = page("token_cost")
    assert not at.exception
    assert "timing group `v1/legacy`" in text(at) and "patch 2 (196 tokens) 4.0×" in text(at)  # the larger group
    at.selectbox(key="token_cost_timing").set_value("v2/threads1/workers2/reused").run()
    shown = text(at)
    assert "timing group `v2/threads1/workers2/reused`" in shown and "patch 2 (196 tokens) 3.0×" in shown
    assert "compiled once, reused across random seeds" in shown
