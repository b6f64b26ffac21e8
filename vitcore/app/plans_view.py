"""The Plans page's pieces: every plan on the store (stats.plan_report through the Study) as the page shows it,
one summary line and one table per plan. No TensorFlow."""

from __future__ import annotations

import pandas as pd

from vitcore.app import fmt, state
from vitcore.study.words import DECIDED, OUTCOMES

COLUMNS = {"question": "Question", "train_rows": "Rows", "look": "Look", "verdict": "Verdict", "size": "Size",
           "needs": "Needs", "seen_before_plan": "Seen before the plan"}
CONFIRMATION = {"discovery_verdict": "Discovery", "replicated": "Replication"}


def report():
    """The store's PlanReport (computed once per store state by the shared Study)."""
    return state.study().plan_report()


def summary(plan, frame: pd.DataFrame, blind: bool | None, order: str = "", commit: str = "") -> str:
    """One paragraph: what the plan is, its hash, when registered, its random seeds, how far it got, whether it is
    blind and what proves its order (`order`: the Study's plans_checked().order; `commit`: its registering commit
    id). Everything in it comes from checked fields (a name, numbers, hex ids): the note is shown apart, as text."""
    decided = int(frame["verdict"].isin(DECIDED).sum())
    capped = int(frame["needs"].str.startswith("at the plan's cap").sum())
    seen = ("**nothing judged yet**: none of its runs is stored" if blind is None else
            "**blind**: no run it judges was trained before it was registered" if blind else
            "**not blind**: some runs it judges were trained before it was registered (its verdicts that used them "
            "say \"decided on random seeds seen before the plan\")")
    if order:
        seen += f"; order: {fmt.plain(order)}"  # words with run ids and underscores: never Markdown
    where = f", registering commit `{commit}`" if commit else ""
    text = (f"Registered {plan.registered_at} (sha256 `{plan.sha256}`{where}), random seeds {plan.seeds_text}, looks "
            f"at {', '.join(map(str, plan.looks))} paired random seeds, margin ±{plan.margin:g}: "
            f"{len(frame)} question{'' if len(frame) == 1 else 's'}, **{decided} decided**, {capped} at the cap "
            f"undecided; {seen}.")
    if plan.confirms:
        counts = frame["replicated"].value_counts()
        text += (f" It confirms plan **{plan.confirms}** on fresh random seeds, and its verdicts lead every view of "
                 "these questions (the discovery follows): " +
                 ", ".join(f"{int(counts.get(word, 0))} {word}" for word in OUTCOMES) + ". "
                 "**Pooled** combines the discovery and the confirmation (inverse-variance, the shared test-image "
                 "term once) as context, never as a verdict: the discovery's half was looked at first; "
                 "**het. p** is Cochran's Q (p of the z between them).")
    return text


def display(plan, frame: pd.DataFrame) -> pd.DataFrame:
    """A plan's questions as the page shows them."""
    columns = {**COLUMNS, **(CONFIRMATION if plan.confirms else {})}
    shown = frame[list(columns)].rename(columns=columns)
    shown["Rows"] = frame["train_rows"].map(fmt.rows)
    shown["Seen before the plan"] = frame["seen_before_plan"].map({True: "seen", False: "blind"})
    shown["Δ"] = frame["mean_delta"].map(_delta)
    if plan.confirms:
        shown["Discovery Δ"] = frame["discovery_delta"].map(_delta)
        shown["z"] = frame["z"].map(lambda x: "" if pd.isna(x) else f"{x:+.2f}")
        shown["Pooled (95%)"] = [f"{_delta(d)} [{_delta(lo)}, {_delta(hi)}]" if pd.notna(d) else ""
                                 for d, lo, hi in zip(frame["pooled_delta"], frame["pooled_low"], frame["pooled_high"])]
        shown["het. p"] = frame["heterogeneity_p"].map(lambda x: "" if pd.isna(x) else f"{x:.2f}")
    order = ["Question", "Rows", "Look", "Verdict", *CONFIRMATION.values(), "Δ", "Discovery Δ", "z", "Pooled (95%)",
             "het. p", "Size", "Seen before the plan", "Needs"]
    return shown[[name for name in order if name in shown.columns]]  # the verdicts first: they fit at 1,400 px


def _delta(x) -> str:
    return "" if pd.isna(x) else f"{x:+.4f}"
