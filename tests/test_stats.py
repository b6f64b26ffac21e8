"""vitcore.stats.summaries on synthetic runs tables with planted effects (no TensorFlow, no training)."""

from __future__ import annotations

import itertools
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from fakes import run_row
from fakes import runs_table as table
from scipy import stats as scipy_stats

from vitcore.config.run import RunConfig
from vitcore.stats import summaries as stats
from vitcore.stats.estimates import BETTER, EQUIVALENT, INCONCLUSIVE, TOO_FEW, WORSE

BASE = 0.80


def factorial(effect=lambda cfg: 0.0, seeds=(0, 1, 2), rows=(1000, 4000), sd=0.005, rng_seed=1) -> pd.DataFrame:
    """The `default` grid (24 ViT configs + convnet) with accuracy = BASE + effect(cfg) + seed shift + noise."""
    rng = np.random.default_rng(rng_seed)
    out = []
    configs = [RunConfig(pos_embedding=p, norm_placement=q, norm=n, patch_size=s)
               for p, q, n, s in itertools.product(("learned", "none"), ("pre", "post"), ("layer", "batch"),
                                                   (4, 7, 14))]
    for cfg, train_rows, seed in itertools.product([*configs, RunConfig(model="convnet")], rows, seeds):
        cfg = cfg.replace(train_rows=train_rows, seed=seed)
        value = BASE + effect(cfg) + 0.01 * seed + rng.normal(0, sd)
        out.append(run_row(cfg, test_accuracy=value, best_val_accuracy=value, gap=0.1 + rng.normal(0, sd)))
    return table(out)


def pair_frames(effect: float, sd: float, seeds=range(5), rng_seed=0):
    rng = np.random.default_rng(rng_seed)
    base = [run_row(RunConfig(seed=s), test_accuracy=BASE + 0.02 * s + rng.normal(0, sd)) for s in seeds]
    variant = [run_row(RunConfig(norm="batch", seed=s), test_accuracy=BASE + 0.02 * s + effect + rng.normal(0, sd))
               for s in seeds]
    return table(base), table(variant)


def test_planted_effect_is_better():
    delta = stats.paired_delta(*pair_frames(0.05, 0.005), "test_accuracy")
    assert delta.verdict == BETTER
    assert delta.n_pairs == 5 and delta.ci_low > 0.04 and abs(delta.mean_delta - 0.05) < 0.01
    expected = scipy_stats.ttest_1samp(delta.pairs["delta"], 0).confidence_interval(0.95)
    assert (delta.ci_low, delta.ci_high) == pytest.approx((expected.low, expected.high))


def test_negative_effect_is_worse_and_lower_is_better_for_gap():
    base, variant = pair_frames(-0.05, 0.005)
    assert stats.paired_delta(base, variant, "test_accuracy").verdict == WORSE
    variant = variant.assign(gap=base["gap"].to_numpy() - 0.05 + np.linspace(-0.002, 0.002, len(base)))
    assert stats.paired_delta(base, variant, "gap").verdict == BETTER  # a smaller gap is better
    assert stats.paired_delta(variant, base, "gap").verdict == WORSE


def test_zero_effect_is_equivalent_or_inconclusive_by_the_margin():
    delta = stats.paired_delta(*pair_frames(0.0, 0.005), "test_accuracy")
    assert delta.ci_low < 0 < delta.ci_high
    assert delta.verdict == EQUIVALENT  # the 90% CI sits inside +-0.01
    wide = stats.paired_delta(*pair_frames(0.0, 0.005), "test_accuracy", margin=0.001)
    assert wide.verdict == INCONCLUSIVE and wide.seeds_needed > wide.n_pairs


def test_pairing_removes_the_seed_shift():
    # the seed shift (0.02 per seed) is 4x the effect; unpaired, the interval would straddle 0
    base, variant = pair_frames(0.01, 0.001)
    delta = stats.paired_delta(base, variant, "test_accuracy")
    assert delta.verdict == BETTER
    assert np.allclose(delta.pairs["delta"], 0.01, atol=0.005)


def test_unpaired_seeds_are_not_paired():
    base, variant = pair_frames(0.05, 0.005, seeds=range(4))
    variant = variant[variant["seed"] >= 2]
    base = base[base["seed"] <= 2]
    delta = stats.paired_delta(base, variant, "test_accuracy")
    assert delta.n_pairs == 1 and list(delta.pairs["seed"]) == [2]
    other_size = variant.assign(train_rows=1000)  # same seeds, different train_rows: no pairs at all
    assert stats.paired_delta(base, other_size, "test_accuracy").n_pairs == 0


def test_one_pair_gives_no_interval():
    delta = stats.paired_delta(*pair_frames(0.05, 0.005, seeds=[0]), "test_accuracy")
    assert delta.n_pairs == 1 and np.isnan(delta.ci_low) and np.isnan(delta.ci_high)
    assert delta.verdict == TOO_FEW
    assert not np.isnan(delta.mean_delta)


