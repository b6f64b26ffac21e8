"""The sequential plan: which comparisons are judged at looks, when, at what level, and what "decided" means.

Written before the runs it judges, like a trial protocol (Jennison & Turnbull 2000, "Group Sequential
Methods"; Lakens 2021, "Sequential designs"):

    planned       test accuracy of every single-switch change of the article's ViT at 1,000 and 4,000
                  rows: position embedding none / sincos, post-norm, BatchNorm, patch 2 / 4 / 14, class
                  token, shifted patches (SPT), LSA (the 20 questions of issue 26). Everything else (other
                  metrics, other bases or sizes, warm-up, the ViT vs the convnet, main effects, claims of
                  several switches) keeps the fixed-sample analysis and says so (`plan` column).
    looks         at 10, 20, 30 and 40 paired random seeds (random seeds 0-9, 0-19, …); the cap is the
                  last look. Patch 2 (196 tokens, ~5-10 min a run) is capped at 20.
    spending      both tests at the family's alpha / m (vitcore.stats.families: m from the registry), each
                  spent over the looks by the Kim-DeMets power function alpha * t^RHO with RHO = 1 (t = n / cap):
                  the Pocock-like member of the family (Jennison & Turnbull §7.2; RHO = 3 is O'Brien-Fleming-
                  like, and spends too little at 10 random seeds to stop any comparison whose effect is not large).
    boundaries    the z-boundaries that spend exactly that alpha over the looks, whose statistics are
                  correlated sqrt(n_i / n_j) (scipy's multivariate normal), turned into nominal levels per look:
                  two-sided for the difference test, one-sided for each half of TOST at ±margin. The nominal
                  levels are applied to the t-tests' p-values (a simulation in the tests checks the family-wise
                  error of the whole rule with n = 10 pairs).
    decided       at a look, the difference test resolving (p < its nominal level) gives better / worse
                  ("slightly" when TOST resolves too); else TOST resolving gives equivalent; else the
                  comparison waits for the next look, or at the cap stays inconclusive, said so. The first look
                  that decides ends the comparison: later pairs never change its verdict.

A look uses exactly the pairs of random seeds below its n; pairs beyond it wait for the next look, so
no view peeks. Its intervals are the repeated confidence intervals at the look's nominal levels (1 - a
and 1 - 2b): they exclude 0 / lie inside ±margin exactly when the verdict says so. No pandas at import,
no TensorFlow.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy import optimize, stats

from vitcore.config import switches
from vitcore.config.run import RunConfig
from vitcore.stats.estimates import ALPHA, EQUIVALENT, FIXED_SAMPLE, INCONCLUSIVE, RESOLVED, judge, needs_text

METRIC = "test_accuracy"        # the planned metric; the others of a planned comparison stay fixed-sample
ROWS = (1_000, 4_000)           # the article's ViT's sizes the plan covers
LOOKS = (10, 20, 30, 40)        # paired random seeds at each look; the last is the cap
CAPS = {("patch_size", 2): 20}  # cheaper caps for slow variants: patch 2 (196 tokens) stops at 20
RHO = 1.0                       # Kim-DeMets spending alpha * t^RHO: 1 is Pocock-like
FIXED = FIXED_SAMPLE
PLAN_COLUMNS = ["look", "looks_planned", "plan"]
DECIDED = (*RESOLVED, EQUIVALENT)


def questions() -> list[tuple[str, object, int]]:
    """(switch, level, train_rows) of every planned comparison against the article's ViT, registry order."""
    return [(s.name, level, rows) for rows in ROWS for s in switches.REGISTRY
            if s.applies("vit") and not s.free for level in s.levels if level != s.default]


def looks_of(base: RunConfig, field: str, level) -> tuple[int, ...]:
    """The looks of the single-switch change of `base` to `level` of `field`: LOOKS up to its cap when
    `base` is the article's ViT at a planned size, () when the comparison is not planned."""
    if base.replace(seed=0) != RunConfig(train_rows=base.train_rows) or base.train_rows not in ROWS:
        return ()
    switch = switches.SWITCH.get(field)
    if switch is None or switch.free or level not in switch.levels or level == switch.default:
        return ()
    cap = CAPS.get((field, level), LOOKS[-1])
    return tuple(n for n in LOOKS if n <= cap)


def spent(alpha: float, t) -> np.ndarray:
    """The alpha spent by information fraction t (Kim & DeMets 1987 power family)."""
    return alpha * np.asarray(t, dtype=float) ** RHO


GRID = 801  # points of the numerical integration over a look's continuation region (Simpson's rule)


def _grid(low: float, high: float) -> tuple[np.ndarray, np.ndarray]:
    """Simpson's points and weights on [low, high]."""
    z = np.linspace(low, high, GRID)
    w = np.full(GRID, 2.0)
    w[1::2], w[0], w[-1] = 4.0, 1.0, 1.0
    return z, w * (high - low) / (GRID - 1) / 3


