"""Seed statistics on a runs table: per-config intervals, main effects, interactions, the flip table.

Every comparison here is paired: two configs are compared only on runs that share (train_rows,
random seed) (vitcore.stats.compare.match), so the random seed's data sample and initialisation
cancel out of the difference. Each Δ carries both tests and one verdict (vitcore.stats.estimates.
judge), adjusted within its family (vitcore.stats.families): a flip-table row in the family of its
single-switch change, main effects and interactions each one family per metric and train_rows, sized
by the default factorial's declared grid (declared_size), never by what is stored.
No TensorFlow; the engine that compares one selection with its baseline is vitcore.stats.compare.

Input is `RunStore.table()`: one row per run; ViT-only fields are None on convnet rows.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from vitcore.config import switches
from vitcore.config.metrics import has_test_set
from vitcore.config.run import LEVELS, SEED_FIELDS, SWITCHES, RunConfig
from vitcore.stats import readings, seconds
from vitcore.stats.compare import (  # noqa: F401 (the pairing, re-exported)
    Delta,
    measure,
    metric_runs,
    pair_runs,
    paired_delta,
)
from vitcore.stats.estimates import (  # noqa: F401 (the words, re-exported for the pages)
    BETTER,
    CONFIDENCE,
    HIGHER,
    JUDGEMENT_COLUMNS,
    LOWER,
    MARGIN,
    METRICS,
    NOT_COMPARABLE,
    RESOLVED,
    VERDICTS,
    WORSE,
    Estimate,
    holm,
    judge,
    paired_estimate,
)
from vitcore.stats.families import family_of, neighbours, runs_of  # noqa: F401 (re-exported)
from vitcore.stats.plan import LEAD_COLUMNS, NEEDS_COLUMNS, said
from vitcore.stats.readings import READING_COLUMNS
from vitcore.stats.records import Measurement
from vitcore.stats.testset import TEST_COLUMNS, TestSet, seed_columns, with_differences


def reference(base: RunConfig | None = None) -> dict:
    """The reference level of each factorial switch: base's (default: the article's ViT: learned, pre, layer, 7)."""
    return {name: getattr(base or RunConfig(), name) for name in SWITCHES}


def centre(base: RunConfig | None) -> RunConfig | None:
    """base as a centre of effects (its rows and random seed not used), or None when that is the article's ViT."""
    if base is None or base.replace(train_rows=RunConfig().train_rows, seed=0) == RunConfig():
        return None
    return base.replace(train_rows=RunConfig().train_rows, seed=0)


def around(base: RunConfig | None) -> str:
    """What a family of effects around base adds to its name: nothing around the article's ViT."""
    return "" if centre(base) is None else f" around {base.label()}"


REFERENCE = reference()
# Fields that must sit at the article's defaults for a ViT run to enter main_effects/interactions.
FIXED = ("width", "depth", "heads", "mlp_dim", "epochs", "batch_size", "lr", "warmup_epochs")
NON_FACTORS = tuple(name for name in switches.NAMES if name not in SWITCHES and name not in FIXED)
CONFIG_COLUMNS = [name for name in RunConfig.__dataclass_fields__ if name != "seed"]
NOTES = seconds.NOTE_COLUMNS  # a seconds row's words: why it has no verdict, and that the counted work is the same
EFFECT_COLUMNS = ["factor", "level", "reference", "train_rows", "metric", "mean_delta", "n_pairs",
                  *JUDGEMENT_COLUMNS, "cells", "timing_group", *NOTES, *TEST_COLUMNS, *READING_COLUMNS]
INTERACTION_COLUMNS = ["factor", "level", "reference", "factor_b", "level_b", "reference_b", "train_rows", "metric",
                       "mean_delta", "n_pairs", *JUDGEMENT_COLUMNS, "timing_group", *NOTES, *TEST_COLUMNS,
                       *READING_COLUMNS]
FLIP_COLUMNS = ["switch", "from", "to", "metric", "mean_delta", "n_pairs", *JUDGEMENT_COLUMNS, "timing_group", *NOTES,
                *TEST_COLUMNS, *READING_COLUMNS, "variant_config_id",
                *LEAD_COLUMNS, *NEEDS_COLUMNS]


