"""The `plan` grid: exactly the random seeds a registered plan asks for next (vitcore.stats.plans, .plan).

    python -m vitcore sweep plan --dry-run              # the built-in plan's next looks, on the store
    python -m vitcore sweep plan confirm --workers 2    # train the plan 'confirm' until every question is decided

For every question of the plan that is not decided and not at its cap: both sides at the plan's first n
random seeds of its next look, the ones not stored yet. A decided question, or one at its cap, asks for
nothing. The verdict is the one every view shows (compare.paired_delta with the store's test set, in the
question's family at the plan's margin), so the sweep trains what the views say is needed. Unlike the
other grids it reads the store; resumable as every sweep (a stored run is never trained again).
"""

from __future__ import annotations

import numpy as np

from vitcore.config.run import RunConfig
from vitcore.stats import plan_store, plans, testset
from vitcore.stats.compare import paired_delta
from vitcore.stats.families import planned_family, runs_of
from vitcore.store.runs import RunStore


def find(store: RunStore | None, name: str | None) -> plans.Plan:
    """The plan called `name` that judges `store` (None: the built-in plan); ValueError naming the plans there."""
    if name is None or name == plan_store.BUILTIN:
        return plan_store.builtin()
    found, problems = plan_store.load(store.root if store is not None else None)
    for plan in found:
        if plan.name == name:
            return plan
    why = f" ({'; '.join(problems)})" if problems else ""
    raise ValueError(f"no registered plan {name!r} in this store; plans: {', '.join(p.name for p in found)}{why}")


def status(store: RunStore, plan: plans.Plan | None = None, runs=None, test_set=None) -> list[dict]:
    """One row per question of `plan` (default: the built-in one): question, switch, level, train_rows, base,
    variant and the plan's row (verdict, look, plan, seeds_needed: the next look's paired random seeds, NaN when
    decided, inf at the cap)."""
    plan = plan or plan_store.builtin()
    runs = store.table() if runs is None else runs
    test_set = testset.from_store(store) if test_set is None else test_set
    rows = []
    for question in plan.questions:
        base, variant = question.base, question.variant
        delta = paired_delta(runs_of(runs, base), runs_of(runs, variant), plan.metric, plan.margin,
                             family=planned_family(plan, question), test_set=test_set)
        rows.append({"plan": plan.name, "question": question.name, "switch": question.field, "level": question.level,
                     "train_rows": question.train_rows, "base": base, "variant": variant,
                     **{k: v for k, v in delta.row.items() if k != "plan"}, "plan_text": delta.row["plan"]})
    return rows


def next_configs(store: RunStore | None, name: str | None = None) -> list[RunConfig]:
    """Both sides of every undecided question of the plan below its cap, at the plan's first n random seeds of
    its next look (stored ones included: `sweep.pending` drops them), each config once, in question order."""
    if store is None:
        raise ValueError("the plan grid needs the store it plans for (--store)")
    plan = find(store, name)
    configs = []
    for row in status(store, plan):
        needed = row["seeds_needed"]
        if not np.isfinite(needed):  # decided (NaN) or at the plan's cap (inf)
            continue
        seeds = range(plan.first_seed, plan.first_seed + int(needed))
        configs += [cfg.replace(seed=seed) for cfg in (row["base"], row["variant"]) for seed in seeds]
    return list(dict.fromkeys(configs))
