"""The article's ViT (with the four ablation switches) and the article's convnet, as pure builders.

ViT, following the source article's diagram (shapes for patch 7):
    tokens (n, 16, 49) -> Dense(64) "patch_projection"            (n, 16, 64)
    -> + learned position embedding "pos_embedding" (or none)    (n, 16, 64)
    -> depth x block                                             (n, 16, 64)
    -> final norm -> GlobalAveragePooling1D -> Dense(10, softmax)
Block, pre-norm:  x + MHA(norm(x)), then x + MLP(norm(x))
Block, post-norm: norm(x + MHA(x)), then norm(x + MLP(x))
The ViT takes patch tokens, not pixels (see patches.model_inputs), so a permutation test can
shuffle tokens directly. Layer names are stable: analysis code probes them by name.

What the papers tried on small data, each one arm of this builder (the default takes none of them):
    pos_embedding "sincos": a fixed 2-D sine-cosine table instead of the learned one (big_vision)
    pooling "cls": a learned "class_token" prepended after the position embedding (n, 17, 64), and the
        classifier reads token 0 after the final norm instead of the mean (the ViT paper)
    tokenizer "shifted": tokens (n, 16, 5·49) of the image and four diagonally shifted copies
        (patches.shifted_patchify) -> LayerNorm "patch_norm" -> "patch_projection" (Lee, Lee & Song 2021)
    self_attention "lsa": Locality Self-Attention, a per-head learned temperature and no attention of a
        token to itself (same paper)
"""

from __future__ import annotations

import keras
import numpy as np

from vitcore.config.run import RunConfig
from vitcore.data.fashion import NUM_CLASSES
from vitcore.data.patches import SIDE, token_width
from vitcore.model.numpy_vit import sincos_2d

MASKED = -1e9  # the logit a masked key gets (exp underflows to exactly 0 in float32); numpy_vit uses the same


@keras.saving.register_keras_serializable(package="vitcore")
class PositionEmbedding(keras.layers.Layer):
    """Adds a learned (tokens, width) table to every image's tokens: 16 x 64 = 1,024 parameters."""

    def __init__(self, tokens: int, width: int, **kwargs):
        super().__init__(**kwargs)
        self.tokens, self.width = tokens, width

    def build(self, input_shape):
        self.table = self.add_weight(shape=(self.tokens, self.width), name="table",
                                     initializer=keras.initializers.RandomNormal(stddev=0.02))

    def call(self, x):
        return x + self.table[None]  # (n, tokens, width) + (1, tokens, width)

    def get_config(self):
        return {**super().get_config(), "tokens": self.tokens, "width": self.width}


@keras.saving.register_keras_serializable(package="vitcore")
class SincosPositionEmbedding(keras.layers.Layer):
    """Adds the fixed 2-D sine-cosine table (numpy_vit.sincos_2d) to every image's tokens: no parameters."""

    def __init__(self, grid: int, width: int, **kwargs):
        super().__init__(**kwargs)
        self.grid, self.width = grid, width
        self.table = sincos_2d(grid, width)  # (grid², width), a constant

    def call(self, x):
        return x + keras.ops.convert_to_tensor(self.table[None], dtype=x.dtype)  # + (1, tokens, width)

    def get_config(self):
        return {**super().get_config(), "grid": self.grid, "width": self.width}


@keras.saving.register_keras_serializable(package="vitcore")
class ClassToken(keras.layers.Layer):
    """Prepends one learned token to every image's sequence: (n, T, width) -> (n, T + 1, width);
    width parameters, zero at init (as big_vision)."""

    def __init__(self, width: int, **kwargs):
        super().__init__(**kwargs)
        self.width = width

    def build(self, input_shape):
        self.token = self.add_weight(shape=(1, 1, self.width), name="token", initializer="zeros")

    def call(self, x):
        token = keras.ops.broadcast_to(self.token, (keras.ops.shape(x)[0], 1, self.width))  # (n, 1, width)
        return keras.ops.concatenate([token, x], axis=1)

    def get_config(self):
        return {**super().get_config(), "width": self.width}


@keras.saving.register_keras_serializable(package="vitcore")
class ClassTokenPool(keras.layers.Layer):
    """Reads out the class token: (n, T + 1, width) -> (n, width), token 0."""

    def call(self, x):
        return x[:, 0]