def summarize(runs: pd.DataFrame, metrics=METRICS) -> pd.DataFrame:
    """One row per config_id: config columns, label, n (seeds) and {m}_mean/_std/_ci_low/_ci_high.

    Grouped by config_id, not by the config columns, because ViT-only fields are None on convnet
    rows and groupby would silently drop them. std and the interval are NaN when n < 2.
    """
    keep = ["config_id", "label", *[c for c in CONFIG_COLUMNS if c in runs.columns]]
    out = runs.drop_duplicates("config_id")[keep].set_index("config_id")
    groups = runs.groupby("config_id", sort=False)
    out["n"] = groups.size()
    for metric in metrics:
        mean, std, count = (groups[metric].agg(how) for how in ("mean", "std", "count"))
        half = stats.t.ppf(0.5 + CONFIDENCE / 2, (count - 1).where(count >= 2)) * std / np.sqrt(count)
        out[f"{metric}_mean"], out[f"{metric}_std"] = mean, std.where(count >= 2)
        out[f"{metric}_ci_low"], out[f"{metric}_ci_high"] = mean - half, mean + half
    return out.reset_index()


def random_seed_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """The runs whose data sample, initial weights and batch order all come from the random seed (no
    data/init/order seed set): the only runs a table keyed by (config fields, seed) may hold."""
    columns = [name for name in SEED_FIELDS if name in runs.columns]
    return runs[runs[columns].isna().all(axis=1)] if columns else runs


def factorial_runs(runs: pd.DataFrame, base: RunConfig | None = None) -> pd.DataFrame:
    """The ViT runs that enter main effects: warm-up 0, every non-switch field and every switch
    outside the factorial (the papers' pooling, tokenizer, self-attention) at the article's default
    (or at `base`'s: your own study's centre), data sample, init and batch order from the random seed.
    (A class-token run would otherwise be averaged into the article's ViT's cell, which has no column
    for its pooling.)"""
    default = base or RunConfig()
    vit = random_seed_runs(runs[runs["model"] == "vit"])
    for name in (*FIXED, *(field for field in NON_FACTORS if field in vit.columns)):
        vit = vit[vit[name] == getattr(default, name)]
    return vit.astype({"patch_size": int})


def _contrast(vit: pd.DataFrame, weights: dict[tuple, int], factors: tuple[str, ...], metric: str,
              test_set: TestSet | None = None) -> dict[int, tuple[Estimate, dict]]:
    """For each train_rows: (the Estimate over seeds of each random seed's mean contrast across other-switch
    cells, its TEST_COLUMNS). For a metric with a test-set term (its registry entry's `test_set`: test
    accuracy's) with a `test_set` and every run's predictions, the interval includes the test set's sampling
    (each seed's per-image contrast, vitcore.stats.testset).

    weights maps a tuple of levels of `factors` to +1/-1 (main effect: {(L,): +1, (ref,): -1}).
    A cell (one combination of the other switches) contributes only where every weighted level
    was run; the cell x seed table is then cut to the seeds paired in every cell (see _balanced) so each
    seed averages over the same cells, each weighted alike, and the interval is over seeds: n_pairs = number of
    seeds.
    """
    if vit.empty:  # no ViT run of the factorial (an empty or convnet-only store): nothing to pivot, no contrast
        return {}
    others = [s for s in SWITCHES if s not in factors]
    wide = vit.pivot_table(index=["train_rows", *others, "seed"], columns=list(factors), values=metric, aggfunc="mean")
    result = {}
    if not all(level in wide.columns for level in weights):
        return result
    contrast = sum(sign * wide[level] for level, sign in weights.items()).dropna()
    ids = None
    if has_test_set(metric) and test_set is not None:
        table_ids = vit.pivot_table(index=["train_rows", *others, "seed"], columns=list(factors), values="run_id",
                                    aggfunc="first")
        # ids[(train_rows, *cell, seed)][level]: the run id as table_ids.loc gives it, read from dictionaries (one
        # .loc per run and seed was most of a main effect's time)
        ids = {key: dict(zip(table_ids.columns, row))
               for key, row in zip(table_ids.index, table_ids.to_numpy(object, na_value=np.nan))}
    spread = wide[list(weights)].groupby(level=list(range(wide.index.nlevels - 1)))  # per config, over seeds
    for rows, part in contrast.groupby(level="train_rows"):
        table = part.droplevel("train_rows").unstack("seed")  # rows: cells of the other switches, columns: seeds
        table = _balanced(table)
        if len(table.index) and not len(table.columns):  # no random seed paired in every cell: no balanced mean
            est = paired_estimate([])
            result[rows] = est, {**seed_columns(est), **readings.spread_columns(metric, [], np.nan)}
        elif table.size:
            est = paired_estimate(table.mean(axis=0))
            diffs = None if ids is None else test_set.combinations(
                [[(ids[(rows, *_cell(cell), seed)][level], sign / len(table.index))
                  for cell in table.index for level, sign in weights.items()] for seed in table.columns])
            est, columns = (est, seed_columns(est)) if ids is None else with_differences(est, diffs, test_set.labels)
            columns.update(readings.spread_columns(metric, table.mean(axis=0), _run_sd(spread, rows, table.index)))
            result[rows] = est, columns
    return result


