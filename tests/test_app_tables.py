"""vitcore.app.tables: what the pages show, built from library results (no Streamlit, no TensorFlow)."""

import pandas as pd
import pytest
from fakes import run_row, runs_table

from vitcore.analysis import cost
from vitcore.app import tables
from vitcore.app.walkthrough import walk
from vitcore.article import report
from vitcore.config.run import RunConfig
from vitcore.study import committed


def test_cost_table_prints_as_the_article():
    shown = tables.cost_table(cost.token_cost_table())
    assert shown["Relative to 16 tokens"].tolist() == ["1.0×", "9.4×", "16.0×", "150.1×", "2,401.0×"]
    assert shown["Attention entries"].tolist() == ["256", "2,401", "4,096", "38,416", "614,656"]


def test_headline_claim_is_written_from_the_seed_reference():
    assert tables.headline_claim() == (
        "The source article (one random seed): ViT 0.7160 / 0.7970 against convnet 0.6790 / 0.7620 best val "
        "accuracy at 1,000 / 4,000 rows — with a train-val gap of +0.1545 against +0.0040 at 4,000 rows.")


def test_gap_frame_has_ours_only_where_run_and_the_article_only_where_quoted():
    runs = runs_table([run_row(RunConfig(seed=s), gap=0.10 + s / 100) for s in (0, 1, 2)])
    gaps = walk.gap_frame(report.headline(runs))
    ours = gaps[gaps["source"] == walk.OURS]
    assert ours[["model", "rows", "seeds"]].values.tolist() == [["vit", "4,000", 3]]
    assert ours["mean"].iloc[0] == pytest.approx(0.11) and ours["high"].iloc[0] == pytest.approx(0.12)
    quoted = gaps[gaps["source"] == walk.ARTICLE]
    assert quoted[["model", "rows", "mean"]].values.tolist() == [["vit", "4,000", 0.1545], ["convnet", "4,000", 0.004]]


def test_relative_seconds_against_patch_7():
    grid = pd.DataFrame({"train_rows": [1000] * 3, "epochs": [15] * 3, "patch_size": [2, 7, 14],
                         "tokens": [196, 16, 4], "mean_seconds": [80.0, 20.0, 15.0]})
    (sentence,) = tables.relative_seconds(grid)
    assert "At 1,000 rows, 15 epochs" in sentence and "patch 2 (196 tokens) 4.0×, patch 14 (4 tokens) 0.8×" in sentence
    assert tables.relative_seconds(grid[grid["patch_size"] != 7]) == []


def test_bench_sentences_quote_the_committed_measurements():
    bench, _, fit = committed.attention_bench()
    text = " ".join(tables.bench_sentences(bench, fit))
    assert "16 → 196 tokens: entries × 150.1" in text and "log-log slope over N ≥ 100" in text


def test_curve_roles_put_the_selection_first():
    selected, base = pd.DataFrame({"run_id": ["s0", "s1"]}), pd.DataFrame({"run_id": ["b0"]})
    roles, order = tables.curve_roles(selected, base, RunConfig(norm="batch"), RunConfig())
    assert order == ["selection: ViT p7 pre-BN pos · 4,000 rows", "baseline: ViT p7 pre-LN pos · 4,000 rows"]
    assert roles == {"s0": order[0], "s1": order[0], "b0": order[1]}
