"""Where one model's lead over another changes sign along the data-size curve, with an interval that covers it.

The estimate: each row count's paired Δ (first − second, per random seed) is averaged; a monotone curve in
log(rows) is fitted to those means (isotonic regression, weighted by each row count's 1 / se², in the
direction the Δ moves from the smallest to the largest row count), and the crossing is where its linear
interpolation in log(rows) passes zero — where the means already fall monotonically, that is the plain
interpolation between the two row counts that bracket the sign change. A straight line in log(rows), the
earlier model, is fitted too and its misfit reported (χ², p): it does not fit our curve, so it no longer
decides the crossing.

The interval: a bootstrap that resamples the random seeds within each row count *and*, when every pair kept
its predictions, the 10,000 test images (a Poisson bootstrap: one weight per image, shared by every run of a
replicate, as all runs are scored on the same test set), refitting the monotone curve each time; the 2.5th and 97.5th
percentiles. Beside it, the leave-one-size-out spread: the estimate with each row count left out in turn.
The change per doubling of the rows is the chord from the smallest to the largest row count (no model),
with the same bootstrap. No TensorFlow.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats
from scipy.optimize import isotonic_regression

from vitcore.config import numbers
from vitcore.config.run import RunConfig
from vitcore.stats.compare import pair_runs
from vitcore.stats.families import runs_of

REPLICATES = 2_000
SEED = 0  # the bootstrap's own random generator: fixed, so the page, `report` and the claims agree
CHUNK = 250  # image resamples per block (10,000 × 250 float32: 10 MB)
DRAW_ROWS = 512  # images whose Poisson weights are drawn at once (NumPy draws int64: 1 MB, not 20 MB per block)


@dataclass(frozen=True)
class Crossover:
    """Where the fitted lead of `first` over `second` is zero: `rows` (NaN when the curve does not cross inside
    the measured row counts or there are too few), its bootstrap 95% interval [low, high] (±inf: some
    replicates cross outside the measured rows), the chord change of the Δ per doubling of the rows with its
    interval, the row counts used and the pairs at each, what the bootstrap resampled, the leave-one-size-out
    estimates, and the straight line's misfit."""
    rows: float
    low: float
    high: float
    per_doubling: float
    row_counts: tuple[int, ...]
    n_pairs: tuple[int, ...]
    replicates: int
    per_doubling_low: float = np.nan
    per_doubling_high: float = np.nan
    with_images: bool = False                 # the bootstrap resampled the test images too
    left_out: tuple[float, ...] = ()          # the estimate with each row count left out, in row_counts order
    line_chi2: float = np.nan                 # the weighted straight line's χ² against the means, on k − 2 df
    line_p: float = np.nan

    @property
    def inside(self) -> bool:
        """The estimate lies within the measured row counts."""
        counts = self.row_counts
        return bool(counts) and np.isfinite(self.rows) and min(counts) <= self.rows <= max(counts)

    @property
    def spread(self) -> tuple[float, float]:
        """The smallest and largest leave-one-size-out estimate (NaN when none crosses)."""
        finite = [r for r in self.left_out if np.isfinite(r)]
        return (min(finite), max(finite)) if finite else (np.nan, np.nan)


def crossing(x: np.ndarray, means: np.ndarray, weights: np.ndarray | None = None) -> float:
    """The log-rows where the monotone fit of `means` over `x` (ascending) passes zero: NaN when the fit is flat,
    -inf / +inf when it stays on one side (the crossing lies below / above the measured rows)."""
    falling = means[-1] < means[0]
    if means[-1] == means[0]:
        return np.nan
    fit = isotonic_regression(means, weights=weights, increasing=not falling).x
    signed = -fit if falling else fit  # rising from negative to positive
    if signed[0] >= 0:
        return -np.inf
    if signed[-1] < 0:
        return np.inf
    i = int(np.argmax(signed >= 0))  # the first point at or past zero; signed[i - 1] < 0
    return float(x[i - 1] + (x[i] - x[i - 1]) * -signed[i - 1] / (signed[i] - signed[i - 1]))


def _weights(deltas: list[np.ndarray]) -> np.ndarray:
    se = np.array([d.std(ddof=1) / np.sqrt(len(d)) for d in deltas])
    return 1 / np.maximum(se, 1e-6) ** 2


def _line_misfit(x: np.ndarray, deltas: list[np.ndarray]) -> tuple[float, float]:
    """χ² of the 1/se²-weighted straight line through the means, and its p on k − 2 degrees of freedom."""
    means, weights = np.array([d.mean() for d in deltas]), _weights(deltas)
    if len(x) < 3:
        return np.nan, np.nan
    fitted = np.polyval(np.polyfit(x, means, 1, w=np.sqrt(weights)), x)
    chi2 = float(np.sum(weights * (means - fitted) ** 2))
    return chi2, float(stats.chi2.sf(chi2, len(x) - 2))