def _run_sd(spread, rows: int, cells: pd.Index) -> float:
    """One run's seed-to-seed sd, pooled over the configs (cell × weighted level) behind a contrast at `rows`;
    `spread`: the contrast's groupby of every config (all index levels but the random seed)."""
    variances, counts = (frame.xs(rows, level=0).reindex(cells) for frame in (spread.var(), spread.count()))
    return readings.pooled_sd(variances.to_numpy().ravel(), counts.to_numpy().ravel())


def _cell(cell) -> tuple:
    return cell if isinstance(cell, tuple) else (cell,)


def _balanced(table: pd.DataFrame) -> pd.DataFrame:
    """A cell x seed table cut to the random seeds paired in every one of its cells (a sweep in progress adds some
    cells' seeds first), so each seed's mean weighs every cell alike and n counts those seeds; no cell is dropped
    (a single cell with 80 seeds never stands for eight cells with 10: the mean is over all of them or none).
    On a full grid it changes nothing."""
    return table.dropna(axis=1) if len(table.index) else table


def _seconds_runs(vit: pd.DataFrame, metric: str) -> tuple[pd.DataFrame, str]:
    """For seconds, only the reference group of runs timed the same way enters a contrast (named;
    vitcore.stats.seconds: the largest clean group, not one timed under load)."""
    if metric != "seconds" or "timing_group" not in vit.columns or vit.empty:
        return vit, ""
    return seconds.one_group(vit)


def measure_main_effects(runs: pd.DataFrame, metrics=METRICS, test_set: TestSet | None = None,
                         base: RunConfig | None = None, plans=()) -> MeasuredEffects:
    """Each switch's non-reference level minus the reference level (the article's ViT, or `base`: the centre of
    your own study, e.g. every config at 5 epochs), per train_rows, before any margin (main_effects judges them).

    The delta is taken within each cell of the other three switches, at the same train_rows and
    random seed, then averaged over those cells within each seed; the t-interval is over seeds, so
    n_pairs counts seeds (conservative: cells of one seed share its data sample). Only the cells
    where both levels were run count, so patch 2 (run only at the article's other switches, by the
    `tokens` grid) is an effect at the reference cell, not an average over the grid: `cells` says
    how many cells of the other switches entered, and a one-cell effect is judged as the
    single-switch change it is (single_measurement). The others are one family per metric and train_rows
    ("main effects at 4,000 rows"), Bonferroni-adjusted. `plans`: the plans that may judge a one-cell effect, in
    lead order (families.family_of; vitcore.study.Study passes its store's).
    """
    vit, entries, refs = factorial_runs(runs, base), [], reference(base)
    for factor in SWITCHES:
        ref = refs[factor]
        for level in LEVELS[factor]:
            if level == ref:
                continue
            for metric in metrics:
                part, group = _seconds_runs(vit, metric)
                for train_rows, (est, columns) in _contrast(part, {level: 1, ref: -1}, (factor,), metric,
                                                            test_set).items():
                    cells = _cells(vit, factor, level, train_rows)
                    key = dict(zip(EFFECT_COLUMNS, [factor, level, ref, train_rows, metric]))
                    if cells == 1:
                        entries.append(({**key, "cells": 1}, single_measurement(runs, factor, level, train_rows,
                                                                                metric, test_set, base, plans), False))
                    else:
                        entries.append(({**key, "mean_delta": est.mean, "n_pairs": est.n, "cells": cells,
                                         "timing_group": group}, (est, columns), in_grid({factor: level})))
    entries += [(key, measured, False) for key, measured in one_field_effects(runs, metrics, test_set, base, plans)]
    return MeasuredEffects("main effects", tuple(EFFECT_COLUMNS), tuple(entries), around(base))


