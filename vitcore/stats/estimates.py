"""Estimates: a difference with its uncertainty, both tests on it, the power to settle it, and its verdict.

Every Δ gets two tests (Lakens 2017; Lakens, Scheel & Isager 2018):
    the difference test     two-sided t-test of Δ = 0: p_value and the 95% interval
    the equivalence test    two one-sided tests (TOST) of |Δ| >= margin: p_tost and the 90% interval
Both are Bonferroni-adjusted within the comparison's family of m (p_adj = min(1, m·p); a planned
comparison's look: at its nominal levels, vitcore.stats.plan), and the intervals drawn next to a
verdict are the matching simultaneous ones (95% -> 1 - 0.05/m, 90% -> 1 - 0.10/m), so an adjusted
interval excludes 0 exactly when p_adj < 0.05 and lies inside ±margin exactly when p_tost_adj < 0.05:
the picture never contradicts the word. The words are DEFINITIONS below (README, legends, `--help`).
Estimates are paired (one-sample t over per-seed differences) or, when the two sides share no
(train_rows, random seed), unpaired (Welch). No pandas, no TensorFlow: numbers in, words out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import stats
from scipy.special import ndtr, stdtr  # the normal and t cdfs, without scipy.stats' per-call overhead

from vitcore.config.metrics import COMPARED, NONE, REGISTRY
from vitcore.config.metrics import metric as entry

METRICS = COMPARED  # every view's metrics (vitcore.config.metrics names them once)
# Views of the metric registry (vitcore.config.metrics): the good direction of the verdict words (final train
# accuracy has none: "higher"/"lower"), the optimistic metrics and the margins fixed in a metric's own unit.
# `direction`, `judge` and `margin_for` look a name up in the registry: an unknown metric raises.
HIGHER_IS_BETTER = {m.name: m.higher_is_better for m in REGISTRY if m.judged}
NEUTRAL = {m.name for m in REGISTRY if m.direction == NONE}
OPTIMISTIC = {m.name for m in REGISTRY if m.optimistic}

BETTER, WORSE, HIGHER, LOWER = "better", "worse", "higher", "lower"
SLIGHTLY_BETTER, SLIGHTLY_WORSE = "slightly better", "slightly worse"
SLIGHTLY_HIGHER, SLIGHTLY_LOWER = "slightly higher", "slightly lower"
EQUIVALENT, INCONCLUSIVE, TOO_FEW, NOT_COMPARABLE = "equivalent", "inconclusive", "too few seeds", "not comparable"
BEYOND = (BETTER, WORSE, HIGHER, LOWER)                                   # resolved, not shown inside ±margin
INSIDE = (SLIGHTLY_BETTER, SLIGHTLY_WORSE, SLIGHTLY_HIGHER, SLIGHTLY_LOWER)  # resolved and inside ±margin
RESOLVED = BEYOND + INSIDE
VERDICTS = (BETTER, SLIGHTLY_BETTER, EQUIVALENT, SLIGHTLY_WORSE, WORSE, HIGHER, SLIGHTLY_HIGHER, SLIGHTLY_LOWER,
            LOWER, INCONCLUSIVE, TOO_FEW, NOT_COMPARABLE)
GOOD, BAD = (BETTER, SLIGHTLY_BETTER), (WORSE, SLIGHTLY_WORSE)  # the user's direction (the colour rule)

# How to plan the random seeds a fixed-sample comparison still needs (vitcore.stats.plans): more seeds added to a
# fixed sample and tested again at the same level are a second look the first test never paid for.
PLAN_COMMANDS = ("`python -m vitcore plan register NAME --vary FIELD=LEVEL --rows N --seeds A-B`, then "
                 "`python -m vitcore sweep plan NAME`")
NEW_LOOK = f"as a new look, not a continuation: {PLAN_COMMANDS}"
MIN_PAIRS = 3  # fewer paired random seeds bound nothing: a spread from 1 difference, t(1) = 12.7 before any Bonferroni
TIMED_PAIRS = 10  # the fewest interleaved pairs a seconds verdict rests on (vitcore.stats.seconds.timing_note)
# The one definition of each word (README "What the verdict words mean", the Ablations and Claims legends, `--help`).
DEFINITIONS = {
    f"{BETTER} / {WORSE}": "the difference test resolves the direction (adjusted p < 0.05) and the equivalence test "
                           "does not show the Δ smaller than ±margin: a real effect, possibly bigger than the margin. "
                           f"{BETTER.capitalize()} means the metric's good direction (higher accuracy; lower gap, "
                           "loss or seconds).",
    f"{SLIGHTLY_BETTER} / {SLIGHTLY_WORSE}": "both tests resolve: the Δ is real (adjusted p < 0.05) and shown smaller "
                                             "than ±margin (adjusted p_tost < 0.05): a real effect too small to "
                                             "matter at this margin.",
    f"{HIGHER} / {LOWER} ({SLIGHTLY_HIGHER} / {SLIGHTLY_LOWER})": "the same words for final train accuracy, which "
                                                                  "has no good direction (fitting the training rows "
                                                                  "more closely can mean memorising them).",
    EQUIVALENT: "the equivalence test resolves (adjusted p_tost < 0.05: the Δ is inside ±margin) and the "
                "difference test does not: no effect that matters at this margin.",
    INCONCLUSIVE: "neither test resolves; seeds_needed is how many paired random seeds settle it at the "
                  "family's level in 80% of experiments, allowing for the sd's own uncertainty (a Δ inside "
                  "±margin counts as settled when either test resolves). For a fixed-sample comparison they are "
                  "a new look, not a continuation: testing the grown sample again at the same level inflates "
                  "the false-positive rate (at 0.05, 10 then 29 pairs: 8.9% simulated), so plan them "
                  f"({PLAN_COMMANDS}).",
    TOO_FEW: "fewer than 2 pairs: one random seed measures no spread, so there is no test.",
    NOT_COMPARABLE: f"seconds not timed as a design: a verdict needs {TIMED_PAIRS} or more pairs of two configs "
                    "timed interleaved in one group (the timing set: A B, B A, on a quiet machine); runs a sweep "
                    "timed one after another measure the machine's load too; groups timed under load never enter.",
}
MARGIN = 0.01  # equivalence margin for accuracies and the gap (sidebar, --margin)
MARGIN_REASON = ("±0.01 accuracy is 100 of the 10,000 test images, about one standard deviation of a single run's "
                 "test accuracy across random seeds: a smaller difference is below what one training run can show.")
TALLY_MARGINS = (0.005, 0.01, 0.02)  # the claims tally is shown at all three
FIXED_MARGINS = {m.name: m.margin for m in REGISTRY if m.margin is not None}  # in the metric's own unit
ALPHA = 0.05
CONFIDENCE = 0.95
POWER = 0.80
ONE = "this comparison alone"  # the family of a comparison no view tests alongside others


def definitions_text(margin: float = MARGIN, bullet: str = "- ") -> str:
    """The verdict definitions as lines (README, legends, --help all print this)."""
    lines = [f"{bullet}{word}: {text}" for word, text in DEFINITIONS.items()]
    return "\n".join(lines + [f"{bullet}margin: ±{margin:g} for accuracies and the gap, ±1 s for seconds. "
                              f"{MARGIN_REASON}"])


def margin_for(metric: str, margin: float = MARGIN) -> float:
    """The metric's equivalence margin when accuracies are judged at ±margin (ValueError for an unknown metric)."""
    return entry(metric).margin_at(margin)