@keras.saving.register_keras_serializable(package="vitcore")
class LocalitySelfAttention(keras.layers.MultiHeadAttention):
    """Keras' MultiHeadAttention with Locality Self-Attention (Lee, Lee & Song 2021): the logits
    q·kᵀ are multiplied by a learned per-head scale (the inverse temperature, 1/√key_dim at init,
    as the authors' code), and each token's logit for itself is masked, so attention goes to the
    others. Same query/key/value/output sub-layers as the standard layer, plus `heads` parameters."""

    def build(self, query_shape, value_shape, key_shape=None):
        super().build(query_shape, value_shape, key_shape)
        self.scale = self.add_weight(shape=(self._num_heads,), name="scale",
                                     initializer=keras.initializers.Constant(1 / np.sqrt(self._key_dim)))

    def _compute_attention(self, query, key, value, attention_mask=None, training=None,
                           return_attention_scores=False, use_causal_mask=False):
        if attention_mask is not None or use_causal_mask or self._dropout:
            raise ValueError("Locality Self-Attention here takes no attention mask, causal mask or dropout")
        logits = keras.ops.einsum(self._dot_product_equation, key, query)      # (n, heads, queries, keys)
        logits = logits * keras.ops.cast(self.scale, logits.dtype)[:, None, None]
        size = keras.ops.shape(logits)[-1]
        diagonal = keras.ops.eye(size, dtype="bool")                         # (queries, keys)
        logits = keras.ops.where(diagonal, keras.ops.cast(MASKED, logits.dtype), logits)
        scores = keras.ops.softmax(logits, axis=-1)
        return keras.ops.einsum(self._combine_equation, scores, value), scores  # (n, T, heads, key_dim)


def make_attention(kind: str, heads: int, key_dim: int, name: str) -> keras.layers.Layer:
    """The self_attention switch, read here only."""
    if kind == "standard":
        return keras.layers.MultiHeadAttention(num_heads=heads, key_dim=key_dim, name=name)
    if kind == "lsa":
        return LocalitySelfAttention(num_heads=heads, key_dim=key_dim, name=name)
    raise ValueError(f"self_attention must be 'standard' or 'lsa'; got {kind!r}")


def make_norm(kind: str, name: str) -> keras.layers.Layer:
    """One name -> layer table, as timm's norm_layer: the only place the norm switch picks a layer
    (elsewhere RunConfig.batch_norm says which one)."""
    if kind == "layer":
        return keras.layers.LayerNormalization(epsilon=1e-6, name=name)
    if kind == "batch":
        return keras.layers.BatchNormalization(name=name)
    raise ValueError(f"norm must be 'layer' or 'batch'; got {kind!r}")


