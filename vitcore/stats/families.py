"""Correction families, decided once: which comparisons are tested together, whatever view shows them.

A comparison is two configs at one train_rows on one metric. Its family depends only on the two
configs and the store, never on the page, so the card, the forest plot, the flip table, the main
effects, the claims ledger, `compare` and `effects` give one comparison one verdict:

    single-switch changes   two ViT configs that differ in one switch (or one free field: width, depth,
                            heads, MLP size, epochs, batch size, learning rate, warm-up) belong to
                            the family of the one nearer the article's ViT (its base): every stored
                            single-switch change of that base at that train_rows (the base's forest plot)
    the article's models    the article's ViT vs its convnet at one train_rows: the source article's own
                            question, one comparison
    one comparison          anything else (several switches at once, different train_rows): no correction

Main effects (a level averaged over the grid's cells) and interactions are their own families
(vitcore.stats.summaries); a main effect measured in one cell only is the single-switch change of
the article's ViT and takes that family. No TensorFlow, no Streamlit.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from vitcore.config import switches
from vitcore.config.run import RunConfig
from vitcore.stats.estimates import ONE

# What a single-switch change may change: every ViT switch of the registry (the factorial's and the
# papers'), and warm-up epochs, whose levels are the ones the store has runs at.
FLIP_FIELDS = tuple(s.name for s in switches.REGISTRY if s.applies("vit"))


@dataclass(frozen=True)
class Family:
    """The comparisons tested together: `name` (what the CSVs' `family` column says) and `size` (m, the
    Bonferroni factor)."""
    name: str
    size: int = 1

    def caption(self) -> str:
        """What a view prints beside its verdicts."""
        if self.size <= 1:
            return f"{self.name}: no correction"
        return f"Bonferroni over the {self.size} {self.name} (simultaneous intervals)"


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
    present = set(runs["config_id"])
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


def base_of(a: RunConfig, b: RunConfig, field: str, runs: pd.DataFrame) -> RunConfig:
    """The end of a single-switch change nearer the article's ViT: the one at the switch's default;
    between two other levels, the one nearer the default in level order (then the first)."""
    order = levels(runs, field)
    return min((a, b), key=lambda cfg: _rank(cfg, field, order)).replace(seed=0)


def testable(runs: pd.DataFrame, a: RunConfig, b: RunConfig) -> bool:
    """Whether two configs share at least 2 (train_rows, random seed) pairs: a comparison with a test."""
    seeds = [set(runs_of(runs, cfg)["seed"]) for cfg in (a, b)]
    return len(seeds[0] & seeds[1]) >= 2


def flip_family(runs: pd.DataFrame, base: RunConfig) -> Family:
    """The single-switch changes whose base is `base`: m = how many are stored with at least 2 pairs (a
    change with fewer has no test, so it takes no share of the 5%)."""
    size = sum(1 for field, _, other in neighbours(runs, base)
               if base_of(base, other, field, runs).config_id == base.config_id and testable(runs, base, other))
    return Family(f"single-switch changes of {base.label()} at {base.train_rows:,} rows", max(size, 1))


def _article_models(a: RunConfig, b: RunConfig) -> bool:
    rows = a.train_rows
    pair = {RunConfig(train_rows=rows).config_id, RunConfig(model="convnet", train_rows=rows).config_id}
    return b.train_rows == rows and {a.config_id, b.config_id} == pair


def family_of(runs: pd.DataFrame, a: RunConfig, b: RunConfig) -> Family:
    """The family of the comparison of configs a and b (either order) on the store `runs`."""
    field = changed_field(a, b)
    if field is not None:
        return flip_family(runs, base_of(a, b, field, runs))
    if _article_models(a, b):
        return Family(f"the article's ViT vs its convnet at {a.train_rows:,} rows (one comparison)", 1)
    return ALONE
