"""The sequential plan: which comparisons are judged at looks, when, at what level, and what "decided" means.

Written before the runs it judges, like a trial protocol (Jennison & Turnbull 2000, "Group Sequential
Methods"; Lakens 2021, "Sequential designs"):

    planned       test accuracy of every single-switch change of the article's ViT at 1,000 and 4,000
                  rows: position embedding none / sincos, post-norm, BatchNorm, patch 2 / 4 / 14, class
                  token, shifted patches (SPT), LSA: 20 questions. Everything else (other
                  metrics, other bases or sizes, warm-up, the ViT vs the convnet, main effects, claims of
                  several switches) keeps the fixed-sample analysis and says so (`plan` column).
    looks         at 10, 20, 30 and 40 paired random seeds (random seeds 0-9, 0-19, …); the cap is the
                  last look. Patch 2 (196 tokens, ~5-10 min a run) is capped at 20.
    spending      both tests at the family's alpha / m (vitcore.stats.families: m from the registry), each
                  spent over the looks by the Kim-DeMets power function alpha * t^RHO with RHO = 1 (t = n / cap):
                  the Pocock-like member of the family (Jennison & Turnbull §7.2; RHO = 3 is O'Brien-Fleming-
                  like, and spends too little at 10 random seeds to stop any comparison whose effect is not large).
    boundaries    a union bound over the looks: look k tests at the alpha spent since look k - 1 (alpha/4 a look
                  for a family of one, 0.0125). Each look's t-test is exact at its own level, so the chance that
                  any look rejects a true null is at most alpha, with small n and whatever the looks' correlation.
                  Group-sequential boundaries from the multivariate normal (corr sqrt(n_i / n_j)) are less
                  conservative at later looks, but applied to t-tests at 10 pairs they exceed the level
                  (simulated: 5.1% for a family of one), so the plan does not use them.
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

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from vitcore.config.numbers import missing
from vitcore.stats import plan_store
from vitcore.stats.estimates import (
    ALPHA,
    EQUIVALENT,
    FIXED_SAMPLE,
    INCONCLUSIVE,
    MIN_PAIRS,
    RESOLVED,
    judge,
    needs_text,
)
from vitcore.stats.testset import WITH_TEST

METRIC = "test_accuracy"        # the planned metric; the others of a planned comparison stay fixed-sample
FIXED = FIXED_SAMPLE
PLAN_COLUMNS = ["look", "looks_planned", "plan", "seen_before_plan"]
# Beside every judged Δ: where its verdict comes from and the line that follows it (vitcore.study.lead fills them)
LEAD_COLUMNS = ["verdict_from", "discovery", "discovery_verdict", "replication"]
# Beside every judged Δ handed to a view: what an undecided verdict still needs, in words (`said`; no CSV has them)
NEEDS_COLUMNS = ["needs", "needs_short"]
DECIDED = (*RESOLVED, EQUIVALENT)
SEEN = "decided on random seeds seen before the plan"  # what every view says of such a verdict


def _builtin():
    return plan_store.builtin()


def __getattr__(name: str):
    """The built-in plan's numbers under their old names (ROWS, LOOKS, CAPS, RHO): read from its file."""
    plan = _builtin()
    if name == "LOOKS":
        return plan.looks
    if name == "ROWS":
        return tuple(dict.fromkeys(q.train_rows for q in plan.questions))
    if name == "CAPS":
        return {(f, lv): c for f, lv, c in plan.caps}
    if name == "RHO":
        return plan.rho
    raise AttributeError(name)


def questions() -> list[tuple[str, object, int]]:
    """(switch, level, train_rows) of every question of the built-in plan, in its file's order."""
    return [(q.field, q.level, q.train_rows) for q in _builtin().questions]


def spent(alpha: float, t, rho: float = 1.0) -> np.ndarray:
    """The alpha spent by information fraction t (Kim & DeMets 1987 power family)."""
    return alpha * np.asarray(t, dtype=float) ** rho


@lru_cache(maxsize=64)
def nominal_levels(looks: tuple[int, ...], alpha: float, rho: float = 1.0) -> tuple[float, ...]:
    """Per-look nominal levels of a test that spends `alpha` over `looks`: the alpha spent since the last
    look, spent(t_k) - spent(t_{k-1}) (a union bound over the looks: each look's t-test is exact at its own
    level, so the chance that any look rejects a true null is at most their sum, alpha, whatever the
    correlation of the looks). The p threshold for the difference test (two-sided) and for each TOST half."""
    n = np.asarray(looks, dtype=float)
    return tuple(float(level) for level in np.diff(spent(alpha, n / n[-1], rho), prepend=0.0))


def levels(looks: tuple[int, ...], size: int, rho: float = 1.0, alpha: float = ALPHA) -> list[tuple[float, float]]:
    """(difference test's two-sided level, each TOST half's one-sided level) per look, at the family's alpha/m."""
    alpha = alpha / max(int(size), 1)
    return [(level, level) for level in nominal_levels(tuple(looks), alpha, rho)]


