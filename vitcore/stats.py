"""Seed statistics on a runs table: per-config intervals, seed-paired deltas, main effects, interactions.

Every comparison here is paired: two configs are compared only on runs that share (train_rows,
seed), so the seed's data sample and initialisation cancel out of the difference. Intervals are
95% t-intervals (scipy); with fewer than two pairs there is no interval (NaN) and the verdict says
so, rather than pretending one seed is a measurement of seed noise. No TensorFlow here.

Input is `RunStore.table()`: one row per run; ViT-only fields are None on convnet rows.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from vitcore.config import (NORM_PLACEMENTS, NORMS, PATCH_SIZES, POS_EMBEDDINGS, SWITCHES, RunConfig)
from vitcore.data import CLASS_NAMES

METRICS = ("test_accuracy", "best_val_accuracy", "final_train_accuracy", "gap", "seconds")
# Which direction is "better" for the verdict words. gap (final train - final val accuracy) measures
# overfitting and seconds is cost, so lower is better for both; a metric not listed counts as
# higher-is-better. Final train accuracy has no good direction (more fit can mean more memorising),
# so its verdicts are the neutral "higher"/"lower".
HIGHER_IS_BETTER = {"test_accuracy": True, "best_val_accuracy": True, "final_train_accuracy": True,
                    "gap": False, "seconds": False, "test_loss": False, "params": False}
NEUTRAL = {"final_train_accuracy"}
BETTER, WORSE, NOISE, TOO_FEW, NO_PAIRS = "better", "worse", "within seed noise", "too few seeds", "no paired runs"
HIGHER, LOWER = "higher", "lower"
CONFIDENCE = 0.95
LEVELS = {"pos_embedding": POS_EMBEDDINGS, "norm_placement": NORM_PLACEMENTS, "norm": NORMS, "patch_size": PATCH_SIZES}
REFERENCE = {name: getattr(RunConfig(), name) for name in SWITCHES}  # the seed's ViT: learned, pre, layer, 7
# Fields that must sit at the seed's defaults for a ViT run to enter main_effects/interactions.
FIXED = ("width", "depth", "heads", "mlp_dim", "epochs", "batch_size", "lr", "warmup_epochs")
CONFIG_COLUMNS = [name for name in RunConfig.__dataclass_fields__ if name != "seed"]
EFFECT_COLUMNS = ["factor", "level", "reference", "train_rows", "metric", "mean_delta", "ci_low", "ci_high",
                  "n_pairs", "verdict"]
INTERACTION_COLUMNS = ["factor", "level", "reference", "factor_b", "level_b", "reference_b", "train_rows", "metric",
                       "mean_delta", "ci_low", "ci_high", "n_pairs", "verdict"]
FLIP_COLUMNS = ["switch", "from", "to", "metric", "mean_delta", "ci_low", "ci_high", "n_pairs", "verdict",
                "variant_config_id"]


def t_interval(values) -> tuple[float, float, float, int]:
    """(mean, ci_low, ci_high, n) of the non-NaN values; the interval is NaN when n < 2.
    Zero spread (e.g. a deterministic parameter count) gives the degenerate interval [mean, mean]."""
    values = np.asarray(values, dtype=float)
    values = values[~np.isnan(values)]
    n = len(values)
    if n == 0:
        return np.nan, np.nan, np.nan, 0
    mean = float(values.mean())
    if n < 2:
        return mean, np.nan, np.nan, n
    half = stats.t.ppf(0.5 + CONFIDENCE / 2, n - 1) * values.std(ddof=1) / np.sqrt(n)
    return mean, mean - half, mean + half, n


def verdict(metric: str, ci_low: float, ci_high: float, n: int) -> str:
    """"better"/"worse" only when the 95% CI excludes 0, in the metric's good direction (HIGHER_IS_BETTER)."""
    if n == 0:
        return NO_PAIRS
    if n < 2 or np.isnan(ci_low):
        return TOO_FEW
    if ci_low <= 0 <= ci_high:
        return NOISE
    higher = ci_low > 0
    if metric in NEUTRAL:
        return HIGHER if higher else LOWER
    return BETTER if higher == HIGHER_IS_BETTER.get(metric, True) else WORSE


def summarize(runs: pd.DataFrame, metrics=METRICS) -> pd.DataFrame:
    """One row per config_id: config columns, label, n (seeds) and {m}_mean/_std/_ci_low/_ci_high.

    Grouped by config_id, not by the config columns, because ViT-only fields are None on convnet
    rows and groupby would silently drop them. std and the interval are NaN when n < 2.
    """
    keep = ["config_id", "label", *[c for c in CONFIG_COLUMNS if c in runs.columns]]
    out = runs.drop_duplicates("config_id")[keep].set_index("config_id")
    groups = runs.groupby("config_id", sort=False)
    out["n"] = groups.size()
    for metric in metrics:
        mean, std, count = (groups[metric].agg(how) for how in ("mean", "std", "count"))
        half = stats.t.ppf(0.5 + CONFIDENCE / 2, (count - 1).where(count >= 2)) * std / np.sqrt(count)
        out[f"{metric}_mean"], out[f"{metric}_std"] = mean, std.where(count >= 2)
        out[f"{metric}_ci_low"], out[f"{metric}_ci_high"] = mean - half, mean + half
    return out.reset_index()


