"""Verdicts: what a difference with its uncertainty means, in words a reader can act on.

    better / worse     resolved (p < 5%, Holm-adjusted within a family) in the metric's good direction;
    higher / lower     the same for final train accuracy, which has no good direction
    equivalent         the 90% interval lies inside +-margin (two one-sided tests at 5%)
    inconclusive       neither: `seeds_needed` says how many random seeds would settle it
    too few seeds      fewer than 2 pairs: one random seed measures no spread
    not comparable     seconds from runs not timed the same way (timing_group)

Estimates are paired (one-sample t over per-seed differences) or, when the two sides share no
(train_rows, random seed), unpaired (Welch). No pandas, no TensorFlow: numbers in, words out.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

# Which direction is "better" for the verdict words. gap (final train - final val accuracy) measures
# overfitting and seconds is cost, so lower is better for both; a metric not listed counts as
# higher-is-better. Final train accuracy has no good direction (more fit can mean more memorising),
# so its verdicts are the neutral "higher"/"lower".
HIGHER_IS_BETTER = {"test_accuracy": True, "best_val_accuracy": True, "final_train_accuracy": True,
                    "final_val_accuracy": True, "gap": False, "seconds": False, "test_loss": False, "params": False}
NEUTRAL = {"final_train_accuracy"}
# The verdicts (README, "Verdicts"): a resolved direction, a resolved absence of effect, or a plain
# statement that the data cannot tell yet.
BETTER, WORSE, HIGHER, LOWER = "better", "worse", "higher", "lower"
EQUIVALENT, INCONCLUSIVE, TOO_FEW, NOT_COMPARABLE = "equivalent", "inconclusive", "too few seeds", "not comparable"
VERDICTS = (BETTER, WORSE, HIGHER, LOWER, EQUIVALENT, INCONCLUSIVE, TOO_FEW, NOT_COMPARABLE)
RESOLVED = (BETTER, WORSE, HIGHER, LOWER)
MARGIN = 0.01  # equivalence margin for accuracies and the gap (sidebar, --margin)
FIXED_MARGINS = {"seconds": 1.0, "test_loss": 0.02, "params": 0.0}  # in the metric's own unit
ALPHA = 0.05
CONFIDENCE = 0.95


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


@dataclass(frozen=True)
class Estimate:
    """A difference (selection - baseline) with its uncertainty: paired (one-sample t over the
    per-seed differences) or unpaired (Welch). `scale` is the sd that sets the interval width:
    the sd of the paired differences, or sqrt(s1^2 + s2^2) for two independent sides."""
    mean: float
    ci_low: float
    ci_high: float
    p_value: float
    n: int           # pairs (paired) or the smaller side (unpaired)
    df: float
    se: float
    scale: float
    paired: bool = True

    def interval(self, confidence: float) -> tuple[float, float]:
        half = stats.t.ppf(0.5 + confidence / 2, self.df) * self.se if self.df > 0 else np.nan
        return self.mean - half, self.mean + half


def paired_estimate(deltas) -> Estimate:
    """Estimate from per-seed paired differences (NaNs dropped); interval and p NaN below 2 pairs."""
    values = np.asarray(deltas, dtype=float)
    values = values[~np.isnan(values)]
    n = len(values)
    if n < 2:
        mean = float(values.mean()) if n else np.nan
        return Estimate(mean, np.nan, np.nan, np.nan, n, 0, np.nan, np.nan)
    sd = float(values.std(ddof=1))
    se = sd / np.sqrt(n)
    mean = float(values.mean())
    p = _two_sided_p(mean, se, n - 1)
    half = stats.t.ppf(0.5 + CONFIDENCE / 2, n - 1) * se
    return Estimate(mean, mean - half, mean + half, p, n, n - 1, se, sd)


def welch_estimate(selection, baseline) -> Estimate:
    """Unpaired estimate (Welch's t): for sides that share no (train_rows, random seed) pairs."""
    a, b = (np.asarray(x, dtype=float) for x in (selection, baseline))
    a, b = a[~np.isnan(a)], b[~np.isnan(b)]
    n = min(len(a), len(b))
    if n < 2:
        mean = float(a.mean() - b.mean()) if len(a) and len(b) else np.nan
        return Estimate(mean, np.nan, np.nan, np.nan, n, 0, np.nan, np.nan, paired=False)
    va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    se = float(np.sqrt(va + vb))
    mean = float(a.mean() - b.mean())
    df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1)) if se > 0 else len(a) + len(b) - 2
    p = _two_sided_p(mean, se, df)
    half = stats.t.ppf(0.5 + CONFIDENCE / 2, df) * se
    scale = float(np.sqrt(a.var(ddof=1) + b.var(ddof=1)))
    return Estimate(mean, mean - half, mean + half, p, n, df, se, scale, paired=False)


