"""Correction families, decided by the plan: which comparisons are tested together, whatever view shows them.

A comparison is two configs at one train_rows on one metric. Its family depends only on the two
configs and the registry (vitcore.config.switches), never on the store or the page, so adding runs,
runs of another switch or a new switch never moves another comparison's adjusted p or verdict, and
the card, the forest plot, the flip table, the main effects, the claims ledger, `compare` and
`effects` give one comparison one verdict:

    one switch's levels     two ViT configs that differ in one switch (or in warm-up epochs) belong to
                            the family of the one nearer the article's ViT (its base): that switch's other
                            levels against the base at that train_rows (position embedding none, sincos:
                            m = 2; patch 2, 4, 14: m = 3; a two-level switch: m = 1; warm-up: its
                            declared levels). A warm-up outside the declared levels is a comparison alone.
    the article's models    the article's ViT vs its convnet at one train_rows: the source article's own
                            question, one comparison
    one comparison          anything else (several switches at once, different train_rows): no correction

Main effects and interactions of the default factorial are one family per metric and train_rows,
sized by the factorial's declared grid (vitcore.stats.summaries); a main effect measured in one
cell only is the single-switch change of the article's ViT and takes that family. Which of these
comparisons are judged sequentially (looks, alpha spending) is vitcore.stats.plan. No TensorFlow,
no Streamlit.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field as attribute

import pandas as pd

from vitcore.config import switches
from vitcore.config.run import RunConfig
from vitcore.stats import plan_store
from vitcore.stats.estimates import ONE

# What a single-switch change may change: every ViT switch of the registry (the factorial's, the papers'
# and the free fields: width, depth, heads, MLP size, epochs, batch size, lr, warm-up, whose levels are
# the ones the store has runs at).
FLIP_FIELDS = tuple(s.name for s in switches.REGISTRY if s.applies("vit"))


@dataclass(frozen=True)
class Family:
    """The comparisons tested together: `name` (what the CSVs' `family` column says) and `size` (m, the
    Bonferroni factor); `looks`: the plan's looks when the comparison is planned (vitcore.stats.plan),
    () for a fixed-sample comparison."""
    name: str
    size: int = 1
    looks: tuple[int, ...] = ()
    # the vitcore.stats.plans.Plan of `looks` (None: built-in)
    plan: object = attribute(default=None, compare=False, repr=False)

    def caption(self) -> str:
        """What a view prints beside its verdicts."""
        text = f"{self.name}: no correction" if self.size <= 1 else \
            f"Bonferroni over the {self.size} {self.name} (simultaneous intervals)"
        if self.looks:
            text += (f"; test accuracy planned by plan {getattr(self.plan, 'name', 'builtin')}: looks at "
                     f"{', '.join(map(str, self.looks))} paired random seeds, alpha spent over the looks (repeated "
                     "intervals)")
        return text


ALONE = Family(ONE, 1)


def runs_of(runs: pd.DataFrame, cfg: RunConfig) -> pd.DataFrame:
    """The runs of cfg at every seed (config_id ignores the seed)."""
    return runs[runs["config_id"] == cfg.config_id]


def levels(runs: pd.DataFrame, field: str) -> list:
    """The levels a single-switch change may move `field` to: the switch's levels, or for a free field
    (width, depth, ..., warm-up epochs) the values the store has runs at."""
    if not switches.SWITCH[field].free:
        return list(switches.LEVELS[field])
    kind = type(switches.DEFAULTS[field])  # pandas holds ViT-only ints as floats beside the convnet's None
    return sorted({kind(v) for v in runs[field].dropna().unique()}) if len(runs) and field in runs.columns else []


def neighbours(runs: pd.DataFrame, cfg: RunConfig) -> list[tuple[str, object, RunConfig]]:
    """(field, level, config) for every stored config that differs from the ViT `cfg` in one of
    FLIP_FIELDS, in FLIP_FIELDS then level order."""
    if cfg.model != "vit":
        return []
    present = set(runs["config_id"].unique())  # not every row: an arrow column iterates slowly
    found = []
    for field in FLIP_FIELDS:
        for level in levels(runs, field):
            if level == getattr(cfg, field):
                continue
            try:
                other = cfg.replace(**{field: level})
            except ValueError:  # e.g. warm-up longer than the run
                continue
            if other.config_id in present:
                found.append((field, level, other))
    return found


def changed_field(a: RunConfig, b: RunConfig) -> str | None:
    """The one field of FLIP_FIELDS in which two ViT configs differ (everything else equal), else None."""
    if a.model != "vit" or b.model != "vit":
        return None
    differ = [name for name in RunConfig.__dataclass_fields__
              if name != "seed" and getattr(a, name) != getattr(b, name)]
    return differ[0] if len(differ) == 1 and differ[0] in FLIP_FIELDS else None


def _rank(cfg: RunConfig, field: str, order: list) -> tuple:
    value, default = getattr(cfg, field), getattr(RunConfig(), field)
    index = order.index(value) if value in order else len(order)
    reference = order.index(default) if default in order else 0
    return value != default, abs(index - reference), index


def base_of(a: RunConfig, b: RunConfig, field: str) -> RunConfig:
    """The end of a single-switch change nearer the article's ViT: the one at the switch's default;
    between two other levels, the one nearer the default in level order (then the first)."""
    order = sorted({*switches.LEVELS[field], getattr(a, field), getattr(b, field)}) if switches.SWITCH[field].free \
        else list(switches.LEVELS[field])
    return min((a, b), key=lambda cfg: _rank(cfg, field, order)).replace(seed=0)


def registry_family(base: RunConfig, field: str, level) -> Family:
    """One switch's other levels against `base` at its train_rows: m = the registry's levels of the switch
    but the base's, stored or not. A warm-up outside its declared levels is a comparison alone. No plan."""
    switch = switches.SWITCH[field]
    if level not in switch.levels or getattr(base, field) not in switch.levels:
        return Family(f"{switch.noun} {level} against {base.label()} at {base.train_rows:,} rows (outside the "
                      "registry's levels: this comparison alone)", 1)
    return Family(f"{switch.noun} changes of {base.label()} at {base.train_rows:,} rows", len(switch.levels) - 1)


