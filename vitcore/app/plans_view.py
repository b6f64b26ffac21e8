"""The Plans page's pieces: every plan on the store (stats.plan_report through the Study) as the page shows it,
a two-sentence summary, its details folded, and one table per plan. No TensorFlow."""

from __future__ import annotations

import re

import pandas as pd

from vitcore.app import fmt, state
from vitcore.config.switches import setting
from vitcore.study.words import DECIDED, NOT_PROVEN, OUTCOMES, POOLED_NOTE, REWRITE

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


def summary(plan, frame: pd.DataFrame, blind: bool | None, order: str = "") -> str:
    """Two short sentences a newcomer reads: when the plan was registered, on which random seeds and margin, how many
    of its questions are decided; whether it is blind and whether git proves its order (`order`: the Study's
    plans_checked().order, its words before the reason). The rest is in `details`. Everything in it comes from checked
    fields (a date, numbers, booleans, the order's fixed words): the note is shown apart, as text."""
    decided = int(frame["verdict"].isin(DECIDED).sum())
    seen = ("Nothing judged yet: none of its runs is stored" if blind is None else
            "Blind" if blind else "**Not blind**: some of its runs were trained before it")
    head = order.split(" (")[0]  # plan_report's fixed words before the reason: 'proven from git', 'order not proven'
    proof = f"order {head}" if head.startswith("proven") else head if head == NOT_PROVEN else ""  # built-in: details
    return (f"Registered {plan.registered_at}, random seeds {plan.seeds_text}, margin ±{plan.margin:g}: "
            f"{len(frame)} question{'' if len(frame) == 1 else 's'}, **{decided} decided**. "
            f"{seen}{', ' + fmt.plain(proof) if proof else ''}.")


def details(plan, frame: pd.DataFrame, blind: bool | None, order: str = "", commit: str = "") -> str:
    """What the summary leaves to its "Details" expander, as Markdown bullets: the plan's sha256 and registering
    commit id (`commit`), its looks and the questions at their cap, what blind means here, the order's reason in full
    (`order`, through fmt.plain: words with run ids and underscores, never Markdown), and for a confirmation the
    outcome counts and what Pooled and het. p are. From checked fields only, as `summary`."""
    capped = int(frame["needs"].str.startswith("at the plan's cap").sum())
    where = f", registering commit `{commit}`" if commit else ""
    seen = ("none of its runs is stored, so it judges nothing here" if blind is None else
            "no run it judges was trained before it was registered" if blind else
            "some runs it judges were trained before it was registered (its verdicts that used them say \"decided "
            "on random seeds seen before the plan\")")
    lines = [f"sha256 `{plan.sha256}`{where}",
             f"looks at {', '.join(map(str, plan.looks))} paired random seeds; {capped} question"
             f"{'' if capped == 1 else 's'} at the cap undecided",
             f"{'blind' if blind else 'not blind' if blind is not None else 'nothing judged yet'}: {seen}"]
    if order:
        lines.append(f"order: {fmt.plain(order)}")
    if plan.confirms:
        counts = frame["replicated"].value_counts()
        lines += [f"it confirms plan **{plan.confirms}** on fresh random seeds, and its verdicts lead every view of "
                  "these questions (the discovery follows): " +
                  (", ".join(f"{int(counts.get(word, 0))} {word}" for word in OUTCOMES if counts.get(word, 0))
                   or "no outcome yet"),
                  f"**Pooled** combines the discovery and the confirmation, {POOLED_NOTE}; **het. p** is Welch's "
                  "test of the difference between them (Welch-Satterthwaite df)"]
    return "\n".join(f"- {line}" for line in lines)


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
