"""Token count is the price: the source article's attention-cost table, and the measured cost of one layer.

No TensorFlow at import: the token-cost page reads the table and the committed CSV only.
`python -m vitcore bench-attention` (TensorFlow, run once) times one MultiHeadAttention layer
(width 64, 4 heads, the source article's block) at several token counts and writes vitcore/analysis/attention_cost.csv.
"""

from __future__ import annotations

import platform
import statistics
import time
from pathlib import Path

import numpy as np
import pandas as pd

from vitcore.config.run import SEED_FIELDS, RunConfig
from vitcore.config.switches import LEVELS, PAPER_VARIANTS
from vitcore.data.patches import SIDE, token_width
from vitcore.model.anatomy import total
from vitcore.stats.seconds import rank

BENCH_CSV = Path(__file__).resolve().parent / "attention_cost.csv"  # shipped with the package (pyproject package-data)
BASE_TOKENS = 16  # the article's ViT: 28x28 in 7x7 patches
# (image side, patch side): the source article's table rows, in its order.
SEED_ROWS = ((28, 7), (28, 4), (64, 8), (224, 16), (224, 8))
BENCH_TOKENS = (4, 16, 49, 64, 196, 400, 784)
_ARTICLE_VIT = {name: getattr(RunConfig(), name) for name in LEVELS}  # every switch at the article's ViT's value
BENCH_COLUMNS = ["tokens", "attention_entries", "median_ms", "min_ms", "max_ms", "repeats", "batch",
                 "width", "heads", "machine"]