def main_effects(runs: pd.DataFrame, metrics=METRICS, margin: float = MARGIN, test_set: TestSet | None = None,
                 base: RunConfig | None = None, plans=()) -> pd.DataFrame:
    """measure_main_effects judged at `margin` (one row per effect, EFFECT_COLUMNS)."""
    return measure_main_effects(runs, metrics, test_set, base, plans).judged(margin)


def _cells(vit: pd.DataFrame, factor: str, level, train_rows: int) -> int:
    """How many cells of the other switches have runs at this level (1 = a single-cell effect)."""
    others = [s for s in SWITCHES if s != factor]
    part = vit[(vit[factor] == level) & (vit["train_rows"] == train_rows)]
    return int(part.drop_duplicates(others).shape[0])


def measure_interactions(runs: pd.DataFrame, metrics=METRICS, test_set: TestSet | None = None,
                         base: RunConfig | None = None) -> MeasuredEffects:
    """2-way interactions before any margin: [Y(a, b) - Y(ref_a, b)] - [Y(a, ref_b) - Y(ref_a, ref_b)], a
    difference of differences; unit and averaging as in measure_main_effects, one family per metric and
    train_rows ("interactions at 4,000 rows"). "better" means the pair does better together than their two
    main effects added up (in the metric's good direction). Around `base` when given, as measure_main_effects."""
    vit, entries, refs = factorial_runs(runs, base), [], reference(base)
    for factor_a, factor_b in itertools.combinations(SWITCHES, 2):
        ref_a, ref_b = refs[factor_a], refs[factor_b]
        for a, b in itertools.product(LEVELS[factor_a], LEVELS[factor_b]):
            if a == ref_a or b == ref_b:
                continue
            weights = {(a, b): 1, (ref_a, b): -1, (a, ref_b): -1, (ref_a, ref_b): 1}
            for metric in metrics:
                part, group = _seconds_runs(vit, metric)
                for train_rows, (est, columns) in _contrast(part, weights, (factor_a, factor_b), metric,
                                                            test_set).items():
                    key = dict(zip(INTERACTION_COLUMNS, [factor_a, a, ref_a, factor_b, b, ref_b, train_rows, metric,
                                                         est.mean, est.n]))
                    entries.append(({**key, "timing_group": group}, (est, columns),
                                    in_grid({factor_a: a, factor_b: b})))
    return MeasuredEffects("interactions", tuple(INTERACTION_COLUMNS), tuple(entries), around(base))


def interactions(runs: pd.DataFrame, metrics=METRICS, margin: float = MARGIN, test_set: TestSet | None = None,
                 base: RunConfig | None = None) -> pd.DataFrame:
    """measure_interactions judged at `margin` (one row per interaction, INTERACTION_COLUMNS)."""
    return measure_interactions(runs, metrics, test_set, base).judged(margin)


