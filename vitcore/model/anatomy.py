"""The source article's parameter table for any config, counted from formulas, without building a model.

`breakdown(cfg)` returns the rows of `vitcore.model.build.param_breakdown` (which builds the Keras model
and counts its layers) from the layer shapes alone, so the dashboard never imports TensorFlow for
it; tests/test_anatomy.py checks the two agree for every switch combination. Counts follow Keras'
count_params(), so BatchNormalization includes its 2 x width moving statistics (non-trainable).
"""

from __future__ import annotations

import pandas as pd

from vitcore.config import switches
from vitcore.config.run import RunConfig
from vitcore.data.fashion import NUM_CLASSES
from vitcore.data.patches import token_width

SCALE = "Conv2D(64, 3)"  # the article's yardstick for the input stage, not a part of the ViT
SCALE_ROW = f"{SCALE} on 1 channel, for scale"
SEED_ROWS = ("patch projection", "position embedding", "one attention block", "one MLP block", SCALE_ROW)


def formulas(cfg: RunConfig) -> dict[str, tuple[str, int]]:
    """Row name -> (formula text, value) for the ViT of cfg; must equal what Keras counts."""
    w, p2, n, m, h, k = cfg.width, token_width(cfg), cfg.tokens, cfg.mlp_dim, cfg.heads, NUM_CLASSES
    norm_each = (4 if cfg.batch_norm else 2) * w  # gamma, beta (+ moving mean, variance)
    norm_text = f"2 × 4 × {w}" if cfg.batch_norm else f"2 × 2 × {w}"
    projection = (f"{p2} × {w} + {w}", p2 * w + w)
    if cfg.tokenizer == "shifted":  # SPT: LayerNorm over the 5·patch² values, then the projection
        projection = (f"2 × {p2} (LayerNorm of 5 × {cfg.patch_size ** 2}) + {projection[0]}", 2 * p2 + projection[1])
    position = {"learned": (f"{n} × {w}", n * w), "none": ("none", 0), "sincos": ("none: a fixed sine-cosine table", 0)}
    attention = (f"4 × ({w}×{w} + {w})", 4 * (w * w + w))
    if cfg.self_attention == "lsa":
        attention = (f"{attention[0]} + {h} (a temperature per head)", attention[1] + h)
    rows = {
        "patch projection": projection,
        "position embedding": position[cfg.pos_embedding],
        "class token": (f"1 × {w}", w) if cfg.pooling == "cls" else ("none", 0),
        "one attention block": attention,
        "one MLP block": (f"{w}×{m} + {m} + {m}×{w} + {w}", w * m + m + m * w + w),
        "one block's norms": (norm_text, 2 * norm_each),
        "final norm + classifier": (f"{norm_each} + {w}×{k} + {k}", norm_each + w * k + k),
        SCALE_ROW: ("3×3×1×64 + 64", 3 * 3 * 64 + 64),
    }
    per_block = rows["one attention block"][1] + rows["one MLP block"][1] + rows["one block's norms"][1]
    front = rows["patch projection"][1] + rows["position embedding"][1] + rows["class token"][1]
    total = front + cfg.depth * per_block + rows["final norm + classifier"][1]
    token = f" + {rows['class token'][1]:,}" if cfg.pooling == "cls" else ""
    rows["total"] = (f"{rows['patch projection'][1]:,} + {rows['position embedding'][1]:,}{token} + {cfg.depth} × "
                     f"{per_block:,} + {rows['final norm + classifier'][1]:,} (projection + position"
                     f"{' + class token' if token else ''} + blocks + head)", total)
    return rows


# The article's convnet (vitcore.model.build.build_convnet): layer -> (formula, parameters); 60,554 in all.
CONVNET_LAYERS = {"conv1": ("3×3×1×32 + 32", 3 * 3 * 1 * 32 + 32), "conv2": ("3×3×32×64 + 64", 3 * 3 * 32 * 64 + 64),
                  "conv3": ("3×3×64×64 + 64", 3 * 3 * 64 * 64 + 64), "dense": ("64×64 + 64", 64 * 64 + 64),
                  "classifier": (f"64×{NUM_CLASSES} + {NUM_CLASSES}", 64 * NUM_CLASSES + NUM_CLASSES)}
VIT_ROWS = ("patch projection", "position embedding", "class token", "one attention block", "one MLP block",
            "one block's norms",
            "final norm + classifier", SCALE_ROW, "total")


def breakdown(cfg: RunConfig) -> list[tuple[str, int]]:
    """(component, parameters) rows as models.param_breakdown(cfg) counts them from the built model:
    for the ViT its seed table (VIT_ROWS), for the convnet one row per layer; the total last."""
    if cfg.model == "convnet":
        rows = [(name, count) for name, (_, count) in CONVNET_LAYERS.items()]
        return rows + [("total", sum(count for _, count in rows))]
    values = formulas(cfg)
    return [(name, values[name][1]) for name in VIT_ROWS]


def anatomy_table(cfg: RunConfig) -> pd.DataFrame:
    """Rows: component, parameters, formula, in the article's table (the ViT's breakdown)."""
    expected = formulas(cfg)
    return pd.DataFrame([{"component": name, "parameters": int(count), "formula": expected[name][0],
                          "in the article's table": name in SEED_ROWS} for name, count in breakdown(cfg)])


