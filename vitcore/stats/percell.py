"""What a main effect averages over: the switch's effect in each cell of the other switches.

A main effect (vitcore.stats.summaries.main_effects) is one number per switch level, averaged over
every combination of the other switches. At 1,000 rows that average is pulled by the cells where a
BatchNorm ViT collapses: post-norm reads *better* over all cells and slightly worse over the LayerNorm
cells. This module gives, for every main effect and two-way interaction:

- `cell_effects`: the same contrast within each cell (one combination of the other switches), paired
  over the random seeds that cell has, with its 95% t-interval and a Holm-adjusted p within the
  effect's cells; whether the cell holds a collapsed run and whether it is a LayerNorm cell;
- `spread`: per effect, the cells' smallest and largest Δ, their sd, how many cells are resolved
  each way, and `signs_disagree` when cells are resolved in opposite directions (beyond noise);
- `restrict` / `changed_verdicts`: the effects recomputed over the LayerNorm cells or the cells
  without collapsed runs, and the effects whose verdict that changes.

No TensorFlow; the switch grid comes from vitcore.config.run, the contrasts from summaries.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from vitcore.config import switches
from vitcore.config.numbers import ci, delta
from vitcore.config.run import LEVELS, SWITCHES, RunConfig
from vitcore.stats.estimates import ALPHA, MARGIN, paired_estimate
from vitcore.stats.summaries import METRICS, REFERENCE, factorial_runs, holm, measure_main_effects, reference

ALL, LAYER_NORM, NO_COLLAPSE = "all cells", "LayerNorm cells only", "cells without collapsed runs"
SUBSETS = (ALL, LAYER_NORM, NO_COLLAPSE)
EFFECT_KEY = ["factor", "level", "reference", "factor_b", "level_b", "reference_b", "train_rows", "metric"]
CELL_COLUMNS = [*EFFECT_KEY, "cell", "n_pairs", "mean_delta", "ci_low", "ci_high", "p_value", "p_holm",
                "collapsed", "layer_norm"]
SPREAD_COLUMNS = ["cells_measured", "cell_min", "cell_max", "cell_sd", "cells_higher", "cells_lower", "signs_disagree"]


def _effects(interactions: bool, refs: dict = REFERENCE):
    """(factors, weights) of every main effect ({level: 1, reference: -1}), or of every two-way interaction
    ({(a, b): 1, ...}), as summaries weighs them; `refs`: each switch's reference level (summaries.reference)."""
    if not interactions:
        for factor in SWITCHES:
            for level in LEVELS[factor]:
                if level != refs[factor]:
                    yield (factor,), {level: 1, refs[factor]: -1}
        return
    for a_name, b_name in itertools.combinations(SWITCHES, 2):
        ref_a, ref_b = refs[a_name], refs[b_name]
        for a, b in itertools.product(LEVELS[a_name], LEVELS[b_name]):
            if a != ref_a and b != ref_b:
                yield (a_name, b_name), {(a, b): 1, (ref_a, b): -1, (a, ref_b): -1, (ref_a, ref_b): 1}


def _cell_name(others: list[str], values) -> str:
    """'position embedding learned, norm layer, patch size 7': the registry's nouns, as the pages name switches."""
    values = values if isinstance(values, tuple) else (values,)
    return ", ".join(f"{switches.SWITCH[name].noun} {value}" for name, value in zip(others, values))


