"""The data-size curve: the article's ViT and convnet from 1,000 to 16,000 training rows.

The source article's real question is "how small can the data be before the convnet wins?". Each
row count's ViT - convnet Δ is paired by random seed (vitcore.stats.compare); where the Δ changes sign
is stated with its uncertainty, from the intervals, never from the means alone. `crossover_estimate`
puts a number on it (vitcore.analysis.crossover: a monotone fit in log(rows), a bootstrap over random
seeds and test images, the leave-one-size-out spread). It takes any table of runs and any pair of
configs (their train_rows is ignored), so another grid can ask the same question. No TensorFlow.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from vitcore.analysis import crossover as _crossover
from vitcore.analysis.crossover import (  # noqa: F401 (re-exported)
    REPLICATES,
    SEED,
    Crossover,
    _weights,
    crossing,
    crossover_sentence,
    paired_curve,
    plain_interpolation,
)
from vitcore.config import numbers
from vitcore.config.metrics import known
from vitcore.config.run import ARTICLE_MODELS, RunConfig
from vitcore.config.switches import MODEL_NAMES, PAPER_VARIANTS, SMALL_DATA_VARIANT
from vitcore.stats.compare import Comparer, or_uncached
from vitcore.stats.estimates import BAD, GOOD, MARGIN
from vitcore.stats.summaries import summarize

CURVE_METRICS = known("test_accuracy", "final_val_accuracy")
MODELS = {MODEL_NAMES[model]: cfg for model, cfg in ARTICLE_MODELS.items()}  # the article's two models, "ViT" first
VARIANT = f"ViT + {SMALL_DATA_VARIANT}"  # the papers' small-data recipe on the article's ViT (the papers-scaling grid)
CURVE_MODELS = {**MODELS, VARIANT: RunConfig(**PAPER_VARIANTS[SMALL_DATA_VARIANT])}


def curve(runs: pd.DataFrame) -> pd.DataFrame:
    """model, train_rows, metric, n, mean, sd, ci_low, ci_high: one row per model, row count and metric
    for every row count where that model has runs at the article's other settings."""
    rows = []
    for name, base in CURVE_MODELS.items():
        part = runs[runs["config_id"].isin(
            {base.replace(train_rows=int(r)).config_id for r in runs["train_rows"].unique()})]
        for _, cell in summarize(part, CURVE_METRICS).iterrows():
            for metric in CURVE_METRICS:
                rows.append({"model": name, "train_rows": int(cell["train_rows"]), "metric": metric,
                             "n": int(cell["n"]),
                             "mean": cell[f"{metric}_mean"], "sd": cell[f"{metric}_std"],
                             "ci_low": cell[f"{metric}_ci_low"], "ci_high": cell[f"{metric}_ci_high"]})
    columns = ["model", "train_rows", "metric", "n", "mean", "sd", "ci_low", "ci_high"]
    return pd.DataFrame(rows, columns=columns).sort_values(["metric", "model", "train_rows"], ignore_index=True)


def deltas(runs: pd.DataFrame, margin: float = MARGIN, test_set=None, compare: Comparer | None = None) -> pd.DataFrame:
    """ViT - convnet per row count and metric, paired: train_rows, metric, mean_delta, ci_low,
    ci_high, n_pairs, verdict ("better" = the ViT is better), interval (what the interval covers:
    vitcore.stats.testset, with the store's `test_set` as on the cards). `compare(selection, baseline, margin,
    metrics)`: a cached engine instead (vitcore.study.Study.compare)."""
    compare = or_uncached(compare, runs, test_set)
    shared = sorted(set(curve(runs).query("model == 'ViT'")["train_rows"])
                    & set(curve(runs).query("model == 'convnet'")["train_rows"]))
    rows = []
    for train_rows in shared:
        vit, convnet = (MODELS[m].replace(train_rows=train_rows) for m in ("ViT", "convnet"))
        result = compare(vit, convnet, margin, CURVE_METRICS).metrics
        rows += [{"train_rows": train_rows, **row} for row in result.to_dict("records")]
    columns = ["train_rows", "metric", "mean_delta", "ci_low", "ci_high", "n_pairs", "verdict", "seeds_needed",
               "interval"]
    return pd.DataFrame(rows, columns=columns)


def crossover(frame: pd.DataFrame, metric: str = "test_accuracy") -> str:
    """One sentence: between which row counts (if any) the paired Δ changes sign, with its intervals."""
    part = frame[frame["metric"] == metric].sort_values("train_rows")
    if part.empty:
        return "No row count has paired runs of both models yet."
    described = "; ".join(f"{r.train_rows:,} rows: Δ {numbers.delta(r.mean_delta)} {numbers.ci(r.ci_low, r.ci_high)}, "
                          f"{r.verdict} ({r.n_pairs} pairs)" for r in part.itertuples())
    ahead = part[part["verdict"].isin(GOOD)]["train_rows"].tolist()  # resolved, "slightly" included
    behind = part[part["verdict"].isin(BAD)]["train_rows"].tolist()
    if ahead and behind:
        low, high = (max(ahead), min(behind)) if max(ahead) < min(behind) else (max(behind), min(ahead))
        leader = "the ViT" if max(ahead) < min(behind) else "the convnet"
        return (f"The paired Δ (ViT − convnet) changes sign between {low:,} and {high:,} rows: {leader} leads "
                f"below, the other above, each resolved by its 95% interval. {described}.")
    if not np.isfinite(part["mean_delta"]).any():
        return f"Too few random seeds to tell. {described}."
    sign_changes = np.diff(np.sign(part["mean_delta"].to_numpy())) != 0
    hint = (" The means change sign, but the intervals do not resolve where." if sign_changes.any() else "")
    who = "the ViT leads" if ahead else ("the convnet leads" if behind else "neither model leads resolvably")
    where = f" (resolved at {', '.join(f'{r:,}' for r in (ahead or behind))} rows)" if ahead or behind else ""
    return (f"No resolved change of sign from {part['train_rows'].min():,} to {part['train_rows'].max():,} rows: "
            f"{who}{where}.{hint} {described}.")