def block(x, cfg: RunConfig, index: int, attention_scores: list | None = None):
    """One transformer block; pre- and post-norm differ only in where the norm sits."""
    prefix = f"block{index}"
    attention = make_attention(cfg.self_attention, cfg.heads, cfg.width // cfg.heads, f"{prefix}_attention")
    hidden = keras.layers.Dense(cfg.mlp_dim, activation="gelu", name=f"{prefix}_mlp_hidden")
    out = keras.layers.Dense(cfg.width, name=f"{prefix}_mlp_out")
    norm1, norm2 = make_norm(cfg.norm, f"{prefix}_norm1"), make_norm(cfg.norm, f"{prefix}_norm2")

    def attend(inputs):
        if attention_scores is None:
            return attention(inputs, inputs)
        values, scores = attention(inputs, inputs, return_attention_scores=True)
        attention_scores.append(scores)  # (n, heads, queries, keys)
        return values

    if cfg.norm_placement == "pre":
        x = keras.layers.Add(name=f"{prefix}_add1")([x, attend(norm1(x))])
        return keras.layers.Add(name=f"{prefix}_add2")([x, out(hidden(norm2(x)))])
    x = norm1(keras.layers.Add(name=f"{prefix}_add1")([x, attend(x)]))
    return norm2(keras.layers.Add(name=f"{prefix}_add2")([x, out(hidden(x))]))


def build_vit(cfg: RunConfig, with_attention: bool = False) -> keras.Model:
    """The article's ViT for cfg; with_attention=True adds each block's scores as extra outputs
    (same layers and weights, so a trained run's weights load into it)."""
    if cfg.model != "vit":
        raise ValueError(f"build_vit needs model='vit'; got {cfg.model!r}")
    tokens = keras.Input(shape=(cfg.tokens, token_width(cfg)), name="tokens")
    x = tokens
    if cfg.tokenizer == "shifted":
        x = keras.layers.LayerNormalization(epsilon=1e-6, name="patch_norm")(x)  # (n, 16, 245)
    elif cfg.tokenizer != "patch":
        raise ValueError(f"tokenizer must be 'patch' or 'shifted'; got {cfg.tokenizer!r}")
    x = keras.layers.Dense(cfg.width, name="patch_projection")(x)
    if cfg.pos_embedding == "learned":
        x = PositionEmbedding(cfg.tokens, cfg.width, name="pos_embedding")(x)
    elif cfg.pos_embedding == "sincos":
        x = SincosPositionEmbedding(int(round(cfg.tokens ** 0.5)), cfg.width, name="pos_embedding")(x)
    if cfg.pooling == "cls":
        x = ClassToken(cfg.width, name="class_token")(x)  # (n, 17, 64)
    scores: list | None = [] if with_attention else None
    for index in range(cfg.depth):
        x = block(x, cfg, index, scores)
    x = make_norm(cfg.norm, "final_norm")(x)
    if cfg.pooling == "gap":
        x = keras.layers.GlobalAveragePooling1D(name="pool")(x)
    elif cfg.pooling == "cls":
        x = ClassTokenPool(name="pool")(x)
    else:
        raise ValueError(f"pooling must be 'gap' or 'cls'; got {cfg.pooling!r}")
    probs = keras.layers.Dense(NUM_CLASSES, activation="softmax", name="classifier")(x)
    outputs = [probs, *scores] if with_attention else probs
    return keras.Model(tokens, outputs, name="vit")


def build_convnet(cfg: RunConfig) -> keras.Model:
    """The source article's plain three-block convnet: exactly 60,554 parameters."""
    images = keras.Input(shape=(SIDE, SIDE), name="images")
    x = keras.layers.Reshape((SIDE, SIDE, 1), name="channel")(images)
    x = keras.layers.Conv2D(32, 3, activation="relu", name="conv1")(x)
    x = keras.layers.MaxPooling2D(name="pool1")(x)
    x = keras.layers.Conv2D(64, 3, activation="relu", name="conv2")(x)
    x = keras.layers.MaxPooling2D(name="pool2")(x)
    x = keras.layers.Conv2D(64, 3, activation="relu", name="conv3")(x)
    x = keras.layers.GlobalAveragePooling2D(name="pool")(x)
    x = keras.layers.Dense(64, activation="relu", name="dense")(x)
    probs = keras.layers.Dense(NUM_CLASSES, activation="softmax", name="classifier")(x)
    return keras.Model(images, probs, name="convnet")


def build_model(cfg: RunConfig) -> keras.Model:
    if cfg.model == "vit":
        return build_vit(cfg)
    if cfg.model == "convnet":
        return build_convnet(cfg)
    raise ValueError(f"model must be 'vit' or 'convnet'; got {cfg.model!r}")


def param_breakdown(cfg: RunConfig) -> list[tuple[str, int]]:
    """The source article's parameter table, counted from the built model (not from formulas).

    Rows: patch projection, position embedding, one attention block, one MLP block, one block's
    norms, final norm + classifier, the Conv2D(64, 3) comparison row, and the total. The source article's
    "70,922" is the ViT total *without* the 1,024-parameter position embedding (71,946 with it).
    """
    model = build_model(cfg)
    if cfg.model == "convnet":
        rows = [(layer.name, layer.count_params()) for layer in model.layers if layer.count_params()]
        return rows + [("total", model.count_params())]

    def count(*names: str) -> int:
        return sum(model.get_layer(name).count_params() for name in names if _has_layer(model, name))

    conv = keras.layers.Conv2D(64, 3)
    conv.build((None, SIDE, SIDE, 1))
    return [
        ("patch projection", count("patch_norm", "patch_projection")),
        ("position embedding", count("pos_embedding")),
        ("class token", count("class_token")),
        ("one attention block", count("block0_attention")),
        ("one MLP block", count("block0_mlp_hidden", "block0_mlp_out")),
        ("one block's norms", count("block0_norm1", "block0_norm2")),
        ("final norm + classifier", count("final_norm", "classifier")),
        ("Conv2D(64, 3) on 1 channel, for scale", int(conv.count_params())),
        ("total", model.count_params()),
    ]


def _has_layer(model: keras.Model, name: str) -> bool:
    return any(layer.name == name for layer in model.layers)
