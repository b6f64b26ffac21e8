"""Counted work: multiply-adds (MACs) of one image's forward pass, exact from the config, no TensorFlow.

The deterministic measure of compute — what the compute claims and the cost pages use instead of wall
seconds, which depend on the machine's load; and what says a seconds Δ between two configs of equal work is
the machine's (vitcore.stats.seconds.work_note). Counted: every multiply-add of a matrix product or a
convolution (the layers vitcore.model.anatomy counts the parameters of). Not counted: element-wise work —
norms, softmax, GELU, the shift of Shifted Patch Tokenization, pooling, the position embedding's addition —
a few percent at these sizes. FLOPs ≈ 2 × MACs. A training step costs about 3× the forward pass (forward +
two backward products). The tables and charts of it are vitcore.analysis.work's.
"""

from __future__ import annotations

from vitcore.config.run import RunConfig
from vitcore.data.fashion import NUM_CLASSES
from vitcore.data.patches import SIDE, token_width

BACKWARD = 3  # a training step's multiply-adds per image: the forward pass and its two backward products


def vit_macs(cfg: RunConfig) -> dict[str, tuple[str, int]]:
    """Part -> (formula, multiply-adds per image) of the ViT of cfg, with its total."""
    n, s, w, m, d_in, k = cfg.tokens, cfg.sequence, cfg.width, cfg.mlp_dim, token_width(cfg), NUM_CLASSES
    parts = {
        "patch projection": (f"{n} tokens × {d_in} values × {w}", n * d_in * w),
        "one block: q, k, v and output projections": (f"4 × {s} × {w}×{w}", 4 * s * w * w),
        "one block: attention scores and weighted sum": (f"2 × {s}² × {w}", 2 * s * s * w),
        "one block: MLP": (f"2 × {s} × {w}×{m}", 2 * s * w * m),
        "classifier": (f"{w}×{k}", w * k),
    }
    per_block = sum(v for name, (_, v) in parts.items() if name.startswith("one block"))
    total = parts["patch projection"][1] + cfg.depth * per_block + parts["classifier"][1]
    parts["total"] = (f"{parts['patch projection'][1]:,} + {cfg.depth} × {per_block:,} + {parts['classifier'][1]:,} "
                      "(projection + blocks + head)", total)
    return parts


def convnet_macs() -> dict[str, tuple[str, int]]:
    """Part -> (formula, multiply-adds per image) of the article's convnet (3×3 valid convolutions, 2×2 pools)."""
    one = SIDE - 2           # 26: conv1's output side
    two = one // 2 - 2       # 11: after pool1 and conv2
    three = two // 2 - 2     # 3: after pool2 and conv3
    parts = {"conv1": (f"{one}² × 3×3×1×32", one * one * 9 * 32),
             "conv2": (f"{two}² × 3×3×32×64", two * two * 9 * 32 * 64),
             "conv3": (f"{three}² × 3×3×64×64", three * three * 9 * 64 * 64), "dense": ("64×64", 64 * 64),
             "classifier": (f"64×{NUM_CLASSES}", 64 * NUM_CLASSES)}
    parts["total"] = (" + ".join(f"{v:,}" for _, v in parts.values()), sum(v for _, v in parts.values()))
    return parts


def macs(cfg: RunConfig) -> int:
    """Multiply-adds of one image's forward pass through the model of cfg."""
    if cfg.model == "vit":
        return vit_macs(cfg)["total"][1]
    if cfg.model == "convnet":
        return convnet_macs()["total"][1]
    raise ValueError(f"model must be 'vit' or 'convnet'; got {cfg.model!r}")


def training_macs(cfg: RunConfig) -> int:
    """Multiply-adds of one training run of cfg: BACKWARD × one image's forward pass × rows × epochs (the
    validation and test passes are the same for every config at these rows, and not counted)."""
    return BACKWARD * macs(cfg) * cfg.train_rows * cfg.epochs