def holm(p_values) -> np.ndarray:
    """Holm's step-down adjustment (NaN stays NaN): for evidence within one effect's cells (stats.percell)."""
    p = np.asarray(p_values, dtype=float)
    out, ok = np.full(p.shape, np.nan), np.flatnonzero(~np.isnan(p))
    running = 0.0
    for rank, index in enumerate(ok[np.argsort(p[ok], kind="stable")]):
        running = max(running, min(1.0, (len(ok) - rank) * p[index]))
        out[index] = running
    return out


def t_quantile(q: float, df: float) -> float:
    """stats.t.ppf(q, df), cached on its exact arguments: the same few (confidence, df) recur for every Δ of a
    store (scipy's per-call overhead was a tenth of an analysis's time); the value is scipy's, bit for bit."""
    return _t_quantile(float(q), float(df))


@lru_cache(maxsize=4096)
def _t_quantile(q: float, df: float) -> float:
    return stats.t.ppf(q, df)


def t_sf(x: float, df: float) -> float:
    """stats.t.sf(x, df) without scipy's per-call overhead: scipy computes it as stdtr(df, -x) (the same float, bit
    for bit, for every finite, infinite or NaN x); a df outside (0, inf] takes scipy's own path (NaN)."""
    return stdtr(df, -x) if df > 0 else stats.t.sf(x, df)


