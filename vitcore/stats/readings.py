"""What else every Δ reads beside its verdict: its size against the margin, its size in a run's
seed-to-seed sd, how often the change wins over the paired random seeds, and whether the verdict is
borderline (docs/methods-and-verdicts.md, "Beside every verdict: the readings").

    size        beyond         the verdict's 95% interval (simultaneous over the family) lies entirely
                               outside ±margin: an effect bigger than the margin
                inside         its 90% interval (simultaneous) lies entirely inside ±margin (the
                               equivalence test resolves): an effect smaller than the margin, if any
                undetermined   otherwise ("better" with an undetermined size is real but may be small)
    delta_in_run_sd
                Δ / run_sd (Δ in run-sd units, not an sd: it carries Δ's sign), run_sd the pooled sd of one
                run's metric across random seeds on the two sides, sqrt((s²_baseline + s²_selection) / 2) over
                the runs behind the Δ (for a main effect, pooled over the cells' configs): Cohen's d with one
                run's noise as the unit
    wins        the paired random seeds whose Δ is in the metric's good direction (higher for final train
                accuracy), ties counted as half (rliable's probability of improvement); win_rate = wins / n
                with an exact Clopper-Pearson 95% interval (scipy's binomtest; ties taken as losses for
                the lower bound and as wins for the upper one)
    borderline  an adjusted p (either test) within a factor of NEAR of 0.05, or a verdict that another
                model of the test set changes (the images as a simple random sample instead of 1,000 per
                class; the Satterthwaite df instead of the seeds' n - 1; no test-image term at all, the
                random seeds only: vitcore.stats.testset), each re-judged at the same family or planned look;
                `flips` says what would flip it
No pandas, no TensorFlow: numbers in, columns out (compare.paired_delta and summaries add them once).
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

import numpy as np
from scipy import stats

from vitcore.config.metrics import metric as entry
from vitcore.stats import estimates as v
from vitcore.stats.testset import seeds_only, with_floor

SIZE_BEYOND, SIZE_INSIDE, SIZE_OPEN = "beyond", "inside", "undetermined"
SIZES = (SIZE_BEYOND, SIZE_INSIDE, SIZE_OPEN)
NEAR = 2.0  # an adjusted p in [0.05 / NEAR, 0.05 * NEAR] is near its threshold
SPREAD_COLUMNS = ["run_sd", "delta_in_run_sd", "wins", "win_rate", "win_low", "win_high"]
READING_COLUMNS = ["size", *SPREAD_COLUMNS, "borderline", "flips"]
# The one definition of each reading (docs/methods-and-verdicts.md, the Ablations and Claims legends, `--help`).
DEFINITIONS = {
    "size": "beyond ±margin when the verdict's 95% interval (simultaneous over the family) lies entirely outside "
            "±margin; inside when its 90% interval lies entirely inside (the equivalence test resolves); "
            "undetermined otherwise — so 'better' of undetermined size is a real effect that may be smaller than "
            "the margin (a hollow dot on the charts; filled = beyond).",
    "Δ / run sd": "the Δ in units of one run's seed-to-seed sd: the pooled sd sqrt((s²_baseline + "
                  "s²_selection) / 2) of the metric over the random seeds of the two sides (for a main effect, "
                  "pooled over its cells' configs).",
    "wins": "how many of the n paired random seeds the change wins (its Δ in the metric's good direction; higher for "
            "final train accuracy), ties as half (rliable's probability of improvement), with an exact "
            "Clopper–Pearson 95% interval (ties counted as losses for its low end, as wins for its high end).",
    "borderline": f"an adjusted p (either test) within a factor of {NEAR:g} of 0.05, or a verdict that changes under "
                  "another model of the test set (its images as a simple random sample instead of 1,000 fixed per "
                  "class; Satterthwaite degrees of freedom for the seeds-plus-images standard error; or the random "
                  "seeds only, without the test images' term), judged at the same family or planned look: the row "
                  "says what would flip it.",
}
SRS = "the test images as a simple random sample"
SATTERTHWAITE = "Satterthwaite df"
SEEDS = "random seeds only (no test-image term)"


def definitions_text(bullet: str = "- ") -> str:
    """The readings' definitions as lines (docs/methods-and-verdicts.md, legends, --help print this)."""
    return "\n".join(f"{bullet}{word}: {text}" for word, text in DEFINITIONS.items())


def size_word(row: dict) -> str:
    """beyond / inside / undetermined of a judged row: inside exactly when the equivalence test resolved
    (equivalent or 'slightly …': its simultaneous 90% interval lies inside ±margin), beyond when the verdict
    is resolved and its simultaneous 95% interval clears ±margin."""
    verdict, margin = row.get("verdict"), row.get("margin", np.nan)
    if verdict == v.EQUIVALENT or verdict in v.INSIDE:
        return SIZE_INSIDE
    if verdict in v.RESOLVED and margin is not None and np.isfinite(margin) and \
            (row.get("ci_adj_low", np.nan) > margin or row.get("ci_adj_high", np.nan) < -margin):
        return SIZE_BEYOND
    return SIZE_OPEN


def run_sd(baseline, selection) -> float:
    """sqrt((s²_baseline + s²_selection) / 2): one run's seed-to-seed sd, pooled over the two sides."""
    variances = [np.var(side, ddof=1) for side in (_finite(baseline), _finite(selection)) if len(side) >= 2]
    return float(np.sqrt(np.mean(variances))) if len(variances) == 2 else np.nan


def pooled_sd(variances, counts) -> float:
    """One run's sd pooled over several configs' seed-to-seed variances (weights: their df)."""
    variances, df = np.asarray(variances, float), np.asarray(counts, float) - 1
    keep = np.isfinite(variances) & (df > 0)
    return float(np.sqrt((variances[keep] * df[keep]).sum() / df[keep].sum())) if keep.any() else np.nan


