"""The comparison engine: one selection against its baseline, every number paired and traceable.

    python -m vitcore compare --norm batch --train-rows 1000 --out out/   # vs the article's ViT at 1,000 rows

Pairs are runs with the same random seed *and* the same train_rows. When the two sides share no
train_rows the comparison is unpaired (Welch) and says so (`paired` = False). For `seconds` only
pairs timed the same way (equal `timing_group`) count; with fewer than two the verdict is "not
comparable". Means beside a Δ are over the paired random seeds only. Every page and the CLI use
this module, so a number on screen is the number in `metrics.csv`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from vitcore.config.run import RunConfig
from vitcore.data.fashion import CLASS_NAMES, NUM_CLASSES
from vitcore.stats import bootstrap
from vitcore.stats.bootstrap import TEST_COLUMNS
from vitcore.stats.estimates import MARGIN, NOT_COMPARABLE, TOO_FEW, Estimate, decide, paired_estimate, welch_estimate
from vitcore.stats.summaries import METRICS, pair_runs, runs_of

METRIC_COLUMNS = ["metric", "selection_mean", "baseline_mean", "n_pairs", "mean_delta", "ci_low", "ci_high",
                  "p_value", "verdict", "seeds_needed", "paired"]
# + test accuracy's interval over random seeds and test images, and which interval the verdict used
ALL_METRIC_COLUMNS = [*METRIC_COLUMNS, *TEST_COLUMNS]
CLASS_COLUMNS = ["class", "mean_delta", "ci_low", "ci_high", "n_pairs", "verdict"]
CONFUSION_COLUMNS = ["true", "predicted", "mean_delta", "ci_low", "ci_high", "n_pairs"]


@dataclass(frozen=True)
class Comparison:
    """selection - baseline. `pairs`: one row per metric and pair (or per run when unpaired) with
    both run ids, so every Δ leads back to its runs."""
    selection: RunConfig
    baseline: RunConfig
    paired: bool
    metrics: pd.DataFrame
    pairs: pd.DataFrame
    classes: pd.DataFrame | None = None
    confusion: pd.DataFrame | None = None

    @property
    def seeds(self) -> list[int]:
        """The random seeds actually paired (test accuracy), sorted."""
        part = self.pairs[self.pairs["metric"] == "test_accuracy"]
        return sorted(int(s) for s in part["seed"].dropna().unique()) if self.paired else []


def default_baseline(selection: RunConfig) -> RunConfig:
    """The article's ViT at the selection's train_rows."""
    return RunConfig(train_rows=selection.train_rows)


def _row(metric: str, est: Estimate, sel_mean: float, base_mean: float, margin: float) -> dict:
    verdict, needed = decide(metric, est, margin)
    if metric == "seconds" and est.n < 2:
        verdict = NOT_COMPARABLE
    return {"metric": metric, "selection_mean": sel_mean, "baseline_mean": base_mean, "n_pairs": est.n if est.paired else 0,
            "mean_delta": est.mean, "ci_low": est.ci_low, "ci_high": est.ci_high, "p_value": est.p_value,
            "verdict": verdict, "seeds_needed": needed, "paired": est.paired}


def _unpaired_side(frame: pd.DataFrame, group: str | None) -> pd.DataFrame:
    return frame if group is None else frame[frame["timing_group"] == group]


def _common_timing_group(sel: pd.DataFrame, base: pd.DataFrame) -> str | None:
    """For unpaired seconds: the timing group both sides have most runs in (None: no column)."""
    if "timing_group" not in sel.columns:
        return None
    shared = set(sel["timing_group"]) & set(base["timing_group"])
    if not shared:
        return ""
    return max(sorted(shared), key=lambda g: min((sel["timing_group"] == g).sum(), (base["timing_group"] == g).sum()))


def compare(runs: pd.DataFrame, selection: RunConfig, baseline: RunConfig | None = None, margin: float = MARGIN,
            confusions: pd.DataFrame | None = None, metrics=METRICS, predictions=None, labels=None) -> Comparison:
    """Compare the runs of `selection` (any random seed) with those of `baseline` (default: the
    article's ViT at the selection's train_rows). `confusions` (RunStore.confusions() format) adds
    the per-class and confusion-matrix Δs. `predictions(run_id)` (an array or None) and the test
    `labels` add test accuracy's interval over random seeds *and* test images (vitcore.stats.bootstrap,
    the columns TEST_COLUMNS) when every pair kept its predictions; its verdict then comes from the
    wider of the two intervals."""
    baseline = baseline or default_baseline(selection)
    sel, base = runs_of(runs, selection), runs_of(runs, baseline)
    paired = selection.train_rows == baseline.train_rows
    rows, pairs = [], []
    for metric in metrics:
        if paired:
            matched = pair_runs(base, sel, metric)
            est = paired_estimate(matched["delta"])
            rows.append(_row(metric, est, matched["variant"].mean(), matched["baseline"].mean(), margin))
            pairs.append(matched.assign(metric=metric).rename(columns={
                "variant": "selection", "run_id_variant": "selection_run_id", "run_id_baseline": "baseline_run_id"}))
        else:
            group = _common_timing_group(sel, base) if metric == "seconds" else None
            a, b = _unpaired_side(sel, group), _unpaired_side(base, group)
            est = welch_estimate(a[metric], b[metric])
            rows.append(_row(metric, est, a[metric].mean(), b[metric].mean(), margin))
            both = pd.concat([a.assign(side="selection"), b.assign(side="baseline")])
            pairs.append(both[["side", "train_rows", "seed", "run_id", metric]].rename(columns={metric: "value"})
                         .assign(metric=metric))
    frame = pd.DataFrame(rows, columns=METRIC_COLUMNS)
    long = pd.concat(pairs, ignore_index=True) if pairs else pd.DataFrame()
    if paired and predictions is not None and labels is not None:
        frame = bootstrap.with_test_set(frame, long, predictions, labels, margin)
    else:
        frame = frame.assign(ci_low_with_test=np.nan, ci_high_with_test=np.nan, n_pairs_with_test=0,
                             interval=bootstrap.SEEDS_ONLY)
    classes = confusion = None
    if confusions is not None:
        classes, confusion = class_deltas(confusions, sel, base, paired, margin)
    return Comparison(selection, baseline, paired, frame, long, classes, confusion)


def run_rates(confusions: pd.DataFrame, run_ids) -> np.ndarray:
    """(runs, 10, 10) row-normalised rates (row = true class, column = predicted), in run_ids order."""
    ids = list(run_ids)
    part = confusions[confusions["run_id"].isin(ids)]
    index = part["run_id"].map({run_id: k for k, run_id in enumerate(ids)}).to_numpy(np.int64)
    cell = index * NUM_CLASSES ** 2 + part["true"].to_numpy(np.int64) * NUM_CLASSES + part["predicted"].to_numpy(np.int64)
    counts = np.bincount(cell, weights=part["count"].to_numpy(float), minlength=len(ids) * NUM_CLASSES ** 2)
    counts = counts.reshape(len(ids), NUM_CLASSES, NUM_CLASSES)
    with np.errstate(invalid="ignore", divide="ignore"):
        return counts / counts.sum(axis=2, keepdims=True)


def class_deltas(confusions: pd.DataFrame, sel: pd.DataFrame, base: pd.DataFrame, paired: bool,
                 margin: float = MARGIN) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per-class accuracy Δ and confusion-rate Δ (selection - baseline), paired seed by seed (or
    Welch when unpaired), each with its 95% interval."""
    if paired:
        matched = pd.merge(base[["train_rows", "seed", "run_id"]], sel[["train_rows", "seed", "run_id"]],
                           on=["train_rows", "seed"], suffixes=("_baseline", "_selection"))
        diff = run_rates(confusions, matched["run_id_selection"]) - run_rates(confusions, matched["run_id_baseline"])

        def estimate(i, j) -> Estimate:
            return paired_estimate(diff[:, i, j])
    else:
        a, b = run_rates(confusions, sel["run_id"]), run_rates(confusions, base["run_id"])

        def estimate(i, j) -> Estimate:
            return welch_estimate(a[:, i, j], b[:, i, j])
    classes = []
    for k, name in enumerate(CLASS_NAMES):
        est = estimate(k, k)
        verdict, _ = decide("test_accuracy", est, margin)
        classes.append({"class": name, "mean_delta": est.mean, "ci_low": est.ci_low, "ci_high": est.ci_high,
                        "n_pairs": est.n if est.paired else 0, "verdict": verdict if est.n >= 2 else TOO_FEW})
    cells = []
    for i in range(NUM_CLASSES):
        for j in range(NUM_CLASSES):
            est = estimate(i, j)
            cells.append({"true": i, "predicted": j, "mean_delta": est.mean, "ci_low": est.ci_low,
                          "ci_high": est.ci_high, "n_pairs": est.n if est.paired else 0})
    return pd.DataFrame(classes, columns=CLASS_COLUMNS), pd.DataFrame(cells, columns=CONFUSION_COLUMNS)


def mean_rates(confusions: pd.DataFrame, run_ids) -> np.ndarray:
    """(10, 10) row-normalised rates averaged over runs (for showing one side's matrix)."""
    return run_rates(confusions, run_ids).mean(axis=0)


def write(comparison: Comparison, out) -> list:
    """metrics.csv, classes.csv, confusion_delta.csv (+ pairs.csv: the runs behind every Δ)."""
    from pathlib import Path

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = [out / "metrics.csv", out / "pairs.csv"]
    comparison.metrics.to_csv(written[0], index=False)
    comparison.pairs.to_csv(written[1], index=False)
    if comparison.classes is not None:
        written += [out / "classes.csv", out / "confusion_delta.csv"]
        comparison.classes.to_csv(written[2], index=False)
        comparison.confusion.to_csv(written[3], index=False)
    return written