def test_ambiguous_frames_raise():
    base, variant = pair_frames(0.05, 0.005)
    with pytest.raises(ValueError, match="one config"):
        stats.paired_delta(pd.concat([base, variant]), variant, "test_accuracy")


def test_summarize_intervals_and_convnet_row():
    runs = factorial(seeds=(0, 1, 2))
    runs = runs[(runs["train_rows"] == 4000)]
    single = table([run_row(RunConfig(depth=3, seed=0))])
    summary = stats.summarize(pd.concat([runs, single], ignore_index=True))
    assert len(summary) == 26 and set(summary["n"]) == {3, 1}
    convnet = summary[summary["model"] == "convnet"].iloc[0]
    values = runs[runs["model"] == "convnet"]["test_accuracy"]
    low, high = scipy_stats.t.interval(0.95, 2, loc=values.mean(), scale=values.sem())
    assert convnet["test_accuracy_ci_low"] == pytest.approx(low)
    assert convnet["test_accuracy_ci_high"] == pytest.approx(high)
    lone = summary[summary["n"] == 1].iloc[0]
    assert np.isnan(lone["test_accuracy_ci_low"]) and np.isnan(lone["test_accuracy_std"])
    assert {"label", "config_id", "patch_size", "test_accuracy_mean", "seconds_ci_high"} <= set(summary.columns)


def test_main_effects_recover_a_planted_effect_only_for_its_factor():
    runs = factorial(lambda cfg: 0.05 if cfg.model == "vit" and cfg.norm == "batch" else 0.0)
    effects = stats.main_effects(runs)
    assert list(effects.columns) == stats.EFFECT_COLUMNS
    acc = effects[effects["metric"] == "test_accuracy"].set_index(["factor", "level", "train_rows"])
    for rows in (1000, 4000):
        assert acc.loc[("norm", "batch", rows), "verdict"] == BETTER
        assert acc.loc[("norm", "batch", rows), "mean_delta"] == pytest.approx(0.05, abs=0.005)
        assert acc.loc[("norm", "batch", rows), "n_pairs"] == 3  # the unit is the seed
    others = acc.drop(index="norm", level="factor")
    # not "all inconclusive": at 95% one in twenty null effects is flagged by design; the
    # planted +0.05 must stand ten times above every null effect
    assert (others["mean_delta"].abs() < 0.005).all()
    assert set(others.index.get_level_values("factor")) == {"pos_embedding", "norm_placement", "patch_size"}
    assert set(acc.loc["patch_size"].index.get_level_values("level")) == {4, 14}


def test_main_effects_ignore_runs_outside_the_factorial():
    runs = factorial(lambda cfg: 0.0)
    noisy = [run_row(RunConfig(norm="batch", warmup_epochs=2, seed=s), test_accuracy=0.2) for s in (0, 1, 2)]
    noisy += [run_row(RunConfig(norm="batch", depth=3, seed=s), test_accuracy=0.2) for s in (0, 1, 2)]
    effects = stats.main_effects(pd.concat([runs, table(noisy)], ignore_index=True))
    assert (effects.loc[effects["metric"] == "test_accuracy", "mean_delta"].abs() < 0.005).all()  # 0.2 would be -0.6


def test_interaction_is_found_where_planted():
    # pos none hurts only at post-norm: main effects of both, plus an interaction of pos x placement
    runs = factorial(lambda cfg: -0.06 if cfg.pos_embedding == "none" and cfg.norm_placement == "post" else 0.0)
    inter = stats.interactions(runs)
    acc = inter[inter["metric"] == "test_accuracy"].set_index(["factor", "level", "factor_b", "level_b", "train_rows"])
    assert acc.loc[("pos_embedding", "none", "norm_placement", "post", 4000), "verdict"] == WORSE
    both = acc.loc[("pos_embedding", "none", "norm_placement", "post", 4000), "mean_delta"]
    assert both == pytest.approx(-0.06, abs=0.01)
    others = acc.sort_index().drop(index=("pos_embedding", "none", "norm_placement", "post"))
    assert len(others) == 16 and (others["mean_delta"].abs() < 0.01).all()


def test_partial_sweep_is_balanced_not_mixed():
    # seed 2 has only the reference-cell pair: it must not enter as a seed averaged over 1 cell
    runs = factorial(lambda cfg: 0.05 if cfg.norm == "batch" else 0.0, rows=(4000,))
    keep = (runs["seed"] < 2) | ((runs["pos_embedding"] == "learned") & (runs["norm_placement"] == "pre")
                                 & (runs["patch_size"] == 7))
    effects = stats.main_effects(runs[keep])
    row = effects[(effects["factor"] == "norm") & (effects["metric"] == "test_accuracy")].iloc[0]
    assert row["n_pairs"] == 2 and row["verdict"] == BETTER