def spread_columns(metric: str, deltas, sd: float, mean: float | None = None) -> dict:
    """SPREAD_COLUMNS of paired per-seed Δs (NaN dropped) with `sd` = run_sd; unpaired (deltas None) the win
    columns are NaN and `mean` (the difference of the two sides' means) gives delta_in_run_sd."""
    values = None if deltas is None else _finite(deltas)
    if mean is None:
        mean = float(values.mean()) if values is not None and len(values) else np.nan
    out = {"run_sd": sd, "delta_in_run_sd": mean / sd if sd and np.isfinite(sd) else np.nan}
    if values is None or not len(values):
        return {**out, "wins": np.nan, "win_rate": np.nan, "win_low": np.nan, "win_high": np.nan}
    good = values if entry(metric).higher_is_better else -values
    won, tied, n = int((good > 0).sum()), int((good == 0).sum()), len(good)
    low, high = clopper_pearson(won, n)[0], clopper_pearson(won + tied, n)[1]
    return {**out, "wins": won + tied / 2, "win_rate": (won + tied / 2) / n, "win_low": low, "win_high": high}


@lru_cache(maxsize=4096)
def clopper_pearson(k: int, n: int) -> tuple[float, float]:
    """The exact 95% interval of k successes in n (scipy's binomtest; cached: n is a count of random seeds)."""
    interval = stats.binomtest(k, n).proportion_ci(v.CONFIDENCE, "exact")
    return float(interval.low), float(interval.high)


def spread_of(metric: str, deltas, baseline=None, selection=None, mean: float | None = None) -> dict:
    """spread_columns with run_sd from the two sides' values."""
    return spread_columns(metric, deltas, run_sd(baseline, selection), mean)


def word(metric: str, positive: bool, p_adj: float, p_tost_adj: float) -> str:
    """The verdict two adjusted p-values give (estimates.judge's rule for a judged Δ with 2 or more pairs)."""
    if p_adj < v.ALPHA:
        return v.direction(metric, positive, p_tost_adj < v.ALPHA)
    return v.EQUIVALENT if p_tost_adj < v.ALPHA else v.INCONCLUSIVE


def alternatives(est: v.Estimate, test_columns: dict) -> dict[str, v.Estimate]:
    """The estimate under each other model of the test set (testset's checks), where the row has them: the
    images as a simple random sample, the Satterthwaite df, and, when the verdict's interval has a test-image
    term, the random seeds alone (patch 4 vs 7 at 1,000 rows is undecided at the plan's cap only because of it)."""
    out = {}
    srs, df = test_columns.get("test_se_srs", np.nan), test_columns.get("df_satterthwaite", np.nan)
    if srs is not None and np.isfinite(srs):
        out[SRS] = with_floor(est, srs ** 2, est.n - 1)
    if df is not None and np.isfinite(df):
        out[SATTERTHWAITE] = _with_df(est, df)
    if est.floor > 0:
        out[SEEDS] = seeds_only(est)
    return out


def _with_df(est: v.Estimate, df: float) -> v.Estimate:
    """`est` read with `df` degrees of freedom (its interval and p move; its mean and se do not)."""
    low, high = replace(est, df=df).interval(v.CONFIDENCE)
    return replace(est, df=df, ci_low=low, ci_high=high, p_value=v.two_sided_p(est.mean, est.se, df))


def verdict_columns(metric: str, est: v.Estimate, judged: dict, test_columns: dict | None = None,
                    levels: tuple[float, float] | None = None) -> dict:
    """size, borderline and flips of one judged Δ (`judged`: estimates.judge's columns; `levels`: the nominal
    levels of the planned look it was judged at, vitcore.stats.plan, None for a fixed-sample verdict)."""
    row = {**judged, "size": size_word(judged), "borderline": False, "flips": ""}
    verdict = judged["verdict"]
    if verdict in (v.TOO_FEW, v.NOT_COMPARABLE) or est.n < 2 or judged.get("look") == 0:  # 0: before a plan's look
        return {k: row[k] for k in ("size", "borderline", "flips")}
    reasons, positive = [], est.mean > 0
    p_adj, p_tost_adj = judged["p_adj"], judged["p_tost_adj"]
    for name, p, other in (("p_adj", p_adj, p_tost_adj), ("p_tost_adj", p_tost_adj, p_adj)):
        if np.isfinite(p) and v.ALPHA / NEAR <= p <= v.ALPHA * NEAR:
            crossed = v.ALPHA * (1.5 if p < v.ALPHA else 0.5)  # the other side of 0.05
            flipped = word(metric, positive, *((crossed, other) if name == "p_adj" else (other, crossed)))
            if flipped != verdict:
                side = "above" if p < v.ALPHA else "below"
                reasons.append(f"{name} {p:.3g} is near 0.05 ({side} it: {flipped})")
    for name, alt in alternatives(est, test_columns or {}).items():
        other = v.judge(metric, alt, judged["margin"], judged["family"], judged["family_size"], comparable=True,
                        levels=levels)  # the same Δ read another way: comparable, as the verdict it checks was
        if other["verdict"] != verdict:
            reasons.append(f"with {name}: {other['verdict']} (p_adj {other['p_adj']:.3g}, "
                           f"p_tost_adj {other['p_tost_adj']:.3g})")
    return {"size": row["size"], "borderline": bool(reasons), "flips": "; ".join(reasons)}


def _finite(values) -> np.ndarray:
    values = np.asarray(values if values is not None else [], dtype=float)
    return values[np.isfinite(values)]