def switch_family(base: RunConfig, field: str, level, plans=()) -> Family:
    """registry_family, judged at the looks of the first of `plans` that asks the change (the Study's lead order:
    blind plans git proves, then the built-in one, then the others; vitcore.stats.plan_report.Checked.lead), with the
    m that plan registered; `plans` empty: the built-in plan alone."""
    family = registry_family(base, field, level)
    try:
        variant = base.replace(**{field: level})
    except ValueError:
        return family
    for owner in plans or (plan_store.builtin(),):
        question = owner.question_of(base, variant)
        if question is not None:
            return planned_family(owner, question, family)
    return family


def planned_family(plan, question, family: Family | None = None) -> Family:
    """The family of one question of a plan: the registry's (as every view forms it) with the m the plan registered
    (registered_size), judged at that plan's looks on its random seeds."""
    family = family or registry_family(question.base, question.field, question.level)
    return Family(family.name, registered_size(plan, question) or family.size, plan.looks_of(question), plan)


def registered_size(plan, question) -> int | None:
    """m of a question as its plan registered it (plan_settings' family_sizes), None where the file has none."""
    return plan.family_sizes[plan.questions.index(question)] if plan.family_sizes else None


def _article_models(a: RunConfig, b: RunConfig) -> bool:
    rows = a.train_rows
    pair = {RunConfig(train_rows=rows).config_id, RunConfig(model="convnet", train_rows=rows).config_id}
    return b.train_rows == rows and {a.config_id, b.config_id} == pair


def family_of(runs: pd.DataFrame | None, a: RunConfig, b: RunConfig, plans=()) -> Family:
    """The family of the comparison of configs a and b (either order): from the configs, the registry and the
    plans that may judge it (`plans`, in lead order; empty: the built-in plan), never from what is stored (`runs`
    is not read; kept for the callers' signature)."""
    field = changed_field(a, b)
    if field is not None:
        base = base_of(a, b, field)
        other = b if base.config_id == a.config_id else a
        return switch_family(base, field, getattr(other, field), plans)
    if _article_models(a, b):
        return Family(f"the article's ViT vs its convnet at {a.train_rows:,} rows (one comparison)", 1)
    return ALONE
