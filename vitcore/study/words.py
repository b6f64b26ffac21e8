"""The words every view says a judged Δ in: the verdict with its reason, the interval that goes with it and
both tests' p-values. One module, so the Ablations cards, the shared tables, the Claims page and notebooks
print one comparison the same way. Rows are compare.METRIC_COLUMNS dicts (records.Verdict.row()). Plain
strings: no Streamlit, no pandas.
"""

from __future__ import annotations

from vitcore.config.numbers import ci, missing, number
from vitcore.stats import estimates as v
from vitcore.stats import plan
from vitcore.stats.testset import WITH_TEST


def needs(row) -> str:
    """'needs 41 paired random seeds for 80% power (31 more)' for an inconclusive row, or a planned
    comparison's next look ('look 2 of 4 at 20 paired random seeds (10 more)'), as the CLI says it."""
    return plan.needs(row)


def verdict_text(row, margin: float = v.MARGIN) -> str:
    """The verdict in words a card can carry: 'worse', 'inconclusive — needs 41 paired random seeds …'."""
    verdict = row["verdict"]
    if verdict == v.INCONCLUSIVE:
        return f"{verdict} — {needs(row)}"
    if verdict == v.EQUIVALENT or verdict in v.INSIDE:
        return f"{verdict} — within ±{number(v.margin_for(row['metric'], margin), 3)}"
    return verdict


def interval_text(row, places: int) -> str:
    """The interval that goes with the verdict: the 95% CI, simultaneous over the family when it has
    more than one member (so it excludes 0 exactly when the verdict is resolved), and the 90% one
    the equivalence test reads; over random seeds and test images where the verdict counts both."""
    size, adjusted = int(row.get("family_size", 1) or 1), plan.adjusted(row)
    low, high = (row["ci_adj_low"], row["ci_adj_high"]) if adjusted else (row["ci_low"], row["ci_high"])
    low90, high90 = (row["ci90_adj_low"], row["ci90_adj_high"]) if adjusted else (row["ci90_low"], row["ci90_high"])
    which = f"95% CI, Bonferroni ×{size}" if size > 1 else "95% CI"
    if plan.planned(row):  # the repeated confidence interval of the plan's look (vitcore.stats.plan)
        which = f"repeated CI at look {int(row['look'])} of {int(row['looks_planned'])}, ×{size}" if adjusted \
            else "95% CI (before the plan's first look)"
    if row.get("interval") == WITH_TEST:  # vitcore.stats.testset: the test set's sampling counted
        which += " over random seeds and test images"
    return f"{which} {ci(low, high, places, none='no interval')} · 90% {ci(low90, high90, places, none='n/a')}"


def tests_text(row) -> str:
    """Both tests' p-values, adjusted when the family has more than one member (or at a planned look)."""
    if missing(row.get("p_value")):
        return ""
    if plan.adjusted(row) and not missing(row.get("p_adj")):
        return f"p_adj {row['p_adj']:.3g} · p_tost_adj {row['p_tost_adj']:.3g}"
    return f"p {row['p_value']:.3g} · p_tost {row['p_tost']:.3g}"