@dataclass(frozen=True)
class Delta:
    """variant - baseline over seed-paired runs; pairs has train_rows, seed, baseline, variant, delta."""
    metric: str
    mean_delta: float
    ci_low: float
    ci_high: float
    n_pairs: int
    verdict: str
    pairs: pd.DataFrame = field(repr=False, compare=False)

    def row(self) -> dict:
        return {"metric": self.metric, "mean_delta": self.mean_delta, "ci_low": self.ci_low,
                "ci_high": self.ci_high, "n_pairs": self.n_pairs, "verdict": self.verdict}


def paired_delta(baseline: pd.DataFrame, variant: pd.DataFrame, metric: str) -> Delta:
    """Pair runs by (train_rows, seed) and take variant - baseline; unmatched runs are left out.

    Each frame should hold one config (one run per train_rows and seed); anything else is ambiguous
    and raises ValueError. If both frames span several train_rows, the pairs pool them.
    """
    key = ["train_rows", "seed"]
    for name, frame in (("baseline", baseline), ("variant", variant)):
        if frame.duplicated(key).any():
            raise ValueError(f"{name} has several runs for one (train_rows, seed): pass one config's runs")
    pairs = pd.merge(baseline[key + [metric]].rename(columns={metric: "baseline"}),
                     variant[key + [metric]].rename(columns={metric: "variant"}), on=key, how="inner")
    pairs = pairs.sort_values(key, ignore_index=True)
    pairs["delta"] = pairs["variant"] - pairs["baseline"]
    mean, low, high, n = t_interval(pairs["delta"])
    return Delta(metric, mean, low, high, n, verdict(metric, low, high, n), pairs)


def runs_of(runs: pd.DataFrame, cfg: RunConfig) -> pd.DataFrame:
    """The runs of cfg at every seed (config_id ignores the seed)."""
    return runs[runs["config_id"] == cfg.config_id]


def factorial_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """The ViT runs that enter main effects: warm-up 0 and every non-switch field at the seed's default."""
    default = RunConfig()
    vit = runs[runs["model"] == "vit"]
    for name in FIXED:
        vit = vit[vit[name] == getattr(default, name)]
    return vit.astype({"patch_size": int})


def _contrast(vit: pd.DataFrame, weights: dict[tuple, int], factors: tuple[str, ...], metric: str) -> dict[int, tuple]:
    """For each train_rows: t_interval over seeds of the seed's mean contrast across other-switch cells.

    weights maps a tuple of levels of `factors` to +1/-1 (main effect: {(L,): +1, (ref,): -1}).
    A cell (one combination of the other switches) contributes only where every weighted level
    was run; the cell x seed table is then cut to a complete rectangle (see _balanced) so each seed
    averages over the same cells, and the interval is over seeds: n_pairs = number of seeds.
    """
    others = [s for s in SWITCHES if s not in factors]
    wide = vit.pivot_table(index=["train_rows", *others, "seed"], columns=list(factors), values=metric, aggfunc="mean")
    result = {}
    if not all(level in wide.columns for level in weights):
        return result
    contrast = sum(sign * wide[level] for level, sign in weights.items()).dropna()
    for rows, part in contrast.groupby(level="train_rows"):
        table = part.droplevel("train_rows").unstack("seed")  # rows: cells of the other switches, columns: seeds
        table = _balanced(table)
        if table.size:
            result[rows] = t_interval(table.mean(axis=0))
    return result


def _balanced(table: pd.DataFrame) -> pd.DataFrame:
    """The larger complete rectangle of a cell x seed table: drop incomplete cells, or drop the seeds
    missing cells (a sweep in progress) and then incomplete cells; on a full grid it changes nothing."""
    by_cells = table.dropna(axis=0)
    counts = table.notna().sum(axis=0)
    by_seeds = table.loc[:, counts == counts.max()].dropna(axis=0) if len(counts) else table
    return by_seeds if by_seeds.size > by_cells.size else by_cells


def main_effects(runs: pd.DataFrame, metrics=METRICS) -> pd.DataFrame:
    """Each switch's non-reference level minus the reference level (the seed's ViT), per train_rows.

    The delta is taken within each cell of the other three switches, at the same train_rows and
    seed, then averaged over those cells within each seed; the 95% t-interval is over seeds, so
    n_pairs counts seeds (conservative: cells of one seed share its data sample). Only the cells
    where both levels were run count, so patch 2 (run only at the seed's other switches, by the
    `tokens` grid) is an effect at the reference cell, not an average over the grid.
    """
    vit, rows = factorial_runs(runs), []
    for factor in SWITCHES:
        ref = REFERENCE[factor]
        for level in LEVELS[factor]:
            if level == ref:
                continue
            for metric in metrics:
                for train_rows, (mean, low, high, n) in _contrast(vit, {level: 1, ref: -1}, (factor,), metric).items():
                    rows.append([factor, level, ref, train_rows, metric, mean, low, high, n,
                                 verdict(metric, low, high, n)])
    return pd.DataFrame(rows, columns=EFFECT_COLUMNS)


