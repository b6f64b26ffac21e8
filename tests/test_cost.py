"""vitcore.analysis.cost: the seed's token-cost table, the committed measurements and their N^2 fit."""

import numpy as np
import pandas as pd
import pytest

from vitcore.analysis import cost


def test_seed_table_numbers_exactly():
    table = cost.token_cost_table()
    assert table["tokens"].tolist() == [16, 49, 64, 196, 784]
    assert table["attention_entries"].tolist() == [256, 2_401, 4_096, 38_416, 614_656]
    assert table["relative"].tolist() == pytest.approx([1.0, 9.37890625, 16.0, 150.0625, 2_401.0])


@pytest.mark.parametrize("image, patch, tokens", [(28, 2, 196), (28, 14, 4), (64, 8, 64), (224, 16, 196)])
def test_token_count_is_grid_squared(image, patch, tokens):
    row = cost.token_cost(image, patch)
    assert row["tokens"] == tokens and row["attention_entries"] == tokens ** 2


def test_halving_the_patch_multiplies_entries_by_16():
    assert cost.token_cost(224, 8)["attention_entries"] / cost.token_cost(224, 16)["attention_entries"] == 16


@pytest.mark.parametrize("image, patch", [(28, 5), (28, 0), (0, 7)])
def test_bad_patch_is_rejected(image, patch):
    with pytest.raises(ValueError, match="divisor"):
        cost.token_cost(image, patch)


def test_quadratic_fit_recovers_known_curve():
    tokens = np.array([4, 16, 49, 196, 784])
    a, b, r2 = cost.quadratic_fit(tokens, 2.0 + 0.001 * tokens ** 2)
    assert a == pytest.approx(2.0) and b == pytest.approx(0.001) and r2 == pytest.approx(1.0)
    assert cost.loglog_slope([200, 400, 800], [1, 4, 16]) == pytest.approx(2.0)
    assert cost.loglog_slope([200, 400, 800], [1, 2, 4]) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        cost.loglog_slope([4, 16], [1, 2])


def test_committed_bench_csv_is_complete_and_grows():
    bench = cost.load_attention_bench()
    assert bench is not None, "vitcore/analysis/attention_cost.csv missing: run python -m vitcore bench-attention"
    assert bench["tokens"].tolist() == list(cost.BENCH_TOKENS)
    assert (bench["median_ms"] > 0).all() and (bench["min_ms"] <= bench["median_ms"]).all()
    # 784 tokens has 2,401x the entries of 16: at least an order of magnitude slower, measured.
    assert bench["median_ms"].iloc[-1] > 10 * bench.set_index("tokens").loc[16, "median_ms"]
    assert cost.loglog_slope(bench["tokens"], bench["median_ms"]) > 1.3
    curve = cost.with_n2_curve(bench)
    assert set(curve["series"]) == {"measured median", "fit a + b·N²"}


def test_load_bench_rejects_missing_or_malformed(tmp_path):
    assert cost.load_attention_bench(tmp_path / "nope.csv") is None
    (tmp_path / "bad.csv").write_text("a,b\n1,2\n")
    assert cost.load_attention_bench(tmp_path / "bad.csv") is None


@pytest.mark.slow  # over 1 s a case: the slow tier, so the fast tier stays under a minute (docs/contributing.md)
@pytest.mark.xdist_group("tensorflow")  # a real Keras layer: on the worker that imports TensorFlow anyway
def test_bench_attention_measures_a_real_layer():
    table = cost.bench_attention(tokens=(4, 64), repeats=2, batch=2)
    assert table["tokens"].tolist() == [4, 64] and list(table.columns) == cost.BENCH_COLUMNS
    assert (table["median_ms"] > 0).all()


def _runs(rows):
    base = dict(model="vit", pos_embedding="learned", norm_placement="pre", norm="layer", warmup_epochs=0,
                train_rows=1000, epochs=15, test_accuracy=0.7, seed=0)
    return pd.DataFrame([{**base, **row} for row in rows])


def test_tokens_grid_seconds_groups_baseline_only_over_shared_seeds():
    runs = _runs([dict(patch_size=7, seconds=10.0), dict(patch_size=7, seconds=14.0, seed=1),
                  dict(patch_size=7, seconds=99.0, seed=2),  # only patch 7 has seed 2: left out
                  dict(patch_size=2, seconds=100.0), dict(patch_size=2, seconds=50.0, seed=1),
                  dict(patch_size=2, seconds=1.0, norm="batch"), dict(model="convnet", patch_size=None, seconds=5.0)])
    out = cost.tokens_grid_seconds(runs)
    assert out["patch_size"].tolist() == [2, 7]
    assert out["tokens"].tolist() == [196, 16]
    assert out["runs"].tolist() == [2, 2]
    assert out["mean_seconds"].tolist() == [75.0, 12.0]
    assert cost.tokens_grid_seconds(pd.DataFrame()).empty
