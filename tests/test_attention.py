"""vitcore.analysis.attention: the maps' NumPy helpers, and the controls on real trained weights."""

import numpy as np
import pandas as pd
import pytest
from conftest import TINY

from vitcore.analysis import attention as A
from vitcore.config.run import RunConfig
from vitcore.data.samples import gallery


def _uniform(rows=2, heads=4, n=16):
    return np.full((rows, heads, n, n), 1 / n)


def test_spreads_uniform_and_one_hot():
    scores = _uniform()
    assert np.allclose(A.head_spread(scores), 0) and A.uniform_weight(scores) == 0.0625
    scores[0, 1, 3] = np.eye(16)[5]  # row 0, head 1, query 3 puts everything on key 5
    spread = A.head_spread(scores)
    assert spread.shape == (2, 4) and spread[0, 1] == pytest.approx(1.0)
    assert spread.sum() == pytest.approx(1.0)


def test_map_distance_bounds_and_shape_check():
    a = _uniform()
    assert A.map_distance(a, a) == 0
    one_hot = np.zeros_like(a)
    one_hot[..., 0] = 1
    other = np.zeros_like(a)
    other[..., 1] = 1
    assert A.map_distance(one_hot, other) == pytest.approx(1.0)
    assert A.distance_from_uniform(one_hot) == pytest.approx(15 / 16)
    with pytest.raises(ValueError, match="same shape"):
        A.map_distance(a, a[:1])


def test_key_map_is_row_major_patch_grid():
    scores = np.zeros((16, 16))
    scores[2, 4] = 1.0  # query 2 -> key 4 = grid row 1, column 0
    grid = A.key_map(scores, query=2)
    assert grid.shape == (4, 4) and grid[1, 0] == 1.0
    assert A.key_map(scores).sum() == pytest.approx(1 / 16)


def test_softmax_temperature():
    logits = np.array([1.0, 2.0, 3.0])
    assert A.softmax(logits).sum() == pytest.approx(1.0)
    assert np.allclose(A.softmax(logits, 1e6), 1 / 3, atol=1e-5)  # hot -> uniform
    assert A.softmax(logits, 0.01)[2] == pytest.approx(1.0)      # cold -> argmax
    with pytest.raises(ValueError):
        A.softmax(logits, 0)


def test_sketch_weights_sum_to_one_and_sharpen():
    image = gallery(prefer_full=False).image(1)  # the seed's pullover
    flat = A.sketch_weights(image, query=5, temperature=5.0)
    sharp = A.sketch_weights(image, query=5, temperature=0.2)
    assert flat.shape == (16,) and flat.sum() == pytest.approx(1.0)
    assert sharp.max() > flat.max()
    assert sharp.argmax() == 5  # a patch is most similar to itself
    with pytest.raises(ValueError, match="query"):
        A.sketch_weights(image, query=16)


def test_pick_examples_and_table():
    probs = np.array([[0.9, 0.1], [0.2, 0.8], [0.3, 0.7], [0.6, 0.4]])
    probs = np.pad(probs, ((0, 0), (0, 8)))
    labels = np.array([0, 0, 1, 1])
    picked = A.pick_examples(probs, labels, correct=1, wrong=2)
    assert picked.tolist() == [0, 1, 3]  # best correct, then the two wrong by confidence
    table = A.prediction_table(probs, labels, np.array([10, 11, 12, 13]), _uniform(4))
    assert table["correct"].tolist() == [True, False, True, False]
    assert table.loc[1, "true"] == "T-shirt/top" and table.loc[1, "predicted"] == "Trouser"
    assert "head 3 spread" in table


def test_find_weighted_run_prefers_exact_then_most_epochs():
    cfg = RunConfig(train_rows=1000)
    base = {name: getattr(cfg, name) for name in A.MATCH_FIELDS}
    runs = pd.DataFrame([{**base, "run_id": "a" * 12, "epochs": 3, "seed": 0, "has_weights": True},
                         {**base, "run_id": "b" * 12, "epochs": 9, "seed": 0, "has_weights": True},
                         {**base, "run_id": "c" * 12, "epochs": 20, "seed": 1, "has_weights": True},
                         {**base, "run_id": "d" * 12, "epochs": 30, "seed": 0, "has_weights": False}])
    assert A.find_weighted_run(runs, cfg) == "b" * 12
    runs.loc[0, "run_id"] = cfg.run_id
    assert A.find_weighted_run(runs, cfg) == cfg.run_id
    assert A.find_weighted_run(runs, cfg.replace(patch_size=4)) is None
    assert A.find_weighted_run(pd.DataFrame(), cfg) is None
    assert A.train_command(cfg.replace(pos_embedding="none")) == \
        "python -m vitcore run --pos-embedding none --train-rows 1000"


