"""The data-size curve: the article's ViT and convnet from 1,000 to 16,000 training rows.

The source article's real question is "how small can the data be before the convnet wins?". Each
row count's ViT - convnet Δ is paired by random seed (vitcore.stats.compare); where the Δ changes sign
is stated with its uncertainty, from the intervals, never from the means alone. No TensorFlow.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from vitcore.config.run import RunConfig
from vitcore.stats.compare import compare
from vitcore.stats.estimates import BETTER, MARGIN, WORSE
from vitcore.stats.summaries import summarize

CURVE_METRICS = ("test_accuracy", "final_val_accuracy")
MODELS = {"ViT": RunConfig(), "convnet": RunConfig(model="convnet")}


def curve(runs: pd.DataFrame) -> pd.DataFrame:
    """model, train_rows, metric, n, mean, sd, ci_low, ci_high: one row per model, row count and metric
    for every row count where that model has runs at the article's other settings."""
    rows = []
    for name, base in MODELS.items():
        part = runs[runs["config_id"].isin(
            {base.replace(train_rows=int(r)).config_id for r in runs["train_rows"].unique()})]
        for _, cell in summarize(part, CURVE_METRICS).iterrows():
            for metric in CURVE_METRICS:
                rows.append({"model": name, "train_rows": int(cell["train_rows"]), "metric": metric, "n": int(cell["n"]),
                             "mean": cell[f"{metric}_mean"], "sd": cell[f"{metric}_std"],
                             "ci_low": cell[f"{metric}_ci_low"], "ci_high": cell[f"{metric}_ci_high"]})
    columns = ["model", "train_rows", "metric", "n", "mean", "sd", "ci_low", "ci_high"]
    return pd.DataFrame(rows, columns=columns).sort_values(["metric", "model", "train_rows"], ignore_index=True)


def deltas(runs: pd.DataFrame, margin: float = MARGIN) -> pd.DataFrame:
    """ViT - convnet per row count and metric, paired: train_rows, metric, mean_delta, ci_low,
    ci_high, n_pairs, verdict ("better" = the ViT is better)."""
    shared = sorted(set(curve(runs).query("model == 'ViT'")["train_rows"])
                    & set(curve(runs).query("model == 'convnet'")["train_rows"]))
    rows = []
    for train_rows in shared:
        vit, convnet = (MODELS[m].replace(train_rows=train_rows) for m in ("ViT", "convnet"))
        result = compare(runs, vit, convnet, margin, metrics=CURVE_METRICS).metrics
        rows += [{"train_rows": train_rows, **row} for row in result.to_dict("records")]
    columns = ["train_rows", "metric", "mean_delta", "ci_low", "ci_high", "n_pairs", "verdict", "seeds_needed"]
    return pd.DataFrame(rows, columns=columns)


def crossover(frame: pd.DataFrame, metric: str = "test_accuracy") -> str:
    """One sentence: between which row counts (if any) the paired Δ changes sign, with its intervals."""
    part = frame[frame["metric"] == metric].sort_values("train_rows")
    if part.empty:
        return "No row count has paired runs of both models yet."
    described = "; ".join(f"{r.train_rows:,} rows: Δ {r.mean_delta:+.4f} [{r.ci_low:+.4f}, {r.ci_high:+.4f}], {r.verdict} "
                          f"({r.n_pairs} pairs)" for r in part.itertuples())
    ahead = part[part["verdict"] == BETTER]["train_rows"].tolist()
    behind = part[part["verdict"] == WORSE]["train_rows"].tolist()
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
    return f"No resolved change of sign from {part['train_rows'].min():,} to {part['train_rows'].max():,} rows: {who}{where}.{hint} {described}."
