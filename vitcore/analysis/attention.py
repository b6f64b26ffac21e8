"""What the heads did, with the controls the source article only asserts.

Attention scores come from a stored run's weights: per block an array (rows, heads, queries, keys),
each query's weights summing to 1, uniform = 1/N. The dashboard runs them through the NumPy ViT
(`numpy_model`, vitcore.model.numpy_vit: no TensorFlow); `build_attention_model` is the Keras equivalent.
Two controls make a map count as evidence: the same maps from a randomly initialised model of the
same config (`map_distance` says how different), and the permutation test (shuffle the patch
tokens: without a position embedding the prediction cannot change). `forward` and
`permutation_test` take either model; TensorFlow is imported only by `build_attention_model`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from vitcore.config.run import RunConfig
from vitcore.config.switches import SELECTED
from vitcore.data.fashion import CLASS_NAMES
from vitcore.data.patches import model_inputs, patchify
from vitcore.store.weights import checked

BATCH = 500


# -- models (TensorFlow) ---------------------------------------------------------------------
def build_attention_model(cfg: RunConfig, weights_path: str | Path | None = None, init_seed: int = 0):
    """The ViT of cfg with outputs [probs, scores_block0, ...]: trained weights if given, else a
    random initialisation drawn with `init_seed` (the sanity control)."""
    import keras  # noqa: PLC0415 - TensorFlow

    from vitcore.model.build import build_vit  # noqa: PLC0415 - TensorFlow

    if cfg.model != "vit":
        raise ValueError(f"attention maps need a ViT config; got model={cfg.model!r}")
    keras.utils.set_random_seed(init_seed)
    model = build_vit(cfg, with_attention=True)
    if weights_path is not None:
        model.load_weights(str(weights_path))
    return model


def numpy_model(cfg: RunConfig, weights_path: str | Path | None = None, init_seed: int = 0):
    """The same model in NumPy (vitcore.model.numpy_vit.NumpyViT): a stored `.weights.h5` if given, else a
    random initialisation drawn as Keras would, from NumPy's generator seeded with `init_seed`."""
    from vitcore.model.numpy_vit import NumpyViT, random_weights  # noqa: PLC0415 - h5py, scipy

    if weights_path is None:
        return NumpyViT(cfg, random_weights(cfg, init_seed))
    # A run's weights file, read bounded and parsed once, checked as a store check does (vitcore.store.weights.
    # checked: BadRun otherwise), never by following a link.
    path = Path(weights_path)
    return NumpyViT(cfg, checked(path.parent, cfg)[1])


@dataclass(frozen=True)
class Forward:
    probs: np.ndarray          # (rows, 10)
    scores: list[np.ndarray]   # per block: (rows, heads, queries, keys)

    @property
    def predicted(self) -> np.ndarray:
        return self.probs.argmax(axis=1)


def forward_tokens(model, tokens: np.ndarray, batch: int = BATCH, keep_scores: bool = True) -> Forward:
    """Inference (training=False, so BatchNorm uses its moving statistics) on patch tokens; `model` is
    the Keras attention model or a NumpyViT (both return [probs, scores per block]). keep_scores=False
    keeps only the probabilities (scores are rows x heads x N² floats: 600 MB for 1,000 rows at patch 2)."""
    probs, scores = [], []
    light = None if keep_scores else getattr(model, "without_scores", None)  # NumpyViT: skip the scores
    for start in range(0, len(tokens), batch):
        out = light(tokens[start:start + batch]) if light else model(tokens[start:start + batch], training=False)
        probs.append(np.asarray(out[0]))
        if keep_scores:
            scores.append([np.asarray(block) for block in out[1:]])
    return Forward(np.concatenate(probs), [np.concatenate(block) for block in zip(*scores)] if scores else [])


def forward(model, cfg: RunConfig, images: np.ndarray, batch: int = BATCH, keep_scores: bool = True) -> Forward:
    """(rows, 28, 28) images -> probabilities and (keep_scores) every block's attention scores."""
    return forward_tokens(model, model_inputs(cfg, np.asarray(images, dtype=np.float32)), batch, keep_scores)


# -- reading the maps (NumPy) -------------------------------------------------------------------
def query_spread(scores: np.ndarray) -> np.ndarray:
    """max - min of each query's weights over the keys: (rows, heads, queries, keys) -> (rows, heads, queries).
    0 for a perfectly uniform query; close to 1 when one patch takes everything."""
    scores = np.asarray(scores)
    return scores.max(axis=-1) - scores.min(axis=-1)


def head_spread(scores: np.ndarray) -> np.ndarray:
    """Per row and head, the spread of its most concentrated query: (rows, heads).
    This is the source article's 'head spread' (0.6459 for head 0 on the pullover, whose top weight is 0.648)."""
    return query_spread(scores).max(axis=-1)


