"""The comparison engine against independent recomputations (plain Python, scipy's t quantile)."""

import math

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT
from fakes import run_row, runs_table
from scipy import stats as sp

from vitcore.config.environment import timing_path
from vitcore.config.run import RunConfig
from vitcore.config.switches import REGISTRY
from vitcore.stats import compare
from vitcore.stats import estimates as verdicts
from vitcore.stats import summaries as stats
from vitcore.stats.estimates import BETTER
from vitcore.stats.families import neighbours, runs_of
from vitcore.store.runs import RunStore

BASE = RunConfig(train_rows=1000)
SEL = BASE.replace(norm="batch")


def confusion_long(run_id: str, matrix: np.ndarray) -> pd.DataFrame:
    true, predicted = np.divmod(np.arange(100), 10)
    return pd.DataFrame({"run_id": run_id, "true": true, "predicted": predicted, "count": matrix.ravel()})


def random_confusion(rng) -> np.ndarray:
    """Rows sum to 1,000; a random share of each row is correct."""
    matrix = rng.multinomial(100, [0.1] * 10, size=10) + np.diag(rng.integers(300, 800, size=10))
    return (matrix * 1000 / matrix.sum(axis=1, keepdims=True)).round().astype(int)


@pytest.fixture
def world():
    rng = np.random.default_rng(0)
    rows, frames, matrices = [], [], {}
    for cfg, seeds in ((BASE, range(5)), (SEL, range(3))):  # the baseline has 2 unpaired extra seeds
        for seed in seeds:
            run = cfg.replace(seed=seed)
            acc = 0.7 + 0.01 * seed + (0.02 if cfg is SEL else 0) + rng.normal(0, 0.003)
            rows.append(run_row(run, test_accuracy=acc, seconds=30.0 + seed, timing_group="g1"))
            matrices[(cfg is SEL, seed)] = random_confusion(rng)
            frames.append(confusion_long(run.run_id, matrices[(cfg is SEL, seed)]))
    runs = runs_table(rows).assign(timing_group=[r["timing_group"] for r in rows])
    return runs, pd.concat(frames, ignore_index=True), matrices


def test_per_class_delta_is_paired_seed_by_seed(world):
    runs, confusions, matrices = world
    result = compare.compare(runs, SEL, BASE, confusions=confusions)
    for k in range(10):  # recomputed here: per seed, selection minus baseline class-k accuracy
        deltas = [matrices[(True, s)][k, k] / matrices[(True, s)][k].sum()
                  - matrices[(False, s)][k, k] / matrices[(False, s)][k].sum() for s in range(3)]
        mean = sum(deltas) / 3
        sd = math.sqrt(sum((d - mean) ** 2 for d in deltas) / 2)
        half = sp.t.ppf(0.975, 2) * sd / math.sqrt(3)
        row = result.classes.iloc[k]
        assert row["n_pairs"] == 3
        assert row["mean_delta"] == pytest.approx(mean, abs=1e-12)
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((mean - half, mean + half), abs=1e-12)
    cell = result.confusion[(result.confusion["true"] == 2) & (result.confusion["predicted"] == 4)].iloc[0]
    expected = np.mean([matrices[(True, s)][2, 4] / matrices[(True, s)][2].sum()
                        - matrices[(False, s)][2, 4] / matrices[(False, s)][2].sum() for s in range(3)])
    assert cell["mean_delta"] == pytest.approx(expected, abs=1e-9) and cell["n_pairs"] == 3


def test_means_beside_a_delta_are_over_the_paired_seeds_only(world):
    runs, _, _ = world
    row = compare.compare(runs, SEL, BASE).metrics.set_index("metric").loc["test_accuracy"]
    base = runs[(runs["config_id"] == BASE.config_id) & (runs["seed"] < 3)]["test_accuracy"].mean()
    sel = runs[runs["config_id"] == SEL.config_id]["test_accuracy"].mean()
    assert row["baseline_mean"] == pytest.approx(base) and row["selection_mean"] == pytest.approx(sel)
    assert row["mean_delta"] == pytest.approx(sel - base) and row["n_pairs"] == 3 and row["paired"]
    assert compare.compare(runs, SEL, BASE).seeds == [0, 1, 2]


def test_other_train_rows_is_unpaired_and_says_so(world):
    runs, _, _ = world
    other = runs_table([run_row(BASE.replace(train_rows=4000, seed=s),
                                test_accuracy=0.8 + 0.004 * s ** 1.5) for s in range(4)])
    result = compare.compare(pd.concat([runs, other.assign(timing_group="g1")]), SEL, BASE.replace(train_rows=4000))
    row = result.metrics.set_index("metric").loc["test_accuracy"]
    assert not row["paired"] and row["n_pairs"] == 0
    welch = sp.ttest_ind(runs[runs["config_id"] == SEL.config_id]["test_accuracy"], other["test_accuracy"],
                         equal_var=False)
    assert row["p_value"] == pytest.approx(welch.pvalue)