def flip_effects(runs: pd.DataFrame, cfg: RunConfig, metrics=METRICS, margin: float = MARGIN,
                 test_set: TestSet | None = None, timing: pd.DataFrame | None = None, plans=()) -> pd.DataFrame:
    """The "flip one switch" table: cfg vs cfg with one switch changed, seed-paired at cfg.train_rows.

    Switches: the four ViT switches (none apply to the convnet) plus warmup_epochs, whose other
    values are taken from the runs (the `warmup` grid). A row appears only if the flipped config
    has runs; "better" means the flipped config is better than cfg. Each row is judged in the
    family of its single-switch change (families.family_of), so it reads as on the card; `timing` (the dedicated
    timing set) joins the seconds (compare.metric_runs); `plans`: the plans that may judge a row, in lead order.
    """
    base = runs_of(runs, cfg)
    if base.empty or cfg.model != "vit":
        return pd.DataFrame(columns=FLIP_COLUMNS)
    rows, over = [], {metric: metric_runs(runs, metric, timing) for metric in metrics}  # as compare.measure
    frames = {id(frame): frame for frame in over.values()}  # metrics share a table: each config's runs cut once
    mine = {key: runs_of(frame, cfg) for key, frame in frames.items()}
    for switch, level, flipped in neighbours(runs, cfg):
        family = family_of(runs, cfg, flipped, plans)
        theirs = {key: runs_of(frame, flipped) for key, frame in frames.items()}
        for metric in metrics:
            delta = paired_delta(mine[id(over[metric])], theirs[id(over[metric])], metric, margin, family,
                                 test_set, (cfg, flipped))
            rows.append({"switch": switch, "from": getattr(cfg, switch), "to": level, **delta.row,
                         **said(delta.row), "variant_config_id": flipped.config_id})  # said: what it still needs
    return pd.DataFrame(rows, columns=FLIP_COLUMNS).assign(**dict.fromkeys(LEAD_COLUMNS, ""))  # the Study fills them


# One-cell effects: a switch changed alone around the article's ViT, read as the single-switch comparison it
# is (its paired Δ, family and verdict, as on the forest plot and the cards), for vitcore.stats.summaries'
# main effects. No TensorFlow, no Streamlit.

KEY = ["factor", "level", "reference", "train_rows", "metric"]  # the first columns of an effects.csv row


def single_measurement(runs: pd.DataFrame, factor: str, level, train_rows: int, metric: str,
                       test_set: TestSet | None, base: RunConfig | None = None, plans=()) -> Measurement:
    """A main effect measured in one cell only is the single-switch change of the article's ViT (or of `base`,
    your own study's centre): its Measurement (before any margin), in that comparison's family (judged by the first
    of `plans` that asks it: families.family_of), as on the forest plot and the cards."""
    ref = (base or RunConfig()).replace(train_rows=train_rows, seed=0)
    variant = ref.replace(**{factor: level})
    return measure(runs, variant, ref, metric, family_of(runs, variant, ref, plans), test_set)


def single_cell(runs: pd.DataFrame, factor: str, level, train_rows: int, metric: str, margin: float,
                test_set: TestSet | None) -> dict:
    """single_measurement judged at `margin`: its row (numbers, family, verdict), as on the forest plot."""
    return single_measurement(runs, factor, level, train_rows, metric, test_set).judged(margin).row()


def one_field_effects(runs: pd.DataFrame, metrics, test_set: TestSet | None,
                      base: RunConfig | None = None, plans=()) -> list[tuple[dict, Measurement]]:
    """Every switch outside the factorial (the papers'; width, depth, ..., warm-up) changed alone around the
    article's ViT (or `base`) at each train_rows stored: (its effects.csv key, its single_measurement), one-cell
    effects judged as the single-switch change they are, as on the forest plot. Your own `sweep --vary
    depth=1,2,4` lands here (`--base epochs=5` too, with the same base)."""
    records = []
    for train_rows in sorted(int(rows) for rows in runs["train_rows"].unique()) if len(runs) else []:
        ref = (base or RunConfig()).replace(train_rows=train_rows, seed=0)
        for factor, level, _ in neighbours(runs, ref) if len(runs_of(runs, ref)) else []:
            if factor in SWITCHES:
                continue
            for metric in metrics:
                key = dict(zip(KEY, [factor, level, getattr(ref, factor), train_rows, metric]))
                records.append(({**key, "cells": 1}, single_measurement(runs, factor, level, train_rows, metric,
                                                                         test_set, base, plans)))
    return records