def uniform_weight(scores_or_tokens) -> float:
    """1/N: what every key gets from a head that ignores content and position (0.0625 at 16 tokens)."""
    tokens = scores_or_tokens if np.isscalar(scores_or_tokens) else np.asarray(scores_or_tokens).shape[-1]
    return 1.0 / int(tokens)


def map_distance(a: np.ndarray, b: np.ndarray) -> float:
    """Mean total-variation distance between matching queries' weight vectors, in [0, 1]:
    0 = identical maps, 1 = no overlap at all. Shapes must match (rows, heads, queries, keys)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        raise ValueError(f"attention maps must have the same shape; got {a.shape} and {b.shape}")
    return _total_variation(a, b)


def _total_variation(a: np.ndarray, b: np.ndarray | float) -> float:
    """Mean over all queries of 0.5 · Σ|a - b| over the keys, in float64 one row at a time: a float64
    copy of all rows at patch 2 would be 10 MB per row; `b` an array of a's shape or one number."""
    if a.ndim < 2 or not a.size:
        return float(0.5 * np.abs(np.asarray(a, np.float64) - b).sum(axis=-1).mean())
    row = (lambda i: b[i]) if isinstance(b, np.ndarray) else (lambda i: b)  # noqa: E731
    total = sum(float(np.abs(a[i].astype(np.float64) - row(i)).sum()) for i in range(len(a)))
    return 0.5 * total / (a.size // a.shape[-1])


def distance_from_uniform(scores: np.ndarray) -> float:
    """map_distance to the uniform map: how far from 'ignore everything' the heads are."""
    scores = np.asarray(scores)
    return _total_variation(scores, uniform_weight(scores))


def key_map(scores: np.ndarray, query: int | None = None, skip: int = 0) -> np.ndarray:
    """One head's weights over the key patches as a (grid, grid) image: for `query`, or averaged
    over all queries (None). `scores` is (queries, keys) for one row and head; `skip` leading keys
    (the class token: `class_tokens(cfg)`) are left out, so the patches' weights need not sum to 1."""
    scores = np.asarray(scores)
    weights = (scores.mean(axis=0) if query is None else scores[query])[skip:]
    grid = int(round(np.sqrt(weights.shape[-1])))
    if grid * grid != weights.shape[-1]:
        raise ValueError(f"{weights.shape[-1]} keys do not form a square patch grid")
    return weights.reshape(grid, grid)  # row-major, the order patchify uses


def class_tokens(cfg: RunConfig) -> int:
    """Tokens in front of the patches in every attention map: 1 with a class token, else 0."""
    return cfg.sequence - cfg.tokens


def query_name(cfg: RunConfig, query: int | None) -> str:
    """How a query index of cfg's maps reads: the mean, the class token, or patch k."""
    if query is None:
        return "mean over all queries"
    skip = class_tokens(cfg)
    return "class token" if query < skip else f"patch {query - skip}"


# -- which rows to look at ------------------------------------------------------------------------
def prediction_table(probs: np.ndarray, labels: np.ndarray, rows: np.ndarray, scores: np.ndarray | None = None,
                     ) -> pd.DataFrame:
    """The source article's table: row, true -> predicted, confidence, correct, and head spreads if scores given."""
    probs, labels = np.asarray(probs), np.asarray(labels)
    predicted = probs.argmax(axis=1)
    table = pd.DataFrame({
        "row": np.asarray(rows), "true": [CLASS_NAMES[i] for i in labels],
        "predicted": [CLASS_NAMES[i] for i in predicted], "confidence": probs.max(axis=1),
        "correct": predicted == labels})
    if scores is not None:
        spreads = head_spread(scores)
        for head in range(spreads.shape[1]):
            table[f"head {head} spread"] = spreads[:, head]
    return table


def pick_examples(probs: np.ndarray, labels: np.ndarray, correct: int = 2, wrong: int = 2) -> np.ndarray:
    """Positions of the most confident correct and the most confidently wrong predictions
    (the source article's 'two correct and two incorrect'), correct ones first."""
    probs, labels = np.asarray(probs), np.asarray(labels)
    confidence, hit = probs.max(axis=1), probs.argmax(axis=1) == labels
    order = np.argsort(-confidence, kind="stable")
    return np.concatenate([order[hit[order]][:correct], order[~hit[order]][:wrong]]).astype(int)


# -- the permutation test ---------------------------------------------------------------------------
@dataclass(frozen=True)
class PermutationResult:
    permutation: np.ndarray   # (tokens,) the token order fed in
    max_abs_dprob: float      # max over rows and classes of |p(shuffled) - p(original)|
    changed: int              # rows whose predicted class changed
    rows: int

    def sentence(self, pos_embedding: str) -> str:
        return (f"pos_embedding={pos_embedding!r}: shuffling the {len(self.permutation)} patch tokens changed the "
                f"prediction of {self.changed} of {self.rows} images; max |Δprob| = {self.max_abs_dprob:.2e}")


def permutation_test(model, cfg: RunConfig, images: np.ndarray, seed: int = 0) -> PermutationResult:
    """Feed the same images with their patch tokens in a random (non-identity) order.
    Self-attention is permutation-equivariant and the pooling is a mean (or a class token that sits
    outside the shuffled patches), so without a position embedding the output must not move beyond
    float rounding; with one, it does. Shifted patch tokens are shuffled whole: each keeps its neighbours."""
    tokens = model_inputs(cfg, np.asarray(images, dtype=np.float32))  # (rows, N, patch² or 5·patch²)
    rng = np.random.default_rng(seed)
    permutation = rng.permutation(tokens.shape[1])
    while tokens.shape[1] > 1 and np.array_equal(permutation, np.arange(tokens.shape[1])):
        permutation = rng.permutation(tokens.shape[1])
    original = forward_tokens(model, tokens, keep_scores=False).probs
    shuffled = forward_tokens(model, tokens[:, permutation], keep_scores=False).probs
    return PermutationResult(permutation, float(np.abs(shuffled - original).max()),
                             int((shuffled.argmax(1) != original.argmax(1)).sum()), len(tokens))


# -- the source article's sketch -------------------------------------------------------------------------------
def softmax(logits: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    """softmax(logits / temperature) over the last axis, numerically stable."""
    if not temperature > 0:
        raise ValueError(f"temperature must be positive; got {temperature!r}")
    z = np.asarray(logits, dtype=np.float64) / temperature
    z = np.exp(z - z.max(axis=-1, keepdims=True))
    return z / z.sum(axis=-1, keepdims=True)


def content_similarity(image: np.ndarray, patch: int = 7) -> np.ndarray:
    """(N, N) cosine similarity between the mean-centred patch vectors of one image, in [-1, 1]:
    the sketch's 'content similarity' with no trained projections. On this scale temperature 1 gives
    near-uniform weights, as the source article's sketch does; blank patches get similarity 0 to everything."""
    tokens = patchify(np.asarray(image, dtype=np.float64)[None], patch)[0]  # (N, patch^2)
    tokens = tokens - tokens.mean(axis=1, keepdims=True)
    tokens = tokens / (np.linalg.norm(tokens, axis=1, keepdims=True) + 1e-9)
    return tokens @ tokens.T


def sketch_weights(image: np.ndarray, query: int, temperature: float = 1.0, patch: int = 7) -> np.ndarray:
    """The sketch: attention weights of patch `query` over all patches, softmax at `temperature`."""
    similarity = content_similarity(image, patch)
    if not 0 <= query < len(similarity):
        raise ValueError(f"query must be a patch index from 0 to {len(similarity) - 1}; got {query}")
    return softmax(similarity[query], temperature)


# -- which stored run to show ---------------------------------------------------------------------
# every field the sidebar selects by (the model, each registered switch, the rows) but the epochs: a run
# trained longer is shown in place of a missing one
MATCH_FIELDS = tuple(name for name in SELECTED if name != "epochs")


def find_weighted_run(runs: pd.DataFrame, cfg: RunConfig) -> str | None:
    """Run id of the stored seed-0 run with weights for cfg: the exact run if stored, else the one
    that matches every sidebar field (MATCH_FIELDS) with the most epochs. None if there is none."""
    if runs is None or runs.empty:
        return None
    candidates = runs[runs["has_weights"].astype(bool) & (runs["seed"] == 0)]
    for name in MATCH_FIELDS:
        candidates = candidates[candidates[name] == getattr(cfg, name)]
    if candidates.empty:
        return None
    exact = candidates[candidates["run_id"] == cfg.run_id]
    if not exact.empty:
        return str(exact["run_id"].iloc[0])
    return str(candidates.sort_values(["epochs", "run_id"], ascending=[False, True])["run_id"].iloc[0])


def train_command(cfg: RunConfig) -> str:
    """The shell command that trains (and keeps the weights of) cfg's seed-0 run."""
    defaults = RunConfig()
    flags = [f"--{name.replace('_', '-')} {getattr(cfg, name)}" for name in MATCH_FIELDS + ("epochs",)
             if getattr(cfg, name) != getattr(defaults, name)]
    return " ".join(["python -m vitcore run", *flags])


def spread_frame(labels: list[str], trained: np.ndarray, control: np.ndarray) -> pd.DataFrame:
    """Long rows (label, head, model, spread) for a trained-vs-random chart; scores (rows, heads, q, k)."""
    frames = []
    for name, scores in (("trained", trained), ("random init", control)):
        spreads = head_spread(scores)
        rows, heads = np.indices(spreads.shape)
        frames.append(pd.DataFrame({"label": np.asarray(labels)[rows.ravel()],
                                    "head": [f"head {h}" for h in heads.ravel()],
                                    "model": name, "spread": spreads.ravel()}))
    return pd.concat(frames, ignore_index=True)