def interactions(runs: pd.DataFrame, metrics=METRICS) -> pd.DataFrame:
    """2-way interactions: [Y(a, b) - Y(ref_a, b)] - [Y(a, ref_b) - Y(ref_a, ref_b)], a difference of
    differences; unit and averaging as in main_effects. "better" means the pair does better together
    than their two main effects added up (in the metric's good direction)."""
    vit, rows = factorial_runs(runs), []
    for factor_a, factor_b in itertools.combinations(SWITCHES, 2):
        ref_a, ref_b = REFERENCE[factor_a], REFERENCE[factor_b]
        for a, b in itertools.product(LEVELS[factor_a], LEVELS[factor_b]):
            if a == ref_a or b == ref_b:
                continue
            weights = {(a, b): 1, (ref_a, b): -1, (a, ref_b): -1, (ref_a, ref_b): 1}
            for metric in metrics:
                for train_rows, (mean, low, high, n) in _contrast(vit, weights, (factor_a, factor_b), metric).items():
                    rows.append([factor_a, a, ref_a, factor_b, b, ref_b, train_rows, metric, mean, low, high, n,
                                 verdict(metric, low, high, n)])
    return pd.DataFrame(rows, columns=INTERACTION_COLUMNS)


def flip_effects(runs: pd.DataFrame, cfg: RunConfig, metrics=METRICS) -> pd.DataFrame:
    """The "flip one switch" table: cfg vs cfg with one switch changed, seed-paired at cfg.train_rows.

    Switches: the four ViT switches (none apply to the convnet) plus warmup_epochs, whose other
    values are taken from the runs (the `warmup` grid). A row appears only if the flipped config
    has runs; "better" means the flipped config is better than cfg.
    """
    base = runs_of(runs, cfg)
    if base.empty or cfg.model != "vit":
        return pd.DataFrame(columns=FLIP_COLUMNS)
    present = set(runs["config_id"])
    candidates = [(switch, level) for switch in SWITCHES for level in LEVELS[switch]]
    candidates += [("warmup_epochs", int(w)) for w in sorted(runs["warmup_epochs"].dropna().unique())]
    rows = []
    for switch, level in candidates:
        if level == getattr(cfg, switch):
            continue
        try:
            flipped = cfg.replace(**{switch: level})
        except ValueError:  # e.g. warm-up longer than the run
            continue
        if flipped.config_id not in present:
            continue
        variant = runs_of(runs, flipped)
        for metric in metrics:
            delta = paired_delta(base, variant, metric)
            rows.append({"switch": switch, "from": getattr(cfg, switch), "to": level, **delta.row(),
                         "variant_config_id": flipped.config_id})
    return pd.DataFrame(rows, columns=FLIP_COLUMNS)


def _matrices(confusions: pd.DataFrame, run_ids) -> np.ndarray:
    """(runs, 10, 10) count matrices of the given runs, from the long confusions table."""
    ids = list(dict.fromkeys(run_ids))
    part = confusions[confusions["run_id"].isin(ids)]
    found = [i for i in ids if i in set(part["run_id"])]
    if not found:
        raise ValueError(f"no confusion matrices for runs {ids}")
    index = part["run_id"].map({run_id: k for k, run_id in enumerate(found)}).to_numpy()
    cell = index * 100 + part["true"].to_numpy(int) * 10 + part["predicted"].to_numpy(int)
    counts = np.bincount(cell, weights=part["count"].to_numpy(float), minlength=len(found) * 100)
    return counts.reshape(len(found), 10, 10)


def _rates(confusions: pd.DataFrame, run_ids) -> np.ndarray:
    """Seed-averaged row-normalised rates, shape (10, 10): each run's rows sum to 1 before averaging."""
    counts = _matrices(confusions, run_ids)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (counts / counts.sum(axis=2, keepdims=True)).mean(axis=0)


def confusion_delta(confusions: pd.DataFrame, baseline_ids, variant_ids) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(baseline, variant, variant - baseline) seed-averaged 10x10 rates (row = true, column = predicted)."""
    base, var = _rates(confusions, baseline_ids), _rates(confusions, variant_ids)
    return base, var, var - base


def class_accuracy_delta(confusions: pd.DataFrame, baseline_ids, variant_ids) -> pd.DataFrame:
    """Per-class test accuracy (the rate's diagonal), seed-averaged: class, name, baseline, variant, delta."""
    base, var, _ = confusion_delta(confusions, baseline_ids, variant_ids)
    frame = pd.DataFrame({"class": range(10), "name": CLASS_NAMES, "baseline": np.diag(base), "variant": np.diag(var)})
    frame["delta"] = frame["variant"] - frame["baseline"]
    return frame
