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
"""

from __future__ import annotations

import keras

from vitcore.config.run import RunConfig

NUM_CLASSES = 10


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


def make_norm(kind: str, name: str) -> keras.layers.Layer:
    """One name -> layer table, as timm's norm_layer: the only place the norm switch is read."""
    if kind == "layer":
        return keras.layers.LayerNormalization(epsilon=1e-6, name=name)
    if kind == "batch":
        return keras.layers.BatchNormalization(name=name)
    raise ValueError(f"norm must be 'layer' or 'batch'; got {kind!r}")


def block(x, cfg: RunConfig, index: int, attention_scores: list | None = None):
    """One transformer block; pre- and post-norm differ only in where the norm sits."""
    prefix = f"block{index}"
    attention = keras.layers.MultiHeadAttention(num_heads=cfg.heads, key_dim=cfg.width // cfg.heads,
                                                name=f"{prefix}_attention")
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
    tokens = keras.Input(shape=(cfg.tokens, cfg.patch_size ** 2), name="tokens")
    x = keras.layers.Dense(cfg.width, name="patch_projection")(tokens)
    if cfg.pos_embedding == "learned":
        x = PositionEmbedding(cfg.tokens, cfg.width, name="pos_embedding")(x)
    scores: list | None = [] if with_attention else None
    for index in range(cfg.depth):
        x = block(x, cfg, index, scores)
    x = make_norm(cfg.norm, "final_norm")(x)
    x = keras.layers.GlobalAveragePooling1D(name="pool")(x)
    probs = keras.layers.Dense(NUM_CLASSES, activation="softmax", name="classifier")(x)
    outputs = [probs, *scores] if with_attention else probs
    return keras.Model(tokens, outputs, name="vit")


def build_convnet(cfg: RunConfig) -> keras.Model:
    """The source article's plain three-block convnet: exactly 60,554 parameters."""
    images = keras.Input(shape=(28, 28), name="images")
    x = keras.layers.Reshape((28, 28, 1), name="channel")(images)
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
    conv.build((None, 28, 28, 1))
    return [
        ("patch projection", count("patch_projection")),
        ("position embedding", count("pos_embedding")),
        ("one attention block", count("block0_attention")),
        ("one MLP block", count("block0_mlp_hidden", "block0_mlp_out")),
        ("one block's norms", count("block0_norm1", "block0_norm2")),
        ("final norm + classifier", count("final_norm", "classifier")),
        ("Conv2D(64, 3) on 1 channel, for scale", int(conv.count_params())),
        ("total", model.count_params()),
    ]


def _has_layer(model: keras.Model, name: str) -> bool:
    return any(layer.name == name for layer in model.layers)
