"""The article's ViT in NumPy: a stored run's `.weights.h5` read with h5py and run forward, so the
dashboard shows attention maps without importing TensorFlow (hundreds of MB and seconds per server).

Inference only (training=False: BatchNorm uses its moving statistics), in float32 like Keras (float64
would be 3x slower for the same 1e-5 agreement: patch 2's 196 tokens make attention the cost); the
slow test in tests/test_numpy_vit.py checks it against `models.build_vit` to 1e-5 for every switch
combination. The arithmetic mirrors vitcore.model.build line for line (shapes for patch 7, width 64):

    tokens (n, 16, 49) [shifted: (n, 16, 245) -> patch_norm] -> patch_projection (n, 16, 64)
    [+ pos_embedding (16, 64): learned, or the fixed sine-cosine table] [class_token first: (n, 17, 64)]
    -> depth x block (pre: x + MHA(norm(x)), x + MLP(norm(x)); post: norm(x + MHA(x)), norm(x + MLP(x)))
       (LSA: logits × a learned scale per head, each token's own logit masked)
    -> final_norm -> mean over tokens, or the class token (n, 64) -> classifier softmax (n, 10)

`NumpyViT(cfg, weights)(tokens)` returns [probs, scores_block0, ...] like the Keras attention model
of vitcore.analysis.attention, so `attention.forward` and `attention.permutation_test` take either.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from scipy.special import erf
from threadpoolctl import threadpool_limits

from vitcore.config.run import RunConfig
from vitcore.data.fashion import NUM_CLASSES
from vitcore.data.patches import token_width
from vitcore.model import anatomy
from vitcore.model.anatomy import MHA_PARTS
from vitcore.model.weights_file import Weights, load_weights  # noqa: F401 (load_weights re-exported)

# Floats a chunk of rows may hold at once (16 MB): a row's attention logits (heads x N²) plus its token
# activations (N x (2 mlp_dim + 8 width): the MLP's two, q, k, v, the mixed values, norms, residuals).
# 13 rows at patch 2 (4 heads, 196 tokens), 88 at patch 4, 315 at patch 7: a pass's temporaries stay
# near this whatever the patch size (sized by the logits alone, 436 rows at patch 4 held 77 MB).
CHUNK = 2 ** 22
LAYER_EPS, BATCH_EPS = 1e-6, 1e-3  # LayerNormalization(epsilon=1e-6) in models.make_norm; Keras' BatchNorm default
MASKED = -1e9  # Locality Self-Attention's logit for a token's own key, as vitcore.model.build.MASKED


def _fans(shape: tuple[int, ...]) -> tuple[int, int]:
    """Keras' compute_fans: the last two axes are (in, out), any leading axes a receptive field."""
    if len(shape) == 1:
        return shape[0], shape[0]
    receptive = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    return shape[-2] * receptive, shape[-1] * receptive


