import numpy as np
import pytest
from conftest import switch_grid

from vitcore.config.run import RunConfig
from vitcore.data.patches import model_inputs

# Keras builds: the slow tier (TensorFlow's import alone is seconds, over the fast tier's ~1 s a test), on the one
# pytest-xdist worker that imports TensorFlow anyway.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("tensorflow")]


@pytest.fixture(autouse=True, scope="module")
def _keras_models():
    """Keras and the model builders, imported when this file's tests run, not when it is collected: a worker
    of `pytest -n 2` that runs none of them never pays TensorFlow's import."""
    global keras, build_model, build_vit, param_breakdown
    keras = pytest.importorskip("keras")
    from vitcore.model.build import build_model, build_vit, param_breakdown


def test_seed_parameter_table_exactly():
    rows = dict(param_breakdown(RunConfig()))
    assert rows["patch projection"] == 3_200
    assert rows["position embedding"] == 1_024
    assert rows["one attention block"] == 16_640
    assert rows["one MLP block"] == 16_576
    assert rows["Conv2D(64, 3) on 1 channel, for scale"] == 640
    assert rows["total"] == 71_946


def test_totals_without_position_embedding_and_convnet():
    assert build_model(RunConfig(pos_embedding="none")).count_params() == 70_922  # the seed's "70,922"
    assert build_model(RunConfig(model="convnet")).count_params() == 60_554


@pytest.mark.parametrize("cfg", switch_grid(), ids=RunConfig.label)
def test_every_switch_combination_builds_and_runs(cfg):
    model = build_model(cfg)
    images = np.random.default_rng(0).random((3, 28, 28), dtype=np.float32)
    probs = np.asarray(model(model_inputs(cfg, images), training=False))
    assert probs.shape == (3, 10)
    assert np.isfinite(probs).all()
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-5)
    names = {layer.name for layer in model.layers}
    assert {"patch_projection", "block0_attention", "block1_attention", "final_norm"} <= names
    assert ("pos_embedding" in names) == (cfg.pos_embedding != "none")  # learned or sincos: a named layer
    norm_type = keras.layers.LayerNormalization if cfg.norm == "layer" else keras.layers.BatchNormalization
    assert isinstance(model.get_layer("block0_norm1"), norm_type)


def _source_of(model, layer_name: str) -> str:
    """Name of the layer whose output feeds `layer_name`."""
    tensor = model.get_layer(layer_name)._inbound_nodes[0].input_tensors[0]
    return tensor._keras_history.operation.name


def test_pre_and_post_norm_differ_in_where_the_norm_sits():
    pre, post = build_model(RunConfig()), build_model(RunConfig(norm_placement="post"))
    assert _source_of(pre, "block0_norm1") == "pos_embedding"   # norm -> attention -> add
    assert _source_of(pre, "block0_attention") == "block0_norm1"
    assert _source_of(post, "block0_attention") == "pos_embedding"  # attention -> add -> norm
    assert _source_of(post, "block0_norm1") == "block0_add1"


def test_attention_outputs_share_weights_with_the_plain_model():
    cfg = RunConfig()
    plain, probe = build_vit(cfg), build_vit(cfg, with_attention=True)
    probe.set_weights(plain.get_weights())
    tokens = model_inputs(cfg, np.random.default_rng(1).random((2, 28, 28), dtype=np.float32))
    probs, scores0, scores1 = (np.asarray(t) for t in probe(tokens))
    np.testing.assert_allclose(probs, np.asarray(plain(tokens)), atol=1e-6)
    assert scores0.shape == (2, 4, 16, 16)
    np.testing.assert_allclose(scores0.sum(axis=-1), 1.0, rtol=1e-5)  # each query's weights sum to 1


def test_build_vit_rejects_convnet():
    with pytest.raises(ValueError, match="vit"):
        build_vit(RunConfig(model="convnet"))


PAPERS = [dict(pos_embedding="sincos"), dict(pooling="cls"), dict(tokenizer="shifted"), dict(self_attention="lsa"),
          dict(tokenizer="shifted", self_attention="lsa", pooling="cls", pos_embedding="sincos", norm="batch")]


@pytest.mark.parametrize("changes", PAPERS, ids=lambda c: RunConfig(**c).label())
def test_paper_variants_build_run_and_round_trip_through_their_config(changes):
    cfg = RunConfig(**changes)
    model = build_vit(cfg, with_attention=True)
    tokens = model_inputs(cfg, np.random.default_rng(2).random((3, 28, 28), dtype=np.float32))
    probs, *scores = (np.asarray(t) for t in model(tokens, training=False))
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-5)
    assert scores[0].shape == (3, cfg.heads, cfg.sequence, cfg.sequence)
    names = {layer.name for layer in model.layers}
    assert ("class_token" in names) == (cfg.pooling == "cls")
    assert ("patch_norm" in names) == (cfg.tokenizer == "shifted")
    clone = keras.Model.from_config(model.get_config())  # every custom layer rebuilt from get_config
    clone.set_weights(model.get_weights())
    np.testing.assert_allclose(np.asarray(clone(tokens, training=False)[0]), probs, atol=1e-6)


def test_sincos_table_is_fixed_and_lsa_masks_the_diagonal_with_a_learned_temperature():
    from vitcore.model.build import LocalitySelfAttention
    from vitcore.model.numpy_vit import sincos_2d

    sincos = build_vit(RunConfig(pos_embedding="sincos"))
    assert sincos.get_layer("pos_embedding").count_params() == 0
    table = sincos_2d(4, 64)  # token (row 0, col 1): x-frequencies move, y-half stays at sin 0 / cos 1
    assert table.shape == (16, 64) and np.allclose(table[1, 32:48], 0) and np.allclose(table[1, 48:], 1)
    assert np.isclose(table[1, 0], np.sin(1.0)) and not np.allclose(table[0], table[5])
    lsa = build_vit(RunConfig(self_attention="lsa"), with_attention=True)
    layer = lsa.get_layer("block0_attention")
    assert isinstance(layer, LocalitySelfAttention)
    np.testing.assert_allclose(np.asarray(layer.scale), 1 / np.sqrt(16))  # τ = √key_dim at init, one per head
    assert layer.scale.trainable