def crossover_estimate(runs: pd.DataFrame, first: RunConfig = MODELS["ViT"], second: RunConfig = MODELS["convnet"],
                       metric: str = "test_accuracy", reps: int = REPLICATES, seed: int = SEED,
                       test_set=None) -> Crossover:
    """vitcore.analysis.crossover.crossover_estimate, the article's ViT against its convnet by default."""
    return _crossover.crossover_estimate(runs, first, second, metric, reps, seed, test_set)


def _fit(x: np.ndarray, deltas: list[np.ndarray]) -> tuple[float, float]:
    """(crossing log-rows, chord slope) of the monotone fit through each row count's mean Δ (the crossover's)."""
    means = np.array([d.mean() for d in deltas])
    return crossing(x, means, _weights(deltas)), (means[-1] - means[0]) / (x[-1] - x[0])


# -- does the papers' small-data variant move the crossover? -------------------------------------------
def paired_accuracy(runs: pd.DataFrame, metric: str = "test_accuracy") -> pd.DataFrame:
    """Per train_rows and random seed with runs of all three of CURVE_MODELS: each one's metric
    (columns train_rows, seed, ViT, VARIANT, convnet)."""
    frames = []
    for name, base in CURVE_MODELS.items():
        ids = {base.replace(train_rows=int(r)).config_id for r in runs["train_rows"].unique()}
        part = runs[runs["config_id"].isin(ids)][["train_rows", "seed", metric]]
        frames.append(part.rename(columns={metric: name}).set_index(["train_rows", "seed"]))
    return pd.concat(frames, axis=1, join="inner").reset_index().sort_values(["train_rows", "seed"], ignore_index=True)


@dataclass(frozen=True)
class Shift:
    """The variant's crossover over the ViT's (both monotone fits, `_fit`, on the same random seeds): `ratio` of the
    two row counts, its bootstrap 95% interval [low, high] (NaN: fewer than three row counts)."""
    ratio: float
    low: float
    high: float
    row_counts: tuple[int, ...]
    n_pairs: tuple[int, ...]
    replicates: int


def crossover_shift(runs: pd.DataFrame, metric: str = "test_accuracy", reps: int = REPLICATES,
                    seed: int = SEED) -> Shift:
    """How far the variant moves the crossover with the convnet, as a ratio of row counts: both curves fitted
    as in crossover_estimate, on the random seeds that have all three models, and resampled together
    (the ViT, the variant and the convnet of one random seed share its data sample), so the interval is
    of the paired shift."""
    table = paired_accuracy(runs, metric)
    groups = [part for _, part in table.groupby("train_rows") if len(part) >= 2]
    counts, pairs = tuple(int(g["train_rows"].iloc[0]) for g in groups), tuple(len(g) for g in groups)
    if len(groups) < 3:
        return Shift(np.nan, np.nan, np.nan, counts, pairs, 0)
    x = np.log(np.array(counts, dtype=float))
    diffs = {name: [(g[name] - g["convnet"]).to_numpy() for g in groups] for name in ("ViT", VARIANT)}

    def shift(picks) -> float:
        base, moved = (_fit(x, [d[p] for d, p in zip(diffs[name], picks)])[0] for name in ("ViT", VARIANT))
        return moved - base  # log of the ratio; NaN (or ±inf) when either curve does not cross inside the rows

    point = shift([np.arange(len(g)) for g in groups])
    rng = np.random.default_rng(seed)
    logs = np.array([shift([rng.integers(0, len(g), len(g)) for g in groups]) for _ in range(reps)])
    logs = logs[~np.isnan(logs)]  # ±inf (one curve crosses outside the rows) stays: the interval is then unbounded
    if not np.isfinite(point) or not len(logs):
        return Shift(np.nan, np.nan, np.nan, counts, pairs, reps)
    low, high = np.percentile(logs, 2.5, method="lower"), np.percentile(logs, 97.5, method="higher")
    return Shift(float(np.exp(point)), float(np.exp(low)), float(np.exp(high)), counts, pairs, reps)


def variant_sentence(runs: pd.DataFrame, test_set=None) -> str:
    """The variant's crossover with the convnet (crossover_estimate, with the store's `test_set`) and its
    shift from the ViT's, in words."""
    own = crossover_estimate(runs, CURVE_MODELS[VARIANT], MODELS["convnet"], test_set=test_set)
    moved = crossover_shift(runs)
    text = f"{VARIANT} against the convnet: " + crossover_sentence(own, f"the {VARIANT}", "the convnet")
    if not np.isfinite(moved.ratio):
        return text + (" Its shift from the ViT's crossover needs all three models at three or more row counts "
                       f"(there are {len(moved.row_counts)}): `python -m vitcore sweep papers-scaling`.")
    return text + (f" On the random seeds all three share, the variant's crossover is **{moved.ratio:.2f}×** the "
                   f"ViT's in rows (95% paired bootstrap {moved.low:.2f}–{moved.high:.2f}, {moved.replicates:,} "
                   f"replicates; {', '.join(f'{r:,}' for r in moved.row_counts)} rows, "
                   f"{'/'.join(map(str, moved.n_pairs))} pairs): "
                   + ("it moves the crossover." if moved.low > 1 or moved.high < 1 else
                      "the interval includes 1, so a move is not resolved."))