def cell_effects(runs: pd.DataFrame, metrics=METRICS, interactions: bool = False,
                 base: RunConfig | None = None) -> pd.DataFrame:
    """One row per effect (EFFECT_KEY; the _b columns empty for main effects), train_rows and cell of the
    other switches: the contrast paired over that cell's random seeds (CELL_COLUMNS); around `base` (your own
    study's centre) when given, as summaries.measure_main_effects."""
    vit, refs = factorial_runs(runs, base), reference(base)
    collapsed = vit.assign(collapsed=vit.get("collapsed", False)).astype({"collapsed": bool})
    rows = []
    for factors, weights in _effects(interactions, refs):
        others = [s for s in SWITCHES if s not in factors]
        first = next(iter(weights))
        levels = first if interactions else (first,)
        key = {"factor": factors[0], "level": levels[0], "reference": refs[factors[0]],
               "factor_b": factors[1] if interactions else None, "level_b": levels[1] if interactions else None,
               "reference_b": refs[factors[1]] if interactions else None}
        for metric in metrics:
            wide = vit.pivot_table(index=["train_rows", *others, "seed"], columns=list(factors), values=metric,
                                   aggfunc="mean")
            if not all(level in wide.columns for level in weights):
                continue
            contrast = sum(sign * wide[level] for level, sign in weights.items()).dropna()
            flagged = collapsed.groupby(["train_rows", *others])["collapsed"].any()
            for cell, part in contrast.groupby(level=["train_rows", *others]):
                est = paired_estimate(part.to_numpy())
                rows.append({**key, "train_rows": int(cell[0]), "metric": metric,
                             "cell": _cell_name(others, cell[1:]), "n_pairs": est.n, "mean_delta": est.mean,
                             "ci_low": est.ci_low, "ci_high": est.ci_high, "p_value": est.p_value,
                             "collapsed": bool(flagged.get(cell, False)),
                             "layer_norm": "norm" not in factors and dict(zip(others,
                                                                              cell[1:])).get("norm") == "layer"})
    frame = pd.DataFrame(rows, columns=[c for c in CELL_COLUMNS if c != "p_holm"])
    frame["p_holm"] = frame.groupby(EFFECT_KEY, dropna=False)["p_value"].transform(lambda p: holm(p.to_numpy()))
    return frame[CELL_COLUMNS]


def spread(cells: pd.DataFrame) -> pd.DataFrame:
    """Per effect (EFFECT_KEY): SPREAD_COLUMNS over its cells. A cell is resolved higher / lower when its
    Holm-adjusted p (within the effect's cells) is below 5%; `signs_disagree` when both occur."""
    def one(part: pd.DataFrame) -> pd.Series:
        resolved = part["p_holm"] < ALPHA
        rising = part["mean_delta"] > 0
        higher, lower = int((resolved & rising).sum()), int((resolved & (part["mean_delta"] < 0)).sum())
        means = part["mean_delta"].dropna()
        return pd.Series({"cells_measured": len(means), "cell_min": means.min() if len(means) else np.nan,
                          "cell_max": means.max() if len(means) else np.nan,
                          "cell_sd": means.std(ddof=1) if len(means) > 1 else np.nan,
                          "cells_higher": higher, "cells_lower": lower, "signs_disagree": bool(higher and lower)})
    if cells.empty:
        return pd.DataFrame(columns=[*EFFECT_KEY, *SPREAD_COLUMNS])
    out = cells.groupby(EFFECT_KEY, dropna=False, sort=False)[["mean_delta", "p_holm"]].apply(one).reset_index()
    return out[[*EFFECT_KEY, *SPREAD_COLUMNS]]


def with_spread(effects: pd.DataFrame, cells: pd.DataFrame) -> pd.DataFrame:
    """Main effects or interactions with their cells' SPREAD_COLUMNS (effects.csv's extra columns)."""
    if effects.empty:
        return effects.assign(**{c: pd.Series(dtype=float) for c in SPREAD_COLUMNS})
    key = [c for c in EFFECT_KEY if c in effects.columns]
    table = spread(cells)
    interaction = "factor_b" in effects.columns
    table = table[table["factor_b"].notna() == interaction]
    return _merge(effects, table, key)


def _merge(effects: pd.DataFrame, table: pd.DataFrame, key: list[str]) -> pd.DataFrame:
    """Left-join on the effect key, levels compared as text (patch sizes are ints in one frame and
    objects in the other)."""
    left = effects.assign(**{f"_{k}": effects[k].astype(str) for k in key})
    right = table.assign(**{f"_{k}": table[k].astype(str) for k in key})[[f"_{k}" for k in key] + SPREAD_COLUMNS]
    return left.merge(right, on=[f"_{k}" for k in key], how="left").drop(columns=[f"_{k}" for k in key])


