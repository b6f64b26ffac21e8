"""Seed statistics on a runs table: per-config intervals, seed-paired deltas, main effects, interactions.

Every comparison here is paired: two configs are compared only on runs that share (train_rows,
random seed), so the random seed's data sample and initialisation cancel out of the difference. Intervals
are 95% t-intervals (scipy); verdicts come from vitcore.stats.estimates (margin, Holm within a family).
With fewer than two pairs there is no interval (NaN) and the verdict says "too few seeds". No
TensorFlow here; the engine that compares one selection with its baseline is vitcore.stats.compare.

Input is `RunStore.table()`: one row per run; ViT-only fields are None on convnet rows.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from vitcore.config.run import LEVELS, SWITCHES, RunConfig
from vitcore.stats.estimates import (  # noqa: F401
    ALPHA,
    BETTER,
    CONFIDENCE,
    EQUIVALENT,
    HIGHER,
    HIGHER_IS_BETTER,
    INCONCLUSIVE,
    LOWER,
    MARGIN,
    NEUTRAL,
    NOT_COMPARABLE,
    RESOLVED,
    TOO_FEW,
    VERDICTS,
    WORSE,
    Estimate,
    decide,
    holm,
    paired_estimate,
    welch_estimate,
)

METRICS = ("test_accuracy", "best_val_accuracy", "final_train_accuracy", "gap", "seconds")
REFERENCE = {name: getattr(RunConfig(), name) for name in SWITCHES}  # the article's ViT: learned, pre, layer, 7
# Fields that must sit at the article's defaults for a ViT run to enter main_effects/interactions.
FIXED = ("width", "depth", "heads", "mlp_dim", "epochs", "batch_size", "lr", "warmup_epochs")
CONFIG_COLUMNS = [name for name in RunConfig.__dataclass_fields__ if name != "seed"]
ESTIMATE_COLUMNS = ["mean_delta", "ci_low", "ci_high", "n_pairs"]
VERDICT_COLUMNS = ["p_value", "p_holm", "verdict", "seeds_needed"]
EFFECT_COLUMNS = ["factor", "level", "reference", "train_rows", "metric", *ESTIMATE_COLUMNS, *VERDICT_COLUMNS, "cells"]
INTERACTION_COLUMNS = ["factor", "level", "reference", "factor_b", "level_b", "reference_b", "train_rows", "metric",
                       *ESTIMATE_COLUMNS, *VERDICT_COLUMNS]
FLIP_COLUMNS = ["switch", "from", "to", "metric", "mean_delta", "ci_low", "ci_high", "n_pairs", "p_value", "p_holm",
                "verdict", "seeds_needed", "variant_config_id"]


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
    """variant - baseline over runs paired by (train_rows, random seed); pairs has train_rows, seed,
    baseline, variant, delta (and the two run ids when the frames carry run_id)."""
    metric: str
    mean_delta: float
    ci_low: float
    ci_high: float
    n_pairs: int
    verdict: str
    pairs: pd.DataFrame = field(repr=False, compare=False)
    p_value: float = np.nan
    seeds_needed: float = np.nan

    def row(self) -> dict:
        return {"metric": self.metric, "mean_delta": self.mean_delta, "ci_low": self.ci_low,
                "ci_high": self.ci_high, "n_pairs": self.n_pairs, "p_value": self.p_value,
                "verdict": self.verdict, "seeds_needed": self.seeds_needed}


def pair_runs(baseline: pd.DataFrame, variant: pd.DataFrame, metric: str) -> pd.DataFrame:
    """The runs of two configs matched on (train_rows, random seed): train_rows, seed, baseline,
    variant, delta (+ run ids). For `seconds` only pairs timed the same way (equal timing_group).
    Each frame must hold one config (one run per train_rows and seed), else ValueError."""
    key = ["train_rows", "seed"]
    for name, frame in (("baseline", baseline), ("variant", variant)):
        if frame.duplicated(key).any():
            raise ValueError(f"{name} has several runs for one (train_rows, seed): pass one config's runs")
    extra = [c for c in ("run_id", "timing_group") if c in baseline.columns and c in variant.columns]
    pairs = pd.merge(baseline[key + extra + [metric]].rename(columns={metric: "baseline"}),
                     variant[key + extra + [metric]].rename(columns={metric: "variant"}),
                     on=key, how="inner", suffixes=("_baseline", "_variant"))
    if metric == "seconds" and "timing_group" in extra:
        pairs = pairs[pairs["timing_group_baseline"] == pairs["timing_group_variant"]]
    pairs = pairs.sort_values(key, ignore_index=True)
    pairs["delta"] = pairs["variant"] - pairs["baseline"]
    return pairs


def paired_delta(baseline: pd.DataFrame, variant: pd.DataFrame, metric: str, margin: float = MARGIN) -> Delta:
    """Pair runs by (train_rows, seed) and take variant - baseline; unmatched runs are left out.
    Seconds with fewer than 2 pairs timed the same way are "not comparable"."""
    pairs = pair_runs(baseline, variant, metric)
    est = paired_estimate(pairs["delta"])
    verdict_, needed = decide(metric, est, margin)
    if metric == "seconds" and est.n < 2:
        verdict_ = NOT_COMPARABLE
    return Delta(metric, est.mean, est.ci_low, est.ci_high, est.n, verdict_, pairs, est.p_value, needed)


def runs_of(runs: pd.DataFrame, cfg: RunConfig) -> pd.DataFrame:
    """The runs of cfg at every seed (config_id ignores the seed)."""
    return runs[runs["config_id"] == cfg.config_id]


def factorial_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """The ViT runs that enter main effects: warm-up 0 and every non-switch field at the article's default."""
    default = RunConfig()
    vit = runs[runs["model"] == "vit"]
    for name in FIXED:
        vit = vit[vit[name] == getattr(default, name)]
    return vit.astype({"patch_size": int})