# Main effects and interactions before and after a margin: MeasuredEffects holds every row's estimate once
# (vitcore.stats.summaries measures them), and judges them at any margin in their family — one per metric and
# train_rows, sized by the default factorial's declared grid (declared_size), never by what is stored.
# No TensorFlow.


def declared_size(kind: str) -> int:
    """m of the default factorial's main effects (each grid switch's other grid levels: 5 today) or of its
    2-way interactions (products of those counts over switch pairs: 9), from the registry, not the store."""
    others = [len(switches.SWITCH[name].grid) - 1 for name in SWITCHES]
    return sum(others) if kind == "main effects" else sum(a * b for a, b in itertools.combinations(others, 2))


def in_grid(levels: dict) -> bool:
    """Whether every level of a contrast ({switch: level}) is one of its switch's grid levels."""
    return all(level in switches.SWITCH[name].grid for name, level in levels.items())


def judge_rows(frame: pd.DataFrame, estimates: list[tuple[Estimate, dict]], margin: float, kind: str,
            declared: list[bool], around: str = "") -> pd.DataFrame:
    """Judge every row (both tests, the verdict) within its family: `kind` of one metric at one
    train_rows ("main effects at 4,000 rows"; your own study's centre named: "main effects around ViT ...
    epochs 5 at 4,000 rows"), m = declared_size(kind) for the grid's contrasts (`declared`), a contrast at a
    level outside the grid alone."""
    families = [(f"{kind}{around} at {rows:,} rows", declared_size(kind)) if grid else
                (f"{kind}{around} at {rows:,} rows outside the default factorial (this contrast alone)", 1)
                for rows, grid in zip(frame["train_rows"], declared)]
    judged = []
    for metric, group, (est, columns), (name, size) in zip(frame["metric"], frame["timing_group"], estimates, families):
        said = seconds.notes(metric, group, est.n)  # an effect averages cells: no two configs' counted work to say
        verdict = judge(metric, est, margin, name, size, comparable=not said["timing_note"])
        judged.append({**verdict, **said, **columns, **readings.verdict_columns(metric, est, verdict, columns)})
    return pd.concat([frame.reset_index(drop=True),
                      pd.DataFrame(judged, columns=JUDGEMENT_COLUMNS + NOTES + TEST_COLUMNS + READING_COLUMNS)], axis=1)


@dataclass(frozen=True)
class MeasuredEffects:
    """Main effects or interactions before any margin (as records.Measurement is for one contrast): each row's
    key and numbers with what judges it — a grid contrast's (Estimate, its columns) and whether its level is in
    the declared grid, or a one-cell effect's Measurement. `judged(margin)` is the cheap last step, so the
    effects at three margins cost one set of estimates."""
    kind: str        # "main effects" or "interactions": the family's name
    columns: tuple   # EFFECT_COLUMNS or INTERACTION_COLUMNS
    entries: tuple   # (key: dict, Measurement | (Estimate, columns), in the declared grid: bool)
    around: str = ""  # the centre of your own study, in the family's name (summaries.around): "" for the article's

    def judged(self, margin: float = MARGIN) -> pd.DataFrame:
        """Every row judged at `margin`: a grid contrast in its family (judge_rows), a one-cell effect as the
        single-switch change it is."""
        if not self.entries:
            return pd.DataFrame(columns=list(self.columns))
        records = [dict(key) for key, _, _ in self.entries]
        pending = [k for k, (_, what, _) in enumerate(self.entries) if not isinstance(what, Measurement)]
        for record, (_, what, _) in zip(records, self.entries):
            if isinstance(what, Measurement):
                record.update(what.judged(margin).row())
        if pending:
            keys = pd.DataFrame([records[k] for k in pending])[["metric", "train_rows", "timing_group"]]
            judged = judge_rows(keys, [self.entries[k][1] for k in pending], margin, self.kind,
                             [self.entries[k][2] for k in pending], self.around)
            columns = JUDGEMENT_COLUMNS + NOTES + TEST_COLUMNS + READING_COLUMNS
            for k, verdict in zip(pending, judged[columns].to_dict("records")):
                records[k].update(verdict)
        return pd.DataFrame(records, columns=list(self.columns))