def family_levels(family) -> list[tuple[float, float]]:
    """levels() of a planned family, with its plan's spending."""
    plan = family.plan or _builtin()
    return levels(family.looks, family.size, plan.rho, plan.alpha)


def _seed_range(first: int, n: int) -> str:
    return f"random seeds {first}–{first + n - 1}"


def seen_pairs(plan, part) -> bool:
    """Whether any run of these pairs was trained before `plan` was registered."""
    trained = ("trained_at_baseline", "trained_at_variant")
    for side, when in zip(("run_id_baseline", "run_id_variant"), trained):
        if side not in part.columns:
            return plan.on_disk is None  # runs of unknown history: seen unless the plan lists what was on disk
        times = part[when] if when in part.columns else [None] * len(part)
        if any(plan.seen(run_id, t) for run_id, t in zip(part[side], times)):
            return True
    return False


def exploratory(plan, margin: float, blind: bool = True, n: int | None = None, cap: int | None = None) -> str:
    """The `plan` text of a planned comparison judged at another margin than its plan's: a fixed-sample test on the
    plan's random seeds only (`held`; `cap`: the question's last look), `blind` unless a run of them was trained
    before the plan, over the `n` pairs they hold. Its first words say it on every view: "exploratory at ±0.02,
    blind random seeds 1000–1039 (plan confirm, planned at ±0.01): fixed-sample test on 40 pairs"."""
    last = plan.first_seed + (cap or plan.looks[-1]) - 1
    text = (f"exploratory at ±{margin:g}, {'blind' if blind else 'seen'} random seeds {plan.first_seed}–{last} "
            f"(plan {plan.name}, planned at ±{plan.margin:g}): fixed-sample test")
    return text if n is None else text + f" on {n} pair{'s' if n != 1 else ''}"


def held(plan, pairs, cap: int | None = None):
    """The pairs (pair_runs' frame) on a plan's random seeds: its first `cap` (a question's last look; default the
    plan's last look) from its first seed. At another margin than its plan's, a planned comparison is tested on these
    only, so neither the seen runs of an earlier plan nor a pooled count two sequential stops set enter it."""
    offset = pairs["seed"].astype(int) - plan.first_seed
    return pairs[(offset >= 0) & (offset < (cap or plan.looks[-1]))].reset_index(drop=True)


def sequential(pairs, metric: str, margin: float, family, estimate) -> tuple[object, dict, object]:
    """The plan's verdict on one planned comparison: (its Estimate, its JUDGEMENT_COLUMNS + PLAN_COLUMNS, the pairs
    it used). `pairs`: pair_runs' frame (seed, delta, run ids); `estimate(part)` -> (Estimate, TEST_COLUMNS) for
    a subset of the pairs (the store's test set counted as on every view). Looks in order; the first that
    decides ends it; a look is complete when every one of the plan's first n random seeds has its pair.
    Only the plan's random seeds count (another plan's, e.g. a confirmation's, never move this verdict)."""
    plan = family.plan or _builtin()
    looks, per_look = family.looks, family_levels(family)
    offset = pairs["seed"].astype(int) - plan.first_seed
    mine = (offset >= 0) & (offset < looks[-1])
    pairs, seeds = pairs[mine].reset_index(drop=True), offset[mine].reset_index(drop=True)
    name = f"planned ({plan.name})"
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
                   seeds_more=float(looks[0] - have), look=0, looks_planned=len(looks), seen_before_plan=False,
                   plan=f"{name}: first look at {looks[0]} paired random seeds ({looks[0] - have} more)")
        return est, {**row, **columns}, pairs
    k, part, est, row = chosen
    waiting = int((seeds >= looks[k - 1]).sum())
    text = f"{name}: look {k} of {len(looks)} ({_seed_range(plan.first_seed, looks[k - 1])})"
    seen = seen_pairs(plan, part)
    if row["verdict"] in DECIDED:
        text += f": {SEEN}" if seen else ": decided"
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
    if seen and row["verdict"] not in DECIDED:
        text += " (on random seeds seen before the plan)"
    row.update(look=k, looks_planned=len(looks), plan=text, seen_before_plan=seen)
    return est, row, part


def planned(row) -> bool:
    """Whether a judged row is judged by the plan (its intervals are the repeated confidence intervals)."""
    value = row.get("looks_planned", 0) if hasattr(row, "get") else 0
    return bool(value) and not (isinstance(value, float) and np.isnan(value))


def adjusted(row) -> bool:
    """Whether a view shows the adjusted intervals and p's of a row: a planned look's (repeated CIs), or a
    fixed-sample family of several's. Before a planned first look: the unadjusted ones, labelled as such."""
    if planned(row):
        return row.get("look", 0) > 0
    return int(row.get("family_size", 1) or 1) > 1


@dataclass(frozen=True)
class Chosen:
    """What goes with a verdict, chosen in one place (`chosen`) for every view, chart, report, the CLI's line and
    the CSVs' words: which interval and p-values (adjusted or not), the interval's name in full (`kind`) and short
    (`short`, the CLI's 'RCI look 2/4', '95% ×3', '95%'), its 95% and 90% ends, and the two tests' names and
    p-values. The study layer hands it out (vitcore.study.words.chosen); no view picks interval columns itself."""
    adjusted: bool
    kind: str
    short: str
    interval: tuple
    ninety: tuple
    tests: tuple  # ((name, p), (name, p_tost)): ('p_adj', …), ('p_tost_adj', …) when adjusted