def token_cost(image: int, patch: int) -> dict:
    """One row of the source article's table: tokens = (image/patch)^2, entries = tokens^2 per head."""
    if image <= 0 or patch <= 0 or image % patch:
        raise ValueError(f"patch ({patch}) must be a positive divisor of the image side ({image})")
    tokens = (image // patch) ** 2
    entries = tokens ** 2
    return {"image": f"{image}×{image}", "patch": patch, "tokens": tokens, "attention_entries": entries,
            "relative": entries / BASE_TOKENS ** 2}


def token_cost_table(rows=SEED_ROWS) -> pd.DataFrame:
    """The source article's 'Token count is the price' table, computed (relative to 16 tokens = 256 entries)."""
    return pd.DataFrame([token_cost(image, patch) for image, patch in rows])


def time_attention(tokens: int, repeats: int = 15, batch: int = 32, width: int = 64, heads: int = 4,
                   warmup: int = 3) -> list[float]:
    """Wall-clock milliseconds of `repeats` forward passes of one self-attention layer on a
    (batch, tokens, width) input, after `warmup` untimed calls (tracing, allocation)."""
    import keras  # noqa: PLC0415 - TensorFlow, only to time a layer
    import tensorflow as tf  # noqa: PLC0415 - TensorFlow, only to time a layer

    layer = keras.layers.MultiHeadAttention(num_heads=heads, key_dim=width // heads)
    x = tf.random.stateless_normal((batch, tokens, width), seed=(0, tokens))

    @tf.function(jit_compile=False, reduce_retracing=True)
    def forward(inputs):
        return layer(inputs, inputs)

    for _ in range(warmup):
        forward(x).numpy()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        forward(x).numpy()  # .numpy() waits for the result
        times.append((time.perf_counter() - start) * 1000)
    return times


def bench_attention(tokens=BENCH_TOKENS, repeats: int = 15, batch: int = 32, width: int = 64,
                    heads: int = 4) -> pd.DataFrame:
    """Median/min/max forward milliseconds per token count, one row each (BENCH_COLUMNS)."""
    machine = f"{platform.machine()} {platform.processor() or platform.system()}".strip()
    rows = []
    for count in tokens:
        times = time_attention(count, repeats, batch, width, heads)
        rows.append({"tokens": count, "attention_entries": count ** 2, "median_ms": statistics.median(times),
                     "min_ms": min(times), "max_ms": max(times), "repeats": repeats, "batch": batch,
                     "width": width, "heads": heads, "machine": machine})
    return pd.DataFrame(rows, columns=BENCH_COLUMNS)


def write_attention_bench(table: pd.DataFrame, path: str | Path = BENCH_CSV) -> None:
    """The committed CSV's format: BENCH_COLUMNS, milliseconds to 4 decimals."""
    table.to_csv(path, index=False, float_format="%.4f")


def load_attention_bench(path: str | Path = BENCH_CSV) -> pd.DataFrame | None:
    """The committed measurements, or None when the file is missing or not in the expected shape."""
    try:
        table = pd.read_csv(path)
    except (OSError, ValueError):
        return None
    if not set(BENCH_COLUMNS) <= set(table.columns) or table.empty:
        return None
    return table.sort_values("tokens").reset_index(drop=True)


def quadratic_fit(tokens, millis) -> tuple[float, float, float]:
    """Least-squares time = a + b * N^2 (a: fixed overhead per call). Returns (a, b, R^2)."""
    n2 = np.asarray(tokens, dtype=float) ** 2
    y = np.asarray(millis, dtype=float)
    design = np.column_stack([np.ones_like(n2), n2])
    (a, b), *_ = np.linalg.lstsq(design, y, rcond=None)
    residual = y - design @ np.array([a, b])
    total = ((y - y.mean()) ** 2).sum()
    return float(a), float(b), float(1 - (residual ** 2).sum() / total) if total else 1.0


def loglog_slope(tokens, millis, min_tokens: int = 100) -> float:
    """Slope of log(time) vs log(N) over the large-N rows: 2 means pure N^2, 1 linear."""
    tokens, millis = np.asarray(tokens, dtype=float), np.asarray(millis, dtype=float)
    keep = tokens >= min_tokens
    if keep.sum() < 2:
        raise ValueError(f"need at least two measurements with >= {min_tokens} tokens")
    return float(np.polyfit(np.log(tokens[keep]), np.log(millis[keep]), 1)[0])


def with_n2_curve(bench: pd.DataFrame) -> pd.DataFrame:
    """Long frame for a chart: measured median and the fitted a + b*N^2 at each token count."""
    a, b, _ = quadratic_fit(bench["tokens"], bench["median_ms"])
    measured = pd.DataFrame({"tokens": bench["tokens"], "ms": bench["median_ms"], "series": "measured median"})
    grid = np.unique(np.geomspace(bench["tokens"].min(), bench["tokens"].max(), 60).round())  # even on a log axis
    fitted = pd.DataFrame({"tokens": grid, "ms": a + b * grid ** 2, "series": "fit a + b·N²"})
    return pd.concat([measured, fitted], ignore_index=True)


def tokens_grid_seconds(runs: pd.DataFrame) -> pd.DataFrame:
    """Training seconds per patch size from the store table, the article's ViT with only the patch
    size changed (every other registered switch at its default), one row per (patch_size, train_rows,
    timing_group): mean, std, runs, tokens — seconds are never pooled across timing groups.
    Within a training size only the seeds every patch size has count (patch 7 has more seeds, from
    the `headline` grid), so the rows compare the same data samples."""
    columns = ["patch_size", "tokens", "train_rows", "runs", "mean_seconds", "std_seconds",
               "mean_test_accuracy"]
    if runs is None or runs.empty:
        return pd.DataFrame(columns=columns + ["epochs", "timing_group"])
    vit = runs[(runs["model"] == "vit") & (runs["warmup_epochs"] == 0)]
    for name, value in _ARTICLE_VIT.items():  # every switch but the patch size at the article's ViT's value
        if name != "patch_size" and name in vit.columns:
            vit = vit[vit[name] == value]
    vit = vit[vit.reindex(columns=list(SEED_FIELDS)).isna().all(axis=1)]  # one run per random seed
    if vit.empty:
        return pd.DataFrame(columns=columns)
    vit = vit.assign(patch_size=vit["patch_size"].astype(int))
    if "timing_group" not in vit.columns:
        vit = vit.assign(timing_group="")
    keys = ["train_rows", "epochs", "timing_group"]  # seconds are never pooled across timing groups
    vit = vit.groupby(keys, group_keys=False)[list(vit.columns)].apply(_common_seeds)
    grouped = vit.groupby(["patch_size", *keys], as_index=False).agg(
        runs=("seconds", "size"), mean_seconds=("seconds", "mean"), std_seconds=("seconds", "std"),
        mean_test_accuracy=("test_accuracy", "mean"))
    grouped["tokens"] = (SIDE // grouped["patch_size"]) ** 2
    return grouped[columns + ["epochs", "timing_group"]].sort_values(
        ["train_rows", "timing_group", "patch_size"]).reset_index(drop=True)


def tokens_timing_groups(runs: pd.DataFrame) -> list[str]:
    """The timing groups with a tokens grid, best basis first: the dedicated timing set, then clean groups, then
    groups timed under load (vitcore.stats.seconds.rank); within each, the most patch sizes at one train_rows,
    then the most runs."""
    keyed = []
    for group in (runs["timing_group"].unique() if runs is not None and "timing_group" in runs.columns else []):
        grid = tokens_grid_seconds(runs[runs["timing_group"] == group])
        if not grid.empty:
            keyed.append((rank(group), -grid.groupby("train_rows")["patch_size"].nunique().max(),
                          -int(grid["runs"].sum()), group))
    return [group for *_, group in sorted(keyed)]


def variant_cost_table() -> pd.DataFrame:
    """What each paper's change costs the article's ViT, computed: variant, label, tokens (the sequence the
    attention sees: a class token is one more), attention entries per head and block, relative (to the
    article's 16 tokens), values per token (the patch projection's input: SPT's is 5 × patch²), parameters."""
    rows = []
    for name, changes in {"the article's ViT": {}, **PAPER_VARIANTS}.items():
        cfg = RunConfig(**changes)
        rows.append({"variant": name, "label": cfg.label(), "tokens": cfg.sequence,
                     "attention_entries": cfg.sequence ** 2, "relative": cfg.sequence ** 2 / BASE_TOKENS ** 2,
                     "values_per_token": token_width(cfg), "parameters": total(cfg)})
    return pd.DataFrame(rows)


def variant_seconds(runs: pd.DataFrame) -> pd.DataFrame:
    """Training seconds of the article's ViT and each paper variant from the store table, one row per
    (variant, train_rows, timing_group): runs, mean and std seconds, mean test accuracy. Seconds compare
    only within one timing group (same code, threads, workers, compile mode)."""
    columns = ["variant", "train_rows", "timing_group", "runs", "mean_seconds", "std_seconds", "mean_test_accuracy"]
    if runs is None or runs.empty:
        return pd.DataFrame(columns=columns)
    frames = []
    for name, changes in {"the article's ViT": {}, **PAPER_VARIANTS}.items():
        ids = {RunConfig(train_rows=int(rows), **changes).config_id: int(rows) for rows in runs["train_rows"].unique()}
        part = runs[runs["config_id"].isin(ids)]
        if not part.empty:
            frames.append(part.assign(variant=name))
    if not frames:
        return pd.DataFrame(columns=columns)
    grouped = pd.concat(frames).groupby(["variant", "train_rows", "timing_group"], as_index=False, sort=False).agg(
        runs=("seconds", "size"), mean_seconds=("seconds", "mean"), std_seconds=("seconds", "std"),
        mean_test_accuracy=("test_accuracy", "mean"))
    return grouped[columns].sort_values(["train_rows", "timing_group"], kind="stable").reset_index(drop=True)


def _common_seeds(part: pd.DataFrame) -> pd.DataFrame:
    """The runs of the seeds every patch size in `part` has (all of them if no seed is shared)."""
    shared = set.intersection(*(set(seeds) for _, seeds in part.groupby("patch_size")["seed"]))
    return part[part["seed"].isin(shared)] if shared else part