def _glorot(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    fan_in, fan_out = _fans(shape)
    limit = np.sqrt(6 / (fan_in + fan_out))
    return rng.uniform(-limit, limit, shape).astype(np.float32)


def random_weights(cfg: RunConfig, seed: int = 0) -> Weights:
    """A fresh initialisation of cfg's ViT as Keras draws it (Glorot-uniform kernels with Keras' fans,
    zero biases, N(0, 0.02) position table, unit norms), from NumPy's generator: the untrained control."""
    rng = np.random.default_rng(seed)
    w, m, k, h = cfg.width, cfg.mlp_dim, cfg.width // cfg.heads, cfg.heads
    zeros, ones = (lambda *s: np.zeros(s, np.float32)), (lambda *s: np.ones(s, np.float32))
    norm = ([ones(w), zeros(w), zeros(w), ones(w)] if cfg.batch_norm else [ones(w), zeros(w)])
    weights: Weights = {"patch_projection": [_glorot(rng, (token_width(cfg), w)), zeros(w)]}
    if cfg.tokenizer == "shifted":
        weights["patch_norm"] = [ones(token_width(cfg)), zeros(token_width(cfg))]
    if cfg.pos_embedding == "learned":
        weights["pos_embedding"] = [(rng.standard_normal((cfg.tokens, w)) * 0.02).astype(np.float32)]
    if cfg.pooling == "cls":
        weights["class_token"] = [zeros(1, 1, w)]
    for b in range(cfg.depth):
        if cfg.self_attention == "lsa":
            weights[f"block{b}_attention"] = [np.full(h, 1 / math.sqrt(k), np.float32)]
        for part in MHA_PARTS[:3]:
            weights[f"block{b}_attention/{part}"] = [_glorot(rng, (w, h, k)), zeros(h, k)]
        weights[f"block{b}_attention/attention_output"] = [_glorot(rng, (h, k, w)), zeros(w)]
        weights[f"block{b}_mlp_hidden"] = [_glorot(rng, (w, m)), zeros(m)]
        weights[f"block{b}_mlp_out"] = [_glorot(rng, (m, w)), zeros(w)]
        weights[f"block{b}_norm1"], weights[f"block{b}_norm2"] = list(norm), list(norm)
    weights["final_norm"] = list(norm)
    weights["classifier"] = [_glorot(rng, (w, NUM_CLASSES)), zeros(NUM_CLASSES)]
    return weights


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _softmax_inplace(x: np.ndarray) -> np.ndarray:
    """_softmax in x's own memory: the attention logits are the largest arrays of a pass (rows x heads x
    N² floats), and each out-of-place step held one more copy of them."""
    x -= x.max(axis=-1, keepdims=True)
    np.exp(x, out=x)
    x /= x.sum(axis=-1, keepdims=True)
    return x


def _gelu(x: np.ndarray) -> np.ndarray:
    """Keras' default (exact) GELU: x * Φ(x) = 0.5 · x · (1 + erf(x / √2)), in one new array (the MLP's
    hidden activations are a pass's largest after the attention scores)."""
    out = x / math.sqrt(2)
    erf(out, out=out)
    out += 1
    out *= x
    out *= 0.5  # exact in binary floating point: the same bits as 0.5 * x * (1 + erf)
    return out


class NumpyViT:
    """cfg's ViT with these weights (load_weights or random_weights); calling it on tokens
    (n, tokens, patch²) returns [probs (n, 10), scores per block (n, heads, queries, keys)]."""

    def __init__(self, cfg: RunConfig, weights: Weights):
        if cfg.model != "vit":
            raise ValueError(f"the NumPy forward pass needs a ViT config; got model={cfg.model!r}")
        expected = anatomy.layer_shapes(cfg)
        found = {name: [a.shape for a in arrays] for name, arrays in weights.items()}
        if found != expected:
            raise ValueError(f"not the weights of {cfg.label()}: {anatomy.shape_difference(expected, found)}")
        self.cfg, self.weights = cfg, weights

    @classmethod
    def from_file(cls, cfg: RunConfig, path: str | Path) -> "NumpyViT":
        return cls(cfg, load_weights(path, anatomy.layer_shapes(cfg)))

    def _norm(self, name: str, x: np.ndarray, kind: str | None = None) -> np.ndarray:
        if (kind or self.cfg.norm) == "batch":  # inference: moving statistics
            gamma, beta, mean, var = self.weights[name]
            return (x - mean) / np.sqrt(var + BATCH_EPS) * gamma + beta
        gamma, beta = self.weights[name]
        mean = x.mean(axis=-1, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        return (x - mean) / np.sqrt(var + LAYER_EPS) * gamma + beta

    def _dense(self, name: str, x: np.ndarray) -> np.ndarray:
        """Dense over the last axis as one 2-D matrix product (BLAS), any leading shape."""
        kernel, bias = self.weights[name]
        kernel = kernel.reshape(-1, kernel.shape[-1]) if name.endswith("attention_output") else \
            kernel.reshape(kernel.shape[0], -1)                     # (w, heads·key_dim) or (heads·key_dim, w)
        out = x.reshape(-1, kernel.shape[0]) @ kernel
        out += bias.reshape(-1)  # in place: one array per layer, not two
        return out.reshape(*x.shape[:-1], -1)

    def _attention(self, block: int, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Keras MultiHeadAttention, self-attention: (n, T, w) -> (n, T, w) and scores (n, heads, T, T)."""
        prefix = f"block{block}_attention/"
        n, tokens, heads = x.shape[0], x.shape[1], self.cfg.heads
        q, k, v = (self._dense(prefix + part, x).reshape(n, tokens, heads, -1).transpose(0, 2, 1, 3)
                   for part in MHA_PARTS[:3])                     # each (n, heads, T, key_dim)
        if self.cfg.self_attention == "lsa":                       # learned scale per head, own key masked
            scale = self.weights[f"block{block}_attention"][0]      # (heads,)
            logits = (q @ k.transpose(0, 1, 3, 2)) * scale[:, None, None]
            logits[..., np.arange(tokens), np.arange(tokens)] = MASKED
        else:
            q = q / math.sqrt(q.shape[-1])                         # Keras scales the query, not the scores
            logits = q @ k.transpose(0, 1, 3, 2)
        scores = _softmax_inplace(logits)                          # (n, heads, queries, keys)
        mixed = (scores @ v).transpose(0, 2, 1, 3).reshape(n, tokens, -1)  # (n, T, heads·key_dim)
        return self._dense(prefix + "attention_output", mixed), scores

    def __call__(self, tokens: np.ndarray, training: bool = False) -> list[np.ndarray]:
        if training:
            raise ValueError("the NumPy ViT runs inference only (training=False)")
        return self._run(tokens, keep_scores=True)

    def without_scores(self, tokens: np.ndarray) -> list[np.ndarray]:
        """[probs] only: at patch 2 the scores of 1,000 rows would take 1.2 GB."""
        return self._run(tokens, keep_scores=False)

    def _run(self, tokens: np.ndarray, keep_scores: bool) -> list[np.ndarray]:
        cfg, n = self.cfg, self.cfg.sequence
        step = max(1, CHUNK // (cfg.heads * n * n + n * (2 * cfg.mlp_dim + 8 * cfg.width)))  # rows per chunk
        # One BLAS thread: the products are small (16-196 tokens), and a thread pool per call is over
        # an order of magnitude slower on a busy 2-core server than none (patch 2's q·kᵀ: bench/RESULTS.md).
        with threadpool_limits(limits=1, user_api="blas"):
            parts = [self._forward(tokens[start:start + step], keep_scores) for start in range(0, len(tokens), step)]
        return [np.concatenate(outputs) for outputs in zip(*parts)]

    def _forward(self, tokens: np.ndarray, keep_scores: bool = True) -> list[np.ndarray]:
        x = np.asarray(tokens, dtype=np.float32)                                      # (n, T, patch² or 5·patch²)
        if self.cfg.tokenizer == "shifted":
            x = self._norm("patch_norm", x, kind="layer")
        x = self._dense("patch_projection", x)                                        # (n, T, w)
        if self.cfg.pos_embedding == "learned":
            x = x + self.weights["pos_embedding"][0][None]
        elif self.cfg.pos_embedding == "sincos":
            x = x + sincos_2d(int(round(self.cfg.tokens ** 0.5)), self.cfg.width)[None]
        if self.cfg.pooling == "cls":
            token = np.broadcast_to(self.weights["class_token"][0], (len(x), 1, x.shape[-1]))
            x = np.concatenate([token, x], axis=1)                                    # (n, T + 1, w)
        all_scores = []
        for b in range(self.cfg.depth):
            mlp = lambda y: self._dense(f"block{b}_mlp_out", _gelu(self._dense(f"block{b}_mlp_hidden", y)))  # noqa: E731
            if self.cfg.norm_placement == "pre":
                attended, scores = self._attention(b, self._norm(f"block{b}_norm1", x))
                x = x + attended
                x = x + mlp(self._norm(f"block{b}_norm2", x))
            else:
                attended, scores = self._attention(b, x)
                x = self._norm(f"block{b}_norm1", x + attended)
                x = self._norm(f"block{b}_norm2", x + mlp(x))
            if keep_scores:  # else each block's scores are freed as the next block starts
                all_scores.append(scores.astype(np.float32, copy=False))
            del scores
        x = self._norm("final_norm", x)
        pooled = x[:, 0] if self.cfg.pooling == "cls" else x.mean(axis=1)            # (n, w)
        probs = _softmax(self._dense("classifier", pooled))
        return [probs.astype(np.float32), *all_scores]


# The source article's convnet in NumPy (vitcore.model.build.build_convnet), inference only: what a
# stored convnet run's weights predict, without TensorFlow (the weights check, vitcore.store.weights).
#
#     images (n, 28, 28, 1) -> conv1 3×3 valid, ReLU (n, 26, 26, 32) -> max pool 2 (n, 13, 13, 32)
#     -> conv2 (n, 11, 11, 64) -> pool (n, 5, 5, 64) -> conv3 (n, 3, 3, 64) -> mean over positions (n, 64)
#     -> dense ReLU (n, 64) -> classifier softmax (n, 10)

def _conv(x: np.ndarray, kernel: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """Keras Conv2D, 'valid' padding, stride 1, ReLU: (n, H, W, c) -> (n, H-2, W-2, filters) for a 3×3 kernel."""
    windows = sliding_window_view(x, kernel.shape[:2], axis=(1, 2))   # (n, H-2, W-2, c, 3, 3)
    n, h, w = windows.shape[:3]
    columns = windows.reshape(n * h * w, -1)                              # one row per position (c·3·3)
    out = columns @ kernel.transpose(2, 0, 1, 3).reshape(-1, kernel.shape[-1]) + bias
    return np.maximum(out, 0).reshape(n, h, w, -1)


def _pool(x: np.ndarray) -> np.ndarray:
    """Keras MaxPooling2D(2): 2×2 windows, stride 2, the odd last row and column dropped."""
    n, h, w, c = x.shape
    return x[:, :h // 2 * 2, :w // 2 * 2].reshape(n, h // 2, 2, w // 2, 2, c).max(axis=(2, 4))


def convnet_probs(weights: Weights, images: np.ndarray) -> np.ndarray:
    """(n, 28, 28) images in [0, 1] -> (n, 10) class probabilities of the convnet with these weights."""
    x = np.asarray(images, dtype=np.float32)[..., None]
    x = _pool(_conv(x, *weights["conv1"]))
    x = _pool(_conv(x, *weights["conv2"]))
    x = _conv(x, *weights["conv3"]).mean(axis=(1, 2))
    kernel, bias = weights["dense"]
    x = np.maximum(x @ kernel + bias, 0)
    kernel, bias = weights["classifier"]
    return _softmax(x @ kernel + bias)


# The fixed 2-D sine-cosine position table (no parameters), in NumPy so the Keras layer and the NumPy
# forward pass read one source. As big_vision's `posemb_sincos_2d` ("Better plain ViT baselines for
# ImageNet-1k", Beyer, Zhai & Kolesnikov 2022): a quarter of the width each for sin(x·ω), cos(x·ω),
# sin(y·ω), cos(y·ω), with frequencies ω = 1 / 10000^(i / (width/4 − 1)).

TEMPERATURE = 10_000.0


def sincos_2d(grid: int, width: int, temperature: float = TEMPERATURE) -> np.ndarray:
    """(grid·grid, width) float32 table for tokens in row-major grid order (the order patchify uses)."""
    if width % 4 or width < 8:
        raise ValueError(f"the sine-cosine table needs a width divisible by 4 and at least 8; got {width}")
    y, x = np.mgrid[:grid, :grid]                                   # each (grid, grid): token row, column
    omega = 1.0 / temperature ** (np.arange(width // 4) / (width // 4 - 1))  # (width/4,)
    x = x.reshape(-1, 1) * omega[None]                              # (tokens, width/4)
    y = y.reshape(-1, 1) * omega[None]
    return np.concatenate([np.sin(x), np.cos(x), np.sin(y), np.cos(y)], axis=1).astype(np.float32)