def _contrast(vit: pd.DataFrame, weights: dict[tuple, int], factors: tuple[str, ...], metric: str) -> dict[int, Estimate]:
    """For each train_rows: the Estimate over seeds of each random seed's mean contrast across other-switch cells.

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
            result[rows] = paired_estimate(table.mean(axis=0))
    return result


def _balanced(table: pd.DataFrame) -> pd.DataFrame:
    """The larger complete rectangle of a cell x seed table: drop incomplete cells, or drop the seeds
    missing cells (a sweep in progress) and then incomplete cells; on a full grid it changes nothing."""
    by_cells = table.dropna(axis=0)
    counts = table.notna().sum(axis=0)
    by_seeds = table.loc[:, counts == counts.max()].dropna(axis=0) if len(counts) else table
    return by_seeds if by_seeds.size > by_cells.size else by_cells


def _with_verdicts(frame: pd.DataFrame, estimates: list[Estimate], margin: float) -> pd.DataFrame:
    """Add p_value, p_holm (Holm within each family = one metric at one train_rows) and the verdict
    decided on p_holm; seeds_needed for the inconclusive ones."""
    frame = frame.assign(p_value=[e.p_value for e in estimates])
    frame["p_holm"] = frame.groupby(["metric", "train_rows"])["p_value"].transform(lambda p: holm(p.to_numpy()))
    decided = [decide(m, e, margin, p) for m, e, p in zip(frame["metric"], estimates, frame["p_holm"])]
    frame["verdict"] = [v for v, _ in decided]
    frame["seeds_needed"] = [n for _, n in decided]
    return frame


def _seconds_runs(vit: pd.DataFrame, metric: str) -> pd.DataFrame:
    """For seconds, only the largest group of runs timed the same way enters a contrast."""
    if metric != "seconds" or "timing_group" not in vit.columns or vit.empty:
        return vit
    return vit[vit["timing_group"] == vit["timing_group"].value_counts().idxmax()]


def main_effects(runs: pd.DataFrame, metrics=METRICS, margin: float = MARGIN) -> pd.DataFrame:
    """Each switch's non-reference level minus the reference level (the article's ViT), per train_rows.

    The delta is taken within each cell of the other three switches, at the same train_rows and
    random seed, then averaged over those cells within each seed; the t-interval is over seeds, so
    n_pairs counts seeds (conservative: cells of one seed share its data sample). Only the cells
    where both levels were run count, so patch 2 (run only at the article's other switches, by the
    `tokens` grid) is an effect at the reference cell, not an average over the grid: `cells` says
    how many cells of the other switches entered. Verdicts use Holm-adjusted p-values within each
    family (one metric at one train_rows).
    """
    vit, rows, estimates = factorial_runs(runs), [], []
    for factor in SWITCHES:
        ref = REFERENCE[factor]
        for level in LEVELS[factor]:
            if level == ref:
                continue
            for metric in metrics:
                contrasts = _contrast(_seconds_runs(vit, metric), {level: 1, ref: -1}, (factor,), metric)
                for train_rows, est in contrasts.items():
                    rows.append([factor, level, ref, train_rows, metric, est.mean, est.ci_low, est.ci_high, est.n,
                                 _cells(vit, factor, level, train_rows)])
                    estimates.append(est)
    frame = pd.DataFrame(rows, columns=[c for c in EFFECT_COLUMNS if c not in VERDICT_COLUMNS])
    return _with_verdicts(frame, estimates, margin)[EFFECT_COLUMNS]


def _cells(vit: pd.DataFrame, factor: str, level, train_rows: int) -> int:
    """How many cells of the other switches have runs at this level (1 = a single-cell effect)."""
    others = [s for s in SWITCHES if s != factor]
    part = vit[(vit[factor] == level) & (vit["train_rows"] == train_rows)]
    return int(part.drop_duplicates(others).shape[0])


def interactions(runs: pd.DataFrame, metrics=METRICS, margin: float = MARGIN) -> pd.DataFrame:
    """2-way interactions: [Y(a, b) - Y(ref_a, b)] - [Y(a, ref_b) - Y(ref_a, ref_b)], a difference of
    differences; unit, averaging and Holm families as in main_effects. "better" means the pair does
    better together than their two main effects added up (in the metric's good direction)."""
    vit, rows, estimates = factorial_runs(runs), [], []
    for factor_a, factor_b in itertools.combinations(SWITCHES, 2):
        ref_a, ref_b = REFERENCE[factor_a], REFERENCE[factor_b]
        for a, b in itertools.product(LEVELS[factor_a], LEVELS[factor_b]):
            if a == ref_a or b == ref_b:
                continue
            weights = {(a, b): 1, (ref_a, b): -1, (a, ref_b): -1, (ref_a, ref_b): 1}
            for metric in metrics:
                contrasts = _contrast(_seconds_runs(vit, metric), weights, (factor_a, factor_b), metric)
                for train_rows, est in contrasts.items():
                    rows.append([factor_a, a, ref_a, factor_b, b, ref_b, train_rows, metric, est.mean, est.ci_low,
                                 est.ci_high, est.n])
                    estimates.append(est)
    frame = pd.DataFrame(rows, columns=[c for c in INTERACTION_COLUMNS if c not in VERDICT_COLUMNS])
    return _with_verdicts(frame, estimates, margin)[INTERACTION_COLUMNS]


def flip_effects(runs: pd.DataFrame, cfg: RunConfig, metrics=METRICS, margin: float = MARGIN) -> pd.DataFrame:
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
    rows, estimates = [], []
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
            delta = paired_delta(base, variant, metric, margin)
            rows.append({"switch": switch, "from": getattr(cfg, switch), "to": level, **delta.row(),
                         "variant_config_id": flipped.config_id})
            estimates.append(paired_estimate(delta.pairs["delta"]))
    if not rows:
        return pd.DataFrame(columns=FLIP_COLUMNS)
    frame = pd.DataFrame(rows)
    frame["train_rows"] = cfg.train_rows
    comparable = frame["verdict"] != NOT_COMPARABLE
    decided = _with_verdicts(frame[comparable], [e for e, ok in zip(estimates, comparable) if ok], margin)
    frame.loc[comparable, ["p_holm", "verdict", "seeds_needed"]] = decided[["p_holm", "verdict", "seeds_needed"]]
    return frame[FLIP_COLUMNS]