def paired_curve(runs: pd.DataFrame, first: RunConfig, second: RunConfig, metric: str = "test_accuracy",
                 with_ids: bool = False) -> dict:
    """{train_rows: first − second per paired random seed} for every row count where both have 2+ pairs
    (`with_ids`: (deltas, first run ids, second run ids))."""
    out = {}
    for rows in sorted(set(runs["train_rows"].unique())):
        a, b = runs_of(runs, first.replace(train_rows=int(rows))), runs_of(runs, second.replace(train_rows=int(rows)))
        if len(a) and len(b):
            pairs = pair_runs(b, a, metric).dropna(subset=["delta"])
            if len(pairs) >= 2:
                delta = pairs["delta"].to_numpy()
                out[int(rows)] = (delta, pairs["run_id_variant"].tolist(), pairs["run_id_baseline"].tolist()) \
                    if with_ids and "run_id_variant" in pairs.columns else delta
    return out


def _poisson_weights(rng, images: int, block: int) -> np.ndarray:
    """rng.poisson(1.0, (images, block)).astype(np.float32), the same numbers from the same draws (the generator
    fills C order, one draw after another, however the request is split), drawn DRAW_ROWS images at a time
    into the float32 array: a crowd's server ran two crossovers at once, each holding 30 MB for one block."""
    weights = np.empty((images, block), np.float32)
    for row in range(0, images, DRAW_ROWS):
        weights[row:row + DRAW_ROWS] = rng.poisson(1.0, (min(DRAW_ROWS, images - row), block))
    return weights


def _replicate_deltas(deltas, image_diffs, reps: int, rng) -> list[np.ndarray]:
    """Per row count, a (reps, pairs) array: the pairs' Δs under each replicate's Poisson resample of the test
    images (the same weights for every row count), or the plain Δs when the images are not resampled. Only the
    images some pair disagrees on carry a Δ; the rest enter the normaliser, a Poisson total of their count."""
    if image_diffs is None:
        return [np.broadcast_to(d, (reps, len(d))) for d in deltas]
    stacked = np.concatenate(image_diffs)  # (all pairs, images)
    active = np.flatnonzero(np.any(stacked != 0, axis=0))
    stacked, idle = stacked[:, active], stacked.shape[1] - len(active)
    out = np.empty((reps, len(stacked)))
    for start in range(0, reps, CHUNK):
        block = min(CHUNK, reps - start)
        weights = _poisson_weights(rng, len(active), block)
        total = weights.sum(axis=0) + rng.poisson(idle, block)
        out[start:start + block] = (stacked @ weights / total).T
    edges = np.cumsum([0] + [len(d) for d in image_diffs])
    return [out[:, lo:hi] for lo, hi in zip(edges[:-1], edges[1:])]


def crossover_estimate(runs: pd.DataFrame, first: RunConfig, second: RunConfig, metric: str = "test_accuracy",
                       reps: int = REPLICATES, seed: int = SEED, test_set=None) -> Crossover:
    """Where the paired Δ (first − second) crosses zero (see the module docstring), with its bootstrap over
    random seeds and — with the store's `test_set`, when every pair kept its predictions — test images.
    Needs three row counts with 2+ pairs, else NaN."""
    curve = paired_curve(runs, first, second, metric, with_ids=True)
    counts = tuple(curve)
    deltas = [c[0] if isinstance(c, tuple) else c for c in curve.values()]
    pairs = tuple(len(d) for d in deltas)
    if len(counts) < 3:
        return Crossover(np.nan, np.nan, np.nan, np.nan, counts, pairs, 0)
    x = np.log(np.array(counts, dtype=float))
    means, weights = np.array([d.mean() for d in deltas]), _weights(deltas)
    point = crossing(x, means, weights)
    chord = (means[-1] - means[0]) / np.log2(counts[-1] / counts[0])
    left_out = tuple(crossing(np.delete(x, k), np.delete(means, k), np.delete(weights, k)) for k in range(len(x)))
    image_diffs = None
    if test_set is not None and metric == "test_accuracy" and all(isinstance(c, tuple) for c in curve.values()):
        image_diffs = [test_set.differences(ids, other) for _, ids, other in curve.values()]
        image_diffs = None if any(d is None for d in image_diffs) else [d.astype(np.float32) for d in image_diffs]
    rng = np.random.default_rng(seed)
    resampled = _replicate_deltas(deltas, image_diffs, reps, rng)
    picks = [rng.integers(0, len(d), (reps, len(d))) for d in deltas]
    crossings, chords = np.empty(reps), np.empty(reps)
    for r in range(reps):
        drawn = [table[r, pick[r]] for table, pick in zip(resampled, picks)]
        m = np.array([d.mean() for d in drawn])
        crossings[r] = crossing(x, m, _weights(drawn))
        chords[r] = (m[-1] - m[0]) / np.log2(counts[-1] / counts[0])
    crossings = np.nan_to_num(crossings, nan=np.inf)  # a flat replicate crosses nowhere
    # no interpolation between order statistics, so an unbounded end stays unbounded (an inf) instead of a NaN
    low, high = np.percentile(crossings, 2.5, method="lower"), np.percentile(crossings, 97.5, method="higher")
    chi2, p = _line_misfit(x, deltas)
    with np.errstate(over="ignore"):
        rows, low, high = (float(np.exp(v)) for v in (point if np.isfinite(point) else np.nan, low, high))
        left_out = tuple(float(np.exp(v)) if np.isfinite(v) else np.nan for v in left_out)
    chord_low, chord_high = np.percentile(chords, [2.5, 97.5])
    return Crossover(rows, low, high, float(chord), counts, pairs, reps, float(chord_low), float(chord_high),
                     image_diffs is not None, left_out, chi2, p)


