"""The Plans page's pieces: every plan on the store (stats.plan_report through the Study) as the page shows it,
one summary line and one table per plan. No TensorFlow."""

from __future__ import annotations

import pandas as pd

from vitcore.app import fmt, state
from vitcore.stats import plan_report

COLUMNS = {"question": "Question", "train_rows": "Rows", "look": "Look", "verdict": "Verdict", "size": "Size",
           "needs": "Needs", "seen_before_plan": "Seen before the plan"}
CONFIRMATION = {"discovery_verdict": "Discovery", "replicated": "Replicated"}


def report() -> plan_report.PlanReport:
    """The store's PlanReport (computed once per store state by the shared Study)."""
    return state.study().plan_report()


def summary(plan, frame: pd.DataFrame, blind: bool) -> str:
    """One paragraph: what the plan is, its hash, when registered, its random seeds, and how far it got."""
    decided = int(frame["verdict"].isin(plan_report.sequential.DECIDED).sum())
    capped = int(frame["needs"].str.startswith("at the plan's cap").sum())
    seen = ("**blind**: no run it judges was trained before it was registered" if blind else
            "**not blind**: some runs it judges were trained before it was registered (its verdicts that used them "
            "say \"decided on random seeds seen before the plan\")")
    text = (f"Registered {plan.registered_at} (sha256 `{plan.sha256[:12]}…`), random seeds {plan.seeds_text}, looks "
            f"at {', '.join(map(str, plan.looks))} paired random seeds, margin ±{plan.margin:g}: "
            f"{len(frame)} questions, **{decided} decided**, {capped} at the cap undecided; {seen}.")
    if plan.confirms:
        counts = frame["replicated"].value_counts()
        text += (f" It confirms plan **{plan.confirms}** on fresh random seeds: " +
                 ", ".join(f"{int(counts.get(word, 0))} {word}" for word in plan_report.OUTCOMES) + ".")
    return text


def display(plan, frame: pd.DataFrame) -> pd.DataFrame:
    """A plan's questions as the page shows them."""
    columns = {**COLUMNS, **(CONFIRMATION if plan.confirms else {})}
    shown = frame[list(columns)].rename(columns=columns)
    shown["Rows"] = frame["train_rows"].map(fmt.rows)
    shown["Seen before the plan"] = frame["seen_before_plan"].map({True: "seen", False: "blind"})
    shown["Δ"] = frame["mean_delta"].map(lambda x: "" if pd.isna(x) else f"{x:+.4f}")
    order = ["Question", "Rows", "Look", "Verdict", *CONFIRMATION.values(), "Δ", "Size", "Seen before the plan",
             "Needs"]
    return shown[[name for name in order if name in shown.columns]]  # the verdicts first: they fit at 1,400 px