def t_cdf(x: float, df: float) -> float:
    """stats.t.cdf(x, df) as t_sf: scipy's stdtr(df, x), bit for bit."""
    return stdtr(df, x) if df > 0 else stats.t.cdf(x, df)


@dataclass(frozen=True)
class Estimate:
    """A difference (selection - baseline) with its uncertainty: paired (one-sample t over the
    per-seed differences) or unpaired (Welch). `scale` is the sd that sets the interval width:
    the sd of the paired differences, or sqrt(s1^2 + s2^2) for two independent sides. `floor`: the part of
    `se` that more random seeds cannot shrink (the test set's own sampling, vitcore.stats.testset), 0 when
    the test images are taken as fixed: se = sqrt(scale^2 / n + floor^2)."""
    mean: float
    ci_low: float
    ci_high: float
    p_value: float
    n: int           # pairs (paired) or the smaller side (unpaired)
    df: float
    se: float
    scale: float
    paired: bool = True
    floor: float = 0.0

    def interval(self, confidence: float) -> tuple[float, float]:
        half = t_quantile(0.5 + confidence / 2, self.df) * self.se if self.df > 0 else np.nan
        return self.mean - half, self.mean + half

    def p_tost(self, margin: float) -> float:
        """The equivalence test's p: the larger of the two one-sided p-values against -margin and +margin."""
        if self.df <= 0 or not np.isfinite(self.se):
            return np.nan
        if self.se == 0:
            return 0.0 if abs(self.mean) < margin else 1.0
        lower = t_sf((self.mean + margin) / self.se, self.df)   # H0: Δ <= -margin
        upper = t_cdf((self.mean - margin) / self.se, self.df)  # H0: Δ >= +margin
        return float(max(lower, upper))


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
    half = t_quantile(0.5 + CONFIDENCE / 2, n - 1) * se
    return Estimate(mean, mean - half, mean + half, two_sided_p(mean, se, n - 1), n, n - 1, se, sd)


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
    half = stats.t.ppf(0.5 + CONFIDENCE / 2, df) * se
    scale = float(np.sqrt(a.var(ddof=1) + b.var(ddof=1)))
    return Estimate(mean, mean - half, mean + half, two_sided_p(mean, se, df), n, df, se, scale, paired=False)


def prediction_interval(est: Estimate, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Where one more paired difference (a single random seed) should fall: mean +- t * sd * sqrt(1 + 1/n)."""
    if not est.paired or est.n < 2 or not np.isfinite(est.scale):
        return np.nan, np.nan
    half = t_quantile(0.5 + confidence / 2, est.n - 1) * est.scale * np.sqrt(1 + 1 / est.n)
    return est.mean - half, est.mean + half


def two_sided_p(mean: float, se: float, df: float) -> float:
    """The t-test's two-sided p-value for mean / se (what scipy's ttest_1samp / Welch ttest_ind give)."""
    if se == 0:
        return 1.0 if mean == 0 else 0.0
    return float(2 * t_sf(abs(mean / se), df))


# -- power: how many paired random seeds would settle an undecided Δ ----------------------------
def _se(sd: float, n: int, floor: float) -> float:
    """The standard error with n pairs: the random seeds' part shrinks as 1/sqrt(n), the floor does not."""
    return math.sqrt(sd ** 2 / n + floor ** 2)