def convnet_table() -> pd.DataFrame:
    """The article's convnet, layer by layer: layer, parameters, formula."""
    return pd.DataFrame([{"layer": name, "parameters": count, "formula": text}
                         for name, (text, count) in CONVNET_LAYERS.items()])


def totals(counted: list[tuple[str, int]]) -> dict[str, int]:
    """total, position embedding, and total without it (the source article's quoted 70,922 for the default)."""
    values = dict(counted)
    position = values.get("position embedding", 0)
    return {"total": values["total"], "position embedding": position, "without position": values["total"] - position}


# The switches whose flips the anatomy shows: the registry's ViT switches with levels of their own.
FLIPPED = tuple(s.name for s in switches.REGISTRY if not s.free and s.applies("vit"))


def toggle_variants(cfg: RunConfig) -> list[RunConfig]:
    """cfg with one ViT switch flipped at a time (every other value of each switch)."""
    return [cfg.replace(**{name: value}) for name in FLIPPED for value in switches.LEVELS[name]
            if value != getattr(cfg, name)]


# The article's convnet's variables (vitcore.model.build.build_convnet), layer -> shapes in Keras order.
CONVNET_SHAPES = {"conv1": [(3, 3, 1, 32), (32,)], "conv2": [(3, 3, 32, 64), (64,)], "conv3": [(3, 3, 64, 64), (64,)],
                  "dense": [(64, 64), (64,)], "classifier": [(64, NUM_CLASSES), (NUM_CLASSES,)]}
MHA_PARTS = ("query", "key", "value", "attention_output")  # the sub-layers Keras gives an attention layer


def layer_shapes(cfg: RunConfig) -> dict[str, list[tuple[int, ...]]]:
    """Every layer with variables of cfg's model, by the name a weights file gives it (attention
    sub-layers as "block0_attention/query"), and its variables' shapes in Keras order: what a run's
    model.weights.h5 must hold, exactly (vitcore.store.weights). Their sizes sum to total(cfg)."""
    if cfg.model == "convnet":
        return {name: list(shapes) for name, shapes in CONVNET_SHAPES.items()}
    w, m, h, p = cfg.width, cfg.mlp_dim, cfg.heads, token_width(cfg)
    k = w // h
    norm = [(w,)] * (4 if cfg.batch_norm else 2)  # gamma, beta (+ moving mean, variance)
    shapes = {"patch_projection": [(p, w), (w,)]}
    if cfg.tokenizer == "shifted":
        shapes["patch_norm"] = [(p,), (p,)]
    if cfg.pos_embedding == "learned":
        shapes["pos_embedding"] = [(cfg.tokens, w)]
    if cfg.pooling == "cls":
        shapes["class_token"] = [(1, 1, w)]
    for b in range(cfg.depth):
        if cfg.self_attention == "lsa":
            shapes[f"block{b}_attention"] = [(h,)]
        for part in MHA_PARTS[:3]:
            shapes[f"block{b}_attention/{part}"] = [(w, h, k), (h, k)]
        shapes[f"block{b}_attention/attention_output"] = [(h, k, w), (w,)]
        shapes[f"block{b}_mlp_hidden"] = [(w, m), (m,)]
        shapes[f"block{b}_mlp_out"] = [(m, w), (w,)]
        shapes[f"block{b}_norm1"], shapes[f"block{b}_norm2"] = list(norm), list(norm)
    shapes["final_norm"] = list(norm)
    shapes["classifier"] = [(w, NUM_CLASSES), (NUM_CLASSES,)]
    return shapes


def shape_difference(expected: dict, found: dict) -> str:
    """What a weights file's {layer: shapes} lacks, adds or shapes otherwise than layer_shapes (its first few)."""
    words = [f"they lack layers {sorted(set(expected) - set(found))[:4]}"] if set(expected) - set(found) else []
    if set(found) - set(expected):
        words.append(f"they have layers {sorted(set(found) - set(expected))[:4]} the model lacks")
    words += [f"{name} is {found[name]}, not {expected[name]}" for name in sorted(set(found) & set(expected))
              if found[name] != expected[name]][:3]
    return "; ".join(words)


def total(cfg: RunConfig) -> int:
    """The model's parameter count (Keras' count_params of the built model)."""
    return dict(breakdown(cfg))["total"]


def toggle_effects(cfg: RunConfig, count_total=total) -> pd.DataFrame:
    """What each single switch flip adds or removes: change, total, Δ vs cfg. `count_total(cfg)`
    returns a model's total parameters (default: `total`)."""
    base = count_total(cfg)
    rows = []
    for variant in toggle_variants(cfg):
        changed = next(name for name in FLIPPED if getattr(variant, name) != getattr(cfg, name))
        total = count_total(variant)
        rows.append({"switch": changed, "from": str(getattr(cfg, changed)), "to": str(getattr(variant, changed)),
                     "tokens": variant.tokens, "total": total, "Δ parameters": total - base})
    return pd.DataFrame(rows)