def effects_with_spread(runs: pd.DataFrame, metrics=METRICS, margin: float = MARGIN, test_set=None,
                        base: RunConfig | None = None, plans=(), words=None) -> pd.DataFrame:
    """effects.csv: summaries.main_effects (test accuracy's intervals with the test set's sampling when
    `test_set` is given, vitcore.stats.testset) with each effect's per-cell spread (SPREAD_COLUMNS, over
    random seeds); around `base` (your own study's centre) when given. `plans`: the plans that may judge a one-cell
    effect, in lead order; `words(frame)`: adds the columns that say where each verdict comes from (the Study's)."""
    effects = measure_main_effects(runs, metrics, test_set, base, plans).judged(margin)
    return with_spread(words(effects) if words else effects, cell_effects(runs, metrics, base=base))


def restrict(runs: pd.DataFrame, subset: str) -> pd.DataFrame:
    """The runs a control keeps: every run (ALL), the LayerNorm ViT runs (LAYER_NORM), or every run
    except the configs with a collapsed run at that train_rows (NO_COLLAPSE); a cell missing one level
    then drops out of the contrast."""
    if subset == ALL:
        return runs
    if subset == LAYER_NORM:
        return runs[runs["norm"] == "layer"]
    if subset == NO_COLLAPSE:
        if "collapsed" not in runs.columns:
            return runs
        bad = runs.loc[runs["collapsed"].fillna(False).astype(bool), ["config_id"]].drop_duplicates()
        return runs[~runs["config_id"].isin(bad["config_id"])]
    raise ValueError(f"unknown subset of cells {subset!r}; subsets: {', '.join(SUBSETS)}")


def changed_verdicts(everything: pd.DataFrame, subset: pd.DataFrame) -> pd.DataFrame:
    """Effects present in both frames (main_effects or interactions of all runs and of `restrict(...)`)
    whose verdict differs: the key, and mean_delta / ci_low / ci_high / verdict of each side (the interval
    the verdict used: simultaneous over its family when the frames have ci_adj_*)."""
    key = [c for c in EFFECT_KEY if c in everything.columns and c in subset.columns]
    values = ["mean_delta", "ci_low", "ci_high", "verdict"]
    # the interval the verdict was judged on: simultaneous over its family where the frames carry it
    adjusted = {"ci_adj_low": "ci_low", "ci_adj_high": "ci_high"}
    if set(adjusted) <= set(everything.columns) & set(subset.columns):
        everything, subset = (f.drop(columns=["ci_low", "ci_high"]).rename(columns=adjusted)
                              for f in (everything, subset))
    left = everything.assign(_key=everything[key].astype(str).agg("|".join, axis=1))
    right = subset.assign(_key=subset[key].astype(str).agg("|".join, axis=1))[["_key", *values]]
    both = left[[*key, "_key", *values]].merge(right, on="_key", suffixes=("_all", "_subset"))
    return both[both["verdict_all"] != both["verdict_subset"]].drop(columns="_key").reset_index(drop=True)


def changed_sentence(changed: pd.DataFrame, subset: str, names: dict | None = None) -> str | None:
    """'Over the LayerNorm cells only, 2 verdicts change: norm placement post at 1,000 rows: better
    (+0.0250 [...]) over all cells, inconclusive (-0.0059 [...]) ...' or None when none changes."""
    if changed.empty:
        return None
    names = names or {}
    items = [f"{names.get(r.factor, r.factor)} {r.level} (vs {r.reference}) at {int(r.train_rows):,} rows: "
             f"{r.verdict_all} ({delta(r.mean_delta_all)} {ci(r.ci_low_all, r.ci_high_all)}) over all cells, "
             f"{r.verdict_subset} ({delta(r.mean_delta_subset)} {ci(r.ci_low_subset, r.ci_high_subset)}) "
             f"over the {subset.removesuffix(' only')}" for r in changed.itertuples()]
    count = f"{len(items)} verdict{'s' if len(items) != 1 else ''} change{'s' if len(items) == 1 else ''}"
    return (f"Over the {subset.removesuffix(' only')} only, {count}: " + "; ".join(items)
            + " (each with the interval its verdict used).")