def power_difference(delta: float, sd: float, n: int, level: float = ALPHA, paired: bool = True,
                     floor: float = 0.0) -> float:
    """Power of the two-sided t-test at `level` with n pairs (or n runs per side) when the true Δ is
    `delta` and the sd (of the differences, or sqrt(s1²+s2²)) is `sd`, plus a `floor` of standard error
    that more random seeds do not shrink: noncentral t (exact when the floor is 0)."""
    df = n - 1 if paired else 2 * n - 2
    nc = delta / _se(sd, n, floor)
    critical = stats.t.ppf(1 - level / 2, df)
    return float(stats.nct.sf(critical, df, nc) + stats.nct.cdf(-critical, df, nc))


def power_equivalence(delta: float, sd: float, n: int, margin: float, level: float = ALPHA,
                      paired: bool = True, floor: float = 0.0) -> float:
    """Power of TOST at `level` (each one-sided test at `level`) for true Δ `delta`: the usual lower
    bound P(T1 > t) + P(T2 < -t) - 1 over the two noncentral t's (tight when the power is high)."""
    df = n - 1 if paired else 2 * n - 2
    se = _se(sd, n, floor)
    critical = stats.t.ppf(1 - level, df)
    power = stats.nct.sf(critical, df, (delta + margin) / se) + stats.nct.cdf(-critical, df, (delta - margin) / se) - 1
    return float(max(0.0, power))


def seeds_needed(est: Estimate, margin: float, size: int = 1, most: int = 100_000) -> float:
    """Paired random seeds (runs per side when unpaired) that settle the Δ at the family's level (alpha /
    size) in 80% of experiments, averaged over the sd's own uncertainty (assurance, below): the
    difference test resolving the observed Δ, or, when the observed Δ lies inside ±margin, either test
    resolving (a settled equivalence is settled). The estimate's `floor` (the test set's sampling) stays
    whatever n is, so a Δ smaller than it can is never settled (inf). NaN without a spread; inf beyond
    `most`; never at or below the n already there (an undecided Δ needs more). Cached on its exact arguments
    (an Estimate is a frozen value): every view of one comparison judges the same estimate at the same margin."""
    return _seeds_needed(est, float(margin), int(size), int(most))


@lru_cache(maxsize=4096)
def _seeds_needed(est: Estimate, margin: float, size: int, most: int) -> float:
    if est.n < 2 or not np.isfinite(est.scale) or est.scale <= 0 or not np.isfinite(est.mean):
        return np.nan
    df0 = est.n - 1 if est.paired else est.df  # the observed sd's degrees of freedom

    def chance(n: int) -> float:
        return assurance(est.mean, est.scale, df0, n, margin, ALPHA / size, est.paired, est.floor)
    return max(smallest_n(chance, POWER, most), float(est.n + 1))


def needs_text(seeds: float, n: int, paired: bool = True) -> str:
    """How the app and the CLI both say what a fixed-sample comparison needs, in one sentence that says the seeds
    are a new look and how to plan it: 'needs 41 paired random seeds for 80% assurance (31 more), as a new look, not
    a continuation: `python -m vitcore plan register …`, then `python -m vitcore sweep plan NAME`'."""
    if seeds is None or np.isnan(seeds):
        return "spread unknown"
    if seeds == np.inf:
        return "needs more than 100,000 random seeds: not reachable by more runs"
    if not paired:
        return f"needs about {int(seeds):,} runs per side for 80% assurance, {NEW_LOOK}"
    more = int(seeds) - int(n)
    return f"needs {int(seeds):,} paired random seeds for 80% assurance ({more:,} more), {NEW_LOOK}"