def prediction_interval(est: Estimate, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Where one more paired difference (a single random seed) should fall: mean +- t * sd * sqrt(1 + 1/n).
    The yardstick for a single-seed result such as the source article's, not the CI of the mean."""
    if not est.paired or est.n < 2 or not np.isfinite(est.scale):
        return np.nan, np.nan
    half = stats.t.ppf(0.5 + confidence / 2, est.n - 1) * est.scale * np.sqrt(1 + 1 / est.n)
    return est.mean - half, est.mean + half


def _two_sided_p(mean: float, se: float, df: float) -> float:
    """The t-test's two-sided p-value for mean / se (what scipy's ttest_1samp / Welch ttest_ind give)."""
    if se == 0:
        return 1.0 if mean == 0 else 0.0
    return float(2 * stats.t.sf(abs(mean / se), df))


def margin_for(metric: str, margin: float = MARGIN) -> float:
    return FIXED_MARGINS.get(metric, margin)


def seeds_needed(est: Estimate, margin: float, most: int = 100_000) -> float:
    """Random seeds (pairs, or runs per side when unpaired) for a 95% CI half-width <= margin at the
    observed spread; NaN when it cannot be said (no spread measured), inf beyond `most`. Starts at
    the normal-approximation n (t > z, so the answer is never below it) and steps up."""
    if not np.isfinite(est.scale) or margin <= 0:
        return np.nan
    z = stats.norm.ppf(0.5 + CONFIDENCE / 2)
    n = max(2, int(np.ceil((z * est.scale / margin) ** 2)))
    while n <= most:
        df = n - 1 if est.paired else 2 * n - 2
        if stats.t.ppf(0.5 + CONFIDENCE / 2, df) * est.scale / np.sqrt(n) <= margin:
            return float(n)
        n += 1
    return np.inf


def decide(metric: str, est: Estimate, margin: float = MARGIN, p_value: float | None = None) -> tuple[str, float]:
    """(verdict, seeds_needed). Order: too few seeds (< 2 pairs); equivalent when the 90% CI lies
    inside +-margin (two one-sided tests at 5%); better/worse (higher/lower for a neutral metric)
    when p (Holm-adjusted where a family is tested) < 5%; otherwise inconclusive, with the random
    seeds a +-margin 95% interval would need. seeds_needed is NaN unless inconclusive."""
    if est.n < 2 or np.isnan(est.ci_low):
        return TOO_FEW, np.nan
    margin = margin_for(metric, margin)
    low90, high90 = est.interval(0.90)
    if -margin < low90 and high90 < margin:
        return EQUIVALENT, np.nan
    p = est.p_value if p_value is None else p_value
    if p < ALPHA:
        higher = est.mean > 0
        if metric in NEUTRAL:
            return (HIGHER if higher else LOWER), np.nan
        return (BETTER if higher == HIGHER_IS_BETTER.get(metric, True) else WORSE), np.nan
    return INCONCLUSIVE, seeds_needed(est, margin)


def holm(p_values) -> np.ndarray:
    """Holm's step-down adjustment of a family of p-values (NaN stays NaN)."""
    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    order = ok[np.argsort(p[ok], kind="stable")]
    m = len(order)
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[index]))
        out[index] = running
    return out
