"""vitcore.model.numpy_vit: the NumPy forward pass the Attention page uses instead of TensorFlow.

Fast tests run NumPy only (random weights, a committed weights file). The slow test builds the Keras
ViT for every switch combination, randomises every variable (BatchNorm moving statistics included,
so a swapped mean/variance would show), saves it as a `.weights.h5` and checks the NumPy pass
reproduces its probabilities and every block's attention scores to 1e-5. (With N(0, 0.3) weights
everywhere, Keras' own float32 rounding grows past 1e-5 through post-norm BatchNorm blocks; in
float64 Keras and NumPy then agree to 1e-7, so the formula is right either way.)
"""


import numpy as np
import pytest
from conftest import ROOT, switch_grid

from vitcore.analysis import attention as A
from vitcore.config.run import RunConfig
from vitcore.data.patches import model_inputs
from vitcore.model.numpy_vit import NumpyViT, load_weights, random_weights

GRID = switch_grid(patch_size=(4, 7, 14), pos_embedding=("learned", "none"))
# The papers' variants, alone and with the other switches where they interact: the class token with
# BatchNorm and post-norm, LSA with the class token (its masked diagonal spans 17 tokens), SPT at another patch.
PAPERS = [dict(pos_embedding="sincos"), dict(pos_embedding="sincos", patch_size=4), dict(pooling="cls"),
          dict(pooling="cls", norm="batch", norm_placement="post", pos_embedding="none"),
          dict(tokenizer="shifted"), dict(tokenizer="shifted", patch_size=4, norm="batch"), dict(self_attention="lsa"),
          dict(self_attention="lsa", pooling="cls", norm_placement="post"),
          dict(tokenizer="shifted", self_attention="lsa"),
          dict(tokenizer="shifted", self_attention="lsa", pooling="cls", pos_embedding="sincos", patch_size=14)]


def tokens_of(cfg: RunConfig, rows: int = 6, seed: int = 0) -> np.ndarray:
    images = np.random.default_rng(seed).random((rows, 28, 28), dtype=np.float32)
    return model_inputs(cfg, images)


@pytest.mark.parametrize("cfg", GRID[::5], ids=RunConfig.label)
def test_random_model_outputs_are_distributions(cfg):
    probs, *scores = NumpyViT(cfg, random_weights(cfg, seed=1))(tokens_of(cfg))
    assert probs.shape == (6, 10) and np.allclose(probs.sum(1), 1, atol=1e-5)
    assert len(scores) == cfg.depth
    for block in scores:
        assert block.shape == (6, cfg.heads, cfg.sequence, cfg.sequence) and np.allclose(block.sum(-1), 1, atol=1e-5)


@pytest.mark.parametrize("changes", PAPERS, ids=lambda c: RunConfig(**c).label())
def test_paper_variants_give_their_own_shapes_and_maps(changes):
    cfg = RunConfig(**changes)
    probs, *scores = NumpyViT(cfg, random_weights(cfg, seed=1))(tokens_of(cfg))
    assert probs.shape == (6, 10) and np.allclose(probs.sum(1), 1, atol=1e-5)
    for block in scores:  # the class token is one more query and key
        assert block.shape == (6, cfg.heads, cfg.sequence, cfg.sequence) and np.allclose(block.sum(-1), 1, atol=1e-5)
        diagonal = block[..., np.arange(cfg.sequence), np.arange(cfg.sequence)]
        assert bool(diagonal.max() == 0) is (cfg.self_attention == "lsa")  # LSA: no token attends to itself


def test_shuffled_tokens_change_nothing_without_position_embedding_and_something_with_it():
    for pos, pooling, moves in (("none", "gap", False), ("none", "cls", False), ("learned", "gap", True),
                                ("sincos", "gap", True)):
        cfg = RunConfig(pos_embedding=pos, pooling=pooling, tokenizer="shifted" if pooling == "cls" else "patch")
        weights = random_weights(cfg, seed=2)
        if pos == "learned":  # a visible table: N(0, 0.02) barely moves an untrained model's output
            weights["pos_embedding"] = [weights["pos_embedding"][0] * 50]
        if pooling == "cls":  # a class token that is not zero, read out instead of the mean
            weights["class_token"] = [np.random.default_rng(3).normal(0, 1, (1, 1, cfg.width)).astype(np.float32)]
        result = A.permutation_test(NumpyViT(cfg, weights), cfg, np.random.default_rng(0).random((20, 28, 28)), seed=1)
        assert (result.max_abs_dprob > 1e-4) is moves, (pos, result)


def test_random_weights_are_seeded():
    cfg = RunConfig()
    a, b, c = (random_weights(cfg, seed) for seed in (0, 0, 1))
    assert all(np.array_equal(x, y) for name in a for x, y in zip(a[name], b[name]))
    assert not np.array_equal(a["patch_projection"][0], c["patch_projection"][0])