def test_a_main_effect_weighs_every_cell_alike_on_the_seeds_they_share():
    """Patch 4 against 7 at 1,000 rows on the committed store: one cell (the article's ViT's) held 80 random seeds,
    the other seven 10; the 1 x 80 table tied the 8 x 10 one and was kept, so the "main effect over 8 cells" was one
    cell's Δ. The effect is the mean over the seeds paired in every cell, each cell weighted alike, n those seeds."""
    effect = {("learned", "pre", "layer"): 0.0}  # the reference cell: no effect there, -0.2 everywhere else
    runs = factorial(lambda cfg: 0.0 if cfg.patch_size != 4 else
                     effect.get((cfg.pos_embedding, cfg.norm_placement, cfg.norm), -0.2), seeds=range(10),
                     rows=(1000,), sd=0.002)
    extra = table([run_row(RunConfig(train_rows=1000, patch_size=size, seed=seed), test_accuracy=BASE + 0.01 * seed)
                   for size in (4, 7) for seed in range(10, 80)])  # 70 more seeds of the reference cell alone
    effects = stats.main_effects(pd.concat([runs, extra], ignore_index=True), metrics=["test_accuracy"])
    row = effects[(effects["factor"] == "patch_size") & (effects["level"] == 4)].iloc[0]
    assert row["cells"] == 8 and row["n_pairs"] == 10
    assert row["mean_delta"] == pytest.approx(-0.2 * 7 / 8, abs=0.003) and row["verdict"] == WORSE


def test_a_main_effect_with_no_seed_in_every_cell_says_too_few_seeds():
    """Cells measured on disjoint random seeds share none: no balanced mean exists, and the row says so."""
    runs = factorial(lambda cfg: 0.0, seeds=range(4), rows=(1000,))
    keep = (runs["seed"] < 2) == (runs["norm"] == "layer")  # LayerNorm cells on seeds 0-1, BatchNorm on 2-3
    effects = stats.main_effects(runs[keep | (runs["model"] == "convnet")], metrics=["test_accuracy"])
    row = effects[(effects["factor"] == "patch_size") & (effects["level"] == 4)].iloc[0]
    assert row["n_pairs"] == 0 and row["verdict"] == TOO_FEW


def test_flip_effects_and_runs_of():
    runs = factorial(lambda cfg: 0.05 if cfg.model == "vit" and cfg.patch_size == 4 else 0.0, rows=(4000,))
    cfg = RunConfig()
    assert len(stats.runs_of(runs, cfg)) == 3
    flips = stats.flip_effects(runs, cfg)
    assert list(flips.columns) == stats.FLIP_COLUMNS
    acc = flips[flips["metric"] == "test_accuracy"].set_index(["switch", "to"])
    assert set(acc.index) == {("pos_embedding", "none"), ("norm_placement", "post"), ("norm", "batch"),
                              ("patch_size", 4), ("patch_size", 14)}  # no patch 2: it has no runs
    # test accuracy of the article's ViT's single-switch changes is planned: 3 random seeds wait for the first look
    assert acc.loc[("patch_size", 4), "verdict"] == INCONCLUSIVE and acc.loc[("patch_size", 4), "look"] == 0
    assert acc.loc[("patch_size", 4), "seeds_more"] == 7
    val = flips[flips["metric"] == "best_val_accuracy"].set_index(["switch", "to"])  # fixed sample: decided now
    assert val.loc[("patch_size", 4), "verdict"] == BETTER and val.loc[("patch_size", 4), "family_size"] == 3
    assert acc.loc[("patch_size", 4), "variant_config_id"] == cfg.replace(patch_size=4).config_id
    assert stats.flip_effects(runs, RunConfig(model="convnet")).empty
    assert stats.flip_effects(runs, RunConfig(train_rows=1000)).empty  # cfg itself has no runs


def confusion_frame(matrices: dict[str, np.ndarray]) -> pd.DataFrame:
    true, predicted = np.divmod(np.arange(100), 10)
    return pd.concat([pd.DataFrame({"run_id": run_id, "true": true, "predicted": predicted, "count": m.ravel()})
                      for run_id, m in matrices.items()], ignore_index=True)


@pytest.mark.slow
def test_stats_and_report_do_not_import_tensorflow():
    code = "import sys, vitcore.stats.summaries, vitcore.article.report; print('tensorflow' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_empty_and_convnet_only_tables_give_empty_frames():
    for runs in (table([]), table([run_row(RunConfig(model="convnet", seed=s)) for s in (0, 1)])):
        assert list(stats.main_effects(runs).columns) == stats.EFFECT_COLUMNS and stats.main_effects(runs).empty
        assert stats.interactions(runs).empty
        assert stats.flip_effects(runs, RunConfig()).empty
    assert stats.summarize(table([])).empty


def test_final_train_accuracy_gets_neutral_words():
    up, down = stats.paired_estimate([0.02, 0.03, 0.025]), stats.paired_estimate([-0.02, -0.03, -0.025])
    assert stats.judge("final_train_accuracy", up)["verdict"] == stats.HIGHER
    assert stats.judge("final_train_accuracy", down)["verdict"] == stats.LOWER
    assert stats.judge("test_accuracy", down)["verdict"] == stats.WORSE
    assert stats.judge("gap", down)["verdict"] == stats.BETTER