# -- the verdict: both tests, adjusted within the family --------------------------------------
JUDGEMENT_COLUMNS = ["p_value", "ci_low", "ci_high", "p_tost", "ci90_low", "ci90_high", "family", "family_size",
                     "p_adj", "p_tost_adj", "ci_adj_low", "ci_adj_high", "ci90_adj_low", "ci90_adj_high", "margin",
                     "verdict", "seeds_needed", "seeds_more", "look", "looks_planned", "plan",
                     "seen_before_plan"]  # plan, seen_before_plan: stats.plan
FIXED_SAMPLE = "fixed sample (not in the plan)"  # `plan` of a comparison judged once on all its pairs


def direction(metric: str, positive: bool, inside: bool) -> str:
    """The resolved word for a Δ of this sign: better/worse (higher/lower for a neutral metric),
    'slightly …' when the equivalence test also shows it inside ±margin."""
    known = entry(metric)  # ValueError for a metric the registry does not know: never better by default
    if known.direction == NONE:
        word = (SLIGHTLY_HIGHER, HIGHER) if positive else (SLIGHTLY_LOWER, LOWER)
    else:
        word = (SLIGHTLY_BETTER, BETTER) if positive == known.higher_is_better else (SLIGHTLY_WORSE, WORSE)
    return word[0] if inside else word[1]


def judge(metric: str, est: Estimate, margin: float = MARGIN, family: str = ONE, size: int = 1,
          comparable: bool | None = None, levels: tuple[float, float] | None = None) -> dict:
    """Both tests on one estimate, Bonferroni-adjusted over the family's `size` comparisons (or at a planned
    look's nominal `levels`, vitcore.stats.plan: p_adj = p x 0.05 / level), and the verdict they give
    together: JUDGEMENT_COLUMNS as a dict. `comparable` False gives "not comparable" (None: seconds must show a
    design, seconds.timing_note: a caller that forgets gives no seconds verdict, not one about the machine)."""
    comparable, size = metric != "seconds" if comparable is None else comparable, max(int(size), 1)
    margin = margin_for(metric, margin)
    level, level_tost = levels or (ALPHA / size, ALPHA / size)
    low90, high90 = est.interval(0.90) if est.n >= 2 else (np.nan, np.nan)
    adj_low, adj_high = est.interval(1 - level) if est.n >= 2 else (np.nan, np.nan)
    adj90_low, adj90_high = est.interval(1 - 2 * level_tost) if est.n >= 2 else (np.nan, np.nan)
    p, p_tost = est.p_value, est.p_tost(margin)
    scale, scale_tost = (size, size) if levels is None else (ALPHA / level, ALPHA / level_tost)
    p_adj, p_tost_adj = min(1.0, scale * p), min(1.0, scale_tost * p_tost)  # NaN stays NaN
    needed = np.nan
    if not comparable:
        verdict = NOT_COMPARABLE
    elif est.n < 2 or not np.isfinite(p):
        verdict = TOO_FEW
    elif p_adj < ALPHA:
        verdict = direction(metric, est.mean > 0, p_tost_adj < ALPHA)
    elif p_tost_adj < ALPHA:
        verdict = EQUIVALENT
    else:
        verdict = INCONCLUSIVE
        needed = seeds_needed(est, margin, size)
    return {"p_value": p, "ci_low": est.ci_low, "ci_high": est.ci_high, "p_tost": p_tost, "ci90_low": low90,
            "ci90_high": high90, "family": family, "family_size": size, "p_adj": p_adj, "p_tost_adj": p_tost_adj,
            "ci_adj_low": adj_low, "ci_adj_high": adj_high, "ci90_adj_low": adj90_low, "ci90_adj_high": adj90_high,
            "margin": margin, "verdict": verdict, "seeds_needed": needed, "seeds_more": needed - est.n if
            np.isfinite(needed) else needed, "look": np.nan, "looks_planned": 0, "plan": FIXED_SAMPLE,
            "seen_before_plan": False}