def test_a_committed_weights_file_loads_by_layer_name():
    files = sorted((ROOT / "cached_runs").glob("*/model.weights.h5"))
    if not files:
        pytest.skip("no committed weights")
    import json

    cfg = RunConfig.from_dict(json.loads((files[0].parent / "config.json").read_text())["config"])
    weights = load_weights(files[0])
    assert weights["patch_projection"][0].shape == (tokens_of(cfg).shape[-1], cfg.width)  # p² values, 5p² shifted
    assert weights["block0_attention/query"][0].shape == (cfg.width, cfg.heads, cfg.width // cfg.heads)
    probs, *_ = NumpyViT(cfg, weights)(tokens_of(cfg))
    assert np.allclose(probs.sum(1), 1, atol=1e-5)


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="ViT config"):
        NumpyViT(RunConfig(model="convnet"), {})
    with pytest.raises(ValueError, match="lack layers"):
        NumpyViT(RunConfig(), {})


@pytest.mark.slow
@pytest.mark.parametrize("cfg", GRID + [RunConfig(**changes) for changes in PAPERS], ids=RunConfig.label)
def test_matches_keras_to_1e_5(tmp_path, cfg):
    import keras

    model = A.build_attention_model(cfg, None, init_seed=3)
    rng = np.random.default_rng(4)
    for variable in model.weights:  # every variable moved off its init, about as far as training moves it
        value = np.asarray(variable) + rng.normal(0, 0.05, variable.shape)
        if "variance" in variable.path:  # stays positive
            value = rng.uniform(0.5, 2.0, variable.shape)
        variable.assign(value.astype(np.float32))
    path = tmp_path / "model.weights.h5"
    model.save_weights(str(path))
    tokens = tokens_of(cfg, rows=8, seed=5)
    expected = [np.asarray(out) for out in model(tokens, training=False)]
    ours = NumpyViT.from_file(cfg, path)(tokens)
    assert len(ours) == len(expected) == 1 + cfg.depth
    for got, want in zip(ours, expected):
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, atol=1e-5, rtol=0)
    keras.backend.clear_session()


def test_large_token_counts_run_in_chunks_with_the_same_result():
    cfg = RunConfig(patch_size=2)  # 196 tokens: 13 rows per chunk
    model = NumpyViT(cfg, random_weights(cfg))
    tokens = tokens_of(cfg, rows=30)
    whole = model(tokens)
    single = [model(tokens[i:i + 1]) for i in range(30)]
    for index, output in enumerate(whole):
        np.testing.assert_allclose(output, np.concatenate([s[index] for s in single]), atol=1e-6)


@pytest.mark.parametrize("patch", [2, 4])
def test_a_pass_holds_one_chunk_of_temporaries_whatever_the_rows(patch):
    """The Attention page's scan (probabilities of many rows) at any patch size holds about one chunk
    (CHUNK floats, 16 MB) of temporaries. Before: every block's scores were kept (and copied) even when
    only the probabilities were wanted, and the softmax, GELU and dense layers made a new array per
    step; the chunk was sized by the attention logits alone: 87 MB at patch 2, 77 MB at patch 4 (300 rows)."""
    import tracemalloc

    from vitcore.model.numpy_vit import CHUNK

    cfg = RunConfig(patch_size=patch)
    model, tokens = NumpyViT(cfg, random_weights(cfg)), tokens_of(cfg, rows=300)
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        probs = A.forward_tokens(model, tokens, keep_scores=False).probs
        peak = tracemalloc.get_traced_memory()[1] - start
    finally:
        tracemalloc.stop()
    assert probs.shape == (300, 10)
    assert peak < 2 * CHUNK * 4, f"{peak / 2**20:.0f} MB of temporaries"


@pytest.mark.slow
def test_the_committed_papers_runs_give_the_same_maps_in_numpy_and_keras():
    """The Attention page's maps of the class-token, LSA, SPT and sincos variants from their own trained weights:
    NumPy (the page) and Keras (training) on real test images, to 1e-5."""
    import keras

    from vitcore.data.samples import gallery
    from vitcore.run.sweep import grid
    from vitcore.store.runs import RunStore

    store, images = RunStore(ROOT / "cached_runs"), gallery(prefer_full=False).images[:16]
    runs = [store.get(cfg) for cfg in grid("papers") if cfg.seed == 0]
    runs = [run for run in runs if run is not None and run.weights_path is not None]
    if not runs:
        pytest.skip("no committed papers runs with weights")
    for run in runs:
        ours = A.forward(A.numpy_model(run.config, run.weights_path), run.config, images)
        theirs = A.forward(A.build_attention_model(run.config, run.weights_path), run.config, images)
        assert ours.scores[0].shape[-1] == run.config.sequence
        for got, want in zip([ours.probs, *ours.scores], [theirs.probs, *theirs.scores]):
            np.testing.assert_allclose(got, want, atol=1e-5, rtol=0)
        keras.backend.clear_session()