@lru_cache(maxsize=64)
def nominal_levels(looks: tuple[int, ...], alpha: float, sides: int = 2) -> tuple[float, ...]:
    """Per-look nominal levels that spend `alpha` over `looks` (sides 2: a two-sided test, the level is its
    two-sided p threshold; sides 1: a one-sided test). Boundary c_k makes the chance of first crossing at
    look k equal spent(t_k) - spent(t_{k-1}) for z-statistics of independent increments (corr sqrt(n_i / n_j)),
    by the Armitage-McPherson-Rowe recursion (numerical integration over the looks' continuation regions;
    checked against scipy's multivariate normal in the tests); the level is the tail beyond c_k."""
    n = np.asarray(looks, dtype=float)
    budget = np.diff(spent(alpha, n / n[-1]), prepend=0.0)
    bounds: list[float] = [float(stats.norm.isf(budget[0] / sides))]
    z, weights = _grid(-bounds[0] if sides == 2 else -10.0, bounds[0])
    density = stats.norm.pdf(z)  # of Z_1 on the region where look 1 did not cross
    for k in range(1, len(n)):
        step = np.sqrt(n[k] - n[k - 1])

        def crossing(c: float) -> float:  # P(no crossing before look k, crossing at look k)
            above = stats.norm.sf((c * np.sqrt(n[k]) - z * np.sqrt(n[k - 1])) / step)
            below = stats.norm.cdf((-c * np.sqrt(n[k]) - z * np.sqrt(n[k - 1])) / step) if sides == 2 else 0.0
            return float(np.sum(weights * density * (above + below)))

        bounds.append(optimize.brentq(lambda c: crossing(c) - budget[k], 0.0, 12.0, xtol=1e-10))
        new_z, new_weights = _grid(-bounds[k] if sides == 2 else -10.0, bounds[k])
        kernel = stats.norm.pdf((new_z[:, None] * np.sqrt(n[k]) - z[None, :] * np.sqrt(n[k - 1])) / step)
        density = kernel @ (weights * density) * np.sqrt(n[k]) / step
        z, weights = new_z, new_weights
    return tuple(float(sides * stats.norm.sf(c)) for c in bounds)


def levels(looks: tuple[int, ...], size: int) -> list[tuple[float, float]]:
    """(difference test's two-sided level, each TOST half's one-sided level) per look, at the family's alpha/m."""
    alpha = ALPHA / max(int(size), 1)
    return list(zip(nominal_levels(tuple(looks), alpha, 2), nominal_levels(tuple(looks), alpha, 1)))


def _seed_range(n: int) -> str:
    return f"random seeds 0–{n - 1}"


def sequential(pairs, metric: str, margin: float, family, estimate) -> tuple[object, dict, object]:
    """The plan's verdict on one planned comparison: (its Estimate, its JUDGEMENT_COLUMNS + PLAN_COLUMNS, the pairs
    it used). `pairs`: pair_runs' frame (seed, delta, run ids); `estimate(part)` -> (Estimate, TEST_COLUMNS) for
    a subset of the pairs (the store's test set counted as on every view). Looks in order; the first that
    decides ends it; a look is complete when every random seed below its n has its pair."""
    looks, per_look = family.looks, levels(family.looks, family.size)
    seeds = pairs["seed"].astype(int)
    chosen = None
    for k, (n, level) in enumerate(zip(looks, per_look), start=1):
        part = pairs[seeds < n].reset_index(drop=True)
        if len(part) < n:
            break
        est, columns = estimate(part)
        row = judge(metric, est, margin, family.name, family.size, levels=level)
        chosen = (k, part, est, {**row, **columns})
        if row["verdict"] in DECIDED:
            break
    if chosen is None:  # before the first look: the pairs there are, no adjusted test yet
        est, columns = estimate(pairs)
        row = judge(metric, est, margin, family.name, family.size, levels=per_look[0])
        row.update({name: np.nan for name in ("p_adj", "p_tost_adj", "ci_adj_low", "ci_adj_high", "ci90_adj_low",
                                              "ci90_adj_high")})
        have = int((seeds < looks[0]).sum())
        row.update(verdict=INCONCLUSIVE if est.n >= 2 else row["verdict"], seeds_needed=float(looks[0]),
                   seeds_more=float(looks[0] - have), look=0, looks_planned=len(looks),
                   plan=f"planned: first look at {looks[0]} paired random seeds ({looks[0] - have} more)")
        return est, {**row, **columns}, pairs
    k, part, est, row = chosen
    waiting = int((seeds >= looks[k - 1]).sum())
    text = f"planned: look {k} of {len(looks)} ({_seed_range(looks[k - 1])})"
    if row["verdict"] in DECIDED:
        text += ": decided"
        row.update(seeds_needed=np.nan, seeds_more=np.nan)
    elif k == len(looks):
        text += ": at the plan's cap, undecided"
        row.update(seeds_needed=np.inf, seeds_more=np.inf)
    else:
        have = int((seeds < looks[k]).sum())
        text += f"; next look at {looks[k]} paired random seeds ({looks[k] - have} more)"
        row.update(seeds_needed=float(looks[k]), seeds_more=float(looks[k] - have))
    if waiting and row["verdict"] not in DECIDED and k < len(looks):
        text += f"; {waiting} pair{'s' if waiting > 1 else ''} wait for it"
    row.update(look=k, looks_planned=len(looks), plan=text)
    return est, row, part


def planned(row) -> bool:
    """Whether a judged row is judged by the plan (its intervals are the repeated confidence intervals)."""
    value = row.get("looks_planned", 0) if hasattr(row, "get") else 0
    return bool(value) and not (isinstance(value, float) and np.isnan(value))


def adjusted(row) -> bool:
    """Whether a view shows the adjusted intervals and p's of a row: a family of several, or a planned look."""
    return int(row.get("family_size", 1) or 1) > 1 or planned(row)


def needs(row) -> str:
    """What an undecided row still needs, as every view says it: the plan's next look for a planned
    comparison, else the fixed-sample power count (estimates.needs_text)."""
    if planned(row):
        looks, look = int(row["looks_planned"]), int(row["look"])
        if look == looks:
            return f"at the plan's cap of {int(row['n_pairs'])} paired random seeds: undecided"
        more = int(row["seeds_more"])
        which = "first look" if look == 0 else f"look {look + 1} of {looks}"
        return f"{which} at {int(row['seeds_needed'])} paired random seeds ({more} more)"
    return needs_text(row["seeds_needed"], int(row["n_pairs"]), bool(row.get("paired", True)))