# Seeds needed that keep their promise: plan on the chance of settling a Δ averaged over the sd's own
# uncertainty (assurance), not on the power at the observed sd taken as the truth.
#
# The observed sd s of n0 pairs is itself a draw: s² ~ σ² χ²(df0) / df0. Planning with σ = s says "80%"
# and delivers about 64-70% once σ is drawn too (half the time σ > s, and the power falls faster above s
# than it rises below). So the plan averages the probability of settling over σ² = s² df0 / χ²(df0) (the
# sd's fiducial distribution; Bayesian with the usual 1/σ prior) and asks that average to reach 80%.
#
# "Settled" is what the verdict text promises:
#     |Δ| >= margin   the difference test resolves, in the direction of Δ (better / worse)
#     |Δ| <  margin   either test resolves (better, worse, slightly …, or equivalent): a settled
#                     equivalence counts, so a Δ inside the margin is not planned as if it had to be resolved
# Both probabilities are exact for normal differences given σ (the new sample's sd is integrated over its
# own scaled chi-square), and the test set's `floor` (vitcore.stats.testset) stays whatever n is. The two
# integrals are quadratures on NODES quantiles of each chi-square. No pandas, no TensorFlow.

NODES = 64  # quantile nodes per chi-square: the assurance within ±0.01 of simulation (tests/test_assurance.py)
_U = (np.arange(NODES) + 0.5) / NODES


@lru_cache(maxsize=1024)
def _chi2_over_df(df: float) -> np.ndarray:
    """NODES quantiles of χ²(df) / df (read-only): the quadrature's nodes."""
    nodes = stats.chi2.ppf(_U, df) / df
    nodes.setflags(write=False)
    return nodes


def settle_probability(delta: float, sigma, n: int, margin: float, level: float, paired: bool = True,
                       floor: float = 0.0) -> np.ndarray:
    """P(settled) with n pairs (runs per side unpaired) at family level `level` when the true Δ is `delta`
    and the true sd (of the differences, or sqrt(s1² + s2²)) is each of `sigma` (any shape): the module doc."""
    sigma = np.asarray(sigma, dtype=float)[..., None]                        # (..., 1)
    df = n - 1 if paired else 2 * n - 2
    s = sigma * np.sqrt(_chi2_over_df(df))                                   # (..., NODES): the new sample's sd
    se_hat = np.sqrt(s ** 2 / n + floor ** 2)                                # what the tests will use
    spread = np.sqrt(sigma ** 2 / n + floor ** 2)                            # how the new mean scatters
    resolve = t_quantile(1 - level / 2, df) * se_hat                        # |mean| beyond it: resolved
    if abs(delta) >= margin:
        p = ndtr((abs(delta) - resolve) / spread)                   # resolved in Δ's direction
    else:
        inside = np.maximum(margin - t_quantile(1 - level, df) * se_hat, 0)  # |mean| within it: equivalent
        low, high = np.minimum(inside, resolve), resolve                      # unsettled: low <= |mean| <= high
        unsettled = (ndtr((high - delta) / spread) - ndtr((low - delta) / spread)
                     + ndtr((-low - delta) / spread) - ndtr((-high - delta) / spread))
        p = 1 - unsettled
    return p.mean(axis=-1)


def sigma_draws(sd: float, df0: float) -> np.ndarray:
    """NODES quantiles of σ given an observed sd on df0 degrees of freedom: σ² = sd² df0 / χ²(df0)."""
    return sd / np.sqrt(_chi2_over_df(float(df0)))


def assurance(delta: float, sd: float, df0: float, n: int, margin: float, level: float, paired: bool = True,
              floor: float = 0.0) -> float:
    """The chance that n pairs settle the Δ, averaged over the sd's uncertainty (df0: the observed sd's df)."""
    return float(settle_probability(delta, sigma_draws(sd, df0), n, margin, level, paired, floor).mean())


def smallest_n(chance, target: float, most: int) -> float:
    """The smallest n >= 2 with chance(n) >= target (chance grows with n), inf when not even at `most`."""
    if chance(most) < target:
        return np.inf
    low, high = 1, 2
    while chance(high) < target:
        low, high = high, min(high * 2, most)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if chance(middle) < target else (low, middle)
    return float(high)