def test_seconds_pair_only_within_a_timing_group(world):
    runs, _, _ = world
    runs = runs.copy()
    runs.loc[(runs["config_id"] == SEL.config_id) & (runs["seed"] > 0), "timing_group"] = "g2"
    row = compare.compare(runs, SEL, BASE).metrics.set_index("metric").loc["seconds"]
    assert row["n_pairs"] == 1 and row["verdict"] == verdicts.NOT_COMPARABLE


def test_seconds_see_a_timing_set_that_repeats_the_random_seeds(world):
    """A timing set (every seed of both configs again, in a group of its own) pairs within its group: its pairs
    win over the store's clean group and are never crossed with the store's runs of the same random seed;
    accuracy never sees it."""
    runs, _, _ = world
    both = runs[runs["seed"] < 3]
    timing = both.assign(timing_group="v3/reference", seconds=both["seconds"] + np.where(
        both["config_id"] == SEL.config_id, 5.0, 0.0), test_accuracy=0.0, run_id=both["run_id"] + "-t")
    sel = pd.concat([frame[frame["config_id"] == SEL.config_id] for frame in (runs, timing)])
    base = runs[runs["config_id"] == BASE.config_id]
    with pytest.raises(ValueError, match="several runs"):  # one run per random seed a side, but for seconds
        compare.pair_runs(base, sel, "test_accuracy")
    assert len(compare.pair_runs(base, sel, "seconds")) == 3  # the store's clean group g1: three pairs
    result = compare.compare(runs, SEL, BASE, timing=timing).metrics.set_index("metric")
    assert result.loc["seconds", "timing_group"] == "v3/reference" and result.loc["seconds", "n_pairs"] == 3
    assert result.loc["seconds", "mean_delta"] == pytest.approx(5.0)  # store pairs would give 0.0
    without = compare.compare(runs, SEL, BASE).metrics.set_index("metric")
    assert without.loc["seconds", "timing_group"] == "g1" and without.loc["seconds", "mean_delta"] == pytest.approx(0.0)
    assert result.loc["test_accuracy"].equals(without.loc["test_accuracy"])


@pytest.mark.parametrize("deltas, verdict", [
    ([0.001, -0.001, 0.002, 0.0, 0.001, -0.002], verdicts.EQUIVALENT),   # 90% CI well inside +-0.01
    ([0.05, 0.06, 0.055, 0.052], verdicts.BETTER),
    ([0.004, 0.0042, 0.0038, 0.0041, 0.0039, 0.004], verdicts.SLIGHTLY_BETTER),  # real, and inside +-0.01
    ([0.02, -0.03, 0.04, -0.01], verdicts.INCONCLUSIVE),
    ([0.03], verdicts.TOO_FEW),
])
def test_verdicts(deltas, verdict):
    est = verdicts.paired_estimate(deltas)
    judged = verdicts.judge("test_accuracy", est)
    assert judged["verdict"] == verdict
    if verdict == verdicts.INCONCLUSIVE:  # power-based, and more than the pairs already there
        assert judged["seeds_needed"] > len(deltas) and judged["seeds_more"] == judged["seeds_needed"] - len(deltas)
    else:
        assert math.isnan(judged["seeds_needed"])
    flipped = {verdicts.BETTER: verdicts.BETTER,
               verdicts.SLIGHTLY_BETTER: verdicts.SLIGHTLY_BETTER}.get(verdict, verdict)
    assert verdicts.judge("gap", verdicts.paired_estimate([-d for d in deltas]))["verdict"] == flipped  # lower gap
    neutral = {verdicts.BETTER: verdicts.HIGHER,
               verdicts.SLIGHTLY_BETTER: verdicts.SLIGHTLY_HIGHER}.get(verdict, verdict)
    assert verdicts.judge("final_train_accuracy", est)["verdict"] == neutral


def test_family_adjusts_both_tests_and_the_intervals_agree_with_the_verdict():
    est = verdicts.paired_estimate([0.012, 0.02, 0.008, 0.015, 0.01, 0.018])
    alone, family = verdicts.judge("test_accuracy", est), verdicts.judge("test_accuracy", est, family="f", size=9)
    assert family["p_adj"] == pytest.approx(min(1, 9 * alone["p_value"]))
    assert family["p_tost_adj"] == pytest.approx(min(1, 9 * alone["p_tost"]))
    for judged in (alone, family):  # the simultaneous interval excludes 0 exactly when the difference resolves
        resolved = judged["verdict"] in verdicts.RESOLVED
        assert resolved == (judged["ci_adj_low"] > 0 or judged["ci_adj_high"] < 0)
        inside = judged["verdict"] in (verdicts.EQUIVALENT, *verdicts.INSIDE)
        assert inside == (-0.01 < judged["ci90_adj_low"] and judged["ci90_adj_high"] < 0.01)
    assert family["ci_adj_high"] - family["ci_adj_low"] > alone["ci_high"] - alone["ci_low"]