def chosen(row) -> Chosen:
    """The interval and tests that go with a row's verdict: simultaneous over the family when it has more than one
    member (so the interval excludes 0 exactly when the verdict is resolved), a planned row's repeated CI at its look;
    over random seeds and test images where the verdict counts both; unadjusted before a plan's first look. A row
    without 90% columns (a curve's Δs) has NaN 90% ends."""
    size, adjusted_ = int(row.get("family_size", 1) or 1), adjusted(row)
    low, high = (row["ci_adj_low"], row["ci_adj_high"]) if adjusted_ else (row["ci_low"], row["ci_high"])
    low90, high90 = ((row.get("ci90_adj_low", np.nan), row.get("ci90_adj_high", np.nan)) if adjusted_ else
                     (row.get("ci90_low", np.nan), row.get("ci90_high", np.nan)))
    kind = f"95% CI, Bonferroni ×{size}" if size > 1 else "95% CI"
    short = f"95% ×{int(row['family_size'])}" if adjusted_ else "95%"
    if planned(row):  # the repeated confidence interval of the plan's look
        kind = f"repeated CI at look {int(row['look'])} of {int(row['looks_planned'])}, ×{size}" if adjusted_ \
            else "95% CI (before the plan's first look)"
        if adjusted_:
            short = f"RCI look {int(row['look'])}/{int(row['looks_planned'])}"
    if row.get("interval") == WITH_TEST:  # vitcore.stats.testset: the test set's sampling counted
        kind += " over random seeds and test images"
    tested = adjusted_ and "p_adj" in row  # a row without the adjusted columns: its own p's
    tests = ((("p_adj", row.get("p_adj")), ("p_tost_adj", row.get("p_tost_adj"))) if tested else
             (("p", row.get("p_value")), ("p_tost", row.get("p_tost"))))
    return Chosen(adjusted_, kind, short, (low, high), (low90, high90), tests)


def alone(low: float, high: float) -> dict:
    """The interval columns of a comparison judged alone and in no plan (a bootstrap's, a generalized or an exact
    interval): its one 95% interval is also its adjusted one (a family of one), so `chosen` reads it either way."""
    return {"ci_low": low, "ci_high": high, "ci_adj_low": low, "ci_adj_high": high}


def own_interval(record) -> tuple[float, float]:
    """A record's own (unadjusted) 95% interval, (low, high): a frame's row as a dict or a named tuple (itertuples)."""
    values = record._asdict() if hasattr(record, "_asdict") else record
    return values["ci_low"], values["ci_high"]


def needs(row) -> str:
    """What an undecided row still needs, as every view says it: the plan's next look for a planned
    comparison, else the fixed-sample power count (estimates.needs_text)."""
    if planned(row):
        looks, look = int(row["looks_planned"]), int(row["look"])
        if look == looks:
            return f"at the plan's cap (look {looks} of {looks}): undecided"
        more = int(row["seeds_more"])
        which = "first look" if look == 0 else f"look {look + 1} of {looks}"
        return f"{which} at {int(row['seeds_needed'])} paired random seeds ({more} more)"
    if str(row.get("plan", "")).startswith("exploratory"):
        return "exploratory: " + needs_text(row["seeds_needed"], int(row["n_pairs"]), bool(row.get("paired", True)))
    return needs_text(row["seeds_needed"], int(row["n_pairs"]), bool(row.get("paired", True)))


def said(row) -> dict:
    """NEEDS_COLUMNS of a judged row (compare.METRIC_COLUMNS' values): what an inconclusive verdict still needs, as
    every view says it beside the word, so the words never come back to the plan. `needs` in full: the plan's next look
    ('look 2 of 4 at 20 paired random seeds (10 more)'), else the fixed-sample count (estimates.needs_text), a guess
    when its spread comes from fewer than MIN_PAIRS pairs; `needs_short` on the forest plot's 400-px line: '10 more
    random seeds', 'as a new look' for a fixed sample (never a continuation), "at the plan's cap". '' for a verdict that
    needs nothing more."""
    if row.get("verdict") != INCONCLUSIVE:
        return dict.fromkeys(NEEDS_COLUMNS, "")
    text, more, fixed = needs(row), row.get("seeds_more"), not planned(row)
    n, paired = row.get("n_pairs"), bool(row.get("paired", True))
    if fixed and paired and not missing(n) and int(n) < MIN_PAIRS and "paired random seeds" in text:
        text += f" (a guess: the spread of {int(n)} pairs)"
    if missing(more) or not np.isfinite(more):
        return {"needs": text, "needs_short": "at the plan's cap" if "cap" in text else ""}
    short = f"{int(more):,} more random seed{'' if int(more) == 1 else 's'}" + (" as a new look" if fixed else "")
    return {"needs": text, "needs_short": short}