def plain_interpolation(runs: pd.DataFrame, first: RunConfig, second: RunConfig,
                        metric: str = "test_accuracy") -> float:
    """The crossing of the straight interpolation in log(rows) between the two row counts whose mean Δs
    bracket the first sign change (NaN when the means never change sign)."""
    curve = paired_curve(runs, first, second, metric)
    counts, means = list(curve), [d.mean() for d in curve.values()]
    for k in range(1, len(counts)):
        if np.sign(means[k]) != np.sign(means[k - 1]):
            x0, x1 = np.log(counts[k - 1]), np.log(counts[k])
            return float(np.exp(x0 + (x1 - x0) * means[k - 1] / (means[k - 1] - means[k])))
    return np.nan


def bracket(estimate: Crossover) -> tuple[int, int]:
    """The measured row counts on either side of the crossing (both the same when it falls on one): all the data
    say, since between two row counts the crossing is a straight line in log(rows) through their fitted Δs."""
    counts = sorted(estimate.row_counts)
    on = [r for r in counts if abs(r - estimate.rows) <= 1e-9 * r]  # exp(log(4,000)) may come back as 3,999.9999…
    if on:
        return on[0], on[0]
    return max(r for r in counts if r < estimate.rows), min(r for r in counts if r > estimate.rows)


def rounded(rows: float) -> str:
    """A row count read off the fit or its bootstrap, to 2 significant figures ('5,000', not '5,014'): the
    interval spans thousands of rows, so the third digit is noise."""
    return f"{float(f'{rows:.2g}'):,.0f}"


def crossover_sentence(estimate: Crossover, first: str = "the ViT", second: str = "the convnet") -> str:
    """The estimate in one sentence (the page, `report`, the claims ledger)."""
    if len(estimate.row_counts) < 3:
        return ("No crossover estimate: it needs paired runs of both models (2+ random seeds) at three or more row "
                f"counts; there are {len(estimate.row_counts)}.")
    measured = f"{min(estimate.row_counts):,}–{max(estimate.row_counts):,}"
    over = "random seeds and test images" if estimate.with_images else "random seeds (test images: predictions missing)"
    line = (f" A straight line in log(rows) does not fit these means (χ² {estimate.line_chi2:.1f} on "
            f"{len(estimate.row_counts) - 2} df, p {estimate.line_p:.3g}), so the crossing is read off a monotone "
            "interpolation." if estimate.line_p < 0.05 else "")
    if not np.isfinite(estimate.rows):
        return (f"The monotone fit of the paired Δ does not cross zero inside the measured {measured} rows (the Δ "
                f"changes by {numbers.delta(estimate.per_doubling)} per doubling of the rows).{line}")
    bounded = np.isfinite(estimate.low) and np.isfinite(estimate.high) and estimate.low > 1
    # bold: what the data resolve — the bootstrap interval (a fit's bracket between two measured sizes is not
    # resolved by itself: the sizes' own verdicts say where the sign change is resolved, scaling.crossover)
    interval = (f"**{rounded(estimate.low)}–{rounded(estimate.high)}**" if bounded else
                "unbounded: some replicates cross outside the measured rows")
    leader = (first, second) if estimate.per_doubling < 0 else (second, first)
    low, high = estimate.spread
    spread = (f"; leaving one row count out moves it between {rounded(low)} and {rounded(high)}"
              if np.isfinite(low) else "")
    below, above = bracket(estimate)
    where = (f"at {below:,} rows, a measured size (" if below == above else
             f"between {below:,} and {above:,} rows (straight line ≈ {rounded(estimate.rows)}; ")
    return (f"The paired Δ, fitted as a monotone curve in log(rows), crosses zero {where}95% bootstrap interval "
            f"over {over}: {interval}, {estimate.replicates:,} replicates{spread}): "
            f"{leader[0]} leads below it, {leader[1]} above; from {min(estimate.row_counts):,} to "
            f"{max(estimate.row_counts):,} rows the Δ changes by {numbers.delta(estimate.per_doubling)} per doubling "
            f"({'/'.join(map(str, estimate.n_pairs))} pairs at {', '.join(f'{r:,}' for r in estimate.row_counts)} "
            f"rows).{line}")
