"""The Plans page's pieces: every plan on the store (stats.plan_report through the Study) as the page shows it,
one summary line and one table per plan. No TensorFlow."""

from __future__ import annotations

import re

import pandas as pd

from vitcore.app import fmt, state
from vitcore.config.switches import setting
from vitcore.study.words import DECIDED, OUTCOMES, POOLED_NOTE, REWRITE

COLUMNS = {"question": "Question", "train_rows": "Rows", "look": "Look", "verdict": "Verdict", "size": "Size",
           "needs": "Needs", "seen_before_plan": "Seen before the plan"}
POOLED = "Pooled, context (95%, unadjusted)"  # never a verdict: POOLED_NOTE says why
CONFIRMATION = {"discovery_verdict": "Discovery", "discovery_look": "Discovery stopped at", "replicated": "Replication"}


# What the Plans page's two-sentence caption leaves to its help icon.
ABOUT = ("A plan fixes its questions, margin, looks, caps, spending and random seeds before its runs; a question stays "
         "undecided at its cap if no look resolves it. A confirmation plan asks the same questions on random seeds "
         "nobody had seen: its verdict leads every view, and each discovery is replicated, contradicted or not "
         "confirmed.")
# What git proves of a plan's order and what it cannot (the caption's help icon, after ABOUT).
PROOF = ("Only a plan whose order git proves leads over the built-in one: its file is the one its registering commit "
         "added, that commit came before every commit adding its runs, is dated within minutes of the plan's "
         "registered_at and before every one of its runs was trained. What git cannot show: " + REWRITE + ".")


def judging(report) -> tuple[list, list]:
    """(the plans that judge some run of this store, those none of whose runs is stored here): a store of your own
    study lists the built-in plans in the second, so the page never shows them as its own. Each in the page's order
    (`ordered`: the blind plans first)."""
    plans = ordered(report)
    return ([plan for plan in plans if report.blind[plan.name] is not None],
            [plan for plan in plans if report.blind[plan.name] is None])


def idle_line(idle) -> str:
    """The one line the plans that judge nothing here fold under."""
    names = ", ".join(plan.name for plan in idle)
    return (f"{len(idle)} plan{'s' if len(idle) != 1 else ''} that judge{'s' if len(idle) == 1 else ''} nothing in "
            f"this store (none of {'their' if len(idle) != 1 else 'its'} runs is stored): {names}")


def first_sentence(text: str) -> str:
    """A plan file's note as its caption: the first sentence (the whole note is behind the help icon)."""
    return re.split(r"(?<=[.?!])\s+(?=[A-Z0-9\"(])", text.strip(), maxsplit=1)[0]


def report():
    """The store's PlanReport (computed once per store state by the shared Study)."""
    return state.study().plan_report()


def ordered(found) -> list:
    """The plans as the page shows them: in the order they lead a comparison (plan_report.Checked.lead: blind plans
    whose order git proves, then the built-in plan, then every other plan), so the page's first plan is the one
    whose verdicts lead; without a plan check (no store), as found."""
    lead = list(found.checked.lead()) if found.checked is not None else list(found.plans)
    return lead + [p for p in found.plans if p not in lead]


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
                 ", ".join(f"{int(counts.get(word, 0))} {word}" for word in OUTCOMES if counts.get(word, 0)) + ". "
                 f"**Pooled** combines the discovery and the confirmation, {POOLED_NOTE}; **het. p** is Welch's test "
                 "of the difference between them (Welch-Satterthwaite df).")
    return text


def display(plan, frame: pd.DataFrame) -> pd.DataFrame:
    """A plan's questions as the page shows them."""
    columns = {**COLUMNS, **(CONFIRMATION if plan.confirms else {})}
    shown = frame[list(columns)].rename(columns=columns)
    shown["Question"] = [setting(f, level) if isinstance(f, str) and f else q  # the registry's words, as the forest
                         for q, f, level in zip(frame["question"], frame["field"], frame["level"])]
    shown["Rows"] = frame["train_rows"].map(fmt.rows)
    shown["Seen before the plan"] = frame["seen_before_plan"].map({True: "seen", False: "blind"})
    shown["Δ"] = frame["mean_delta"].map(_delta)
    if plan.confirms:
        shown["Discovery Δ"] = frame["discovery_delta"].map(_delta)
        shown["z"] = frame["z"].map(lambda x: "" if pd.isna(x) else f"{x:+.2f}")
        shown[POOLED] = [f"{_delta(d)} [{_delta(lo)}, {_delta(hi)}]" if pd.notna(d) else ""
                                 for d, lo, hi in zip(frame["pooled_delta"], frame["pooled_low"], frame["pooled_high"])]
        shown["het. p"] = frame["heterogeneity_p"].map(lambda x: "" if pd.isna(x) else f"{x:.2f}")
    order = ["Question", "Verdict", "Replication", "Discovery", "Discovery stopped at", "Rows", "Look", "Δ",
             "Discovery Δ", "z", POOLED,
             "het. p", "Size", "Seen before the plan", "Needs"]
    return shown[[name for name in order if name in shown.columns]]  # the key columns first: they fit at 400 px


def _delta(x) -> str:
    return "" if pd.isna(x) else fmt.delta(x)  # the one rounding (config.numbers.rounded), as every view