def test_a_paper_variant_shows_its_own_weights_never_the_article_vits():
    article = RunConfig(train_rows=1000)
    rows = []
    for run_id, cfg in (("a" * 12, article), ("b" * 12, article.replace(pooling="cls"))):
        rows.append({**{name: getattr(cfg, name) for name in A.MATCH_FIELDS}, "run_id": run_id, "epochs": 15,
                     "seed": 0, "has_weights": True})
    runs = pd.DataFrame(rows)
    assert A.find_weighted_run(runs, article.replace(pooling="cls")) == "b" * 12
    assert A.find_weighted_run(runs, article) == "a" * 12
    assert A.find_weighted_run(runs, article.replace(self_attention="lsa")) is None  # no LSA run: no maps
    assert A.train_command(article.replace(tokenizer="shifted", self_attention="lsa")) == \
        "python -m vitcore run --tokenizer shifted --self-attention lsa --train-rows 1000"  # switches.SELECTED order


def test_class_token_maps_leave_the_token_out_of_the_patch_grid():
    cfg = RunConfig(pooling="cls")
    scores = np.full((17, 17), 1 / 17)
    assert A.class_tokens(cfg) == 1 and A.class_tokens(RunConfig()) == 0
    assert A.key_map(scores, 0, skip=1).shape == (4, 4) and np.isclose(A.key_map(scores, 0, skip=1).sum(), 16 / 17)
    assert [A.query_name(cfg, q) for q in (None, 0, 1, 16)] == ["mean over all queries", "class token", "patch 0",
                                                                "patch 15"]
    assert A.query_name(RunConfig(), 0) == "patch 0"


# -- real weights ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def trained(tiny_store):
    models = {}
    for pos in ("none", "learned"):
        cfg = TINY.replace(pos_embedding=pos)
        models[pos] = (cfg, A.build_attention_model(cfg, tiny_store.get(cfg).weights_path))
    return models


@pytest.fixture(scope="module")
def images():
    sample = gallery(prefer_full=False)
    return sample.images, sample.labels


@pytest.mark.slow
def test_scores_shape_and_rows_sum_to_one(trained, images):
    cfg, model = trained["learned"]
    out = A.forward(model, cfg, images[0][:4])
    assert out.probs.shape == (4, 10) and len(out.scores) == cfg.depth
    assert out.scores[0].shape == (4, cfg.heads, 16, 16)  # (rows, heads, queries, keys), as the seed
    assert np.allclose(out.scores[1].sum(-1), 1, atol=1e-5)


@pytest.mark.slow
def test_trained_weights_are_loaded_not_random(trained, images):
    cfg, model = trained["learned"]
    random = A.build_attention_model(cfg, None, init_seed=0)
    ours, control = A.forward(model, cfg, images[0]), A.forward(random, cfg, images[0])
    assert A.map_distance(ours.scores[0], control.scores[0]) > 0.01
    assert (ours.predicted == images[1]).mean() > (control.predicted == images[1]).mean()


@pytest.mark.slow
def test_permutation_invariance_without_position_embedding(trained, images):
    cfg, model = trained["none"]
    result = A.permutation_test(model, cfg, images[0], seed=1)
    assert not np.array_equal(result.permutation, np.arange(16))
    assert result.max_abs_dprob < 1e-5 and result.changed == 0


@pytest.mark.slow
def test_permutation_changes_prediction_with_learned_embedding(trained, images):
    cfg, model = trained["learned"]
    result = A.permutation_test(model, cfg, images[0], seed=1)
    assert result.max_abs_dprob > 1e-3  # orders of magnitude above the no-embedding 1e-5 bound
    assert "max |Δprob|" in result.sentence("learned")