def test_main_effects_are_one_bonferroni_family_per_metric_and_rows():
    rng = np.random.default_rng(1)
    rows = []
    for patch in (7, 4, 14):
        for norm in ("layer", "batch"):
            for seed in range(4):
                cfg = RunConfig(train_rows=1000, patch_size=patch, norm=norm, seed=seed)
                acc = 0.75 + (0.03 if norm == "batch" else 0) - (0.01 if patch == 4 else 0) + rng.normal(0, 0.01)
                rows.append(run_row(cfg, test_accuracy=acc))
    effects = stats.main_effects(runs_table(rows), metrics=("test_accuracy",))
    # the grid's main effects (5: its levels off the reference)
    declared = sum(len(s.grid) - 1 for s in REGISTRY if s.grid)
    assert len(effects) == 3  # norm batch, patch 4, patch 14: stored, of the grid's declared main effects
    assert set(effects["family"]) == {"main effects at 1,000 rows"} and set(effects["family_size"]) == {declared}
    assert effects["p_adj"].tolist() == pytest.approx([min(1, declared * p) for p in effects["p_value"]])
    for _, row in effects.iterrows():  # a direction only where the adjusted p allows it
        resolved = row["verdict"] in verdicts.RESOLVED
        assert resolved == (row["p_adj"] < 0.05)
    batch = effects.set_index("factor").loc["norm"]
    assert batch["mean_delta"] == pytest.approx(0.03, abs=0.01) and batch["verdict"] == BETTER


def test_the_dictionary_pairing_is_the_merge_frame_for_frame(world):
    """pair_runs finds pairs by a dictionary of keys (fast); compare.pair_runs_merged is the merge it replaces:
    the same frame, column order and dtypes, for overlapping, shuffled, disjoint and empty sides; duplicates refused."""
    runs, _, _ = world
    base, sel = runs[runs["config_id"] == BASE.config_id], runs[runs["config_id"] == SEL.config_id]
    extra = ["run_id", "timing_group"]
    sides = [(base, sel), (sel.iloc[::-1], base.sample(frac=1, random_state=1)), (base.iloc[:2], sel.iloc[2:]),
             (base.iloc[:0], sel), (base.assign(train_rows=base["train_rows"] * 2), sel)]
    for b, v in sides:
        for metric in ("test_accuracy", "gap"):
            fast = compare.pair_runs(b, v, metric)
            pd.testing.assert_frame_equal(fast, compare.pair_runs_merged(b, v, metric, extra), check_index_type=True)
            assert fast["seed"].is_monotonic_increasing and list(fast.columns)[:2] == ["train_rows", "seed"]
    assert len(compare.pair_runs(base, sel, "test_accuracy")) == 3
    with pytest.raises(ValueError, match="baseline has several runs"):
        compare.pair_runs(pd.concat([base, base.iloc[:1]]), sel, "test_accuracy")


def merged_pairs(base: pd.DataFrame, sel: pd.DataFrame, metric: str) -> pd.DataFrame:
    """pair_runs by the merge alone (the rule the fast paths reproduce): within timing groups for seconds, then cut
    to timing_group()'s group."""
    extra = [c for c in ("run_id", "timing_group", "trained_at") if c in base.columns and c in sel.columns]
    if metric != "seconds":
        return compare.pair_runs_merged(base, sel, metric, extra)
    pairs = compare.pair_runs_merged(base, sel, metric, extra, within="timing_group")
    group = compare.timing_group(pairs)
    return pairs[(pairs["timing_group_baseline"] == group) & (pairs["timing_group_variant"] == group)].reset_index(
        drop=True)


def test_the_fast_pairing_is_the_merge_on_the_committed_store(committed_table):
    """The committed store's real sides (with the dedicated timing set beside the seconds, as compare.measure pairs
    them): pair_runs gives the merge's frame exactly, column for column and dtype for dtype, for the article's ViT
    at every stored train_rows against each single-switch change of it, on every metric."""
    runs = committed_table
    timing = RunStore(timing_path(ROOT / "cached_runs")).scan().table()
    seen: dict[str, int] = {}
    for rows in sorted(runs["train_rows"].unique()):
        cfg = RunConfig(train_rows=int(rows))
        for _, _, flipped in neighbours(runs, cfg):
            for metric in ("test_accuracy", "gap", "seconds"):
                over = compare.metric_runs(runs, metric, timing)
                base, sel = runs_of(over, cfg), runs_of(over, flipped)
                fast = compare.pair_runs(base, sel, metric)
                pd.testing.assert_frame_equal(fast, merged_pairs(base, sel, metric), check_exact=True,
                                              check_index_type=True)
                seen[metric] = seen.get(metric, 0) + len(fast)
    assert seen["seconds"] >= 50 and seen["test_accuracy"] >= 500  # real pairs compared, on both paths
