"""Every registered plan's questions judged on a store: look, verdict, what is still needed, seen or blind, and
for a confirmation the discovery beside it (replicated / not replicated / pending).

    from vitcore.stats import plan_report
    report = plan_report.report(runs, test_set, root)   # runs: RunStore.table(); root: the store's folder
    report.plans_frame(), report.questions_frame()       # `python -m vitcore plans --out`'s two CSVs

A question's verdict is the one every view shows for that comparison: compare.paired_delta at the plan's
margin, in the registry's family, at the plan's looks on the plan's random seeds only (vitcore.stats.plan).
The discovery of a confirmation's question is the confirmed plan's verdict on it when that plan asks it, else
the fixed-sample verdict at the confirmation's margin on every stored pair outside the confirmation's random
seeds (e.g. the depth/width study on random seeds 0-9). No TensorFlow, no Streamlit.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from vitcore.stats import plan as sequential
from vitcore.stats import plan_store, plans
from vitcore.stats.compare import paired_delta
from vitcore.stats.estimates import BETTER, EQUIVALENT, HIGHER, INSIDE, RESOLVED, SLIGHTLY_BETTER, SLIGHTLY_HIGHER
from vitcore.stats.families import family_of, planned_family, runs_of

REPLICATED, NOT_REPLICATED, PENDING = "replicated", "not replicated", "pending"
NOTHING = "no decided discovery"  # the discovery is inconclusive: there is no finding to replicate
OUTCOMES = (REPLICATED, NOT_REPLICATED, PENDING, NOTHING)


@dataclass(frozen=True)
class QuestionStatus:
    """One question of one plan, judged on the store (questions.csv's row)."""
    plan: str
    question: str
    field: str
    level: object
    train_rows: int
    base_id: str              # config ids of both sides (the Ablations page finds the verdict by them)
    variant_id: str
    look: int                 # the look that judged it (0: before the first)
    looks_planned: int
    verdict: str
    size: str
    mean_delta: float
    n_pairs: int
    decided: bool
    at_cap: bool
    needs: str                # the plan's words: "decided", "at the plan's cap", or the next look's seeds
    seen_before_plan: bool
    text: str                 # the plan's line (plan column of every view)
    discovery_verdict: str = ""
    discovery_plan: str = ""  # the plan that decided the discovery, or "fixed sample"
    replicated: str = ""      # for a confirmation: one of OUTCOMES


def claims(verdict: str) -> set[str]:
    """What a verdict shows, for replication: up / down (the difference test) and negligible (inside the margin)."""
    shown = {"negligible"} if verdict == EQUIVALENT or verdict in INSIDE else set()
    if verdict in RESOLVED:
        shown.add("up" if verdict in (BETTER, SLIGHTLY_BETTER, HIGHER, SLIGHTLY_HIGHER) else "down")
    return shown


def outcome(discovery: str, confirmation: str, decided: bool, at_cap: bool) -> str:
    """Whether a confirmation replicates its discovery: the fresh random seeds decide and show something the
    discovery showed (its direction, or a Δ inside the margin: 'slightly better' replicates 'better' and
    'equivalent'); not replicated when they decide otherwise or reach the cap undecided; pending before."""
    if not claims(discovery):
        return NOTHING
    if not decided and not at_cap:
        return PENDING
    return REPLICATED if decided and claims(discovery) & claims(confirmation) else NOT_REPLICATED


def _status(plan: plans.Plan, question: plans.Question, runs: pd.DataFrame, test_set) -> QuestionStatus:
    delta = paired_delta(runs_of(runs, question.base), runs_of(runs, question.variant), plan.metric, plan.margin,
                         family=planned_family(plan, question), test_set=test_set)
    row = delta.row
    decided, at_cap = row["verdict"] in sequential.DECIDED, bool(np.isinf(row.get("seeds_needed", np.nan)))
    needs = "decided" if decided else sequential.needs({**row, "looks_planned": row["looks_planned"]})
    return QuestionStatus(plan.name, question.name, question.field, question.level, question.train_rows,
                          question.base.config_id, question.variant.config_id, int(row["look"]),
                          int(row["looks_planned"]), row["verdict"], row["size"], float(row["mean_delta"]),
                          int(row["n_pairs"]), decided, at_cap, needs, bool(row["seen_before_plan"]), row["plan"])


def _fixed_discovery(plan: plans.Plan, question: plans.Question, runs: pd.DataFrame, test_set) -> str:
    """The fixed-sample verdict on every stored pair outside `plan`'s random seeds (the registry's family)."""
    outside = runs[(runs["seed"] < plan.first_seed) | (runs["seed"] > plan.last_seed)]
    family = family_of(None, question.base, question.variant)
    family = type(family)(family.name, family.size)  # fixed sample: no looks
    delta = paired_delta(runs_of(outside, question.base), runs_of(outside, question.variant), plan.metric,
                         plan.margin, family=family, test_set=test_set)
    return delta.row["verdict"]


def blind(plan: plans.Plan, runs: pd.DataFrame) -> bool:
    """True when no run the plan judges (its questions' configs at its random seeds) was trained before it."""
    ids = {cfg.config_id for q in plan.questions for cfg in (q.base, q.variant)}
    mine = runs[runs["config_id"].isin(ids) & runs["seed"].between(plan.first_seed, plan.last_seed)]
    when = mine["trained_at"] if "trained_at" in mine.columns else [None] * len(mine)
    return not any(plan.seen(run_id, t) for run_id, t in zip(mine["run_id"], when))


@dataclass(frozen=True)
class PlanReport:
    """Every plan on a store with its questions judged; `problems`: plan files that judge nothing, and why."""
    plans: tuple[plans.Plan, ...]
    questions: tuple[QuestionStatus, ...]
    blind: dict
    problems: tuple[str, ...]

    def of(self, name: str) -> list[QuestionStatus]:
        return [q for q in self.questions if q.plan == name]

    def beside(self, base_id: str, variant_id: str) -> list[QuestionStatus]:
        """The statuses of one comparison in every plan that asks it (a view shows the confirmation beside the
        discovery's verdict)."""
        return [q for q in self.questions if (q.base_id, q.variant_id) == (base_id, variant_id)]

    def plans_frame(self) -> pd.DataFrame:
        rows = []
        for plan in self.plans:
            mine = self.of(plan.name)
            rows.append({"plan": plan.name, "sha256": plan.sha256, "registered_at": plan.registered_at,
                         "seeds": plan.seeds_text, "questions": len(mine), "decided": sum(q.decided for q in mine),
                         "at_cap": sum(q.at_cap and not q.decided for q in mine), "blind": self.blind[plan.name],
                         "confirms": plan.confirms or "", "margin": plan.margin,
                         "looks": ",".join(map(str, plan.looks)),
                         "replicated": sum(q.replicated == REPLICATED for q in mine) if plan.confirms else np.nan,
                         "not_replicated": sum(q.replicated == NOT_REPLICATED for q in mine) if plan.confirms
                         else np.nan})
        return pd.DataFrame(rows)

    def questions_frame(self) -> pd.DataFrame:
        columns = ["plan", "question", "train_rows", "look", "verdict", "size", "seen_before_plan",
                   "discovery_verdict", "replicated", "needs", "mean_delta", "n_pairs", "looks_planned",
                   "discovery_plan", "field", "level", "base_id", "variant_id", "text"]
        return pd.DataFrame([asdict(q) for q in self.questions], columns=[*columns, "decided", "at_cap"])[columns]


def report(runs: pd.DataFrame, test_set, root=None) -> PlanReport:
    """The PlanReport of a store's runs (RunStore.table()) with its test set; `root`: the store's folder, whose
    registered plans judge it beside the built-in one."""
    found, problems = plan_store.load(root)
    by_name = {plan.name: plan for plan in found}
    statuses: dict[tuple, QuestionStatus] = {}
    for plan in found:
        for question in plan.questions:
            statuses[(plan.name, question.name, question.train_rows)] = _status(plan, question, runs, test_set)
    out = []
    for plan in found:
        for question in plan.questions:
            status = statuses[(plan.name, question.name, question.train_rows)]
            if plan.confirms is not None and plan.confirms in by_name:
                discovered = by_name[plan.confirms]
                asked = discovered.question_of(question.base, question.variant)
                if asked is not None:
                    first = statuses[(discovered.name, asked.name, asked.train_rows)]
                    verdict, source = first.verdict, discovered.name
                else:
                    verdict, source = _fixed_discovery(plan, question, runs, test_set), "fixed sample"
                status = QuestionStatus(**{**asdict(status), "discovery_verdict": verdict, "discovery_plan": source,
                                           "replicated": outcome(verdict, status.verdict, status.decided,
                                                                 status.at_cap)})
            out.append(status)
    return PlanReport(tuple(found), tuple(out), {plan.name: blind(plan, runs) for plan in found}, tuple(problems))
